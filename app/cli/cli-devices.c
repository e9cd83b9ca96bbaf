/* cli-devices.c — netloom-cli devices: what --device can name here. */
#include <json-glib/json-glib.h>
#include <stdio.h>

#include "cli-common.h"
#include "core/nl-device.h"

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

/* {"devices":[{"id":"cpu","type":"cpu","name":...,"memory_bytes":...,
 *  "free_bytes":...,"cores":...}, {"id":"cuda:0","type":"cuda",...,
 *  "compute_capability":"9.0","multiprocessors":132}], "cuda_reason": "..."|null} */
static char *
device_list_to_json (GPtrArray *list, const char *cuda_reason)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();
  g_autoptr (JsonGenerator) gen = json_generator_new ();
  g_autoptr (JsonNode) root = NULL;

  json_builder_begin_object (b);
  json_builder_set_member_name (b, "devices");
  json_builder_begin_array (b);
  for (guint i = 0; list && i < list->len; i++)
    {
      const NlDeviceInfo *d = g_ptr_array_index (list, i);
      gboolean cuda = d->device.type == NL_DEVICE_CUDA;
      json_builder_begin_object (b);
      json_builder_set_member_name (b, "id");
      json_builder_add_string_value (b, d->id);
      json_builder_set_member_name (b, "type");
      json_builder_add_string_value (b, cuda ? "cuda" : "cpu");
      json_builder_set_member_name (b, "name");
      json_builder_add_string_value (b, d->name);
      json_builder_set_member_name (b, "memory_bytes");
      json_builder_add_int_value (b, (gint64) d->memory_bytes);
      json_builder_set_member_name (b, "free_bytes");
      json_builder_add_int_value (b, (gint64) d->free_bytes);
      if (cuda)
        {
          g_autofree char *cc = g_strdup_printf ("%d.%d", d->cc_major, d->cc_minor);
          json_builder_set_member_name (b, "compute_capability");
          json_builder_add_string_value (b, cc);
          json_builder_set_member_name (b, "multiprocessors");
          json_builder_add_int_value (b, d->cores);
        }
      else
        {
          json_builder_set_member_name (b, "cores");
          json_builder_add_int_value (b, d->cores);
        }
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  json_builder_set_member_name (b, "cuda_reason");
  if (cuda_reason)
    json_builder_add_string_value (b, cuda_reason);
  else
    json_builder_add_null_value (b);
  json_builder_end_object (b);
  root = json_builder_get_root (b);
  json_generator_set_root (gen, root);
  return json_generator_to_data (gen, NULL);
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
      g_autofree char *text = device_list_to_json (list, reason);
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
