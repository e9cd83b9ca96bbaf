/* nl-cuda-runtime.c — the CUDA backend's host side: devices, contexts
 * (stream, cuBLAS, cuDNN, memory allocator, workspace), copies, pinned memory and
 * error reporting. Plain C over the runtime, cuBLAS and cuDNN C APIs; the
 * kernels are in nl-cuda-math.cu and ops/cuda/<op>.cu. All of it is the
 * CUDA module, called through nl-cuda-loader.c (nl-cuda-module.c).
 *
 * A failed runtime call also becomes the thread's "last error", which
 * cudaGetLastError() would later hand to nl_cuda_check_launch() as if a
 * kernel launch had failed; every failure handled here is therefore
 * cleared with cudaGetLastError() once reported. */
#include "core/cuda/nl-cuda.h"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>
#include <string.h>

G_DEFINE_QUARK (nl-cuda-error-quark, nl_cuda_error)

struct NlCudaCtx {
  int index;
  char name[32]; /* "cuda:N", the allocator's device name */
  cudaStream_t stream;
  cublasHandle_t cublas;
  cudnnHandle_t cudnn;
  NlDeviceAllocatorBackend backend; /* kept here: the allocator may hold a pointer to it */
  NlDeviceAllocator *allocator;
  GMutex ws_lock;
  void *ws;
  size_t ws_size;
};

/* ---- errors ---- */

static NlCudaError
cuda_code (cudaError_t e)
{
  return e == cudaErrorMemoryAllocation ? NL_CUDA_ERROR_NOMEM : NL_CUDA_ERROR_FAILED;
}

gboolean
nl_cuda_check (int status, const char *what, GError **error)
{
  cudaError_t e = (cudaError_t) status;

  if (e == cudaSuccess)
    return TRUE;
  cudaGetLastError ();
  g_set_error (error, NL_CUDA_ERROR, cuda_code (e), "%s: CUDA error %s (%s)", what, cudaGetErrorName (e),
               cudaGetErrorString (e));
  return FALSE;
}

gboolean
nl_cublas_check (int status, const char *what, GError **error)
{
  cublasStatus_t s = (cublasStatus_t) status;

  if (s == CUBLAS_STATUS_SUCCESS)
    return TRUE;
  g_set_error (error, NL_CUDA_ERROR, s == CUBLAS_STATUS_ALLOC_FAILED ? NL_CUDA_ERROR_NOMEM : NL_CUDA_ERROR_FAILED,
               "%s: cuBLAS error %s (%s)", what, cublasGetStatusName (s), cublasGetStatusString (s));
  return FALSE;
}

gboolean
nl_cudnn_check (int status, const char *what, GError **error)
{
  cudnnStatus_t s = (cudnnStatus_t) status;
  char detail[512] = "";

  if (s == CUDNN_STATUS_SUCCESS)
    return TRUE;
  /* cuDNN 9 keeps a sentence on what was wrong (which dimension, which
   * layout); it is worth far more than the status name alone */
  cudnnGetLastErrorString (detail, sizeof detail);
  g_set_error (error, NL_CUDA_ERROR,
               s == CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED ? NL_CUDA_ERROR_NOMEM : NL_CUDA_ERROR_FAILED,
               "%s: cuDNN error %s%s%s%s", what, cudnnGetErrorString (s), detail[0] ? " (" : "", detail,
               detail[0] ? ")" : "");
  return FALSE;
}

gboolean
nl_cuda_check_launch (const char *what, GError **error)
{
  cudaError_t e = cudaGetLastError ();

  if (e == cudaSuccess)
    return TRUE;
  g_set_error (error, NL_CUDA_ERROR, cuda_code (e), "%s: kernel launch failed: %s (%s)", what,
               cudaGetErrorName (e), cudaGetErrorString (e));
  return FALSE;
}

/* ---- devices ---- */

static GMutex count_lock;
static gint count_known; /* atomic: set once count_cached and count_reason are */
static int count_cached;
static char *count_reason; /* why count_cached is 0 */

/* A reason a person can act on, from cudaGetDeviceCount's failure. */
static char *
explain_no_device (cudaError_t e)
{
  const char *visible = g_getenv ("CUDA_VISIBLE_DEVICES");
  int driver = 0;

  if (e == cudaSuccess)
    return visible ? g_strdup_printf ("no CUDA device (the driver sees none; CUDA_VISIBLE_DEVICES=\"%s\")", visible)
                   : g_strdup ("no CUDA device (the NVIDIA driver sees none)");
  if (e == cudaErrorInsufficientDriver)
    {
      /* 0 when no driver is installed at all; else the CUDA version the
       * installed one supports, which says what to upgrade */
      if (cudaDriverGetVersion (&driver) == cudaSuccess && driver > 0)
        return g_strdup_printf ("the NVIDIA driver is too old: it supports CUDA %d.%d, netloom was built with CUDA "
                                "%d.%d (%s: %s)", driver / 1000, driver % 1000 / 10, CUDART_VERSION / 1000,
                                CUDART_VERSION % 1000 / 10, cudaGetErrorName (e), cudaGetErrorString (e));
      return g_strdup_printf ("no NVIDIA driver or it is too old for CUDA %d (%s: %s)", CUDART_VERSION / 1000,
                              cudaGetErrorName (e), cudaGetErrorString (e));
    }
  if (e == cudaErrorNoDevice)
    return g_strdup_printf ("no CUDA device (%s: %s%s%s%s)", cudaGetErrorName (e), cudaGetErrorString (e),
                            visible ? "; CUDA_VISIBLE_DEVICES=\"" : "", visible ? visible : "", visible ? "\"" : "");
  return g_strdup_printf ("CUDA cannot be used (%s: %s)", cudaGetErrorName (e), cudaGetErrorString (e));
}

int
nl_cuda_device_count (char **reason)
{
  int n;

  /* lock-free once known: nl_cuda_ctx () asks on every call */
  if (!g_atomic_int_get (&count_known))
    {
      g_mutex_lock (&count_lock);
      if (!count_known)
        {
          /* asked once: without a driver every probe costs a dlopen
           * attempt, and devices do not come and go under a process */
          cudaError_t e = cudaGetDeviceCount (&count_cached);
          if (e != cudaSuccess || count_cached <= 0)
            {
              cudaGetLastError ();
              count_cached = 0;
              count_reason = explain_no_device (e);
            }
          g_atomic_int_set (&count_known, 1);
        }
      g_mutex_unlock (&count_lock);
    }
  n = count_cached;
  if (reason)
    *reason = n > 0 ? NULL : g_strdup (count_reason);
  return n;
}

/* FALSE (NL_CUDA_ERROR_UNAVAILABLE) unless device index exists. */
static gboolean
device_exists (int index, GError **error)
{
  int n = nl_cuda_device_count (NULL);

  if (n == 0)
    {
      g_autofree char *reason = NULL;
      nl_cuda_device_count (&reason);
      g_set_error (error, NL_CUDA_ERROR, NL_CUDA_ERROR_UNAVAILABLE, "cuda:%d: %s", index, reason);
      return FALSE;
    }
  if (index < 0 || index >= n)
    {
      g_autoptr (GString) ids = g_string_new ("cuda:0");
      if (n > 1)
        g_string_append_printf (ids, "%scuda:%d", n > 2 ? " ... " : ", ", n - 1);
      g_set_error (error, NL_CUDA_ERROR, NL_CUDA_ERROR_UNAVAILABLE, "cuda:%d: no such device (there %s %d: %s)",
                   index, n == 1 ? "is" : "are", n, ids->str);
      return FALSE;
    }
  return TRUE;
}

/* Runs with index's device current on this thread, then puts back the one
 * that was: the allocator and device_info may be called from any thread. */
typedef struct {
  int saved;
} DeviceScope;

static cudaError_t
scope_enter (DeviceScope *s, int index)
{
  s->saved = -1;
  if (cudaGetDevice (&s->saved) != cudaSuccess)
    {
      cudaGetLastError ();
      s->saved = -1;
    }
  return s->saved == index ? cudaSuccess : cudaSetDevice (index);
}

static void
scope_leave (DeviceScope *s, int index)
{
  if (s->saved >= 0 && s->saved != index)
    cudaSetDevice (s->saved);
}

gboolean
nl_cuda_device_info (int index, NlCudaDeviceInfo *info, GError **error)
{
  struct cudaDeviceProp prop;
  DeviceScope scope;
  size_t free_b = 0, total_b = 0;
  cudaError_t e;

  g_return_val_if_fail (info != NULL, FALSE);
  if (!device_exists (index, error))
    return FALSE;
  if (!nl_cuda_check (cudaGetDeviceProperties (&prop, index), "cudaGetDeviceProperties", error))
    return FALSE;
  /* cudaMemGetInfo answers for the current device */
  e = scope_enter (&scope, index);
  if (e == cudaSuccess)
    e = cudaMemGetInfo (&free_b, &total_b);
  scope_leave (&scope, index);
  if (!nl_cuda_check (e, "cudaMemGetInfo", error))
    return FALSE;

  memset (info, 0, sizeof *info);
  info->index = index;
  g_strlcpy (info->name, prop.name, sizeof info->name);
  info->total_bytes = total_b ? total_b : prop.totalGlobalMem;
  info->free_bytes = free_b;
  info->cc_major = prop.major;
  info->cc_minor = prop.minor;
  info->multiprocessors = prop.multiProcessorCount;
  return TRUE;
}

/* ---- contexts ---- */

static void *
allocator_backend_alloc (gpointer user, size_t nbytes)
{
  NlCudaCtx *c = user;
  DeviceScope scope;
  void *p = NULL;
  cudaError_t e;

  e = scope_enter (&scope, c->index);
  if (e == cudaSuccess)
    e = cudaMalloc (&p, nbytes);
  scope_leave (&scope, c->index);
  if (e != cudaSuccess)
    {
      cudaGetLastError ();
      /* the allocator reports "out of memory" (after trimming and retrying);
       * anything else, such as an earlier kernel's sticky fault, would be
       * hidden behind that message, so say it here */
      if (e != cudaErrorMemoryAllocation)
        g_warning ("%s: cudaMalloc of %zu bytes: %s (%s)", c->name, nbytes, cudaGetErrorName (e),
                   cudaGetErrorString (e));
      p = NULL;
    }
  return p;
}

static void
allocator_backend_free (gpointer user, void *ptr)
{
  NlCudaCtx *c = user;
  DeviceScope scope;
  cudaError_t e;

  e = scope_enter (&scope, c->index);
  if (e == cudaSuccess)
    e = cudaFree (ptr);
  scope_leave (&scope, c->index);
  if (e != cudaSuccess)
    {
      cudaGetLastError ();
      g_warning ("%s: cudaFree: %s (%s)", c->name, cudaGetErrorName (e), cudaGetErrorString (e));
    }
}

static GMutex ctx_lock;
static NlCudaCtx **ctxs; /* nl_cuda_device_count () entries, made on demand, kept */

static void
ctx_destroy (NlCudaCtx *c)
{
  /* the workspace is the context's own block, not a leak */
  if (c->ws)
    nl_device_allocator_release (c->allocator, c->ws);
  if (c->allocator)
    nl_device_allocator_free (c->allocator);
  if (c->cudnn)
    cudnnDestroy (c->cudnn);
  if (c->cublas)
    cublasDestroy (c->cublas);
  if (c->stream)
    cudaStreamDestroy (c->stream);
  cudaGetLastError ();
  g_mutex_clear (&c->ws_lock);
  g_free (c);
}

static NlCudaCtx *
ctx_create (int index, GError **error)
{
  NlCudaCtx *c = g_new0 (NlCudaCtx, 1);
  g_autoptr (GError) local = NULL;

  c->index = index;
  g_snprintf (c->name, sizeof c->name, "cuda:%d", index);
  g_mutex_init (&c->ws_lock);
  /* the handles belong to the device current when they are made */
  if (!nl_cuda_check (cudaSetDevice (index), "cudaSetDevice", &local)
      /* non-blocking: no implicit synchronisation with the legacy default
       * stream, which libraries or other code might use */
      || !nl_cuda_check (cudaStreamCreateWithFlags (&c->stream, cudaStreamNonBlocking), "cudaStreamCreate", &local)
      || !nl_cublas_check (cublasCreate (&c->cublas), "cublasCreate", &local)
      || !nl_cublas_check (cublasSetStream (c->cublas, c->stream), "cublasSetStream", &local)
      /* default math: no TF32 tensor-core rounding, so results match the CPU */
      || !nl_cublas_check (cublasSetMathMode (c->cublas, CUBLAS_DEFAULT_MATH), "cublasSetMathMode", &local)
      || !nl_cudnn_check (cudnnCreate (&c->cudnn), "cudnnCreate", &local)
      || !nl_cudnn_check (cudnnSetStream (c->cudnn, c->stream), "cudnnSetStream", &local))
    {
      g_set_error (error, local->domain, local->code, "%s: cannot set up the device: %s", c->name, local->message);
      ctx_destroy (c);
      return NULL;
    }
  c->backend.alloc = allocator_backend_alloc;
  c->backend.free = allocator_backend_free;
  c->backend.user = c;
  c->allocator = nl_device_allocator_new (&c->backend, c->name);
  return c;
}

NlCudaCtx *
nl_cuda_ctx (int index, GError **error)
{
  NlCudaCtx *c;

  if (!device_exists (index, error))
    return NULL;
  /* lock-free once made: every op and copy asks for it */
  NlCudaCtx **all = g_atomic_pointer_get (&ctxs);
  if (all && (c = g_atomic_pointer_get (&all[index])))
    return c;

  g_mutex_lock (&ctx_lock);
  if (!ctxs)
    g_atomic_pointer_set (&ctxs, g_new0 (NlCudaCtx *, nl_cuda_device_count (NULL)));
  c = ctxs[index];
  if (!c)
    {
      /* a failure is not kept: the next call tries again */
      c = ctx_create (index, error);
      if (c)
        g_atomic_pointer_set (&ctxs[index], c);
    }
  g_mutex_unlock (&ctx_lock);
  return c;
}

void
nl_cuda_shutdown (void)
{
  g_mutex_lock (&ctx_lock);
  if (ctxs)
    {
      int n = nl_cuda_device_count (NULL);
      for (int i = 0; i < n; i++)
        if (ctxs[i])
          {
            /* the handles belong to their device */
            cudaSetDevice (i);
            cudaStreamSynchronize (ctxs[i]->stream);
            ctx_destroy (ctxs[i]);
          }
      g_free (ctxs);
      g_atomic_pointer_set (&ctxs, NULL);
    }
  g_mutex_unlock (&ctx_lock);
}

int nl_cuda_ctx_index (NlCudaCtx *c) { return c ? c->index : -1; }
void *nl_cuda_ctx_stream (NlCudaCtx *c) { return c ? (void *) c->stream : NULL; }
void *nl_cuda_ctx_cublas (NlCudaCtx *c) { return c ? (void *) c->cublas : NULL; }
void *nl_cuda_ctx_cudnn (NlCudaCtx *c) { return c ? (void *) c->cudnn : NULL; }
NlDeviceAllocator *nl_cuda_ctx_allocator (NlCudaCtx *c) { return c ? c->allocator : NULL; }

void
nl_cuda_ctx_trim (NlCudaCtx *c)
{
  if (c)
    nl_device_allocator_trim (c->allocator);
}

gboolean
nl_cuda_ctx_enter (NlCudaCtx *c, GError **error)
{
  g_return_val_if_fail (c != NULL, FALSE);
  return nl_cuda_check (cudaSetDevice (c->index), "cudaSetDevice", error);
}

void *
nl_cuda_ctx_workspace (NlCudaCtx *c, size_t nbytes, GError **error)
{
  void *p;

  g_return_val_if_fail (c != NULL, NULL);
  g_mutex_lock (&c->ws_lock);
  if (c->ws == NULL || nbytes > c->ws_size)
    {
      /* Releasing the old buffer at once is safe although kernels queued
       * on the stream may still use it: the allocator is stream-ordered and
       * this context has one stream, so whatever takes the block next runs
       * after them. */
      nl_device_allocator_release (c->allocator, c->ws);
      c->ws = NULL;
      c->ws_size = 0;
      c->ws = nl_device_allocator_alloc (c->allocator, nbytes, "the CUDA workspace", error);
      if (c->ws)
        c->ws_size = nl_device_allocator_round (nbytes);
    }
  p = c->ws;
  g_mutex_unlock (&c->ws_lock);
  return p;
}

void *
nl_cuda_alloc (NlCudaCtx *c, size_t nbytes, const char *what, GError **error)
{
  g_return_val_if_fail (c != NULL, NULL);
  return nl_device_allocator_alloc (c->allocator, nbytes, what, error);
}

void
nl_cuda_release (NlCudaCtx *c, void *ptr)
{
  if (c && ptr)
    nl_device_allocator_release (c->allocator, ptr);
}

/* ---- copies ---- */

/* H2D from pinned memory (nl_cuda_host_alloc) returns before the copy has
 * run: the source must stay unchanged until the stream gets there. H2D from
 * pageable memory is staged by the driver before this returns. D2H always
 * waits for the stream, so the host can read dst when this returns (it is
 * how results come back; the wait is what makes that safe, pinned or not). */
gboolean
nl_cuda_copy (NlCudaCtx *c, void *dst, const void *src, size_t nbytes, NlCopyKind kind, GError **error)
{
  static const enum cudaMemcpyKind kinds[] = {
    [NL_COPY_HOST_TO_DEVICE] = cudaMemcpyHostToDevice,
    [NL_COPY_DEVICE_TO_HOST] = cudaMemcpyDeviceToHost,
    [NL_COPY_DEVICE_TO_DEVICE] = cudaMemcpyDeviceToDevice,
    [NL_COPY_DEVICE_TO_HOST_ASYNC] = cudaMemcpyDeviceToHost,
  };
  static const char *const names[] = {
    [NL_COPY_HOST_TO_DEVICE] = "copy to the device",
    [NL_COPY_DEVICE_TO_HOST] = "copy from the device",
    [NL_COPY_DEVICE_TO_DEVICE] = "copy on the device",
    [NL_COPY_DEVICE_TO_HOST_ASYNC] = "copy from the device",
  };

  g_return_val_if_fail (c != NULL, FALSE);
  g_return_val_if_fail ((unsigned) kind <= NL_COPY_DEVICE_TO_HOST_ASYNC, FALSE);
  /* a thread that never ran a kernel may have another device current */
  if (!nl_cuda_ctx_enter (c, error))
    return FALSE;
  if (nbytes == 0)
    return TRUE;
  g_return_val_if_fail (dst != NULL && src != NULL, FALSE);
  if (!nl_cuda_check (cudaMemcpyAsync (dst, src, nbytes, kinds[kind], c->stream), names[kind], error))
    return FALSE;
  if (kind == NL_COPY_DEVICE_TO_HOST)
    return nl_cuda_sync (c, error);
  return TRUE;
}

gboolean
nl_cuda_memset0 (NlCudaCtx *c, void *dst, size_t nbytes, GError **error)
{
  g_return_val_if_fail (c != NULL, FALSE);
  if (nbytes == 0)
    return TRUE;
  if (!nl_cuda_ctx_enter (c, error))
    return FALSE;
  return nl_cuda_check (cudaMemsetAsync (dst, 0, nbytes, c->stream), "cudaMemsetAsync", error);
}

gboolean
nl_cuda_sync (NlCudaCtx *c, GError **error)
{
  cudaError_t e;

  g_return_val_if_fail (c != NULL, FALSE);
  if (!nl_cuda_ctx_enter (c, error))
    return FALSE;
  e = cudaStreamSynchronize (c->stream);
  if (e == cudaSuccess)
    return TRUE;
  cudaGetLastError ();
  /* usually a kernel that failed after its launch was accepted; the name
   * (cudaErrorIllegalAddress ...) is what a bug report needs; such errors
   * stick to the process's CUDA context */
  g_set_error (error, NL_CUDA_ERROR, NL_CUDA_ERROR_FAILED,
               "%s: a queued kernel or copy failed: %s (%s); run with CUDA_LAUNCH_BLOCKING=1 to name the op, "
               "and restart netloom before training on this GPU again", c->name, cudaGetErrorName (e),
               cudaGetErrorString (e));
  return FALSE;
}

/* ---- device timing (the profiler's) ---- */

void *
nl_cuda_event_record (NlCudaCtx *c, GError **error)
{
  cudaEvent_t e = NULL;
  if (!nl_cuda_ctx_enter (c, error) || !nl_cuda_check (cudaEventCreate (&e), "cudaEventCreate", error))
    return NULL;
  if (!nl_cuda_check (cudaEventRecord (e, c->stream), "cudaEventRecord", error))
    {
      cudaEventDestroy (e);
      return NULL;
    }
  return e;
}

gboolean
nl_cuda_event_elapsed (NlCudaCtx *c, void *from, void *to, float *ms, GError **error)
{
  return nl_cuda_ctx_enter (c, error)
         && nl_cuda_check (cudaEventSynchronize ((cudaEvent_t) to), "cudaEventSynchronize", error)
         && nl_cuda_check (cudaEventElapsedTime (ms, (cudaEvent_t) from, (cudaEvent_t) to), "cudaEventElapsedTime",
                           error);
}

void
nl_cuda_event_free (NlCudaCtx *c, void *event)
{
  (void) c;
  if (event && cudaEventDestroy ((cudaEvent_t) event) != cudaSuccess)
    cudaGetLastError ();
}

/* ---- CUDA graphs ---- */

gboolean
nl_cuda_graph_begin (NlCudaCtx *c, GError **error)
{
  return nl_cuda_ctx_enter (c, error)
         && nl_cuda_check (cudaStreamBeginCapture (c->stream, cudaStreamCaptureModeThreadLocal),
                           "cudaStreamBeginCapture", error);
}

void *
nl_cuda_graph_end (NlCudaCtx *c, GError **error)
{
  cudaGraph_t graph = NULL;
  cudaGraphExec_t exec = NULL;
  if (!nl_cuda_ctx_enter (c, error))
    return NULL;
  /* an illegal call while capturing invalidates the capture: ending it
   * reports that, and the stream is usable again */
  cudaError_t e = cudaStreamEndCapture (c->stream, &graph);
  if (e == cudaSuccess)
    e = cudaGraphInstantiate (&exec, graph, 0);
  if (graph)
    cudaGraphDestroy (graph);
  if (e != cudaSuccess)
    {
      cudaGetLastError ();
      nl_cuda_check (e, "capturing the step as a CUDA graph", error);
      return NULL;
    }
  return exec;
}

gboolean
nl_cuda_graph_launch (NlCudaCtx *c, void *graph, GError **error)
{
  return nl_cuda_ctx_enter (c, error)
         && nl_cuda_check (cudaGraphLaunch ((cudaGraphExec_t) graph, c->stream), "cudaGraphLaunch", error);
}

void
nl_cuda_graph_free (NlCudaCtx *c, void *graph)
{
  (void) c;
  if (graph && cudaGraphExecDestroy ((cudaGraphExec_t) graph) != cudaSuccess)
    cudaGetLastError ();
}

/* ---- pinned host memory ---- */

void *
nl_cuda_host_alloc (size_t nbytes)
{
  void *p = NULL;

  /* without a device cudaHostAlloc would fail anyway, after probing for a
   * driver on every call */
  if (nl_cuda_device_count (NULL) == 0)
    return NULL;
  /* portable: pinned for every device's context, not just the current one */
  if (cudaHostAlloc (&p, MAX (nbytes, (size_t) 1), cudaHostAllocPortable) != cudaSuccess)
    {
      cudaGetLastError ();
      return NULL;
    }
  return p;
}

void
nl_cuda_host_free (void *ptr)
{
  if (ptr && cudaFreeHost (ptr) != cudaSuccess)
    cudaGetLastError ();
}
