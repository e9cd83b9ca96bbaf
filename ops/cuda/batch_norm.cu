/* batch_norm.cu — BatchNorm over axis 1 of (N, C, ...) input on CUDA, the
 * same conventions as ops/cpu/batch_norm.c (which cuDNN's batch norm does
 * not share: it saves a different variance and moves the running variance
 * with its own factor), so plain kernels:
 *
 *  - batch statistics when training and not use_global_stats: mean and
 *    BIASED variance normalise; the running variance moves towards the
 *    UNBIASED one (count / (count - 1); the biased 0 when count is 1),
 *    running = momentum * running + (1 - momentum) * batch;
 *  - otherwise the running statistics, untouched;
 *  - saved[0] = the mean used, saved[1] = 1 / sqrtf(var + eps) of the
 *    variance used, whichever statistics those were; backward reads only
 *    them (and gamma, x, dy).
 *
 * Per-channel sums run in double, in fixed-size slices whose partial sums
 * are added in slice order: deterministic, and at least as precise as the
 * CPU's. The variance is a second pass about the float mean, as on the CPU.
 * Launches per forward: reduce sums, mean, reduce squared deviations,
 * finalize (running stats, saved, affine map), apply. */
#include <cuda_runtime.h>

#include "ops/cuda/nl-cuda-kernel.cuh"
#include "core/cuda/nl-cuda.h"
#include "ops/nl-batch-norm.h"
#include "ops/nl-op-registry.h"

namespace {

const int64_t kTargetBlocks = 2048;  /* enough slices to fill the GPU with few channels */
const int64_t kMinSlice = 4096;      /* values per slice at least (16 per thread) */

enum { SUM_X, SUM_SQDEV, SUM_GRAD };

struct Dims {
  int64_t n, c, s; /* batch, channels, spatial size per channel */
  int64_t count;   /* values per channel: n * s */
  int64_t parts, slice; /* slices per channel and their length */
};

Dims
dims_of (const NlTensor *x)
{
  Dims d = { x->shape[0], x->shape[1], 1, 0, 1, 0 };
  for (int i = 2; i < x->ndim; i++)
    d.s *= x->shape[i];
  d.count = d.n * d.s;
  int64_t want = d.c > 0 ? (kTargetBlocks + d.c - 1) / d.c : 1;
  int64_t most = (d.count + kMinSlice - 1) / kMinSlice;
  d.parts = MAX ((int64_t) 1, MIN (want, most));
  d.slice = (d.count + d.parts - 1) / d.parts;
  return d;
}

/* Sum over a block of two doubles; the result is valid in thread 0. Every
 * thread of the block must call it. */
__device__ void
block_sum2 (double *a, double *b)
{
  __shared__ double sa[32], sb[32];
  double x = *a, y = *b;
  for (int off = 16; off > 0; off /= 2)
    {
      x += __shfl_xor_sync (0xffffffffu, x, off);
      y += __shfl_xor_sync (0xffffffffu, y, off);
    }
  const int warp = threadIdx.x / 32, warps = blockDim.x / 32;
  if (threadIdx.x % 32 == 0)
    {
      sa[warp] = x;
      sb[warp] = y;
    }
  __syncthreads ();
  if (threadIdx.x == 0)
    {
      x = 0;
      y = 0;
      for (int k = 0; k < warps; k++)
        {
          x += sa[k];
          y += sb[k];
        }
      *a = x;
      *b = y;
    }
  __syncthreads (); /* sa, sb are reused by the caller's next unit */
}

/* Partial sums of one (channel, slice) unit per block iteration, into
 * part[(ch * parts + slice) * 2 + {0, 1}]:
 *   SUM_X:     sum x
 *   SUM_SQDEV: sum (x - mean)^2, the deviation and its square in float as
 *              on the CPU
 *   SUM_GRAD:  sum dy, and sum dy * (x - mean), times inv per value for
 *              (N, C) input (S == 1) and once at the end otherwise: where
 *              the CPU applies it */
__global__ void
reduce_kernel (int mode, const float *__restrict__ x, const float *__restrict__ dy, const float *__restrict__ mean,
               const float *__restrict__ inv, double *__restrict__ part, Dims d)
{
  const int64_t units = d.c * d.parts;
  for (int64_t u = blockIdx.x; u < units; u += gridDim.x)
    {
      const int64_t ch = u / d.parts, k = u % d.parts;
      const int64_t j0 = k * d.slice, j1 = MIN (j0 + d.slice, d.count);
      const float m = mean ? mean[ch] : 0.0f, iv = inv ? inv[ch] : 1.0f;
      double a = 0, b = 0;
      for (int64_t j = j0 + threadIdx.x; j < j1; j += blockDim.x)
        {
          const int64_t n = j / d.s, i = j - n * d.s;
          const int64_t at = (n * d.c + ch) * d.s + i;
          const float v = x[at];
          if (mode == SUM_X)
            a += v;
          else if (mode == SUM_SQDEV)
            {
              const float dev = v - m;
              a += dev * dev;
            }
          else
            {
              const float g = dy[at];
              a += g;
              b += d.s == 1 ? g * (v - m) * iv : g * (v - m);
            }
        }
      block_sum2 (&a, &b);
      if (threadIdx.x == 0)
        {
          part[u * 2] = a;
          part[u * 2 + 1] = b;
        }
    }
}

/* A channel's partial sums, added in slice order. */
__device__ __forceinline__ void
total (const double *part, int64_t ch, int64_t parts, double *a, double *b)
{
  double x = 0, y = 0;
  for (int64_t k = 0; k < parts; k++)
    {
      x += part[(ch * parts + k) * 2];
      y += part[(ch * parts + k) * 2 + 1];
    }
  *a = x;
  *b = y;
}

__global__ void
mean_kernel (const double *__restrict__ part, float *__restrict__ mean, Dims d)
{
  for (int64_t ch = (int64_t) blockIdx.x * blockDim.x + threadIdx.x; ch < d.c; ch += (int64_t) gridDim.x * blockDim.x)
    {
      double sum, unused;
      total (part, ch, d.parts, &sum, &unused);
      mean[ch] = (float) (sum / (double) d.count);
    }
}

struct FwdArgs {
  const float *gamma, *beta;
  float *rmean, *rvar, *smean, *sinv;
  float eps, mom;
  int batch_stats;
};

/* The CPU's finish_channel: the statistics, the running-stat update, the
 * saved values and the affine map y = x * a + b. */
__global__ void
finalize_kernel (const double *__restrict__ part, const float *__restrict__ bmean, float *__restrict__ a_out,
                 float *__restrict__ b_out, FwdArgs f, Dims d)
{
  for (int64_t ch = (int64_t) blockIdx.x * blockDim.x + threadIdx.x; ch < d.c; ch += (int64_t) gridDim.x * blockDim.x)
    {
      float mean, var;
      if (f.batch_stats)
        {
          double ssd, unused;
          total (part, ch, d.parts, &ssd, &unused);
          mean = bmean[ch];
          var = (float) (ssd / (double) d.count); /* biased: what normalises the batch */
          /* unbiased for the running variance; one value per channel keeps the biased 0 */
          float unbiased = d.count > 1 ? (float) (ssd / (double) (d.count - 1)) : var;
          f.rmean[ch] = f.mom * f.rmean[ch] + (1 - f.mom) * mean;
          f.rvar[ch] = f.mom * f.rvar[ch] + (1 - f.mom) * unbiased;
        }
      else
        {
          mean = f.rmean[ch];
          var = f.rvar[ch];
        }
      const float inv = 1.0f / sqrtf (var + f.eps);
      if (f.smean)
        f.smean[ch] = mean;
      if (f.sinv)
        f.sinv[ch] = inv;
      const float a = (f.gamma ? f.gamma[ch] : 1.0f) * inv;
      a_out[ch] = a;
      b_out[ch] = (f.beta ? f.beta[ch] : 0.0f) - mean * a;
    }
}

__global__ void
apply_kernel (const float *__restrict__ x, float *__restrict__ y, const float *__restrict__ a,
              const float *__restrict__ b, int64_t numel, int64_t c, int64_t s)
{
  for (int64_t i = (int64_t) blockIdx.x * blockDim.x + threadIdx.x; i < numel; i += (int64_t) gridDim.x * blockDim.x)
    {
      const int64_t ch = (i / s) % c;
      y[i] = x[i] * a[ch] + b[ch];
    }
}

struct BwdArgs {
  const float *gamma, *smean, *sinv;
  float *dgamma, *dbeta;
  int batch_stats;
};

/* The CPU's channel_grads: weight gradients, and dx = k * (dy - mg - xhat * mgx). */
__global__ void
bwd_finalize_kernel (const double *__restrict__ part, float *__restrict__ k_out, float *__restrict__ mg_out,
                     float *__restrict__ mgx_out, BwdArgs b, Dims d)
{
  for (int64_t ch = (int64_t) blockIdx.x * blockDim.x + threadIdx.x; ch < d.c; ch += (int64_t) gridDim.x * blockDim.x)
    {
      double sg, sgx;
      total (part, ch, d.parts, &sg, &sgx);
      if (d.s != 1)
        sgx *= b.sinv[ch];
      if (b.dgamma)
        b.dgamma[ch] = (float) sgx;
      if (b.dbeta)
        b.dbeta[ch] = (float) sg;
      k_out[ch] = (b.gamma ? b.gamma[ch] : 1.0f) * b.sinv[ch];
      mg_out[ch] = b.batch_stats ? (float) (sg / (double) d.count) : 0.0f;
      mgx_out[ch] = b.batch_stats ? (float) (sgx / (double) d.count) : 0.0f;
    }
}

__global__ void
bwd_apply_kernel (const float *__restrict__ x, const float *__restrict__ dy, float *__restrict__ dx,
                  const float *__restrict__ mean, const float *__restrict__ inv, const float *__restrict__ k,
                  const float *__restrict__ mg, const float *__restrict__ mgx, int64_t numel, int64_t c, int64_t s)
{
  for (int64_t i = (int64_t) blockIdx.x * blockDim.x + threadIdx.x; i < numel; i += (int64_t) gridDim.x * blockDim.x)
    {
      const int64_t ch = (i / s) % c;
      /* the CPU's expression; with fixed statistics mg = mgx = 0, and a
         non-finite x still gives NaN there as here */
      dx[i] = k[ch] * (dy[i] - mg[ch] - (x[i] - mean[ch]) * inv[ch] * mgx[ch]);
    }
}

/* Scratch from the context's workspace: the partial sums (two doubles per
 * unit), then three floats per channel. */
gboolean
scratch (NlCudaCtx *dev, const Dims &d, double **part, float **f3, GError **error)
{
  size_t part_bytes = (size_t) (d.c * d.parts * 2) * sizeof (double);
  char *ws = (char *) nl_cuda_ctx_workspace (dev, part_bytes + (size_t) (3 * d.c) * sizeof (float), error);
  if (!ws)
    return FALSE;
  *part = (double *) ws;
  *f3 = (float *) (ws + part_bytes);
  return TRUE;
}

unsigned int
unit_grid (const Dims &d)
{
  int64_t units = d.c * d.parts;
  return (unsigned int) MAX ((int64_t) 1, MIN (units, (int64_t) 65536));
}

gboolean
bn_forward (NlOpCtx *c, GError **error)
{
  NlCudaCtx *dev = cuda_ctx (c);
  cudaStream_t stream;
  const NlBatchNormArgs *args = (const NlBatchNormArgs *) c->args;
  if (!enter (c, &stream, error))
    return FALSE;
  const Dims d = dims_of (c->in[0]);
  if (d.c == 0)
    return TRUE;
  FwdArgs f;
  f.gamma = c->in[1 + BN_GAMMA] ? nl_tensor_f32 (c->in[1 + BN_GAMMA]) : NULL;
  f.beta = c->in[1 + BN_BETA] ? nl_tensor_f32 (c->in[1 + BN_BETA]) : NULL;
  f.rmean = nl_tensor_f32 (c->aux[BN_RUNNING_MEAN]);
  f.rvar = nl_tensor_f32 (c->aux[BN_RUNNING_VAR]);
  f.smean = c->saved[BN_SAVED_MEAN] ? nl_tensor_f32 (c->saved[BN_SAVED_MEAN]) : NULL;
  f.sinv = c->saved[BN_SAVED_INVSTD] ? nl_tensor_f32 (c->saved[BN_SAVED_INVSTD]) : NULL;
  f.eps = args->epsilon;
  f.mom = args->momentum;
  f.batch_stats = c->training && !args->use_global_stats;

  double *part;
  float *f3;
  if (!scratch (dev, d, &part, &f3, error))
    return FALSE;
  float *bmean = f3, *a = f3 + d.c, *b = f3 + 2 * d.c;
  const float *x = nl_tensor_f32 (c->in[0]);
  const unsigned int cgrid = grid_for (d.c, 4096);

  if (f.batch_stats)
    {
      reduce_kernel<<<unit_grid (d), kThreads, 0, stream>>> (SUM_X, x, NULL, NULL, NULL, part, d);
      if (!nl_cuda_check_launch ("BatchNorm forward (sum)", error))
        return FALSE;
      mean_kernel<<<cgrid, kThreads, 0, stream>>> (part, bmean, d);
      if (!nl_cuda_check_launch ("BatchNorm forward (mean)", error))
        return FALSE;
      /* second pass about the mean: no cancellation for large offsets */
      reduce_kernel<<<unit_grid (d), kThreads, 0, stream>>> (SUM_SQDEV, x, NULL, bmean, NULL, part, d);
      if (!nl_cuda_check_launch ("BatchNorm forward (variance)", error))
        return FALSE;
    }
  finalize_kernel<<<cgrid, kThreads, 0, stream>>> (part, bmean, a, b, f, d);
  if (!nl_cuda_check_launch ("BatchNorm forward (statistics)", error))
    return FALSE;
  const int64_t numel = nl_tensor_numel (c->in[0]);
  if (numel == 0)
    return TRUE;
  apply_kernel<<<grid_for (numel, 16384), kThreads, 0, stream>>> (x, nl_tensor_f32 (c->out[0]), a, b, numel, d.c, d.s);
  return nl_cuda_check_launch ("BatchNorm forward (normalise)", error);
}

gboolean
bn_backward (NlOpCtx *c, GError **error)
{
  NlCudaCtx *dev = cuda_ctx (c);
  cudaStream_t stream;
  const NlBatchNormArgs *args = (const NlBatchNormArgs *) c->args;
  if (!c->saved[BN_SAVED_MEAN] || !c->saved[BN_SAVED_INVSTD])
    {
      g_set_error (error, NL_OP_ERROR, NL_OP_ERROR_RUNTIME,
                   "BatchNorm backward needs the mean and inverse std saved by its forward");
      return FALSE;
    }
  if (!enter (c, &stream, error))
    return FALSE;
  const Dims d = dims_of (c->in[0]);
  if (d.c == 0)
    return TRUE;
  BwdArgs b;
  b.gamma = c->in[1 + BN_GAMMA] ? nl_tensor_f32 (c->in[1 + BN_GAMMA]) : NULL;
  b.smean = nl_tensor_f32 (c->saved[BN_SAVED_MEAN]);
  b.sinv = nl_tensor_f32 (c->saved[BN_SAVED_INVSTD]);
  b.dgamma = c->in_grad[1 + BN_GAMMA] ? nl_tensor_f32 (c->in_grad[1 + BN_GAMMA]) : NULL;
  b.dbeta = c->in_grad[1 + BN_BETA] ? nl_tensor_f32 (c->in_grad[1 + BN_BETA]) : NULL;
  b.batch_stats = c->training && !args->use_global_stats;
  float *dx = c->in_grad[0] ? nl_tensor_f32 (c->in_grad[0]) : NULL;

  double *part;
  float *f3;
  if (!scratch (dev, d, &part, &f3, error))
    return FALSE;
  float *k = f3, *mg = f3 + d.c, *mgx = f3 + 2 * d.c;
  const float *x = nl_tensor_f32 (c->in[0]), *dy = nl_tensor_f32 (c->out_grad[0]);

  reduce_kernel<<<unit_grid (d), kThreads, 0, stream>>> (SUM_GRAD, x, dy, b.smean, b.sinv, part, d);
  if (!nl_cuda_check_launch ("BatchNorm backward (sums)", error))
    return FALSE;
  bwd_finalize_kernel<<<grid_for (d.c, 4096), kThreads, 0, stream>>> (part, k, mg, mgx, b, d);
  if (!nl_cuda_check_launch ("BatchNorm backward (weight gradients)", error))
    return FALSE;
  const int64_t numel = nl_tensor_numel (c->in[0]);
  if (!dx || numel == 0)
    return TRUE;
  bwd_apply_kernel<<<grid_for (numel, 16384), kThreads, 0, stream>>> (x, dy, dx, b.smean, b.sinv, k, mg, mgx, numel,
                                                                       d.c, d.s);
  return nl_cuda_check_launch ("BatchNorm backward (data gradient)", error);
}

} // namespace

extern "C" const NlOpKernels nl_op_cuda_batch_norm = { bn_forward, bn_backward, NULL };
