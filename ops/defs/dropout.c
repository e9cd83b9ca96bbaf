/* dropout.c — Dropout's definition (kernels: ops/cpu/dropout.c,
 * ops/cuda/dropout.cu). */
#include "ops/nl-dropout.h"

static const NlParamSpec params[DROPOUT_N] = {
  [DROPOUT_RATE] = { "rate", NL_PARAM_FLOAT, 0.5, 0, 0.999, NULL, FALSE,
                     "Fraction of elements dropped during training" },
};

static void
resolve (const NlParamValue *p, void *args)
{
  NlDropoutArgs *a = args;
  a->rate = NL_P_FLOAT (p, DROPOUT_RATE);
}

static gboolean
infer (NlInferCtx *c, GError **error)
{
  c->out[0] = c->in[0];
  /* the mask; allocated in predict mode too, so one plan serves both modes */
  c->saved[0] = c->in[0];
  return TRUE;
}

static const char *const inputs[] = { "data" };

const NlOpDef nl_op_dropout = {
  .name = "Dropout",
  .category = "Core",
  .doc = "Randomly zero elements during training (inverted dropout)",
  .params = params,
  .n_params = DROPOUT_N,
  .inputs = inputs,
  .n_inputs = 1,
  .n_saved = 1,
  .n_outputs = 1,
  .needs = NL_NEEDS_NOTHING,
  .inplace = TRUE,
  .backward_inplace = TRUE,
  .args_size = sizeof (NlDropoutArgs),
  .resolve_args = resolve,
  .infer_shape = infer,
};
