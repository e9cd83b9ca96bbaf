/* nl-analysis.c — per-node shapes, parameters, cost and errors of a network
 * being edited. Unlike nl_graph_compile, which stops at the first error,
 * this goes on: every bad node gets its own message and nodes downstream of
 * it are merely unknown, so the editor can show all problems at once. */
#include "engine/session/nl-analysis.h"
#include "engine/graph/nl-program.h"
#include "ops/nl-op-registry.h"

#include <string.h>

void
nl_analysis_free (NlAnalysis *a)
{
  if (!a)
    return;
  for (int i = 0; i < a->n_nodes; i++)
    g_free (a->nodes[i].error);
  g_free (a->nodes);
  g_free (a->network_error);
  g_free (a);
}

static void
node_error (NlAnalysis *a, int i, char *message)
{
  if (a->nodes[i].error)
    g_free (message);
  else
    {
      a->nodes[i].error = message;
      a->n_errors++;
    }
}

static gboolean
is_input (const NlNode *n)
{
  return strcmp (n->def->name, "Input") == 0;
}

/* Shape inference of node i from its inputs' shapes. */
static void
infer_node (NlAnalysis *a, const NlNetwork *net, int i, const int *src, int n_ports)
{
  const NlNode *node = nl_network_node (net, i);
  NlNodeAnalysis *na = &a->nodes[i];
  NlShape in[NL_MAX_PORTS], weights[NL_GRAPH_MAX_SLOTS], aux[NL_GRAPH_MAX_SLOTS], saved[NL_GRAPH_MAX_SLOTS],
    out[4];
  g_autoptr (GError) error = NULL;
  int n_data = 0;
  NlInferCtx ic;

  if (is_input (node))
    {
      /* the shape the user fixed, else the data's, else MNIST's */
      const NlParamValue *s = &node->params[0];
      NlShape sample = s->n > 0 ? nl_shape_make (s->n, s->v)
                       : a->sample.ndim > 0 ? a->sample : nl_shape_of (3, (int64_t) 1, (int64_t) 28, (int64_t) 28);
      in[0].ndim = sample.ndim + 1;
      in[0].d[0] = a->batch;
      for (int k = 0; k < sample.ndim; k++)
        in[0].d[k + 1] = sample.d[k];
      n_data = 1;
    }
  else
    {
      for (int p = 0; p < n_ports; p++)
        {
          if (src[p] < 0)
            {
              if (node->def->is_loss && p == 1)
                {
                  /* the trainer binds the labels here */
                  in[p] = nl_shape_of (1, (int64_t) a->batch);
                  n_data = p + 1;
                  continue;
                }
              if (node->def->variadic)
                break;
              node_error (a, i, g_strdup_printf ("input '%s' is not connected", node->def->inputs[p]));
              return;
            }
          if (a->nodes[src[p]].out.ndim < 0)
            return; /* upstream problem: unknown, not an error here */
          in[p] = a->nodes[src[p]].out;
          n_data = p + 1;
        }
      if (n_data == 0)
        {
          node_error (a, i, g_strdup_printf ("input '%s' is not connected", node->def->inputs[0]));
          return;
        }
    }
  for (int k = 0; k < NL_GRAPH_MAX_SLOTS; k++)
    weights[k] = aux[k] = saved[k] = NL_SHAPE_ABSENT;
  ic = (NlInferCtx) { .p = node->params, .training = TRUE, .n_data = n_data, .in = in, .weights = weights,
                      .aux = aux, .saved = saved, .out = out };
  if (!nl_op_infer_shape (node->def, &ic, &error))
    {
      node_error (a, i, g_strdup (error->message));
      return;
    }
  na->out = out[0];
  for (int k = 0; k < node->def->n_weights; k++)
    if (weights[k].ndim > 0)
      na->params += nl_shape_numel (&weights[k]);
  na->macs = nl_graph_estimate_macs (node->def, &out[0], weights);
}

/* Memory of one training step: the planner's arena plus weights, their
 * gradients and the optimizer state. */
static void
estimate_memory (NlAnalysis *a, const NlNetwork *net, int input, int sink, int optimizer_slots)
{
  NlShape sample = a->nodes[input].out;
  g_autoptr (NlGraph) g = NULL;
  g_autoptr (NlMemoryPlan) plan = NULL;
  NlCompileOptions opts = { .batch = a->batch, .training = TRUE };

  sample.ndim--;
  memmove (sample.d, sample.d + 1, sizeof (sample.d[0]) * sample.ndim);
  if (!nl_network_node (net, sink)->def->is_loss)
    opts.loss = "SoftmaxCrossEntropy";
  /* compile borrows the network without changing it */
  g = nl_graph_compile ((NlNetwork *) net, &sample, &opts, NULL);
  if (!g)
    {
      /* per-step predictions (B, T..., C): labels (B, T...), as a sequence dataset gives them */
      NlCompileOptions infer = { .batch = a->batch };
      g_autoptr (NlGraph) ig = nl_graph_compile ((NlNetwork *) net, &sample, &infer, NULL);
      const NlShape *pred = ig ? &nl_graph_value (ig, ig->pred_value)->shape : NULL;
      if (!pred || pred->ndim <= 2)
        return;
      opts.label_shape = nl_shape_make (pred->ndim - 2, pred->d + 1);
      if (!(g = nl_graph_compile ((NlNetwork *) net, &sample, &opts, NULL)))
        return;
    }
  plan = nl_memory_plan_new (g, FALSE);
  a->activation_bytes = plan->planned_bytes;
  a->train_bytes = plan->planned_bytes + a->total_params * (int64_t) sizeof (float) * (2 + optimizer_slots);
}

NlAnalysis *
nl_analysis_new (const NlNetwork *net, int batch, int optimizer_slots)
{
  return nl_analysis_new_for_sample (net, NULL, batch, optimizer_slots);
}

NlAnalysis *
nl_analysis_new_for_sample (const NlNetwork *net, const NlShape *sample, int batch, int optimizer_slots)
{
  NlAnalysis *a = g_new0 (NlAnalysis, 1);
  int n = nl_network_n_nodes (net), n_inputs = 0, input = -1, sink = -1;
  g_autofree int *src = g_new (int, (gsize) MAX (n, 1) * NL_MAX_PORTS);
  g_autofree int *n_ports = g_new0 (int, MAX (n, 1));
  g_autofree int *indegree = g_new0 (int, MAX (n, 1));
  g_autofree int *consumers = g_new0 (int, MAX (n, 1));
  g_autofree int *queue = g_new (int, MAX (n, 1));
  g_autofree int *first_out = g_new0 (int, n + 1);
  g_autofree int *out_to = g_new (int, MAX ((int) net->edges->len, 1));
  g_autoptr (GPtrArray) sinks = g_ptr_array_new ();
  gint64 t0 = g_get_monotonic_time ();
  int head = 0, tail = 0;

  a->n_nodes = n;
  a->batch = MAX (batch, 1);
  a->sample = sample && sample->ndim > 0 ? *sample : NL_SHAPE_ABSENT;
  a->nodes = g_new0 (NlNodeAnalysis, MAX (n, 1));
  a->train_bytes = a->activation_bytes = -1;
  for (int i = 0; i < n; i++)
    {
      const NlNode *node = nl_network_node (net, i);
      g_autoptr (GError) error = NULL;
      a->nodes[i].out = NL_SHAPE_ABSENT;
      n_ports[i] = node->def->variadic ? NL_MAX_PORTS : node->def->n_inputs;
      for (int p = 0; p < NL_MAX_PORTS; p++)
        src[i * NL_MAX_PORTS + p] = -1;
      if (!nl_params_validate (node->def, node->params, &error))
        node_error (a, i, g_strdup (error->message));
      if (is_input (node))
        {
          n_inputs++;
          input = i;
        }
    }

  for (guint k = 0; k < net->edges->len; k++)
    {
      const NlEdge *e = &g_array_index (net->edges, NlEdge, k);
      if (e->from < 0 || e->from >= n || e->to < 0 || e->to >= n)
        continue;
      if (is_input (nl_network_node (net, e->to)))
        node_error (a, e->to, g_strdup ("Input is fed by the data pipeline and takes no incoming edge"));
      else if (e->to_port < 0 || e->to_port >= n_ports[e->to])
        node_error (a, e->to, g_strdup_printf ("has no input port %d", e->to_port));
      else if (src[e->to * NL_MAX_PORTS + e->to_port] >= 0)
        node_error (a, e->to, g_strdup_printf ("input %d is connected twice", e->to_port));
      else
        src[e->to * NL_MAX_PORTS + e->to_port] = e->from;
      indegree[e->to]++;
      consumers[e->from]++;
    }

  /* consumers of each node, CSR-style, so the walk is linear in edges */
  for (int i = 0; i < n; i++)
    first_out[i + 1] = first_out[i] + consumers[i];
  {
    g_autofree int *fill = g_memdup2 (first_out, sizeof (int) * (gsize) (n + 1));
    for (guint k = 0; k < net->edges->len; k++)
      {
        const NlEdge *e = &g_array_index (net->edges, NlEdge, k);
        if (e->from >= 0 && e->from < n && e->to >= 0 && e->to < n)
          out_to[fill[e->from]++] = e->to;
      }
  }

  /* Kahn's order; what is left over sits on a cycle */
  for (int i = 0; i < n; i++)
    if (indegree[i] == 0)
      queue[tail++] = i;
  while (head < tail)
    {
      int i = queue[head++];
      if (!a->nodes[i].error)
        infer_node (a, net, i, src + i * NL_MAX_PORTS, MIN (n_ports[i], NL_MAX_PORTS));
      for (int k = first_out[i]; k < first_out[i + 1]; k++)
        if (--indegree[out_to[k]] == 0)
          queue[tail++] = out_to[k];
    }
  for (int i = 0; i < n; i++)
    if (indegree[i] > 0)
      node_error (a, i, g_strdup ("is part of a cycle"));

  for (int i = 0; i < n; i++)
    {
      a->total_params += a->nodes[i].params;
      a->total_macs += a->nodes[i].macs;
      if (consumers[i] == 0)
        g_ptr_array_add (sinks, nl_network_node (net, i)->id);
    }
  if (n == 0)
    a->network_error = g_strdup ("the network is empty: add an Input layer");
  else if (n_inputs == 0)
    a->network_error = g_strdup ("the network has no Input node");
  else if (n_inputs > 1)
    a->network_error = g_strdup_printf ("the network has %d Input nodes; one is supported", n_inputs);
  else if (sinks->len != 1)
    {
      g_ptr_array_add (sinks, NULL);
      g_autofree char *names = g_strjoinv ("', '", (char **) sinks->pdata);
      a->network_error = g_strdup_printf ("the network must end in exactly one node, but these have no consumer: '%s'",
                                          names);
    }
  else
    for (int i = 0; i < n; i++)
      if (consumers[i] == 0)
        sink = i;
  if (a->network_error)
    a->n_errors++;
  if (a->n_errors == 0 && sink >= 0)
    estimate_memory (a, net, input, sink, MAX (optimizer_slots, 0));
  a->seconds = (g_get_monotonic_time () - t0) / 1e6;
  return a;
}

char *
nl_analysis_format_shape (const NlShape *s)
{
  GString *str;
  if (s->ndim < 0)
    return g_strdup ("?");
  if (s->ndim <= 1)
    return g_strdup ("scalar");
  str = g_string_new (NULL);
  for (int i = 1; i < s->ndim; i++)
    g_string_append_printf (str, "%s%" G_GINT64_FORMAT, i > 1 ? "×" : "", (gint64) s->d[i]);
  return g_string_free (str, FALSE);
}

char *
nl_format_count (int64_t n)
{
  static const char *const suffix[] = { "", "k", "M", "G", "T" };
  double v = (double) n;
  int k = 0;
  while (v >= 1000 && k < 4)
    {
      v /= 1000;
      k++;
    }
  if (k == 0)
    return g_strdup_printf ("%" G_GINT64_FORMAT, (gint64) n);
  return g_strdup_printf (v < 10 ? "%.2f%s" : v < 100 ? "%.1f%s" : "%.0f%s", v, suffix[k]);
}

char *
nl_format_bytes (int64_t bytes)
{
  return g_format_size_full ((guint64) MAX (bytes, 0), G_FORMAT_SIZE_DEFAULT);
}
