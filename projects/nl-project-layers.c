/* nl-project-layers.c — layer histograms of runs. Counts are stored as one
 * blob of little-endian uint32 per histogram: 32 rows of a table per
 * histogram would make a long run's table hundreds of times larger. */
#include "projects/nl-project-layers.h"
#include "projects/nl-project-private.h"

#include <string.h>

static void
histogram_clear (gpointer data)
{
  g_free (((NlLayerHistogram *) data)->counts);
}

static gboolean
valid (const NlLayerHistogram *h, int i, GError **error)
{
  const char *why = !h->tensor || !*h->tensor ? "a histogram needs a tensor name"
                    : h->n_bins < 1 || h->n_bins > 1024 || !h->counts ? "a histogram needs 1 to 1024 bins"
                    : !(h->lo <= h->hi) ? "a histogram's range needs lo <= hi" : NULL;
  if (!why)
    return TRUE;
  g_set_error (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_INVALID, "layer histogram %d: %s", i, why);
  return FALSE;
}

gboolean
nl_project_add_layer_histograms (NlProject *p, gint64 run, const NlLayerHistogram *h, int n, GError **error)
{
  g_return_val_if_fail (p != NULL && (h != NULL || n == 0), FALSE);
  for (int i = 0; i < n; i++)
    if (!valid (&h[i], i, error))
      return FALSE;
  if (n == 0)
    return TRUE;
  g_mutex_lock (&p->lock);
  /* a trainer's histograms go only to a run it still holds */
  gboolean ok = nl_project_begin_write (p, error) && nl_project_hold_check (p, run, FALSE, error);
  sqlite3_stmt *st = ok ? nl_project_prepare (p, "INSERT INTO layer_histograms (run, step, tensor, is_grad, lo, hi,"
                                                 " counts) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)", error) : NULL;
  ok = st != NULL;
  for (int i = 0; ok && i < n; i++)
    {
      g_autofree guint32 *le = g_new (guint32, h[i].n_bins);
      for (int b = 0; b < h[i].n_bins; b++)
        le[b] = GUINT32_TO_LE (h[i].counts[b]);
      sqlite3_reset (st);
      sqlite3_bind_int64 (st, 1, run);
      sqlite3_bind_int64 (st, 2, h[i].step);
      sqlite3_bind_text (st, 3, h[i].tensor, -1, SQLITE_STATIC);
      sqlite3_bind_int (st, 4, h[i].is_grad ? 1 : 0);
      sqlite3_bind_double (st, 5, h[i].lo);
      sqlite3_bind_double (st, 6, h[i].hi);
      sqlite3_bind_blob (st, 7, le, (int) (h[i].n_bins * sizeof (guint32)), SQLITE_TRANSIENT);
      int rc = sqlite3_step (st);
      if (rc == SQLITE_CONSTRAINT_FOREIGNKEY)
        ok = nl_project_not_found (p, error, "run", run);
      else if (rc != SQLITE_DONE)
        ok = nl_project_sql_error (p, rc, "cannot add layer histograms", error);
    }
  sqlite3_finalize (st);
  ok = ok && nl_project_commit (p, error);
  if (!ok)
    nl_project_rollback (p);
  g_mutex_unlock (&p->lock);
  if (!ok)
    nl_project_restate (p, error, "saving layer histograms of run %" G_GINT64_FORMAT, run);
  return ok;
}

GArray *
nl_project_list_layer_histograms (NlProject *p, gint64 run, const char *tensor, gboolean is_grad, GError **error)
{
  g_return_val_if_fail (p != NULL, NULL);
  GArray *out = g_array_new (FALSE, TRUE, sizeof (NlLayerHistogram));
  g_array_set_clear_func (out, histogram_clear);
  g_mutex_lock (&p->lock);
  sqlite3_stmt *st = nl_project_prepare_bind (p, error, "SELECT step, tensor, lo, hi, counts FROM layer_histograms"
                                              " WHERE run = ?1 AND is_grad = ?2 AND tensor = coalesce (?3, tensor)"
                                              " ORDER BY step, id", "int", run, is_grad ? 1 : 0, tensor);
  int rc = SQLITE_OK;
  while (st && (rc = sqlite3_step (st)) == SQLITE_ROW)
    {
      const guint32 *le = sqlite3_column_blob (st, 4);
      int n = sqlite3_column_bytes (st, 4) / (int) sizeof (guint32);
      NlLayerHistogram h = { .step = sqlite3_column_int64 (st, 0),
                             .tensor = g_intern_string ((const char *) sqlite3_column_text (st, 1)),
                             .is_grad = is_grad, .lo = (float) sqlite3_column_double (st, 2),
                             .hi = (float) sqlite3_column_double (st, 3), .n_bins = n,
                             .counts = g_new0 (guint32, MAX (n, 1)) };
      for (int b = 0; b < n; b++)
        {
          guint32 v;
          memcpy (&v, le + b, sizeof v);
          h.counts[b] = GUINT32_FROM_LE (v);
        }
      g_array_append_val (out, h);
    }
  gboolean ok = st && (rc == SQLITE_DONE || nl_project_sql_error (p, rc, "cannot read layer histograms", error));
  sqlite3_finalize (st);
  g_mutex_unlock (&p->lock);
  if (!ok)
    g_clear_pointer (&out, g_array_unref);
  return out;
}
