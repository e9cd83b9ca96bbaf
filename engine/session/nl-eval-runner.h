/* nl-eval-runner.h — what evaluating and predicting run a model with: the
 * inference executor (nl-infer-net.h) in fp32, or INT8 with a calibrated
 * table, else (a network the executor cannot compile) the training
 * program, as before the executor. One batch size; a shorter last batch
 * runs its rows only. */
#pragma once

#include "engine/graph/nl-model.h"
#include "engine/infer/nl-quant-table.h"

G_BEGIN_DECLS

typedef struct NlEvalRunner NlEvalRunner;

/* int8 NULL: fp32. The model must outlive the runner. */
NlEvalRunner *nl_eval_runner_new (NlModel *model, int batch, const NlQuantTable *int8, GError **error);
/* The same for a dataset whose labels are label_shape a sample (NULL or
 * ndim 0: one): per-step labels, and sequences with lengths, run through
 * the training program (the executor declines them). */
NlEvalRunner *nl_eval_runner_new_for (NlModel *model, int batch, const NlQuantTable *int8, const NlShape *label_shape,
                                      GError **error);
void nl_eval_runner_free (NlEvalRunner *r);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (NlEvalRunner, nl_eval_runner_free)

/* (batch, sample shape...) float32: fill rows, then run. */
NlTensor *nl_eval_runner_input (NlEvalRunner *r);
/* Runs the first rows (1..batch) of the input. */
gboolean nl_eval_runner_run (NlEvalRunner *r, int rows, GError **error);
/* The outputs of the last run, nl_eval_runner_classes floats a row. */
const float *nl_eval_runner_output (NlEvalRunner *r);
int64_t nl_eval_runner_classes (NlEvalRunner *r);
/* Whether the inference executor runs it (else the training program). */
gboolean nl_eval_runner_is_executor (NlEvalRunner *r);

G_END_DECLS
