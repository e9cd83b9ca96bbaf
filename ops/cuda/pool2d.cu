/* pool2d.cu — MaxPool2D, AvgPool2D and GlobalAvgPool2D on CUDA, the same
 * windows as ops/cpu/pool2d.c (PyTorch's arithmetic: the output size, with
 * ceil_mode dropping a window that would start in the right padding, comes
 * from the CPU's shape inference; here each window is clipped to the input).
 *
 * Plain kernels rather than cuDNN pooling, whose windows, tie-breaking and
 * divisors are not the CPU's: MaxPool takes the first maximum in scan
 * order (row by row) with a NaN winning and sticking, and saves its argmax
 * as a float plane index in saved[0] (training only), exactly as the CPU;
 * AvgPool divides by the window clipped to input plus padding
 * (count_include_pad) or to the input alone.
 *
 * Backward gathers: each input element sums, over the windows covering it
 * in the CPU's output order, what they route to it. No atomics, so the
 * result is deterministic and the sums run in the CPU's order. */
#include <cuda_runtime.h>

#include "ops/cuda/nl-cuda-kernel.cuh"
#include "core/cuda/nl-cuda.h"
#include "ops/nl-op-registry.h"
#include "ops/nl-pool2d.h"

namespace {

struct Geom {
  int64_t planes, h, w, oh, ow;
  int64_t kh, kw, sh, sw, ph, pw;
  int include_pad;
};

/* x: the input-shaped tensor (backward: the input gradient), y: the
 * output-shaped one. */
void
geom_of (const NlOpCtx *c, const NlTensor *x, const NlTensor *y, Geom *g)
{
  const NlPool2dArgs *a = (const NlPool2dArgs *) c->args;
  g->kh = a->pool_size[0];
  g->kw = a->pool_size[1];
  g->sh = a->strides[0];
  g->sw = a->strides[1];
  g->ph = a->padding[0];
  g->pw = a->padding[1];
  g->include_pad = a->count_include_pad;
  g->planes = x->shape[0] * x->shape[1];
  g->h = x->shape[2];
  g->w = x->shape[3];
  g->oh = y->shape[2];
  g->ow = y->shape[3];
}

bool
is_2x2s2 (const Geom &g)
{
  return g.kh == 2 && g.kw == 2 && g.sh == 2 && g.sw == 2 && g.ph == 0 && g.pw == 0 && g.oh * 2 <= g.h
         && g.ow * 2 <= g.w;
}

/* Outputs along one axis whose window covers input index i: [*lo, *hi]
 * (empty when lo > hi). Window o spans o * s - p .. o * s - p + k - 1. */
__device__ __forceinline__ void
covering (int64_t i, int64_t k, int64_t s, int64_t p, int64_t n_out, int64_t *lo, int64_t *hi)
{
  int64_t t = i + p - k + 1;
  *lo = t <= 0 ? 0 : (t + s - 1) / s;
  int64_t h = (i + p) / s; /* i + p >= 0 */
  *hi = h < n_out - 1 ? h : n_out - 1;
}

/* ---- MaxPool2D ---- */

__global__ void
max_forward_kernel (const float *__restrict__ x, float *__restrict__ y, float *__restrict__ arg, Geom g)
{
  const int64_t osz = g.oh * g.ow, total = g.planes * osz;
  GRID_STRIDE (o, total)
  {
    const int64_t p = o / osz, r = o % osz, oh = r / g.ow, ow = r % g.ow;
    int64_t h0 = oh * g.sh - g.ph, h1 = min (h0 + g.kh, g.h);
    int64_t w0 = ow * g.sw - g.pw, w1 = min (w0 + g.kw, g.w);
    h0 = max (h0, (int64_t) 0);
    w0 = max (w0, (int64_t) 0);
    const float *xp = x + p * g.h * g.w;
    /* padding counts as -inf; the first maximum wins, a NaN takes over and
       sticks (a later NaN moves the index, as on the CPU) */
    float m = -INFINITY;
    int64_t idx = h0 * g.w + w0;
    for (int64_t hh = h0; hh < h1; hh++)
      for (int64_t ww = w0; ww < w1; ww++)
        {
          float v = xp[hh * g.w + ww];
          if (v > m || isnan (v))
            {
              m = v;
              idx = hh * g.w + ww;
            }
        }
    y[o] = m;
    if (arg)
      arg[o] = (float) idx;
  }
}

__global__ void
max_backward_kernel (const float *__restrict__ dy, const float *__restrict__ arg, float *__restrict__ dx, Geom g)
{
  const int64_t isz = g.h * g.w, osz = g.oh * g.ow, total = g.planes * isz;
  GRID_STRIDE (i, total)
  {
    const int64_t p = i / isz, at = i % isz, hh = at / g.w, ww = at % g.w;
    int64_t oh0, oh1, ow0, ow1;
    covering (hh, g.kh, g.sh, g.ph, g.oh, &oh0, &oh1);
    covering (ww, g.kw, g.sw, g.pw, g.ow, &ow0, &ow1);
    const float *ap = arg + p * osz, *gp = dy + p * osz;
    float s = 0.0f;
    for (int64_t oh = oh0; oh <= oh1; oh++)
      for (int64_t ow = ow0; ow <= ow1; ow++)
        if ((int64_t) ap[oh * g.ow + ow] == at)
          s += gp[oh * g.ow + ow];
    dx[i] = s;
  }
}

gboolean
max_forward (NlOpCtx *c, GError **error)
{
  Geom g;
  geom_of (c, c->in[0], c->out[0], &g);
  const int64_t n = nl_tensor_numel (c->out[0]);
  /* the graph gives the argmax memory only where a backward reads it */
  float *arg = c->saved[0] ? nl_tensor_f32 (c->saved[0]) : NULL;
  return launch_over (
    c, n, "MaxPool2D forward",
    [&] (cudaStream_t s) {
      max_forward_kernel<<<grid_for (n, 16384), kThreads, 0, s>>> (nl_tensor_f32 (c->in[0]), nl_tensor_f32 (c->out[0]),
                                                                   arg, g);
    },
    error);
}

gboolean
max_backward (NlOpCtx *c, GError **error)
{
  if (!c->in_grad[0])
    return TRUE;
  Geom g;
  if (!c->saved[0])
    {
      g_set_error (error, NL_OP_ERROR, NL_OP_ERROR_RUNTIME,
                   "MaxPool2D backward needs the argmax saved by a training-mode forward");
      return FALSE;
    }
  /* the gradients' shapes: the op needs neither its input nor its output */
  geom_of (c, c->in_grad[0], c->out_grad[0], &g);
  const int64_t n = nl_tensor_numel (c->in_grad[0]);
  return launch_over (
    c, n, "MaxPool2D backward",
    [&] (cudaStream_t s) {
      max_backward_kernel<<<grid_for (n, 16384), kThreads, 0, s>>> (
        nl_tensor_f32 (c->out_grad[0]), nl_tensor_f32 (c->saved[0]), nl_tensor_f32 (c->in_grad[0]), g);
    },
    error);
}

/* ---- AvgPool2D ---- */

/* The window of output (oh, ow) clipped to the input, and its divisor:
 * the CPU's avg_window. */
struct AvgWin {
  int64_t h0, h1, w0, w1;
  float scale;
};

__device__ __forceinline__ AvgWin
avg_window (const Geom &g, int64_t oh, int64_t ow)
{
  AvgWin a;
  int64_t h0 = oh * g.sh - g.ph, w0 = ow * g.sw - g.pw;
  int64_t h1 = min (h0 + g.kh, g.h + g.ph), w1 = min (w0 + g.kw, g.w + g.pw);
  int64_t full = (h1 - h0) * (w1 - w0); /* padding counted, overhang past it not */
  a.h0 = max (h0, (int64_t) 0);
  a.w0 = max (w0, (int64_t) 0);
  a.h1 = min (h1, g.h);
  a.w1 = min (w1, g.w);
  int64_t n = g.include_pad ? full : (a.h1 - a.h0) * (a.w1 - a.w0);
  a.scale = n > 0 ? 1.0f / (float) n : 0.0f;
  return a;
}

__global__ void
avg_forward_kernel (const float *__restrict__ x, float *__restrict__ y, Geom g, int fast)
{
  const int64_t osz = g.oh * g.ow, total = g.planes * osz;
  GRID_STRIDE (o, total)
  {
    const int64_t p = o / osz, r = o % osz, oh = r / g.ow, ow = r % g.ow;
    const float *xp = x + p * g.h * g.w;
    if (fast)
      {
        /* the CPU's 2x2 stride-2 path sums pairwise */
        const float *r0 = xp + 2 * oh * g.w + 2 * ow, *r1 = r0 + g.w;
        y[o] = 0.25f * ((r0[0] + r0[1]) + (r1[0] + r1[1]));
        continue;
      }
    AvgWin a = avg_window (g, oh, ow);
    float s = 0.0f;
    for (int64_t hh = a.h0; hh < a.h1; hh++)
      for (int64_t ww = a.w0; ww < a.w1; ww++)
        s += xp[hh * g.w + ww];
    y[o] = s * a.scale;
  }
}

__global__ void
avg_backward_kernel (const float *__restrict__ dy, float *__restrict__ dx, Geom g)
{
  const int64_t isz = g.h * g.w, osz = g.oh * g.ow, total = g.planes * isz;
  GRID_STRIDE (i, total)
  {
    const int64_t p = i / isz, at = i % isz, hh = at / g.w, ww = at % g.w;
    int64_t oh0, oh1, ow0, ow1;
    covering (hh, g.kh, g.sh, g.ph, g.oh, &oh0, &oh1);
    covering (ww, g.kw, g.sw, g.pw, g.ow, &ow0, &ow1);
    const float *gp = dy + p * osz;
    float s = 0.0f;
    /* every window whose unclipped span covers an input element also
       covers it after clipping (clipping only cuts padding) */
    for (int64_t oh = oh0; oh <= oh1; oh++)
      for (int64_t ow = ow0; ow <= ow1; ow++)
        s += gp[oh * g.ow + ow] * avg_window (g, oh, ow).scale;
    dx[i] = s;
  }
}

gboolean
avg_forward (NlOpCtx *c, GError **error)
{
  Geom g;
  geom_of (c, c->in[0], c->out[0], &g);
  const int64_t n = nl_tensor_numel (c->out[0]);
  return launch_over (
    c, n, "AvgPool2D forward",
    [&] (cudaStream_t s) {
      avg_forward_kernel<<<grid_for (n, 16384), kThreads, 0, s>>> (nl_tensor_f32 (c->in[0]), nl_tensor_f32 (c->out[0]),
                                                                   g, is_2x2s2 (g));
    },
    error);
}

gboolean
avg_backward (NlOpCtx *c, GError **error)
{
  if (!c->in_grad[0])
    return TRUE;
  Geom g;
  geom_of (c, c->in_grad[0], c->out_grad[0], &g);
  const int64_t n = nl_tensor_numel (c->in_grad[0]);
  return launch_over (
    c, n, "AvgPool2D backward",
    [&] (cudaStream_t s) {
      avg_backward_kernel<<<grid_for (n, 16384), kThreads, 0, s>>> (nl_tensor_f32 (c->out_grad[0]),
                                                                    nl_tensor_f32 (c->in_grad[0]), g);
    },
    error);
}

/* ---- GlobalAvgPool2D ---- */

/* Sum of one plane by a group of GROUP threads (a warp, or a whole block
 * of GROUP threads), each plane's sum times scale into y. */
template <int GROUP>
__global__ void
global_forward_kernel (const float *__restrict__ x, float *__restrict__ y, int64_t planes, int64_t isz, float scale)
{
  __shared__ float part[GROUP > 32 ? GROUP / 32 : 1];
  const int lane = threadIdx.x % GROUP;
  const int64_t groups_per_block = blockDim.x / GROUP;
  const int64_t first = (int64_t) blockIdx.x * groups_per_block + threadIdx.x / GROUP;
  /* loop bounds are the same for every thread of a group (a block when
     GROUP > 32), so the barriers below are reached by all of it */
  for (int64_t p = first; p < planes; p += (int64_t) gridDim.x * groups_per_block)
    {
      const float *xp = x + p * isz;
      float s = 0.0f;
      for (int64_t i = lane; i < isz; i += GROUP)
        s += xp[i];
      for (int off = 16; off > 0; off /= 2)
        s += __shfl_xor_sync (0xffffffffu, s, off);
      if (GROUP > 32)
        {
          if (threadIdx.x % 32 == 0)
            part[threadIdx.x / 32] = s;
          __syncthreads ();
          s = 0.0f;
          for (int k = 0; k < GROUP / 32; k++)
            s += part[k];
          __syncthreads (); /* part is reused by the next plane */
        }
      if (lane == 0)
        y[p] = s * scale;
    }
}

__global__ void
global_backward_kernel (const float *__restrict__ dy, float *__restrict__ dx, int64_t n, int64_t isz, float scale)
{
  GRID_STRIDE (i, n) dx[i] = dy[i / isz] * scale;
}

gboolean
global_forward (NlOpCtx *c, GError **error)
{
  const NlTensor *t = c->in[0];
  const int64_t planes = t->shape[0] * t->shape[1], isz = t->shape[2] * t->shape[3];
  return launch_over (
    c, planes, "GlobalAvgPool2D forward",
    [&] (cudaStream_t stream) {
      const float scale = 1.0f / (float) isz;
      if (isz >= 4096)
        {
          /* big planes: a block each */
          unsigned int grid = (unsigned int) MIN (planes, (int64_t) 65535);
          global_forward_kernel<kThreads><<<grid, kThreads, 0, stream>>> (nl_tensor_f32 (t),
                                                                           nl_tensor_f32 (c->out[0]), planes, isz,
                                                                           scale);
        }
      else
        {
          /* small planes (7x7 ...): a warp each */
          const int64_t per_block = kThreads / 32;
          unsigned int grid = (unsigned int) MIN ((planes + per_block - 1) / per_block, (int64_t) 65535);
          global_forward_kernel<32><<<grid, kThreads, 0, stream>>> (nl_tensor_f32 (t), nl_tensor_f32 (c->out[0]),
                                                                    planes, isz, scale);
        }
    },
    error);
}

gboolean
global_backward (NlOpCtx *c, GError **error)
{
  if (!c->in_grad[0])
    return TRUE;
  const NlTensor *t = c->in_grad[0]; /* the input itself is not needed, maybe not kept */
  const int64_t n = nl_tensor_numel (t), isz = t->shape[2] * t->shape[3];
  return launch_over (
    c, n, "GlobalAvgPool2D backward",
    [&] (cudaStream_t s) {
      global_backward_kernel<<<grid_for (n, 16384), kThreads, 0, s>>> (nl_tensor_f32 (c->out_grad[0]),
                                                                       nl_tensor_f32 (t), n, isz, 1.0f / (float) isz);
    },
    error);
}

} // namespace

extern "C" const NlOpKernels nl_op_cuda_max_pool2d = { max_forward, max_backward, NULL };
extern "C" const NlOpKernels nl_op_cuda_avg_pool2d = { avg_forward, avg_backward, NULL };
extern "C" const NlOpKernels nl_op_cuda_global_avg_pool2d = { global_forward, global_backward, NULL };
