/* nl-run-model.c — a run's model rebuilt from its snapshots and one of its
 * checkpoints (see nl-run-model.h). */
#include "engine/session/nl-run-model.h"
#include "engine/formats/nl-checkpoint.h"
#include "engine/session/nl-run-checkpoint.h"
#include "engine/session/nl-run-vocab.h"

#include <json-glib/json-glib.h>
#include <string.h>

/* The Input node's shape, when the network sets one. */
static gboolean
input_shape (const NlNetwork *net, NlShape *out)
{
  for (guint i = 0; i < net->nodes->len; i++)
    {
      NlNode *n = nl_network_node (net, (int) i);
      if (!strcmp (n->def->name, "Input") && n->def->n_params > 0 && n->params[0].n > 0)
        {
          *out = nl_shape_make (n->params[0].n, n->params[0].v);
          return TRUE;
        }
    }
  return FALSE;
}

/* Whether the stored settings (read already) say the model came without an
 * input normalisation. */
static gboolean
without_normalisation (const char *hparams)
{
  g_autoptr (JsonNode) root = hparams ? json_from_string (hparams, NULL) : NULL;
  JsonNode *m = root && JSON_NODE_HOLDS_OBJECT (root)
                  ? json_object_get_member (json_node_get_object (root), NL_RUN_NO_NORMALISATION) : NULL;
  return m && JSON_NODE_HOLDS_VALUE (m) && json_node_get_value_type (m) == G_TYPE_STRING
         && !strcmp (json_node_get_string (m), "none");
}

void
nl_run_model_clear (NlRunModel *l)
{
  nl_run_config_clear (&l->rc);
  g_clear_pointer (&l->model, nl_model_free);
  g_clear_pointer (&l->net, nl_network_free);
  g_clear_pointer (&l->ds, nl_dataset_free);
  g_clear_pointer (&l->vocab, nl_vocab_unref);
}

static gboolean
prefix_error (GError **error, GError *local, const char *fmt, ...) G_GNUC_PRINTF (3, 4);

/* Propagates local with "<prefix>: " before its message; always FALSE. */
static gboolean
prefix_error (GError **error, GError *local, const char *fmt, ...)
{
  va_list ap;
  g_autofree char *prefix = NULL;
  va_start (ap, fmt);
  prefix = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  g_propagate_prefixed_error (error, local, "%s: ", prefix);
  return FALSE;
}

gboolean
nl_run_model_load (NlRunModel *l, NlProject *p, gint64 run, const char *which, const char *dataset,
                   gboolean need_data, GError **error)
{
  g_autoptr (NlRunInfo) info = nl_project_get_run (p, run, error);
  g_autoptr (GBytes) blob = NULL;
  g_autoptr (GError) local = NULL;
  NlTrainPosition pos = { 0 };

  nl_run_config_init (&l->rc);
  if (!info)
    return FALSE;
  if (!nl_run_config_from_json (&l->rc, info->hparams_json ? info->hparams_json : "{}", &local))
    return prefix_error (error, g_steal_pointer (&local), "run %" G_GINT64_FORMAT "'s settings", run);
  l->no_normalisation = without_normalisation (info->hparams_json);
  /* the data changes, not the normalisation the weights were trained with */
  if (dataset)
    nl_run_config_set_text (&l->rc.dataset, dataset);
  l->net = nl_network_load_data (info->network_json, -1, &local);
  if (!l->net)
    return prefix_error (error, g_steal_pointer (&local), "run %" G_GINT64_FORMAT "'s network snapshot", run);
  /* no best without a metric (an imported run): then the newest */
  l->checkpoint = nl_run_checkpoint_find (p, run, which ? which : "best", &blob, &l->epoch, NULL, which ? error : NULL);
  if (l->checkpoint <= 0 && !which)
    l->checkpoint = nl_run_checkpoint_find (p, run, "last", &blob, &l->epoch, NULL, error);
  if (l->checkpoint <= 0)
    return FALSE;

  /* a text run encodes with the vocabulary it was trained with */
  l->vocab = nl_run_vocab_load (p, run, &local);
  if (local)
    return prefix_error (error, g_steal_pointer (&local), "run %" G_GINT64_FORMAT, run);
  l->rc.data.vocab = l->vocab;
  /* the split nl_trainer_evaluate tests on */
  l->ds = nl_dataset_open_full (l->rc.dataset, FALSE, &l->rc.data, &local);
  if (l->ds)
    l->sample_shape = l->ds->sample_shape;
  else if (!need_data && l->vocab)
    l->sample_shape = nl_shape_of (1, (int64_t) (l->rc.data.max_length > 0 ? l->rc.data.max_length : 128));
  else if (need_data || !input_shape (l->net, &l->sample_shape))
    return prefix_error (error, g_steal_pointer (&local),
                         "the dataset “%s” of run %" G_GINT64_FORMAT " is not available on this machine",
                         l->rc.dataset, run);
  g_clear_error (&local);
  if (l->ds && l->ds->n_classes <= 0)
    {
      g_set_error (error, NL_TRAIN_ERROR, NL_TRAIN_ERROR_CONFIG,
                   "run %" G_GINT64_FORMAT " learned a regression of “%s”: there are no classes to evaluate", run,
                   l->rc.dataset);
      return FALSE;
    }

  /* the optimizer state is prepared as saved: the checkpoint holds it too */
  l->model = nl_model_new_full (l->net, &l->sample_shape,
                               &(NlModelOptions) { .seed = l->rc.seed, .optim = &l->rc.optim }, &local);
  if (!l->model)
    return prefix_error (error, g_steal_pointer (&local),
                         "run %" G_GINT64_FORMAT "'s network snapshot no longer builds", run);
  if (!nl_checkpoint_load (l->model, blob, FALSE, &pos, &local))
    return prefix_error (error, g_steal_pointer (&local),
                         "checkpoint %" G_GINT64_FORMAT " (epoch %d) of run %" G_GINT64_FORMAT, l->checkpoint,
                         l->epoch, run);
  nl_train_position_clear (&pos);
  return TRUE;
}

gint64
nl_run_find_for_network (NlProject *p, const char *network, GError **error)
{
  g_autoptr (GPtrArray) runs = nl_project_list_runs (p, error);
  gboolean known = FALSE;
  if (!runs)
    return 0;
  for (guint i = runs->len; i-- > 0;)
    {
      NlRunInfo *r = g_ptr_array_index (runs, i);
      g_autoptr (GArray) ckpts = NULL;
      if (g_strcmp0 (r->network_name, network) != 0)
        continue;
      known = TRUE;
      ckpts = nl_project_list_checkpoints (p, r->id, NULL);
      if (ckpts && ckpts->len > 0)
        return r->id;
    }
  g_set_error (error, NL_TRAIN_ERROR, NL_TRAIN_ERROR_CONFIG,
               known ? "network “%s” has no run with a checkpoint: train it or import its weights"
                     : "no run of the network “%s” in this project: train it or import its weights", network);
  return 0;
}
