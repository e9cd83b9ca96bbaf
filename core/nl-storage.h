/* nl-storage.h — refcounted memory on one device, from that device's
 * backend (core/nl-backend.h): what tensors view. */
#pragma once

#include <glib.h>
#include <stddef.h>

#include "core/nl-device.h"

G_BEGIN_DECLS

typedef struct NlBackend NlBackend;

typedef struct {
  gatomicrefcount ref;
  void *data;
  size_t nbytes;
  NlDevice device;
  /* who frees data: the device's backend, or for page-locked host memory
   * the backend that gave it (pinned); never NULL */
  NlBackend *owner;
  gboolean pinned;  /* CPU memory page-locked for fast copies to a device */
} NlStorage;

#define NL_ALIGN 64

/* CPU memory, 64-byte aligned; NULL only when memory cannot be had. */
NlStorage *nl_storage_new (size_t nbytes);
/* Memory on any device, from its backend; what names the asker in the
 * out-of-memory error (NL_BACKEND_ERROR_NOMEM). */
NlStorage *nl_storage_new_device (size_t nbytes, NlDevice device, const char *what, GError **error);
/* CPU memory that backend can copy to and from fast (page-locked where it
 * can give such memory, else ordinary memory). */
NlStorage *nl_storage_new_pinned (NlBackend *backend, size_t nbytes);
NlStorage *nl_storage_ref (NlStorage *s);
void nl_storage_unref (NlStorage *s);

G_END_DECLS
