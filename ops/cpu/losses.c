/* losses.c — the CPU kernels of Gluon's loss blocks as ops:
 * SoftmaxCrossEntropy, SigmoidBinaryCrossEntropy, L2Loss, L1Loss, HuberLoss
 * (definitions: ops/defs/losses.c).
 *
 * Inputs are {pred, label}; the output is one loss per sample, shape (N),
 * averaged over every non-batch element (for SoftmaxCrossEntropy, over the
 * rows of a (N, ..., C) pred). The label never takes a gradient. backward
 * writes d(loss_n)/d(pred) * out_grad[n]; the trainer puts 1/N in out_grad
 * to get the batch mean. */
#include "ops/cpu/nl-cpu-util.h"
#include "ops/nl-losses.h"

#ifdef __AVX2__
#include <immintrin.h>
#endif

/* Sparse labels must be integers in [0, C): checked before any work so a
 * bad batch fails cleanly instead of indexing out of bounds. */
static gboolean
sce_check_labels (const float *z, int64_t rows, int64_t per_sample, int64_t C, GError **error)
{
  for (int64_t r = 0; r < rows; r++)
    {
      float v = z[r];
      if (v >= 0 && v < (float) C && v == floorf (v))
        continue;
      if (per_sample == 1)
        g_set_error (error, NL_OP_ERROR, NL_OP_ERROR_RUNTIME,
                     "SoftmaxCrossEntropy: the label of sample %" G_GINT64_FORMAT " is %g, "
                     "not a class index in 0 .. %" G_GINT64_FORMAT, r, v, C - 1);
      else
        g_set_error (error, NL_OP_ERROR, NL_OP_ERROR_RUNTIME,
                     "SoftmaxCrossEntropy: label %" G_GINT64_FORMAT " of sample %" G_GINT64_FORMAT " is %g, "
                     "not a class index in 0 .. %" G_GINT64_FORMAT, r % per_sample, r / per_sample, v, C - 1);
      return FALSE;
    }
  return TRUE;
}

static inline float
row_max (const float *x, int64_t C)
{
  float m = x[0];
  int64_t j = 1;
#ifdef __AVX2__
  /* 8 lanes: a scalar max is one long dependency chain per row */
  if (C >= 8)
    {
      __m256 v = _mm256_loadu_ps (x);
      __m128 h;
      for (j = 8; j + 8 <= C; j += 8)
        v = _mm256_max_ps (v, _mm256_loadu_ps (x + j));
      h = _mm_max_ps (_mm256_castps256_ps128 (v), _mm256_extractf128_ps (v, 1));
      h = _mm_max_ps (h, _mm_movehl_ps (h, h));
      h = _mm_max_ss (h, _mm_movehdup_ps (h));
      m = _mm_cvtss_f32 (h);
    }
#endif
  for (; j < C; j++)
    m = x[j] > m ? x[j] : m;
  return m;
}

/* Softmax of one row into p (may be NULL); returns log-sum-exp - max. */
static inline float
row_softmax (const float *x, int64_t C, float mx, float *p)
{
  float s = 0;
  if (p)
    {
      float inv;
      for (int64_t j = 0; j < C; j++)
        {
          p[j] = expf (x[j] - mx);
          s += p[j];
        }
      inv = 1.0f / s;
      for (int64_t j = 0; j < C; j++)
        p[j] *= inv;
    }
  else
    for (int64_t j = 0; j < C; j++)
      s += expf (x[j] - mx);
  return logf (s);
}

/* exp (x) for x <= 0 (a logit minus its row max), within ~2 ulp: Cody-Waite
 * reduction and Cephes' degree-5 polynomial. Unlike the libm call it runs
 * 8 lanes at a time, which makes the forward of a (128, 10) batch several
 * times faster. Below -87 it flushes to exp (-87) ~ 1.6e-38 (no denormals);
 * NaN stays NaN. The AVX2 path does the same operations in the same order
 * (no FMA), so a value does not depend on its position in the batch. */
#define EXP_LO -87.0f
#define EXP_LOG2E 1.44269504088896341f
#define EXP_ROUND 12582912.0f /* 1.5 * 2^23: adding it rounds to an integer */
#define EXP_C1 0.693359375f
#define EXP_C2 -2.12194440e-4f
static const float exp_poly[6] = { 1.9875691500e-4f, 1.3981999507e-3f, 8.3334519073e-3f,
                                   4.1665795894e-2f, 1.6666665459e-1f, 5.0000001201e-1f };

static inline float
exp_nonpos (float x)
{
  union { float f; int32_t i; } scale;
  float n, r, y;

  if (x != x)
    return x; /* NaN in, NaN out (and no out-of-range int conversion below) */
  x = x < EXP_LO ? EXP_LO : x;
  n = (x * EXP_LOG2E + EXP_ROUND) - EXP_ROUND;
  r = x - n * EXP_C1;
  r = r - n * EXP_C2;
  y = exp_poly[0];
  for (int k = 1; k < 6; k++)
    y = y * r + exp_poly[k];
  y = y * r * r + r + 1.0f;
  scale.i = (int32_t) ((uint32_t) ((int32_t) n + 127) << 23);
  return y * scale.f;
}

static void
exp_nonpos_array (float *p, int64_t n)
{
  int64_t i = 0;
#ifdef __AVX2__
  const __m256 lo = _mm256_set1_ps (EXP_LO), log2e = _mm256_set1_ps (EXP_LOG2E);
  const __m256 rnd = _mm256_set1_ps (EXP_ROUND), one = _mm256_set1_ps (1.0f);
  const __m256 c1 = _mm256_set1_ps (EXP_C1), c2 = _mm256_set1_ps (EXP_C2);
  for (; i + 8 <= n; i += 8)
    {
      /* max (lo, x) returns x when x is NaN */
      __m256 x = _mm256_max_ps (lo, _mm256_loadu_ps (p + i));
      __m256 k = _mm256_sub_ps (_mm256_add_ps (_mm256_mul_ps (x, log2e), rnd), rnd);
      __m256 r = _mm256_sub_ps (x, _mm256_mul_ps (k, c1));
      __m256 y = _mm256_set1_ps (exp_poly[0]);
      __m256i e;
      r = _mm256_sub_ps (r, _mm256_mul_ps (k, c2));
      for (int j = 1; j < 6; j++)
        y = _mm256_add_ps (_mm256_mul_ps (y, r), _mm256_set1_ps (exp_poly[j]));
      y = _mm256_add_ps (_mm256_add_ps (_mm256_mul_ps (_mm256_mul_ps (y, r), r), r), one);
      e = _mm256_slli_epi32 (_mm256_add_epi32 (_mm256_cvttps_epi32 (k), _mm256_set1_epi32 (127)), 23);
      _mm256_storeu_ps (p + i, _mm256_mul_ps (y, _mm256_castsi256_ps (e)));
    }
#endif
  for (; i < n; i++)
    p[i] = exp_nonpos (p[i]);
}

/* Samples [n0, n1) from logits: probabilities into p, losses into loss.
 * Per row, -sum_j t_j log softmax (x)_j = sum_j t_j (mx - x_j) + lse sum_j t_j
 * with lse = log sum exp (x - mx): no overflow. Three passes so the
 * exponentials run as one contiguous loop; the first pass, which still has
 * x - mx at hand, adds the label term to loss[n], the last adds lse. */
static void
sce_block_logits (const float *x, const float *z, float *p, float *loss, int64_t n0, int64_t n1,
                  int64_t M, int64_t C, gboolean sparse, float inv_m)
{
  for (int64_t n = n0; n < n1; n++)
    {
      float acc = 0;
      for (int64_t r = n * M; r < (n + 1) * M; r++)
        {
          const float *xr = x + r * C;
          float *pr = p + r * C;
          float mx = row_max (xr, C);
          for (int64_t j = 0; j < C; j++)
            pr[j] = xr[j] - mx;
          if (sparse)
            acc -= pr[(int64_t) z[r]];
          else
            for (int64_t j = 0; j < C; j++)
              acc -= z[r * C + j] * pr[j];
        }
      loss[n] = acc;
    }
  exp_nonpos_array (p + n0 * M * C, (n1 - n0) * M * C);
  for (int64_t n = n0; n < n1; n++)
    {
      float acc = loss[n];
      for (int64_t r = n * M; r < (n + 1) * M; r++)
        {
          float *pr = p + r * C;
          float s = 0, inv, zs = 1;
          for (int64_t j = 0; j < C; j++)
            s += pr[j];
          inv = 1.0f / s;
          for (int64_t j = 0; j < C; j++)
            pr[j] *= inv;
          if (!sparse)
            {
              const float *zr = z + r * C;
              zs = 0;
              for (int64_t j = 0; j < C; j++)
                zs += zr[j];
            }
          acc += logf (s) * zs;
        }
      loss[n] = acc * inv_m;
    }
}

#define SCE_BLOCK 64 /* samples per block: a few KB of probabilities, in L1/L2 */

static gboolean
sce_forward (NlOpCtx *c, GError **error)
{
  const NlTensor *pred = c->in[0];
  int64_t N = pred->shape[0], C = pred->shape[pred->ndim - 1];
  int64_t R = nl_numel (pred) / C, M = R / N;
  const float *x = nl_tensor_f32 (pred), *z = nl_tensor_f32 (c->in[1]);
  float *loss = nl_tensor_f32 (c->out[0]);
  float *prob = c->saved[0] ? nl_tensor_f32 (c->saved[0]) : NULL;
  gboolean sparse = ((const NlSceArgs *) c->args)->sparse_label;
  gboolean logits = !((const NlSceArgs *) c->args)->from_logits;
  float inv_m = 1.0f / (float) M;

  if (sparse && !sce_check_labels (z, R, M, C, error))
    return FALSE;
  if (logits && prob)
    {
#pragma omp parallel for if (R * C > NL_PAR_MIN / 4) schedule (static)
      for (int64_t b = 0; b < N; b += SCE_BLOCK)
        sce_block_logits (x, z, prob, loss, b, MIN (b + SCE_BLOCK, N), M, C, sparse, inv_m);
      return TRUE;
    }
  /* from_logits, or no saved tensor to hold the probabilities */
#pragma omp parallel for if (R * C > NL_PAR_MIN / 4) schedule (static)
  for (int64_t n = 0; n < N; n++)
    {
      float acc = 0;
      for (int64_t r = n * M; r < (n + 1) * M; r++)
        {
          const float *xr = x + r * C;
          if (logits)
            {
              float mx = row_max (xr, C);
              float lse = row_softmax (xr, C, mx, NULL);
              if (sparse)
                acc += (mx - xr[(int64_t) z[r]]) + lse;
              else
                for (int64_t j = 0; j < C; j++)
                  acc += z[r * C + j] * ((mx - xr[j]) + lse);
            }
          else if (sparse)
            acc -= xr[(int64_t) z[r]];
          else
            for (int64_t j = 0; j < C; j++)
              acc -= z[r * C + j] * xr[j];
        }
      loss[n] = acc * inv_m;
    }
  return TRUE;
}

static gboolean
sce_backward (NlOpCtx *c, GError **error)
{
  const NlTensor *pred = c->in[0];
  int64_t N = pred->shape[0], C = pred->shape[pred->ndim - 1];
  int64_t R = nl_numel (pred) / C, M = R / N;
  const float *x = nl_tensor_f32 (pred), *z = nl_tensor_f32 (c->in[1]);
  const float *og = nl_tensor_f32 (c->out_grad[0]);
  const float *prob = c->saved[0] ? nl_tensor_f32 (c->saved[0]) : NULL;
  gboolean sparse = ((const NlSceArgs *) c->args)->sparse_label;
  gboolean logits = !((const NlSceArgs *) c->args)->from_logits;
  float inv_m = 1.0f / (float) M;
  float *dx;

  if (!c->in_grad[0])
    return TRUE;
  dx = nl_tensor_f32 (c->in_grad[0]);
#pragma omp parallel for if (R * C > NL_PAR_MIN / 4) schedule (static)
  for (int64_t r = 0; r < R; r++)
    {
      float g = og[r / M] * inv_m;
      float *gr = dx + r * C;
      const float *zr = z + r * C;
      int64_t y = sparse ? (int64_t) z[r] : -1;

      if (logits)
        {
          const float *p = prob ? prob + r * C : gr;
          if (!prob) /* no saved probabilities: recompute them in place */
            row_softmax (x + r * C, C, row_max (x + r * C, C), gr);
          if (sparse)
            {
              for (int64_t j = 0; j < C; j++)
                gr[j] = p[j] * g;
              if (y >= 0 && y < C)
                gr[y] -= g;
            }
          else
            {
              /* d/dx_j of -sum_k z_k log p_k = p_j * sum_k z_k - z_j */
              float zs = 0;
              for (int64_t j = 0; j < C; j++)
                zs += zr[j];
              for (int64_t j = 0; j < C; j++)
                gr[j] = (p[j] * zs - zr[j]) * g;
            }
        }
      else if (sparse)
        {
          memset (gr, 0, C * sizeof (float));
          if (y >= 0 && y < C)
            gr[y] = -g;
        }
      else
        for (int64_t j = 0; j < C; j++)
          gr[j] = -zr[j] * g;
    }
  return TRUE;
}

static gboolean
el_forward (NlOpCtx *c, ElKind k, float rho)
{
  int64_t N = c->in[0]->shape[0], M = nl_numel (c->in[0]) / N;
  const float *x = nl_tensor_f32 (c->in[0]), *z = nl_tensor_f32 (c->in[1]);
  float *loss = nl_tensor_f32 (c->out[0]);
  float inv_m = 1.0f / (float) M;

#pragma omp parallel for if (N * M > NL_PAR_MIN / 4) schedule (static)
  for (int64_t n = 0; n < N; n++)
    {
      float acc = 0;
      for (int64_t i = n * M; i < (n + 1) * M; i++)
        acc += el_loss (k, x[i], z[i], rho);
      loss[n] = acc * inv_m;
    }
  return TRUE;
}

static gboolean
el_backward (NlOpCtx *c, ElKind k, float rho)
{
  int64_t N = c->in[0]->shape[0], M = nl_numel (c->in[0]) / N;
  const float *x = nl_tensor_f32 (c->in[0]), *z = nl_tensor_f32 (c->in[1]);
  const float *og = nl_tensor_f32 (c->out_grad[0]);
  float inv_m = 1.0f / (float) M;
  float *dx;

  if (!c->in_grad[0])
    return TRUE;
  dx = nl_tensor_f32 (c->in_grad[0]);
#pragma omp parallel for if (N * M > NL_PAR_MIN / 4) schedule (static)
  for (int64_t n = 0; n < N; n++)
    {
      float g = og[n] * inv_m;
      for (int64_t i = n * M; i < (n + 1) * M; i++)
        dx[i] = el_grad (k, x[i], z[i], rho) * g;
    }
  return TRUE;
}

static gboolean
sbce_forward (NlOpCtx *c, GError **error)
{
  return el_forward (c, ((const NlSbceArgs *) c->args)->kind, 0);
}

static gboolean
sbce_backward (NlOpCtx *c, GError **error)
{
  return el_backward (c, ((const NlSbceArgs *) c->args)->kind, 0);
}

static gboolean
l2_forward (NlOpCtx *c, GError **error)
{
  return el_forward (c, EL_L2, 0);
}

static gboolean
l2_backward (NlOpCtx *c, GError **error)
{
  return el_backward (c, EL_L2, 0);
}

static gboolean
l1_forward (NlOpCtx *c, GError **error)
{
  return el_forward (c, EL_L1, 0);
}

static gboolean
l1_backward (NlOpCtx *c, GError **error)
{
  return el_backward (c, EL_L1, 0);
}

static gboolean
huber_forward (NlOpCtx *c, GError **error)
{
  return el_forward (c, EL_HUBER, ((const NlHuberArgs *) c->args)->rho);
}

static gboolean
huber_backward (NlOpCtx *c, GError **error)
{
  return el_backward (c, EL_HUBER, ((const NlHuberArgs *) c->args)->rho);
}

const NlOpKernels nl_op_cpu_softmax_cross_entropy = { .forward = sce_forward, .backward = sce_backward };
const NlOpKernels nl_op_cpu_sigmoid_binary_cross_entropy = { .forward = sbce_forward, .backward = sbce_backward };
const NlOpKernels nl_op_cpu_l2_loss = { .forward = l2_forward, .backward = l2_backward };
const NlOpKernels nl_op_cpu_l1_loss = { .forward = l1_forward, .backward = l1_backward };
const NlOpKernels nl_op_cpu_huber_loss = { .forward = huber_forward, .backward = huber_backward };
