/* arith.c — Mul's and Sub's definitions: two inputs of one shape, or one
 * input and a learnable-free constant operand (kernels: ops/cpu/arith.c,
 * ops/cuda/arith.cu). */
#include "ops/nl-arith.h"

static const char *const data_input[] = { "data" };
static const char *const operand_aux[] = { "operand" };

static const NlParamSpec mul_params[ARITH_N - 1] = {
  [ARITH_OPERAND_SHAPE] = { "operand_shape", NL_PARAM_SHAPE, 0, 1, 1e18, NULL, FALSE,
                            "With one input: the shape of the constant it is multiplied by, broadcast over "
                            "the input from its last dimension, e.g. [3, 1, 1] per channel (default: a scalar)" },
};

static const NlParamSpec sub_params[ARITH_N] = {
  [ARITH_OPERAND_SHAPE] = { "operand_shape", NL_PARAM_SHAPE, 0, 1, 1e18, NULL, FALSE,
                            "With one input: the shape of the constant it subtracts, broadcast over the input "
                            "from its last dimension, e.g. [3, 1, 1] per channel (default: a scalar)" },
  [ARITH_REVERSE] = { "reverse", NL_PARAM_BOOL, 0, 0, 1, NULL, FALSE,
                      "With one input: the constant minus the input instead" },
};

static void
sub_resolve (const NlParamValue *p, void *args)
{
  NlArithArgs *a = args;
  a->reverse = NL_P_BOOL (p, ARITH_REVERSE);
}

static gboolean
arith_infer (NlInferCtx *c, const char *op, gboolean has_reverse, GError **error)
{
  const NlParamValue *os = &c->p[ARITH_OPERAND_SHAPE];
  const NlShape *x = &c->in[0];
  char abuf[96], bbuf[96];

  if (c->n_data == 2)
    {
      if (os->n > 0 || (has_reverse && NL_P_BOOL (c->p, ARITH_REVERSE)))
        return nl_op_shape_error (error, "%s of two inputs takes no constant operand (operand_shape%s are for "
                                  "one input)", op, has_reverse ? ", reverse" : "");
      if (!nl_shape_equal (&c->in[1], x))
        return nl_op_shape_error (error, "%s needs inputs of the same shape, but input 1 is %s and input 2 is %s",
                                  op, nl_shape_format (x, abuf, sizeof abuf),
                                  nl_shape_format (&c->in[1], bbuf, sizeof bbuf));
      c->out[0] = *x;
      return TRUE;
    }
  {
    NlShape s = { .ndim = os->n > 0 ? os->n : 1, .d = { 1 } };
    for (int k = 0; k < os->n; k++)
      s.d[k] = os->v[k];
    if (s.ndim > x->ndim || (s.ndim == x->ndim && s.d[0] != 1))
      return nl_op_shape_error (error, "%s: the constant operand %s would span the batch dimension of the "
                                "input %s (give it fewer dimensions)", op, nl_shape_format (&s, abuf, sizeof abuf),
                                nl_shape_format (x, bbuf, sizeof bbuf));
    for (int k = 0; k < s.ndim; k++)
      {
        int64_t want = x->d[x->ndim - s.ndim + k];
        if (s.d[k] != 1 && s.d[k] != want)
          return nl_op_shape_error (error, "%s: the constant operand %s does not broadcast over the input %s "
                                    "(each of its dimensions, aligned at the last, must be 1 or the input's)",
                                    op, nl_shape_format (&s, abuf, sizeof abuf),
                                    nl_shape_format (x, bbuf, sizeof bbuf));
      }
    c->aux[ARITH_OPERAND] = s;
  }
  c->out[0] = *x;
  return TRUE;
}

static gboolean
mul_infer (NlInferCtx *c, GError **error)
{
  return arith_infer (c, "Mul", FALSE, error);
}

static gboolean
sub_infer (NlInferCtx *c, GError **error)
{
  return arith_infer (c, "Sub", TRUE, error);
}

/* Mul's constant starts at 1 (the identity); Sub's at 0 (the default). */
static void
mul_init_aux (NlTensor *const *aux, const NlParamValue *p)
{
  if (aux[ARITH_OPERAND])
    {
      float *v = nl_tensor_f32 (aux[ARITH_OPERAND]);
      for (int64_t i = 0; i < nl_tensor_numel (aux[ARITH_OPERAND]); i++)
        v[i] = 1.0f;
    }
}

const NlOpDef nl_op_mul = {
  .name = "Mul",
  .category = "Structure",
  .doc = "Elementwise product of two inputs of equal shape, or of one input and a constant (a fixed scale)",
  .params = mul_params,
  .n_params = ARITH_N - 1,
  .inputs = data_input,
  .n_inputs = 1,
  .variadic = TRUE,
  .max_inputs = 2,
  .aux = operand_aux,
  .n_aux = 1,
  .n_outputs = 1,
  .needs = NL_NEEDS_INPUTS,
  .backward_inplace = TRUE,
  .infer_shape = mul_infer,
  .init_aux = mul_init_aux,
};

const NlOpDef nl_op_sub = {
  .name = "Sub",
  .category = "Structure",
  .doc = "Elementwise difference of two inputs of equal shape, or of one input and a constant (a fixed shift)",
  .params = sub_params,
  .n_params = ARITH_N,
  .inputs = data_input,
  .n_inputs = 1,
  .variadic = TRUE,
  .max_inputs = 2,
  .aux = operand_aux,
  .n_aux = 1,
  .n_outputs = 1,
  .needs = NL_NEEDS_NOTHING,
  .inplace = TRUE,
  .backward_inplace = TRUE,
  .args_size = sizeof (NlArithArgs),
  .resolve_args = sub_resolve,
  .infer_shape = sub_infer,
};
