/* nl-session.h — one training run on a background thread, for the GUI.
 *
 * A session trains, resumes or forks a run stored in a project (nl-run.h)
 * on ONE worker thread and reports what happens as NlSessionEvents queued
 * for the thread that drains them (the GUI's main loop). Pause, resume and
 * stop are requests the worker honours between batches.
 *
 * Threading: the session is owned by one thread (normally the main
 * thread), which calls start, drain, set_wakeup, wait and free; pause,
 * resume, stop and the getters may be called from any thread. Only the
 * worker trains. Events are delivered on the draining thread and belong to
 * the session (valid during the callback only: copy what you keep). The
 * project must stay open until the session is freed; the GUI may read it
 * meanwhile (NlProject is thread-safe; WAL lets readers run beside the
 * writer). */
#pragma once

#include "engine/session/nl-run.h"

G_BEGIN_DECLS

typedef struct NlSession NlSession;

typedef enum {
  NL_SESSION_IDLE,      /* created, not started */
  NL_SESSION_RUNNING,
  NL_SESSION_PAUSED,    /* pause requested (the STATUS "paused" event says when the worker stopped) */
  NL_SESSION_DONE,      /* the worker has ended (FINISHED is queued) */
} NlSessionState;

typedef enum {
  NL_SESSION_EVENT_STARTED,     /* run: the run's id, as soon as its row exists */
  NL_SESSION_EVENT_BATCH,       /* epoch, batch (1-based), n_batches, loss, elapsed, images_per_s */
  NL_SESSION_EVENT_EPOCH,       /* report */
  NL_SESSION_EVENT_CHECKPOINT,  /* epoch, checkpoint (its id) */
  NL_SESSION_EVENT_STATUS,      /* status: "paused" or "running" (after a pause) */
  NL_SESSION_EVENT_LOG,         /* message: a line for the user */
  NL_SESSION_EVENT_ERROR,       /* message: the error's; FINISHED "failed" follows */
  NL_SESSION_EVENT_FINISHED,    /* status: "finished", "failed" or "stopped"; message (may be NULL). Last. */
} NlSessionEventKind;

typedef struct {
  NlSessionEventKind kind;
  gint64 run;                /* the run's id (0 while unknown: a failure before the row existed) */
  int epoch;                 /* 1-based; BATCH, EPOCH, CHECKPOINT */
  int64_t batch, n_batches;  /* BATCH */
  double loss;               /* BATCH: mean loss of the batch */
  double elapsed;            /* BATCH: seconds since the epoch began (paused time included) */
  double images_per_s;       /* BATCH: over the epoch so far (counting full batches) */
  NlEpochReport report;      /* EPOCH */
  gint64 checkpoint;         /* CHECKPOINT */
  const char *status;        /* STATUS, FINISHED: a static string */
  char *message;             /* LOG, ERROR, FINISHED */
} NlSessionEvent;

/* Called by nl_session_drain for each event, on the draining thread. */
typedef void (*NlSessionEventFunc) (NlSession *s, const NlSessionEvent *event, gpointer user);

/* A new run NAME (NULL: a default name) of NET with CFG (its settings,
 * checkpoint policy and early stopping). Both are copied; events stand
 * for callbacks. NULL with an error naming a bad setting. */
NlSession *nl_session_new_train (NlProject *p, const char *name, const NlNetwork *net, const NlRunConfig *cfg,
                                 GError **error);
/* Continues RUN from its last checkpoint up to EPOCHS (0: the run's own).
 * NULL with an error when the run does not exist or is running. */
NlSession *nl_session_new_resume (NlProject *p, gint64 run, int epochs, const NlRunConfig *policy, GError **error);
/* A new run forked from checkpoint WHICH ("best", "last", an epoch number;
 * NULL: "last") of RUN, with the parent's settings changed by
 * HPARAMS_JSON_OVERRIDES: NULL or a JSON object of NlRunConfig fields as
 * nl_run_config_to_json writes them, e.g. {"lr":0.01,"epochs":10}. NULL
 * with an error when the run does not exist or an override is unknown, of
 * the wrong type or invalid. */
NlSession *nl_session_new_fork (NlProject *p, gint64 run, const char *which, const char *name,
                                const char *hparams_json_overrides, const NlRunConfig *policy, GError **error);
/* Stops the run if it is going, waits for the worker, frees the events
 * left. May be called from a drain callback (e.g. on FINISHED): the
 * session is then freed when nl_session_drain returns, and no further
 * event is delivered. */
void nl_session_free (NlSession *s);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (NlSession, nl_session_free)

/* Starts the worker thread and returns at once. FALSE with an error when
 * already started or the thread cannot be created. */
gboolean nl_session_start (NlSession *s, GError **error);

/* Pops every queued event and calls func for each, in order; returns how
 * many. BATCH events are coalesced to at most ~60 a second (the last batch
 * of every epoch is always kept); every other event is always delivered. */
guint nl_session_drain (NlSession *s, NlSessionEventFunc func, gpointer user);
/* When events arrive, the worker schedules fn (data) on ctx (NULL: the
 * global default context) once until the next nl_session_drain; fn
 * normally drains. Its return value is ignored (the source runs once).
 * ctx must be iterated by the thread that owns the session. fn NULL: off. */
void nl_session_set_wakeup (NlSession *s, GMainContext *ctx, GSourceFunc fn, gpointer data);

/* Requests, honoured between batches. pause: the worker blocks and the run
 * becomes "paused" in the project; resume: "running" again; stop: the run
 * ends "stopped" (a paused session can be stopped). No-ops when they do not
 * apply (before start, after the end). */
void nl_session_pause (NlSession *s);
void nl_session_resume (NlSession *s);
void nl_session_stop (NlSession *s);
/* Profile the next n_steps steps of the running training: writes
 * profile/<node>/ms metrics when they are done, and a Chrome trace to path
 * when path is not NULL (nl-run-monitor.h). Any thread; a request before
 * the start applies from the first step. */
void nl_session_profile_steps (NlSession *s, int n_steps, const char *path);
/* Waits for the worker to end (returns at once when not started). */
void nl_session_wait (NlSession *s);

NlSessionState nl_session_get_state (NlSession *s);
/* The run's id; 0 until its row exists (STARTED). */
gint64 nl_session_get_run (NlSession *s);
/* After DONE: "finished", "failed" or "stopped"; NULL before. */
const char *nl_session_get_outcome (NlSession *s);
/* After DONE: why the run did not finish (NL_TRAIN_ERROR_CANCELLED when
 * stopped); NULL when it finished well or before DONE. */
const GError *nl_session_get_error (NlSession *s);

G_END_DECLS
