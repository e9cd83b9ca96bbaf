/* nl-project-private.h — the NlProject struct and SQL helpers shared by
 * nl-project.c (open, schema, migrations) and nl-project-tables.c (rows). */
#pragma once

#include <sqlite3.h>

#include "projects/nl-project.h"

struct NlProject {
  sqlite3 *db;
  char *path;
  GMutex lock;         /* guards db (and SQLite's per-connection error text) */
  int schema_version;
  gboolean read_only;
};

/* Sets ERROR from SQLite's result code rc and the connection's message:
 * "PATH: WHAT: sqlite's text". Returns FALSE. Call with p->lock held. */
gboolean nl_project_sql_error (NlProject *p, int rc, const char *what, GError **error);

/* Called with p->lock held. */
gboolean nl_project_exec (NlProject *p, const char *sql, GError **error);
gboolean nl_project_begin_write (NlProject *p, GError **error);
gboolean nl_project_commit (NlProject *p, GError **error);
void nl_project_rollback (NlProject *p);
sqlite3_stmt *nl_project_prepare (NlProject *p, const char *sql, GError **error);

/* Unix time in seconds. */
double nl_project_now (void);
