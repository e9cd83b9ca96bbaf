/* nl-test-util.c — helpers shared by the test programs. */
#include "nl-test-util.h"

#include <glib/gstdio.h>
#include <math.h>

void
nl_test_fill_uniform (NlTensor *t, float lo, float hi, guint64 seed)
{
  GRand *r = g_rand_new_with_seed ((guint32) seed);
  float *p = nl_tensor_f32 (t);
  for (int64_t i = 0; i < nl_tensor_numel (t); i++)
    p[i] = lo + (hi - lo) * (float) g_rand_double (r);
  g_rand_free (r);
}

double
nl_test_close_ratio (const float *a, const float *b, int64_t n, double atol, double rtol)
{
  double worst = 0;
  for (int64_t i = 0; i < n; i++)
    {
      double r = fabs ((double) a[i] - b[i]) / (atol + rtol * fabs ((double) b[i]));
      if (!(r <= worst)) /* NaN counts as worst */
        worst = isnan (r) ? INFINITY : r;
    }
  return worst;
}

void
nl_test_assert_close_impl (const char *file, int line, const char *what,
                           const float *a, const float *b, int64_t n, double atol, double rtol)
{
  for (int64_t i = 0; i < n; i++)
    {
      double diff = fabs ((double) a[i] - b[i]);
      if (!(diff <= atol + rtol * fabs ((double) b[i])))
        {
          g_autofree char *msg = g_strdup_printf ("%s: element %" G_GINT64_FORMAT " of %" G_GINT64_FORMAT
                                                  " is %.7g, expected %.7g (atol %g, rtol %g)",
                                                  what, i, n, a[i], b[i], atol, rtol);
          g_assertion_message (G_LOG_DOMAIN, file, line, "nl_test_assert_close", msg);
        }
    }
}

char *
nl_test_source_path (const char *rel)
{
  const char *root = g_getenv ("NETLOOM_SOURCE_DIR");
  return g_build_filename (root ? root : ".", rel, NULL);
}

void
nl_test_remove_tree (const char *dir)
{
  GDir *d = g_dir_open (dir, 0, NULL);
  const char *name;
  if (!d)
    return;
  while ((name = g_dir_read_name (d)))
    {
      g_autofree char *p = g_build_filename (dir, name, NULL);
      if (g_file_test (p, G_FILE_TEST_IS_DIR) && !g_file_test (p, G_FILE_TEST_IS_SYMLINK))
        nl_test_remove_tree (p);
      else
        g_unlink (p);
    }
  g_dir_close (d);
  g_rmdir (dir);
}
