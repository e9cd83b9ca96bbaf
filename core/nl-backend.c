/* nl-backend.c — finding a device's backend through the registry
 * (nl-backend-reg.h), and what every backend shares (error texts, the
 * optional members' defaults). */
#include "core/nl-backend.h"
#include "core/nl-backend-reg.h"
#include "core/nl-comm.h"

NlBackend *
nl_backend_get (NlDevice device, GError **error)
{
  const NlBackendReg *reg = nl_backend_reg_of (device);
  if (!reg)
    {
      g_set_error (error, NL_BACKEND_ERROR, NL_BACKEND_ERROR_UNAVAILABLE, "no backend for device type %d",
                   (int) device.type);
      return NULL;
    }
  return reg->get (device.index, error);
}

void
nl_backend_shutdown_all (void)
{
  for (guint i = 0; i < nl_backend_reg_count (); i++)
    if (nl_backend_reg_get (i)->shutdown)
      nl_backend_reg_get (i)->shutdown ();
}

void
nl_backend_trim (NlBackend *b)
{
  if (b->iface->trim)
    b->iface->trim (b);
}

static gboolean
no_collectives (NlBackend *b, GError **error)
{
  g_set_error (error, NL_BACKEND_ERROR, NL_BACKEND_ERROR_UNSUPPORTED,
               "the %s backend has no collectives for a group of processes", b->iface->name);
  return FALSE;
}

gboolean
nl_backend_allreduce_sum (NlBackend *b, NlComm *comm, float *x, int64_t n, GError **error)
{
  if (!comm || comm->size <= 1)
    return TRUE;
  if (!b->iface->allreduce_sum)
    return no_collectives (b, error);
  return b->iface->allreduce_sum (b, comm, x, n, error);
}

gboolean
nl_backend_broadcast (NlBackend *b, NlComm *comm, void *x, size_t nbytes, int root, GError **error)
{
  if (!comm || comm->size <= 1)
    return TRUE;
  if (!b->iface->broadcast)
    return no_collectives (b, error);
  return b->iface->broadcast (b, comm, x, nbytes, root, error);
}

const void *
nl_backend_op_kernels (NlBackend *b, int op_id, const char *op_name)
{
  g_return_val_if_fail (b->iface->op_kernels != NULL, NULL);
  return b->iface->op_kernels (b, op_id, op_name);
}
