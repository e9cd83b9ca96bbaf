/* test-grad-reducer.c — data parallelism's gradient buckets in one
 * process: the cut into buckets (uneven sizes, a gradient larger than the
 * limit, empty gradients, none at all), a fused bucket's reduction
 * against a plain element-by-element sum, and the reducer overlapped with
 * the ops that write its gradients on a scheduler (inline and with
 * workers), also when one of them fails. The real all-reduce across
 * processes runs under mpirun in tests/test-mpi.sh. */
#include "engine/graph/nl-grad-reducer.h"
#include "nl-test-util.h"

#include <string.h>

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

/* ---- the reducer on a scheduler, with a backend whose all-reduce adds
 * "the other process's" gradients (all 0.5) ---- */

static int fake_calls;           /* all-reduces made, in order: */
static int64_t fake_sizes[16];   /* their lengths */

static gboolean
fake_allreduce (NlBackend *b, NlComm *comm, float *x, int64_t n, GError **error)
{
  (void) b, (void) comm, (void) error;
  g_usleep (2000); /* long enough that the ops pushed after the bucket run meanwhile */
  for (int64_t i = 0; i < n; i++)
    x[i] += 0.5f;
  if (fake_calls < (int) G_N_ELEMENTS (fake_sizes))
    fake_sizes[fake_calls] = n;
  fake_calls++;
  return TRUE;
}

typedef struct {
  float *x;
  int64_t n;
  float value;
  gboolean fail;
} Write;

/* backward's step that writes one gradient */
static gboolean
write_grad (gpointer data, GError **error)
{
  Write *w = data;
  if (w->fail)
    {
      g_set_error_literal (error, NL_COMM_ERROR, NL_COMM_ERROR_FAILED, "the kernel broke");
      return FALSE;
    }
  for (int64_t i = 0; i < w->n; i++)
    w->x[i] = w->value + (float) i;
  return TRUE;
}

/* One backward: gradients 0 and 1 (bucket 1, fused), then 2 (bucket 2,
 * alone); each bucket pushed right after the step writing its last
 * gradient, as nl_program_backward does. */
static gboolean
backward_step (NlScheduler *s, NlGradReducer *r, NlVar **vars, Write *w, GError **error)
{
  nl_scheduler_push (s, "backward 0", write_grad, &w[0], NULL, NULL, 0, &vars[0], 1, 0);
  nl_scheduler_push (s, "backward 1", write_grad, &w[1], NULL, NULL, 0, &vars[1], 1, 0);
  nl_grad_reducer_push (r, s, 0);
  nl_scheduler_push (s, "backward 2", write_grad, &w[2], NULL, NULL, 0, &vars[2], 1, 0);
  nl_grad_reducer_push (r, s, 1);
  return nl_scheduler_wait_for_all (s, error);
}

static void
test_overlap_on_scheduler (void)
{
  NlBackendInterface iface = *nl_backend_cpu ()->iface;
  NlBackend fake = { &iface, nl_backend_cpu ()->device, NULL };
  NlComm two = { .size = 2, .rank = 0 };
  const int64_t numel[3] = { 4, 6, 5 };
  iface.allreduce_sum = fake_allreduce;

  for (int workers = 0; workers <= 2; workers += 2)
    {
      NlScheduler *s = nl_scheduler_new (workers);
      NlTensor *grads[3];
      NlVar *vars[3];
      Write w[3];
      NlGradReducer *r;
      g_autoptr (GError) error = NULL;

      for (int i = 0; i < 3; i++)
        {
          NlShape shape = nl_shape_of (1, numel[i]);
          grads[i] = nl_tensor_zeros (NL_DTYPE_F32, &shape);
          vars[i] = nl_scheduler_new_var (s, "gradient");
          w[i] = (Write) { nl_tensor_f32 (grads[i]), numel[i], 0, FALSE };
        }
      /* 44 bytes: gradients 0 and 1 (40 bytes) fuse, 2 goes alone */
      r = nl_grad_reducer_new (&fake, &two, grads, vars, 3, 44, &error);
      g_assert_no_error (error);
      g_assert_cmpint (nl_grad_reducer_n_buckets (r), ==, 2);
      fake_calls = 0;
      for (int step = 1; step <= 3; step++)
        {
          g_autoptr (NlTrace) trace = step == 2 ? nl_trace_new () : NULL;
          for (int i = 0; i < 3; i++)
            w[i].value = (float) (10 * step + i);
          /* step 2 traced: one span per bucket, in order, as long as its all-reduce at least */
          nl_grad_reducer_set_trace (r, trace);
          g_assert_true (backward_step (s, r, vars, w, &error));
          g_assert_no_error (error);
          nl_grad_reducer_set_trace (r, NULL);
          if (trace)
            {
              guint n;
              const NlTraceEvent *e = nl_trace_events (trace, &n);
              g_assert_cmpuint (n, ==, 2);
              for (guint k = 0; k < n; k++)
                {
                  g_autofree char *name = g_strdup_printf ("all-reduce bucket %u", k + 1);
                  g_assert_cmpstr (e[k].cat, ==, NL_TRACE_CAT_ALLREDUCE);
                  g_assert_cmpstr (e[k].name, ==, name);
                  g_assert_cmpstr (e[k].arg_key, ==, "bucket");
                  g_assert_cmpint (e[k].arg, ==, k + 1);
                  g_assert_cmpint (e[k].dur, >=, 2000);
                }
              g_assert_cmpint (e[1].ts, >=, e[0].ts + e[0].dur);
            }
          /* every gradient summed with the other's, once, in bucket order */
          for (int i = 0; i < 3; i++)
            for (int64_t j = 0; j < numel[i]; j++)
              g_assert_cmpfloat (nl_tensor_f32 (grads[i])[j], ==, w[i].value + (float) j + 0.5f);
          g_assert_cmpint (fake_calls, ==, 2 * step);
          g_assert_cmpint (fake_sizes[2 * step - 2], ==, 10);
          g_assert_cmpint (fake_sizes[2 * step - 1], ==, 5);
        }

      /* a failed step before bucket 1's gradients: bucket 1's op is skipped
       * and bucket 2's is ready. The step's failure is reported (no wait
       * forever for bucket 1), and bucket 2 is not all-reduced: this
       * process would pair it with the others' bucket 1. */
      w[0].fail = TRUE;
      g_assert_false (backward_step (s, r, vars, w, &error));
      g_assert_nonnull (error);
      g_assert_nonnull (strstr (error->message, "the kernel broke"));
      g_clear_error (&error);
      g_assert_cmpint (fake_calls, ==, 6);
      /* out of step for good: a later step fails at once, all-reducing nothing */
      w[0].fail = FALSE;
      g_assert_false (backward_step (s, r, vars, w, &error));
      g_assert_nonnull (error);
      g_assert_nonnull (strstr (error->message, "out of step"));
      g_assert_cmpint (fake_calls, ==, 6);

      nl_grad_reducer_free (r);
      nl_scheduler_free (s);
      for (int i = 0; i < 3; i++)
        nl_tensor_unref (grads[i]);
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/grad-reducer/plan", test_plan);
  g_test_add_func ("/grad-reducer/reduce-matches-plain-sum", test_reduce_matches_plain_sum);
  g_test_add_func ("/grad-reducer/reduce-failure", test_reduce_failure);
  g_test_add_func ("/grad-reducer/overlap-on-scheduler", test_overlap_on_scheduler);
  return g_test_run ();
}
