/* nl-metric-writer.c — metrics from the training loop to the project
 * without ever waiting on SQLite: points queue in memory and a thread
 * writes them in batches, one transaction each. */
#include "projects/nl-project.h"

#include <string.h>

struct NlMetricWriter {
  NlProject *project;
  gint64 flush_us;
  guint max_rows;
  GThread *thread;

  GMutex lock;
  GCond wake;          /* to the thread: rows, a flush request or stop */
  GCond done;          /* from the thread: a batch was written */
  GArray *pending;     /* NlMetricPoint; split and name interned */
  gint64 first_at;     /* monotonic time of the oldest pending point */
  guint64 requested;   /* flush requests made ... */
  guint64 served;      /* ... and written out */
  gboolean stop;
  GError *error;       /* first failure not yet reported */
  guint64 lost;        /* rows dropped since then */
  gint64 beat_run;     /* the run whose heartbeat this thread beats (0: none) */
  gint64 beat_us, next_beat;
  gboolean beat_failed;
  gboolean quiet;      /* nl_metric_writer_quiet: start no write */
  gboolean busy;       /* the thread is writing or beating, unlocked */
};

/* Outside the lock: a busy project must not hold up nl_metric_writer_add. */
static void
beat (NlMetricWriter *w, gint64 run)
{
  g_autoptr (GError) error = NULL;
  /* a run taken over: its trainer learns it from the project and stops */
  if (!nl_project_heartbeat (w->project, run, &error) && !w->beat_failed
      && !g_error_matches (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_TAKEN))
    {
      /* once: the next beat may well get through */
      w->beat_failed = TRUE;
      g_message ("run %" G_GINT64_FORMAT ": %s", run, error->message);
    }
}

static gpointer
writer_thread (gpointer data)
{
  NlMetricWriter *w = data;
  g_mutex_lock (&w->lock);
  for (;;)
    {
      gboolean want_flush = w->requested > w->served || w->stop;
      if (w->quiet && !w->stop)
        {
          g_cond_wait (&w->wake, &w->lock);
          continue;
        }
      if (w->beat_run > 0 && !w->stop && g_get_monotonic_time () >= w->next_beat)
        {
          gint64 run = w->beat_run;
          w->next_beat = g_get_monotonic_time () + w->beat_us;
          w->busy = TRUE;
          g_mutex_unlock (&w->lock);
          beat (w, run);
          g_mutex_lock (&w->lock);
          w->busy = FALSE;
          g_cond_broadcast (&w->done);
          continue;
        }
      if (!want_flush && w->pending->len < w->max_rows)
        {
          gint64 until = w->beat_run > 0 ? w->next_beat : G_MAXINT64;
          if (w->pending->len > 0 && g_get_monotonic_time () >= w->first_at + w->flush_us)
            want_flush = TRUE;
          else if (w->pending->len > 0)
            until = MIN (until, w->first_at + w->flush_us);
          if (!want_flush)
            {
              if (until == G_MAXINT64)
                g_cond_wait (&w->wake, &w->lock);
              else
                g_cond_wait_until (&w->wake, &w->lock, until);
              continue;
            }
        }
      /* Take the batch and the requests it answers, write unlocked so
       * nl_metric_writer_add keeps going meanwhile. */
      GArray *batch = w->pending;
      w->pending = g_array_sized_new (FALSE, FALSE, sizeof (NlMetricPoint), w->max_rows);
      guint64 answering = w->requested;
      gboolean stopping = w->stop;
      w->busy = TRUE;
      g_mutex_unlock (&w->lock);

      GError *err = NULL;
      if (batch->len)
        nl_project_add_metrics (w->project, (const NlMetricPoint *) batch->data, (int) batch->len, &err);

      g_mutex_lock (&w->lock);
      w->busy = FALSE;
      if (err)
        {
          w->lost += batch->len;
          if (!w->error)
            w->error = err;
          else
            g_error_free (err);
        }
      g_array_unref (batch);
      w->served = answering;
      g_cond_broadcast (&w->done);
      if (stopping && w->pending->len == 0)
        break;
    }
  g_mutex_unlock (&w->lock);
  return NULL;
}

NlMetricWriter *
nl_metric_writer_new (NlProject *p, guint flush_ms, guint max_rows)
{
  g_return_val_if_fail (p != NULL, NULL);
  NlMetricWriter *w = g_new0 (NlMetricWriter, 1);
  w->project = p;
  w->flush_us = (gint64) (flush_ms ? flush_ms : 250) * 1000;
  w->max_rows = max_rows ? max_rows : 512;
  g_mutex_init (&w->lock);
  g_cond_init (&w->wake);
  g_cond_init (&w->done);
  w->pending = g_array_sized_new (FALSE, FALSE, sizeof (NlMetricPoint), w->max_rows);
  w->thread = g_thread_new ("nl-metric-writer", writer_thread, w);
  return w;
}

void
nl_metric_writer_set_heartbeat (NlMetricWriter *w, gint64 run)
{
  g_return_if_fail (w != NULL);
  g_mutex_lock (&w->lock);
  w->beat_run = run;
  w->beat_us = (gint64) (nl_project_heartbeat_interval () * G_USEC_PER_SEC);
  w->next_beat = g_get_monotonic_time () + w->beat_us;
  g_cond_signal (&w->wake);
  g_mutex_unlock (&w->lock);
}

/* Keeps MSG (taken) as the error to report, unless one is kept already. */
static void
drop (NlMetricWriter *w, char *msg)
{
  g_mutex_lock (&w->lock);
  w->lost++;
  if (!w->error)
    w->error = g_error_new_literal (NL_PROJECT_ERROR, NL_PROJECT_ERROR_INVALID, msg);
  g_mutex_unlock (&w->lock);
  g_free (msg);
}

void
nl_metric_writer_add (NlMetricWriter *w, const NlMetricPoint *pt)
{
  g_return_if_fail (w != NULL && pt != NULL);
  /* A bad point is dropped here, so it cannot fail the batch it would
   * have been written with. */
  if (g_strcmp0 (pt->split, "train") != 0 && g_strcmp0 (pt->split, "val") != 0
      && g_strcmp0 (pt->split, "test") != 0)
    {
      drop (w, g_strdup_printf ("metric “%s” has the split “%s”, not train, val or test",
                                pt->name ? pt->name : "", pt->split ? pt->split : "(null)"));
      return;
    }
  if (!pt->name || !*pt->name)
    {
      drop (w, g_strdup ("a metric point has no name"));
      return;
    }
  /* Interned: the handful of metric and split names are copied once for
   * the life of the process, not per point. */
  NlMetricPoint copy = *pt;
  copy.split = g_intern_string (pt->split);
  copy.name = g_intern_string (pt->name);
  if (copy.wall <= 0)
    copy.wall = g_get_real_time () / 1e6;
  g_mutex_lock (&w->lock);
  g_array_append_val (w->pending, copy);
  if (w->pending->len == 1)
    {
      w->first_at = g_get_monotonic_time ();
      g_cond_signal (&w->wake);
    }
  else if (w->pending->len == w->max_rows)
    g_cond_signal (&w->wake);
  g_mutex_unlock (&w->lock);
}

/* Takes the kept error, if any, into ERROR. Lock held. */
static gboolean
report (NlMetricWriter *w, GError **error)
{
  if (!w->error)
    return TRUE;
  if (w->lost)
    {
      /* the project file first, as in every project error */
      char *msg = g_strdup_printf ("%s (%" G_GUINT64_FORMAT " metric rows were not written)", w->error->message,
                                   w->lost);
      g_free (w->error->message);
      w->error->message = msg;
    }
  g_propagate_error (error, g_steal_pointer (&w->error));
  w->lost = 0;
  return FALSE;
}

gboolean
nl_metric_writer_flush (NlMetricWriter *w, GError **error)
{
  g_return_val_if_fail (w != NULL, FALSE);
  g_mutex_lock (&w->lock);
  guint64 ticket = ++w->requested;
  g_cond_signal (&w->wake);
  while (w->served < ticket)
    g_cond_wait (&w->done, &w->lock);
  gboolean ok = report (w, error);
  g_mutex_unlock (&w->lock);
  return ok;
}

void
nl_metric_writer_quiet (NlMetricWriter *w, gboolean quiet)
{
  g_return_if_fail (w != NULL);
  g_mutex_lock (&w->lock);
  w->quiet = quiet;
  g_cond_signal (&w->wake);
  while (quiet && w->busy)
    g_cond_wait (&w->done, &w->lock);
  g_mutex_unlock (&w->lock);
}

gboolean
nl_metric_writer_free (NlMetricWriter *w, GError **error)
{
  if (!w)
    return TRUE;
  g_mutex_lock (&w->lock);
  w->stop = TRUE;
  g_cond_signal (&w->wake);
  g_mutex_unlock (&w->lock);
  g_thread_join (w->thread);

  gboolean ok = report (w, error);
  g_array_unref (w->pending);
  g_mutex_clear (&w->lock);
  g_cond_clear (&w->wake);
  g_cond_clear (&w->done);
  g_free (w);
  return ok;
}
