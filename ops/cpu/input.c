/* input.c — the CPU kernel of Input (definition: ops/defs/input.c): the
 * batch the graph bound, copied where the planner gave it other memory. */
#include "ops/cpu/nl-cpu-util.h"
#include "ops/nl-input.h"

static gboolean
forward (NlOpCtx *c, GError **error)
{
  /* the planner usually gives the output the input's memory */
  if (nl_tensor_f32 (c->out[0]) != nl_tensor_f32 (c->in[0]))
    memcpy (nl_tensor_f32 (c->out[0]), nl_tensor_f32 (c->in[0]), nl_numel (c->in[0]) * sizeof (float));
  return TRUE;
}

const NlOpKernels nl_op_cpu_input = { .forward = forward };
