/* test-init.c — initializers: parsing, fans, the statistics of what they
 * draw against the formulas, and determinism. */
#include <math.h>
#include <omp.h>
#include <string.h>

#include "engine/graph/nl-init.h"
#include "ops/cpu/nl-cpu-util.h"
#include "nl-test-util.h"

typedef struct {
  double mean, std, min, max;
  double within1, within2; /* fraction of |x - mean| below 1 and 2 std */
  double lag1;             /* correlation of neighbours */
} Stats;

static Stats
stats_of (const NlTensor *t)
{
  const float *p = nl_tensor_f32 (t);
  int64_t n = nl_tensor_numel (t);
  Stats s = { .min = INFINITY, .max = -INFINITY };
  double sum = 0, sq = 0, cross = 0;
  int64_t in1 = 0, in2 = 0;

  for (int64_t i = 0; i < n; i++)
    {
      sum += p[i];
      s.min = MIN (s.min, p[i]);
      s.max = MAX (s.max, p[i]);
    }
  s.mean = sum / n;
  for (int64_t i = 0; i < n; i++)
    sq += (p[i] - s.mean) * (p[i] - s.mean);
  s.std = sqrt (sq / n);
  for (int64_t i = 0; i < n; i++)
    {
      double d = fabs (p[i] - s.mean);
      in1 += d < s.std;
      in2 += d < 2 * s.std;
      if (i + 1 < n)
        cross += (p[i] - s.mean) * (p[i + 1] - s.mean);
    }
  s.within1 = (double) in1 / n;
  s.within2 = (double) in2 / n;
  s.lag1 = cross / (n - 1) / (s.std * s.std);
  return s;
}

static NlTensor *
draw (const char *spec, int ndim, const int64_t *shape, guint64 seed, guint64 stream)
{
  g_autoptr (GError) error = NULL;
  NlInitializer init;
  NlTensor *t = nl_tensor_new (NL_DTYPE_F32, ndim, shape);
  g_assert_true (nl_initializer_parse (spec, &init, &error));
  g_assert_no_error (error);
  nl_tensor_fill (t, NAN); /* every element must be written */
  nl_initializer_apply (&init, t, seed, stream);
  return t;
}

/* Gaussian with the given std: mean 0, the std, the 68/95 rule, and
 * neighbours uncorrelated (Box-Muller pairs included), each within five
 * standard errors for the sample size. */
static void
check_gaussian (const NlTensor *t, double std)
{
  double n = (double) nl_tensor_numel (t), se = 5 / sqrt (n);
  Stats s = stats_of (t);
  g_test_message ("gaussian: mean %g std %g (want %g) within1 %g within2 %g lag1 %g", s.mean, s.std, std,
                  s.within1, s.within2, s.lag1);
  g_assert_cmpfloat (fabs (s.mean), <, se * std);
  g_assert_cmpfloat (fabs (s.std / std - 1), <, se / sqrt (2));
  g_assert_cmpfloat (fabs (s.within1 - 0.682689), <, se * 0.466);
  g_assert_cmpfloat (fabs (s.within2 - 0.954500), <, se * 0.209);
  g_assert_cmpfloat (fabs (s.lag1), <, se);
  g_assert_cmpfloat (s.max, <, 6.5 * std);
  g_assert_cmpfloat (s.min, >, -6.5 * std);
}

/* Uniform in [-scale, scale): bounds hit closely, std scale / sqrt 3, and a
 * flat histogram. */
static void
check_uniform (const NlTensor *t, double scale)
{
  const float *p = nl_tensor_f32 (t);
  int64_t n = nl_tensor_numel (t);
  int64_t bins[10] = { 0 };
  double se = 5 / sqrt ((double) n);
  Stats s = stats_of (t);

  g_test_message ("uniform: mean %g std %g min %g max %g (scale %g)", s.mean, s.std, s.min, s.max, scale);
  g_assert_cmpfloat (s.min, >=, -scale * (1 + 1e-6));
  g_assert_cmpfloat (s.max, <=, scale * (1 + 1e-6));
  g_assert_cmpfloat (s.min, <, -0.999 * scale);
  g_assert_cmpfloat (s.max, >, 0.999 * scale);
  /* five standard errors: of the mean, the std (uniform kurtosis), a bin */
  g_assert_cmpfloat (fabs (s.mean), <, se * scale / sqrt (3));
  g_assert_cmpfloat (fabs (s.std / (scale / sqrt (3)) - 1), <, se * 0.45);
  g_assert_cmpfloat (fabs (s.lag1), <, se);
  for (int64_t i = 0; i < n; i++)
    bins[CLAMP ((int) ((p[i] / scale + 1) * 5), 0, 9)]++;
  for (int b = 0; b < 10; b++)
    g_assert_cmpfloat (fabs ((double) bins[b] / n - 0.1), <, se * 0.3);
}

static void
test_xavier (void)
{
  /* conv (out 256, in 128, 3x3): fan_in 1152, fan_out 2304, avg 1728 */
  const int64_t conv[] = { 256, 128, 3, 3 };
  const int64_t conv2[] = { 64, 32, 5, 5 };
  const int64_t dense[] = { 1000, 500 };
  const int64_t bias[] = { 100000 };
  g_autoptr (NlTensor) a = draw ("xavier", 4, conv, 1, 0);
  g_autoptr (NlTensor) b = draw ("xavier:gaussian:in:2", 2, dense, 1, 1);
  g_autoptr (NlTensor) c = draw ("xavier:gaussian:out", 4, conv2, 1, 2);
  g_autoptr (NlTensor) d = draw ("xavier:uniform:in", 4, conv, 1, 3);
  g_autoptr (NlTensor) e = draw ("xavier", 1, bias, 1, 4);
  g_autoptr (NlTensor) f = draw ("xavier:gaussian", 2, dense, 1, 5);

  check_uniform (a, sqrt (3.0 / 1728));
  check_gaussian (b, sqrt (2.0 / 500));
  check_gaussian (c, sqrt (3.0 / (64 * 25))); /* fan_out = out * k */
  check_uniform (d, sqrt (3.0 / 1152));
  check_uniform (e, sqrt (3.0 / 100000)); /* 1-D: both fans are shape[0] */
  check_gaussian (f, sqrt (3.0 / 750));
}

static void
test_msra (void)
{
  /* PyTorch kaiming_normal_ (a = slope, fan_in): std = sqrt (2 / (1 + a^2) / fan_in) */
  const int64_t conv[] = { 128, 64, 3, 3 };
  const int64_t dense[] = { 300, 1000 };
  g_autoptr (NlTensor) a = draw ("msra", 4, conv, 2, 0);
  g_autoptr (NlTensor) b = draw ("msra:0", 4, conv, 2, 1);
  g_autoptr (NlTensor) c = draw ("msra:1", 2, dense, 2, 2);

  check_gaussian (a, sqrt (2.0 / 1.0625 / 576));
  check_gaussian (b, sqrt (2.0 / 576));
  check_gaussian (c, sqrt (1.0 / 1000));
}

static void
test_normal_uniform_constant (void)
{
  const int64_t big[] = { 1000, 1000 };
  const int64_t odd[] = { 3, 5, 7 }; /* odd count: the last Box-Muller pair is half used */
  g_autoptr (NlTensor) a = draw ("normal", 2, big, 3, 0);
  g_autoptr (NlTensor) b = draw ("normal:0.5", 2, big, 3, 1);
  g_autoptr (NlTensor) c = draw ("uniform", 2, big, 3, 2);
  g_autoptr (NlTensor) d = draw ("uniform:2", 2, big, 3, 3);
  g_autoptr (NlTensor) o = draw ("normal:1", 3, odd, 3, 4);
  g_autoptr (NlTensor) z = draw ("zeros", 3, odd, 3, 5);
  g_autoptr (NlTensor) one = draw ("ones", 3, odd, 3, 6);
  g_autoptr (NlTensor) k = draw ("constant:-2.5", 3, odd, 3, 7);

  check_gaussian (a, 0.01);
  check_gaussian (b, 0.5);
  check_uniform (c, 0.07);
  check_uniform (d, 2.0);
  for (int i = 0; i < 105; i++)
    {
      g_assert_true (isfinite (nl_tensor_f32 (o)[i]));
      g_assert_cmpfloat (nl_tensor_f32 (z)[i], ==, 0.0f);
      g_assert_cmpfloat (nl_tensor_f32 (one)[i], ==, 1.0f);
      g_assert_cmpfloat (nl_tensor_f32 (k)[i], ==, -2.5f);
    }
}

static int64_t
count_equal (const NlTensor *a, const NlTensor *b)
{
  int64_t same = 0;
  for (int64_t i = 0; i < nl_tensor_numel (a); i++)
    same += nl_tensor_f32 (a)[i] == nl_tensor_f32 (b)[i];
  return same;
}

static void
test_determinism (void)
{
  const int64_t shape[] = { 300, 301 }; /* > NL_PAR_MIN, odd count */
  const char *specs[] = { "xavier", "xavier:gaussian", "msra", "normal", "uniform" };
  int saved = omp_get_max_threads ();

  for (guint i = 0; i < G_N_ELEMENTS (specs); i++)
    {
      int64_t n = 300 * 301;
      omp_set_num_threads (1);
      g_autoptr (NlTensor) a = draw (specs[i], 2, shape, 42, 7);
      omp_set_num_threads (MAX (saved, 2));
      g_autoptr (NlTensor) b = draw (specs[i], 2, shape, 42, 7);
      g_autoptr (NlTensor) c = draw (specs[i], 2, shape, 42, 8);
      g_autoptr (NlTensor) d = draw (specs[i], 2, shape, 43, 7);
      g_assert_cmpmem (nl_tensor_f32 (a), n * 4, nl_tensor_f32 (b), n * 4);
      /* another stream or seed: a different tensor, not a shifted copy */
      g_assert_cmpint (count_equal (a, c), <, n / 100);
      g_assert_cmpint (count_equal (a, d), <, n / 100);
      g_assert_cmpfloat (nl_tensor_f32 (a)[1], !=, nl_tensor_f32 (c)[0]);
    }
  omp_set_num_threads (saved);
}

/* The values are the documented functions of nl_rand_uniform, so other
 * code (or a GPU port) can reproduce them. */
static void
test_documented_values (void)
{
  const int64_t shape[] = { 7, 5 };
  const int n = 35;
  g_autoptr (NlTensor) g = draw ("normal:2", 2, shape, 5, 9);
  g_autoptr (NlTensor) u = draw ("uniform:3", 2, shape, 5, 9);
  float expect_g[35], expect_u[35];

  for (int k = 0; 2 * k < n; k++)
    {
      double u1 = nl_rand_uniform (5, 9, 2 * k), u2 = nl_rand_uniform (5, 9, 2 * k + 1);
      double r = 2 * sqrt (-2 * log (1 - u1));
      expect_g[2 * k] = (float) (r * cos (2 * G_PI * u2));
      if (2 * k + 1 < n)
        expect_g[2 * k + 1] = (float) (r * sin (2 * G_PI * u2));
    }
  for (int i = 0; i < n; i++)
    expect_u[i] = -3 + 6 * nl_rand_uniform (5, 9, i);
  nl_test_assert_close (nl_tensor_f32 (g), expect_g, n, 1e-6, 1e-5);
  nl_test_assert_close (nl_tensor_f32 (u), expect_u, n, 1e-6, 1e-5);
}

static void
test_fans (void)
{
  static const struct {
    int ndim;
    int64_t d[4];
    int64_t in, out;
  } cases[] = {
    { 4, { 64, 32, 3, 3 }, 288, 576 }, /* conv: in * k, out * k */
    { 4, { 8, 3, 5, 7 }, 105, 280 },
    { 3, { 16, 8, 5 }, 40, 80 },
    { 2, { 10, 784 }, 784, 10 },       /* dense (out, in) */
    { 1, { 7 }, 7, 7 },
    { 0, { 0 }, 1, 1 },
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      NlShape s = nl_shape_make (cases[i].ndim, cases[i].d);
      int64_t in = -1, out = -1;
      nl_initializer_fans (&s, &in, &out);
      g_assert_cmpint (in, ==, cases[i].in);
      g_assert_cmpint (out, ==, cases[i].out);
    }
}

static void
test_parse (void)
{
  NlInitializer init;

  g_assert_true (nl_initializer_parse ("xavier", &init, NULL));
  g_assert_cmpint (init.kind, ==, NL_INITIALIZER_XAVIER);
  g_assert_false (init.gaussian);
  g_assert_cmpint (init.factor_type, ==, 0);
  g_assert_cmpfloat (init.magnitude, ==, 3.0f);

  g_assert_true (nl_initializer_parse ("Xavier:Gaussian:in:2", &init, NULL));
  g_assert_true (init.gaussian);
  g_assert_cmpint (init.factor_type, ==, 1);
  g_assert_cmpfloat (init.magnitude, ==, 2.0f);

  g_assert_true (nl_initializer_parse ("xavier:uniform:out", &init, NULL));
  g_assert_false (init.gaussian);
  g_assert_cmpint (init.factor_type, ==, 2);
  g_assert_cmpfloat (init.magnitude, ==, 3.0f);

  g_assert_true (nl_initializer_parse ("msra", &init, NULL));
  g_assert_cmpint (init.kind, ==, NL_INITIALIZER_MSRA);
  g_assert_cmpfloat (init.slope, ==, 0.25f);
  g_assert_cmpint (init.factor_type, ==, 1);
  g_assert_cmpfloat_with_epsilon (init.magnitude, 2.0 / 1.0625, 1e-6);
  g_assert_true (nl_initializer_parse ("msra:0.1", &init, NULL));
  g_assert_cmpfloat (init.slope, ==, 0.1f);

  g_assert_true (nl_initializer_parse ("normal", &init, NULL));
  g_assert_cmpint (init.kind, ==, NL_INITIALIZER_NORMAL);
  g_assert_cmpfloat (init.sigma, ==, 0.01f);
  g_assert_true (nl_initializer_parse ("normal:0.5", &init, NULL));
  g_assert_cmpfloat (init.sigma, ==, 0.5f);
  g_assert_true (nl_initializer_parse ("uniform", &init, NULL));
  g_assert_cmpint (init.kind, ==, NL_INITIALIZER_UNIFORM);
  g_assert_cmpfloat (init.scale, ==, 0.07f);
  g_assert_true (nl_initializer_parse ("uniform:0.2", &init, NULL));
  g_assert_cmpfloat (init.scale, ==, 0.2f);
  g_assert_true (nl_initializer_parse ("zeros", &init, NULL));
  g_assert_cmpint (init.kind, ==, NL_INITIALIZER_ZEROS);
  g_assert_true (nl_initializer_parse ("ONES", &init, NULL));
  g_assert_cmpint (init.kind, ==, NL_INITIALIZER_ONES);
  g_assert_true (nl_initializer_parse ("constant:-2.5", &init, NULL));
  g_assert_cmpint (init.kind, ==, NL_INITIALIZER_CONSTANT);
  g_assert_cmpfloat (init.value, ==, -2.5f);
}

static void
test_bad_specs (void)
{
  static const struct {
    const char *spec, *names;
  } bad[] = {
    { "", "empty" },
    { "glorot", "glorot" },
    { "xavier:triangular", "triangular" },
    { "xavier:gaussian:sideways", "sideways" },
    { "xavier:gaussian:in:-1", "-1" },
    { "xavier:gaussian:in:abc", "abc" },
    { "xavier:uniform:avg:3:4", "'4'" },
    { "msra:abc", "abc" },
    { "msra:1:2", "'2'" },
    { "normal:0", "'0'" },
    { "normal:-1", "-1" },
    { "normal:1e50", "1e50" },
    { "uniform:x", "'x'" },
    { "zeros:1", "'1'" },
    { "ones:2", "'2'" },
    { "constant", "value" },
    { "constant:", "''" },
    { "constant:nan", "nan" },
  };
  for (guint i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_autoptr (GError) error = NULL;
      NlInitializer init = { .kind = NL_INITIALIZER_ONES, .value = 123 };
      gboolean ok = nl_initializer_parse (bad[i].spec, &init, &error);
      g_test_message ("spec \"%s\": %s", bad[i].spec, error ? error->message : "(accepted)");
      g_assert_false (ok);
      g_assert_error (error, NL_INITIALIZER_ERROR, NL_INITIALIZER_ERROR_INVALID);
      g_assert_nonnull (strstr (error->message, bad[i].names));
      /* a failed parse leaves the struct alone */
      g_assert_cmpint (init.kind, ==, NL_INITIALIZER_ONES);
      g_assert_cmpfloat (init.value, ==, 123);
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/init/parse", test_parse);
  g_test_add_func ("/init/bad-specs", test_bad_specs);
  g_test_add_func ("/init/fans", test_fans);
  g_test_add_func ("/init/xavier", test_xavier);
  g_test_add_func ("/init/msra", test_msra);
  g_test_add_func ("/init/normal-uniform-constant", test_normal_uniform_constant);
  g_test_add_func ("/init/determinism", test_determinism);
  g_test_add_func ("/init/documented-values", test_documented_values);
  return g_test_run ();
}
