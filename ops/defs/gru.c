/* gru.c — GRU's definition: LSTM's parameters plus the variant
 * (ops/defs/lstm.c holds the shared parts; layouts: ops/nl-rnn.h). */
#include "ops/nl-rnn.h"

extern const NlParamSpec nl_gru_params[RNN_N];
extern const char *const nl_rnn_inputs[];
extern const char *const nl_rnn_weights[];
extern const NlInitHint nl_rnn_weight_init[];

static void
resolve (const NlParamValue *p, void *args)
{
  NlRnnArgs *a = args;
  nl_rnn_resolve_common (p, a);
  a->cell = NL_P_ENUM (p, RNN_VARIANT) == NL_GRU_CLASSIC ? NL_RNN_GRU_CLASSIC : NL_RNN_GRU;
}

static gboolean
infer (NlInferCtx *c, GError **error)
{
  return nl_rnn_infer (c, NL_RNN_GRU, error);
}

const NlOpDef nl_op_gru = {
  .name = "GRU",
  .category = "Sequence",
  .doc = "Gated recurrent unit layers over (batch, steps, features), gates r, z, n as in PyTorch",
  .params = nl_gru_params,
  .n_params = RNN_N,
  .inputs = nl_rnn_inputs,
  .n_inputs = 2,
  .min_inputs = 1,
  .weights = nl_rnn_weights,
  .weight_init = nl_rnn_weight_init,
  .n_weights = RNN_N_WEIGHTS,
  .n_outputs = 1,
  .needs = NL_NEEDS_INPUTS | NL_NEEDS_WEIGHTS,
  .uses_lengths = TRUE,
  .args_size = sizeof (NlRnnArgs),
  .resolve_args = resolve,
  .infer_shape = infer,
  .macs = nl_rnn_macs,
};
