/* nl-project-vocab.c — a text run's vocabulary (schema 6): the JSON of the
 * NlVocab its training side built, so evaluate, predict, fork and export
 * encode texts exactly as training did. One row per run, deleted with it. */
#include "projects/nl-project-private.h"

gboolean
nl_project_set_run_vocab (NlProject *p, gint64 run, const char *json, GError **error)
{
  g_return_val_if_fail (p != NULL && json != NULL, FALSE);
  if (!*json)
    {
      g_set_error (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_INVALID, "the vocabulary of run %" G_GINT64_FORMAT
                   " is empty", run);
      return FALSE;
    }
  g_autoptr (GError) local = NULL;
  gint64 n = nl_project_write (p, "cannot save the run's vocabulary", NULL, &local,
                               "INSERT INTO run_vocabs (run_id, vocab) SELECT id, ?2 FROM runs WHERE id = ?1"
                               " ON CONFLICT (run_id) DO UPDATE SET vocab = excluded.vocab", "it", run, json);
  if (n == 0)
    return nl_project_not_found (p, error, "run", run);
  if (n < 0)
    {
      g_propagate_error (error, g_steal_pointer (&local));
      nl_project_restate (p, error, "saving the vocabulary of run %" G_GINT64_FORMAT, run);
      return FALSE;
    }
  return TRUE;
}

char *
nl_project_get_run_vocab (NlProject *p, gint64 run, GError **error)
{
  g_return_val_if_fail (p != NULL, NULL);
  char *json = NULL;
  g_mutex_lock (&p->lock);
  sqlite3_stmt *st = nl_project_prepare_bind (p, error, "SELECT vocab FROM run_vocabs WHERE run_id = ?1", "i", run);
  int rc = st ? sqlite3_step (st) : SQLITE_ERROR;
  if (rc == SQLITE_ROW)
    json = nl_project_col_str (st, 0);
  else if (st && rc != SQLITE_DONE)
    nl_project_sql_error (p, rc, "cannot read the run's vocabulary", error);
  sqlite3_finalize (st);
  g_mutex_unlock (&p->lock);
  return json;
}
