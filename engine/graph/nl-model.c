/* nl-model.c — the parameters of a network, by node: weights, auxiliary
 * states and optimizer state. Shapes come from compiling the network for a
 * batch of one; they do not depend on the batch size. */
#include "engine/graph/nl-model.h"
#include "engine/graph/nl-graph.h"
#include "engine/graph/nl-init.h"

/* Which tensor of the model on_device entry i mirrors (see NlModel). */
static NlTensor **
host_tensor (NlModel *m, int i)
{
  int slots = m->n_nodes * NL_GRAPH_MAX_SLOTS;
  if (i < slots)
    return &m->weights[i];
  if (i < 2 * slots)
    return &m->aux[i - slots];
  return &m->opt_state[i - 2 * slots];
}

static int
n_model_tensors (const NlModel *m)
{
  return m->n_nodes * NL_GRAPH_MAX_SLOTS * 6;
}

void
nl_model_free (NlModel *m)
{
  if (!m)
    return;
  if (m->scheduler)
    nl_scheduler_free (m->scheduler); /* waits for pending work, frees the vars */
  if (m->backend)
    nl_backend_synchronize (m->backend, NULL); /* kernels may still read the device copies */
  for (int i = 0; m->on_device && i < n_model_tensors (m); i++)
    nl_tensor_unref (m->on_device[i]);
  for (int i = 0; i < m->n_nodes * NL_GRAPH_MAX_SLOTS; i++)
    {
      nl_tensor_unref (m->weights[i]);
      nl_tensor_unref (m->aux[i]);
      for (int s = 0; s < 4; s++)
        nl_tensor_unref (m->opt_state[i * 4 + s]);
    }
  g_free (m->on_device);
  /* give the device's memory back to other processes once a run is over */
  if (m->backend)
    nl_backend_trim (m->backend);
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
  g_autofree char *what = g_strdup_printf ("%s (%s)", name, op);
  return nl_backend_set_nomem (error, what, nbytes);
}

/* The tensor programs use for host tensor h (on_device entry i): h itself
 * on a host-visible backend, else a device copy of it. */
static gboolean
make_on_device (NlModel *m, int i, GError **error)
{
  static const char *const what[] = { "weights", "running statistics", "optimizer state" };
  int slots = m->n_nodes * NL_GRAPH_MAX_SLOTS;
  NlTensor *h = *host_tensor (m, i);
  NlShape shape;
  NlStorage *st;
  g_autofree char *label = NULL;

  g_clear_pointer (&m->on_device[i], nl_tensor_unref);
  if (!h)
    return TRUE;
  if (m->backend->iface->host_visible)
    {
      m->on_device[i] = nl_tensor_ref (h);
      return TRUE;
    }
  shape = nl_tensor_get_shape (h);
  label = g_strdup_printf ("the model's %s", what[MIN (i / slots, 2)]);
  st = nl_storage_new_device ((size_t) nl_tensor_numel (h) * sizeof (float), m->backend->device, label, error);
  if (!st)
    return FALSE;
  m->on_device[i] = nl_tensor_new_on (st, 0, NL_DTYPE_F32, &shape);
  nl_storage_unref (st);
  return nl_backend_copy (m->backend, nl_tensor_f32 (m->on_device[i]), nl_tensor_f32 (h),
                          (size_t) nl_tensor_numel (h) * sizeof (float), NL_COPY_HOST_TO_DEVICE, error);
}

/* Every host tensor with a device copy, copied one way (to the device: up);
 * nothing to do where they are the same tensors. */
static gboolean
copy_all (NlModel *m, gboolean up, GError **error)
{
  for (int i = 0; i < n_model_tensors (m); i++)
    {
      NlTensor *h = *host_tensor (m, i), *d = m->on_device[i];
      size_t nbytes;
      if (!h || !d || h->storage == d->storage)
        continue;
      nbytes = (size_t) nl_tensor_numel (h) * sizeof (float);
      if (!(up ? nl_backend_copy (m->backend, nl_tensor_f32 (d), nl_tensor_f32 (h), nbytes, NL_COPY_HOST_TO_DEVICE,
                                  error)
               : nl_backend_copy (m->backend, nl_tensor_f32 (h), nl_tensor_f32 (d), nbytes, NL_COPY_DEVICE_TO_HOST,
                                  error)))
        return FALSE;
    }
  return up ? nl_backend_synchronize (m->backend, error) : TRUE;
}

static gboolean
make_all_on_device (NlModel *m, GError **error)
{
  for (int i = 0; i < n_model_tensors (m); i++)
    if (!make_on_device (m, i, error))
      return FALSE;
  return nl_backend_synchronize (m->backend, error);
}

static void set_scheduler_workers (NlModel *m, int n_workers);

/* Moves the model from the CPU to device, once, before any program exists:
 * makes the device copies (optimizer state too, once prepared) and uploads
 * them; on failure the model stays on the CPU. */
static gboolean
set_device (NlModel *m, NlDevice device, GError **error)
{
  NlBackend *b = nl_backend_get (device, error);
  if (!b)
    return FALSE;
  if (b == m->backend)
    return TRUE;
  /* a model moves once, from the CPU, before any program: nothing trained
   * elsewhere can be left behind */
  g_return_val_if_fail (m->backend == nl_backend_cpu (), FALSE);
  m->backend = b;
  if (!make_all_on_device (m, error))
    {
      /* back on the CPU, whose tensors are the host tensors themselves */
      m->backend = nl_backend_cpu ();
      make_all_on_device (m, NULL);
      return FALSE;
    }
  /* a backend that runs its work in order on one queue takes the programs'
   * ops in push order */
  if (b->iface->in_order)
    set_scheduler_workers (m, 0);
  return TRUE;
}

void
nl_model_host_changed (NlModel *m)
{
  m->host_newer = !m->backend->iface->host_visible;
}

gboolean
nl_model_upload (NlModel *m, GError **error)
{
  if (!m->host_newer)
    return TRUE;
  if (!nl_scheduler_wait_for_all (m->scheduler, error) || !copy_all (m, TRUE, error))
    return FALSE;
  m->host_newer = m->device_newer = FALSE;
  return TRUE;
}

NlTensor *
nl_model_weight_for_device (NlModel *m, int slot)
{
  return m->on_device[slot];
}

NlTensor *
nl_model_aux_for_device (NlModel *m, int slot)
{
  return m->on_device[m->n_nodes * NL_GRAPH_MAX_SLOTS + slot];
}

NlTensor *
nl_model_state_for_device (NlModel *m, int slot, int s)
{
  return m->on_device[2 * m->n_nodes * NL_GRAPH_MAX_SLOTS + slot * 4 + s];
}

/* Infers weight shapes and allocates weights initialised from seed
 * (Xavier uniform for weights, the op's hints for the rest). */
static NlModel *
model_new (const NlNetwork *net, const NlShape *sample_shape, guint64 seed, GError **error)
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
  set_scheduler_workers (m, 0);
  for (guint i = 0; i < g->nodes->len; i++)
    {
      NlGraphNode *n = nl_graph_node (g, i);
      NlTensor *aux_list[NL_GRAPH_MAX_SLOTS] = { 0 }, *weight_list[NL_GRAPH_MAX_SLOTS] = { 0 };
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
            m->weights[NL_MODEL_SLOT (n->net_index, k)] = weight_list[k] = w;
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
      if (n->def->init_weights)
        n->def->init_weights (weight_list, n->params);
      if (n->def->init_aux)
        n->def->init_aux (aux_list, n->params);
    }
  m->backend = nl_backend_cpu ();
  m->on_device = g_new0 (NlTensor *, n_model_tensors (m));
  if (!make_all_on_device (m, error))
    return NULL;
  return g_steal_pointer (&m);
}

/* Allocates optimizer state for every weight (zeros). */
static gboolean
prepare_optimizer (NlModel *m, const NlOptimConfig *cfg, GError **error)
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
  /* the new state where the programs use it: zeros, like the CPU's */
  for (int i = 2 * m->n_nodes * NL_GRAPH_MAX_SLOTS; i < n_model_tensors (m); i++)
    if (!make_on_device (m, i, error))
      return FALSE;
  return TRUE;
}

/* Before any program exists */
static void
set_scheduler_workers (NlModel *m, int n_workers)
{
  if (m->scheduler)
    nl_scheduler_free (m->scheduler);
  m->scheduler = nl_scheduler_new (n_workers);
  for (int i = 0; i < m->n_nodes * NL_GRAPH_MAX_SLOTS; i++)
    {
      m->weight_var[i] = nl_scheduler_new_var (m->scheduler, "weight");
      m->aux_var[i] = nl_scheduler_new_var (m->scheduler, "running statistics");
    }
}

NlModel *
nl_model_new_full (const NlNetwork *net, const NlShape *sample_shape, const NlModelOptions *opts, GError **error)
{
  static const NlModelOptions defaults = { 0 };
  g_autoptr (NlModel) m = NULL;
  if (!opts)
    opts = &defaults;
  m = model_new (net, sample_shape, opts->seed, error);
  if (!m)
    return NULL;
  if (opts->scheduler_workers > 0)
    set_scheduler_workers (m, opts->scheduler_workers);
  if (!set_device (m, opts->device, error) || (opts->optim && !prepare_optimizer (m, opts->optim, error)))
    return NULL;
  return g_steal_pointer (&m);
}

gboolean
nl_model_sync (NlModel *m, GError **error)
{
  if (!nl_scheduler_wait_for_all (m->scheduler, error))
    return FALSE;
  if (!m->device_newer || m->host_newer)
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
