/* dense.c — Dense's definition (Gluon's Dense, MXNet's FullyConnected):
 * y = x W^T + b with W (units, in_units) (kernels: ops/cpu/dense.c,
 * ops/cuda/dense.cu). */
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

static gboolean
infer (NlInferCtx *c, GError **error)
{
  const NlShape *in = &c->in[0];
  gboolean flatten = NL_P_BOOL (c->p, DENSE_FLATTEN);
  int64_t units = NL_P_INT (c->p, DENSE_UNITS);
  int64_t want = NL_P_INT (c->p, DENSE_IN_UNITS);
  int64_t rows, k;
  char buf[96];

  if (in->ndim < 1)
    return nl_op_shape_error (error, "Dense needs an input with at least one axis, got %s",
                              nl_shape_format (in, buf, sizeof buf));
  nl_dense_as_matrix (in, flatten, &rows, &k);
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
  .macs = nl_op_macs_per_weight_row,
};
