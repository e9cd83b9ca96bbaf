/* nl-autodiff.c — the explicit backward graph (MXNet's note_memory): walk
 * the forward nodes in reverse; a value read by several consumers gets one
 * partial gradient per consumer and a GRAD_SUM step that adds them, so
 * kernels only ever write their gradients, never accumulate. */
#include "engine/graph/nl-graph.h"

#include <string.h>

static gboolean
port_takes_grad (const NlGraphNode *n, int port)
{
  if (n->def->no_grad_inputs)
    return FALSE;
  return !(n->def->is_loss && port == 1);
}

gboolean
nl_graph_build_backward (NlGraph *g, GError **error)
{
  int nv = g->values->len, nn = g->nodes->len;
  g_autofree gboolean *needs = g_new0 (gboolean, nv);      /* value depends on a weight */
  g_autofree int *n_partials = g_new0 (int, nv);
  g_autofree int *partials = g_new0 (int, (gsize) nv * NL_MAX_PORTS * 2);
  g_autofree int *grad_of = g_new0 (int, nv);
  g_autofree int *consumers = NULL;                          /* gradient-taking reads of each value */

  /* forward sweep: which activations need a gradient */
  for (int i = 0; i < nn; i++)
    {
      NlGraphNode *n = nl_graph_node (g, i);
      gboolean any = FALSE;
      for (int k = 0; k < NL_GRAPH_MAX_SLOTS; k++)
        any = any || n->weights[k].ndim >= 0;
      for (int p = 0; p < n->n_data; p++)
        any = any || (needs[n->in[p]] && port_takes_grad (n, p));
      /* explaining: the gradient reaches the input */
      needs[n->out] = any || (g->opts.explain && !strcmp (n->def->name, "Input"));
    }
  for (int v = 0; v < nv; v++)
    grad_of[v] = -1;

  /* the head: d(mean loss)/d(loss_n) = 1/N, filled by the program; when
   * explaining, d(score)/d(prediction), filled by the caller */
  {
    int head = g->loss_node >= 0 ? g->loss_value : g->pred_value;
    NlValue *lv = nl_graph_value (g, head);
    g->head_grad_value = nl_graph_add_value (g, NL_VALUE_HEAD_GRAD, &lv->shape, lv->node);
    grad_of[head] = g->head_grad_value;
  }

  /* count consumers that will produce a gradient for each value */
  for (int i = 0; i < nn; i++)
    {
      NlGraphNode *n = nl_graph_node (g, i);
      for (int p = 0; p < n->n_data; p++)
        if (needs[n->in[p]] && port_takes_grad (n, p))
          n_partials[n->in[p]]++;
    }
  consumers = g_memdup2 (n_partials, sizeof (int) * nv);
  /* one GRAD value per value with a single consumer, PARTIALs otherwise */
  for (int v = 0; v < nv; v++)
    if (n_partials[v] >= 1)
      grad_of[v] = nl_graph_add_value (g, NL_VALUE_GRAD, &nl_graph_value (g, v)->shape, nl_graph_value (g, v)->node);

  memset (n_partials, 0, sizeof (int) * nv);
  for (int i = nn - 1; i >= 0; i--)
    {
      NlGraphNode *n = nl_graph_node (g, i);
      NlStep step = { .kind = NL_STEP_BACKWARD, .node = i };

      for (int p = 0; p < NL_MAX_PORTS; p++)
        n->in_grad[p] = -1;
      for (int k = 0; k < NL_GRAPH_MAX_SLOTS; k++)
        n->wgrad_v[k] = -1;
      if (!needs[n->out] || grad_of[n->out] < 0)
        continue;
      /* the gradient of this node's output is complete once every consumer
       * (all later in the order) has run: sum the partials now */
      if (n_partials[n->out] > 1)
        {
          NlStep sum = { .kind = NL_STEP_GRAD_SUM, .dst = grad_of[n->out], .n_src = n_partials[n->out] };
          if (sum.n_src > (int) G_N_ELEMENTS (sum.src))
            {
              g_set_error (error, NL_NETWORK_ERROR, NL_NETWORK_ERROR_STRUCTURE,
                           "node '%s' feeds more than %d consumers", n->id, (int) G_N_ELEMENTS (sum.src));
              return FALSE;
            }
          memcpy (sum.src, &partials[(gsize) n->out * NL_MAX_PORTS * 2], sizeof (int) * sum.n_src);
          g_array_append_val (g->steps, sum);
        }
      n->out_grad = grad_of[n->out];
      for (int p = 0; p < n->n_data; p++)
        {
          int v = n->in[p];
          if (!needs[v] || !port_takes_grad (n, p))
            continue;
          if (consumers[v] == 1)
            n->in_grad[p] = grad_of[v];
          else
            {
              int pv = nl_graph_add_value (g, NL_VALUE_PARTIAL, &nl_graph_value (g, v)->shape, nl_graph_value (g, v)->node);
              n->in_grad[p] = pv;
              partials[(gsize) v * NL_MAX_PORTS * 2 + n_partials[v]++] = pv;
            }
        }
      /* explaining asks for no weight gradient: the kernels skip those products */
      for (int k = 0; k < NL_GRAPH_MAX_SLOTS; k++)
        n->wgrad_v[k] = n->weights[k].ndim >= 0 && !g->opts.explain
                          ? nl_graph_add_value (g, NL_VALUE_WEIGHT_GRAD, &n->weights[k], i) : -1;
      if (g->opts.explain && !strcmp (n->def->name, "Input"))
        continue; /* its output's gradient is what was asked for; nothing lies before it */
      if (n->def->no_backward)
        {
          g_set_error (error, NL_NETWORK_ERROR, NL_NETWORK_ERROR_STRUCTURE,
                       "node '%s': %s cannot be trained through (no backward)", n->id, n->def->name);
          return FALSE;
        }
      n->run_backward = TRUE;
      g_array_append_val (g->steps, step);
    }
  return TRUE;
}
