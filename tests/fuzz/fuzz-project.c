/* fuzz-project.c — a project file (projects/nl-project.c) opened as the
 * workbench and the CLI open one: integrity check, the runs with their
 * network and pipeline snapshots parsed (engine/graph/nl-network.c,
 * nl_pipeline_info_from_json), checkpoints, metrics, the saved networks
 * and pipelines. */
#include <math.h>

#include "nl-fuzz.h"
#include "engine/graph/nl-network.h"
#include "projects/nl-project.h"

#define MAX_RUNS 8

static void
read_run (NlProject *p, const NlRunInfo *listed)
{
  g_autoptr (GError) error = NULL;
  NlRunInfo *r = nl_project_get_run (p, listed->id, &error);
  if (!r)
    return;
  if (r->network_json)
    {
      NlNetwork *net = nl_network_load_data (r->network_json, -1, &error);
      if (net)
        nl_network_free (net);
      g_clear_error (&error);
    }
  if (r->pipeline_json)
    {
      NlPipelineInfo *pl = nl_pipeline_info_from_json (r->pipeline_json, &error);
      if (pl)
        nl_pipeline_info_free (pl);
      g_clear_error (&error);
    }
  double best_min, best_max, last;
  nl_project_metric_summary (p, r->id, "test_accuracy", NULL, &best_min, &best_max, &last, NULL);
  GArray *summaries = nl_project_list_metric_summaries (p, r->id, NULL);
  if (summaries)
    g_array_unref (summaries);
  GArray *metrics = nl_project_get_metrics (p, r->id, NULL, 0, NULL, NULL);
  if (metrics)
    g_array_unref (metrics);
  GArray *checkpoints = nl_project_list_checkpoints (p, r->id, NULL);
  if (checkpoints)
    g_array_unref (checkpoints);
  GArray *int8_models = nl_project_list_int8_models (p, r->id, NULL);
  if (int8_models)
    g_array_unref (int8_models);
  gint64 int8 = nl_project_find_int8_model (p, r->id, NULL, NULL);
  if (int8 > 0)
    g_bytes_unref (nl_project_load_int8_model (p, int8, NULL, NULL));
  gint64 last_checkpoint = nl_project_find_checkpoint (p, r->id, "last", NULL);
  if (last_checkpoint > 0)
    {
      GBytes *blob = nl_project_load_checkpoint (p, last_checkpoint, NULL, NULL, NULL, NULL);
      if (blob)
        g_bytes_unref (blob);
    }
  g_strfreev (nl_project_list_tags (p, r->id, NULL));
  GPtrArray *notes = nl_project_list_notes (p, r->id, NULL);
  if (notes)
    g_ptr_array_unref (notes);
  nl_run_info_free (r);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  nl_fuzz_init ();
  g_autofree char *path = nl_fuzz_write ("fuzz.netloom", data, size);
  g_autoptr (GError) error = NULL;
  NlProject *p = nl_project_open (path, FALSE, &error);
  if (p)
    {
      nl_project_check (p, NULL);
      GPtrArray *runs = nl_project_list_runs (p, NULL);
      for (guint i = 0; runs && i < runs->len && i < MAX_RUNS; i++)
        read_run (p, runs->pdata[i]);
      if (runs)
        g_ptr_array_unref (runs);
      GPtrArray *networks = nl_project_list_networks (p, NULL);
      for (guint i = 0; networks && i < networks->len && i < MAX_RUNS; i++)
        {
          const NlNetworkInfo *n = networks->pdata[i];
          g_autofree char *json = nl_project_load_network (p, n->name, 0, NULL);
          NlNetwork *net = json ? nl_network_load_data (json, -1, NULL) : NULL;
          if (net)
            nl_network_free (net);
        }
      if (networks)
        g_ptr_array_unref (networks);
      GPtrArray *pipelines = nl_project_list_pipelines (p, NULL);
      if (pipelines)
        g_ptr_array_unref (pipelines);
      GPtrArray *sweeps = nl_project_list_sweeps (p, NULL);
      if (sweeps)
        g_ptr_array_unref (sweeps);
      nl_project_close (p);
    }
  nl_fuzz_clear ();
  return 0;
}
