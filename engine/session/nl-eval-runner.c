/* nl-eval-runner.c — a model run for evaluation: the inference executor,
 * or the training program where the executor cannot compile it. */
#include "engine/session/nl-eval-runner.h"

#include <string.h>

#include "engine/graph/nl-program.h"
#include "engine/infer/nl-infer-net.h"

struct NlEvalRunner {
  NlModel *model;
  int batch;
  NlInferNet *net;
  NlProgram *full, *tail;   /* without the executor: the batch, and the short last one */
  const float *out;
};

void
nl_eval_runner_free (NlEvalRunner *r)
{
  if (!r)
    return;
  g_clear_pointer (&r->net, nl_infer_net_free);
  g_clear_pointer (&r->full, nl_program_free);
  g_clear_pointer (&r->tail, nl_program_free);
  g_free (r);
}

static NlProgram *
program_for (NlModel *m, int batch, GError **error)
{
  NlCompileOptions opts = { .batch = batch, .training = FALSE, .loss = NULL };
  return nl_program_new (m, &opts, error);
}

NlEvalRunner *
nl_eval_runner_new (NlModel *model, int batch, const NlQuantTable *int8, GError **error)
{
  return nl_eval_runner_new_for (model, batch, int8, NULL, error);
}

NlEvalRunner *
nl_eval_runner_new_for (NlModel *model, int batch, const NlQuantTable *int8, const NlShape *label_shape,
                        GError **error)
{
  g_autoptr (NlEvalRunner) r = g_new0 (NlEvalRunner, 1);
  g_autoptr (GError) local = NULL;
  NlInferOptions o = { .batch = batch, .mode = int8 ? NL_INFER_INT8 : NL_INFER_FP32, .quant = int8 };
  if (label_shape)
    o.label_shape = *label_shape;
  r->model = model;
  r->batch = batch;
  r->net = nl_infer_net_new (model, &o, int8 ? error : &local);
  if (r->net)
    return g_steal_pointer (&r);
  if (int8)
    return NULL;
  /* fp32 runs anyway: the program runs every network that trains */
  g_debug ("evaluating through the training program: %s", local->message);
  if (!(r->full = program_for (model, batch, error)))
    return NULL;
  return g_steal_pointer (&r);
}

NlTensor *
nl_eval_runner_input (NlEvalRunner *r)
{
  return r->net ? nl_infer_net_input (r->net) : nl_program_input (r->full);
}

gboolean
nl_eval_runner_run (NlEvalRunner *r, int rows, GError **error)
{
  NlProgram *prog = r->full;
  g_return_val_if_fail (rows >= 1 && rows <= r->batch, FALSE);
  if (r->net)
    {
      if (!nl_infer_net_run (r->net, rows, error))
        return FALSE;
      r->out = nl_tensor_f32 (nl_infer_net_output (r->net));
      return TRUE;
    }
  if (rows < r->batch)
    {
      /* a program of the short batch's size, as the trainer evaluates it */
      const NlTensor *in = nl_program_input (r->full);
      if (r->tail && nl_program_input (r->tail)->shape[0] != rows)
        g_clear_pointer (&r->tail, nl_program_free);
      if (!r->tail && !(r->tail = program_for (r->model, rows, error)))
        return FALSE;
      memcpy (nl_tensor_f32 (nl_program_input (r->tail)), nl_tensor_f32 (in),
              sizeof (float) * (nl_tensor_numel (in) / r->batch) * rows);
      prog = r->tail;
    }
  if (!nl_program_forward (prog, 0, error))
    return FALSE;
  r->out = nl_tensor_f32 (nl_program_pred (prog));
  return TRUE;
}

const float *
nl_eval_runner_output (NlEvalRunner *r)
{
  return r->out;
}

int64_t
nl_eval_runner_classes (NlEvalRunner *r)
{
  const NlTensor *out = r->net ? nl_infer_net_output (r->net) : nl_program_pred (r->full);
  return nl_tensor_numel (out) / r->batch;
}

gboolean
nl_eval_runner_is_executor (NlEvalRunner *r)
{
  return r->net != NULL;
}
