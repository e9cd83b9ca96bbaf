/* dropout.cu — Dropout on CUDA, drawing the very mask the CPU draws.
 *
 * ops/cpu/dropout.c keeps element i when nl_rand_uniform (seed, step, i)
 * >= rate and saves the mask already scaled (0 or 1 / (1 - rate)). The hash
 * below is nl_mix64 / nl_rand_uniform of ops/cpu/nl-cpu-util.c with the
 * same 64-bit integer arithmetic, so for the same (seed, step) the saved
 * mask, the output and the input gradient are bit-identical to the CPU's:
 * (h >> 40) < 2^24 converts to float exactly, the scale by 2^-24 is exact,
 * and x * m is one correctly rounded multiply on both devices.
 *
 * The hash is shared with the other dropping kernels (nl-cuda-rand.cuh). */
#include <cuda_runtime.h>

#include "ops/cuda/nl-cuda-kernel.cuh"
#include "ops/cuda/nl-cuda-rand.cuh"
#include "core/cuda/nl-cuda.h"
#include "ops/nl-dropout.h"
#include "ops/nl-op-registry.h"

namespace {

__global__ void
dropout_forward_kernel (const float *x, float *y, float *mask, int64_t n, unsigned long long key, float rate,
                        float scale)
{
  /* y may be x (in place): element i is read before it is written */
  GRID_STRIDE (i, n)
  {
    float m = rand_uniform (key, (unsigned long long) i) >= rate ? scale : 0.0f;
    mask[i] = m;
    y[i] = x[i] * m;
  }
}

__global__ void
dropout_backward_kernel (const float *dy, const float *mask, float *dx, int64_t n)
{
  GRID_STRIDE (i, n) dx[i] = dy[i] * mask[i];
}

gboolean
copy_if_distinct (cudaStream_t stream, float *dst, const float *src, int64_t n, GError **error)
{
  if (dst == src || n == 0)
    return TRUE;
  return nl_cuda_check (cudaMemcpyAsync (dst, src, (size_t) n * sizeof (float), cudaMemcpyDeviceToDevice, stream),
                        "Dropout copy", error);
}

gboolean
forward (NlOpCtx *c, GError **error)
{
  cudaStream_t stream;
  const float *x = nl_tensor_f32 (c->in[0]);
  float *y = nl_tensor_f32 (c->out[0]);
  int64_t n = nl_tensor_numel (c->in[0]);
  /* the CPU's own float expression for the scale */
  const float rate = ((const NlDropoutArgs *) c->args)->rate, scale = 1.0f / (1.0f - rate);
  unsigned long long key;

  if (!enter (c, &stream, error))
    return FALSE;
  if (!c->training)
    return copy_if_distinct (stream, y, x, n, error);
  g_return_val_if_fail (c->saved[0] != NULL, FALSE);
  if (n == 0)
    return TRUE;
  key = rand_key ((unsigned long long) c->seed, (unsigned long long) c->step);
  dropout_forward_kernel<<<grid_for (n), kThreads, 0, stream>>> (
    x, y, nl_tensor_f32 (c->saved[0]), n, key, rate, scale);
  return nl_cuda_check_launch ("Dropout forward", error);
}

gboolean
backward (NlOpCtx *c, GError **error)
{
  cudaStream_t stream;
  const float *dy = nl_tensor_f32 (c->out_grad[0]);
  int64_t n = nl_tensor_numel (c->out_grad[0]);
  float *dx;

  if (!c->in_grad[0])
    return TRUE;
  dx = nl_tensor_f32 (c->in_grad[0]);
  if (!enter (c, &stream, error))
    return FALSE;
  if (!c->training)
    return copy_if_distinct (stream, dx, dy, n, error); /* forward was the identity */
  if (n == 0)
    return TRUE;
  dropout_backward_kernel<<<grid_for (n), kThreads, 0, stream>>> (
    dy, nl_tensor_f32 (c->saved[0]), dx, n);
  return nl_cuda_check_launch ("Dropout backward", error);
}

} // namespace

extern "C" const NlOpKernels nl_op_cuda_dropout = { forward, backward, NULL };
