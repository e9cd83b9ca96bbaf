/* test-grad-reducer.c — data parallelism's gradient buckets in one
 * process: the cut into buckets (uneven sizes, a gradient larger than the
 * limit, empty gradients, none at all), and a fused bucket's reduction
 * against a plain element-by-element sum. The real all-reduce across
 * processes runs under mpirun in tests/test-mpi.sh. */
#include "engine/nl-grad-reducer.h"
#include "nl-test-util.h"

static void
test_plan (void)
{
  /* 64 bytes: 16 floats per bucket */
  const int64_t numel[] = { 10, 0, 5, 300, 2, 2, 0 };
  int of[G_N_ELEMENTS (numel)];
  const int want[] = { 0, -1, 0, 1, 2, 2, -1 };
  g_assert_cmpint (nl_grad_buckets_plan (numel, G_N_ELEMENTS (numel), 64, of), ==, 3);
  for (gsize i = 0; i < G_N_ELEMENTS (numel); i++)
    g_assert_cmpint (of[i], ==, want[i]);
  /* nothing, or only empty gradients: no bucket */
  g_assert_cmpint (nl_grad_buckets_plan (numel, 0, 64, of), ==, 0);
  g_assert_cmpint (nl_grad_buckets_plan (numel + 1, 1, 64, of), ==, 0);
  g_assert_cmpint (of[0], ==, -1);
  /* exactly at the limit stays in one bucket; a byte more starts another */
  {
    const int64_t four[] = { 8, 8, 1 };
    int o[3];
    g_assert_cmpint (nl_grad_buckets_plan (four, 3, 64, o), ==, 2);
    g_assert_cmpint (o[1], ==, 0);
    g_assert_cmpint (o[2], ==, 1);
  }
}

/* "The other process": adds its values to the fused buffer */
typedef struct {
  const float *other;
  int calls;
  int64_t last_n;
} Fake;

static gboolean
add_other (gpointer user, float *x, int64_t n, GError **error)
{
  Fake *f = user;
  (void) error;
  for (int64_t i = 0; i < n; i++)
    x[i] += f->other[i];
  f->calls++;
  f->last_n = n;
  return TRUE;
}

static void
test_reduce_matches_plain_sum (void)
{
  NlBackend *b = nl_backend_cpu ();
  const int64_t numel[] = { 7, 1, 33, 5 };
  float *grads[4], *mine[4], other[46], fusion[46];
  g_autoptr (GError) error = NULL;
  Fake f = { other, 0, 0 };
  int64_t at = 0;

  for (int i = 0; i < 4; i++)
    {
      grads[i] = g_new (float, numel[i]);
      mine[i] = g_new (float, numel[i]);
      for (int64_t j = 0; j < numel[i]; j++)
        {
          grads[i][j] = mine[i][j] = (float) g_test_rand_double_range (-3, 3);
          other[at + j] = (float) g_test_rand_double_range (-3, 3);
        }
      at += numel[i];
    }
  g_assert_true (nl_grad_bucket_reduce (b, fusion, grads, numel, 4, add_other, &f, &error));
  g_assert_no_error (error);
  g_assert_cmpint (f.calls, ==, 1); /* one call for the fused bucket */
  g_assert_cmpint (f.last_n, ==, 46);
  at = 0;
  for (int i = 0; i < 4; i++)
    {
      for (int64_t j = 0; j < numel[i]; j++)
        g_assert_cmpfloat (grads[i][j], ==, mine[i][j] + other[at + j]);
      at += numel[i];
    }
  /* a bucket of one is reduced in place, without the fusion buffer */
  f.calls = 0;
  g_assert_true (nl_grad_bucket_reduce (b, NULL, grads + 2, numel + 2, 1, add_other, &f, &error));
  g_assert_cmpint (f.calls, ==, 1);
  g_assert_cmpint (f.last_n, ==, 33);
  for (int i = 0; i < 4; i++)
    {
      g_free (grads[i]);
      g_free (mine[i]);
    }
}

static gboolean
fail_reduce (gpointer user, float *x, int64_t n, GError **error)
{
  (void) user, (void) x, (void) n;
  g_set_error_literal (error, NL_COMM_ERROR, NL_COMM_ERROR_FAILED, "the wire was cut");
  return FALSE;
}

static void
test_reduce_failure (void)
{
  float a[2] = { 1, 2 }, c[3] = { 3, 4, 5 }, fusion[5];
  float *grads[2] = { a, c };
  const int64_t numel[2] = { 2, 3 };
  g_autoptr (GError) error = NULL;
  g_assert_false (nl_grad_bucket_reduce (nl_backend_cpu (), fusion, grads, numel, 2, fail_reduce, NULL, &error));
  g_assert_error (error, NL_COMM_ERROR, NL_COMM_ERROR_FAILED);
  /* the gradients are left as they were */
  g_assert_cmpfloat (a[1], ==, 2);
  g_assert_cmpfloat (c[2], ==, 5);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/grad-reducer/plan", test_plan);
  g_test_add_func ("/grad-reducer/reduce-matches-plain-sum", test_reduce_matches_plain_sum);
  g_test_add_func ("/grad-reducer/reduce-failure", test_reduce_failure);
  return g_test_run ();
}
