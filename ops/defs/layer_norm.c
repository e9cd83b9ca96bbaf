/* layer_norm.c — LayerNorm's definition (kernels: ops/cpu/layer_norm.c,
 * ops/cuda/layer_norm.cu). */
#include "ops/nl-layer-norm.h"

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
};
