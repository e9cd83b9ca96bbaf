/* pool2d.c — the CPU kernels of MaxPool2D, AvgPool2D and GlobalAvgPool2D
 * over NCHW input (definitions: ops/defs/pool2d.c).
 *
 * Plain C with OpenMP over the N*C planes, SIMD for the common 2x2 stride-2
 * case: on NCHW data oneDNN 2.6's pooling is ~10x slower (measured on
 * (128, 20, 24, 24), 2 threads: 3.5 ms forward against 0.3 ms here). Window arithmetic follows PyTorch: output size
 * floor/ceil((H + 2p - k) / s) + 1, and in ceil_mode a window that would
 * start in the right padding is dropped. MaxPool keeps the argmax of every
 * window (as a float plane index, exact below 2^24) in a saved tensor, so
 * backward needs neither the input nor the output. */
#include "ops/cpu/nl-cpu-util.h"
#include "ops/nl-pool2d.h"

typedef NlPool2dGeom Geom;

/* Geometry from the input and output tensors. Backward passes the
 * gradient tensors instead: the op declares it needs neither data input
 * nor output, so those may be gone by then. */
static Geom
geom_of (const NlOpCtx *c, const NlTensor *x, const NlTensor *y)
{
  Geom g = nl_pool2d_geom (c->args);
  g.planes = x->shape[0] * x->shape[1];
  g.h = x->shape[2];
  g.w = x->shape[3];
  g.oh = y->shape[2];
  g.ow = y->shape[3];
  return g;
}

static int
threads_for (int64_t work)
{
  return work >= NL_PAR_MIN ? nl_threads_get () : 1;
}

/* 2x2 windows, stride 2, no padding: the LeNet case, every window inside. */
static inline gboolean
is_2x2s2 (const Geom *g)
{
  return g->kh == 2 && g->kw == 2 && g->sh == 2 && g->sw == 2 && g->ph == 0 && g->pw == 0
         && g->oh * 2 <= g->h && g->ow * 2 <= g->w;
}

/* The 2x2 stride-2 kernels are branch-free SIMD: with real data the
 * comparisons are coin flips, and mispredicted branches would cost more
 * than the pooling itself. Windows are processed 8 (AVX2) or 4 (SSE) at a
 * time; a short tail goes through the 4-wide kernel via a padded copy. */
#ifdef __AVX2__
#include <immintrin.h>

/* Take v where it beats m (or is NaN, which then sticks): the scalar scan's rule. */
static inline void
take8 (__m256 v, __m256 pos, __m256 *m, __m256 *idx)
{
  __m256 k = _mm256_or_ps (_mm256_cmp_ps (v, *m, _CMP_GT_OQ), _mm256_cmp_ps (v, v, _CMP_UNORD_Q));
  *m = _mm256_blendv_ps (*m, v, k);
  *idx = _mm256_blendv_ps (*idx, pos, k);
}

static inline void
take4 (__m128 v, __m128 pos, __m128 *m, __m128 *idx)
{
  __m128 k = _mm_or_ps (_mm_cmpgt_ps (v, *m), _mm_cmpunord_ps (v, v));
  *m = _mm_blendv_ps (*m, v, k);
  *idx = _mm_blendv_ps (*idx, pos, k);
}

/* Even and odd elements of 16 consecutive floats, each in order. */
static inline void
split16 (const float *p, __m256 *even, __m256 *odd)
{
  __m256 a = _mm256_loadu_ps (p), b = _mm256_loadu_ps (p + 8);
  __m256 e = _mm256_shuffle_ps (a, b, _MM_SHUFFLE (2, 0, 2, 0));
  __m256 o = _mm256_shuffle_ps (a, b, _MM_SHUFFLE (3, 1, 3, 1));
  *even = _mm256_castpd_ps (_mm256_permute4x64_pd (_mm256_castps_pd (e), _MM_SHUFFLE (3, 1, 2, 0)));
  *odd = _mm256_castpd_ps (_mm256_permute4x64_pd (_mm256_castps_pd (o), _MM_SHUFFLE (3, 1, 2, 0)));
}

static inline void
split8 (const float *p, __m128 *even, __m128 *odd)
{
  __m128 a = _mm_loadu_ps (p), b = _mm_loadu_ps (p + 4);
  *even = _mm_shuffle_ps (a, b, _MM_SHUFFLE (2, 0, 2, 0));
  *odd = _mm_shuffle_ps (a, b, _MM_SHUFFLE (3, 1, 3, 1));
}

/* 8 windows starting at rows r0, r1; pos0 = plane index of r0[0]. */
static inline void
max8 (const float *r0, const float *r1, float pos0, float w, float *y, float *arg)
{
  const __m256 one = _mm256_set1_ps (1), wv = _mm256_set1_ps (w);
  __m256 a, b, c, d;
  split16 (r0, &a, &b);
  split16 (r1, &c, &d);
  __m256 pos = _mm256_add_ps (_mm256_set1_ps (pos0), _mm256_setr_ps (0, 2, 4, 6, 8, 10, 12, 14));
  __m256 m = a, idx = pos;
  take8 (b, _mm256_add_ps (pos, one), &m, &idx);
  take8 (c, _mm256_add_ps (pos, wv), &m, &idx);
  take8 (d, _mm256_add_ps (_mm256_add_ps (pos, wv), one), &m, &idx);
  _mm256_storeu_ps (y, m);
  if (arg)
    _mm256_storeu_ps (arg, idx);
}

static inline void
max4 (const float *r0, const float *r1, float pos0, float w, float *y, float *arg)
{
  const __m128 one = _mm_set1_ps (1), wv = _mm_set1_ps (w);
  __m128 a, b, c, d;
  split8 (r0, &a, &b);
  split8 (r1, &c, &d);
  __m128 pos = _mm_add_ps (_mm_set1_ps (pos0), _mm_setr_ps (0, 2, 4, 6));
  __m128 m = a, idx = pos;
  take4 (b, _mm_add_ps (pos, one), &m, &idx);
  take4 (c, _mm_add_ps (pos, wv), &m, &idx);
  take4 (d, _mm_add_ps (_mm_add_ps (pos, wv), one), &m, &idx);
  _mm_storeu_ps (y, m);
  if (arg)
    _mm_storeu_ps (arg, idx);
}

/* Interleave: out[2i] = a[i], out[2i + 1] = b[i]. */
static inline void
zip8 (__m256 a, __m256 b, float *out)
{
  __m256 lo = _mm256_unpacklo_ps (a, b), hi = _mm256_unpackhi_ps (a, b);
  _mm256_storeu_ps (out, _mm256_permute2f128_ps (lo, hi, 0x20));
  _mm256_storeu_ps (out + 8, _mm256_permute2f128_ps (lo, hi, 0x31));
}

static inline void
zip4 (__m128 a, __m128 b, float *out)
{
  _mm_storeu_ps (out, _mm_unpacklo_ps (a, b));
  _mm_storeu_ps (out + 4, _mm_unpackhi_ps (a, b));
}

/* Backward of max8: each of the 4 slots of a window gets dy or 0. */
static inline void
unmax8 (const float *dy, const float *arg, float pos0, float w, float *r0, float *r1)
{
  __m256 g = _mm256_loadu_ps (dy);
  __m256 pos = _mm256_add_ps (_mm256_set1_ps (pos0), _mm256_setr_ps (0, 2, 4, 6, 8, 10, 12, 14));
  __m256 i = _mm256_sub_ps (_mm256_loadu_ps (arg), pos);
  zip8 (_mm256_and_ps (_mm256_cmp_ps (i, _mm256_setzero_ps (), _CMP_EQ_OQ), g),
        _mm256_and_ps (_mm256_cmp_ps (i, _mm256_set1_ps (1), _CMP_EQ_OQ), g), r0);
  zip8 (_mm256_and_ps (_mm256_cmp_ps (i, _mm256_set1_ps (w), _CMP_EQ_OQ), g),
        _mm256_and_ps (_mm256_cmp_ps (i, _mm256_set1_ps (w + 1), _CMP_EQ_OQ), g), r1);
}

static inline void
unmax4 (const float *dy, const float *arg, float pos0, float w, float *r0, float *r1)
{
  __m128 g = _mm_loadu_ps (dy);
  __m128 pos = _mm_add_ps (_mm_set1_ps (pos0), _mm_setr_ps (0, 2, 4, 6));
  __m128 i = _mm_sub_ps (_mm_loadu_ps (arg), pos);
  zip4 (_mm_and_ps (_mm_cmpeq_ps (i, _mm_setzero_ps ()), g),
        _mm_and_ps (_mm_cmpeq_ps (i, _mm_set1_ps (1)), g), r0);
  zip4 (_mm_and_ps (_mm_cmpeq_ps (i, _mm_set1_ps (w)), g),
        _mm_and_ps (_mm_cmpeq_ps (i, _mm_set1_ps (w + 1)), g), r1);
}

#else /* portable scalar versions of the same kernels, n windows */

static inline void
max_n (int n, const float *r0, const float *r1, float pos0, float w, float *y, float *arg)
{
  for (int j = 0; j < n; j++)
    {
      /* scan order (r0 left, r0 right, r1 left, r1 right); first max wins, NaN sticks */
      const float v[4] = { r0[2 * j], r0[2 * j + 1], r1[2 * j], r1[2 * j + 1] };
      const float off[4] = { 0, 1, w, w + 1 };
      float m = v[0], i = 0;
      for (int k = 1; k < 4; k++)
        if (v[k] > m || isnan (v[k]))
          m = v[k], i = off[k];
      y[j] = m;
      if (arg)
        arg[j] = pos0 + (float) (2 * j) + i;
    }
}

static inline void
unmax_n (int n, const float *dy, const float *arg, float pos0, float w, float *r0, float *r1)
{
  for (int j = 0; j < n; j++)
    {
      float i = arg[j] - pos0 - (float) (2 * j);
      r0[2 * j] = i == 0 ? dy[j] : 0;
      r0[2 * j + 1] = i == 1 ? dy[j] : 0;
      r1[2 * j] = i == w ? dy[j] : 0;
      r1[2 * j + 1] = i == w + 1 ? dy[j] : 0;
    }
}

static inline void
max4 (const float *r0, const float *r1, float pos0, float w, float *y, float *arg)
{
  max_n (4, r0, r1, pos0, w, y, arg);
}

static inline void
max8 (const float *r0, const float *r1, float pos0, float w, float *y, float *arg)
{
  max_n (8, r0, r1, pos0, w, y, arg);
}

static inline void
unmax4 (const float *dy, const float *arg, float pos0, float w, float *r0, float *r1)
{
  unmax_n (4, dy, arg, pos0, w, r0, r1);
}

static inline void
unmax8 (const float *dy, const float *arg, float pos0, float w, float *r0, float *r1)
{
  unmax_n (8, dy, arg, pos0, w, r0, r1);
}
#endif

static void
max_plane_2x2 (const Geom *g, const float *x, float *y, float *arg)
{
  const int64_t w = g->w, ow_n = g->ow;
  for (int64_t oh = 0; oh < g->oh; oh++)
    {
      const float *r0 = x + 2 * oh * w, *r1 = r0 + w;
      float *yr = y + oh * ow_n, *ar = arg ? arg + oh * ow_n : NULL;
      const float base = (float) (2 * oh * w);
      int64_t ow = 0;
      for (; ow + 8 <= ow_n; ow += 8)
        max8 (r0 + 2 * ow, r1 + 2 * ow, base + (float) (2 * ow), (float) w, yr + ow, ar ? ar + ow : NULL);
      for (; ow + 4 <= ow_n; ow += 4)
        max4 (r0 + 2 * ow, r1 + 2 * ow, base + (float) (2 * ow), (float) w, yr + ow, ar ? ar + ow : NULL);
      if (ow < ow_n)
        {
          /* padded copy of the last 1..3 windows; the padding's results are dropped */
          float t0[8] = { 0 }, t1[8] = { 0 }, ty[4], ta[4];
          int64_t n = ow_n - ow;
          memcpy (t0, r0 + 2 * ow, 2 * n * sizeof (float));
          memcpy (t1, r1 + 2 * ow, 2 * n * sizeof (float));
          /* the copy's second row sits 8 floats on, not w */
          max4 (t0, t1, 0, 8, ty, ta);
          for (int64_t j = 0; j < n; j++)
            {
              yr[ow + j] = ty[j];
              if (ar)
                {
                  float i = ta[j] - (float) (2 * j);
                  i = i >= 8 ? i - 8 + (float) w : i; /* second row: offset w, not 8 */
                  ar[ow + j] = base + (float) (2 * (ow + j)) + i;
                }
            }
        }
    }
}

/* Backward of max_plane_2x2: the windows tile the input, so every element
 * is written exactly once and no zeroing pass is needed. */
static void
max_plane_2x2_backward (const Geom *g, const float *dy, const float *arg, float *dx)
{
  const int64_t w = g->w, ow_n = g->ow;
  for (int64_t oh = 0; oh < g->oh; oh++)
    {
      float *r0 = dx + 2 * oh * w, *r1 = r0 + w;
      const float *gr = dy + oh * ow_n, *ar = arg + oh * ow_n;
      const float base = (float) (2 * oh * w);
      int64_t ow = 0;
      for (; ow + 8 <= ow_n; ow += 8)
        unmax8 (gr + ow, ar + ow, base + (float) (2 * ow), (float) w, r0 + 2 * ow, r1 + 2 * ow);
      for (; ow + 4 <= ow_n; ow += 4)
        unmax4 (gr + ow, ar + ow, base + (float) (2 * ow), (float) w, r0 + 2 * ow, r1 + 2 * ow);
      if (ow < ow_n)
        {
          float tg[4] = { 0 }, ta[4] = { -1, -1, -1, -1 }, t0[8], t1[8];
          int64_t n = ow_n - ow;
          memcpy (tg, gr + ow, n * sizeof (float));
          memcpy (ta, ar + ow, n * sizeof (float));
          unmax4 (tg, ta, base + (float) (2 * ow), (float) w, t0, t1);
          memcpy (r0 + 2 * ow, t0, 2 * n * sizeof (float));
          memcpy (r1 + 2 * ow, t1, 2 * n * sizeof (float));
        }
      for (int64_t c = 2 * ow_n; c < w; c++)
        r0[c] = r1[c] = 0;
    }
  if (2 * g->oh < g->h)
    memset (dx + 2 * g->oh * w, 0, (g->h - 2 * g->oh) * w * sizeof (float));
}

static void
max_plane (const Geom *g, const float *x, float *y, float *arg)
{
  for (int64_t oh = 0; oh < g->oh; oh++)
    {
      int64_t h0 = oh * g->sh - g->ph, h1 = MIN (h0 + g->kh, g->h);
      h0 = MAX (h0, 0);
      for (int64_t ow = 0; ow < g->ow; ow++)
        {
          int64_t w0 = ow * g->sw - g->pw, w1 = MIN (w0 + g->kw, g->w);
          w0 = MAX (w0, 0);
          /* padding counts as -inf; every window holds at least one input element */
          float m = -INFINITY;
          int64_t idx = h0 * g->w + w0;
          for (int64_t h = h0; h < h1; h++)
            for (int64_t w = w0; w < w1; w++)
              {
                float v = x[h * g->w + w];
                if (v > m || isnan (v))
                  {
                    m = v;
                    idx = h * g->w + w;
                  }
              }
          y[oh * g->ow + ow] = m;
          if (arg)
            arg[oh * g->ow + ow] = (float) idx;
        }
    }
}

static gboolean
max_forward (NlOpCtx *c, GError **error)
{
  Geom g = geom_of (c, c->in[0], c->out[0]);
  const float *x = nl_tensor_f32 (c->in[0]);
  float *y = nl_tensor_f32 (c->out[0]);
  /* the graph gives the argmax memory only where a backward reads it */
  float *arg = c->saved[0] ? nl_tensor_f32 (c->saved[0]) : NULL;
  const int64_t isz = g.h * g.w, osz = g.oh * g.ow;
  const gboolean fast = is_2x2s2 (&g);

#pragma omp parallel for num_threads (threads_for (g.planes * isz)) schedule (static)
  for (int64_t p = 0; p < g.planes; p++)
    {
      if (fast)
        max_plane_2x2 (&g, x + p * isz, y + p * osz, arg ? arg + p * osz : NULL);
      else
        max_plane (&g, x + p * isz, y + p * osz, arg ? arg + p * osz : NULL);
    }
  return TRUE;
}

static gboolean
max_backward (NlOpCtx *c, GError **error)
{
  if (!c->in_grad[0])
    return TRUE;
  Geom g = geom_of (c, c->in_grad[0], c->out_grad[0]);
  float *dx = nl_tensor_f32 (c->in_grad[0]);
  const float *dy = nl_tensor_f32 (c->out_grad[0]);
  const float *arg;
  const int64_t isz = g.h * g.w, osz = g.oh * g.ow;
  const gboolean fast = is_2x2s2 (&g);

  if (!c->saved[0])
    {
      g_set_error (error, NL_OP_ERROR, NL_OP_ERROR_RUNTIME,
                   "MaxPool2D backward needs the argmax saved by a training-mode forward");
      return FALSE;
    }
  arg = nl_tensor_f32 (c->saved[0]);

#pragma omp parallel for num_threads (threads_for (g.planes * isz)) schedule (static)
  for (int64_t p = 0; p < g.planes; p++)
    {
      float *dxp = dx + p * isz;
      const float *dyp = dy + p * osz, *ap = arg + p * osz;
      if (fast)
        max_plane_2x2_backward (&g, dyp, ap, dxp);
      else
        {
          /* overlapping windows may share a max: accumulate within the plane */
          memset (dxp, 0, isz * sizeof (float));
          for (int64_t o = 0; o < osz; o++)
            dxp[(int64_t) ap[o]] += dyp[o];
        }
    }
  return TRUE;
}

/* The window of output (oh, ow) clipped to the input, and its divisor. */
typedef struct {
  int64_t h0, h1, w0, w1;
  float scale;
} AvgWin;

static inline AvgWin
avg_window (const Geom *g, int64_t oh, int64_t ow)
{
  AvgWin a;
  int64_t h0 = oh * g->sh - g->ph, w0 = ow * g->sw - g->pw;
  int64_t h1 = MIN (h0 + g->kh, g->h + g->ph), w1 = MIN (w0 + g->kw, g->w + g->pw);
  int64_t full = (h1 - h0) * (w1 - w0); /* padding counted, overhang past it not */
  a.h0 = MAX (h0, 0);
  a.w0 = MAX (w0, 0);
  a.h1 = MIN (h1, g->h);
  a.w1 = MIN (w1, g->w);
  int64_t n = g->include_pad ? full : (a.h1 - a.h0) * (a.w1 - a.w0);
  a.scale = n > 0 ? 1.0f / (float) n : 0.0f;
  return a;
}

static gboolean
avg_forward (NlOpCtx *c, GError **error)
{
  Geom g = geom_of (c, c->in[0], c->out[0]);
  const float *x = nl_tensor_f32 (c->in[0]);
  float *y = nl_tensor_f32 (c->out[0]);
  const int64_t isz = g.h * g.w, osz = g.oh * g.ow;
  const gboolean fast = is_2x2s2 (&g);

#pragma omp parallel for num_threads (threads_for (g.planes * isz)) schedule (static)
  for (int64_t p = 0; p < g.planes; p++)
    {
      const float *xp = x + p * isz;
      float *yp = y + p * osz;
      if (fast)
        {
          /* every window is inside: divisor 4 either way; the compiler vectorises this */
          for (int64_t oh = 0; oh < g.oh; oh++)
            {
              const float *r0 = xp + 2 * oh * g.w, *r1 = r0 + g.w;
              float *yr = yp + oh * g.ow;
              for (int64_t ow = 0; ow < g.ow; ow++)
                yr[ow] = 0.25f * ((r0[2 * ow] + r0[2 * ow + 1]) + (r1[2 * ow] + r1[2 * ow + 1]));
            }
          continue;
        }
      for (int64_t oh = 0; oh < g.oh; oh++)
        for (int64_t ow = 0; ow < g.ow; ow++)
          {
            AvgWin a = avg_window (&g, oh, ow);
            float s = 0;
            for (int64_t h = a.h0; h < a.h1; h++)
              for (int64_t w = a.w0; w < a.w1; w++)
                s += xp[h * g.w + w];
            yp[oh * g.ow + ow] = s * a.scale;
          }
    }
  return TRUE;
}

static gboolean
avg_backward (NlOpCtx *c, GError **error)
{
  if (!c->in_grad[0])
    return TRUE;
  Geom g = geom_of (c, c->in_grad[0], c->out_grad[0]);
  float *dx = nl_tensor_f32 (c->in_grad[0]);
  const float *dy = nl_tensor_f32 (c->out_grad[0]);
  const int64_t isz = g.h * g.w, osz = g.oh * g.ow;
  const gboolean fast = is_2x2s2 (&g);

#pragma omp parallel for num_threads (threads_for (g.planes * isz)) schedule (static)
  for (int64_t p = 0; p < g.planes; p++)
    {
      float *dxp = dx + p * isz;
      const float *dyp = dy + p * osz;
      if (fast)
        {
          for (int64_t oh = 0; oh < g.oh; oh++)
            {
              float *r0 = dxp + 2 * oh * g.w, *r1 = r0 + g.w;
              const float *gr = dyp + oh * g.ow;
              for (int64_t ow = 0; ow < g.ow; ow++)
                r0[2 * ow] = r0[2 * ow + 1] = r1[2 * ow] = r1[2 * ow + 1] = 0.25f * gr[ow];
              for (int64_t w = 2 * g.ow; w < g.w; w++)
                r0[w] = r1[w] = 0;
            }
          if (2 * g.oh < g.h)
            memset (dxp + 2 * g.oh * g.w, 0, (g.h - 2 * g.oh) * g.w * sizeof (float));
          continue;
        }
      memset (dxp, 0, isz * sizeof (float));
      for (int64_t oh = 0; oh < g.oh; oh++)
        for (int64_t ow = 0; ow < g.ow; ow++)
          {
            AvgWin a = avg_window (&g, oh, ow);
            float v = dyp[oh * g.ow + ow] * a.scale;
            for (int64_t h = a.h0; h < a.h1; h++)
              for (int64_t w = a.w0; w < a.w1; w++)
                dxp[h * g.w + w] += v;
          }
    }
  return TRUE;
}

static gboolean
global_forward (NlOpCtx *c, GError **error)
{
  const NlTensor *t = c->in[0];
  const int64_t planes = t->shape[0] * t->shape[1], isz = t->shape[2] * t->shape[3];
  const float *x = nl_tensor_f32 (t);
  float *y = nl_tensor_f32 (c->out[0]);
  const float scale = 1.0f / (float) isz;

#pragma omp parallel for num_threads (threads_for (planes * isz)) schedule (static)
  for (int64_t p = 0; p < planes; p++)
    {
      const float *xp = x + p * isz;
      float s = 0;
#pragma omp simd reduction (+ : s)
      for (int64_t i = 0; i < isz; i++)
        s += xp[i];
      y[p] = s * scale;
    }
  return TRUE;
}

static gboolean
global_backward (NlOpCtx *c, GError **error)
{
  if (!c->in_grad[0])
    return TRUE;
  const NlTensor *t = c->in_grad[0]; /* the input itself is not needed, maybe not kept */
  const int64_t planes = t->shape[0] * t->shape[1], isz = t->shape[2] * t->shape[3];
  const float *dy = nl_tensor_f32 (c->out_grad[0]);
  const float scale = 1.0f / (float) isz;
  float *dx = nl_tensor_f32 (t);

#pragma omp parallel for num_threads (threads_for (planes * isz)) schedule (static)
  for (int64_t p = 0; p < planes; p++)
    {
      float v = dy[p] * scale;
      for (int64_t i = 0; i < isz; i++)
        dx[p * isz + i] = v;
    }
  return TRUE;
}

const NlOpKernels nl_op_cpu_max_pool2d = { .forward = max_forward, .backward = max_backward };
const NlOpKernels nl_op_cpu_avg_pool2d = { .forward = avg_forward, .backward = avg_backward };
const NlOpKernels nl_op_cpu_global_avg_pool2d = { .forward = global_forward, .backward = global_backward };
