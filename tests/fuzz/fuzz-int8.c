/* fuzz-int8.c — a quantization table (engine/infer/nl-quant-table.c, its
 * strict JSON reader) and an INT8 model file (engine/formats/nl-int8-model.c)
 * from the same bytes: the table's text must round-trip, the model must
 * load into the small model (NL_FUZZ_SMALL_NETWORK) or be refused. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nl-fuzz.h"
#include "engine/formats/nl-int8-model.h"

static NlModel *
small_model (void)
{
  static NlModel *model;
  if (model)
    return model;
  g_autoptr (GError) error = NULL;
  g_autoptr (NlNetwork) net = nl_network_load_data (NL_FUZZ_SMALL_NETWORK, -1, &error);
  NlShape sample = nl_shape_of (3, (int64_t) 1, (int64_t) 4, (int64_t) 4);
  if (net)
    model = nl_model_new_full (net, &sample, &(NlModelOptions) { .seed = 1 }, &error);
  if (!model)
    {
      fprintf (stderr, "fuzz-int8: the small model: %s\n", error->message);
      abort ();
    }
  return model;
}

/* A table that was read writes text that reads back to the same table. */
static void
check_round_trip (const NlQuantTable *t)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *text = nl_quant_table_to_json (t);
  g_autoptr (NlQuantTable) back = nl_quant_table_from_json (text, &error);
  if (!back || back->method != t->method || back->calibration_samples != t->calibration_samples
      || back->ranges->len != t->ranges->len)
    {
      fprintf (stderr, "fuzz-int8: the table's own text does not read back: %s\n", error ? error->message : text);
      abort ();
    }
  for (guint i = 0; i < t->ranges->len; i++)
    {
      const NlQuantRange *a = &g_array_index (t->ranges, NlQuantRange, i);
      const NlQuantRange *b = &g_array_index (back->ranges, NlQuantRange, i);
      if (strcmp (a->point, b->point) || a->min != b->min || a->max != b->max || a->threshold != b->threshold
          || a->is_unsigned != b->is_unsigned)
        {
          fprintf (stderr, "fuzz-int8: range '%s' changed in the round trip\n", a->point);
          abort ();
        }
    }
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  nl_fuzz_init ();
  g_autoptr (GError) error = NULL;
  g_autofree char *text = g_strndup ((const char *) data, size);
  g_autoptr (NlQuantTable) table = nl_quant_table_from_json (text, &error);
  if (table)
    check_round_trip (table);

  g_autoptr (GBytes) bytes = g_bytes_new (data, size);
  NlQuantTable *loaded = NULL;
  g_clear_error (&error);
  if (nl_int8_model_read (bytes, small_model (), &loaded, &error))
    {
      check_round_trip (loaded);
      nl_quant_table_free (loaded);
    }
  nl_int8_model_epoch (bytes);
  return 0;
}
