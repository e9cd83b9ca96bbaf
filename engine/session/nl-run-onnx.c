/* nl-run-onnx.c — a run's checkpoint as an ONNX model, with the metadata a
 * consumer needs to feed it as netloom did. */
#include "engine/session/nl-run-onnx.h"
#include "engine/formats/nl-checkpoint.h"
#include "engine/formats/nl-int8-model.h"
#include "engine/formats/onnx/nl-onnx-export.h"
#include "engine/formats/onnx/nl-onnx-export-int8.h"
#include "engine/formats/onnx/nl-onnx-import.h"
#include "engine/session/nl-run-model.h"

#include <json-glib/json-glib.h>
#include <math.h>
#include <string.h>

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

/* What a consumer needs to feed the model as netloom did, in metadata
 * pairs (key, value, ..., NULL; g_strfreev); extra pairs go last. */
static char **
run_metadata (const NlRunModel *l, gint64 run, const char *const *extra)
{
  GPtrArray *kv = g_ptr_array_new ();
  char mean_s[G_ASCII_DTOSTR_BUF_SIZE], std_s[G_ASCII_DTOSTR_BUF_SIZE], buf[96];
  g_ascii_dtostr (mean_s, sizeof mean_s, l->rc.mean);
  g_ascii_dtostr (std_s, sizeof std_s, l->rc.std == 0.0f ? 1.0f : l->rc.std); /* 0: none, as the loader reads it */
  g_ptr_array_add (kv, g_strdup ("netloom_run"));
  g_ptr_array_add (kv, g_strdup_printf ("%" G_GINT64_FORMAT, run));
  g_ptr_array_add (kv, g_strdup ("netloom_checkpoint"));
  g_ptr_array_add (kv, g_strdup_printf ("%" G_GINT64_FORMAT, l->checkpoint));
  g_ptr_array_add (kv, g_strdup ("netloom_epoch"));
  g_ptr_array_add (kv, g_strdup_printf ("%d", l->epoch));
  g_ptr_array_add (kv, g_strdup ("dataset"));
  g_ptr_array_add (kv, g_strdup (l->rc.dataset ? l->rc.dataset : ""));
  g_ptr_array_add (kv, g_strdup ("sample_shape"));
  g_ptr_array_add (kv, g_strdup (nl_shape_format (&l->sample_shape, buf, sizeof buf)));
  g_ptr_array_add (kv, g_strdup ("input_mean"));
  g_ptr_array_add (kv, g_strdup (mean_s));
  g_ptr_array_add (kv, g_strdup ("input_std"));
  g_ptr_array_add (kv, g_strdup (std_s));
  g_ptr_array_add (kv, g_strdup ("class_names"));
  g_ptr_array_add (kv, class_names_json (l->ds));
  for (int i = 0; extra && extra[i]; i++)
    g_ptr_array_add (kv, g_strdup (extra[i]));
  g_ptr_array_add (kv, NULL);
  return (char **) g_ptr_array_free (kv, FALSE);
}

gboolean
nl_run_export_onnx (NlProject *p, gint64 run, const char *which, const char *path, int opset, gboolean softmax,
                    gint64 *checkpoint, GError **error)
{
  g_auto (NlRunModel) l = { 0 };
  g_auto (GStrv) meta = NULL;
  g_autofree char *doc = NULL, *vocab = NULL;
  g_autoptr (GError) local = NULL;
  g_return_val_if_fail (p != NULL && path != NULL, FALSE);

  if (!nl_onnx_available ())
    return nl_onnx_export_file (NULL, NULL, path, error); /* says why */
  if (!nl_run_model_load (&l, p, run, which ? which : "last", NULL, FALSE, error))
    return FALSE;
  meta = run_metadata (&l, run, NULL);
  /* a text run's vocabulary travels with the model (metadata "netloom.vocab") */
  vocab = nl_project_get_run_vocab (p, run, &local);
  if (local)
    {
      g_propagate_error (error, g_steal_pointer (&local));
      return FALSE;
    }
  doc = vocab ? g_strdup_printf ("netloom run %" G_GINT64_FORMAT ", checkpoint %" G_GINT64_FORMAT " (epoch %d); input: "
                                 "token ids of the vocabulary in metadata netloom.vocab, padded with 0 (<pad>); each "
                                 "sample's length is computed from its non-zero ids", run, l.checkpoint, l.epoch)
              : g_strdup_printf ("netloom run %" G_GINT64_FORMAT ", checkpoint %" G_GINT64_FORMAT " (epoch %d); input: "
                                 "pixels in [0, 1], then (x - input_mean) / input_std", run, l.checkpoint, l.epoch);
  {
    NlOnnxExportOptions o = { .opset = opset, .softmax = softmax, .metadata = (const char *const *) meta,
                              .doc = doc, .vocab = vocab };
    if (!nl_onnx_export_file (l.model, &o, path, error))
      return FALSE;
  }
  if (checkpoint)
    *checkpoint = l.checkpoint;
  return TRUE;
}

/* The stored facts of INT8 model id of RUN. */
static gboolean
int8_info (NlProject *p, gint64 run, gint64 id, NlInt8ModelInfo *info, GError **error)
{
  g_autoptr (GArray) list = nl_project_list_int8_models (p, run, error);
  for (guint i = 0; list && i < list->len; i++)
    if (g_array_index (list, NlInt8ModelInfo, i).id == id)
      {
        *info = g_array_index (list, NlInt8ModelInfo, i);
        return TRUE;
      }
  if (list)
    g_set_error (error, NL_TRAIN_ERROR, NL_TRAIN_ERROR_CONFIG, "run %" G_GINT64_FORMAT " has no INT8 model %"
                 G_GINT64_FORMAT, run, id);
  return FALSE;
}

gboolean
nl_run_export_onnx_int8 (NlProject *p, gint64 run, const char *which, const char *path, int opset,
                         gboolean softmax, gint64 *int8_model, GError **error)
{
  g_auto (NlRunModel) l = { 0 };
  g_autoptr (GBytes) blob = NULL;
  g_autoptr (NlQuantTable) table = NULL;
  g_auto (GStrv) meta = NULL;
  g_autofree char *id_s = NULL, *samples_s = NULL, *epoch_s = NULL, *doc = NULL;
  NlInt8ModelInfo info;
  gint64 id;
  g_return_val_if_fail (p != NULL && path != NULL, FALSE);

  if (!nl_onnx_available ())
    return nl_onnx_export_file (NULL, NULL, path, error); /* says why */
  if ((id = nl_project_find_int8_model (p, run, which, error)) <= 0 || !int8_info (p, run, id, &info, error)
      || !(blob = nl_project_load_int8_model (p, id, NULL, error)))
    return FALSE;
  /* the source checkpoint's model, for its shape and the run's metadata;
   * the INT8 model's blob then gives the weights it was calibrated with */
  epoch_s = g_strdup_printf ("%d", info.epoch);
  if (!nl_run_model_load (&l, p, run, epoch_s, NULL, FALSE, error)
      || !nl_int8_model_read (blob, l.model, &table, error))
    return FALSE;
  l.checkpoint = info.checkpoint;
  id_s = g_strdup_printf ("%" G_GINT64_FORMAT, id);
  samples_s = g_strdup_printf ("%d", info.calibration_samples);
  {
    const char *const extra[] = { "netloom_int8_model", id_s, "quantization", "int8 qdq",
                                  "calibration", info.method ? info.method : "", "calibration_samples", samples_s,
                                  NULL };
    meta = run_metadata (&l, run, extra);
  }
  doc = g_strdup_printf ("netloom run %" G_GINT64_FORMAT ", INT8 model %" G_GINT64_FORMAT " (%s calibration on %d "
                         "samples) of checkpoint %" G_GINT64_FORMAT " (epoch %d), in QDQ form; input: pixels in "
                         "[0, 1], then (x - input_mean) / input_std", run, id, info.method ? info.method : "?",
                         info.calibration_samples, info.checkpoint, info.epoch);
  {
    NlOnnxExportOptions o = { .opset = opset, .softmax = softmax, .metadata = (const char *const *) meta,
                              .doc = doc };
    if (!nl_onnx_export_int8_file (l.model, table, &o, path, error))
      return FALSE;
  }
  if (int8_model)
    *int8_model = id;
  return TRUE;
}

static gboolean
network_exists (NlProject *p, const char *name, GError **error)
{
  g_autoptr (GPtrArray) nets = nl_project_list_networks (p, error);
  for (guint i = 0; nets && i < nets->len; i++)
    if (!g_strcmp0 (((NlNetworkInfo *) g_ptr_array_index (nets, i))->name, name))
      return TRUE;
  return FALSE;
}

/* The run's settings: no training yet; a netloom export's normalisation,
 * else none (pixels in [0, 1] as they come), marked as such. */
static char *
import_settings (NlOnnxImport *imp)
{
  NlRunConfig rc;
  const char *mean = nl_onnx_import_get_metadata (imp, "input_mean");
  const char *std = nl_onnx_import_get_metadata (imp, "input_std");
  const char *dataset = nl_onnx_import_get_metadata (imp, "dataset");
  char *json;
  nl_run_config_init (&rc);
  rc.epochs = 0;
  rc.mean = mean ? (float) g_ascii_strtod (mean, NULL) : 0.0f;
  rc.std = std ? (float) g_ascii_strtod (std, NULL) : 1.0f;
  if (dataset && *dataset)
    nl_run_config_set_text (&rc.dataset, dataset);
  json = nl_run_config_to_json (&rc);
  nl_run_config_clear (&rc);
  if (!mean && !std)
    {
      /* said in the settings, so evaluate and predict can say it too */
      g_autoptr (JsonNode) root = json_from_string (json, NULL);
      g_free (json);
      json_object_set_string_member (json_node_get_object (root), NL_RUN_NO_NORMALISATION, "none");
      json = json_to_string (root, FALSE);
    }
  return json;
}

gint64
nl_run_import_onnx (NlProject *p, const char *path, const char *name, char **network_name, GError **error)
{
  return nl_run_import_onnx_arranged (p, path, name, NULL, NULL, network_name, error);
}

gint64
nl_run_import_onnx_arranged (NlProject *p, const char *path, const char *name, NlNetworkArrangeFunc arrange,
                             gpointer user_data, char **network_name, GError **error)
{
  g_autoptr (NlOnnxImport) imp = NULL;
  g_autoptr (NlModel) model = NULL;
  g_autoptr (GBytes) blob = NULL;
  g_autoptr (GError) local = NULL;
  g_autofree char *base = NULL, *net_json = NULL, *hp = NULL, *run_name = NULL;
  NlTrainPosition pos = { .optimizer = (char *) "sgd" };
  NlOptimConfig sgd;
  NlNetwork *net;
  gint64 run = 0;

  g_return_val_if_fail (p != NULL && path != NULL, 0);
  if (!(imp = nl_onnx_import_file (path, error)))
    return 0;
  net = nl_onnx_import_get_network (imp);
  base = g_path_get_basename (path);
  if (g_str_has_suffix (base, ".onnx"))
    base[strlen (base) - 5] = '\0';
  g_free (net->name);
  net->name = g_strdup (name ? name : base);
  if (network_exists (p, net->name, &local) || local)
    {
      if (!local)
        g_set_error (&local, NL_TRAIN_ERROR, NL_TRAIN_ERROR_CONFIG,
                     "the project has a network named “%s” already: choose another name", net->name);
      g_propagate_error (error, g_steal_pointer (&local));
      return 0;
    }
  nl_optim_config_init (&sgd, NL_OPTIM_SGD);
  if (!(model = nl_onnx_import_new_model (imp, &sgd, &local)) || !(blob = nl_checkpoint_save (model, &pos, &local)))
    {
      g_propagate_prefixed_error (error, g_steal_pointer (&local), "%s: ", path);
      return 0;
    }
  if (arrange)
    arrange (net, user_data);
  /* everything is checked: now the writes, undone together if one fails */
  net_json = nl_network_to_json (net);
  hp = import_settings (imp);
  run_name = g_strdup_printf ("import of %s", base);
  {
    NlRunInfo info = { .name = run_name, .network_name = net->name, .network_json = net_json, .hparams_json = hp,
                       .device = (char *) "cpu", .status = (char *) "finished" };
    if (nl_project_save_network (p, net->name, net_json, error) <= 0)
      return 0;
    if ((run = nl_project_create_run (p, &info, error)) <= 0
        || nl_project_add_checkpoint (p, run, 0, 0, g_bytes_get_data (blob, NULL), g_bytes_get_size (blob), NULL,
                                      NAN, TRUE, 0, error) <= 0)
      {
        if (run > 0)
          nl_project_delete_run (p, run, NULL);
        nl_project_delete_network (p, net->name, NULL);
        return 0;
      }
  }
  if (network_name)
    *network_name = g_strdup (net->name);
  return run;
}
