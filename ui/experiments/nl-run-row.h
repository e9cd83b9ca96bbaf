/* nl-run-row.h — one run as an item of the Experiments page's GListModel:
 * the run's row, its metric summaries, tags and checkpoint count, with the
 * hyper-parameters the table shows parsed once. A refresh updates the item
 * in place (::changed) so that selection and scroll position survive. */
#pragma once

#include <glib-object.h>

#include "projects/nl-project.h"

G_BEGIN_DECLS

/* What one refresh read about a run (built on a worker thread). */
typedef struct {
  NlRunInfo *info;
  GArray *summaries;   /* NlMetricSummary */
  char **tags;         /* sorted, NULL-terminated */
  int n_checkpoints;
  int n_int8_models;   /* INT8 models made by quantizing its checkpoints */
  double int8_acc;     /* the best of their test accuracies; NaN without one */
  int n_notes;
} NlRunSnapshot;

/* Reads everything else the table shows about the run INFO (a few small
 * queries); takes INFO, also on error. */
NlRunSnapshot *nl_run_snapshot_load (NlProject *p, NlRunInfo *info, GError **error);
void nl_run_snapshot_free (NlRunSnapshot *s);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (NlRunSnapshot, nl_run_snapshot_free)

/* +1 higher is better (accuracy ...), -1 lower is better (loss ...), 0 no
 * "best" (lr, throughput): only the last value is meaningful. */
int nl_metric_goal (const char *name);
/* "Test acc", "Train loss", "Train batch loss" ... (newly allocated). */
char *nl_metric_pretty_name (const char *split, const char *name);
/* The table's number format: 4 significant decimals, thousands rounded. */
char *nl_format_metric (double v);
/* "42 s", "3 min 05 s", "2 h 07 min"; "" for NaN. */
char *nl_format_duration (double seconds);

#define NL_TYPE_RUN_ROW (nl_run_row_get_type ())
G_DECLARE_FINAL_TYPE (NlRunRow, nl_run_row, NL, RUN_ROW, GObject)

/* Takes the snapshot. */
NlRunRow *nl_run_row_new (NlRunSnapshot *snap);
/* Takes the snapshot; emits ::changed and returns TRUE when anything the
 * table shows differs. */
gboolean nl_run_row_update (NlRunRow *row, NlRunSnapshot *snap);
/* ::changed without new data (the duration of a running run ticks). */
void nl_run_row_emit_changed (NlRunRow *row);

gint64 nl_run_row_get_id (NlRunRow *row);
const NlRunInfo *nl_run_row_get_info (NlRunRow *row);
const char *nl_run_row_get_name (NlRunRow *row);
const char *nl_run_row_get_status (NlRunRow *row);
const char *nl_run_row_get_network (NlRunRow *row);
/* "running", "paused" or "queued": its figures still change. */
gboolean nl_run_row_is_active (NlRunRow *row);
/* From the hyper-parameters ("" / NaN / 0 when they cannot be read). */
const char *nl_run_row_get_optimizer (NlRunRow *row);
double nl_run_row_get_lr (NlRunRow *row);
int nl_run_row_get_batch_size (NlRunRow *row);
/* Epochs asked for (at least those done: a resume may go further). */
int nl_run_row_get_epochs_total (NlRunRow *row);
int nl_run_row_get_epochs_done (NlRunRow *row);
/* Seconds from start to finish, or to now while active; NaN if never started. */
double nl_run_row_get_duration (NlRunRow *row);
const char *const *nl_run_row_get_tags (NlRunRow *row);
gboolean nl_run_row_has_tag (NlRunRow *row, const char *tag);
int nl_run_row_get_n_checkpoints (NlRunRow *row);
int nl_run_row_get_n_int8_models (NlRunRow *row);
/* The best test accuracy of its INT8 models; NaN without one. */
double nl_run_row_get_int8_accuracy (NlRunRow *row);
int nl_run_row_get_n_notes (NlRunRow *row);
/* NlMetricSummary of every (name, split) of the run. */
GArray *nl_run_row_get_summaries (NlRunRow *row);
/* The best (by nl_metric_goal) or last value of a metric; NaN when absent. */
double nl_run_row_get_best (NlRunRow *row, const char *split, const char *name);
double nl_run_row_get_last (NlRunRow *row, const char *split, const char *name);
/* Case-insensitive substring of name, network, a tag or the status. */
gboolean nl_run_row_matches (NlRunRow *row, const char *needle);

G_END_DECLS
