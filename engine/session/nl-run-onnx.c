/* nl-run-onnx.c — a run's checkpoint as an ONNX model, with the metadata a
 * consumer needs to feed it as netloom did. */
#include "engine/session/nl-run-onnx.h"
#include "engine/onnx/nl-onnx-export.h"
#include "engine/session/nl-run-model.h"

#include <json-glib/json-glib.h>

static char *
class_names_json (const NlDataset *ds)
{
  g_autoptr (JsonBuilder) jb = json_builder_new ();
  g_autoptr (JsonNode) root = NULL;
  json_builder_begin_array (jb);
  for (int c = 0; ds && ds->class_names && ds->class_names[c]; c++)
    json_builder_add_string_value (jb, ds->class_names[c]);
  json_builder_end_array (jb);
  root = json_builder_get_root (jb);
  return json_to_string (root, FALSE);
}

gboolean
nl_run_export_onnx (NlProject *p, gint64 run, const char *which, const char *path, int opset, gboolean softmax,
                    gint64 *checkpoint, GError **error)
{
  g_auto (NlRunModel) l = { 0 };
  g_autofree char *run_s = NULL, *ckpt_s = NULL, *epoch_s = NULL, *classes = NULL, *shape_s = NULL;
  char mean_s[G_ASCII_DTOSTR_BUF_SIZE], std_s[G_ASCII_DTOSTR_BUF_SIZE], buf[96];
  g_return_val_if_fail (p != NULL && path != NULL, FALSE);

  if (!nl_onnx_available ())
    return nl_onnx_export_file (NULL, NULL, path, error); /* says why */
  if (!nl_run_model_load (&l, p, run, which ? which : "last", NULL, FALSE, error))
    return FALSE;
  run_s = g_strdup_printf ("%" G_GINT64_FORMAT, run);
  ckpt_s = g_strdup_printf ("%" G_GINT64_FORMAT, l.checkpoint);
  epoch_s = g_strdup_printf ("%d", l.epoch);
  classes = class_names_json (l.ds);
  shape_s = g_strdup (nl_shape_format (&l.sample_shape, buf, sizeof buf));
  g_ascii_dtostr (mean_s, sizeof mean_s, l.rc.mean);
  g_ascii_dtostr (std_s, sizeof std_s, l.rc.std == 0.0f ? 1.0f : l.rc.std); /* 0: none, as the loader reads it */
  {
    const char *const meta[] = { "netloom_run", run_s, "netloom_checkpoint", ckpt_s, "netloom_epoch", epoch_s,
                                 "dataset", l.rc.dataset ? l.rc.dataset : "", "sample_shape", shape_s,
                                 "input_mean", mean_s, "input_std", std_s, "class_names", classes, NULL };
    g_autofree char *doc = g_strdup_printf ("netloom run %s, checkpoint %s (epoch %s); input: pixels in [0, 1], "
                                            "then (x - input_mean) / input_std", run_s, ckpt_s, epoch_s);
    NlOnnxExportOptions o = { .opset = opset, .softmax = softmax, .metadata = meta, .doc = doc };
    if (!nl_onnx_export_file (l.model, &o, path, error))
      return FALSE;
  }
  if (checkpoint)
    *checkpoint = l.checkpoint;
  return TRUE;
}
