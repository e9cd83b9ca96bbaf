/* softmax.c — Softmax's and LogSoftmax's definitions (kernels:
 * ops/cpu/softmax.c, ops/cuda/softmax.cu). */
#include "ops/nl-softmax.h"

static const NlParamSpec params[SOFTMAX_N] = {
  [SOFTMAX_AXIS] = { "axis", NL_PARAM_INT, -1, -NL_MAX_DIMS, NL_MAX_DIMS - 1, NULL, FALSE,
                     "Axis to normalise over; negative counts from the end (-1 = last)" },
};

static void
resolve (const NlParamValue *p, void *args)
{
  NlSoftmaxArgs *a = args;
  a->axis = (int) NL_P_INT (p, SOFTMAX_AXIS);
}

static gboolean
infer_common (NlInferCtx *c, const char *op, GError **error)
{
  int axis;
  char buf[96];

  axis = nl_softmax_axis ((int) NL_P_INT (c->p, SOFTMAX_AXIS), c->in[0].ndim);
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
};
