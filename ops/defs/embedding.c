/* embedding.c — Embedding's definition: a lookup of rows of a learnable
 * table by integer indices (kernels: ops/cpu/embedding.c,
 * ops/cuda/embedding.cu). */
#include <string.h>

#include "ops/nl-embedding.h"

static const NlParamSpec params[EMB_N] = {
  [EMB_INPUT_DIM] = { "input_dim", NL_PARAM_INT, 0, 1, 1e18, NULL, TRUE,
                      "Vocabulary size: indices must lie in [0, input_dim)" },
  [EMB_OUTPUT_DIM] = { "output_dim", NL_PARAM_INT, 0, 1, 1e18, NULL, TRUE,
                       "Length of each embedding vector" },
  [EMB_PADDING_INDEX] = { "padding_index", NL_PARAM_INT, -1, -1, 1e18, NULL, FALSE,
                          "Index whose vector is always 0 and never trained (the <pad> token, 0 for "
                          "netloom's text data); -1: none" },
};

static void
resolve (const NlParamValue *p, void *args)
{
  NlEmbeddingArgs *a = args;
  a->input_dim = NL_P_INT (p, EMB_INPUT_DIM);
  a->output_dim = NL_P_INT (p, EMB_OUTPUT_DIM);
  a->padding_index = NL_P_INT (p, EMB_PADDING_INDEX);
}

static gboolean
infer (NlInferCtx *c, GError **error)
{
  const NlShape *in = &c->in[0];
  char buf[96];

  if (in->ndim + 1 > NL_MAX_DIMS)
    return nl_op_shape_error (error, "Embedding adds a dimension to its input %s, which would exceed the "
                              "limit of %d dimensions", nl_shape_format (in, buf, sizeof buf), NL_MAX_DIMS);
  if (NL_P_INT (c->p, EMB_PADDING_INDEX) >= NL_P_INT (c->p, EMB_INPUT_DIM))
    return nl_op_shape_error (error, "Embedding's padding_index %" G_GINT64_FORMAT " is not an index: input_dim is %"
                              G_GINT64_FORMAT, NL_P_INT (c->p, EMB_PADDING_INDEX), NL_P_INT (c->p, EMB_INPUT_DIM));
  c->weights[0] = nl_shape_of (2, NL_P_INT (c->p, EMB_INPUT_DIM), NL_P_INT (c->p, EMB_OUTPUT_DIM));
  c->out[0] = *in;
  c->out[0].d[in->ndim] = NL_P_INT (c->p, EMB_OUTPUT_DIM);
  c->out[0].ndim = in->ndim + 1;
  return TRUE;
}

/* The padding row starts at 0: forward never reads it, but an exported
 * model (a plain Gather) does. */
static void
init_weights (NlTensor *const *w, const NlParamValue *p)
{
  int64_t pad = NL_P_INT (p, EMB_PADDING_INDEX), dim = NL_P_INT (p, EMB_OUTPUT_DIM);
  if (w[0] && pad >= 0 && pad < NL_P_INT (p, EMB_INPUT_DIM))
    memset (nl_tensor_f32 (w[0]) + pad * dim, 0, dim * sizeof (float));
}

static const char *const inputs[] = { "data" };
static const char *const weights[] = { "weight" };
static const NlInitHint weight_init[] = { NL_INIT_NORMAL };

const NlOpDef nl_op_embedding = {
  .name = "Embedding",
  .category = "Core",
  .doc = "Map integer indices to learned vectors",
  .params = params,
  .n_params = EMB_N,
  .inputs = inputs,
  .n_inputs = 1,
  .weights = weights,
  .weight_init = weight_init,
  .n_weights = 1,
  .n_outputs = 1,
  .needs = NL_NEEDS_INPUTS,
  .no_grad_inputs = TRUE,
  .args_size = sizeof (NlEmbeddingArgs),
  .resolve_args = resolve,
  .infer_shape = infer,
  .init_weights = init_weights,
};
