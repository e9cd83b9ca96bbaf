/* nl-storage.c — storage lifetime: memory from a backend, given back to
 * the backend that gave it. */
#include "core/nl-storage.h"
#include "core/nl-backend.h"

static NlStorage *
storage_wrap (void *data, size_t nbytes, NlDevice device, NlBackend *owner, gboolean pinned)
{
  NlStorage *s = g_new0 (NlStorage, 1);
  g_atomic_ref_count_init (&s->ref);
  s->data = data;
  s->nbytes = nbytes;
  s->device = device;
  s->owner = owner;
  s->pinned = pinned;
  return s;
}

NlStorage *
nl_storage_new (size_t nbytes)
{
  NlBackend *cpu = nl_backend_cpu ();
  void *data = nl_backend_alloc (cpu, nbytes, NULL, NULL);
  return data ? storage_wrap (data, nbytes, cpu->device, cpu, FALSE) : NULL;
}

NlStorage *
nl_storage_new_device (size_t nbytes, NlDevice device, const char *what, GError **error)
{
  NlBackend *b = nl_backend_get (device, error);
  void *data;
  if (!b)
    return NULL;
  data = nl_backend_alloc (b, nbytes, what, error);
  return data ? storage_wrap (data, nbytes, device, b, FALSE) : NULL;
}

NlStorage *
nl_storage_new_pinned (NlBackend *backend, size_t nbytes)
{
  void *data = backend->iface->host_alloc ? backend->iface->host_alloc (backend, MAX (nbytes, NL_ALIGN)) : NULL;
  if (!data)
    return nl_storage_new (nbytes);
  return storage_wrap (data, nbytes, NL_DEVICE_CPU_0, backend, TRUE);
}

NlStorage *
nl_storage_ref (NlStorage *s)
{
  g_atomic_ref_count_inc (&s->ref);
  return s;
}

void
nl_storage_unref (NlStorage *s)
{
  if (s && g_atomic_ref_count_dec (&s->ref))
    {
      if (s->pinned)
        s->owner->iface->host_free (s->owner, s->data);
      else
        s->owner->iface->free (s->owner, s->data);
      g_free (s);
    }
}
