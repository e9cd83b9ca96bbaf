/* sequence_pool.cu — SequencePool on CUDA, as ops/cpu/sequence_pool.c: one
 * thread per (sample, channel) walks the sample's valid steps, in forward
 * and in backward (which writes every step of its column, 0 where nothing
 * flows), so the sums run in the CPU's order and no atomics are needed. */
#include <cuda_runtime.h>

#include "ops/cuda/nl-cuda-kernel.cuh"
#include "ops/nl-sequence-pool.h"

namespace {

/* the step max picks among the first len (the first of equal values) */
__device__ inline int64_t
argmax_step (const float *x, int64_t len, int64_t C)
{
  int64_t best = 0;
  for (int64_t t = 1; t < len; t++)
    if (x[t * C] > x[best * C])
      best = t;
  return best;
}

__global__ void
forward_kernel (const float *x, float *y, const float *lengths, int64_t B, int64_t T, int64_t C, int mode)
{
  GRID_STRIDE (i, B * C)
  {
    int64_t b = i / C, k = i % C, len = nl_sequence_length (lengths, b, T);
    const float *xb = x + b * T * C + k;
    float v = 0.0f;
    if (len > 0 && mode == NL_SEQPOOL_LAST)
      v = xb[(len - 1) * C];
    else if (len > 0 && mode == NL_SEQPOOL_MAX)
      v = xb[argmax_step (xb, len, C) * C];
    else if (len > 0)
      {
        for (int64_t t = 0; t < len; t++)
          v += xb[t * C];
        v /= (float) len;
      }
    y[i] = v;
  }
}

__global__ void
backward_kernel (const float *x, const float *dy, float *dx, const float *lengths, int64_t B, int64_t T, int64_t C,
                 int mode)
{
  GRID_STRIDE (i, B * C)
  {
    int64_t b = i / C, k = i % C, len = nl_sequence_length (lengths, b, T);
    int64_t pick = mode == NL_SEQPOOL_LAST ? len - 1 : mode == NL_SEQPOOL_MAX && len > 0
                                                         ? argmax_step (x + b * T * C + k, len, C) : -1;
    float g = dy[i];
    for (int64_t t = 0; t < T; t++)
      dx[(b * T + t) * C + k] = mode == NL_SEQPOOL_MEAN ? (t < len ? g / (float) len : 0.0f) : t == pick ? g : 0.0f;
  }
}

gboolean
forward (NlOpCtx *c, GError **error)
{
  const NlTensor *x = c->in[0];
  int64_t B = x->shape[0], T = x->shape[1], C = x->shape[2];
  int mode = ((const NlSequencePoolArgs *) c->args)->mode;
  const float *len = c->lengths ? nl_tensor_f32 (c->lengths) : NULL;
  return launch_over (c, B * C, "SequencePool forward", [&] (cudaStream_t s) {
    forward_kernel<<<grid_for (B * C), kThreads, 0, s>>> (nl_tensor_f32 (x), nl_tensor_f32 (c->out[0]), len, B, T, C,
                                                          mode);
  }, error);
}

gboolean
backward (NlOpCtx *c, GError **error)
{
  const NlTensor *x = c->in[0];
  int64_t B = x->shape[0], T = x->shape[1], C = x->shape[2];
  int mode = ((const NlSequencePoolArgs *) c->args)->mode;
  const float *len = c->lengths ? nl_tensor_f32 (c->lengths) : NULL;
  if (!c->in_grad[0])
    return TRUE;
  return launch_over (c, B * C, "SequencePool backward", [&] (cudaStream_t s) {
    backward_kernel<<<grid_for (B * C), kThreads, 0, s>>> (nl_tensor_f32 (x), nl_tensor_f32 (c->out_grad[0]),
                                                           nl_tensor_f32 (c->in_grad[0]), len, B, T, C, mode);
  }, error);
}

} // namespace

extern "C" const NlOpKernels nl_op_cuda_sequence_pool = { forward, backward, NULL };
