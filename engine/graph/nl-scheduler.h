/* nl-scheduler.h — the dependency scheduler (MXNet's "dependency engine").
 *
 * The scheduler knows nothing about tensors or operators: it orders opaque
 * functions by the variables (NlVar) they read and write. Two ops touching
 * one var run in push order if either writes it; readers of a var may run in
 * parallel. Ops run on a pool of worker threads, or inline (n_workers == 0):
 * one at a time on the thread whose call made them runnable (the pusher, or
 * the thread completing an async op), which gives a deterministic serial
 * order for sync ops.
 *
 * Errors: a failing op poisons the vars it writes; later ops that read or
 * write a poisoned var are skipped (their destroy still runs) and poison
 * their own outputs with the same failure. The failure surfaces once, at the
 * next wait on an affected var or at wait_for_all. Reporting it clears it on
 * every var it poisoned (as MXNet does): ops pushed after the reporting wait
 * began run normally, ops pushed before it are still skipped (whatever the
 * timing).
 *
 * All functions are thread-safe. Op functions must not wait on their own
 * engine (that could deadlock; it is refused with a critical) and must not
 * free it. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

#define NL_SCHEDULER_ERROR (nl_scheduler_error_quark ())
GQuark nl_scheduler_error_quark (void);

typedef enum {
  NL_SCHEDULER_ERROR_FAILED,  /* an op returned FALSE without setting an error */
  NL_SCHEDULER_ERROR_MISUSE,  /* e.g. waiting from inside an op */
} NlSchedulerError;

typedef struct NlScheduler NlScheduler;
/* Tags what ops touch: a tensor's storage, a PRNG state, a workspace. */
typedef struct NlVar NlVar;

/* Sync op: returns FALSE and sets error on failure. */
typedef gboolean (*NlSchedulerFn) (gpointer data, GError **error);
/* Async op: must eventually call nl_scheduler_complete (e, token, error), from
 * any thread (possibly before it returns). */
typedef void (*NlSchedulerAsyncFn) (NlScheduler *e, gpointer data, gpointer token);

/* n_workers > 0: a pool of that many CPU threads. 0: run ops inline (see
 * above). < 0: one worker per processor. */
NlScheduler *nl_scheduler_new (int n_workers);
/* Waits for all pushed work (unreported failures are dropped), then stops
 * the workers and frees every var not yet deleted. */
void nl_scheduler_free (NlScheduler *e);
int nl_scheduler_n_workers (NlScheduler *e);

/* name is used in error messages; the var belongs to the scheduler. */
NlVar *nl_scheduler_new_var (NlScheduler *e, const char *name);
const char *nl_scheduler_var_name (NlVar *v);

/* Push an op reading `reads` and writing `writes`. Duplicates are treated
 * once; a var in both lists counts as written. name is for error messages
 * ("conv1 backward"). Higher priority runs first among ready ops (ties in
 * push order). destroy (may be NULL) is called on data after the op ran or
 * was skipped, before the op counts as finished. */
void nl_scheduler_push (NlScheduler *e, const char *name, NlSchedulerFn fn, gpointer data,
                     GDestroyNotify destroy, NlVar *const *reads, int n_reads,
                     NlVar *const *writes, int n_writes, int priority);
void nl_scheduler_push_async (NlScheduler *e, const char *name, NlSchedulerAsyncFn fn, gpointer data,
                           GDestroyNotify destroy, NlVar *const *reads, int n_reads,
                           NlVar *const *writes, int n_writes, int priority);
/* Finish an async op; takes ownership of error (may be NULL). */
void nl_scheduler_complete (NlScheduler *e, gpointer token, GError *error);

/* Block until every op pushed so far that touches v has finished. Returns
 * FALSE with the error ("op 'conv1 backward' failed: ...", domain and code
 * of the original) if v, or anything it was computed from, failed and that
 * failure was not reported yet. */
gboolean nl_scheduler_wait_for_var (NlScheduler *e, NlVar *v, GError **error);
/* Block until nothing is pending; returns the first unreported failure (with
 * a count of any others appended) and marks them all reported. */
gboolean nl_scheduler_wait_for_all (NlScheduler *e, GError **error);

/* Delete v once every op already pushed on it is done (it is pushed as an op
 * writing v); on_delete (may be NULL) is then called on data, e.g. to free
 * the storage. v must not be used after this call. */
void nl_scheduler_delete_var (NlScheduler *e, NlVar *v, GDestroyNotify on_delete, gpointer data);

G_END_DECLS
