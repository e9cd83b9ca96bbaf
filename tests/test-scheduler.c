/* test-scheduler.c — the dependency scheduler. Ordering is checked against a
 * sequential replay in push order (each op carries the values it must see);
 * parallelism is proved by rendezvous between ops (timeouts only guard
 * against hanging); priorities, async completion from other threads, error
 * propagation and once-only reporting, var deletion and shutdown with
 * pending work. Every test runs inline (0 workers) and with a worker pool.
 * `test-scheduler -m perf` adds a push-overhead benchmark. */
#include <string.h>

#include "engine/graph/nl-scheduler.h"

#define N_WORKERS 3
#define TIMEOUT_S 10.0

#define TEST_ERROR (g_quark_from_static_string ("test-scheduler-error"))

static int n_destroyed; /* atomic; reset by each test */

static void
count_destroy (gpointer data)
{
  g_atomic_int_inc (&n_destroyed);
}

static void
count_destroy_free (gpointer data)
{
  g_free (data);
  g_atomic_int_inc (&n_destroyed);
}

static NlScheduler *
mode_engine (gconstpointer mode)
{
  n_destroyed = 0;
  NlScheduler *e = nl_scheduler_new (GPOINTER_TO_INT (mode));
  g_assert_cmpint (nl_scheduler_n_workers (e), ==, GPOINTER_TO_INT (mode));
  return e;
}

static gboolean
noop_run (gpointer data, GError **error)
{
  return TRUE;
}

/* Sets the int it is given, to see which ops ran. */
static gboolean
mark_run (gpointer data, GError **error)
{
  g_atomic_int_inc ((int *) data);
  return TRUE;
}

static gboolean
fail_run (gpointer data, GError **error)
{
  if (data)
    g_atomic_int_inc ((int *) data);
  g_set_error_literal (error, TEST_ERROR, 42, "boom");
  return FALSE;
}

/* ---- a counting latch with a timeout ------------------------------------- */

typedef struct {
  GMutex m;
  GCond c;
  int n;
} Latch;

static void
latch_init (Latch *l)
{
  g_mutex_init (&l->m);
  g_cond_init (&l->c);
  l->n = 0;
}

static void
latch_clear (Latch *l)
{
  g_mutex_clear (&l->m);
  g_cond_clear (&l->c);
}

static void
latch_inc (Latch *l)
{
  g_mutex_lock (&l->m);
  l->n++;
  g_cond_broadcast (&l->c);
  g_mutex_unlock (&l->m);
}

/* TRUE once the count reaches n; FALSE after `seconds`. */
static gboolean
latch_wait (Latch *l, int n, double seconds)
{
  gint64 end = g_get_monotonic_time () + (gint64) (seconds * G_TIME_SPAN_SECOND);
  g_mutex_lock (&l->m);
  while (l->n < n)
    if (!g_cond_wait_until (&l->c, &l->m, end))
      break;
  gboolean ok = l->n >= n;
  g_mutex_unlock (&l->m);
  return ok;
}

/* Threads started by async ops, joined at the end of each test. */
static GMutex threads_lock;
static GPtrArray *threads;

static void
spawn (GThreadFunc fn, gpointer data)
{
  GThread *t = g_thread_new ("test-async", fn, data);
  g_mutex_lock (&threads_lock);
  if (!threads)
    threads = g_ptr_array_new ();
  g_ptr_array_add (threads, t);
  g_mutex_unlock (&threads_lock);
}

static void
join_spawned (void)
{
  g_mutex_lock (&threads_lock);
  GPtrArray *ts = threads;
  threads = NULL;
  g_mutex_unlock (&threads_lock);
  for (guint i = 0; ts && i < ts->len; i++)
    g_thread_join (ts->pdata[i]);
  if (ts)
    g_ptr_array_free (ts, TRUE);
}

/* ---- hazards on one var under many threads ------------------------------- */

typedef struct {
  gboolean write;
  int expect_version; /* writers pushed before this op */
} HzOp;

static struct {
  int version, readers, writers, bad, ran; /* all atomic */
} hz;

static gboolean
hz_run (gpointer data, GError **error)
{
  HzOp *op = data;
  if (op->write)
    {
      if (g_atomic_int_add (&hz.writers, 1) != 0 || g_atomic_int_get (&hz.readers) != 0)
        g_atomic_int_inc (&hz.bad);
    }
  else
    {
      g_atomic_int_inc (&hz.readers);
      if (g_atomic_int_get (&hz.writers) != 0)
        g_atomic_int_inc (&hz.bad);
    }
  /* RAW: sees every earlier writer; WAR: no later writer ran yet; WAW:
   * writers see their predecessors' increments in push order */
  if (g_atomic_int_get (&hz.version) != op->expect_version)
    g_atomic_int_inc (&hz.bad);
  if (op->expect_version % 5 == 0)
    g_usleep (20); /* widen the windows */
  else
    g_thread_yield ();
  if (op->write)
    {
      g_atomic_int_inc (&hz.version);
      g_atomic_int_add (&hz.writers, -1);
    }
  else
    g_atomic_int_add (&hz.readers, -1);
  g_atomic_int_inc (&hz.ran);
  return TRUE;
}

static void
test_hazards (gconstpointer mode)
{
  NlScheduler *e = mode_engine (mode);
  NlVar *v = nl_scheduler_new_var (e, "v");
  GRand *rand = g_rand_new_with_seed (7);
  memset (&hz, 0, sizeof hz);
  int n = 3000, writers = 0;
  for (int i = 0; i < n; i++)
    {
      HzOp *op = g_new (HzOp, 1);
      op->write = g_rand_int_range (rand, 0, 10) < 3; /* bursts of readers */
      op->expect_version = writers;
      writers += op->write;
      if (op->write)
        nl_scheduler_push (e, "hz write", hz_run, op, g_free, NULL, 0, &v, 1, 0);
      else
        nl_scheduler_push (e, "hz read", hz_run, op, g_free, &v, 1, NULL, 0, g_rand_int_range (rand, -2, 3));
    }
  g_assert_true (nl_scheduler_wait_for_var (e, v, NULL));
  g_assert_cmpint (hz.ran, ==, n);
  g_assert_cmpint (hz.bad, ==, 0);
  g_assert_cmpint (hz.version, ==, writers);
  g_rand_free (rand);
  nl_scheduler_free (e);
}

/* ---- randomised stress against a sequential replay ----------------------- */

#define ST_VARS 20
#define ST_OPS 5000

typedef struct {
  int n_r, n_w;
  int r[3], w[2];
  guint64 exp_r[3], exp_w[2], new_w[2];
} StOp;

static struct {
  guint64 cur[ST_VARS];
  int readers[ST_VARS], writers[ST_VARS];
  int bad, ran;
  NlScheduler *e;
  /* two completer threads fed by a queue (not GThreadPool: its internal
   * locking is invisible to ThreadSanitizer) */
  GMutex lock;
  GCond cond;
  GQueue jobs;
  gboolean stop;
  GThread *completers[2];
} st;

static guint64
mix (guint64 x)
{
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

static void
st_body (StOp *op)
{
  for (int i = 0; i < op->n_w; i++)
    if (g_atomic_int_add (&st.writers[op->w[i]], 1) != 0
        || g_atomic_int_get (&st.readers[op->w[i]]) != 0)
      g_atomic_int_inc (&st.bad);
  for (int i = 0; i < op->n_r; i++)
    {
      g_atomic_int_inc (&st.readers[op->r[i]]);
      if (g_atomic_int_get (&st.writers[op->r[i]]) != 0)
        g_atomic_int_inc (&st.bad);
    }
  for (int i = 0; i < op->n_r; i++)
    if (st.cur[op->r[i]] != op->exp_r[i])
      g_atomic_int_inc (&st.bad);
  for (int i = 0; i < op->n_w; i++)
    if (st.cur[op->w[i]] != op->exp_w[i])
      g_atomic_int_inc (&st.bad);
  if ((op->exp_r[0] & 63) == 0)
    g_usleep (10);
  else if ((op->exp_r[0] & 3) == 0)
    g_thread_yield ();
  for (int i = 0; i < op->n_w; i++)
    st.cur[op->w[i]] = op->new_w[i];
  for (int i = 0; i < op->n_r; i++)
    g_atomic_int_add (&st.readers[op->r[i]], -1);
  for (int i = 0; i < op->n_w; i++)
    g_atomic_int_add (&st.writers[op->w[i]], -1);
  g_atomic_int_inc (&st.ran);
}

static gboolean
st_sync (gpointer data, GError **error)
{
  st_body (data);
  return TRUE;
}

typedef struct {
  StOp *op;
  gpointer token;
} StJob;

static gpointer
st_completer (gpointer data)
{
  g_mutex_lock (&st.lock);
  for (;;)
    {
      StJob *job = g_queue_pop_head (&st.jobs);
      if (!job && st.stop)
        break;
      if (!job)
        {
          g_cond_wait (&st.cond, &st.lock);
          continue;
        }
      g_mutex_unlock (&st.lock);
      st_body (job->op);
      nl_scheduler_complete (st.e, job->token, NULL);
      g_free (job);
      g_mutex_lock (&st.lock);
    }
  g_mutex_unlock (&st.lock);
  return NULL;
}

static void
st_async (NlScheduler *e, gpointer data, gpointer token)
{
  StJob *job = g_new (StJob, 1);
  job->op = data;
  job->token = token;
  g_mutex_lock (&st.lock);
  g_queue_push_tail (&st.jobs, job);
  g_cond_signal (&st.cond);
  g_mutex_unlock (&st.lock);
}

static int
pick_unused (GRand *rand, const int *used, int n_used)
{
  for (;;)
    {
      int v = g_rand_int_range (rand, 0, ST_VARS);
      gboolean dup = FALSE;
      for (int i = 0; i < n_used; i++)
        dup |= used[i] == v;
      if (!dup)
        return v;
    }
}

static void
test_stress (gconstpointer mode)
{
  NlScheduler *e = mode_engine (mode);
  NlVar *vars[ST_VARS];
  guint64 sim[ST_VARS];
  memset (&st, 0, sizeof st);
  st.e = e;
  g_mutex_init (&st.lock);
  g_cond_init (&st.cond);
  for (int i = 0; i < 2; i++)
    st.completers[i] = g_thread_new ("completer", st_completer, NULL);
  for (int i = 0; i < ST_VARS; i++)
    {
      char name[16];
      g_snprintf (name, sizeof name, "v%d", i);
      vars[i] = nl_scheduler_new_var (e, name);
      sim[i] = st.cur[i] = mix (1000 + i);
    }
  GRand *rand = g_rand_new_with_seed (1234);
  int n_async = 0;
  for (int k = 0; k < ST_OPS; k++)
    {
      StOp *op = g_new0 (StOp, 1);
      int used[5], n_used = 0;
      op->n_w = g_rand_int_range (rand, 0, 3);
      op->n_r = g_rand_int_range (rand, 0, 4);
      for (int i = 0; i < op->n_w; i++, n_used++)
        used[n_used] = op->w[i] = pick_unused (rand, used, n_used);
      for (int i = 0; i < op->n_r; i++, n_used++)
        used[n_used] = op->r[i] = pick_unused (rand, used, n_used);

      /* the replay: what this op must see and what it leaves */
      guint64 sum = k;
      for (int i = 0; i < op->n_r; i++)
        sum += op->exp_r[i] = sim[op->r[i]];
      for (int i = 0; i < op->n_w; i++)
        {
          op->exp_w[i] = sim[op->w[i]];
          sim[op->w[i]] = op->new_w[i] = mix (sum * 31 + op->w[i]);
        }

      /* the scheduler's lists, sometimes with duplicates */
      NlVar *rv[4], *wv[3];
      int nr = 0, nw = 0;
      for (int i = 0; i < op->n_r; i++)
        rv[nr++] = vars[op->r[i]];
      for (int i = 0; i < op->n_w; i++)
        wv[nw++] = vars[op->w[i]];
      if (nr > 0 && g_rand_int_range (rand, 0, 8) == 0)
        rv[nr++] = rv[0];
      if (nw > 0 && g_rand_int_range (rand, 0, 8) == 0)
        wv[nw++] = wv[0];
      int prio = g_rand_int_range (rand, -3, 4);
      if (g_rand_int_range (rand, 0, 10) == 0)
        {
          n_async++;
          nl_scheduler_push_async (e, "st async", st_async, op, count_destroy_free, rv, nr, wv, nw, prio);
        }
      else
        nl_scheduler_push (e, "st sync", st_sync, op, count_destroy_free, rv, nr, wv, nw, prio);

      if (k % 250 == 249)
        {
          int v = g_rand_int_range (rand, 0, ST_VARS);
          g_assert_true (nl_scheduler_wait_for_var (e, vars[v], NULL));
          g_assert_cmpuint (st.cur[v], ==, sim[v]);
        }
    }
  g_assert_true (nl_scheduler_wait_for_all (e, NULL));
  g_assert_cmpint (st.ran, ==, ST_OPS);
  g_assert_cmpint (st.bad, ==, 0);
  g_assert_cmpint (g_atomic_int_get (&n_destroyed), ==, ST_OPS);
  g_assert_cmpint (n_async, >, ST_OPS / 20);
  for (int i = 0; i < ST_VARS; i++)
    g_assert_cmpuint (st.cur[i], ==, sim[i]);
  g_mutex_lock (&st.lock);
  st.stop = TRUE;
  g_cond_broadcast (&st.cond);
  g_mutex_unlock (&st.lock);
  for (int i = 0; i < 2; i++)
    g_thread_join (st.completers[i]);
  g_mutex_clear (&st.lock);
  g_cond_clear (&st.cond);
  g_rand_free (rand);
  nl_scheduler_free (e);
}

/* ---- parallelism: ops that can only finish if they overlap ---------------- */

/* Two ops "meet" if both are running at one moment: each waits (up to a
 * timeout) for the other to be present at the same time. */
typedef struct {
  GMutex m;
  GCond c;
  int present;
  gboolean met;
} Rendezvous;

typedef struct {
  Rendezvous *rv;
  double timeout;
  int met;
} Meet;

static gboolean
meet_run (gpointer data, GError **error)
{
  Meet *me = data;
  Rendezvous *rv = me->rv;
  gint64 end = g_get_monotonic_time () + (gint64) (me->timeout * G_TIME_SPAN_SECOND);
  g_mutex_lock (&rv->m);
  if (++rv->present == 2)
    {
      rv->met = TRUE;
      g_cond_broadcast (&rv->c);
    }
  while (!rv->met)
    if (!g_cond_wait_until (&rv->c, &rv->m, end))
      break;
  me->met = rv->met;
  rv->present--;
  g_mutex_unlock (&rv->m);
  return TRUE;
}

/* Push two meet ops with the given lists; return how many met the other. */
static int
meet_pair (NlScheduler *e, double timeout, NlVar *r1, NlVar *w1, NlVar *r2, NlVar *w2)
{
  Rendezvous rv = { 0 };
  g_mutex_init (&rv.m);
  g_cond_init (&rv.c);
  Meet a = { &rv, timeout, 0 }, b = { &rv, timeout, 0 };
  nl_scheduler_push (e, "meet a", meet_run, &a, NULL, &r1, r1 != NULL, &w1, w1 != NULL, 0);
  nl_scheduler_push (e, "meet b", meet_run, &b, NULL, &r2, r2 != NULL, &w2, w2 != NULL, 0);
  g_assert_true (nl_scheduler_wait_for_all (e, NULL));
  g_mutex_clear (&rv.m);
  g_cond_clear (&rv.c);
  return a.met + b.met;
}

static void
test_parallel (gconstpointer mode)
{
  NlScheduler *e = mode_engine (mode);
  NlVar *a = nl_scheduler_new_var (e, "a"), *b = nl_scheduler_new_var (e, "b");
  /* independent ops overlap */
  g_assert_cmpint (meet_pair (e, TIMEOUT_S, NULL, a, NULL, b), ==, 2);
  /* readers of one var overlap, also when granted together after a writer */
  nl_scheduler_push (e, "w", noop_run, NULL, NULL, NULL, 0, &a, 1, 0);
  g_assert_cmpint (meet_pair (e, TIMEOUT_S, a, b, a, NULL), ==, 2);
  /* a writer excludes everything else on its var: neither can meet the
   * other (a correct engine makes this pass whatever the timing) */
  g_assert_cmpint (meet_pair (e, 0.05, NULL, a, NULL, a), ==, 0);
  g_assert_cmpint (meet_pair (e, 0.05, a, NULL, NULL, a), ==, 0);
  g_assert_cmpint (meet_pair (e, 0.05, NULL, a, a, b), ==, 0);
  nl_scheduler_free (e);
}

/* ---- priority ------------------------------------------------------------ */

static GMutex log_lock;
static GArray *order_log;

static gboolean
log_run (gpointer data, GError **error)
{
  g_mutex_lock (&log_lock);
  int id = GPOINTER_TO_INT (data);
  g_array_append_val (order_log, id);
  g_mutex_unlock (&log_lock);
  return TRUE;
}

static const int prios[] = { 3, -1, 7, 0, 7, 5, 2, -4, 3 };
static const int prio_order[] = { 2, 4, 5, 0, 8, 6, 3, 1, 7 }; /* by priority, ties in push order */

static void
check_prio_order (void)
{
  g_assert_cmpuint (order_log->len, ==, G_N_ELEMENTS (prios));
  for (guint i = 0; i < order_log->len; i++)
    g_assert_cmpint (g_array_index (order_log, int, i), ==, prio_order[i]);
  g_array_set_size (order_log, 0);
}

typedef struct {
  Latch started, gate;
} Blocker;

static gboolean
blocker_run (gpointer data, GError **error)
{
  Blocker *b = data;
  latch_inc (&b->started);
  g_assert_true (latch_wait (&b->gate, 1, TIMEOUT_S));
  return TRUE;
}

static gpointer held_token;
static Latch held_latch;

static void
hold_async (NlScheduler *e, gpointer data, gpointer token)
{
  g_atomic_pointer_set (&held_token, token);
  latch_inc (&held_latch);
}

static void
test_priority_one_worker (void)
{
  NlScheduler *e = nl_scheduler_new (1);
  NlVar *x = nl_scheduler_new_var (e, "x"), *vs[G_N_ELEMENTS (prios)];
  order_log = g_array_new (FALSE, FALSE, sizeof (int));
  Blocker b;
  latch_init (&b.started);
  latch_init (&b.gate);
  nl_scheduler_push (e, "blocker", blocker_run, &b, NULL, NULL, 0, &x, 1, -100);
  g_assert_true (latch_wait (&b.started, 1, TIMEOUT_S));
  /* the only worker is busy: these all sit in the ready queue */
  for (guint i = 0; i < G_N_ELEMENTS (prios); i++)
    {
      vs[i] = nl_scheduler_new_var (e, "p");
      nl_scheduler_push (e, "p", log_run, GINT_TO_POINTER (i), NULL, NULL, 0, &vs[i], 1, prios[i]);
    }
  latch_inc (&b.gate);
  g_assert_true (nl_scheduler_wait_for_all (e, NULL));
  check_prio_order ();
  g_array_free (order_log, TRUE);
  latch_clear (&b.started);
  latch_clear (&b.gate);
  nl_scheduler_free (e);
}

/* Ops waiting on one async writer become ready together when it completes. */
static void
test_priority_release (gconstpointer mode)
{
  int n_workers = GPOINTER_TO_INT (mode) > 0 ? 1 : 0; /* one worker keeps the order total */
  NlScheduler *e = nl_scheduler_new (n_workers);
  NlVar *x = nl_scheduler_new_var (e, "x");
  order_log = g_array_new (FALSE, FALSE, sizeof (int));
  latch_init (&held_latch);
  nl_scheduler_push_async (e, "hold", hold_async, NULL, NULL, NULL, 0, &x, 1, 0);
  g_assert_true (latch_wait (&held_latch, 1, TIMEOUT_S));
  for (guint i = 0; i < G_N_ELEMENTS (prios); i++)
    nl_scheduler_push (e, "p", log_run, GINT_TO_POINTER (i), NULL, &x, 1, NULL, 0, prios[i]);
  g_assert_cmpuint (order_log->len, ==, 0);
  nl_scheduler_complete (e, g_atomic_pointer_get (&held_token), NULL);
  g_assert_true (nl_scheduler_wait_for_all (e, NULL));
  check_prio_order ();
  g_array_free (order_log, TRUE);
  latch_clear (&held_latch);
  nl_scheduler_free (e);
}

/* ---- async ops completed from other threads ------------------------------ */

typedef struct {
  NlScheduler *e;
  gpointer token;
  int *val;
  int expect, set_to; /* set_to < 0: a reader */
  int delay_us;
  int *bad;
} AJob;

static gpointer
ajob_thread (gpointer data)
{
  AJob *j = data;
  g_usleep (j->delay_us);
  if (g_atomic_int_get (j->val) != j->expect)
    g_atomic_int_inc (j->bad);
  if (j->set_to >= 0)
    g_atomic_int_set (j->val, j->set_to);
  nl_scheduler_complete (j->e, j->token, NULL);
  return NULL;
}

static void
ajob_start (NlScheduler *e, gpointer data, gpointer token)
{
  AJob *j = data;
  j->e = e;
  j->token = token;
  spawn (ajob_thread, j);
}

typedef struct {
  int *val, expect, *bad;
} Check;

static gboolean
check_run (gpointer data, GError **error)
{
  Check *c = data;
  if (g_atomic_int_get (c->val) != c->expect)
    g_atomic_int_inc (c->bad);
  return TRUE;
}

static void
complete_now (NlScheduler *e, gpointer data, gpointer token)
{
  nl_scheduler_complete (e, token, NULL);
}

static void
test_async (gconstpointer mode)
{
  NlScheduler *e = mode_engine (mode);
  NlVar *v = nl_scheduler_new_var (e, "v");
  GRand *rand = g_rand_new_with_seed (99);
  int val = 0, bad = 0, n = 40;
  AJob *jobs = g_new0 (AJob, 2 * n);
  Check *checks = g_new0 (Check, n);
  for (int i = 0; i < n; i++)
    {
      AJob *w = &jobs[2 * i], *r = &jobs[2 * i + 1];
      *w = (AJob) { .val = &val, .expect = i, .set_to = i + 1, .bad = &bad,
                    .delay_us = g_rand_int_range (rand, 0, 400) };
      *r = (AJob) { .val = &val, .expect = i + 1, .set_to = -1, .bad = &bad,
                    .delay_us = g_rand_int_range (rand, 0, 400) };
      checks[i] = (Check) { &val, i + 1, &bad };
      nl_scheduler_push_async (e, "async write", ajob_start, w, count_destroy, NULL, 0, &v, 1, 0);
      /* an async and a sync reader, both after the write and before the next */
      nl_scheduler_push_async (e, "async read", ajob_start, r, count_destroy, &v, 1, NULL, 0, 0);
      nl_scheduler_push (e, "sync read", check_run, &checks[i], count_destroy, &v, 1, NULL, 0, 0);
    }
  g_assert_true (nl_scheduler_wait_for_var (e, v, NULL));
  g_assert_cmpint (g_atomic_int_get (&val), ==, n);
  g_assert_cmpint (bad, ==, 0);
  g_assert_cmpint (g_atomic_int_get (&n_destroyed), ==, 3 * n);

  /* an async op that completes before its function returns */
  nl_scheduler_push_async (e, "instant", complete_now, NULL, NULL, NULL, 0, &v, 1, 0);
  g_assert_true (nl_scheduler_wait_for_all (e, NULL));
  nl_scheduler_free (e);
  join_spawned ();
  g_free (jobs);
  g_free (checks);
  g_rand_free (rand);
}

/* ---- errors -------------------------------------------------------------- */

typedef struct {
  NlScheduler *e;
  gpointer token;
  GError *err;
} FailJob;

static gpointer
failjob_thread (gpointer data)
{
  FailJob *j = data;
  g_usleep (2000);
  nl_scheduler_complete (j->e, j->token, j->err);
  return NULL;
}

static void
failjob_start (NlScheduler *e, gpointer data, gpointer token)
{
  FailJob *j = data;
  j->e = e;
  j->token = token;
  spawn (failjob_thread, j);
}

static gboolean
lazy_run (gpointer data, GError **error)
{
  return FALSE; /* a buggy op: fails without saying why */
}

static void
assert_error (GError *err, GQuark domain, int code, const char *msg)
{
  g_assert_nonnull (err);
  g_assert_cmpstr (err->message, ==, msg);
  g_assert_true (err->domain == domain);
  g_assert_cmpint (err->code, ==, code);
}

static void
test_errors (gconstpointer mode)
{
  NlScheduler *e = mode_engine (mode);
  NlVar *a = nl_scheduler_new_var (e, "a"), *b = nl_scheduler_new_var (e, "b");
  NlVar *c = nl_scheduler_new_var (e, "c"), *d = nl_scheduler_new_var (e, "d");
  NlVar *x = nl_scheduler_new_var (e, "x");
  enum { F, K, G, H, R, U, V, G2, F2, RA, P, X1, Y1, NOPS };
  int ran[NOPS] = { 0 }, pushed = 0;
  GError *err = NULL;

  /* F fails writing a; everything downstream of a is skipped */
  nl_scheduler_push (e, "F", fail_run, &ran[F], count_destroy, NULL, 0, &a, 1, 0);
  nl_scheduler_push (e, "K", mark_run, &ran[K], count_destroy, NULL, 0, &a, 1, 0);
  nl_scheduler_push (e, "G", mark_run, &ran[G], count_destroy, &a, 1, &b, 1, 0);
  nl_scheduler_push (e, "H", mark_run, &ran[H], count_destroy, &b, 1, &c, 1, 5);
  nl_scheduler_push (e, "R", mark_run, &ran[R], count_destroy, &c, 1, NULL, 0, 0);
  nl_scheduler_push (e, "U", mark_run, &ran[U], count_destroy, NULL, 0, &d, 1, 0);
  nl_scheduler_push (e, "V", mark_run, &ran[V], count_destroy, &d, 1, &x, 1, 0);
  pushed += 7;
  g_assert_false (nl_scheduler_wait_for_var (e, c, &err));
  assert_error (err, TEST_ERROR, 42, "op 'F' failed: boom");
  g_clear_error (&err);
  /* reported once: clean on every var it reached */
  g_assert_true (nl_scheduler_wait_for_var (e, c, &err));
  g_assert_true (nl_scheduler_wait_for_var (e, a, &err));
  g_assert_true (nl_scheduler_wait_for_var (e, b, &err));
  g_assert_true (nl_scheduler_wait_for_all (e, &err));
  g_assert_no_error (err);
  g_assert_cmpint (g_atomic_int_get (&n_destroyed), ==, pushed);
  g_assert_cmpint (ran[F], ==, 1);
  g_assert_cmpint (ran[K] + ran[G] + ran[H] + ran[R], ==, 0);
  g_assert_cmpint (ran[U], ==, 1);
  g_assert_cmpint (ran[V], ==, 1);
  /* the vars work again */
  nl_scheduler_push (e, "G2", mark_run, &ran[G2], count_destroy, &a, 1, &b, 1, 0);
  pushed++;
  g_assert_true (nl_scheduler_wait_for_var (e, b, NULL));
  g_assert_cmpint (ran[G2], ==, 1);

  /* a failing op does not poison what it only reads */
  nl_scheduler_push (e, "F2", fail_run, &ran[F2], count_destroy, &a, 1, &b, 1, 0);
  nl_scheduler_push (e, "RA", mark_run, &ran[RA], count_destroy, NULL, 0, &a, 1, 0);
  pushed += 2;
  g_assert_true (nl_scheduler_wait_for_var (e, a, NULL));
  g_assert_cmpint (ran[RA], ==, 1);
  g_assert_false (nl_scheduler_wait_for_var (e, b, &err));
  assert_error (err, TEST_ERROR, 42, "op 'F2' failed: boom");
  g_clear_error (&err);

  /* an async op failing from another thread; found by wait_for_all, once */
  FailJob fj = { .err = g_error_new (TEST_ERROR, 7, "late %d", 7) };
  nl_scheduler_push_async (e, "async fail", failjob_start, &fj, count_destroy, &d, 1, &a, 1, 0);
  nl_scheduler_push (e, "P", mark_run, &ran[P], count_destroy, &a, 1, &b, 1, 0);
  pushed += 2;
  g_assert_false (nl_scheduler_wait_for_all (e, &err));
  assert_error (err, TEST_ERROR, 7, "op 'async fail' failed: late 7");
  g_clear_error (&err);
  g_assert_true (nl_scheduler_wait_for_all (e, NULL));
  g_assert_true (nl_scheduler_wait_for_var (e, b, NULL));
  g_assert_cmpint (ran[P], ==, 0);

  /* two failures: wait_for_all reports the first and counts the other */
  nl_scheduler_push (e, "X1", fail_run, &ran[X1], count_destroy, NULL, 0, &a, 1, 0);
  nl_scheduler_push (e, "Y1", fail_run, &ran[Y1], count_destroy, &x, 1, &d, 1, 0);
  pushed += 2;
  g_assert_false (nl_scheduler_wait_for_all (e, &err));
  g_assert_true (g_str_has_prefix (err->message, "op '"));
  g_assert_true (g_str_has_suffix (err->message, "' failed: boom (and 1 more failed op(s))"));
  g_clear_error (&err);
  g_assert_true (nl_scheduler_wait_for_var (e, a, NULL));
  g_assert_true (nl_scheduler_wait_for_var (e, d, NULL));

  /* FALSE without an error still fails, with a message */
  nl_scheduler_push (e, "lazy", lazy_run, NULL, count_destroy, NULL, 0, &c, 1, 0);
  pushed++;
  g_assert_false (nl_scheduler_wait_for_var (e, c, &err));
  assert_error (err, NL_SCHEDULER_ERROR, NL_SCHEDULER_ERROR_FAILED,
                "op 'lazy' failed: returned FALSE without an error");
  g_clear_error (&err);

  /* a failure with no outputs is still reported by wait_for_all */
  nl_scheduler_push (e, "lonely", fail_run, NULL, count_destroy, &c, 1, NULL, 0, 0);
  pushed++;
  g_assert_true (nl_scheduler_wait_for_var (e, c, NULL));
  g_assert_false (nl_scheduler_wait_for_all (e, &err));
  assert_error (err, TEST_ERROR, 42, "op 'lonely' failed: boom");
  g_clear_error (&err);

  g_assert_cmpint (g_atomic_int_get (&n_destroyed), ==, pushed);
  nl_scheduler_free (e);
  join_spawned ();
}

/* Whether a poisoned op is skipped depends on push order relative to the
 * report, not on timing: G is pushed before the report but held back. */
static void
test_error_report_order (gconstpointer mode)
{
  NlScheduler *e = mode_engine (mode);
  NlVar *a = nl_scheduler_new_var (e, "a"), *b = nl_scheduler_new_var (e, "b");
  NlVar *c = nl_scheduler_new_var (e, "c");
  int ran_c = 0, ran_g = 0, ran_g3 = 0;
  GError *err = NULL;
  latch_init (&held_latch);
  nl_scheduler_push_async (e, "hold", hold_async, NULL, count_destroy, NULL, 0, &b, 1, 0);
  g_assert_true (latch_wait (&held_latch, 1, TIMEOUT_S));
  nl_scheduler_push (e, "F", fail_run, NULL, count_destroy, NULL, 0, &a, 1, 0);
  nl_scheduler_push (e, "C", mark_run, &ran_c, count_destroy, &a, 1, &c, 1, 0);
  nl_scheduler_push (e, "G", mark_run, &ran_g, count_destroy, &c, 1, &b, 1, 0);
  g_assert_false (nl_scheduler_wait_for_var (e, a, &err));
  assert_error (err, TEST_ERROR, 42, "op 'F' failed: boom");
  g_clear_error (&err);
  nl_scheduler_push (e, "G3", mark_run, &ran_g3, count_destroy, &c, 1, &b, 1, 0);
  nl_scheduler_complete (e, g_atomic_pointer_get (&held_token), NULL);
  g_assert_true (nl_scheduler_wait_for_var (e, b, &err));
  g_assert_no_error (err);
  g_assert_cmpint (ran_c + ran_g, ==, 0);
  g_assert_cmpint (ran_g3, ==, 1);
  g_assert_true (nl_scheduler_wait_for_all (e, NULL));
  g_assert_cmpint (g_atomic_int_get (&n_destroyed), ==, 5);
  latch_clear (&held_latch);
  nl_scheduler_free (e);
}

/* ---- delete_var ---------------------------------------------------------- */

typedef struct {
  int finished, deleted, saw_finished, n_deletes, bad; /* atomic */
  NlScheduler *e;
} Del;

static void
del_reader_body (Del *s)
{
  g_usleep (20000);
  if (g_atomic_int_get (&s->deleted))
    g_atomic_int_inc (&s->bad);
  g_atomic_int_inc (&s->finished);
}

static gboolean
del_sync_reader (gpointer data, GError **error)
{
  del_reader_body (data);
  return TRUE;
}

typedef struct {
  Del *s;
  NlScheduler *e;
  gpointer token;
} DelJob;

static gpointer
del_thread (gpointer data)
{
  DelJob *j = data;
  del_reader_body (j->s);
  nl_scheduler_complete (j->e, j->token, NULL);
  g_free (j);
  return NULL;
}

static void
del_async_reader (NlScheduler *e, gpointer data, gpointer token)
{
  DelJob *j = g_new (DelJob, 1);
  *j = (DelJob) { data, e, token };
  spawn (del_thread, j);
}

static void
on_delete (gpointer data)
{
  Del *s = data;
  g_atomic_int_set (&s->saw_finished, g_atomic_int_get (&s->finished));
  g_atomic_int_inc (&s->n_deletes);
  g_atomic_int_set (&s->deleted, 1);
}

static void
test_delete_var (gconstpointer mode)
{
  NlScheduler *e = mode_engine (mode);
  NlVar *v = nl_scheduler_new_var (e, "v"), *u = nl_scheduler_new_var (e, "u");
  NlVar *w = nl_scheduler_new_var (e, "w"), *z = nl_scheduler_new_var (e, "z");
  Del s = { 0 };
  int ran_u = 0;
  nl_scheduler_push (e, "write v", noop_run, NULL, NULL, NULL, 0, &v, 1, 0);
  nl_scheduler_push (e, "sync read", del_sync_reader, &s, NULL, &v, 1, NULL, 0, 0);
  nl_scheduler_push_async (e, "async read", del_async_reader, &s, NULL, &v, 1, NULL, 0, 0);
  nl_scheduler_push_async (e, "async read", del_async_reader, &s, NULL, &v, 1, NULL, 0, 0);
  nl_scheduler_push (e, "sync read", del_sync_reader, &s, NULL, &v, 1, &u, 1, 0);
  nl_scheduler_delete_var (e, v, on_delete, &s);
  nl_scheduler_delete_var (e, w, NULL, NULL);
  nl_scheduler_push (e, "after", mark_run, &ran_u, NULL, &u, 1, NULL, 0, 0);
  g_assert_true (nl_scheduler_wait_for_all (e, NULL));
  g_assert_cmpint (s.n_deletes, ==, 1);
  g_assert_cmpint (s.saw_finished, ==, 4);
  g_assert_cmpint (s.bad, ==, 0);
  g_assert_cmpint (ran_u, ==, 1);

  /* deleting a poisoned var still deletes; the failure is still reported */
  Del s2 = { 0 };
  nl_scheduler_push (e, "Fz", fail_run, NULL, NULL, NULL, 0, &z, 1, 0);
  nl_scheduler_delete_var (e, z, on_delete, &s2);
  GError *err = NULL;
  g_assert_false (nl_scheduler_wait_for_all (e, &err));
  assert_error (err, TEST_ERROR, 42, "op 'Fz' failed: boom");
  g_clear_error (&err);
  g_assert_cmpint (s2.n_deletes, ==, 1);
  nl_scheduler_free (e);
  join_spawned ();
}

/* ---- wait_for_var waits for readers too ---------------------------------- */

typedef struct {
  NlScheduler *e;
  NlVar *v;
  int reader_done, returned, ok; /* atomic */
} Waiter;

static gpointer
waiter_thread (gpointer data)
{
  Waiter *w = data;
  gboolean ok = nl_scheduler_wait_for_var (w->e, w->v, NULL);
  g_atomic_int_set (&w->ok, ok && g_atomic_int_get (&w->reader_done));
  g_atomic_int_set (&w->returned, 1);
  return NULL;
}

static void
test_wait_readers (gconstpointer mode)
{
  NlScheduler *e = mode_engine (mode);
  NlVar *v = nl_scheduler_new_var (e, "v");
  Waiter w = { e, v, 0, 0, 0 };
  latch_init (&held_latch);
  nl_scheduler_push_async (e, "slow reader", hold_async, NULL, NULL, &v, 1, NULL, 0, 0);
  g_assert_true (latch_wait (&held_latch, 1, TIMEOUT_S));
  GThread *t = g_thread_new ("waiter", waiter_thread, &w);
  g_usleep (20000); /* give a wrong engine the chance to return early */
  g_assert_cmpint (g_atomic_int_get (&w.returned), ==, 0);
  g_atomic_int_set (&w.reader_done, 1);
  nl_scheduler_complete (e, g_atomic_pointer_get (&held_token), NULL);
  g_thread_join (t);
  g_assert_cmpint (w.ok, ==, 1);
  latch_clear (&held_latch);
  nl_scheduler_free (e);
}

/* ---- duplicates and a var listed as both read and written ---------------- */

static void
test_duplicates (gconstpointer mode)
{
  NlScheduler *e = mode_engine (mode);
  NlVar *a = nl_scheduler_new_var (e, "a"), *b = nl_scheduler_new_var (e, "b");
  g_assert_cmpstr (nl_scheduler_var_name (a), ==, "a");
  NlVar *reads[] = { a, a, b }, *writes[] = { b, b };
  memset (&hz, 0, sizeof hz);
  HzOp before = { TRUE, 0 }, both = { TRUE, 1 }, after = { FALSE, 2 };
  /* `both` writes b (it is also in its reads): it must be exclusive */
  nl_scheduler_push (e, "w", hz_run, &before, count_destroy, NULL, 0, &b, 1, 0);
  nl_scheduler_push (e, "dups", hz_run, &both, count_destroy, reads, 3, writes, 2, 0);
  nl_scheduler_push (e, "r", hz_run, &after, count_destroy, reads, 3, NULL, 0, 0);
  g_assert_true (nl_scheduler_wait_for_all (e, NULL));
  g_assert_cmpint (hz.ran, ==, 3);
  g_assert_cmpint (hz.bad, ==, 0);
  g_assert_cmpint (g_atomic_int_get (&n_destroyed), ==, 3);
  /* an op touching no var at all */
  int ran = 0;
  nl_scheduler_push (e, "none", mark_run, &ran, NULL, NULL, 0, NULL, 0, 0);
  g_assert_true (nl_scheduler_wait_for_all (e, NULL));
  g_assert_cmpint (ran, ==, 1);
  nl_scheduler_free (e);
}

/* ---- misuse: waiting from inside an op is refused, not a deadlock -------- */

typedef struct {
  NlScheduler *e;
  NlVar *v;
  int refused;
} Nested;

static gboolean
nested_wait_run (gpointer data, GError **error)
{
  Nested *n = data;
  GError *err = NULL;
  n->refused = !nl_scheduler_wait_for_var (n->e, n->v, &err)
               && g_error_matches (err, NL_SCHEDULER_ERROR, NL_SCHEDULER_ERROR_MISUSE);
  g_clear_error (&err);
  return TRUE;
}

static void
test_wait_in_op (gconstpointer mode)
{
  NlScheduler *e = mode_engine (mode);
  NlVar *v = nl_scheduler_new_var (e, "v");
  Nested n = { e, v, 0 };
  g_test_expect_message (G_LOG_DOMAIN, G_LOG_LEVEL_CRITICAL, "*inside an op*");
  nl_scheduler_push (e, "nested", nested_wait_run, &n, NULL, NULL, 0, &v, 1, 0);
  g_assert_true (nl_scheduler_wait_for_all (e, NULL));
  g_test_assert_expected_messages ();
  g_assert_cmpint (n.refused, ==, 1);
  nl_scheduler_free (e);
}

/* ---- shutdown with pending work ------------------------------------------ */

static int shut_ran;

static gboolean
sleep_run (gpointer data, GError **error)
{
  g_usleep (2000);
  g_atomic_int_inc (&shut_ran);
  return TRUE;
}

typedef struct {
  NlScheduler *e;
  gpointer token;
} ShutJob;

static gpointer
shut_thread (gpointer data)
{
  ShutJob *j = data;
  g_usleep (10000);
  g_atomic_int_inc (&shut_ran);
  nl_scheduler_complete (j->e, j->token, NULL); /* the scheduler may be freed right after */
  g_free (j);
  return NULL;
}

static void
shut_async (NlScheduler *e, gpointer data, gpointer token)
{
  ShutJob *j = g_new (ShutJob, 1);
  *j = (ShutJob) { e, token };
  spawn (shut_thread, j);
}

static void
test_shutdown (gconstpointer mode)
{
  NlScheduler *e = mode_engine (mode);
  NlVar *chain = nl_scheduler_new_var (e, "chain");
  shut_ran = 0;
  for (int i = 0; i < 8; i++)
    {
      NlVar *own = nl_scheduler_new_var (e, "own");
      nl_scheduler_push (e, "chain", sleep_run, NULL, count_destroy, NULL, 0, &chain, 1, 0);
      nl_scheduler_push (e, "own", sleep_run, NULL, count_destroy, &chain, 1, &own, 1, 0);
    }
  for (int i = 0; i < 3; i++)
    nl_scheduler_push_async (e, "async", shut_async, NULL, count_destroy, NULL, 0, &chain, 1, 0);
  nl_scheduler_push (e, "failing", fail_run, NULL, count_destroy, &chain, 1, NULL, 0, 0);
  nl_scheduler_free (e);
  g_assert_cmpint (g_atomic_int_get (&shut_ran), ==, 19);
  g_assert_cmpint (g_atomic_int_get (&n_destroyed), ==, 20);
  join_spawned ();
}

/* ---- benchmark (-m perf) ------------------------------------------------- */

static void
bench_one (int n_workers, const char *what, int n_vars, int n)
{
  NlScheduler *e = nl_scheduler_new (n_workers);
  NlVar *vars[64];
  for (int i = 0; i < n_vars; i++)
    vars[i] = nl_scheduler_new_var (e, "v");
  gint64 t0 = g_get_monotonic_time ();
  for (int i = 0; i < n; i++)
    if (n_vars > 0)
      nl_scheduler_push (e, "noop", noop_run, NULL, NULL, NULL, 0, &vars[i % n_vars], 1, 0);
    else
      nl_scheduler_push (e, "noop", noop_run, NULL, NULL, NULL, 0, NULL, 0, 0);
  g_assert_true (nl_scheduler_wait_for_all (e, NULL));
  double s = (g_get_monotonic_time () - t0) / 1e6;
  g_test_message ("%d workers, %-28s %7.0f ns/op  %9.0f ops/s", n_workers, what, s / n * 1e9, n / s);
  nl_scheduler_free (e);
}

static void
test_bench (void)
{
  int n = 500000;
  for (int w = 0; w <= 2; w += 2)
    {
      bench_one (w, "no vars:", 0, n);
      bench_one (w, "writes one var (chain):", 1, n);
      bench_one (w, "writes 1 of 64 vars:", 64, n);
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  static const struct {
    const char *name;
    GTestDataFunc fn;
    gboolean needs_workers;
  } tests[] = {
    { "hazards", test_hazards, FALSE },
    { "stress", test_stress, FALSE },
    { "parallel", test_parallel, TRUE },
    { "priority-release", test_priority_release, FALSE },
    { "async", test_async, FALSE },
    { "errors", test_errors, FALSE },
    { "error-report-order", test_error_report_order, FALSE },
    { "delete-var", test_delete_var, FALSE },
    { "wait-readers", test_wait_readers, FALSE },
    { "duplicates", test_duplicates, FALSE },
    { "wait-in-op", test_wait_in_op, FALSE },
    { "shutdown", test_shutdown, FALSE },
  };
  for (guint i = 0; i < G_N_ELEMENTS (tests); i++)
    for (int workers = 0; workers <= N_WORKERS; workers += N_WORKERS)
      {
        if (workers == 0 && tests[i].needs_workers)
          continue;
        char *path = g_strdup_printf ("/engine/%s/%s", workers ? "workers" : "inline", tests[i].name);
        g_test_add_data_func (path, GINT_TO_POINTER (workers), tests[i].fn);
        g_free (path);
      }
  g_test_add_func ("/engine/workers/priority-one-worker", test_priority_one_worker);
  if (g_test_perf ())
    g_test_add_func ("/engine/bench", test_bench);
  return g_test_run ();
}
