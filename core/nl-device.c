/* nl-device.c — the CPU (from /proc) and the CUDA devices the runtime sees
 * (core/cuda/nl-cuda.h), as one list for the CLI, the GUI and --device. */
#include "core/nl-device.h"
#include "core/cuda/nl-cuda.h"

#include <string.h>
#include <sys/utsname.h>

G_DEFINE_QUARK (nl-device-error-quark, nl_device_error)

void
nl_device_info_free (NlDeviceInfo *info)
{
  if (!info)
    return;
  g_free (info->id);
  g_free (info->name);
  g_free (info);
}

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

/* "MemTotal:  24684084 kB" -> bytes; 0 when absent. */
static guint64
meminfo_bytes (const char *contents, const char *key)
{
  const char *keys[] = { key, NULL };
  g_autofree char *v = contents ? proc_field (contents, keys) : NULL;
  return v ? g_ascii_strtoull (v, NULL, 10) * 1024 : 0;
}

static NlDeviceInfo *
cpu_info (void)
{
  /* x86 says "model name"; arm64 kernels have none per core, but may have
   * "Hardware" or (POWER, s390) "cpu" / "machine" */
  static const char *const name_keys[] = { "model name", "Hardware", "cpu model", "cpu", "machine", NULL };
  NlDeviceInfo *d = g_new0 (NlDeviceInfo, 1);
  g_autofree char *cpuinfo = NULL, *meminfo = NULL;

  d->device = (NlDevice) { NL_DEVICE_CPU, 0 };
  d->id = g_strdup ("cpu");
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
  d->cores = (int) g_get_num_processors ();
  return d;
}

GPtrArray *
nl_device_list (char **cuda_reason)
{
  GPtrArray *list = g_ptr_array_new_with_free_func ((GDestroyNotify) nl_device_info_free);
  g_autofree char *reason = NULL;
  int n;

  g_ptr_array_add (list, cpu_info ());
  n = nl_cuda_device_count (&reason);
  for (int i = 0; i < n; i++)
    {
      NlCudaDeviceInfo ci = { 0 };
      g_autoptr (GError) error = NULL;
      NlDeviceInfo *d;
      if (!nl_cuda_device_info (i, &ci, &error))
        {
          /* listed by the runtime but unusable: the reason if none is */
          g_free (reason);
          reason = g_strdup_printf ("cuda:%d: %s", i, error->message);
          continue;
        }
      d = g_new0 (NlDeviceInfo, 1);
      d->device = (NlDevice) { NL_DEVICE_CUDA, i };
      d->id = g_strdup_printf ("cuda:%d", i);
      d->name = g_strndup (ci.name, sizeof ci.name);
      d->memory_bytes = ci.total_bytes;
      d->free_bytes = ci.free_bytes;
      d->cores = ci.multiprocessors;
      d->cc_major = ci.cc_major;
      d->cc_minor = ci.cc_minor;
      g_ptr_array_add (list, d);
    }
  if (list->len > 1)
    g_clear_pointer (&reason, g_free);
  else if (!reason)
    reason = g_strdup ("no CUDA device");
  if (cuda_reason)
    *cuda_reason = g_steal_pointer (&reason);
  return list;
}

gboolean
nl_device_parse (const char *text, NlDevice *device, GError **error)
{
  NlDevice d = { NL_DEVICE_CPU, 0 };
  guint64 index = 0;

  if (!g_strcmp0 (text, "cpu"))
    ;
  else if (!g_strcmp0 (text, "cuda"))
    d.type = NL_DEVICE_CUDA;
  else if (text && g_str_has_prefix (text, "cuda:")
           && g_ascii_string_to_unsigned (text + strlen ("cuda:"), 10, 0, G_MAXINT, &index, NULL))
    d = (NlDevice) { NL_DEVICE_CUDA, (int) index };
  else
    {
      g_set_error (error, NL_DEVICE_ERROR, NL_DEVICE_ERROR_PARSE,
                   "unknown device '%s' (use cpu, cuda or cuda:N)", text ? text : "");
      return FALSE;
    }
  if (device)
    *device = d;
  return TRUE;
}

char *
nl_device_to_string (NlDevice device)
{
  if (device.type == NL_DEVICE_CUDA)
    return g_strdup_printf ("cuda:%d", device.index);
  return g_strdup ("cpu");
}

gboolean
nl_device_check (NlDevice device, GError **error)
{
  g_autofree char *reason = NULL;
  g_autofree char *id = NULL;
  int n;

  if (device.type == NL_DEVICE_CPU)
    return TRUE;
  id = nl_device_to_string (device);
  n = nl_cuda_device_count (&reason);
  if (n <= 0)
    {
      g_set_error (error, NL_DEVICE_ERROR, NL_DEVICE_ERROR_UNAVAILABLE, "%s: no CUDA device: %s", id,
                   reason ? reason : "the CUDA runtime sees none");
      return FALSE;
    }
  if (device.index < 0 || device.index >= n)
    {
      g_autoptr (GString) names = g_string_new (NULL);
      for (int i = 0; i < n; i++)
        g_string_append_printf (names, "%scuda:%d", i ? ", " : "", i);
      g_set_error (error, NL_DEVICE_ERROR, NL_DEVICE_ERROR_UNAVAILABLE, "%s: no such device (there %s %d: %s)", id,
                   n == 1 ? "is" : "are", n, names->str);
      return FALSE;
    }
  return TRUE;
}
