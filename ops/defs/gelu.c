/* gelu.c — GELU's definition (kernels: ops/cpu/gelu.c, ops/cuda/gelu.cu;
 * the formulas: ops/nl-gelu.h). */
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
  c->out[0] = c->in[0];
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
};
