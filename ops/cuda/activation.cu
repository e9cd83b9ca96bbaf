/* activation.cu — Activation (relu, sigmoid, tanh, softrelu and the later
 * act_types), LeakyReLU and Clip on CUDA, the formulas of ops/nl-activation.h as on the CPU.
 *
 * Both ops may run in place (y over x) and their backward may overwrite
 * out_grad (dx over dy), so no pointer here is __restrict__: every thread
 * reads element i before writing it, which keeps aliasing safe. Backward is
 * written in terms of the output, as on the CPU, but for the act_types
 * act_needs_input names, which read the input (never overwritten then). */
#include <cuda_runtime.h>

#include "ops/cuda/nl-cuda-kernel.cuh"
#include "core/cuda/nl-cuda.h"
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
      GRID_STRIDE (i, n) y[i] = act_relu (x[i]);
      break;
    case ACT_SIGMOID:
      GRID_STRIDE (i, n) y[i] = act_sigmoid (x[i]);
      break;
    case ACT_TANH:
      GRID_STRIDE (i, n) y[i] = tanhf (x[i]);
      break;
    case ACT_SOFTRELU:
      GRID_STRIDE (i, n) y[i] = act_softrelu (x[i]);
      break;
    default:
      GRID_STRIDE (i, n) y[i] = act_apply (type, x[i]);
      break;
    }
}

__global__ void
act_backward_kernel (const float *x, const float *y, const float *dy, float *dx, int64_t n, int type)
{
  switch (type)
    {
    case ACT_RELU:
      GRID_STRIDE (i, n) dx[i] = act_relu_grad (y[i], dy[i]);
      break;
    case ACT_SIGMOID:
      GRID_STRIDE (i, n) dx[i] = act_sigmoid_grad (y[i], dy[i]);
      break;
    case ACT_TANH:
      GRID_STRIDE (i, n) dx[i] = act_tanh_grad (y[i], dy[i]);
      break;
    case ACT_SOFTRELU:
      GRID_STRIDE (i, n) dx[i] = act_softrelu_grad (y[i], dy[i]);
      break;
    default:
      if (act_needs_input (type))
        GRID_STRIDE (i, n) dx[i] = act_grad_x (type, x[i], dy[i]);
      else
        GRID_STRIDE (i, n) dx[i] = act_grad_y (type, y[i], dy[i]);
      break;
    }
}

__global__ void
leaky_forward_kernel (const float *x, float *y, int64_t n, float alpha)
{
  GRID_STRIDE (i, n) y[i] = leaky_relu (x[i], alpha);
}

__global__ void
leaky_backward_kernel (const float *y, const float *dy, float *dx, int64_t n, float alpha)
{
  GRID_STRIDE (i, n) dx[i] = leaky_relu_grad (y[i], dy[i], alpha);
}

__global__ void
clip_forward_kernel (const float *x, float *y, int64_t n, float lo, float hi)
{
  GRID_STRIDE (i, n) y[i] = clip_value (x[i], lo, hi);
}

__global__ void
clip_backward_kernel (const float *y, const float *dy, float *dx, int64_t n, float lo, float hi)
{
  GRID_STRIDE (i, n) dx[i] = clip_grad (y[i], dy[i], lo, hi);
}

gboolean
act_forward (NlOpCtx *c, GError **error)
{
  const int64_t n = nl_tensor_numel (c->in[0]);
  const int type = ((const NlActivationArgs *) c->args)->act_type;
  return launch_over (
    c, n, "Activation forward",
    [&] (cudaStream_t s) {
      act_forward_kernel<<<grid_for (n), kThreads, 0, s>>> (nl_tensor_f32 (c->in[0]), nl_tensor_f32 (c->out[0]), n,
                                                            type);
    },
    error);
}

gboolean
act_backward (NlOpCtx *c, GError **error)
{
  const int64_t n = nl_tensor_numel (c->out[0]);
  const int type = ((const NlActivationArgs *) c->args)->act_type;
  if (!c->in_grad[0])
    return TRUE;
  return launch_over (
    c, n, "Activation backward",
    [&] (cudaStream_t s) {
      act_backward_kernel<<<grid_for (n), kThreads, 0, s>>> (nl_tensor_f32 (c->in[0]), nl_tensor_f32 (c->out[0]),
                                                             nl_tensor_f32 (c->out_grad[0]),
                                                             nl_tensor_f32 (c->in_grad[0]), n, type);
    },
    error);
}

gboolean
leaky_forward (NlOpCtx *c, GError **error)
{
  const int64_t n = nl_tensor_numel (c->in[0]);
  const float alpha = ((const NlLeakyReluArgs *) c->args)->alpha;
  return launch_over (
    c, n, "LeakyReLU forward",
    [&] (cudaStream_t s) {
      leaky_forward_kernel<<<grid_for (n), kThreads, 0, s>>> (nl_tensor_f32 (c->in[0]), nl_tensor_f32 (c->out[0]), n,
                                                              alpha);
    },
    error);
}

gboolean
leaky_backward (NlOpCtx *c, GError **error)
{
  const int64_t n = nl_tensor_numel (c->out[0]);
  const float alpha = ((const NlLeakyReluArgs *) c->args)->alpha;
  if (!c->in_grad[0])
    return TRUE;
  return launch_over (
    c, n, "LeakyReLU backward",
    [&] (cudaStream_t s) {
      leaky_backward_kernel<<<grid_for (n), kThreads, 0, s>>> (
        nl_tensor_f32 (c->out[0]), nl_tensor_f32 (c->out_grad[0]), nl_tensor_f32 (c->in_grad[0]), n, alpha);
    },
    error);
}

gboolean
clip_forward (NlOpCtx *c, GError **error)
{
  const int64_t n = nl_tensor_numel (c->in[0]);
  const NlClipArgs a = *(const NlClipArgs *) c->args;
  return launch_over (
    c, n, "Clip forward",
    [&] (cudaStream_t s) {
      clip_forward_kernel<<<grid_for (n), kThreads, 0, s>>> (nl_tensor_f32 (c->in[0]), nl_tensor_f32 (c->out[0]), n,
                                                             a.lo, a.hi);
    },
    error);
}

gboolean
clip_backward (NlOpCtx *c, GError **error)
{
  const int64_t n = nl_tensor_numel (c->out[0]);
  const NlClipArgs a = *(const NlClipArgs *) c->args;
  if (!c->in_grad[0])
    return TRUE;
  return launch_over (
    c, n, "Clip backward",
    [&] (cudaStream_t s) {
      clip_backward_kernel<<<grid_for (n), kThreads, 0, s>>> (
        nl_tensor_f32 (c->out[0]), nl_tensor_f32 (c->out_grad[0]), nl_tensor_f32 (c->in_grad[0]), n, a.lo, a.hi);
    },
    error);
}

} // namespace

extern "C" const NlOpKernels nl_op_cuda_activation = { act_forward, act_backward, NULL };
extern "C" const NlOpKernels nl_op_cuda_leaky_relu = { leaky_forward, leaky_backward, NULL };
extern "C" const NlOpKernels nl_op_cuda_clip = { clip_forward, clip_backward, NULL };
