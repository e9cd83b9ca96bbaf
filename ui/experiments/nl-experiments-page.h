/* nl-experiments-page.h — the Experiments page of the workbench: every run
 * of the project in a sortable, filterable table (live while runs train,
 * also runs of another process), row actions (rename, tags, notes, delete,
 * resume, fork, evaluate, open the network, export weights, the model as
 * ONNX and metrics), and for the selected runs their curves overlaid and
 * their settings side by side. */
#pragma once

#include <adwaita.h>

#include "ui/nl-workspace.h"

G_BEGIN_DECLS

#define NL_TYPE_EXPERIMENTS_PAGE (nl_experiments_page_get_type ())
G_DECLARE_FINAL_TYPE (NlExperimentsPage, nl_experiments_page, NL, EXPERIMENTS_PAGE, AdwBin)

/* NULL closes the page's view of the project. */
void nl_experiments_page_set_workspace (NlExperimentsPage *page, NlWorkspace *ws);

/* What "Resume" does (the window starts the run on the training page);
 * without a handler the action is disabled. destroy (may be NULL) frees
 * user_data when the handler is replaced or the page goes. */
typedef void (*NlExperimentsRunFunc) (NlExperimentsPage *page, gint64 run, gpointer user_data);
void nl_experiments_page_set_resume_handler (NlExperimentsPage *page, NlExperimentsRunFunc func,
                                             gpointer user_data, GDestroyNotify destroy);

/* ---- the runs as shown ---- */
/* The table's selection model: NlRunRow items (ui/experiments/nl-run-row.h) in display
 * order (filtered, sorted). */
GtkSelectionModel *nl_experiments_page_get_model (NlExperimentsPage *page);
GtkColumnView *nl_experiments_page_get_column_view (NlExperimentsPage *page);
/* The comparison pane's plot (ui/plot/nl-plot.h) and settings table
 * (ui/experiments/nl-hparam-diff.h). */
GtkWidget *nl_experiments_page_get_plot (NlExperimentsPage *page);
GtkWidget *nl_experiments_page_get_diff (NlExperimentsPage *page);
/* TRUE while the table or the curves are being read from the project. */
gboolean nl_experiments_page_is_loading (NlExperimentsPage *page);
/* Selects exactly these runs (those shown). */
void nl_experiments_page_select_runs (NlExperimentsPage *page, const gint64 *runs, guint n_runs);
/* The text of the filter entry. */
void nl_experiments_page_set_filter (NlExperimentsPage *page, const char *text);
/* The metric the comparison plots (split "test", name "accuracy" ...);
 * FALSE when no selected run has it. */
gboolean nl_experiments_page_set_plot_metric (NlExperimentsPage *page, const char *split, const char *name);

/* ---- what the actions' dialogs call when confirmed ----
 * Each changes the project, then notifies the workspace (RUNS). */
gboolean nl_experiments_page_rename_run (NlExperimentsPage *page, gint64 run, const char *name, GError **error);
gboolean nl_experiments_page_add_tag (NlExperimentsPage *page, const gint64 *runs, guint n_runs, const char *tag,
                                      GError **error);
gboolean nl_experiments_page_remove_tag (NlExperimentsPage *page, const gint64 *runs, guint n_runs,
                                         const char *tag, GError **error);
gboolean nl_experiments_page_add_note (NlExperimentsPage *page, gint64 run, const char *text, GError **error);
/* On a worker thread (a long run has many metric rows); a toast reports
 * the result. */
void nl_experiments_page_delete_runs (NlExperimentsPage *page, const gint64 *runs, guint n_runs);
/* Asks the window to open the run's network in the editor: the saved
 * version equal to the run's snapshot, or else the snapshot saved first
 * as a new network "<run name> network". On a worker thread. */
void nl_experiments_page_open_network (NlExperimentsPage *page, gint64 run);
/* Exports on a worker thread; callback on the main loop. Weights: the
 * run's best checkpoint (else its last) as safetensors. Metrics: CSV of
 * every point (engine/session/nl-run-export.h). */
void nl_experiments_page_export_weights_async (NlExperimentsPage *page, gint64 run, const char *path,
                                               GAsyncReadyCallback callback, gpointer user_data);
void nl_experiments_page_export_metrics_async (NlExperimentsPage *page, const gint64 *runs, guint n_runs,
                                               const char *path, GAsyncReadyCallback callback, gpointer user_data);
/* A message for the user on success ("Exported …"), NULL with error. */
char *nl_experiments_page_export_finish (NlExperimentsPage *page, GAsyncResult *result, GError **error);
/* The sweep view, the page's second mode (ui/experiments/nl-sweep-view.h). */
typedef struct _NlSweepView NlSweepView;
NlSweepView *nl_experiments_page_get_sweep_view (NlExperimentsPage *page);
/* Shows the sweep view with SWEEP and continues it (Continue Sweep). */
void nl_experiments_page_run_sweep (NlExperimentsPage *page, gint64 sweep);

G_END_DECLS
