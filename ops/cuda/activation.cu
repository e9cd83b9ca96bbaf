/* activation.cu — Activation (relu, sigmoid, tanh, softrelu) and LeakyReLU
 * on CUDA, the same formulas as ops/cpu/activation.c.
 *
 * Both ops may run in place (y over x) and their backward may overwrite
 * out_grad (dx over dy), so no pointer here is __restrict__: every thread
 * reads element i before writing it, which keeps aliasing safe. Backward is
 * written in terms of the output, as on the CPU. */
#include <cuda_runtime.h>

#include "ops/cuda/nl-cuda-kernel.cuh"
#include "ops/cuda/nl-cuda.h"
#include "ops/nl-activation.h"
#include "ops/nl-op-registry.h"

namespace {

__global__ void
act_forward_kernel (const float *x, float *y, int64_t n, int type)
{
  /* one switch outside the loop keeps each loop body branch-free */
  switch (type)
    {
    case ACT_RELU:
      GRID_STRIDE (i, n) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
      break;
    case ACT_SIGMOID:
      GRID_STRIDE (i, n) y[i] = 1.0f / (1.0f + expf (-x[i]));
      break;
    case ACT_TANH:
      GRID_STRIDE (i, n) y[i] = tanhf (x[i]);
      break;
    case ACT_SOFTRELU:
      /* log(1 + e^x) = max(x, 0) + log1p(e^-|x|): no overflow for large x */
      GRID_STRIDE (i, n)
      {
        float v = x[i];
        y[i] = fmaxf (v, 0.0f) + log1pf (expf (-fabsf (v)));
      }
      break;
    }
}

__global__ void
act_backward_kernel (const float *y, const float *dy, float *dx, int64_t n, int type)
{
  switch (type)
    {
    case ACT_RELU:
      GRID_STRIDE (i, n) dx[i] = y[i] > 0.0f ? dy[i] : 0.0f;
      break;
    case ACT_SIGMOID:
      GRID_STRIDE (i, n)
      {
        float s = y[i];
        dx[i] = dy[i] * s * (1.0f - s);
      }
      break;
    case ACT_TANH:
      GRID_STRIDE (i, n)
      {
        float t = y[i];
        dx[i] = dy[i] * (1.0f - t * t);
      }
      break;
    case ACT_SOFTRELU:
      /* sigmoid(x) = 1 - exp(-softrelu(x)); -expm1 keeps it exact for tiny y */
      GRID_STRIDE (i, n) dx[i] = -dy[i] * expm1f (-y[i]);
      break;
    }
}

__global__ void
leaky_forward_kernel (const float *x, float *y, int64_t n, float alpha)
{
  GRID_STRIDE (i, n)
  {
    float v = x[i];
    /* the CPU's two selects, so a NaN input gives 0 on both devices */
    y[i] = (v > 0.0f ? v : 0.0f) + alpha * (v < 0.0f ? v : 0.0f);
  }
}

__global__ void
leaky_backward_kernel (const float *y, const float *dy, float *dx, int64_t n, float alpha)
{
  /* alpha >= 0, so y > 0 exactly when x > 0 */
  GRID_STRIDE (i, n)
  {
    float g = dy[i];
    float pos = y[i] > 0.0f ? g : 0.0f;
    dx[i] = pos + alpha * (y[i] > 0.0f ? 0.0f : g);
  }
}

gboolean
act_forward (NlOpCtx *c, GError **error)
{
  int64_t n = nl_tensor_numel (c->in[0]);
  cudaStream_t stream;

  if (!enter (c, &stream, error))
    return FALSE;
  if (n == 0)
    return TRUE;
  act_forward_kernel<<<grid_for (n), kThreads, 0, stream>>> (nl_tensor_f32 (c->in[0]), nl_tensor_f32 (c->out[0]),
                                                               n, ((const NlActivationArgs *) c->args)->act_type);
  return nl_cuda_check_launch ("Activation forward", error);
}

gboolean
act_backward (NlOpCtx *c, GError **error)
{
  int64_t n = nl_tensor_numel (c->out[0]);
  cudaStream_t stream;

  if (!c->in_grad[0])
    return TRUE;
  if (!enter (c, &stream, error))
    return FALSE;
  if (n == 0)
    return TRUE;
  act_backward_kernel<<<grid_for (n), kThreads, 0, stream>>> (nl_tensor_f32 (c->out[0]),
                                                                nl_tensor_f32 (c->out_grad[0]),
                                                                nl_tensor_f32 (c->in_grad[0]), n,
                                                                ((const NlActivationArgs *) c->args)->act_type);
  return nl_cuda_check_launch ("Activation backward", error);
}

gboolean
leaky_forward (NlOpCtx *c, GError **error)
{
  int64_t n = nl_tensor_numel (c->in[0]);
  cudaStream_t stream;

  if (!enter (c, &stream, error))
    return FALSE;
  if (n == 0)
    return TRUE;
  leaky_forward_kernel<<<grid_for (n), kThreads, 0, stream>>> (nl_tensor_f32 (c->in[0]), nl_tensor_f32 (c->out[0]),
                                                                 n, ((const NlLeakyReluArgs *) c->args)->alpha);
  return nl_cuda_check_launch ("LeakyReLU forward", error);
}

gboolean
leaky_backward (NlOpCtx *c, GError **error)
{
  int64_t n = nl_tensor_numel (c->out[0]);
  cudaStream_t stream;

  if (!c->in_grad[0])
    return TRUE;
  if (!enter (c, &stream, error))
    return FALSE;
  if (n == 0)
    return TRUE;
  leaky_backward_kernel<<<grid_for (n), kThreads, 0, stream>>> (nl_tensor_f32 (c->out[0]),
                                                                  nl_tensor_f32 (c->out_grad[0]),
                                                                  nl_tensor_f32 (c->in_grad[0]), n,
                                                                  ((const NlLeakyReluArgs *) c->args)->alpha);
  return nl_cuda_check_launch ("LeakyReLU backward", error);
}

} // namespace

extern "C" const NlOpKernels nl_op_cuda_activation = { act_forward, act_backward, NULL };
extern "C" const NlOpKernels nl_op_cuda_leaky_relu = { leaky_forward, leaky_backward, NULL };
