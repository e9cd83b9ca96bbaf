/* nl-run-export.h — a run's data out of the project: its weights as a
 * safetensors file any reader loads (what `netloom-cli export` writes), and
 * every metric point as CSV. Both write to a temporary file next to PATH
 * and rename it into place, so PATH is never left half-written. */
#pragma once

#include "projects/nl-project.h"

G_BEGIN_DECLS

/* Weights and running statistics (no optimizer state) of checkpoint WHICH
 * ("best", "last" or an epoch number; NULL: the best, else the last) of RUN.
 * checkpoint and epoch (may be NULL) receive what was exported. */
gboolean nl_run_export_weights (NlProject *p, gint64 run, const char *which, const char *path,
                                gint64 *checkpoint, int *epoch, GError **error);

/* Header "run,step,epoch,split,name,value,wall", then every metric point of
 * each run in RUNS in order (a run's points in the order written): run is
 * the run's name (quoted as RFC 4180 wants when needed), value the shortest
 * text that reads back as the same double (empty for NaN), wall seconds
 * with 3 decimals. n_rows (may be NULL) receives the points written. */
gboolean nl_run_export_metrics_csv (NlProject *p, const gint64 *runs, guint n_runs, const char *path,
                                    gint64 *n_rows, GError **error);
/* The CSV form of one field: quoted (with doubled quotes) when it holds a
 * comma, a quote or a line break. */
char *nl_csv_field (const char *text);

G_END_DECLS
