/* nl-system-stats.c — see nl-system-stats.h. */
#include "core/nl-system-stats.h"

#include <gmodule.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

gboolean
nl_cpu_sample_parse (const char *line, NlCpuSample *out)
{
  /* the name ends at the last ')': it may hold ')' itself */
  const char *p = line ? strrchr (line, ')') : NULL;
  guint64 v[2];
  char *end;
  if (!p)
    return FALSE;
  p++;
  /* after the name: state (field 3), then fields 4..13, then utime, stime */
  for (int field = 3; field <= 15; field++)
    {
      while (*p == ' ')
        p++;
      if (!*p)
        return FALSE;
      if (field >= 14)
        {
          v[field - 14] = g_ascii_strtoull (p, &end, 10);
          if (end == p)
            return FALSE;
          p = end;
        }
      else
        p += strcspn (p, " ");
    }
  out->ticks = v[0] + v[1];
  return TRUE;
}

gboolean
nl_cpu_sample_now (NlCpuSample *out)
{
  g_autofree char *text = NULL;
  if (!g_file_get_contents ("/proc/self/stat", &text, NULL, NULL) || !nl_cpu_sample_parse (text, out))
    return FALSE;
  out->wall_us = g_get_monotonic_time ();
  return TRUE;
}

double
nl_cpu_percent (const NlCpuSample *a, const NlCpuSample *b, long ticks_per_s)
{
  double wall = (b->wall_us - a->wall_us) / 1e6;
  if (wall <= 0 || ticks_per_s <= 0 || b->ticks < a->ticks)
    return 0;
  return 100.0 * (double) (b->ticks - a->ticks) / ticks_per_s / wall;
}

double
nl_rss_mb (void)
{
  g_autofree char *text = NULL;
  g_auto (GStrv) fields = NULL;
  guint64 pages;
  if (!g_file_get_contents ("/proc/self/statm", &text, NULL, NULL))
    return -1;
  fields = g_strsplit (text, " ", 3);
  if (!fields[0] || !fields[1] || !g_ascii_string_to_unsigned (fields[1], 10, 0, G_MAXUINT64, &pages, NULL))
    return -1;
  return (double) pages * sysconf (_SC_PAGESIZE) / (1024.0 * 1024.0);
}

/* ---- NVML, looked up once ---- */

typedef struct {
  unsigned int gpu, memory;
} NvmlUtilization;
typedef struct {
  unsigned long long total, free, used;
} NvmlMemory;

static struct {
  int (*device_by_index) (unsigned int index, void **device);
  int (*utilization) (void *device, NvmlUtilization *u);
  int (*memory) (void *device, NvmlMemory *m);
} nvml;

static gpointer
nvml_load (gpointer data)
{
  /* NETLOOM_NVML_LIBRARY: another file (a test's stand-in, or "none") */
  const char *name = g_getenv ("NETLOOM_NVML_LIBRARY");
  GModule *m = g_module_open (name ? name : "libnvidia-ml.so.1", G_MODULE_BIND_LAZY | G_MODULE_BIND_LOCAL);
  int (*init) (void) = NULL;
  (void) data;
  if (!m)
    return NULL;
  if (!g_module_symbol (m, "nvmlInit_v2", (gpointer *) &init)
      || !g_module_symbol (m, "nvmlDeviceGetHandleByIndex_v2", (gpointer *) &nvml.device_by_index)
      || !g_module_symbol (m, "nvmlDeviceGetUtilizationRates", (gpointer *) &nvml.utilization)
      || !g_module_symbol (m, "nvmlDeviceGetMemoryInfo", (gpointer *) &nvml.memory) || init () != 0)
    {
      g_module_close (m);
      memset (&nvml, 0, sizeof nvml);
      return NULL;
    }
  /* kept open for the process: NVML has no cheap re-init */
  g_module_make_resident (m);
  return m;
}

gboolean
nl_gpu_stats (int index, double *util_percent, double *mem_mb)
{
  static GOnce once = G_ONCE_INIT;
  void *device = NULL;
  NvmlUtilization u;
  NvmlMemory mem;
  if (!g_once (&once, nvml_load, NULL) || index < 0)
    return FALSE;
  if (nvml.device_by_index ((unsigned int) index, &device) != 0 || nvml.utilization (device, &u) != 0
      || nvml.memory (device, &mem) != 0)
    return FALSE;
  *util_percent = u.gpu;
  *mem_mb = (double) mem.used / (1024.0 * 1024.0);
  return TRUE;
}
