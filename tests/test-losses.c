/* test-losses.c — the loss ops' forward and backward against reference loops
 * written here in double precision, hand-computed values at the edges
 * (logits of 1000, Huber on both sides of rho), and the errors for bad
 * labels and shapes. */
#include <math.h>
#include <string.h>

#include "nl-test-util.h"
#include "ops/nl-op-instance.h"
#include "ops/nl-op-registry.h"

static NlOpInstance *
make (const char *op, const char *const *params, NlShape pred, NlShape label)
{
  GError *err = NULL;
  NlShape in[2] = { pred, label };
  const NlOpDef *def = nl_op_lookup (op);
  NlOpInstance *inst;

  g_assert_nonnull (def);
  g_assert_true (def->is_loss);
  g_assert_cmpstr (def->category, ==, "Loss");
  inst = nl_op_instance_new (def, params, 2, in, TRUE, &err);
  g_assert_no_error (err);
  g_assert_nonnull (inst);
  g_assert_cmpint (inst->out[0]->ndim, ==, 1);
  g_assert_cmpint (inst->out[0]->shape[0], ==, pred.d[0]);
  /* the label never takes a gradient */
  g_assert_null (inst->in_grad[1]);
  g_assert_nonnull (inst->in_grad[0]);
  return inst;
}

/* A failing construction: returns the error for the caller to inspect. */
static GError *
make_fails (const char *op, const char *const *params, NlShape pred, NlShape label)
{
  GError *err = NULL;
  NlShape in[2] = { pred, label };
  NlOpInstance *inst = nl_op_instance_new (nl_op_lookup (op), params, 2, in, TRUE, &err);
  g_assert_null (inst);
  g_assert_nonnull (err);
  return err;
}

static void
run (NlOpInstance *inst)
{
  GError *err = NULL;
  g_assert_true (nl_op_instance_forward (inst, &err));
  g_assert_no_error (err);
  /* poison the gradient: backward must overwrite every element */
  nl_tensor_fill (inst->in_grad[0], NAN);
  g_assert_true (nl_op_instance_backward (inst, &err));
  g_assert_no_error (err);
}

static float *
to_float (const double *d, int64_t n)
{
  float *f = g_new (float, n);
  for (int64_t i = 0; i < n; i++)
    f[i] = (float) d[i];
  return f;
}

/* ---- SoftmaxCrossEntropy ------------------------------------------------ */

/* loss_n = mean over the M rows of sample n of -sum_j t_j log q_j, where t is
 * the one-hot of a sparse label or the dense label, and log q = log_softmax (x)
 * (or x itself when from_logits). grad = (q sum t - t) * og / M, or -t og / M. */
static void
ref_sce (const float *x, const float *z, const float *og, int64_t N, int64_t M, int64_t C,
         gboolean sparse, gboolean from_logits, double *loss, double *grad)
{
  double *t = g_new (double, C), *lq = g_new (double, C);
  for (int64_t n = 0; n < N; n++)
    {
      loss[n] = 0;
      for (int64_t m = 0; m < M; m++)
        {
          int64_t r = n * M + m;
          const float *xr = x + r * C;
          double mx = -INFINITY, s = 0, ts = 0, l = 0;
          for (int64_t j = 0; j < C; j++)
            {
              t[j] = sparse ? (j == (int64_t) z[r]) : z[r * C + j];
              ts += t[j];
              mx = fmax (mx, xr[j]);
            }
          for (int64_t j = 0; j < C; j++)
            s += exp ((double) xr[j] - mx);
          for (int64_t j = 0; j < C; j++)
            lq[j] = from_logits ? xr[j] : (double) xr[j] - mx - log (s);
          for (int64_t j = 0; j < C; j++)
            l -= t[j] * lq[j];
          loss[n] += l / M;
          for (int64_t j = 0; j < C; j++)
            grad[r * C + j] = (from_logits ? -t[j] : exp (lq[j]) * ts - t[j]) * og[n] / M;
        }
    }
  g_free (t);
  g_free (lq);
}

/* Drop the saved probabilities, as a graph might in a plan without them:
 * forward and backward must then work from pred alone. */
static gboolean drop_saved;
/* What each row of a dense label sums to: Gluon does not require 1. */
static float dense_total = 1;

static void
check_sce (NlShape pred, NlShape label, gboolean sparse, gboolean from_logits, float scale, guint64 seed)
{
  const char *params[] = { "sparse_label", sparse ? "true" : "false",
                           "from_logits", from_logits ? "true" : "false", NULL };
  NlOpInstance *inst = make ("SoftmaxCrossEntropy", params, pred, label);
  int64_t N = pred.d[0], C = pred.d[pred.ndim - 1], R = nl_shape_numel (&pred) / C, M = R / N;
  float *x = nl_tensor_f32 (inst->in[0]), *z = nl_tensor_f32 (inst->in[1]);
  double *loss = g_new (double, N), *grad = g_new (double, R * C);
  GRand *r = g_rand_new_with_seed ((guint32) seed);
  g_autofree float *floss = NULL, *fgrad = NULL;

  nl_test_fill_uniform (inst->in[0], -scale, scale, seed);
  if (from_logits)
    {
      /* pred must be log-probabilities: log_softmax of the random scores */
      for (int64_t i = 0; i < R; i++)
        {
          double s = 0;
          for (int64_t j = 0; j < C; j++)
            s += exp (x[i * C + j]);
          for (int64_t j = 0; j < C; j++)
            x[i * C + j] = (float) (x[i * C + j] - log (s));
        }
    }
  if (sparse)
    for (int64_t i = 0; i < R; i++)
      z[i] = (float) g_rand_int_range (r, 0, (gint32) C);
  else
    for (int64_t i = 0; i < R; i++)
      {
        double s = 0;
        for (int64_t j = 0; j < C; j++)
          s += z[i * C + j] = (float) g_rand_double_range (r, 0.01, 1);
        for (int64_t j = 0; j < C; j++)
          z[i * C + j] *= dense_total / (float) s;
      }
  nl_test_fill_uniform (inst->out_grad[0], 0.1f, 2.0f, seed + 1);
  g_assert_cmpint (inst->def->n_saved, ==, 1);
  if (from_logits)
    g_assert_null (inst->saved[0]);
  else
    g_assert_nonnull (inst->saved[0]);
  if (drop_saved)
    g_clear_pointer (&inst->saved[0], nl_tensor_unref);

  run (inst);
  ref_sce (x, z, nl_tensor_f32 (inst->out_grad[0]), N, M, C, sparse, from_logits, loss, grad);
  floss = to_float (loss, N);
  fgrad = to_float (grad, R * C);
  nl_test_assert_close (nl_tensor_f32 (inst->out[0]), floss, N, 1e-5, 1e-5);
  nl_test_assert_close (nl_tensor_f32 (inst->in_grad[0]), fgrad, R * C, 1e-6, 1e-5);

  g_free (loss);
  g_free (grad);
  g_rand_free (r);
  nl_op_instance_free (inst);
}

static void
test_sce_sparse (void)
{
  check_sce (nl_shape_of (2, (int64_t) 4, (int64_t) 5), nl_shape_of (1, (int64_t) 4), TRUE, FALSE, 3, 1);
  check_sce (nl_shape_of (2, (int64_t) 128, (int64_t) 10), nl_shape_of (2, (int64_t) 128, (int64_t) 1),
             TRUE, FALSE, 5, 2);
  check_sce (nl_shape_of (2, (int64_t) 3, (int64_t) 1), nl_shape_of (1, (int64_t) 3), TRUE, FALSE, 1, 3);
  /* several rows per sample: averaged over them */
  check_sce (nl_shape_of (3, (int64_t) 3, (int64_t) 2, (int64_t) 7), nl_shape_of (2, (int64_t) 3, (int64_t) 2),
             TRUE, FALSE, 4, 4);
  check_sce (nl_shape_of (3, (int64_t) 2, (int64_t) 5, (int64_t) 3),
             nl_shape_of (3, (int64_t) 2, (int64_t) 5, (int64_t) 1), TRUE, FALSE, 4, 5);
  /* big enough for the OpenMP path */
  check_sce (nl_shape_of (2, (int64_t) 1000, (int64_t) 12), nl_shape_of (1, (int64_t) 1000), TRUE, FALSE, 5, 6);
  /* the axis given explicitly as the last one */
  {
    const char *params[] = { "axis", "1", NULL };
    NlOpInstance *inst = make ("SoftmaxCrossEntropy", params, nl_shape_of (2, (int64_t) 2, (int64_t) 3),
                               nl_shape_of (1, (int64_t) 2));
    nl_op_instance_free (inst);
  }
}

static void
test_sce_dense (void)
{
  check_sce (nl_shape_of (2, (int64_t) 4, (int64_t) 5), nl_shape_of (2, (int64_t) 4, (int64_t) 5), FALSE, FALSE, 3, 11);
  check_sce (nl_shape_of (2, (int64_t) 64, (int64_t) 10), nl_shape_of (2, (int64_t) 64, (int64_t) 10),
             FALSE, FALSE, 6, 12);
  check_sce (nl_shape_of (3, (int64_t) 3, (int64_t) 2, (int64_t) 7),
             nl_shape_of (3, (int64_t) 3, (int64_t) 2, (int64_t) 7), FALSE, FALSE, 2, 13);
  check_sce (nl_shape_of (2, (int64_t) 700, (int64_t) 16), nl_shape_of (2, (int64_t) 700, (int64_t) 16),
             FALSE, FALSE, 5, 14);
  /* rows summing to 2.5: loss and gradient scale with the label mass */
  dense_total = 2.5f;
  check_sce (nl_shape_of (2, (int64_t) 5, (int64_t) 9), nl_shape_of (2, (int64_t) 5, (int64_t) 9), FALSE, FALSE, 3, 15);
  check_sce (nl_shape_of (2, (int64_t) 5, (int64_t) 9), nl_shape_of (2, (int64_t) 5, (int64_t) 9), FALSE, TRUE, 3, 16);
  drop_saved = TRUE;
  check_sce (nl_shape_of (2, (int64_t) 5, (int64_t) 9), nl_shape_of (2, (int64_t) 5, (int64_t) 9), FALSE, FALSE, 3, 17);
  drop_saved = FALSE;
  dense_total = 1;
}

static void
test_sce_from_logits (void)
{
  check_sce (nl_shape_of (2, (int64_t) 5, (int64_t) 4), nl_shape_of (1, (int64_t) 5), TRUE, TRUE, 3, 21);
  check_sce (nl_shape_of (2, (int64_t) 5, (int64_t) 4), nl_shape_of (2, (int64_t) 5, (int64_t) 4), FALSE, TRUE, 3, 22);
  check_sce (nl_shape_of (3, (int64_t) 2, (int64_t) 3, (int64_t) 6), nl_shape_of (2, (int64_t) 2, (int64_t) 3),
             TRUE, TRUE, 3, 23);

  /* from_logits: the loss is -pred[label], whatever pred holds */
  {
    const char *params[] = { "from_logits", "true", NULL };
    NlOpInstance *inst = make ("SoftmaxCrossEntropy", params, nl_shape_of (2, (int64_t) 2, (int64_t) 3),
                               nl_shape_of (1, (int64_t) 2));
    const float x[] = { -0.5f, -1.25f, -3.0f, -2.0f, -0.1f, -7.0f };
    const float z[] = { 1, 2 };
    const float want_loss[] = { 1.25f, 7.0f };
    const float want_grad[] = { 0, -1, 0, 0, 0, -1 };
    memcpy (nl_tensor_f32 (inst->in[0]), x, sizeof x);
    memcpy (nl_tensor_f32 (inst->in[1]), z, sizeof z);
    nl_tensor_fill (inst->out_grad[0], 1);
    run (inst);
    nl_test_assert_close (nl_tensor_f32 (inst->out[0]), want_loss, 2, 1e-6, 1e-6);
    nl_test_assert_close (nl_tensor_f32 (inst->in_grad[0]), want_grad, 6, 1e-6, 1e-6);
    nl_op_instance_free (inst);
  }
}

/* Logits of +-1000: exp would overflow without the max subtracted. Values
 * by hand: row 0 is 1000 + log (1 + e^-1000 + e^-2000) = 1000 for label 1;
 * row 1 has lse - 1000.5 = log (1 + e^-0.5 + e^-1.5). */
static void
test_sce_large_logits (void)
{
  NlOpInstance *inst = make ("SoftmaxCrossEntropy", NULL, nl_shape_of (2, (int64_t) 3, (int64_t) 3),
                             nl_shape_of (1, (int64_t) 3));
  const float x[] = { 1000, 0, -1000, 1000, 1000.5f, 999, -1000, -1000, -1000 };
  const float z[] = { 1, 1, 2 };
  double l1 = log (1 + exp (-0.5) + exp (-1.5));
  double s1 = 1 + exp (-0.5) + exp (-1.5);
  const float want_loss[] = { 1000.0f, (float) l1, (float) log (3.0) };
  const float want_grad[] = {
    1, -1, 0,
    (float) (exp (-0.5) / s1), (float) (1 / s1 - 1), (float) (exp (-1.5) / s1),
    1.0f / 3, 1.0f / 3, 1.0f / 3 - 1,
  };
  memcpy (nl_tensor_f32 (inst->in[0]), x, sizeof x);
  memcpy (nl_tensor_f32 (inst->in[1]), z, sizeof z);
  nl_tensor_fill (inst->out_grad[0], 1);
  run (inst);
  nl_test_assert_close (nl_tensor_f32 (inst->out[0]), want_loss, 3, 1e-4, 1e-6);
  nl_test_assert_close (nl_tensor_f32 (inst->in_grad[0]), want_grad, 9, 1e-6, 1e-5);
  nl_op_instance_free (inst);

  /* fewer than 8 values: the scalar exp path sees the -2000 too */
  {
    NlOpInstance *small = make ("SoftmaxCrossEntropy", NULL, nl_shape_of (2, (int64_t) 1, (int64_t) 3),
                                nl_shape_of (1, (int64_t) 1));
    const float xs[] = { 0, -1000, 1000 };
    const float zero_loss[] = { 0 }, zero_grad[] = { 0, 0, 0 };
    const float want_loss0[] = { 1000 }, want_grad0[] = { -1, 0, 1 };
    memcpy (nl_tensor_f32 (small->in[0]), xs, sizeof xs);
    nl_tensor_fill (small->out_grad[0], 1);
    nl_tensor_f32 (small->in[1])[0] = 2;
    run (small);
    nl_test_assert_close (nl_tensor_f32 (small->out[0]), zero_loss, 1, 1e-6, 0);
    nl_test_assert_close (nl_tensor_f32 (small->in_grad[0]), zero_grad, 3, 1e-6, 0);
    nl_tensor_f32 (small->in[1])[0] = 0;
    run (small);
    nl_test_assert_close (nl_tensor_f32 (small->out[0]), want_loss0, 1, 1e-4, 1e-6);
    nl_test_assert_close (nl_tensor_f32 (small->in_grad[0]), want_grad0, 3, 1e-6, 1e-6);
    nl_op_instance_free (small);
  }

  /* a NaN logit makes its sample's loss NaN (in the 8-wide and the scalar
   * part of the row), not a quietly finite number */
  {
    NlOpInstance *nan = make ("SoftmaxCrossEntropy", NULL, nl_shape_of (2, (int64_t) 3, (int64_t) 10),
                              nl_shape_of (1, (int64_t) 3));
    float *xn = nl_tensor_f32 (nan->in[0]);
    nl_test_fill_uniform (nan->in[0], -2, 2, 5);
    xn[0 * 10 + 5] = NAN;
    xn[2 * 10 + 9] = NAN;
    g_assert_true (nl_op_instance_forward (nan, NULL));
    g_assert_true (isnan (nl_tensor_f32 (nan->out[0])[0]));
    g_assert_true (isfinite (nl_tensor_f32 (nan->out[0])[1]));
    g_assert_true (isnan (nl_tensor_f32 (nan->out[0])[2]));
    nl_op_instance_free (nan);
  }

  /* random logits in [-1000, 1000] against the double reference */
  check_sce (nl_shape_of (2, (int64_t) 16, (int64_t) 10), nl_shape_of (1, (int64_t) 16), TRUE, FALSE, 1000, 31);
  check_sce (nl_shape_of (2, (int64_t) 16, (int64_t) 10), nl_shape_of (2, (int64_t) 16, (int64_t) 10),
             FALSE, FALSE, 1000, 32);
}

static void
test_sce_no_saved (void)
{
  drop_saved = TRUE;
  check_sce (nl_shape_of (2, (int64_t) 6, (int64_t) 5), nl_shape_of (1, (int64_t) 6), TRUE, FALSE, 3, 81);
  check_sce (nl_shape_of (2, (int64_t) 6, (int64_t) 5), nl_shape_of (2, (int64_t) 6, (int64_t) 5), FALSE, FALSE, 3, 82);
  check_sce (nl_shape_of (3, (int64_t) 2, (int64_t) 3, (int64_t) 5), nl_shape_of (2, (int64_t) 2, (int64_t) 3),
             TRUE, FALSE, 1000, 83);
  drop_saved = FALSE;
}

static void
expect_bad_label (float bad, int at, const char *text)
{
  NlOpInstance *inst = make ("SoftmaxCrossEntropy", NULL, nl_shape_of (2, (int64_t) 4, (int64_t) 3),
                             nl_shape_of (1, (int64_t) 4));
  float *z = nl_tensor_f32 (inst->in[1]);
  GError *err = NULL;
  g_autofree char *sample = g_strdup_printf ("sample %d ", at);

  z[0] = 0;
  z[1] = 1;
  z[2] = 2;
  z[3] = 1;
  z[at] = bad;
  g_assert_false (nl_op_instance_forward (inst, &err));
  g_assert_error (err, NL_OP_ERROR, NL_OP_ERROR_RUNTIME);
  g_assert_nonnull (strstr (err->message, sample));
  g_assert_nonnull (strstr (err->message, text));
  g_error_free (err);
  nl_op_instance_free (inst);
}

static void
test_sce_bad_labels (void)
{
  expect_bad_label (3, 2, "is 3,");
  expect_bad_label (-1, 0, "is -1,");
  expect_bad_label (1.5f, 3, "is 1.5,");
  expect_bad_label (NAN, 1, "is nan,");
  expect_bad_label (1e9f, 1, "is 1e+09,");

  /* several rows per sample: the message names the sample and the row */
  {
    NlOpInstance *inst = make ("SoftmaxCrossEntropy", NULL, nl_shape_of (3, (int64_t) 2, (int64_t) 3, (int64_t) 4),
                               nl_shape_of (2, (int64_t) 2, (int64_t) 3));
    GError *err = NULL;
    nl_tensor_f32 (inst->in[1])[4] = 4;
    g_assert_false (nl_op_instance_forward (inst, &err));
    g_assert_error (err, NL_OP_ERROR, NL_OP_ERROR_RUNTIME);
    g_assert_nonnull (strstr (err->message, "label 1 of sample 1 is 4"));
    g_error_free (err);
    nl_op_instance_free (inst);
  }
  /* dense labels are probabilities: any value is taken */
  {
    const char *params[] = { "sparse_label", "false", NULL };
    NlOpInstance *inst = make ("SoftmaxCrossEntropy", params, nl_shape_of (2, (int64_t) 2, (int64_t) 3),
                               nl_shape_of (2, (int64_t) 2, (int64_t) 3));
    GError *err = NULL;
    nl_tensor_fill (inst->in[1], 7.5f);
    g_assert_true (nl_op_instance_forward (inst, &err));
    g_assert_no_error (err);
    nl_op_instance_free (inst);
  }
}

static void
test_shape_errors (void)
{
  const char *dense[] = { "sparse_label", "false", NULL };
  const char *axis0[] = { "axis", "0", NULL };
  NlShape p128 = nl_shape_of (2, (int64_t) 128, (int64_t) 10);
  GError *err;

  err = make_fails ("SoftmaxCrossEntropy", NULL, p128, nl_shape_of (1, (int64_t) 100));
  g_assert_error (err, NL_OP_ERROR, NL_OP_ERROR_SHAPE);
  g_assert_cmpstr (err->message, ==, "SoftmaxCrossEntropy: label has 100 samples but pred has 128");
  g_clear_error (&err);

  err = make_fails ("SoftmaxCrossEntropy", NULL, p128, p128);
  g_assert_error (err, NL_OP_ERROR, NL_OP_ERROR_SHAPE);
  g_assert_nonnull (strstr (err->message, "(128, 10)"));
  g_clear_error (&err);

  err = make_fails ("SoftmaxCrossEntropy", NULL, p128, nl_shape_of (2, (int64_t) 128, (int64_t) 2));
  g_assert_error (err, NL_OP_ERROR, NL_OP_ERROR_SHAPE);
  g_clear_error (&err);

  err = make_fails ("SoftmaxCrossEntropy", dense, p128, nl_shape_of (2, (int64_t) 128, (int64_t) 9));
  g_assert_error (err, NL_OP_ERROR, NL_OP_ERROR_SHAPE);
  g_assert_nonnull (strstr (err->message, "(128, 9)"));
  g_clear_error (&err);

  err = make_fails ("SoftmaxCrossEntropy", dense, p128, nl_shape_of (1, (int64_t) 128));
  g_assert_error (err, NL_OP_ERROR, NL_OP_ERROR_SHAPE);
  g_clear_error (&err);

  err = make_fails ("SoftmaxCrossEntropy", NULL, nl_shape_of (1, (int64_t) 128), nl_shape_of (1, (int64_t) 128));
  g_assert_error (err, NL_OP_ERROR, NL_OP_ERROR_SHAPE);
  g_clear_error (&err);

  err = make_fails ("SoftmaxCrossEntropy", axis0, p128, nl_shape_of (1, (int64_t) 128));
  g_assert_error (err, NL_OP_ERROR, NL_OP_ERROR_PARAM);
  g_assert_nonnull (strstr (err->message, "last axis"));
  g_clear_error (&err);

  /* one input only */
  {
    NlShape in[1] = { p128 };
    g_assert_null (nl_op_instance_new (nl_op_lookup ("SoftmaxCrossEntropy"), NULL, 1, in, TRUE, &err));
    g_assert_error (err, NL_OP_ERROR, NL_OP_ERROR_SHAPE);
    g_clear_error (&err);
  }

  {
    const char *ops[] = { "L2Loss", "L1Loss", "HuberLoss", "SigmoidBinaryCrossEntropy" };
    for (guint i = 0; i < G_N_ELEMENTS (ops); i++)
      {
        g_autofree char *want = g_strdup_printf ("%s: label has 100 samples but pred has 128", ops[i]);
        err = make_fails (ops[i], NULL, nl_shape_of (2, (int64_t) 128, (int64_t) 1), nl_shape_of (1, (int64_t) 100));
        g_assert_error (err, NL_OP_ERROR, NL_OP_ERROR_SHAPE);
        g_assert_cmpstr (err->message, ==, want);
        g_clear_error (&err);

        err = make_fails (ops[i], NULL, nl_shape_of (2, (int64_t) 4, (int64_t) 2), nl_shape_of (2, (int64_t) 4, (int64_t) 3));
        g_assert_error (err, NL_OP_ERROR, NL_OP_ERROR_SHAPE);
        g_assert_nonnull (strstr (err->message, "(4, 3)"));
        g_assert_nonnull (strstr (err->message, "(4, 2)"));
        g_clear_error (&err);

        /* (4, 2) against (4): not the same number of values */
        err = make_fails (ops[i], NULL, nl_shape_of (2, (int64_t) 4, (int64_t) 2), nl_shape_of (1, (int64_t) 4));
        g_assert_error (err, NL_OP_ERROR, NL_OP_ERROR_SHAPE);
        g_clear_error (&err);
      }
  }
}

/* ---- elementwise losses ------------------------------------------------- */

typedef enum { R_L2, R_L1, R_HUBER, R_SBCE, R_SBCE_SIGMOID } RefKind;

/* Per-element loss and its derivative in pred, straight from the definitions. */
static void
ref_elem (RefKind k, double x, double z, double rho, double *l, double *g)
{
  double d = x - z;
  switch (k)
    {
    case R_L2:
      *l = 0.5 * d * d;
      *g = d;
      break;
    case R_L1:
      *l = fabs (d);
      *g = d > 0 ? 1 : d < 0 ? -1 : 0;
      break;
    case R_HUBER:
      if (fabs (d) < rho)
        {
          *l = 0.5 / rho * d * d;
          *g = d / rho;
        }
      else
        {
          *l = fabs (d) - 0.5 * rho;
          *g = d > 0 ? 1 : -1;
        }
      break;
    case R_SBCE:
      {
        /* -(z log s + (1 - z) log (1 - s)); fine for the |x| <= 8 used here */
        double s = 1 / (1 + exp (-x));
        *l = -(z * log (s) + (1 - z) * log (1 - s));
        *g = s - z;
      }
      break;
    case R_SBCE_SIGMOID:
      *l = -(z * log (x + 1e-12) + (1 - z) * log (1 - x + 1e-12));
      *g = -(z / x - (1 - z) / (1 - x));
      break;
    }
}

static void
check_elem (const char *op, const char *const *params, RefKind k, double rho,
            NlShape pred, NlShape label, float lo, float hi, float zlo, float zhi, gboolean binary, guint64 seed)
{
  NlOpInstance *inst = make (op, params, pred, label);
  int64_t N = pred.d[0], n = nl_shape_numel (&pred), M = n / N;
  const float *x, *z, *og;
  g_autofree float *want_loss = g_new0 (float, N), *want_grad = g_new (float, n);

  nl_test_fill_uniform (inst->in[0], lo, hi, seed);
  nl_test_fill_uniform (inst->in[1], zlo, zhi, seed + 7);
  if (binary)
    {
      float *zz = nl_tensor_f32 (inst->in[1]);
      for (int64_t i = 0; i < n; i++)
        zz[i] = zz[i] > 0.5f;
    }
  nl_test_fill_uniform (inst->out_grad[0], -2, 2, seed + 9);
  run (inst);

  x = nl_tensor_f32 (inst->in[0]);
  z = nl_tensor_f32 (inst->in[1]);
  og = nl_tensor_f32 (inst->out_grad[0]);
  for (int64_t s = 0; s < N; s++)
    {
      double acc = 0;
      for (int64_t i = s * M; i < (s + 1) * M; i++)
        {
          double l, g;
          ref_elem (k, x[i], z[i], rho, &l, &g);
          acc += l;
          want_grad[i] = (float) (g * og[s] / M);
        }
      want_loss[s] = (float) (acc / M);
    }
  nl_test_assert_close (nl_tensor_f32 (inst->out[0]), want_loss, N, 1e-5, 1e-5);
  nl_test_assert_close (nl_tensor_f32 (inst->in_grad[0]), want_grad, n, 1e-6, 1e-4);
  nl_op_instance_free (inst);
}

static void
test_l2_l1 (void)
{
  NlShape s53 = nl_shape_of (2, (int64_t) 5, (int64_t) 3);
  NlShape s234 = nl_shape_of (3, (int64_t) 2, (int64_t) 3, (int64_t) 4);
  NlShape s71 = nl_shape_of (2, (int64_t) 7, (int64_t) 1), s7 = nl_shape_of (1, (int64_t) 7);

  check_elem ("L2Loss", NULL, R_L2, 0, s53, s53, -2, 2, -2, 2, FALSE, 41);
  check_elem ("L2Loss", NULL, R_L2, 0, s234, s234, -3, 3, -1, 1, FALSE, 42);
  check_elem ("L2Loss", NULL, R_L2, 0, s71, s7, -3, 3, -1, 1, FALSE, 43);
  check_elem ("L2Loss", NULL, R_L2, 0, s7, s71, -3, 3, -1, 1, FALSE, 44);
  check_elem ("L1Loss", NULL, R_L1, 0, s53, s53, -2, 2, -2, 2, FALSE, 45);
  check_elem ("L1Loss", NULL, R_L1, 0, s234, s234, -3, 3, -1, 1, FALSE, 46);
  check_elem ("L1Loss", NULL, R_L1, 0, s71, s7, -3, 3, -1, 1, FALSE, 47);
  /* big enough for the OpenMP path */
  check_elem ("L2Loss", NULL, R_L2, 0, nl_shape_of (2, (int64_t) 300, (int64_t) 40),
              nl_shape_of (2, (int64_t) 300, (int64_t) 40), -3, 3, -1, 1, FALSE, 48);

  /* by hand: pred (2, 2) against label (2, 2) */
  {
    NlShape s22 = nl_shape_of (2, (int64_t) 2, (int64_t) 2);
    const float x[] = { 1, 2, -1, 0.5f }, z[] = { 0, 4, -1, 0 };
    const float want_l2[] = { (0.5f + 2.0f) / 2, (0 + 0.125f) / 2 };
    const float want_l1[] = { (1 + 2) / 2.0f, (0 + 0.5f) / 2 };
    const float want_l1_grad[] = { 0.5f, -0.5f, 0, 0.5f }; /* sign (d) / 2, 0 at d = 0 */
    const char *ops[] = { "L2Loss", "L1Loss" };
    for (int i = 0; i < 2; i++)
      {
        NlOpInstance *inst = make (ops[i], NULL, s22, s22);
        memcpy (nl_tensor_f32 (inst->in[0]), x, sizeof x);
        memcpy (nl_tensor_f32 (inst->in[1]), z, sizeof z);
        nl_tensor_fill (inst->out_grad[0], 1);
        run (inst);
        nl_test_assert_close (nl_tensor_f32 (inst->out[0]), i == 0 ? want_l2 : want_l1, 2, 1e-6, 1e-6);
        if (i == 1)
          nl_test_assert_close (nl_tensor_f32 (inst->in_grad[0]), want_l1_grad, 4, 1e-6, 1e-6);
        nl_op_instance_free (inst);
      }
  }
}

static void
test_huber (void)
{
  const char *rho05[] = { "rho", "0.5", NULL };
  const char *rho2[] = { "rho", "2", NULL };
  NlShape s54 = nl_shape_of (2, (int64_t) 5, (int64_t) 4);
  NlShape s6 = nl_shape_of (1, (int64_t) 6);

  /* random differences in [-2, 2]: both sides of rho */
  check_elem ("HuberLoss", NULL, R_HUBER, 1, s54, s54, -1, 1, -1, 1, FALSE, 51);
  check_elem ("HuberLoss", rho05, R_HUBER, 0.5, s54, s54, -1, 1, -1, 1, FALSE, 52);
  check_elem ("HuberLoss", rho2, R_HUBER, 2, nl_shape_of (2, (int64_t) 6, (int64_t) 1), s6, -3, 3, -1, 1, FALSE, 53);

  /* by hand, rho 1: 0.5 d^2 below 1, |d| - 0.5 above; gradient d or sign (d) */
  {
    NlOpInstance *inst = make ("HuberLoss", NULL, s6, s6);
    const float d[] = { 0.3f, -0.3f, 1.5f, -2.0f, 0.999f, 1.001f };
    const float want_loss[] = { 0.045f, 0.045f, 1.0f, 1.5f, 0.4990005f, 0.501f };
    const float want_grad[] = { 0.3f, -0.3f, 1, -1, 0.999f, 1 };
    memcpy (nl_tensor_f32 (inst->in[0]), d, sizeof d);
    nl_tensor_fill (inst->in[1], 0);
    nl_tensor_fill (inst->out_grad[0], 1);
    run (inst);
    nl_test_assert_close (nl_tensor_f32 (inst->out[0]), want_loss, 6, 1e-6, 1e-5);
    nl_test_assert_close (nl_tensor_f32 (inst->in_grad[0]), want_grad, 6, 1e-6, 1e-5);
    nl_op_instance_free (inst);
  }
  /* rho 2: d = 1.5 is quadratic (0.25 * 2.25), d = -3 linear (3 - 1) */
  {
    NlShape s2 = nl_shape_of (1, (int64_t) 2);
    NlOpInstance *inst = make ("HuberLoss", rho2, s2, s2);
    const float x[] = { 2.5f, -2 }, z[] = { 1, 1 };
    const float want_loss[] = { 0.5625f, 2 };
    const float want_grad[] = { 0.75f * 3, -1 * 3 };
    memcpy (nl_tensor_f32 (inst->in[0]), x, sizeof x);
    memcpy (nl_tensor_f32 (inst->in[1]), z, sizeof z);
    nl_tensor_fill (inst->out_grad[0], 3);
    run (inst);
    nl_test_assert_close (nl_tensor_f32 (inst->out[0]), want_loss, 2, 1e-6, 1e-6);
    nl_test_assert_close (nl_tensor_f32 (inst->in_grad[0]), want_grad, 2, 1e-6, 1e-6);
    nl_op_instance_free (inst);
  }
  /* rho must be > 0 */
  {
    const char *bad[] = { "rho", "0", NULL };
    const char *neg[] = { "rho", "-1", NULL };
    GError *err = make_fails ("HuberLoss", bad, s6, s6);
    g_assert_error (err, NL_OP_ERROR, NL_OP_ERROR_PARAM);
    g_clear_error (&err);
    err = make_fails ("HuberLoss", neg, s6, s6);
    g_assert_error (err, NL_OP_ERROR, NL_OP_ERROR_PARAM);
    g_clear_error (&err);
  }
}

static void
test_sbce (void)
{
  const char *from_sigmoid[] = { "from_sigmoid", "true", NULL };
  NlShape s6 = nl_shape_of (1, (int64_t) 6), s61 = nl_shape_of (2, (int64_t) 6, (int64_t) 1);
  NlShape s432 = nl_shape_of (3, (int64_t) 4, (int64_t) 3, (int64_t) 2);

  check_elem ("SigmoidBinaryCrossEntropy", NULL, R_SBCE, 0, s6, s6, -8, 8, 0, 1, TRUE, 61);
  check_elem ("SigmoidBinaryCrossEntropy", NULL, R_SBCE, 0, s61, s6, -8, 8, 0, 1, TRUE, 62);
  check_elem ("SigmoidBinaryCrossEntropy", NULL, R_SBCE, 0, s432, s432, -8, 8, 0, 1, TRUE, 63);
  /* soft labels */
  check_elem ("SigmoidBinaryCrossEntropy", NULL, R_SBCE, 0, s432, s432, -4, 4, 0, 1, FALSE, 64);
  check_elem ("SigmoidBinaryCrossEntropy", from_sigmoid, R_SBCE_SIGMOID, 0, s432, s432, 0.02f, 0.98f, 0, 1,
              TRUE, 65);
  check_elem ("SigmoidBinaryCrossEntropy", from_sigmoid, R_SBCE_SIGMOID, 0, s61, s6, 0.02f, 0.98f, 0, 1, FALSE, 66);

  /* logits of +-1000 without overflow: the loss is max (x, 0) - x z for
   * large |x|, log 2 at x = 0, z = 0.5; the gradient sigmoid (x) - z */
  {
    NlOpInstance *inst = make ("SigmoidBinaryCrossEntropy", NULL, s6, s6);
    const float x[] = { 1000, -1000, 1000, -1000, 0, 30 };
    const float z[] = { 0, 1, 1, 0, 0.5f, 0 };
    const float want_loss[] = { 1000, 1000, 0, 0, (float) log (2.0), (float) (30 + log1p (exp (-30.0))) };
    const float want_grad[] = { 1, -1, 0, 0, 0, 1 };
    memcpy (nl_tensor_f32 (inst->in[0]), x, sizeof x);
    memcpy (nl_tensor_f32 (inst->in[1]), z, sizeof z);
    nl_tensor_fill (inst->out_grad[0], 1);
    run (inst);
    nl_test_assert_close (nl_tensor_f32 (inst->out[0]), want_loss, 6, 1e-6, 1e-6);
    nl_test_assert_close (nl_tensor_f32 (inst->in_grad[0]), want_grad, 6, 1e-6, 1e-6);
    nl_op_instance_free (inst);
  }
  /* from_sigmoid at p = 0 and 1: Gluon's eps keeps the loss finite */
  {
    NlShape s2 = nl_shape_of (1, (int64_t) 2);
    NlOpInstance *inst = make ("SigmoidBinaryCrossEntropy", from_sigmoid, s2, s2);
    const float x[] = { 0, 1 }, z[] = { 1, 1 };
    const float want_loss[] = { (float) -log (1e-12), 0 };
    memcpy (nl_tensor_f32 (inst->in[0]), x, sizeof x);
    memcpy (nl_tensor_f32 (inst->in[1]), z, sizeof z);
    nl_tensor_fill (inst->out_grad[0], 1);
    g_assert_true (nl_op_instance_forward (inst, NULL));
    nl_test_assert_close (nl_tensor_f32 (inst->out[0]), want_loss, 2, 1e-4, 1e-5);
    nl_op_instance_free (inst);
  }
}

/* The benchmark runs SoftmaxCrossEntropy on (128, 10) every step; this
 * prints its cost (only with -m perf: speed is never asserted in tests). */
static void
test_sce_speed (void)
{
  NlOpInstance *inst = make ("SoftmaxCrossEntropy", NULL, nl_shape_of (2, (int64_t) 128, (int64_t) 10),
                             nl_shape_of (1, (int64_t) 128));
  float *z = nl_tensor_f32 (inst->in[1]);
  int iters = 20000;
  gint64 t0;
  double us;

  nl_test_fill_uniform (inst->in[0], -5, 5, 77);
  for (int i = 0; i < 128; i++)
    z[i] = (float) (i % 10);
  nl_tensor_fill (inst->out_grad[0], 1.0f / 128);
  t0 = g_get_monotonic_time ();
  for (int i = 0; i < iters; i++)
    {
      nl_op_instance_forward (inst, NULL);
      nl_op_instance_backward (inst, NULL);
    }
  us = (double) (g_get_monotonic_time () - t0) / iters;
  g_test_message ("SoftmaxCrossEntropy (128, 10) forward + backward: %.2f us", us);
  nl_op_instance_free (inst);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/losses/sce/sparse", test_sce_sparse);
  g_test_add_func ("/losses/sce/dense", test_sce_dense);
  g_test_add_func ("/losses/sce/from-logits", test_sce_from_logits);
  g_test_add_func ("/losses/sce/large-logits", test_sce_large_logits);
  g_test_add_func ("/losses/sce/no-saved", test_sce_no_saved);
  g_test_add_func ("/losses/sce/bad-labels", test_sce_bad_labels);
  if (g_test_perf ())   /* a figure, not a check: run with -m perf */
    g_test_add_func ("/losses/sce/speed", test_sce_speed);
  g_test_add_func ("/losses/shape-errors", test_shape_errors);
  g_test_add_func ("/losses/l2-l1", test_l2_l1);
  g_test_add_func ("/losses/huber", test_huber);
  g_test_add_func ("/losses/sbce", test_sbce);
  return g_test_run ();
}
