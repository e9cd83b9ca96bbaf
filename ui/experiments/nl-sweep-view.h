/* nl-sweep-view.h — the Experiments page's sweep view: a project's
 * sweeps, the chosen one's trials as parallel coordinates (brushing
 * filters the trial table) and as a scatter of the metric against one
 * setting, updated live while it runs, with "Stop Sweep" and "Continue
 * Sweep" (which runs the sweep's queue on a worker thread). */
#pragma once

#include <adwaita.h>

#include "ui/nl-workspace.h"
#include "ui/plot/nl-sweep-plot.h"

G_BEGIN_DECLS

#define NL_TYPE_SWEEP_VIEW (nl_sweep_view_get_type ())
G_DECLARE_FINAL_TYPE (NlSweepView, nl_sweep_view, NL, SWEEP_VIEW, GtkBox)

GtkWidget *nl_sweep_view_new (void);
void nl_sweep_view_set_workspace (NlSweepView *self, NlWorkspace *ws);
/* Reads the sweeps and the shown sweep's trials again. */
void nl_sweep_view_refresh (NlSweepView *self);
/* Shows SWEEP (an id of the project). */
void nl_sweep_view_show_sweep (NlSweepView *self, gint64 sweep);
gint64 nl_sweep_view_get_sweep (NlSweepView *self);
/* Continue Sweep: runs the shown sweep's remaining trials in the background. */
gboolean nl_sweep_view_continue (NlSweepView *self, GError **error);
/* Stop Sweep: its running trials stop between batches (status stopped). */
void nl_sweep_view_stop (NlSweepView *self);
gboolean nl_sweep_view_is_running (NlSweepView *self);
NlSweepPlot *nl_sweep_view_get_parallel (NlSweepView *self);
NlSweepPlot *nl_sweep_view_get_scatter (NlSweepView *self);
/* Rows of the trial table: the trials inside every brush. */
guint nl_sweep_view_get_n_listed (NlSweepView *self);

G_END_DECLS
