/* positional.cu — PositionalEmbedding on CUDA, as ops/cpu/positional.c:
 * y = x + P[t] at valid steps, 0 at padded ones; the sinusoids come from the
 * header's formula (double, like the CPU's table); the learned table's
 * gradient sums over the samples' valid steps, one thread per (t, c), so
 * no atomics and the CPU's order of addition. */
#include <cuda_runtime.h>

#include "ops/cuda/nl-cuda-kernel.cuh"
#include "ops/nl-positional.h"

namespace {

__global__ void
forward_kernel (const float *x, const float *w, float *y, const float *lengths, int64_t B, int64_t T, int64_t C)
{
  GRID_STRIDE (i, B * T * C)
  {
    int64_t k = i % C, bt = i / C, b = bt / T, t = bt % T;
    float p = w ? w[t * C + k] : nl_positional_sinusoid (t, k, C);
    y[i] = t >= nl_sequence_length (lengths, b, T) ? 0.0f : x[i] + p;
  }
}

__global__ void
dx_kernel (const float *dy, float *dx, const float *lengths, int64_t B, int64_t T, int64_t C)
{
  GRID_STRIDE (i, B * T * C)
  {
    int64_t bt = i / C, b = bt / T, t = bt % T;
    dx[i] = t >= nl_sequence_length (lengths, b, T) ? 0.0f : dy[i];
  }
}

/* dw (max_length, C): rows t < T get the sum over samples valid at t, the rest 0 */
__global__ void
dw_kernel (const float *dy, float *dw, const float *lengths, int64_t B, int64_t T, int64_t C, int64_t rows)
{
  GRID_STRIDE (i, rows * C)
  {
    int64_t t = i / C, k = i % C;
    float s = 0.0f;
    for (int64_t b = 0; t < T && b < B; b++)
      if (t < nl_sequence_length (lengths, b, T))
        s += dy[(b * T + t) * C + k];
    dw[i] = s;
  }
}

gboolean
forward (NlOpCtx *c, GError **error)
{
  const NlTensor *x = c->in[0];
  int64_t B = x->shape[0], T = x->shape[1], C = x->shape[2];
  const float *w = c->in[1] ? nl_tensor_f32 (c->in[1]) : NULL;
  const float *len = c->lengths ? nl_tensor_f32 (c->lengths) : NULL;
  return launch_over (c, B * T * C, "PositionalEmbedding forward", [&] (cudaStream_t s) {
    forward_kernel<<<grid_for (B * T * C), kThreads, 0, s>>> (nl_tensor_f32 (x), w, nl_tensor_f32 (c->out[0]), len,
                                                              B, T, C);
  }, error);
}

gboolean
backward (NlOpCtx *c, GError **error)
{
  const NlTensor *g = c->out_grad[0];
  int64_t B = g->shape[0], T = g->shape[1], C = g->shape[2];
  const float *len = c->lengths ? nl_tensor_f32 (c->lengths) : NULL;
  NlTensor *dw = c->in[1] ? c->in_grad[1] : NULL;

  if (c->in_grad[0]
      && !launch_over (c, B * T * C, "PositionalEmbedding backward", [&] (cudaStream_t s) {
           dx_kernel<<<grid_for (B * T * C), kThreads, 0, s>>> (nl_tensor_f32 (g), nl_tensor_f32 (c->in_grad[0]), len,
                                                                B, T, C);
         }, error))
    return FALSE;
  if (!dw)
    return TRUE;
  int64_t rows = dw->shape[0];
  return launch_over (c, rows * C, "PositionalEmbedding weight gradient", [&] (cudaStream_t s) {
    dw_kernel<<<grid_for (rows * C), kThreads, 0, s>>> (nl_tensor_f32 (g), nl_tensor_f32 (dw), len, B, T, C, rows);
  }, error);
}

} // namespace

extern "C" const NlOpKernels nl_op_cuda_positional_embedding = { forward, backward, NULL };
