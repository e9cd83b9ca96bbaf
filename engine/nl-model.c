/* nl-model.c — the parameters of a network, by node: weights, auxiliary
 * states and optimizer state. Shapes come from compiling the network for a
 * batch of one; they do not depend on the batch size. */
#include "engine/nl-graph.h"
#include "engine/nl-init.h"
#include "ops/cuda/nl-cuda.h"

void
nl_model_free (NlModel *m)
{
  if (!m)
    return;
  if (m->engine)
    nl_engine_free (m->engine); /* waits for pending work, frees the vars */
  if (m->cuda)
    nl_cuda_sync (m->cuda, NULL); /* kernels may still read the device copies */
  for (int i = 0; i < m->n_nodes * NL_GRAPH_MAX_SLOTS; i++)
    {
      nl_tensor_unref (m->weights[i]);
      nl_tensor_unref (m->aux[i]);
      for (int s = 0; s < 4; s++)
        nl_tensor_unref (m->opt_state[i * 4 + s]);
      if (m->dev_weights)
        {
          nl_tensor_unref (m->dev_weights[i]);
          nl_tensor_unref (m->dev_aux[i]);
          for (int s = 0; s < 4; s++)
            nl_tensor_unref (m->dev_opt_state[i * 4 + s]);
        }
    }
  g_free (m->dev_weights);
  g_free (m->dev_aux);
  g_free (m->dev_opt_state);
  /* give the device's memory back to other processes once a run is over */
  if (m->cuda)
    nl_pool_trim (nl_cuda_ctx_pool (m->cuda));
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

/* "out of memory: fc1.weight (Dense) asked for 3,136,000,000 bytes (2990.7 MiB)" */
static gboolean
oom (GError **error, const char *name, const char *op, const NlShape *shape)
{
  size_t nbytes = (size_t) nl_shape_numel (shape) * sizeof (float);
  g_autofree char *bytes = nl_pool_format_bytes (nbytes);
  g_set_error (error, NL_POOL_ERROR, NL_POOL_ERROR_NOMEM, "out of memory: %s (%s) asked for %s bytes (%.1f MiB)", name,
               op, bytes, nbytes / 1048576.0);
  return FALSE;
}

/* A device tensor of t's shape holding t's values. */
static NlTensor *
device_copy (NlModel *m, const NlTensor *t, const char *what, GError **error)
{
  NlShape shape = nl_tensor_get_shape (t);
  size_t nbytes = (size_t) nl_tensor_numel (t) * sizeof (float);
  g_autofree char *label = g_strdup_printf ("the model's %s", what);
  NlStorage *st = nl_storage_new_device (nbytes, m->device, label, error);
  NlTensor *d;
  if (!st)
    return NULL;
  d = nl_tensor_new_on (st, 0, NL_DTYPE_F32, &shape);
  nl_storage_unref (st);
  if (!nl_cuda_copy (m->cuda, nl_tensor_f32 (d), nl_tensor_f32 (t), nbytes, NL_CUDA_H2D, error))
    g_clear_pointer (&d, nl_tensor_unref);
  return d;
}

/* Every CPU tensor with a device copy, copied one way (to the device: up). */
static gboolean
copy_all (NlModel *m, gboolean up, GError **error)
{
  int slots = m->n_nodes * NL_GRAPH_MAX_SLOTS;
  for (int i = 0; i < slots * 6; i++)
    {
      NlTensor *h, *d;
      if (i < slots)
        h = m->weights[i], d = m->dev_weights[i];
      else if (i < 2 * slots)
        h = m->aux[i - slots], d = m->dev_aux[i - slots];
      else
        h = m->opt_state[i - 2 * slots], d = m->dev_opt_state[i - 2 * slots];
      if (!h || !d)
        continue;
      size_t nbytes = (size_t) nl_tensor_numel (h) * sizeof (float);
      if (!(up ? nl_cuda_copy (m->cuda, nl_tensor_f32 (d), nl_tensor_f32 (h), nbytes, NL_CUDA_H2D, error)
               : nl_cuda_copy (m->cuda, nl_tensor_f32 (h), nl_tensor_f32 (d), nbytes, NL_CUDA_D2H, error)))
        return FALSE;
    }
  return up ? nl_cuda_sync (m->cuda, error) : TRUE;
}

gboolean
nl_model_set_device (NlModel *m, NlDevice device, GError **error)
{
  int slots = m->n_nodes * NL_GRAPH_MAX_SLOTS;
  if (device.type == NL_DEVICE_CPU)
    return TRUE;
  g_return_val_if_fail (m->cuda == NULL, FALSE);
  m->cuda = nl_cuda_ctx (device.index, error);
  if (!m->cuda)
    return FALSE;
  m->device = device;
  m->dev_weights = g_new0 (NlTensor *, slots);
  m->dev_aux = g_new0 (NlTensor *, slots);
  m->dev_opt_state = g_new0 (NlTensor *, slots * 4);
  for (int i = 0; i < slots; i++)
    {
      if (m->weights[i] && !(m->dev_weights[i] = device_copy (m, m->weights[i], "weights", error)))
        return FALSE;
      if (m->aux[i] && !(m->dev_aux[i] = device_copy (m, m->aux[i], "running statistics", error)))
        return FALSE;
      for (int s = 0; s < 4; s++)
        if (m->opt_state[i * 4 + s]
            && !(m->dev_opt_state[i * 4 + s] = device_copy (m, m->opt_state[i * 4 + s], "optimizer state", error)))
          return FALSE;
    }
  /* the programs' ops then queue in push order on the device's one stream */
  nl_model_set_scheduler_workers (m, 0);
  return nl_cuda_sync (m->cuda, error);
}

void
nl_model_host_changed (NlModel *m)
{
  m->host_newer = m->cuda != NULL;
}

gboolean
nl_model_upload (NlModel *m, GError **error)
{
  if (!m->cuda || !m->host_newer)
    return TRUE;
  if (!nl_engine_wait_for_all (m->engine, error) || !copy_all (m, TRUE, error))
    return FALSE;
  m->host_newer = m->device_newer = FALSE;
  return TRUE;
}

NlTensor *
nl_model_weight_for_device (NlModel *m, int slot)
{
  return m->dev_weights ? m->dev_weights[slot] : m->weights[slot];
}

NlTensor *
nl_model_aux_for_device (NlModel *m, int slot)
{
  return m->dev_aux ? m->dev_aux[slot] : m->aux[slot];
}

NlTensor *
nl_model_state_for_device (NlModel *m, int slot, int s)
{
  return m->dev_opt_state ? m->dev_opt_state[slot * 4 + s] : m->opt_state[slot * 4 + s];
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
                g_autofree char *name = g_strdup_printf ("%s.%s", n->id, n->def->weights[k]);
                oom (error, name, n->def->name, &n->weights[k]);
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
                g_autofree char *name = g_strdup_printf ("%s.%s", n->id, n->def->aux[k]);
                oom (error, name, n->def->name, &n->aux[k]);
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
              {
                g_autofree char *name = nl_model_weight_name (m, i / NL_GRAPH_MAX_SLOTS, i % NL_GRAPH_MAX_SLOTS);
                return oom (error, name, "optimizer state", &shape);
              }
          }
      }
  if (m->cuda)
    {
      /* new state on the device too: zeros, like the CPU's */
      for (int i = 0; i < m->n_nodes * NL_GRAPH_MAX_SLOTS * 4; i++)
        {
          g_clear_pointer (&m->dev_opt_state[i], nl_tensor_unref);
          if (m->opt_state[i] && !(m->dev_opt_state[i] = device_copy (m, m->opt_state[i], "optimizer state", error)))
            return FALSE;
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
  if (!nl_engine_wait_for_all (m->engine, error))
    return FALSE;
  if (!m->cuda || !m->device_newer || m->host_newer)
    return TRUE;
  /* the copies queue behind the last update; the D2H copies wait for them */
  if (!copy_all (m, FALSE, error))
    return FALSE;
  m->device_newer = FALSE;
  return TRUE;
}

char *
nl_model_weight_name (const NlModel *m, int node, int k)
{
  const NlNode *n = nl_network_node (m->net, node);
  if (!m->weights[NL_MODEL_SLOT (node, k)])
    return NULL;
  return g_strdup_printf ("%s.%s", n->id, n->def->weights[k]);
}
