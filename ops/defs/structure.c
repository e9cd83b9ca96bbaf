/* structure.c — the definitions of the ops that move data without
 * arithmetic, and Add: Flatten, Reshape, Concat, Add, Transpose (kernels:
 * ops/cpu/structure.c, ops/cuda/structure.cu). */
#include "ops/nl-strided.h"
#include "ops/nl-structure.h"

static const char *const data_input[] = { "data" };

/* ---- Flatten ---- */

static gboolean
flatten_infer (NlInferCtx *c, GError **error)
{
  const NlShape *in = &c->in[0];
  int64_t rest = 1;

  if (in->ndim < 1)
    return nl_op_shape_error (error, "Flatten needs an input with a batch dimension, got a scalar");
  for (int i = 1; i < in->ndim; i++)
    rest *= in->d[i];
  c->out[0] = nl_shape_of (2, in->d[0], rest);
  return TRUE;
}

const NlOpDef nl_op_flatten = {
  .name = "Flatten",
  .category = "Structure",
  .doc = "Collapse every dimension after the batch: (N, d1, d2, ...) -> (N, d1*d2*...)",
  .inputs = data_input,
  .n_inputs = 1,
  .n_outputs = 1,
  .needs = NL_NEEDS_NOTHING,
  .inplace = TRUE,
  .infer_shape = flatten_infer,
};

/* ---- Reshape ---- */

static const NlParamSpec reshape_params[RESHAPE_N] = {
  [RESHAPE_SHAPE] = { "shape", NL_PARAM_SHAPE, 0, -1, 1e18, NULL, TRUE,
                      "Target shape including the batch dimension; 0 keeps that input dimension, "
                "one -1 is inferred, e.g. [0, -1]" },
};

static gboolean
reshape_infer (NlInferCtx *c, GError **error)
{
  const NlParamValue *s = &c->p[RESHAPE_SHAPE];
  const NlShape *in = &c->in[0];
  NlShape out = { .ndim = s->n };
  int infer_at = -1;
  int64_t known = 1;
  char ibuf[96], obuf[96];

  if (s->n < 1)
    return nl_op_shape_error (error, "Reshape needs a target shape");
  for (int i = 0; i < s->n; i++)
    {
      int64_t v = s->v[i];
      if (v == 0)
        {
          if (i >= in->ndim)
            return nl_op_shape_error (error, "Reshape: entry %d of the target shape is 0 (keep), but the "
                                      "input %s has no dimension %d", i,
                                      nl_shape_format (in, ibuf, sizeof ibuf), i);
          v = in->d[i];
        }
      else if (v == -1)
        {
          if (infer_at >= 0)
            return nl_op_shape_error (error, "Reshape: only one entry of the target shape may be -1");
          infer_at = i;
        }
      else if (v < 0)
        return nl_op_shape_error (error, "Reshape: target shape entry %" G_GINT64_FORMAT " is not allowed "
                                  "(use a size, 0 to keep or -1 to infer)", v);
      out.d[i] = v;
      if (i != infer_at)
        known *= v;
    }
  if (infer_at >= 0)
    {
      int64_t total = nl_shape_numel (in);
      if (known == 0 || total % known != 0)
        {
          out.d[infer_at] = -1;
          return nl_op_shape_error (error, "Reshape cannot turn input %s (%" G_GINT64_FORMAT " elements) into %s: "
                                    "%" G_GINT64_FORMAT " is not a multiple of %" G_GINT64_FORMAT,
                                    nl_shape_format (in, ibuf, sizeof ibuf), total,
                                    nl_shape_format (&out, obuf, sizeof obuf), total, known);
        }
      out.d[infer_at] = total / known;
    }
  if (nl_shape_numel (&out) != nl_shape_numel (in))
    return nl_op_shape_error (error, "Reshape cannot turn input %s (%" G_GINT64_FORMAT " elements) into %s "
                              "(%" G_GINT64_FORMAT " elements)",
                              nl_shape_format (in, ibuf, sizeof ibuf), nl_shape_numel (in),
                              nl_shape_format (&out, obuf, sizeof obuf), nl_shape_numel (&out));
  c->out[0] = out;
  return TRUE;
}

const NlOpDef nl_op_reshape = {
  .name = "Reshape",
  .category = "Structure",
  .doc = "Give the data a new shape with the same number of elements",
  .params = reshape_params,
  .n_params = RESHAPE_N,
  .inputs = data_input,
  .n_inputs = 1,
  .n_outputs = 1,
  .needs = NL_NEEDS_NOTHING,
  .inplace = TRUE,
  .infer_shape = reshape_infer,
};

/* ---- Concat ---- */

static const NlParamSpec concat_params[CONCAT_N] = {
  [CONCAT_DIM] = { "dim", NL_PARAM_INT, 1, -NL_MAX_DIMS, NL_MAX_DIMS - 1, NULL, FALSE,
                   "Dimension to join along (1 = channels); negative counts from the end" },
};

static void
concat_resolve (const NlParamValue *p, void *args)
{
  NlConcatArgs *a = args;
  a->dim = (int) NL_P_INT (p, CONCAT_DIM);
}

static gboolean
concat_infer (NlInferCtx *c, GError **error)
{
  const NlShape *first = &c->in[0];
  NlShape out;
  int dim;
  char abuf[96], bbuf[96];

  dim = concat_axis ((int) NL_P_INT (c->p, CONCAT_DIM), first->ndim);
  if (dim < 0 || dim >= first->ndim)
    return nl_op_shape_error (error, "Concat along dimension %d, but the inputs %s have only %d dimensions",
                              (int) NL_P_INT (c->p, CONCAT_DIM), nl_shape_format (first, abuf, sizeof abuf),
                              first->ndim);
  out = *first;
  for (int k = 1; k < c->n_data; k++)
    {
      const NlShape *s = &c->in[k];
      gboolean ok = s->ndim == first->ndim;
      for (int i = 0; ok && i < s->ndim; i++)
        ok = i == dim || s->d[i] == first->d[i];
      if (!ok)
        return nl_op_shape_error (error, "Concat along dimension %d needs inputs that agree in every other "
                                  "dimension, but input 1 is %s and input %d is %s", dim,
                                  nl_shape_format (first, abuf, sizeof abuf), k + 1,
                                  nl_shape_format (s, bbuf, sizeof bbuf));
      out.d[dim] += s->d[dim];
    }
  c->out[0] = out;
  return TRUE;
}

const NlOpDef nl_op_concat = {
  .name = "Concat",
  .category = "Structure",
  .doc = "Join inputs along one dimension (channels by default)",
  .params = concat_params,
  .n_params = CONCAT_N,
  .inputs = data_input,
  .n_inputs = 1,
  .variadic = TRUE,
  .n_outputs = 1,
  .needs = NL_NEEDS_NOTHING,
  .args_size = sizeof (NlConcatArgs),
  .resolve_args = concat_resolve,
  .infer_shape = concat_infer,
};

/* ---- Add ---- */

static gboolean
add_infer (NlInferCtx *c, GError **error)
{
  char abuf[96], bbuf[96];

  for (int k = 1; k < c->n_data; k++)
    if (!nl_shape_equal (&c->in[k], &c->in[0]))
      return nl_op_shape_error (error, "Add needs inputs of the same shape, but input 1 is %s and input %d is %s",
                                nl_shape_format (&c->in[0], abuf, sizeof abuf), k + 1,
                                nl_shape_format (&c->in[k], bbuf, sizeof bbuf));
  c->out[0] = c->in[0];
  return TRUE;
}

const NlOpDef nl_op_add = {
  .name = "Add",
  .category = "Structure",
  .doc = "Elementwise sum of inputs of equal shape (residual connections)",
  .inputs = data_input,
  .n_inputs = 1,
  .variadic = TRUE,
  .n_outputs = 1,
  .needs = NL_NEEDS_NOTHING,
  .inplace = TRUE,
  .infer_shape = add_infer,
};

/* ---- Transpose ---- */

static const NlParamSpec transpose_params[TRANSPOSE_N] = {
  [TRANSPOSE_AXES] = { "axes", NL_PARAM_SHAPE, 0, 0, NL_MAX_DIMS - 1, NULL, FALSE,
                       "Output dimension k is input dimension axes[k], the batch included and first, e.g. "
                       "[0, 2, 1] (default: the dimensions after the batch reversed)" },
};

static void
transpose_resolve (const NlParamValue *p, void *args)
{
  NlTransposeArgs *a = args;
  a->n = p[TRANSPOSE_AXES].n;
  for (int k = 0; k < a->n; k++)
    a->axes[k] = p[TRANSPOSE_AXES].v[k];
}

static gboolean
transpose_infer (NlInferCtx *c, GError **error)
{
  const NlShape *in = &c->in[0];
  NlTransposeArgs a;
  int64_t perm[NL_MAX_DIMS];
  gboolean seen[NL_MAX_DIMS] = { FALSE };
  char ibuf[96];

  transpose_resolve (c->p, &a);
  if (a.n > 0 && a.n != in->ndim)
    return nl_op_shape_error (error, "Transpose: axes has %d entries for the input %s of %d dimensions", a.n,
                              nl_shape_format (in, ibuf, sizeof ibuf), in->ndim);
  transpose_perm (&a, in->ndim, perm);
  for (int k = 0; k < in->ndim; k++)
    {
      if (perm[k] >= in->ndim || seen[perm[k]])
        return nl_op_shape_error (error, "Transpose: axes must name every dimension of the input %s once",
                                  nl_shape_format (in, ibuf, sizeof ibuf));
      seen[perm[k]] = TRUE;
    }
  if (in->ndim > 0 && perm[0] != 0)
    return nl_op_shape_error (error, "Transpose: the batch dimension stays first (axes[0] must be 0)");
  c->out[0].ndim = in->ndim;
  for (int k = 0; k < in->ndim; k++)
    c->out[0].d[k] = in->d[perm[k]];
  return TRUE;
}

const NlOpDef nl_op_transpose = {
  .name = "Transpose",
  .category = "Structure",
  .doc = "Reorder the dimensions after the batch, e.g. (N, T, C) -> (N, C, T)",
  .params = transpose_params,
  .n_params = TRANSPOSE_N,
  .inputs = data_input,
  .n_inputs = 1,
  .n_outputs = 1,
  .needs = NL_NEEDS_NOTHING,
  .args_size = sizeof (NlTransposeArgs),
  .resolve_args = transpose_resolve,
  .infer_shape = transpose_infer,
};
