/* nl-project.c — opening a project file: the safety checks that come before
 * any write, the schema, migrations with a backup, pragmas and the sample
 * project. Row access is in nl-project-tables.c, the integrity check and
 * copies in nl-project-check.c. */
#include "projects/nl-project-private.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <stdarg.h>
#include <string.h>
#include <unistd.h>

#include "projects/nl-data-resources.h"

G_DEFINE_QUARK (nl-project-error-quark, nl_project_error)

#define BUSY_TIMEOUT_MS 5000

/* The current schema, for new files. Column order puts checkpoint blobs
 * last so reading the other columns never walks a blob's overflow pages.
 * test-project checks that migrating an old file gives the same tables,
 * columns and indexes as this. */
/* A sweep: the search, its base settings and network snapshot; its
 * trials are the runs that point at it. */
#define SWEEPS_SQL \
  "CREATE TABLE sweeps (" \
  "  id INTEGER PRIMARY KEY," \
  "  name TEXT NOT NULL DEFAULT ''," \
  "  network_name TEXT," \
  "  network_json TEXT NOT NULL," \
  "  hparams_json TEXT NOT NULL," \
  "  device TEXT," \
  "  space TEXT NOT NULL," \
  "  strategy TEXT NOT NULL," \
  "  trials INTEGER NOT NULL," \
  "  metric TEXT NOT NULL," \
  "  maximize INTEGER NOT NULL," \
  "  prune TEXT," \
  "  parallel INTEGER NOT NULL DEFAULT 1," \
  "  seed INTEGER NOT NULL DEFAULT 0," \
  "  status TEXT NOT NULL DEFAULT 'running' CHECK (status IN ('running', 'finished', 'stopped'))," \
  "  created REAL NOT NULL," \
  "  finished REAL);"

/* An INT8 model of a run (nl-run-quantize.h): goes with its run and with
 * the checkpoint it was made from. Blob last, as checkpoints'. */
#define INT8_MODELS_SQL \
  "CREATE TABLE int8_models (" \
  "  id INTEGER PRIMARY KEY," \
  "  run INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE," \
  "  checkpoint INTEGER NOT NULL REFERENCES checkpoints (id) ON DELETE CASCADE," \
  "  epoch INTEGER NOT NULL," \
  "  method TEXT NOT NULL CHECK (method IN ('naive', 'entropy'))," \
  "  calibration_samples INTEGER NOT NULL," \
  "  fp32_test_acc REAL," \
  "  int8_test_acc REAL," \
  "  fp32_images_per_s REAL," \
  "  int8_images_per_s REAL," \
  "  size INTEGER NOT NULL DEFAULT 0," \
  "  created REAL NOT NULL," \
  "  blob BLOB NOT NULL);" \
  "CREATE INDEX int8_models_run ON int8_models (run);" \
  /* a deleted checkpoint finds its INT8 models without a scan */ \
  "CREATE INDEX int8_models_checkpoint ON int8_models (checkpoint);"

/* Layer histograms (nl-project-layers.h): counts as one blob per row. */
#define LAYER_HISTOGRAMS_SQL \
  "CREATE TABLE layer_histograms (" \
  "  id INTEGER PRIMARY KEY," \
  "  run INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE," \
  "  step INTEGER NOT NULL," \
  "  tensor TEXT NOT NULL," \
  "  is_grad INTEGER NOT NULL," \
  "  lo REAL NOT NULL," \
  "  hi REAL NOT NULL," \
  "  counts BLOB NOT NULL);" \
  "CREATE INDEX layer_histograms_run ON layer_histograms (run, is_grad, tensor, step);"

/* A text run's vocabulary (nl-project.h): the JSON of its NlVocab. */
#define RUN_VOCABS_SQL \
  "CREATE TABLE run_vocabs (" \
  "  run_id INTEGER PRIMARY KEY REFERENCES runs ON DELETE CASCADE," \
  "  vocab TEXT NOT NULL);"

static const char schema_sql[] =
  "CREATE TABLE networks ("
  "  id INTEGER PRIMARY KEY,"
  "  name TEXT NOT NULL,"
  "  version INTEGER NOT NULL,"
  "  json TEXT NOT NULL,"
  "  created REAL NOT NULL,"
  "  UNIQUE (name, version));"
  "CREATE TABLE pipelines ("
  "  id INTEGER PRIMARY KEY,"
  "  name TEXT NOT NULL UNIQUE,"
  "  dataset_spec TEXT NOT NULL,"
  "  transforms TEXT,"
  "  split REAL NOT NULL DEFAULT 0,"
  "  batch_size INTEGER NOT NULL DEFAULT 0,"
  "  workers INTEGER NOT NULL DEFAULT 0,"
  "  json TEXT,"
  "  created REAL NOT NULL);"
  "CREATE TABLE runs ("
  "  id INTEGER PRIMARY KEY,"
  "  name TEXT NOT NULL DEFAULT '',"
  "  parent_run INTEGER REFERENCES runs (id) ON DELETE SET NULL,"
  "  parent_checkpoint INTEGER REFERENCES checkpoints (id) ON DELETE SET NULL,"
  "  network_name TEXT,"
  "  network_json TEXT NOT NULL,"
  "  pipeline_json TEXT,"
  "  hparams_json TEXT,"
  "  seed INTEGER NOT NULL DEFAULT 0,"
  "  status TEXT NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'running', 'paused',"
  "    'finished', 'failed', 'stopped', 'interrupted', 'pruned')),"
  "  error TEXT,"
  "  host TEXT,"
  "  pid INTEGER,"
  "  created REAL NOT NULL,"
  "  started REAL,"
  "  finished REAL,"
  "  device TEXT,"
  "  epochs_done INTEGER NOT NULL DEFAULT 0,"
  "  sweep INTEGER REFERENCES sweeps (id) ON DELETE SET NULL,"
  "  sweep_trial INTEGER,"
  "  sweep_params TEXT,"
  "  heartbeat REAL,"
  "  interval_checkpoint INTEGER REFERENCES checkpoints (id) ON DELETE SET NULL);"
  "CREATE INDEX runs_parent_run ON runs (parent_run);"
  /* a trial is created once: its run row carries the link */
  "CREATE UNIQUE INDEX runs_sweep_trial ON runs (sweep, sweep_trial);"
  SWEEPS_SQL
  "CREATE INDEX runs_parent_checkpoint ON runs (parent_checkpoint);"
  /* AUTOINCREMENT: rowids never come back after a delete, so a watcher's
   * after_rowid never skips new rows. */
  "CREATE TABLE metrics ("
  "  id INTEGER PRIMARY KEY AUTOINCREMENT,"
  "  run INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,"
  "  step INTEGER NOT NULL,"
  "  epoch INTEGER NOT NULL,"
  "  split TEXT NOT NULL CHECK (split IN ('train', 'val', 'test')),"
  "  name TEXT NOT NULL,"
  "  value REAL,"
  "  wall REAL NOT NULL);"
  "CREATE INDEX metrics_run_name_step ON metrics (run, name, step);"
  /* (run) is (run, rowid) to SQLite: a run's rows in rowid order, for
   * watchers polling the tail and for whole-run reads without a sort. */
  "CREATE INDEX metrics_run ON metrics (run);"
  /* Per (run, name, split): kept up to date by nl_project_add_metrics in
   * the same transaction, so run tables read best and last values without
   * scanning a run's metrics. */
  "CREATE TABLE metric_summaries ("
  "  run INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,"
  "  name TEXT NOT NULL,"
  "  split TEXT NOT NULL,"
  "  min_value REAL,"
  "  max_value REAL,"
  "  last_step INTEGER NOT NULL,"
  "  last_id INTEGER NOT NULL,"
  "  last_value REAL,"
  "  count INTEGER NOT NULL,"
  "  PRIMARY KEY (run, name, split)) WITHOUT ROWID;"
  "CREATE TABLE checkpoints ("
  "  id INTEGER PRIMARY KEY,"
  "  run INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,"
  "  epoch INTEGER NOT NULL,"
  "  step INTEGER NOT NULL,"
  "  metric_name TEXT,"
  "  metric_value REAL,"
  "  is_best INTEGER NOT NULL DEFAULT 0,"
  "  created REAL NOT NULL,"
  "  size INTEGER NOT NULL DEFAULT 0,"
  "  blob BLOB NOT NULL);"
  "CREATE INDEX checkpoints_run ON checkpoints (run);"
  "CREATE TABLE tags ("
  "  run INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,"
  "  tag TEXT NOT NULL,"
  "  PRIMARY KEY (run, tag));"
  "CREATE TABLE notes ("
  "  id INTEGER PRIMARY KEY,"
  "  run INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,"
  "  text TEXT NOT NULL,"
  "  created REAL NOT NULL);"
  "CREATE INDEX notes_run ON notes (run);"
  INT8_MODELS_SQL
  LAYER_HISTOGRAMS_SQL
  RUN_VOCABS_SQL;

/* migrations[v] takes a file from schema v to v + 1. Version 0 was the
 * first draft: runs without device and epochs_done, checkpoints without
 * size, no notes, no metric summaries (tests/fixtures/project-v0.sql
 * builds one). */
static const char *const migrations[] = {
  "ALTER TABLE runs ADD COLUMN device TEXT;"
  "ALTER TABLE runs ADD COLUMN epochs_done INTEGER NOT NULL DEFAULT 0;"
  "ALTER TABLE checkpoints ADD COLUMN size INTEGER NOT NULL DEFAULT 0;"
  "UPDATE checkpoints SET size = length (blob);"
  "CREATE TABLE notes ("
  "  id INTEGER PRIMARY KEY,"
  "  run INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,"
  "  text TEXT NOT NULL,"
  "  created REAL NOT NULL);"
  "CREATE INDEX notes_run ON notes (run);"
  "CREATE INDEX metrics_run ON metrics (run);"
  /* Per (run, name, split): kept up to date by nl_project_add_metrics in
   * the same transaction, so run tables read best and last values without
   * scanning a run's metrics. */
  "CREATE TABLE metric_summaries ("
  "  run INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,"
  "  name TEXT NOT NULL,"
  "  split TEXT NOT NULL,"
  "  min_value REAL,"
  "  max_value REAL,"
  "  last_step INTEGER NOT NULL,"
  "  last_id INTEGER NOT NULL,"
  "  last_value REAL,"
  "  count INTEGER NOT NULL,"
  "  PRIMARY KEY (run, name, split)) WITHOUT ROWID;"
  "INSERT INTO metric_summaries (run, name, split, min_value, max_value, last_step, last_id, last_value, count)"
  "  SELECT run, name, split, min (value), max (value), 0, 0, NULL, count (*) FROM metrics"
  "  GROUP BY run, name, split;"
  "UPDATE metric_summaries SET (last_step, last_id, last_value) = (SELECT step, id, value FROM metrics m"
  "  WHERE m.run = metric_summaries.run AND m.name = metric_summaries.name"
  "  AND m.split = metric_summaries.split ORDER BY step DESC, id DESC LIMIT 1);",
  /* Version 1 had no sweeps and no 'pruned' status. SQLite cannot alter a
   * CHECK, and rebuilding runs would cascade-delete its metrics: the
   * CHECK's text is widened in place (SQLite's documented way to loosen a
   * constraint); RESET makes the connection reread the schema, or the
   * ALTERs below would splice their columns in at stale offsets. */
  "PRAGMA writable_schema = ON;"
  "UPDATE sqlite_master SET sql = replace (sql, '''stopped'', ''interrupted''))',"
  "  '''stopped'', ''interrupted'', ''pruned''))') WHERE type = 'table' AND name = 'runs';"
  "PRAGMA writable_schema = RESET;"
  SWEEPS_SQL
  "ALTER TABLE runs ADD COLUMN sweep INTEGER REFERENCES sweeps (id) ON DELETE SET NULL;"
  "ALTER TABLE runs ADD COLUMN sweep_trial INTEGER;"
  "ALTER TABLE runs ADD COLUMN sweep_params TEXT;"
  "CREATE UNIQUE INDEX runs_sweep_trial ON runs (sweep, sweep_trial);",
  /* Version 2 had no heartbeat (stale runs were found by host and pid)
   * and no checkpoints by time: the run's one such checkpoint is named by
   * the run, so the checkpoints table (blob last) stays as it was. */
  ("ALTER TABLE runs ADD COLUMN heartbeat REAL;"  /* one element: clang asks for the parentheses */
   "ALTER TABLE runs ADD COLUMN interval_checkpoint INTEGER REFERENCES checkpoints (id) ON DELETE SET NULL;"),
  /* Version 3 had no INT8 models. */
  INT8_MODELS_SQL,
  /* Version 4 had no layer histograms. */
  LAYER_HISTOGRAMS_SQL,
  /* Version 5 had no text runs' vocabularies. */
  RUN_VOCABS_SQL,
};
G_STATIC_ASSERT (G_N_ELEMENTS (migrations) == NL_PROJECT_SCHEMA_VERSION);

double
nl_project_now (void)
{
  return g_get_real_time () / 1e6;
}

gboolean
nl_project_sql_error (NlProject *p, int rc, const char *what, GError **error)
{
  const char *msg = p->db ? sqlite3_errmsg (p->db) : sqlite3_errstr (rc);
  int code;
  p->last_rc = rc;
  if (rc == SQLITE_CONSTRAINT_FOREIGNKEY)
    {
      g_set_error (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_NOT_FOUND,
                   "%s: %s: it refers to a run or checkpoint that does not exist", p->path, what);
      return FALSE;
    }
  switch (rc & 0xff)
    {
    case SQLITE_READONLY: code = NL_PROJECT_ERROR_READ_ONLY; break;
    case SQLITE_BUSY:
    case SQLITE_LOCKED: code = NL_PROJECT_ERROR_BUSY; break;
    case SQLITE_CORRUPT: code = NL_PROJECT_ERROR_CORRUPT; break;
    case SQLITE_NOTADB: code = NL_PROJECT_ERROR_NOT_PROJECT; break;
    case SQLITE_FULL: code = NL_PROJECT_ERROR_FULL; msg = "disk full"; break;
    default: code = NL_PROJECT_ERROR_FAILED; break;
    }
  if (code == NL_PROJECT_ERROR_READ_ONLY)
    g_set_error (error, NL_PROJECT_ERROR, code, "%s is read-only (%s: %s)", p->path, what, msg);
  else
    g_set_error (error, NL_PROJECT_ERROR, code, "%s: %s: %s", p->path, what, msg);
  return FALSE;
}

/* What went wrong with the disk, from SQLite's (extended) result code;
 * NULL when it was something else. */
static const char *
disk_failure (int rc)
{
  switch (rc)
    {
    case SQLITE_IOERR_WRITE: return "write error";
    case SQLITE_IOERR_FSYNC:
    case SQLITE_IOERR_DIR_FSYNC: return "cannot flush writes to disk";
    case SQLITE_IOERR_NOMEM: return NULL;
    default: break;
    }
  switch (rc & 0xff)
    {
    case SQLITE_FULL: return "disk full";
    case SQLITE_IOERR: return "disk I/O error";
    case SQLITE_CANTOPEN: return "cannot open its journal";
    default: return NULL;
    }
}

void
nl_project_restate (NlProject *p, GError **error, const char *doing_fmt, ...)
{
  if (!error || !*error || (*error)->domain != NL_PROJECT_ERROR
      || ((*error)->code != NL_PROJECT_ERROR_FULL && (*error)->code != NL_PROJECT_ERROR_FAILED))
    return;
  g_mutex_lock (&p->lock);
  const char *why = disk_failure (p->last_rc);
  p->last_rc = SQLITE_OK;
  g_mutex_unlock (&p->lock);
  if (!why)
    return;
  va_list ap;
  va_start (ap, doing_fmt);
  g_autofree char *doing = g_strdup_vprintf (doing_fmt, ap);
  va_end (ap);
  g_free ((*error)->message);
  (*error)->message = g_strdup_printf ("%s: %s while %s", p->path, why, doing);
}

gboolean
nl_project_exec (NlProject *p, const char *sql, GError **error)
{
  int rc = sqlite3_exec (p->db, sql, NULL, NULL, NULL);
  return rc == SQLITE_OK || nl_project_sql_error (p, rc, "cannot update", error);
}

/* IMMEDIATE takes the write lock up front, so the busy timeout applies; a
 * deferred transaction that later upgrades can fail at once with BUSY. */
gboolean
nl_project_begin_write (NlProject *p, GError **error)
{
  if (p->read_only)
    {
      g_set_error (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_READ_ONLY,
                   "%s is read-only: cannot write to it", p->path);
      return FALSE;
    }
  int rc = sqlite3_exec (p->db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
  return rc == SQLITE_OK || nl_project_sql_error (p, rc, "cannot start a write", error);
}

gboolean
nl_project_commit (NlProject *p, GError **error)
{
  int rc = sqlite3_exec (p->db, "COMMIT", NULL, NULL, NULL);
  return rc == SQLITE_OK || nl_project_sql_error (p, rc, "cannot commit", error);
}

void
nl_project_rollback (NlProject *p)
{
  if (!sqlite3_get_autocommit (p->db))
    sqlite3_exec (p->db, "ROLLBACK", NULL, NULL, NULL);
}

sqlite3_stmt *
nl_project_prepare (NlProject *p, const char *sql, GError **error)
{
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2 (p->db, sql, -1, &st, NULL);
  if (rc != SQLITE_OK)
    {
      nl_project_sql_error (p, rc, "bad query", error);
      return NULL;
    }
  return st;
}

/* One integer from a query (pragmas, counts). Returns SQLite's result code. */
static int
query_int (sqlite3 *db, const char *sql, gint64 *out)
{
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2 (db, sql, -1, &st, NULL);
  if (rc == SQLITE_OK)
    {
      rc = sqlite3_step (st);
      if (rc == SQLITE_ROW)
        {
          *out = sqlite3_column_int64 (st, 0);
          rc = SQLITE_OK;
        }
    }
  sqlite3_finalize (st);
  return rc;
}

typedef struct {
  gint64 app_id, version, n_objects;
} FileState;

static int
read_state (sqlite3 *db, FileState *s)
{
  int rc = query_int (db, "PRAGMA application_id", &s->app_id);
  if (rc == SQLITE_OK)
    rc = query_int (db, "PRAGMA user_version", &s->version);
  if (rc == SQLITE_OK)
    rc = query_int (db, "SELECT count(*) FROM sqlite_master", &s->n_objects);
  return rc;
}

static gboolean
state_is_empty (const FileState *s)
{
  return s->app_id == 0 && s->version == 0 && s->n_objects == 0;
}

/* Refuses what we must not touch. Returns FALSE with the error. */
static gboolean
check_state (const char *path, const FileState *s, gboolean create, GError **error)
{
  if (state_is_empty (s) && create)
    return TRUE;
  if (s->app_id != NL_PROJECT_APPLICATION_ID)
    {
      g_set_error (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_NOT_PROJECT,
                   "%s is not a netloom project", path);
      return FALSE;
    }
  if (s->version < 0)  /* no netloom writes one; migrations[] is indexed by it */
    {
      g_set_error (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_CORRUPT,
                   "%s is damaged: its schema version is %" G_GINT64_FORMAT, path, s->version);
      return FALSE;
    }
  if (s->version > NL_PROJECT_SCHEMA_VERSION)
    {
      g_set_error (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_NEWER,
                   "%s was written by a newer netloom (schema %" G_GINT64_FORMAT
                   ", this one reads up to %d)", path, s->version, NL_PROJECT_SCHEMA_VERSION);
      return FALSE;
    }
  return TRUE;
}

/* Looks at an existing file through a read-only connection, so a file we
 * are going to refuse is never written (a read-write open could roll back
 * a journal or switch it to WAL). */
static gboolean
probe (const char *path, const char *uri, gboolean create, int *rc_out, GError **error)
{
  sqlite3 *db = NULL;
  FileState s = { 0 };
  int rc = sqlite3_open_v2 (uri ? uri : path, &db, SQLITE_OPEN_READONLY | (uri ? SQLITE_OPEN_URI : 0), NULL);
  if (rc == SQLITE_OK)
    {
      sqlite3_busy_timeout (db, BUSY_TIMEOUT_MS);
      rc = read_state (db, &s);
    }
  gboolean ok;
  if ((rc & 0xff) == SQLITE_NOTADB)
    ok = (g_set_error (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_NOT_PROJECT,
                       "%s is not a netloom project", path), FALSE);
  else if (rc != SQLITE_OK)
    ok = (g_set_error (error, NL_PROJECT_ERROR,
                       (rc & 0xff) == SQLITE_BUSY ? NL_PROJECT_ERROR_BUSY : NL_PROJECT_ERROR_FAILED,
                       "cannot open %s: %s", path, db ? sqlite3_errmsg (db) : sqlite3_errstr (rc)),
          FALSE);
  else
    ok = check_state (path, &s, create, error);
  sqlite3_close (db);
  *rc_out = rc;
  return ok;
}

/* A file:...?immutable=1 URI: SQLite then reads without the WAL index. */
static char *
immutable_uri (const char *path)
{
  g_autofree char *abs = g_canonicalize_filename (path, NULL);
  g_autofree char *esc = g_uri_escape_string (abs, "/", FALSE);
  return g_strdup_printf ("file:%s?immutable=1", esc);
}

/* A database file with its WAL, shared-memory index and rollback journal
 * (a new file is set up in rollback mode; a failure can leave its journal). */
static void
remove_db_files (const char *path)
{
  static const char *const suffixes[] = { "", "-wal", "-shm", "-journal" };
  for (guint i = 0; i < G_N_ELEMENTS (suffixes); i++)
    {
      g_autofree char *f = g_strconcat (path, suffixes[i], NULL);
      g_unlink (f);
    }
}

/* A consistent copy through SQLite (a raw copy could miss what is still in
 * the WAL, or catch a half-written page). It reads through a second
 * connection because ours holds the write lock, which SQLite's backup
 * cannot read through; readers can, so the copy is exactly the state
 * about to be migrated. */
static gboolean
backup_to (NlProject *p, const char *dest_path, GError **error)
{
  remove_db_files (dest_path);
  sqlite3 *src = NULL, *dest = NULL;
  int rc = sqlite3_open_v2 (p->path, &src, SQLITE_OPEN_READONLY, NULL);
  if (rc == SQLITE_OK)
    {
      sqlite3_busy_timeout (src, BUSY_TIMEOUT_MS);
      rc = sqlite3_open_v2 (dest_path, &dest, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL);
    }
  if (rc == SQLITE_OK)
    {
      sqlite3_backup *b = sqlite3_backup_init (dest, "main", src, "main");
      if (!b)
        rc = sqlite3_errcode (dest);
      else
        {
          rc = sqlite3_backup_step (b, -1);
          int rc2 = sqlite3_backup_finish (b);
          rc = rc == SQLITE_DONE ? rc2 : rc;
        }
    }
  if (rc != SQLITE_OK)
    g_set_error (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_FAILED, "cannot back up %s to %s: %s",
                 p->path, dest_path, dest ? sqlite3_errmsg (dest) : sqlite3_errstr (rc));
  sqlite3_close (dest);
  sqlite3_close (src);
  if (rc != SQLITE_OK)
    g_unlink (dest_path);
  return rc == SQLITE_OK;
}

/* Creates the schema of a new file or migrates an old one, in one
 * transaction; the state is read again under the write lock because
 * another process may have done it meanwhile. */
static gboolean
init_or_migrate (NlProject *p, gboolean create, GError **error)
{
  FileState s = { 0 };
  if (!nl_project_begin_write (p, error))
    return FALSE;
  int rc = read_state (p->db, &s);
  gboolean ok = rc == SQLITE_OK || nl_project_sql_error (p, rc, "cannot read", error);
  ok = ok && check_state (p->path, &s, create, error);
  if (ok && state_is_empty (&s))
    {
      g_autofree char *pragmas = g_strdup_printf ("PRAGMA application_id = %d; PRAGMA user_version = %d",
                                                  NL_PROJECT_APPLICATION_ID, NL_PROJECT_SCHEMA_VERSION);
      ok = nl_project_exec (p, schema_sql, error) && nl_project_exec (p, pragmas, error);
    }
  else if (ok && s.version < NL_PROJECT_SCHEMA_VERSION)
    {
      g_autofree char *bak = g_strdup_printf ("%s.bak-v%" G_GINT64_FORMAT, p->path, s.version);
      ok = backup_to (p, bak, error);
      for (gint64 v = s.version; ok && v < NL_PROJECT_SCHEMA_VERSION; v++)
        {
          if (!nl_project_exec (p, migrations[v], error))
            {
              g_prefix_error (error, "migrating to schema %" G_GINT64_FORMAT ": ", v + 1);
              ok = FALSE;
            }
        }
      g_autofree char *pragma = g_strdup_printf ("PRAGMA user_version = %d", NL_PROJECT_SCHEMA_VERSION);
      ok = ok && nl_project_exec (p, pragma, error);
    }
  ok = ok && nl_project_commit (p, error);
  if (!ok)
    nl_project_rollback (p);
  return ok;
}

static gboolean
setup_connection (NlProject *p, gboolean create, GError **error)
{
  sqlite3_extended_result_codes (p->db, 1);
  sqlite3_busy_timeout (p->db, BUSY_TIMEOUT_MS);
  /* SQLite silently opens a file it cannot write read-only. */
  p->read_only = sqlite3_db_readonly (p->db, "main") == 1;
  if (!nl_project_exec (p, "PRAGMA foreign_keys = ON", error))
    return FALSE;

  FileState s = { 0 };
  int rc = read_state (p->db, &s);
  if (rc != SQLITE_OK)
    return nl_project_sql_error (p, rc, "cannot read", error);
  if (!check_state (p->path, &s, create, error))
    return FALSE;
  if (state_is_empty (&s) || s.version < NL_PROJECT_SCHEMA_VERSION)
    {
      if (p->read_only)
        {
          g_set_error (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_READ_ONLY,
                       state_is_empty (&s) ? "%s is read-only: cannot create a project in it"
                                           : "%s is read-only: cannot upgrade its schema", p->path);
          return FALSE;
        }
      if (!init_or_migrate (p, create, error))
        return FALSE;
    }
  if (!p->read_only)
    {
      /* WAL is persistent, set once per file, after a migration so the
       * backup keeps the old file's mode. NORMAL is safe in WAL mode: a
       * power cut loses at most the last commits, never consistency. */
      sqlite3_stmt *st = nl_project_prepare (p, "PRAGMA journal_mode", error);
      if (!st)
        return FALSE;
      gboolean wal = sqlite3_step (st) == SQLITE_ROW
                     && g_ascii_strcasecmp ((const char *) sqlite3_column_text (st, 0), "wal") == 0;
      sqlite3_finalize (st);
      if (!wal && !nl_project_exec (p, "PRAGMA journal_mode = WAL", error))
        return FALSE;
      /* A checkpoint blob passes through the WAL; without a limit the
       * WAL file keeps the size of the largest one until the last close. */
      if (!nl_project_exec (p, "PRAGMA synchronous = NORMAL; PRAGMA journal_size_limit = 67108864", error))
        return FALSE;
    }
  gint64 version = 0;
  rc = query_int (p->db, "PRAGMA user_version", &version);
  if (rc != SQLITE_OK)
    return nl_project_sql_error (p, rc, "cannot read", error);
  p->schema_version = (int) version;
  /* Not worth failing the open over (the file may be busy with a long
   * write); the next open tries again. */
  g_autoptr (GError) stale_error = NULL;
  if (!p->read_only && !nl_project_mark_stale_runs (p, &stale_error))
    g_message ("%s: cannot mark interrupted runs: %s", p->path, stale_error->message);
  return TRUE;
}

NlProject *
nl_project_open (const char *path, gboolean create, GError **error)
{
  g_return_val_if_fail (path != NULL, NULL);
  gboolean existed = g_file_test (path, G_FILE_TEST_EXISTS);
  if (!existed && !create)
    {
      g_set_error (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_NOT_FOUND, "%s does not exist", path);
      return NULL;
    }
  g_autofree char *uri = NULL;
  if (existed)
    {
      int rc = SQLITE_OK;
      g_autoptr (GError) local = NULL;
      if (!probe (path, NULL, create, &rc, &local))
        {
          /* A WAL file in a directory we cannot write (read-only media, a
           * snapshot): SQLite cannot create the shared-memory index. If it
           * was closed cleanly (no -wal left), nothing can change it, so
           * read it as immutable. */
          g_autofree char *wal = g_strconcat (path, "-wal", NULL);
          if ((rc & 0xff) != SQLITE_READONLY || g_file_test (wal, G_FILE_TEST_EXISTS))
            {
              g_propagate_error (error, g_steal_pointer (&local));
              return NULL;
            }
          uri = immutable_uri (path);
          if (!probe (path, uri, create, &rc, error))
            return NULL;
        }
    }

  NlProject *p = g_new0 (NlProject, 1);
  p->path = g_strdup (path);
  g_mutex_init (&p->lock);
  g_mutex_init (&p->hold_lock);
  int flags = uri ? SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX
                  : SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | (create ? SQLITE_OPEN_CREATE : 0);
  int rc = sqlite3_open_v2 (uri ? uri : path, &p->db, flags, NULL);
  gboolean ok = rc == SQLITE_OK;
  g_autofree char *dir = g_path_get_dirname (path);
  if (!ok && !existed && (rc & 0xff) == SQLITE_CANTOPEN && g_access (dir, W_OK) != 0)
    {
      /* say why (SQLite's errno is that of its read-only retry) */
      int e = errno;
      g_set_error (error, NL_PROJECT_ERROR, e == EACCES || e == EROFS ? NL_PROJECT_ERROR_READ_ONLY
                   : NL_PROJECT_ERROR_FAILED, "cannot create %s: %s", path, g_strerror (e));
    }
  else if (!ok)
    nl_project_sql_error (p, rc, "cannot open", error);
  if (ok && !setup_connection (p, create, error))
    {
      /* the file itself opened: what failed is a write, or its journal */
      nl_project_restate (p, error, existed ? "opening the project" : "creating the project");
      ok = FALSE;
    }
  if (!ok)
    {
      nl_project_close (p);
      if (!existed)
        remove_db_files (path);
      return NULL;
    }
  return p;
}

void
nl_project_close (NlProject *p)
{
  if (!p)
    return;
  sqlite3_close_v2 (p->db);
  g_mutex_clear (&p->lock);
  g_mutex_clear (&p->hold_lock);
  if (p->holds)
    g_hash_table_destroy (p->holds);
  g_free (p->path);
  g_free (p);
}

const char *
nl_project_path (NlProject *p)
{
  g_return_val_if_fail (p != NULL, NULL);
  return p->path;
}

int
nl_project_schema_version (NlProject *p)
{
  g_return_val_if_fail (p != NULL, 0);
  return p->schema_version;
}

gint64
nl_project_data_version (NlProject *p)
{
  gint64 v = 0;
  g_return_val_if_fail (p != NULL, 0);
  g_mutex_lock (&p->lock);
  query_int (p->db, "PRAGMA data_version", &v);
  g_mutex_unlock (&p->lock);
  return v;
}

gboolean
nl_project_is_read_only (NlProject *p)
{
  g_return_val_if_fail (p != NULL, TRUE);
  return p->read_only;
}

static gboolean
add_sample_contents (NlProject *p, GError **error)
{
  static const char *const networks[] = { "mlp", "lenet", "resnet-small" };
  GResource *res = nl_data_get_resource ();
  for (guint i = 0; i < G_N_ELEMENTS (networks); i++)
    {
      g_autofree char *rpath = g_strdup_printf ("/org/netloom/data/networks/%s.json", networks[i]);
      g_autoptr (GBytes) bytes = g_resource_lookup_data (res, rpath, G_RESOURCE_LOOKUP_FLAGS_NONE, error);
      if (!bytes)
        return FALSE;
      /* Resource data is NUL-terminated. */
      if (!nl_project_save_network (p, networks[i], g_bytes_get_data (bytes, NULL), error))
        return FALSE;
    }
  /* Fashion-MNIST has its own test set, so no validation split; the mean
   * and deviation are those of its training images. */
  NlPipelineInfo pl = {
    .name = (char *) "fashion-mnist",
    .dataset_spec = (char *) "fashion-mnist",
    .transforms = (char *) "normalize:0.2860:0.3530",
    .split = 0.0,
    .batch_size = 128,
    .workers = 2,
  };
  return nl_project_save_pipeline (p, &pl, error) != 0;
}

gboolean
nl_project_create_sample (const char *path, GError **error)
{
  g_return_val_if_fail (path != NULL, FALSE);
  /* O_EXCL: refuse an existing file even when it appears after a check. */
  int fd = g_open (path, O_WRONLY | O_CREAT | O_EXCL, 0666);
  if (fd < 0)
    {
      int e = errno;
      if (e == EEXIST)
        g_set_error (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_EXISTS, "%s already exists", path);
      else
        g_set_error (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_FAILED, "cannot create %s: %s", path,
                     g_strerror (e));
      return FALSE;
    }
  close (fd);
  NlProject *p = nl_project_open (path, TRUE, error);
  gboolean ok = p && add_sample_contents (p, error);
  nl_project_close (p);
  if (!ok)
    remove_db_files (path);
  return ok;
}
