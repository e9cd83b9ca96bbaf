/* nl-cuda-none.c — the CUDA backend of a build without CUDA: no devices,
 * and every call says so. */
#include "ops/cuda/nl-cuda.h"

G_DEFINE_QUARK (nl-cuda-error-quark, nl_cuda_error)

#define WITHOUT "netloom was built without CUDA (no nvcc, CUDA runtime, cuBLAS or cuDNN in /usr/local/cuda)"

static gboolean
unavailable (GError **error)
{
  g_set_error_literal (error, NL_CUDA_ERROR, NL_CUDA_ERROR_UNAVAILABLE, WITHOUT);
  return FALSE;
}

gboolean nl_cuda_compiled (void) { return FALSE; }

int
nl_cuda_device_count (char **reason)
{
  if (reason)
    *reason = g_strdup (WITHOUT);
  return 0;
}

gboolean nl_cuda_device_info (int index, NlCudaDeviceInfo *info, GError **error) { return unavailable (error); }
NlCudaCtx *nl_cuda_ctx (int index, GError **error) { unavailable (error); return NULL; }
int nl_cuda_ctx_index (NlCudaCtx *c) { return -1; }
void *nl_cuda_ctx_stream (NlCudaCtx *c) { return NULL; }
void *nl_cuda_ctx_cublas (NlCudaCtx *c) { return NULL; }
void *nl_cuda_ctx_cudnn (NlCudaCtx *c) { return NULL; }
gboolean nl_cuda_ctx_enter (NlCudaCtx *c, GError **error) { return unavailable (error); }
void *nl_cuda_ctx_workspace (NlCudaCtx *c, size_t nbytes, GError **error) { unavailable (error); return NULL; }
NlPool *nl_cuda_ctx_pool (NlCudaCtx *c) { return NULL; }
void *nl_cuda_alloc (NlCudaCtx *c, size_t nbytes, const char *what, GError **error) { unavailable (error); return NULL; }
void nl_cuda_release (NlCudaCtx *c, void *ptr) { }
gboolean nl_cuda_copy (NlCudaCtx *c, void *dst, const void *src, size_t nbytes, NlCudaCopyKind kind, GError **error) { return unavailable (error); }
gboolean nl_cuda_memset0 (NlCudaCtx *c, void *dst, size_t nbytes, GError **error) { return unavailable (error); }
gboolean nl_cuda_sync (NlCudaCtx *c, GError **error) { return unavailable (error); }
void *nl_cuda_host_alloc (size_t nbytes) { return NULL; }
void nl_cuda_host_free (void *ptr) { }
gboolean nl_cuda_check (int status, const char *what, GError **error) { return status == 0 || unavailable (error); }
gboolean nl_cublas_check (int status, const char *what, GError **error) { return status == 0 || unavailable (error); }
gboolean nl_cudnn_check (int status, const char *what, GError **error) { return status == 0 || unavailable (error); }
gboolean nl_cuda_check_launch (const char *what, GError **error) { return unavailable (error); }
gboolean nl_cuda_fill (NlCudaCtx *c, float *x, int64_t n, float value, GError **error) { return unavailable (error); }
gboolean nl_cuda_sum_n (NlCudaCtx *c, float *dst, const float *const *src, int n_src, int64_t n, GError **error) { return unavailable (error); }
gboolean nl_cuda_sumsq (NlCudaCtx *c, const float *x, int64_t n, double *acc_dev, GError **error) { return unavailable (error); }
gboolean nl_cuda_round_half (NlCudaCtx *c, float *x, int64_t n, gboolean fp16, GError **error) { return unavailable (error); }
gboolean
nl_cuda_optim_update (NlCudaCtx *c, const NlOptimConfig *cfg, float lr, int64_t t, float grad_scale,
                      const float *grad_scale_dev, float *w, const float *g, float *const *state, int64_t n,
                      GError **error)
{
  return unavailable (error);
}
