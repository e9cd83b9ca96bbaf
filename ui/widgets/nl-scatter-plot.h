/* nl-scatter-plot.h — points in the plane coloured by class, with a
 * legend, drawn with Cairo: the activation viewer's projection of a
 * layer's outputs. Clicking near a point selects it (a ring marks it) and
 * emits ::point-activated with its index; hovering a point names it
 * ("Sample i: class"). */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define NL_TYPE_SCATTER_PLOT (nl_scatter_plot_get_type ())
G_DECLARE_FINAL_TYPE (NlScatterPlot, nl_scatter_plot, NL, SCATTER_PLOT, GtkWidget)

GtkWidget *nl_scatter_plot_new (void);
/* n points xy[2 * i], xy[2 * i + 1] of class labels[i] (in [0, n_classes)),
 * copied; class_names (n_classes, may be NULL) name the legend's entries.
 * Clears the selection. */
void nl_scatter_plot_set_points (NlScatterPlot *p, const float *xy, const int *labels, int n,
                                 const char *const *class_names, int n_classes);
int nl_scatter_plot_get_n_points (NlScatterPlot *p);
/* The stored points (2 per point) and their labels (may be NULL); NULL when none. */
const float *nl_scatter_plot_get_points (NlScatterPlot *p, const int **labels);
/* Where point i is drawn in the widget's current size; FALSE if no such point. */
gboolean nl_scatter_plot_point_position (NlScatterPlot *p, int i, double *x, double *y);
/* The point nearest (x, y) within a few pixels, or -1. */
int nl_scatter_plot_point_at (NlScatterPlot *p, double x, double y);
int nl_scatter_plot_get_selected (NlScatterPlot *p);  /* -1: none */
void nl_scatter_plot_select (NlScatterPlot *p, int i);  /* -1: none; no signal */
/* The colour of class c (the legend's and its points'). */
void nl_scatter_plot_class_color (int c, GdkRGBA *out);

G_END_DECLS
