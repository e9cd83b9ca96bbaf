/* conv2d.c — the CPU kernels of Conv2D (Gluon's Conv2D; definition:
 * ops/defs/conv2d.c) over NCHW data, OIHW weights.
 *
 * im2col + sgemm, one image per OpenMP thread, each thread with its own
 * column buffer (one image and group: 128 KiB for LeNet's conv2, so it stays
 * in L2). For LeNet's layers at batch 128 on 2 cores this is as fast as the
 * best of oneDNN's own convolutions once their reorders from and to nchw are
 * paid (blocked nChw16c, or nhwc with brgconv), and clearly faster than
 * oneDNN in plain nchw/oihw (its gemm-based path); bench/bench-kernels.c
 * measures all of them. So no primitives are cached, only scratch. A 1x1,
 * stride-1, unpadded convolution skips im2col altogether.
 *
 * Backward: d(bias) and d(weight) into per-thread partial sums, added in
 * thread order at the end; d(data) by sgemm into columns, then col2im.
 *
 * In bf16/fp16 precision the data and weight (forward), and out_grad, data
 * and weight (backward) are first rounded into cached scratch and the same
 * float32 code runs on the copies; the bias and its gradient (from the
 * unrounded out_grad) stay float32. */
#include "ops/cpu/nl-cpu-util.h"
#include "ops/cpu/nl-gemm.h"
#include "ops/nl-conv2d.h"

#include <omp.h>
#ifdef __AVX2__
#include <immintrin.h>
#endif

/* Spans of a column row: a few floats each (8 for LeNet's conv2), so the
 * copy is inlined, with a masked tail instead of a scalar loop. */
#ifdef __AVX2__

typedef NlConv2dGeom Geom;

static void
geom_init (Geom *g, const NlConv2dArgs *a, const NlShape *in)
{
  nl_conv2d_geom_init (g, a, in->d[0], in->d[1], in->d[2], in->d[3]);
}

static const int32_t tail_mask[16] = { -1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0 };
#endif

static inline void
copy_span (float *restrict d, const float *restrict s, int64_t n)
{
#ifdef __AVX2__
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    {
      __m256 v = _mm256_loadu_ps (s + i);
      /* opaque to GCC, which would otherwise turn the loop into a memcpy
       * call: far slower for the 8 floats typical here */
      __asm__ ("" : "+x" (v));
      _mm256_storeu_ps (d + i, v);
    }
  if (i < n)
    {
      __m256i m = _mm256_loadu_si256 ((const __m256i *) (tail_mask + 8 - (n - i)));
      _mm256_maskstore_ps (d + i, m, _mm256_maskload_ps (s + i, m));
    }
#else
  memcpy (d, s, n * sizeof (float));
#endif
}

static inline void
add_span (float *restrict d, const float *restrict s, int64_t n)
{
#ifdef __AVX2__
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps (d + i, _mm256_add_ps (_mm256_loadu_ps (d + i), _mm256_loadu_ps (s + i)));
  if (i < n)
    {
      __m256i m = _mm256_loadu_si256 ((const __m256i *) (tail_mask + 8 - (n - i)));
      _mm256_maskstore_ps (d + i, m, _mm256_add_ps (_mm256_maskload_ps (d + i, m), _mm256_maskload_ps (s + i, m)));
    }
#else
  for (int64_t i = 0; i < n; i++)
    d[i] += s[i];
#endif
}

/* `rows` spans of n floats, rows dstep and sstep floats apart. */
static inline void
copy_rows (float *restrict d, int64_t dstep, const float *restrict s, int64_t sstep, int64_t rows, int64_t n)
{
  for (int64_t r = 0; r < rows; r++)
    copy_span (d + r * dstep, s + r * sstep, n);
}

static inline void
add_rows (float *restrict d, int64_t dstep, const float *restrict s, int64_t sstep, int64_t rows, int64_t n)
{
  for (int64_t r = 0; r < rows; r++)
    add_span (d + r * dstep, s + r * sstep, n);
}

/* Sum of n floats in 8 lanes, which GCC vectorises (a single running sum
 * would be a chain of dependent adds). */
static inline float
sum_span (const float *s, int64_t n)
{
  float acc[8] = { 0 }, t = 0.0f;
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int l = 0; l < 8; l++)
      acc[l] += s[i + l];
  for (; i < n; i++)
    t += s[i];
  for (int l = 0; l < 8; l++)
    t += acc[l];
  return t;
}

/* Number of k >= 0 with k * s + off < limit, at most cap. */
static inline int64_t
count_below (int64_t off, int64_t s, int64_t limit, int64_t cap)
{
  return limit - off > 0 ? MIN ((limit - off + s - 1) / s, cap) : 0;
}

/* First k >= 0 with k * s + off >= 0, at most cap. */
static inline int64_t
first_inside (int64_t off, int64_t s, int64_t cap)
{
  return off >= 0 ? 0 : MIN ((-off + s - 1) / s, cap);
}

/* Column matrix of one image and group, rows ld floats apart: row (c, i, j)
 * holds, for every output position, the input tap at kernel offset (i, j)
 * of channel c (zero where that tap falls in the padding). */
static void
im2col (const Geom *gp, const float *restrict x, float *restrict col, int64_t ld)
{
  const Geom g = *gp; /* a local copy: the float stores cannot alias it */
  for (int64_t c = 0; c < g.cg; c++)
    for (int64_t i = 0; i < g.kh; i++)
      {
        int64_t di = i * g.dh - g.ph; /* input row = oh * sh + di */
        int64_t h0 = first_inside (di, g.sh, g.oh);
        int64_t h1 = MAX (count_below (di, g.sh, g.h, g.oh), h0);
        for (int64_t j = 0; j < g.kw; j++)
          {
            float *row = col + ((c * g.kh + i) * g.kw + j) * ld;
            int64_t dj = j * g.dw - g.pw; /* input column = ow * sw + dj */
            int64_t w0 = first_inside (dj, g.sw, g.ow);
            int64_t w1 = MAX (count_below (dj, g.sw, g.w, g.ow), w0);

            if (h0 > 0)
              memset (row, 0, h0 * g.ow * sizeof (float));
            if (h1 < g.oh)
              memset (row + h1 * g.ow, 0, (g.oh - h1) * g.ow * sizeof (float));
            if (h1 == h0)
              continue;
            if (g.sw == 1 && w0 == 0 && w1 == g.ow)
              {
                /* the common case: whole rows, a plain copy each */
                copy_rows (row + h0 * g.ow, g.ow, x + (c * g.h + h0 * g.sh + di) * g.w + dj, g.sh * g.w,
                           h1 - h0, g.ow);
                continue;
              }
            for (int64_t oh = h0; oh < h1; oh++)
              {
                float *r = row + oh * g.ow;
                const float *xr = x + (c * g.h + oh * g.sh + di) * g.w + w0 * g.sw + dj;
                for (int64_t ow = 0; ow < w0; ow++)
                  r[ow] = 0.0f;
                if (g.sw == 1)
                  copy_span (r + w0, xr, w1 - w0);
                else
                  for (int64_t ow = w0; ow < w1; ow++)
                    r[ow] = xr[(ow - w0) * g.sw];
                for (int64_t ow = w1; ow < g.ow; ow++)
                  r[ow] = 0.0f;
              }
          }
      }
}

/* The adjoint of im2col: add every column entry back onto its input tap. */
static void
col2im_add (const Geom *gp, const float *restrict col, int64_t ld, float *restrict dx)
{
  const Geom g = *gp;
  for (int64_t c = 0; c < g.cg; c++)
    for (int64_t i = 0; i < g.kh; i++)
      {
        int64_t di = i * g.dh - g.ph;
        int64_t h0 = first_inside (di, g.sh, g.oh);
        int64_t h1 = count_below (di, g.sh, g.h, g.oh);
        for (int64_t j = 0; j < g.kw; j++)
          {
            const float *row = col + ((c * g.kh + i) * g.kw + j) * ld;
            int64_t dj = j * g.dw - g.pw;
            int64_t w0 = first_inside (dj, g.sw, g.ow);
            int64_t w1 = count_below (dj, g.sw, g.w, g.ow);
            if (w1 <= w0 || h1 <= h0)
              continue;
            if (g.sw == 1)
              {
                add_rows (dx + (c * g.h + h0 * g.sh + di) * g.w + w0 + dj, g.sh * g.w, row + h0 * g.ow + w0, g.ow,
                          h1 - h0, w1 - w0);
                continue;
              }
            for (int64_t oh = h0; oh < h1; oh++)
              {
                const float *r = row + oh * g.ow;
                float *xr = dx + (c * g.h + oh * g.sh + di) * g.w + w0 * g.sw + dj;
                for (int64_t ow = w0; ow < w1; ow++)
                  xr[(ow - w0) * g.sw] += r[ow];
              }
          }
      }
}

/* rows x cols, row r filled with v[r]. Plain scalar arguments (like the
 * local Geom copies above): with the build's -fno-strict-aliasing, GCC
 * reloads struct fields after every float store, which made this loop a
 * fifth of conv1's forward time. */
static void
fill_rows (float *restrict y, const float *restrict v, int64_t rows, int64_t cols)
{
  for (int64_t r = 0; r < rows; r++)
    {
      float x = v[r];
      for (int64_t k = 0; k < cols; k++)
        y[r * cols + k] = x;
    }
}

typedef struct {
  void *buf;
  size_t cap;
  void *half;      /* rounded copies in bf16/fp16 precision */
  size_t half_cap;
} ConvState;

static void
free_state (void *state)
{
  ConvState *s = state;
  g_free (s->buf);
  g_free (s->half);
  g_free (s);
}

static ConvState *
conv_state (NlOpCtx *ctx)
{
  if (!*ctx->state)
    *ctx->state = g_new0 (ConvState, 1);
  return *ctx->state;
}

/* Room for the rounded copies of half precision: nfloats floats. */
static float *
half_scratch (NlOpCtx *ctx, size_t nfloats)
{
  ConvState *s = conv_state (ctx);
  return nl_scratch (&s->half, &s->half_cap, MAX (nfloats, 1) * sizeof (float));
}

static size_t
round16 (size_t n)
{
  return (n + 15) & ~(size_t) 15;
}

/* Per-thread scratch: `per` floats for each of nthr threads, 64-byte aligned. */
static float *
scratch (NlOpCtx *ctx, int nthr, size_t per, size_t *stride)
{
  ConvState *s = conv_state (ctx);
  *stride = round16 (per);
  return (float *) (((uintptr_t) nl_scratch (&s->buf, &s->cap, (*stride * nthr + 16) * sizeof (float)) + 63)
                    & ~(uintptr_t) 63);
}

/* One image per thread when there are enough images; otherwise images in
 * turn with each sgemm using every thread. */
static int
image_threads (const Geom *g)
{
  int nt = omp_get_max_threads ();
  return g->n >= nt ? nt : 1;
}

static gboolean
forward (NlOpCtx *ctx, GError **error)
{
  NlShape xs = nl_tensor_get_shape (ctx->in[0]);
  const float *x = nl_tensor_f32 (ctx->in[0]), *w = nl_tensor_f32 (ctx->in[1]);
  const float *b = ctx->in[2] ? nl_tensor_f32 (ctx->in[2]) : NULL;
  float *y = nl_tensor_f32 (ctx->out[0]);
  Geom g;
  int nthr;
  size_t stride = 0;
  float *buf;
  gboolean ok = TRUE;

  geom_init (&g, ctx->args, &xs);
  if (ctx->precision != NL_PRECISION_F32)
    {
      int64_t nx = g.n * g.c * g.h * g.w, nw = g.o * g.ckk;
      float *xr = half_scratch (ctx, nx + nw), *wr = xr + nx;
      nl_round_array (ctx->precision, xr, x, nx);
      nl_round_array (ctx->precision, wr, w, nw);
      x = xr;
      w = wr;
    }
  nthr = image_threads (&g);
  buf = g.direct ? NULL : scratch (ctx, nthr, g.ckk * g.ohw, &stride);

#pragma omp parallel num_threads (nthr) if (nthr > 1) reduction (&& : ok)
  {
    float *col = buf ? buf + stride * omp_get_thread_num () : NULL;
#pragma omp for schedule (static)
    for (int64_t n = 0; n < g.n; n++)
      for (int64_t gi = 0; gi < g.groups; gi++)
        {
          const float *xg = x + (n * g.c + gi * g.cg) * g.h * g.w;
          float *yg = y + (n * g.o + gi * g.og) * g.ohw;
          if (b) /* start from the bias; the sgemm adds onto it */
            fill_rows (yg, b + gi * g.og, g.og, g.ohw);
          if (!g.direct)
            im2col (&g, xg, col, g.ohw);
          ok = nl_sgemm ('N', 'N', g.og, g.ohw, g.ckk, 1.0f, w + gi * g.og * g.ckk, g.ckk,
                         g.direct ? xg : col, g.ohw, b ? 1.0f : 0.0f, yg, g.ohw) && ok;
        }
  }
  if (!ok)
    return nl_dnnl_check (dnnl_out_of_memory, "Conv2D forward sgemm", error);
  return TRUE;
}

/* Backward, one image per thread like forward. d(weight) and d(bias) go
 * into per-thread partial sums, added in thread order at the end, so the
 * result is the same on every run with the same thread count. (Gathering
 * several images into one long-K sgemm for d(weight) measured no faster:
 * the gather cost what the bigger sgemm saved.) */
/* dst = the sum of each thread's partial (thread t's at src + t * stride),
 * added in thread order so the result does not depend on timing. */
static void
sum_team (float *dst, const float *src, size_t stride, int team, size_t n)
{
  memcpy (dst, src, n * sizeof (float));
  for (int t = 1; t < team; t++)
    {
      const float *part = src + stride * t;
      for (size_t i = 0; i < n; i++)
        dst[i] += part[i];
    }
}

static gboolean
backward (NlOpCtx *ctx, GError **error)
{
  NlShape xs = nl_tensor_get_shape (ctx->in[0]);
  const float *x = nl_tensor_f32 (ctx->in[0]), *w = nl_tensor_f32 (ctx->in[1]);
  const float *dy = nl_tensor_f32 (ctx->out_grad[0]);
  const float *dyh = dy; /* what the products read: dy, or its rounded copy */
  float *dx = ctx->in_grad[0] ? nl_tensor_f32 (ctx->in_grad[0]) : NULL;
  float *dw = ctx->in_grad[1] ? nl_tensor_f32 (ctx->in_grad[1]) : NULL;
  float *db = ctx->in[2] && ctx->in_grad[2] ? nl_tensor_f32 (ctx->in_grad[2]) : NULL;
  Geom g;
  int nthr, team = 1;
  size_t stride = 0, col_n, wn;
  float *buf;
  gboolean ok = TRUE;

  geom_init (&g, ctx->args, &xs);
  if (ctx->precision != NL_PRECISION_F32 && (dw || dx))
    {
      /* round only what the products read: x for d(weight), W for d(data);
       * d(bias) sums the float32 out_grad */
      int64_t ny = g.n * g.o * g.ohw, nx = dw ? g.n * g.c * g.h * g.w : 0, nw = dx ? g.o * g.ckk : 0;
      float *dyr = half_scratch (ctx, ny + nx + nw), *xr = dyr + ny, *wr = xr + nx;
      nl_round_array (ctx->precision, dyr, dy, ny);
      nl_round_array (ctx->precision, xr, x, nx);
      nl_round_array (ctx->precision, wr, w, nw);
      dyh = dyr;
      x = xr;
      w = wr;
    }
  nthr = image_threads (&g);
  /* per thread: a column buffer, then partial d(weight) and d(bias) */
  col_n = g.direct ? 0 : round16 (g.ckk * g.ohw);
  wn = g.o * g.ckk;
  buf = scratch (ctx, nthr, col_n + round16 (wn) + g.o, &stride);

#pragma omp parallel num_threads (nthr) if (nthr > 1) reduction (&& : ok)
  {
    float *col = buf + stride * omp_get_thread_num ();
    float *pw = col + col_n, *pb = pw + round16 (wn);

    /* the team may be smaller than asked for (nested in another region) */
    if (omp_get_thread_num () == 0)
      team = omp_get_num_threads ();
    if (dw)
      memset (pw, 0, wn * sizeof (float));
    if (db)
      memset (pb, 0, g.o * sizeof (float));
#pragma omp for schedule (static)
    for (int64_t n = 0; n < g.n; n++)
      {
        if (dx && !g.direct)
          memset (dx + n * g.c * g.h * g.w, 0, g.c * g.h * g.w * sizeof (float));
        for (int64_t gi = 0; gi < g.groups; gi++)
          {
            const float *xg = x + (n * g.c + gi * g.cg) * g.h * g.w;
            const float *dyg = dyh + (n * g.o + gi * g.og) * g.ohw;
            if (db)
              for (int64_t o = 0; o < g.og; o++)
                pb[gi * g.og + o] += sum_span (dy + (n * g.o + gi * g.og + o) * g.ohw, g.ohw);
            if (dw)
              {
                if (!g.direct)
                  im2col (&g, xg, col, g.ohw);
                ok = nl_sgemm ('N', 'T', g.og, g.ckk, g.ohw, 1.0f, dyg, g.ohw, g.direct ? xg : col, g.ohw,
                               1.0f, pw + gi * g.og * g.ckk, g.ckk) && ok;
              }
            if (dx)
              {
                float *dxg = dx + (n * g.c + gi * g.cg) * g.h * g.w;
                ok = nl_sgemm ('T', 'N', g.ckk, g.ohw, g.og, 1.0f, w + gi * g.og * g.ckk, g.ckk, dyg, g.ohw,
                               0.0f, g.direct ? dxg : col, g.ohw) && ok;
                if (!g.direct)
                  col2im_add (&g, col, g.ohw, dxg);
              }
          }
      }
  }
  if (dw)
    sum_team (dw, buf + col_n, stride, team, wn);
  if (db)
    sum_team (db, buf + col_n + round16 (wn), stride, team, g.o);
  if (!ok)
    return nl_dnnl_check (dnnl_out_of_memory, "Conv2D backward sgemm", error);
  return TRUE;
}

const NlOpKernels nl_op_cpu_conv2d = { .forward = forward, .backward = backward, .free_state = free_state };
