/* nl-project-int8.c — a run's INT8 models (nl-project.h): stored with
 * what was measured when they were made, found by run or source
 * checkpoint; the schema's foreign keys delete them with either. Same rules
 * as nl-project-tables.c: each call takes the lock, writes are one
 * transaction. */
#include "projects/nl-project-private.h"

#include <math.h>
#include <string.h>

/* Inserts the row once the checkpoint is found to be RUN's (lock held, in
 * the transaction); 0 on error. */
static gint64
insert_int8 (NlProject *p, const NlInt8ModelInfo *info, const void *blob, gsize size, GError **error)
{
  gint64 id = 0, owner = 0;
  sqlite3_stmt *st = nl_project_prepare_bind (p, error, "SELECT run FROM checkpoints WHERE id = ?1", "i",
                                              info->checkpoint);
  int rc = st ? sqlite3_step (st) : SQLITE_ERROR;
  if (rc == SQLITE_ROW)
    owner = sqlite3_column_int64 (st, 0);
  else if (st && rc != SQLITE_DONE)
    nl_project_sql_error (p, rc, "cannot read checkpoints", error);
  sqlite3_finalize (st);
  if (!st || (rc != SQLITE_ROW && rc != SQLITE_DONE))
    return 0;
  if (owner != info->run)
    {
      g_set_error (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_NOT_FOUND,
                   "%s: run %" G_GINT64_FORMAT " has no checkpoint %" G_GINT64_FORMAT, p->path, info->run,
                   info->checkpoint);
      return 0;
    }
  st = nl_project_prepare_bind (p, error, "INSERT INTO int8_models (run, checkpoint, epoch, method,"
                                " calibration_samples, fp32_test_acc, int8_test_acc, fp32_images_per_s,"
                                " int8_images_per_s, size, created, blob)"
                                " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
                                "iintnddddid", info->run, info->checkpoint, info->epoch, info->method,
                                info->calibration_samples, info->fp32_test_acc, info->int8_test_acc,
                                info->fp32_images_per_s, info->int8_images_per_s, (gint64) size, nl_project_now ());
  if (!st)
    return 0;
  sqlite3_bind_blob64 (st, 12, size ? blob : "", size, SQLITE_STATIC);
  rc = sqlite3_step (st);
  if (rc != SQLITE_DONE)
    nl_project_sql_error (p, rc, "cannot save the INT8 model", error);
  else
    id = sqlite3_last_insert_rowid (p->db);
  sqlite3_finalize (st);
  return id;
}

gint64
nl_project_add_int8_model (NlProject *p, const NlInt8ModelInfo *info, const void *blob, gsize size,
                           GError **error)
{
  g_return_val_if_fail (p != NULL && info != NULL && (blob != NULL || size == 0), 0);
  gint64 id = 0;
  if (!info->method || (strcmp (info->method, "naive") != 0 && strcmp (info->method, "entropy") != 0))
    {
      g_set_error (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_INVALID,
                   "“%s” is not a calibration method: use naive or entropy", info->method ? info->method : "");
      return 0;
    }
  g_mutex_lock (&p->lock);
  gboolean ok = nl_project_begin_write (p, error) && (id = insert_int8 (p, info, blob, size, error)) > 0
                && nl_project_commit (p, error);
  if (!ok)
    {
      id = 0;
      nl_project_rollback (p);
    }
  g_mutex_unlock (&p->lock);
  if (!ok)
    nl_project_restate (p, error, "saving the INT8 model of run %" G_GINT64_FORMAT, info->run);
  return id;
}

static void
read_int8_row (sqlite3_stmt *st, gpointer run)
{
  if (run)
    *(gint64 *) run = sqlite3_column_int64 (st, 0);
}

GBytes *
nl_project_load_int8_model (NlProject *p, gint64 id, gint64 *run, GError **error)
{
  g_return_val_if_fail (p != NULL, NULL);
  return nl_project_load_blob_row (p, "int8_models", "INT8 model", "SELECT run FROM int8_models WHERE id = ?1", id,
                                   read_int8_row, run, error);
}

GArray *
nl_project_list_int8_models (NlProject *p, gint64 run, GError **error)
{
  g_return_val_if_fail (p != NULL, NULL);
  GArray *out = g_array_new (FALSE, FALSE, sizeof (NlInt8ModelInfo));
  g_mutex_lock (&p->lock);
  sqlite3_stmt *st = nl_project_prepare_bind (p, error, "SELECT id, run, checkpoint, epoch, method,"
                                              " calibration_samples, fp32_test_acc, int8_test_acc,"
                                              " fp32_images_per_s, int8_images_per_s, size, created"
                                              " FROM int8_models WHERE run = ?1 ORDER BY id", "i", run);
  int rc = SQLITE_OK;
  while (st && (rc = sqlite3_step (st)) == SQLITE_ROW)
    {
      NlInt8ModelInfo m = {
        .id = sqlite3_column_int64 (st, 0),
        .run = sqlite3_column_int64 (st, 1),
        .checkpoint = sqlite3_column_int64 (st, 2),
        .epoch = sqlite3_column_int (st, 3),
        .method = g_intern_string ((const char *) sqlite3_column_text (st, 4)),
        .calibration_samples = sqlite3_column_int (st, 5),
        .fp32_test_acc = nl_project_col_real (st, 6),
        .int8_test_acc = nl_project_col_real (st, 7),
        .fp32_images_per_s = nl_project_col_real (st, 8),
        .int8_images_per_s = nl_project_col_real (st, 9),
        .size = sqlite3_column_int64 (st, 10),
        .created = sqlite3_column_double (st, 11),
      };
      g_array_append_val (out, m);
    }
  gboolean ok = st && (rc == SQLITE_DONE || nl_project_sql_error (p, rc, "cannot read INT8 models", error));
  sqlite3_finalize (st);
  g_mutex_unlock (&p->lock);
  if (!ok)
    g_clear_pointer (&out, g_array_unref);
  return out;
}

gint64
nl_project_find_int8_model (NlProject *p, gint64 run, const char *which, GError **error)
{
  g_return_val_if_fail (p != NULL, 0);
  gint64 checkpoint = 0, id = 0;
  if (which && (checkpoint = nl_project_find_checkpoint (p, run, which, error)) <= 0)
    return 0;
  g_mutex_lock (&p->lock);
  sqlite3_stmt *st = nl_project_prepare_bind (p, error, which
                                              ? "SELECT id FROM int8_models WHERE run = ?1 AND checkpoint = ?2"
                                                " ORDER BY id DESC LIMIT 1"
                                              : "SELECT id FROM int8_models WHERE run = ?1 ORDER BY id DESC LIMIT 1",
                                              which ? "ii" : "i", run, checkpoint);
  int rc = st ? sqlite3_step (st) : SQLITE_OK;
  if (rc == SQLITE_ROW)
    id = sqlite3_column_int64 (st, 0);
  else if (rc == SQLITE_DONE && which)
    g_set_error (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_NOT_FOUND,
                 "run %" G_GINT64_FORMAT " has no INT8 model of its %s%s checkpoint: run netloom-cli quantize"
                 " --checkpoint %s first", run, g_ascii_isdigit (which[0]) ? "epoch " : "", which, which);
  else if (rc == SQLITE_DONE)
    g_set_error (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_NOT_FOUND,
                 "run %" G_GINT64_FORMAT " has no INT8 model: run netloom-cli quantize first", run);
  else if (st)
    nl_project_sql_error (p, rc, "cannot read INT8 models", error);
  sqlite3_finalize (st);
  g_mutex_unlock (&p->lock);
  return id;
}

gboolean
nl_project_delete_int8_model (NlProject *p, gint64 id, GError **error)
{
  g_return_val_if_fail (p != NULL, FALSE);
  gint64 n = nl_project_write (p, "cannot delete the INT8 model", NULL, error, "DELETE FROM int8_models WHERE id = ?1",
                               "i", id);
  nl_project_restate (p, error, "deleting INT8 model %" G_GINT64_FORMAT, id);
  return n == 1 || (n == 0 && nl_project_not_found (p, error, "INT8 model", id));
}
