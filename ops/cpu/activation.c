/* activation.c — Activation (relu, sigmoid, tanh, softrelu) and LeakyReLU.
 *
 * Every backward here is written in terms of the output, so both ops declare
 * NL_NEEDS_OUTPUTS only and may run in place: sigmoid and tanh have the usual
 * closed forms, softrelu' = sigmoid(x) = 1 - exp(-y), and since alpha >= 0 the
 * sign of a LeakyReLU output is the sign of its input. ReLU runs on every
 * step of the benchmark, so its loops are kept branch-free and vectorisable.
 * `if (parallel: ...)` matters: a bare `if` on `parallel for simd` also
 * applies to the simd part, and GCC then runs small sizes unvectorised. */
#include "ops/cpu/nl-cpu-util.h"
#include "ops/nl-activation.h"

static gboolean
infer_unary (NlInferCtx *c, const char *op, GError **error)
{
  if (c->n_data != 1)
    return nl_op_shape_error (error, "%s takes exactly one input, but %d are connected", op, c->n_data);
  c->out[0] = c->in[0];
  return TRUE;
}

/* ---- Activation ---- */

static const char *const act_types[] = { "relu", "sigmoid", "tanh", "softrelu", NULL };

static const NlParamSpec act_params[P_ACT_N] = {
  [P_ACT_TYPE] = { "act_type", NL_PARAM_ENUM, ACT_RELU, 1, 0, act_types, FALSE,
                   "Nonlinearity: relu, sigmoid, tanh or softrelu (log(1 + exp(x)))" },
};

static void
act_resolve (const NlParamValue *p, void *args)
{
  NlActivationArgs *a = args;
  a->act_type = NL_P_ENUM (p, P_ACT_TYPE);
}

static gboolean
act_infer (NlInferCtx *c, GError **error)
{
  return infer_unary (c, "Activation", error);
}

static gboolean
act_forward (NlOpCtx *c, GError **error)
{
  const float *x = nl_tensor_f32 (c->in[0]);
  float *y = nl_tensor_f32 (c->out[0]);
  int64_t n = nl_numel (c->in[0]);

  switch (((const NlActivationArgs *) c->args)->act_type)
    {
    case ACT_RELU:
#pragma omp parallel for simd if (parallel: n > NL_PAR_MIN) schedule (static)
      for (int64_t i = 0; i < n; i++)
        y[i] = act_relu (x[i]);
      break;
    case ACT_SIGMOID:
#pragma omp parallel for if (n > NL_PAR_MIN / 8) schedule (static)
      for (int64_t i = 0; i < n; i++)
        y[i] = act_sigmoid (x[i]);
      break;
    case ACT_TANH:
#pragma omp parallel for if (n > NL_PAR_MIN / 8) schedule (static)
      for (int64_t i = 0; i < n; i++)
        y[i] = tanhf (x[i]);
      break;
    case ACT_SOFTRELU:
#pragma omp parallel for if (n > NL_PAR_MIN / 8) schedule (static)
      for (int64_t i = 0; i < n; i++)
        y[i] = act_softrelu (x[i]);
      break;
    }
  return TRUE;
}

static gboolean
act_backward (NlOpCtx *c, GError **error)
{
  const float *y = nl_tensor_f32 (c->out[0]);
  const float *dy = nl_tensor_f32 (c->out_grad[0]);
  float *dx;
  int64_t n = nl_numel (c->out[0]);

  if (!c->in_grad[0])
    return TRUE;
  dx = nl_tensor_f32 (c->in_grad[0]);
  switch (((const NlActivationArgs *) c->args)->act_type)
    {
    case ACT_RELU:
#pragma omp parallel for simd if (parallel: n > NL_PAR_MIN) schedule (static)
      for (int64_t i = 0; i < n; i++)
        dx[i] = act_relu_grad (y[i], dy[i]);
      break;
    case ACT_SIGMOID:
#pragma omp parallel for simd if (parallel: n > NL_PAR_MIN) schedule (static)
      for (int64_t i = 0; i < n; i++)
        dx[i] = act_sigmoid_grad (y[i], dy[i]);
      break;
    case ACT_TANH:
#pragma omp parallel for simd if (parallel: n > NL_PAR_MIN) schedule (static)
      for (int64_t i = 0; i < n; i++)
        dx[i] = act_tanh_grad (y[i], dy[i]);
      break;
    case ACT_SOFTRELU:
#pragma omp parallel for if (n > NL_PAR_MIN / 8) schedule (static)
      for (int64_t i = 0; i < n; i++)
        dx[i] = act_softrelu_grad (y[i], dy[i]);
      break;
    }
  return TRUE;
}

static const char *const data_input[] = { "data" };

const NlOpDef nl_op_activation = {
  .name = "Activation",
  .category = "Activation",
  .doc = "Elementwise nonlinearity (relu, sigmoid, tanh, softrelu)",
  .params = act_params,
  .n_params = P_ACT_N,
  .inputs = data_input,
  .n_inputs = 1,
  .n_outputs = 1,
  .needs = NL_NEEDS_OUTPUTS,
  .inplace = TRUE,
  .backward_inplace = TRUE,
  .args_size = sizeof (NlActivationArgs),
  .resolve_args = act_resolve,
  .infer_shape = act_infer,
  .forward = act_forward,
  .backward = act_backward,
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

static gboolean
leaky_infer (NlInferCtx *c, GError **error)
{
  return infer_unary (c, "LeakyReLU", error);
}

static gboolean
leaky_forward (NlOpCtx *c, GError **error)
{
  const float *x = nl_tensor_f32 (c->in[0]);
  float *y = nl_tensor_f32 (c->out[0]);
  int64_t n = nl_numel (c->in[0]);
  float alpha = ((const NlLeakyReluArgs *) c->args)->alpha;

#pragma omp parallel for simd if (parallel: n > NL_PAR_MIN) schedule (static)
  for (int64_t i = 0; i < n; i++)
    y[i] = leaky_relu (x[i], alpha);
  return TRUE;
}

static gboolean
leaky_backward (NlOpCtx *c, GError **error)
{
  const float *y = nl_tensor_f32 (c->out[0]);
  const float *dy = nl_tensor_f32 (c->out_grad[0]);
  float *dx;
  int64_t n = nl_numel (c->out[0]);
  float alpha = ((const NlLeakyReluArgs *) c->args)->alpha;

  if (!c->in_grad[0])
    return TRUE;
  dx = nl_tensor_f32 (c->in_grad[0]);
#pragma omp parallel for simd if (parallel: n > NL_PAR_MIN) schedule (static)
  for (int64_t i = 0; i < n; i++)
    dx[i] = leaky_relu_grad (y[i], dy[i], alpha);
  return TRUE;
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
  .infer_shape = leaky_infer,
  .forward = leaky_forward,
  .backward = leaky_backward,
};
