/* nl-project-private.h — the NlProject struct and SQL helpers shared by
 * nl-project.c (open, schema, migrations), nl-project-check.c (integrity
 * check, copies), nl-project-tables.c (networks, pipelines, runs, tags,
 * notes) and nl-project-run-data.c (metrics, checkpoints). */
#pragma once

#include <sqlite3.h>

#include "projects/nl-project.h"

struct NlProject {
  sqlite3 *db;
  char *path;
  GMutex lock;         /* guards db (and SQLite's per-connection error text) */
  int schema_version;
  gboolean read_only;
  int last_rc;         /* of the last SQLite failure (nl_project_sql_error), for nl_project_restate */
  GMutex hold_lock;    /* guards holds, apart from lock: a trainer asks without waiting on SQLite */
  GHashTable *holds;   /* run id -> the hold of its trainer in this process (nl-project-hold.c) */
};

/* Sets ERROR from SQLite's result code rc and the connection's message:
 * "PATH: WHAT: sqlite's text". Returns FALSE. Call with p->lock held. */
gboolean nl_project_sql_error (NlProject *p, int rc, const char *what, GError **error);
/* Row id of table (checkpoints, INT8 models) in one read transaction: sql
 * (a SELECT binding ?1 = id) gives the row's other columns to read_row,
 * then its "blob" column is read whole, straight into our buffer (the
 * transaction keeps the row stable). what names the row in errors
 * ("checkpoint": "no checkpoint 7", "cannot read the checkpoint"). */
GBytes *nl_project_load_blob_row (NlProject *p, const char *table, const char *what, const char *sql, gint64 id,
                                  void (*read_row) (sqlite3_stmt *st, gpointer data), gpointer data,
                                  GError **error);

/* A failed write's ERROR restated as what was being done, when the disk
 * failed (full, I/O error, a journal that cannot be opened):
 * "PATH: disk full while saving checkpoint of run 2 (epoch 3)". Other
 * errors (read-only, busy, not found, bad input) keep their words. Takes
 * p->lock: call without it. */
void nl_project_restate (NlProject *p, GError **error, const char *doing_fmt, ...) G_GNUC_PRINTF (3, 4);

/* Called with p->lock held. */
gboolean nl_project_exec (NlProject *p, const char *sql, GError **error);
gboolean nl_project_begin_write (NlProject *p, GError **error);
gboolean nl_project_commit (NlProject *p, GError **error);
void nl_project_rollback (NlProject *p);
sqlite3_stmt *nl_project_prepare (NlProject *p, const char *sql, GError **error);

/* Unix time in seconds. */
double nl_project_now (void);

/* ---- statement helpers (nl-project-tables.c); all with p->lock held
 * except nl_project_write ---- */

/* A text column as a new string (NULL for NULL); a REAL column, NaN for NULL. */
char *nl_project_col_str (sqlite3_stmt *st, int i);
double nl_project_col_real (sqlite3_stmt *st, int i);
/* fmt has one letter per parameter ?1, ?2, ...: 'i' gint64, 'n' int,
 * 'd' double (NaN binds NULL), 't' const char * (NULL binds NULL). The
 * strings must outlive the statement's execution. */
sqlite3_stmt *nl_project_prepare_bind (NlProject *p, GError **error, const char *sql, const char *fmt, ...);
/* Runs one statement inside the caller's transaction. Returns the number
 * of rows changed, or -1 with ERROR. */
gint64 nl_project_step (NlProject *p, const char *what, GError **error, const char *sql, const char *fmt, ...);
/* One statement in its own write transaction; takes the lock. Returns the
 * number of rows changed (-1 on error); rowid (may be NULL) receives the
 * last inserted rowid. */
gint64 nl_project_write (NlProject *p, const char *what, gint64 *rowid, GError **error, const char *sql,
                         const char *fmt, ...);
/* Steps ST to the end, handing each row to fn; finalizes ST. With p->lock held. */
gboolean nl_project_for_rows (NlProject *p, sqlite3_stmt *st, void (*fn) (sqlite3_stmt *, gpointer), gpointer data,
                              GError **error);
/* Sets a NOT_FOUND error "PATH: no WHAT ID"; returns FALSE. */
gboolean nl_project_not_found (NlProject *p, GError **error, const char *what, gint64 id);

/* Marks runs whose trainer is gone 'interrupted' (nl-project-stale.c);
 * called by nl_project_open, without p->lock. */
gboolean nl_project_mark_stale_runs (NlProject *p, GError **error);

/* Sets RUN's status in the caller's write transaction, as
 * nl_project_set_run_status; NOW is the time written (nl-project-hold.c).
 * Returns the rows changed, -1 with ERROR. */
gint64 nl_project_step_run_status (NlProject *p, gint64 run, const char *status, const char *error_message,
                                   double now, GError **error);
/* nl_project_write, after nl_project_hold_check (RUN, FALSE) in the same
 * transaction. */
gint64 nl_project_write_run (NlProject *p, gint64 run, const char *what, GError **error, const char *sql,
                             const char *fmt, ...);

/* In a write transaction, with p->lock held: TRUE when this NlProject
 * does not hold RUN, or holds it still (beat: its heartbeat is written
 * too); a run marked 'interrupted' for its silence that nobody wrote to
 * since is taken back (status 'running' again, with a note). Otherwise
 * NL_PROJECT_ERROR_TAKEN, for good (nl-project-hold.c). */
gboolean nl_project_hold_check (NlProject *p, gint64 run, gboolean beat, GError **error);
