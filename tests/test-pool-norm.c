/* test-pool-norm.c — MaxPool2D, AvgPool2D, GlobalAvgPool2D, BatchNorm and
 * LayerNorm against plain reference loops written here, plus their shape
 * and parameter errors. */
#include <math.h>
#include <string.h>

#include "nl-test-util.h"
#include "ops/nl-op-instance.h"
#include "ops/nl-op-registry.h"

/* ---- helpers ---- */

static const NlOpDef *
op (const char *name)
{
  const NlOpDef *def = nl_op_lookup (name);
  g_assert_nonnull (def);
  return def;
}

static NlOpInstance *
make (const char *name, const char *const *params, NlShape shape, gboolean training)
{
  GError *error = NULL;
  NlOpInstance *inst = nl_op_instance_new (op (name), params, 1, &shape, training, &error);
  g_assert_no_error (error);
  g_assert_nonnull (inst);
  return inst;
}

static void
run_forward (NlOpInstance *inst)
{
  GError *error = NULL;
  g_assert_true (nl_op_instance_forward (inst, &error));
  g_assert_no_error (error);
}

static void
run_backward (NlOpInstance *inst)
{
  GError *error = NULL;
  g_assert_true (nl_op_instance_backward (inst, &error));
  g_assert_no_error (error);
}

/* Backward with the tensors the op says it does not need (def->needs)
 * hidden, as a planner that freed them early would leave it. */
static void
run_backward_lean (NlOpInstance *inst)
{
  NlBackwardNeeds needs = inst->def->needs;
  NlTensor *x = inst->in[0], *y = inst->out[0];
  if (!(needs & NL_NEEDS_INPUTS))
    inst->in[0] = NULL;
  if (!(needs & NL_NEEDS_OUTPUTS))
    inst->out[0] = NULL;
  run_backward (inst);
  inst->in[0] = x;
  inst->out[0] = y;
}

/* The op must refuse these inputs with the given error code, and say `needle`. */
static void
expect_error (const char *name, const char *const *params, NlShape shape, int code, const char *needle)
{
  GError *error = NULL;
  NlOpInstance *inst = nl_op_instance_new (op (name), params, 1, &shape, TRUE, &error);
  g_assert_null (inst);
  g_assert_error (error, NL_OP_ERROR, code);
  if (needle && !strstr (error->message, needle))
    g_error ("%s: message '%s' does not mention '%s'", name, error->message, needle);
  g_test_message ("%s: %s", name, error->message);
  g_error_free (error);
}

/* Values from {0, 1, 2}: many ties, to check which max wins. */
static void
fill_ties (NlTensor *t, guint64 seed)
{
  nl_test_fill_uniform (t, 0, 3, seed);
  float *p = nl_tensor_f32 (t);
  for (int64_t i = 0; i < nl_tensor_numel (t); i++)
    p[i] = floorf (p[i]);
}

static NlShape
shape4 (int64_t n, int64_t c, int64_t h, int64_t w)
{
  return nl_shape_of (4, n, c, h, w);
}

/* ---- pooling references ---- */

typedef struct {
  int64_t n, c, h, w;
  int kh, kw, sh, sw, ph, pw; /* sh/sw 0: the pool size */
  gboolean ceil_mode;
} PoolCase;

/* Windows along one axis, counted one by one: a window is kept when it
 * fits in the padded input (floor), or in ceil mode when it covers at least
 * part of the padded input and starts inside the input or left padding. */
static int64_t
ref_out_size (int64_t in, int k, int s, int p, gboolean ceil_mode)
{
  int64_t n = 0;
  for (int64_t i = 0;; i++)
    {
      int64_t start = i * s - p;
      gboolean keep = ceil_mode ? (start + p < in + 2 * p - k + s && start < in) : (start + k <= in + p);
      if (!keep)
        break;
      n++;
    }
  return n;
}

static void
pool_params (const PoolCase *pc, char bufs[4][32], const char **params, const char *extra_name,
             const char *extra_value)
{
  int i = 0;
  g_snprintf (bufs[0], 32, "%d,%d", pc->kh, pc->kw);
  g_snprintf (bufs[1], 32, "%d,%d", pc->sh, pc->sw);
  g_snprintf (bufs[2], 32, "%d,%d", pc->ph, pc->pw);
  params[i++] = "pool_size";
  params[i++] = bufs[0];
  params[i++] = "strides";
  params[i++] = bufs[1];
  params[i++] = "padding";
  params[i++] = bufs[2];
  params[i++] = "ceil_mode";
  params[i++] = pc->ceil_mode ? "true" : "false";
  if (extra_name)
    {
      params[i++] = extra_name;
      params[i++] = extra_value;
    }
  params[i] = NULL;
}

static const PoolCase pool_cases[] = {
  { 2, 3, 8, 8, 2, 2, 0, 0, 0, 0, FALSE },     /* LeNet-like 2x2/2, 4 windows a row */
  { 2, 3, 24, 24, 2, 2, 2, 2, 0, 0, FALSE },   /* 12 windows a row: 8-wide + 4-wide */
  { 2, 2, 29, 30, 2, 2, 2, 2, 0, 0, FALSE },   /* 15 a row: 8 + 4 + tail of 3, odd H */
  { 1, 2, 7, 9, 2, 2, 0, 0, 0, 0, FALSE },     /* odd sizes: last row and column unused */
  { 1, 2, 5, 5, 2, 2, 2, 2, 0, 0, TRUE },      /* ceil_mode: partial last window */
  { 1, 3, 7, 7, 3, 3, 2, 2, 1, 1, FALSE },     /* overlapping windows with padding */
  { 2, 2, 6, 7, 3, 2, 1, 2, 1, 1, FALSE },     /* stride != pool size, unequal h/w */
  { 2, 2, 7, 8, 3, 3, 2, 2, 1, 1, TRUE },      /* ceil_mode with padding */
  { 1, 2, 4, 4, 2, 2, 3, 3, 1, 1, TRUE },      /* ceil_mode drops a window starting in right padding */
  { 1, 1, 3, 5, 3, 5, 1, 1, 0, 0, FALSE },     /* one window covering everything */
  { 1, 2, 9, 6, 4, 3, 3, 2, 2, 1, TRUE },      /* even kernel with padding k/2 */
  { 8, 16, 24, 24, 2, 2, 2, 2, 0, 0, FALSE },  /* big enough to run threaded */
  { 4, 8, 20, 20, 3, 3, 2, 2, 1, 1, FALSE },   /* threaded generic path */
};

/* Plain max pooling: padding is -inf, the first strict maximum in
 * row-major scan order wins, and backward sends dy to it. */
static void
ref_max_pool (const PoolCase *pc, int64_t oh_n, int64_t ow_n, const float *x, const float *dy,
              float *y, float *dx)
{
  int sh = pc->sh ? pc->sh : pc->kh, sw = pc->sw ? pc->sw : pc->kw;
  memset (dx, 0, pc->n * pc->c * pc->h * pc->w * sizeof (float));
  for (int64_t p = 0; p < pc->n * pc->c; p++)
    for (int64_t oh = 0; oh < oh_n; oh++)
      for (int64_t ow = 0; ow < ow_n; ow++)
        {
          float best = -INFINITY;
          int64_t at = -1;
          for (int i = 0; i < pc->kh; i++)
            for (int j = 0; j < pc->kw; j++)
              {
                int64_t h = oh * sh - pc->ph + i, w = ow * sw - pc->pw + j;
                if (h < 0 || h >= pc->h || w < 0 || w >= pc->w)
                  continue;
                float v = x[(p * pc->h + h) * pc->w + w];
                if (at < 0 || v > best)
                  {
                    best = v;
                    at = (p * pc->h + h) * pc->w + w;
                  }
              }
          g_assert_cmpint (at, >=, 0);
          y[(p * oh_n + oh) * ow_n + ow] = best;
          dx[at] += dy[(p * oh_n + oh) * ow_n + ow];
        }
}

static void
check_max_case (const PoolCase *pc, gboolean ties)
{
  char bufs[4][32];
  const char *params[16];
  NlShape s = shape4 (pc->n, pc->c, pc->h, pc->w);
  pool_params (pc, bufs, params, NULL, NULL);
  NlOpInstance *inst = make ("MaxPool2D", params, s, TRUE);
  int64_t oh = ref_out_size (pc->h, pc->kh, pc->sh ? pc->sh : pc->kh, pc->ph, pc->ceil_mode);
  int64_t ow = ref_out_size (pc->w, pc->kw, pc->sw ? pc->sw : pc->kw, pc->pw, pc->ceil_mode);

  g_assert_cmpint (inst->out[0]->ndim, ==, 4);
  g_assert_cmpint (inst->out[0]->shape[0], ==, pc->n);
  g_assert_cmpint (inst->out[0]->shape[1], ==, pc->c);
  g_assert_cmpint (inst->out[0]->shape[2], ==, oh);
  g_assert_cmpint (inst->out[0]->shape[3], ==, ow);

  if (ties)
    fill_ties (inst->in[0], 11);
  else
    nl_test_fill_uniform (inst->in[0], -2, 2, 11);
  nl_test_fill_uniform (inst->out_grad[0], -1, 1, 12);
  /* stale garbage in dx must be overwritten, not added to */
  nl_tensor_fill (inst->in_grad[0], 123.0f);
  run_forward (inst);
  run_backward_lean (inst);

  int64_t nx = nl_tensor_numel (inst->in[0]), ny = nl_tensor_numel (inst->out[0]);
  float *y = g_new (float, ny), *dx = g_new (float, nx);
  ref_max_pool (pc, oh, ow, nl_tensor_f32 (inst->in[0]), nl_tensor_f32 (inst->out_grad[0]), y, dx);
  nl_test_assert_close (nl_tensor_f32 (inst->out[0]), y, ny, 0, 0);
  nl_test_assert_close (nl_tensor_f32 (inst->in_grad[0]), dx, nx, 1e-6, 1e-6);
  g_free (y);
  g_free (dx);
  nl_op_instance_free (inst);
}

static void
test_max_pool (void)
{
  for (guint i = 0; i < G_N_ELEMENTS (pool_cases); i++)
    {
      check_max_case (&pool_cases[i], FALSE);
      check_max_case (&pool_cases[i], TRUE);
    }
}

/* Known output sizes, as PyTorch's max_pool2d gives them. */
static void
test_pool_out_size (void)
{
  static const struct { int h, k, s, p; gboolean ceil; int64_t want; } cases[] = {
    { 5, 2, 2, 0, TRUE, 3 }, { 5, 2, 2, 0, FALSE, 2 }, { 4, 2, 3, 1, TRUE, 2 },
    { 7, 3, 2, 1, TRUE, 4 }, { 6, 3, 2, 1, TRUE, 4 }, { 8, 2, 3, 1, FALSE, 3 },
    { 24, 2, 2, 0, FALSE, 12 },
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      char k[16], s[16], p[16];
      g_snprintf (k, sizeof k, "%d", cases[i].k);
      g_snprintf (s, sizeof s, "%d", cases[i].s);
      g_snprintf (p, sizeof p, "%d", cases[i].p);
      const char *params[] = { "pool_size", k, "strides", s, "padding", p,
                               "ceil_mode", cases[i].ceil ? "1" : "0", NULL };
      for (int avg = 0; avg < 2; avg++)
        {
          NlOpInstance *inst = make (avg ? "AvgPool2D" : "MaxPool2D", params,
                                     shape4 (1, 1, cases[i].h, cases[i].h), FALSE);
          g_assert_cmpint (inst->out[0]->shape[2], ==, cases[i].want);
          g_assert_cmpint (inst->out[0]->shape[3], ==, cases[i].want);
          g_assert_cmpint (ref_out_size (cases[i].h, cases[i].k, cases[i].s, cases[i].p, cases[i].ceil), ==,
                           cases[i].want);
          nl_op_instance_free (inst);
        }
    }
}

/* Predict mode: same output, no argmax kept. NaN propagates in both paths. */
static void
test_max_pool_predict_nan (void)
{
  const PoolCase fast = { 1, 1, 4, 20, 2, 2, 2, 2, 0, 0, FALSE };
  const PoolCase slow = { 1, 1, 5, 5, 3, 3, 1, 1, 1, 1, FALSE };
  const PoolCase *cases[] = { &fast, &slow };
  for (int k = 0; k < 2; k++)
    {
      const PoolCase *pc = cases[k];
      char bufs[4][32];
      const char *params[16];
      pool_params (pc, bufs, params, NULL, NULL);
      NlShape s = shape4 (pc->n, pc->c, pc->h, pc->w);
      NlOpInstance *train = make ("MaxPool2D", params, s, TRUE);
      NlOpInstance *pred = make ("MaxPool2D", params, s, FALSE);
      g_assert_nonnull (train->saved[0]);
      g_assert_null (pred->saved[0]);
      nl_test_fill_uniform (train->in[0], -1, 1, 5);
      nl_test_fill_uniform (pred->in[0], -1, 1, 5);
      run_forward (train);
      run_forward (pred);
      nl_test_assert_close (nl_tensor_f32 (pred->out[0]), nl_tensor_f32 (train->out[0]),
                            nl_tensor_numel (pred->out[0]), 0, 0);

      /* a NaN at (1, 1) poisons every window that covers it */
      nl_tensor_f32 (pred->in[0])[1 * pc->w + 1] = NAN;
      run_forward (pred);
      const float *y = nl_tensor_f32 (pred->out[0]);
      int64_t oh_n = pred->out[0]->shape[2], ow_n = pred->out[0]->shape[3];
      int sh = pc->sh ? pc->sh : pc->kh, sw = pc->sw ? pc->sw : pc->kw;
      for (int64_t oh = 0; oh < oh_n; oh++)
        for (int64_t ow = 0; ow < ow_n; ow++)
          {
            int64_t h0 = oh * sh - pc->ph, w0 = ow * sw - pc->pw;
            gboolean covers = h0 <= 1 && 1 < h0 + pc->kh && w0 <= 1 && 1 < w0 + pc->kw;
            g_assert_cmpint (isnan (y[oh * ow_n + ow]), ==, covers);
          }
      nl_op_instance_free (train);
      nl_op_instance_free (pred);
    }
}

/* Average pooling: the divisor counts window cells inside the padded input
 * (count_include_pad) or inside the input only. */
static void
ref_avg_pool (const PoolCase *pc, gboolean include_pad, int64_t oh_n, int64_t ow_n, const float *x,
              const float *dy, float *y, float *dx)
{
  int sh = pc->sh ? pc->sh : pc->kh, sw = pc->sw ? pc->sw : pc->kw;
  memset (dx, 0, pc->n * pc->c * pc->h * pc->w * sizeof (float));
  for (int64_t p = 0; p < pc->n * pc->c; p++)
    for (int64_t oh = 0; oh < oh_n; oh++)
      for (int64_t ow = 0; ow < ow_n; ow++)
        {
          double sum = 0;
          int cells = 0;
          for (int pass = 0; pass < 2; pass++)
            for (int i = 0; i < pc->kh; i++)
              for (int j = 0; j < pc->kw; j++)
                {
                  int64_t h = oh * sh - pc->ph + i, w = ow * sw - pc->pw + j;
                  gboolean in_padded = h >= -pc->ph && h < pc->h + pc->ph && w >= -pc->pw && w < pc->w + pc->pw;
                  gboolean in_input = h >= 0 && h < pc->h && w >= 0 && w < pc->w;
                  if (pass == 0)
                    {
                      cells += include_pad ? in_padded : in_input;
                      if (in_input)
                        sum += x[(p * pc->h + h) * pc->w + w];
                    }
                  else if (in_input)
                    dx[(p * pc->h + h) * pc->w + w] += dy[(p * oh_n + oh) * ow_n + ow] / cells;
                }
          g_assert_cmpint (cells, >, 0);
          y[(p * oh_n + oh) * ow_n + ow] = (float) (sum / cells);
        }
}

static void
test_avg_pool (void)
{
  for (guint i = 0; i < G_N_ELEMENTS (pool_cases); i++)
    for (int include_pad = 0; include_pad < 2; include_pad++)
      {
        const PoolCase *pc = &pool_cases[i];
        char bufs[4][32];
        const char *params[16];
        pool_params (pc, bufs, params, "count_include_pad", include_pad ? "true" : "false");
        NlOpInstance *inst = make ("AvgPool2D", params, shape4 (pc->n, pc->c, pc->h, pc->w), TRUE);
        int64_t oh = ref_out_size (pc->h, pc->kh, pc->sh ? pc->sh : pc->kh, pc->ph, pc->ceil_mode);
        int64_t ow = ref_out_size (pc->w, pc->kw, pc->sw ? pc->sw : pc->kw, pc->pw, pc->ceil_mode);
        g_assert_cmpint (inst->out[0]->shape[2], ==, oh);
        g_assert_cmpint (inst->out[0]->shape[3], ==, ow);

        nl_test_fill_uniform (inst->in[0], -2, 2, 21 + i);
        nl_test_fill_uniform (inst->out_grad[0], -1, 1, 22 + i);
        nl_tensor_fill (inst->in_grad[0], 123.0f);
        run_forward (inst);
        run_backward_lean (inst);

        int64_t nx = nl_tensor_numel (inst->in[0]), ny = nl_tensor_numel (inst->out[0]);
        float *y = g_new (float, ny), *dx = g_new (float, nx);
        ref_avg_pool (pc, include_pad, oh, ow, nl_tensor_f32 (inst->in[0]), nl_tensor_f32 (inst->out_grad[0]), y, dx);
        nl_test_assert_close (nl_tensor_f32 (inst->out[0]), y, ny, 1e-6, 1e-5);
        nl_test_assert_close (nl_tensor_f32 (inst->in_grad[0]), dx, nx, 1e-6, 1e-5);
        g_free (y);
        g_free (dx);
        nl_op_instance_free (inst);
      }
}

/* count_include_pad on a hand-sized case: 3x3 window, padding 1, over a
 * 2x2 plane of ones: the corner window holds 4 ones among 9 cells. */
static void
test_avg_pool_pad_by_hand (void)
{
  const char *with[] = { "pool_size", "3", "strides", "1", "padding", "1", NULL };
  const char *without[] = { "pool_size", "3", "strides", "1", "padding", "1", "count_include_pad", "false", NULL };
  NlOpInstance *a = make ("AvgPool2D", with, shape4 (1, 1, 2, 2), FALSE);
  NlOpInstance *b = make ("AvgPool2D", without, shape4 (1, 1, 2, 2), FALSE);
  nl_tensor_fill (a->in[0], 1.0f);
  nl_tensor_fill (b->in[0], 1.0f);
  run_forward (a);
  run_forward (b);
  for (int i = 0; i < 4; i++)
    {
      g_assert_cmpfloat_with_epsilon (nl_tensor_f32 (a->out[0])[i], 4.0f / 9.0f, 1e-6);
      g_assert_cmpfloat_with_epsilon (nl_tensor_f32 (b->out[0])[i], 1.0f, 1e-6);
    }
  nl_op_instance_free (a);
  nl_op_instance_free (b);
}

static void
test_global_avg_pool (void)
{
  const int64_t shapes[][4] = { { 2, 3, 5, 7 }, { 1, 1, 1, 1 }, { 3, 4, 13, 13 }, { 16, 32, 8, 9 } };
  for (guint k = 0; k < G_N_ELEMENTS (shapes); k++)
    {
      const int64_t *d = shapes[k];
      NlOpInstance *inst = make ("GlobalAvgPool2D", NULL, shape4 (d[0], d[1], d[2], d[3]), TRUE);
      g_assert_cmpint (inst->out[0]->ndim, ==, 4);
      g_assert_cmpint (inst->out[0]->shape[0], ==, d[0]);
      g_assert_cmpint (inst->out[0]->shape[1], ==, d[1]);
      g_assert_cmpint (inst->out[0]->shape[2], ==, 1);
      g_assert_cmpint (inst->out[0]->shape[3], ==, 1);
      nl_test_fill_uniform (inst->in[0], -3, 3, 31 + k);
      nl_test_fill_uniform (inst->out_grad[0], -1, 1, 32 + k);
      nl_tensor_fill (inst->in_grad[0], 123.0f);
      run_forward (inst);
      run_backward_lean (inst);

      const float *x = nl_tensor_f32 (inst->in[0]), *dy = nl_tensor_f32 (inst->out_grad[0]);
      int64_t planes = d[0] * d[1], hw = d[2] * d[3];
      float *y = g_new (float, planes), *dx = g_new (float, planes * hw);
      for (int64_t p = 0; p < planes; p++)
        {
          double s = 0;
          for (int64_t i = 0; i < hw; i++)
            s += x[p * hw + i];
          y[p] = (float) (s / hw);
          for (int64_t i = 0; i < hw; i++)
            dx[p * hw + i] = dy[p] / (float) hw;
        }
      nl_test_assert_close (nl_tensor_f32 (inst->out[0]), y, planes, 1e-6, 1e-5);
      nl_test_assert_close (nl_tensor_f32 (inst->in_grad[0]), dx, planes * hw, 1e-7, 1e-6);
      g_free (y);
      g_free (dx);
      nl_op_instance_free (inst);
    }
}

static void
test_pool_errors (void)
{
  const char *pad2[] = { "pool_size", "2", "padding", "2", NULL };
  const char *k5[] = { "pool_size", "5", NULL };
  const char *k0[] = { "pool_size", "0", NULL };
  const char *s_neg[] = { "strides", "-1", NULL };
  const char *cip[] = { "count_include_pad", "false", NULL };

  expect_error ("MaxPool2D", NULL, nl_shape_of (2, (int64_t) 128, (int64_t) 784), NL_OP_ERROR_SHAPE,
                "MaxPool2D needs a 4-D input (N, C, H, W) but got (128, 784)");
  expect_error ("AvgPool2D", NULL, nl_shape_of (3, (int64_t) 1, (int64_t) 8, (int64_t) 8), NL_OP_ERROR_SHAPE,
                "AvgPool2D needs a 4-D input");
  expect_error ("GlobalAvgPool2D", NULL, nl_shape_of (2, (int64_t) 4, (int64_t) 10), NL_OP_ERROR_SHAPE,
                "GlobalAvgPool2D needs a 4-D input");
  expect_error ("MaxPool2D", pad2, shape4 (1, 1, 8, 8), NL_OP_ERROR_SHAPE, "at most half the pool size");
  expect_error ("AvgPool2D", pad2, shape4 (1, 1, 8, 8), NL_OP_ERROR_SHAPE, "at most half the pool size");
  expect_error ("MaxPool2D", k5, shape4 (1, 1, 4, 8), NL_OP_ERROR_SHAPE, "does not fit");
  expect_error ("AvgPool2D", k5, shape4 (1, 1, 8, 4), NL_OP_ERROR_SHAPE, "does not fit");
  expect_error ("MaxPool2D", k0, shape4 (1, 1, 8, 8), NL_OP_ERROR_PARAM, "pool_size");
  expect_error ("AvgPool2D", s_neg, shape4 (1, 1, 8, 8), NL_OP_ERROR_PARAM, "strides");
  /* MaxPool2D has no count_include_pad */
  expect_error ("MaxPool2D", cip, shape4 (1, 1, 8, 8), NL_OP_ERROR_PARAM, "count_include_pad");
}

/* ---- BatchNorm ---- */

typedef struct {
  int64_t n, c, s;
} BnDims;

static BnDims
bn_dims (const NlShape *sh)
{
  BnDims d = { sh->d[0], sh->d[1], 1 };
  for (int i = 2; i < sh->ndim; i++)
    d.s *= sh->d[i];
  return d;
}

#define AT(d, n, ch, i) ((((n) * (d).c) + (ch)) * (d).s + (i))

/* Batch-statistics BatchNorm, forward and the textbook backward (through
 * the variance and the mean), all in double. */
static void
ref_bn_train (BnDims d, const float *x, const float *gamma, const float *beta, const float *dy, double eps,
              float *y, float *mean_out, float *inv_out, float *dx, float *dgamma, float *dbeta)
{
  const double m = (double) d.n * d.s;
  for (int64_t ch = 0; ch < d.c; ch++)
    {
      double mean = 0, var = 0, g = gamma ? gamma[ch] : 1.0, b = beta ? beta[ch] : 0.0;
      for (int64_t n = 0; n < d.n; n++)
        for (int64_t i = 0; i < d.s; i++)
          mean += x[AT (d, n, ch, i)];
      mean /= m;
      for (int64_t n = 0; n < d.n; n++)
        for (int64_t i = 0; i < d.s; i++)
          var += (x[AT (d, n, ch, i)] - mean) * (x[AT (d, n, ch, i)] - mean);
      var /= m;
      double inv = 1.0 / sqrt (var + eps);
      mean_out[ch] = (float) mean;
      inv_out[ch] = (float) inv;

      double dvar = 0, dmean = 0, dg = 0, db = 0, sum_dev = 0;
      for (int64_t n = 0; n < d.n; n++)
        for (int64_t i = 0; i < d.s; i++)
          {
            int64_t k = AT (d, n, ch, i);
            double dev = x[k] - mean, dxhat = dy[k] * g;
            y[k] = (float) (dev * inv * g + b);
            dvar += dxhat * dev * -0.5 * pow (var + eps, -1.5);
            dmean += -dxhat * inv;
            sum_dev += dev;
            dg += dy[k] * dev * inv;
            db += dy[k];
          }
      dmean += dvar * -2.0 * sum_dev / m;
      for (int64_t n = 0; n < d.n; n++)
        for (int64_t i = 0; i < d.s; i++)
          {
            int64_t k = AT (d, n, ch, i);
            dx[k] = (float) (dy[k] * g * inv + dvar * 2.0 * (x[k] - mean) / m + dmean / m);
          }
      dgamma[ch] = (float) dg;
      dbeta[ch] = (float) db;
    }
}

static void
check_bn_train (NlShape sh, gboolean scale, gboolean center, guint64 seed)
{
  const char *params[] = { "scale", scale ? "true" : "false", "center", center ? "true" : "false",
                           "epsilon", "0.001", NULL };
  NlOpInstance *inst = make ("BatchNorm", params, sh, TRUE);
  BnDims d = bn_dims (&sh);
  int64_t nx = nl_shape_numel (&sh);

  g_assert_true ((inst->in[1] != NULL) == scale);
  g_assert_true ((inst->in[2] != NULL) == center);
  if (scale)
    {
      g_assert_cmpint (inst->in[1]->ndim, ==, 1);
      g_assert_cmpint (inst->in[1]->shape[0], ==, d.c);
      nl_test_fill_uniform (inst->in[1], 0.5, 2, seed + 1);
    }
  if (center)
    nl_test_fill_uniform (inst->in[2], -1, 1, seed + 2);
  nl_test_fill_uniform (inst->in[0], -3, 5, seed); /* offset mean, to make centring matter */
  nl_test_fill_uniform (inst->out_grad[0], -1, 1, seed + 3);
  nl_tensor_fill (inst->in_grad[0], 123.0f);
  if (scale)
    nl_tensor_fill (inst->in_grad[1], 123.0f);
  if (center)
    nl_tensor_fill (inst->in_grad[2], 123.0f);
  run_forward (inst);
  run_backward_lean (inst);

  float *y = g_new (float, nx), *dx = g_new (float, nx);
  float *mean = g_new (float, d.c), *inv = g_new (float, d.c), *dg = g_new (float, d.c), *db = g_new (float, d.c);
  ref_bn_train (d, nl_tensor_f32 (inst->in[0]), scale ? nl_tensor_f32 (inst->in[1]) : NULL,
                center ? nl_tensor_f32 (inst->in[2]) : NULL, nl_tensor_f32 (inst->out_grad[0]), 1e-3,
                y, mean, inv, dx, dg, db);
  nl_test_assert_close (nl_tensor_f32 (inst->out[0]), y, nx, 1e-5, 1e-4);
  nl_test_assert_close (nl_tensor_f32 (inst->saved[0]), mean, d.c, 1e-5, 1e-5);
  nl_test_assert_close (nl_tensor_f32 (inst->saved[1]), inv, d.c, 1e-5, 1e-5);
  nl_test_assert_close (nl_tensor_f32 (inst->in_grad[0]), dx, nx, 1e-5, 1e-3);
  if (scale)
    nl_test_assert_close (nl_tensor_f32 (inst->in_grad[1]), dg, d.c, 1e-4, 1e-4);
  if (center)
    nl_test_assert_close (nl_tensor_f32 (inst->in_grad[2]), db, d.c, 1e-4, 1e-4);
  g_free (y);
  g_free (dx);
  g_free (mean);
  g_free (inv);
  g_free (dg);
  g_free (db);
  nl_op_instance_free (inst);
}

static void
test_bn_train (void)
{
  check_bn_train (nl_shape_of (2, (int64_t) 4, (int64_t) 3), TRUE, TRUE, 100);
  check_bn_train (nl_shape_of (2, (int64_t) 64, (int64_t) 50), TRUE, TRUE, 110);
  check_bn_train (nl_shape_of (2, (int64_t) 16, (int64_t) 150), TRUE, TRUE, 115); /* 3 channel blocks */
  check_bn_train (nl_shape_of (2, (int64_t) 256, (int64_t) 200), TRUE, TRUE, 118); /* threaded 2-D */
  check_bn_train (nl_shape_of (2, (int64_t) 9, (int64_t) 70), FALSE, FALSE, 119);
  check_bn_train (nl_shape_of (4, (int64_t) 2, (int64_t) 3, (int64_t) 4, (int64_t) 5), TRUE, TRUE, 120);
  check_bn_train (nl_shape_of (3, (int64_t) 3, (int64_t) 2, (int64_t) 7), TRUE, TRUE, 130);
  check_bn_train (nl_shape_of (4, (int64_t) 5, (int64_t) 4, (int64_t) 3, (int64_t) 3), FALSE, TRUE, 140);
  check_bn_train (nl_shape_of (4, (int64_t) 5, (int64_t) 4, (int64_t) 3, (int64_t) 3), TRUE, FALSE, 150);
  check_bn_train (nl_shape_of (4, (int64_t) 5, (int64_t) 4, (int64_t) 3, (int64_t) 3), FALSE, FALSE, 160);
  /* threaded */
  check_bn_train (nl_shape_of (4, (int64_t) 16, (int64_t) 8, (int64_t) 16, (int64_t) 16), TRUE, TRUE, 170);
}

/* Running statistics after two training passes, by hand. Channel 0 sees
 * {1, 2, 3, 4} then {0, 0, 0, 4}; channel 1 sees {10, 10, 10, 10} then
 * {-2, 2, -2, 2}. Unbiased variances: 5/3, 0, then 4, 16/3. */
static void
test_bn_running_stats (void)
{
  NlOpInstance *inst = make ("BatchNorm", NULL, nl_shape_of (2, (int64_t) 4, (int64_t) 2), TRUE);
  const float x1[] = { 1, 10, 2, 10, 3, 10, 4, 10 };
  const float x2[] = { 0, -2, 0, 2, 0, -2, 4, 2 };
  const float *rm = nl_tensor_f32 (inst->aux[0]), *rv = nl_tensor_f32 (inst->aux[1]);

  /* initial state: mean 0, var 1; gamma 1, beta 0 are the graph's job */
  g_assert_cmpfloat (rm[0], ==, 0);
  g_assert_cmpfloat (rm[1], ==, 0);
  g_assert_cmpfloat (rv[0], ==, 1);
  g_assert_cmpfloat (rv[1], ==, 1);
  nl_tensor_fill (inst->in[1], 1.0f);

  memcpy (nl_tensor_f32 (inst->in[0]), x1, sizeof x1);
  run_forward (inst);
  g_assert_cmpfloat_with_epsilon (rm[0], 0.25, 1e-6);            /* 0.1 * 2.5 */
  g_assert_cmpfloat_with_epsilon (rm[1], 1.0, 1e-6);             /* 0.1 * 10 */
  g_assert_cmpfloat_with_epsilon (rv[0], 0.9 + 0.1 * 5.0 / 3.0, 1e-6);
  g_assert_cmpfloat_with_epsilon (rv[1], 0.9, 1e-6);
  /* the batch itself is normalised with the biased variance 1.25 */
  g_assert_cmpfloat_with_epsilon (nl_tensor_f32 (inst->out[0])[0], (1 - 2.5) / sqrt (1.25 + 1e-5), 1e-5);

  memcpy (nl_tensor_f32 (inst->in[0]), x2, sizeof x2);
  run_forward (inst);
  g_assert_cmpfloat_with_epsilon (rm[0], 0.325, 1e-6);           /* 0.9 * 0.25 + 0.1 * 1 */
  g_assert_cmpfloat_with_epsilon (rm[1], 0.9, 1e-6);             /* 0.9 * 1 + 0.1 * 0 */
  g_assert_cmpfloat_with_epsilon (rv[0], 1.36, 1e-6);            /* 0.9 * 1.0666667 + 0.1 * 4 */
  g_assert_cmpfloat_with_epsilon (rv[1], 0.81 + 1.6 / 3.0, 1e-6); /* 0.9 * 0.9 + 0.1 * 16/3 */
  nl_op_instance_free (inst);

  /* another momentum; predict mode never moves the stats */
  const char *mom[] = { "momentum", "0.5", NULL };
  inst = make ("BatchNorm", mom, nl_shape_of (2, (int64_t) 4, (int64_t) 2), TRUE);
  rm = nl_tensor_f32 (inst->aux[0]);
  rv = nl_tensor_f32 (inst->aux[1]);
  memcpy (nl_tensor_f32 (inst->in[0]), x1, sizeof x1);
  run_forward (inst);
  g_assert_cmpfloat_with_epsilon (rm[0], 1.25, 1e-6);
  g_assert_cmpfloat_with_epsilon (rv[0], 0.5 + 0.5 * 5.0 / 3.0, 1e-6);
  inst->training = FALSE;
  run_forward (inst);
  g_assert_cmpfloat_with_epsilon (rm[0], 1.25, 1e-6);
  g_assert_cmpfloat_with_epsilon (rv[0], 0.5 + 0.5 * 5.0 / 3.0, 1e-6);
  nl_op_instance_free (inst);
}

/* Running statistics in place of batch ones: predict mode, and training
 * with use_global_stats (frozen BatchNorm, affine gradient). */
static void
check_bn_global (NlShape sh, gboolean training, const char *const *params)
{
  NlOpInstance *inst = make ("BatchNorm", params, sh, training);
  BnDims d = bn_dims (&sh);
  int64_t nx = nl_shape_numel (&sh);
  const double eps = 1e-5;

  nl_test_fill_uniform (inst->in[0], -3, 5, 200);
  nl_test_fill_uniform (inst->in[1], 0.5, 2, 201);
  nl_test_fill_uniform (inst->in[2], -1, 1, 202);
  nl_test_fill_uniform (inst->aux[0], -1, 1, 203);
  nl_test_fill_uniform (inst->aux[1], 0.5, 3, 204);
  nl_test_fill_uniform (inst->out_grad[0], -1, 1, 205);
  float rm[8], rv[8];
  g_assert_cmpint (d.c, <=, 8);
  memcpy (rm, nl_tensor_f32 (inst->aux[0]), d.c * sizeof (float));
  memcpy (rv, nl_tensor_f32 (inst->aux[1]), d.c * sizeof (float));
  run_forward (inst);

  const float *x = nl_tensor_f32 (inst->in[0]), *g = nl_tensor_f32 (inst->in[1]), *b = nl_tensor_f32 (inst->in[2]);
  const float *dy = nl_tensor_f32 (inst->out_grad[0]);
  float *y = g_new (float, nx), *dx = g_new (float, nx);
  float dg[8] = { 0 }, db[8] = { 0 };
  for (int64_t ch = 0; ch < d.c; ch++)
    {
      double inv = 1.0 / sqrt ((double) rv[ch] + eps), sg = 0, sb = 0;
      for (int64_t n = 0; n < d.n; n++)
        for (int64_t i = 0; i < d.s; i++)
          {
            int64_t k = AT (d, n, ch, i);
            y[k] = (float) ((x[k] - rm[ch]) * inv * g[ch] + b[ch]);
            dx[k] = (float) (dy[k] * g[ch] * inv);
            sg += dy[k] * (x[k] - rm[ch]) * inv;
            sb += dy[k];
          }
      dg[ch] = (float) sg;
      db[ch] = (float) sb;
    }
  nl_test_assert_close (nl_tensor_f32 (inst->out[0]), y, nx, 1e-5, 1e-5);
  nl_test_assert_close (nl_tensor_f32 (inst->aux[0]), rm, d.c, 0, 0);
  nl_test_assert_close (nl_tensor_f32 (inst->aux[1]), rv, d.c, 0, 0);
  if (training)
    {
      nl_tensor_fill (inst->in_grad[0], 123.0f);
      run_backward_lean (inst);
      nl_test_assert_close (nl_tensor_f32 (inst->in_grad[0]), dx, nx, 1e-6, 1e-5);
      nl_test_assert_close (nl_tensor_f32 (inst->in_grad[1]), dg, d.c, 1e-5, 1e-5);
      nl_test_assert_close (nl_tensor_f32 (inst->in_grad[2]), db, d.c, 1e-5, 1e-5);
    }
  g_free (y);
  g_free (dx);
  nl_op_instance_free (inst);
}

static void
test_bn_predict (void)
{
  const char *frozen[] = { "use_global_stats", "true", NULL };
  NlShape shapes[] = { nl_shape_of (4, (int64_t) 3, (int64_t) 4, (int64_t) 5, (int64_t) 2),
                       nl_shape_of (2, (int64_t) 6, (int64_t) 7) };
  for (int i = 0; i < 2; i++)
    {
      check_bn_global (shapes[i], FALSE, NULL);
      check_bn_global (shapes[i], FALSE, frozen);
      check_bn_global (shapes[i], TRUE, frozen);
    }
}

/* The same batch gives different outputs in training and predict mode
 * (batch vs running stats) until the running stats match the batch. */
static void
test_bn_train_vs_predict (void)
{
  NlShape sh = nl_shape_of (2, (int64_t) 8, (int64_t) 3);
  NlOpInstance *inst = make ("BatchNorm", NULL, sh, TRUE);
  nl_tensor_fill (inst->in[1], 1.0f);
  nl_test_fill_uniform (inst->in[0], 2, 6, 300);
  run_forward (inst);
  float train_y[24];
  memcpy (train_y, nl_tensor_f32 (inst->out[0]), sizeof train_y);
  /* batch-normalised: each channel has mean 0 */
  for (int ch = 0; ch < 3; ch++)
    {
      double s = 0;
      for (int n = 0; n < 8; n++)
        s += train_y[n * 3 + ch];
      g_assert_cmpfloat (fabs (s / 8), <, 1e-5);
    }
  inst->training = FALSE;
  run_forward (inst);
  /* running mean moved only 10% towards ~4: the outputs stay large */
  g_assert_cmpfloat (fabs (nl_tensor_f32 (inst->out[0])[0] - train_y[0]), >, 0.5);
  nl_op_instance_free (inst);
}

static void
test_bn_errors (void)
{
  const char *axis2[] = { "axis", "2", NULL };
  const char *axis0[] = { "axis", "0", NULL };
  const char *axis_m3[] = { "axis", "-3", NULL };
  const char *mom[] = { "momentum", "1.5", NULL };
  const char *eps[] = { "epsilon", "0", NULL };

  expect_error ("BatchNorm", NULL, nl_shape_of (1, (int64_t) 10), NL_OP_ERROR_SHAPE, "at least 2 dims");
  expect_error ("BatchNorm", axis2, shape4 (2, 3, 4, 4), NL_OP_ERROR_SHAPE, "axis 1");
  expect_error ("BatchNorm", axis0, nl_shape_of (2, (int64_t) 2, (int64_t) 3), NL_OP_ERROR_SHAPE, "axis 1");
  expect_error ("BatchNorm", mom, shape4 (2, 3, 4, 4), NL_OP_ERROR_PARAM, "momentum");
  expect_error ("BatchNorm", eps, shape4 (2, 3, 4, 4), NL_OP_ERROR_PARAM, "epsilon");
  /* -3 on 4-D input is the channel axis */
  NlOpInstance *inst = make ("BatchNorm", axis_m3, shape4 (2, 3, 4, 4), TRUE);
  g_assert_cmpint (inst->aux[0]->shape[0], ==, 3);
  nl_op_instance_free (inst);
}

/* ---- LayerNorm ---- */

static void
ref_ln (int64_t rows, int64_t dim, const float *x, const float *gamma, const float *beta, const float *dy,
        double eps, float *y, float *mean_out, float *inv_out, float *dx, float *dgamma, float *dbeta)
{
  double *dg = g_new0 (double, dim), *db = g_new0 (double, dim);
  for (int64_t r = 0; r < rows; r++)
    {
      const float *xr = x + r * dim, *gr = dy + r * dim;
      double mean = 0, var = 0, dvar = 0, dmean = 0, sum_dev = 0;
      for (int64_t i = 0; i < dim; i++)
        mean += xr[i];
      mean /= dim;
      for (int64_t i = 0; i < dim; i++)
        var += (xr[i] - mean) * (xr[i] - mean);
      var /= dim;
      double inv = 1.0 / sqrt (var + eps);
      mean_out[r] = (float) mean;
      inv_out[r] = (float) inv;
      for (int64_t i = 0; i < dim; i++)
        {
          double g = gamma ? gamma[i] : 1.0, b = beta ? beta[i] : 0.0, dev = xr[i] - mean;
          y[r * dim + i] = (float) (dev * inv * g + b);
          dvar += gr[i] * g * dev * -0.5 * pow (var + eps, -1.5);
          dmean += -gr[i] * g * inv;
          sum_dev += dev;
          dg[i] += gr[i] * dev * inv;
          db[i] += gr[i];
        }
      dmean += dvar * -2.0 * sum_dev / dim;
      for (int64_t i = 0; i < dim; i++)
        dx[r * dim + i] = (float) (gr[i] * (gamma ? gamma[i] : 1.0) * inv + dvar * 2.0 * (xr[i] - mean) / dim
                                   + dmean / dim);
    }
  for (int64_t i = 0; i < dim; i++)
    {
      dgamma[i] = (float) dg[i];
      dbeta[i] = (float) db[i];
    }
  g_free (dg);
  g_free (db);
}

static void
check_ln (NlShape sh, gboolean scale, gboolean center, gboolean training, guint64 seed)
{
  const char *params[] = { "scale", scale ? "true" : "false", "center", center ? "true" : "false",
                           "epsilon", "0.0001", NULL };
  NlOpInstance *inst = make ("LayerNorm", params, sh, training);
  int64_t dim = sh.d[sh.ndim - 1], nx = nl_shape_numel (&sh), rows = nx / dim;

  g_assert_true ((inst->in[1] != NULL) == scale);
  g_assert_true ((inst->in[2] != NULL) == center);
  if (scale)
    {
      g_assert_cmpint (inst->in[1]->shape[0], ==, dim);
      nl_test_fill_uniform (inst->in[1], 0.5, 2, seed + 1);
    }
  if (center)
    nl_test_fill_uniform (inst->in[2], -1, 1, seed + 2);
  nl_test_fill_uniform (inst->in[0], -2, 6, seed);
  nl_test_fill_uniform (inst->out_grad[0], -1, 1, seed + 3);
  nl_tensor_fill (inst->in_grad[0], 123.0f);
  if (scale)
    nl_tensor_fill (inst->in_grad[1], 123.0f);
  if (center)
    nl_tensor_fill (inst->in_grad[2], 123.0f);
  run_forward (inst);

  float *y = g_new (float, nx), *dx = g_new (float, nx), *mean = g_new (float, rows), *inv = g_new (float, rows);
  float *dg = g_new (float, dim), *db = g_new (float, dim);
  ref_ln (rows, dim, nl_tensor_f32 (inst->in[0]), scale ? nl_tensor_f32 (inst->in[1]) : NULL,
          center ? nl_tensor_f32 (inst->in[2]) : NULL, nl_tensor_f32 (inst->out_grad[0]), 1e-4,
          y, mean, inv, dx, dg, db);
  nl_test_assert_close (nl_tensor_f32 (inst->out[0]), y, nx, 1e-5, 1e-4);
  if (training)
    {
      run_backward_lean (inst);
      nl_test_assert_close (nl_tensor_f32 (inst->saved[0]), mean, rows, 1e-5, 1e-5);
      nl_test_assert_close (nl_tensor_f32 (inst->saved[1]), inv, rows, 1e-5, 1e-4);
      nl_test_assert_close (nl_tensor_f32 (inst->in_grad[0]), dx, nx, 1e-5, 1e-3);
      if (scale)
        nl_test_assert_close (nl_tensor_f32 (inst->in_grad[1]), dg, dim, 1e-4, 1e-4);
      if (center)
        nl_test_assert_close (nl_tensor_f32 (inst->in_grad[2]), db, dim, 1e-4, 1e-4);
    }
  g_free (y);
  g_free (dx);
  g_free (mean);
  g_free (inv);
  g_free (dg);
  g_free (db);
  nl_op_instance_free (inst);
}

static void
test_layer_norm (void)
{
  check_ln (nl_shape_of (2, (int64_t) 4, (int64_t) 10), TRUE, TRUE, TRUE, 400);
  check_ln (nl_shape_of (3, (int64_t) 2, (int64_t) 3, (int64_t) 7), TRUE, TRUE, TRUE, 410);
  check_ln (nl_shape_of (2, (int64_t) 5, (int64_t) 33), FALSE, TRUE, TRUE, 420);
  check_ln (nl_shape_of (2, (int64_t) 5, (int64_t) 33), TRUE, FALSE, TRUE, 430);
  check_ln (nl_shape_of (2, (int64_t) 5, (int64_t) 33), FALSE, FALSE, TRUE, 440);
  check_ln (nl_shape_of (1, (int64_t) 17), TRUE, TRUE, TRUE, 450);
  check_ln (nl_shape_of (2, (int64_t) 300, (int64_t) 7), TRUE, TRUE, TRUE, 455); /* partial-sum flushes */
  check_ln (nl_shape_of (2, (int64_t) 512, (int64_t) 80), TRUE, TRUE, TRUE, 460); /* threaded */
  /* no running state: predict mode computes the same */
  check_ln (nl_shape_of (3, (int64_t) 2, (int64_t) 3, (int64_t) 7), TRUE, TRUE, FALSE, 410);
}

static void
test_ln_errors (void)
{
  const char *axis0[] = { "axis", "0", NULL };
  const char *axis1[] = { "axis", "1", NULL };
  const char *eps[] = { "epsilon", "-1", NULL };
  expect_error ("LayerNorm", axis0, nl_shape_of (2, (int64_t) 4, (int64_t) 10), NL_OP_ERROR_SHAPE, "last axis");
  expect_error ("LayerNorm", axis1, nl_shape_of (3, (int64_t) 4, (int64_t) 10, (int64_t) 3), NL_OP_ERROR_SHAPE,
                "last axis");
  expect_error ("LayerNorm", eps, nl_shape_of (2, (int64_t) 4, (int64_t) 10), NL_OP_ERROR_PARAM, "epsilon");
  /* axis 1 of a 2-D input is the last one */
  NlOpInstance *inst = make ("LayerNorm", axis1, nl_shape_of (2, (int64_t) 4, (int64_t) 10), TRUE);
  g_assert_cmpint (inst->in[1]->shape[0], ==, 10);
  g_assert_cmpint (inst->saved[0]->shape[0], ==, 4);
  nl_op_instance_free (inst);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/pool/max", test_max_pool);
  g_test_add_func ("/pool/out-size", test_pool_out_size);
  g_test_add_func ("/pool/max-predict-nan", test_max_pool_predict_nan);
  g_test_add_func ("/pool/avg", test_avg_pool);
  g_test_add_func ("/pool/avg-pad-by-hand", test_avg_pool_pad_by_hand);
  g_test_add_func ("/pool/global-avg", test_global_avg_pool);
  g_test_add_func ("/pool/errors", test_pool_errors);
  g_test_add_func ("/batchnorm/train", test_bn_train);
  g_test_add_func ("/batchnorm/running-stats", test_bn_running_stats);
  g_test_add_func ("/batchnorm/predict", test_bn_predict);
  g_test_add_func ("/batchnorm/train-vs-predict", test_bn_train_vs_predict);
  g_test_add_func ("/batchnorm/errors", test_bn_errors);
  g_test_add_func ("/layernorm/forward-backward", test_layer_norm);
  g_test_add_func ("/layernorm/errors", test_ln_errors);
  return g_test_run ();
}
