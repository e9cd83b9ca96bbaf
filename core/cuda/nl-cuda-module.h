/* nl-cuda-module.h — what the CUDA module (libnetloom-cuda.so) hands the
 * loader: every call of nl-cuda.h and every op's kernels. Private to
 * core/cuda/nl-cuda-loader.c (the trampolines every binary links) and
 * ops/cuda/nl-cuda-module.c (the module's one exported symbol); both expand
 * NL_CUDA_FUNCS, so the table, what fills it and what calls through it
 * cannot drift apart.
 *
 * NL_CUDA_FUNCS (F, V): F (ret, name, params, args, fallback) for a call
 * returning a value, V (name, params, args) for one returning nothing.
 * fallback is what the loader returns when the module cannot be loaded
 * (what a build without CUDA answers); it may name the call's parameters and the
 * loader's unavailable (), unavailable_null () and no_devices (). */
#pragma once

#include "core/cuda/nl-cuda.h"

G_BEGIN_DECLS

#define NL_CUDA_FUNCS(F, V) \
  F (int, nl_cuda_device_count, (char **reason), (reason), no_devices (reason)) \
  F (gboolean, nl_cuda_device_info, (int index, NlCudaDeviceInfo *info, GError **error), (index, info, error), \
     unavailable (error)) \
  F (NlCudaCtx *, nl_cuda_ctx, (int index, GError **error), (index, error), unavailable_null (error)) \
  F (int, nl_cuda_ctx_index, (NlCudaCtx *c), (c), -1) \
  F (void *, nl_cuda_ctx_stream, (NlCudaCtx *c), (c), NULL) \
  F (void *, nl_cuda_ctx_cublas, (NlCudaCtx *c), (c), NULL) \
  F (void *, nl_cuda_ctx_cudnn, (NlCudaCtx *c), (c), NULL) \
  F (gboolean, nl_cuda_ctx_enter, (NlCudaCtx *c, GError **error), (c, error), unavailable (error)) \
  F (void *, nl_cuda_ctx_workspace, (NlCudaCtx *c, size_t nbytes, GError **error), (c, nbytes, error), \
     unavailable_null (error)) \
  F (NlDeviceAllocator *, nl_cuda_ctx_allocator, (NlCudaCtx *c), (c), NULL) \
  V (nl_cuda_ctx_trim, (NlCudaCtx *c), (c)) \
  F (void *, nl_cuda_alloc, (NlCudaCtx *c, size_t nbytes, const char *what, GError **error), \
     (c, nbytes, what, error), unavailable_null (error)) \
  V (nl_cuda_release, (NlCudaCtx *c, void *ptr), (c, ptr)) \
  F (gboolean, nl_cuda_copy, \
     (NlCudaCtx *c, void *dst, const void *src, size_t nbytes, NlCopyKind kind, GError **error), \
     (c, dst, src, nbytes, kind, error), unavailable (error)) \
  F (gboolean, nl_cuda_memset0, (NlCudaCtx *c, void *dst, size_t nbytes, GError **error), (c, dst, nbytes, error), \
     unavailable (error)) \
  F (gboolean, nl_cuda_sync, (NlCudaCtx *c, GError **error), (c, error), unavailable (error)) \
  F (void *, nl_cuda_event_record, (NlCudaCtx *c, GError **error), (c, error), unavailable_null (error)) \
  F (gboolean, nl_cuda_event_elapsed, (NlCudaCtx *c, void *from, void *to, float *ms, GError **error), \
     (c, from, to, ms, error), unavailable (error)) \
  V (nl_cuda_event_free, (NlCudaCtx *c, void *event), (c, event)) \
  F (gboolean, nl_cuda_graph_begin, (NlCudaCtx *c, GError **error), (c, error), unavailable (error)) \
  F (void *, nl_cuda_graph_end, (NlCudaCtx *c, GError **error), (c, error), unavailable_null (error)) \
  F (gboolean, nl_cuda_graph_launch, (NlCudaCtx *c, void *graph, GError **error), (c, graph, error), \
     unavailable (error)) \
  V (nl_cuda_graph_free, (NlCudaCtx *c, void *graph), (c, graph)) \
  F (void *, nl_cuda_host_alloc, (size_t nbytes), (nbytes), NULL) \
  V (nl_cuda_host_free, (void *ptr), (ptr)) \
  F (gboolean, nl_cuda_check, (int status, const char *what, GError **error), (status, what, error), \
     status == 0 || unavailable (error)) \
  F (gboolean, nl_cublas_check, (int status, const char *what, GError **error), (status, what, error), \
     status == 0 || unavailable (error)) \
  F (gboolean, nl_cudnn_check, (int status, const char *what, GError **error), (status, what, error), \
     status == 0 || unavailable (error)) \
  F (gboolean, nl_cuda_check_launch, (const char *what, GError **error), (what, error), unavailable (error)) \
  F (gboolean, nl_cuda_fill, (NlCudaCtx *c, float *x, int64_t n, float value, GError **error), \
     (c, x, n, value, error), unavailable (error)) \
  F (gboolean, nl_cuda_sum_n, \
     (NlCudaCtx *c, float *dst, const float *const *src, int n_src, int64_t n, GError **error), \
     (c, dst, src, n_src, n, error), unavailable (error)) \
  F (gboolean, nl_cuda_sumsq, (NlCudaCtx *c, const float *x, int64_t n, double *acc_dev, GError **error), \
     (c, x, n, acc_dev, error), unavailable (error)) \
  F (gboolean, nl_cuda_round_half, (NlCudaCtx *c, float *x, int64_t n, gboolean fp16, GError **error), \
     (c, x, n, fp16, error), unavailable (error)) \
  F (gboolean, nl_cuda_optim_update, \
     (NlCudaCtx *c, const NlOptimConfig *cfg, float lr, int64_t t, float grad_scale, \
      const float *grad_scale_dev, float *w, const float *g, float *const *state, int64_t n, GError **error), \
     (c, cfg, lr, t, grad_scale, grad_scale_dev, w, g, state, n, error), unavailable (error)) \
  F (gboolean, nl_nccl_unique_id, (void *id, GError **error), (id, error), unavailable (error)) \
  F (void *, nl_nccl_comm_new, (NlCudaCtx *c, int size, int rank, const void *id, GError **error), \
     (c, size, rank, id, error), unavailable_null (error)) \
  V (nl_nccl_comm_free, (void *comm), (comm)) \
  F (gboolean, nl_nccl_allreduce_sum, (NlCudaCtx *c, void *comm, float *x, int64_t n, GError **error), \
     (c, comm, x, n, error), unavailable (error)) \
  F (gboolean, nl_nccl_broadcast, (NlCudaCtx *c, void *comm, void *x, size_t nbytes, int root, GError **error), \
     (c, comm, x, nbytes, root, error), unavailable (error))

#define NL_CUDA_MODULE_FIELD(ret, name, params, args, fallback) ret (*name) params;
#define NL_CUDA_MODULE_VFIELD(name, params, args) void (*name) params;

typedef struct {
  /* sizeof (NlCudaModule) where the module was built: the loader refuses
   * a module of another netloom (NETLOOM_CUDA_MODULE can name any file) */
  gsize size;
  NL_CUDA_FUNCS (NL_CUDA_MODULE_FIELD, NL_CUDA_MODULE_VFIELD)
  /* the ops' kernels (const NlOpKernels *, ops/nl-op.h) by registry op id;
   * NULL for an op without CUDA kernels */
  const void *const *op_kernels;
  /* the ops' names (nl-op-list.h's) by the same ids, so a module built
   * with another op list is never asked for the wrong op's kernels */
  const char *const *op_names;
  int n_op_kernels;
  /* nl_cuda_shutdown (nl-cuda.h); outside NL_CUDA_FUNCS because its
   * trampoline must not load a module that was never loaded */
  void (*shutdown) (void);
} NlCudaModule;

/* The module's entry point, looked up by this name. */
#define NL_CUDA_MODULE_ENTRY "nl_cuda_module_get"
typedef const NlCudaModule *(*NlCudaModuleGetFunc) (void);

G_END_DECLS
