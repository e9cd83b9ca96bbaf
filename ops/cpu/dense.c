/* dense.c — Dense (Gluon's Dense, MXNet's FullyConnected): y = x W^T + b.
 *
 * W is (units, in_units). With flatten the input (N, d1, d2 ..) is read as
 * (N, d1*d2*..); without, the layer applies to the last axis and the other
 * axes are rows. Everything is one sgemm per product (see nl-gemm.h).
 *
 * In bf16/fp16 precision the data and weight (forward), and out_grad, data
 * and weight (backward) are rounded into cached scratch and the same sgemms
 * run on the copies: the numbers of a half-input, float-accumulate GEMM.
 * The bias and its gradient stay float32. */
#include "ops/cpu/nl-cpu-util.h"
#include "ops/cpu/nl-gemm.h"
#include "ops/nl-dense.h"

static const NlParamSpec params[DENSE_N] = {
  [DENSE_UNITS] = { "units", NL_PARAM_INT, 0, 1, 1e18, NULL, TRUE,
                    "Number of outputs (neurons)" },
  [DENSE_USE_BIAS] = { "use_bias", NL_PARAM_BOOL, 1, 0, 1, NULL, FALSE,
                       "Add a learnable bias to each output" },
  [DENSE_FLATTEN] = { "flatten", NL_PARAM_BOOL, 1, 0, 1, NULL, FALSE,
                      "Flatten each sample to a vector first; off: apply to the last axis only" },
  [DENSE_IN_UNITS] = { "in_units", NL_PARAM_INT, 0, 0, 1e18, NULL, FALSE,
                       "Number of inputs per sample; 0 infers it from the data" },
};

static void
resolve (const NlParamValue *p, void *args)
{
  NlDenseArgs *a = args;
  a->units = NL_P_INT (p, DENSE_UNITS);
  a->in_units = NL_P_INT (p, DENSE_IN_UNITS);
  a->use_bias = NL_P_BOOL (p, DENSE_USE_BIAS);
  a->flatten = NL_P_BOOL (p, DENSE_FLATTEN);
}

/* The input as a (rows, in_units) matrix. */
static void
as_matrix (const NlShape *s, gboolean flatten, int64_t *rows, int64_t *k)
{
  int64_t r = 1, c = 1;
  if (flatten)
    {
      r = s->d[0];
      for (int i = 1; i < s->ndim; i++)
        c *= s->d[i];
    }
  else
    {
      for (int i = 0; i < s->ndim - 1; i++)
        r *= s->d[i];
      c = s->d[s->ndim - 1];
    }
  *rows = r;
  *k = c;
}

static gboolean
infer (NlInferCtx *c, GError **error)
{
  const NlShape *in = &c->in[0];
  gboolean flatten = NL_P_BOOL (c->p, DENSE_FLATTEN);
  int64_t units = NL_P_INT (c->p, DENSE_UNITS);
  int64_t want = NL_P_INT (c->p, DENSE_IN_UNITS);
  int64_t rows, k;
  char buf[96];

  if (c->n_data != 1)
    return nl_op_shape_error (error, "Dense takes exactly one input, not %d", c->n_data);
  if (in->ndim < 1)
    return nl_op_shape_error (error, "Dense needs an input with at least one axis, got %s",
                              nl_shape_format (in, buf, sizeof buf));
  as_matrix (in, flatten, &rows, &k);
  if (k < 1)
    return nl_op_shape_error (error, "Dense got an input of shape %s, which has no features per sample",
                              nl_shape_format (in, buf, sizeof buf));
  if (want > 0 && want != k)
    return nl_op_shape_error (error,
                              "Dense expects in_units %" G_GINT64_FORMAT " from its input %s"
                              " but in_units is set to %" G_GINT64_FORMAT,
                              k, nl_shape_format (in, buf, sizeof buf), want);

  c->weights[0] = nl_shape_of (2, units, k);
  c->weights[1] = NL_P_BOOL (c->p, DENSE_USE_BIAS) ? nl_shape_of (1, units) : NL_SHAPE_ABSENT;
  if (flatten)
    c->out[0] = nl_shape_of (2, in->d[0], units);
  else
    {
      c->out[0] = *in;
      c->out[0].d[in->ndim - 1] = units;
    }
  return TRUE;
}

/* Scratch for the rounded copies; only half precision allocates it. */
typedef struct {
  void *buf;
  size_t cap;
} DenseState;

static void
free_state (void *state)
{
  DenseState *s = state;
  g_free (s->buf);
  g_free (s);
}

static float *
half_scratch (NlOpCtx *c, int64_t nfloats)
{
  DenseState *s = *c->state;
  if (!s)
    *c->state = s = g_new0 (DenseState, 1);
  return nl_scratch (&s->buf, &s->cap, MAX (nfloats, 1) * sizeof (float));
}

static gboolean
forward (NlOpCtx *c, GError **error)
{
  const NlTensor *x = c->in[0], *w = c->in[1], *b = c->in[2];
  NlShape xs = nl_tensor_get_shape (x);
  int64_t units = w->shape[0], rows, k;
  float *y = nl_tensor_f32 (c->out[0]);
  const float *xp = nl_tensor_f32 (x), *wp = nl_tensor_f32 (w);

  as_matrix (&xs, ((const NlDenseArgs *) c->args)->flatten, &rows, &k);
  if (c->precision != NL_PRECISION_F32)
    {
      float *xr = half_scratch (c, rows * k + units * k), *wr = xr + rows * k;
      nl_round_array (c->precision, xr, xp, rows * k);
      nl_round_array (c->precision, wr, wp, units * k);
      xp = xr;
      wp = wr;
    }
  if (b)
    {
      /* start from the bias so the sgemm adds onto it (beta = 1) */
      const float *bp = nl_tensor_f32 (b);
      for (int64_t r = 0; r < rows; r++)
        memcpy (y + r * units, bp, units * sizeof (float));
    }
  if (!nl_sgemm ('N', 'T', rows, units, k, 1.0f, xp, k, wp, k, b ? 1.0f : 0.0f, y, units))
    return nl_dnnl_check (dnnl_out_of_memory, "Dense forward sgemm", error);
  return TRUE;
}

static gboolean
backward (NlOpCtx *c, GError **error)
{
  const NlTensor *x = c->in[0], *w = c->in[1];
  NlTensor *dx = c->in_grad[0], *dw = c->in_grad[1], *db = c->in_grad[2];
  NlShape xs = nl_tensor_get_shape (x);
  int64_t units = w->shape[0], rows, k;
  const float *dy = nl_tensor_f32 (c->out_grad[0]);
  const float *dyp = dy, *xp = nl_tensor_f32 (x), *wp = nl_tensor_f32 (w);
  gboolean ok = TRUE;

  as_matrix (&xs, ((const NlDenseArgs *) c->args)->flatten, &rows, &k);
  if (c->precision != NL_PRECISION_F32 && (dw || dx))
    {
      /* round only what the wanted products read: x for dW, W for dx */
      int64_t nx = dw ? rows * k : 0, nw = dx ? units * k : 0;
      float *dyr = half_scratch (c, rows * units + nx + nw);
      float *xr = dyr + rows * units, *wr = xr + nx;
      nl_round_array (c->precision, dyr, dy, rows * units);
      nl_round_array (c->precision, xr, xp, nx);
      nl_round_array (c->precision, wr, wp, nw);
      dyp = dyr;
      xp = xr;
      wp = wr;
    }
  if (dw) /* dW = dy^T x */
    ok = ok && nl_sgemm ('T', 'N', units, k, rows, 1.0f, dyp, units, xp, k, 0.0f, nl_tensor_f32 (dw), k);
  if (dx) /* dx = dy W */
    ok = ok && nl_sgemm ('N', 'N', rows, k, units, 1.0f, dyp, units, wp, k, 0.0f, nl_tensor_f32 (dx), k);
  if (db && c->in[2]) /* column sums of the float32 dy */
    {
      float *g = nl_tensor_f32 (db);
      memset (g, 0, units * sizeof (float));
      for (int64_t r = 0; r < rows; r++)
        {
          const float *row = dy + r * units;
          for (int64_t u = 0; u < units; u++)
            g[u] += row[u];
        }
    }
  if (!ok)
    return nl_dnnl_check (dnnl_out_of_memory, "Dense backward sgemm", error);
  return TRUE;
}

static const char *const inputs[] = { "data" };
static const char *const weights[] = { "weight", "bias" };
static const NlInitHint weight_init[] = { NL_INIT_XAVIER, NL_INIT_ZEROS };

const NlOpDef nl_op_dense = {
  .name = "Dense",
  .category = "Core",
  .doc = "Fully connected layer: y = x W^T + b",
  .params = params,
  .n_params = DENSE_N,
  .inputs = inputs,
  .n_inputs = 1,
  .weights = weights,
  .weight_init = weight_init,
  .n_weights = 2,
  .n_outputs = 1,
  .needs = NL_NEEDS_INPUTS | NL_NEEDS_WEIGHTS,
  .args_size = sizeof (NlDenseArgs),
  .resolve_args = resolve,
  .infer_shape = infer,
  .forward = forward,
  .backward = backward,
  .free_state = free_state,
};
