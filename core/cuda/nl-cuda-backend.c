/* nl-cuda-backend.c — a CUDA device as an NlBackend. Every member goes
 * through nl-cuda.h's calls, which load the CUDA module on first use, so
 * this file links everywhere (built without CUDA, nl_device_check refuses
 * the device first). Memory comes from the device's caching allocator,
 * work is queued on its one stream (in_order), and page-locked host memory
 * makes the mirrors' copies asynchronous. */
#include "core/cuda/nl-cuda-backend.h"
#include "core/cuda/nl-cuda.h"
#include "core/nl-comm.h"

/* One device's backend: the NlBackend the engine sees, then the host
 * buffer the collectives through host memory stage in, allocated once at
 * the largest bucket's size (page-locked allocation costs about as much as
 * the copy it speeds up: once per bucket per step, it ate the gain). */
typedef struct {
  NlBackend base;
  GMutex stage_lock; /* buckets may come from the scheduler's threads */
  void *stage;       /* page-locked where it could be had, else g_malloc'd */
  size_t stage_bytes;
  gboolean stage_pinned;
} CudaBackend;

static NlCudaCtx *
ctx_of (NlBackend *b)
{
  return b->context;
}

static void *
cuda_alloc (NlBackend *b, size_t nbytes, const char *what, GError **error)
{
  return nl_cuda_alloc (ctx_of (b), nbytes, what, error);
}

static void
cuda_free (NlBackend *b, void *ptr)
{
  nl_cuda_release (ctx_of (b), ptr);
}

static void *
cuda_host_alloc (NlBackend *b, size_t nbytes)
{
  return nl_cuda_host_alloc (nbytes);
}

static void
cuda_host_free (NlBackend *b, void *ptr)
{
  nl_cuda_host_free (ptr);
}

static void
cuda_trim (NlBackend *b)
{
  nl_cuda_ctx_trim (ctx_of (b));
}

static gboolean
cuda_copy (NlBackend *b, void *dst, const void *src, size_t nbytes, NlCopyKind kind, GError **error)
{
  return nl_cuda_copy (ctx_of (b), dst, src, nbytes, kind, error);
}

static gboolean
cuda_memset0 (NlBackend *b, void *dst, size_t nbytes, GError **error)
{
  return nl_cuda_memset0 (ctx_of (b), dst, nbytes, error);
}

static gboolean
cuda_synchronize (NlBackend *b, GError **error)
{
  return nl_cuda_sync (ctx_of (b), error);
}

static gboolean
cuda_fill (NlBackend *b, float *x, int64_t n, float value, GError **error)
{
  return nl_cuda_fill (ctx_of (b), x, n, value, error);
}

static gboolean
cuda_sum_n (NlBackend *b, float *dst, const float *const *src, int n_src, int64_t n, GError **error)
{
  return nl_cuda_sum_n (ctx_of (b), dst, src, n_src, n, error);
}

/* Into one double on the device, brought down once. */
static gboolean
cuda_sum_squares (NlBackend *b, const float *const *x, const int64_t *n, int n_buffers, double *out, GError **error)
{
  NlCudaCtx *c = ctx_of (b);
  double *acc = nl_cuda_alloc (c, sizeof (double), "the sum of squares", error);
  gboolean ok;

  if (!acc)
    return FALSE;
  ok = nl_cuda_memset0 (c, acc, sizeof (double), error);
  for (int i = 0; ok && i < n_buffers; i++)
    if (x[i])
      ok = nl_cuda_sumsq (c, x[i], n[i], acc, error);
  ok = ok && nl_cuda_copy (c, out, acc, sizeof (double), NL_COPY_DEVICE_TO_HOST, error);
  nl_cuda_release (c, acc);
  return ok;
}

static gboolean
cuda_optim_update (NlBackend *b, const NlOptimConfig *cfg, float lr, int64_t t, float grad_scale, float *w,
                   const float *g, float *const *state, int64_t n, GError **error)
{
  return nl_cuda_optim_update (ctx_of (b), cfg, lr, t, grad_scale, NULL, w, g, state, n, error);
}

static const void *
cuda_op_kernels (NlBackend *b, int op_id, const char *op_name)
{
  return nl_cuda_op_kernels (op_id, op_name);
}

static void
stage_free (CudaBackend *cb)
{
  if (cb->stage_pinned)
    nl_cuda_host_free (cb->stage);
  else
    g_free (cb->stage);
  cb->stage = NULL;
  cb->stage_bytes = 0;
}

/* The staging buffer, at least nbytes; under stage_lock. */
static void *
stage_get (CudaBackend *cb, size_t nbytes, GError **error)
{
  if (cb->stage_bytes >= nbytes)
    return cb->stage;
  stage_free (cb);
  cb->stage = nl_cuda_host_alloc (nbytes);
  cb->stage_pinned = cb->stage != NULL;
  if (!cb->stage)
    cb->stage = g_try_malloc (nbytes);
  if (!cb->stage)
    {
      g_set_error (error, NL_COMM_ERROR, NL_COMM_ERROR_FAILED, "out of host memory staging %zu bytes for MPI",
                   nbytes);
      return NULL;
    }
  cb->stage_bytes = nbytes;
  return cb->stage;
}

/* Collectives through host memory and MPI: what every GPU build has.
 * (NCCL, device to device, is the faster transport where it is set up.)
 * The copy down waits for the stream, so the gradients are complete. */
static gboolean
staged (NlBackend *b, NlComm *comm, void *x, size_t nbytes, int root, gboolean reduce, GError **error)
{
  CudaBackend *cb = (CudaBackend *) b;
  NlCudaCtx *c = ctx_of (b);
  G_GNUC_UNUSED g_autoptr (GMutexLocker) locker = g_mutex_locker_new (&cb->stage_lock);
  void *host = stage_get (cb, nbytes, error);
  /* the last sync: the copy back has read the buffer before the next bucket writes it */
  return host
         && (root == comm->rank || reduce ? nl_cuda_copy (c, host, x, nbytes, NL_COPY_DEVICE_TO_HOST, error) : TRUE)
         && (reduce ? nl_comm_allreduce_f32 (comm, host, (int64_t) (nbytes / sizeof (float)), error)
                    : nl_comm_broadcast (comm, host, nbytes, root, error))
         && nl_cuda_copy (c, x, host, nbytes, NL_COPY_HOST_TO_DEVICE, error) && nl_cuda_sync (c, error);
}

/* The job's NCCL communicator, set up at the first collective (every rank
 * is there: collectives come in the same order everywhere): rank 0 makes
 * the id and sends it through MPI. NULL where NCCL cannot be had on some
 * rank ($NETLOOM_NCCL=0, a module without NCCL): then every rank goes
 * through host memory. */
static void *
nccl_of (NlBackend *b, NlComm *comm, GError **error)
{
  char id[NL_NCCL_ID_BYTES] = { 0 };
  double failed = g_strcmp0 (g_getenv ("NETLOOM_NCCL"), "0") == 0;
  void *nccl = NULL;

  if (comm->device_transport_state != 0)
    return comm->device_transport;
  if (!failed && comm->rank == 0 && !nl_nccl_unique_id (id, NULL))
    failed = 1;
  if (!nl_comm_allreduce_max_f64 (comm, &failed, 1, error)
      || (!failed && !nl_comm_broadcast (comm, id, sizeof id, 0, error)))
    return NULL;
  if (!failed)
    {
      g_autoptr (GError) why = NULL;
      nccl = nl_nccl_comm_new (ctx_of (b), comm->size, comm->rank, id, &why);
      failed = nccl == NULL;
      if (why)
        g_message ("rank %d: NCCL: %s; all-reducing through host memory and MPI", comm->rank, why->message);
      if (!nl_comm_allreduce_max_f64 (comm, &failed, 1, error))
        return NULL;
    }
  if (failed)
    {
      nl_nccl_comm_free (nccl);
      comm->device_transport_state = -1;
      return NULL;
    }
  comm->device_transport = nccl;
  comm->device_transport_free = nl_nccl_comm_free;
  comm->device_transport_state = 1;
  return nccl;
}

/* An all-reduce (reduce) or a broadcast from root: NCCL's where the job
 * has it, else through host memory and MPI. */
static gboolean
collective (NlBackend *b, NlComm *comm, void *x, size_t nbytes, int root, gboolean reduce, GError **error)
{
  GError *local = NULL;
  void *nccl = nccl_of (b, comm, &local);
  if (local)
    {
      g_propagate_error (error, local);
      return FALSE;
    }
  if (!nccl)
    return staged (b, comm, x, nbytes, root, reduce, error);
  return reduce ? nl_nccl_allreduce_sum (ctx_of (b), nccl, x, (int64_t) (nbytes / sizeof (float)), error)
                : nl_nccl_broadcast (ctx_of (b), nccl, x, nbytes, root, error);
}

static gboolean
cuda_allreduce_sum (NlBackend *b, NlComm *comm, float *x, int64_t n, GError **error)
{
  return collective (b, comm, x, (size_t) n * sizeof (float), 0, TRUE, error);
}

static gboolean
cuda_broadcast (NlBackend *b, NlComm *comm, void *x, size_t nbytes, int root, GError **error)
{
  return collective (b, comm, x, nbytes, root, FALSE, error);
}

static void *
cuda_mark (NlBackend *b, GError **error)
{
  return nl_cuda_event_record (ctx_of (b), error);
}

static gboolean
cuda_mark_elapsed (NlBackend *b, void *from, void *to, float *ms, GError **error)
{
  return nl_cuda_event_elapsed (ctx_of (b), from, to, ms, error);
}

static void
cuda_mark_free (NlBackend *b, void *mark)
{
  nl_cuda_event_free (ctx_of (b), mark);
}

static gboolean
cuda_graph_begin (NlBackend *b, GError **error)
{
  return nl_cuda_graph_begin (ctx_of (b), error);
}

static void *
cuda_graph_end (NlBackend *b, GError **error)
{
  return nl_cuda_graph_end (ctx_of (b), error);
}

static gboolean
cuda_graph_replay (NlBackend *b, void *graph, GError **error)
{
  return nl_cuda_graph_launch (ctx_of (b), graph, error);
}

static void
cuda_graph_free (NlBackend *b, void *graph)
{
  nl_cuda_graph_free (ctx_of (b), graph);
}

static const NlBackendInterface cuda_iface = {
  .name = "cuda",
  .host_visible = FALSE,
  .in_order = TRUE,
  .alloc = cuda_alloc,
  .free = cuda_free,
  .host_alloc = cuda_host_alloc,
  .host_free = cuda_host_free,
  .trim = cuda_trim,
  .copy = cuda_copy,
  .memset0 = cuda_memset0,
  .synchronize = cuda_synchronize,
  .fill = cuda_fill,
  .sum_n = cuda_sum_n,
  .sum_squares = cuda_sum_squares,
  .optim_update = cuda_optim_update,
  .op_kernels = cuda_op_kernels,
  .allreduce_sum = cuda_allreduce_sum,
  .broadcast = cuda_broadcast,
  .mark = cuda_mark,
  .mark_elapsed = cuda_mark_elapsed,
  .mark_free = cuda_mark_free,
  .graph_begin = cuda_graph_begin,
  .graph_end = cuda_graph_end,
  .graph_replay = cuda_graph_replay,
  .graph_free = cuda_graph_free,
};

static GMutex backends_lock;
static GHashTable *backends; /* index -> CudaBackend, kept until nl_cuda_backend_shutdown () */

static void
cuda_backend_free (gpointer data)
{
  CudaBackend *cb = data;
  stage_free (cb);
  g_mutex_clear (&cb->stage_lock);
  g_free (cb);
}

void
nl_cuda_backend_shutdown (void)
{
  g_mutex_lock (&backends_lock);
  g_clear_pointer (&backends, g_hash_table_destroy);
  g_mutex_unlock (&backends_lock);
  nl_cuda_shutdown ();
}

NlBackend *
nl_cuda_backend_get (int index, GError **error)
{
  /* held to the return, never read: clang calls it unused */
  G_GNUC_UNUSED g_autoptr (GMutexLocker) locker = g_mutex_locker_new (&backends_lock);
  NlBackend *b;
  NlCudaCtx *c;

  if (!backends)
    backends = g_hash_table_new_full (NULL, NULL, NULL, cuda_backend_free);
  b = g_hash_table_lookup (backends, GINT_TO_POINTER (index));
  if (b)
    return b;  /* every device storage asks: the runtime is asked once */
  if (!nl_device_check ((NlDevice) { NL_DEVICE_CUDA, index }, error))
    return NULL;
  c = nl_cuda_ctx (index, error);
  if (!c)
    return NULL;
  CudaBackend *cb = g_new0 (CudaBackend, 1);
  g_mutex_init (&cb->stage_lock);
  b = &cb->base;
  b->iface = &cuda_iface;
  b->device = (NlDevice) { NL_DEVICE_CUDA, index };
  b->context = c;
  g_hash_table_insert (backends, GINT_TO_POINTER (index), b);
  return b;
}

/* ---- the registry's row (nl-backend-reg.h) ---- */

static gboolean
cuda_device_info (int index, NlDeviceInfo *d, GError **error)
{
  NlCudaDeviceInfo ci = { 0 };
  if (!nl_cuda_device_info (index, &ci, error))
    return FALSE;
  d->name = g_strndup (ci.name, sizeof ci.name);
  d->memory_bytes = ci.total_bytes;
  d->free_bytes = ci.free_bytes;
  d->cores = ci.multiprocessors;
  d->cc_major = ci.cc_major;
  d->cc_minor = ci.cc_minor;
  return TRUE;
}

static char *
cuda_device_summary (const NlDeviceInfo *d)
{
  return g_strdup_printf ("compute %d.%d, %d SMs", d->cc_major, d->cc_minor, d->cores);
}

static GVariant *
cuda_device_facts (const NlDeviceInfo *d)
{
  GVariantBuilder b;
  g_autofree char *cc = g_strdup_printf ("%d.%d", d->cc_major, d->cc_minor);
  g_variant_builder_init (&b, G_VARIANT_TYPE_VARDICT);
  g_variant_builder_add (&b, "{sv}", "compute_capability", g_variant_new_string (cc));
  g_variant_builder_add (&b, "{sv}", "multiprocessors", g_variant_new_int64 (d->cores));
  return g_variant_builder_end (&b);
}

static gboolean
cuda_supports_op (int op_id, const char *op_name)
{
  return nl_cuda_op_kernels (op_id, op_name) != NULL;
}

const NlBackendReg nl_cuda_backend_reg = {
  .name = "cuda",
  .label = "CUDA",
  .host = FALSE,
  .indexed = TRUE,
  .device_count = nl_cuda_device_count,
  .device_info = cuda_device_info,
  .device_summary = cuda_device_summary,
  .device_facts = cuda_device_facts,
  .get = nl_cuda_backend_get,
  .supports_op = cuda_supports_op,
  .shutdown = nl_cuda_backend_shutdown,
};
