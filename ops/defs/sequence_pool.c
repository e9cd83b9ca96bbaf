/* sequence_pool.c — SequencePool's definition: one vector per sequence
 * from its valid steps (kernels: ops/cpu/sequence_pool.c,
 * ops/cuda/sequence_pool.cu). */
#include "ops/nl-sequence-pool.h"

static const char *const modes[] = { "last", "mean", "max", NULL };

static const NlParamSpec params[SEQPOOL_N] = {
  [SEQPOOL_MODE] = { "mode", NL_PARAM_ENUM, NL_SEQPOOL_MEAN, 1, 0, modes, FALSE,
                     "last: the last valid step; mean: the mean of the valid steps; max: their "
                     "per-channel maximum (padding never counts)" },
};

static void
resolve (const NlParamValue *p, void *args)
{
  ((NlSequencePoolArgs *) args)->mode = (NlSequencePoolMode) NL_P_ENUM (p, SEQPOOL_MODE);
}

static gboolean
infer (NlInferCtx *c, GError **error)
{
  const NlShape *in = &c->in[0];
  char buf[96];

  if (in->ndim != 3)
    return nl_op_shape_error (error, "SequencePool needs (batch, steps, channels), got %s",
                              nl_shape_format (in, buf, sizeof buf));
  c->out[0] = nl_shape_of (2, in->d[0], in->d[2]);
  return TRUE;
}

static const char *const inputs[] = { "data" };

const NlOpDef nl_op_sequence_pool = {
  .name = "SequencePool",
  .category = "Sequence",
  .doc = "Pools a (batch, steps, channels) sequence to (batch, channels) over each sample's valid steps",
  .params = params,
  .n_params = SEQPOOL_N,
  .inputs = inputs,
  .n_inputs = 1,
  .n_outputs = 1,
  .needs = NL_NEEDS_INPUTS,
  .uses_lengths = TRUE,
  .args_size = sizeof (NlSequencePoolArgs),
  .resolve_args = resolve,
  .infer_shape = infer,
};
