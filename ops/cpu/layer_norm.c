/* layer_norm.c — LayerNorm over the last axis, as Gluon's LayerNorm: each
 * row of D values is normalised by its own mean and (biased) variance, then
 * scaled by gamma (D) and shifted by beta (D). No running statistics, so
 * training and predict mode compute the same thing. */
#include "ops/cpu/nl-cpu-util.h"
#include "ops/nl-layer-norm.h"

#include <omp.h>

static const NlParamSpec params[LN_N] = {
  [LN_AXIS] = { "axis", NL_PARAM_INT, -1, -NL_MAX_DIMS, NL_MAX_DIMS - 1, NULL, FALSE,
                "Axis to normalise over; only the last one (-1) is supported" },
  [LN_EPSILON] = { "epsilon", NL_PARAM_FLOAT, 1e-5, 1e-30, 1e18, NULL, FALSE,
                   "Added to the variance before the square root" },
  [LN_CENTER] = { "center", NL_PARAM_BOOL, 1, 0, 1, NULL, FALSE, "Learn an offset beta" },
  [LN_SCALE] = { "scale", NL_PARAM_BOOL, 1, 0, 1, NULL, FALSE, "Learn a factor gamma" },
};

static void
resolve (const NlParamValue *p, void *args)
{
  NlLayerNormArgs *a = args;
  a->axis = NL_P_INT (p, LN_AXIS);
  a->epsilon = NL_P_FLOAT (p, LN_EPSILON);
  a->center = NL_P_BOOL (p, LN_CENTER);
  a->scale = NL_P_BOOL (p, LN_SCALE);
}

static gboolean
infer (NlInferCtx *c, GError **error)
{
  const NlShape *in = &c->in[0];
  int64_t axis = NL_P_INT (c->p, LN_AXIS);
  NlShape dshape = { .ndim = 1 }, rshape = { .ndim = 1 };
  char buf[96];

  if (c->n_data != 1)
    return nl_op_shape_error (error, "LayerNorm takes exactly one input");
  if (in->ndim < 1)
    return nl_op_shape_error (error, "LayerNorm needs an input of at least 1 dim but got %s",
                              nl_shape_format (in, buf, sizeof buf));
  if (axis < 0)
    axis += in->ndim;
  if (axis != in->ndim - 1)
    return nl_op_shape_error (error, "LayerNorm supports only the last axis (-1), but axis is %" G_GINT64_FORMAT
                              " for input %s", NL_P_INT (c->p, LN_AXIS), nl_shape_format (in, buf, sizeof buf));
  if (in->d[in->ndim - 1] < 1)
    return nl_op_shape_error (error, "LayerNorm needs a non-empty last axis, got %s",
                              nl_shape_format (in, buf, sizeof buf));
  dshape.d[0] = in->d[in->ndim - 1];
  rshape.d[0] = nl_shape_numel (in) / dshape.d[0];
  c->weights[LN_GAMMA] = NL_P_BOOL (c->p, LN_SCALE) ? dshape : NL_SHAPE_ABSENT;
  c->weights[LN_BETA] = NL_P_BOOL (c->p, LN_CENTER) ? dshape : NL_SHAPE_ABSENT;
  c->saved[LN_SAVED_MEAN] = c->saved[LN_SAVED_INVSTD] = rshape;
  c->out[0] = *in;
  return TRUE;
}

static int
threads_for (int64_t work)
{
  return work >= NL_PAR_MIN ? nl_threads_get () : 1;
}

static gboolean
forward (NlOpCtx *c, GError **error)
{
  const int64_t dim = c->in[0]->shape[c->in[0]->ndim - 1];
  const int64_t rows = nl_numel (c->in[0]) / dim;
  const float *x = nl_tensor_f32 (c->in[0]);
  float *y = nl_tensor_f32 (c->out[0]);
  const float *gamma = c->in[1 + LN_GAMMA] ? nl_tensor_f32 (c->in[1 + LN_GAMMA]) : NULL;
  const float *beta = c->in[1 + LN_BETA] ? nl_tensor_f32 (c->in[1 + LN_BETA]) : NULL;
  float *smean = c->saved[LN_SAVED_MEAN] ? nl_tensor_f32 (c->saved[LN_SAVED_MEAN]) : NULL;
  float *sinv = c->saved[LN_SAVED_INVSTD] ? nl_tensor_f32 (c->saved[LN_SAVED_INVSTD]) : NULL;
  const float eps = ((const NlLayerNormArgs *) c->args)->epsilon;

#pragma omp parallel for num_threads (threads_for (rows * dim)) schedule (static)
  for (int64_t r = 0; r < rows; r++)
    {
      const float *xr = x + r * dim;
      float *yr = y + r * dim;
      float s = 0, ss = 0;
#pragma omp simd reduction (+ : s)
      for (int64_t i = 0; i < dim; i++)
        s += xr[i];
      const float mean = s / (float) dim;
      /* second pass about the mean: no cancellation for large offsets */
#pragma omp simd reduction (+ : ss)
      for (int64_t i = 0; i < dim; i++)
        ss += (xr[i] - mean) * (xr[i] - mean);
      const float inv = 1.0f / sqrtf (ss / (float) dim + eps);
      if (smean)
        smean[r] = mean;
      if (sinv)
        sinv[r] = inv;
#pragma omp simd
      for (int64_t i = 0; i < dim; i++)
        yr[i] = (xr[i] - mean) * inv * (gamma ? gamma[i] : 1.0f) + (beta ? beta[i] : 0.0f);
    }
  return TRUE;
}

static gboolean
backward (NlOpCtx *c, GError **error)
{
  const int64_t dim = c->in[0]->shape[c->in[0]->ndim - 1];
  const int64_t rows = nl_numel (c->in[0]) / dim;
  const float *x = nl_tensor_f32 (c->in[0]);
  const float *dy = nl_tensor_f32 (c->out_grad[0]);
  float *dx = c->in_grad[0] ? nl_tensor_f32 (c->in_grad[0]) : NULL;
  const float *gamma = c->in[1 + LN_GAMMA] ? nl_tensor_f32 (c->in[1 + LN_GAMMA]) : NULL;
  float *dgamma = c->in_grad[1 + LN_GAMMA] ? nl_tensor_f32 (c->in_grad[1 + LN_GAMMA]) : NULL;
  float *dbeta = c->in_grad[1 + LN_BETA] ? nl_tensor_f32 (c->in_grad[1 + LN_BETA]) : NULL;
  const float *smean = nl_tensor_f32 (c->saved[LN_SAVED_MEAN]), *sinv = nl_tensor_f32 (c->saved[LN_SAVED_INVSTD]);
  const int nt = threads_for (rows * dim);
  const gboolean want_w = dgamma || dbeta;
  /* gamma/beta gradients sum over rows: per-thread float partials, flushed
   * into double totals every FLUSH rows (fast and still accurate for many
   * rows), added up after the parallel loop: no atomics, same result every run */
  enum { FLUSH = 64 };
  const size_t stride = 2 * (size_t) dim;
  double *total = want_w ? g_new0 (double, nt * stride) : NULL;
  float *part = want_w ? g_new0 (float, nt * stride) : NULL;

#pragma omp parallel num_threads (nt)
  {
    const int t = omp_get_thread_num ();
    float *pg = part ? part + t * stride : NULL, *pb = pg ? pg + dim : NULL;
    double *tot = total ? total + t * stride : NULL;
    int64_t pending = 0;
#pragma omp for schedule (static)
    for (int64_t r = 0; r < rows; r++)
      {
        const float *xr = x + r * dim, *gr = dy + r * dim;
        const float mean = smean[r], inv = sinv[r];
        if (pg)
          {
#pragma omp simd
            for (int64_t i = 0; i < dim; i++)
              {
                pg[i] += gr[i] * (xr[i] - mean) * inv;
                pb[i] += gr[i];
              }
            if (++pending == FLUSH)
              {
                for (size_t i = 0; i < stride; i++)
                  tot[i] += pg[i], pg[i] = 0;
                pending = 0;
              }
          }
        if (!dx)
          continue;
        /* dx = inv * (g - mean(g) - xhat * mean(g * xhat)), g = dy * gamma */
        float sg = 0, sgx = 0;
#pragma omp simd reduction (+ : sg, sgx)
        for (int64_t i = 0; i < dim; i++)
          {
            float g = gr[i] * (gamma ? gamma[i] : 1.0f);
            sg += g;
            sgx += g * (xr[i] - mean) * inv;
          }
        const float mg = sg / (float) dim, mgx = sgx / (float) dim;
        float *dr = dx + r * dim;
#pragma omp simd
        for (int64_t i = 0; i < dim; i++)
          dr[i] = inv * (gr[i] * (gamma ? gamma[i] : 1.0f) - mg - (xr[i] - mean) * inv * mgx);
      }
    if (pg)
      for (size_t i = 0; i < stride; i++)
        tot[i] += pg[i];
  }

  if (total)
    {
      for (int t = 1; t < nt; t++)
        for (size_t i = 0; i < stride; i++)
          total[i] += total[t * stride + i];
      for (int64_t i = 0; i < dim; i++)
        {
          if (dgamma)
            dgamma[i] = (float) total[i];
          if (dbeta)
            dbeta[i] = (float) total[dim + i];
        }
      g_free (total);
      g_free (part);
    }
  return TRUE;
}

static const char *const inputs[] = { "data" };
static const char *const weights[] = { "gamma", "beta" };
static const NlInitHint weight_init[] = { NL_INIT_ONES, NL_INIT_ZEROS };

const NlOpDef nl_op_layer_norm = {
  .name = "LayerNorm",
  .category = "Normalization",
  .doc = "Normalise each sample over its last axis, then scale by gamma and shift by beta",
  .params = params,
  .n_params = LN_N,
  .inputs = inputs,
  .n_inputs = 1,
  .weights = weights,
  .weight_init = weight_init,
  .n_weights = 2,
  .n_saved = 2, /* per-row mean, inverse std */
  .n_outputs = 1,
  .needs = NL_NEEDS_INPUTS | NL_NEEDS_WEIGHTS,
  .args_size = sizeof (NlLayerNormArgs),
  .resolve_args = resolve,
  .infer_shape = infer,
  .forward = forward,
  .backward = backward,
};
