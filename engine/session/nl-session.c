/* nl-session.c — a stored training run on one worker thread, reporting
 * through a queue of events drained by the owner's thread. */
#include "engine/session/nl-session.h"
#include "core/nl-json-guard.h"

#include <errno.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <json-glib/json-glib.h>
#include <math.h>
#include <string.h>

/* at most ~60 BATCH events a second: a GUI redraws no faster */
#define BATCH_INTERVAL_US (G_USEC_PER_SEC / 60)

typedef enum { KIND_TRAIN, KIND_RESUME, KIND_FORK } Kind;

struct NlSession {
  Kind kind;
  NlProject *project;
  /* what to run: copies, read by the worker only once started */
  char *name;
  NlNetwork *net;           /* train */
  NlRunConfig rc;           /* train: all of it; resume, fork: the policy */
  gint64 parent;            /* resume, fork: the run */
  int epochs;               /* resume */
  char *which;              /* fork */
  char *fork_json;          /* fork: the parent's settings with the overrides */
  NlRunCallbacks cb;        /* ours: they queue events */
  NlProfiler *profiler;     /* nl_session_profile_steps's requests */
  int batch_size;

  GThread *thread;
  GAsyncQueue *queue;       /* NlSessionEvent* */

  GMutex lock;              /* guards everything below */
  GCond cond;               /* a paused worker waits on it */
  NlSessionState state;
  gboolean pause_requested, stop_requested;
  gint64 run;
  GError *error;
  const char *outcome;
  GMainContext *wake_ctx;
  GSourceFunc wake_fn;
  gpointer wake_data;
  gboolean wake_pending;    /* a wakeup was scheduled since the last drain */
  GSource *wake_source;     /* the one not yet dispatched */

  /* the owner's: nl_session_free from a drain callback waits for the drain */
  int draining;
  gboolean free_pending;

  /* tests (NETLOOM_TEST_SESSION_LOCKSTEP=1): the worker waits after each
   * event until the owner has drained it, so that a test acting on an event
   * acts at that moment of training however slow its main loop is; off
   * once the owner waits for the worker */
  gboolean lockstep;
  guint64 pushed, drained;

  /* the worker's own: BATCH coalescing */
  gint64 last_batch_us;
  NlSessionEvent pending;
  gboolean have_pending;
};

static void
event_free (NlSessionEvent *e)
{
  g_free (e->message);
  g_free (e);
}

/* ---- the worker's side ---- */

static gboolean
wake_dispatch (gpointer data)
{
  NlSession *s = data;
  GSourceFunc fn;
  gpointer fn_data;
  GSource *src;

  g_mutex_lock (&s->lock);
  src = g_steal_pointer (&s->wake_source);
  fn = s->wake_fn;
  fn_data = s->wake_data;
  g_mutex_unlock (&s->lock);
  if (src)
    g_source_unref (src);
  if (fn)
    fn (fn_data);
  return G_SOURCE_REMOVE;
}

/* With s->lock held. */
static void
schedule_wakeup_locked (NlSession *s)
{
  if (!s->wake_fn || s->wake_pending)
    return;
  s->wake_pending = TRUE;
  s->wake_source = g_idle_source_new ();
  g_source_set_name (s->wake_source, "[netloom] session events");
  g_source_set_callback (s->wake_source, wake_dispatch, s, NULL);
  g_source_attach (s->wake_source, s->wake_ctx);
}

/* Queues a copy of *e (message copied too) stamped with the run id. */
static void
push (NlSession *s, const NlSessionEvent *e)
{
  NlSessionEvent *copy = g_new (NlSessionEvent, 1);
  *copy = *e;
  copy->message = g_strdup (e->message);
  g_mutex_lock (&s->lock);
  copy->run = s->run;
  g_async_queue_push (s->queue, copy);
  schedule_wakeup_locked (s);
  s->pushed++;
  while (s->lockstep && s->drained < s->pushed)
    g_cond_wait (&s->cond, &s->lock);
  g_mutex_unlock (&s->lock);
}

static void
push_text (NlSession *s, NlSessionEventKind kind, const char *status, const char *message)
{
  NlSessionEvent e = { .kind = kind, .status = status, .message = (char *) message };
  push (s, &e);
}

/* The newest batch held back by coalescing, before anything that should
 * show where training stands (a pause, the end). */
static void
flush_pending (NlSession *s)
{
  if (!s->have_pending)
    return;
  s->have_pending = FALSE;
  s->last_batch_us = g_get_monotonic_time ();
  push (s, &s->pending);
}

static void
set_project_status (NlSession *s, const char *status)
{
  g_autoptr (GError) error = NULL;
  if (s->run > 0 && !nl_project_set_run_status (s->project, s->run, status, NULL, &error))
    {
      g_autofree char *line = g_strdup_printf ("could not mark the run %s: %s", status, error->message);
      push_text (s, NL_SESSION_EVENT_LOG, NULL, line);
    }
}

/* Pause (blocking here) and stop are honoured between batches. */
static gboolean
on_batch (gpointer user, int epoch, int64_t batch, int64_t n_batches, double loss, double elapsed)
{
  NlSession *s = user;
  gint64 now = g_get_monotonic_time ();
  NlSessionEvent e = { .kind = NL_SESSION_EVENT_BATCH, .epoch = epoch, .batch = batch, .n_batches = n_batches,
                       .loss = loss, .elapsed = elapsed,
                       .images_per_s = elapsed > 0 ? (double) batch * s->batch_size / elapsed : 0 };
  gboolean stop;

  if (batch >= n_batches || now - s->last_batch_us >= BATCH_INTERVAL_US)
    {
      s->have_pending = FALSE;
      s->last_batch_us = now;
      push (s, &e);
    }
  else
    {
      s->pending = e;
      s->have_pending = TRUE;
    }

  g_mutex_lock (&s->lock);
  if (s->pause_requested && !s->stop_requested)
    {
      g_mutex_unlock (&s->lock);
      flush_pending (s);
      set_project_status (s, "paused");
      push_text (s, NL_SESSION_EVENT_STATUS, "paused", NULL);
      g_mutex_lock (&s->lock);
      while (s->pause_requested && !s->stop_requested)
        g_cond_wait (&s->cond, &s->lock);
      if (!s->stop_requested)
        {
          g_mutex_unlock (&s->lock);
          set_project_status (s, "running");
          push_text (s, NL_SESSION_EVENT_STATUS, "running", NULL);
          g_mutex_lock (&s->lock);
        }
    }
  stop = s->stop_requested;
  g_mutex_unlock (&s->lock);
  if (stop)
    flush_pending (s);
  return !stop;
}

static void
on_epoch (gpointer user, const NlEpochReport *r)
{
  NlSession *s = user;
  NlSessionEvent e = { .kind = NL_SESSION_EVENT_EPOCH, .epoch = r->epoch, .report = *r };
  flush_pending (s);
  push (s, &e);
}

static void
on_created (gpointer user, gint64 run)
{
  NlSession *s = user;
  g_mutex_lock (&s->lock);
  s->run = run;
  g_mutex_unlock (&s->lock);
  push_text (s, NL_SESSION_EVENT_STARTED, NULL, NULL);
}

static void
on_checkpoint (gpointer user, int epoch, gint64 checkpoint)
{
  NlSessionEvent e = { .kind = NL_SESSION_EVENT_CHECKPOINT, .epoch = epoch, .checkpoint = checkpoint };
  push (user, &e);
}

static void
on_log (gpointer user, const char *line)
{
  push_text (user, NL_SESSION_EVENT_LOG, NULL, line);
}

static void
fork_apply (NlRunConfig *rc, gpointer user)
{
  NlSession *s = user;
  g_autoptr (GError) error = NULL;
  /* validated by nl_session_new_fork: cannot fail */
  if (!nl_run_config_from_json (rc, s->fork_json, &error))
    g_warning ("fork settings: %s", error->message);
}

static gpointer
worker (gpointer data)
{
  NlSession *s = data;
  g_autoptr (GError) error = NULL;
  g_autofree char *message = NULL;
  const char *outcome;
  gboolean ok = FALSE;

  /* The GUI's main thread must win the cores it shares with training: with
   * training at nice 10 the dashboard's p99 frame time went from 17.4 to
   * 11.2 ms on 2 cores at no cost in images/s (bench-gui-training). Threads
   * this one starts (loader, OpenMP pool) inherit it. */
  if (setpriority (PRIO_PROCESS, (id_t) syscall (SYS_gettid), 10) != 0)
    g_debug ("cannot lower the training thread's priority: %s", g_strerror (errno));

  switch (s->kind)
    {
    case KIND_TRAIN:
      ok = nl_run_train (s->project, s->name, s->net, &s->rc, &s->cb, NULL, &error);
      break;
    case KIND_RESUME:
      ok = nl_run_resume (s->project, s->parent, s->epochs, &s->rc, &s->cb, &error);
      break;
    case KIND_FORK:
      ok = nl_run_fork (s->project, s->parent, s->which, s->name, fork_apply, s, &s->rc, &s->cb, NULL, &error);
      break;
    }
  flush_pending (s);
  if (ok)
    {
      /* the run's closing message (early stopping), as stored */
      g_autoptr (NlRunInfo) info = nl_project_get_run (s->project, s->run, NULL);
      outcome = "finished";
      message = info && info->error ? g_strdup (info->error) : NULL;
    }
  else
    {
      gboolean stopped = g_error_matches (error, NL_TRAIN_ERROR, NL_TRAIN_ERROR_CANCELLED);
      outcome = stopped ? "stopped" : "failed";
      message = g_strdup (error->message);
      if (!stopped)
        push_text (s, NL_SESSION_EVENT_ERROR, NULL, message);
    }
  g_mutex_lock (&s->lock);
  s->state = NL_SESSION_DONE;
  s->outcome = outcome;
  s->error = g_steal_pointer (&error);
  g_mutex_unlock (&s->lock);
  push_text (s, NL_SESSION_EVENT_FINISHED, outcome, message);
  return NULL;
}

/* ---- the owner's side ---- */

/* cfg: the run's settings (train) or the policy (resume, fork); NULL: the
 * defaults. */
static NlSession *
session_new (NlProject *p, Kind kind, const char *name, const NlRunConfig *cfg, GError **error)
{
  NlSession *s;

  if (cfg && !nl_run_config_check (cfg, error))
    return NULL;
  s = g_new0 (NlSession, 1);
  s->kind = kind;
  s->project = p;
  s->name = g_strdup (name);
  if (cfg)
    nl_run_config_copy (&s->rc, cfg);
  else
    nl_run_config_init (&s->rc);
  s->cb = (NlRunCallbacks) { .chain = { on_batch, on_epoch, s, NULL }, .created = on_created,
                             .checkpoint = on_checkpoint, .log = on_log };
  s->cb.profiler = s->profiler = nl_profiler_new ();
  s->queue = g_async_queue_new_full ((GDestroyNotify) event_free);
  g_mutex_init (&s->lock);
  g_cond_init (&s->cond);
  s->state = NL_SESSION_IDLE;
  s->lockstep = g_strcmp0 (g_getenv ("NETLOOM_TEST_SESSION_LOCKSTEP"), "1") == 0;
  return s;
}

NlSession *
nl_session_new_train (NlProject *p, const char *name, const NlNetwork *net, const NlRunConfig *cfg,
                      GError **error)
{
  NlSession *s;

  g_return_val_if_fail (p != NULL && net != NULL && cfg != NULL, NULL);
  s = session_new (p, KIND_TRAIN, name, cfg, error);
  if (!s)
    return NULL;
  s->net = nl_network_copy (net);
  s->batch_size = cfg->batch_size;
  return s;
}

/* The stored run and its settings; NULL with an error naming the run. */
static NlRunInfo *
stored_run (NlProject *p, gint64 run, NlRunConfig *rc, GError **error)
{
  g_autoptr (NlRunInfo) info = nl_project_get_run (p, run, error);
  g_autoptr (GError) local = NULL;

  if (!info)
    return NULL;
  if (!nl_run_config_from_json (rc, info->hparams_json, &local))
    {
      g_set_error (error, NL_TRAIN_ERROR, NL_TRAIN_ERROR_CONFIG, "run %" G_GINT64_FORMAT ": %s", run, local->message);
      return NULL;
    }
  return g_steal_pointer (&info);
}

NlSession *
nl_session_new_resume (NlProject *p, gint64 run, int epochs, const NlRunConfig *policy, GError **error)
{
  g_auto (NlRunConfig) rc = { 0 };
  g_autoptr (NlRunInfo) info = NULL;
  NlSession *s;

  g_return_val_if_fail (p != NULL, NULL);
  if (epochs < 0)
    {
      g_set_error (error, NL_TRAIN_ERROR, NL_TRAIN_ERROR_CONFIG, "epochs must be >= 0, not %d", epochs);
      return NULL;
    }
  nl_run_config_init (&rc);
  info = stored_run (p, run, &rc, error);
  if (!info)
    return NULL;
  if (g_strcmp0 (info->status, "running") == 0)
    {
      g_set_error (error, NL_TRAIN_ERROR, NL_TRAIN_ERROR_CONFIG, "run %" G_GINT64_FORMAT " is running", run);
      return NULL;
    }
  s = session_new (p, KIND_RESUME, NULL, policy, error);
  if (!s)
    return NULL;
  s->parent = run;
  s->epochs = epochs;
  s->batch_size = rc.batch_size;
  return s;
}

/* What each setting is, from the JSON of a default config: text (strings,
 * settings that may be null), number or boolean. */
static char
setting_kind (JsonNode *n)
{
  if (JSON_NODE_HOLDS_NULL (n))
    return 's';
  switch (json_node_get_value_type (n))
    {
    case G_TYPE_STRING: return 's';
    case G_TYPE_BOOLEAN: return 'b';
    default: return 'n';
    }
}

/* parent (a settings object) with every member of overrides set, each
 * checked to be a known setting of the right type. */
static gboolean
apply_overrides (JsonObject *parent, const char *overrides, GError **error)
{
  g_autoptr (JsonParser) op = json_parser_new ();
  g_autoptr (JsonParser) dp = json_parser_new ();
  g_autofree char *defaults_json = NULL;
  g_autoptr (GList) members = NULL;
  g_autoptr (GError) local = NULL;
  g_auto (NlRunConfig) defaults = { 0 };
  JsonObject *o, *known;

  if (!nl_json_check_depth (overrides, -1, "the fork's settings", &local)
      || !json_parser_load_from_data (op, overrides, -1, &local))
    {
      g_set_error (error, NL_TRAIN_ERROR, NL_TRAIN_ERROR_CONFIG, "the fork's settings are not JSON: %s",
                   local->message);
      return FALSE;
    }
  if (!JSON_NODE_HOLDS_OBJECT (json_parser_get_root (op)))
    {
      g_set_error (error, NL_TRAIN_ERROR, NL_TRAIN_ERROR_CONFIG, "the fork's settings must be a JSON object");
      return FALSE;
    }
  o = json_node_get_object (json_parser_get_root (op));
  nl_run_config_init (&defaults);
  defaults_json = nl_run_config_to_json (&defaults);
  if (!json_parser_load_from_data (dp, defaults_json, -1, error))
    return FALSE;
  known = json_node_get_object (json_parser_get_root (dp));
  members = json_object_get_members (o);
  for (GList *l = members; l; l = l->next)
    {
      const char *key = l->data;
      JsonNode *v = json_object_get_member (o, key);
      char want, have;
      if (!json_object_has_member (known, key))
        {
          g_set_error (error, NL_TRAIN_ERROR, NL_TRAIN_ERROR_CONFIG, "the fork's settings: unknown setting '%s'", key);
          return FALSE;
        }
      want = setting_kind (json_object_get_member (known, key));
      have = JSON_NODE_HOLDS_VALUE (v) || JSON_NODE_HOLDS_NULL (v) ? setting_kind (v) : 'x';
      if (!strcmp (key, "seed") && have == 'n' && json_node_get_value_type (v) == G_TYPE_INT64
          && json_node_get_int (v) >= 0)
        {
          /* seeds are stored as text (64 bits exact); a number is fine too */
          g_autofree char *text = g_strdup_printf ("%" G_GINT64_FORMAT, json_node_get_int (v));
          json_object_set_string_member (parent, key, text);
          continue;
        }
      if (!strcmp (key, "seed") && have == 's'
          && (JSON_NODE_HOLDS_NULL (v) || !g_ascii_string_to_unsigned (json_node_get_string (v), 10, 0, G_MAXUINT64,
                                                                      NULL, NULL)))
        have = 'x';
      if (have != want)
        {
          g_set_error (error, NL_TRAIN_ERROR, NL_TRAIN_ERROR_CONFIG, "the fork's settings: '%s' must be %s", key,
                       !strcmp (key, "seed") ? "a non-negative integer"
                       : want == 's' ? "text or null" : want == 'b' ? "true or false" : "a number");
          return FALSE;
        }
      json_object_set_member (parent, key, json_node_copy (v));
    }
  return TRUE;
}

NlSession *
nl_session_new_fork (NlProject *p, gint64 run, const char *which, const char *name,
                     const char *hparams_json_overrides, const NlRunConfig *policy, GError **error)
{
  g_auto (NlRunConfig) rc = { 0 };
  g_auto (NlRunConfig) merged = { 0 };
  g_autoptr (NlRunInfo) info = NULL;
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_autoptr (JsonGenerator) gen = json_generator_new ();
  g_autofree char *json = NULL;
  g_autoptr (GError) local = NULL;
  NlSession *s;

  g_return_val_if_fail (p != NULL, NULL);
  nl_run_config_init (&rc);
  info = stored_run (p, run, &rc, error);
  if (!info)
    return NULL;
  if (!nl_json_check_depth (info->hparams_json, -1, "the run's settings", error)
      || !json_parser_load_from_data (parser, info->hparams_json, -1, error))
    return NULL;
  if (hparams_json_overrides
      && !apply_overrides (json_node_get_object (json_parser_get_root (parser)), hparams_json_overrides, error))
    return NULL;
  json_generator_set_root (gen, json_parser_get_root (parser));
  json = nl_json_fix_numbers (json_generator_to_data (gen, NULL));
  nl_run_config_init (&merged);
  if (!nl_run_config_from_json (&merged, json, &local) || !nl_run_config_check (&merged, &local))
    {
      g_set_error (error, NL_TRAIN_ERROR, NL_TRAIN_ERROR_CONFIG, "the fork's settings: %s", local->message);
      return NULL;
    }
  if (nl_project_find_checkpoint (p, run, which ? which : "last", error) <= 0)
    return NULL;
  s = session_new (p, KIND_FORK, name, policy, error);
  if (!s)
    return NULL;
  s->parent = run;
  s->which = g_strdup (which);
  s->fork_json = g_steal_pointer (&json);
  s->batch_size = merged.batch_size;
  return s;
}

gboolean
nl_session_start (NlSession *s, GError **error)
{
  g_return_val_if_fail (s != NULL, FALSE);
  g_mutex_lock (&s->lock);
  if (s->state != NL_SESSION_IDLE || s->thread)
    {
      g_mutex_unlock (&s->lock);
      g_set_error (error, NL_TRAIN_ERROR, NL_TRAIN_ERROR_CONFIG, "the session was already started");
      return FALSE;
    }
  s->state = NL_SESSION_RUNNING;
  g_mutex_unlock (&s->lock);
  s->thread = g_thread_try_new ("nl-session", worker, s, error);
  if (!s->thread)
    {
      g_mutex_lock (&s->lock);
      s->state = NL_SESSION_IDLE;
      g_mutex_unlock (&s->lock);
      return FALSE;
    }
  return TRUE;
}

guint
nl_session_drain (NlSession *s, NlSessionEventFunc func, gpointer user)
{
  NlSessionEvent *e;
  guint n = 0;

  g_return_val_if_fail (s != NULL, 0);
  /* before popping: an event pushed from now on schedules a new wakeup */
  g_mutex_lock (&s->lock);
  s->wake_pending = FALSE;
  g_mutex_unlock (&s->lock);
  s->draining++;
  while (!s->free_pending && (e = g_async_queue_try_pop (s->queue)))
    {
      if (func)
        func (s, e, user);
      event_free (e);
      n++;
      g_mutex_lock (&s->lock);
      s->drained++;
      g_cond_broadcast (&s->cond);
      g_mutex_unlock (&s->lock);
    }
  if (--s->draining == 0 && s->free_pending)
    {
      s->free_pending = FALSE;
      nl_session_free (s);
    }
  return n;
}

void
nl_session_set_wakeup (NlSession *s, GMainContext *ctx, GSourceFunc fn, gpointer data)
{
  g_return_if_fail (s != NULL);
  g_mutex_lock (&s->lock);
  if (s->wake_source)
    {
      g_source_destroy (s->wake_source);
      g_clear_pointer (&s->wake_source, g_source_unref);
    }
  if (s->wake_ctx)
    g_main_context_unref (s->wake_ctx);
  s->wake_ctx = fn && ctx ? g_main_context_ref (ctx) : NULL;
  s->wake_fn = fn;
  s->wake_data = fn ? data : NULL;
  s->wake_pending = FALSE;
  if (g_async_queue_length (s->queue) > 0)
    schedule_wakeup_locked (s);
  g_mutex_unlock (&s->lock);
}

void
nl_session_pause (NlSession *s)
{
  g_return_if_fail (s != NULL);
  g_mutex_lock (&s->lock);
  if (s->state == NL_SESSION_RUNNING)
    s->pause_requested = TRUE;
  g_mutex_unlock (&s->lock);
}

void
nl_session_resume (NlSession *s)
{
  g_return_if_fail (s != NULL);
  g_mutex_lock (&s->lock);
  s->pause_requested = FALSE;
  g_cond_broadcast (&s->cond);
  g_mutex_unlock (&s->lock);
}

void
nl_session_stop (NlSession *s)
{
  g_return_if_fail (s != NULL);
  g_mutex_lock (&s->lock);
  if (s->state == NL_SESSION_RUNNING)
    s->stop_requested = TRUE;
  g_cond_broadcast (&s->cond);
  g_mutex_unlock (&s->lock);
}

void
nl_session_wait (NlSession *s)
{
  g_return_if_fail (s != NULL);
  g_mutex_lock (&s->lock);
  s->lockstep = FALSE;
  g_cond_broadcast (&s->cond);
  g_mutex_unlock (&s->lock);
  if (s->thread)
    g_thread_join (g_steal_pointer (&s->thread));
}

NlSessionState
nl_session_get_state (NlSession *s)
{
  NlSessionState state;
  g_return_val_if_fail (s != NULL, NL_SESSION_IDLE);
  g_mutex_lock (&s->lock);
  state = s->state == NL_SESSION_RUNNING && s->pause_requested && !s->stop_requested ? NL_SESSION_PAUSED : s->state;
  g_mutex_unlock (&s->lock);
  return state;
}

gint64
nl_session_get_run (NlSession *s)
{
  gint64 run;
  g_return_val_if_fail (s != NULL, 0);
  g_mutex_lock (&s->lock);
  run = s->run;
  g_mutex_unlock (&s->lock);
  return run;
}

const char *
nl_session_get_outcome (NlSession *s)
{
  const char *outcome;
  g_return_val_if_fail (s != NULL, NULL);
  g_mutex_lock (&s->lock);
  outcome = s->outcome;
  g_mutex_unlock (&s->lock);
  return outcome;
}

const GError *
nl_session_get_error (NlSession *s)
{
  const GError *error;
  g_return_val_if_fail (s != NULL, NULL);
  g_mutex_lock (&s->lock);
  error = s->state == NL_SESSION_DONE ? s->error : NULL;
  g_mutex_unlock (&s->lock);
  return error;
}

void
nl_session_free (NlSession *s)
{
  if (!s)
    return;
  nl_session_stop (s);
  if (s->draining)
    {
      /* called from an event callback: drain frees it when it returns */
      s->free_pending = TRUE;
      return;
    }
  nl_session_wait (s);
  g_mutex_lock (&s->lock);
  if (s->wake_source)
    {
      g_source_destroy (s->wake_source);
      g_clear_pointer (&s->wake_source, g_source_unref);
    }
  g_clear_pointer (&s->wake_ctx, g_main_context_unref);
  g_mutex_unlock (&s->lock);
  g_async_queue_unref (s->queue);
  g_clear_error (&s->error);
  g_mutex_clear (&s->lock);
  g_cond_clear (&s->cond);
  nl_run_config_clear (&s->rc);
  g_clear_pointer (&s->net, nl_network_free);
  g_free (s->name);
  g_free (s->which);
  g_free (s->fork_json);
  nl_profiler_free (s->profiler);
  g_free (s);
}

void
nl_session_profile_steps (NlSession *s, int n_steps, const char *path)
{
  nl_profiler_request (s->profiler, n_steps, path);
}
