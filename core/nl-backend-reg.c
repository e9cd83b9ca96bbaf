/* nl-backend-reg.c — the table of device backends (nl-backend-reg.h).
 * A new kind of device adds its NlDeviceType and one row here. */
#include "core/nl-backend-reg.h"
#include "core/cuda/nl-cuda-backend.h"
#include "core/nl-backend-cpu.h"

#include <string.h>

/* indexed by NlDeviceType */
static const NlBackendReg *const rows[] = {
  [NL_DEVICE_CPU] = &nl_backend_cpu_reg,
  [NL_DEVICE_CUDA] = &nl_cuda_backend_reg,
};

guint
nl_backend_reg_count (void)
{
  return G_N_ELEMENTS (rows);
}

const NlBackendReg *
nl_backend_reg_get (guint i)
{
  g_return_val_if_fail (i < G_N_ELEMENTS (rows), NULL);
  return rows[i];
}

const NlBackendReg *
nl_backend_reg_of (NlDevice device)
{
  if ((guint) device.type >= G_N_ELEMENTS (rows))
    return NULL;
  return rows[device.type];
}

const NlBackendReg *
nl_backend_reg_find (const char *name)
{
  for (guint i = 0; name && i < G_N_ELEMENTS (rows); i++)
    if (!strcmp (rows[i]->name, name))
      return rows[i];
  return NULL;
}
