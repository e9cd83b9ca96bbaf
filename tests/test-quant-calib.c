/* test-quant-calib.c — calibration of INT8 activation ranges: naive
 * min/max exact over several batches and points; entropy (KL) clips rare
 * outliers well below the maximum, keeps a ReLU's zeros from pulling the
 * clip down, and its threshold is the one an
 * independent numpy implementation of MXNet's algorithm finds
 * (tests/quant_entropy_ref.py), within one histogram bin. */
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#include "engine/infer/nl-quant-calib.h"

/* n values from a fixed seed: |N(0, 1)| (unsigned) or N(0, 1), with
 * `outliers` of them at +-50 spread through the data and, unsigned, a
 * fraction `zeros` of exact zeros (what a ReLU leaves). */
static float *
make_data (int n, gboolean is_unsigned, int outliers, double zeros, guint32 seed)
{
  g_autoptr (GRand) r = g_rand_new_with_seed (seed);
  float *x = g_new (float, n);
  for (int i = 0; i < n; i++)
    {
      double u1 = g_rand_double_range (r, 1e-12, 1), u2 = g_rand_double (r);
      double z = sqrt (-2 * log (u1)) * cos (2 * G_PI * u2);
      x[i] = (float) (is_unsigned ? fabs (z) : z);
      if (is_unsigned && g_rand_double (r) < zeros)
        x[i] = 0;
    }
  for (int k = 0; k < outliers; k++)
    x[(gint64) k * n / outliers] = is_unsigned || k % 2 == 0 ? 50.0f : -50.0f;
  return x;
}

/* Calibrates point "x" on data fed in batches of `batch`. */
static NlQuantTable *
calibrate (NlQuantMethod method, const float *x, int n, int batch)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (NlQuantCalib) c = nl_quant_calib_new (method);
  for (int pass = 0; pass < nl_quant_calib_passes (c); pass++)
    {
      nl_quant_calib_begin_pass (c, pass);
      for (int i = 0; i < n; i += batch)
        nl_quant_calib_observe ("x", x + i, MIN (batch, n - i), c);
    }
  NlQuantTable *t = nl_quant_calib_finish (c, n, &error);
  g_assert_no_error (error);
  return t;
}

static void
test_naive (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (NlQuantCalib) c = nl_quant_calib_new (NL_QUANT_NAIVE);
  const float a1[] = { 0.5f, 2.0f, 1.25f }, a2[] = { 3.5f, 0.0f };
  const float b1[] = { -4.0f, 1.0f }, b2[] = { 2.5f, NAN, -1.0f, INFINITY };
  g_assert_cmpint (nl_quant_calib_passes (c), ==, 1);
  nl_quant_calib_begin_pass (c, 0);
  /* b is first seen first: the table keeps that order */
  nl_quant_calib_observe ("b", b1, 2, c);
  nl_quant_calib_observe ("a", a1, 3, c);
  nl_quant_calib_observe ("b", b2, 4, c);
  nl_quant_calib_observe ("a", a2, 2, c);
  g_autoptr (NlQuantTable) t = nl_quant_calib_finish (c, 64, &error);
  g_assert_no_error (error);
  g_assert_cmpint (t->method, ==, NL_QUANT_NAIVE);
  g_assert_cmpint (t->calibration_samples, ==, 64);
  g_assert_cmpuint (t->ranges->len, ==, 2);
  const NlQuantRange *b = &g_array_index (t->ranges, NlQuantRange, 0);
  const NlQuantRange *a = &g_array_index (t->ranges, NlQuantRange, 1);
  g_assert_cmpstr (b->point, ==, "b");
  g_assert_cmpfloat (b->min, ==, -4.0f);
  g_assert_cmpfloat (b->max, ==, 2.5f); /* non-finite values are not ranges */
  g_assert_cmpfloat (b->threshold, ==, 4.0f);
  g_assert_false (b->is_unsigned);
  g_assert_cmpstr (a->point, ==, "a");
  g_assert_cmpfloat (a->min, ==, 0.0f);
  g_assert_cmpfloat (a->max, ==, 3.5f);
  g_assert_cmpfloat (a->threshold, ==, 3.5f);
  g_assert_true (a->is_unsigned);
  g_assert_true (nl_quant_table_find (t, "a") == a);
}

static void
test_refused (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (NlQuantCalib) empty = nl_quant_calib_new (NL_QUANT_NAIVE);
  g_autoptr (NlQuantCalib) c = nl_quant_calib_new (NL_QUANT_ENTROPY);
  const float bad[] = { NAN, INFINITY }, zeros[] = { 0, 0, 0 };
  g_assert_null (nl_quant_calib_finish (empty, 1, &error));
  g_assert_nonnull (error);
  g_clear_error (&error);
  for (int pass = 0; pass < 2; pass++)
    {
      nl_quant_calib_begin_pass (c, pass);
      nl_quant_calib_observe ("dead_relu", zeros, 3, c);
      nl_quant_calib_observe ("fc9", bad, 2, c);
    }
  g_assert_null (nl_quant_calib_finish (c, 1, &error));
  g_assert_nonnull (strstr (error->message, "“fc9”"));
}

/* An all-zero point still gets a usable range (threshold > 0). */
static void
test_all_zero (void)
{
  g_autoptr (GError) error = NULL;
  const float zeros[] = { 0, 0, 0 };
  for (int m = 0; m < NL_QUANT_METHOD_COUNT; m++)
    {
      g_autoptr (NlQuantTable) t = calibrate ((NlQuantMethod) m, zeros, 3, 3);
      const NlQuantRange *r = nl_quant_table_find (t, "x");
      g_assert_cmpfloat (r->threshold, >, 0);
      g_assert_true (r->is_unsigned);
    }
}

/* The numpy reference's threshold of x (n floats). */
static double
reference_threshold (const float *x, int n, double *amax)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("nl-quant-calib-XXXXXX", &error);
  g_autofree char *file = g_build_filename (dir, "x.f32", NULL);
  g_autofree char *script = g_build_filename (g_getenv ("NETLOOM_SOURCE_DIR"), "tests", "quant_entropy_ref.py", NULL);
  g_autofree char *out = NULL, *err = NULL;
  int status = 0;
  double t;
  g_assert_true (g_file_set_contents (file, (const char *) x, (gssize) n * sizeof (float), &error));
  const char *argv[] = { "/usr/bin/python3", script, file, NULL };
  g_assert_true (g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, &err, &status, &error));
  g_unlink (file);
  g_rmdir (dir);
  if (!g_spawn_check_wait_status (status, NULL))
    g_error ("quant_entropy_ref.py failed: %s", err);
  g_assert_cmpint (sscanf (out, "%lf %lf", &t, amax), ==, 2);
  return t;
}

typedef struct {
  gboolean is_unsigned;
  int outliers;
  double zeros;
} EntropyCase;

static const EntropyCase cases[] = {
  { TRUE, 12, 0 },     /* rare outliers at 50, the bulk within 5: clipped */
  { FALSE, 12, 0 },
  { TRUE, 0, 0.6 },    /* a ReLU's output: the zeros must not pull the clip down */
};

static void
test_entropy (gconstpointer data)
{
  const EntropyCase *c = data;
  const int n = 60000;
  double amax = 0;
  if (!g_getenv ("NETLOOM_SOURCE_DIR") || !g_file_test ("/usr/bin/python3", G_FILE_TEST_IS_EXECUTABLE))
    {
      g_test_skip ("no /usr/bin/python3 (with numpy) for the reference");
      return;
    }
  g_autofree float *x = make_data (n, c->is_unsigned, c->outliers, c->zeros, 7 + (c - cases));
  g_autoptr (NlQuantTable) t = calibrate (NL_QUANT_ENTROPY, x, n, 1000);
  g_autoptr (NlQuantTable) naive = calibrate (NL_QUANT_NAIVE, x, n, 1000);
  const NlQuantRange *r = nl_quant_table_find (t, "x");
  g_assert_cmpint (t->method, ==, NL_QUANT_ENTROPY);
  g_assert_true (r->is_unsigned == c->is_unsigned);
  g_assert_cmpfloat (nl_quant_table_find (naive, "x")->threshold, ==, r->max);
  if (c->outliers)
    {
      g_assert_cmpfloat (r->max, ==, 50.0f);
      g_assert_cmpfloat (r->threshold, <, 0.2 * r->max);
      g_assert_cmpfloat (r->threshold, >, 2.0);
    }
  else
    g_assert_cmpfloat (r->threshold, >, 0.5 * r->max);
  double want = reference_threshold (x, n, &amax);
  g_assert_cmpfloat ((float) amax, ==, r->max);
  g_test_message ("threshold %.6f of max %.6f, numpy %.6f (bin %.6f)", r->threshold, r->max, want, amax / 8001);
  g_assert_cmpfloat (fabs (r->threshold - want), <=, amax / 8001 * 1.001);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/quant-calib/naive", test_naive);
  g_test_add_func ("/quant-calib/refused", test_refused);
  g_test_add_func ("/quant-calib/all-zero", test_all_zero);
  g_test_add_data_func ("/quant-calib/entropy-outliers-unsigned", &cases[0], test_entropy);
  g_test_add_data_func ("/quant-calib/entropy-outliers-signed", &cases[1], test_entropy);
  g_test_add_data_func ("/quant-calib/entropy-relu-zeros", &cases[2], test_entropy);
  return g_test_run ();
}
