/* batch_norm.c — BatchNorm's definition (kernels: ops/cpu/batch_norm.c,
 * ops/cuda/batch_norm.cu). */
#include "ops/nl-batch-norm.h"

static const NlParamSpec params[BN_N] = {
  [BN_AXIS] = { "axis", NL_PARAM_INT, 1, -NL_MAX_DIMS, NL_MAX_DIMS - 1, NULL, FALSE,
                "Channel axis; only 1 (NCHW and (N, C)) is supported" },
  [BN_MOMENTUM] = { "momentum", NL_PARAM_FLOAT, 0.9, 0, 1, NULL, FALSE,
                    "Running stats keep this share of their old value each training step" },
  [BN_EPSILON] = { "epsilon", NL_PARAM_FLOAT, 1e-5, 1e-30, 1e18, NULL, FALSE,
                   "Added to the variance before the square root" },
  [BN_CENTER] = { "center", NL_PARAM_BOOL, 1, 0, 1, NULL, FALSE, "Learn an offset beta" },
  [BN_SCALE] = { "scale", NL_PARAM_BOOL, 1, 0, 1, NULL, FALSE, "Learn a factor gamma" },
  [BN_USE_GLOBAL_STATS] = { "use_global_stats", NL_PARAM_BOOL, 0, 0, 1, NULL, FALSE,
                            "Normalise with the running stats in training too (frozen BatchNorm)" },
};

static void
resolve (const NlParamValue *p, void *args)
{
  NlBatchNormArgs *a = args;
  a->axis = NL_P_INT (p, BN_AXIS);
  a->momentum = NL_P_FLOAT (p, BN_MOMENTUM);
  a->epsilon = NL_P_FLOAT (p, BN_EPSILON);
  a->center = NL_P_BOOL (p, BN_CENTER);
  a->scale = NL_P_BOOL (p, BN_SCALE);
  a->use_global_stats = NL_P_BOOL (p, BN_USE_GLOBAL_STATS);
}

static gboolean
infer (NlInferCtx *c, GError **error)
{
  const NlShape *in = &c->in[0];
  int64_t axis = NL_P_INT (c->p, BN_AXIS);
  NlShape ch = { .ndim = 1 };
  char buf[96];

  if (in->ndim < 2)
    return nl_op_shape_error (error, "BatchNorm needs an input of at least 2 dims (N, C, ...) but got %s",
                              nl_shape_format (in, buf, sizeof buf));
  if (axis < 0)
    axis += in->ndim;
  if (axis != 1)
    return nl_op_shape_error (error, "BatchNorm supports only the channel axis 1, but axis is %" G_GINT64_FORMAT
                              " for input %s", NL_P_INT (c->p, BN_AXIS), nl_shape_format (in, buf, sizeof buf));
  ch.d[0] = in->d[1];
  c->weights[BN_GAMMA] = NL_P_BOOL (c->p, BN_SCALE) ? ch : NL_SHAPE_ABSENT;
  c->weights[BN_BETA] = NL_P_BOOL (c->p, BN_CENTER) ? ch : NL_SHAPE_ABSENT;
  c->aux[BN_RUNNING_MEAN] = c->aux[BN_RUNNING_VAR] = ch;
  c->saved[BN_SAVED_MEAN] = c->saved[BN_SAVED_INVSTD] = ch;
  c->out[0] = *in;
  return TRUE;
}

static void
init_aux (NlTensor *const *aux, const NlParamValue *p)
{
  nl_tensor_fill (aux[BN_RUNNING_MEAN], 0.0f);
  nl_tensor_fill (aux[BN_RUNNING_VAR], 1.0f);
}

static const char *const inputs[] = { "data" };
static const char *const weights[] = { "gamma", "beta" };
static const NlInitHint weight_init[] = { NL_INIT_ONES, NL_INIT_ZEROS };
static const char *const aux[] = { "running_mean", "running_var" };

const NlOpDef nl_op_batch_norm = {
  .name = "BatchNorm",
  .category = "Normalization",
  .doc = "Normalise each channel over the batch, then scale by gamma and shift by beta",
  .params = params,
  .n_params = BN_N,
  .inputs = inputs,
  .n_inputs = 1,
  .weights = weights,
  .weight_init = weight_init,
  .n_weights = 2,
  .aux = aux,
  .n_aux = 2,
  .n_saved = 2, /* batch mean, inverse std */
  .n_outputs = 1,
  .needs = NL_NEEDS_INPUTS | NL_NEEDS_WEIGHTS,
  .args_size = sizeof (NlBatchNormArgs),
  .resolve_args = resolve,
  .infer_shape = infer,
  .init_aux = init_aux,
};
