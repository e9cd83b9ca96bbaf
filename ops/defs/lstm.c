/* lstm.c — LSTM's definition, and the shape inference GRU shares
 * (ops/defs/gru.c): a stack of recurrent layers over batch-first
 * sequences (B, T, C), PyTorch's nn.LSTM with batch_first (kernels:
 * ops/cpu/rnn.c, ops/cuda/rnn.cu; layouts: ops/nl-rnn.h). */
#include "ops/nl-rnn.h"

static const char *const merges[] = { "concat", "sum", NULL };
static const char *const outputs[] = { "all", "last", NULL };

#define RNN_COMMON_PARAMS                                                                                       \
  [RNN_UNITS] = { "units", NL_PARAM_INT, 0, 1, 1e6, NULL, TRUE, "Hidden units per layer and direction" },      \
  [RNN_LAYERS] = { "layers", NL_PARAM_INT, 1, 1, 8, NULL, FALSE,                                                \
                   "Stacked layers; each later layer reads the one before" },                                   \
  [RNN_BIDIRECTIONAL] = { "bidirectional", NL_PARAM_BOOL, 0, 0, 1, NULL, FALSE,                                 \
                          "Add a direction that reads each sequence backwards, within its own length" },        \
  [RNN_MERGE] = { "merge", NL_PARAM_ENUM, 0, 1, 0, merges, FALSE,                                               \
                  "How the output joins the two directions: concat (2 x units) or sum (units); "                \
                  "between layers they are always concatenated" },                                              \
  [RNN_DROPOUT] = { "dropout", NL_PARAM_FLOAT, 0, 0, 0.999, NULL, FALSE,                                        \
                    "Dropout rate on each layer's output but the last's, in training only" },                   \
  [RNN_OUTPUT] = { "output", NL_PARAM_ENUM, 0, 1, 0, outputs, FALSE,                                            \
                   "all: every step (B, T, features), padded steps 0; last: each direction's final state "      \
                   "(B, features): the forward one at the last valid step, the reverse one at step 0" }

static const NlParamSpec params[RNN_VARIANT] = { RNN_COMMON_PARAMS };

static const char *const variants[] = { "linear_before_reset", "classic", NULL };
const NlParamSpec nl_gru_params[RNN_N] = {
  RNN_COMMON_PARAMS,
  [RNN_VARIANT] = { "variant", NL_PARAM_ENUM, 0, 1, 0, variants, FALSE,
                    "linear_before_reset: n = tanh(W_in x + b_in + r * (W_hn h + b_hn)), the GRU of PyTorch "
                    "and cuDNN; classic: n = tanh(W_in x + b_in + W_hn (r * h) + b_hn), CPU only" },
};

void
nl_rnn_resolve_common (const NlParamValue *p, NlRnnArgs *a)
{
  a->cell = NL_RNN_LSTM;
  a->units = NL_P_INT (p, RNN_UNITS);
  a->layers = NL_P_INT (p, RNN_LAYERS);
  a->dirs = NL_P_BOOL (p, RNN_BIDIRECTIONAL) ? 2 : 1;
  a->merge_sum = NL_P_ENUM (p, RNN_MERGE) == NL_RNN_MERGE_SUM;
  a->last = NL_P_ENUM (p, RNN_OUTPUT) == NL_RNN_OUTPUT_LAST;
  a->dropout = NL_P_FLOAT (p, RNN_DROPOUT);
}

static void
resolve (const NlParamValue *p, void *args)
{
  nl_rnn_resolve_common (p, args);
}

gboolean
nl_rnn_infer (NlInferCtx *c, NlRnnCell cell, GError **error)
{
  const NlShape *in = &c->in[0];
  NlRnnArgs a;
  const char *name = cell == NL_RNN_LSTM ? "LSTM" : "GRU";
  int64_t gh, feat;
  char buf[96], buf2[96];

  nl_rnn_resolve_common (c->p, &a);
  a.cell = cell;
  if (in->ndim != 3 || in->d[1] < 1 || in->d[2] < 1)
    return nl_op_shape_error (error, "%s expects a sequence (batch, steps, features), got %s", name,
                              nl_shape_format (in, buf, sizeof buf));
  if (c->n_data > 1)
    {
      int64_t rows = nl_rnn_state_kinds (cell) * a.layers * a.dirs;
      NlShape want = nl_shape_of (3, in->d[0], rows, a.units);
      if (!nl_shape_equal (&c->in[1], &want))
        return nl_op_shape_error (error, "%s's state input must be %s (batch, %s, units), got %s", name,
                                  nl_shape_format (&want, buf, sizeof buf),
                                  cell == NL_RNN_LSTM ? "2 x layers x directions" : "layers x directions",
                                  nl_shape_format (&c->in[1], buf2, sizeof buf2));
    }
  gh = nl_rnn_gates (cell) * a.units;
  c->weights[RNN_W_L0_I2H] = nl_shape_of (2, a.dirs * gh, in->d[2]);
  c->weights[RNN_W_I2H] = a.layers > 1 ? nl_shape_of (2, (a.layers - 1) * a.dirs * gh, a.dirs * a.units)
                                       : NL_SHAPE_ABSENT;
  c->weights[RNN_W_H2H] = nl_shape_of (2, a.layers * a.dirs * gh, a.units);
  c->weights[RNN_B_I2H] = nl_shape_of (1, a.layers * a.dirs * gh);
  c->weights[RNN_B_H2H] = nl_shape_of (1, a.layers * a.dirs * gh);
  feat = a.merge_sum ? a.units : a.dirs * a.units;
  c->out[0] = a.last ? nl_shape_of (2, in->d[0], feat) : nl_shape_of (3, in->d[0], in->d[1], feat);
  return TRUE;
}

/* Per step: every weight once per sample. `last` outputs hide T, so they
 * count one step. */
int64_t
nl_rnn_macs (const NlShape *out, const NlShape *weights)
{
  int64_t steps = out->d[0] * (out->ndim == 3 ? out->d[1] : 1), n = 0;
  for (int k = RNN_W_L0_I2H; k <= RNN_W_H2H; k++)
    if (weights[k].ndim > 0)
      n += weights[k].d[0] * weights[k].d[1];
  return steps * n;
}

static gboolean
infer (NlInferCtx *c, GError **error)
{
  return nl_rnn_infer (c, NL_RNN_LSTM, error);
}

const char *const nl_rnn_inputs[] = { "data", "state" };
const char *const nl_rnn_weights[] = { "l0_i2h_weight", "i2h_weight", "h2h_weight", "i2h_bias", "h2h_bias" };
const NlInitHint nl_rnn_weight_init[] = { NL_INIT_XAVIER, NL_INIT_XAVIER, NL_INIT_XAVIER, NL_INIT_ZEROS,
                                          NL_INIT_ZEROS };

const NlOpDef nl_op_lstm = {
  .name = "LSTM",
  .category = "Sequence",
  .doc = "Long short-term memory layers over (batch, steps, features), gates i, f, g, o as in PyTorch",
  .params = params,
  .n_params = RNN_VARIANT,
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
