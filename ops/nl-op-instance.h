/* nl-op-instance.h — one op, standalone: its tensors allocated from shape
 * inference, ready to run forward and backward. Tests and benchmarks use it
 * to exercise a kernel without a graph. */
#pragma once

#include "ops/nl-op.h"

G_BEGIN_DECLS

typedef struct {
  const NlOpDef *def;
  NlParamValue *p;            /* def->n_params, owned */
  void *args;                 /* resolved from p (nl_op_args_new), owned */
  gboolean training;
  int n_data;
  int n_in;                   /* n_data + def->n_weights */
  NlTensor **in;              /* [n_in]; absent weights NULL */
  NlTensor **out;             /* [n_outputs] */
  NlTensor **aux;
  NlTensor **saved;
  NlTensor **out_grad;        /* [n_outputs] */
  NlTensor **in_grad;         /* [n_in]; NULL where no gradient flows */
  NlOpKernels kernels;        /* the CPU's (nl_op_kernels); a test may set its own */
  void *state;                /* freed by kernels.free_state */
  guint64 seed, step;
  NlTensor *lengths;          /* float32 (batch) on the CPU for uses_lengths ops, or NULL
                                 (full length); a test sets it, the instance frees it */
} NlOpInstance;

/* params: NULL-terminated name/value string pairs ("channels", "8", NULL).
 * Allocates every tensor (inputs and weights filled with zeros). */
NlOpInstance *nl_op_instance_new (const NlOpDef *def, const char *const *params,
                                  int n_data, const NlShape *in_shapes,
                                  gboolean training, GError **error);
void nl_op_instance_free (NlOpInstance *inst);
gboolean nl_op_instance_forward (NlOpInstance *inst, GError **error);
/* Uses inst->out_grad; writes inst->in_grad. */
gboolean nl_op_instance_backward (NlOpInstance *inst, GError **error);

G_END_DECLS
