/* nl-op-param.c — the registry's pieces an op kernel calls, alone so that
 * the CUDA module has them without the registry's table of CPU ops. */
#include "ops/nl-op-registry.h"

#include <string.h>

/* interned: the module's copy is the same GQuark */
G_DEFINE_QUARK (nl-op-error-quark, nl_op_error)

int
nl_op_param_index (const NlOpDef *def, const char *name)
{
  for (int i = 0; i < def->n_params; i++)
    if (strcmp (def->params[i].name, name) == 0)
      return i;
  return -1;
}

void *
nl_op_args_new (const NlOpDef *def, const NlParamValue *p)
{
  void *args;

  if (def->args_size == 0)
    return NULL;
  args = g_malloc0 (def->args_size);
  def->resolve_args (p, args);
  return args;
}
