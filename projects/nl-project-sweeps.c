/* nl-project-sweeps.c — the sweeps table. A sweep's trials are runs that
 * point at it (runs.sweep, runs.sweep_trial), so creating a trial is one
 * row written in one transaction: a crash leaves it there or absent. */
#include "projects/nl-project-private.h"

#include <math.h>
#include <string.h>

void
nl_sweep_info_free (NlSweepInfo *s)
{
  if (!s)
    return;
  g_free (s->name);
  g_free (s->network_name);
  g_free (s->network_json);
  g_free (s->hparams_json);
  g_free (s->device);
  g_free (s->space);
  g_free (s->strategy);
  g_free (s->metric);
  g_free (s->prune);
  g_free (s->status);
  g_free (s);
}

static gboolean
check_sweep_status (const char *status, GError **error)
{
  if (!g_strcmp0 (status, "running") || !g_strcmp0 (status, "finished") || !g_strcmp0 (status, "stopped"))
    return TRUE;
  g_set_error (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_INVALID,
               "unknown sweep status “%s” (running, finished or stopped)", status ? status : "(null)");
  return FALSE;
}

gint64
nl_project_create_sweep (NlProject *p, const NlSweepInfo *info, GError **error)
{
  const char *status;
  gint64 id = 0, n;

  g_return_val_if_fail (p != NULL && info != NULL, 0);
  status = info->status ? info->status : "running";
  if (!check_sweep_status (status, error))
    return 0;
  if (!info->network_json || !info->hparams_json || !info->space || !info->strategy || !info->metric
      || info->trials < 1)
    {
      g_set_error (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_INVALID,
                   "a sweep needs a network, settings, a space, a strategy, a metric and at least one trial");
      return 0;
    }
  n = nl_project_write (p, "cannot create the sweep", &id, error,
                        "INSERT INTO sweeps (name, network_name, network_json, hparams_json, device, space, strategy,"
                        " trials, metric, maximize, prune, parallel, seed, status, created)"
                        " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)",
                        "ttttttt" "ntnt" "iitd",
                        info->name ? info->name : "", info->network_name, info->network_json, info->hparams_json,
                        info->device, info->space, info->strategy, info->trials, info->metric,
                        info->maximize ? 1 : 0, info->prune, (gint64) MAX (info->parallel, 1), info->seed, status,
                        info->created > 0 ? info->created : nl_project_now ());
  return n == 1 ? id : 0;
}

#define SWEEP_COLUMNS "id, name, network_name, network_json, hparams_json, device, space, strategy, trials," \
  " metric, maximize, prune, parallel, seed, status, created, finished"

static void
sweep_row (sqlite3_stmt *st, gpointer data)
{
  NlSweepInfo *s = g_new0 (NlSweepInfo, 1);
  s->id = sqlite3_column_int64 (st, 0);
  s->name = nl_project_col_str (st, 1);
  s->network_name = nl_project_col_str (st, 2);
  s->network_json = nl_project_col_str (st, 3);
  s->hparams_json = nl_project_col_str (st, 4);
  s->device = nl_project_col_str (st, 5);
  s->space = nl_project_col_str (st, 6);
  s->strategy = nl_project_col_str (st, 7);
  s->trials = sqlite3_column_int (st, 8);
  s->metric = nl_project_col_str (st, 9);
  s->maximize = sqlite3_column_int (st, 10) != 0;
  s->prune = nl_project_col_str (st, 11);
  s->parallel = sqlite3_column_int (st, 12);
  s->seed = sqlite3_column_int64 (st, 13);
  s->status = nl_project_col_str (st, 14);
  s->created = sqlite3_column_double (st, 15);
  s->finished = sqlite3_column_double (st, 16);  /* NULL reads as 0 */
  g_ptr_array_add (data, s);
}

static GPtrArray *
list_sweeps (NlProject *p, gint64 sweep, GError **error)
{
  GPtrArray *out = g_ptr_array_new_with_free_func ((GDestroyNotify) nl_sweep_info_free);
  sqlite3_stmt *st;
  gboolean ok;

  g_mutex_lock (&p->lock);
  st = nl_project_prepare_bind (p, error, "SELECT " SWEEP_COLUMNS " FROM sweeps WHERE ?1 = 0 OR id = ?1 ORDER BY id",
                                "i", sweep);
  ok = st && nl_project_for_rows (p, st, sweep_row, out, error);
  g_mutex_unlock (&p->lock);
  if (!ok)
    g_clear_pointer (&out, g_ptr_array_unref);
  return out;
}

NlSweepInfo *
nl_project_get_sweep (NlProject *p, gint64 sweep, GError **error)
{
  g_autoptr (GPtrArray) rows = NULL;

  g_return_val_if_fail (p != NULL, NULL);
  if (sweep <= 0)
    return nl_project_not_found (p, error, "sweep", sweep), NULL;
  rows = list_sweeps (p, sweep, error);
  if (!rows)
    return NULL;
  if (rows->len == 0)
    return nl_project_not_found (p, error, "sweep", sweep), NULL;
  return g_ptr_array_steal_index (rows, 0);
}

GPtrArray *
nl_project_list_sweeps (NlProject *p, GError **error)
{
  g_return_val_if_fail (p != NULL, NULL);
  return list_sweeps (p, 0, error);
}

gboolean
nl_project_set_sweep_status (NlProject *p, gint64 sweep, const char *status, GError **error)
{
  gint64 n;

  g_return_val_if_fail (p != NULL, FALSE);
  if (!check_sweep_status (status, error))
    return FALSE;
  n = nl_project_write (p, "cannot change the sweep's status", NULL, error,
                        "UPDATE sweeps SET status = ?2, finished = CASE ?2 WHEN 'running' THEN NULL ELSE ?3 END"
                        " WHERE id = ?1", "itd", sweep, status, nl_project_now ());
  return n == 1 || (n == 0 && nl_project_not_found (p, error, "sweep", sweep));
}
