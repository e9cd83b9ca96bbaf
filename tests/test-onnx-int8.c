/* test-onnx-int8.c — the INT8 ONNX export (engine/formats/onnx/nl-onnx-
 * export-int8.h) of a network with every part an INT8 step has (Conv2D and
 * Dense with a folded BatchNorm, a residual Add, ReLUs, max and average
 * pooling), with a quantization table made by hand:
 *  - onnxruntime-node runs it to numpy's fake-quantized forward pass
 *    (tests/onnx_int8_check.py, which also checks the QDQ graph);
 *  - a point the network lacks, or a range the table lacks, is one error
 *    naming the point;
 *  - the fp32 export's bytes are what they were before the INT8 export
 *    was added (a SHA-256 of the model with the version strings blanked,
 *    computed with nl-onnx-export.c and nl-onnx-builder.c of commit
 *    84825e9, before the INT8 export). */
#include <glib/gstdio.h>
#include <string.h>

#include "engine/formats/onnx/nl-onnx-export-int8.h"
#include "engine/graph/nl-model.h"
#include "onnx.pb-c.h" /* to read the fp32 export back */
#include "tests/nl-test-util.h"

/* the fp32 export of the fixture at seed 0 (version strings blanked) */
#define FP32_SHA256 "40bfcd69fb9d5acb3235e637fce8a86e4adb7b2935c50a3ae5779a7fafd13ad6"

static NlModel *
fixture_model (gboolean randomise)
{
  g_autofree char *path = nl_test_source_path ("tests/fixtures/onnx-int8-net.json");
  g_autoptr (GError) error = NULL;
  g_autoptr (NlNetwork) net = nl_network_load_file (path, &error);
  NlShape shape = { .ndim = 3, .d = { 1, 12, 12 } };
  NlModel *m;
  nl_test_ok_or_die (net != NULL, error, "fixture network");
  m = nl_model_new_full (net, &shape, NULL, &error);
  nl_test_ok_or_die (m != NULL, error, "fixture model");
  /* BatchNorm statistics and biases far from their initial 0 and 1, so
   * folding them matters */
  for (int i = 0; randomise && i < m->n_nodes; i++)
    {
      const NlNode *n = nl_network_node (m->net, i);
      NlTensor **w = &m->weights[NL_MODEL_SLOT (i, 0)], **aux = &m->aux[NL_MODEL_SLOT (i, 0)];
      if (!strcmp (n->def->name, "BatchNorm"))
        {
          nl_test_fill_uniform (w[0], 0.5f, 1.5f, 10 + i);
          nl_test_fill_uniform (w[1], -0.3f, 0.3f, 20 + i);
          nl_test_fill_uniform (aux[0], -0.2f, 0.2f, 30 + i);
          nl_test_fill_uniform (aux[1], 0.5f, 2.0f, 40 + i);
        }
      else if (w[1])
        nl_test_fill_uniform (w[1], -0.1f, 0.1f, 50 + i);
    }
  return m;
}

/* every weight and running statistic as DIR/NAME.bin, raw float32 */
static void
write_tensors (const NlModel *m, const char *dir)
{
  for (int i = 0; i < m->n_nodes; i++)
    for (int k = 0; k < NL_GRAPH_MAX_SLOTS; k++)
      {
        const NlNode *n = nl_network_node (m->net, i);
        const NlTensor *w = m->weights[NL_MODEL_SLOT (i, k)], *a = m->aux[NL_MODEL_SLOT (i, k)];
        g_autofree char *wname = w ? nl_model_weight_name (m, i, k) : NULL;
        g_autofree char *aname = a ? g_strdup_printf ("%s.%s", n->id, n->def->aux[k]) : NULL;
        for (int j = 0; j < 2; j++)
          {
            const NlTensor *t = j ? a : w;
            g_autofree char *file = t ? g_strdup_printf ("%s/%s.bin", dir, j ? aname : wname) : NULL;
            g_autoptr (GError) error = NULL;
            if (t)
              nl_test_ok_or_die (g_file_set_contents (file, (const char *) nl_tensor_f32 (t),
                                                      nl_tensor_numel (t) * sizeof (float), &error),
                                 error, file);
          }
      }
}

/* ranges as a calibration might give them for the fixture (its fp32
 * values on the test's images reach about 1, 1.1, 1.6, 1.25, 1.0 and 0.97
 * at these points): the largest values clipped, as entropy calibration
 * clips them */
static NlQuantTable *
hand_table (void)
{
  NlQuantTable *t = nl_quant_table_new (NL_QUANT_ENTROPY, 64);
  nl_quant_table_add (t, "data", -1.0f, 1.0f, 1.0f);
  nl_quant_table_add (t, "relu1", 0.0f, 1.1f, 1.0f);
  nl_quant_table_add (t, "relu2", 0.0f, 1.6f, 1.5f);
  nl_quant_table_add (t, "relu3", 0.0f, 1.25f, 1.2f);
  nl_quant_table_add (t, "relu4", 0.0f, 1.0f, 0.9f);
  nl_quant_table_add (t, "fc2", -0.75f, 0.97f, 0.9f); /* the logits: never rounded */
  return t;
}

static char *
ort_module (void)
{
  const char *env = g_getenv ("NETLOOM_ORT_MODULE");
  g_autofree char *local = nl_test_source_path (".npm-ort/node_modules/onnxruntime-node");
  if (env && *env)
    return g_strdup (env);
  return g_file_test (local, G_FILE_TEST_IS_DIR) ? g_steal_pointer (&local) : NULL;
}

static void
test_runs_as_numpy (void)
{
  g_autoptr (NlModel) m = fixture_model (TRUE);
  g_autoptr (NlQuantTable) t = hand_table ();
  g_autoptr (GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("onnx-int8-XXXXXX", NULL), *ort = ort_module ();
  g_autofree char *onnx = g_build_filename (dir, "int8.onnx", NULL), *tj = g_build_filename (dir, "table.json", NULL);
  g_autofree char *json = nl_quant_table_to_json (t), *script = nl_test_source_path ("tests/onnx_int8_check.py");
  g_autofree char *src = nl_test_source_path ("."), *out = NULL, *err = NULL;
  g_autofree char *node = g_find_program_in_path ("node");
  g_autofree char *py = nl_test_find_python ("numpy, onnx");
  const char *argv[] = { py, script, dir, ort, src, NULL };
  int status;

  write_tensors (m, dir);
  g_assert_true (g_file_set_contents (tj, json, -1, NULL));
  g_assert_true (nl_onnx_export_int8_file (m, t, NULL, onnx, &error));
  g_assert_no_error (error);
  if (!ort || !node || !py)
    {
      g_test_skip ("onnxruntime-node, node or a Python with numpy and onnx not found (npm install "
                   "onnxruntime-node into .npm-ort, or set NETLOOM_ORT_MODULE; Debian python3-onnx)");
      nl_test_remove_tree (dir);
      return;
    }
  g_assert_true (g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, &out, &err, &status,
                               &error));
  g_test_message ("%s%s", out, err);
  if (!g_spawn_check_wait_status (status, NULL))
    g_error ("onnx_int8_check.py failed:\n%s%s", out, err);
  nl_test_remove_tree (dir);
}

static Onnx__ModelProto *
unpack (GBytes *bytes)
{
  gsize size;
  const guint8 *data = g_bytes_get_data (bytes, &size);
  Onnx__ModelProto *mp = onnx__model_proto__unpack (NULL, size, data);
  g_assert_nonnull (mp);
  return mp;
}

static void
test_unknown_point (void)
{
  g_autoptr (NlModel) m = fixture_model (FALSE);
  g_autoptr (NlQuantTable) t = hand_table ();
  g_autoptr (GError) error = NULL;
  nl_quant_table_add (t, "conv9", -1.0f, 1.0f, 1.0f);
  g_assert_null (nl_onnx_export_int8 (m, t, NULL, &error));
  g_assert_error (error, NL_ONNX_ERROR, NL_ONNX_ERROR_UNSUPPORTED);
  g_assert_nonnull (strstr (error->message, "“conv9”"));
  g_assert_nonnull (strstr (error->message, "int8-export"));
}

/* a point the executor has and the table lacks: one error naming it */
static void
test_missing_point (void)
{
  g_autoptr (NlModel) m = fixture_model (FALSE);
  g_autoptr (NlQuantTable) full = hand_table ();
  g_autoptr (NlQuantTable) t = nl_quant_table_new (NL_QUANT_NAIVE, 1);
  g_autoptr (GError) error = NULL;
  for (guint i = 0; i < full->ranges->len; i++)
    {
      const NlQuantRange *r = &g_array_index (full->ranges, NlQuantRange, i);
      if (strcmp (r->point, "relu3") != 0)
        nl_quant_table_add (t, r->point, r->min, r->max, r->threshold);
    }
  g_assert_null (nl_onnx_export_int8 (m, t, NULL, &error));
  g_assert_error (error, NL_ONNX_ERROR, NL_ONNX_ERROR_UNSUPPORTED);
  g_assert_nonnull (strstr (error->message, "no range for the calibration point “relu3”"));
}

static void
test_fp32_unchanged (void)
{
  g_autoptr (NlModel) m = fixture_model (FALSE);
  g_autoptr (GError) error = NULL;
  g_autoptr (GBytes) bytes = nl_onnx_export (m, NULL, &error);
  g_autofree guint8 *buf = NULL;
  g_autofree char *sha = NULL;
  Onnx__ModelProto *mp;
  char *producer, *version = NULL;
  Onnx__StringStringEntryProto *entry = NULL;
  gsize size;
  g_assert_no_error (error);
  mp = unpack (bytes);
  /* the version changes with every release; nothing else may */
  producer = mp->producer_version;
  mp->producer_version = (char *) "";
  for (size_t i = 0; i < mp->n_metadata_props; i++)
    if (!strcmp (mp->metadata_props[i]->key, "netloom_version"))
      {
        entry = mp->metadata_props[i];
        version = entry->value;
        entry->value = (char *) "";
      }
  g_assert_nonnull (entry);
  size = onnx__model_proto__get_packed_size (mp);
  buf = g_malloc (size);
  onnx__model_proto__pack (mp, buf);
  sha = g_compute_checksum_for_data (G_CHECKSUM_SHA256, buf, size);
  g_test_message ("fp32 export: %" G_GSIZE_FORMAT " bytes, sha256 %s", size, sha);
  mp->producer_version = producer;
  entry->value = version;
  onnx__model_proto__free_unpacked (mp, NULL);
  g_assert_cmpstr (sha, ==, FP32_SHA256);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/onnx-int8/runs-as-numpy", test_runs_as_numpy);
  g_test_add_func ("/onnx-int8/unknown-point", test_unknown_point);
  g_test_add_func ("/onnx-int8/missing-point", test_missing_point);
  g_test_add_func ("/onnx-int8/fp32-unchanged", test_fp32_unchanged);
  return g_test_run ();
}
