/* nl-project-stale.c — who is still training: the heartbeat a trainer
 * writes on its run, and marking the runs whose trainer is gone.
 *
 * A heartbeat works for every host that shares the file (MPI jobs, NFS,
 * containers with their own pid namespace), where a host name and a pid
 * say nothing, or worse, name another process after the pid was reused. */
#include "projects/nl-project-private.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

double
nl_project_heartbeat_interval (void)
{
  const char *env = g_getenv ("NETLOOM_HEARTBEAT_INTERVAL");
  if (env && *env)
    {
      char *end = NULL;
      double v = g_ascii_strtod (env, &end);
      if (end != env && !*end && v > 0 && v < 1e6)
        return v;
    }
  return 5.0;
}

gboolean
nl_project_heartbeat (NlProject *p, gint64 run, GError **error)
{
  g_return_val_if_fail (p != NULL, FALSE);
  gint64 n = -1;
  g_mutex_lock (&p->lock);
  if (nl_project_begin_write (p, error))
    {
      /* a held run is beaten (or taken back) by the hold's check */
      gboolean held = FALSE;
      g_mutex_lock (&p->hold_lock);
      held = p->holds && g_hash_table_contains (p->holds, &run);
      g_mutex_unlock (&p->hold_lock);
      if (held)
        n = nl_project_hold_check (p, run, TRUE, error) ? 1 : -1;
      else
        n = nl_project_step (p, "cannot write the run's heartbeat", error,
                             "UPDATE runs SET heartbeat = ?2 WHERE id = ?1", "id", run, nl_project_now ());
      if (n < 0 || !nl_project_commit (p, error))
        {
          n = -1;
          nl_project_rollback (p);
        }
    }
  g_mutex_unlock (&p->lock);
  if (n < 0)
    nl_project_restate (p, error, "writing the heartbeat of run %" G_GINT64_FORMAT, run);
  return n == 1 || (n == 0 && nl_project_not_found (p, error, "run", run));
}

/* Runs stored before heartbeats only: their process on this host. */
static gboolean
pid_alive (gint64 pid)
{
  if (pid <= 0 || pid > G_MAXINT)
    return FALSE;
  if (pid == getpid ())
    return TRUE;
  if (kill ((pid_t) pid, 0) != 0 && errno != EPERM)
    return FALSE;
  /* kill() succeeds on a zombie: dead, just not reaped by its parent yet. */
  g_autofree char *stat_path = g_strdup_printf ("/proc/%" G_GINT64_FORMAT "/stat", pid);
  g_autofree char *contents = NULL;
  if (g_file_get_contents (stat_path, &contents, NULL, NULL))
    {
      const char *rp = strrchr (contents, ')');
      if (rp && rp[1] == ' ' && (rp[2] == 'Z' || rp[2] == 'X'))
        return FALSE;
    }
  return TRUE;
}

/* Only reads unless there is something to mark, so readers opening the
 * project do not queue for the write lock. */
gboolean
nl_project_mark_stale_runs (NlProject *p, GError **error)
{
  double now = nl_project_now ();
  double limit = NL_PROJECT_STALE_BEATS * nl_project_heartbeat_interval ();
  g_autoptr (GArray) stale = g_array_new (FALSE, FALSE, sizeof (gint64)); /* id, pid pairs */
  int rc;
  gboolean ok;
  sqlite3_stmt *st;

  g_mutex_lock (&p->lock);
  st = nl_project_prepare_bind (p, error, "SELECT id, heartbeat, pid, host = ?1 FROM runs"
                                          " WHERE status IN ('running', 'paused')", "t", g_get_host_name ());
  if (!st)
    {
      g_mutex_unlock (&p->lock);
      return FALSE;
    }
  while ((rc = sqlite3_step (st)) == SQLITE_ROW)
    {
      gint64 id = sqlite3_column_int64 (st, 0);
      gboolean beats = sqlite3_column_type (st, 1) != SQLITE_NULL;
      gboolean silent = beats && now - sqlite3_column_double (st, 1) > limit;
      /* a process of this host known to be gone needs no waiting for its
       * heartbeat to age (a live pid proves nothing: it may be reused) */
      if (silent || (sqlite3_column_int (st, 3) && !pid_alive (sqlite3_column_int64 (st, 2))))
        {
          gint64 pid = sqlite3_column_int64 (st, 2);
          g_array_append_val (stale, id);
          g_array_append_val (stale, pid);
        }
    }
  sqlite3_finalize (st);
  ok = rc == SQLITE_DONE || nl_project_sql_error (p, rc, "cannot read runs", error);
  if (!ok || stale->len == 0)
    {
      g_mutex_unlock (&p->lock);
      return ok;
    }

  ok = nl_project_begin_write (p, error);
  /* checked again under the write lock: a trainer may have beaten since */
  for (guint i = 0; ok && 2 * i < stale->len; i++)
    ok = nl_project_step (p, "cannot mark a run interrupted", error,
                          "UPDATE runs SET status = 'interrupted', finished = ?2,"
                          " error = coalesce (error, CASE WHEN ?2 - heartbeat > ?3"
                          "   THEN 'the trainer ended while the run was ' || status || ' (no heartbeat for ' ||"
                          "     printf ('%.0f', ?2 - heartbeat) || ' s)'"
                          "   ELSE 'the process ' || pid || ' on ' || host || ' ended while the run was ' || status END)"
                          " WHERE id = ?1 AND status IN ('running', 'paused')"
                          " AND (heartbeat IS NULL OR ?2 - heartbeat > ?3 OR (host = ?4 AND pid = ?5))",
                          "iddti", g_array_index (stale, gint64, 2 * i), now, limit, g_get_host_name (),
                          g_array_index (stale, gint64, 2 * i + 1)) >= 0;
  ok = ok && nl_project_commit (p, error);
  if (!ok)
    nl_project_rollback (p);
  g_mutex_unlock (&p->lock);
  return ok;
}
