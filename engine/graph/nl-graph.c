/* nl-graph.c — compile a network for one input shape: order, bind values,
 * infer shapes (errors name the node), append the loss, then autodiff. */
#include "engine/graph/nl-graph.h"
#include "ops/nl-input.h"
#include "ops/nl-op-registry.h"

#include <string.h>

int
nl_graph_add_value (NlGraph *g, NlValueKind kind, const NlShape *shape, int node)
{
  NlValue v = { .kind = kind, .shape = *shape, .node = node };
  g_array_append_val (g->values, v);
  return (int) g->values->len - 1;
}

void
nl_graph_free (NlGraph *g)
{
  if (!g)
    return;
  g_array_unref (g->nodes);
  g_array_unref (g->values);
  g_array_unref (g->steps);
  g_free (g->loss_params);
  g_free (g);
}

int64_t
nl_graph_estimate_macs (const NlOpDef *def, const NlShape *out, const NlShape *weights)
{
  return def->macs ? def->macs (out, weights) : nl_shape_numel (out);
}

static gboolean
infer_node (NlGraph *g, NlGraphNode *n, GError **error)
{
  NlShape in[NL_MAX_PORTS], out[4];
  NlInferCtx ic;
  g_autoptr (GError) local = NULL;

  for (int i = 0; i < NL_GRAPH_MAX_SLOTS; i++)
    {
      n->weights[i] = n->aux[i] = n->saved[i] = NL_SHAPE_ABSENT;
      n->wgrad_v[i] = -1;
    }
  for (int i = 0; i < NL_MAX_PORTS; i++)
    n->in_grad[i] = -1;
  for (int i = 0; i < n->n_data; i++)
    in[i] = nl_graph_value (g, n->in[i])->shape;
  /* explain graphs keep what backward reads (MaxPool's argmax) though ops run in inference mode */
  ic = (NlInferCtx) { .p = n->params, .training = g->opts.training || g->opts.explain, .n_data = n->n_data, .in = in,
                      .weights = n->weights, .aux = n->aux, .saved = n->saved, .out = out };
  if (!nl_op_infer_shape (n->def, &ic, &local))
    {
      GString *shapes = g_string_new (NULL);
      for (int i = 0; i < n->n_data; i++)
        {
          char buf[96];
          g_string_append_printf (shapes, "%s%s", i ? ", " : "", nl_shape_format (&in[i], buf, sizeof buf));
        }
      g_set_error (error, NL_NETWORK_ERROR, NL_NETWORK_ERROR_SHAPE, "node '%s' (%s): %s [input shape%s %s]",
                   n->id, n->def->name, local->message, n->n_data == 1 ? "" : "s", shapes->str);
      g_string_free (shapes, TRUE);
      return FALSE;
    }
  n->out = nl_graph_add_value (g, NL_VALUE_ACTIVATION, &out[0], (int) (n - (NlGraphNode *) g->nodes->data));
  for (int k = 0; k < NL_GRAPH_MAX_SLOTS; k++)
    n->saved_v[k] = k < n->def->n_saved && n->saved[k].ndim >= 0
                      ? nl_graph_add_value (g, NL_VALUE_SAVED, &n->saved[k], (int) (n - (NlGraphNode *) g->nodes->data))
                      : -1;
  n->macs = nl_graph_estimate_macs (n->def, &out[0], n->weights);
  return TRUE;
}

static int
needs_of (const NlGraphNode *n)
{
  return n->def->needs_for ? n->def->needs_for (n->params) : n->def->needs;
}

void
nl_graph_step_access (const NlGraph *g, int s, int *reads, int *n_reads, int *writes, int *n_writes)
{
  const NlStep *st = &g_array_index (g->steps, NlStep, s);
  int nr = 0, nw = 0;

  if (st->kind == NL_STEP_GRAD_SUM)
    {
      for (int k = 0; k < st->n_src; k++)
        reads[nr++] = st->src[k];
      writes[nw++] = st->dst;
    }
  else
    {
      const NlGraphNode *n = nl_graph_node (g, st->node);
      if (st->kind == NL_STEP_FORWARD)
        {
          for (int p = 0; p < n->n_data; p++)
            reads[nr++] = n->in[p];
          writes[nw++] = n->out;
          for (int k = 0; k < NL_GRAPH_MAX_SLOTS; k++)
            if (n->saved_v[k] >= 0)
              writes[nw++] = n->saved_v[k];
          if (n->def->uses_lengths && g->lengths_value >= 0)
            reads[nr++] = g->lengths_value;
        }
      else
        {
          int needs = needs_of (n);
          if (n->out_grad >= 0)
            reads[nr++] = n->out_grad;
          for (int p = 0; p < n->n_data; p++)
            if ((needs & NL_NEEDS_INPUTS) || (n->def->is_loss && p == 1))
              reads[nr++] = n->in[p];
          if (needs & NL_NEEDS_OUTPUTS)
            reads[nr++] = n->out;
          for (int k = 0; k < NL_GRAPH_MAX_SLOTS; k++)
            if (n->saved_v[k] >= 0)
              reads[nr++] = n->saved_v[k];
          if (n->def->uses_lengths && g->lengths_value >= 0)
            reads[nr++] = g->lengths_value;
          for (int p = 0; p < n->n_data; p++)
            if (n->in_grad[p] >= 0)
              writes[nw++] = n->in_grad[p];
          for (int k = 0; k < NL_GRAPH_MAX_SLOTS; k++)
            if (n->wgrad_v[k] >= 0)
              writes[nw++] = n->wgrad_v[k];
        }
    }
  *n_reads = nr;
  *n_writes = nw;
}

gboolean
nl_graph_value_is_persistent (const NlGraph *g, int v)
{
  NlValueKind kind = nl_graph_value (g, v)->kind;
  return v == g->pred_value || v == g->loss_value || kind == NL_VALUE_LABEL || kind == NL_VALUE_HEAD_GRAD
         || kind == NL_VALUE_WEIGHT_GRAD || kind == NL_VALUE_LENGTHS;
}

/* The one Input and the one sink of net (a node without consumers). */
static gboolean
find_sink (NlNetwork *net, const int *out_first, int *sink_out, GError **error)
{
  int nn = nl_network_n_nodes (net), n_inputs = 0, sink = -1, n_sinks = 0;

  for (int i = 0; i < nn; i++)
    {
      NlNode *node = nl_network_node (net, i);
      if (strcmp (node->def->name, "Input") == 0)
        n_inputs++;
      if (out_first[i] == out_first[i + 1])
        {
          sink = i;
          n_sinks++;
        }
    }
  if (n_inputs != 1)
    {
      g_set_error (error, NL_NETWORK_ERROR, NL_NETWORK_ERROR_STRUCTURE,
                   n_inputs == 0 ? "the network has no Input node" : "the network has %d Input nodes; one is supported",
                   n_inputs);
      return FALSE;
    }
  if (n_sinks != 1)
    {
      GString *s = g_string_new (NULL);
      for (int i = 0; i < nn; i++)
        {
          if (out_first[i] == out_first[i + 1])
            g_string_append_printf (s, "%s'%s'", s->len ? ", " : "", nl_network_node (net, i)->id);
        }
      g_set_error (error, NL_NETWORK_ERROR, NL_NETWORK_ERROR_STRUCTURE,
                   "the network must end in exactly one node, but these nodes have no consumer: %s", s->str);
      g_string_free (s, TRUE);
      return FALSE;
    }
  *sink_out = sink;
  return TRUE;
}

/* Per-sample lengths, computed from the batch by the program (nl-program.c)
 * when the Input asks for them; nothing takes their gradient. */
static void
add_lengths_value (NlGraph *g, const NlNode *input)
{
  NlShape ls = nl_shape_of (1, (int64_t) g->opts.batch);
  if (NL_P_ENUM (input->params, INPUT_LENGTHS) == NL_INPUT_LENGTHS_NONZERO)
    g->lengths_value = nl_graph_add_value (g, NL_VALUE_LENGTHS, &ls, -1);
}

/* The label value: (batch, label_shape...). */
static int
add_label_value (NlGraph *g, const NlCompileOptions *opts)
{
  NlShape ls = nl_shape_batched (opts->batch, &opts->label_shape);
  return nl_graph_add_value (g, NL_VALUE_LABEL, &ls, -1);
}

/* The loss opts->loss after the prediction, for a network without one. */
static gboolean
append_loss (NlGraph *g, const NlCompileOptions *opts, GError **error)
{
  const NlOpDef *def = nl_op_lookup (opts->loss);
  NlGraphNode gn = { .def = def, .id = "loss", .net_index = -1, .n_data = 2, .out_grad = -1 };
  if (def == NULL || !def->is_loss)
    {
      g_set_error (error, NL_NETWORK_ERROR, NL_NETWORK_ERROR_UNKNOWN_OP, "'%s' is not a loss", opts->loss);
      return FALSE;
    }
  g->loss_params = g_new0 (NlParamValue, MAX (def->n_params, 1));
  nl_params_init_defaults (def, g->loss_params);
  gn.params = g->loss_params;
  g->label_value = add_label_value (g, opts);
  gn.in[0] = g->pred_value;
  gn.in[1] = g->label_value;
  g_array_append_val (g->nodes, gn);
  if (!infer_node (g, nl_graph_node (g, g->nodes->len - 1), error))
    return FALSE;
  g->loss_node = g->nodes->len - 1;
  return TRUE;
}

NlGraph *
nl_graph_compile (NlNetwork *net, const NlShape *sample_shape, const NlCompileOptions *opts, GError **error)
{
  g_autoptr (NlGraph) g = g_new0 (NlGraph, 1);
  int nn = nl_network_n_nodes (net);
  g_autofree int *order = g_new0 (int, nn + 1);
  g_autofree int *value_of = g_new0 (int, nn + 1);   /* network node -> output value */
  g_autofree int *in_first = NULL, *in_edge = NULL, *out_first = NULL, *out_edge = NULL;
  int sink = -1, net_loss = -1;
  NlShape batch_shape;

  g_return_val_if_fail (opts->batch > 0, NULL);
  g->net = net;
  g->opts = *opts;
  g->nodes = g_array_new (FALSE, TRUE, sizeof (NlGraphNode));
  g->values = g_array_new (FALSE, TRUE, sizeof (NlValue));
  g->steps = g_array_new (FALSE, TRUE, sizeof (NlStep));
  g->label_value = g->loss_value = g->head_grad_value = g->loss_node = g->lengths_value = -1;

  if (!nl_network_validate (net, order, error))
    return NULL;
  /* each node's edges, so the passes below are linear in edges */
  nl_network_edges_by_node (net, TRUE, &in_first, &in_edge);
  nl_network_edges_by_node (net, FALSE, &out_first, &out_edge);

  /* a loss node in the network is used as the loss, and its prediction
   * is what feeds it */
  if (!find_sink (net, out_first, &sink, error))
    return NULL;
  if (nl_network_node (net, sink)->def->is_loss)
    net_loss = sink;

  batch_shape.ndim = sample_shape->ndim + 1;
  batch_shape.d[0] = opts->batch;
  for (int i = 0; i < sample_shape->ndim; i++)
    batch_shape.d[i + 1] = sample_shape->d[i];
  g->input_value = nl_graph_add_value (g, NL_VALUE_INPUT, &batch_shape, -1);

  for (int oi = 0; oi < nn; oi++)
    {
      int i = order[oi];
      NlNode *node = nl_network_node (net, i);
      NlGraphNode gn = { .def = node->def, .params = node->params, .id = node->id, .net_index = i,
                         .out_grad = -1 };
      if (i == net_loss && !opts->loss)
        continue; /* inference: stop before the loss */
      if (strcmp (node->def->name, "Input") == 0)
        {
          gn.n_data = 1;
          gn.in[0] = g->input_value;
          add_lengths_value (g, node);
        }
      else
        {
          gn.n_data = in_first[i + 1] - in_first[i];
          for (int k = in_first[i]; k < in_first[i + 1]; k++)
            {
              NlEdge *e = &g_array_index (net->edges, NlEdge, in_edge[k]);
              gn.in[e->to_port] = value_of[e->from];
            }
          if (node->def->is_loss && gn.n_data == 1)
            {
              g->label_value = add_label_value (g, opts);
              gn.in[1] = g->label_value;
              gn.n_data = 2;
            }
        }
      g_array_append_val (g->nodes, gn);
      if (!infer_node (g, nl_graph_node (g, g->nodes->len - 1), error))
        return NULL;
      value_of[i] = nl_graph_node (g, g->nodes->len - 1)->out;
      if (i == net_loss)
        {
          g->loss_node = g->nodes->len - 1;
          g->pred_value = nl_graph_node (g, g->loss_node)->in[0];
        }
    }
  if (net_loss < 0 || !opts->loss)
    g->pred_value = value_of[net_loss >= 0 ? net_loss : sink];
  if (net_loss >= 0 && !opts->loss)
    {
      /* the sink was the skipped loss: the prediction is what fed it */
      for (int k = in_first[net_loss]; k < in_first[net_loss + 1]; k++)
        {
          NlEdge *e = &g_array_index (net->edges, NlEdge, in_edge[k]);
          if (e->to_port == 0)
            g->pred_value = value_of[e->from];
        }
    }

  if (opts->loss && net_loss < 0 && !append_loss (g, opts, error))
    return NULL;
  if (g->loss_node >= 0)
    g->loss_value = nl_graph_node (g, g->loss_node)->out;

  for (guint i = 0; i < g->nodes->len; i++)
    {
      NlStep s = { .kind = NL_STEP_FORWARD, .node = (int) i };
      g_array_append_val (g->steps, s);
    }
  g->n_forward_steps = g->steps->len;

  if (opts->training)
    {
      if (g->loss_node < 0)
        {
          g_set_error (error, NL_NETWORK_ERROR, NL_NETWORK_ERROR_STRUCTURE,
                       "training needs a loss: add a Loss node or choose one");
          return NULL;
        }
      if (!nl_graph_build_backward (g, error))
        return NULL;
    }
  else if (opts->explain && !nl_graph_build_backward (g, error))
    return NULL;
  return g_steal_pointer (&g);
}
