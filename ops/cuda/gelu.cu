/* gelu.cu — GELU on CUDA, x * Phi(x) exact (erf) or with the tanh
 * approximation; the formulas of ops/nl-gelu.h as on the CPU.
 * Backward reads the input (GELU is not monotone). Forward may run in place
 * and backward may overwrite out_grad, so nothing is __restrict__: each
 * thread reads element i before writing it. */
#include <cuda_runtime.h>

#include "ops/cuda/nl-cuda-kernel.cuh"
#include "core/cuda/nl-cuda.h"
#include "ops/nl-gelu.h"
#include "ops/nl-op-registry.h"

namespace {

__global__ void
gelu_forward_kernel (const float *x, float *y, int64_t n, int approx)
{
  if (approx == APPROX_ERF)
    {
      GRID_STRIDE (i, n) y[i] = gelu_erf (x[i]);
    }
  else
    {
      GRID_STRIDE (i, n) y[i] = gelu_tanh (x[i]);
    }
}

__global__ void
gelu_backward_kernel (const float *x, const float *dy, float *dx, int64_t n, int approx)
{
  if (approx == APPROX_ERF)
    {
      GRID_STRIDE (i, n) dx[i] = gelu_erf_grad (x[i], dy[i]);
    }
  else
    {
      GRID_STRIDE (i, n) dx[i] = gelu_tanh_grad (x[i], dy[i]);
    }
}

gboolean
forward (NlOpCtx *c, GError **error)
{
  int64_t n = nl_tensor_numel (c->in[0]);
  int approx = ((const NlGeluArgs *) c->args)->approx;

  return launch_over (
    c, n, "GELU forward",
    [&] (cudaStream_t s) {
      gelu_forward_kernel<<<grid_for (n), kThreads, 0, s>>> (nl_tensor_f32 (c->in[0]), nl_tensor_f32 (c->out[0]), n,
                                                             approx);
    },
    error);
}

gboolean
backward (NlOpCtx *c, GError **error)
{
  int64_t n = nl_tensor_numel (c->in[0]);
  int approx = ((const NlGeluArgs *) c->args)->approx;

  if (!c->in_grad[0])
    return TRUE;
  return launch_over (
    c, n, "GELU backward",
    [&] (cudaStream_t s) {
      gelu_backward_kernel<<<grid_for (n), kThreads, 0, s>>> (nl_tensor_f32 (c->in[0]), nl_tensor_f32 (c->out_grad[0]),
                                                              nl_tensor_f32 (c->in_grad[0]), n, approx);
    },
    error);
}

} // namespace

extern "C" const NlOpKernels nl_op_cuda_gelu = { forward, backward, NULL };
