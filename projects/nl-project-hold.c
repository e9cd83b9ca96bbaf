/* nl-project-hold.c — a trainer's hold on its run: a trainer that was
 * silent long enough to be marked 'interrupted' (stopped with Ctrl-Z, a
 * stalled file system) either takes its run back or, when another process
 * resumed it meanwhile, writes nothing more to it.
 *
 * The token is the heartbeat itself: a held run's row must still carry
 * this process's host and pid and the last heartbeat this NlProject wrote.
 * A resume (status 'running') writes its own host, pid and heartbeat, so
 * no column is needed; the check runs inside each write's own transaction. */
#include "projects/nl-project-private.h"

#include <string.h>
#include <unistd.h>

typedef struct {
  double mark;      /* the row's heartbeat when last checked ... */
  double pending;   /* ... or the one written since (if its commit went through) */
  double reclaimed; /* seconds of silence of a reclaim nobody was told of yet */
  char *lost;       /* why the run is no longer ours; set once, for good */
} Hold;

static void
hold_free (gpointer data)
{
  Hold *h = data;
  g_free (h->lost);
  g_free (h);
}

/* Takes p->hold_lock; the Hold stays valid while p->lock is held (only
 * nl_project_release_run, taking both, removes it). */
static Hold *
hold_of (NlProject *p, gint64 run)
{
  g_mutex_lock (&p->hold_lock);
  Hold *h = p->holds ? g_hash_table_lookup (p->holds, &run) : NULL;
  g_mutex_unlock (&p->hold_lock);
  return h;
}

static gboolean
lost_error (NlProject *p, gint64 run, Hold *h, GError **error)
{
  g_set_error (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_TAKEN, "%s: run %" G_GINT64_FORMAT " %s", p->path, run,
               h->lost);
  return FALSE;
}

/* The run went back to running: its heartbeat, and a note saying so. */
static gboolean
reclaim (NlProject *p, gint64 run, Hold *h, double now, double silent, GError **error)
{
  g_autofree char *note = g_strdup_printf ("run %" G_GINT64_FORMAT " was stopped for %.0f s (marked interrupted);"
                                           " it goes on", run, silent);
  h->pending = now;
  if (nl_project_step (p, "cannot take the run back", error,
                       "UPDATE runs SET status = 'running', finished = NULL, error = NULL, heartbeat = ?2"
                       " WHERE id = ?1", "id", run, now) < 0
      || nl_project_step (p, "cannot take the run back", error,
                          "INSERT INTO notes (run, text, created) VALUES (?1, ?2, ?3)", "itd", run, note, now) < 0)
    return FALSE;
  g_mutex_lock (&p->hold_lock);
  h->reclaimed = silent;
  g_mutex_unlock (&p->hold_lock);
  return TRUE;
}

gboolean
nl_project_hold_check (NlProject *p, gint64 run, gboolean beat, GError **error)
{
  Hold *h = hold_of (p, run);
  double now = nl_project_now ();
  g_autofree char *status = NULL, *host = NULL;
  double heartbeat;
  gint64 pid;
  int rc;

  if (!h)
    return TRUE;
  if (h->lost)
    return lost_error (p, run, h, error);
  sqlite3_stmt *st = nl_project_prepare_bind (p, error, "SELECT status, heartbeat, host, pid FROM runs WHERE id = ?1",
                                              "i", run);
  if (!st)
    return FALSE;
  rc = sqlite3_step (st);
  if (rc == SQLITE_ROW)
    {
      status = nl_project_col_str (st, 0);
      heartbeat = nl_project_col_real (st, 1);
      host = nl_project_col_str (st, 2);
      pid = sqlite3_column_int64 (st, 3);
    }
  sqlite3_finalize (st);
  if (rc != SQLITE_ROW && rc != SQLITE_DONE)
    return nl_project_sql_error (p, rc, "cannot read the run", error);

  gboolean ours = rc == SQLITE_ROW && g_strcmp0 (host, g_get_host_name ()) == 0 && pid == getpid ()
                  && (heartbeat == h->mark || heartbeat == h->pending);
  if (ours && (!strcmp (status, "running") || !strcmp (status, "paused")))
    {
      h->mark = heartbeat;
      if (!beat)
        return TRUE;
      h->pending = now;
      return nl_project_step (p, "cannot write the run's heartbeat", error,
                              "UPDATE runs SET heartbeat = ?2 WHERE id = ?1", "id", run, now) >= 0;
    }
  /* marked interrupted for its silence, and nobody wrote to it since */
  if (ours && !strcmp (status, "interrupted"))
    {
      h->mark = heartbeat;
      return reclaim (p, run, h, now, now - heartbeat, error);
    }
  g_mutex_lock (&p->hold_lock);
  if (rc != SQLITE_ROW)
    h->lost = g_strdup ("was deleted while this process trained it: it stops and writes nothing more to it");
  else if (strcmp (status, "running") != 0 && strcmp (status, "paused") != 0)
    h->lost = g_strdup_printf ("was marked %s by another process while this process was silent for %.0f s: this"
                               " process stops training it and writes nothing more to it", status, now - h->mark);
  else
    h->lost = g_strdup_printf ("was taken over while this process was silent for %.0f s: it is %s by process %"
                               G_GINT64_FORMAT " on %s now; this process stops training it and writes nothing more"
                               " to it", now - h->mark, status, pid, host ? host : "?");
  g_mutex_unlock (&p->hold_lock);
  return lost_error (p, run, h, error);
}

/* The status change that writes what the check compares: host, pid and
 * heartbeat ('running'). */
gint64
nl_project_step_run_status (NlProject *p, gint64 run, const char *status, const char *error_message, double now,
                            GError **error)
{
  gint64 n = nl_project_step (p, "cannot change the run's status", error,
                     "UPDATE runs SET status = ?2,"
                     " started = CASE ?2 WHEN 'running' THEN coalesce (started, ?3)"
                     "   WHEN 'queued' THEN NULL ELSE started END,"
                     " finished = CASE WHEN ?2 IN ('running', 'queued') THEN NULL"
                     "   WHEN ?2 = 'paused' THEN finished ELSE ?3 END,"
                     " error = CASE WHEN ?2 IN ('running', 'queued') THEN NULL"
                     "   WHEN ?2 = 'paused' THEN error ELSE ?4 END,"
                     " host = CASE ?2 WHEN 'running' THEN ?5 WHEN 'queued' THEN NULL ELSE host END,"
                     " pid = CASE ?2 WHEN 'running' THEN ?6 WHEN 'queued' THEN NULL ELSE pid END,"
                     " heartbeat = CASE ?2 WHEN 'running' THEN ?3 WHEN 'queued' THEN NULL ELSE heartbeat END"
                     " WHERE id = ?1",
                     "itdtti", run, status, now, error_message, g_get_host_name (), (gint64) getpid ());
  Hold *h = n == 1 && !strcmp (status, "running") ? hold_of (p, run) : NULL;
  /* a held run going on after a pause: the heartbeat written is its own */
  if (h && !h->lost)
    h->pending = now;
  return n;
}

gboolean
nl_project_hold_run (NlProject *p, gint64 run, GError **error)
{
  g_return_val_if_fail (p != NULL, FALSE);
  double now = nl_project_now ();
  g_mutex_lock (&p->lock);
  gboolean ok = nl_project_begin_write (p, error);
  gint64 n = ok ? nl_project_step_run_status (p, run, "running", NULL, now, error) : -1;
  ok = n == 1 && nl_project_commit (p, error);
  if (ok)
    {
      Hold *h = g_new0 (Hold, 1);
      h->mark = h->pending = now;
      g_mutex_lock (&p->hold_lock);
      if (!p->holds)
        p->holds = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, hold_free);
      g_hash_table_replace (p->holds, g_memdup2 (&run, sizeof run), h);
      g_mutex_unlock (&p->hold_lock);
    }
  else
    nl_project_rollback (p);
  g_mutex_unlock (&p->lock);
  if (n == 0)
    return nl_project_not_found (p, error, "run", run);
  nl_project_restate (p, error, "marking run %" G_GINT64_FORMAT " running", run);
  return ok;
}

gboolean
nl_project_run_taken (NlProject *p, gint64 run, double *reclaimed, GError **error)
{
  g_return_val_if_fail (p != NULL, FALSE);
  gboolean taken = FALSE;
  g_mutex_lock (&p->hold_lock);
  Hold *h = p->holds ? g_hash_table_lookup (p->holds, &run) : NULL;
  if (reclaimed)
    *reclaimed = h ? h->reclaimed : 0;
  if (h)
    {
      h->reclaimed = 0;
      taken = h->lost != NULL;
      if (taken)
        lost_error (p, run, h, error);
    }
  g_mutex_unlock (&p->hold_lock);
  return taken;
}

void
nl_project_release_run (NlProject *p, gint64 run)
{
  g_return_if_fail (p != NULL);
  g_mutex_lock (&p->lock);
  g_mutex_lock (&p->hold_lock);
  if (p->holds)
    g_hash_table_remove (p->holds, &run);
  g_mutex_unlock (&p->hold_lock);
  g_mutex_unlock (&p->lock);
}
