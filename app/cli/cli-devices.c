/* cli-devices.c — netloom-cli devices: what --device can name here. */
#include <stdio.h>

#include "cli-common.h"
#include "engine/nl-device.h"

/* "23.4 GiB" with a plain space (g_format_size puts a no-break space,
 * which scripts splitting on blanks do not expect) */
static char *
size_text (guint64 bytes)
{
  static const char *const units[] = { "bytes", "KiB", "MiB", "GiB", "TiB", "PiB" };
  double v = (double) bytes;
  guint u = 0;
  while (v >= 1024 && u + 1 < G_N_ELEMENTS (units))
    {
      v /= 1024;
      u++;
    }
  return u == 0 ? g_strdup_printf ("%" G_GUINT64_FORMAT " bytes", bytes) : g_strdup_printf ("%.1f %s", v, units[u]);
}

int
nl_cli_devices (int argc, char **argv)
{
  gboolean json = FALSE;
  GOptionEntry entries[] = {
    { "json", 0, 0, G_OPTION_ARG_NONE, &json, "Print the list as one JSON object", NULL },
    { NULL }
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new ("- list the devices training can run on");
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) list = NULL;
  g_autofree char *reason = NULL;

  g_option_context_add_main_entries (ctx, entries, NULL);
  g_option_context_set_summary (ctx, "The CPU, then every CUDA GPU the runtime sees: the names that "
                                     "'netloom-cli train --device' takes.");
  if (!g_option_context_parse (ctx, &argc, &argv, &error))
    return nl_cli_usage_error ("%s (see 'netloom-cli devices --help')", error->message);
  if (argc > 1)
    return nl_cli_usage_error ("unexpected argument '%s'", argv[1]);

  list = nl_device_list (&reason);
  if (json)
    {
      g_autofree char *text = nl_device_list_to_json (list, reason);
      printf ("%s\n", text);
      return 0;
    }
  for (guint i = 0; i < list->len; i++)
    {
      const NlDeviceInfo *d = g_ptr_array_index (list, i);
      g_autofree char *total = size_text (d->memory_bytes), *free_ = size_text (d->free_bytes);
      if (d->device.type == NL_DEVICE_CUDA)
        printf ("%-7s %s, compute %d.%d, %d SMs, %s (%s free)\n", d->id, d->name, d->cc_major, d->cc_minor,
                d->cores, total, free_);
      else
        printf ("%-7s %s, %d core%s, %s (%s free)\n", d->id, d->name, d->cores, d->cores == 1 ? "" : "s", total,
                free_);
    }
  if (reason)
    printf ("no GPU: %s\n", reason);
  return 0;
}
