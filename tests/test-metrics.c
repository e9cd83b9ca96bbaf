/* test-metrics.c — each metric on small examples whose expected values were
 * computed independently (by hand, or with a separate Python script that
 * follows the textbook / scikit-learn definitions from label and prediction
 * lists); accumulation over updates; reset; bad specs and bad updates. */
#include <math.h>
#include <string.h>

#include <gio/gio.h>

#include "engine/train/nl-metric.h"
#include "nl-test-util.h"

static NlTensor *
tensor (const float *v, int ndim, int64_t d0, int64_t d1)
{
  int64_t shape[2] = { d0, d1 };
  NlTensor *t = nl_tensor_new (NL_DTYPE_F32, ndim, shape);
  memcpy (nl_tensor_f32 (t), v, nl_tensor_numel (t) * sizeof (float));
  return t;
}

static NlMetric *
metric (const char *spec)
{
  GError *err = NULL;
  NlMetric *m = nl_metric_new (spec, &err);
  g_assert_no_error (err);
  g_assert_nonnull (m);
  g_assert_true (isnan (nl_metric_get (m)));
  return m;
}

/* One update of labels (n) or (n, lc) against preds (n) or (n, pc), then the value. */
static double
ev (const char *spec, const float *l, int l_ndim, int64_t lc, const float *p, int p_ndim, int64_t pc, int64_t n)
{
  g_autoptr (NlMetric) m = metric (spec);
  g_autoptr (NlTensor) lt = tensor (l, l_ndim, n, lc);
  g_autoptr (NlTensor) pt = tensor (p, p_ndim, n, pc);
  nl_metric_update (m, lt, pt);
  return nl_metric_get (m);
}

#define assert_near(a, b) g_assert_cmpfloat_with_epsilon ((a), (b), 1e-9)

static void
test_accuracy (void)
{
  /* row 1 ties classes 0 and 1: argmax picks the first, label 0 is right;
   * row 3 is wrong */
  const float p[] = {
    0.1f, 0.7f, 0.2f,
    0.5f, 0.5f, 0.0f,
    0.3f, 0.3f, 0.4f,
    0.6f, 0.2f, 0.2f,
  };
  const float l[] = { 1, 0, 2, 2 };
  const float l_tie1[] = { 1, 1, 2, 2 };
  const float idx[] = { 1, 0, 2, 2 }, idx_l[] = { 1, 1, 2, 0 };
  g_autoptr (NlMetric) m = metric ("accuracy");

  assert_near (ev ("accuracy", l, 1, 1, p, 2, 3, 4), 0.75);
  assert_near (ev ("accuracy", l_tie1, 1, 1, p, 2, 3, 4), 0.5);
  /* labels (N, 1) */
  {
    g_autoptr (NlTensor) lt = tensor (l, 2, 4, 1);
    g_autoptr (NlTensor) pt = tensor (p, 2, 4, 3);
    nl_metric_update (m, lt, pt);
    assert_near (nl_metric_get (m), 0.75);
  }
  /* preds holding class indices, as many as the labels */
  assert_near (ev ("accuracy", idx_l, 1, 1, idx, 1, 1, 4), 0.5);
  g_assert_cmpstr (nl_metric_name (m), ==, "accuracy");
  g_assert_true (nl_metric_higher_is_better (m));
}

static void
test_top_k (void)
{
  /* label ranks: 1 (in), 2 (out), 1 after the tie with class 0 (in),
   * 0 (in), 2 after ties with classes 0 and 2 (out) */
  const float p[] = {
    0.1f, 0.4f, 0.3f, 0.2f,
    0.4f, 0.3f, 0.2f, 0.1f,
    0.25f, 0.25f, 0.25f, 0.25f,
    0.1f, 0.2f, 0.3f, 0.4f,
    0.5f, 0.1f, 0.5f, 0.5f,
  };
  const float l[] = { 2, 2, 1, 3, 3 };
  g_autoptr (NlMetric) m5 = metric ("top_k_accuracy");
  g_autoptr (NlMetric) m2 = metric ("top_k_accuracy:2");

  assert_near (ev ("top_k_accuracy:2", l, 1, 1, p, 2, 4, 5), 0.6);
  /* K 1 is plain accuracy: rows 0, 1 wrong, row 2 (tie -> 0) wrong, row 3 right, row 4 wrong */
  assert_near (ev ("top_k_accuracy:1", l, 1, 1, p, 2, 4, 5), 0.2);
  assert_near (ev ("accuracy", l, 1, 1, p, 2, 4, 5), 0.2);
  /* K 3: rows 1 and 4 (rank 2) come in too */
  assert_near (ev ("top_k_accuracy:3", l, 1, 1, p, 2, 4, 5), 1.0);
  /* K >= C: always right */
  assert_near (ev ("top_k_accuracy", l, 1, 1, p, 2, 4, 5), 1.0);
  g_assert_cmpstr (nl_metric_name (m5), ==, "top_5_accuracy");
  g_assert_cmpstr (nl_metric_name (m2), ==, "top_2_accuracy");
  g_assert_true (nl_metric_higher_is_better (m2));
}

static void
test_cross_entropy (void)
{
  const float p[] = {
    0.5f, 0.25f, 0.25f,
    0.1f, 0.8f, 0.1f,
    0.2f, 0.2f, 0.6f,
  };
  const float l[] = { 0, 1, 0 };
  /* (ln 2 - ln 0.8 + ln 5) / 3 and its exp, from Python; 0.8f and 0.2f are
   * not exact, hence the looser tolerance */
  g_assert_cmpfloat_with_epsilon (ev ("cross_entropy", l, 1, 1, p, 2, 3, 3), 0.8419095481000017, 1e-7);
  g_assert_cmpfloat_with_epsilon (ev ("perplexity", l, 2, 1, p, 2, 3, 3), 2.320794416800007, 1e-7);

  /* a zero probability costs -ln (1e-12) */
  {
    const float p0[] = { 0, 1 }, l0[] = { 0 };
    g_assert_cmpfloat_with_epsilon (ev ("cross_entropy", l0, 1, 1, p0, 2, 2, 1), 27.631021115928547, 1e-6);
  }
  {
    g_autoptr (NlMetric) ce = metric ("cross_entropy");
    g_autoptr (NlMetric) pp = metric ("perplexity");
    g_assert_false (nl_metric_higher_is_better (ce));
    g_assert_false (nl_metric_higher_is_better (pp));
    g_assert_cmpstr (nl_metric_name (pp), ==, "perplexity");
  }
}

static void
test_binary_accuracy (void)
{
  const float p[] = { 0.2f, 0.6f, 0.5f, 0.9f, 0.4f };
  const float l[] = { 0, 1, 1, 0, 0 };
  /* > 0.5: 0 1 0 1 0 -> right, right, wrong, wrong, right */
  assert_near (ev ("binary_accuracy", l, 1, 1, p, 2, 1, 5), 0.6);
  assert_near (ev ("binary_accuracy", l, 2, 1, p, 1, 1, 5), 0.6);
  /* > 0.45: 0 1 1 1 0 */
  assert_near (ev ("binary_accuracy:0.45", l, 1, 1, p, 1, 1, 5), 0.8);
  /* > 0.3: 0 1 1 1 1 */
  assert_near (ev ("binary_accuracy:0.3", l, 1, 1, p, 1, 1, 5), 0.6);
  /* multi-label: every element counts */
  {
    const float l2[] = { 1, 0, 0, 1 }, p2[] = { 0.7f, 0.7f, 0.1f, 0.9f };
    assert_near (ev ("binary_accuracy", l2, 2, 2, p2, 2, 2, 2), 0.75);
  }
}

static void
test_f1 (void)
{
  /* one column, thresholded at 0.5: preds 1 0 1 0 1 0 1 0 against labels
   * 1 1 0 0 1 0 1 1: tp 3, fp 1, fn 2. Values from Python (P, R form). */
  const float p1[] = { 0.9f, 0.2f, 0.7f, 0.4f, 0.6f, 0.1f, 0.55f, 0.3f };
  const float y1[] = { 1, 1, 0, 0, 1, 0, 1, 1 };
  assert_near (ev ("f1", y1, 1, 1, p1, 1, 1, 8), 0.6666666666666665);
  assert_near (ev ("f1:binary", y1, 1, 1, p1, 2, 1, 8), 0.6666666666666665);
  assert_near (ev ("fbeta:2", y1, 1, 1, p1, 1, 1, 8), 0.625);
  assert_near (ev ("fbeta:0.5:binary", y1, 1, 1, p1, 1, 1, 8), 0.7142857142857143);
  assert_near (ev ("f1:micro", y1, 1, 1, p1, 1, 1, 8), 0.625);
  assert_near (ev ("f1:macro", y1, 1, 1, p1, 1, 1, 8), 0.6190476190476191);

  /* two columns, argmax; row 3 ties and goes to class 0 */
  {
    const float p2[] = { 0.1f, 0.9f, 0.8f, 0.2f, 0.3f, 0.7f, 0.5f, 0.5f, 0.4f, 0.6f };
    const float y2[] = { 1, 1, 0, 1, 1 };
    assert_near (ev ("f1", y2, 1, 1, p2, 2, 2, 5), 0.5714285714285715);
  }

  /* four classes, class 3 neither labelled nor predicted: left out of the
   * macro average. Predicted 0 1 2 0 1 2 0 (row 3 ties 0/1/2 -> 0) against
   * 0 1 1 2 1 0 2: per-class F1 0.4, 0.8, 0; micro = accuracy = 3/7. */
  {
    const float p[] = {
      0.7f, 0.1f, 0.1f, 0.1f,
      0.2f, 0.5f, 0.2f, 0.1f,
      0.1f, 0.2f, 0.6f, 0.1f,
      0.3f, 0.3f, 0.3f, 0.1f,
      0.1f, 0.6f, 0.2f, 0.1f,
      0.2f, 0.2f, 0.5f, 0.1f,
      0.5f, 0.2f, 0.2f, 0.1f,
    };
    const float y[] = { 0, 1, 1, 2, 1, 0, 2 };
    assert_near (ev ("f1:macro", y, 1, 1, p, 2, 4, 7), 0.4000000000000001);
    /* the default for more than two classes is macro */
    assert_near (ev ("f1", y, 1, 1, p, 2, 4, 7), 0.4000000000000001);
    assert_near (ev ("f1:micro", y, 1, 1, p, 2, 4, 7), 0.42857142857142855);
    assert_near (ev ("fbeta:2:macro", y, 1, 1, p, 2, 4, 7), 0.3896103896103896);
    assert_near (ev ("fbeta:2:micro", y, 2, 1, p, 2, 4, 7), 0.42857142857142855);
  }
  {
    g_autoptr (NlMetric) f1 = metric ("f1:macro");
    g_autoptr (NlMetric) fb = metric ("fbeta:2");
    g_assert_cmpstr (nl_metric_name (f1), ==, "f1");
    g_assert_cmpstr (nl_metric_name (fb), ==, "fbeta");
    g_assert_true (nl_metric_higher_is_better (fb));
  }
}

static void
test_regression (void)
{
  /* differences (0.5, 0), (1, 0.5), (0, 2): per-sample MAE 0.25, 0.75, 1 and
   * MSE 0.125, 0.625, 2 */
  const float l[] = { 1, 2, 3, 4, 5, 6 };
  const float p[] = { 1.5f, 2, 2, 4.5f, 5, 8 };
  assert_near (ev ("mae", l, 2, 2, p, 2, 2, 3), 2.0 / 3);
  assert_near (ev ("mse", l, 2, 2, p, 2, 2, 3), 2.75 / 3);
  assert_near (ev ("rmse", l, 2, 2, p, 2, 2, 3), 0.9574271077563381);
  /* labels (N) against preds (N, 1) */
  {
    const float l1[] = { 1, 2, 3 }, p1[] = { 2, 2, 1 };
    assert_near (ev ("mae", l1, 1, 1, p1, 2, 1, 3), 1.0);
    assert_near (ev ("mse", l1, 1, 1, p1, 2, 1, 3), 5.0 / 3);
  }
  {
    g_autoptr (NlMetric) m = metric ("rmse");
    g_assert_false (nl_metric_higher_is_better (m));
    g_assert_cmpstr (nl_metric_name (m), ==, "rmse");
  }
}

static void
test_similarity (void)
{
  /* cosines 0, 1, 24/25, -1, and 0 for a zero vector (eps) */
  const float l[] = { 1, 0, 1, 1, 3, 4, 1, 0, 0, 0 };
  const float p[] = { 0, 1, 2, 2, 4, 3, -1, 0, 1, 0 };
  assert_near (ev ("mean_cosine_similarity", l, 2, 2, p, 2, 2, 5), 0.96 / 5);
  /* distances: (0,0,0)-(3,4,0), (1,2,3) twice, (1,1,1)-(0,0,0) */
  {
    const float dl[] = { 0, 0, 0, 1, 2, 3, 1, 1, 1 };
    const float dp[] = { 3, 4, 0, 1, 2, 3, 0, 0, 0 };
    assert_near (ev ("mean_pairwise_distance", dl, 2, 3, dp, 2, 3, 3), 2.2440169358562922);
    assert_near (ev ("mean_pairwise_distance:1", dl, 2, 3, dp, 2, 3, 3), 10.0 / 3);
    assert_near (ev ("mean_pairwise_distance:3", dl, 2, 3, dp, 2, 3, 3), 1.9800636718609408);
  }
  {
    g_autoptr (NlMetric) c = metric ("mean_cosine_similarity");
    g_autoptr (NlMetric) d = metric ("mean_pairwise_distance:1");
    g_assert_true (nl_metric_higher_is_better (c));
    g_assert_false (nl_metric_higher_is_better (d));
    g_assert_cmpstr (nl_metric_name (d), ==, "mean_pairwise_distance");
  }
}

/* Random batches of N rows: two updates (the halves) against one update. */
static void
check_accumulation (const char *spec, int kind, int64_t C)
{
  enum { N = 40, H = 17 };
  int64_t cols = kind == 1 ? 1 : C;
  g_autoptr (NlMetric) whole = metric (spec);
  g_autoptr (NlMetric) parts = metric (spec);
  GRand *r = g_rand_new_with_seed (g_str_hash (spec));
  float l[N * 8], p[N * 8];
  double a, b;

  g_assert_cmpint (C, <=, 8);
  for (int i = 0; i < N; i++)
    {
      double s = 0;
      for (int j = 0; j < cols; j++)
        s += p[i * cols + j] = (float) g_rand_double_range (r, 0.01, 1);
      if (kind == 0) /* class probabilities, class labels */
        {
          for (int j = 0; j < cols; j++)
            p[i * cols + j] /= (float) s;
          l[i] = (float) g_rand_int_range (r, 0, (gint32) C);
        }
      else if (kind == 1) /* one probability, 0/1 label */
        l[i] = (float) g_rand_int_range (r, 0, 2);
      else /* regression: labels like preds */
        for (int j = 0; j < cols; j++)
          l[i * cols + j] = (float) g_rand_double_range (r, -1, 1);
    }
  {
    int64_t lc = kind == 2 ? cols : 1;
    g_autoptr (NlTensor) lw = tensor (l, 2, N, lc);
    g_autoptr (NlTensor) pw = tensor (p, 2, N, cols);
    g_autoptr (NlTensor) l1 = tensor (l, 2, H, lc);
    g_autoptr (NlTensor) p1 = tensor (p, 2, H, cols);
    g_autoptr (NlTensor) l2 = tensor (l + H * lc, 2, N - H, lc);
    g_autoptr (NlTensor) p2 = tensor (p + H * cols, 2, N - H, cols);

    nl_metric_update (whole, lw, pw);
    nl_metric_update (parts, l1, p1);
    nl_metric_update (parts, l2, p2);
    a = nl_metric_get (whole);
    b = nl_metric_get (parts);
    g_assert_true (isfinite (a));
    g_assert_cmpfloat_with_epsilon (a, b, 1e-12 * fmax (1, fabs (a)));

    /* reset: NAN, then the same as a fresh metric */
    nl_metric_reset (parts);
    g_assert_true (isnan (nl_metric_get (parts)));
    nl_metric_update (parts, lw, pw);
    g_assert_cmpfloat_with_epsilon (nl_metric_get (parts), a, 1e-12 * fmax (1, fabs (a)));
  }
  g_rand_free (r);
}

static void
test_accumulation (void)
{
  check_accumulation ("accuracy", 0, 5);
  check_accumulation ("top_k_accuracy:2", 0, 5);
  check_accumulation ("cross_entropy", 0, 5);
  check_accumulation ("perplexity", 0, 5);
  check_accumulation ("binary_accuracy", 1, 1);
  check_accumulation ("f1", 1, 1);
  check_accumulation ("f1", 0, 2);
  check_accumulation ("f1:micro", 0, 5);
  check_accumulation ("f1:macro", 0, 5);
  check_accumulation ("fbeta:2:macro", 0, 5);
  check_accumulation ("mae", 2, 3);
  check_accumulation ("mse", 2, 3);
  check_accumulation ("rmse", 2, 3);
  check_accumulation ("mean_cosine_similarity", 2, 4);
  check_accumulation ("mean_pairwise_distance", 2, 4);
  check_accumulation ("mean_pairwise_distance:1.5", 2, 4);
}

/* F1 keeps counts, not per-batch scores: a batch with no positives followed
 * by one with all of them gives the F1 of the concatenation. */
static void
test_f1_counts (void)
{
  g_autoptr (NlMetric) m = metric ("f1");
  const float y1[] = { 0, 0 }, p1[] = { 0.1f, 0.2f };
  const float y2[] = { 1, 1 }, p2[] = { 0.9f, 0.2f };
  g_autoptr (NlTensor) l1 = tensor (y1, 1, 2, 1), q1 = tensor (p1, 1, 2, 1);
  g_autoptr (NlTensor) l2 = tensor (y2, 1, 2, 1), q2 = tensor (p2, 1, 2, 1);
  nl_metric_update (m, l1, q1);
  /* no positives at all yet: F1 is 0 (zero_division = 0), not NAN */
  assert_near (nl_metric_get (m), 0.0);
  nl_metric_update (m, l2, q2);
  /* tp 1, fp 0, fn 1 */
  assert_near (nl_metric_get (m), 2.0 / 3);
}

static void
expect_bad_spec (const char *spec)
{
  GError *err = NULL;
  NlMetric *m = nl_metric_new (spec, &err);
  g_assert_null (m);
  g_assert_error (err, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT);
  /* the message lists the valid metrics */
  g_assert_nonnull (strstr (err->message, "top_k_accuracy[:K]"));
  g_assert_nonnull (strstr (err->message, "mean_pairwise_distance"));
  g_error_free (err);
}

static void
test_bad_specs (void)
{
  const char *bad[] = {
    "", "foo", "accuracy:3", "top_k_accuracy:0", "top_k_accuracy:x", "top_k_accuracy:2.5",
    "top_k_accuracy:", "binary_accuracy:abc", "binary_accuracy:nan", "f1:weird", "f1:macro:2",
    "fbeta", "fbeta:0", "fbeta:-1", "fbeta:2:sideways", "mean_pairwise_distance:0",
    "mean_pairwise_distance:-2", "mse:1", ":", "accuracy:",
  };
  for (guint i = 0; i < G_N_ELEMENTS (bad); i++)
    expect_bad_spec (bad[i]);

  /* case and surrounding space are forgiven */
  {
    g_autoptr (NlMetric) m = metric ("  Top_K_Accuracy:3 ");
    g_assert_cmpstr (nl_metric_name (m), ==, "top_3_accuracy");
  }
}

/* Updates that do not fit are refused with a critical, the metric unchanged. */
static void
test_bad_updates (void)
{
  const float p[] = { 0.2f, 0.8f, 0.6f, 0.4f, 0.5f, 0.5f };
  const float l[] = { 1, 0, 0 }, bad_l[] = { 1, 5, 0 };
  g_autoptr (NlTensor) pt = tensor (p, 2, 3, 2);
  g_autoptr (NlTensor) lt = tensor (l, 1, 3, 1);
  g_autoptr (NlTensor) l2 = tensor (l, 1, 2, 1);
  g_autoptr (NlTensor) bad = tensor (bad_l, 1, 3, 1);
  const char *specs[] = { "accuracy", "cross_entropy", "f1", "mae" };

  for (guint i = 0; i < G_N_ELEMENTS (specs); i++)
    {
      g_autoptr (NlMetric) m = metric (specs[i]);
      g_test_expect_message (G_LOG_DOMAIN, G_LOG_LEVEL_CRITICAL, "*nl_metric_update*");
      nl_metric_update (m, l2, pt);
      g_test_assert_expected_messages ();
      g_assert_true (isnan (nl_metric_get (m)));
    }
  /* class 5 of two-column preds */
  {
    const char *strict[] = { "cross_entropy", "perplexity", "f1", "f1:macro" };
    for (guint i = 0; i < G_N_ELEMENTS (strict); i++)
      {
        g_autoptr (NlMetric) m = metric (strict[i]);
        nl_metric_update (m, lt, pt);
        double before = nl_metric_get (m);
        g_test_expect_message (G_LOG_DOMAIN, G_LOG_LEVEL_CRITICAL, "*label 1 is 5*");
        nl_metric_update (m, bad, pt);
        g_test_assert_expected_messages ();
        g_assert_cmpfloat (nl_metric_get (m), ==, before);
      }
  }
  /* accuracy just counts such a label as wrong: rows 0 (-> 1) and 2 (tie -> 0) right */
  assert_near (ev ("accuracy", bad_l, 1, 1, p, 2, 2, 3), 2.0 / 3);
  /* binary F1 on three classes */
  {
    const float p3[] = { 0.2f, 0.7f, 0.1f, 0.6f, 0.3f, 0.1f };
    g_autoptr (NlTensor) p3t = tensor (p3, 2, 2, 3);
    g_autoptr (NlMetric) m = metric ("f1:binary");
    g_test_expect_message (G_LOG_DOMAIN, G_LOG_LEVEL_CRITICAL, "*binary*");
    nl_metric_update (m, l2, p3t);
    g_test_assert_expected_messages ();
    g_assert_true (isnan (nl_metric_get (m)));
  }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/metrics/accuracy", test_accuracy);
  g_test_add_func ("/metrics/top-k", test_top_k);
  g_test_add_func ("/metrics/cross-entropy", test_cross_entropy);
  g_test_add_func ("/metrics/binary-accuracy", test_binary_accuracy);
  g_test_add_func ("/metrics/f1", test_f1);
  g_test_add_func ("/metrics/f1-counts", test_f1_counts);
  g_test_add_func ("/metrics/regression", test_regression);
  g_test_add_func ("/metrics/similarity", test_similarity);
  g_test_add_func ("/metrics/accumulation", test_accumulation);
  g_test_add_func ("/metrics/bad-specs", test_bad_specs);
  g_test_add_func ("/metrics/bad-updates", test_bad_updates);
  return g_test_run ();
}
