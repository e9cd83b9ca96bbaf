/* test-graph.c — compiled graphs: shapes, the explicit backward graph with
 * gradient-sum nodes, and whole-network gradients by finite differences
 * (weights in training graphs, the input in explain graphs). */
#include <math.h>
#include <string.h>

#include "engine/graph/nl-program.h"
#include "nl-test-util.h"
#include "ops/nl-op-registry.h"

/* Input (1,6,6) -> conv1 -> bn -> tanh -+-> conv2 -> add -> flatten -> fc
 *                                       +-----------^   (value read twice) */
static const char *residual_json =
  "{\"format\":\"netloom.network\",\"version\":1,\"name\":\"res\",\"nodes\":["
  "{\"id\":\"data\",\"op\":\"Input\"},"
  "{\"id\":\"conv1\",\"op\":\"Conv2D\",\"params\":{\"channels\":3,\"kernel\":3,\"padding\":1}},"
  "{\"id\":\"bn\",\"op\":\"BatchNorm\"},"
  "{\"id\":\"act\",\"op\":\"Activation\",\"params\":{\"act_type\":\"tanh\"}},"
  "{\"id\":\"conv2\",\"op\":\"Conv2D\",\"params\":{\"channels\":3,\"kernel\":3,\"padding\":1}},"
  "{\"id\":\"add\",\"op\":\"Add\"},"
  "{\"id\":\"flatten\",\"op\":\"Flatten\"},"
  "{\"id\":\"fc\",\"op\":\"Dense\",\"params\":{\"units\":4}}],"
  "\"edges\":[\"data -> conv1\",\"conv1 -> bn\",\"bn -> act\",\"act -> conv2\",\"conv2 -> add:0\","
  "\"act -> add:1\",\"add -> flatten\",\"flatten -> fc\"]}";

static NlProgram *
make_program (NlModel *model, int batch, gboolean training, const char *loss)
{
  NlCompileOptions opts = { .batch = batch, .training = training, .loss = loss };
  g_autoptr (GError) error = NULL;
  NlProgram *p = nl_program_new (model, &opts, &error);
  g_assert_no_error (error);
  return p;
}

static void
test_structure (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (NlNetwork) net = nl_network_load_data (residual_json, -1, &error);
  NlShape sample = nl_shape_of (3, (int64_t) 1, (int64_t) 6, (int64_t) 6);
  g_autoptr (NlModel) model = nl_model_new_full (net, &sample, &(NlModelOptions) { .seed = 3 }, &error);
  g_autoptr (NlProgram) train = NULL, infer = NULL;
  const NlGraph *g;
  int sums = 0, backwards = 0;

  g_assert_no_error (error);
  train = make_program (model, 5, TRUE, "SoftmaxCrossEntropy");
  g = nl_program_get_graph (train);
  for (guint s = 0; s < g->steps->len; s++)
    {
      const NlStep *st = &g_array_index (g->steps, NlStep, s);
      if (st->kind == NL_STEP_GRAD_SUM)
        {
          sums++;
          g_assert_cmpint (st->n_src, ==, 2);
          /* it sums the gradient of act's output, before act's backward */
          g_assert_cmpint (nl_graph_value (g, st->dst)->node, ==, 3);
          g_assert_cmpint (g_array_index (g->steps, NlStep, s + 1).kind, ==, NL_STEP_BACKWARD);
          g_assert_cmpint (g_array_index (g->steps, NlStep, s + 1).node, ==, 3);
        }
      backwards += st->kind == NL_STEP_BACKWARD;
    }
  g_assert_cmpint (sums, ==, 1);
  /* every node but Input (whose output needs no gradient) runs backward, the loss too */
  g_assert_cmpint (backwards, ==, 8);
  /* conv1 takes no gradient for its input: it is data */
  g_assert_cmpint (nl_graph_node (g, 1)->in_grad[0], ==, -1);
  g_assert_cmpint (nl_tensor_get_shape (nl_program_pred (train)).d[1], ==, 4);
  g_assert_cmpint (nl_tensor_get_shape (nl_program_loss (train)).d[0], ==, 5);

  infer = make_program (model, 7, FALSE, NULL);
  g = nl_program_get_graph (infer);
  g_assert_cmpint (g->steps->len, ==, g->n_forward_steps);
  g_assert_null (nl_program_loss (infer));
  g_assert_cmpint (nl_tensor_get_shape (nl_program_pred (infer)).d[0], ==, 7);
}

static double
mean_loss (NlProgram *p)
{
  g_autoptr (GError) error = NULL;
  const NlTensor *l;
  double s = 0;
  g_assert_true (nl_program_forward (p, 1, &error));
  l = nl_program_loss (p);
  for (int64_t i = 0; i < nl_tensor_numel (l); i++)
    s += nl_tensor_f32 (l)[i];
  return s / nl_tensor_numel (l);
}

static void
test_whole_network_gradient (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (NlNetwork) net = nl_network_load_data (residual_json, -1, &error);
  NlShape sample = nl_shape_of (3, (int64_t) 1, (int64_t) 6, (int64_t) 6);
  g_autoptr (NlModel) model = nl_model_new_full (net, &sample, &(NlModelOptions) { .seed = 11 }, &error);
  g_autoptr (NlProgram) p = make_program (model, 3, TRUE, "SoftmaxCrossEntropy");
  float *labels = nl_tensor_f32 (nl_program_label (p));
  int checked = 0;

  nl_test_fill_uniform (nl_program_input (p), -1, 1, 5);
  labels[0] = 1, labels[1] = 3, labels[2] = 0;
  mean_loss (p);
  g_assert_true (nl_program_backward (p, &error));

  for (int node = 0; node < model->n_nodes; node++)
    for (int k = 0; k < NL_GRAPH_MAX_SLOTS; k++)
      {
        NlTensor *w = model->weights[NL_MODEL_SLOT (node, k)];
        NlTensor *gw = nl_program_weight_grad (p, node, k);
        g_autoptr (NlTensor) analytic = NULL;
        if (!w)
          continue;
        g_assert_nonnull (gw);
        analytic = nl_tensor_copy (gw);
        for (int64_t i = 0; i < nl_tensor_numel (w); i += 1 + nl_tensor_numel (w) / 12)
          {
            float *x = &nl_tensor_f32 (w)[i], keep = *x;
            const double eps = 1e-2;
            double plus, minus, numeric, a = nl_tensor_f32 (analytic)[i];
            *x = keep + eps;
            plus = mean_loss (p);
            *x = keep - eps;
            minus = mean_loss (p);
            *x = keep;
            numeric = (plus - minus) / (2 * eps);
            if (fabs (numeric - a) > 2e-3 + 2e-2 * fabs (numeric))
              g_error ("%s element %" G_GINT64_FORMAT ": analytic %g, numeric %g",
                       nl_model_weight_name (model, node, k), i, a, numeric);
            checked++;
          }
      }
  g_assert_cmpint (checked, >=, 40);
}

/* The other ops an explain graph runs in inference mode: max and average
 * pooling, LayerNorm, GELU, Dropout (the identity), a Softmax at the end. */
static const char *mixed_json =
  "{\"format\":\"netloom.network\",\"version\":1,\"name\":\"mixed\",\"nodes\":["
  "{\"id\":\"data\",\"op\":\"Input\"},"
  "{\"id\":\"conv\",\"op\":\"Conv2D\",\"params\":{\"channels\":2,\"kernel\":3,\"padding\":1}},"
  "{\"id\":\"max\",\"op\":\"MaxPool2D\"},{\"id\":\"avg\",\"op\":\"AvgPool2D\",\"params\":{\"pool_size\":3}},"
  "{\"id\":\"flatten\",\"op\":\"Flatten\"},{\"id\":\"fc1\",\"op\":\"Dense\",\"params\":{\"units\":8}},"
  "{\"id\":\"ln\",\"op\":\"LayerNorm\"},{\"id\":\"gelu\",\"op\":\"GELU\"},"
  "{\"id\":\"drop\",\"op\":\"Dropout\",\"params\":{\"rate\":0.5}},"
  "{\"id\":\"fc2\",\"op\":\"Dense\",\"params\":{\"units\":4}},{\"id\":\"soft\",\"op\":\"Softmax\"}],"
  "\"edges\":[\"data -> conv\",\"conv -> max\",\"max -> avg\",\"avg -> flatten\",\"flatten -> fc1\","
  "\"fc1 -> ln\",\"ln -> gelu\",\"gelu -> drop\",\"drop -> fc2\",\"fc2 -> soft\"]}";

/* Explain graphs: inference-mode ops, no loss, no weight gradients; a
 * backward from a head gradient the caller sets (here one-hot on output 2
 * of sample 0) reaches the Input's output, where it equals finite
 * differences of that output, and is 0 for the other sample. */
static void
check_explain_gradient (const char *json)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (NlNetwork) net = nl_network_load_data (json, -1, &error);
  NlShape sample = nl_shape_of (3, (int64_t) 1, (int64_t) 6, (int64_t) 6);
  g_autoptr (NlModel) model = nl_model_new_full (net, &sample, &(NlModelOptions) { .seed = 13 }, &error);
  NlCompileOptions opts = { .batch = 2, .explain = TRUE, .naive_memory = TRUE };
  g_autoptr (NlProgram) p = nl_program_new (model, &opts, &error);
  const NlGraph *g = nl_program_get_graph (p);
  NlTensor *x = nl_program_input (p), *head;
  g_autoptr (NlTensor) grad = NULL;
  int gv = -1;

  g_assert_no_error (error);
  g_assert_cmpint (g->loss_node, ==, -1);
  for (guint v = 0; v < g->values->len; v++)
    {
      g_assert_cmpint (nl_graph_value (g, v)->kind, !=, NL_VALUE_WEIGHT_GRAD);
      if (nl_graph_value (g, v)->kind == NL_VALUE_GRAD && nl_graph_value (g, v)->node == 0)
        gv = (int) v;
    }
  g_assert_cmpint (gv, >=, 0);
  g_assert_true (nl_shape_equal (&nl_graph_value (g, g->head_grad_value)->shape,
                                 &nl_graph_value (g, g->pred_value)->shape));
  /* running statistics away from 0 and 1, as after training */
  if (nl_network_find (net, "bn") >= 0)
    {
      nl_test_fill_uniform (model->aux[NL_MODEL_SLOT (nl_network_find (net, "bn"), 0)], -0.5f, 0.5f, 7);
      nl_test_fill_uniform (model->aux[NL_MODEL_SLOT (nl_network_find (net, "bn"), 1)], 0.5f, 2.0f, 8);
    }
  nl_test_fill_uniform (x, -1, 1, 9);
  g_assert_true (nl_program_forward (p, 0, &error));
  head = nl_program_value (p, g->head_grad_value);
  memset (nl_tensor_f32 (head), 0, sizeof (float) * nl_tensor_numel (head));
  nl_tensor_f32 (head)[2] = 1;
  g_assert_true (nl_program_backward (p, &error));
  g_assert_no_error (error);
  grad = nl_tensor_copy (nl_program_value (p, gv));
  {
    /* large against the tolerance below, so the comparison says something */
    double big = 0;
    for (int i = 0; i < 36; i++)
      big = MAX (big, fabs (nl_tensor_f32 (grad)[i]));
    g_test_message ("largest input gradient %g", big);
    g_assert_cmpfloat (big, >, 0.02);
  }
  for (int i = 0; i < 36; i++)
    {
      float *xi = &nl_tensor_f32 (x)[i], keep = *xi;
      const double eps = 1e-2;
      double plus, minus, numeric;
      *xi = keep + eps;
      g_assert_true (nl_program_forward (p, 0, &error));
      plus = nl_tensor_f32 (nl_program_pred (p))[2];
      *xi = keep - eps;
      g_assert_true (nl_program_forward (p, 0, &error));
      minus = nl_tensor_f32 (nl_program_pred (p))[2];
      *xi = keep;
      numeric = (plus - minus) / (2 * eps);
      if (fabs (numeric - nl_tensor_f32 (grad)[i]) > 2e-3 + 2e-2 * fabs (numeric))
        g_error ("input %d: analytic %g, numeric %g", i, nl_tensor_f32 (grad)[i], numeric);
      g_assert_cmpfloat (nl_tensor_f32 (grad)[36 + i], ==, 0.0f);
    }
}

static void
test_explain_gradient (void)
{
  check_explain_gradient (residual_json);
  check_explain_gradient (mixed_json);
}

/* A loss node inside the network: its label port stays open and is bound
 * to the labels; for inference the graph stops before it. */
static void
test_loss_in_network (void)
{
  const char *json =
    "{\"format\":\"netloom.network\",\"version\":1,\"nodes\":["
    "{\"id\":\"data\",\"op\":\"Input\"},{\"id\":\"fc\",\"op\":\"Dense\",\"params\":{\"units\":3}},"
    "{\"id\":\"ce\",\"op\":\"SoftmaxCrossEntropy\"}],\"edges\":[\"data -> fc\",\"fc -> ce:0\"]}";
  g_autoptr (GError) error = NULL;
  g_autoptr (NlNetwork) net = nl_network_load_data (json, -1, &error);
  NlShape sample = nl_shape_of (1, (int64_t) 5);
  g_autoptr (NlModel) model = nl_model_new_full (net, &sample, &(NlModelOptions) { .seed = 1 }, &error);
  g_autoptr (NlProgram) train = NULL, infer = NULL;

  g_assert_no_error (error);
  train = make_program (model, 4, TRUE, "L2Loss"); /* the network's own loss wins */
  g_assert_cmpstr (nl_graph_node (nl_program_get_graph (train), nl_program_get_graph (train)->loss_node)->def->name,
                   ==, "SoftmaxCrossEntropy");
  g_assert_cmpint (nl_tensor_get_shape (nl_program_pred (train)).d[1], ==, 3);
  infer = make_program (model, 4, FALSE, NULL);
  g_assert_cmpint (nl_program_get_graph (infer)->nodes->len, ==, 2);
  g_assert_true (nl_program_pred (infer) != NULL);
}

static int64_t
seven_macs (const NlShape *out, const NlShape *weights)
{
  return 7;
}

/* The multiply-adds come from the op definition's hook; without one, one
 * per output element. */
static void
test_macs_hook (void)
{
  const NlOpDef with = { .name = "With", .macs = seven_macs }, without = { .name = "Without" };
  NlShape out = nl_shape_of (2, 4, 10), w[2] = { nl_shape_of (2, 10, 3), NL_SHAPE_ABSENT };

  g_assert_cmpint (nl_graph_estimate_macs (&with, &out, w), ==, 7);
  g_assert_cmpint (nl_graph_estimate_macs (&without, &out, w), ==, 40);
  /* Dense and Conv2D: every output element reads one row of weight 0 */
  g_assert_cmpint (nl_graph_estimate_macs (nl_op_lookup ("Dense"), &out, w), ==, 40 * 3);
  w[0] = nl_shape_of (4, 10, 2, 3, 3);
  g_assert_cmpint (nl_graph_estimate_macs (nl_op_lookup ("Conv2D"), &out, w), ==, 40 * 18);
  g_assert_cmpint (nl_graph_estimate_macs (nl_op_lookup ("Activation"), &out, w), ==, 40);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  nl_threads_set (2);
  g_test_add_func ("/graph/structure", test_structure);
  g_test_add_func ("/graph/whole-network-gradient", test_whole_network_gradient);
  g_test_add_func ("/graph/loss-in-network", test_loss_in_network);
  g_test_add_func ("/graph/explain-gradient", test_explain_gradient);
  g_test_add_func ("/graph/macs-hook", test_macs_hook);
  return g_test_run ();
}
