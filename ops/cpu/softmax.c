/* softmax.c — Softmax and LogSoftmax over any axis.
 *
 * The tensor is viewed as (outer, len, inner) around the axis. For the last
 * axis (inner == 1) rows are contiguous; otherwise a block of up to CHUNK
 * neighbouring columns is reduced at once, so memory is still read in order.
 * Both subtract the maximum first; both backward passes read the output only. */
#include "ops/cpu/nl-cpu-util.h"
#include "ops/nl-softmax.h"

static const NlParamSpec params[SOFTMAX_N] = {
  [SOFTMAX_AXIS] = { "axis", NL_PARAM_INT, -1, -NL_MAX_DIMS, NL_MAX_DIMS - 1, NULL, FALSE,
                     "Axis to normalise over; negative counts from the end (-1 = last)" },
};

#define CHUNK 64

typedef struct {
  int64_t outer, len, inner;
} Geom;

static void
resolve (const NlParamValue *p, void *args)
{
  NlSoftmaxArgs *a = args;
  a->axis = (int) NL_P_INT (p, SOFTMAX_AXIS);
}

static int
norm_axis (int a, int ndim)
{
  return a < 0 ? a + ndim : a;
}

static Geom
geom_of (const NlTensor *t, int axis)
{
  Geom g = { 1, t->shape[axis], 1 };
  for (int i = 0; i < axis; i++)
    g.outer *= t->shape[i];
  for (int i = axis + 1; i < t->ndim; i++)
    g.inner *= t->shape[i];
  return g;
}

static gboolean
infer_common (NlInferCtx *c, const char *op, GError **error)
{
  int axis;
  char buf[96];

  if (c->n_data != 1)
    return nl_op_shape_error (error, "%s takes exactly one input, but %d are connected", op, c->n_data);
  axis = norm_axis ((int) NL_P_INT (c->p, SOFTMAX_AXIS), c->in[0].ndim);
  if (axis < 0 || axis >= c->in[0].ndim)
    return nl_op_shape_error (error, "%s over axis %d, but the input %s has %d dimensions", op,
                              (int) NL_P_INT (c->p, SOFTMAX_AXIS), nl_shape_format (&c->in[0], buf, sizeof buf),
                              c->in[0].ndim);
  c->out[0] = c->in[0];
  return TRUE;
}

static gboolean
softmax_infer (NlInferCtx *c, GError **error)
{
  return infer_common (c, "Softmax", error);
}

static gboolean
log_softmax_infer (NlInferCtx *c, GError **error)
{
  return infer_common (c, "LogSoftmax", error);
}

/* One (outer index, column block) unit of work: columns k0 .. k0 + w of
 * outer slice o, or a whole row when inner == 1. */
static void
forward_unit (const float *x0, float *y0, Geom g, int64_t unit, gboolean logp)
{
  int64_t nblk = (g.inner + CHUNK - 1) / CHUNK;
  int64_t o = unit / nblk, k0 = unit % nblk * CHUNK;
  int w = (int) MIN (CHUNK, g.inner - k0);
  const float *x = x0 + o * g.len * g.inner + k0;
  float *y = y0 + o * g.len * g.inner + k0;
  int64_t L = g.len, st = g.inner;

  if (st == 1)
    {
      float m = -INFINITY, s = 0.0f;
      for (int64_t j = 0; j < L; j++)
        m = fmaxf (m, x[j]);
      if (logp)
        {
          for (int64_t j = 0; j < L; j++)
            s += expf (x[j] - m);
          /* (x - m) is exact near the max; adding m to log(s) first would
             round it to the scale of m */
          float ls = logf (s);
          for (int64_t j = 0; j < L; j++)
            y[j] = (x[j] - m) - ls;
        }
      else
        {
          for (int64_t j = 0; j < L; j++)
            {
              y[j] = expf (x[j] - m);
              s += y[j];
            }
          float r = 1.0f / s;
          for (int64_t j = 0; j < L; j++)
            y[j] *= r;
        }
      return;
    }

  float m[CHUNK], s[CHUNK];
  for (int k = 0; k < w; k++)
    {
      m[k] = -INFINITY;
      s[k] = 0.0f;
    }
  for (int64_t j = 0; j < L; j++)
    for (int k = 0; k < w; k++)
      m[k] = fmaxf (m[k], x[j * st + k]);
  if (logp)
    {
      for (int64_t j = 0; j < L; j++)
        for (int k = 0; k < w; k++)
          s[k] += expf (x[j * st + k] - m[k]);
      for (int k = 0; k < w; k++)
        s[k] = logf (s[k]);
      for (int64_t j = 0; j < L; j++)
        for (int k = 0; k < w; k++)
          y[j * st + k] = (x[j * st + k] - m[k]) - s[k];
    }
  else
    {
      for (int64_t j = 0; j < L; j++)
        for (int k = 0; k < w; k++)
          {
            float e = expf (x[j * st + k] - m[k]);
            y[j * st + k] = e;
            s[k] += e;
          }
      for (int k = 0; k < w; k++)
        s[k] = 1.0f / s[k];
      for (int64_t j = 0; j < L; j++)
        for (int k = 0; k < w; k++)
          y[j * st + k] *= s[k];
    }
}

/* softmax:     dx = y * (dy - sum(dy * y))
 * log-softmax: dx = dy - exp(y) * sum(dy) */
static void
backward_unit (const float *y0, const float *dy0, float *dx0, Geom g, int64_t unit, gboolean logp)
{
  int64_t nblk = (g.inner + CHUNK - 1) / CHUNK;
  int64_t o = unit / nblk, k0 = unit % nblk * CHUNK;
  int w = (int) MIN (CHUNK, g.inner - k0);
  int64_t base = o * g.len * g.inner + k0;
  const float *y = y0 + base, *dy = dy0 + base;
  float *dx = dx0 + base;
  int64_t L = g.len, st = g.inner;
  float s[CHUNK];

  for (int k = 0; k < w; k++)
    s[k] = 0.0f;
  if (logp)
    {
      for (int64_t j = 0; j < L; j++)
        for (int k = 0; k < w; k++)
          s[k] += dy[j * st + k];
      for (int64_t j = 0; j < L; j++)
        for (int k = 0; k < w; k++)
          dx[j * st + k] = dy[j * st + k] - expf (y[j * st + k]) * s[k];
    }
  else
    {
      for (int64_t j = 0; j < L; j++)
        for (int k = 0; k < w; k++)
          s[k] += dy[j * st + k] * y[j * st + k];
      for (int64_t j = 0; j < L; j++)
        for (int k = 0; k < w; k++)
          dx[j * st + k] = y[j * st + k] * (dy[j * st + k] - s[k]);
    }
}

static int64_t
n_units (Geom g)
{
  return g.outer * ((g.inner + CHUNK - 1) / CHUNK);
}

static void
run_forward (NlOpCtx *c, gboolean logp)
{
  const NlTensor *x = c->in[0];
  Geom g = geom_of (x, norm_axis (((const NlSoftmaxArgs *) c->args)->axis, x->ndim));
  int64_t units = n_units (g);
  const float *xp = nl_tensor_f32 (x);
  float *yp = nl_tensor_f32 (c->out[0]);

  if (g.len == 0)
    return;
#pragma omp parallel for if (nl_numel (x) > NL_PAR_MIN / 8 && units > 1) schedule (static)
  for (int64_t u = 0; u < units; u++)
    forward_unit (xp, yp, g, u, logp);
}

static void
run_backward (NlOpCtx *c, gboolean logp)
{
  const NlTensor *y = c->out[0];
  Geom g = geom_of (y, norm_axis (((const NlSoftmaxArgs *) c->args)->axis, y->ndim));
  int64_t units = n_units (g);
  const float *yp = nl_tensor_f32 (y), *dyp = nl_tensor_f32 (c->out_grad[0]);
  float *dxp;

  if (!c->in_grad[0] || g.len == 0)
    return;
  dxp = nl_tensor_f32 (c->in_grad[0]);
#pragma omp parallel for if (nl_numel (y) > NL_PAR_MIN / 8 && units > 1) schedule (static)
  for (int64_t u = 0; u < units; u++)
    backward_unit (yp, dyp, dxp, g, u, logp);
}

static gboolean
softmax_forward (NlOpCtx *c, GError **error)
{
  run_forward (c, FALSE);
  return TRUE;
}

static gboolean
softmax_backward (NlOpCtx *c, GError **error)
{
  run_backward (c, FALSE);
  return TRUE;
}

static gboolean
log_softmax_forward (NlOpCtx *c, GError **error)
{
  run_forward (c, TRUE);
  return TRUE;
}

static gboolean
log_softmax_backward (NlOpCtx *c, GError **error)
{
  run_backward (c, TRUE);
  return TRUE;
}

static const char *const inputs[] = { "data" };

const NlOpDef nl_op_softmax = {
  .name = "Softmax",
  .category = "Activation",
  .doc = "exp(x) normalised to sum to 1 along an axis",
  .params = params,
  .n_params = SOFTMAX_N,
  .inputs = inputs,
  .n_inputs = 1,
  .n_outputs = 1,
  .needs = NL_NEEDS_OUTPUTS,
  .inplace = TRUE,
  .args_size = sizeof (NlSoftmaxArgs),
  .resolve_args = resolve,
  .infer_shape = softmax_infer,
  .forward = softmax_forward,
  .backward = softmax_backward,
};

const NlOpDef nl_op_log_softmax = {
  .name = "LogSoftmax",
  .category = "Activation",
  .doc = "Logarithm of Softmax, computed stably (x - max - log(sum(exp(x - max))))",
  .params = params,
  .n_params = SOFTMAX_N,
  .inputs = inputs,
  .n_inputs = 1,
  .n_outputs = 1,
  .needs = NL_NEEDS_OUTPUTS,
  .inplace = TRUE,
  .args_size = sizeof (NlSoftmaxArgs),
  .resolve_args = resolve,
  .infer_shape = log_softmax_infer,
  .forward = log_softmax_forward,
  .backward = log_softmax_backward,
};
