/* fuzz-network.c — a network file (engine/graph/nl-network.c) loaded, validated
 * and compiled as netloom-cli plan does: the training graph with its
 * backward and memory plan, the inference graph, and the model with its
 * program when the weights and arena are small. A network that loads must
 * also save and load again. */
#include <stdio.h>
#include <stdlib.h>

#include "nl-fuzz.h"
#include "engine/graph/nl-graph.h"
#include "engine/graph/nl-memory-plan.h"
#include "engine/graph/nl-model.h"
#include "engine/graph/nl-program.h"

/* Bigger models are skipped, not allocated: the fuzzer's memory limit is
 * about inputs, and a network may ask for any size of weights. */
#define MAX_MODEL_BYTES (4 << 20)

static int64_t
weight_bytes (const NlGraph *g)
{
  int64_t total = 0;
  for (guint i = 0; i < g->nodes->len; i++)
    {
      const NlGraphNode *n = nl_graph_node (g, i);
      for (int k = 0; k < NL_GRAPH_MAX_SLOTS; k++)
        for (int a = 0; a < 2; a++)
          {
            const NlShape *s = a ? &n->aux[k] : &n->weights[k];
            if (s->ndim <= 0)
              continue;
            int64_t numel = 1;
            for (int d = 0; d < s->ndim; d++)
              {
                if (s->d[d] <= 0 || numel > MAX_MODEL_BYTES / s->d[d])
                  return INT64_MAX;
                numel *= s->d[d];
              }
            if (numel > MAX_MODEL_BYTES / 4 - total / 4)
              return INT64_MAX;
            total += 4 * numel;
          }
    }
  return total;
}

static void
compile_and_plan (NlNetwork *net, const NlShape *sample, gboolean training)
{
  NlCompileOptions opts = { .batch = 2, .training = training, .loss = training ? "SoftmaxCrossEntropy" : NULL };
  g_autoptr (GError) error = NULL;
  g_autoptr (NlGraph) g = nl_graph_compile (net, sample, &opts, &error);
  if (!g)
    return;
  g_autoptr (NlMemoryPlan) plan = nl_memory_plan_new (g, FALSE);
  g_autoptr (NlMemoryPlan) naive = nl_memory_plan_new (g, TRUE);
  if (plan->planned_bytes > naive->naive_bytes || plan->planned_bytes < 0)
    {
      fprintf (stderr, "fuzz-network: planned %" G_GINT64_FORMAT " bytes, naive %" G_GINT64_FORMAT "\n",
               plan->planned_bytes, naive->naive_bytes);
      abort ();
    }
  if (!training || weight_bytes (g) > MAX_MODEL_BYTES || plan->planned_bytes > MAX_MODEL_BYTES)
    return;
  g_autoptr (NlModel) model = nl_model_new_full (net, sample, &(NlModelOptions) { .seed = 1 }, &error);
  if (!model)
    return;
  g_autoptr (NlProgram) program = nl_program_new (model, &opts, &error);
  if (program)
    nl_program_bytes (program);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  nl_fuzz_init ();
  g_autoptr (GError) error = NULL;
  g_autoptr (NlNetwork) net = nl_network_load_data ((const char *) data, (gssize) size, &error);
  if (!net)
    return 0;

  /* what was loaded saves to JSON that loads again, to the same nodes */
  g_autofree char *json = nl_network_to_json (net);
  g_autoptr (NlNetwork) again = nl_network_load_data (json, -1, &error);
  if (!again || nl_network_n_nodes (again) != nl_network_n_nodes (net) || again->edges->len != net->edges->len)
    {
      fprintf (stderr, "fuzz-network: the saved network does not load back: %s\n%s\n",
               error ? error->message : "other nodes or edges", json);
      abort ();
    }

  g_autofree int *order = g_new (int, nl_network_n_nodes (net) + 1);
  if (!nl_network_validate (net, order, &error))
    return 0;
  /* the sample shape as netloom-cli plan picks it */
  NlShape sample = nl_shape_of (3, (int64_t) 1, (int64_t) 28, (int64_t) 28);
  for (int i = 0; i < nl_network_n_nodes (net); i++)
    {
      NlNode *n = nl_network_node (net, i);
      if (g_strcmp0 (n->def->name, "Input") == 0 && n->params[0].n > 0)
        sample = nl_shape_make (n->params[0].n, n->params[0].v);
    }
  compile_and_plan (net, &sample, TRUE);
  compile_and_plan (net, &sample, FALSE);
  return 0;
}
