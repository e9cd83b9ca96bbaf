/* test-elementwise.c — Dropout, Activation, LeakyReLU, GELU, Flatten,
 * Reshape, Concat, Add, Softmax, LogSoftmax and Embedding against plain
 * reference loops written here (in double precision), plus their shape and
 * data errors. Finite-difference checks live in test-gradcheck. */
#include <math.h>
#include <stdarg.h>
#include <string.h>

#include "nl-test-util.h"
#include "ops/nl-op-instance.h"
#include "ops/nl-op-registry.h"

#define SH(...) nl_shape_make ((int) (sizeof ((int64_t[]) { __VA_ARGS__ }) / sizeof (int64_t)), \
                               (int64_t[]) { __VA_ARGS__ })
#define P(...) ((const char *const[]) { __VA_ARGS__, NULL })

static const NlOpDef *
def_of (const char *name)
{
  const NlOpDef *def = nl_op_lookup (name);
  if (def == NULL)
    g_error ("op %s is not registered", name);
  return def;
}

static NlOpInstance *
make (const char *op, const char *const *params, int n_data, const NlShape *shapes, gboolean training)
{
  GError *error = NULL;
  NlOpInstance *inst = nl_op_instance_new (def_of (op), params, n_data, shapes, training, &error);
  g_assert_no_error (error);
  g_assert_nonnull (inst);
  return inst;
}

static void
run_fwd (NlOpInstance *inst)
{
  GError *error = NULL;
  g_assert_true (nl_op_instance_forward (inst, &error));
  g_assert_no_error (error);
}

static void
run_bwd (NlOpInstance *inst)
{
  GError *error = NULL;
  g_assert_true (nl_op_instance_backward (inst, &error));
  g_assert_no_error (error);
}

/* Instance creation must fail with `code`; the message must contain each
 * of the NULL-terminated fragments. */
static void
expect_error (const char *op, const char *const *params, int n_data, const NlShape *shapes,
              int code, ...)
{
  GError *error = NULL;
  NlOpInstance *inst = nl_op_instance_new (def_of (op), params, n_data, shapes, TRUE, &error);
  va_list ap;
  const char *frag;

  g_assert_null (inst);
  g_assert_error (error, NL_OP_ERROR, code);
  va_start (ap, code);
  while ((frag = va_arg (ap, const char *)) != NULL)
    if (!strstr (error->message, frag))
      g_error ("%s: message \"%s\" lacks \"%s\"", op, error->message, frag);
  va_end (ap);
  g_test_message ("%s: %s", op, error->message);
  g_error_free (error);
}

static void
assert_shape (const NlTensor *t, NlShape want)
{
  NlShape got = nl_tensor_get_shape (t);
  char a[96], b[96];
  if (!nl_shape_equal (&got, &want))
    g_error ("shape %s, expected %s", nl_shape_format (&got, a, sizeof a), nl_shape_format (&want, b, sizeof b));
}

static float *
fbuf (int64_t n)
{
  return g_new0 (float, MAX (n, 1));
}

/* Re-run forward with the output written over (a copy of) the input and
 * check it matches the out-of-place result: what the inplace flag promises. */
static void
check_inplace_forward (NlOpInstance *inst)
{
  NlTensor *io = nl_tensor_copy (inst->in[0]);
  NlTensor *in[8] = { io }, *out[1] = { io };
  GError *error = NULL;

  g_assert_true (inst->def->inplace);
  for (int i = 1; i < inst->n_in; i++)
    in[i] = inst->in[i];
  NlOpCtx ctx = { .def = inst->def, .p = inst->p, .args = inst->args, .n_data = inst->n_data, .in = in,
                  .out = out, .aux = inst->aux, .saved = inst->saved, .out_grad = inst->out_grad,
                  .in_grad = inst->in_grad, .training = inst->training, .seed = inst->seed,
                  .step = inst->step, .state = &inst->state };
  g_assert_true (inst->kernels.forward (&ctx, &error));
  g_assert_no_error (error);
  g_assert_cmpmem (nl_tensor_f32 (io), nl_tensor_numel (io) * sizeof (float),
                   nl_tensor_f32 (inst->out[0]), nl_tensor_numel (inst->out[0]) * sizeof (float));
  nl_tensor_unref (io);
}

/* Odd sizes, one above the OpenMP threshold. */
static const NlShape *
unary_shapes (int *n)
{
  static NlShape s[5];
  s[0] = SH (1);
  s[1] = SH (7);
  s[2] = SH (3, 5, 7);
  s[3] = SH (2, 3, 11, 13);
  s[4] = SH (131, 263); /* 34453 > NL_PAR_MIN */
  *n = 5;
  return s;
}

/* ---- Activation, LeakyReLU, GELU ---- */

typedef double (*RefFn) (double x, double arg);

static double r_relu (double x, double a) { return x > 0 ? x : 0; }
static double d_relu (double x, double a) { return x > 0 ? 1 : 0; }
static double r_sigm (double x, double a) { return 1 / (1 + exp (-x)); }
static double d_sigm (double x, double a) { double s = 1 / (1 + exp (-x)); return s * (1 - s); }
static double r_tanh (double x, double a) { return tanh (x); }
static double d_tanh (double x, double a) { return 1 - tanh (x) * tanh (x); }
static double r_soft (double x, double a) { return x > 0 ? x + log1p (exp (-x)) : log1p (exp (x)); }
static double d_soft (double x, double a) { return 1 / (1 + exp (-x)); }
static double r_leaky (double x, double a) { return x > 0 ? x : a * x; }
static double d_leaky (double x, double a) { return x > 0 ? 1 : a; }
static double r_gelu (double x, double a) { return 0.5 * x * (1 + erf (x / sqrt (2))); }
static double d_gelu (double x, double a)
{
  return 0.5 * (1 + erf (x / sqrt (2))) + x * exp (-0.5 * x * x) / sqrt (2 * G_PI);
}
static double
r_gelu_tanh (double x, double a)
{
  return 0.5 * x * (1 + tanh (sqrt (2 / G_PI) * (x + 0.044715 * x * x * x)));
}
static double
d_gelu_tanh (double x, double a)
{
  double u = sqrt (2 / G_PI) * (x + 0.044715 * x * x * x);
  double du = sqrt (2 / G_PI) * (1 + 3 * 0.044715 * x * x);
  return 0.5 * (1 + tanh (u)) + 0.5 * x * (1 - tanh (u) * tanh (u)) * du;
}

static void
check_unary (const char *op, const char *const *params, RefFn f, RefFn df, double arg,
             float lo, float hi, gboolean test_inplace)
{
  int n_shapes;
  const NlShape *shapes = unary_shapes (&n_shapes);

  for (int s = 0; s < n_shapes; s++)
    {
      NlOpInstance *inst = make (op, params, 1, &shapes[s], TRUE);
      int64_t n = nl_shape_numel (&shapes[s]);
      float *want = fbuf (n), *dwant = fbuf (n);
      const float *x, *dy;

      assert_shape (inst->out[0], shapes[s]);
      nl_test_fill_uniform (inst->in[0], lo, hi, 11 + s);
      nl_test_fill_uniform (inst->out_grad[0], -1, 1, 23 + s);
      x = nl_tensor_f32 (inst->in[0]);
      dy = nl_tensor_f32 (inst->out_grad[0]);
      for (int64_t i = 0; i < n; i++)
        {
          want[i] = (float) f (x[i], arg);
          dwant[i] = (float) (dy[i] * df (x[i], arg));
        }
      /* garbage in the gradient must be overwritten, not accumulated */
      nl_tensor_fill (inst->in_grad[0], 1234.0f);
      run_fwd (inst);
      nl_test_assert_close (nl_tensor_f32 (inst->out[0]), want, n, 2e-6, 2e-5);
      run_bwd (inst);
      nl_test_assert_close (nl_tensor_f32 (inst->in_grad[0]), dwant, n, 2e-6, 2e-5);
      if (test_inplace)
        check_inplace_forward (inst);
      g_free (want);
      g_free (dwant);
      nl_op_instance_free (inst);
    }
}

static void
test_activation (void)
{
  check_unary ("Activation", NULL, r_relu, d_relu, 0, -3, 3, TRUE);
  check_unary ("Activation", P ("act_type", "relu"), r_relu, d_relu, 0, -3, 3, TRUE);
  check_unary ("Activation", P ("act_type", "sigmoid"), r_sigm, d_sigm, 0, -8, 8, TRUE);
  check_unary ("Activation", P ("act_type", "tanh"), r_tanh, d_tanh, 0, -4, 4, TRUE);
  check_unary ("Activation", P ("act_type", "softrelu"), r_soft, d_soft, 0, -10, 10, TRUE);
  /* softrelu must stay finite and exact far out: log(1 + e^x) overflows
     computed naively */
  check_unary ("Activation", P ("act_type", "softrelu"), r_soft, d_soft, 0, -100, 100, FALSE);
}

static void
test_relu_exact (void)
{
  /* boundary values: 0 goes to 0 with zero gradient */
  NlOpInstance *inst = make ("Activation", NULL, 1, (NlShape[]) { SH (5) }, TRUE);
  const float x[5] = { -2.0f, -0.0f, 0.0f, 1e-30f, 3.5f };
  const float y[5] = { 0, 0, 0, 1e-30f, 3.5f };
  const float dx[5] = { 0, 0, 0, 7, 7 };
  memcpy (nl_tensor_f32 (inst->in[0]), x, sizeof x);
  nl_tensor_fill (inst->out_grad[0], 7.0f);
  run_fwd (inst);
  run_bwd (inst);
  nl_test_assert_close (nl_tensor_f32 (inst->out[0]), y, 5, 0, 0);
  nl_test_assert_close (nl_tensor_f32 (inst->in_grad[0]), dx, 5, 0, 0);
  nl_op_instance_free (inst);
}

static void
test_leaky_relu (void)
{
  check_unary ("LeakyReLU", NULL, r_leaky, d_leaky, 0.01, -3, 3, TRUE);
  check_unary ("LeakyReLU", P ("alpha", "0.2"), r_leaky, d_leaky, 0.2, -3, 3, TRUE);
  check_unary ("LeakyReLU", P ("alpha", "0"), r_leaky, d_leaky, 0.0, -3, 3, TRUE);
  check_unary ("LeakyReLU", P ("alpha", "1.5"), r_leaky, d_leaky, 1.5, -3, 3, TRUE);
  expect_error ("LeakyReLU", P ("alpha", "-0.1"), 1, (NlShape[]) { SH (3) }, NL_OP_ERROR_PARAM, "alpha", NULL);
}

static void
test_gelu (void)
{
  check_unary ("GELU", NULL, r_gelu, d_gelu, 0, -5, 5, TRUE);
  check_unary ("GELU", P ("approximation", "erf"), r_gelu, d_gelu, 0, -5, 5, TRUE);
  check_unary ("GELU", P ("approximation", "tanh"), r_gelu_tanh, d_gelu_tanh, 0, -5, 5, TRUE);
  /* the two differ, so the parameter really switches the formula */
  g_assert_cmpfloat (fabs (r_gelu (1.5, 0) - r_gelu_tanh (1.5, 0)), >, 1e-5);
  expect_error ("GELU", P ("approximation", "sigmoid"), 1, (NlShape[]) { SH (3) }, NL_OP_ERROR_PARAM,
                "approximation", NULL);
}

/* ---- Dropout ---- */

static NlOpInstance *
dropout_run (const char *rate, NlShape shape, gboolean training, guint64 seed, guint64 step)
{
  NlOpInstance *inst = make ("Dropout", P ("rate", rate), 1, &shape, training);
  inst->seed = seed;
  inst->step = step;
  nl_test_fill_uniform (inst->in[0], 0.5f, 1.5f, 5);
  nl_test_fill_uniform (inst->out_grad[0], -1, 1, 6);
  run_fwd (inst);
  run_bwd (inst);
  return inst;
}

static int64_t
count_zero_mismatch (const NlTensor *a, const NlTensor *b)
{
  const float *p = nl_tensor_f32 (a), *q = nl_tensor_f32 (b);
  int64_t d = 0;
  for (int64_t i = 0; i < nl_tensor_numel (a); i++)
    d += (p[i] == 0.0f) != (q[i] == 0.0f);
  return d;
}

static void
test_dropout_training (void)
{
  const double rates[] = { 0.1, 0.3, 0.5, 0.9 };
  const char *rate_text[] = { "0.1", "0.3", "0.5", "0.9" };
  NlShape shape = SH (100, 1000);

  for (int r = 0; r < 4; r++)
    {
      NlOpInstance *inst = dropout_run (rate_text[r], shape, TRUE, 42, 3);
      const float *x = nl_tensor_f32 (inst->in[0]), *y = nl_tensor_f32 (inst->out[0]);
      const float *dy = nl_tensor_f32 (inst->out_grad[0]), *dx = nl_tensor_f32 (inst->in_grad[0]);
      const float *mask = nl_tensor_f32 (inst->saved[0]);
      int64_t n = nl_shape_numel (&shape), dropped = 0;
      float scale = (float) (1.0 / (1.0 - rates[r]));
      double frac;

      assert_shape (inst->saved[0], shape);
      for (int64_t i = 0; i < n; i++)
        {
          gboolean kept = y[i] != 0.0f;
          dropped += !kept;
          /* kept elements are scaled by 1 / (1 - rate) */
          if (kept && fabsf (y[i] - x[i] * scale) > 1e-5f * fabsf (x[i] * scale))
            g_error ("rate %s: y[%" G_GINT64_FORMAT "] = %g, expected %g", rate_text[r], i, y[i], x[i] * scale);
          /* backward applies the same mask */
          float want = kept ? dy[i] * scale : 0.0f;
          if (fabsf (dx[i] - want) > 1e-5f * fabsf (want))
            g_error ("rate %s: dx[%" G_GINT64_FORMAT "] = %g, expected %g", rate_text[r], i, dx[i], want);
          g_assert_true (kept ? mask[i] != 0.0f : mask[i] == 0.0f);
        }
      frac = (double) dropped / n;
      g_test_message ("rate %s: dropped %.4f", rate_text[r], frac);
      /* binomial sd <= 0.0016 at n = 1e5; 0.01 is over 6 sd */
      g_assert_cmpfloat (fabs (frac - rates[r]), <, 0.01);
      check_inplace_forward (inst);
      nl_op_instance_free (inst);
    }
}

static void
test_dropout_determinism (void)
{
  NlShape shape = SH (100, 1000);
  int64_t n = nl_shape_numel (&shape);
  int saved_threads = nl_threads_get ();
  NlOpInstance *a, *b, *c, *d, *e;

  nl_threads_set (1);
  a = dropout_run ("0.5", shape, TRUE, 42, 7);
  nl_threads_set (2);
  b = dropout_run ("0.5", shape, TRUE, 42, 7);
  nl_threads_set (saved_threads);
  c = dropout_run ("0.5", shape, TRUE, 42, 8);
  d = dropout_run ("0.5", shape, TRUE, 43, 7);
  e = dropout_run ("0.5", SH (37, 3), TRUE, 42, 7);

  /* same seed and step: the same mask whatever the thread count */
  g_assert_cmpmem (nl_tensor_f32 (a->out[0]), n * sizeof (float), nl_tensor_f32 (b->out[0]), n * sizeof (float));
  g_assert_cmpmem (nl_tensor_f32 (a->saved[0]), n * sizeof (float), nl_tensor_f32 (b->saved[0]), n * sizeof (float));
  /* another step or seed: about half the positions differ (rate 0.5) */
  g_assert_cmpint (count_zero_mismatch (a->out[0], c->out[0]), >, n / 3);
  g_assert_cmpint (count_zero_mismatch (a->out[0], d->out[0]), >, n / 3);
  /* the mask depends on the element index only, not on the tensor's shape */
  for (int64_t i = 0; i < 37 * 3; i++)
    g_assert_cmpint (nl_tensor_f32 (a->saved[0])[i] == 0.0f, ==, nl_tensor_f32 (e->saved[0])[i] == 0.0f);
  nl_op_instance_free (a);
  nl_op_instance_free (b);
  nl_op_instance_free (c);
  nl_op_instance_free (d);
  nl_op_instance_free (e);
}

static void
test_dropout_predict (void)
{
  NlShape shape = SH (13, 17);
  int64_t n = nl_shape_numel (&shape);
  NlOpInstance *p = dropout_run ("0.5", shape, FALSE, 42, 1);
  NlOpInstance *z = dropout_run ("0", shape, TRUE, 42, 1);

  /* predict: the identity, forward and backward */
  g_assert_cmpmem (nl_tensor_f32 (p->out[0]), n * sizeof (float), nl_tensor_f32 (p->in[0]), n * sizeof (float));
  g_assert_cmpmem (nl_tensor_f32 (p->in_grad[0]), n * sizeof (float),
                   nl_tensor_f32 (p->out_grad[0]), n * sizeof (float));
  /* rate 0 in training keeps everything unscaled */
  g_assert_cmpmem (nl_tensor_f32 (z->out[0]), n * sizeof (float), nl_tensor_f32 (z->in[0]), n * sizeof (float));
  nl_op_instance_free (p);
  nl_op_instance_free (z);
  expect_error ("Dropout", P ("rate", "1"), 1, &shape, NL_OP_ERROR_PARAM, "rate", NULL);
  expect_error ("Dropout", P ("rate", "-0.1"), 1, &shape, NL_OP_ERROR_PARAM, "rate", NULL);
}

/* ---- Flatten, Reshape ---- */

/* Forward and backward are order-preserving copies: check both and the shape. */
static void
check_copy_op (const char *op, const char *const *params, NlShape in, NlShape want)
{
  NlOpInstance *inst = make (op, params, 1, &in, TRUE);
  int64_t n = nl_shape_numel (&in);

  assert_shape (inst->out[0], want);
  nl_test_fill_uniform (inst->in[0], -1, 1, 3);
  nl_test_fill_uniform (inst->out_grad[0], -1, 1, 4);
  nl_tensor_fill (inst->in_grad[0], 99.0f);
  run_fwd (inst);
  run_bwd (inst);
  g_assert_cmpmem (nl_tensor_f32 (inst->out[0]), n * sizeof (float), nl_tensor_f32 (inst->in[0]), n * sizeof (float));
  g_assert_cmpmem (nl_tensor_f32 (inst->in_grad[0]), n * sizeof (float),
                   nl_tensor_f32 (inst->out_grad[0]), n * sizeof (float));
  check_inplace_forward (inst);
  nl_op_instance_free (inst);
}

static void
test_flatten (void)
{
  check_copy_op ("Flatten", NULL, SH (2, 3, 4, 5), SH (2, 60));
  check_copy_op ("Flatten", NULL, SH (7, 1, 3), SH (7, 3));
  check_copy_op ("Flatten", NULL, SH (5, 9), SH (5, 9));
  check_copy_op ("Flatten", NULL, SH (3, 2, 2, 2, 2, 3), SH (3, 48));
  check_copy_op ("Flatten", NULL, SH (6), SH (6, 1));
  expect_error ("Flatten", NULL, 1, (NlShape[]) { { .ndim = 0 } }, NL_OP_ERROR_SHAPE, "scalar", NULL);
  expect_error ("Flatten", NULL, 2, (NlShape[]) { SH (2, 3), SH (2, 3) }, NL_OP_ERROR_SHAPE, "one input", NULL);
}

static void
test_reshape (void)
{
  check_copy_op ("Reshape", P ("shape", "[0, -1]"), SH (2, 3, 4), SH (2, 12));
  check_copy_op ("Reshape", P ("shape", "[-1, 4]"), SH (2, 3, 4), SH (6, 4));
  check_copy_op ("Reshape", P ("shape", "[0, 0, 2, 2]"), SH (2, 3, 4), SH (2, 3, 2, 2));
  check_copy_op ("Reshape", P ("shape", "[4, 0, -1]"), SH (2, 3, 4), SH (4, 3, 2));
  check_copy_op ("Reshape", P ("shape", "[0, 1, 28, 28]"), SH (3, 784), SH (3, 1, 28, 28));
  check_copy_op ("Reshape", P ("shape", "[-1]"), SH (3, 5, 7), SH (105));
  check_copy_op ("Reshape", P ("shape", "[5, 21]"), SH (3, 5, 7), SH (5, 21));

  /* element counts differ: both shapes in the message */
  expect_error ("Reshape", P ("shape", "[2, 13]"), 1, (NlShape[]) { SH (2, 3, 4) }, NL_OP_ERROR_SHAPE,
                "(2, 3, 4)", "(2, 13)", NULL);
  expect_error ("Reshape", P ("shape", "[0, 5]"), 1, (NlShape[]) { SH (2, 3, 4) }, NL_OP_ERROR_SHAPE,
                "(2, 3, 4)", "(2, 5)", NULL);
  expect_error ("Reshape", P ("shape", "[5, -1]"), 1, (NlShape[]) { SH (2, 3, 4) }, NL_OP_ERROR_SHAPE,
                "(2, 3, 4)", "(5, -1)", NULL);
  expect_error ("Reshape", P ("shape", "[-1, -1]"), 1, (NlShape[]) { SH (2, 3, 4) }, NL_OP_ERROR_SHAPE,
                "-1", NULL);
  expect_error ("Reshape", P ("shape", "[0, 0, 0, -1]"), 1, (NlShape[]) { SH (2, 12) }, NL_OP_ERROR_SHAPE,
                "(2, 12)", NULL);
  expect_error ("Reshape", P ("shape", "[0, -1]"), 2, (NlShape[]) { SH (2, 3), SH (2, 3) }, NL_OP_ERROR_SHAPE,
                "one input", NULL);
  /* required, and only -1 is a special negative */
  expect_error ("Reshape", NULL, 1, (NlShape[]) { SH (2, 3) }, NL_OP_ERROR_PARAM, "shape", NULL);
  expect_error ("Reshape", P ("shape", "[0, -2]"), 1, (NlShape[]) { SH (2, 3) }, NL_OP_ERROR_PARAM, "shape", NULL);
}

/* ---- Concat ---- */

static void
unravel (int64_t i, const NlShape *s, int64_t *pos)
{
  for (int d = s->ndim - 1; d >= 0; d--)
    {
      pos[d] = i % s->d[d];
      i /= s->d[d];
    }
}

static int64_t
ravel (const int64_t *pos, const NlShape *s)
{
  int64_t i = 0;
  for (int d = 0; d < s->ndim; d++)
    i = i * s->d[d] + pos[d];
  return i;
}

static void
check_concat (int n_in, const NlShape *shapes, int dim_param, gboolean drop_grad_1)
{
  char dim_text[16];
  NlOpInstance *inst;
  int dim = dim_param < 0 ? dim_param + shapes[0].ndim : dim_param;
  NlShape want = shapes[0];
  int64_t n;
  float *ref, *dref[NL_MAX_PORTS] = { NULL };

  g_snprintf (dim_text, sizeof dim_text, "%d", dim_param);
  inst = make ("Concat", P ("dim", dim_text), n_in, shapes, TRUE);
  for (int k = 1; k < n_in; k++)
    want.d[dim] += shapes[k].d[dim];
  assert_shape (inst->out[0], want);
  n = nl_shape_numel (&want);
  for (int k = 0; k < n_in; k++)
    nl_test_fill_uniform (inst->in[k], -1, 1, 100 + k);
  nl_test_fill_uniform (inst->out_grad[0], -1, 1, 99);
  if (drop_grad_1)
    {
      /* an input that needs no gradient: its slot is NULL and must be skipped */
      nl_tensor_unref (inst->in_grad[1]);
      inst->in_grad[1] = NULL;
    }
  for (int k = 0; k < n_in; k++)
    if (inst->in_grad[k])
      nl_tensor_fill (inst->in_grad[k], 55.0f);

  /* reference: walk the output; the coordinate along dim says which input */
  ref = fbuf (n);
  for (int k = 0; k < n_in; k++)
    dref[k] = fbuf (nl_shape_numel (&shapes[k]));
  for (int64_t i = 0; i < n; i++)
    {
      int64_t pos[NL_MAX_DIMS];
      int k = 0;
      unravel (i, &want, pos);
      while (pos[dim] >= shapes[k].d[dim])
        pos[dim] -= shapes[k++].d[dim];
      ref[i] = nl_tensor_f32 (inst->in[k])[ravel (pos, &shapes[k])];
      dref[k][ravel (pos, &shapes[k])] = nl_tensor_f32 (inst->out_grad[0])[i];
    }
  run_fwd (inst);
  run_bwd (inst);
  nl_test_assert_close (nl_tensor_f32 (inst->out[0]), ref, n, 0, 0);
  for (int k = 0; k < n_in; k++)
    {
      if (inst->in_grad[k])
        nl_test_assert_close (nl_tensor_f32 (inst->in_grad[k]), dref[k], nl_shape_numel (&shapes[k]), 0, 0);
      g_free (dref[k]);
    }
  g_free (ref);
  nl_op_instance_free (inst);
}

static void
test_concat (void)
{
  for (int dim = 0; dim < 4; dim++)
    {
      NlShape s[3] = { SH (3, 4, 5, 6), SH (3, 4, 5, 6), SH (3, 4, 5, 6) };
      s[0].d[dim] = 2;
      s[1].d[dim] = 1;
      s[2].d[dim] = 3;
      check_concat (3, s, dim, FALSE);
      check_concat (3, s, dim, TRUE);
      check_concat (3, s, dim - 4, FALSE); /* the same dimension counted from the end */
    }
  check_concat (1, (NlShape[]) { SH (2, 7) }, 1, FALSE);
  check_concat (2, (NlShape[]) { SH (5, 3), SH (5, 17) }, -1, FALSE);
  check_concat (4, (NlShape[]) { SH (4, 1, 3), SH (4, 2, 3), SH (4, 5, 3), SH (4, 1, 3) }, 1, TRUE);
  /* large enough for the parallel path */
  check_concat (2, (NlShape[]) { SH (64, 20, 24, 2), SH (64, 11, 24, 2) }, 1, FALSE);
  /* defaults to dim 1 */
  {
    NlOpInstance *inst = make ("Concat", NULL, 2, (NlShape[]) { SH (2, 3, 4), SH (2, 5, 4) }, TRUE);
    assert_shape (inst->out[0], SH (2, 8, 4));
    nl_op_instance_free (inst);
  }

  expect_error ("Concat", P ("dim", "1"), 2, (NlShape[]) { SH (2, 3, 4), SH (2, 3, 5) }, NL_OP_ERROR_SHAPE,
                "(2, 3, 4)", "(2, 3, 5)", NULL);
  expect_error ("Concat", P ("dim", "1"), 2, (NlShape[]) { SH (2, 3, 4), SH (2, 3) }, NL_OP_ERROR_SHAPE,
                "(2, 3, 4)", "(2, 3)", NULL);
  expect_error ("Concat", P ("dim", "3"), 2, (NlShape[]) { SH (2, 3, 4), SH (2, 3, 4) }, NL_OP_ERROR_SHAPE,
                "dimension 3", NULL);
  expect_error ("Concat", P ("dim", "-4"), 2, (NlShape[]) { SH (2, 3, 4), SH (2, 3, 4) }, NL_OP_ERROR_SHAPE,
                "dimension -4", NULL);
  expect_error ("Concat", NULL, NL_MAX_PORTS + 1,
                (NlShape[NL_MAX_PORTS + 1]) { SH (2, 3), SH (2, 3), SH (2, 3), SH (2, 3), SH (2, 3), SH (2, 3),
                                              SH (2, 3), SH (2, 3), SH (2, 3), SH (2, 3), SH (2, 3), SH (2, 3),
                                              SH (2, 3), SH (2, 3), SH (2, 3), SH (2, 3), SH (2, 3) },
                NL_OP_ERROR_SHAPE, "inputs", NULL);
}

/* ---- Add ---- */

static void
check_add (int n_in, NlShape shape)
{
  NlShape shapes[NL_MAX_PORTS];
  NlOpInstance *inst;
  int64_t n = nl_shape_numel (&shape);
  float *ref = fbuf (n);

  for (int k = 0; k < n_in; k++)
    shapes[k] = shape;
  inst = make ("Add", NULL, n_in, shapes, TRUE);
  assert_shape (inst->out[0], shape);
  for (int k = 0; k < n_in; k++)
    {
      nl_test_fill_uniform (inst->in[k], -1, 1, 200 + k);
      nl_tensor_fill (inst->in_grad[k], 77.0f);
    }
  nl_test_fill_uniform (inst->out_grad[0], -1, 1, 300);
  for (int64_t i = 0; i < n; i++)
    {
      double s = 0;
      for (int k = 0; k < n_in; k++)
        s += nl_tensor_f32 (inst->in[k])[i];
      ref[i] = (float) s;
    }
  run_fwd (inst);
  run_bwd (inst);
  nl_test_assert_close (nl_tensor_f32 (inst->out[0]), ref, n, 1e-6, 1e-6);
  for (int k = 0; k < n_in; k++)
    g_assert_cmpmem (nl_tensor_f32 (inst->in_grad[k]), n * sizeof (float),
                     nl_tensor_f32 (inst->out_grad[0]), n * sizeof (float));
  check_inplace_forward (inst);
  g_free (ref);
  nl_op_instance_free (inst);
}

static void
test_add (void)
{
  check_add (1, SH (3, 5));
  check_add (2, SH (3, 5, 7));
  check_add (3, SH (2, 3, 5, 7));
  check_add (5, SH (11));
  check_add (2, SH (128, 300)); /* parallel path */
  check_add (3, SH (128, 300));
  expect_error ("Add", NULL, 2, (NlShape[]) { SH (2, 3, 4), SH (2, 3, 5) }, NL_OP_ERROR_SHAPE,
                "(2, 3, 4)", "(2, 3, 5)", NULL);
  expect_error ("Add", NULL, 3, (NlShape[]) { SH (2, 3), SH (2, 3), SH (3, 2) }, NL_OP_ERROR_SHAPE,
                "input 3", "(3, 2)", NULL);
  expect_error ("Add", NULL, 2, (NlShape[]) { SH (6), SH (2, 3) }, NL_OP_ERROR_SHAPE, "(6)", "(2, 3)", NULL);
}

/* ---- Softmax, LogSoftmax ---- */

static void
check_softmax (gboolean logp, NlShape shape, int axis_param, float lo, float hi)
{
  const char *op = logp ? "LogSoftmax" : "Softmax";
  char axis_text[16];
  NlOpInstance *inst;
  int axis = axis_param < 0 ? axis_param + shape.ndim : axis_param;
  int64_t n = nl_shape_numel (&shape), outer = 1, len = shape.d[axis], inner = 1;
  float *ref = fbuf (n), *dref = fbuf (n);
  const float *x, *dy;

  g_snprintf (axis_text, sizeof axis_text, "%d", axis_param);
  inst = make (op, axis_param == -1 ? NULL : P ("axis", axis_text), 1, &shape, TRUE);
  assert_shape (inst->out[0], shape);
  nl_test_fill_uniform (inst->in[0], lo, hi, 31);
  nl_test_fill_uniform (inst->out_grad[0], -1, 1, 32);
  nl_tensor_fill (inst->in_grad[0], 3.0f);
  x = nl_tensor_f32 (inst->in[0]);
  dy = nl_tensor_f32 (inst->out_grad[0]);
  for (int d = 0; d < axis; d++)
    outer *= shape.d[d];
  for (int d = axis + 1; d < shape.ndim; d++)
    inner *= shape.d[d];

  for (int64_t o = 0; o < outer; o++)
    for (int64_t k = 0; k < inner; k++)
      {
        int64_t base = o * len * inner + k;
        double m = -INFINITY, s = 0, dot = 0, gsum = 0;
        for (int64_t j = 0; j < len; j++)
          m = fmax (m, x[base + j * inner]);
        for (int64_t j = 0; j < len; j++)
          s += exp ((double) x[base + j * inner] - m);
        for (int64_t j = 0; j < len; j++)
          {
            double p = exp ((double) x[base + j * inner] - m) / s;
            dot += p * dy[base + j * inner];
            gsum += dy[base + j * inner];
          }
        for (int64_t j = 0; j < len; j++)
          {
            int64_t i = base + j * inner;
            double p = exp ((double) x[i] - m) / s;
            ref[i] = (float) (logp ? x[i] - m - log (s) : p);
            dref[i] = (float) (logp ? dy[i] - p * gsum : p * (dy[i] - dot));
          }
      }
  run_fwd (inst);
  run_bwd (inst);
  nl_test_assert_close (nl_tensor_f32 (inst->out[0]), ref, n, 1e-6, 1e-5);
  nl_test_assert_close (nl_tensor_f32 (inst->in_grad[0]), dref, n, 1e-6, 1e-4);
  check_inplace_forward (inst);
  g_free (ref);
  g_free (dref);
  nl_op_instance_free (inst);
}

static void
test_softmax (void)
{
  for (int logp = 0; logp < 2; logp++)
    {
      check_softmax (logp, SH (5, 7), -1, -3, 3);
      check_softmax (logp, SH (5, 7), 0, -3, 3);
      check_softmax (logp, SH (1), 0, -3, 3);
      check_softmax (logp, SH (13), -1, -3, 3);
      for (int axis = -3; axis < 3; axis++)
        check_softmax (logp, SH (3, 4, 5), axis, -3, 3);
      /* more than one column block along the inner dimensions */
      check_softmax (logp, SH (2, 3, 70, 3), 1, -3, 3);
      check_softmax (logp, SH (2, 9, 131), -2, -3, 3);
      /* large: parallel path */
      check_softmax (logp, SH (512, 10), -1, -5, 5);
      check_softmax (logp, SH (8, 10, 24, 24), 1, -5, 5);
      /* large logits: naive exp overflows; the max shift keeps it exact */
      check_softmax (logp, SH (4, 9), -1, 1000, 1010);
      check_softmax (logp, SH (4, 9, 3), 1, -1010, -1000);
    }
  expect_error ("Softmax", P ("axis", "3"), 1, (NlShape[]) { SH (2, 3, 4) }, NL_OP_ERROR_SHAPE,
                "axis 3", "(2, 3, 4)", NULL);
  expect_error ("LogSoftmax", P ("axis", "-4"), 1, (NlShape[]) { SH (2, 3, 4) }, NL_OP_ERROR_SHAPE,
                "axis -4", "(2, 3, 4)", NULL);
  expect_error ("Softmax", P ("axis", "0"), 1, (NlShape[]) { { .ndim = 0 } }, NL_OP_ERROR_SHAPE, "axis 0", NULL);
}

static void
test_softmax_sums_to_one (void)
{
  /* an independent property: rows of softmax sum to 1, exp(log_softmax) too */
  NlShape shape = SH (6, 11, 4);
  NlOpInstance *a = make ("Softmax", P ("axis", "1"), 1, &shape, TRUE);
  NlOpInstance *b = make ("LogSoftmax", P ("axis", "1"), 1, &shape, TRUE);
  nl_test_fill_uniform (a->in[0], -20, 20, 8);
  nl_test_fill_uniform (b->in[0], -20, 20, 8);
  run_fwd (a);
  run_fwd (b);
  for (int o = 0; o < 6; o++)
    for (int k = 0; k < 4; k++)
      {
        double sa = 0, sb = 0;
        for (int j = 0; j < 11; j++)
          {
            sa += nl_tensor_f32 (a->out[0])[(o * 11 + j) * 4 + k];
            sb += exp (nl_tensor_f32 (b->out[0])[(o * 11 + j) * 4 + k]);
          }
        g_assert_cmpfloat_with_epsilon (sa, 1.0, 1e-5);
        g_assert_cmpfloat_with_epsilon (sb, 1.0, 1e-5);
      }
  nl_op_instance_free (a);
  nl_op_instance_free (b);
}

/* ---- Embedding ---- */

static void
check_embedding (NlShape idx_shape, int vocab, int dim)
{
  char vt[16], dt[16];
  NlOpInstance *inst;
  NlShape out_shape = idx_shape;
  int64_t n = nl_shape_numel (&idx_shape);
  float *ref = fbuf (n * dim), *dw = fbuf ((int64_t) vocab * dim);
  GRand *r = g_rand_new_with_seed (17);
  float *ip;
  const float *w, *dy;

  g_snprintf (vt, sizeof vt, "%d", vocab);
  g_snprintf (dt, sizeof dt, "%d", dim);
  inst = make ("Embedding", P ("input_dim", vt, "output_dim", dt), 1, &idx_shape, TRUE);
  out_shape.d[out_shape.ndim++] = dim;
  assert_shape (inst->out[0], out_shape);
  assert_shape (inst->in[1], SH (vocab, dim));
  g_assert_null (inst->in_grad[0]);
  g_assert_nonnull (inst->in_grad[1]);

  ip = nl_tensor_f32 (inst->in[0]);
  for (int64_t i = 0; i < n; i++) /* a small range, so indices repeat */
    ip[i] = (float) g_rand_int_range (r, 0, MIN (vocab, 4) + (i % 3 == 0 ? vocab - MIN (vocab, 4) : 0));
  ip[0] = (float) (vocab - 1);
  nl_test_fill_uniform (inst->in[1], -1, 1, 18);
  nl_test_fill_uniform (inst->out_grad[0], -1, 1, 19);
  nl_tensor_fill (inst->in_grad[1], 42.0f);
  w = nl_tensor_f32 (inst->in[1]);
  dy = nl_tensor_f32 (inst->out_grad[0]);
  for (int64_t i = 0; i < n; i++)
    for (int k = 0; k < dim; k++)
      {
        int row = (int) ip[i];
        ref[i * dim + k] = w[row * dim + k];
        dw[row * dim + k] += dy[i * dim + k];
      }
  run_fwd (inst);
  run_bwd (inst);
  nl_test_assert_close (nl_tensor_f32 (inst->out[0]), ref, n * dim, 0, 0);
  nl_test_assert_close (nl_tensor_f32 (inst->in_grad[1]), dw, (int64_t) vocab * dim, 1e-6, 1e-6);
  g_rand_free (r);
  g_free (ref);
  g_free (dw);
  nl_op_instance_free (inst);
}

static void
expect_bad_index (float value, int64_t at, const char *frag1, const char *frag2)
{
  NlOpInstance *inst = make ("Embedding", P ("input_dim", "10", "output_dim", "5"), 1,
                             (NlShape[]) { SH (3, 4) }, TRUE);
  GError *error = NULL;

  for (int i = 0; i < 12; i++)
    nl_tensor_f32 (inst->in[0])[i] = (float) (i % 10);
  nl_tensor_f32 (inst->in[0])[at] = value;
  g_assert_false (nl_op_instance_forward (inst, &error));
  g_assert_error (error, NL_OP_ERROR, NL_OP_ERROR_RUNTIME);
  g_test_message ("Embedding: %s", error->message);
  if (!strstr (error->message, frag1) || !strstr (error->message, frag2))
    g_error ("message \"%s\" lacks \"%s\" or \"%s\"", error->message, frag1, frag2);
  g_error_free (error);
  nl_op_instance_free (inst);
}

static void
test_embedding (void)
{
  check_embedding (SH (3, 4), 10, 5);
  check_embedding (SH (7), 3, 1);
  check_embedding (SH (2, 3, 5), 50, 17);
  check_embedding (SH (64, 35), 1000, 64); /* parallel path */
  check_embedding (SH (1), 1, 3);

  expect_bad_index (10.0f, 6, "10", "(1, 2)");
  expect_bad_index (-1.0f, 11, "-1", "(2, 3)");
  expect_bad_index (1e9f, 0, "1000000000", "(0, 0)");
  expect_bad_index (2.5f, 5, "2.5", "(1, 1)");
  expect_bad_index (NAN, 3, "nan", "(0, 3)");
  expect_bad_index (10.0f, 6, "out of range", "[0, 10)");

  expect_error ("Embedding", P ("output_dim", "5"), 1, (NlShape[]) { SH (3) }, NL_OP_ERROR_PARAM, "input_dim", NULL);
  expect_error ("Embedding", P ("input_dim", "5"), 1, (NlShape[]) { SH (3) }, NL_OP_ERROR_PARAM, "output_dim", NULL);
  expect_error ("Embedding", P ("input_dim", "0", "output_dim", "5"), 1, (NlShape[]) { SH (3) },
                NL_OP_ERROR_PARAM, "input_dim", NULL);
  expect_error ("Embedding", P ("input_dim", "4", "output_dim", "5"), 1, (NlShape[]) { SH (1, 1, 1, 1, 1, 1) },
                NL_OP_ERROR_SHAPE, "(1, 1, 1, 1, 1, 1)", NULL);
}

/* ---- contract and shape errors common to the single-input ops ---- */

static void
test_single_input_errors (void)
{
  struct { const char *op; const char *const *params; } ops[] = {
    { "Dropout", NULL }, { "Activation", NULL }, { "LeakyReLU", NULL }, { "GELU", NULL },
    { "Softmax", NULL }, { "LogSoftmax", NULL }, { "Flatten", NULL },
    { "Reshape", P ("shape", "[0, -1]") }, { "Embedding", P ("input_dim", "4", "output_dim", "2") },
  };
  for (guint i = 0; i < G_N_ELEMENTS (ops); i++)
    expect_error (ops[i].op, ops[i].params, 2, (NlShape[]) { SH (2, 3), SH (2, 3) }, NL_OP_ERROR_SHAPE,
                  ops[i].op, "one input", NULL);
}

static void
test_contract (void)
{
  struct {
    const char *name, *category;
    NlBackwardNeeds needs;
    gboolean inplace, variadic, no_grad;
    int n_saved, n_weights;
  } want[] = {
    { "Dropout", "Core", NL_NEEDS_NOTHING, TRUE, FALSE, FALSE, 1, 0 },
    { "Activation", "Activation", NL_NEEDS_OUTPUTS, TRUE, FALSE, FALSE, 0, 0 },
    { "LeakyReLU", "Activation", NL_NEEDS_OUTPUTS, TRUE, FALSE, FALSE, 0, 0 },
    { "GELU", "Activation", NL_NEEDS_INPUTS, TRUE, FALSE, FALSE, 0, 0 },
    { "Flatten", "Structure", NL_NEEDS_NOTHING, TRUE, FALSE, FALSE, 0, 0 },
    { "Reshape", "Structure", NL_NEEDS_NOTHING, TRUE, FALSE, FALSE, 0, 0 },
    { "Concat", "Structure", NL_NEEDS_NOTHING, FALSE, TRUE, FALSE, 0, 0 },
    { "Add", "Structure", NL_NEEDS_NOTHING, TRUE, TRUE, FALSE, 0, 0 },
    { "Softmax", "Activation", NL_NEEDS_OUTPUTS, TRUE, FALSE, FALSE, 0, 0 },
    { "LogSoftmax", "Activation", NL_NEEDS_OUTPUTS, TRUE, FALSE, FALSE, 0, 0 },
    { "Embedding", "Core", NL_NEEDS_INPUTS, FALSE, FALSE, TRUE, 0, 1 },
  };
  for (guint i = 0; i < G_N_ELEMENTS (want); i++)
    {
      const NlOpDef *d = def_of (want[i].name);
      g_assert_cmpstr (d->category, ==, want[i].category);
      g_assert_cmpint (d->needs, ==, want[i].needs);
      g_assert_cmpint (d->inplace, ==, want[i].inplace);
      g_assert_cmpint (d->variadic, ==, want[i].variadic);
      g_assert_cmpint (d->no_grad_inputs, ==, want[i].no_grad);
      g_assert_cmpint (d->n_saved, ==, want[i].n_saved);
      g_assert_cmpint (d->n_weights, ==, want[i].n_weights);
      g_assert_cmpint (d->n_outputs, ==, 1);
      g_assert_true (!d->no_backward && nl_op_kernels (d, nl_backend_cpu ()).backward);
    }
  g_assert_cmpint (def_of ("Embedding")->weight_init[0], ==, NL_INIT_NORMAL);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/elementwise/contract", test_contract);
  g_test_add_func ("/elementwise/activation", test_activation);
  g_test_add_func ("/elementwise/relu-exact", test_relu_exact);
  g_test_add_func ("/elementwise/leaky-relu", test_leaky_relu);
  g_test_add_func ("/elementwise/gelu", test_gelu);
  g_test_add_func ("/elementwise/dropout/training", test_dropout_training);
  g_test_add_func ("/elementwise/dropout/determinism", test_dropout_determinism);
  g_test_add_func ("/elementwise/dropout/predict", test_dropout_predict);
  g_test_add_func ("/elementwise/flatten", test_flatten);
  g_test_add_func ("/elementwise/reshape", test_reshape);
  g_test_add_func ("/elementwise/concat", test_concat);
  g_test_add_func ("/elementwise/add", test_add);
  g_test_add_func ("/elementwise/softmax", test_softmax);
  g_test_add_func ("/elementwise/softmax-sums", test_softmax_sums_to_one);
  g_test_add_func ("/elementwise/embedding", test_embedding);
  g_test_add_func ("/elementwise/single-input-errors", test_single_input_errors);
  return g_test_run ();
}
