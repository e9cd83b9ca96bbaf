/* layer_norm.cu — LayerNorm over the last axis on CUDA, the formulas of
 * ops/cpu/layer_norm.c: per row of D values, mean, biased variance about
 * that mean (two passes), inv = 1 / sqrt (var + eps); saved[0] holds the
 * per-row mean and saved[1] the inverse std, which backward reads.
 *
 * A row is handled by one thread (D < 32), one warp (D <= 1024) or one
 * block of 256 threads; reductions run in a fixed order, so results do not
 * change from run to run. The gamma/beta gradients sum over rows in two
 * passes (per-chunk partial sums, then a double-precision sum of the
 * chunks in order): no atomics, deterministic, like the CPU's. */

#include <cuda_runtime.h>

#include "ops/cuda/nl-cuda-kernel.cuh"
#include "core/cuda/nl-cuda.h"
#include "ops/nl-layer-norm.h"
#include "ops/nl-op-registry.h"

namespace {

template <int G>
__global__ void
ln_forward_kernel (const float *x, float *y, const float *gamma, const float *beta, float *smean, float *sinv,
                   int64_t rows, int64_t dim, float eps)
{
  const int lane = threadIdx.x % G;
  ROW_LOOP (G, r, rows)
  {
    const float *xr = x + r * dim;
    float *yr = y + r * dim;
    float s = 0, ss = 0;
    for (int64_t i = lane; i < dim; i += G)
      s += xr[i];
    const float mean = group_reduce<G> (s, Sum ()) / (float) dim;
    /* second pass about the mean: no cancellation for large offsets */
    for (int64_t i = lane; i < dim; i += G)
      ss += (xr[i] - mean) * (xr[i] - mean);
    ss = group_reduce<G> (ss, Sum ());
    const float inv = 1.0f / sqrtf (ss / (float) dim + eps);
    if (lane == 0)
      {
        if (smean)
          smean[r] = mean;
        if (sinv)
          sinv[r] = inv;
      }
    for (int64_t i = lane; i < dim; i += G)
      yr[i] = (xr[i] - mean) * inv * (gamma ? gamma[i] : 1.0f) + (beta ? beta[i] : 0.0f);
  }
}

/* dx = inv * (g - mean(g) - xhat * mean(g * xhat)), g = dy * gamma */
template <int G>
__global__ void
ln_backward_dx_kernel (const float *x, const float *dy, const float *gamma, const float *smean,
                       const float *sinv, float *dx, int64_t rows, int64_t dim)
{
  const int lane = threadIdx.x % G;
  ROW_LOOP (G, r, rows)
  {
    const float *xr = x + r * dim, *gr = dy + r * dim;
    float *dr = dx + r * dim;
    const float mean = smean[r], inv = sinv[r];
    float sg = 0, sgx = 0;
    for (int64_t i = lane; i < dim; i += G)
      {
        float g = gr[i] * (gamma ? gamma[i] : 1.0f);
        sg += g;
        sgx += g * (xr[i] - mean) * inv;
      }
    sg = group_reduce<G> (sg, Sum ());
    sgx = group_reduce<G> (sgx, Sum ());
    const float mg = sg / (float) dim, mgx = sgx / (float) dim;
    for (int64_t i = lane; i < dim; i += G)
      dr[i] = inv * (gr[i] * (gamma ? gamma[i] : 1.0f) - mg - (xr[i] - mean) * inv * mgx);
  }
}

/* Pass 1 of the gamma/beta gradients: block (32, kChunkY) sums a chunk of
 * rows for 32 columns; part[chunk][0 .. dim) gets sum dy * xhat (gamma),
 * part[chunk][dim .. 2 dim) sum dy (beta). */
const int kChunkY = 8;

__global__ void
ln_wgrad_partial_kernel (const float *x, const float *dy, const float *smean, const float *sinv, float *part,
                         int64_t rows, int64_t dim, int64_t rows_per_chunk)
{
  __shared__ float sg[kChunkY][33], sb[kChunkY][33];
  const int64_t col = (int64_t) blockIdx.x * 32 + threadIdx.x;
  const int64_t r0 = (int64_t) blockIdx.y * rows_per_chunk;
  const int64_t r1 = r0 + rows_per_chunk < rows ? r0 + rows_per_chunk : rows;
  float pg = 0, pb = 0;

  if (col < dim)
    for (int64_t r = r0 + threadIdx.y; r < r1; r += kChunkY)
      {
        const float g = dy[r * dim + col];
        pg += g * (x[r * dim + col] - smean[r]) * sinv[r];
        pb += g;
      }
  sg[threadIdx.y][threadIdx.x] = pg;
  sb[threadIdx.y][threadIdx.x] = pb;
  __syncthreads ();
  if (threadIdx.y == 0 && col < dim)
    {
      for (int j = 1; j < kChunkY; j++)
        {
          pg += sg[j][threadIdx.x];
          pb += sb[j][threadIdx.x];
        }
      float *p = part + (int64_t) blockIdx.y * 2 * dim;
      p[col] = pg;
      p[dim + col] = pb;
    }
}

/* Pass 2: the chunks' partial sums in order, in double. */
__global__ void
ln_wgrad_final_kernel (const float *part, float *dgamma, float *dbeta, int64_t dim, int64_t chunks)
{
  for (int64_t col = (int64_t) blockIdx.x * blockDim.x + threadIdx.x; col < dim;
       col += (int64_t) gridDim.x * blockDim.x)
    {
      double tg = 0, tb = 0;
      for (int64_t k = 0; k < chunks; k++)
        {
          tg += part[k * 2 * dim + col];
          tb += part[k * 2 * dim + dim + col];
        }
      if (dgamma)
        dgamma[col] = (float) tg;
      if (dbeta)
        dbeta[col] = (float) tb;
    }
}

const float *
opt_f32 (const NlTensor *t)
{
  return t ? nl_tensor_f32 (t) : NULL;
}

gboolean
ln_forward (NlOpCtx *c, GError **error)
{
  const int64_t dim = c->in[0]->shape[c->in[0]->ndim - 1];
  const int64_t rows = nl_tensor_numel (c->in[0]) / dim;
  float *smean = c->saved[LN_SAVED_MEAN] ? nl_tensor_f32 (c->saved[LN_SAVED_MEAN]) : NULL;
  float *sinv = c->saved[LN_SAVED_INVSTD] ? nl_tensor_f32 (c->saved[LN_SAVED_INVSTD]) : NULL;
  cudaStream_t stream;

  if (!enter (c, &stream, error))
    return FALSE;
  if (rows == 0)
    return TRUE;

  const float *x = nl_tensor_f32 (c->in[0]);
  const float *gamma = opt_f32 (c->in[1 + LN_GAMMA]), *beta = opt_f32 (c->in[1 + LN_BETA]);
  float *y = nl_tensor_f32 (c->out[0]);
  const float eps = ((const NlLayerNormArgs *) c->args)->epsilon;
  const int g = group_for (dim);
  const unsigned int blocks = row_blocks (rows, g);
  if (g == 1)
    ln_forward_kernel<1><<<blocks, kThreads, 0, stream>>> (x, y, gamma, beta, smean, sinv, rows, dim, eps);
  else if (g == 32)
    ln_forward_kernel<32><<<blocks, kThreads, 0, stream>>> (x, y, gamma, beta, smean, sinv, rows, dim, eps);
  else
    ln_forward_kernel<kThreads><<<blocks, kThreads, 0, stream>>> (x, y, gamma, beta, smean, sinv, rows, dim, eps);
  return nl_cuda_check_launch ("LayerNorm forward", error);
}

gboolean
ln_backward (NlOpCtx *c, GError **error)
{
  const int64_t dim = c->in[0]->shape[c->in[0]->ndim - 1];
  const int64_t rows = nl_tensor_numel (c->in[0]) / dim;
  float *dx = c->in_grad[0] ? nl_tensor_f32 (c->in_grad[0]) : NULL;
  float *dgamma = c->in_grad[1 + LN_GAMMA] ? nl_tensor_f32 (c->in_grad[1 + LN_GAMMA]) : NULL;
  float *dbeta = c->in_grad[1 + LN_BETA] ? nl_tensor_f32 (c->in_grad[1 + LN_BETA]) : NULL;
  NlCudaCtx *dev = cuda_ctx (c);
  cudaStream_t stream;

  if (!dx && !dgamma && !dbeta)
    return TRUE;
  if (!enter (c, &stream, error))
    return FALSE;
  if (rows == 0)
    {
      /* sums over no rows */
      if (dgamma && !nl_cuda_check (cudaMemsetAsync (dgamma, 0, dim * sizeof (float), stream),
                                    "LayerNorm backward (zero dgamma)", error))
        return FALSE;
      if (dbeta && !nl_cuda_check (cudaMemsetAsync (dbeta, 0, dim * sizeof (float), stream),
                                   "LayerNorm backward (zero dbeta)", error))
        return FALSE;
      return TRUE;
    }

  const float *x = nl_tensor_f32 (c->in[0]), *dy = nl_tensor_f32 (c->out_grad[0]);
  const float *gamma = opt_f32 (c->in[1 + LN_GAMMA]);
  const float *smean = nl_tensor_f32 (c->saved[LN_SAVED_MEAN]), *sinv = nl_tensor_f32 (c->saved[LN_SAVED_INVSTD]);

  if (dgamma || dbeta)
    {
      /* enough chunks for ~2048 blocks, at least 64 rows each */
      const int64_t col_tiles = (dim + 31) / 32;
      const int64_t target = col_tiles >= 2048 ? 1 : 2048 / col_tiles;
      int64_t per = (rows + target - 1) / target;
      per = per < 64 ? 64 : per;
      const int64_t chunks = (rows + per - 1) / per;
      float *part = (float *) nl_cuda_alloc (dev, (size_t) chunks * 2 * dim * sizeof (float),
                                             "LayerNorm backward (gamma/beta partial sums)", error);
      if (!part)
        return FALSE;
      ln_wgrad_partial_kernel<<<dim3 ((unsigned int) col_tiles, (unsigned int) chunks), dim3 (32, kChunkY), 0,
                                stream>>> (x, dy, smean, sinv, part, rows, dim, per);
      gboolean ok = nl_cuda_check_launch ("LayerNorm backward (gamma/beta partial sums)", error);
      if (ok)
        {
          ln_wgrad_final_kernel<<<grid_for (dim), kThreads, 0, stream>>> (part, dgamma, dbeta, dim, chunks);
          ok = nl_cuda_check_launch ("LayerNorm backward (gamma/beta sums)", error);
        }
      /* stream-ordered allocator: safe to hand back before the kernels have run */
      nl_cuda_release (dev, part);
      if (!ok)
        return FALSE;
    }

  if (dx)
    {
      const int g = group_for (dim);
      const unsigned int blocks = row_blocks (rows, g);
      if (g == 1)
        ln_backward_dx_kernel<1><<<blocks, kThreads, 0, stream>>> (x, dy, gamma, smean, sinv, dx, rows, dim);
      else if (g == 32)
        ln_backward_dx_kernel<32><<<blocks, kThreads, 0, stream>>> (x, dy, gamma, smean, sinv, dx, rows, dim);
      else
        ln_backward_dx_kernel<kThreads><<<blocks, kThreads, 0, stream>>> (x, dy, gamma, smean, sinv, dx, rows, dim);
      if (!nl_cuda_check_launch ("LayerNorm backward", error))
        return FALSE;
    }
  return TRUE;
}

} // namespace

extern "C" const NlOpKernels nl_op_cuda_layer_norm = { ln_forward, ln_backward, NULL };
