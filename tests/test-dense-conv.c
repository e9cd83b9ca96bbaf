/* test-dense-conv.c — Dense and Conv2D forward and backward against plain
 * reference loops (in double) written here, and their shape errors.
 *
 * Outputs and gradients are pre-filled with garbage before each run, so a
 * kernel that accumulates instead of writing, or skips an element, fails.
 * Finite-difference checks live in test-gradcheck.c. */
#include <math.h>
#include <string.h>

#include "nl-test-util.h"
#include "ops/nl-op-instance.h"
#include "ops/nl-op-registry.h"

#define ATOL 2e-4
#define RTOL 2e-4

#define P(...) ((const char *const[]) { __VA_ARGS__, NULL })

static const NlOpDef *
need_op (const char *name)
{
  const NlOpDef *def = nl_op_lookup (name);
  g_assert_nonnull (def);
  return def;
}

static NlOpInstance *
make (const char *op, const char *const *params, NlShape in)
{
  g_autoptr (GError) error = NULL;
  NlOpInstance *inst = nl_op_instance_new (need_op (op), params, 1, &in, TRUE, &error);
  g_assert_no_error (error);
  g_assert_nonnull (inst);
  nl_test_fill_uniform (inst->in[0], -1, 1, 11);
  nl_test_fill_uniform (inst->in[1], -1, 1, 12);
  if (inst->in[2])
    nl_test_fill_uniform (inst->in[2], -1, 1, 13);
  nl_test_fill_uniform (inst->out_grad[0], -1, 1, 14);
  return inst;
}

static void
garbage (NlTensor *t)
{
  if (t)
    nl_tensor_fill (t, 1e3f);
}

static void
run_forward_backward (NlOpInstance *inst)
{
  g_autoptr (GError) error = NULL;
  garbage (inst->out[0]);
  g_assert_true (nl_op_instance_forward (inst, &error));
  g_assert_no_error (error);
  for (int i = 0; i < inst->n_in; i++)
    garbage (inst->in_grad[i]);
  g_assert_true (nl_op_instance_backward (inst, &error));
  g_assert_no_error (error);
}

static void
drop_data_grad (NlOpInstance *inst)
{
  nl_tensor_unref (inst->in_grad[0]);
  inst->in_grad[0] = NULL;
}

static float *
to_float (const double *d, int64_t n)
{
  float *f = g_new (float, n);
  for (int64_t i = 0; i < n; i++)
    f[i] = (float) d[i];
  return f;
}

static void
check (const char *what, const NlTensor *got, const double *want, int64_t n)
{
  g_autofree float *w = to_float (want, n);
  g_assert_nonnull (got);
  g_assert_cmpint (nl_tensor_numel (got), ==, n);
  g_test_message ("checking %s (%" G_GINT64_FORMAT " values)", what, n);
  nl_test_assert_close (nl_tensor_f32 (got), w, n, ATOL, RTOL);
}

/* ---------------------------------------------------------------- Dense */

typedef struct {
  const char *what;
  const char *params[10];
  NlShape in;
  NlShape out;       /* expected output shape */
  gboolean no_dx;    /* first layer: in_grad[0] is NULL */
} DenseCase;

static void
dense_case (const DenseCase *dc)
{
  NlOpInstance *inst = make ("Dense", dc->params, dc->in);
  const float *x, *w, *b, *dy;
  int64_t units, k, rows;
  g_autofree double *y = NULL, *dx = NULL, *dw = NULL, *db = NULL;

  g_test_message ("Dense: %s", dc->what);
  {
    NlShape os = nl_tensor_get_shape (inst->out[0]);
    g_assert_true (nl_shape_equal (&os, &dc->out));
  }
  if (dc->no_dx)
    drop_data_grad (inst);
  run_forward_backward (inst);

  units = inst->in[1]->shape[0];
  k = inst->in[1]->shape[1];
  rows = nl_tensor_numel (inst->in[0]) / k;
  g_assert_cmpint (rows * k, ==, nl_tensor_numel (inst->in[0]));
  x = nl_tensor_f32 (inst->in[0]);
  w = nl_tensor_f32 (inst->in[1]);
  b = inst->in[2] ? nl_tensor_f32 (inst->in[2]) : NULL;
  dy = nl_tensor_f32 (inst->out_grad[0]);

  y = g_new0 (double, rows * units);
  dx = g_new0 (double, rows * k);
  dw = g_new0 (double, units * k);
  db = g_new0 (double, units);
  for (int64_t r = 0; r < rows; r++)
    for (int64_t u = 0; u < units; u++)
      {
        double s = b ? b[u] : 0.0;
        for (int64_t j = 0; j < k; j++)
          {
            s += (double) x[r * k + j] * w[u * k + j];
            dx[r * k + j] += (double) dy[r * units + u] * w[u * k + j];
            dw[u * k + j] += (double) dy[r * units + u] * x[r * k + j];
          }
        y[r * units + u] = s;
        db[u] += dy[r * units + u];
      }
  check ("y", inst->out[0], y, rows * units);
  check ("dW", inst->in_grad[1], dw, units * k);
  if (b)
    check ("db", inst->in_grad[2], db, units);
  else
    g_assert_null (inst->in_grad[2]);
  if (!dc->no_dx)
    check ("dx", inst->in_grad[0], dx, rows * k);
  nl_op_instance_free (inst);
}

static void
test_dense (void)
{
  const DenseCase cases[] = {
    { "2-D", { "units", "4", NULL }, nl_shape_of (2, 3L, 5L), nl_shape_of (2, 3L, 4L) },
    { "one unit, one row", { "units", "1", NULL }, nl_shape_of (2, 1L, 7L), nl_shape_of (2, 1L, 1L) },
    { "flatten 4-D odd sizes", { "units", "5", NULL }, nl_shape_of (4, 7L, 3L, 2L, 3L), nl_shape_of (2, 7L, 5L) },
    { "no bias", { "units", "3", "use_bias", "false", NULL }, nl_shape_of (2, 4L, 6L), nl_shape_of (2, 4L, 3L) },
    { "flatten false 3-D", { "units", "4", "flatten", "false", NULL }, nl_shape_of (3, 2L, 3L, 5L),
      nl_shape_of (3, 2L, 3L, 4L) },
    { "flatten false no bias", { "units", "2", "flatten", "false", "use_bias", "false", NULL },
      nl_shape_of (3, 3L, 2L, 3L), nl_shape_of (3, 3L, 2L, 2L) },
    { "in_units given", { "units", "6", "in_units", "12", NULL }, nl_shape_of (3, 5L, 3L, 4L),
      nl_shape_of (2, 5L, 6L) },
    { "larger, odd", { "units", "65", NULL }, nl_shape_of (2, 33L, 129L), nl_shape_of (2, 33L, 65L) },
    { "first layer (no dx)", { "units", "17", NULL }, nl_shape_of (4, 9L, 1L, 5L, 5L), nl_shape_of (2, 9L, 17L),
      TRUE },
    { "MLP fc1 shape", { "units", "256", NULL }, nl_shape_of (2, 128L, 784L), nl_shape_of (2, 128L, 256L) },
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    dense_case (&cases[i]);
}

/* Parameters and shapes from infer: weight (units, in_units), bias absent
 * without use_bias. */
static void
test_dense_shapes (void)
{
  g_autoptr (GError) error = NULL;
  NlShape in = nl_shape_of (3, 4L, 2L, 5L);
  NlOpInstance *inst = nl_op_instance_new (need_op ("Dense"), P ("units", "7", "use_bias", "false"), 1, &in,
                                           TRUE, &error);
  NlShape ws, want = nl_shape_of (2, 7L, 10L);
  g_assert_no_error (error);
  ws = nl_tensor_get_shape (inst->in[1]);
  g_assert_true (nl_shape_equal (&ws, &want));
  g_assert_null (inst->in[2]);
  g_assert_cmpint (inst->def->n_weights, ==, 2);
  g_assert_cmpstr (inst->def->weights[0], ==, "weight");
  g_assert_cmpstr (inst->def->weights[1], ==, "bias");
  g_assert_cmpint (inst->def->weight_init[0], ==, NL_INIT_XAVIER);
  g_assert_cmpint (inst->def->weight_init[1], ==, NL_INIT_ZEROS);
  g_assert_cmpstr (inst->def->category, ==, "Core");
  nl_op_instance_free (inst);
}

/* --------------------------------------------------------------- Conv2D */

typedef struct {
  const char *what;
  const char *params[20];
  NlShape in;
  NlShape out;
  gboolean no_dx;
} ConvCase;

typedef struct {
  int64_t n, c, h, w, o, oh, ow, kh, kw, sh, sw, ph, pw, dh, dw, g;
} RefGeom;

static int64_t
param_v (const NlOpInstance *inst, const char *name, int j)
{
  int k = nl_op_param_index (inst->def, name);
  g_assert_cmpint (k, >=, 0);
  return inst->def->params[k].type == NL_PARAM_INT2 ? inst->p[k].v[j] : inst->p[k].i;
}

static void
conv_case (const ConvCase *cc)
{
  NlOpInstance *inst = make ("Conv2D", cc->params, cc->in);
  RefGeom g;
  const float *x, *w, *b, *dy;
  g_autofree double *y = NULL, *dx = NULL, *dw = NULL, *db = NULL;
  int64_t cg, og;

  g_test_message ("Conv2D: %s", cc->what);
  {
    NlShape os = nl_tensor_get_shape (inst->out[0]);
    char a[96], e[96];
    if (!nl_shape_equal (&os, &cc->out))
      g_error ("%s: output %s, expected %s", cc->what, nl_shape_format (&os, a, sizeof a),
               nl_shape_format (&cc->out, e, sizeof e));
  }
  if (cc->no_dx)
    drop_data_grad (inst);
  run_forward_backward (inst);

  g = (RefGeom) { cc->in.d[0], cc->in.d[1], cc->in.d[2], cc->in.d[3], cc->out.d[1], cc->out.d[2], cc->out.d[3],
                  param_v (inst, "kernel", 0), param_v (inst, "kernel", 1),
                  param_v (inst, "stride", 0), param_v (inst, "stride", 1),
                  param_v (inst, "padding", 0), param_v (inst, "padding", 1),
                  param_v (inst, "dilation", 0), param_v (inst, "dilation", 1),
                  param_v (inst, "groups", 0) };
  cg = g.c / g.g;
  og = g.o / g.g;
  {
    NlShape ws = nl_tensor_get_shape (inst->in[1]), want = nl_shape_of (4, g.o, cg, g.kh, g.kw);
    g_assert_true (nl_shape_equal (&ws, &want));
  }
  x = nl_tensor_f32 (inst->in[0]);
  w = nl_tensor_f32 (inst->in[1]);
  b = inst->in[2] ? nl_tensor_f32 (inst->in[2]) : NULL;
  dy = nl_tensor_f32 (inst->out_grad[0]);
  y = g_new0 (double, g.n * g.o * g.oh * g.ow);
  dx = g_new0 (double, g.n * g.c * g.h * g.w);
  dw = g_new0 (double, g.o * cg * g.kh * g.kw);
  db = g_new0 (double, g.o);

  for (int64_t n = 0; n < g.n; n++)
    for (int64_t o = 0; o < g.o; o++)
      for (int64_t oy = 0; oy < g.oh; oy++)
        for (int64_t ox = 0; ox < g.ow; ox++)
          {
            int64_t yi = ((n * g.o + o) * g.oh + oy) * g.ow + ox;
            double s = b ? b[o] : 0.0, gy = dy[yi];
            for (int64_t ci = 0; ci < cg; ci++)
              for (int64_t i = 0; i < g.kh; i++)
                for (int64_t j = 0; j < g.kw; j++)
                  {
                    int64_t iy = oy * g.sh - g.ph + i * g.dh, ix = ox * g.sw - g.pw + j * g.dw;
                    int64_t c = (o / og) * cg + ci;
                    int64_t wi = ((o * cg + ci) * g.kh + i) * g.kw + j, xi;
                    if (iy < 0 || iy >= g.h || ix < 0 || ix >= g.w)
                      continue;
                    xi = ((n * g.c + c) * g.h + iy) * g.w + ix;
                    s += (double) x[xi] * w[wi];
                    dx[xi] += gy * w[wi];
                    dw[wi] += gy * x[xi];
                  }
            y[yi] = s;
            db[o] += gy;
          }
  check ("y", inst->out[0], y, g.n * g.o * g.oh * g.ow);
  check ("dW", inst->in_grad[1], dw, g.o * cg * g.kh * g.kw);
  if (b)
    check ("db", inst->in_grad[2], db, g.o);
  else
    g_assert_null (inst->in[2]);
  if (!cc->no_dx)
    check ("dx", inst->in_grad[0], dx, g.n * g.c * g.h * g.w);

  /* A second step on new data: cached scratch must not leak old values. */
  nl_test_fill_uniform (inst->in[0], -2, 2, 21);
  nl_test_fill_uniform (inst->out_grad[0], -2, 2, 22);
  run_forward_backward (inst);
  {
    g_autofree double *y2 = g_new0 (double, g.n * g.o * g.oh * g.ow);
    for (int64_t n = 0; n < g.n; n++)
      for (int64_t o = 0; o < g.o; o++)
        for (int64_t oy = 0; oy < g.oh; oy++)
          for (int64_t ox = 0; ox < g.ow; ox++)
            {
              double s = b ? b[o] : 0.0;
              for (int64_t ci = 0; ci < cg; ci++)
                for (int64_t i = 0; i < g.kh; i++)
                  for (int64_t j = 0; j < g.kw; j++)
                    {
                      int64_t iy = oy * g.sh - g.ph + i * g.dh, ix = ox * g.sw - g.pw + j * g.dw;
                      int64_t c = (o / og) * cg + ci;
                      if (iy >= 0 && iy < g.h && ix >= 0 && ix < g.w)
                        s += (double) x[((n * g.c + c) * g.h + iy) * g.w + ix]
                             * w[((o * cg + ci) * g.kh + i) * g.kw + j];
                    }
              y2[((n * g.o + o) * g.oh + oy) * g.ow + ox] = s;
            }
    check ("y, second step", inst->out[0], y2, g.n * g.o * g.oh * g.ow);
  }
  nl_op_instance_free (inst);
}

static void
test_conv (void)
{
  const ConvCase cases[] = {
    { "3x3", { "channels", "4", "kernel", "3", NULL }, nl_shape_of (4, 2L, 3L, 6L, 6L),
      nl_shape_of (4, 2L, 4L, 4L, 4L) },
    { "stride 2, pad 1, odd sizes", { "channels", "3", "kernel", "3", "stride", "2", "padding", "1", NULL },
      nl_shape_of (4, 3L, 2L, 7L, 5L), nl_shape_of (4, 3L, 3L, 4L, 3L) },
    { "5x5 pad 2", { "channels", "2", "kernel", "5", "padding", "2", NULL }, nl_shape_of (4, 2L, 2L, 5L, 6L),
      nl_shape_of (4, 2L, 2L, 5L, 6L) },
    { "dilation 2", { "channels", "3", "kernel", "3", "dilation", "2", "padding", "2", NULL },
      nl_shape_of (4, 1L, 2L, 9L, 8L), nl_shape_of (4, 1L, 3L, 9L, 8L) },
    { "dilation 2 stride 2 no pad", { "channels", "2", "kernel", "3", "dilation", "2", "stride", "2", NULL },
      nl_shape_of (4, 2L, 3L, 9L, 10L), nl_shape_of (4, 2L, 2L, 3L, 3L) },
    { "groups 2", { "channels", "6", "kernel", "3", "groups", "2", "padding", "1", NULL },
      nl_shape_of (4, 2L, 4L, 5L, 5L), nl_shape_of (4, 2L, 6L, 5L, 5L) },
    { "depthwise", { "channels", "3", "kernel", "3", "groups", "3", "padding", "1", NULL },
      nl_shape_of (4, 1L, 3L, 6L, 6L), nl_shape_of (4, 1L, 3L, 6L, 6L) },
    { "no bias", { "channels", "2", "kernel", "3", "use_bias", "false", NULL }, nl_shape_of (4, 2L, 2L, 5L, 5L),
      nl_shape_of (4, 2L, 2L, 3L, 3L) },
    { "kernel 3x2, stride 1x2, pad 1x0", { "channels", "3", "kernel", "3,2", "stride", "1,2", "padding", "1,0", NULL },
      nl_shape_of (4, 2L, 2L, 6L, 7L), nl_shape_of (4, 2L, 3L, 6L, 3L) },
    { "padding wider than the kernel", { "channels", "2", "kernel", "2", "padding", "3", "stride", "3", NULL },
      nl_shape_of (4, 2L, 1L, 4L, 5L), nl_shape_of (4, 2L, 2L, 3L, 4L) },
    { "1x1 (no im2col)", { "channels", "4", "kernel", "1", NULL }, nl_shape_of (4, 3L, 5L, 4L, 3L),
      nl_shape_of (4, 3L, 4L, 4L, 3L) },
    { "1x1 groups 2 no bias", { "channels", "4", "kernel", "1", "groups", "2", "use_bias", "false", NULL },
      nl_shape_of (4, 2L, 6L, 3L, 3L), nl_shape_of (4, 2L, 4L, 3L, 3L) },
    { "1x1 stride 2 odd", { "channels", "2", "kernel", "1", "stride", "2", NULL }, nl_shape_of (4, 3L, 5L, 7L, 7L),
      nl_shape_of (4, 3L, 2L, 4L, 4L) },
    { "1x3 dilation 2x1 groups 2", { "channels", "4", "kernel", "1,3", "dilation", "2,1", "groups", "2", NULL },
      nl_shape_of (4, 1L, 2L, 5L, 7L), nl_shape_of (4, 1L, 4L, 5L, 5L) },
    { "kernel fills the padded input", { "channels", "2", "kernel", "6", "padding", "1", NULL },
      nl_shape_of (4, 2L, 2L, 4L, 4L), nl_shape_of (4, 2L, 2L, 1L, 1L) },
    { "first layer, 5 images (no dx)", { "channels", "5", "kernel", "5", NULL }, nl_shape_of (4, 5L, 1L, 12L, 11L),
      nl_shape_of (4, 5L, 5L, 8L, 7L), TRUE },
    { "in_channels given", { "channels", "3", "kernel", "2", "in_channels", "2", NULL },
      nl_shape_of (4, 3L, 2L, 4L, 4L), nl_shape_of (4, 3L, 3L, 3L, 3L) },
    { "LeNet conv2 shape", { "channels", "50", "kernel", "5", NULL }, nl_shape_of (4, 4L, 20L, 12L, 12L),
      nl_shape_of (4, 4L, 50L, 8L, 8L) },
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    conv_case (&cases[i]);
}

/* The same convolution with one thread and with two gives the same result
 * (one image per thread vs. threaded sgemm, and the partial-sum reduction). */
static void
test_conv_threads (void)
{
  NlShape in = nl_shape_of (4, 3L, 4L, 7L, 7L);
  const char *const *p = P ("channels", "6", "kernel", "3", "padding", "1");
  NlOpInstance *a, *b;
  int saved = nl_threads_get ();

  nl_threads_set (1);
  a = make ("Conv2D", p, in);
  run_forward_backward (a);
  nl_threads_set (2);
  b = make ("Conv2D", p, in);
  run_forward_backward (b);
  nl_threads_set (saved);
  for (int i = 0; i < 3; i++)
    nl_test_assert_close (nl_tensor_f32 (b->in_grad[i]), nl_tensor_f32 (a->in_grad[i]),
                          nl_tensor_numel (a->in_grad[i]), 1e-5, 1e-5);
  nl_test_assert_close (nl_tensor_f32 (b->out[0]), nl_tensor_f32 (a->out[0]), nl_tensor_numel (a->out[0]), 1e-5,
                        1e-5);
  nl_op_instance_free (a);
  nl_op_instance_free (b);
}

/* Called from inside another parallel region, the op gets a team of one
 * although it asks for more; its per-thread partial sums must still add up
 * to the same gradients. */
static void
test_conv_nested (void)
{
  NlShape in = nl_shape_of (4, 4L, 3L, 6L, 6L);
  const char *const *p = P ("channels", "5", "kernel", "3");
  NlOpInstance *a = make ("Conv2D", p, in), *b = make ("Conv2D", p, in);
  int saved = nl_threads_get ();

  nl_threads_set (2);
  run_forward_backward (a);
  garbage (b->out[0]);
  for (int i = 0; i < b->n_in; i++)
    garbage (b->in_grad[i]);
#pragma omp parallel num_threads (2)
  {
#pragma omp single
    {
      g_assert_true (nl_op_instance_forward (b, NULL));
      g_assert_true (nl_op_instance_backward (b, NULL));
    }
  }
  nl_threads_set (saved);
  for (int i = 0; i < 3; i++)
    nl_test_assert_close (nl_tensor_f32 (b->in_grad[i]), nl_tensor_f32 (a->in_grad[i]),
                          nl_tensor_numel (a->in_grad[i]), 1e-5, 1e-5);
  nl_test_assert_close (nl_tensor_f32 (b->out[0]), nl_tensor_f32 (a->out[0]), nl_tensor_numel (a->out[0]), 1e-5,
                        1e-5);
  nl_op_instance_free (a);
  nl_op_instance_free (b);
}

/* --------------------------------------------------------------- errors */

static void
expect_error (const char *op, const char *const *params, NlShape in, NlOpErrorCode code, const char *const *words)
{
  g_autoptr (GError) error = NULL;
  NlOpInstance *inst = nl_op_instance_new (need_op (op), params, 1, &in, TRUE, &error);
  g_assert_null (inst);
  g_assert_error (error, NL_OP_ERROR, (int) code);
  g_test_message ("%s: %s", op, error->message);
  for (int i = 0; words && words[i]; i++)
    if (!strstr (error->message, words[i]))
      g_error ("error message '%s' does not mention '%s'", error->message, words[i]);
}

static void
test_errors (void)
{
  /* Dense */
  expect_error ("Dense", P ("units", "10", "in_units", "100"), nl_shape_of (4, 8L, 1L, 28L, 28L),
                NL_OP_ERROR_SHAPE, P ("784", "100", "in_units"));
  expect_error ("Dense", P ("units", "10", "in_units", "6", "flatten", "false"), nl_shape_of (3, 2L, 3L, 5L),
                NL_OP_ERROR_SHAPE, P ("5", "6"));
  expect_error ("Dense", P ("units", "10"), nl_shape_of (0), NL_OP_ERROR_SHAPE, NULL);
  expect_error ("Dense", NULL, nl_shape_of (2, 2L, 3L), NL_OP_ERROR_PARAM, P ("units"));
  expect_error ("Dense", P ("units", "0"), nl_shape_of (2, 2L, 3L), NL_OP_ERROR_PARAM, P ("units"));
  /* Conv2D */
  expect_error ("Conv2D", P ("channels", "4", "kernel", "3"), nl_shape_of (3, 2L, 6L, 6L), NL_OP_ERROR_SHAPE,
                P ("4-D"));
  expect_error ("Conv2D", P ("channels", "4", "kernel", "3"), nl_shape_of (2, 2L, 6L), NL_OP_ERROR_SHAPE, NULL);
  expect_error ("Conv2D", P ("channels", "4", "kernel", "3", "groups", "2"), nl_shape_of (4, 1L, 3L, 6L, 6L),
                NL_OP_ERROR_SHAPE, P ("3", "2 groups"));
  expect_error ("Conv2D", P ("channels", "3", "kernel", "3", "groups", "2"), nl_shape_of (4, 1L, 4L, 6L, 6L),
                NL_OP_ERROR_PARAM, P ("channels 3", "2 groups"));
  expect_error ("Conv2D", P ("channels", "4", "kernel", "5"), nl_shape_of (4, 1L, 3L, 4L, 8L), NL_OP_ERROR_SHAPE,
                P ("height", "5", "4"));
  expect_error ("Conv2D", P ("channels", "4", "kernel", "3,7", "padding", "1"), nl_shape_of (4, 1L, 3L, 8L, 4L),
                NL_OP_ERROR_SHAPE, P ("width", "7", "4"));
  expect_error ("Conv2D", P ("channels", "4", "kernel", "3", "dilation", "3"), nl_shape_of (4, 1L, 3L, 6L, 6L),
                NL_OP_ERROR_SHAPE, P ("dilation 3"));
  expect_error ("Conv2D", P ("channels", "4", "kernel", "3", "in_channels", "5"), nl_shape_of (4, 1L, 3L, 6L, 6L),
                NL_OP_ERROR_SHAPE, P ("in_channels", "5", "3"));
  expect_error ("Conv2D", P ("channels", "4"), nl_shape_of (4, 1L, 3L, 6L, 6L), NL_OP_ERROR_PARAM, P ("kernel"));
  expect_error ("Conv2D", P ("channels", "4", "kernel", "3", "stride", "0"), nl_shape_of (4, 1L, 3L, 6L, 6L),
                NL_OP_ERROR_PARAM, P ("stride"));
  expect_error ("Conv2D", P ("channels", "4", "kernel", "3", "padding", "-1"), nl_shape_of (4, 1L, 3L, 6L, 6L),
                NL_OP_ERROR_PARAM, P ("padding"));
  expect_error ("Conv2D", P ("channels", "4", "kernel", "3", "groups", "0"), nl_shape_of (4, 1L, 3L, 6L, 6L),
                NL_OP_ERROR_PARAM, P ("groups"));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/dense/forward-backward", test_dense);
  g_test_add_func ("/dense/shapes", test_dense_shapes);
  g_test_add_func ("/conv2d/forward-backward", test_conv);
  g_test_add_func ("/conv2d/threads", test_conv_threads);
  g_test_add_func ("/conv2d/nested", test_conv_nested);
  g_test_add_func ("/dense-conv/errors", test_errors);
  return g_test_run ();
}
