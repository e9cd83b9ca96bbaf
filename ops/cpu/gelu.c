/* gelu.c — GELU, x * Phi(x), exact (erf) or with the tanh approximation.
 * Backward needs the input: GELU is not monotone, so the output alone does
 * not determine the slope. */
#include "ops/cpu/nl-cpu-util.h"
#include "ops/nl-gelu.h"

static const char *const approximations[] = { "erf", "tanh", NULL };

static const NlParamSpec params[GELU_N] = {
  [GELU_APPROX] = { "approximation", NL_PARAM_ENUM, APPROX_ERF, 1, 0, approximations, FALSE,
                    "erf: exact x * Phi(x); tanh: the faster approximation used by BERT and GPT" },
};

static void
resolve (const NlParamValue *p, void *args)
{
  NlGeluArgs *a = args;
  a->approx = NL_P_ENUM (p, GELU_APPROX);
}

static gboolean
infer (NlInferCtx *c, GError **error)
{
  if (c->n_data != 1)
    return nl_op_shape_error (error, "GELU takes exactly one input, but %d are connected", c->n_data);
  c->out[0] = c->in[0];
  return TRUE;
}

static gboolean
forward (NlOpCtx *c, GError **error)
{
  const float *x = nl_tensor_f32 (c->in[0]);
  float *y = nl_tensor_f32 (c->out[0]);
  int64_t n = nl_numel (c->in[0]);

  if (((const NlGeluArgs *) c->args)->approx == APPROX_ERF)
    {
#pragma omp parallel for if (n > NL_PAR_MIN / 8) schedule (static)
      for (int64_t i = 0; i < n; i++)
        y[i] = gelu_erf (x[i]);
    }
  else
    {
#pragma omp parallel for if (n > NL_PAR_MIN / 8) schedule (static)
      for (int64_t i = 0; i < n; i++)
        y[i] = gelu_tanh (x[i]);
    }
  return TRUE;
}

static gboolean
backward (NlOpCtx *c, GError **error)
{
  const float *x = nl_tensor_f32 (c->in[0]);
  const float *dy = nl_tensor_f32 (c->out_grad[0]);
  float *dx;
  int64_t n = nl_numel (c->in[0]);

  if (!c->in_grad[0])
    return TRUE;
  dx = nl_tensor_f32 (c->in_grad[0]);
  if (((const NlGeluArgs *) c->args)->approx == APPROX_ERF)
    {
#pragma omp parallel for if (n > NL_PAR_MIN / 8) schedule (static)
      for (int64_t i = 0; i < n; i++)
        dx[i] = gelu_erf_grad (x[i], dy[i]);
    }
  else
    {
#pragma omp parallel for if (n > NL_PAR_MIN / 8) schedule (static)
      for (int64_t i = 0; i < n; i++)
        dx[i] = gelu_tanh_grad (x[i], dy[i]);
    }
  return TRUE;
}

static const char *const inputs[] = { "data" };

const NlOpDef nl_op_gelu = {
  .name = "GELU",
  .category = "Activation",
  .doc = "Gaussian error linear unit, x * Phi(x)",
  .params = params,
  .n_params = GELU_N,
  .inputs = inputs,
  .n_inputs = 1,
  .n_outputs = 1,
  .needs = NL_NEEDS_INPUTS,
  /* forward alone could run in place; a planner must not do so while the
     input is still needed for backward */
  .inplace = TRUE,
  .backward_inplace = TRUE,
  .args_size = sizeof (NlGeluArgs),
  .resolve_args = resolve,
  .infer_shape = infer,
  .forward = forward,
  .backward = backward,
};
