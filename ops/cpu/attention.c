/* attention.c — the CPU kernels of MultiHeadAttention (definition:
 * ops/defs/attention.c).
 *
 * Forward: the projections Q = x Wq^T + bq, K and V from the memory (the
 * query itself for self-attention) are one sgemm each over every row of the
 * batch, threaded by oneDNN. Each (sample, head) pair is then one unit of
 * work, one unit per OpenMP thread (inside the parallel region dnnl_sgemm
 * stays on its thread): scores = Q_h K_h^T / sqrt(ks), masked (keys past the
 * sample's length, later steps when causal), a softmax with the maximum
 * subtracted, dropout on the weights, then context_h = P V_h written into the
 * head's columns of the joined context. One last sgemm applies out_weight.
 * Padded query rows get zero weights and a zero output.
 *
 * The probabilities (B, heads, T, S) before dropout, and Q, K, V and the
 * context are saved for backward. The dropout mask is not stored: it is
 * drawn again from the counter-based stream keyed by (seed, step, index in
 * the probabilities), like Dropout's. Each thread has one T x S scratch for
 * the dropped weights and their gradient. */
#include <omp.h>

#include "ops/cpu/nl-cpu-util.h"
#include "ops/cpu/nl-gemm.h"
#include "ops/nl-attention.h"

typedef struct {
  void *buf; /* per-thread T x S rows, then backward's gradients */
  size_t cap;
} AttState;

static void
free_state (void *state)
{
  AttState *s = state;
  g_free (s->buf);
  g_free (s);
}

static float *
scratch (NlOpCtx *c, int64_t nfloats)
{
  AttState *s = *c->state;
  if (!s)
    *c->state = s = g_new0 (AttState, 1);
  return nl_scratch (&s->buf, &s->cap, (size_t) MAX (nfloats, 1) * sizeof (float));
}

static NlAttentionGeom
geom_of (const NlOpCtx *c)
{
  const NlAttentionArgs *a = c->args;
  const NlTensor *q = c->in[0], *m = c->n_data > 1 ? c->in[1] : c->in[0];
  NlAttentionGeom g = { .B = q->shape[0], .T = q->shape[1], .S = m->shape[1], .C = q->shape[2],
                        .Cm = m->shape[2], .heads = a->heads };
  const NlTensor *wq = c->in[c->n_data + ATT_Q_WEIGHT], *wo = c->in[c->n_data + ATT_OUT_WEIGHT];
  g.hk = wq->shape[0];
  g.ks = g.hk / g.heads;
  g.units = wo->shape[0];
  g.self = c->n_data < 2;
  g.mask_memory = g.self || g.S == g.T;
  return g;
}

static const float *
weight (const NlOpCtx *c, int k)
{
  const NlTensor *t = c->in[c->n_data + k];
  return t ? nl_tensor_f32 (t) : NULL;
}

/* out (rows, n) = x (rows, k) W^T + b */
static gboolean
project (const float *x, int64_t rows, int64_t k, const float *w, const float *b, int64_t n, float *out)
{
  if (b)
    for (int64_t r = 0; r < rows; r++)
      memcpy (out + r * n, b, n * sizeof (float));
  return nl_sgemm ('N', 'T', rows, n, k, 1.0f, x, k, w, k, b ? 1.0f : 0.0f, out, n);
}

/* sum over rows of g (rows, n) into db (n) */
static void
column_sums (const float *g, int64_t rows, int64_t n, float *db)
{
  memset (db, 0, n * sizeof (float));
  for (int64_t r = 0; r < rows; r++)
    for (int64_t j = 0; j < n; j++)
      db[j] += g[r * n + j];
}

/* Row t of one unit's scores, in place: masked, then a stable softmax.
 * Both masks hide a suffix of the keys, so the visible ones are [0, lim):
 * plain loops the compiler vectorises. A row with every key masked (an
 * empty sample) is all zeros. */
static void
softmax_row (float *p, int64_t t, int64_t S, int64_t len, gboolean mask_keys, gboolean causal)
{
  int64_t lim = MIN (S, MIN (mask_keys ? len : S, causal ? t + 1 : S));
  float m = -INFINITY, sum = 0.0f;
  for (int64_t s = 0; s < lim; s++)
    m = fmaxf (m, p[s]);
#pragma omp simd reduction (+ : sum)
  for (int64_t s = 0; s < lim; s++)
    {
      p[s] = expf (p[s] - m);
      sum += p[s];
    }
  for (int64_t s = 0; s < lim; s++)
    p[s] /= sum;
  if (lim < S)
    memset (p + lim, 0, (S - lim) * sizeof (float));
}

/* d[i] = p[i] * the unit's dropout mask (0 or 1 / (1 - rate)) */
static void
apply_dropout (const NlOpCtx *c, float rate, int64_t base, const float *p, float *d, int64_t n)
{
  float keep = 1.0f / (1.0f - rate);
  for (int64_t i = 0; i < n; i++)
    d[i] = nl_rand_uniform (c->seed, c->step, (guint64) (base + i)) >= rate ? p[i] * keep : 0.0f;
}

/* One (sample, head) unit of forward: probabilities into P, the head's
 * context into ctx. work: T x S floats of this thread's own. */
static gboolean
forward_unit (const NlOpCtx *c, const NlAttentionGeom *g, int64_t unit, const float *Q, const float *K,
              const float *V, float *probs, float *ctx, float *work)
{
  const NlAttentionArgs *a = c->args;
  int64_t b = unit / g->heads, h = unit % g->heads, T = g->T, S = g->S, hk = g->hk;
  int64_t len = nl_sequence_length (c->host_lengths, b, T), rows = c->host_lengths ? len : T;
  const float *qh = Q + b * T * hk + h * g->ks, *kh = K + b * S * hk + h * g->ks, *vh = V + b * S * hk + h * g->ks;
  float *P = probs + unit * T * S, *ch = ctx + b * T * hk + h * g->ks;
  const float *use = P;

  if (!nl_sgemm ('N', 'T', T, S, g->ks, 1.0f / sqrtf ((float) g->ks), qh, hk, kh, hk, 0.0f, P, S))
    return FALSE;
  for (int64_t t = 0; t < T; t++)
    if (t < rows)
      softmax_row (P + t * S, t, S, len, g->mask_memory && c->host_lengths, a->causal);
    else /* a padded query: no weights, zero context */
      memset (P + t * S, 0, S * sizeof (float));
  if (c->training && a->dropout > 0.0f)
    {
      apply_dropout (c, a->dropout, unit * T * S, P, work, T * S);
      use = work;
    }
  return nl_sgemm ('N', 'N', T, g->ks, S, 1.0f, use, S, vh, hk, 0.0f, ch, hk);
}

/* Q, K, V, context of saved[ATT_SAVED_PROJ] */
static void
proj_views (const NlOpCtx *c, const NlAttentionGeom *g, float **Q, float **K, float **V, float **ctx)
{
  float *base = nl_tensor_f32 (c->saved[ATT_SAVED_PROJ]);
  *Q = base;
  *K = *Q + g->B * g->T * g->hk;
  *V = *K + g->B * g->S * g->hk;
  *ctx = *V + g->B * g->S * g->hk;
}

static gboolean
forward (NlOpCtx *c, GError **error)
{
  NlAttentionGeom g = geom_of (c);
  const float *x = nl_tensor_f32 (c->in[0]), *mem = g.self ? x : nl_tensor_f32 (c->in[1]);
  float *y = nl_tensor_f32 (c->out[0]), *probs = nl_tensor_f32 (c->saved[ATT_SAVED_PROBS]);
  float *Q, *K, *V, *ctx, *work;
  int nt = nl_threads_get ();
  gboolean ok;

  proj_views (c, &g, &Q, &K, &V, &ctx);
  ok = project (x, g.B * g.T, g.C, weight (c, ATT_Q_WEIGHT), weight (c, ATT_Q_BIAS), g.hk, Q)
       && project (mem, g.B * g.S, g.Cm, weight (c, ATT_K_WEIGHT), weight (c, ATT_K_BIAS), g.hk, K)
       && project (mem, g.B * g.S, g.Cm, weight (c, ATT_V_WEIGHT), weight (c, ATT_V_BIAS), g.hk, V);
  if (!ok)
    return nl_dnnl_check (dnnl_out_of_memory, "MultiHeadAttention projections", error);
  work = scratch (c, (int64_t) nt * g.T * g.S);
#pragma omp parallel num_threads (nt) reduction (&& : ok)
  {
    float *mine = work + (int64_t) omp_get_thread_num () * g.T * g.S;
#pragma omp for schedule (dynamic, 1)
    for (int64_t u = 0; u < g.B * g.heads; u++)
      ok = forward_unit (c, &g, u, Q, K, V, probs, ctx, mine) && ok;
  }
  ok = ok && project (ctx, g.B * g.T, g.hk, weight (c, ATT_OUT_WEIGHT), weight (c, ATT_OUT_BIAS), g.units, y);
  if (!ok)
    return nl_dnnl_check (dnnl_out_of_memory, "MultiHeadAttention forward sgemm", error);
  for (int64_t b = 0; c->host_lengths && b < g.B; b++)
    for (int64_t t = nl_sequence_length (c->host_lengths, b, g.T); t < g.T; t++)
      memset (y + (b * g.T + t) * g.units, 0, g.units * sizeof (float));
  return TRUE;
}

/* One unit of backward: from the head's columns of dctx, its columns of
 * dQ, dK, dV. work: T x S floats of this thread's own. */
static gboolean
backward_unit (const NlOpCtx *c, const NlAttentionGeom *g, int64_t unit, const float *Q, const float *K,
               const float *V, const float *dctx, float *dQ, float *dK, float *dV, float *work)
{
  const NlAttentionArgs *a = c->args;
  int64_t b = unit / g->heads, h = unit % g->heads, T = g->T, S = g->S, hk = g->hk, ks = g->ks;
  int64_t off_q = b * T * hk + h * ks, off_k = b * S * hk + h * ks;
  const float *P = nl_tensor_f32 (c->saved[ATT_SAVED_PROBS]) + unit * T * S;
  gboolean drop = c->training && a->dropout > 0.0f;
  float keep = drop ? 1.0f / (1.0f - a->dropout) : 1.0f, scale = 1.0f / sqrtf ((float) ks);

  if (drop)
    apply_dropout (c, a->dropout, unit * T * S, P, work, T * S);
  /* dV_h = P_dropped^T dctx_h */
  if (!nl_sgemm ('T', 'N', S, ks, T, 1.0f, drop ? work : P, S, dctx + off_q, hk, 0.0f, dV + off_k, hk))
    return FALSE;
  /* d(dropped P) = dctx_h V_h^T, then through the mask and the softmax */
  if (!nl_sgemm ('N', 'T', T, S, ks, 1.0f, dctx + off_q, hk, V + off_k, hk, 0.0f, work, S))
    return FALSE;
  for (int64_t t = 0; t < T; t++)
    {
      float *d = work + t * S;
      const float *p = P + t * S;
      float dot = 0.0f;
      if (drop)
        for (int64_t s = 0; s < S; s++)
          d[s] = nl_rand_uniform (c->seed, c->step, (guint64) (unit * T * S + t * S + s)) >= a->dropout
                   ? d[s] * keep : 0.0f;
      for (int64_t s = 0; s < S; s++)
        dot += d[s] * p[s];
      for (int64_t s = 0; s < S; s++)
        d[s] = p[s] * (d[s] - dot) * scale;
    }
  /* dQ_h = dScores K_h, dK_h = dScores^T Q_h */
  return nl_sgemm ('N', 'N', T, ks, S, 1.0f, work, S, K + off_k, hk, 0.0f, dQ + off_q, hk)
         && nl_sgemm ('T', 'N', S, ks, T, 1.0f, work, S, Q + off_q, hk, 0.0f, dK + off_k, hk);
}

/* The gradients of one projection out = x W^T + b from dout: dW, db, and
 * dx (beta 1: added to what is there). */
static gboolean
project_backward (const NlOpCtx *c, int k_w, int k_b, const float *x, int64_t rows, int64_t k, const float *dout,
                  int64_t n, float *dx, float beta)
{
  NlTensor *dw = c->in_grad[c->n_data + k_w], *db = c->in_grad[c->n_data + k_b];
  if (dw && !nl_sgemm ('T', 'N', n, k, rows, 1.0f, dout, n, x, k, 0.0f, nl_tensor_f32 (dw), k))
    return FALSE;
  if (db && c->in[c->n_data + k_b])
    column_sums (dout, rows, n, nl_tensor_f32 (db));
  return !dx || nl_sgemm ('N', 'N', rows, k, n, 1.0f, dout, n, weight (c, k_w), k, beta, dx, k);
}

static gboolean
backward (NlOpCtx *c, GError **error)
{
  NlAttentionGeom g = geom_of (c);
  const float *x = nl_tensor_f32 (c->in[0]), *mem = g.self ? x : nl_tensor_f32 (c->in[1]);
  float *dx = c->in_grad[0] ? nl_tensor_f32 (c->in_grad[0]) : NULL;
  float *dm = !g.self && c->in_grad[1] ? nl_tensor_f32 (c->in_grad[1]) : NULL;
  int64_t nq = g.B * g.T * g.hk, nk = g.B * g.S * g.hk, ny = g.B * g.T * g.units;
  int nt = nl_threads_get ();
  float *Q, *K, *V, *ctx, *work, *dy, *dctx, *dQ, *dK, *dV;
  gboolean ok;

  proj_views (c, &g, &Q, &K, &V, &ctx);
  work = scratch (c, (int64_t) nt * g.T * g.S + ny + 2 * nq + 2 * nk);
  dy = work + (int64_t) nt * g.T * g.S;
  dctx = dy + ny;
  dQ = dctx + nq;
  dK = dQ + nq;
  dV = dK + nk;
  /* padded query rows were written as constants: their gradient stops */
  memcpy (dy, nl_tensor_f32 (c->out_grad[0]), ny * sizeof (float));
  for (int64_t b = 0; c->host_lengths && b < g.B; b++)
    for (int64_t t = nl_sequence_length (c->host_lengths, b, g.T); t < g.T; t++)
      memset (dy + (b * g.T + t) * g.units, 0, g.units * sizeof (float));
  ok = project_backward (c, ATT_OUT_WEIGHT, ATT_OUT_BIAS, ctx, g.B * g.T, g.hk, dy, g.units, dctx, 0.0f);
#pragma omp parallel num_threads (nt) reduction (&& : ok)
  {
    float *mine = work + (int64_t) omp_get_thread_num () * g.T * g.S;
#pragma omp for schedule (dynamic, 1)
    for (int64_t u = 0; u < g.B * g.heads; u++)
      ok = ok && backward_unit (c, &g, u, Q, K, V, dctx, dQ, dK, dV, mine);
  }
  /* self-attention: x takes the gradients of all three projections */
  ok = ok && project_backward (c, ATT_Q_WEIGHT, ATT_Q_BIAS, x, g.B * g.T, g.C, dQ, g.hk, dx, 0.0f)
       && project_backward (c, ATT_K_WEIGHT, ATT_K_BIAS, mem, g.B * g.S, g.Cm, dK, g.hk, g.self ? dx : dm,
                            g.self ? 1.0f : 0.0f)
       && project_backward (c, ATT_V_WEIGHT, ATT_V_BIAS, mem, g.B * g.S, g.Cm, dV, g.hk, g.self ? dx : dm, 1.0f);
  return ok || nl_dnnl_check (dnnl_out_of_memory, "MultiHeadAttention backward sgemm", error);
}

const NlOpKernels nl_op_cpu_multi_head_attention = { .forward = forward, .backward = backward,
                                                     .free_state = free_state };
