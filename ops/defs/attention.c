/* attention.c — MultiHeadAttention's definition: scaled dot-product
 * attention over `heads` heads with learned projections, PyTorch's
 * nn.MultiheadAttention with separate q/k/v weights (kernels:
 * ops/cpu/attention.c, ops/cuda/attention.cu). */
#include "ops/nl-attention.h"

static const NlParamSpec params[ATT_N] = {
  [ATT_HEADS] = { "heads", NL_PARAM_INT, 0, 1, 4096, NULL, TRUE,
                  "Number of attention heads, each with its own query, key and value projections" },
  [ATT_KEY_SIZE] = { "key_size", NL_PARAM_INT, 0, 0, 1e9, NULL, FALSE,
                     "Width of each head's queries, keys and values; 0: the query's channels / heads" },
  [ATT_UNITS] = { "units", NL_PARAM_INT, 0, 0, 1e9, NULL, FALSE,
                  "Output channels; 0: the query's channels" },
  [ATT_DROPOUT] = { "dropout", NL_PARAM_FLOAT, 0, 0, 0.99, NULL, FALSE,
                    "Probability of dropping each attention weight while training" },
  [ATT_CAUSAL] = { "causal", NL_PARAM_BOOL, 0, 0, 1, NULL, FALSE,
                   "Each step sees only itself and earlier steps (a language model's mask)" },
  [ATT_USE_BIAS] = { "use_bias", NL_PARAM_BOOL, 1, 0, 1, NULL, FALSE,
                     "Add learnable biases to the four projections" },
};

static void
resolve (const NlParamValue *p, void *args)
{
  NlAttentionArgs *a = args;
  a->heads = NL_P_INT (p, ATT_HEADS);
  a->key_size = NL_P_INT (p, ATT_KEY_SIZE);
  a->units = NL_P_INT (p, ATT_UNITS);
  a->dropout = NL_P_FLOAT (p, ATT_DROPOUT);
  a->causal = NL_P_BOOL (p, ATT_CAUSAL);
  a->use_bias = NL_P_BOOL (p, ATT_USE_BIAS);
}

static gboolean
infer (NlInferCtx *c, GError **error)
{
  const NlShape *q = &c->in[0];
  const NlShape *m = c->n_data > 1 ? &c->in[1] : q;
  int64_t heads = NL_P_INT (c->p, ATT_HEADS), ks = NL_P_INT (c->p, ATT_KEY_SIZE);
  int64_t units = NL_P_INT (c->p, ATT_UNITS), C, hk;
  gboolean bias = NL_P_BOOL (c->p, ATT_USE_BIAS);
  char sq[96], sm[96];

  if (q->ndim != 3 || m->ndim != 3)
    return nl_op_shape_error (error, "MultiHeadAttention needs (batch, steps, channels) inputs, got query %s "
                              "and memory %s", nl_shape_format (q, sq, sizeof sq), nl_shape_format (m, sm, sizeof sm));
  if (m->d[0] != q->d[0])
    return nl_op_shape_error (error, "MultiHeadAttention's memory %s has another batch size than its query %s",
                              nl_shape_format (m, sm, sizeof sm), nl_shape_format (q, sq, sizeof sq));
  C = q->d[2];
  if (ks == 0)
    {
      if (C % heads != 0)
        return nl_op_shape_error (error, "MultiHeadAttention: the query's %" G_GINT64_FORMAT " channels do not "
                                  "split into %" G_GINT64_FORMAT " heads; set key_size", C, heads);
      ks = C / heads;
    }
  hk = heads * ks;
  units = units ? units : C;
  c->weights[ATT_Q_WEIGHT] = nl_shape_of (2, hk, C);
  c->weights[ATT_K_WEIGHT] = nl_shape_of (2, hk, m->d[2]);
  c->weights[ATT_V_WEIGHT] = nl_shape_of (2, hk, m->d[2]);
  c->weights[ATT_OUT_WEIGHT] = nl_shape_of (2, units, hk);
  for (int k = ATT_Q_BIAS; k <= ATT_V_BIAS; k++)
    c->weights[k] = bias ? nl_shape_of (1, hk) : NL_SHAPE_ABSENT;
  c->weights[ATT_OUT_BIAS] = bias ? nl_shape_of (1, units) : NL_SHAPE_ABSENT;
  c->saved[ATT_SAVED_PROBS] = nl_shape_of (4, q->d[0], heads, q->d[1], m->d[1]);
  c->saved[ATT_SAVED_PROJ] = nl_shape_of (1, q->d[0] * (2 * q->d[1] + 2 * m->d[1]) * hk);
  c->out[0] = nl_shape_of (3, q->d[0], q->d[1], units);
  return TRUE;
}

/* Per sample: the four projections and the two products per head. The
 * memory's length is not in the shapes this sees: S = T (self-attention). */
static int64_t
macs (const NlShape *out, const NlShape *w)
{
  int64_t B = out->d[0], T = out->d[1], hk = w[ATT_Q_WEIGHT].d[0];
  int64_t C = w[ATT_Q_WEIGHT].d[1], Cm = w[ATT_K_WEIGHT].d[1], units = w[ATT_OUT_WEIGHT].d[0];
  return B * T * (hk * C + 2 * hk * Cm + 2 * T * hk + units * hk);
}

static const char *const inputs[] = { "query", "memory" };
static const char *const weights[] = { "q_weight", "k_weight", "v_weight", "out_weight",
                                       "q_bias", "k_bias", "v_bias", "out_bias" };
static const NlInitHint weight_init[] = { NL_INIT_XAVIER, NL_INIT_XAVIER, NL_INIT_XAVIER, NL_INIT_XAVIER,
                                          NL_INIT_ZEROS, NL_INIT_ZEROS, NL_INIT_ZEROS, NL_INIT_ZEROS };

const NlOpDef nl_op_multi_head_attention = {
  .name = "MultiHeadAttention",
  .category = "Sequence",
  .doc = "Multi-head scaled dot-product attention; memory (optional) gives the keys and values. Padding "
         "steps (the Input's lengths) are masked in the keys, and in the memory when it is as long as the "
         "query (a memory of another length is not masked); padded query steps output 0. Keeps "
         "batch x heads x steps x memory steps floats for backward",
  .params = params,
  .n_params = ATT_N,
  .inputs = inputs,
  .n_inputs = 2,
  .min_inputs = 1,
  .weights = weights,
  .weight_init = weight_init,
  .n_weights = ATT_N_WEIGHTS,
  .n_saved = ATT_N_SAVED,
  .n_outputs = 1,
  .needs = NL_NEEDS_INPUTS | NL_NEEDS_WEIGHTS,
  .uses_lengths = TRUE,
  .args_size = sizeof (NlAttentionArgs),
  .resolve_args = resolve,
  .infer_shape = infer,
  .macs = macs,
};
