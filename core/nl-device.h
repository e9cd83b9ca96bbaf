/* nl-device.h — the devices a run can train on: the CPU and every GPU a
 * backend sees. `netloom-cli devices`, the GUI's device selector and
 * `--device` all go through this one list, which the registered backends
 * (nl-backend-reg.h) fill, name and check. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* A row of the backend registry each (nl-backend-reg.c), in its order. */
typedef enum {
  NL_DEVICE_CPU,
  NL_DEVICE_CUDA,
} NlDeviceType;

/* Which device: a type and, for GPUs, the index the runtime gives it. */
typedef struct {
  NlDeviceType type;
  int index;
} NlDevice;

#define NL_DEVICE_CPU_0 ((NlDevice) { NL_DEVICE_CPU, 0 })

#define NL_DEVICE_ERROR (nl_device_error_quark ())
GQuark nl_device_error_quark (void);
typedef enum {
  NL_DEVICE_ERROR_PARSE,       /* not "cpu", "cuda" or "cuda:N" */
  NL_DEVICE_ERROR_UNAVAILABLE, /* no such device here (the message says why) */
} NlDeviceError;

typedef struct {
  NlDevice device;
  char *id;                /* "cpu", "cuda:0": what --device takes */
  char *name;              /* "AMD EPYC 7B13", "NVIDIA H100 80GB HBM3" */
  guint64 memory_bytes;    /* CPU: MemTotal; CUDA: the device's memory */
  guint64 free_bytes;      /* CPU: MemAvailable; CUDA: free now */
  int cores;               /* CPU: online cores; CUDA: multiprocessors */
  int cc_major, cc_minor;  /* CUDA compute capability; 0 for the CPU */
} NlDeviceInfo;

void nl_device_info_free (NlDeviceInfo *info);

/* The CPU first, then each backend's devices in registry order: cuda:0,
 * cuda:1 ... (NlDeviceInfo *, freed with the array). When no device besides
 * the CPU is listed, *reason (if not NULL; free it) says why (the backends'
 * reasons joined by "; "): built without CUDA, no driver, no device. */
GPtrArray *nl_device_list (char **reason);
/* A backend's name ("cpu"), or for an indexed one its name (= :0) or
 * "name:N" ("cuda", "cuda:1"); says nothing about presence. */
gboolean nl_device_parse (const char *text, NlDevice *device, GError **error);
/* "cpu" or "cuda:N" (free it). */
char *nl_device_to_string (NlDevice device);
/* Its backend's name, "cpu" or "cuda" (the kind of device, not which);
 * NULL for a type no backend has. nl_device_parse takes it back. */
const char *nl_device_kind (NlDevice device);
/* TRUE when the device's memory is the CPU's (its backend is the host's). */
gboolean nl_device_is_host (NlDevice device);
/* The device of its kind a process of local rank local_rank uses: each
 * its own, round robin past the last listed; device itself when its kind
 * has one device or none here. */
NlDevice nl_device_for_rank (NlDevice device, int local_rank);
/* TRUE when the device is here; else NL_DEVICE_ERROR_UNAVAILABLE naming it
 * and why ("cuda:0: no CUDA device: netloom was built without CUDA ...";
 * "cuda:3: no such device (there are 2: cuda:0, cuda:1)"). */
gboolean nl_device_check (NlDevice device, GError **error);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (NlDeviceInfo, nl_device_info_free)

G_END_DECLS
