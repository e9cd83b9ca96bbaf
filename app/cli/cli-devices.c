/* cli-devices.c — netloom-cli devices: what --device can name here. */
#include <json-glib/json-glib.h>
#include <stdio.h>

#include "cli-common.h"
#include "core/nl-backend-reg.h"

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

/* The backend's own members of a device's entry (cores; compute
 * capability and multiprocessors), in the order it gives them. */
static void
add_facts (JsonBuilder *b, const NlBackendReg *reg, const NlDeviceInfo *d)
{
  g_autoptr (GVariant) facts = g_variant_ref_sink (reg->device_facts (d));
  GVariantIter iter;
  const char *key;
  GVariant *value;

  g_variant_iter_init (&iter, facts);
  while (g_variant_iter_next (&iter, "{&sv}", &key, &value))
    {
      json_builder_set_member_name (b, key);
      if (g_variant_is_of_type (value, G_VARIANT_TYPE_STRING))
        json_builder_add_string_value (b, g_variant_get_string (value, NULL));
      else
        json_builder_add_int_value (b, g_variant_get_int64 (value));
      g_variant_unref (value);
    }
}

/* {"devices":[{"id":"cpu","type":"cpu","name":...,"memory_bytes":...,
 *  "free_bytes":...,"cores":...}, {"id":"cuda:0","type":"cuda",...,
 *  "compute_capability":"9.0","multiprocessors":132}], "cuda_reason": "..."|null}
 * ("cuda_reason": why no GPU is listed, whatever the GPU's backend) */
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
      const NlBackendReg *reg = nl_backend_reg_of (d->device);
      json_builder_begin_object (b);
      json_builder_set_member_name (b, "id");
      json_builder_add_string_value (b, d->id);
      json_builder_set_member_name (b, "type");
      json_builder_add_string_value (b, reg->name);
      json_builder_set_member_name (b, "name");
      json_builder_add_string_value (b, d->name);
      json_builder_set_member_name (b, "memory_bytes");
      json_builder_add_int_value (b, (gint64) d->memory_bytes);
      json_builder_set_member_name (b, "free_bytes");
      json_builder_add_int_value (b, (gint64) d->free_bytes);
      add_facts (b, reg, d);
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
      g_autofree char *summary = nl_backend_reg_of (d->device)->device_summary (d);
      printf ("%-7s %s, %s, %s (%s free)\n", d->id, d->name, summary, total, free_);
    }
  if (reason)
    printf ("no GPU: %s\n", reason);
  return 0;
}
