/* nl-training-dashboard-private.h — the dashboard's parts, shared by
 *   nl-training-dashboard.c         plots, counters, events, export
 *   nl-training-dashboard-follow.c  reading runs from the project: one another
 *                                   process trains, and the layer and system
 *                                   points of the page's own run */
#pragma once

#include "ui/training/nl-training-dashboard.h"
#include "ui/training/nl-event-log.h"
#include "ui/training/nl-layers-panel.h"
#include "ui/training/nl-system-strip.h"
#include "engine/train/nl-lr-schedule.h"

G_BEGIN_DECLS

struct _NlTrainingDashboard {
  AdwBin parent_instance;
  NlWorkspace *ws;             /* for follow and toasts */
  gboolean follow_blocked;     /* the page runs a session: nothing to follow */

  /* template */
  GtkLabel *title_label, *status_label;
  GtkProgressBar *progress;
  GtkLabel *epoch_label, *batch_label, *speed_label, *eta_label;
  GtkStack *plot_stack;
  GtkStackSwitcher *plot_switcher;
  GtkScale *smoothing_scale;
  GtkToggleButton *log_button, *follow_button;
  NlEventLog *event_log;

  NlPlot *loss_plot, *acc_plot, *lr_plot, *speed_plot;
  NlPlotSeries *batch_loss, *epoch_loss, *train_acc, *test_acc, *lr_series, *speed_series;
  int run_epochs, run_batch_size;
  double run_lr;
  char *run_lr_schedule;
  NlLrSchedule *run_schedule;  /* built once n_batches is known */
  gint64 n_batches, last_step;
  GArray *pending;             /* batches not drawn yet (PendingBatch) */
  NlSessionEvent last_batch;   /* the newest of them, for the counters */
  guint flush_id;              /* draws them at 5 Hz */
  gint64 follow_run, follow_rowid;
  gint64 follow_pin;           /* shown even once ended (a job of the page's), until followed */
  gboolean follow_busy, follow_again;
  GCancellable *follow_cancel;
  gint64 own_run, own_rowid;   /* the page's session's run: its layer/ and system/ points */

  NlLayersPanel *layers;       /* the plot stack's "layers" page */
  NlSystemStrip *system_strip;
};

void _nl_training_dashboard_set_progress (NlTrainingDashboard *self, double fraction);
/* A point the session's events do not carry (layer/, profile/, system/):
 * to the Layers panel or the system strip; FALSE for another. */
gboolean _nl_training_dashboard_add_extra (NlTrainingDashboard *self, const NlMetricRow *row);

G_END_DECLS
