/* activation.c — Activation's, LeakyReLU's, Clip's, PReLU's and Shrink's definitions (kernels:
 * ops/cpu/activation.c, ops/cuda/activation.cu; the formulas:
 * ops/nl-activation.h). */
#include "ops/nl-activation.h"

/* elementwise: the output is shaped like the input */
static gboolean
infer_unary (NlInferCtx *c, GError **error)
{
  c->out[0] = c->in[0];
  return TRUE;
}

/* ---- Activation ---- */

static const char *const act_types[] = { "relu",     "sigmoid",     "tanh",      "softrelu", "elu",
                                         "selu",     "silu",        "mish",      "softsign", "hardsigmoid",
                                         "hardswish", "relu6",      "hardtanh",  "logsigmoid", "tanhshrink",
                                         NULL };

static const NlParamSpec act_params[P_ACT_N] = {
  [P_ACT_TYPE] = { "act_type", NL_PARAM_ENUM, ACT_RELU, 1, 0, act_types, FALSE,
                   "Nonlinearity: relu, sigmoid, tanh, softrelu (log(1 + exp(x))), elu (alpha 1), selu, "
                   "silu (x sigmoid(x)), mish (x tanh(softrelu(x))), softsign (x / (1 + |x|)), hardsigmoid "
                   "(x / 6 + 1/2 clipped to [0, 1]), hardswish (x hardsigmoid(x)), relu6, hardtanh (clip to "
                   "[-1, 1]), logsigmoid or tanhshrink (x - tanh(x))" },
};

static void
act_resolve (const NlParamValue *p, void *args)
{
  NlActivationArgs *a = args;
  a->act_type = NL_P_ENUM (p, P_ACT_TYPE);
}

/* silu, mish, hardswish and tanhshrink differentiate from the input (and
 * so never overwrite it); the rest from the output */
static NlBackwardNeeds
act_needs (const NlParamValue *p)
{
  return act_needs_input (NL_P_ENUM (p, P_ACT_TYPE)) ? NL_NEEDS_INPUTS : NL_NEEDS_OUTPUTS;
}

static const char *const data_input[] = { "data" };

const NlOpDef nl_op_activation = {
  .name = "Activation",
  .category = "Activation",
  .doc = "Elementwise nonlinearity (relu, sigmoid, tanh, softrelu, elu, selu, silu, mish ...)",
  .params = act_params,
  .n_params = P_ACT_N,
  .inputs = data_input,
  .n_inputs = 1,
  .n_outputs = 1,
  .needs = NL_NEEDS_OUTPUTS,
  .needs_for = act_needs,
  .inplace = TRUE,
  .backward_inplace = TRUE,
  .args_size = sizeof (NlActivationArgs),
  .resolve_args = act_resolve,
  .infer_shape = infer_unary,
};

/* ---- LeakyReLU ---- */

static const NlParamSpec leaky_params[P_LEAKY_N] = {
  [P_ALPHA] = { "alpha", NL_PARAM_FLOAT, 0.01, 0, 1e18, NULL, FALSE,
                "Slope for negative inputs: y = alpha * x when x < 0" },
};

static void
leaky_resolve (const NlParamValue *p, void *args)
{
  NlLeakyReluArgs *a = args;
  a->alpha = NL_P_FLOAT (p, P_ALPHA);
}

const NlOpDef nl_op_leaky_relu = {
  .name = "LeakyReLU",
  .category = "Activation",
  .doc = "ReLU with a small slope alpha for negative inputs",
  .params = leaky_params,
  .n_params = P_LEAKY_N,
  .inputs = data_input,
  .n_inputs = 1,
  .n_outputs = 1,
  .needs = NL_NEEDS_OUTPUTS,
  .inplace = TRUE,
  .backward_inplace = TRUE,
  .args_size = sizeof (NlLeakyReluArgs),
  .resolve_args = leaky_resolve,
  .infer_shape = infer_unary,
};

/* ---- Clip ---- */

static const NlParamSpec clip_params[P_CLIP_N] = {
  [P_CLIP_MIN] = { "min", NL_PARAM_FLOAT, -1, -1e18, 1e18, NULL, FALSE, "Lower bound: y = max(x, min)" },
  [P_CLIP_MAX] = { "max", NL_PARAM_FLOAT, 1, -1e18, 1e18, NULL, FALSE, "Upper bound: y = min(x, max)" },
};

static void
clip_resolve (const NlParamValue *p, void *args)
{
  NlClipArgs *a = args;
  a->lo = NL_P_FLOAT (p, P_CLIP_MIN);
  a->hi = NL_P_FLOAT (p, P_CLIP_MAX);
}

static gboolean
clip_infer (NlInferCtx *c, GError **error)
{
  if (NL_P_FLOAT (c->p, P_CLIP_MIN) > NL_P_FLOAT (c->p, P_CLIP_MAX))
    return nl_op_shape_error (error, "Clip: min %g is above max %g", NL_P_FLOAT (c->p, P_CLIP_MIN),
                              NL_P_FLOAT (c->p, P_CLIP_MAX));
  return infer_unary (c, error);
}

const NlOpDef nl_op_clip = {
  .name = "Clip",
  .category = "Activation",
  .doc = "Clamps every value into [min, max] (Hardtanh, ReLU6 with other bounds)",
  .params = clip_params,
  .n_params = P_CLIP_N,
  .inputs = data_input,
  .n_inputs = 1,
  .n_outputs = 1,
  .needs = NL_NEEDS_OUTPUTS,
  .inplace = TRUE,
  .backward_inplace = TRUE,
  .args_size = sizeof (NlClipArgs),
  .resolve_args = clip_resolve,
  .infer_shape = clip_infer,
};

/* ---- PReLU ---- */

/* one slope per channel: axis 1 of an input of at least 2 dims */
static gboolean
prelu_infer (NlInferCtx *c, GError **error)
{
  char buf[96];
  if (c->in[0].ndim < 2 || c->in[0].d[1] < 1)
    return nl_op_shape_error (error, "PReLU needs an input with channels on axis 1, (N, C, ...), but got %s",
                              nl_shape_format (&c->in[0], buf, sizeof buf));
  c->weights[0] = nl_shape_of (1, c->in[0].d[1]);
  return infer_unary (c, error);
}

static const char *const prelu_weights[] = { "alpha" };
/* zeros: it starts as a ReLU (PyTorch starts at 0.25) */
static const NlInitHint prelu_init[] = { NL_INIT_ZEROS };

const NlOpDef nl_op_prelu = {
  .name = "PReLU",
  .category = "Activation",
  .doc = "ReLU with a learned slope per channel for negative inputs: y = alpha[c] * x when x < 0",
  .inputs = data_input,
  .n_inputs = 1,
  .weights = prelu_weights,
  .weight_init = prelu_init,
  .n_weights = 1,
  .n_outputs = 1,
  .needs = NL_NEEDS_INPUTS | NL_NEEDS_WEIGHTS,
  .backward_inplace = TRUE,
  .infer_shape = prelu_infer,
};

/* ---- Shrink ---- */

static const NlParamSpec shrink_params[P_SHRINK_N] = {
  [P_SHRINK_LAMBD] = { "lambd", NL_PARAM_FLOAT, 0.5, 0, 1e18, NULL, FALSE,
                       "Half-width of the band around 0 that maps to 0" },
  [P_SHRINK_BIAS] = { "bias", NL_PARAM_FLOAT, 0.5, -1e18, 1e18, NULL, FALSE,
                      "Moved towards 0 outside the band: lambd for Softshrink, 0 for Hardshrink" },
};

static void
shrink_resolve (const NlParamValue *p, void *args)
{
  NlShrinkArgs *a = args;
  a->lambd = NL_P_FLOAT (p, P_SHRINK_LAMBD);
  a->bias = NL_P_FLOAT (p, P_SHRINK_BIAS);
}

const NlOpDef nl_op_shrink = {
  .name = "Shrink",
  .category = "Activation",
  .doc = "0 for |x| <= lambd, else x moved towards 0 by bias (Softshrink, Hardshrink)",
  .params = shrink_params,
  .n_params = P_SHRINK_N,
  .inputs = data_input,
  .n_inputs = 1,
  .n_outputs = 1,
  .needs = NL_NEEDS_INPUTS,
  .inplace = TRUE,
  .backward_inplace = TRUE,
  .args_size = sizeof (NlShrinkArgs),
  .resolve_args = shrink_resolve,
  .infer_shape = infer_unary,
};
