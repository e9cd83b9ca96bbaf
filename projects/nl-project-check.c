/* nl-project-check.c — the whole file at once: its integrity check and a
 * compacted copy of it. */
#include "projects/nl-project-private.h"

#include <glib/gstdio.h>

/* Appends every row of a check pragma to problems; returns SQLite's code. */
static int
collect_rows (NlProject *p, const char *sql, GString *problems, gboolean skip_ok)
{
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2 (p->db, sql, -1, &st, NULL);
  while (rc == SQLITE_OK && (rc = sqlite3_step (st)) == SQLITE_ROW)
    {
      rc = SQLITE_OK;
      const char *first = (const char *) sqlite3_column_text (st, 0);
      if (skip_ok && g_strcmp0 (first, "ok") == 0)
        continue;
      if (problems->len)
        g_string_append (problems, "; ");
      for (int c = 0; c < sqlite3_column_count (st); c++)
        g_string_append_printf (problems, c ? " %s" : "%s",
                                sqlite3_column_text (st, c) ? (const char *) sqlite3_column_text (st, c) : "-");
    }
  sqlite3_finalize (st);
  return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

gboolean
nl_project_check (NlProject *p, GError **error)
{
  g_return_val_if_fail (p != NULL, FALSE);
  g_autoptr (GString) problems = g_string_new (NULL);
  g_mutex_lock (&p->lock);
  int rc = collect_rows (p, "PRAGMA integrity_check (20)", problems, TRUE);
  if (rc == SQLITE_OK)
    rc = collect_rows (p, "PRAGMA foreign_key_check", problems, FALSE);
  gboolean ok = rc == SQLITE_OK || nl_project_sql_error (p, rc, "cannot check", error);
  g_mutex_unlock (&p->lock);
  if (ok && problems->len)
    {
      g_set_error (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_CORRUPT, "%s is damaged: %s", p->path,
                   problems->str);
      ok = FALSE;
    }
  return ok;
}

gboolean
nl_project_save_copy (NlProject *p, const char *path, GError **error)
{
  sqlite3_stmt *st = NULL;
  int rc;
  gboolean ok;
  g_return_val_if_fail (p != NULL && path != NULL, FALSE);
  if (g_file_test (path, G_FILE_TEST_EXISTS))
    {
      g_set_error (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_EXISTS, "%s already exists", path);
      return FALSE;
    }
  g_mutex_lock (&p->lock);
  /* VACUUM INTO writes a consistent, compacted copy in one go; a failure
   * leaves at most a partial file at PATH, which we remove. */
  rc = sqlite3_prepare_v2 (p->db, "VACUUM INTO ?1", -1, &st, NULL);
  if (rc == SQLITE_OK)
    {
      sqlite3_bind_text (st, 1, path, -1, SQLITE_TRANSIENT);
      rc = sqlite3_step (st);
      if (rc == SQLITE_DONE)
        rc = SQLITE_OK;
    }
  sqlite3_finalize (st);
  ok = rc == SQLITE_OK || nl_project_sql_error (p, rc, "cannot save a copy", error);
  g_mutex_unlock (&p->lock);
  if (!ok)
    g_unlink (path);
  return ok;
}
