/* nl-training-dashboard.h — the Training page's right side: the run's
 * title and status, the run buttons (the page's training.* actions),
 * progress and counters, the live plots, the Layers view, the system
 * strip, the event log, plot export and following a run another process
 * trains. */
#pragma once

#include <adwaita.h>

#include "engine/session/nl-session.h"
#include "ui/nl-workspace.h"
#include "ui/plot/nl-plot.h"
#include "ui/training/nl-layers-panel.h"
#include "ui/training/nl-system-strip.h"

G_BEGIN_DECLS

#define NL_TYPE_TRAINING_DASHBOARD (nl_training_dashboard_get_type ())
G_DECLARE_FINAL_TYPE (NlTrainingDashboard, nl_training_dashboard, NL, TRAINING_DASHBOARD, AdwBin)

/* The project it follows runs of and toasts to (NULL: none); forgets the
 * followed run. */
void nl_training_dashboard_set_workspace (NlTrainingDashboard *self, NlWorkspace *ws);
/* While the page prepares or runs a session, nothing is followed. */
void nl_training_dashboard_set_follow_blocked (NlTrainingDashboard *self, gboolean blocked);
/* Forgets the followed run (the dashboard shows the page's own now). */
void nl_training_dashboard_stop_following (NlTrainingDashboard *self);
gint64 nl_training_dashboard_get_followed_run (NlTrainingDashboard *self);
/* Shows RUN (one the page's netloom-cli job trained) with its final
 * points and status, unless another run is active (when allowed). */
void nl_training_dashboard_follow_run (NlTrainingDashboard *self, gint64 run);
/* Shows stored RUN afresh (title, plots, every point) unless another run
 * is active (when allowed). */
void nl_training_dashboard_show_run (NlTrainingDashboard *self, gint64 run);
/* Looks for the newest run another process is training (when allowed). */
void nl_training_dashboard_follow_poll (NlTrainingDashboard *self);

/* Empties the plots, counters and log for a new run of EPOCHS epochs. */
void nl_training_dashboard_reset (NlTrainingDashboard *self, const char *title, int epochs, int batch_size,
                                  double lr, const char *lr_schedule);
void nl_training_dashboard_event (NlTrainingDashboard *self, const NlSessionEvent *e);
/* A stored metric point (a resumed run's history, a followed run). */
void nl_training_dashboard_add_row (NlTrainingDashboard *self, const NlMetricRow *row);
void nl_training_dashboard_set_status (NlTrainingDashboard *self, const char *text);
void nl_training_dashboard_log (NlTrainingDashboard *self, const char *kind, const char *message);
/* Asks for a file and saves the plot in view as FORMAT (png, svg, csv). */
void nl_training_dashboard_export (NlTrainingDashboard *self, const char *format);
/* "loss", "accuracy", "lr" or "throughput"; NULL for another name. */
NlPlot *nl_training_dashboard_get_plot (NlTrainingDashboard *self, const char *name);
/* The Layers view (the plot stack's "layers" page) and the system strip
 * under the plots. */
NlLayersPanel *nl_training_dashboard_get_layers_panel (NlTrainingDashboard *self);
NlSystemStrip *nl_training_dashboard_get_system_strip (NlTrainingDashboard *self);
/* Whether a read of the project is under way (follow). */
gboolean nl_training_dashboard_is_reading (NlTrainingDashboard *self);
/* Shows the view NAME: "loss", "accuracy", "lr", "throughput" or "layers". */
void nl_training_dashboard_show_view (NlTrainingDashboard *self, const char *name);

G_END_DECLS
