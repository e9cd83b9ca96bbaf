/* attention.cu — MultiHeadAttention on CUDA, the computation of
 * ops/cpu/attention.c: the four projections as sgemms (biases first, the
 * product added onto them), per head one strided-batched sgemm over the
 * samples for the scores, the context and each gradient product
 * (nl-cuda-gemm.cuh), and row kernels for the masked stable softmax and its
 * backward (one thread group per row of scores, nl-cuda-kernel.cuh's
 * group_reduce). Dropout on the weights draws the CPU's mask
 * (nl-cuda-rand.cuh, keyed by the index in the probabilities; backward
 * draws it again). The saved
 * tensors have the CPU's layout. Scratch comes from the device allocator
 * and goes back at the end of each call (the allocator is stream-ordered). */
#include <cuda_runtime.h>
#include <math.h>

#include "ops/cuda/nl-cuda-gemm.cuh"
#include "ops/cuda/nl-cuda-kernel.cuh"
#include "ops/cuda/nl-cuda-rand.cuh"
#include "ops/nl-attention.h"

namespace {

typedef NlCudaBlasEnv Env;

/* Where the masks come from, for the row kernels. */
struct Masks
{
  const float *lengths; /* device, NULL: full length */
  int64_t T, S, heads;
  int mask_keys, causal;
  float rate;           /* dropout on the weights; 0: none */
  unsigned long long key;
};

__global__ void
bias_rows_kernel (const float *b, float *y, int64_t rows, int64_t n)
{
  GRID_STRIDE (i, rows * n) y[i] = b[i % n];
}

__global__ void
ones_kernel (float *x, int64_t n)
{
  GRID_STRIDE (i, n) x[i] = 1.0f;
}

/* rows of y (B, T, n) at padded steps to 0; src != y: copy the rest */
__global__ void
mask_rows_kernel (const float *src, float *y, const float *lengths, int64_t B, int64_t T, int64_t n)
{
  GRID_STRIDE (i, B * T * n)
  {
    int64_t bt = i / n, b = bt / T, t = bt % T;
    y[i] = t >= nl_sequence_length (lengths, b, T) ? 0.0f : src[i];
  }
}

/* One row of scores (unit, t) per group of G threads: masked, stable
 * softmax into P (saved), dropped copy into D when dropout is on. */
template <int G>
__global__ void
softmax_kernel (float *P, float *D, Masks m, int64_t rows)
{
  ROW_LOOP (G, r, rows)
  {
    int64_t unit = r / m.T, t = r % m.T, b = unit / m.heads, S = m.S;
    int64_t len = nl_sequence_length (m.lengths, b, m.T);
    int mask_keys = m.mask_keys && m.lengths;
    bool pad_row = m.lengths && t >= len;
    float *p = P + r * S, mx = -INFINITY, sum = 0.0f;
    int lane = threadIdx.x % G;

    for (int64_t s = lane; s < S; s += G)
      if (!nl_attention_masked (t, s, len, mask_keys, m.causal))
        mx = fmaxf (mx, p[s]);
    mx = group_reduce<G> (mx, Max ());
    for (int64_t s = lane; s < S; s += G)
      {
        float e = pad_row || mx == -INFINITY || nl_attention_masked (t, s, len, mask_keys, m.causal)
                    ? 0.0f : expf (p[s] - mx);
        p[s] = e;
        sum += e;
      }
    sum = group_reduce<G> (sum, Sum ());
    for (int64_t s = lane; s < S; s += G)
      {
        float v = sum > 0.0f ? p[s] / sum : 0.0f;
        p[s] = v;
        if (D)
          D[r * S + s] = rand_uniform (m.key, (unsigned long long) (r * S + s)) >= m.rate ? v * (1.0f / (1.0f - m.rate))
                                                                                         : 0.0f;
      }
  }
}

/* d (the gradient of the dropped weights) in place to the scores' gradient:
 * through the mask, then P * (d - sum (d * P)) * scale. */
template <int G>
__global__ void
softmax_backward_kernel (const float *P, float *d, Masks m, float scale, int64_t rows)
{
  ROW_LOOP (G, r, rows)
  {
    int64_t S = m.S;
    const float *p = P + r * S;
    float *g = d + r * S, dot = 0.0f;
    int lane = threadIdx.x % G;

    for (int64_t s = lane; s < S; s += G)
      {
        float v = g[s];
        if (m.rate > 0.0f)
          v = rand_uniform (m.key, (unsigned long long) (r * S + s)) >= m.rate ? v * (1.0f / (1.0f - m.rate)) : 0.0f;
        g[s] = v;
        dot += v * p[s];
      }
    dot = group_reduce<G> (dot, Sum ());
    for (int64_t s = lane; s < S; s += G)
      g[s] = p[s] * (g[s] - dot) * scale;
  }
}

template <template <int> class K, typename... A>
gboolean
launch_rows (const Env *e, int64_t rows, int64_t len, const char *what, GError **error, A... args)
{
  int g = group_for (len);
  if (rows == 0)
    return TRUE;
  if (g == 1)
    K<1>::run (row_blocks (rows, 1), e->stream, args..., rows);
  else if (g == 32)
    K<32>::run (row_blocks (rows, 32), e->stream, args..., rows);
  else
    K<kThreads>::run (row_blocks (rows, kThreads), e->stream, args..., rows);
  return nl_cuda_check_launch (what, error);
}

template <int G> struct SoftmaxK
{
  static void run (unsigned int blocks, cudaStream_t s, float *P, float *D, Masks m, int64_t rows)
  {
    softmax_kernel<G><<<blocks, kThreads, 0, s>>> (P, D, m, rows);
  }
};

template <int G> struct SoftmaxBackK
{
  static void run (unsigned int blocks, cudaStream_t s, const float *P, float *d, Masks m, float scale, int64_t rows)
  {
    softmax_backward_kernel<G><<<blocks, kThreads, 0, s>>> (P, d, m, scale, rows);
  }
};

NlAttentionGeom
geom_of (const NlOpCtx *c)
{
  const NlAttentionArgs *a = (const NlAttentionArgs *) c->args;
  const NlTensor *q = c->in[0], *m = c->n_data > 1 ? c->in[1] : c->in[0];
  NlAttentionGeom g = {};
  g.B = q->shape[0];
  g.T = q->shape[1];
  g.S = m->shape[1];
  g.C = q->shape[2];
  g.Cm = m->shape[2];
  g.heads = a->heads;
  g.hk = c->in[c->n_data + ATT_Q_WEIGHT]->shape[0];
  g.ks = g.hk / g.heads;
  g.units = c->in[c->n_data + ATT_OUT_WEIGHT]->shape[0];
  g.self = c->n_data < 2;
  g.mask_memory = g.self || g.S == g.T;
  return g;
}

const float *
weight (const NlOpCtx *c, int k)
{
  const NlTensor *t = c->in[c->n_data + k];
  return t ? nl_tensor_f32 (t) : NULL;
}

Masks
masks_of (const NlOpCtx *c, const NlAttentionGeom *g)
{
  const NlAttentionArgs *a = (const NlAttentionArgs *) c->args;
  Masks m;
  m.lengths = c->lengths ? nl_tensor_f32 (c->lengths) : NULL;
  m.T = g->T;
  m.S = g->S;
  m.heads = g->heads;
  m.mask_keys = g->mask_memory;
  m.causal = a->causal;
  m.rate = c->training ? a->dropout : 0.0f;
  m.key = rand_key ((unsigned long long) c->seed, (unsigned long long) c->step);
  return m;
}

/* out (rows, n) = x (rows, k) W^T + b */
gboolean
project (const Env *e, const float *x, int64_t rows, int64_t k, const float *w, const float *b, int64_t n, float *out,
         GError **error)
{
  if (b && rows > 0)
    {
      bias_rows_kernel<<<grid_for (rows * n), kThreads, 0, e->stream>>> (b, out, rows, n);
      if (!nl_cuda_check_launch ("MultiHeadAttention bias", error))
        return FALSE;
    }
  return gemm_rm (e->blas, 'N', 'T', rows, n, k, 1.0f, x, k, 0, w, k, 0, b ? 1.0f : 0.0f, out, n, 0, 1,
                  "MultiHeadAttention projection", error);
}

void
proj_views (const NlOpCtx *c, const NlAttentionGeom *g, float **Q, float **K, float **V, float **ctx)
{
  float *base = nl_tensor_f32 (c->saved[ATT_SAVED_PROJ]);
  *Q = base;
  *K = *Q + g->B * g->T * g->hk;
  *V = *K + g->B * g->S * g->hk;
  *ctx = *V + g->B * g->S * g->hk;
}

gboolean
forward (NlOpCtx *c, GError **error)
{
  NlAttentionGeom g = geom_of (c);
  Masks m = masks_of (c, &g);
  const float *x = nl_tensor_f32 (c->in[0]), *mem = g.self ? x : nl_tensor_f32 (c->in[1]);
  float *probs = nl_tensor_f32 (c->saved[ATT_SAVED_PROBS]), *y = nl_tensor_f32 (c->out[0]);
  float *Q, *K, *V, *ctx, *drop = NULL;
  int64_t TS = g.T * g.S, rows = g.B * g.heads * g.T;
  float scale = 1.0f / sqrtf ((float) g.ks);
  gboolean ok;
  Env e;

  if (!enter_blas (c, &e, error))
    return FALSE;
  if (g.B == 0 || g.T == 0)
    return TRUE;
  proj_views (c, &g, &Q, &K, &V, &ctx);
  ok = project (&e, x, g.B * g.T, g.C, weight (c, ATT_Q_WEIGHT), weight (c, ATT_Q_BIAS), g.hk, Q, error)
       && project (&e, mem, g.B * g.S, g.Cm, weight (c, ATT_K_WEIGHT), weight (c, ATT_K_BIAS), g.hk, K, error)
       && project (&e, mem, g.B * g.S, g.Cm, weight (c, ATT_V_WEIGHT), weight (c, ATT_V_BIAS), g.hk, V, error);
  /* scores of head h for every sample: Q_h K_h^T * scale into (b, h) */
  for (int64_t h = 0; ok && h < g.heads; h++)
    ok = gemm_rm (e.blas, 'N', 'T', g.T, g.S, g.ks, scale, Q + h * g.ks, g.hk, g.T * g.hk, K + h * g.ks, g.hk,
                  g.S * g.hk, 0.0f, probs + h * TS, g.S, g.heads * TS, g.B, "MultiHeadAttention scores", error);
  if (ok && m.rate > 0.0f && !(drop = (float *) nl_cuda_alloc (e.dev, (size_t) rows * g.S * sizeof (float),
                                                               "MultiHeadAttention dropout", error)))
    return FALSE;
  ok = ok && launch_rows<SoftmaxK> (&e, rows, g.S, "MultiHeadAttention softmax", error, probs, drop, m);
  for (int64_t h = 0; ok && h < g.heads; h++)
    ok = gemm_rm (e.blas, 'N', 'N', g.T, g.ks, g.S, 1.0f, (drop ? drop : probs) + h * TS, g.S, g.heads * TS,
                  V + h * g.ks, g.hk, g.S * g.hk, 0.0f, ctx + h * g.ks, g.hk, g.T * g.hk, g.B,
                  "MultiHeadAttention context", error);
  if (drop)
    nl_cuda_release (e.dev, drop);
  ok = ok && project (&e, ctx, g.B * g.T, g.hk, weight (c, ATT_OUT_WEIGHT), weight (c, ATT_OUT_BIAS), g.units, y,
                      error);
  if (ok && m.lengths)
    {
      mask_rows_kernel<<<grid_for (g.B * g.T * g.units), kThreads, 0, e.stream>>> (y, y, m.lengths, g.B, g.T,
                                                                                  g.units);
      ok = nl_cuda_check_launch ("MultiHeadAttention padded rows", error);
    }
  return ok;
}

/* The gradients of out = x W^T + b from dout: dW, db (ones: rows of 1),
 * and dx (beta 1: added onto it). */
gboolean
project_backward (const Env *e, const NlOpCtx *c, int k_w, int k_b, const float *x, int64_t rows, int64_t k,
                  const float *dout, int64_t n, float *dx, float beta, const float *ones, GError **error)
{
  NlTensor *dw = c->in_grad[c->n_data + k_w], *db = c->in_grad[c->n_data + k_b];
  const char *what = "MultiHeadAttention backward";
  if (dw && !gemm_rm (e->blas, 'T', 'N', n, k, rows, 1.0f, dout, n, 0, x, k, 0, 0.0f, nl_tensor_f32 (dw), k, 0, 1,
                      what, error))
    return FALSE;
  /* db (1, n) = ones (1, rows) dout (rows, n) */
  if (db && c->in[c->n_data + k_b]
      && !gemm_rm (e->blas, 'N', 'N', 1, n, rows, 1.0f, ones, rows, 0, dout, n, 0, 0.0f, nl_tensor_f32 (db), n, 0, 1,
                   what, error))
    return FALSE;
  return !dx || gemm_rm (e->blas, 'N', 'N', rows, k, n, 1.0f, dout, n, 0, weight (c, k_w), k, 0, beta, dx, k, 0, 1,
                         what, error);
}

/* Per head: dV_h = P_dropped^T dctx_h, dP = dctx_h V_h^T, through the
 * softmax, dQ_h = dS K_h, dK_h = dS^T Q_h. */
gboolean
heads_backward (const Env *e, const NlOpCtx *c, const NlAttentionGeom *g, const float *Q, const float *K,
                const float *V, const float *dctx, float *dQ, float *dK, float *dV, float *dP, float *drop,
                GError **error)
{
  Masks m = masks_of (c, g);
  const float *probs = nl_tensor_f32 (c->saved[ATT_SAVED_PROBS]);
  int64_t TS = g->T * g->S, hk = g->hk, ks = g->ks, rows = g->B * g->heads * g->T;
  float scale = 1.0f / sqrtf ((float) ks);
  const char *what = "MultiHeadAttention backward";
  gboolean ok = TRUE;

  for (int64_t h = 0; ok && h < g->heads; h++)
    ok = gemm_rm (e->blas, 'T', 'N', g->S, ks, g->T, 1.0f, (drop ? drop : probs) + h * TS, g->S, g->heads * TS,
                  dctx + h * ks, hk, g->T * hk, 0.0f, dV + h * ks, hk, g->S * hk, g->B, what, error)
         && gemm_rm (e->blas, 'N', 'T', g->T, g->S, ks, 1.0f, dctx + h * ks, hk, g->T * hk, V + h * ks, hk, g->S * hk,
                     0.0f, dP + h * TS, g->S, g->heads * TS, g->B, what, error);
  ok = ok && launch_rows<SoftmaxBackK> (e, rows, g->S, what, error, probs, dP, m, scale);
  for (int64_t h = 0; ok && h < g->heads; h++)
    ok = gemm_rm (e->blas, 'N', 'N', g->T, ks, g->S, 1.0f, dP + h * TS, g->S, g->heads * TS, K + h * ks, hk,
                  g->S * hk, 0.0f, dQ + h * ks, hk, g->T * hk, g->B, what, error)
         && gemm_rm (e->blas, 'T', 'N', g->S, ks, g->T, 1.0f, dP + h * TS, g->S, g->heads * TS, Q + h * ks, hk,
                     g->T * hk, 0.0f, dK + h * ks, hk, g->S * hk, g->B, what, error);
  return ok;
}

__global__ void
redrop_kernel (const float *P, float *D, int64_t n, unsigned long long key, float rate)
{
  GRID_STRIDE (i, n) D[i] = rand_uniform (key, (unsigned long long) i) >= rate ? P[i] * (1.0f / (1.0f - rate)) : 0.0f;
}

gboolean
backward (NlOpCtx *c, GError **error)
{
  NlAttentionGeom g = geom_of (c);
  Masks m = masks_of (c, &g);
  const float *x = nl_tensor_f32 (c->in[0]), *mem = g.self ? x : nl_tensor_f32 (c->in[1]);
  float *dx = c->in_grad[0] ? nl_tensor_f32 (c->in_grad[0]) : NULL;
  float *dm = !g.self && c->in_grad[1] ? nl_tensor_f32 (c->in_grad[1]) : NULL;
  int64_t nq = g.B * g.T * g.hk, nk = g.B * g.S * g.hk, ny = g.B * g.T * g.units, np = g.B * g.heads * g.T * g.S;
  int64_t nones = MAX (g.B * g.T, g.B * g.S), total = ny + 2 * nq + 2 * nk + np + nones + (m.rate > 0 ? np : 0);
  float *Q, *K, *V, *ctx, *work, *dy, *dctx, *dQ, *dK, *dV, *dP, *ones, *drop;
  gboolean ok;
  Env e;

  if (!enter_blas (c, &e, error))
    return FALSE;
  if (g.B == 0 || g.T == 0)
    return TRUE;
  proj_views (c, &g, &Q, &K, &V, &ctx);
  if (!(work = (float *) nl_cuda_alloc (e.dev, (size_t) total * sizeof (float), "MultiHeadAttention backward",
                                        error)))
    return FALSE;
  dy = work;
  dctx = dy + ny;
  dQ = dctx + nq;
  dK = dQ + nq;
  dV = dK + nk;
  dP = dV + nk;
  ones = dP + np;
  drop = m.rate > 0 ? ones + nones : NULL;
  /* padded query rows were written as constants: their gradient stops */
  mask_rows_kernel<<<grid_for (ny), kThreads, 0, e.stream>>> (nl_tensor_f32 (c->out_grad[0]), dy, m.lengths, g.B,
                                                              g.T, g.units);
  ones_kernel<<<grid_for (nones), kThreads, 0, e.stream>>> (ones, nones);
  if (drop)
    redrop_kernel<<<grid_for (np), kThreads, 0, e.stream>>> (nl_tensor_f32 (c->saved[ATT_SAVED_PROBS]), drop, np,
                                                             m.key, m.rate);
  ok = nl_cuda_check_launch ("MultiHeadAttention backward", error)
       && project_backward (&e, c, ATT_OUT_WEIGHT, ATT_OUT_BIAS, ctx, g.B * g.T, g.hk, dy, g.units, dctx, 0.0f, ones,
                            error)
       && heads_backward (&e, c, &g, Q, K, V, dctx, dQ, dK, dV, dP, drop, error)
       /* self-attention: x takes the gradients of all three projections */
       && project_backward (&e, c, ATT_Q_WEIGHT, ATT_Q_BIAS, x, g.B * g.T, g.C, dQ, g.hk, dx, 0.0f, ones, error)
       && project_backward (&e, c, ATT_K_WEIGHT, ATT_K_BIAS, mem, g.B * g.S, g.Cm, dK, g.hk, g.self ? dx : dm,
                            g.self ? 1.0f : 0.0f, ones, error)
       && project_backward (&e, c, ATT_V_WEIGHT, ATT_V_BIAS, mem, g.B * g.S, g.Cm, dV, g.hk, g.self ? dx : dm, 1.0f,
                            ones, error);
  nl_cuda_release (e.dev, work);
  return ok;
}

} // namespace

extern "C" const NlOpKernels nl_op_cuda_multi_head_attention = { forward, backward, NULL };
