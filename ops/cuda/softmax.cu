/* softmax.cu — Softmax and LogSoftmax over any axis on CUDA, the same
 * formulas as ops/cpu/softmax.c on the tensor viewed as (outer, len, inner):
 *
 *   m = max over the axis with fmaxf (a NaN is skipped by the max and then
 *       makes its whole slice NaN through exp, as on the CPU)
 *   softmax:     y = exp(x - m) * (1 / sum exp(x - m))
 *   log-softmax: y = (x - m) - log(sum exp(x - m))
 *   backward from the output: softmax dx = y * (dy - sum(dy * y)),
 *                             log-softmax dx = dy - exp(y) * sum(dy)
 *
 * Plain kernels rather than cuDNN's softmax, so those exact expressions
 * (and their NaN and -inf behaviour) hold. The last axis (inner == 1) is
 * reduced by a warp per row, or a block per row for long rows; other axes
 * by a thread per column, which keeps loads coalesced along inner.
 *
 * Forward may run in place (y over x): every element is read and then
 * written by the same thread, and no thread reads another's elements after
 * the reductions. */
#include <cuda_runtime.h>

#include "ops/cuda/nl-cuda-kernel.cuh"
#include "core/cuda/nl-cuda.h"
#include "ops/nl-op-registry.h"
#include "ops/nl-softmax.h"

namespace {

const int kLongRow = 1024; /* rows longer than this get a block each */
const int kRowBlock = 512;

struct Geom {
  int64_t outer, len, inner;
};

/* Max or sum over a group of GROUP threads (a warp, or a block of GROUP
 * threads), the result in every thread. For GROUP > 32 every thread of
 * the block must call it. */
template <int GROUP, bool IS_MAX>
__device__ __forceinline__ float
group_reduce (float v)
{
  for (int off = 16; off > 0; off /= 2)
    {
      float o = __shfl_xor_sync (0xffffffffu, v, off);
      v = IS_MAX ? fmaxf (v, o) : v + o;
    }
  if (GROUP > 32)
    {
      __shared__ float part[GROUP > 32 ? GROUP / 32 : 1];
      if (threadIdx.x % 32 == 0)
        part[threadIdx.x / 32] = v;
      __syncthreads ();
      v = part[0];
      for (int k = 1; k < GROUP / 32; k++)
        v = IS_MAX ? fmaxf (v, part[k]) : v + part[k];
      __syncthreads (); /* part is reused by the next reduction */
    }
  return v;
}

/* inner == 1: contiguous rows of len values, one per group of GROUP threads. */
template <int GROUP>
__global__ void
row_forward_kernel (const float *x0, float *y0, int64_t rows, int64_t len, int logp)
{
  const int lane = threadIdx.x % GROUP;
  const int64_t per_block = blockDim.x / GROUP;
  for (int64_t r = (int64_t) blockIdx.x * per_block + threadIdx.x / GROUP; r < rows; r += (int64_t) gridDim.x * per_block)
    {
      const float *x = x0 + r * len;
      float *y = y0 + r * len;
      float m = -INFINITY, s = 0.0f;
      for (int64_t j = lane; j < len; j += GROUP)
        m = fmaxf (m, x[j]);
      m = group_reduce<GROUP, true> (m);
      if (logp)
        {
          for (int64_t j = lane; j < len; j += GROUP)
            s += expf (x[j] - m);
          /* (x - m) is exact near the max; adding m to log(s) first would
             round it to the scale of m */
          const float ls = logf (group_reduce<GROUP, false> (s));
          for (int64_t j = lane; j < len; j += GROUP)
            y[j] = (x[j] - m) - ls;
        }
      else
        {
          for (int64_t j = lane; j < len; j += GROUP)
            {
              const float e = expf (x[j] - m);
              y[j] = e;
              s += e;
            }
          const float rcp = 1.0f / group_reduce<GROUP, false> (s);
          for (int64_t j = lane; j < len; j += GROUP)
            y[j] *= rcp;
        }
    }
}

template <int GROUP>
__global__ void
row_backward_kernel (const float *y0, const float *dy0, float *dx0, int64_t rows, int64_t len, int logp)
{
  const int lane = threadIdx.x % GROUP;
  const int64_t per_block = blockDim.x / GROUP;
  for (int64_t r = (int64_t) blockIdx.x * per_block + threadIdx.x / GROUP; r < rows; r += (int64_t) gridDim.x * per_block)
    {
      const float *y = y0 + r * len, *dy = dy0 + r * len;
      float *dx = dx0 + r * len;
      float s = 0.0f;
      if (logp)
        {
          for (int64_t j = lane; j < len; j += GROUP)
            s += dy[j];
          s = group_reduce<GROUP, false> (s);
          for (int64_t j = lane; j < len; j += GROUP)
            dx[j] = dy[j] - expf (y[j]) * s;
        }
      else
        {
          for (int64_t j = lane; j < len; j += GROUP)
            s += dy[j] * y[j];
          s = group_reduce<GROUP, false> (s);
          for (int64_t j = lane; j < len; j += GROUP)
            dx[j] = y[j] * (dy[j] - s);
        }
    }
}

/* inner > 1: a thread per (outer, inner) column, len values inner apart. */
__global__ void
col_forward_kernel (const float *x0, float *y0, Geom g, int logp)
{
  const int64_t cols = g.outer * g.inner, st = g.inner;
  for (int64_t c = (int64_t) blockIdx.x * blockDim.x + threadIdx.x; c < cols; c += (int64_t) gridDim.x * blockDim.x)
    {
      const int64_t base = c / g.inner * g.len * g.inner + c % g.inner;
      const float *x = x0 + base;
      float *y = y0 + base;
      float m = -INFINITY, s = 0.0f;
      for (int64_t j = 0; j < g.len; j++)
        m = fmaxf (m, x[j * st]);
      if (logp)
        {
          for (int64_t j = 0; j < g.len; j++)
            s += expf (x[j * st] - m);
          const float ls = logf (s);
          for (int64_t j = 0; j < g.len; j++)
            y[j * st] = (x[j * st] - m) - ls;
        }
      else
        {
          for (int64_t j = 0; j < g.len; j++)
            {
              const float e = expf (x[j * st] - m);
              y[j * st] = e;
              s += e;
            }
          const float rcp = 1.0f / s;
          for (int64_t j = 0; j < g.len; j++)
            y[j * st] *= rcp;
        }
    }
}

__global__ void
col_backward_kernel (const float *y0, const float *dy0, float *dx0, Geom g, int logp)
{
  const int64_t cols = g.outer * g.inner, st = g.inner;
  for (int64_t c = (int64_t) blockIdx.x * blockDim.x + threadIdx.x; c < cols; c += (int64_t) gridDim.x * blockDim.x)
    {
      const int64_t base = c / g.inner * g.len * g.inner + c % g.inner;
      const float *y = y0 + base, *dy = dy0 + base;
      float *dx = dx0 + base;
      float s = 0.0f;
      if (logp)
        {
          for (int64_t j = 0; j < g.len; j++)
            s += dy[j * st];
          for (int64_t j = 0; j < g.len; j++)
            dx[j * st] = dy[j * st] - expf (y[j * st]) * s;
        }
      else
        {
          for (int64_t j = 0; j < g.len; j++)
            s += dy[j * st] * y[j * st];
          for (int64_t j = 0; j < g.len; j++)
            dx[j * st] = y[j * st] * (dy[j * st] - s);
        }
    }
}

unsigned int
blocks (int64_t n, int64_t per_block)
{
  int64_t b = (n + per_block - 1) / per_block;
  return (unsigned int) MAX ((int64_t) 1, MIN (b, (int64_t) 65536));
}

/* The geometry around the op's axis; FALSE with an error for a bad axis
 * (infer_shape has checked it, so only a corrupt parameter gets here). */
gboolean
geom_of (const NlOpCtx *c, const NlTensor *t, Geom *g, GError **error)
{
  const int given = ((const NlSoftmaxArgs *) c->args)->axis;
  int axis = given;
  if (axis < 0)
    axis += t->ndim;
  if (axis < 0 || axis >= t->ndim)
    {
      g_set_error (error, NL_OP_ERROR, NL_OP_ERROR_PARAM, "%s over axis %d of a tensor with %d dimensions",
                   c->def->name, given, t->ndim);
      return FALSE;
    }
  g->outer = 1;
  g->len = t->shape[axis];
  g->inner = 1;
  for (int i = 0; i < axis; i++)
    g->outer *= t->shape[i];
  for (int i = axis + 1; i < t->ndim; i++)
    g->inner *= t->shape[i];
  return TRUE;
}

gboolean
run_forward (NlOpCtx *c, bool logp, GError **error)
{
  cudaStream_t stream;
  Geom g;
  if (!enter (c, &stream, error) || !geom_of (c, c->in[0], &g, error))
    return FALSE;
  if (g.len == 0 || g.outer == 0 || g.inner == 0)
    return TRUE;
  const float *x = nl_tensor_f32 (c->in[0]);
  float *y = nl_tensor_f32 (c->out[0]);
  if (g.inner > 1)
    col_forward_kernel<<<blocks (g.outer * g.inner, kThreads), kThreads, 0, stream>>> (x, y, g, logp);
  else if (g.len > kLongRow)
    row_forward_kernel<kRowBlock><<<blocks (g.outer, 1), kRowBlock, 0, stream>>> (x, y, g.outer, g.len, logp);
  else
    row_forward_kernel<32><<<blocks (g.outer, kThreads / 32), kThreads, 0, stream>>> (x, y, g.outer, g.len, logp);
  return nl_cuda_check_launch (logp ? "LogSoftmax forward" : "Softmax forward", error);
}

gboolean
run_backward (NlOpCtx *c, bool logp, GError **error)
{
  cudaStream_t stream;
  Geom g;
  if (!c->in_grad[0])
    return TRUE;
  /* backward reads the output only (NL_NEEDS_OUTPUTS), as on the CPU */
  if (!enter (c, &stream, error) || !geom_of (c, c->out[0], &g, error))
    return FALSE;
  if (g.len == 0 || g.outer == 0 || g.inner == 0)
    return TRUE;
  const float *y = nl_tensor_f32 (c->out[0]), *dy = nl_tensor_f32 (c->out_grad[0]);
  float *dx = nl_tensor_f32 (c->in_grad[0]);
  if (g.inner > 1)
    col_backward_kernel<<<blocks (g.outer * g.inner, kThreads), kThreads, 0, stream>>> (y, dy, dx, g, logp);
  else if (g.len > kLongRow)
    row_backward_kernel<kRowBlock><<<blocks (g.outer, 1), kRowBlock, 0, stream>>> (y, dy, dx, g.outer, g.len, logp);
  else
    row_backward_kernel<32><<<blocks (g.outer, kThreads / 32), kThreads, 0, stream>>> (y, dy, dx, g.outer, g.len,
                                                                                        logp);
  return nl_cuda_check_launch (logp ? "LogSoftmax backward" : "Softmax backward", error);
}

gboolean
softmax_forward (NlOpCtx *c, GError **error)
{
  return run_forward (c, false, error);
}

gboolean
softmax_backward (NlOpCtx *c, GError **error)
{
  return run_backward (c, false, error);
}

gboolean
log_softmax_forward (NlOpCtx *c, GError **error)
{
  return run_forward (c, true, error);
}

gboolean
log_softmax_backward (NlOpCtx *c, GError **error)
{
  return run_backward (c, true, error);
}

} // namespace

extern "C" const NlOpKernels nl_op_cuda_softmax = { softmax_forward, softmax_backward, NULL };
extern "C" const NlOpKernels nl_op_cuda_log_softmax = { log_softmax_forward, log_softmax_backward, NULL };
