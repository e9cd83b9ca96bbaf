/* nl-project-tables.c — typed access to the rows of a project: networks,
 * pipelines, runs, tags and notes, and the statement helpers shared with
 * nl-project-run-data.c (metrics, checkpoints). Each public call takes the
 * project lock for its whole duration and writes in one IMMEDIATE
 * transaction. */
#include "projects/nl-project-private.h"
#include "core/nl-json-guard.h"
#include "core/nl-json-member.h"

#include <json-glib/json-glib.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>
#include <unistd.h>

/* ---- helpers ---- */

char *
nl_project_col_str (sqlite3_stmt *st, int i)
{
  const unsigned char *t = sqlite3_column_text (st, i);
  return t ? g_strdup ((const char *) t) : NULL;
}

double
nl_project_col_real (sqlite3_stmt *st, int i)
{
  return sqlite3_column_type (st, i) == SQLITE_NULL ? NAN : sqlite3_column_double (st, i);
}

static void
bind_va (sqlite3_stmt *st, const char *fmt, va_list ap)
{
  for (int i = 0; fmt[i]; i++)
    {
      switch (fmt[i])
        {
        case 'i': sqlite3_bind_int64 (st, i + 1, va_arg (ap, gint64)); break;
        case 'n': sqlite3_bind_int (st, i + 1, va_arg (ap, int)); break;
        case 'd':
          {
            double d = va_arg (ap, double);
            if (isnan (d))
              sqlite3_bind_null (st, i + 1);
            else
              sqlite3_bind_double (st, i + 1, d);
            break;
          }
        case 't':
          {
            const char *s = va_arg (ap, const char *);
            if (s)
              sqlite3_bind_text (st, i + 1, s, -1, SQLITE_STATIC);
            else
              sqlite3_bind_null (st, i + 1);
            break;
          }
        default: g_assert_not_reached ();
        }
    }
}

sqlite3_stmt *
nl_project_prepare_bind (NlProject *p, GError **error, const char *sql, const char *fmt, ...)
{
  sqlite3_stmt *st = nl_project_prepare (p, sql, error);
  if (st)
    {
      va_list ap;
      va_start (ap, fmt);
      bind_va (st, fmt, ap);
      va_end (ap);
    }
  return st;
}

static gint64
step_va (NlProject *p, const char *what, GError **error, const char *sql, const char *fmt, va_list ap)
{
  sqlite3_stmt *st = nl_project_prepare (p, sql, error);
  if (!st)
    return -1;
  bind_va (st, fmt, ap);
  int rc = sqlite3_step (st);
  gint64 changes = rc == SQLITE_DONE ? sqlite3_changes64 (p->db)
                                     : (nl_project_sql_error (p, rc, what, error), -1);
  sqlite3_finalize (st);
  return changes;
}

gint64
nl_project_step (NlProject *p, const char *what, GError **error, const char *sql, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  gint64 r = step_va (p, what, error, sql, fmt, ap);
  va_end (ap);
  return r;
}

static gint64
write_va (NlProject *p, gint64 run, const char *what, gint64 *rowid, GError **error, const char *sql,
          const char *fmt, va_list ap)
{
  g_mutex_lock (&p->lock);
  gint64 changes = -1;
  if (nl_project_begin_write (p, error))
    {
      changes = run > 0 && !nl_project_hold_check (p, run, FALSE, error) ? -1
                : step_va (p, what, error, sql, fmt, ap);
      if (rowid)
        *rowid = sqlite3_last_insert_rowid (p->db);
      if (changes < 0 || !nl_project_commit (p, error))
        {
          changes = -1;
          nl_project_rollback (p);
        }
    }
  g_mutex_unlock (&p->lock);
  return changes;
}

gint64
nl_project_write (NlProject *p, const char *what, gint64 *rowid, GError **error, const char *sql,
                  const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  gint64 changes = write_va (p, 0, what, rowid, error, sql, fmt, ap);
  va_end (ap);
  return changes;
}

gint64
nl_project_write_run (NlProject *p, gint64 run, const char *what, GError **error, const char *sql,
                      const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  gint64 changes = write_va (p, run, what, NULL, error, sql, fmt, ap);
  va_end (ap);
  return changes;
}

gboolean
nl_project_not_found (NlProject *p, GError **error, const char *what, gint64 id)
{
  g_set_error (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_NOT_FOUND, "%s: no %s %" G_GINT64_FORMAT,
               p->path, what, id);
  return FALSE;
}

gboolean
nl_project_for_rows (NlProject *p, sqlite3_stmt *st, void (*fn) (sqlite3_stmt *, gpointer), gpointer data,
          GError **error)
{
  int rc;
  while ((rc = sqlite3_step (st)) == SQLITE_ROW)
    fn (st, data);
  gboolean ok = rc == SQLITE_DONE || nl_project_sql_error (p, rc, "cannot read", error);
  sqlite3_finalize (st);
  return ok;
}

static gboolean
check_json_object (const char *json, const char *what, GError **error)
{
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_autoptr (GError) local = NULL;
  if (!nl_json_check_depth (json, -1, what, &local) || !json_parser_load_from_data (parser, json, -1, &local))
    {
      g_set_error (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_INVALID, "%s is not valid JSON: %s", what,
                   local->message);
      return FALSE;
    }
  /* an empty document has no root, which JSON_NODE_HOLDS_OBJECT takes with a critical */
  JsonNode *root = json_parser_get_root (parser);
  if (!root || !JSON_NODE_HOLDS_OBJECT (root))
    {
      g_set_error (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_INVALID, "%s is not a JSON object", what);
      return FALSE;
    }
  return TRUE;
}

/* ---- networks ---- */

void
nl_network_info_free (NlNetworkInfo *n)
{
  if (!n)
    return;
  g_free (n->name);
  g_free (n);
}

gint64
nl_project_save_network (NlProject *p, const char *name, const char *json, GError **error)
{
  g_return_val_if_fail (p != NULL && name != NULL && json != NULL, 0);
  if (!check_json_object (json, "the network", error))
    return 0;
  gint64 id = 0;
  g_mutex_lock (&p->lock);
  if (nl_project_begin_write (p, error))
    {
      gboolean ok = nl_project_step (p, "cannot save the network", error,
                           "INSERT INTO networks (name, version, json, created) VALUES (?1,"
                           " (SELECT coalesce (max (version), 0) + 1 FROM networks WHERE name = ?1), ?2, ?3)",
                           "ttd", name, json, nl_project_now ()) == 1;
      id = ok ? sqlite3_last_insert_rowid (p->db) : 0;
      if (!ok || !nl_project_commit (p, error))
        {
          id = 0;
          nl_project_rollback (p);
        }
    }
  g_mutex_unlock (&p->lock);
  if (!id)
    nl_project_restate (p, error, "saving network “%s”", name);
  return id;
}

char *
nl_project_load_network (NlProject *p, const char *name, int version, GError **error)
{
  g_return_val_if_fail (p != NULL && name != NULL, NULL);
  char *json = NULL;
  g_mutex_lock (&p->lock);
  sqlite3_stmt *st = nl_project_prepare_bind (p, error, "SELECT json FROM networks WHERE name = ?1"
                                   " AND (?2 = 0 OR version = ?2) ORDER BY version DESC LIMIT 1",
                                   "tn", name, version);
  int rc = st ? sqlite3_step (st) : SQLITE_OK;
  if (rc == SQLITE_ROW)
    json = nl_project_col_str (st, 0);
  else if (rc == SQLITE_DONE && version)
    g_set_error (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_NOT_FOUND, "%s: no version %d of network “%s”",
                 p->path, version, name);
  else if (rc == SQLITE_DONE)
    g_set_error (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_NOT_FOUND, "%s: no network “%s”", p->path, name);
  else if (st)
    nl_project_sql_error (p, rc, "cannot read the network", error);
  sqlite3_finalize (st);
  g_mutex_unlock (&p->lock);
  return json;
}

static void
network_row (sqlite3_stmt *st, gpointer data)
{
  NlNetworkInfo *n = g_new0 (NlNetworkInfo, 1);
  n->id = sqlite3_column_int64 (st, 0);
  n->name = nl_project_col_str (st, 1);
  n->version = sqlite3_column_int (st, 2);
  n->created = sqlite3_column_double (st, 3);
  n->n_versions = sqlite3_column_int (st, 4);
  g_ptr_array_add (data, n);
}

static GPtrArray *
list_networks (NlProject *p, const char *name, GError **error)
{
  GPtrArray *out = g_ptr_array_new_with_free_func ((GDestroyNotify) nl_network_info_free);
  g_mutex_lock (&p->lock);
  sqlite3_stmt *st = name
    ? nl_project_prepare_bind (p, error, "SELECT id, name, version, created,"
                    " (SELECT count (*) FROM networks WHERE name = ?1)"
                    " FROM networks WHERE name = ?1 ORDER BY version", "t", name)
    : nl_project_prepare (p, "SELECT n.id, n.name, n.version, n.created, c.cnt FROM networks n"
                          " JOIN (SELECT name, max (version) AS v, count (*) AS cnt FROM networks"
                          " GROUP BY name) c ON n.name = c.name AND n.version = c.v ORDER BY n.name", error);
  gboolean ok = st && nl_project_for_rows (p, st, network_row, out, error);
  g_mutex_unlock (&p->lock);
  if (!ok)
    g_clear_pointer (&out, g_ptr_array_unref);
  return out;
}

GPtrArray *
nl_project_list_networks (NlProject *p, GError **error)
{
  g_return_val_if_fail (p != NULL, NULL);
  return list_networks (p, NULL, error);
}

GPtrArray *
nl_project_list_network_versions (NlProject *p, const char *name, GError **error)
{
  g_return_val_if_fail (p != NULL && name != NULL, NULL);
  return list_networks (p, name, error);
}

gboolean
nl_project_delete_network (NlProject *p, const char *name, GError **error)
{
  g_return_val_if_fail (p != NULL && name != NULL, FALSE);
  gint64 n = nl_project_write (p, "cannot delete the network", NULL, error, "DELETE FROM networks WHERE name = ?1",
                     "t", name);
  if (n == 0)
    g_set_error (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_NOT_FOUND, "%s: no network “%s”", p->path, name);
  return n > 0;
}

/* ---- pipelines ---- */

void
nl_pipeline_info_free (NlPipelineInfo *pl)
{
  if (!pl)
    return;
  g_free (pl->name);
  g_free (pl->dataset_spec);
  g_free (pl->transforms);
  g_free (pl->extra_json);
  g_free (pl);
}

char *
nl_pipeline_info_to_json (const NlPipelineInfo *pl)
{
  g_return_val_if_fail (pl != NULL, NULL);
  g_autoptr (JsonBuilder) b = json_builder_new ();
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "name");
  json_builder_add_string_value (b, pl->name ? pl->name : "");
  json_builder_set_member_name (b, "dataset");
  json_builder_add_string_value (b, pl->dataset_spec ? pl->dataset_spec : "");
  json_builder_set_member_name (b, "transforms");
  json_builder_add_string_value (b, pl->transforms ? pl->transforms : "");
  json_builder_set_member_name (b, "split");
  json_builder_add_double_value (b, pl->split);
  json_builder_set_member_name (b, "batch_size");
  json_builder_add_int_value (b, pl->batch_size);
  json_builder_set_member_name (b, "workers");
  json_builder_add_int_value (b, pl->workers);
  if (pl->extra_json && nl_json_check_depth (pl->extra_json, -1, "the pipeline's extra settings", NULL))
    {
      JsonNode *extra = json_from_string (pl->extra_json, NULL);
      if (extra)
        {
          json_builder_set_member_name (b, "extra");
          json_builder_add_value (b, extra);
        }
    }
  json_builder_end_object (b);
  g_autoptr (JsonNode) root = json_builder_get_root (b);
  return nl_json_fix_numbers (json_to_string (root, FALSE));
}

/* A pipeline member absent, null or of the type asked (a whole number
 * does for a double): json-glib's getters raise criticals on another. */
static gboolean
pipeline_member_ok (JsonObject *o, const char *name, GType type, GError **error)
{
  JsonNode *n = json_object_get_member (o, name);
  union { const char *s; double d; gint64 i; } v; /* only the type matters */
  if (!n || JSON_NODE_HOLDS_NULL (n)
      || (type == G_TYPE_STRING  ? nl_json_string_member (o, name, &v.s)
          : type == G_TYPE_INT64 ? nl_json_int_member (o, name, &v.i) : nl_json_number_member (o, name, &v.d)))
    return TRUE;
  g_set_error (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_INVALID, "the pipeline's \"%s\" must be %s", name,
               type == G_TYPE_STRING ? "a string" : type == G_TYPE_INT64 ? "a whole number" : "a number");
  return FALSE;
}

NlPipelineInfo *
nl_pipeline_info_from_json (const char *json, GError **error)
{
  static const struct { const char *name; GType type; } members[] = {
    { "name", G_TYPE_STRING }, { "dataset", G_TYPE_STRING }, { "transforms", G_TYPE_STRING },
    { "split", G_TYPE_DOUBLE }, { "batch_size", G_TYPE_INT64 }, { "workers", G_TYPE_INT64 },
  };
  g_return_val_if_fail (json != NULL, NULL);
  if (!check_json_object (json, "the pipeline", error))
    return NULL;
  g_autoptr (JsonNode) root = json_from_string (json, NULL);
  JsonObject *o = json_node_get_object (root);
  for (gsize i = 0; i < G_N_ELEMENTS (members); i++)
    if (!pipeline_member_ok (o, members[i].name, members[i].type, error))
      return NULL;
  NlPipelineInfo *pl = g_new0 (NlPipelineInfo, 1);
  pl->name = g_strdup (json_object_get_string_member_with_default (o, "name", ""));
  pl->dataset_spec = g_strdup (json_object_get_string_member_with_default (o, "dataset", ""));
  const char *tr = json_object_get_string_member_with_default (o, "transforms", "");
  pl->transforms = *tr ? g_strdup (tr) : NULL;
  pl->split = json_object_get_double_member_with_default (o, "split", 0.0);
  pl->batch_size = (int) json_object_get_int_member_with_default (o, "batch_size", 0);
  pl->workers = (int) json_object_get_int_member_with_default (o, "workers", 0);
  JsonNode *extra = json_object_get_member (o, "extra");
  pl->extra_json = extra ? nl_json_fix_numbers (json_to_string (extra, FALSE)) : NULL;
  return pl;
}

gint64
nl_project_save_pipeline (NlProject *p, const NlPipelineInfo *pl, GError **error)
{
  g_return_val_if_fail (p != NULL && pl != NULL && pl->name != NULL && pl->dataset_spec != NULL, 0);
  if (pl->extra_json && !check_json_object (pl->extra_json, "the pipeline's extra settings", error))
    return 0;
  gint64 id = 0;
  g_mutex_lock (&p->lock);
  if (nl_project_begin_write (p, error))
    {
      /* An update keeps the row's id and creation time. */
      gboolean ok = nl_project_step (p, "cannot save the pipeline", error,
                           "INSERT INTO pipelines (name, dataset_spec, transforms, split, batch_size, workers,"
                           " json, created) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) ON CONFLICT (name) DO UPDATE"
                           " SET dataset_spec = ?2, transforms = ?3, split = ?4, batch_size = ?5,"
                           " workers = ?6, json = ?7",
                           "tttdnntd", pl->name, pl->dataset_spec, pl->transforms, pl->split,
                           pl->batch_size, pl->workers, pl->extra_json, nl_project_now ()) == 1;
      sqlite3_stmt *st = ok ? nl_project_prepare_bind (p, error, "SELECT id FROM pipelines WHERE name = ?1", "t", pl->name)
                            : NULL;
      if (st && sqlite3_step (st) == SQLITE_ROW)
        id = sqlite3_column_int64 (st, 0);
      sqlite3_finalize (st);
      if (!id || !nl_project_commit (p, error))
        {
          id = 0;
          nl_project_rollback (p);
        }
    }
  g_mutex_unlock (&p->lock);
  return id;
}

#define PIPELINE_COLUMNS "id, name, dataset_spec, transforms, split, batch_size, workers, json, created"

static void
pipeline_row (sqlite3_stmt *st, gpointer data)
{
  NlPipelineInfo *pl = g_new0 (NlPipelineInfo, 1);
  pl->id = sqlite3_column_int64 (st, 0);
  pl->name = nl_project_col_str (st, 1);
  pl->dataset_spec = nl_project_col_str (st, 2);
  pl->transforms = nl_project_col_str (st, 3);
  pl->split = sqlite3_column_double (st, 4);
  pl->batch_size = sqlite3_column_int (st, 5);
  pl->workers = sqlite3_column_int (st, 6);
  pl->extra_json = nl_project_col_str (st, 7);
  pl->created = sqlite3_column_double (st, 8);
  g_ptr_array_add (data, pl);
}

static GPtrArray *
list_pipelines (NlProject *p, const char *name, GError **error)
{
  GPtrArray *out = g_ptr_array_new_with_free_func ((GDestroyNotify) nl_pipeline_info_free);
  g_mutex_lock (&p->lock);
  sqlite3_stmt *st = nl_project_prepare_bind (p, error, "SELECT " PIPELINE_COLUMNS " FROM pipelines"
                                   " WHERE ?1 IS NULL OR name = ?1 ORDER BY name", "t", name);
  gboolean ok = st && nl_project_for_rows (p, st, pipeline_row, out, error);
  g_mutex_unlock (&p->lock);
  if (!ok)
    g_clear_pointer (&out, g_ptr_array_unref);
  return out;
}

NlPipelineInfo *
nl_project_load_pipeline (NlProject *p, const char *name, GError **error)
{
  g_return_val_if_fail (p != NULL && name != NULL, NULL);
  g_autoptr (GPtrArray) rows = list_pipelines (p, name, error);
  if (!rows)
    return NULL;
  if (rows->len == 0)
    {
      g_set_error (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_NOT_FOUND, "%s: no pipeline “%s”", p->path, name);
      return NULL;
    }
  return g_ptr_array_steal_index (rows, 0);
}

GPtrArray *
nl_project_list_pipelines (NlProject *p, GError **error)
{
  g_return_val_if_fail (p != NULL, NULL);
  return list_pipelines (p, NULL, error);
}

gboolean
nl_project_delete_pipeline (NlProject *p, const char *name, GError **error)
{
  g_return_val_if_fail (p != NULL && name != NULL, FALSE);
  gint64 n = nl_project_write (p, "cannot delete the pipeline", NULL, error, "DELETE FROM pipelines WHERE name = ?1",
                     "t", name);
  if (n == 0)
    g_set_error (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_NOT_FOUND, "%s: no pipeline “%s”", p->path, name);
  return n > 0;
}

/* ---- runs ---- */

static const char *const statuses[] = {
  "queued", "running", "paused", "finished", "failed", "stopped", "interrupted", "pruned",
};

static gboolean
check_status (const char *status, GError **error)
{
  for (guint i = 0; i < G_N_ELEMENTS (statuses); i++)
    if (g_strcmp0 (status, statuses[i]) == 0)
      return TRUE;
  g_set_error (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_INVALID,
               "unknown run status “%s” (queued, running, paused, finished, failed, stopped, interrupted or pruned)",
               status ? status : "(null)");
  return FALSE;
}

static gboolean
is_terminal (const char *status)
{
  return strcmp (status, "finished") == 0 || strcmp (status, "failed") == 0
         || strcmp (status, "stopped") == 0 || strcmp (status, "interrupted") == 0 || strcmp (status, "pruned") == 0;
}

void
nl_run_info_free (NlRunInfo *r)
{
  if (!r)
    return;
  g_free (r->name);
  g_free (r->network_name);
  g_free (r->network_json);
  g_free (r->pipeline_json);
  g_free (r->hparams_json);
  g_free (r->device);
  g_free (r->status);
  g_free (r->error);
  g_free (r->host);
  g_free (r->sweep_params);
  g_free (r);
}

gint64
nl_project_create_run (NlProject *p, const NlRunInfo *info, GError **error)
{
  g_return_val_if_fail (p != NULL && info != NULL, 0);
  const char *status = info->status ? info->status : "queued";
  if (!check_status (status, error))
    return 0;
  if (!info->network_json)
    {
      g_set_error (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_INVALID, "a run needs a network snapshot");
      return 0;
    }
  double now = nl_project_now ();
  gboolean running = strcmp (status, "running") == 0 || strcmp (status, "paused") == 0;
  const char *host = info->host ? info->host : running ? g_get_host_name () : NULL;
  gint64 pid = info->pid ? info->pid : running ? getpid () : 0;
  double started = info->started > 0 ? info->started : running ? now : NAN;
  double finished = info->finished > 0 ? info->finished : is_terminal (status) ? now : NAN;
  gint64 id = 0;
  gint64 n = nl_project_write (p, "cannot create the run", &id, error,
                     "INSERT INTO runs (name, parent_run, parent_checkpoint, network_name, network_json,"
                     " pipeline_json, hparams_json, seed, device, status, error, host, pid, created, started,"
                     " finished, sweep, sweep_trial, sweep_params, heartbeat) VALUES (?1, nullif (?2, 0),"
                     " nullif (?3, 0), ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, nullif (?13, 0), ?14, ?15, ?16,"
                     " nullif (?17, 0), CASE WHEN ?17 > 0 THEN ?18 END, ?19, ?20)",
                     "tiitttti" "tttti" "ddd" "int" "d",
                     info->name ? info->name : "", info->parent_run, info->parent_checkpoint,
                     info->network_name, info->network_json, info->pipeline_json, info->hparams_json,
                     info->seed, info->device, status, info->error, host, pid,
                     info->created > 0 ? info->created : now, started, finished, info->sweep, info->sweep_trial,
                     info->sweep_params, info->heartbeat > 0 ? info->heartbeat : running ? now : NAN);
  nl_project_restate (p, error, "creating a run");
  return n == 1 ? id : 0;
}

gboolean
nl_project_set_run_status (NlProject *p, gint64 run, const char *status, const char *error_message,
                           GError **error)
{
  g_return_val_if_fail (p != NULL, FALSE);
  if (!check_status (status, error))
    return FALSE;
  /* a held run: still ours, in the same transaction */
  g_mutex_lock (&p->lock);
  gint64 n = -1;
  if (nl_project_begin_write (p, error))
    {
      if (nl_project_hold_check (p, run, FALSE, error))
        n = nl_project_step_run_status (p, run, status, error_message, nl_project_now (), error);
      if (n < 0 || !nl_project_commit (p, error))
        {
          n = -1;
          nl_project_rollback (p);
        }
    }
  g_mutex_unlock (&p->lock);
  nl_project_restate (p, error, "marking run %" G_GINT64_FORMAT " %s", run, status);
  return n == 1 || (n == 0 && nl_project_not_found (p, error, "run", run));
}

gboolean
nl_project_set_run_epochs (NlProject *p, gint64 run, int epochs_done, GError **error)
{
  g_return_val_if_fail (p != NULL, FALSE);
  gint64 n = nl_project_write_run (p, run, "cannot update the run", error,
                                   "UPDATE runs SET epochs_done = ?2 WHERE id = ?1", "in", run, epochs_done);
  nl_project_restate (p, error, "recording epoch %d of run %" G_GINT64_FORMAT, epochs_done, run);
  return n == 1 || (n == 0 && nl_project_not_found (p, error, "run", run));
}

#define RUN_COLUMNS "id, name, parent_run, parent_checkpoint, network_name, network_json, pipeline_json," \
  " hparams_json, seed, device, status, error, host, pid, created, started, finished, epochs_done, sweep," \
  " sweep_trial, sweep_params, heartbeat"

static void
run_row (sqlite3_stmt *st, gpointer data)
{
  NlRunInfo *r = g_new0 (NlRunInfo, 1);
  r->id = sqlite3_column_int64 (st, 0);
  r->name = nl_project_col_str (st, 1);
  r->parent_run = sqlite3_column_int64 (st, 2);
  r->parent_checkpoint = sqlite3_column_int64 (st, 3);
  r->network_name = nl_project_col_str (st, 4);
  r->network_json = nl_project_col_str (st, 5);
  r->pipeline_json = nl_project_col_str (st, 6);
  r->hparams_json = nl_project_col_str (st, 7);
  r->seed = sqlite3_column_int64 (st, 8);
  r->device = nl_project_col_str (st, 9);
  r->status = nl_project_col_str (st, 10);
  r->error = nl_project_col_str (st, 11);
  r->host = nl_project_col_str (st, 12);
  r->pid = sqlite3_column_int64 (st, 13);
  r->created = sqlite3_column_double (st, 14);
  r->started = sqlite3_column_double (st, 15);   /* NULL reads as 0 */
  r->finished = sqlite3_column_double (st, 16);
  r->epochs_done = sqlite3_column_int (st, 17);
  r->sweep = sqlite3_column_int64 (st, 18);
  r->sweep_trial = sqlite3_column_int (st, 19);
  r->sweep_params = nl_project_col_str (st, 20);
  r->heartbeat = sqlite3_column_double (st, 21);   /* NULL reads as 0 */
  g_ptr_array_add (data, r);
}

static GPtrArray *
list_runs (NlProject *p, gint64 run, gint64 sweep, GError **error)
{
  GPtrArray *out = g_ptr_array_new_with_free_func ((GDestroyNotify) nl_run_info_free);
  g_mutex_lock (&p->lock);
  sqlite3_stmt *st = nl_project_prepare_bind (p, error, "SELECT " RUN_COLUMNS " FROM runs WHERE (?1 = 0 OR id = ?1)"
                                   " AND (?2 = 0 OR sweep = ?2) ORDER BY id", "ii", run, sweep);
  gboolean ok = st && nl_project_for_rows (p, st, run_row, out, error);
  g_mutex_unlock (&p->lock);
  if (!ok)
    g_clear_pointer (&out, g_ptr_array_unref);
  return out;
}

NlRunInfo *
nl_project_get_run (NlProject *p, gint64 run, GError **error)
{
  g_return_val_if_fail (p != NULL, NULL);
  if (run <= 0)
    return nl_project_not_found (p, error, "run", run), NULL;
  g_autoptr (GPtrArray) rows = list_runs (p, run, 0, error);
  if (!rows)
    return NULL;
  if (rows->len == 0)
    return nl_project_not_found (p, error, "run", run), NULL;
  return g_ptr_array_steal_index (rows, 0);
}

GPtrArray *
nl_project_list_runs (NlProject *p, GError **error)
{
  g_return_val_if_fail (p != NULL, NULL);
  return list_runs (p, 0, 0, error);
}

GPtrArray *
nl_project_list_sweep_runs (NlProject *p, gint64 sweep, GError **error)
{
  g_return_val_if_fail (p != NULL && sweep > 0, NULL);
  return list_runs (p, 0, sweep, error);
}

gboolean
nl_project_rename_run (NlProject *p, gint64 run, const char *name, GError **error)
{
  g_return_val_if_fail (p != NULL && name != NULL, FALSE);
  gint64 n = nl_project_write (p, "cannot rename the run", NULL, error, "UPDATE runs SET name = ?2 WHERE id = ?1",
                     "it", run, name);
  return n == 1 || (n == 0 && nl_project_not_found (p, error, "run", run));
}

gboolean
nl_project_delete_run (NlProject *p, gint64 run, GError **error)
{
  g_return_val_if_fail (p != NULL, FALSE);
  /* Foreign keys cascade to metrics, checkpoints, tags and notes. */
  gint64 n = nl_project_write (p, "cannot delete the run", NULL, error, "DELETE FROM runs WHERE id = ?1", "i", run);
  nl_project_restate (p, error, "deleting run %" G_GINT64_FORMAT, run);
  return n == 1 || (n == 0 && nl_project_not_found (p, error, "run", run));
}

/* ---- tags and notes ---- */

gboolean
nl_project_add_tag (NlProject *p, gint64 run, const char *tag, GError **error)
{
  g_return_val_if_fail (p != NULL && tag != NULL, FALSE);
  if (!*tag)
    {
      g_set_error (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_INVALID, "a tag cannot be empty");
      return FALSE;
    }
  return nl_project_write (p, "cannot add the tag", NULL, error, "INSERT OR IGNORE INTO tags (run, tag) VALUES (?1, ?2)",
                 "it", run, tag) >= 0;
}

gboolean
nl_project_remove_tag (NlProject *p, gint64 run, const char *tag, GError **error)
{
  g_return_val_if_fail (p != NULL && tag != NULL, FALSE);
  return nl_project_write (p, "cannot remove the tag", NULL, error, "DELETE FROM tags WHERE run = ?1 AND tag = ?2",
                 "it", run, tag) >= 0;
}

static void
tag_row (sqlite3_stmt *st, gpointer data)
{
  g_ptr_array_add (data, nl_project_col_str (st, 0));
}

char **
nl_project_list_tags (NlProject *p, gint64 run, GError **error)
{
  g_return_val_if_fail (p != NULL, NULL);
  g_autoptr (GPtrArray) out = g_ptr_array_new_with_free_func (g_free);
  g_mutex_lock (&p->lock);
  sqlite3_stmt *st = nl_project_prepare_bind (p, error, "SELECT DISTINCT tag FROM tags WHERE ?1 = 0 OR run = ?1"
                                   " ORDER BY tag", "i", run);
  gboolean ok = st && nl_project_for_rows (p, st, tag_row, out, error);
  g_mutex_unlock (&p->lock);
  if (!ok)
    return NULL;
  g_ptr_array_add (out, NULL);
  g_ptr_array_set_free_func (out, NULL);
  return (char **) g_ptr_array_free (g_steal_pointer (&out), FALSE);
}

void
nl_note_free (NlNote *n)
{
  if (!n)
    return;
  g_free (n->text);
  g_free (n);
}

gint64
nl_project_add_note (NlProject *p, gint64 run, const char *text, GError **error)
{
  g_return_val_if_fail (p != NULL && text != NULL, 0);
  gint64 id = 0;
  gint64 n = nl_project_write (p, "cannot add the note", &id, error,
                     "INSERT INTO notes (run, text, created) VALUES (?1, ?2, ?3)", "itd", run, text,
                     nl_project_now ());
  return n == 1 ? id : 0;
}

static void
note_row (sqlite3_stmt *st, gpointer data)
{
  NlNote *n = g_new0 (NlNote, 1);
  n->id = sqlite3_column_int64 (st, 0);
  n->run = sqlite3_column_int64 (st, 1);
  n->text = nl_project_col_str (st, 2);
  n->created = sqlite3_column_double (st, 3);
  g_ptr_array_add (data, n);
}

GPtrArray *
nl_project_list_notes (NlProject *p, gint64 run, GError **error)
{
  g_return_val_if_fail (p != NULL, NULL);
  GPtrArray *out = g_ptr_array_new_with_free_func ((GDestroyNotify) nl_note_free);
  g_mutex_lock (&p->lock);
  sqlite3_stmt *st = nl_project_prepare_bind (p, error, "SELECT id, run, text, created FROM notes WHERE run = ?1"
                                   " ORDER BY id", "i", run);
  gboolean ok = st && nl_project_for_rows (p, st, note_row, out, error);
  g_mutex_unlock (&p->lock);
  if (!ok)
    g_clear_pointer (&out, g_ptr_array_unref);
  return out;
}

gboolean
nl_project_delete_note (NlProject *p, gint64 note, GError **error)
{
  g_return_val_if_fail (p != NULL, FALSE);
  gint64 n = nl_project_write (p, "cannot delete the note", NULL, error, "DELETE FROM notes WHERE id = ?1", "i", note);
  return n == 1 || (n == 0 && nl_project_not_found (p, error, "note", note));
}
