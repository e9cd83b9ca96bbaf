/* test-planner.c — the static memory plan: no two live values overlap on
 * random DAGs, results are bit-identical to every value in its own
 * buffer, and the templates meet the savings MXNet reports. */
#include <limits.h>
#include <string.h>

#include "engine/graph/nl-program.h"
#include "nl-test-util.h"

/* A random DAG on (N, 8) values: elementwise ops, Dense, BatchNorm,
 * Dropout, Concat+Dense, and Add joining earlier nodes; every dangling
 * node is summed into the sink so the network has one output. */
static NlNetwork *
random_network (GRand *r, int n_nodes)
{
  static const char *const unary[] = { "relu", "tanh", "sigmoid", "leaky", "dense", "bn", "dropout", "gelu" };
  NlNetwork *net = nl_network_new ("fuzz");
  g_autofree int *consumers = g_new0 (int, 2 * n_nodes + 8);
  int count = 1, sink;
  g_autoptr (GError) error = NULL;
  g_autoptr (GArray) width8 = g_array_new (FALSE, FALSE, sizeof (int)); /* nodes of shape (N, 8) */
  int zero = 0;

  nl_network_add_node (net, "data", "Input", &error);
  g_array_append_val (width8, zero);
  for (int i = 1; i < n_nodes; i++)
    {
      g_autofree char *id = g_strdup_printf ("n%d", i);
      int kind = g_rand_int_range (r, 0, 11);
      int a = g_array_index (width8, int, g_rand_int_range (r, 0, width8->len));
      int b = g_array_index (width8, int, g_rand_int_range (r, 0, width8->len)), node;
      if (kind < 8)
        {
          const char *u = unary[kind];
          node = nl_network_add_node (net, id, strcmp (u, "dense") == 0 ? "Dense"
                                               : strcmp (u, "bn") == 0 ? "BatchNorm"
                                               : strcmp (u, "dropout") == 0 ? "Dropout"
                                               : strcmp (u, "leaky") == 0 ? "LeakyReLU"
                                               : strcmp (u, "gelu") == 0 ? "GELU" : "Activation", &error);
          if (strcmp (u, "dense") == 0)
            nl_network_set_param (net, node, "units", "8", &error);
          else if (strcmp (u, "relu") == 0 || strcmp (u, "tanh") == 0 || strcmp (u, "sigmoid") == 0)
            nl_network_set_param (net, node, "act_type", u, &error);
          else if (strcmp (u, "dropout") == 0)
            nl_network_set_param (net, node, "rate", "0.3", &error);
          nl_network_connect (net, a, 0, node, 0, &error);
          consumers[a]++;
        }
      else if (kind < 10)
        {
          node = nl_network_add_node (net, id, "Add", &error);
          nl_network_connect (net, a, 0, node, 0, &error);
          nl_network_connect (net, b, 0, node, 1, &error); /* a == b: a value read twice */
          consumers[a]++, consumers[b]++;
        }
      else
        {
          g_autofree char *id2 = g_strdup_printf ("n%d_fc", i);
          int cat = nl_network_add_node (net, id, "Concat", &error), fc;
          nl_network_connect (net, a, 0, cat, 0, &error);
          nl_network_connect (net, b, 0, cat, 1, &error);
          consumers[a]++, consumers[b]++;
          fc = nl_network_add_node (net, id2, "Dense", &error);
          nl_network_set_param (net, fc, "units", "8", &error);
          nl_network_connect (net, cat, 0, fc, 0, &error);
          consumers[cat]++;
          count++;
          node = fc;
        }
      g_assert_no_error (error);
      count++;
      g_assert_cmpint (node, ==, count - 1);
      g_array_append_val (width8, node);
    }
  {
    /* join every dangling node, at most NL_MAX_PORTS per Add */
    g_autoptr (GArray) open_nodes = g_array_new (FALSE, FALSE, sizeof (int));
    int joins = 0;
    for (int i = 0; i < count; i++)
      if (consumers[i] == 0)
        g_array_append_val (open_nodes, i);
    while (open_nodes->len > 1 || joins == 0)
      {
        g_autofree char *id = g_strdup_printf ("join%d", joins++);
        int take = MIN ((int) open_nodes->len, NL_MAX_PORTS);
        sink = nl_network_add_node (net, id, "Add", &error);
        for (int p = 0; p < take; p++)
          nl_network_connect (net, g_array_index (open_nodes, int, p), 0, sink, p, &error);
        g_array_remove_range (open_nodes, 0, take);
        g_array_append_val (open_nodes, sink);
      }
  }
  g_assert_no_error (error);
  return net;
}

/* Two values whose bytes overlap are never live at once, except an
 * in-place handoff at one step the op allows. */
static void
check_no_overlap (const NlGraph *g, const NlMemoryPlan *plan)
{
  for (int u = 0; u < plan->n_values; u++)
    for (int v = u + 1; v < plan->n_values; v++)
      {
        int64_t su = nl_shape_numel (&nl_graph_value (g, u)->shape) * 4, sv = nl_shape_numel (&nl_graph_value (g, v)->shape) * 4;
        gboolean bytes = plan->offset[u] < plan->offset[v] + sv && plan->offset[v] < plan->offset[u] + su;
        int lo = MAX (plan->first[u], plan->first[v]), hi = MIN (plan->last[u], plan->last[v]);
        if (!bytes || lo > hi)
          continue;
        if (lo == hi && su == sv)
          {
            int a = plan->first[u] < plan->first[v] ? u : v, b = a == u ? v : u;
            const NlStep *st = &g_array_index (g->steps, NlStep, lo);
            const NlGraphNode *n = st->kind == NL_STEP_GRAD_SUM ? NULL : nl_graph_node (g, st->node);
            if (n && st->kind == NL_STEP_FORWARD && n->def->inplace && n->in[0] == a && n->out == b)
              continue;
            if (n && st->kind == NL_STEP_BACKWARD && n->def->backward_inplace && n->out_grad == a && n->in_grad[0] == b)
              continue;
          }
        g_error ("values %d [%d,%d] and %d [%d,%d] share bytes while both live", u, plan->first[u], plan->last[u], v,
                 plan->first[v], plan->last[v]);
      }
  for (int v = 0; v < plan->n_values; v++)
    if (nl_graph_value_is_persistent (g, v))
      for (int u = 0; u < plan->n_values; u++)
        g_assert_true (u == v || plan->block[u] != plan->block[v]);
}

static void
run_step (NlProgram *p, guint64 seed)
{
  g_autoptr (GError) error = NULL;
  float *lab = nl_tensor_f32 (nl_program_label (p));
  nl_test_fill_uniform (nl_program_input (p), -1, 1, seed);
  for (int i = 0; i < nl_tensor_numel (nl_program_label (p)); i++)
    lab[i] = (float) ((i * 5 + seed) % 8);
  g_assert_true (nl_program_forward (p, seed, &error));
  g_assert_true (nl_program_backward (p, &error));
  g_assert_no_error (error);
}

static void
test_fuzz (void)
{
  GRand *r = g_rand_new_with_seed (1234);
  int n_graphs = g_test_slow () ? 400 : 120;
  int64_t saved = 0, naive = 0;
  for (int t = 0; t < n_graphs; t++)
    {
      g_autoptr (NlNetwork) net = random_network (r, g_rand_int_range (r, 3, 40));
      NlShape sample = nl_shape_of (1, (int64_t) 8);
      g_autoptr (GError) error = NULL;
      g_autoptr (NlModel) model = nl_model_new_full (net, &sample, &(NlModelOptions) { .seed = t }, &error);
      NlCompileOptions planned = { .batch = 5, .training = TRUE, .loss = "SoftmaxCrossEntropy" };
      NlCompileOptions naive_opts = planned;
      g_autoptr (NlProgram) a = NULL, b = NULL;

      g_assert_no_error (error);
      naive_opts.naive_memory = TRUE;
      a = nl_program_new (model, &planned, &error);
      b = nl_program_new (model, &naive_opts, &error);
      g_assert_no_error (error);
      check_no_overlap (nl_program_get_graph (a), nl_program_get_plan (a));
      saved += nl_program_get_plan (a)->planned_bytes;
      naive += nl_program_get_plan (a)->naive_bytes;
      /* two steps each (the second sees the first's leftovers in reused blocks) */
      for (int step = 1; step <= 2; step++)
        {
          run_step (a, step);
          run_step (b, step);
          g_assert_cmpmem (nl_tensor_f32 (nl_program_loss (a)), 20, nl_tensor_f32 (nl_program_loss (b)), 20);
          for (int node = 0; node < model->n_nodes; node++)
            for (int k = 0; k < NL_GRAPH_MAX_SLOTS; k++)
              {
                NlTensor *ga = nl_program_weight_grad (a, node, k), *gb = nl_program_weight_grad (b, node, k);
                if (ga)
                  g_assert_cmpmem (nl_tensor_f32 (ga), nl_tensor_numel (ga) * 4, nl_tensor_f32 (gb), nl_tensor_numel (gb) * 4);
              }
        }
      /* inference plans too */
      {
        NlCompileOptions io = { .batch = 3, .training = FALSE };
        g_autoptr (NlGraph) g = nl_graph_compile (model->net, &sample, &io, &error);
        g_autoptr (NlMemoryPlan) plan = nl_memory_plan_new (g, FALSE);
        check_no_overlap (g, plan);
      }
    }
  g_test_message ("%d random graphs: planned %.3f of naive", n_graphs, (double) saved / naive);
  g_assert_cmpint (saved, <, naive);
  g_rand_free (r);
}

static void
test_templates (void)
{
  const char *names[] = { "lenet", "resnet-small" };
  for (gsize i = 0; i < G_N_ELEMENTS (names); i++)
    {
      g_autofree char *rel = g_strdup_printf ("data/networks/%s.json", names[i]);
      g_autofree char *path = nl_test_source_path (rel);
      g_autoptr (GError) error = NULL;
      g_autoptr (NlNetwork) net = nl_network_load_file (path, &error);
      NlShape sample = nl_shape_of (3, (int64_t) 1, (int64_t) 28, (int64_t) 28);
      for (int training = 0; training <= 1; training++)
        {
          NlCompileOptions o = { .batch = 128, .training = training, .loss = training ? "SoftmaxCrossEntropy" : NULL };
          g_autoptr (NlGraph) g = nl_graph_compile (net, &sample, &o, &error);
          g_autoptr (NlMemoryPlan) plan = NULL;
          double ratio;
          g_assert_no_error (error);
          plan = nl_memory_plan_new (g, FALSE);
          check_no_overlap (g, plan);
          ratio = (double) plan->planned_bytes / plan->naive_bytes;
          g_test_message ("%s %s: %.3f of naive", names[i], training ? "training" : "inference", ratio);
          /* MXNet reports about half; the targets */
          g_assert_cmpfloat (ratio, <=, training ? 0.6 : 0.5);
          g_assert_cmpint (plan->n_inplace, >, 0);
        }
    }
}

/* Training with the planner and without: the same weights, bit for bit. */
static void
test_training_identical (void)
{
  g_autofree char *path = nl_test_source_path ("data/networks/resnet-small.json");
  g_autoptr (GError) error = NULL;
  g_autoptr (NlNetwork) net = nl_network_load_file (path, &error);
  NlShape sample = nl_shape_of (3, (int64_t) 1, (int64_t) 28, (int64_t) 28);
  NlCompileOptions o = { .batch = 6, .training = TRUE, .loss = "SoftmaxCrossEntropy" };
  NlOptimConfig cfg;
  g_autoptr (NlModel) ma = NULL, mb = NULL;
  g_autoptr (NlProgram) a = NULL, b = NULL;

  nl_optim_config_init (&cfg, NL_OPTIM_ADAM);
  ma = nl_model_new_full (net, &sample, &(NlModelOptions) { .seed = 5, .optim = &cfg }, &error);
  mb = nl_model_new_full (net, &sample, &(NlModelOptions) { .seed = 5, .optim = &cfg }, &error);
  g_assert_true (ma && mb);
  a = nl_program_new (ma, &o, &error);
  o.naive_memory = TRUE;
  b = nl_program_new (mb, &o, &error);
  g_assert_no_error (error);
  g_assert_cmpint (nl_program_get_plan (a)->planned_bytes, <, nl_program_get_plan (b)->planned_bytes);
  for (int step = 1; step <= 4; step++)
    {
      run_step (a, step);
      run_step (b, step);
      g_assert_true (nl_program_update (a, &cfg, 0.01f, step, &error));
      g_assert_true (nl_program_update (b, &cfg, 0.01f, step, &error));
    }
  for (int i = 0; i < ma->n_nodes * NL_GRAPH_MAX_SLOTS; i++)
    {
      if (ma->weights[i])
        g_assert_cmpmem (nl_tensor_f32 (ma->weights[i]), nl_tensor_numel (ma->weights[i]) * 4,
                         nl_tensor_f32 (mb->weights[i]), nl_tensor_numel (mb->weights[i]) * 4);
      if (ma->aux[i])
        g_assert_cmpmem (nl_tensor_f32 (ma->aux[i]), nl_tensor_numel (ma->aux[i]) * 4,
                         nl_tensor_f32 (mb->aux[i]), nl_tensor_numel (mb->aux[i]) * 4);
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  nl_threads_set (2);
  g_test_add_func ("/planner/fuzz", test_fuzz);
  g_test_add_func ("/planner/templates", test_templates);
  g_test_add_func ("/planner/training-identical", test_training_identical);
  return g_test_run ();
}
