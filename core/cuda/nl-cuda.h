/* nl-cuda.h — the CUDA backend as C sees it: devices, one context per
 * device (one stream, a cuBLAS and a cuDNN handle, a memory allocator, a
 * workspace), copies, pinned host memory, and the small device kernels the
 * engine needs besides the ops (fill, sums, optimizer updates, casts).
 *
 * Everything here links on every machine: the calls are trampolines
 * (nl-cuda-loader.c) into the CUDA module, libnetloom-cuda.so
 * (nl-cuda-runtime.c, nl-cuda-math.cu, the ops' .cu), loaded on first use.
 * Built without CUDA, when the module or the CUDA libraries cannot be
 * loaded, or run where there is no driver or no device, the calls fail with
 * NL_CUDA_ERROR_UNAVAILABLE and a reason a person can act on, and
 * nl_cuda_device_count() returns 0 with that reason.
 *
 * Ordering: every kernel and copy of a device goes to its one stream, in the
 * order the scheduler pushes them, so no call here synchronises except
 * nl_cuda_sync() and copies to pageable host memory. Op kernels (ops/cuda/
 * <op>.cu) find the context in NlOpCtx.device. */
#pragma once

#include <glib.h>
#include <stddef.h>
#include <stdint.h>

#include "core/nl-backend.h"
#include "core/nl-device-allocator.h"
#include "core/nl-optim-rule.h"
#include "core/nl-tensor.h"

G_BEGIN_DECLS

#define NL_CUDA_ERROR (nl_cuda_error_quark ())
GQuark nl_cuda_error_quark (void);
typedef enum {
  NL_CUDA_ERROR_UNAVAILABLE, /* built without CUDA, no driver, no such device */
  NL_CUDA_ERROR_NOMEM,       /* device memory (the allocator's error is NL_BACKEND_ERROR_NOMEM) */
  NL_CUDA_ERROR_FAILED,      /* a CUDA, cuBLAS or cuDNN call failed */
} NlCudaError;

typedef struct {
  int index;
  char name[256];            /* "NVIDIA H100 80GB HBM3" */
  size_t total_bytes, free_bytes;
  int cc_major, cc_minor;    /* compute capability */
  int multiprocessors;
} NlCudaDeviceInfo;

/* TRUE when this build has the CUDA backend (whether or not its module
 * can be loaded here). */
gboolean nl_cuda_compiled (void);
/* How many devices the runtime sees; 0 with *reason (free it) when none:
 * "netloom was built without CUDA", "the CUDA backend could not be loaded:
 * libcublas.so.13: cannot open ...", "no NVIDIA driver (CUDA driver version
 * is insufficient for CUDA runtime version)", "no CUDA device". reason may be NULL. */
int nl_cuda_device_count (char **reason);
/* The CUDA kernels of the op of that NlOpId and nl-op-list.h name
 * (ops/nl-op-registry.h), NULL when it has none, the module cannot be
 * loaded or the module's op of that id is another; nl_op_kernels() asks. */
const void *nl_cuda_op_kernels (int op_id, const char *op_name);
gboolean nl_cuda_device_info (int index, NlCudaDeviceInfo *info, GError **error);

typedef struct NlCudaCtx NlCudaCtx;

/* The device's context, made on first use and kept for the process.
 * Thread-safe. */
NlCudaCtx *nl_cuda_ctx (int index, GError **error);
int nl_cuda_ctx_index (NlCudaCtx *c);
/* Raw handles for kernels: cudaStream_t, cublasHandle_t, cudnnHandle_t.
 * Kernels also call cudaSetDevice through nl_cuda_ctx_enter. */
void *nl_cuda_ctx_stream (NlCudaCtx *c);
void *nl_cuda_ctx_cublas (NlCudaCtx *c);
void *nl_cuda_ctx_cudnn (NlCudaCtx *c);
/* Makes the context's device current on the calling thread. */
gboolean nl_cuda_ctx_enter (NlCudaCtx *c, GError **error);
/* A device scratch buffer of at least nbytes, shared by the kernels of this
 * context (they run one at a time on its stream); grows, never shrinks. */
void *nl_cuda_ctx_workspace (NlCudaCtx *c, size_t nbytes, GError **error);
NlDeviceAllocator *nl_cuda_ctx_allocator (NlCudaCtx *c);
/* Gives the allocator's wholly free memory back to the driver. */
void nl_cuda_ctx_trim (NlCudaCtx *c);
/* Frees every device's context (stream, cuBLAS and cuDNN handles, the
 * allocator's memory) at the end of a process, once nothing uses them, so
 * compute-sanitizer's leak check sees only real leaks. Loads nothing: a
 * process that never used CUDA does nothing here. */
void nl_cuda_shutdown (void);

/* Device memory from the context's allocator; what names the asker in the
 * out-of-memory error. */
void *nl_cuda_alloc (NlCudaCtx *c, size_t nbytes, const char *what, GError **error);
void nl_cuda_release (NlCudaCtx *c, void *ptr);

/* Queued on the stream; D2H waits for it (so the host can read the result
 * on return), D2H_ASYNC does not. */
gboolean nl_cuda_copy (NlCudaCtx *c, void *dst, const void *src, size_t nbytes, NlCopyKind kind,
                       GError **error);
gboolean nl_cuda_memset0 (NlCudaCtx *c, void *dst, size_t nbytes, GError **error);
/* Waits for everything queued on the stream; reports an asynchronous
 * kernel failure (an illegal address ...) once, as an error. */
gboolean nl_cuda_sync (NlCudaCtx *c, GError **error);

/* Device timing for the profiler: an event recorded on the stream now
 * (NULL with the error); the ms between two recorded ones, waiting for the
 * later to pass; freeing one (NULL is ignored). */
void *nl_cuda_event_record (NlCudaCtx *c, GError **error);
gboolean nl_cuda_event_elapsed (NlCudaCtx *c, void *from, void *to, float *ms, GError **error);
void nl_cuda_event_free (NlCudaCtx *c, void *event);

/* CUDA graphs (NlBackendInterface.graph_*): begin captures what this
 * thread queues on c's stream (cudaStreamBeginCapture, thread-local mode,
 * so other threads' CUDA calls stay legal); end stops and instantiates it
 * (a cudaGraphExec_t; NULL with the error); launch queues it on the
 * stream; free destroys it (NULL is ignored). */
gboolean nl_cuda_graph_begin (NlCudaCtx *c, GError **error);
void *nl_cuda_graph_end (NlCudaCtx *c, GError **error);
gboolean nl_cuda_graph_launch (NlCudaCtx *c, void *graph, GError **error);
void nl_cuda_graph_free (NlCudaCtx *c, void *graph);

/* Page-locked host memory, so copies to the device run asynchronously and
 * overlap compute. NULL when it cannot be had (the caller falls back to
 * g_malloc'd memory and synchronous copies). */
void *nl_cuda_host_alloc (size_t nbytes);
void nl_cuda_host_free (void *ptr);

/* TRUE when status (a cudaError_t, cublasStatus_t or cudnnStatus_t, per
 * kind) is success; else an NL_CUDA_ERROR_FAILED naming what. Kernels call
 * nl_cuda_check_launch after a <<<>>> launch. */
gboolean nl_cuda_check (int status, const char *what, GError **error);
gboolean nl_cublas_check (int status, const char *what, GError **error);
gboolean nl_cudnn_check (int status, const char *what, GError **error);
gboolean nl_cuda_check_launch (const char *what, GError **error);

/* ---- device kernels the engine needs besides the ops (nl-cuda-math.cu);
 * all float32, queued on c's stream. ---- */
gboolean nl_cuda_fill (NlCudaCtx *c, float *x, int64_t n, float value, GError **error);
/* dst = sum of src[0..n_src-1] (dst may be src[0]) */
gboolean nl_cuda_sum_n (NlCudaCtx *c, float *dst, const float *const *src, int n_src, int64_t n, GError **error);
/* *acc_dev (one double on the device) += sum of x[i]^2; a NaN or Inf
 * element makes it NaN/Inf. */
gboolean nl_cuda_sumsq (NlCudaCtx *c, const float *x, int64_t n, double *acc_dev, GError **error);
/* Rounds x in place to bf16 (bits = 16) or fp16 (bits = 15: 5-bit exponent,
 * overflow to Inf past 65504) and back to float, round to nearest even:
 * what a cast to the half type and back gives. */
gboolean nl_cuda_round_half (NlCudaCtx *c, float *x, int64_t n, gboolean fp16, GError **error);
/* The same update as nl_optim_update (engine/train/nl-optim.c), fused in one
 * kernel over one weight: w, g and the nl_optim_n_states(cfg) state arrays
 * (NULL entries beyond it) of n floats each. grad_scale_dev: NULL, or a
 * float on the device multiplied into grad_scale (global-norm clipping and
 * loss scaling computed on the device without a round trip). */
gboolean nl_cuda_optim_update (NlCudaCtx *c, const NlOptimConfig *cfg, float lr, int64_t t, float grad_scale,
                               const float *grad_scale_dev, float *w, const float *g, float *const *state,
                               int64_t n, GError **error);

/* ---- NCCL (nl-cuda-nccl.c): collectives between the GPUs of a job,
 * in place on device buffers, queued on c's stream ---- */
#define NL_NCCL_ID_BYTES 128
/* A new job's id (rank 0 makes it and sends it to the others). */
gboolean nl_nccl_unique_id (void *id, GError **error);
/* This rank's communicator on c's device (collective over the job). */
void *nl_nccl_comm_new (NlCudaCtx *c, int size, int rank, const void *id, GError **error);
void nl_nccl_comm_free (void *comm);
gboolean nl_nccl_allreduce_sum (NlCudaCtx *c, void *comm, float *x, int64_t n, GError **error);
gboolean nl_nccl_broadcast (NlCudaCtx *c, void *comm, void *x, size_t nbytes, int root, GError **error);

G_END_DECLS
