/* nl-backend-reg.h — the registry of device backends (after ggml's
 * ggml_backend_reg and ggml_backend_dev): one row per kind of device says
 * how its devices are named, counted, described and checked, how to get a
 * device's backend, and which ops it runs. nl-device.c lists, parses,
 * prints and checks devices through these rows, so a new kind of device is
 * one file with its row and one line in the table (nl-backend-reg.c).
 *
 * The rows are constant and the table is fixed at build time: reading it
 * is thread-safe. A row's members may load its runtime on first use. */
#pragma once

#include <glib.h>

#include "core/nl-backend.h"
#include "core/nl-device.h"

G_BEGIN_DECLS

typedef struct {
  const char *name;   /* "cpu", "cuda": ids' prefix, `devices --json`'s "type" */
  const char *label;  /* "CPU", "CUDA": in messages ("no CUDA device") */
  /* Its memory is the CPU's (the host): its one device is always here. */
  gboolean host;
  /* Its ids are "name:N" ("name" alone is :0); else the one id "name". */
  gboolean indexed;
  /* How many devices are here; 0 with *reason (free it; reason may be
   * NULL) saying why. */
  int (*device_count) (char **reason);
  /* Fills the index's name, memory and cores (the registry sets device
   * and id); FALSE with error when the runtime lists it but cannot say. */
  gboolean (*device_info) (int index, NlDeviceInfo *info, GError **error);
  /* The kind's own part of `netloom-cli devices`'s line ("16 cores",
   * "compute 9.0, 132 SMs"; free it) and of its JSON entry: an a{sv} of
   * string and int64 values, in order (floating reference). */
  char *(*device_summary) (const NlDeviceInfo *info);
  GVariant *(*device_facts) (const NlDeviceInfo *info);
  /* The device's backend, made on first use and kept (nl_backend_get). */
  NlBackend *(*get) (int index, GError **error);
  /* TRUE when the kind has kernels for the op of that registry id and
   * list name (ops/nl-op-list.h); asks no device, may load the runtime. */
  gboolean (*supports_op) (int op_id, const char *op_name);
  /* optional: frees what the kind keeps for the process */
  void (*shutdown) (void);
} NlBackendReg;

/* The rows in NlDeviceType order; the host's (the CPU's) first. */
guint nl_backend_reg_count (void);
const NlBackendReg *nl_backend_reg_get (guint i);
/* The row of a device's type; NULL for a type no row has. */
const NlBackendReg *nl_backend_reg_of (NlDevice device);
/* The row called name ("cuda"), or NULL. */
const NlBackendReg *nl_backend_reg_find (const char *name);

G_END_DECLS
