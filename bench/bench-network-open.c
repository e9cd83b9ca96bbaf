/* bench-network-open.c — how long opening a big network takes, stage by
 * stage: load (JSON to document), validate, analysis (what the editor
 * shows) and compile for training. A chain of N nodes (default 32,000,
 * about 2.5 MB of JSON); every stage should grow linearly with N.
 *
 *   build/bench/bench-network-open [N] */
#include <stdlib.h>
#include <string.h>

#include "engine/nl-graph.h"
#include "engine/session/nl-analysis.h"
#include "tests/nl-test-util.h"

static double
seconds_since (gint64 t0)
{
  return (g_get_monotonic_time () - t0) / 1e6;
}

int
main (int argc, char **argv)
{
  int n = argc > 1 ? atoi (argv[1]) : 32000;
  g_autofree char *json = nl_test_chain_network_json (MAX (n, 3));
  g_autoptr (GError) error = NULL;
  g_autoptr (NlNetwork) net = NULL;
  g_autoptr (NlAnalysis) a = NULL;
  g_autoptr (NlGraph) g = NULL;
  g_autofree int *order = NULL;
  NlShape sample = nl_shape_of (1, (int64_t) 16);
  NlCompileOptions opts = { .batch = 32, .training = TRUE, .loss = "SoftmaxCrossEntropy" };
  gint64 t0 = g_get_monotonic_time (), all = t0;

  net = nl_network_load_data (json, -1, &error);
  nl_test_ok_or_die (net != NULL, error, "load");
  g_print ("%d nodes, %zu bytes of JSON\n", nl_network_n_nodes (net), strlen (json));
  g_print ("load      %8.3f s\n", seconds_since (t0));
  t0 = g_get_monotonic_time ();
  order = g_new (int, nl_network_n_nodes (net));
  nl_test_ok_or_die (nl_network_validate (net, order, &error), error, "validate");
  g_print ("validate  %8.3f s\n", seconds_since (t0));
  t0 = g_get_monotonic_time ();
  a = nl_analysis_new (net, 32, 1);
  g_print ("analysis  %8.3f s (%d errors)\n", seconds_since (t0), a->n_errors);
  t0 = g_get_monotonic_time ();
  g = nl_graph_compile (net, &sample, &opts, &error);
  nl_test_ok_or_die (g != NULL, error, "compile");
  g_print ("compile   %8.3f s (%u steps)\n", seconds_since (t0), g->steps->len);
  g_print ("total     %8.3f s\n", seconds_since (all));
  return 0;
}
