/* test-amp.c — mixed precision on the CPU: the bf16/fp16 rounding helpers,
 * Dense and Conv2D in half precision, and dynamic loss scaling.
 *
 * The rounding helpers are bit tricks; they are checked against references
 * written here another way: rounding in double with nearbyint, a brute-force
 * nearest search over every value of the type, and the compiler's _Float16
 * conversion where it has one. The ops in half precision must equal the
 * float32 op run on inputs rounded by that reference, bit for bit. */
#include <float.h>
#include <math.h>
#include <string.h>

#include "engine/train/nl-loss-scale.h"
#include "nl-test-util.h"
#include "ops/cpu/nl-cpu-util.h"
#include "ops/nl-op-instance.h"
#include "ops/nl-op-registry.h"

static uint32_t
f2u (float f)
{
  uint32_t u;
  memcpy (&u, &f, sizeof u);
  return u;
}

static float
u2f (uint32_t u)
{
  float f;
  memcpy (&f, &u, sizeof f);
  return f;
}

/* ------------------------------------------------------------ references */

/* x rounded to `bits` significant bits with the leading bit's exponent at
 * least emin (below that the step is fixed: subnormals), values above max
 * overflowing to Inf. In double, where every step is exact and nearbyint
 * rounds half to even. */
static float
ref_round (float x, int bits, int emin, double max)
{
  double a = fabs ((double) x), ulp, r;
  int e;
  if (isnan (x) || isinf (x))
    return x;
  frexp (a, &e); /* a = m * 2^e, m in [0.5, 1): the leading bit is 2^(e-1) */
  ulp = ldexp (1.0, MAX (e - 1, emin) - (bits - 1));
  r = nearbyint (a / ulp) * ulp;
  if (r > max)
    r = INFINITY;
  return (float) copysign (r, (double) x);
}

#define BF16_MAX ldexp (255.0, 120) /* (2 - 2^-7) * 2^127 */

static float
ref_bf16 (float x)
{
  return ref_round (x, 8, -126, BF16_MAX);
}

static float
ref_fp16 (float x)
{
  return ref_round (x, 11, -14, 65504.0);
}

/* An IEEE half's value from its fields. */
static double
half_value (uint16_t h)
{
  int e = (h >> 10) & 31, m = h & 1023;
  double v = e == 0 ? ldexp (m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp (1024 + m, e - 25);
  return h & 0x8000 ? -v : v;
}

static double
bf16_value (uint16_t h)
{
  return u2f ((uint32_t) h << 16);
}

/* The nearest of every non-negative finite value of a 16-bit type (and of
 * the overflow threshold, standing for Inf: the next step past the largest
 * finite value), ties to the even bit pattern; sign put back. */
static float
brute_nearest (float x, double (*value) (uint16_t), uint16_t inf_bits, double overflow_at)
{
  double a = fabs ((double) x), best = INFINITY;
  uint16_t best_h = 0;
  for (uint32_t h = 0; h <= inf_bits; h++)
    {
      double v = h == inf_bits ? overflow_at : value ((uint16_t) h);
      double d = fabs (a - v);
      if (d < best || (d == best && (h & 1) == 0))
        {
          best = d;
          best_h = (uint16_t) h;
        }
    }
  return copysignf (best_h == inf_bits ? INFINITY : (float) value (best_h), x);
}

/* Float test values: a mix of uniformly random bit patterns (every exponent,
 * NaNs included) and values with exponents near the half types' ranges. */
static float
sample_float (guint64 i)
{
  guint64 z = nl_mix64 (i + 0x1234);
  uint32_t bits = (uint32_t) z;
  if (i % 2 == 0)
    return u2f (bits);
  {
    int e = (int) ((z >> 32) % 48) - 30; /* 2^-30 .. 2^17: all of fp16 and around */
    float m = 1.0f + (float) (bits & 0x7fffff) * 0x1p-23f;
    return (bits & 0x80000000u) ? -ldexpf (m, e) : ldexpf (m, e);
  }
}

/* Bit equality, any NaN matching any NaN. */
static void
assert_same (float got, float want, float x, const char *what)
{
  if (isnan (want) && isnan (got))
    return;
  if (f2u (got) != f2u (want))
    g_error ("%s (%a = 0x%08x) gave %a (0x%08x), expected %a (0x%08x)", what, x, f2u (x), got, f2u (got), want,
             f2u (want));
}

/* ------------------------------------------------------------- rounding */

static void
test_bf16_exhaustive (void)
{
  for (uint32_t h = 0; h < 65536; h++)
    {
      float f = u2f (h << 16), r = nl_round_bf16 (f);
      if (isnan (f))
        {
          g_assert_true (isnan (r));
          g_assert_cmpuint (f2u (r) & 0x80000000u, ==, f2u (f) & 0x80000000u);
          g_assert_cmpuint (f2u (r) & 0x00400000u, !=, 0); /* quiet */
          g_assert_cmpuint (f2u (r) & 0xffffu, ==, 0);
          continue;
        }
      g_assert_cmpuint (f2u (r), ==, h << 16); /* representable: unchanged */
      if ((h & 0x7fff) >= 0x7f80)
        continue; /* Inf: no successor */
      {
        /* the midpoint to the next value up in magnitude goes to the even
         * one (0x7f7f's goes to Inf, 0x7f80, even), and a float ulp either
         * side goes to the nearer one */
        uint32_t mid = (h << 16) | 0x8000u, even = h & 1 ? h + 1 : h;
        g_assert_cmpuint (f2u (nl_round_bf16 (u2f (mid))), ==, even << 16);
        g_assert_cmpuint (f2u (nl_round_bf16 (u2f (mid - 1))), ==, h << 16);
        g_assert_cmpuint (f2u (nl_round_bf16 (u2f (mid + 1))), ==, (h + 1) << 16);
      }
    }
  /* signalling NaN comes back quiet, never as Inf */
  g_assert_true (isnan (nl_round_bf16 (u2f (0x7f800001u))));
  g_assert_true (isnan (nl_round_bf16 (u2f (0xff800001u))));
  g_assert_cmpuint (f2u (nl_round_bf16 (u2f (0xff800001u))) >> 31, ==, 1);
  g_assert_true (isinf (nl_round_bf16 (FLT_MAX)));
  g_assert_cmpfloat (nl_round_bf16 (-FLT_MAX), ==, -INFINITY);
}

static void
test_fp16_exhaustive (void)
{
  for (uint32_t h = 0; h < 65536; h++)
    {
      float v = (float) half_value ((uint16_t) h), r = nl_round_fp16 (v);
#ifdef __FLT16_MAX__
      {
        /* the decoder agrees with the compiler's half */
        uint16_t hh = (uint16_t) h;
        _Float16 c;
        memcpy (&c, &hh, sizeof c);
        assert_same ((float) c, v, v, "_Float16 decode");
      }
#endif
      if (isnan (v))
        {
          /* the NaN from half_value has no payload; give one */
          float n = u2f (f2u (v) | 0x00001fffu | ((h & 0x3ff) << 13));
          r = nl_round_fp16 (n);
          g_assert_true (isnan (r));
          g_assert_cmpuint (f2u (r) & 0x1fffu, ==, 0);
          g_assert_cmpuint (f2u (r) & 0x00400000u, !=, 0);
          g_assert_cmpuint (f2u (r) >> 31, ==, h >> 15);
          continue;
        }
      assert_same (r, v, v, "fp16 round trip");
      if ((h & 0x7fff) >= 0x7c00)
        continue;
      {
        /* the midpoint to the next magnitude is exact in float */
        double next = (h & 0x7fff) == 0x7bff ? 65536.0 : fabs (half_value ((uint16_t) (h + 1)));
        float mid = (float) copysign ((fabs ((double) v) + next) / 2, (double) v);
        float hi = (h & 0x7fff) == 0x7bff ? copysignf (INFINITY, v) : (float) half_value ((uint16_t) (h + 1));
        float even = h & 1 ? hi : v;
        g_assert_cmpfloat ((fabs ((double) v) + next) / 2, ==, fabs ((double) mid));
        assert_same (nl_round_fp16 (mid), even, mid, "fp16 tie");
        assert_same (nl_round_fp16 (nextafterf (mid, 0.0f)), v, mid, "fp16 below tie");
        assert_same (nl_round_fp16 (nextafterf (mid, copysignf (INFINITY, v))), hi, mid, "fp16 above tie");
      }
    }
  g_assert_cmpfloat (nl_round_fp16 (65519.996f), ==, 65504.0f);
  g_assert_cmpfloat (nl_round_fp16 (65520.0f), ==, INFINITY);
  g_assert_cmpfloat (nl_round_fp16 (-1e30f), ==, -INFINITY);
  g_assert_cmpfloat (nl_round_fp16 (0x1p-25f), ==, 0.0f);            /* tie with 0: even */
  g_assert_cmpfloat (nl_round_fp16 (0x1.000002p-25f), ==, 0x1p-24f);
  g_assert_cmpuint (f2u (nl_round_fp16 (-1e-10f)), ==, 0x80000000u); /* -0 */
  g_assert_true (isnan (nl_round_fp16 (u2f (0x7f800001u))));         /* signalling, low payload */
}

static void
test_random (void)
{
  const int n = 1000000;
  for (int i = 0; i < n; i++)
    {
      float x = sample_float ((guint64) i);
      assert_same (nl_round_bf16 (x), ref_bf16 (x), x, "bf16 vs double reference");
      assert_same (nl_round_fp16 (x), ref_fp16 (x), x, "fp16 vs double reference");
#ifdef __FLT16_MAX__
      assert_same (nl_round_fp16 (x), (float) (_Float16) x, x, "fp16 vs _Float16");
#endif
    }
#ifndef __FLT16_MAX__
  g_test_message ("no _Float16 in this compiler: fp16 checked against the double and brute-force references");
#endif
}

/* The slow, obvious reference on a sample. */
static void
test_brute_force (void)
{
  for (int i = 0; i < 1500; i++)
    {
      float x = sample_float ((guint64) i * 7919 + 3);
      if (isnan (x))
        continue;
      assert_same (nl_round_bf16 (x), brute_nearest (x, bf16_value, 0x7f80, 0x1p128), x, "bf16 vs brute force");
      assert_same (nl_round_fp16 (x), brute_nearest (x, half_value, 0x7c00, 65536.0), x, "fp16 vs brute force");
    }
}

static void
test_arrays (void)
{
  const int64_t n = 3 * NL_PAR_MIN + 7; /* threaded, with a tail */
  g_autofree float *src = g_new (float, n), *dst = g_new (float, n), *inplace = g_new (float, n);
  for (int64_t i = 0; i < n; i++)
    src[i] = sample_float ((guint64) i + 99);
  for (int p = NL_PRECISION_BF16; p <= NL_PRECISION_F16; p++)
    {
      float (*one) (float) = p == NL_PRECISION_BF16 ? nl_round_bf16 : nl_round_fp16;
      memset (dst, 0xff, n * sizeof (float));
      if (p == NL_PRECISION_BF16)
        nl_round_bf16_array (dst, src, n);
      else
        nl_round_fp16_array (dst, src, n);
      memcpy (inplace, src, n * sizeof (float));
      nl_round_array (p, inplace, inplace, n);
      for (int64_t i = 0; i < n; i++)
        {
          g_assert_cmpuint (f2u (dst[i]), ==, f2u (one (src[i])));
          g_assert_cmpuint (f2u (inplace[i]), ==, f2u (dst[i]));
        }
    }
  memset (dst, 0, n * sizeof (float));
  nl_round_array (NL_PRECISION_F32, dst, src, n);
  g_assert_cmpmem (dst, n * sizeof (float), src, n * sizeof (float));
}

/* ------------------------------------------------- Dense/Conv2D in half */

static NlOpInstance *
make (const char *op, const char *const *params, NlShape in, gboolean no_dx)
{
  g_autoptr (GError) error = NULL;
  NlOpInstance *inst = nl_op_instance_new (nl_op_lookup (op), params, 1, &in, TRUE, &error);
  g_assert_no_error (error);
  g_assert_nonnull (inst);
  if (no_dx)
    {
      nl_tensor_unref (inst->in_grad[0]);
      inst->in_grad[0] = NULL;
    }
  return inst;
}

/* Forward then backward in the given precision, through the op's own
 * kernels (nl_op_instance_forward has no precision); outputs and gradients
 * pre-filled with garbage so nothing stale passes. */
static void
run (NlOpInstance *inst, NlPrecision precision)
{
  g_autoptr (GError) error = NULL;
  NlOpCtx ctx = { .def = inst->def, .p = inst->p, .args = inst->args, .n_data = inst->n_data, .in = inst->in,
                  .out = inst->out, .aux = inst->aux, .saved = inst->saved, .out_grad = inst->out_grad,
                  .in_grad = inst->in_grad, .training = TRUE, .seed = inst->seed, .step = inst->step,
                  .state = &inst->state, .precision = precision };
  nl_tensor_fill (inst->out[0], 1e3f);
  g_assert_true (inst->kernels.forward (&ctx, &error));
  g_assert_no_error (error);
  for (int i = 0; i < inst->n_in; i++)
    if (inst->in_grad[i])
      nl_tensor_fill (inst->in_grad[i], 1e3f);
  g_assert_true (inst->kernels.backward (&ctx, &error));
  g_assert_no_error (error);
}

typedef enum { COPY, ROUND_BF16, ROUND_FP16, ABS, ZERO } CopyMode;

static void
copy_tensor (NlTensor *dst, const NlTensor *src, CopyMode mode)
{
  const float *s = nl_tensor_f32 (src);
  float *d = nl_tensor_f32 (dst);
  g_assert_cmpint (nl_tensor_numel (dst), ==, nl_tensor_numel (src));
  for (int64_t i = 0; i < nl_tensor_numel (src); i++)
    d[i] = mode == ROUND_BF16 ? ref_bf16 (s[i]) : mode == ROUND_FP16 ? ref_fp16 (s[i])
         : mode == ABS ? fabsf (s[i]) : mode == ZERO ? 0.0f : s[i];
}

/* dst gets src's x, weight, bias and out_grad: x, weight, out_grad through
 * mode, the bias copied (or zeroed with ABS). */
static void
copy_inputs (NlOpInstance *dst, const NlOpInstance *src, CopyMode mode)
{
  copy_tensor (dst->in[0], src->in[0], mode);
  copy_tensor (dst->in[1], src->in[1], mode);
  if (src->in[2])
    copy_tensor (dst->in[2], src->in[2], mode == ABS ? ZERO : COPY);
  copy_tensor (dst->out_grad[0], src->out_grad[0], mode);
}

static void
assert_bits_equal (const char *what, const NlTensor *a, const NlTensor *b)
{
  g_assert_cmpint (nl_tensor_numel (a), ==, nl_tensor_numel (b));
  for (int64_t i = 0; i < nl_tensor_numel (a); i++)
    if (f2u (nl_tensor_f32 (a)[i]) != f2u (nl_tensor_f32 (b)[i]))
      g_error ("%s: element %" G_GINT64_FORMAT " is %.9g, expected %.9g (bit-equal)", what, i,
               nl_tensor_f32 (a)[i], nl_tensor_f32 (b)[i]);
}

/* |half - f32| <= (2u + u^2) * sum|a||b| for a sum of products of rounded
 * factors (each off by at most u relative), plus both results' float32
 * summation error over k terms (k 2^-24 each, relative to the same sum),
 * plus fp16's absolute error below 2^-14 (2^-25 per factor, factors <= 1).
 * mag is the float32 op run on |a|, |b|: that sum for each element. Also
 * checks the rounding did something: some element differs. */
static void
assert_within (const char *what, const NlTensor *half, const NlTensor *f32, const NlTensor *mag, double u,
               int64_t k)
{
  int64_t differ = 0;
  double worst = 0;
  for (int64_t i = 0; i < nl_tensor_numel (half); i++)
    {
      double h = nl_tensor_f32 (half)[i], f = nl_tensor_f32 (f32)[i], m = nl_tensor_f32 (mag)[i];
      double bound = (2 * u + u * u + 2.0 * k * 0x1p-24) * m + k * 0x1p-23;
      g_assert_true (isfinite (h));
      if (!(fabs (h - f) <= bound))
        g_error ("%s: element %" G_GINT64_FORMAT " is %.9g, float32 gives %.9g: off by %.3g, bound %.3g", what,
                 i, h, f, fabs (h - f), bound);
      differ += h != f;
      worst = MAX (worst, fabs (h - f) / bound);
    }
  g_test_message ("%s: %" G_GINT64_FORMAT " of %" G_GINT64_FORMAT " differ from float32, worst %.3f of the bound",
                  what, differ, nl_tensor_numel (half), worst);
  g_assert_cmpint (differ, >, 0);
}

typedef struct {
  const char *op;
  const char *params[12];
  NlShape in;
  gboolean no_dx;
} AmpCase;

static void
amp_case (const AmpCase *c)
{
  NlOpInstance *h = make (c->op, c->params, c->in, c->no_dx);
  NlOpInstance *f = make (c->op, c->params, c->in, c->no_dx);
  NlOpInstance *mag = make (c->op, c->params, c->in, c->no_dx);
  const NlTensor *w = h->in[1];
  /* terms per element of y, dW and dx (an upper bound for Conv2D's dx) */
  int64_t k_y = nl_tensor_numel (w) / w->shape[0], k_w = nl_tensor_numel (h->out[0]) / w->shape[0];
  int64_t k_x = nl_tensor_numel (w) / w->shape[1];

  g_test_message ("%s %s %s", c->op, c->params[0], c->params[1]);
  nl_test_fill_uniform (h->in[0], -1, 1, 21);
  nl_test_fill_uniform (h->in[1], -1, 1, 22);
  if (h->in[2])
    nl_test_fill_uniform (h->in[2], -1, 1, 23);
  nl_test_fill_uniform (h->out_grad[0], -1, 1, 24);
  /* a value in fp16's subnormal range and one that flushes to -0 */
  nl_tensor_f32 (h->in[0])[0] = 3.1e-6f;
  nl_tensor_f32 (h->in[0])[1] = -1e-9f;
  copy_inputs (f, h, COPY);
  copy_inputs (mag, h, ABS);
  run (f, NL_PRECISION_F32);
  run (mag, NL_PRECISION_F32);

  /* both precisions on the same instance: its cached scratch is reused */
  for (int p = NL_PRECISION_BF16; p <= NL_PRECISION_F16; p++)
    {
      NlOpInstance *r = make (c->op, c->params, c->in, c->no_dx);
      double u = p == NL_PRECISION_BF16 ? 0x1p-8 : 0x1p-11;
      const char *name = p == NL_PRECISION_BF16 ? "bf16" : "fp16";
      g_autofree char *y = g_strdup_printf ("%s y", name), *dw = g_strdup_printf ("%s dW", name);
      g_autofree char *dx = g_strdup_printf ("%s dx", name), *db = g_strdup_printf ("%s db", name);

      copy_inputs (r, h, p == NL_PRECISION_BF16 ? ROUND_BF16 : ROUND_FP16);
      run (r, NL_PRECISION_F32);
      run (h, p);
      /* exactly the float32 op on pre-rounded data, weight and out_grad;
       * the bias as given, and its gradient from the unrounded out_grad */
      assert_bits_equal (y, h->out[0], r->out[0]);
      assert_bits_equal (dw, h->in_grad[1], r->in_grad[1]);
      if (!c->no_dx)
        assert_bits_equal (dx, h->in_grad[0], r->in_grad[0]);
      else
        g_assert_null (h->in_grad[0]);
      if (h->in[2])
        assert_bits_equal (db, h->in_grad[2], f->in_grad[2]);
      /* and close to the unrounded float32 op */
      assert_within (y, h->out[0], f->out[0], mag->out[0], u, k_y);
      assert_within (dw, h->in_grad[1], f->in_grad[1], mag->in_grad[1], u, k_w);
      if (!c->no_dx)
        assert_within (dx, h->in_grad[0], f->in_grad[0], mag->in_grad[0], u, k_x);
      /* the inputs were only read */
      assert_bits_equal ("x untouched", h->in[0], f->in[0]);
      assert_bits_equal ("weight untouched", h->in[1], f->in[1]);
      assert_bits_equal ("out_grad untouched", h->out_grad[0], f->out_grad[0]);
      nl_op_instance_free (r);
    }

  /* float32 again after half runs: the same as a fresh instance's */
  run (h, NL_PRECISION_F32);
  for (int i = 0; i < h->n_in; i++)
    if (h->in_grad[i])
      assert_bits_equal ("float32 grad after half", h->in_grad[i], f->in_grad[i]);
  assert_bits_equal ("float32 y after half", h->out[0], f->out[0]);
  nl_op_instance_free (h);
  nl_op_instance_free (f);
  nl_op_instance_free (mag);
}

static void
test_dense (void)
{
  const AmpCase cases[] = {
    { "Dense", { "units", "7", NULL }, nl_shape_of (2, 5L, 13L) },
    { "Dense", { "units", "4", "flatten", "false", "use_bias", "false", NULL }, nl_shape_of (3, 2L, 3L, 9L) },
    { "Dense", { "units", "17", NULL }, nl_shape_of (4, 9L, 1L, 5L, 5L), TRUE },
    { "Dense", { "units", "65", NULL }, nl_shape_of (2, 33L, 129L) },
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    amp_case (&cases[i]);
}

static void
test_conv (void)
{
  const AmpCase cases[] = {
    { "Conv2D", { "channels", "4", "kernel", "3", "padding", "1", NULL }, nl_shape_of (4, 2L, 3L, 7L, 7L) },
    { "Conv2D", { "channels", "6", "kernel", "3", "stride", "2", "groups", "2", NULL },
      nl_shape_of (4, 3L, 4L, 9L, 8L) },
    { "Conv2D", { "channels", "3", "kernel", "1", "use_bias", "false", NULL }, nl_shape_of (4, 2L, 5L, 4L, 4L) },
    { "Conv2D", { "channels", "3", "kernel", "2,3", "dilation", "2", NULL }, nl_shape_of (4, 1L, 2L, 8L, 9L),
      TRUE },
    { "Conv2D", { "channels", "16", "kernel", "5", NULL }, nl_shape_of (4, 3L, 6L, 12L, 12L) },
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    amp_case (&cases[i]);
}

/* ----------------------------------------------------------- loss scale */

/* Feed steps ("F" finite, "N" not) and check the scale and the skip count
 * after each against the expected list. */
static void
feed (NlLossScale *ls, const char *steps, const float *scales, const int *skipped)
{
  for (int i = 0; steps[i]; i++)
    {
      gboolean finite = steps[i] == 'F';
      g_assert_cmpint (nl_loss_scale_update (ls, finite), ==, finite);
      if (ls->scale != scales[i] || (int) ls->skipped != skipped[i])
        g_error ("after step %d (%c): scale %g, skipped %d; expected %g, %d", i + 1, steps[i], ls->scale,
                 (int) ls->skipped, scales[i], skipped[i]);
    }
}

static void
test_loss_scale_init (void)
{
  NlLossScale ls;
  nl_loss_scale_init (&ls, NL_PRECISION_F16, 0);
  g_assert_cmpfloat (ls.scale, ==, 65536.0f);
  g_assert_true (ls.dynamic);
  g_assert_cmpfloat (ls.growth_factor, ==, 2.0f);
  g_assert_cmpfloat (ls.backoff, ==, 0.5f);
  g_assert_cmpint (ls.growth_interval, ==, 2000);
  g_assert_cmpint (ls.good_steps, ==, 0);
  g_assert_cmpuint (ls.skipped, ==, 0);
  nl_loss_scale_init (&ls, NL_PRECISION_F16, 1024.0f);
  g_assert_cmpfloat (ls.scale, ==, 1024.0f);
  nl_loss_scale_init (&ls, NL_PRECISION_F16, 1000.0f); /* down to a power of two */
  g_assert_cmpfloat (ls.scale, ==, 512.0f);
  nl_loss_scale_init (&ls, NL_PRECISION_F16, 1e30f);
  g_assert_cmpfloat (ls.scale, ==, NL_LOSS_SCALE_MAX);
  nl_loss_scale_init (&ls, NL_PRECISION_F16, 1e-30f);
  g_assert_cmpfloat (ls.scale, ==, NL_LOSS_SCALE_MIN);
  nl_loss_scale_init (&ls, NL_PRECISION_F16, -3.0f);
  g_assert_cmpfloat (ls.scale, ==, 65536.0f);
  for (int p = NL_PRECISION_F32; p <= NL_PRECISION_BF16; p++)
    {
      nl_loss_scale_init (&ls, p, 4096.0f);
      g_assert_cmpfloat (ls.scale, ==, 1.0f);
      g_assert_false (ls.dynamic);
    }
}

static void
test_loss_scale_sequence (void)
{
  NlLossScale ls;
  nl_loss_scale_init (&ls, NL_PRECISION_F16, 8.0f);
  ls.growth_interval = 3;
  {
    /* growth on the 3rd finite in a row; a skip halves and restarts the
     * count; two skips in a row halve twice */
    const char *steps = "FFFFFNFFFFNNFFF";
    const float scales[] = { 8, 8, 16, 16, 16, 8, 8, 8, 16, 16, 8, 4, 4, 4, 8 };
    const int skipped[] = { 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 2, 3, 3, 3, 3 };
    feed (&ls, steps, scales, skipped);
  }
  g_assert_cmpint (ls.good_steps, ==, 0);
  g_assert_cmpint (ls.bad_steps, ==, 0);

  /* the defaults: 2000 finite steps double it, 1999 and a skip halve it */
  nl_loss_scale_init (&ls, NL_PRECISION_F16, 0);
  for (int i = 0; i < 1999; i++)
    g_assert_true (nl_loss_scale_update (&ls, TRUE));
  g_assert_cmpfloat (ls.scale, ==, 65536.0f);
  g_assert_cmpint (ls.good_steps, ==, 1999);
  g_assert_true (nl_loss_scale_update (&ls, TRUE));
  g_assert_cmpfloat (ls.scale, ==, 131072.0f);
  g_assert_cmpint (ls.good_steps, ==, 0);
  for (int i = 0; i < 1999; i++)
    nl_loss_scale_update (&ls, TRUE);
  g_assert_false (nl_loss_scale_update (&ls, FALSE));
  g_assert_cmpfloat (ls.scale, ==, 65536.0f);
  g_assert_cmpint (ls.good_steps, ==, 0);
  g_assert_cmpint (ls.bad_steps, ==, 1);
  g_assert_cmpuint (ls.skipped, ==, 1);
}

static void
test_loss_scale_limits (void)
{
  NlLossScale ls;
  /* the cap: 2^24, then growth stops */
  nl_loss_scale_init (&ls, NL_PRECISION_F16, 0x1p23f);
  ls.growth_interval = 2;
  {
    const float scales[] = { 0x1p23f, 0x1p24f, 0x1p24f, 0x1p24f, 0x1p24f, 0x1p24f, 0x1p23f };
    const int skipped[] = { 0, 0, 0, 0, 0, 0, 1 };
    feed (&ls, "FFFFFFN", scales, skipped);
  }
  /* the floor: from 2^16, 32 halvings reach 2^-16, then it stays */
  nl_loss_scale_init (&ls, NL_PRECISION_F16, 0);
  for (int i = 0; i < 50; i++)
    {
      g_assert_false (nl_loss_scale_update (&ls, FALSE));
      g_assert_cmpfloat (ls.scale, ==, MAX (ldexpf (1.0f, 15 - i), NL_LOSS_SCALE_MIN));
    }
  g_assert_cmpfloat (ls.scale, ==, 0x1p-16f);
  g_assert_cmpuint (ls.skipped, ==, 50);
  g_assert_cmpint (ls.bad_steps, ==, 50);
  g_assert_true (nl_loss_scale_update (&ls, TRUE));
  g_assert_cmpint (ls.bad_steps, ==, 0);
  g_assert_cmpint (ls.good_steps, ==, 1);
}

/* bf16 and fp32: the scale stays 1 whatever happens; non-finite steps are
 * still reported as not to apply. */
static void
test_loss_scale_static (void)
{
  for (int p = NL_PRECISION_F32; p <= NL_PRECISION_BF16; p++)
    {
      NlLossScale ls;
      nl_loss_scale_init (&ls, p, 0);
      for (int i = 0; i < 5000; i++)
        g_assert_true (nl_loss_scale_update (&ls, TRUE));
      g_assert_cmpfloat (ls.scale, ==, 1.0f);
      g_assert_false (nl_loss_scale_update (&ls, FALSE));
      g_assert_false (nl_loss_scale_update (&ls, FALSE));
      g_assert_cmpfloat (ls.scale, ==, 1.0f);
      g_assert_cmpuint (ls.skipped, ==, 2);
      g_assert_cmpint (ls.bad_steps, ==, 2);
      g_assert_true (nl_loss_scale_update (&ls, TRUE));
      g_assert_cmpfloat (ls.scale, ==, 1.0f);
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/amp/round/bf16-exhaustive", test_bf16_exhaustive);
  g_test_add_func ("/amp/round/fp16-exhaustive", test_fp16_exhaustive);
  g_test_add_func ("/amp/round/random", test_random);
  g_test_add_func ("/amp/round/brute-force", test_brute_force);
  g_test_add_func ("/amp/round/arrays", test_arrays);
  g_test_add_func ("/amp/dense", test_dense);
  g_test_add_func ("/amp/conv2d", test_conv);
  g_test_add_func ("/amp/loss-scale/init", test_loss_scale_init);
  g_test_add_func ("/amp/loss-scale/sequence", test_loss_scale_sequence);
  g_test_add_func ("/amp/loss-scale/limits", test_loss_scale_limits);
  g_test_add_func ("/amp/loss-scale/static", test_loss_scale_static);
  return g_test_run ();
}
