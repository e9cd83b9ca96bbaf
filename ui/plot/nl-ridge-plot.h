/* nl-ridge-plot.h — histograms over time, one ridge per step, offset so
 * that the oldest sits at the back (top) and the newest at the front
 * (bottom): TensorBoard's "offset" histogram view, drawn with Cairo. The
 * Layers panel shows a tensor's weights or gradients with it. */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define NL_TYPE_RIDGE_PLOT (nl_ridge_plot_get_type ())
G_DECLARE_FINAL_TYPE (NlRidgePlot, nl_ridge_plot, NL, RIDGE_PLOT, GtkWidget)

/* At most this many ridges are drawn, evenly spread over the steps, the
 * newest always among them. */
#define NL_RIDGE_PLOT_MAX_SHOWN 40

GtkWidget *nl_ridge_plot_new (void);
void nl_ridge_plot_clear (NlRidgePlot *r);
/* One histogram: COUNTS[N_BINS] cover [LO, HI] evenly. Steps come in
 * order; the step of the last ridge again replaces it. FALSE (nothing
 * added) for a histogram that cannot be drawn (no bins, HI < LO, a
 * non-finite bound, an older step). */
gboolean nl_ridge_plot_add (NlRidgePlot *r, gint64 step, float lo, float hi, const guint32 *counts, int n_bins);
/* What the plot shows, e.g. "fc1.weight — weights" (NULL: nothing). */
void nl_ridge_plot_set_title (NlRidgePlot *r, const char *title);
guint nl_ridge_plot_get_n_ridges (NlRidgePlot *r);
gint64 nl_ridge_plot_get_step (NlRidgePlot *r, guint i);
/* How many ridges the last frame drew (at most NL_RIDGE_PLOT_MAX_SHOWN). */
guint nl_ridge_plot_get_n_drawn (NlRidgePlot *r);

G_END_DECLS
