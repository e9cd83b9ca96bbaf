/* nl-project-run-data.c — what a run produces: metrics (with their
 * per-run summaries) and checkpoints. Same rules as nl-project-tables.c:
 * the project lock for the whole call, one transaction per write. */
#include "projects/nl-project-private.h"

#include <math.h>
#include <string.h>

/* ---- metrics ---- */

static const char *
valid_split (const char *split)
{
  static const char *const splits[] = { "train", "val", "test" };
  for (guint i = 0; i < G_N_ELEMENTS (splits); i++)
    if (g_strcmp0 (split, splits[i]) == 0)
      return splits[i];
  return NULL;
}

/* What a batch adds to one metric_summaries row. */
typedef struct {
  gint64 run;
  const char *name, *split;
  double min, max, last_value;
  gint64 last_step, last_id, count;
} SummaryDelta;

static void
summary_add (GArray *deltas, const NlMetricPoint *pt, gint64 rowid)
{
  SummaryDelta *d = NULL;
  /* Batches hold a handful of metrics: a linear search is enough. */
  for (guint i = 0; i < deltas->len && !d; i++)
    {
      SummaryDelta *c = &g_array_index (deltas, SummaryDelta, i);
      if (c->run == pt->run && strcmp (c->name, pt->name) == 0 && strcmp (c->split, pt->split) == 0)
        d = c;
    }
  if (!d)
    {
      SummaryDelta fresh = { pt->run, pt->name, pt->split, NAN, NAN, NAN, G_MININT64, 0, 0 };
      g_array_append_val (deltas, fresh);
      d = &g_array_index (deltas, SummaryDelta, deltas->len - 1);
    }
  if (!isnan (pt->value))
    {
      d->min = isnan (d->min) || pt->value < d->min ? pt->value : d->min;
      d->max = isnan (d->max) || pt->value > d->max ? pt->value : d->max;
    }
  /* Rowids grow within the batch, so >= keeps the latest on equal steps. */
  if (pt->step >= d->last_step)
    {
      d->last_step = pt->step;
      d->last_id = rowid;
      d->last_value = pt->value;
    }
  d->count++;
}

static gboolean
summary_write (NlProject *p, GArray *deltas, GError **error)
{
  /* In an UPDATE every right-hand side sees the old row, so last_step is
   * compared before it changes. */
  sqlite3_stmt *st = nl_project_prepare (p,
    "INSERT INTO metric_summaries (run, name, split, min_value, max_value, last_step, last_id, last_value, count)"
    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9) ON CONFLICT (run, name, split) DO UPDATE SET"
    " min_value = CASE WHEN min_value IS NULL OR ?4 < min_value THEN coalesce (?4, min_value) ELSE min_value END,"
    " max_value = CASE WHEN max_value IS NULL OR ?5 > max_value THEN coalesce (?5, max_value) ELSE max_value END,"
    " last_value = CASE WHEN ?6 >= last_step THEN ?8 ELSE last_value END,"
    " last_id = CASE WHEN ?6 >= last_step THEN ?7 ELSE last_id END,"
    " last_step = max (last_step, ?6),"
    " count = count + ?9", error);
  gboolean ok = st != NULL;
  for (guint i = 0; ok && i < deltas->len; i++)
    {
      const SummaryDelta *d = &g_array_index (deltas, SummaryDelta, i);
      sqlite3_reset (st);
      sqlite3_bind_int64 (st, 1, d->run);
      sqlite3_bind_text (st, 2, d->name, -1, SQLITE_STATIC);
      sqlite3_bind_text (st, 3, d->split, -1, SQLITE_STATIC);
      double vals[3] = { d->min, d->max, d->last_value };
      int cols[3] = { 4, 5, 8 };
      for (int k = 0; k < 3; k++)
        {
          if (isnan (vals[k]))
            sqlite3_bind_null (st, cols[k]);
          else
            sqlite3_bind_double (st, cols[k], vals[k]);
        }
      sqlite3_bind_int64 (st, 6, d->last_step);
      sqlite3_bind_int64 (st, 7, d->last_id);
      sqlite3_bind_int64 (st, 9, d->count);
      int rc = sqlite3_step (st);
      ok = rc == SQLITE_DONE || nl_project_sql_error (p, rc, "cannot update the metric summary", error);
    }
  sqlite3_finalize (st);
  return ok;
}

gboolean
nl_project_add_metrics (NlProject *p, const NlMetricPoint *points, int n, GError **error)
{
  g_return_val_if_fail (p != NULL && (points != NULL || n == 0), FALSE);
  for (int i = 0; i < n; i++)
    {
      if (!valid_split (points[i].split) || !points[i].name || !*points[i].name)
        {
          g_set_error (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_INVALID,
                       "metric point %d: %s", i, !valid_split (points[i].split)
                       ? "the split must be train, val or test" : "a metric needs a name");
          return FALSE;
        }
    }
  if (n == 0)
    return TRUE;
  double now = nl_project_now ();
  g_autoptr (GArray) deltas = g_array_new (FALSE, FALSE, sizeof (SummaryDelta));
  g_mutex_lock (&p->lock);
  gboolean ok = nl_project_begin_write (p, error);
  /* a trainer's points go only to a run it still holds */
  for (int i = 0; ok && i < n; i++)
    if (i == 0 || points[i].run != points[i - 1].run)
      ok = nl_project_hold_check (p, points[i].run, FALSE, error);
  sqlite3_stmt *st = ok ? nl_project_prepare (p, "INSERT INTO metrics (run, step, epoch, split, name, value, wall)"
                                                 " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)", error) : NULL;
  ok = st != NULL;
  for (int i = 0; ok && i < n; i++)
    {
      const NlMetricPoint *pt = &points[i];
      sqlite3_reset (st);
      sqlite3_bind_int64 (st, 1, pt->run);
      sqlite3_bind_int64 (st, 2, pt->step);
      sqlite3_bind_int (st, 3, pt->epoch);
      sqlite3_bind_text (st, 4, pt->split, -1, SQLITE_STATIC);
      sqlite3_bind_text (st, 5, pt->name, -1, SQLITE_STATIC);
      if (isnan (pt->value))
        sqlite3_bind_null (st, 6);
      else
        sqlite3_bind_double (st, 6, pt->value);
      sqlite3_bind_double (st, 7, pt->wall > 0 ? pt->wall : now);
      int rc = sqlite3_step (st);
      if (rc == SQLITE_CONSTRAINT_FOREIGNKEY)
        ok = nl_project_not_found (p, error, "run", pt->run);
      else if (rc != SQLITE_DONE)
        ok = nl_project_sql_error (p, rc, "cannot add metrics", error);
      else
        summary_add (deltas, pt, sqlite3_last_insert_rowid (p->db));
    }
  sqlite3_finalize (st);
  ok = ok && summary_write (p, deltas, error) && nl_project_commit (p, error);
  if (!ok)
    nl_project_rollback (p);
  g_mutex_unlock (&p->lock);
  if (!ok)
    nl_project_restate (p, error, "saving metrics of run %" G_GINT64_FORMAT, points[0].run);
  return ok;
}

gboolean
nl_project_truncate_metrics (NlProject *p, gint64 run, gint64 step, GError **error)
{
  g_return_val_if_fail (p != NULL, FALSE);
  g_mutex_lock (&p->lock);
  /* the run's summaries again from what is left (a resume: once per run) */
  gboolean ok = nl_project_begin_write (p, error)
    && nl_project_step (p, "cannot delete metrics", error, "DELETE FROM metrics WHERE run = ?1 AND step > ?2", "ii",
                        run, step) >= 0
    && nl_project_step (p, "cannot delete layer histograms", error,
                        "DELETE FROM layer_histograms WHERE run = ?1 AND step > ?2", "ii", run, step) >= 0
    && nl_project_step (p, "cannot update the metric summary", error,
                        "DELETE FROM metric_summaries WHERE run = ?1", "i", run) >= 0
    && nl_project_step (p, "cannot update the metric summary", error,
                        "INSERT INTO metric_summaries (run, name, split, min_value, max_value, last_step, last_id,"
                        " last_value, count) SELECT run, name, split, min (value), max (value), 0, 0, NULL, count (*)"
                        " FROM metrics WHERE run = ?1 GROUP BY run, name, split", "i", run) >= 0
    && nl_project_step (p, "cannot update the metric summary", error,
                        "UPDATE metric_summaries SET (last_step, last_id, last_value) = (SELECT step, id, value"
                        " FROM metrics m WHERE m.run = metric_summaries.run AND m.name = metric_summaries.name"
                        " AND m.split = metric_summaries.split ORDER BY step DESC, id DESC LIMIT 1)"
                        " WHERE run = ?1", "i", run) >= 0
    && nl_project_commit (p, error);
  if (!ok)
    nl_project_rollback (p);
  g_mutex_unlock (&p->lock);
  if (!ok)
    nl_project_restate (p, error, "dropping the metrics of run %" G_GINT64_FORMAT " after its checkpoint", run);
  return ok;
}

/* g_intern_string takes a global lock; rows repeat a handful of names, so
 * remember the last few. */
typedef struct {
  const char *s[8];
  guint next;
} InternCache;

static const char *
intern (InternCache *c, const unsigned char *text)
{
  if (!text)
    return NULL;
  for (guint i = 0; i < G_N_ELEMENTS (c->s); i++)
    if (c->s[i] && strcmp (c->s[i], (const char *) text) == 0)
      return c->s[i];
  const char *s = g_intern_string ((const char *) text);
  c->s[c->next++ % G_N_ELEMENTS (c->s)] = s;
  return s;
}

GArray *
nl_project_get_metrics (NlProject *p, gint64 run, const char *name, gint64 after_rowid, gint64 *last_rowid,
                        GError **error)
{
  g_return_val_if_fail (p != NULL, NULL);
  /* The plans, by what is asked (named, so they cannot change under us):
   *   a run, polling or every name:   metrics_run = (run, rowid) from after_rowid on, no sort
   *   a run and a name, first read:   (run, name, step), then a sort of just those rows
   *   every run:                      the rowid from after_rowid on */
  const char *where;
  if (run > 0 && name && after_rowid == 0)
    where = "run = ?2 AND name = ?3 AND id > ?1";
  else if (run > 0)
    where = "run = ?2 AND +name = coalesce (?3, name) AND id > ?1";
  else
    where = "id > ?1 AND ?2 = ?2 AND +name = coalesce (?3, name)";
  g_autofree char *sql = g_strdup_printf ("SELECT id, run, step, epoch, split, name, value, wall FROM metrics"
                                          " %s WHERE %s ORDER BY id",
                                          run > 0 && name && after_rowid == 0 ? "INDEXED BY metrics_run_name_step"
                                          : run > 0 ? "INDEXED BY metrics_run" : "NOT INDEXED", where);
  GArray *out = g_array_new (FALSE, FALSE, sizeof (NlMetricRow));
  InternCache cache = { 0 };
  gint64 last = after_rowid;
  g_mutex_lock (&p->lock);
  sqlite3_stmt *st = nl_project_prepare_bind (p, error, sql, "iit", after_rowid, run, name);
  int rc = SQLITE_OK;
  while (st && (rc = sqlite3_step (st)) == SQLITE_ROW)
    {
      NlMetricRow r = {
        .rowid = sqlite3_column_int64 (st, 0),
        .run = sqlite3_column_int64 (st, 1),
        .step = sqlite3_column_int64 (st, 2),
        .epoch = sqlite3_column_int (st, 3),
        .split = intern (&cache, sqlite3_column_text (st, 4)),
        .name = intern (&cache, sqlite3_column_text (st, 5)),
        .value = nl_project_col_real (st, 6),
        .wall = sqlite3_column_double (st, 7),
      };
      g_array_append_val (out, r);
      last = r.rowid;
    }
  gboolean ok = st && (rc == SQLITE_DONE || nl_project_sql_error (p, rc, "cannot read metrics", error));
  sqlite3_finalize (st);
  g_mutex_unlock (&p->lock);
  if (!ok)
    {
      g_array_unref (out);
      return NULL;
    }
  if (last_rowid)
    *last_rowid = last;
  return out;
}

gboolean
nl_project_metric_summary (NlProject *p, gint64 run, const char *name, const char *split, double *best_min,
                           double *best_max, double *last, GError **error)
{
  g_return_val_if_fail (p != NULL && name != NULL, FALSE);
  double mn = NAN, mx = NAN, la = NAN;
  g_mutex_lock (&p->lock);
  /* Over the splits: the extremes of each, and the last of the one that
   * went furthest (the latest written on equal steps). */
  sqlite3_stmt *st = nl_project_prepare_bind (p, error, "SELECT min (min_value) OVER w, max (max_value) OVER w, last_value"
                                   " FROM metric_summaries WHERE run = ?1 AND name = ?2"
                                   " AND (?3 IS NULL OR split = ?3)"
                                   " WINDOW w AS (ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING)"
                                   " ORDER BY last_step DESC, last_id DESC LIMIT 1", "itt", run, name, split);
  int rc = st ? sqlite3_step (st) : SQLITE_ERROR;
  if (rc == SQLITE_ROW)
    {
      mn = nl_project_col_real (st, 0);
      mx = nl_project_col_real (st, 1);
      la = nl_project_col_real (st, 2);
    }
  gboolean ok = st && (rc == SQLITE_ROW || rc == SQLITE_DONE
                       || nl_project_sql_error (p, rc, "cannot read metrics", error));
  sqlite3_finalize (st);
  g_mutex_unlock (&p->lock);
  if (best_min)
    *best_min = mn;
  if (best_max)
    *best_max = mx;
  if (last)
    *last = la;
  return ok;
}

GArray *
nl_project_list_metric_summaries (NlProject *p, gint64 run, GError **error)
{
  g_return_val_if_fail (p != NULL, NULL);
  GArray *out = g_array_new (FALSE, FALSE, sizeof (NlMetricSummary));
  InternCache cache = { 0 };
  g_mutex_lock (&p->lock);
  sqlite3_stmt *st = nl_project_prepare_bind (p, error, "SELECT name, split, min_value, max_value, last_value, last_step,"
                                   " count FROM metric_summaries WHERE run = ?1 ORDER BY name, split", "i", run);
  int rc = SQLITE_OK;
  while (st && (rc = sqlite3_step (st)) == SQLITE_ROW)
    {
      NlMetricSummary m = {
        .name = intern (&cache, sqlite3_column_text (st, 0)),
        .split = intern (&cache, sqlite3_column_text (st, 1)),
        .min = nl_project_col_real (st, 2),
        .max = nl_project_col_real (st, 3),
        .last = nl_project_col_real (st, 4),
        .last_step = sqlite3_column_int64 (st, 5),
        .count = sqlite3_column_int64 (st, 6),
      };
      g_array_append_val (out, m);
    }
  gboolean ok = st && (rc == SQLITE_DONE || nl_project_sql_error (p, rc, "cannot read metrics", error));
  sqlite3_finalize (st);
  g_mutex_unlock (&p->lock);
  if (!ok)
    g_clear_pointer (&out, g_array_unref);
  return out;
}

/* ---- checkpoints ---- */

/* SQL: the interval checkpoint of run ?1 (NULL: none) */
#define INTERVAL_OF_RUN "(SELECT interval_checkpoint FROM runs WHERE id = ?1)"

/* Best flag and pruning after an insert (lock held, in the transaction). */
static gboolean
update_best_and_prune (NlProject *p, gint64 run, const char *metric_name, gboolean higher_is_better,
                       int keep_last, GError **error)
{
  if (metric_name)
    {
      sqlite3_stmt *st = nl_project_prepare_bind (p, error, higher_is_better
        ? "SELECT id FROM checkpoints WHERE run = ?1 AND metric_name = ?2 AND metric_value IS NOT NULL"
          " ORDER BY metric_value DESC, id LIMIT 1"
        : "SELECT id FROM checkpoints WHERE run = ?1 AND metric_name = ?2 AND metric_value IS NOT NULL"
          " ORDER BY metric_value ASC, id LIMIT 1", "it", run, metric_name);
      if (!st)
        return FALSE;
      int rc = sqlite3_step (st);
      gint64 best = rc == SQLITE_ROW ? sqlite3_column_int64 (st, 0) : 0;
      sqlite3_finalize (st);
      if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        return nl_project_sql_error (p, rc, "cannot read checkpoints", error);
      if (best && nl_project_step (p, "cannot mark the best checkpoint", error,
                         "UPDATE checkpoints SET is_best = (id = ?2) WHERE run = ?1 AND is_best != (id = ?2)",
                         "ii", run, best) < 0)
        return FALSE;
    }
  if (keep_last > 0
      && nl_project_step (p, "cannot delete old checkpoints", error,
                "DELETE FROM checkpoints WHERE run = ?1 AND is_best = 0"
                " AND id NOT IN (SELECT id FROM checkpoints WHERE run = ?1 AND id IS NOT " INTERVAL_OF_RUN
                "   ORDER BY id DESC LIMIT ?2)"
                " AND id IS NOT " INTERVAL_OF_RUN
                " AND id NOT IN (SELECT parent_checkpoint FROM runs WHERE parent_checkpoint IS NOT NULL)",
                "in", run, keep_last) < 0)
    return FALSE;
  return TRUE;
}

/* The run's interval checkpoint is superseded by newer: deleted unless
 * forked from (lock held, in the transaction). */
static gboolean
drop_interval (NlProject *p, gint64 run, GError **error)
{
  return nl_project_step (p, "cannot delete the older interval checkpoint", error,
                          "DELETE FROM checkpoints WHERE id IS " INTERVAL_OF_RUN
                          " AND id NOT IN (SELECT parent_checkpoint FROM runs WHERE parent_checkpoint IS NOT NULL)",
                          "i", run) >= 0
         && nl_project_step (p, "cannot update the run", error,
                             "UPDATE runs SET interval_checkpoint = NULL WHERE id = ?1", "i", run) >= 0;
}

/* Inserts one checkpoint row (lock held, in the transaction); 0 on error. */
static gint64
insert_checkpoint (NlProject *p, gint64 run, int epoch, gint64 step, const void *blob, gsize size,
                   const char *metric_name, double metric_value, GError **error)
{
  gint64 id = 0;
  sqlite3_stmt *st = nl_project_prepare_bind (p, error, "INSERT INTO checkpoints (run, epoch, step, metric_name,"
                                              " metric_value, is_best, created, size, blob)"
                                              " VALUES (?1, ?2, ?3, ?4, ?5, 0, ?6, ?7, ?8)",
                                              "initddi", run, epoch, step, metric_name,
                                              metric_name ? metric_value : NAN, nl_project_now (), (gint64) size);
  if (!st)
    return 0;
  /* Never NULL, even for 0 bytes: the column is NOT NULL. */
  sqlite3_bind_blob64 (st, 8, size ? blob : "", size, SQLITE_STATIC);
  int rc = sqlite3_step (st);
  if (rc == SQLITE_CONSTRAINT_FOREIGNKEY)
    nl_project_not_found (p, error, "run", run);
  else if (rc != SQLITE_DONE)
    nl_project_sql_error (p, rc, "cannot save the checkpoint", error);
  else
    id = sqlite3_last_insert_rowid (p->db);
  sqlite3_finalize (st);
  return id;
}

static gboolean
check_blob_size (NlProject *p, gsize size, GError **error)
{
  gsize limit = (gsize) sqlite3_limit (p->db, SQLITE_LIMIT_LENGTH, -1);
  if (size <= limit)
    return TRUE;
  g_set_error (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_INVALID,
               "%s: a checkpoint of %" G_GSIZE_FORMAT " bytes is larger than SQLite's limit of %"
               G_GSIZE_FORMAT, p->path, size, limit);
  return FALSE;
}

gint64
nl_project_add_checkpoint (NlProject *p, gint64 run, int epoch, gint64 step, const void *blob, gsize size,
                           const char *metric_name, double metric_value, gboolean higher_is_better,
                           int keep_last, GError **error)
{
  g_return_val_if_fail (p != NULL && (blob != NULL || size == 0), 0);
  gint64 id = 0;
  g_mutex_lock (&p->lock);
  /* the run's epoch count goes with its checkpoint: written apart, a
   * failure between the two left a run whose resume had nothing to train
   * and so never caught its count up */
  gboolean ok = check_blob_size (p, size, error) && nl_project_begin_write (p, error)
                && nl_project_hold_check (p, run, FALSE, error)
                && (id = insert_checkpoint (p, run, epoch, step, blob, size, metric_name, metric_value, error)) > 0
                && update_best_and_prune (p, run, metric_name, higher_is_better, keep_last, error)
                && drop_interval (p, run, error)
                && nl_project_step (p, "cannot update the run", error,
                                    "UPDATE runs SET epochs_done = ?2 WHERE id = ?1 AND epochs_done < ?2", "in", run,
                                    epoch) >= 0
                && nl_project_commit (p, error);
  if (!ok)
    {
      id = 0;
      nl_project_rollback (p);
    }
  g_mutex_unlock (&p->lock);
  if (!ok)
    nl_project_restate (p, error, "saving checkpoint of run %" G_GINT64_FORMAT " (epoch %d)", run, epoch);
  return id;
}

gint64
nl_project_add_interval_checkpoint (NlProject *p, gint64 run, int epoch, gint64 step, const void *blob,
                                    gsize size, GError **error)
{
  g_return_val_if_fail (p != NULL && (blob != NULL || size == 0), 0);
  gint64 id = 0;
  g_mutex_lock (&p->lock);
  /* the new one and the end of the old one commit together: a kill leaves
   * exactly one of them */
  gboolean ok = check_blob_size (p, size, error) && nl_project_begin_write (p, error)
                && nl_project_hold_check (p, run, FALSE, error)
                && (id = insert_checkpoint (p, run, epoch, step, blob, size, NULL, NAN, error)) > 0
                && drop_interval (p, run, error)
                && nl_project_step (p, "cannot update the run", error,
                                    "UPDATE runs SET interval_checkpoint = ?2 WHERE id = ?1", "ii", run, id) >= 0
                && nl_project_commit (p, error);
  if (!ok)
    {
      id = 0;
      nl_project_rollback (p);
    }
  g_mutex_unlock (&p->lock);
  if (!ok)
    nl_project_restate (p, error, "saving the interval checkpoint of run %" G_GINT64_FORMAT " (inside epoch %d)", run,
                        epoch + 1);
  return id;
}

typedef struct {
  gint64 *run, *step;
  int *epoch;
} CheckpointRow;

static void
read_checkpoint_row (sqlite3_stmt *st, gpointer data)
{
  CheckpointRow *r = data;
  if (r->run)
    *r->run = sqlite3_column_int64 (st, 0);
  if (r->epoch)
    *r->epoch = sqlite3_column_int (st, 1);
  if (r->step)
    *r->step = sqlite3_column_int64 (st, 2);
}

GBytes *
nl_project_load_checkpoint (NlProject *p, gint64 checkpoint, gint64 *run, int *epoch, gint64 *step,
                            GError **error)
{
  g_return_val_if_fail (p != NULL, NULL);
  CheckpointRow row = { .run = run, .step = step, .epoch = epoch };
  return nl_project_load_blob_row (p, "checkpoints", "checkpoint",
                                   "SELECT run, epoch, step FROM checkpoints WHERE id = ?1", checkpoint,
                                   read_checkpoint_row, &row, error);
}

gint64
nl_project_find_checkpoint (NlProject *p, gint64 run, const char *which, GError **error)
{
  g_return_val_if_fail (p != NULL && which != NULL, 0);
  const char *sql;
  gint64 epoch = 0;
  gboolean by_epoch = FALSE;
  if (strcmp (which, "best") == 0)
    sql = "SELECT id FROM checkpoints WHERE run = ?1 AND is_best ORDER BY id DESC LIMIT 1";
  else if (strcmp (which, "last") == 0)
    sql = "SELECT id FROM checkpoints WHERE run = ?1 ORDER BY id DESC LIMIT 1";
  else if ((by_epoch = g_ascii_string_to_signed (which, 10, 0, G_MAXINT, &epoch, NULL)))
    sql = "SELECT id FROM checkpoints WHERE run = ?1 AND epoch = ?2 AND id IS NOT " INTERVAL_OF_RUN
          " ORDER BY id DESC LIMIT 1";
  else
    {
      g_set_error (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_INVALID,
                   "“%s” is not a checkpoint: use best, last or an epoch number", which);
      return 0;
    }
  gint64 id = 0;
  g_mutex_lock (&p->lock);
  sqlite3_stmt *st = nl_project_prepare_bind (p, error, sql, "ii", run, epoch);
  int rc = st ? sqlite3_step (st) : SQLITE_OK;
  if (rc == SQLITE_ROW)
    id = sqlite3_column_int64 (st, 0);
  else if (rc == SQLITE_DONE && by_epoch)
    g_set_error (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_NOT_FOUND, "%s: run %" G_GINT64_FORMAT
                 " has no checkpoint of epoch %" G_GINT64_FORMAT, p->path, run, epoch);
  else if (rc == SQLITE_DONE)
    g_set_error (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_NOT_FOUND, "%s: run %" G_GINT64_FORMAT
                 " has no %s checkpoint", p->path, run, which);
  else if (st)
    nl_project_sql_error (p, rc, "cannot read checkpoints", error);
  sqlite3_finalize (st);
  g_mutex_unlock (&p->lock);
  return id;
}

GArray *
nl_project_list_checkpoints (NlProject *p, gint64 run, GError **error)
{
  g_return_val_if_fail (p != NULL, NULL);
  GArray *out = g_array_new (FALSE, FALSE, sizeof (NlCheckpointInfo));
  InternCache cache = { 0 };
  g_mutex_lock (&p->lock);
  sqlite3_stmt *st = nl_project_prepare_bind (p, error, "SELECT id, run, epoch, step, size, metric_name, metric_value,"
                                   " is_best, created, id IS " INTERVAL_OF_RUN " FROM checkpoints WHERE run = ?1"
                                   " ORDER BY id", "i", run);
  int rc = SQLITE_OK;
  while (st && (rc = sqlite3_step (st)) == SQLITE_ROW)
    {
      NlCheckpointInfo c = {
        .id = sqlite3_column_int64 (st, 0),
        .run = sqlite3_column_int64 (st, 1),
        .epoch = sqlite3_column_int (st, 2),
        .step = sqlite3_column_int64 (st, 3),
        .size = sqlite3_column_int64 (st, 4),
        .metric_name = intern (&cache, sqlite3_column_text (st, 5)),
        .metric_value = nl_project_col_real (st, 6),
        .is_best = sqlite3_column_int (st, 7) != 0,
        .created = sqlite3_column_double (st, 8),
        .is_interval = sqlite3_column_int (st, 9) != 0,
      };
      g_array_append_val (out, c);
    }
  gboolean ok = st && (rc == SQLITE_DONE || nl_project_sql_error (p, rc, "cannot read checkpoints", error));
  sqlite3_finalize (st);
  g_mutex_unlock (&p->lock);
  if (!ok)
    g_clear_pointer (&out, g_array_unref);
  return out;
}

gboolean
nl_project_delete_checkpoint (NlProject *p, gint64 checkpoint, GError **error)
{
  g_return_val_if_fail (p != NULL, FALSE);
  gint64 n = nl_project_write (p, "cannot delete the checkpoint", NULL, error, "DELETE FROM checkpoints WHERE id = ?1",
                     "i", checkpoint);
  nl_project_restate (p, error, "deleting checkpoint %" G_GINT64_FORMAT, checkpoint);
  return n == 1 || (n == 0 && nl_project_not_found (p, error, "checkpoint", checkpoint));
}

static GBytes *
read_blob (NlProject *p, const char *table, gint64 id, int *rc)
{
  sqlite3_blob *b = NULL;
  GBytes *bytes = NULL;
  *rc = sqlite3_blob_open (p->db, "main", table, "blob", id, 0, &b);
  if (*rc == SQLITE_OK)
    {
      int n = sqlite3_blob_bytes (b);
      guint8 *buf = g_malloc (n ? n : 1);
      *rc = sqlite3_blob_read (b, buf, n, 0);
      if (*rc == SQLITE_OK)
        bytes = g_bytes_new_take (buf, n);
      else
        g_free (buf);
    }
  sqlite3_blob_close (b);
  return bytes;
}

GBytes *
nl_project_load_blob_row (NlProject *p, const char *table, const char *what, const char *sql, gint64 id,
                          void (*read_row) (sqlite3_stmt *st, gpointer data), gpointer data, GError **error)
{
  g_autofree char *cannot = g_strdup_printf ("cannot read the %s", what);
  GBytes *bytes = NULL;
  g_mutex_lock (&p->lock);
  gboolean ok = nl_project_exec (p, "BEGIN", error);
  sqlite3_stmt *st = ok ? nl_project_prepare_bind (p, error, sql, "i", id) : NULL;
  int rc = st ? sqlite3_step (st) : SQLITE_ERROR;
  if (rc == SQLITE_ROW)
    {
      read_row (st, data);
      bytes = read_blob (p, table, id, &rc);
      if (rc != SQLITE_OK)
        nl_project_sql_error (p, rc, cannot, error);
    }
  else if (rc == SQLITE_DONE)
    nl_project_not_found (p, error, what, id);
  else if (st)
    nl_project_sql_error (p, rc, cannot, error);
  sqlite3_finalize (st);
  nl_project_rollback (p);
  g_mutex_unlock (&p->lock);
  return bytes;
}
