/* nl-cuda-kernel.cuh — what the op kernels (ops/cuda/<op>.cu) share: launch
 * sizes, the grid-stride loop, entering the op's device, the launch frame
 * of elementwise wrappers, and the row-group
 * reductions of the row-wise kernels (LayerNorm, the losses). Included by .cu files only; everything is
 * internal to each file that includes it. */
#pragma once

#include <cuda_runtime.h>

#include "core/cuda/nl-cuda.h"
#include "ops/nl-op-registry.h"

namespace {

const int kThreads = 256; /* threads per block of every elementwise and row kernel */

/* Blocks for n elements at kThreads each: at least 1 (a grid of 0 is an
 * invalid launch), at most cap (grid-stride loops cover the rest). */
inline unsigned int
grid_for (int64_t n, int64_t cap = 8192)
{
  int64_t blocks = (n + kThreads - 1) / kThreads;
  return (unsigned int) (blocks < 1 ? 1 : blocks < cap ? blocks : cap);
}

#define GRID_STRIDE(i, n)                                                                                   \
  for (int64_t i = (int64_t) blockIdx.x * blockDim.x + threadIdx.x; i < (n);                                \
       i += (int64_t) gridDim.x * blockDim.x)

/* The op's device context (the backend's). */
inline NlCudaCtx *
cuda_ctx (const NlOpCtx *c)
{
  return (NlCudaCtx *) c->backend->context;
}

/* Makes the op's device current on this thread; its one stream. */
inline gboolean
enter (const NlOpCtx *c, cudaStream_t *stream, GError **error)
{
  NlCudaCtx *dev = cuda_ctx (c);
  if (!nl_cuda_ctx_enter (dev, error))
    return FALSE;
  *stream = (cudaStream_t) nl_cuda_ctx_stream (dev);
  return TRUE;
}

/* The frame every elementwise wrapper had: enter the op's device, launch
 * nothing for no elements (a grid of 0 is invalid), launch (called with
 * the stream) and check the launch, what naming it in the error. */
template <typename Launch>
inline gboolean
launch_over (const NlOpCtx *c, int64_t n, const char *what, Launch launch, GError **error)
{
  cudaStream_t stream;
  if (!enter (c, &stream, error))
    return FALSE;
  if (n == 0)
    return TRUE;
  launch (stream);
  return nl_cuda_check_launch (what, error);
}

/* ---- row-wise kernels: one group of G threads (1, 32 or kThreads) per row ---- */

struct Sum
{
  __device__ float operator() (float a, float b) const { return a + b; }
};

struct Max
{
  /* fmaxf ignores a NaN operand; a NaN in a row still makes what is
   * computed from it (an exponential sum) NaN */
  __device__ float operator() (float a, float b) const { return fmaxf (a, b); }
};

/* Reduces v over the G threads of a row group; every thread of the group
 * gets the result. The xor butterfly combines the same pairs on every lane,
 * so all lanes agree bit for bit. */
template <int G, typename Op>
__device__ float
group_reduce (float v, Op op)
{
  if constexpr (G > 1)
    {
#pragma unroll
      for (int o = (G < 32 ? G : 32) / 2; o > 0; o >>= 1)
        v = op (v, __shfl_xor_sync (0xffffffffu, v, o));
    }
  if constexpr (G > 32)
    {
      __shared__ float part[G / 32];
      __syncthreads (); /* the previous call's readers are done with part */
      if (threadIdx.x % 32 == 0)
        part[threadIdx.x / 32] = v;
      __syncthreads ();
      v = part[0];
#pragma unroll
      for (int i = 1; i < G / 32; i++)
        v = op (v, part[i]);
    }
  return v;
}

/* Rows r handled by this thread's group; the trip count is the same for
 * every thread of a group, as the shuffles and barriers need. */
#define ROW_LOOP(G, r, rows)                                                                                \
  for (int64_t r = (int64_t) blockIdx.x * (kThreads / (G)) + threadIdx.x / (G); r < (rows);                 \
       r += (int64_t) gridDim.x * (kThreads / (G)))

/* The group size for rows of len elements. */
inline int
group_for (int64_t len)
{
  return len < 32 ? 1 : len <= 1024 ? 32 : kThreads;
}

inline unsigned int
row_blocks (int64_t rows, int g)
{
  int64_t per = kThreads / g, b = (rows + per - 1) / per;
  return (unsigned int) (b < 65536 ? b : 65536);
}

} // namespace
