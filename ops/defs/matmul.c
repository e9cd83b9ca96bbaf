/* matmul.c — MatMul's definition: batched matrix products with either
 * input transposed (kernels: ops/cpu/matmul.c, ops/cuda/matmul.cu). */
#include "ops/nl-matmul.h"

static const NlParamSpec params[MATMUL_N] = {
  [MATMUL_TRANSPOSE_A] = { "transpose_a", NL_PARAM_BOOL, 0, 0, 1, NULL, FALSE,
                           "Use a's last two axes swapped: a is (..., K, M)" },
  [MATMUL_TRANSPOSE_B] = { "transpose_b", NL_PARAM_BOOL, 0, 0, 1, NULL, FALSE,
                           "Use b's last two axes swapped: b is (..., N, K)" },
};

static void
resolve (const NlParamValue *p, void *args)
{
  NlMatMulArgs *a = args;
  a->transpose_a = NL_P_BOOL (p, MATMUL_TRANSPOSE_A);
  a->transpose_b = NL_P_BOOL (p, MATMUL_TRANSPOSE_B);
}

static gboolean
infer (NlInferCtx *c, GError **error)
{
  const NlShape *a = &c->in[0], *b = &c->in[1];
  NlMatMulGeom g;
  char sa[96], sb[96];

  if (!nl_matmul_geom (a, b, NL_P_BOOL (c->p, MATMUL_TRANSPOSE_A), NL_P_BOOL (c->p, MATMUL_TRANSPOSE_B), &g))
    return nl_op_shape_error (error,
                              "MatMul cannot multiply a %s by b %s: a must be (..., M, K) and b (..., K, N) "
                              "with the same leading axes, or b 2-D (K, N) (the transpose flags swap the last "
                              "two axes)", nl_shape_format (a, sa, sizeof sa), nl_shape_format (b, sb, sizeof sb));
  c->out[0] = *a;
  c->out[0].d[a->ndim - 2] = g.m;
  c->out[0].d[a->ndim - 1] = g.n;
  return TRUE;
}

static const char *const inputs[] = { "a", "b" };

const NlOpDef nl_op_matmul = {
  .name = "MatMul",
  .category = "Core",
  .doc = "Batched matrix product a x b, either transposed; b may be one 2-D matrix shared by the batch",
  .params = params,
  .n_params = MATMUL_N,
  .inputs = inputs,
  .n_inputs = 2,
  .n_outputs = 1,
  .needs = NL_NEEDS_INPUTS,
  .args_size = sizeof (NlMatMulArgs),
  .resolve_args = resolve,
  .infer_shape = infer,
};
