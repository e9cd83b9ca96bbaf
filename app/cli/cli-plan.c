/* cli-plan.c — netloom-cli plan: what the static memory planner saves. */
#include <stdio.h>

#include "cli-common.h"
#include "engine/graph/nl-program.h"

static gboolean
plan_bytes (NlModel *model, int batch, gboolean training, int64_t *planned, int64_t *naive, GError **error)
{
  NlCompileOptions opts = { .batch = batch, .training = training, .loss = training ? "SoftmaxCrossEntropy" : NULL };
  g_autoptr (NlGraph) g = nl_graph_compile (model->net, &model->sample_shape, &opts, error);
  g_autoptr (NlMemoryPlan) plan = NULL;
  if (!g)
    return FALSE;
  plan = nl_memory_plan_new (g, FALSE);
  *planned = plan->planned_bytes;
  *naive = plan->naive_bytes;
  return TRUE;
}

int
nl_cli_plan (int argc, char **argv)
{
  g_autofree char *network = NULL, *shape_text = NULL;
  int batch = 128;
  gboolean json = FALSE;
  GOptionEntry entries[] = {
    { "network", 'n', 0, G_OPTION_ARG_FILENAME, &network, "Network file (JSON)", "FILE" },
    { "batch-size", 'b', 0, G_OPTION_ARG_INT, &batch, "Samples per batch (default 128)", "B" },
    { "input-shape", 0, 0, G_OPTION_ARG_STRING, &shape_text,
      "Shape of one sample (default: the Input node's shape, else 1,28,28)", "C,H,W" },
    { "json", 0, 0, G_OPTION_ARG_NONE, &json, "Print one JSON line", NULL },
    { NULL }
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new ("- memory plan of a network");
  g_autoptr (GError) error = NULL;
  g_autoptr (NlNetwork) net = NULL;
  g_autoptr (NlModel) model = NULL;
  NlShape sample = nl_shape_of (3, (int64_t) 1, (int64_t) 28, (int64_t) 28);
  int64_t tp, tn, ip, in;

  g_option_context_add_main_entries (ctx, entries, NULL);
  g_option_context_set_summary (ctx, "Bytes of activations, gradients and saved tensors for one training step and "
                                     "one inference pass, planned and naive (every value in its own buffer).");
  if (!g_option_context_parse (ctx, &argc, &argv, &error))
    return nl_cli_usage_error ("%s (see 'netloom-cli plan --help')", error->message);
  if (argc > 1)
    return nl_cli_usage_error ("unexpected argument '%s'", argv[1]);
  if (!network)
    return nl_cli_usage_error ("--network FILE is required");
  if (batch < 1 || batch > 1 << 20)
    return nl_cli_usage_error ("--batch-size must be between 1 and 1048576, not %d", batch);
  net = nl_network_load_file (network, &error);
  if (!net)
    return nl_cli_fail (error);
  if (shape_text)
    {
      g_auto (GStrv) parts = g_strsplit_set (shape_text, ",x", -1);
      sample.ndim = 0;
      for (int i = 0; parts[i]; i++)
        {
          char *end;
          gint64 d = g_ascii_strtoll (parts[i], &end, 10);
          if (*end || d < 1 || sample.ndim == NL_MAX_DIMS - 1)
            return nl_cli_usage_error ("--input-shape must be positive integers like 3,32,32, not '%s'", shape_text);
          sample.d[sample.ndim++] = d;
        }
    }
  else
    for (int i = 0; i < nl_network_n_nodes (net); i++)
      {
        NlNode *n = nl_network_node (net, i);
        if (g_strcmp0 (n->def->name, "Input") == 0 && n->params[0].n > 0)
          sample = nl_shape_make (n->params[0].n, n->params[0].v);
      }
  model = nl_model_new_full (net, &sample, NULL, &error);
  if (!model || !plan_bytes (model, batch, TRUE, &tp, &tn, &error) || !plan_bytes (model, batch, FALSE, &ip, &in, &error))
    return nl_cli_fail (error);
  if (json)
    printf ("{\"network\":\"%s\",\"batch_size\":%d,\"training_planned_bytes\":%" G_GINT64_FORMAT
            ",\"training_naive_bytes\":%" G_GINT64_FORMAT ",\"inference_planned_bytes\":%" G_GINT64_FORMAT
            ",\"inference_naive_bytes\":%" G_GINT64_FORMAT ",\"training_ratio\":%.3f,\"inference_ratio\":%.3f}\n",
            net->name, batch, tp, tn, ip, in, (double) tp / tn, (double) ip / in);
  else
    printf ("%s at batch %d\n  training:  %.2f MiB planned, %.2f MiB naive (%.0f%%)\n"
            "  inference: %.2f MiB planned, %.2f MiB naive (%.0f%%)\n",
            net->name, batch, tp / 1048576.0, tn / 1048576.0, 100.0 * tp / tn, ip / 1048576.0, in / 1048576.0,
            100.0 * ip / in);
  return 0;
}
