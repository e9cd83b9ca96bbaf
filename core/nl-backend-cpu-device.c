/* nl-backend-cpu-device.c — the CPU's row of the backend registry
 * (nl-backend-reg.h): its one device, "cpu", described from /proc. */
#include "core/nl-backend-cpu.h"
#include "core/nl-backend-reg.h"

#include <sched.h>
#include <string.h>
#include <sys/utsname.h>

/* The value of the first "key : value" line of a /proc file whose key is
 * one of keys, or NULL. */
static char *
proc_field (const char *contents, const char *const *keys)
{
  g_auto (GStrv) lines = g_strsplit (contents, "\n", -1);
  for (const char *const *k = keys; *k; k++)
    for (char **l = lines; *l; l++)
      {
        char *colon = strchr (*l, ':');
        g_autofree char *key = NULL;
        if (!colon)
          continue;
        key = g_strstrip (g_strndup (*l, colon - *l));
        if (!strcmp (key, *k))
          {
            char *value = g_strstrip (g_strdup (colon + 1));
            if (*value)
              return value;
            g_free (value);
          }
      }
  return NULL;
}

/* The processors this process may run on: under `taskset` or a
 * container's cpuset fewer than the machine has (GLib 2.74's
 * g_get_num_processors counts the machine's). */
static int
usable_cores (void)
{
#ifdef CPU_COUNT
  cpu_set_t set;
  if (sched_getaffinity (0, sizeof set, &set) == 0 && CPU_COUNT (&set) > 0)
    return CPU_COUNT (&set);
#endif
  return (int) g_get_num_processors ();
}

/* "MemTotal:  24684084 kB" -> bytes; 0 when absent. */
static guint64
meminfo_bytes (const char *contents, const char *key)
{
  const char *keys[] = { key, NULL };
  g_autofree char *v = contents ? proc_field (contents, keys) : NULL;
  return v ? g_ascii_strtoull (v, NULL, 10) * 1024 : 0;
}

static gboolean
cpu_device_info (int index, NlDeviceInfo *d, GError **error)
{
  /* x86 says "model name"; arm64 kernels have none per core, but may have
   * "Hardware" or (POWER, s390) "cpu" / "machine" */
  static const char *const name_keys[] = { "model name", "Hardware", "cpu model", "cpu", "machine", NULL };
  g_autofree char *cpuinfo = NULL, *meminfo = NULL;

  if (g_file_get_contents ("/proc/cpuinfo", &cpuinfo, NULL, NULL))
    d->name = proc_field (cpuinfo, name_keys);
  if (!d->name)
    {
      struct utsname u;
      d->name = g_strdup (uname (&u) == 0 ? u.machine : "CPU");
    }
  /* runs of spaces in some model names ("Intel(R) Core(TM)   i7") */
  {
    g_auto (GStrv) words = g_strsplit_set (d->name, " \t", -1);
    g_autoptr (GString) s = g_string_new (NULL);
    for (char **w = words; *w; w++)
      if (**w)
        g_string_append_printf (s, "%s%s", s->len ? " " : "", *w);
    g_free (d->name);
    d->name = g_string_free (g_steal_pointer (&s), FALSE);
  }
  if (g_file_get_contents ("/proc/meminfo", &meminfo, NULL, NULL))
    {
      d->memory_bytes = meminfo_bytes (meminfo, "MemTotal");
      d->free_bytes = meminfo_bytes (meminfo, "MemAvailable");
      if (!d->free_bytes) /* kernels before 3.14 */
        d->free_bytes = meminfo_bytes (meminfo, "MemFree");
    }
  d->cores = usable_cores ();
  return TRUE;
}

static int
cpu_device_count (char **reason)
{
  return 1;
}

static char *
cpu_device_summary (const NlDeviceInfo *d)
{
  return g_strdup_printf ("%d core%s", d->cores, d->cores == 1 ? "" : "s");
}

static GVariant *
cpu_device_facts (const NlDeviceInfo *d)
{
  GVariantBuilder b;
  g_variant_builder_init (&b, G_VARIANT_TYPE_VARDICT);
  g_variant_builder_add (&b, "{sv}", "cores", g_variant_new_int64 (d->cores));
  return g_variant_builder_end (&b);
}

static NlBackend *
cpu_get (int index, GError **error)
{
  return nl_backend_cpu ();
}

/* every op has CPU kernels: the NlOpDef's own (ops/) */
static gboolean
cpu_supports_op (int op_id, const char *op_name)
{
  return TRUE;
}

const NlBackendReg nl_backend_cpu_reg = {
  .name = "cpu",
  .label = "CPU",
  .host = TRUE,
  .indexed = FALSE,
  .device_count = cpu_device_count,
  .device_info = cpu_device_info,
  .device_summary = cpu_device_summary,
  .device_facts = cpu_device_facts,
  .get = cpu_get,
  .supports_op = cpu_supports_op,
};
