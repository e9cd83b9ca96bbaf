/* input.c — Input's definition: where data enters the network. The graph
 * binds the batch to its output; the op only checks the shape it is given
 * (kernels: ops/cpu/input.c, ops/cuda/input.cu). */
#include "ops/nl-input.h"

static const char *const lengths_values[] = { "full", "nonzero", NULL };

static const NlParamSpec params[INPUT_N] = {
  [INPUT_SHAPE] = { "shape", NL_PARAM_SHAPE, 0, 1, 1e18, NULL, FALSE,
                    "Shape of one sample, without the batch dimension, e.g. [1, 28, 28]" },
  [INPUT_LENGTHS] = { "lengths", NL_PARAM_ENUM, NL_INPUT_LENGTHS_FULL, 0, 1, lengths_values, FALSE,
                      "Sequence lengths for the sequence ops: full (every step is data) or nonzero "
                      "(a sample ends at its last non-zero step, as padded token ids do)" },
};

static gboolean
infer (NlInferCtx *c, GError **error)
{
  const NlParamValue *s = &c->p[INPUT_SHAPE];
  /* The graph passes the shape of the batch it will feed as in[0]. */
  if (s->n > 0)
    {
      gboolean ok = c->in[0].ndim == s->n + 1;
      for (int i = 0; ok && i < s->n; i++)
        ok = c->in[0].d[i + 1] == s->v[i];
      if (!ok)
        {
          char got[96];
          NlShape want = { .ndim = s->n };
          char wbuf[96];
          for (int i = 0; i < s->n; i++)
            want.d[i] = s->v[i];
          return nl_op_shape_error (error, "the data has samples of shape %s but Input expects %s",
                                    nl_shape_format (&(NlShape) { .ndim = c->in[0].ndim - 1,
                                                                  .d = { c->in[0].d[1], c->in[0].d[2], c->in[0].d[3],
                                                                         c->in[0].d[4], c->in[0].d[5] } },
                                                     got, sizeof got),
                                    nl_shape_format (&want, wbuf, sizeof wbuf));
        }
    }
  c->out[0] = c->in[0];
  return TRUE;
}

static const char *const inputs[] = { "data" };

const NlOpDef nl_op_input = {
  .name = "Input",
  .category = "Input",
  .doc = "A batch from the data pipeline",
  .params = params,
  .n_params = INPUT_N,
  .inputs = inputs,
  .n_inputs = 1,
  .n_outputs = 1,
  .no_backward = TRUE,
  .no_grad_inputs = TRUE,
  .inplace = TRUE,
  .infer_shape = infer,
};
