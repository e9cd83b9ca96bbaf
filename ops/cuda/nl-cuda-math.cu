/* nl-cuda-math.cu — the device kernels the engine needs besides the ops:
 * fill, sums of gradients, the sum of squares behind global-norm clipping,
 * rounding to the half types, and the fused optimizer update.
 *
 * The optimizer update must give the same bits as nl_optim_update on the
 * CPU (engine/nl-optim.c, built -std=c17, so GCC contracts nothing into an
 * FMA there). nvcc fuses a * b + c into one FMA by default, which rounds
 * once instead of twice; the update is therefore written with the
 * explicitly rounded intrinsics (__fmul_rn ...), which nvcc never fuses,
 * in the CPU's order of operations. */
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <math.h>
#include <string.h>

#include "ops/cuda/nl-cuda.h"

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
    return nl_cuda_copy (c, dst, src[0], (size_t) n * sizeof (float), NL_CUDA_D2D, error);

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

enum Rule {
  RULE_SGD,          /* no momentum */
  RULE_SGD_MOMENTUM,
  RULE_SGD_NESTEROV,
  RULE_ADAM,         /* Adam and AdamW (decay != 1, wd 0) */
  RULE_RMSPROP,
  RULE_ADAGRAD,
};

/* Everything the update needs, precomputed on the host exactly as
 * nl_optim_update does; passed by value. */
struct OptimArgs {
  float *w;
  const float *g;
  float *s0, *s1, *s2;       /* the states the rule uses, in nl_optim_n_states order */
  const float *gs_dev;       /* NULL or a device float multiplied into gs */
  float gs, clip, wd;        /* preprocessing; clip +inf when off, wd 0 for AdamW */
  float lr, mu, eps;
  float b1, one_b1, b2, one_b2;         /* Adam; one_x = 1.0f - x, as the CPU rounds it */
  float step, inv_sqrt_bc2, decay;      /* Adam */
  float rho, one_rho;                   /* RMSProp */
  bool centered, momentum;              /* RMSProp */
  int rule;
  int64_t n;
};

#define MUL(a, b) __fmul_rn (a, b)
#define ADD(a, b) __fadd_rn (a, b)
#define SUB(a, b) __fsub_rn (a, b)
#define DIV(a, b) __fdiv_rn (a, b)
#define SQRT(a) __fsqrt_rn (a)

/* prep () of nl-optim.c: rescale, clip by compare-select (NaN passes),
 * L2 decay added (even when wd is 0: 0 * Inf is NaN there too). */
__device__ __forceinline__ float
prep (float g, float w, float gs, float clip, float wd)
{
  g = MUL (g, gs);
  g = g > clip ? clip : g;
  g = g < -clip ? -clip : g;
  return ADD (g, MUL (wd, w));
}

/* One kernel for every rule: the switch is on a launch constant, so every
 * thread takes the same branch and each case is a plain streaming loop.
 * Each case mirrors the CPU kernel of the same rule (k_sgd, k_adam,
 * k_rmsprop, k_adagrad) operation by operation. */
__global__ void
k_optim (const OptimArgs a)
{
  const float gs = a.gs_dev ? MUL (a.gs, *a.gs_dev) : a.gs;
  const float clip = a.clip, wd = a.wd, lr = a.lr, mu = a.mu, eps = a.eps;
  float *__restrict__ w = a.w;
  const float *__restrict__ g = a.g;

  switch (a.rule)
    {
    case RULE_SGD:
      GRID_STRIDE (i, a.n)
        w[i] = SUB (w[i], MUL (lr, prep (g[i], w[i], gs, clip, wd)));
      break;
    case RULE_SGD_MOMENTUM:
      GRID_STRIDE (i, a.n)
        {
          float wi = w[i];
          float bi = ADD (MUL (mu, a.s0[i]), prep (g[i], wi, gs, clip, wd));
          a.s0[i] = bi;
          w[i] = SUB (wi, MUL (lr, bi));
        }
      break;
    case RULE_SGD_NESTEROV:
      GRID_STRIDE (i, a.n)
        {
          float wi = w[i];
          float gi = prep (g[i], wi, gs, clip, wd);
          float bi = ADD (MUL (mu, a.s0[i]), gi);
          a.s0[i] = bi;
          w[i] = SUB (wi, MUL (lr, ADD (gi, MUL (mu, bi))));
        }
      break;
    case RULE_ADAM:
      GRID_STRIDE (i, a.n)
        {
          float wi = w[i];
          float gi = prep (g[i], wi, gs, clip, wd);
          float mi = ADD (MUL (a.b1, a.s0[i]), MUL (a.one_b1, gi));
          float vi = ADD (MUL (a.b2, a.s1[i]), MUL (MUL (a.one_b2, gi), gi));
          a.s0[i] = mi;
          a.s1[i] = vi;
          w[i] = SUB (MUL (wi, a.decay), DIV (MUL (a.step, mi), ADD (MUL (SQRT (vi), a.inv_sqrt_bc2), eps)));
        }
      break;
    case RULE_RMSPROP:
      GRID_STRIDE (i, a.n)
        {
          float wi = w[i];
          float gi = prep (g[i], wi, gs, clip, wd);
          float si = ADD (MUL (a.rho, a.s0[i]), MUL (MUL (a.one_rho, gi), gi));
          float den = si;
          a.s0[i] = si;
          if (a.centered)
            {
              float ai = ADD (MUL (a.rho, a.s1[i]), MUL (a.one_rho, gi));
              a.s1[i] = ai;
              den = SUB (si, MUL (ai, ai));
            }
          den = ADD (SQRT (den), eps);
          if (a.momentum)
            {
              float *b = a.centered ? a.s2 : a.s1;
              float bi = ADD (MUL (mu, b[i]), DIV (gi, den));
              b[i] = bi;
              w[i] = SUB (wi, MUL (lr, bi));
            }
          else
            w[i] = SUB (wi, DIV (MUL (lr, gi), den));
        }
      break;
    case RULE_ADAGRAD:
      GRID_STRIDE (i, a.n)
        {
          float wi = w[i];
          float gi = prep (g[i], wi, gs, clip, wd);
          float si = ADD (a.s0[i], MUL (gi, gi));
          a.s0[i] = si;
          w[i] = SUB (wi, DIV (MUL (lr, gi), ADD (SQRT (si), eps)));
        }
      break;
    default:
      break;
    }
}

/* nl_optim_n_states (), which lives in libnlengine: libnlops must link
 * without it (the ops' tests link libnlops alone). The order is the one
 * engine/nl-optim.h documents. */
static int
n_states_of (const NlOptimConfig *cfg)
{
  switch (cfg->kind)
    {
    case NL_OPTIM_SGD:
    case NL_OPTIM_NAG:
      return cfg->momentum != 0;
    case NL_OPTIM_ADAM:
    case NL_OPTIM_ADAMW:
      return 2;
    case NL_OPTIM_RMSPROP:
      return 1 + (cfg->centered != 0) + (cfg->momentum != 0);
    case NL_OPTIM_ADAGRAD:
      return 1;
    case NL_OPTIM_COUNT:
    default:
      return 0;
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
  n_states = n_states_of (cfg);
  g_return_val_if_fail (n_states == 0 || state != NULL, FALSE);
  for (int k = 0; k < n_states; k++)
    g_return_val_if_fail (state[k] != NULL, FALSE);
  if (n == 0)
    return TRUE;

  /* the same values, computed the same way, as nl_optim_update's Job */
  memset (&a, 0, sizeof a);
  a.w = w;
  a.g = g;
  a.s0 = n_states > 0 ? state[0] : NULL;
  a.s1 = n_states > 1 ? state[1] : NULL;
  a.s2 = n_states > 2 ? state[2] : NULL;
  a.gs_dev = grad_scale_dev;
  a.gs = grad_scale;
  a.clip = cfg->clip_gradient > 0 ? cfg->clip_gradient : INFINITY;
  a.wd = cfg->kind == NL_OPTIM_ADAMW ? 0.0f : cfg->wd;
  a.lr = lr;
  a.mu = cfg->momentum;
  a.eps = cfg->epsilon;
  a.n = n;
  switch (cfg->kind)
    {
    case NL_OPTIM_SGD:
    case NL_OPTIM_NAG:
      /* the momentum buffer exists exactly when momentum != 0 */
      a.rule = n_states == 0 ? RULE_SGD
               : (cfg->nesterov || cfg->kind == NL_OPTIM_NAG) ? RULE_SGD_NESTEROV
                                                               : RULE_SGD_MOMENTUM;
      break;
    case NL_OPTIM_ADAM:
    case NL_OPTIM_ADAMW:
      {
        /* double, as on the CPU, then rounded to float once */
        double bc1 = 1.0 - pow ((double) cfg->beta1, (double) t);
        double bc2 = 1.0 - pow ((double) cfg->beta2, (double) t);
        a.b1 = cfg->beta1;
        a.b2 = cfg->beta2;
        a.one_b1 = 1.0f - cfg->beta1;
        a.one_b2 = 1.0f - cfg->beta2;
        a.step = (float) ((double) lr / bc1);
        a.inv_sqrt_bc2 = (float) (1.0 / sqrt (bc2));
        a.decay = cfg->kind == NL_OPTIM_ADAMW ? 1.0f - lr * cfg->wd : 1.0f;
        a.rule = RULE_ADAM;
      }
      break;
    case NL_OPTIM_RMSPROP:
      a.rho = cfg->rho;
      a.one_rho = 1.0f - cfg->rho;
      a.centered = cfg->centered != FALSE;
      a.momentum = cfg->momentum != 0;
      a.rule = RULE_RMSPROP;
      break;
    case NL_OPTIM_ADAGRAD:
      a.rule = RULE_ADAGRAD;
      break;
    case NL_OPTIM_COUNT:
    default:
      g_return_val_if_reached (FALSE);
    }

  if (!enter (c, error))
    return FALSE;
  k_optim<<<blocks_for (n, MAX_BLOCKS), THREADS, 0, stream_of (c)>>> (a);
  return nl_cuda_check_launch ("nl_cuda_optim_update", error);
}
