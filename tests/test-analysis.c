/* test-analysis.c — the editor's live analysis: shapes, parameters, cost,
 * memory, and every error at once, checked against hand-computed values. */
#include "engine/session/nl-analysis.h"
#include "engine/session/nl-catalog.h"
#include "tests/nl-test-util.h"

#include <string.h>

static const NlNodeAnalysis *
node_of (const NlAnalysis *a, const NlNetwork *net, const char *id)
{
  int i = nl_network_find (net, id);
  g_assert_cmpint (i, >=, 0);
  return &a->nodes[i];
}

static void
test_lenet (void)
{
  g_autoptr (NlNetwork) net = nl_test_load_template ("lenet");
  g_autoptr (NlAnalysis) a = nl_analysis_new (net, 64, 1);
  g_autofree char *shape = NULL;
  const NlNodeAnalysis *conv1 = node_of (a, net, "conv1"), *fc1 = node_of (a, net, "fc1");

  g_assert_cmpint (a->n_errors, ==, 0);
  g_assert_null (a->network_error);
  /* conv1: 20 filters of 1x5x5 plus bias on 28x28 -> 24x24 */
  g_assert_cmpint (conv1->out.ndim, ==, 4);
  g_assert_cmpint (conv1->out.d[0], ==, 64);
  g_assert_cmpint (conv1->out.d[1], ==, 20);
  g_assert_cmpint (conv1->out.d[2], ==, 24);
  g_assert_cmpint (conv1->params, ==, 20 * 25 + 20);
  g_assert_cmpint (conv1->macs, ==, (int64_t) 64 * 20 * 24 * 24 * 25);
  /* fc1: 800 -> 500 */
  g_assert_cmpint (fc1->params, ==, 800 * 500 + 500);
  g_assert_cmpint (fc1->out.d[1], ==, 500);
  /* LeNet's classic count: 520 + 25,050 + 400,500 + 5,010 */
  g_assert_cmpint (a->total_params, ==, 431080);
  shape = nl_analysis_format_shape (&node_of (a, net, "pool2")->out);
  g_assert_cmpstr (shape, ==, "50×4×4");
  /* memory: at least the weights, gradients and momentum, plus activations */
  g_assert_cmpint (a->activation_bytes, >, 64 * 20 * 24 * 24 * 4);
  g_assert_cmpint (a->train_bytes, ==, a->activation_bytes + a->total_params * 4 * 3);
}

/* Gluon's deferred shapes: an Input without a fixed shape takes the data's
 * sample shape; one the user fixed keeps it. */
static void
test_sample_shape (void)
{
  g_autoptr (NlNetwork) net = nl_test_load_template ("lenet");
  NlShape cifar = nl_shape_of (3, (int64_t) 3, (int64_t) 32, (int64_t) 32);
  g_autoptr (NlAnalysis) a = nl_analysis_new_for_sample (net, &cifar, 16, 1);
  g_autoptr (NlAnalysis) fixed = NULL, none = NULL;
  g_autoptr (GError) error = NULL;
  g_autofree char *shape = nl_analysis_format_shape (&node_of (a, net, "data")->out);

  g_assert_cmpint (a->n_errors, ==, 0);
  g_assert_cmpstr (shape, ==, "3×32×32");
  g_assert_cmpint (a->sample.ndim, ==, 3);
  /* conv1 3x5x5 filters: 32 -> 28 -> 14 -> 10 -> 5, fc1 from 50x5x5 */
  g_assert_cmpint (node_of (a, net, "conv1")->params, ==, 20 * 75 + 20);
  g_assert_cmpint (node_of (a, net, "fc1")->params, ==, 1250 * 500 + 500);
  g_assert_cmpint (a->total_params, ==, 1520 + 25050 + 625500 + 5010);
  g_assert_cmpint (a->train_bytes, >, 0);
  /* no data: 1x28x28, as before */
  none = nl_analysis_new_for_sample (net, NULL, 16, 1);
  g_assert_cmpint (none->total_params, ==, 431080);
  g_assert_cmpint (none->sample.ndim, <, 0);
  /* a fixed shape wins over the data's */
  g_assert_true (nl_network_set_param (net, nl_network_find (net, "data"), "shape", "1,28,28", &error));
  fixed = nl_analysis_new_for_sample (net, &cifar, 16, 1);
  g_assert_cmpint (fixed->total_params, ==, 431080);
}

static void
test_errors_reported_per_node (void)
{
  g_autoptr (NlNetwork) net = nl_test_load_template ("lenet");
  g_autoptr (GError) error = NULL;
  g_autoptr (NlAnalysis) a = NULL;
  int fc1 = nl_network_find (net, "fc1"), pool1 = nl_network_find (net, "pool1");

  /* a 30x30 kernel cannot slide over 12x12 */
  g_assert_true (nl_network_set_param (net, nl_network_find (net, "conv2"), "kernel", "30,30", &error));
  a = nl_analysis_new (net, 8, 1);
  g_assert_cmpint (a->n_errors, ==, 1);
  g_assert_nonnull (node_of (a, net, "conv2")->error);
  /* upstream still known, downstream unknown without an error of its own */
  g_assert_cmpint (a->nodes[pool1].out.d[1], ==, 20);
  g_assert_cmpint (a->nodes[fc1].out.ndim, <, 0);
  g_assert_null (a->nodes[fc1].error);
  g_assert_cmpint (a->train_bytes, ==, -1);
}

static void
test_structure_errors (void)
{
  g_autoptr (NlNetwork) net = nl_network_new ("t");
  g_autoptr (GError) error = NULL;
  g_autoptr (NlAnalysis) empty = nl_analysis_new (net, 8, 0);
  g_autoptr (NlAnalysis) a = NULL;
  int in, d1, d2, add;

  g_assert_nonnull (empty->network_error);
  in = nl_network_add_node (net, "data", "Input", &error);
  d1 = nl_network_add_node (net, "d1", "Dense", &error);
  d2 = nl_network_add_node (net, "d2", "Dense", &error);
  add = nl_network_add_node (net, "add", "Add", &error);
  g_assert_no_error (error);
  g_assert_true (nl_network_set_param (net, d1, "units", "10", NULL));
  g_assert_true (nl_network_set_param (net, d2, "units", "12", NULL));
  g_assert_true (nl_network_connect (net, in, 0, d1, 0, NULL));
  g_assert_true (nl_network_connect (net, in, 0, d2, 0, NULL));
  g_assert_true (nl_network_connect (net, d1, 0, add, 0, NULL));
  g_assert_true (nl_network_connect (net, d2, 0, add, 1, NULL));
  a = nl_analysis_new (net, 4, 0);
  /* 10 vs 12 units cannot be added */
  g_assert_nonnull (a->nodes[add].error);
  g_assert_null (a->nodes[d1].error);
  g_assert_cmpint (a->nodes[d1].params, ==, 784 * 10 + 10);
  g_clear_pointer (&a, nl_analysis_free);

  /* a second sink */
  g_assert_true (nl_network_set_param (net, d2, "units", "10", NULL));
  nl_network_add_node (net, "loose", "Dense", NULL);
  a = nl_analysis_new (net, 4, 0);
  g_assert_nonnull (a->network_error);
  g_assert_nonnull (strstr (a->network_error, "loose"));
  g_assert_nonnull (a->nodes[nl_network_find (net, "loose")].error); /* input not connected */
}

static void
test_catalog (void)
{
  int n;
  const NlOpDef *const *ops = nl_catalog_ops (&n);
  const char *const *cats = nl_catalog_categories ();
  g_autoptr (NlNetwork) net = nl_test_load_template ("lenet");
  g_autofree char *summary = nl_catalog_node_summary (nl_network_node (net, nl_network_find (net, "conv1")));
  g_autofree char *id = nl_catalog_new_node_id (net, "Conv2D");
  g_autofree char *fmt = NULL;

  g_assert_cmpint (n, ==, 33); /* 27 + MatMul, MultiHeadAttention, PositionalEmbedding, SequencePool, LSTM, GRU */
  /* every op's category is one of the palette's groups */
  for (int i = 0; i < n; i++)
    g_assert_true (g_strv_contains (cats, ops[i]->category));
  g_assert_cmpstr (summary, ==, "channels 20 · kernel 5x5");
  g_assert_cmpstr (id, ==, "conv2d");
  g_assert_true (nl_catalog_lookup ("Dense") != NULL);
  {
    int i = nl_network_find (net, "data");
    const NlNode *data = nl_network_node (net, i);
    /* the template's Input takes its shape from the data (none set) */
    g_assert_cmpint (data->params[0].n, ==, 0);
    g_assert_true (nl_network_set_param (net, i, "shape", "[1, 28, 28]", NULL));
    fmt = nl_catalog_format_param (&data->def->params[0], &data->params[0]);
    g_assert_cmpstr (fmt, ==, "1x28x28");
  }
}

static void
test_formats (void)
{
  g_autofree char *a = nl_format_count (431080), *b = nl_format_count (999), *c = nl_format_count (1234567);
  g_assert_cmpstr (a, ==, "431k");
  g_assert_cmpstr (b, ==, "999");
  g_assert_cmpstr (c, ==, "1.23M");
}

static void
test_templates_clean (void)
{
  static const char *const names[] = { "mlp", "lenet", "resnet-small" };
  for (guint i = 0; i < G_N_ELEMENTS (names); i++)
    {
      g_autoptr (NlNetwork) net = nl_test_load_template (names[i]);
      g_autoptr (NlAnalysis) a = nl_analysis_new (net, 128, 2);
      g_assert_cmpint (a->n_errors, ==, 0);
      g_assert_cmpint (a->train_bytes, >, 0);
      g_assert_cmpint (a->total_macs, >, 0);
    }
}

/* The editor analyses what it opens: 32,000 nodes in a chain, every shape
 * known, the Dense's parameters counted, no errors (the time is
 * bench-network-open's). */
static void
test_big_chain (void)
{
  const int n = 32000;
  g_autofree char *json = nl_test_chain_network_json (n);
  g_autoptr (GError) error = NULL;
  g_autoptr (NlNetwork) net = nl_network_load_data (json, -1, &error);
  g_autoptr (NlAnalysis) a = NULL;

  g_assert_no_error (error);
  a = nl_analysis_new (net, 8, 1);
  g_assert_cmpint (a->n_errors, ==, 0);
  g_assert_cmpint (a->n_nodes, ==, n);
  g_assert_cmpint (a->nodes[n - 2].out.ndim, ==, 2);
  g_assert_cmpint (a->nodes[n - 2].out.d[1], ==, 16);
  g_assert_cmpint (a->nodes[n - 1].out.d[1], ==, 10);
  g_assert_cmpint (a->total_params, ==, 16 * 10 + 10);
  g_assert_cmpint (a->activation_bytes, >, 0);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/analysis/lenet", test_lenet);
  g_test_add_func ("/analysis/sample-shape", test_sample_shape);
  g_test_add_func ("/analysis/errors-per-node", test_errors_reported_per_node);
  g_test_add_func ("/analysis/structure", test_structure_errors);
  g_test_add_func ("/analysis/catalog", test_catalog);
  g_test_add_func ("/analysis/formats", test_formats);
  g_test_add_func ("/analysis/templates", test_templates_clean);
  g_test_add_func ("/analysis/big-chain", test_big_chain);
  return g_test_run ();
}
