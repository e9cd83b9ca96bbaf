/* fuzz-onnx.c — an ONNX model imported (engine/formats/onnx/nl-onnx-import.c):
 * the network it maps to must validate and save, and the model with the
 * imported weights is built. No external data may be read (base_dir NULL). */
#include <stdio.h>
#include <stdlib.h>

#include "nl-fuzz.h"
#include "engine/formats/onnx/nl-onnx-import.h"

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  nl_fuzz_init ();
  g_autoptr (GError) error = NULL;
  g_autoptr (NlOnnxImport) imp = nl_onnx_import_data (data, size, NULL, NULL, &error);
  if (!imp)
    return 0;
  NlNetwork *net = nl_onnx_import_get_network (imp);
  g_autofree int *order = g_new (int, nl_network_n_nodes (net) + 1);
  if (!nl_network_validate (net, order, &error))
    {
      fprintf (stderr, "fuzz-onnx: the imported network does not validate: %s\n", error->message);
      abort ();
    }
  g_autofree char *json = nl_network_to_json (net);
  g_autoptr (NlNetwork) again = nl_network_load_data (json, -1, &error);
  if (!again)
    {
      fprintf (stderr, "fuzz-onnx: the imported network does not load back: %s\n", error->message);
      abort ();
    }
  nl_onnx_import_get_metadata (imp, "class_names");
  G_GNUC_UNUSED g_autoptr (NlModel) model = nl_onnx_import_new_model (imp, NULL, &error);
  return 0;
}
