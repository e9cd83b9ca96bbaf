/* bench-layout.c — auto-layout and undo costs of NlNetworkDoc on generated
 * networks (a chain with Dense/Activation/Add residual blocks and 3-way
 * Concat branches), 500 and 5000 nodes. Prints one JSON line per size:
 *   layout_ms      nl_network_layout_compute (positions only)
 *   doc_layout_ms  nl_network_doc_auto_layout (compute + one undo step)
 *   undo_ms / redo_ms of that step
 *   remove_ms / remove_undo_ms  removing one middle node (and its edges)
 *   snapshot_ms    nl_network_copy + free: what a snapshot-per-step undo
 *                  would pay on every edit (why the doc stores inverses)
 * The networks are the layout tests' (nl_test_generated_network).
 * Medians of REPEAT runs.  Usage: bench-layout [sizes...] */
#include <stdio.h>
#include <stdlib.h>

#include "ui/network/nl-network-doc.h"
#include "tests/nl-test-util.h"

#define REPEAT 7

static int
cmp_double (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return (x > y) - (x < y);
}

static double
median (double *v, int n)
{
  qsort (v, n, sizeof (double), cmp_double);
  return v[n / 2];
}

static double
ms_since (gint64 t0)
{
  return (g_get_monotonic_time () - t0) / 1000.0;
}

static void
bench (int n)
{
  double layout[REPEAT], doc_layout[REPEAT], undo[REPEAT], redo[REPEAT], rem[REPEAT], rem_undo[REPEAT],
    snap[REPEAT];
  NlNetwork *net = nl_test_generated_network (n);
  int nn = nl_network_n_nodes (net), ne = net->edges->len;
  g_autofree double *xy = g_new (double, 2 * nn);

  for (int r = 0; r < REPEAT; r++)
    {
      gint64 t0 = g_get_monotonic_time ();
      nl_network_layout_compute (net, NULL, 0, xy);
      layout[r] = ms_since (t0);

      t0 = g_get_monotonic_time ();
      NlNetwork *c = nl_network_copy (net);
      nl_network_free (c);
      snap[r] = ms_since (t0);
    }
  for (int r = 0; r < REPEAT; r++)
    {
      g_autoptr (NlNetworkDoc) doc = nl_network_doc_new (nl_network_copy (net));
      int mid = nn / 2;
      gint64 t0 = g_get_monotonic_time ();
      nl_network_doc_auto_layout (doc, NULL, 0);
      doc_layout[r] = ms_since (t0);
      t0 = g_get_monotonic_time ();
      nl_network_doc_undo (doc);
      undo[r] = ms_since (t0);
      t0 = g_get_monotonic_time ();
      nl_network_doc_redo (doc);
      redo[r] = ms_since (t0);
      t0 = g_get_monotonic_time ();
      nl_network_doc_remove_nodes (doc, &mid, 1);
      rem[r] = ms_since (t0);
      t0 = g_get_monotonic_time ();
      nl_network_doc_undo (doc);
      rem_undo[r] = ms_since (t0);
    }
  printf ("{\"bench\": \"layout\", \"nodes\": %d, \"edges\": %d, \"layout_ms\": %.3f, \"doc_layout_ms\": %.3f, "
          "\"undo_ms\": %.3f, \"redo_ms\": %.3f, \"remove_ms\": %.3f, \"remove_undo_ms\": %.3f, "
          "\"snapshot_ms\": %.3f}\n",
          nn, ne, median (layout, REPEAT), median (doc_layout, REPEAT), median (undo, REPEAT), median (redo, REPEAT),
          median (rem, REPEAT), median (rem_undo, REPEAT), median (snap, REPEAT));
  fflush (stdout);
  nl_network_free (net);
}

int
main (int argc, char **argv)
{
  if (argc > 1)
    for (int i = 1; i < argc; i++)
      bench (atoi (argv[i]));
  else
    {
      bench (500);
      bench (5000);
    }
  return 0;
}
