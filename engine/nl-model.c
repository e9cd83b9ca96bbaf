/* nl-model.c — the parameters of a network, by node: weights, auxiliary
 * states and optimizer state. Shapes come from compiling the network for a
 * batch of one; they do not depend on the batch size. */
#include "engine/nl-graph.h"
#include "engine/nl-init.h"

void
nl_model_free (NlModel *m)
{
  if (!m)
    return;
  for (int i = 0; i < m->n_nodes * NL_GRAPH_MAX_SLOTS; i++)
    {
      nl_tensor_unref (m->weights[i]);
      nl_tensor_unref (m->aux[i]);
      for (int s = 0; s < 4; s++)
        nl_tensor_unref (m->opt_state[i * 4 + s]);
    }
  if (m->engine)
    nl_engine_free (m->engine); /* waits for pending work, frees the vars */
  g_free (m->weight_var);
  g_free (m->aux_var);
  g_free (m->weights);
  g_free (m->aux);
  g_free (m->opt_state);
  nl_network_free (m->net);
  g_free (m);
}

static void
init_weight (NlTensor *w, NlInitHint hint, guint64 seed, guint64 stream)
{
  NlInitializer init;
  const char *spec;
  switch (hint)
    {
    case NL_INIT_ZEROS:
      spec = "zeros";
      break;
    case NL_INIT_ONES:
      spec = "ones";
      break;
    case NL_INIT_NORMAL:
      spec = "normal:0.01";
      break;
    case NL_INIT_DEFAULT:
    case NL_INIT_XAVIER:
    default:
      spec = w->ndim == 1 ? "zeros" : "xavier";
      break;
    }
  if (!nl_initializer_parse (spec, &init, NULL))
    g_assert_not_reached ();
  nl_initializer_apply (&init, w, seed, stream);
}

static gboolean
oom (GError **error, const char *what)
{
  g_set_error (error, NL_NETWORK_ERROR, NL_NETWORK_ERROR_STRUCTURE, "out of memory allocating %s", what);
  return FALSE;
}

NlModel *
nl_model_new (const NlNetwork *net, const NlShape *sample_shape, guint64 seed, GError **error)
{
  g_autoptr (NlModel) m = g_new0 (NlModel, 1);
  g_autoptr (NlGraph) g = NULL;
  NlCompileOptions opts = { .batch = 1, .training = FALSE, .loss = NULL };
  int slots;

  m->net = nl_network_copy (net);
  m->sample_shape = *sample_shape;
  m->seed = seed;
  m->n_nodes = nl_network_n_nodes (m->net);
  slots = m->n_nodes * NL_GRAPH_MAX_SLOTS;
  m->weights = g_new0 (NlTensor *, slots);
  m->aux = g_new0 (NlTensor *, slots);
  m->opt_state = g_new0 (NlTensor *, slots * 4);

  g = nl_graph_compile (m->net, sample_shape, &opts, error);
  if (!g)
    return NULL;
  m->weight_var = g_new0 (NlVar *, slots);
  m->aux_var = g_new0 (NlVar *, slots);
  nl_model_set_scheduler_workers (m, 0);
  for (guint i = 0; i < g->nodes->len; i++)
    {
      NlGraphNode *n = nl_graph_node (g, i);
      NlTensor *aux_list[NL_GRAPH_MAX_SLOTS] = { 0 };
      if (n->net_index < 0)
        continue;
      for (int k = 0; k < n->def->n_weights; k++)
        if (n->weights[k].ndim >= 0)
          {
            NlTensor *w = nl_tensor_new_shape (NL_DTYPE_F32, &n->weights[k]);
            if (!w)
              {
                oom (error, "weights");
                return NULL;
              }
            init_weight (w, n->def->weight_init ? n->def->weight_init[k] : NL_INIT_DEFAULT, seed,
                         (guint64) n->net_index * NL_GRAPH_MAX_SLOTS + k);
            m->weights[NL_MODEL_SLOT (n->net_index, k)] = w;
            m->n_params += nl_tensor_numel (w);
          }
      for (int k = 0; k < n->def->n_aux; k++)
        if (n->aux[k].ndim >= 0)
          {
            aux_list[k] = m->aux[NL_MODEL_SLOT (n->net_index, k)] = nl_tensor_zeros (NL_DTYPE_F32, &n->aux[k]);
            if (!aux_list[k])
              {
                oom (error, "running statistics");
                return NULL;
              }
          }
      if (n->def->init_aux)
        n->def->init_aux (aux_list, n->params);
    }
  return g_steal_pointer (&m);
}

gboolean
nl_model_prepare_optimizer (NlModel *m, const NlOptimConfig *cfg, GError **error)
{
  int n_states = nl_optim_n_states (cfg);
  g_return_val_if_fail (n_states <= 4, FALSE);
  for (int i = 0; i < m->n_nodes * NL_GRAPH_MAX_SLOTS; i++)
    for (int s = 0; s < 4; s++)
      {
        NlTensor **slot = &m->opt_state[i * 4 + s];
        g_clear_pointer (slot, nl_tensor_unref);
        if (m->weights[i] && s < n_states)
          {
            NlShape shape = nl_tensor_get_shape (m->weights[i]);
            *slot = nl_tensor_zeros (NL_DTYPE_F32, &shape);
            if (!*slot)
              return oom (error, "optimizer state");
          }
      }
  return TRUE;
}

void
nl_model_set_scheduler_workers (NlModel *m, int n_workers)
{
  if (m->engine)
    nl_engine_free (m->engine);
  m->engine = nl_engine_new (n_workers);
  for (int i = 0; i < m->n_nodes * NL_GRAPH_MAX_SLOTS; i++)
    {
      m->weight_var[i] = nl_engine_new_var (m->engine, "weight");
      m->aux_var[i] = nl_engine_new_var (m->engine, "running statistics");
    }
}

gboolean
nl_model_sync (NlModel *m, GError **error)
{
  return nl_engine_wait_for_all (m->engine, error);
}

char *
nl_model_weight_name (const NlModel *m, int node, int k)
{
  const NlNode *n = nl_network_node (m->net, node);
  if (!m->weights[NL_MODEL_SLOT (node, k)])
    return NULL;
  return g_strdup_printf ("%s.%s", n->id, n->def->weights[k]);
}
