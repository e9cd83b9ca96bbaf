/* conv2d.cu — Conv2D on CUDA through cuDNN's legacy convolution API (still
 * shipped in cuDNN 9's libcudnn_cnn), the same cross-correlation as
 * ops/cpu/conv2d.c: NCHW data, OIHW weights (O, C / groups, kh, kw), zero
 * padding, stride, dilation, groups, optional bias.
 *
 * Algorithms are chosen once per node and input shape, cached with the
 * descriptors in *ctx->state. With ctx->autotune (--cudnn-autotune on, the
 * default) the candidates are timed by cudnnFind*AlgorithmEx within
 * kMaxWorkspace on the first use of a shape and the fastest is kept in
 * core/nl-algo-cache.h (in memory and on disk, keyed by device, cuDNN
 * version and shape), so later processes skip the timing; this
 * synchronises, so it must happen before a step is captured as a CUDA graph
 * (the program captures only after warm-up steps). Without it they come
 * from cudnnGet*Algorithm_v7 heuristics (no benchmarking run, nothing
 * synchronises), deterministic ones preferred. ctx->deterministic
 * (--deterministic) admits deterministic algorithms only, either way. Only
 * GEMM-style algorithms are taken: FFT and Winograd transform the operands
 * and lose accuracy against the CPU's direct sums.
 *
 * fp32: CUDNN_FMA_MATH. On Ampere and later CUDNN_DEFAULT_MATH permits TF32
 * tensor cores (10-bit mantissas), which would not match the CPU.
 *
 * bf16 / fp16 autocast (ctx->precision): x and w (backward: dy too) are
 * rounded to the half type into float32 buffers from the device allocator and convolved with
 * TF32 tensor cores allowed. Every bf16 or fp16 value is exactly a TF32
 * value, so the products are exact and accumulate in float32: precisely
 * the CPU's emulation (round the operands, multiply in float32), with an
 * unrounded float32 output, which half-typed cuDNN tensors could not give.
 * The bias and its gradient stay float32 throughout. */
#include <climits>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include "ops/cuda/nl-cuda-kernel.cuh"
#include "core/cuda/nl-cuda.h"
#include "core/nl-algo-cache.h"
#include "ops/nl-conv2d.h"
#include "ops/nl-op-registry.h"

namespace {

/* Algorithms wanting more scratch than this are passed over: the context's
 * workspace grows to the largest request and never shrinks. */
const size_t kMaxWorkspace = (size_t) 256 << 20;
const int kPlans = 4; /* shapes remembered per node (training and evaluation batches) */

/* dst = src rounded to bf16 or fp16 (round to nearest even, fp16 overflows
 * to Inf) and back: what nl_cuda_round_half does in place. */
__global__ void
round_half_kernel (const float *__restrict__ src, float *__restrict__ dst, int64_t n, int fp16)
{
  for (int64_t i = (int64_t) blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (int64_t) gridDim.x * blockDim.x)
    dst[i] = fp16 ? __half2float (__float2half_rn (src[i])) : __bfloat162float (__float2bfloat16_rn (src[i]));
}

typedef NlConv2dGeom Geom;

/* Descriptors and chosen algorithms for one input shape and math mode. */
struct Plan {
  bool used;
  bool rounded; /* bf16/fp16 autocast: TF32 allowed on pre-rounded operands */
  int64_t n, c, h, w;
  cudnnTensorDescriptor_t xd, yd, bd;
  cudnnFilterDescriptor_t wd;
  cudnnConvolutionDescriptor_t cd;
  cudnnConvolutionFwdAlgo_t fwd;
  cudnnConvolutionBwdDataAlgo_t bwd_data;
  cudnnConvolutionBwdFilterAlgo_t bwd_filter;
  cudnnMathType_t fwd_math, data_math, filter_math;
  size_t fwd_ws, data_ws, filter_ws;
  bool have_data, have_filter; /* backward algorithms are chosen on first use */
  bool autotune, deterministic; /* how they are chosen (NlOpCtx) */
  char *tune_key;               /* the shape's words in the autotune cache (g_free) */
};

struct ConvState {
  Plan plans[kPlans];
  int next; /* slot replaced when a new shape comes and all are in use */
};

void
destroy_plan (Plan *p)
{
  if (p->xd)
    cudnnDestroyTensorDescriptor (p->xd);
  if (p->yd)
    cudnnDestroyTensorDescriptor (p->yd);
  if (p->bd)
    cudnnDestroyTensorDescriptor (p->bd);
  if (p->wd)
    cudnnDestroyFilterDescriptor (p->wd);
  if (p->cd)
    cudnnDestroyConvolutionDescriptor (p->cd);
  g_free (p->tune_key);
  *p = Plan ();
}

void
conv_free_state (void *state)
{
  ConvState *s = (ConvState *) state;
  if (!s)
    return;
  for (int i = 0; i < kPlans; i++)
    destroy_plan (&s->plans[i]);
  delete s;
}

gboolean
geom_init (const NlOpCtx *c, const NlTensor *x, const NlTensor *y, Geom *g, GError **error)
{
  nl_conv2d_geom_init (g, (const NlConv2dArgs *) c->args, x->shape[0], x->shape[1], x->shape[2], x->shape[3]);
  /* the graph gave y the shape the geometry works out */
  g_return_val_if_fail (g->oh == y->shape[2] && g->ow == y->shape[3], FALSE);
  /* cuDNN's descriptors take ints and its tensors at most 2^31 - 1 elements */
  const int64_t big[] = { g->n * g->c * g->h * g->w, g->n * g->o * g->oh * g->ow, g->o * (g->c / g->groups) * g->kh * g->kw,
                          g->ph, g->pw, g->sh, g->sw, g->dh, g->dw };
  for (size_t i = 0; i < G_N_ELEMENTS (big); i++)
    if (big[i] > INT_MAX)
      {
        g_set_error (error, NL_OP_ERROR, NL_OP_ERROR_RUNTIME,
                     "Conv2D on CUDA: a tensor or parameter exceeds cuDNN's limit of 2^31 - 1"
                     " (input (%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT ", %" G_GINT64_FORMAT ", %" G_GINT64_FORMAT
                     ")); use a smaller batch",
                     g->n, g->c, g->h, g->w);
        return FALSE;
      }
  return TRUE;
}

/* GEMM-style algorithms only (see the top of the file). */
bool
fwd_allowed (cudnnConvolutionFwdAlgo_t a)
{
  return a == CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM || a == CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM
         || a == CUDNN_CONVOLUTION_FWD_ALGO_GEMM || a == CUDNN_CONVOLUTION_FWD_ALGO_DIRECT;
}

bool
data_allowed (cudnnConvolutionBwdDataAlgo_t a)
{
  return a == CUDNN_CONVOLUTION_BWD_DATA_ALGO_0 || a == CUDNN_CONVOLUTION_BWD_DATA_ALGO_1;
}

bool
filter_allowed (cudnnConvolutionBwdFilterAlgo_t a)
{
  return a == CUDNN_CONVOLUTION_BWD_FILTER_ALGO_0 || a == CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1
         || a == CUDNN_CONVOLUTION_BWD_FILTER_ALGO_3;
}

/* The first usable heuristic result, set up on the descriptor: succeeded,
 * an allowed algorithm, scratch within bounds (asked of cuDNN under the
 * math type it will run with), never a conversion to fp16 (bf16 values
 * do not survive it), no tensor-core math for fp32; deterministic ones
 * first. fp32 runs with FMA math whatever the heuristic rated; autocast
 * with the math type the algorithm was rated with, as cuDNN asks. When
 * nothing qualifies, the fallback (GEMM-style, runs every configuration). */
template <typename Perf, typename Algo, typename WsFn>
gboolean
choose (cudnnConvolutionDescriptor_t cd, const Perf *perf, int n, bool rounded, bool det_only, bool (*allowed) (Algo),
        Algo fallback, WsFn ws_size, Algo *algo, cudnnMathType_t *math, size_t *ws, const char *what, GError **error)
{
  const cudnnMathType_t base = rounded ? CUDNN_TENSOR_OP_MATH : CUDNN_FMA_MATH;
  /* the fallbacks are deterministic: --deterministic skips only pass 1 */
  for (int pass = 0; pass < (det_only ? 1 : 2); pass++)
    for (int i = 0; i < n; i++)
      {
        const Perf &r = perf[i];
        if (r.status != CUDNN_STATUS_SUCCESS || !allowed (r.algo) || r.mathType == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION
            || (!rounded && r.mathType == CUDNN_TENSOR_OP_MATH)
            || (pass == 0 && r.determinism != CUDNN_DETERMINISTIC))
          continue;
        const cudnnMathType_t m = rounded ? r.mathType : CUDNN_FMA_MATH;
        size_t need = 0;
        if (cudnnSetConvolutionMathType (cd, m) != CUDNN_STATUS_SUCCESS || ws_size (r.algo, &need) != CUDNN_STATUS_SUCCESS
            || need > kMaxWorkspace)
          continue;
        *algo = r.algo;
        *math = m;
        *ws = need;
        return TRUE;
      }
  *algo = fallback;
  *math = base;
  return nl_cudnn_check (cudnnSetConvolutionMathType (cd, base), "Conv2D math type", error)
         && nl_cudnn_check (ws_size (fallback, ws), what, error);
}

/* ---- autotuning (ctx->autotune) ---- */

const int kMaxAlgos = 16; /* above every cuDNN *_ALGO_COUNT */
static_assert (CUDNN_CONVOLUTION_FWD_ALGO_COUNT <= kMaxAlgos && CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT <= kMaxAlgos
                 && CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT <= kMaxAlgos,
               "perf arrays too small");

/* The shape's words in the autotune cache: everything an algorithm's
 * speed and validity depend on besides the device and cuDNN. */
char *
tune_key_of (const Geom *g, bool rounded, NlPrecision precision)
{
  return g_strdup_printf ("x%lldx%lldx%lldx%lld w%lldx%lldx%lldx%lld g%lld p%lld,%lld s%lld,%lld d%lld,%lld %s",
                          (long long) g->n, (long long) g->c, (long long) g->h, (long long) g->w, (long long) g->o,
                          (long long) (g->c / g->groups), (long long) g->kh, (long long) g->kw, (long long) g->groups,
                          (long long) g->ph, (long long) g->pw, (long long) g->sh, (long long) g->sw,
                          (long long) g->dh, (long long) g->dw,
                          rounded ? (precision == NL_PRECISION_F16 ? "fp16" : "bf16") : "fp32-fma");
}

/* algo under math set on cd, when cuDNN takes it within kMaxWorkspace */
template <typename Algo, typename WsFn>
bool
use_choice (cudnnConvolutionDescriptor_t cd, Algo a, cudnnMathType_t m, WsFn ws_size, Algo *algo,
            cudnnMathType_t *math, size_t *ws)
{
  size_t need = 0;
  if (cudnnSetConvolutionMathType (cd, m) != CUDNN_STATUS_SUCCESS || ws_size (a, &need) != CUDNN_STATUS_SUCCESS
      || need > kMaxWorkspace)
    return false;
  *algo = a;
  *math = m;
  *ws = need;
  return true;
}

/* The math types choose () admits: never a conversion to fp16, no tensor
 * cores for fp32 */
bool
math_allowed (cudnnMathType_t m, bool rounded)
{
  return m == CUDNN_FMA_MATH || (rounded && (m == CUDNN_TENSOR_OP_MATH || m == CUDNN_DEFAULT_MATH));
}

/* The fastest usable algorithm that find (cudnnFind*AlgorithmEx, writing
 * out_bytes of scratch output, within kMaxWorkspace) times, or the cache's
 * record of it from an earlier run; the timing's choice is recorded.
 * *tuned stays false (TRUE returned) when no scratch memory could be had
 * or nothing timed qualifies: the caller takes the heuristic's choice. */
template <typename Perf, typename Algo, typename FindFn, typename WsFn>
gboolean
tune (NlCudaCtx *dev, Plan *p, NlAlgoOp op, bool (*allowed) (Algo), FindFn find, WsFn ws_size, size_t out_bytes,
      Algo *algo, cudnnMathType_t *math, size_t *ws, bool *tuned, GError **error)
{
  NlCudaDeviceInfo info;
  *tuned = false;
  if (!nl_cuda_device_info (nl_cuda_ctx_index (dev), &info, error))
    return FALSE;
  const NlAlgoKey key = { info.name, (int) cudnnGetVersion (), op, p->tune_key, p->deterministic };
  NlAlgoCache *cache = nl_algo_cache_default ();
  NlAlgoChoice ch;
  if (nl_algo_cache_lookup (cache, &key, &ch) && allowed ((Algo) ch.algo)
      && math_allowed ((cudnnMathType_t) ch.math_type, p->rounded)
      && use_choice (p->cd, (Algo) ch.algo, (cudnnMathType_t) ch.math_type, ws_size, algo, math, ws))
    return (*tuned = true), TRUE;

  /* the timing runs write a scratch output, never a live tensor */
  GError *local = NULL;
  void *out = nl_cuda_alloc (dev, MAX (out_bytes, 4), "Conv2D autotuning (output)", &local);
  void *scratch = out ? nl_cuda_alloc (dev, kMaxWorkspace, "Conv2D autotuning (workspace)", &local) : NULL;
  if (!scratch)
    {
      g_clear_error (&local);
      if (out)
        nl_cuda_release (dev, out);
      return TRUE;
    }
  Perf perf[kMaxAlgos];
  int got = 0;
  const gboolean ok
    = nl_cudnn_check (cudnnSetConvolutionMathType (p->cd, p->rounded ? CUDNN_TENSOR_OP_MATH : CUDNN_FMA_MATH),
                      "Conv2D math type", error)
      && nl_cudnn_check (find (out, scratch, kMaxWorkspace, perf, &got), "Conv2D autotuning (cudnnFind*AlgorithmEx)",
                         error);
  nl_cuda_release (dev, scratch);
  nl_cuda_release (dev, out);
  if (!ok)
    return FALSE;
  for (int i = 0; i < got; i++) /* fastest first */
    {
      const Perf &r = perf[i];
      const cudnnMathType_t m = p->rounded ? r.mathType : CUDNN_FMA_MATH;
      if (r.status != CUDNN_STATUS_SUCCESS || !allowed (r.algo) || r.memory > kMaxWorkspace
          || !math_allowed (r.mathType, p->rounded) || (p->deterministic && r.determinism != CUDNN_DETERMINISTIC)
          || !use_choice (p->cd, r.algo, m, ws_size, algo, math, ws))
        continue;
      const NlAlgoChoice rec = { (int) r.algo, (int) m, (guint64) *ws, (double) r.time };
      nl_algo_cache_store (cache, &key, &rec);
      *tuned = true;
      return TRUE;
    }
  return TRUE;
}

gboolean
plan_setup (Plan *p, const Geom *g, bool rounded, NlOpCtx *ctx, cudnnHandle_t h, GError **error)
{
  if ((!p->xd && !nl_cudnn_check (cudnnCreateTensorDescriptor (&p->xd), "Conv2D descriptor", error))
      || (!p->yd && !nl_cudnn_check (cudnnCreateTensorDescriptor (&p->yd), "Conv2D descriptor", error))
      || (!p->bd && !nl_cudnn_check (cudnnCreateTensorDescriptor (&p->bd), "Conv2D descriptor", error))
      || (!p->wd && !nl_cudnn_check (cudnnCreateFilterDescriptor (&p->wd), "Conv2D descriptor", error))
      || (!p->cd && !nl_cudnn_check (cudnnCreateConvolutionDescriptor (&p->cd), "Conv2D descriptor", error)))
    return FALSE;
  p->used = false; /* until fully set up */
  if (!nl_cudnn_check (cudnnSetTensor4dDescriptor (p->xd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, (int) g->n, (int) g->c,
                                                   (int) g->h, (int) g->w),
                       "Conv2D input descriptor", error)
      || !nl_cudnn_check (cudnnSetTensor4dDescriptor (p->yd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, (int) g->n,
                                                      (int) g->o, (int) g->oh, (int) g->ow),
                          "Conv2D output descriptor", error)
      || !nl_cudnn_check (cudnnSetTensor4dDescriptor (p->bd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, (int) g->o, 1, 1),
                          "Conv2D bias descriptor", error)
      || !nl_cudnn_check (cudnnSetFilter4dDescriptor (p->wd, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, (int) g->o,
                                                      (int) (g->c / g->groups), (int) g->kh, (int) g->kw),
                          "Conv2D weight descriptor", error)
      /* cross-correlation (no kernel flip), as the CPU's im2col + sgemm */
      || !nl_cudnn_check (cudnnSetConvolution2dDescriptor (p->cd, (int) g->ph, (int) g->pw, (int) g->sh, (int) g->sw,
                                                           (int) g->dh, (int) g->dw, CUDNN_CROSS_CORRELATION,
                                                           CUDNN_DATA_FLOAT),
                          "Conv2D convolution descriptor", error)
      || !nl_cudnn_check (cudnnSetConvolutionGroupCount (p->cd, (int) g->groups), "Conv2D group count", error)
      || !nl_cudnn_check (cudnnSetConvolutionMathType (p->cd, rounded ? CUDNN_TENSOR_OP_MATH : CUDNN_FMA_MATH),
                          "Conv2D math type", error))
    return FALSE;

  /* the CPU's infer_shape made the output; cuDNN must agree on its size */
  int on, oc, oh, ow;
  if (!nl_cudnn_check (cudnnGetConvolution2dForwardOutputDim (p->cd, p->xd, p->wd, &on, &oc, &oh, &ow),
                       "Conv2D output size", error))
    return FALSE;
  if (on != g->n || oc != g->o || oh != g->oh || ow != g->ow)
    {
      g_set_error (error, NL_OP_ERROR, NL_OP_ERROR_RUNTIME,
                   "Conv2D on CUDA: cuDNN computes an output of (%d, %d, %d, %d), the graph allocated (%" G_GINT64_FORMAT
                   ", %" G_GINT64_FORMAT ", %" G_GINT64_FORMAT ", %" G_GINT64_FORMAT ")",
                   on, oc, oh, ow, g->n, g->o, g->oh, g->ow);
      return FALSE;
    }

  p->rounded = rounded;
  p->autotune = ctx->autotune;
  p->deterministic = ctx->deterministic;
  g_free (p->tune_key);
  p->tune_key = tune_key_of (g, rounded, ctx->precision);
  auto fwd_ws = [&] (cudnnConvolutionFwdAlgo_t a, size_t *sz) {
    return cudnnGetConvolutionForwardWorkspaceSize (h, p->xd, p->wd, p->cd, p->yd, a, sz);
  };
  bool tuned = false;
  if (p->autotune)
    {
      const float *x = nl_tensor_f32 (ctx->in[0]), *w = nl_tensor_f32 (ctx->in[1]);
      auto find = [&] (void *y, void *ws, size_t ws_bytes, cudnnConvolutionFwdAlgoPerf_t *perf, int *got) {
        return cudnnFindConvolutionForwardAlgorithmEx (h, p->xd, x, p->wd, w, p->cd, p->yd, y,
                                                       CUDNN_CONVOLUTION_FWD_ALGO_COUNT, got, perf, ws, ws_bytes);
      };
      if (!tune<cudnnConvolutionFwdAlgoPerf_t> (cuda_ctx (ctx), p, NL_ALGO_OP_FWD, fwd_allowed, find, fwd_ws,
                                                (size_t) (g->n * g->o * g->oh * g->ow) * sizeof (float), &p->fwd,
                                                &p->fwd_math, &p->fwd_ws, &tuned, error))
        return FALSE;
    }
  cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
  int got = 0;
  if (!tuned
      && (!nl_cudnn_check (cudnnSetConvolutionMathType (p->cd, rounded ? CUDNN_TENSOR_OP_MATH : CUDNN_FMA_MATH),
                           "Conv2D math type", error)
          || !nl_cudnn_check (cudnnGetConvolutionForwardAlgorithm_v7 (h, p->xd, p->wd, p->cd, p->yd,
                                                                      CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &got, perf),
                              "Conv2D forward algorithm", error)
          || !choose (p->cd, perf, got, rounded, p->deterministic, fwd_allowed, CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM,
                      fwd_ws, &p->fwd, &p->fwd_math, &p->fwd_ws, "Conv2D forward workspace size", error)))
    return FALSE;
  p->have_data = p->have_filter = false;
  p->n = g->n;
  p->c = g->c;
  p->h = g->h;
  p->w = g->w;
  p->used = true;
  return TRUE;
}

Plan *
get_plan (NlOpCtx *ctx, const Geom *g, bool rounded, cudnnHandle_t h, GError **error)
{
  ConvState *s = (ConvState *) *ctx->state;
  if (!s)
    *ctx->state = s = new ConvState ();
  for (int i = 0; i < kPlans; i++)
    {
      Plan *p = &s->plans[i];
      if (p->used && p->rounded == rounded && p->n == g->n && p->c == g->c && p->h == g->h && p->w == g->w)
        return p;
    }
  Plan *p = &s->plans[s->next];
  s->next = (s->next + 1) % kPlans;
  return plan_setup (p, g, rounded, ctx, h, error) ? p : NULL;
}

/* The backward-data algorithm: timed (autotune) or the heuristic's. */
gboolean
plan_data (Plan *p, const Geom *g, NlOpCtx *ctx, cudnnHandle_t h, GError **error)
{
  auto data_ws = [&] (cudnnConvolutionBwdDataAlgo_t a, size_t *sz) {
    return cudnnGetConvolutionBackwardDataWorkspaceSize (h, p->wd, p->yd, p->cd, p->xd, a, sz);
  };
  bool tuned = false;
  if (p->autotune)
    {
      const float *w = nl_tensor_f32 (ctx->in[1]), *dy = nl_tensor_f32 (ctx->out_grad[0]);
      auto find = [&] (void *dx, void *ws, size_t ws_bytes, cudnnConvolutionBwdDataAlgoPerf_t *perf, int *got) {
        return cudnnFindConvolutionBackwardDataAlgorithmEx (h, p->wd, w, p->yd, dy, p->cd, p->xd, dx,
                                                            CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, got, perf, ws,
                                                            ws_bytes);
      };
      if (!tune<cudnnConvolutionBwdDataAlgoPerf_t> (cuda_ctx (ctx), p, NL_ALGO_OP_BWD_DATA, data_allowed, find, data_ws,
                                                    (size_t) (g->n * g->c * g->h * g->w) * sizeof (float),
                                                    &p->bwd_data, &p->data_math, &p->data_ws, &tuned, error))
        return FALSE;
    }
  cudnnConvolutionBwdDataAlgoPerf_t perf[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
  int got = 0;
  if (!tuned
      && (!nl_cudnn_check (cudnnSetConvolutionMathType (p->cd, p->rounded ? CUDNN_TENSOR_OP_MATH : CUDNN_FMA_MATH),
                           "Conv2D math type", error)
          || !nl_cudnn_check (cudnnGetConvolutionBackwardDataAlgorithm_v7 (h, p->wd, p->yd, p->cd, p->xd,
                                                                           CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, &got,
                                                                           perf),
                              "Conv2D backward-data algorithm", error)
          || !choose (p->cd, perf, got, p->rounded, p->deterministic, data_allowed, CUDNN_CONVOLUTION_BWD_DATA_ALGO_1,
                      data_ws, &p->bwd_data, &p->data_math, &p->data_ws, "Conv2D backward-data workspace size", error)))
    return FALSE;
  p->have_data = true;
  return TRUE;
}

/* The backward-filter algorithm: timed (autotune) or the heuristic's. */
gboolean
plan_filter (Plan *p, const Geom *g, NlOpCtx *ctx, cudnnHandle_t h, GError **error)
{
  auto filter_ws = [&] (cudnnConvolutionBwdFilterAlgo_t a, size_t *sz) {
    return cudnnGetConvolutionBackwardFilterWorkspaceSize (h, p->xd, p->yd, p->cd, p->wd, a, sz);
  };
  bool tuned = false;
  if (p->autotune)
    {
      const float *x = nl_tensor_f32 (ctx->in[0]), *dy = nl_tensor_f32 (ctx->out_grad[0]);
      auto find = [&] (void *dw, void *ws, size_t ws_bytes, cudnnConvolutionBwdFilterAlgoPerf_t *perf, int *got) {
        return cudnnFindConvolutionBackwardFilterAlgorithmEx (h, p->xd, x, p->yd, dy, p->cd, p->wd, dw,
                                                              CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT, got, perf, ws,
                                                              ws_bytes);
      };
      const size_t w_bytes = (size_t) (g->o * (g->c / g->groups) * g->kh * g->kw) * sizeof (float);
      if (!tune<cudnnConvolutionBwdFilterAlgoPerf_t> (cuda_ctx (ctx), p, NL_ALGO_OP_BWD_FILTER, filter_allowed, find,
                                                      filter_ws, w_bytes, &p->bwd_filter, &p->filter_math,
                                                      &p->filter_ws, &tuned, error))
        return FALSE;
    }
  cudnnConvolutionBwdFilterAlgoPerf_t perf[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
  int got = 0;
  if (!tuned
      && (!nl_cudnn_check (cudnnSetConvolutionMathType (p->cd, p->rounded ? CUDNN_TENSOR_OP_MATH : CUDNN_FMA_MATH),
                           "Conv2D math type", error)
          || !nl_cudnn_check (cudnnGetConvolutionBackwardFilterAlgorithm_v7 (h, p->xd, p->yd, p->cd, p->wd,
                                                                             CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT,
                                                                             &got, perf),
                              "Conv2D backward-filter algorithm", error)
          || !choose (p->cd, perf, got, p->rounded, p->deterministic, filter_allowed,
                      CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1, filter_ws, &p->bwd_filter, &p->filter_math, &p->filter_ws,
                      "Conv2D backward-filter workspace size", error)))
    return FALSE;
  p->have_filter = true;
  return TRUE;
}

bool
is_rounded (const NlOpCtx *c)
{
  return c->precision == NL_PRECISION_BF16 || c->precision == NL_PRECISION_F16;
}

/* A copy of t, from the device allocator, rounded to the autocast's half type. */
float *
rounded_copy (NlOpCtx *c, const NlTensor *t, const char *what, GError **error)
{
  NlCudaCtx *dev = cuda_ctx (c);
  int64_t n = nl_tensor_numel (t);
  float *r = (float *) nl_cuda_alloc (dev, (size_t) n * sizeof (float), what, error);
  if (!r)
    return NULL;
  round_half_kernel<<<grid_for (n), kThreads, 0, (cudaStream_t) nl_cuda_ctx_stream (dev)>>> (
    nl_tensor_f32 (t), r, n, c->precision == NL_PRECISION_F16);
  if (!nl_cuda_check_launch ("Conv2D round to half", error))
    {
      nl_cuda_release (dev, r);
      return NULL;
    }
  return r;
}

/* Allocator buffers released when a call returns, on every path: the allocator is
 * stream-ordered, so the kernels already queued still read them safely. */
struct Scratch {
  NlCudaCtx *dev;
  float *buf[3] = { nullptr, nullptr, nullptr };
  explicit Scratch (NlCudaCtx *d) : dev (d) {}
  ~Scratch ()
  {
    for (float *b : buf)
      if (b)
        nl_cuda_release (dev, b);
  }
};

gboolean
conv_forward (NlOpCtx *ctx, GError **error)
{
  NlCudaCtx *dev = cuda_ctx (ctx);
  const bool rounded = is_rounded (ctx);
  const float one = 1.0f, zero = 0.0f;
  Geom g;

  if (!nl_cuda_ctx_enter (dev, error) || !geom_init (ctx, ctx->in[0], ctx->out[0], &g, error))
    return FALSE;
  if (nl_tensor_numel (ctx->out[0]) == 0 || nl_tensor_numel (ctx->in[0]) == 0)
    return TRUE; /* an empty batch: nothing to compute, and cuDNN rejects zero sizes */

  cudnnHandle_t h = (cudnnHandle_t) nl_cuda_ctx_cudnn (dev);
  Plan *p = get_plan (ctx, &g, rounded, h, error);
  if (!p)
    return FALSE;

  Scratch s (dev);
  const float *x = nl_tensor_f32 (ctx->in[0]), *w = nl_tensor_f32 (ctx->in[1]);
  if (rounded)
    {
      if (!(s.buf[0] = rounded_copy (ctx, ctx->in[0], "Conv2D forward (data rounded to half)", error))
          || !(s.buf[1] = rounded_copy (ctx, ctx->in[1], "Conv2D forward (weight rounded to half)", error)))
        return FALSE;
      x = s.buf[0];
      w = s.buf[1];
    }
  void *ws = NULL;
  if (p->fwd_ws > 0 && !(ws = nl_cuda_ctx_workspace (dev, p->fwd_ws, error)))
    return FALSE;
  if (!nl_cudnn_check (cudnnSetConvolutionMathType (p->cd, p->fwd_math), "Conv2D math type", error)
      || !nl_cudnn_check (cudnnConvolutionForward (h, &one, p->xd, x, p->wd, w, p->cd, p->fwd, ws, p->fwd_ws, &zero,
                                                   p->yd, nl_tensor_f32 (ctx->out[0])),
                          "Conv2D forward (cudnnConvolutionForward)", error))
    return FALSE;
  if (ctx->in[2]
      && !nl_cudnn_check (cudnnAddTensor (h, &one, p->bd, nl_tensor_f32 (ctx->in[2]), &one, p->yd,
                                          nl_tensor_f32 (ctx->out[0])),
                          "Conv2D forward bias (cudnnAddTensor)", error))
    return FALSE;
  return TRUE;
}

gboolean
conv_backward (NlOpCtx *ctx, GError **error)
{
  NlCudaCtx *dev = cuda_ctx (ctx);
  const bool rounded = is_rounded (ctx);
  const float one = 1.0f, zero = 0.0f;
  float *dx = ctx->in_grad[0] ? nl_tensor_f32 (ctx->in_grad[0]) : NULL;
  float *dw = ctx->in_grad[1] ? nl_tensor_f32 (ctx->in_grad[1]) : NULL;
  float *db = ctx->in[2] && ctx->in_grad[2] ? nl_tensor_f32 (ctx->in_grad[2]) : NULL;
  Geom g;

  if (!dx && !dw && !db)
    return TRUE;
  if (!nl_cuda_ctx_enter (dev, error) || !geom_init (ctx, ctx->in[0], ctx->out_grad[0], &g, error))
    return FALSE;
  if (nl_tensor_numel (ctx->out_grad[0]) == 0 || nl_tensor_numel (ctx->in[0]) == 0)
    {
      /* an empty batch: d(weight) and d(bias) are empty sums, dx has no elements */
      if (dw && !nl_cuda_memset0 (dev, dw, (size_t) nl_tensor_numel (ctx->in_grad[1]) * sizeof (float), error))
        return FALSE;
      if (db && !nl_cuda_memset0 (dev, db, (size_t) nl_tensor_numel (ctx->in_grad[2]) * sizeof (float), error))
        return FALSE;
      return TRUE;
    }

  cudnnHandle_t h = (cudnnHandle_t) nl_cuda_ctx_cudnn (dev);
  Plan *p = get_plan (ctx, &g, rounded, h, error);
  if (!p || (dx && !p->have_data && !plan_data (p, &g, ctx, h, error))
      || (dw && !p->have_filter && !plan_filter (p, &g, ctx, h, error)))
    return FALSE;

  Scratch s (dev);
  const float *x = nl_tensor_f32 (ctx->in[0]), *w = nl_tensor_f32 (ctx->in[1]);
  const float *dy = nl_tensor_f32 (ctx->out_grad[0]), *dyc = dy;
  if (rounded && (dx || dw))
    {
      /* the gradient is a matrix operand too: rounded like x and w */
      if (!(s.buf[0] = rounded_copy (ctx, ctx->out_grad[0], "Conv2D backward (gradient rounded to half)", error)))
        return FALSE;
      dyc = s.buf[0];
      if (dx && !(s.buf[1] = rounded_copy (ctx, ctx->in[1], "Conv2D backward (weight rounded to half)", error)))
        return FALSE;
      if (dw && !(s.buf[2] = rounded_copy (ctx, ctx->in[0], "Conv2D backward (data rounded to half)", error)))
        return FALSE;
      if (s.buf[1])
        w = s.buf[1];
      if (s.buf[2])
        x = s.buf[2];
    }

  /* one request for both: a second, larger one could move the first */
  size_t need = MAX (dx ? p->data_ws : 0, dw ? p->filter_ws : 0);
  void *ws = NULL;
  if (need > 0 && !(ws = nl_cuda_ctx_workspace (dev, need, error)))
    return FALSE;

  if (dx
      && (!nl_cudnn_check (cudnnSetConvolutionMathType (p->cd, p->data_math), "Conv2D math type", error)
          || !nl_cudnn_check (cudnnConvolutionBackwardData (h, &one, p->wd, w, p->yd, dyc, p->cd, p->bwd_data, ws,
                                                            p->data_ws, &zero, p->xd, dx),
                              "Conv2D backward data (cudnnConvolutionBackwardData)", error)))
    return FALSE;
  if (dw
      && (!nl_cudnn_check (cudnnSetConvolutionMathType (p->cd, p->filter_math), "Conv2D math type", error)
          || !nl_cudnn_check (cudnnConvolutionBackwardFilter (h, &one, p->xd, x, p->yd, dyc, p->cd, p->bwd_filter, ws,
                                                              p->filter_ws, &zero, p->wd, dw),
                              "Conv2D backward weight (cudnnConvolutionBackwardFilter)", error)))
    return FALSE;
  /* the bias gradient sums the float32 gradient, unrounded, as on the CPU */
  if (db
      && !nl_cudnn_check (cudnnConvolutionBackwardBias (h, &one, p->yd, dy, &zero, p->bd, db),
                          "Conv2D backward bias (cudnnConvolutionBackwardBias)", error))
    return FALSE;
  return TRUE;
}

} // namespace

extern "C" const NlOpKernels nl_op_cuda_conv2d = { conv_forward, conv_backward, conv_free_state };
