/* nl-op-registry.h — the one table of operators. */
#pragma once

#include "ops/nl-op.h"

G_BEGIN_DECLS

typedef enum {
#define NL_OP(c) NL_OP_ID_##c,
#include "ops/nl-op-list.h"
#undef NL_OP
  NL_OP_COUNT
} NlOpId;

/* NULL if no op of that name (case-sensitive, e.g. "Conv2D"). */
const NlOpDef *nl_op_lookup (const char *name);
/* The op's name in nl-op-list.h ("conv2d"): how backends built apart
 * (the CUDA module) name their kernels' ops. */
const char *nl_op_list_name (NlOpId id);
/* NULL for an op not linked in (only during development). */
const NlOpDef *nl_op_get (NlOpId id);
/* Number of ops registered (== NL_OP_COUNT in a complete build). */
int nl_op_count_registered (void);
/* The kernels of def on a backend, from the op table its device registered
 * (ops/cpu/nl-cpu-ops.c, the CUDA module); NULL members when the op has
 * none there or def is not in the registry. */
NlOpKernels nl_op_kernels (const NlOpDef *def, NlBackend *backend);
/* How many ops of the registry have kernels on backend. */
int nl_op_count_on (NlBackend *backend);
/* The fewest and most data inputs def takes (NlOpDef.max_inputs). */
void nl_op_input_range (const NlOpDef *def, int *min, int *max);
/* Shape inference: checks that ctx->n_data is in def's input range (an
 * NL_OP_ERROR_SHAPE "Dense takes exactly one input, but 2 are connected"
 * otherwise), then calls def->infer_shape. Every caller goes through it. */
gboolean nl_op_infer_shape (const NlOpDef *def, NlInferCtx *ctx, GError **error);
/* Index of a parameter by name, -1 if none. */
int nl_op_param_index (const NlOpDef *def, const char *name);
/* def's typed arguments resolved from validated parameters p (free with
 * g_free); NULL when the op has none. */
void *nl_op_args_new (const NlOpDef *def, const NlParamValue *p);

/* Parameters: fill defaults; validate required ones and ranges.
 * vals has def->n_params entries. */
void nl_params_init_defaults (const NlOpDef *def, NlParamValue *vals);
gboolean nl_params_validate (const NlOpDef *def, const NlParamValue *vals, GError **error);
/* Set one parameter from text: "5", "0.1", "true", "relu", "5,5", "[1,28,28]". */
gboolean nl_params_set_from_string (const NlOpDef *def, NlParamValue *vals,
                                    const char *name, const char *text, GError **error);

G_END_DECLS
