/* nl-scheduler.c — dependency tracking plus two execution policies.
 *
 * Tracking: each var keeps a FIFO of ops that have not been granted it yet;
 * its head is granted when compatible with the running holders (any number
 * of readers, or one writer). Each op counts its ungranted vars and becomes
 * ready at zero. Ready ops go to a priority heap. Policy: worker threads pop
 * the heap, or (inline) whichever thread made ops ready drains it, one op at
 * a time. One scheduler-wide mutex guards everything; ops run outside it.
 *
 * Waiting on a var pushes a stack-allocated "marker" that writes the var: it
 * is granted only once every earlier op on the var finished, and is retired
 * right at grant time, so waits never need a worker. */
#include "engine/graph/nl-scheduler.h"

#include <string.h>

G_DEFINE_QUARK (nl-scheduler-error-quark, nl_scheduler_error)

typedef enum { OP_SYNC, OP_ASYNC, OP_DELETE, OP_MARKER } OpKind;

typedef struct Op Op;
typedef struct Dep Dep;

/* One op's claim on one var; also the node of the var's wait queue. */
struct Dep {
  Dep *next;
  Op *op;
  NlVar *var;
  gboolean write;
};

/* One failed op's error, shared by every var it poisoned. Reporting it once
 * (any wait) clears it everywhere for ops pushed after the report; ops
 * pushed before it are still skipped, so what runs does not depend on
 * timing. Vars drop stale refs lazily. */
typedef struct {
  int ref; /* under the scheduler lock */
  gboolean reported;
  guint64 report_seq; /* first op seq pushed after the report */
  GError *error;
} Failure;

struct Op {
  OpKind kind;
  union {
    NlSchedulerFn fn;
    NlSchedulerAsyncFn afn;
  };
  gpointer data;
  GDestroyNotify destroy; /* for OP_DELETE: on_delete */
  int priority;
  guint64 seq;
  int wait; /* ungranted deps, +1 while the push is in progress */
  int n_deps;
  Dep *deps;
  const char *name;
  /* markers only */
  gboolean done;
  Failure *failure;
};

struct NlVar {
  NlScheduler *scheduler;
  char *name;
  Dep *head, *tail; /* ungranted claims, push order */
  int n_readers;    /* granted readers still running */
  gboolean writer;  /* a granted writer is running */
  gboolean deleted;
  Failure *failure;
};

struct NlScheduler {
  GMutex lock;
  GCond work_cond; /* workers: heap non-empty or stopping */
  GCond done_cond; /* waiters: marker granted, nothing pending, drain ended */
  int n_idle;      /* workers in work_cond; GCond calls are syscalls, skip them */
  int n_waiting;   /* threads in done_cond */
  int n_workers;
  GThread **workers;
  gboolean stopping;
  gboolean draining; /* inline policy: some thread is running ready ops */
  Op **heap;
  int heap_len, heap_cap;
  guint64 next_seq;
  gint64 n_pending;  /* pushed ops not finished (markers excluded) */
  GQueue failures;   /* unreported, oldest first, each holding a ref */
  GHashTable *vars;  /* live vars, freed with the scheduler */
};

/* The scheduler whose op runs on this thread, to refuse waits from inside ops. */
static GPrivate in_op;

/* ---- failures ------------------------------------------------------------ */

static void
failure_unref (Failure *f)
{
  if (--f->ref == 0)
    {
      g_error_free (f->error);
      g_free (f);
    }
}

static void
var_set_failure (NlVar *v, Failure *f)
{
  if (f)
    f->ref++;
  if (v->failure)
    failure_unref (v->failure);
  v->failure = f;
}

/* Ops from seq on are no longer poisoned by f. */
static void
failure_report (Failure *f, guint64 seq)
{
  f->reported = TRUE;
  f->report_seq = seq;
}

/* Whether f (may be NULL) still poisons op. */
static gboolean
failure_live_for (const Failure *f, const Op *op)
{
  return f && (!f->reported || op->seq < f->report_seq);
}

/* Lock held. A failure on one of op's vars that still poisons it, with a ref. */
static Failure *
op_upstream_failure (Op *op)
{
  if (op->kind == OP_DELETE)
    return NULL; /* deleting always happens */
  for (int i = 0; i < op->n_deps; i++)
    {
      Failure *f = op->deps[i].var->failure;
      if (failure_live_for (f, op))
        {
          f->ref++;
          return f;
        }
    }
  return NULL;
}

/* ---- ready heap: highest priority first, then push order ----------------- */

static gboolean
op_before (const Op *a, const Op *b)
{
  return a->priority != b->priority ? a->priority > b->priority : a->seq < b->seq;
}

static void
heap_push (NlScheduler *e, Op *op)
{
  if (e->heap_len == e->heap_cap)
    {
      e->heap_cap = MAX (64, 2 * e->heap_cap);
      e->heap = g_renew (Op *, e->heap, e->heap_cap);
    }
  int i = e->heap_len++;
  while (i > 0 && op_before (op, e->heap[(i - 1) / 2]))
    {
      e->heap[i] = e->heap[(i - 1) / 2];
      i = (i - 1) / 2;
    }
  e->heap[i] = op;
}

static Op *
heap_pop (NlScheduler *e)
{
  Op *top = e->heap[0];
  Op *last = e->heap[--e->heap_len];
  int i = 0, n = e->heap_len;
  for (;;)
    {
      int c = 2 * i + 1;
      if (c >= n)
        break;
      if (c + 1 < n && op_before (e->heap[c + 1], e->heap[c]))
        c++;
      if (!op_before (e->heap[c], last))
        break;
      e->heap[i] = e->heap[c];
      i = c;
    }
  if (n > 0)
    e->heap[i] = last;
  return top;
}

/* ---- tracking (lock held) ------------------------------------------------ */

static void
wake_waiters (NlScheduler *e)
{
  if (e->n_waiting > 0)
    g_cond_broadcast (&e->done_cond);
}

static void
wait_done (NlScheduler *e)
{
  e->n_waiting++;
  g_cond_wait (&e->done_cond, &e->lock);
  e->n_waiting--;
}

static void
op_dep_met (NlScheduler *e, Op *op)
{
  if (--op->wait > 0)
    return;
  heap_push (e, op);
  if (e->n_idle > 0)
    g_cond_signal (&e->work_cond);
}

static void
marker_grant (NlScheduler *e, NlVar *v, Op *m)
{
  Failure *f = v->failure;
  v->failure = NULL;
  if (f && !f->reported)
    {
      failure_report (f, m->seq); /* ops pushed after the wait began run */
      g_queue_remove (&e->failures, f);
      failure_unref (f); /* the queue's ref */
      m->failure = f;    /* takes the var's ref */
    }
  else if (f)
    failure_unref (f);
  m->done = TRUE; /* m lives on the waiter's stack: do not touch it after */
  wake_waiters (e);
}

/* Grant v to the head of its queue for as long as that is compatible. */
static void
var_grant (NlScheduler *e, NlVar *v)
{
  Dep *d;
  while ((d = v->head) != NULL && !v->writer)
    {
      if (d->write && v->n_readers > 0)
        break;
      v->head = d->next;
      if (!v->head)
        v->tail = NULL;
      if (d->op->kind == OP_MARKER)
        marker_grant (e, v, d->op);
      else
        {
          if (d->write)
            v->writer = TRUE;
          else
            v->n_readers++;
          op_dep_met (e, d->op);
        }
    }
}

static void
var_enqueue (NlScheduler *e, Dep *d)
{
  NlVar *v = d->var;
  d->next = NULL;
  if (v->tail)
    v->tail->next = d;
  else
    v->head = d;
  v->tail = d;
  var_grant (e, v);
}

static void
var_free (NlVar *v)
{
  if (v->failure)
    failure_unref (v->failure);
  g_free (v->name);
  g_free (v);
}

/* ---- execution ----------------------------------------------------------- */

static void op_execute (NlScheduler *e, Op *op, Failure *upstream);

/* Lock held. The inline policy runs ready ops here, on the calling thread;
 * the draining flag keeps that serial and non-recursive (an op that pushes
 * or completes just queues work for the loop already running). */
static void
dispatch (NlScheduler *e)
{
  if (e->n_workers > 0 || e->draining)
    return;
  e->draining = TRUE;
  while (e->heap_len > 0)
    {
      Op *op = heap_pop (e);
      Failure *up = op_upstream_failure (op);
      g_mutex_unlock (&e->lock);
      op_execute (e, op, up);
      g_mutex_lock (&e->lock);
    }
  e->draining = FALSE;
  wake_waiters (e); /* nl_scheduler_free waits for this */
}

/* The op ran, failed (err, owned) or was skipped (upstream, owned ref):
 * destroy its data, poison or release its vars, dispatch what became ready. */
static void
op_finish (NlScheduler *e, Op *op, GError *err, Failure *upstream)
{
  GError *wrapped = NULL;
  if (op->destroy)
    op->destroy (op->data);
  if (err)
    {
      wrapped = g_error_new (err->domain, err->code, "op '%s' failed: %s", op->name, err->message);
      g_error_free (err);
    }

  g_mutex_lock (&e->lock);
  Failure *f = upstream;
  if (wrapped)
    {
      f = g_new0 (Failure, 1);
      f->ref = 2; /* ours and the queue's */
      f->error = wrapped;
      g_queue_push_tail (&e->failures, f);
    }
  for (int i = 0; i < op->n_deps; i++)
    {
      Dep *d = &op->deps[i];
      NlVar *v = d->var;
      if (d->write)
        {
          v->writer = FALSE;
          /* keep an older failure that still poisons this op; the
             * only other failure a writer can find is a reported one */
          if (f && !failure_live_for (v->failure, op))
            var_set_failure (v, f);
          else if (!f && v->failure)
            var_set_failure (v, NULL);
        }
      else
        v->n_readers--;
      var_grant (e, v);
    }
  if (f)
    failure_unref (f);
  if (op->kind == OP_DELETE)
    {
      g_hash_table_remove (e->vars, op->deps[0].var);
      var_free (op->deps[0].var);
    }
  g_free (op);
  if (--e->n_pending == 0)
    wake_waiters (e);
  dispatch (e);
  g_mutex_unlock (&e->lock); /* e may be freed right after this */
}

static void
op_execute (NlScheduler *e, Op *op, Failure *upstream)
{
  if (upstream)
    {
      op_finish (e, op, NULL, upstream);
      return;
    }
  gpointer prev = g_private_get (&in_op);
  g_private_set (&in_op, e);
  switch (op->kind)
    {
    case OP_SYNC:
      {
        GError *err = NULL;
        if (!op->fn (op->data, &err))
          {
            if (!err)
              err = g_error_new_literal (NL_SCHEDULER_ERROR, NL_SCHEDULER_ERROR_FAILED,
                                         "returned FALSE without an error");
          }
        else
          g_clear_error (&err); /* success wins over a stray error */
        g_private_set (&in_op, prev);
        op_finish (e, op, err, NULL);
        return;
      }
    case OP_ASYNC:
      op->afn (e, op->data, op); /* op may be finished and freed already */
      break;
    case OP_DELETE:
      g_private_set (&in_op, prev);
      op_finish (e, op, NULL, NULL); /* calls on_delete as destroy */
      return;
    case OP_MARKER:
      g_assert_not_reached ();
    }
  g_private_set (&in_op, prev);
}

static gpointer
worker_main (gpointer p)
{
  NlScheduler *e = p;
  g_mutex_lock (&e->lock);
  for (;;)
    {
      while (e->heap_len == 0 && !e->stopping)
        {
          e->n_idle++;
          g_cond_wait (&e->work_cond, &e->lock);
          e->n_idle--;
        }
      if (e->heap_len == 0)
        break;
      Op *op = heap_pop (e);
      Failure *up = op_upstream_failure (op);
      g_mutex_unlock (&e->lock);
      op_execute (e, op, up);
      g_mutex_lock (&e->lock);
    }
  g_mutex_unlock (&e->lock);
  return NULL;
}

/* ---- public API ---------------------------------------------------------- */

NlScheduler *
nl_scheduler_new (int n_workers)
{
  NlScheduler *e = g_new0 (NlScheduler, 1);
  g_mutex_init (&e->lock);
  g_cond_init (&e->work_cond);
  g_cond_init (&e->done_cond);
  g_queue_init (&e->failures);
  e->vars = g_hash_table_new (NULL, NULL);
  e->n_workers = n_workers < 0 ? (int) g_get_num_processors () : n_workers;
  e->workers = g_new0 (GThread *, MAX (e->n_workers, 1));
  for (int i = 0; i < e->n_workers; i++)
    {
      char name[32];
      g_snprintf (name, sizeof name, "nl-sched-%d", i);
      e->workers[i] = g_thread_new (name, worker_main, e);
    }
  return e;
}

void
nl_scheduler_free (NlScheduler *e)
{
  if (!e)
    return;
  g_return_if_fail (g_private_get (&in_op) != e);
  g_mutex_lock (&e->lock);
  while (e->n_pending > 0 || e->draining)
    wait_done (e);
  e->stopping = TRUE;
  g_cond_broadcast (&e->work_cond);
  g_mutex_unlock (&e->lock);
  for (int i = 0; i < e->n_workers; i++)
    g_thread_join (e->workers[i]);

  Failure *f;
  if (e->failures.length > 0)
    g_debug ("scheduler freed with %u unreported failure(s)", e->failures.length);
  while ((f = g_queue_pop_head (&e->failures)))
    failure_unref (f);
  GHashTableIter it;
  gpointer v;
  g_hash_table_iter_init (&it, e->vars);
  while (g_hash_table_iter_next (&it, &v, NULL))
    var_free (v);
  g_hash_table_destroy (e->vars);
  g_free (e->heap);
  g_free (e->workers);
  g_cond_clear (&e->work_cond);
  g_cond_clear (&e->done_cond);
  g_mutex_clear (&e->lock);
  g_free (e);
}

int
nl_scheduler_n_workers (NlScheduler *e)
{
  g_return_val_if_fail (e, 0);
  return e->n_workers;
}

NlVar *
nl_scheduler_new_var (NlScheduler *e, const char *name)
{
  g_return_val_if_fail (e, NULL);
  NlVar *v = g_new0 (NlVar, 1);
  v->scheduler = e;
  v->name = g_strdup (name ? name : "(unnamed)");
  g_mutex_lock (&e->lock);
  g_hash_table_add (e->vars, v);
  g_mutex_unlock (&e->lock);
  return v;
}

const char *
nl_scheduler_var_name (NlVar *v)
{
  g_return_val_if_fail (v, NULL);
  return v->name;
}

static gboolean
var_ok (NlScheduler *e, NlVar *v)
{
  /* deleted is only set by the thread owning v's last use, so no lock */
  return v && v->scheduler == e && !v->deleted;
}

static gboolean
deps_contain (const Dep *deps, int n, const NlVar *v)
{
  for (int i = 0; i < n; i++)
    if (deps[i].var == v)
      return TRUE;
  return FALSE;
}

/* One allocation: the op, its deduplicated deps, its name. */
static Op *
op_new (NlScheduler *e, OpKind kind, const char *name, NlVar *const *reads, int n_reads,
        NlVar *const *writes, int n_writes)
{
  if (!name)
    name = "(unnamed)";
  size_t name_len = strlen (name) + 1;
  int cap = MAX (n_reads, 0) + MAX (n_writes, 0);
  Op *op = g_malloc0 (sizeof (Op) + (size_t) cap * sizeof (Dep) + name_len);
  op->kind = kind;
  op->deps = (Dep *) (op + 1);
  op->name = memcpy ((char *) (op->deps + cap), name, name_len);
  int n = 0;
  for (int i = 0; i < n_writes; i++)
    if (!deps_contain (op->deps, n, writes[i]))
      op->deps[n++] = (Dep) { .op = op, .var = writes[i], .write = TRUE };
  for (int i = 0; i < n_reads; i++)
    if (!deps_contain (op->deps, n, reads[i]))
      op->deps[n++] = (Dep) { .op = op, .var = reads[i], .write = FALSE };
  op->n_deps = n;
  for (int i = 0; i < n; i++)
    if (!var_ok (e, op->deps[i].var))
      {
        g_critical ("op '%s': var %d is NULL, deleted or from another scheduler", name, i);
        g_free (op);
        return NULL;
      }
  return op;
}

static void
op_submit (NlScheduler *e, Op *op)
{
  g_mutex_lock (&e->lock);
  op->seq = e->next_seq++;
  op->wait = op->n_deps + 1; /* not ready before all its claims are queued */
  e->n_pending++;
  for (int i = 0; i < op->n_deps; i++)
    var_enqueue (e, &op->deps[i]);
  op_dep_met (e, op);
  dispatch (e);
  g_mutex_unlock (&e->lock);
}

void
nl_scheduler_push (NlScheduler *e, const char *name, NlSchedulerFn fn, gpointer data,
                GDestroyNotify destroy, NlVar *const *reads, int n_reads,
                NlVar *const *writes, int n_writes, int priority)
{
  g_return_if_fail (e && fn);
  Op *op = op_new (e, OP_SYNC, name, reads, n_reads, writes, n_writes);
  if (!op)
    return;
  op->fn = fn;
  op->data = data;
  op->destroy = destroy;
  op->priority = priority;
  op_submit (e, op);
}

void
nl_scheduler_push_async (NlScheduler *e, const char *name, NlSchedulerAsyncFn fn, gpointer data,
                      GDestroyNotify destroy, NlVar *const *reads, int n_reads,
                      NlVar *const *writes, int n_writes, int priority)
{
  g_return_if_fail (e && fn);
  Op *op = op_new (e, OP_ASYNC, name, reads, n_reads, writes, n_writes);
  if (!op)
    return;
  op->afn = fn;
  op->data = data;
  op->destroy = destroy;
  op->priority = priority;
  op_submit (e, op);
}

void
nl_scheduler_complete (NlScheduler *e, gpointer token, GError *error)
{
  g_return_if_fail (e && token);
  Op *op = token;
  g_return_if_fail (op->kind == OP_ASYNC);
  op_finish (e, op, error, NULL);
}

gboolean
nl_scheduler_wait_for_var (NlScheduler *e, NlVar *v, GError **error)
{
  g_return_val_if_fail (e && var_ok (e, v), FALSE);
  if (g_private_get (&in_op) == e)
    {
      g_critical ("nl_scheduler_wait_for_var ('%s') called from inside an op", v->name);
      g_set_error (error, NL_SCHEDULER_ERROR, NL_SCHEDULER_ERROR_MISUSE, "waited from inside an op");
      return FALSE;
    }
  Dep d = { .var = v, .write = TRUE };
  Op m = { .kind = OP_MARKER, .deps = &d, .n_deps = 1, .name = "wait" };
  d.op = &m;
  g_mutex_lock (&e->lock);
  m.seq = e->next_seq;
  var_enqueue (e, &d);
  while (!m.done)
    wait_done (e);
  if (m.failure)
    {
      g_propagate_error (error, g_error_copy (m.failure->error));
      failure_unref (m.failure);
    }
  g_mutex_unlock (&e->lock);
  return m.failure == NULL;
}

gboolean
nl_scheduler_wait_for_all (NlScheduler *e, GError **error)
{
  g_return_val_if_fail (e, FALSE);
  if (g_private_get (&in_op) == e)
    {
      g_critical ("nl_scheduler_wait_for_all called from inside an op");
      g_set_error (error, NL_SCHEDULER_ERROR, NL_SCHEDULER_ERROR_MISUSE, "waited from inside an op");
      return FALSE;
    }
  GError *err = NULL;
  g_mutex_lock (&e->lock);
  while (e->n_pending > 0)
    wait_done (e);
  Failure *f = g_queue_pop_head (&e->failures);
  if (f)
    {
      err = g_error_copy (f->error);
      if (e->failures.length > 0)
        {
          char *msg = g_strdup_printf ("%s (and %u more failed op(s))", err->message,
                                       e->failures.length);
          g_free (err->message);
          err->message = msg;
        }
      /* all failures so far count as reported; vars drop them lazily */
      for (Failure *g = f; g; g = g_queue_pop_head (&e->failures))
        {
          failure_report (g, e->next_seq);
          failure_unref (g);
        }
    }
  g_mutex_unlock (&e->lock);
  if (err)
    g_propagate_error (error, err);
  return err == NULL;
}

void
nl_scheduler_delete_var (NlScheduler *e, NlVar *v, GDestroyNotify on_delete, gpointer data)
{
  g_return_if_fail (e && var_ok (e, v));
  Op *op = op_new (e, OP_DELETE, "delete var", NULL, 0, &v, 1);
  op->destroy = on_delete;
  op->data = data;
  v->deleted = TRUE;
  op_submit (e, op);
}
