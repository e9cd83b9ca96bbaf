/* nl-backend.h — what a device can do, as one small interface (in the
 * style of ggml's ggml-backend-impl.h): memory, copies, synchronisation,
 * the few kernels the engine needs besides the ops (fill, sum of buffers,
 * sum of squares, the fused optimizer update), which ops it has kernels
 * for, and collectives over a group of processes. The CPU backend
 * (nl-backend-cpu.c) and the CUDA module (core/cuda) are two instances,
 * each registered as a row of nl-backend-reg.h;
 * nothing above this layer tests which device it runs on, it asks the
 * backend.
 *
 * Optional members are marked; a NULL optional member means the backend
 * does without (no page-locked memory, nothing cached to trim, no
 * collectives). Every member that can fail takes a GError. */
#pragma once

#include <glib.h>
#include <stddef.h>
#include <stdint.h>

#include "core/nl-device.h"
#include "core/nl-optim-rule.h"
#include "core/nl-storage.h"

G_BEGIN_DECLS

#define NL_BACKEND_ERROR (nl_backend_error_quark ())
GQuark nl_backend_error_quark (void);
typedef enum {
  NL_BACKEND_ERROR_UNAVAILABLE, /* built without it, no driver, no such device */
  NL_BACKEND_ERROR_NOMEM,       /* out of memory: the message names what asked and the bytes */
  NL_BACKEND_ERROR_FAILED,      /* a call of the device's runtime failed */
  NL_BACKEND_ERROR_UNSUPPORTED, /* an optional member the backend does not have */
} NlBackendError;

typedef enum {
  NL_COPY_HOST_TO_DEVICE,
  NL_COPY_DEVICE_TO_HOST,        /* waits: the host can read dst on return */
  NL_COPY_DEVICE_TO_DEVICE,
  NL_COPY_DEVICE_TO_HOST_ASYNC,  /* into page-locked memory, not waited for: read after synchronize */
} NlCopyKind;

/* A group of processes that train together (data parallelism): its size,
 * this process's rank, and the transport the backends' collectives use
 * (MPI for host buffers, NCCL for GPU buffers). NULL stands for a group of
 * one. */
typedef struct NlComm NlComm;

typedef struct {
  const char *name;   /* "cpu", "cuda" */
  /* Its memory is the CPU's: tensors need no mirrors and no copies. */
  gboolean host_visible;
  /* Runs what it is given in order on one queue (a stream): the scheduler
   * pushes its ops inline, in order, instead of on worker threads. */
  gboolean in_order;

  void *(*alloc) (NlBackend *b, size_t nbytes, const char *what, GError **error);
  void (*free) (NlBackend *b, void *ptr);
  /* optional: page-locked CPU memory this device copies to and from fast */
  void *(*host_alloc) (NlBackend *b, size_t nbytes);
  void (*host_free) (NlBackend *b, void *ptr);
  /* optional: give memory cached for reuse back to the system */
  void (*trim) (NlBackend *b);

  gboolean (*copy) (NlBackend *b, void *dst, const void *src, size_t nbytes, NlCopyKind kind, GError **error);
  gboolean (*memset0) (NlBackend *b, void *dst, size_t nbytes, GError **error);
  /* waits for everything queued; reports an asynchronous failure once */
  gboolean (*synchronize) (NlBackend *b, GError **error);

  /* float32 kernels of the engine besides the ops, queued in order */
  gboolean (*fill) (NlBackend *b, float *x, int64_t n, float value, GError **error);
  /* dst = src[0] + ... + src[n_src - 1], added in that order; zeros for no
   * source; dst may be src[0], and no other source */
  gboolean (*sum_n) (NlBackend *b, float *dst, const float *const *src, int n_src, int64_t n, GError **error);
  /* *out (host) = the sum of x^2 over every element of the n_buffers
   * buffers (NULL ones skipped), in double; NaN or Inf in any element makes
   * it NaN or Inf. Waits. The CPU's adds in a fixed order (the same bits
   * whatever the thread count); a GPU's may combine blocks in any order. */
  gboolean (*sum_squares) (NlBackend *b, const float *const *x, const int64_t *n, int n_buffers, double *out,
                           GError **error);
  /* One optimizer update of one weight (core/nl-optim-rule.h): w, g and
   * the nl_optim_n_states (cfg) state arrays of n floats each. */
  gboolean (*optim_update) (NlBackend *b, const NlOptimConfig *cfg, float lr, int64_t t, float grad_scale, float *w,
                            const float *g, float *const *state, int64_t n, GError **error);

  /* optional: the kernels of the op with that registry id and list name
   * (ops/ knows their type), NULL when it has none or its op of that id
   * has another name (a backend built with another op list). NULL member:
   * a backend that runs no ops. */
  const void *(*op_kernels) (NlBackend *b, int op_id, const char *op_name);

  /* optional collectives over comm, in place, on this device's buffers;
   * NULL where the backend has no transport (a group of one needs none). */
  gboolean (*allreduce_sum) (NlBackend *b, NlComm *comm, float *x, int64_t n, GError **error);
  gboolean (*broadcast) (NlBackend *b, NlComm *comm, void *x, size_t nbytes, int root, GError **error);

  /* optional: device time, for the profiler (CUDA events). mark records a
   * point of the queue now; mark_elapsed gives the ms between two once the
   * later has passed (it waits); mark_free frees one. NULL where the
   * host's clock is the device's (the CPU). */
  void *(*mark) (NlBackend *b, GError **error);
  gboolean (*mark_elapsed) (NlBackend *b, void *from, void *to, float *ms, GError **error);
  void (*mark_free) (NlBackend *b, void *mark);

  /* optional: a whole step recorded once and replayed (CUDA graphs), so
   * the host launches it with one call (engine/graph/nl-step-graph.h).
   * graph_begin: what the calling thread queues from now on is recorded,
   * not run; graph_end: stops recording and returns the recorded work,
   * ready to launch (NULL with the error; nothing of it ran);
   * graph_replay: queues it once more, in order; graph_free frees it.
   * Work recorded must not wait for the device nor allocate memory it
   * gives back before the graph is freed. NULL on the CPU, whose steps
   * have no launch cost to save. */
  gboolean (*graph_begin) (NlBackend *b, GError **error);
  void *(*graph_end) (NlBackend *b, GError **error);
  gboolean (*graph_replay) (NlBackend *b, void *graph, GError **error);
  void (*graph_free) (NlBackend *b, void *graph);
} NlBackendInterface;

struct NlBackend {
  const NlBackendInterface *iface;
  NlDevice device;
  void *context;       /* the backend's own (the CUDA module's device context) */
};

/* The backend of a device, made on first use and kept for the process;
 * thread-safe. NULL with NL_BACKEND_ERROR_UNAVAILABLE (or the device's
 * NL_DEVICE_ERROR_UNAVAILABLE) saying why when the device is not here. */
NlBackend *nl_backend_get (NlDevice device, GError **error);
/* At the end of a process, once no tensor, model or program lives: frees
 * what the backends keep for the process (device contexts, cached memory),
 * so leak checkers (compute-sanitizer, valgrind) report only real leaks. */
void nl_backend_shutdown_all (void);
/* The CPU's; never fails. */
NlBackend *nl_backend_cpu (void);
/* The CPU's op kernels by registry id, with each id's op list name, as the
 * CUDA module hands the loader its own: ops/cpu/nl-cpu-ops.c registers
 * them once, before main. Entries may be NULL (an op without CPU kernels). */
void nl_backend_cpu_set_op_kernels (const void *const *kernels, const char *const *names, int n);

/* "1,073,741,824": how out-of-memory errors write byte counts (free it). */
char *nl_backend_format_bytes (guint64 nbytes);
/* NL_BACKEND_ERROR_NOMEM: "out of memory: WHAT asked for N bytes (M MiB)". */
gboolean nl_backend_set_nomem (GError **error, const char *what, size_t nbytes);

/* ---- calls through the interface ---- */

static inline void *
nl_backend_alloc (NlBackend *b, size_t nbytes, const char *what, GError **error)
{
  return b->iface->alloc (b, nbytes, what, error);
}

static inline gboolean
nl_backend_copy (NlBackend *b, void *dst, const void *src, size_t nbytes, NlCopyKind kind, GError **error)
{
  return b->iface->copy (b, dst, src, nbytes, kind, error);
}

static inline gboolean
nl_backend_memset0 (NlBackend *b, void *dst, size_t nbytes, GError **error)
{
  return b->iface->memset0 (b, dst, nbytes, error);
}

static inline gboolean
nl_backend_synchronize (NlBackend *b, GError **error)
{
  return b->iface->synchronize (b, error);
}

static inline gboolean
nl_backend_fill (NlBackend *b, float *x, int64_t n, float value, GError **error)
{
  return b->iface->fill (b, x, n, value, error);
}

static inline gboolean
nl_backend_sum_n (NlBackend *b, float *dst, const float *const *src, int n_src, int64_t n, GError **error)
{
  return b->iface->sum_n (b, dst, src, n_src, n, error);
}

static inline gboolean
nl_backend_sum_squares (NlBackend *b, const float *const *x, const int64_t *n, int n_buffers, double *out,
                        GError **error)
{
  return b->iface->sum_squares (b, x, n, n_buffers, out, error);
}

static inline gboolean
nl_backend_optim_update (NlBackend *b, const NlOptimConfig *cfg, float lr, int64_t t, float grad_scale, float *w,
                         const float *g, float *const *state, int64_t n, GError **error)
{
  return b->iface->optim_update (b, cfg, lr, t, grad_scale, w, g, state, n, error);
}

/* Cached memory back to the system; nothing where the backend caches none. */
void nl_backend_trim (NlBackend *b);
/* Collectives; a NULL comm or a group of one is a no-op. Without a
 * transport in this backend: NL_BACKEND_ERROR_UNSUPPORTED. */
gboolean nl_backend_allreduce_sum (NlBackend *b, NlComm *comm, float *x, int64_t n, GError **error);
gboolean nl_backend_broadcast (NlBackend *b, NlComm *comm, void *x, size_t nbytes, int root, GError **error);
/* The op's kernels on this backend (ops/nl-op-registry.c casts them), or
 * NULL; never asked of a backend without op_kernels. */
const void *nl_backend_op_kernels (NlBackend *b, int op_id, const char *op_name);

G_END_DECLS
