/* bench-network-open.c — how long opening a big network takes, stage by
 * stage: load (JSON to document), validate, analysis (what the editor
 * shows) and compile for training. A chain of N nodes (default 32,000,
 * about 3.2 MB of JSON); every stage should grow linearly with N. Each
 * stage's best of R rounds (default 3), in wall-clock and CPU seconds (the
 * CPU time is what a busy machine does not inflate).
 *
 *   build/bench/bench-network-open [N [R]] */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/graph/nl-graph.h"
#include "engine/session/nl-analysis.h"
#include "tests/nl-test-util.h"

enum { LOAD, VALIDATE, ANALYSIS, COMPILE, N_STAGES };
static const char *const stage_names[] = { "load", "validate", "analysis", "compile" };

static double
cpu_now (void)
{
  struct timespec t;
  clock_gettime (CLOCK_PROCESS_CPUTIME_ID, &t);
  return t.tv_sec + t.tv_nsec / 1e9;
}

static double
wall_now (void)
{
  return g_get_monotonic_time () / 1e6;
}

int
main (int argc, char **argv)
{
  int n = MAX (argc > 1 ? atoi (argv[1]) : 32000, 3);
  int rounds = MAX (argc > 2 ? atoi (argv[2]) : 3, 1);
  g_autofree char *json = nl_test_chain_network_json (n);
  double best_wall[N_STAGES], best_cpu[N_STAGES], total_wall = G_MAXDOUBLE, total_cpu = G_MAXDOUBLE;
  NlShape sample = nl_shape_of (1, (int64_t) 16);
  NlCompileOptions opts = { .batch = 32, .training = TRUE, .loss = "SoftmaxCrossEntropy" };
  int errors = 0;
  guint steps = 0;

  for (int s = 0; s < N_STAGES; s++)
    best_wall[s] = best_cpu[s] = G_MAXDOUBLE;
  for (int r = 0; r < rounds; r++)
    {
      g_autoptr (GError) error = NULL;
      g_autoptr (NlNetwork) net = NULL;
      g_autoptr (NlAnalysis) a = NULL;
      g_autoptr (NlGraph) g = NULL;
      g_autofree int *order = NULL;
      double wall[N_STAGES + 1], cpu[N_STAGES + 1];

      wall[0] = wall_now (), cpu[0] = cpu_now ();
      net = nl_network_load_data (json, -1, &error);
      nl_test_ok_or_die (net != NULL, error, "load");
      wall[1] = wall_now (), cpu[1] = cpu_now ();
      order = g_new (int, nl_network_n_nodes (net));
      nl_test_ok_or_die (nl_network_validate (net, order, &error), error, "validate");
      wall[2] = wall_now (), cpu[2] = cpu_now ();
      a = nl_analysis_new (net, 32, 1);
      wall[3] = wall_now (), cpu[3] = cpu_now ();
      g = nl_graph_compile (net, &sample, &opts, &error);
      nl_test_ok_or_die (g != NULL, error, "compile");
      wall[4] = wall_now (), cpu[4] = cpu_now ();
      for (int s = 0; s < N_STAGES; s++)
        {
          best_wall[s] = MIN (best_wall[s], wall[s + 1] - wall[s]);
          best_cpu[s] = MIN (best_cpu[s], cpu[s + 1] - cpu[s]);
        }
      total_wall = MIN (total_wall, wall[N_STAGES] - wall[0]);
      total_cpu = MIN (total_cpu, cpu[N_STAGES] - cpu[0]);
      errors = a->n_errors;
      steps = g->steps->len;
    }
  g_print ("%d nodes, %zu bytes of JSON, best of %d rounds (%d analysis errors, %u compiled steps)\n", n,
           strlen (json), rounds, errors, steps);
  g_print ("%-9s %8s %8s\n", "", "wall s", "cpu s");
  for (int s = 0; s < N_STAGES; s++)
    g_print ("%-9s %8.3f %8.3f\n", stage_names[s], best_wall[s], best_cpu[s]);
  g_print ("%-9s %8.3f %8.3f\n", "total", total_wall, total_cpu);
  return 0;
}
