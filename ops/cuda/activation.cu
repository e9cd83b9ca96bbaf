/* activation.cu — Activation (relu, sigmoid, tanh, softrelu and the later
 * act_types), LeakyReLU, Clip, PReLU and Shrink on CUDA, the formulas of ops/nl-activation.h as on the CPU.
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

/* PReLU over (N, C, inner): channel (i / inner) % C */
__global__ void
prelu_forward_kernel (const float *x, const float *a, float *y, int64_t n, int64_t ch, int64_t inner)
{
  GRID_STRIDE (i, n) y[i] = prelu_value (x[i], a[(i / inner) % ch]);
}

__global__ void
prelu_dx_kernel (const float *x, const float *a, const float *dy, float *dx, int64_t n, int64_t ch, int64_t inner)
{
  GRID_STRIDE (i, n) dx[i] = prelu_grad (x[i], dy[i], a[(i / inner) % ch]);
}

/* One block per channel sums x * dy where x <= 0 over samples and
 * positions, in a fixed order: deterministic, no atomics. */
__global__ void
prelu_da_kernel (const float *x, const float *dy, float *da, int64_t batch, int64_t ch, int64_t inner)
{
  const int64_t k = blockIdx.x, per = batch * inner;
  float s = 0;
  for (int64_t j = threadIdx.x; j < per; j += kThreads)
    {
      const int64_t i = ((j / inner) * ch + k) * inner + j % inner;
      s += x[i] > 0.0f ? 0.0f : x[i] * dy[i];
    }
  s = group_reduce<kThreads> (s, Sum ());
  if (threadIdx.x == 0)
    da[k] = s;
}

__global__ void
shrink_forward_kernel (const float *x, float *y, int64_t n, float lambd, float bias)
{
  GRID_STRIDE (i, n) y[i] = shrink_value (x[i], lambd, bias);
}

__global__ void
shrink_backward_kernel (const float *x, const float *dy, float *dx, int64_t n, float lambd)
{
  GRID_STRIDE (i, n) dx[i] = shrink_grad (x[i], dy[i], lambd);
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
  const int64_t n = nl_tensor_numel (c->out_grad[0]);
  const int type = ((const NlActivationArgs *) c->args)->act_type;
  /* only what the op said it needs: the input or the output */
  const float *x = act_needs_input (type) ? nl_tensor_f32 (c->in[0]) : NULL;
  const float *y = act_needs_input (type) ? NULL : nl_tensor_f32 (c->out[0]);
  if (!c->in_grad[0])
    return TRUE;
  return launch_over (
    c, n, "Activation backward",
    [&] (cudaStream_t s) {
      act_backward_kernel<<<grid_for (n), kThreads, 0, s>>> (x, y, nl_tensor_f32 (c->out_grad[0]),
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

gboolean
prelu_forward (NlOpCtx *c, GError **error)
{
  const int64_t n = nl_tensor_numel (c->in[0]), ch = c->in[0]->shape[1], inner = n / (c->in[0]->shape[0] * ch);
  return launch_over (
    c, n, "PReLU forward",
    [&] (cudaStream_t s) {
      prelu_forward_kernel<<<grid_for (n), kThreads, 0, s>>> (nl_tensor_f32 (c->in[0]), nl_tensor_f32 (c->in[1]),
                                                              nl_tensor_f32 (c->out[0]), n, ch, inner);
    },
    error);
}

/* the slopes' gradient before dx, which may overwrite dy */
gboolean
prelu_backward (NlOpCtx *c, GError **error)
{
  const int64_t n = nl_tensor_numel (c->in[0]), ch = c->in[0]->shape[1], inner = n / (c->in[0]->shape[0] * ch);
  const float *x = nl_tensor_f32 (c->in[0]), *a = nl_tensor_f32 (c->in[1]), *dy = nl_tensor_f32 (c->out_grad[0]);
  return launch_over (
    c, n, "PReLU backward",
    [&] (cudaStream_t s) {
      if (c->in_grad[1])
        prelu_da_kernel<<<(unsigned int) ch, kThreads, 0, s>>> (x, dy, nl_tensor_f32 (c->in_grad[1]),
                                                                c->in[0]->shape[0], ch, inner);
      if (c->in_grad[0])
        prelu_dx_kernel<<<grid_for (n), kThreads, 0, s>>> (x, a, dy, nl_tensor_f32 (c->in_grad[0]), n, ch, inner);
    },
    error);
}

gboolean
shrink_forward (NlOpCtx *c, GError **error)
{
  const int64_t n = nl_tensor_numel (c->in[0]);
  const NlShrinkArgs a = *(const NlShrinkArgs *) c->args;
  return launch_over (
    c, n, "Shrink forward",
    [&] (cudaStream_t s) {
      shrink_forward_kernel<<<grid_for (n), kThreads, 0, s>>> (nl_tensor_f32 (c->in[0]), nl_tensor_f32 (c->out[0]),
                                                               n, a.lambd, a.bias);
    },
    error);
}

gboolean
shrink_backward (NlOpCtx *c, GError **error)
{
  const int64_t n = nl_tensor_numel (c->in[0]);
  const NlShrinkArgs a = *(const NlShrinkArgs *) c->args;
  if (!c->in_grad[0])
    return TRUE;
  return launch_over (
    c, n, "Shrink backward",
    [&] (cudaStream_t s) {
      shrink_backward_kernel<<<grid_for (n), kThreads, 0, s>>> (
        nl_tensor_f32 (c->in[0]), nl_tensor_f32 (c->out_grad[0]), nl_tensor_f32 (c->in_grad[0]), n, a.lambd);
    },
    error);
}

} // namespace

extern "C" const NlOpKernels nl_op_cuda_activation = { act_forward, act_backward, NULL };
extern "C" const NlOpKernels nl_op_cuda_leaky_relu = { leaky_forward, leaky_backward, NULL };
extern "C" const NlOpKernels nl_op_cuda_clip = { clip_forward, clip_backward, NULL };
extern "C" const NlOpKernels nl_op_cuda_prelu = { prelu_forward, prelu_backward, NULL };
extern "C" const NlOpKernels nl_op_cuda_shrink = { shrink_forward, shrink_backward, NULL };
