/* nl-grad-reducer.c — fused, overlapped gradient all-reduce (nl-grad-reducer.h). */
#include "engine/graph/nl-grad-reducer.h"

#include <stdlib.h>

int
nl_grad_buckets_plan (const int64_t *numel, int n, size_t limit_bytes, int *bucket_of)
{
  int buckets = 0;
  size_t filled = 0;
  for (int i = 0; i < n; i++)
    {
      size_t bytes = (size_t) numel[i] * sizeof (float);
      if (numel[i] <= 0)
        {
          bucket_of[i] = -1;
          continue;
        }
      /* a new bucket when this one would overflow it (never for the
       * first gradient of a bucket, however large) */
      if (buckets == 0 || (filled > 0 && filled + bytes > limit_bytes))
        {
          buckets++;
          filled = 0;
        }
      bucket_of[i] = buckets - 1;
      filled += bytes;
    }
  return buckets;
}

gboolean
nl_grad_bucket_reduce (NlBackend *b, float *fusion, float *const *grads, const int64_t *numel, int n,
                       NlGradReduceFn fn, gpointer user, GError **error)
{
  int64_t at = 0;
  if (n == 1)
    return fn (user, grads[0], numel[0], error);
  for (int i = 0; i < n; i++)
    {
      if (!nl_backend_copy (b, fusion + at, grads[i], numel[i] * sizeof (float), NL_COPY_DEVICE_TO_DEVICE, error))
        return FALSE;
      at += numel[i];
    }
  if (!fn (user, fusion, at, error))
    return FALSE;
  at = 0;
  for (int i = 0; i < n; i++)
    {
      if (!nl_backend_copy (b, grads[i], fusion + at, numel[i] * sizeof (float), NL_COPY_DEVICE_TO_DEVICE, error))
        return FALSE;
      at += numel[i];
    }
  return TRUE;
}

typedef struct {
  NlGradReducer *r;
  int index;
  float **grads;     /* into the program's tensors */
  int64_t *numel;
  int n;
  NlStorage *fusion; /* NULL for a bucket of one */
  NlVar **vars;
  int n_vars;
  gboolean queued;   /* this push's op ran and handed its bucket over */
  char name[48];
} Bucket;

struct NlGradReducer {
  int *bucket_of;   /* per gradient */
  NlBackend *backend;
  NlComm *comm;
  Bucket *buckets;
  int n_buckets;
  /* the communication thread's queue: tokens by bucket, taken in order */
  GThread *thread;
  GMutex lock;
  GCond cond;
  gpointer *token;
  NlScheduler *sched; /* the one the bucket ops were pushed on */
  int next;
  int out_of_step;  /* 1 + the first bucket whose op was skipped (0: none) */
  gboolean stop;
  gint64 last_done;
  double busy;
  NlTrace *trace;   /* nl_grad_reducer_set_trace's, under lock */
};

static gboolean
backend_reduce (gpointer user, float *x, int64_t n, GError **error)
{
  NlGradReducer *r = user;
  return nl_backend_allreduce_sum (r->backend, r->comm, x, n, error);
}

/* The token of a bucket whose op was skipped: its gradients failed
 * upstream, so it has no op to complete and no data to send. */
static char skipped_mark;
#define SKIPPED ((gpointer) &skipped_mark)

static gpointer
communicate (gpointer data)
{
  NlGradReducer *r = data;
  g_mutex_lock (&r->lock);
  for (;;)
    {
      while (!r->stop && !r->token[r->next])
        g_cond_wait (&r->cond, &r->lock);
      if (r->stop)
        break;
      Bucket *bk = &r->buckets[r->next];
      gpointer token = g_steal_pointer (&r->token[r->next]);
      NlScheduler *s = r->sched;
      r->next = (r->next + 1) % r->n_buckets;
      if (token == SKIPPED)
        {
          /* this process misses that collective, so every later one would
           * pair with another bucket of the other processes: none is made
           * again, every later bucket fails (the step's failure is then
           * reported, and its ops are not waited for forever) */
          if (!r->out_of_step)
            r->out_of_step = bk->index + 1;
          continue;
        }
      g_mutex_unlock (&r->lock);

      GError *error = NULL;
      gint64 t0 = g_get_monotonic_time ();
      if (r->out_of_step)
        g_set_error (&error, NL_COMM_ERROR, NL_COMM_ERROR_FAILED,
                     "gradient bucket %d was not all-reduced: bucket %d was skipped (its gradients failed), so "
                     "this process is out of step with the others", bk->index + 1, r->out_of_step);
      else
        nl_grad_bucket_reduce (r->backend, bk->fusion ? (float *) bk->fusion->data : NULL, bk->grads, bk->numel,
                               bk->n, backend_reduce, r, &error);
      gint64 t1 = g_get_monotonic_time ();
      g_mutex_lock (&r->lock);
      r->busy += (t1 - t0) / 1e6;
      r->last_done = t1;
      if (r->trace)
        nl_trace_add (r->trace, NL_TRACE_CAT_ALLREDUCE, bk->name, "bucket", bk->index + 1, t0, t1);
      g_mutex_unlock (&r->lock);
      nl_scheduler_complete (s, token, error);
      g_mutex_lock (&r->lock);
    }
  g_mutex_unlock (&r->lock);
  return NULL;
}

static void
bucket_ready (NlScheduler *s, gpointer data, gpointer token)
{
  Bucket *bk = data;
  NlGradReducer *r = bk->r;
  g_mutex_lock (&r->lock);
  r->token[bk->index] = token;
  r->sched = s;
  bk->queued = TRUE;
  g_cond_signal (&r->cond);
  g_mutex_unlock (&r->lock);
}

/* The end of a bucket's op, run or skipped. A skipped one (a failed op
 * wrote one of its gradients) never reached bucket_ready: the thread must
 * still hear of it, or it waits for that bucket forever, the later buckets'
 * ops never end and nothing waiting on the step returns. */
static void
bucket_done (gpointer data)
{
  Bucket *bk = data;
  NlGradReducer *r = bk->r;
  g_mutex_lock (&r->lock);
  if (!bk->queued)
    {
      r->token[bk->index] = SKIPPED;
      g_cond_signal (&r->cond);
    }
  bk->queued = FALSE;
  g_mutex_unlock (&r->lock);
}

NlGradReducer *
nl_grad_reducer_new (NlBackend *b, NlComm *comm, NlTensor *const *grads, NlVar *const *vars, int n,
                     size_t bucket_bytes, GError **error)
{
  NlGradReducer *r = g_new0 (NlGradReducer, 1);
  g_autofree int64_t *numel = g_new0 (int64_t, MAX (n, 1));
  int *bucket_of = r->bucket_of = g_new0 (int, MAX (n, 1));
  const char *env = g_getenv ("NETLOOM_BUCKET_MB");

  if (env && g_ascii_strtod (env, NULL) > 0)
    bucket_bytes = (size_t) (g_ascii_strtod (env, NULL) * (1 << 20));
  r->backend = b;
  r->comm = comm;
  g_mutex_init (&r->lock);
  g_cond_init (&r->cond);
  for (int i = 0; i < n; i++)
    numel[i] = nl_tensor_numel (grads[i]);
  r->n_buckets = nl_grad_buckets_plan (numel, n, bucket_bytes, bucket_of);
  r->buckets = g_new0 (Bucket, MAX (r->n_buckets, 1));
  r->token = g_new0 (gpointer, MAX (r->n_buckets, 1));
  for (int k = 0; k < r->n_buckets; k++)
    {
      Bucket *bk = &r->buckets[k];
      int64_t total = 0;
      bk->r = r;
      bk->index = k;
      bk->grads = g_new0 (float *, n);
      bk->numel = g_new0 (int64_t, n);
      bk->vars = g_new0 (NlVar *, n);
      for (int i = 0; i < n; i++)
        if (bucket_of[i] == k)
          {
            gboolean seen = FALSE;
            bk->grads[bk->n] = nl_tensor_f32 (grads[i]);
            bk->numel[bk->n++] = numel[i];
            total += numel[i];
            for (int j = 0; j < bk->n_vars; j++)
              seen = seen || bk->vars[j] == vars[i];
            if (!seen)
              bk->vars[bk->n_vars++] = vars[i];
          }
      g_snprintf (bk->name, sizeof bk->name, "all-reduce bucket %d", k + 1);
      if (bk->n > 1)
        {
          bk->fusion = nl_storage_new_device ((size_t) total * sizeof (float), b->device,
                                              "the gradient all-reduce buffers", error);
          if (!bk->fusion)
            {
              nl_grad_reducer_free (r);
              return NULL;
            }
        }
    }
  if (r->n_buckets > 0)
    r->thread = g_thread_new ("nl-allreduce", communicate, r);
  return r;
}

void
nl_grad_reducer_free (NlGradReducer *r)
{
  if (!r)
    return;
  if (r->thread)
    {
      g_mutex_lock (&r->lock);
      r->stop = TRUE;
      g_cond_signal (&r->cond);
      g_mutex_unlock (&r->lock);
      g_thread_join (r->thread);
    }
  for (int k = 0; k < r->n_buckets; k++)
    {
      g_free (r->buckets[k].grads);
      g_free (r->buckets[k].numel);
      g_free (r->buckets[k].vars);
      g_clear_pointer (&r->buckets[k].fusion, nl_storage_unref);
    }
  g_free (r->buckets);
  g_free (r->bucket_of);
  g_free (r->token);
  g_mutex_clear (&r->lock);
  g_cond_clear (&r->cond);
  g_free (r);
}

int
nl_grad_reducer_n_buckets (const NlGradReducer *r)
{
  return r ? r->n_buckets : 0;
}

int
nl_grad_reducer_bucket_of (const NlGradReducer *r, int i)
{
  return r->bucket_of[i];
}

void
nl_grad_reducer_push (NlGradReducer *r, NlScheduler *s, int k)
{
  Bucket *bk = &r->buckets[k];
  /* ahead of other ready ops: the op only queues the bucket */
  nl_scheduler_push_async (s, bk->name, bucket_ready, bk, bucket_done, NULL, 0, bk->vars, bk->n_vars, 1);
}

gint64
nl_grad_reducer_last_done (const NlGradReducer *r)
{
  return r ? r->last_done : 0;
}

double
nl_grad_reducer_busy_seconds (const NlGradReducer *r)
{
  return r ? r->busy : 0;
}

void
nl_grad_reducer_set_trace (NlGradReducer *r, NlTrace *trace)
{
  if (!r)
    return;
  g_mutex_lock (&r->lock);
  r->trace = trace;
  g_mutex_unlock (&r->lock);
}
