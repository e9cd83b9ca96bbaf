/* positional.c — PositionalEmbedding's definition: adds each step's
 * position vector, learned or the Transformer's sinusoids (kernels:
 * ops/cpu/positional.c, ops/cuda/positional.cu). */
#include "ops/nl-positional.h"

static const char *const modes[] = { "learned", "sinusoidal", NULL };

static const NlParamSpec params[POS_N] = {
  [POS_MODE] = { "mode", NL_PARAM_ENUM, NL_POS_LEARNED, 1, 0, modes, FALSE,
                 "learned: a trained vector per position; sinusoidal: fixed sines and cosines of the "
                 "position (no weights)" },
  [POS_MAX_LENGTH] = { "max_length", NL_PARAM_INT, 512, 1, 1e9, NULL, FALSE,
                       "Longest sequence it accepts (the learned table's rows)" },
};

static void
resolve (const NlParamValue *p, void *args)
{
  NlPositionalArgs *a = args;
  a->mode = (NlPositionalMode) NL_P_ENUM (p, POS_MODE);
  a->max_length = NL_P_INT (p, POS_MAX_LENGTH);
}

static gboolean
infer (NlInferCtx *c, GError **error)
{
  const NlShape *in = &c->in[0];
  int64_t max_len = NL_P_INT (c->p, POS_MAX_LENGTH);
  char buf[96];

  if (in->ndim != 3)
    return nl_op_shape_error (error, "PositionalEmbedding needs (batch, steps, channels), got %s",
                              nl_shape_format (in, buf, sizeof buf));
  if (in->d[1] > max_len)
    return nl_op_shape_error (error, "PositionalEmbedding got %" G_GINT64_FORMAT " steps but max_length is %"
                              G_GINT64_FORMAT, in->d[1], max_len);
  c->weights[0] = NL_P_ENUM (c->p, POS_MODE) == NL_POS_LEARNED ? nl_shape_of (2, max_len, in->d[2])
                                                               : NL_SHAPE_ABSENT;
  c->out[0] = *in;
  return TRUE;
}

static const char *const inputs[] = { "data" };
static const char *const weights[] = { "weight" };
static const NlInitHint weight_init[] = { NL_INIT_NORMAL };

const NlOpDef nl_op_positional_embedding = {
  .name = "PositionalEmbedding",
  .category = "Sequence",
  .doc = "Adds a vector per position to a (batch, steps, channels) sequence; padded steps output 0",
  .params = params,
  .n_params = POS_N,
  .inputs = inputs,
  .n_inputs = 1,
  .weights = weights,
  .weight_init = weight_init,
  .n_weights = 1,
  .n_outputs = 1,
  .needs = NL_NEEDS_NOTHING,
  .uses_lengths = TRUE,
  .args_size = sizeof (NlPositionalArgs),
  .resolve_args = resolve,
  .infer_shape = infer,
};
