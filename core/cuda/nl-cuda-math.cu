/* nl-cuda-math.cu — the device kernels the engine needs besides the ops:
 * fill, sums of gradients, the sum of squares behind global-norm clipping,
 * rounding to the half types, and the fused optimizer update.
 *
 * The optimizer update computes core/nl-optim-rule.h's expressions, as the
 * CPU backend does, so it gives the same bits: nvcc fuses a * b + c into
 * one FMA by default, which rounds once instead of twice, and that header
 * spells every operation with the explicitly rounded intrinsics
 * (__fmul_rn ...) under nvcc, which it never fuses. */
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <math.h>
#include <string.h>

#include "core/cuda/nl-cuda.h"

#define THREADS 256
/* Grid-stride loops: enough blocks to fill an H100 (132 SMs x 2048
 * threads) several times over, few enough that launches stay cheap. */
#define MAX_BLOCKS 8192
/* sumsq ends each block with one atomic add: about one full wave. */
#define SUMSQ_BLOCKS 1024
/* sum_n passes its sources by value (kernel parameters, no copy to the
 * device); longer lists are added in chunks of this many. */
#define MAX_SRC 32

static unsigned
blocks_for (int64_t n, int cap)
{
  int64_t b = (n + THREADS - 1) / THREADS;
  return (unsigned) (b < 1 ? 1 : b > cap ? cap : b);
}

static cudaStream_t
stream_of (NlCudaCtx *c)
{
  return (cudaStream_t) nl_cuda_ctx_stream (c);
}

/* Every entry point makes its device current, as the ops' callers do:
 * a launch on another device's stream fails. */
static gboolean
enter (NlCudaCtx *c, GError **error)
{
  return nl_cuda_ctx_enter (c, error);
}

#define GRID_STRIDE(i, n)                                                                                    \
  for (int64_t i = (int64_t) blockIdx.x * blockDim.x + threadIdx.x; i < (n); i += (int64_t) gridDim.x * blockDim.x)

/* ---- fill ---- */

__global__ void
k_fill (float *x, int64_t n, float value)
{
  GRID_STRIDE (i, n)
    x[i] = value;
}

extern "C" gboolean
nl_cuda_fill (NlCudaCtx *c, float *x, int64_t n, float value, GError **error)
{
  g_return_val_if_fail (c != NULL && n >= 0, FALSE);
  if (n == 0)
    return TRUE;
  if (!enter (c, error))
    return FALSE;
  k_fill<<<blocks_for (n, MAX_BLOCKS), THREADS, 0, stream_of (c)>>> (x, n, value);
  return nl_cuda_check_launch ("nl_cuda_fill", error);
}

/* ---- sum of n arrays ---- */

struct SrcList {
  const float *p[MAX_SRC];
};

/* dst = (dst if accumulate) + p[0] + p[1] + ...: added left to right, one
 * rounding per addition, as a plain loop over the sources would. Each
 * element reads all its sources before writing dst, so dst may be any of
 * them. */
__global__ void
k_sum_n (float *dst, SrcList src, int n_src, bool accumulate, int64_t n)
{
  GRID_STRIDE (i, n)
    {
      float acc = accumulate ? dst[i] : src.p[0][i];
      for (int k = accumulate ? 0 : 1; k < n_src; k++)
        acc += src.p[k][i];
      dst[i] = acc;
    }
}

extern "C" gboolean
nl_cuda_sum_n (NlCudaCtx *c, float *dst, const float *const *src, int n_src, int64_t n, GError **error)
{
  g_return_val_if_fail (c != NULL && dst != NULL && n >= 0 && n_src >= 0, FALSE);
  g_return_val_if_fail (n_src == 0 || src != NULL, FALSE);
  /* after the first chunk dst holds a partial sum: a later source that is
   * dst would be read after it changed */
  for (int k = MAX_SRC; k < n_src; k++)
    g_return_val_if_fail (src[k] != dst, FALSE);
  if (n == 0 || (n_src == 1 && src[0] == dst))
    return TRUE;
  /* the memset and copy below go to c's stream too, which belongs to c's device */
  if (!enter (c, error))
    return FALSE;
  if (n_src == 0)
    return nl_cuda_memset0 (c, dst, (size_t) n * sizeof (float), error);
  if (n_src == 1)
    return nl_cuda_copy (c, dst, src[0], (size_t) n * sizeof (float), NL_COPY_DEVICE_TO_DEVICE, error);

  for (int first = 0; first < n_src; first += MAX_SRC)
    {
      SrcList list;
      int m = MIN (MAX_SRC, n_src - first);
      memset (&list, 0, sizeof list);
      for (int k = 0; k < m; k++)
        list.p[k] = src[first + k];
      k_sum_n<<<blocks_for (n, MAX_BLOCKS), THREADS, 0, stream_of (c)>>> (dst, list, m, first > 0, n);
      if (!nl_cuda_check_launch ("nl_cuda_sum_n", error))
        return FALSE;
    }
  return TRUE;
}

/* ---- sum of squares ---- */

/* Each thread sums its elements' squares in double (a float's square is
 * exact in double), the block reduces them through warp shuffles and
 * shared memory, and one atomic add per block lands in *acc. NaN and Inf
 * propagate through the additions. */
__global__ void
k_sumsq (const float *x, int64_t n, double *acc)
{
  __shared__ double warp_sums[THREADS / 32];
  double s = 0;
  unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;

  GRID_STRIDE (i, n)
    {
      double v = x[i];
      s += v * v;
    }
  for (int off = 16; off > 0; off /= 2)
    s += __shfl_down_sync (0xffffffffu, s, off);
  if (lane == 0)
    warp_sums[warp] = s;
  __syncthreads ();
  if (warp == 0)
    {
      s = lane < THREADS / 32 ? warp_sums[lane] : 0.0;
      for (int off = 16; off > 0; off /= 2)
        s += __shfl_down_sync (0xffffffffu, s, off);
      if (lane == 0)
        atomicAdd (acc, s);
    }
}

extern "C" gboolean
nl_cuda_sumsq (NlCudaCtx *c, const float *x, int64_t n, double *acc_dev, GError **error)
{
  g_return_val_if_fail (c != NULL && acc_dev != NULL && n >= 0, FALSE);
  if (n == 0)
    return TRUE;
  if (!enter (c, error))
    return FALSE;
  k_sumsq<<<blocks_for (n, SUMSQ_BLOCKS), THREADS, 0, stream_of (c)>>> (x, n, acc_dev);
  return nl_cuda_check_launch ("nl_cuda_sumsq", error);
}

/* ---- rounding to bf16 / fp16 ---- */

/* The conversion intrinsics round to nearest even exactly like
 * nl_round_bf16 / nl_round_fp16 (ops/cpu/nl-cpu-util.h) for every number,
 * subnormals and overflow to Inf included, but give a canonical NaN; NaNs
 * get the CPU's bits instead (sign and kept payload, quiet bit set), so
 * both devices agree bit for bit. */
__global__ void
k_round_half (float *x, int64_t n, bool fp16)
{
  GRID_STRIDE (i, n)
    {
      float v = x[i];
      uint32_t u = __float_as_uint (v), a = u & 0x7fffffffu;
      if (a > 0x7f800000u)
        x[i] = __uint_as_float (fp16 ? (u & 0x80000000u) | 0x7f800000u | ((a | 0x00400000u) & 0x007fe000u)
                                     : (u | 0x00400000u) & 0xffff0000u);
      else
        x[i] = fp16 ? __half2float (__float2half_rn (v)) : __bfloat162float (__float2bfloat16_rn (v));
    }
}

extern "C" gboolean
nl_cuda_round_half (NlCudaCtx *c, float *x, int64_t n, gboolean fp16, GError **error)
{
  g_return_val_if_fail (c != NULL && n >= 0, FALSE);
  if (n == 0)
    return TRUE;
  if (!enter (c, error))
    return FALSE;
  k_round_half<<<blocks_for (n, MAX_BLOCKS), THREADS, 0, stream_of (c)>>> (x, n, fp16 != FALSE);
  return nl_cuda_check_launch ("nl_cuda_round_half", error);
}

/* ---- optimizer update ---- */

/* Everything the update needs besides the rule's scalars; passed by value. */
struct OptimArgs {
  float *w;
  const float *g;
  float *s0, *s1, *s2;       /* the states the rule uses, in nl_optim_n_states order */
  const float *gs_dev;       /* NULL or a device float multiplied into the gradient scale */
  NlOptimStep st;
  int64_t n;
};

/* One kernel for every rule: the switch is on a launch constant, so every
 * thread takes the same branch and each case is a plain streaming loop.
 * Each case computes what the CPU backend's kernel of the same rule does
 * (core/nl-backend-cpu-optim.c), element by element. */
__global__ void
k_optim (const OptimArgs a)
{
  const NlOptimStep st = a.st;
  const float gs = a.gs_dev ? NL_OPT_MUL (st.gs, *a.gs_dev) : st.gs;
  float *__restrict__ w = a.w;
  const float *__restrict__ g = a.g;

  switch (st.rule)
    {
    case NL_OPTIM_RULE_SGD:
      GRID_STRIDE (i, a.n)
        w[i] = nl_optim_sgd_weight (w[i], st.lr, nl_optim_prep (g[i], w[i], gs, st.clip, st.wd));
      break;
    case NL_OPTIM_RULE_SGD_MOMENTUM:
      GRID_STRIDE (i, a.n)
        {
          float wi = w[i];
          float bi = nl_optim_sgd_buffer (a.s0[i], nl_optim_prep (g[i], wi, gs, st.clip, st.wd), st.mu);
          a.s0[i] = bi;
          w[i] = nl_optim_sgd_weight (wi, st.lr, bi);
        }
      break;
    case NL_OPTIM_RULE_SGD_NESTEROV:
      GRID_STRIDE (i, a.n)
        {
          float wi = w[i];
          float gi = nl_optim_prep (g[i], wi, gs, st.clip, st.wd);
          float bi = nl_optim_sgd_buffer (a.s0[i], gi, st.mu);
          a.s0[i] = bi;
          w[i] = nl_optim_sgd_weight (wi, st.lr, nl_optim_nesterov_direction (gi, st.mu, bi));
        }
      break;
    case NL_OPTIM_RULE_ADAM:
      GRID_STRIDE (i, a.n)
        {
          float wi = w[i];
          float gi = nl_optim_prep (g[i], wi, gs, st.clip, st.wd);
          float mi = nl_optim_adam_m (a.s0[i], gi, &st);
          float vi = nl_optim_adam_v (a.s1[i], gi, &st);
          a.s0[i] = mi;
          a.s1[i] = vi;
          w[i] = nl_optim_adam_weight (wi, mi, __fsqrt_rn (vi), &st);
        }
      break;
    case NL_OPTIM_RULE_RMSPROP:
      GRID_STRIDE (i, a.n)
        {
          float wi = w[i];
          float gi = nl_optim_prep (g[i], wi, gs, st.clip, st.wd);
          float si = nl_optim_rmsprop_square (a.s0[i], gi, &st);
          float den = si;
          a.s0[i] = si;
          if (st.centered)
            {
              float ai = nl_optim_rmsprop_average (a.s1[i], gi, &st);
              a.s1[i] = ai;
              den = nl_optim_rmsprop_centered (si, ai);
            }
          den = __fsqrt_rn (den);
          if (st.momentum)
            {
              float *b = st.centered ? a.s2 : a.s1;
              float bi = nl_optim_rmsprop_buffer (b[i], gi, den, &st);
              b[i] = bi;
              w[i] = nl_optim_sgd_weight (wi, st.lr, bi);
            }
          else
            w[i] = nl_optim_scaled_step (wi, gi, den, &st);
        }
      break;
    case NL_OPTIM_RULE_ADAGRAD:
      GRID_STRIDE (i, a.n)
        {
          float wi = w[i];
          float gi = nl_optim_prep (g[i], wi, gs, st.clip, st.wd);
          float si = nl_optim_adagrad_sum (a.s0[i], gi);
          a.s0[i] = si;
          w[i] = nl_optim_scaled_step (wi, gi, __fsqrt_rn (si), &st);
        }
      break;
    default:
      break;
    }
}

extern "C" gboolean
nl_cuda_optim_update (NlCudaCtx *c, const NlOptimConfig *cfg, float lr, int64_t t, float grad_scale,
                      const float *grad_scale_dev, float *w, const float *g, float *const *state, int64_t n,
                      GError **error)
{
  OptimArgs a;
  int n_states;

  g_return_val_if_fail (c != NULL && cfg != NULL && w != NULL && g != NULL, FALSE);
  g_return_val_if_fail ((unsigned) cfg->kind < NL_OPTIM_COUNT, FALSE);
  g_return_val_if_fail (t >= 1 && n >= 0, FALSE);
  n_states = nl_optim_n_states (cfg);
  g_return_val_if_fail (n_states == 0 || state != NULL, FALSE);
  for (int k = 0; k < n_states; k++)
    g_return_val_if_fail (state[k] != NULL, FALSE);
  if (n == 0)
    return TRUE;

  memset (&a, 0, sizeof a);
  a.w = w;
  a.g = g;
  a.s0 = n_states > 0 ? state[0] : NULL;
  a.s1 = n_states > 1 ? state[1] : NULL;
  a.s2 = n_states > 2 ? state[2] : NULL;
  a.gs_dev = grad_scale_dev;
  a.st = nl_optim_step_make (cfg, lr, t, grad_scale);
  a.n = n;
  if (!enter (c, error))
    return FALSE;
  k_optim<<<blocks_for (n, MAX_BLOCKS), THREADS, 0, stream_of (c)>>> (a);
  return nl_cuda_check_launch ("nl_cuda_optim_update", error);
}
