/* nl-program.c — a compiled graph bound to tensors, run step by step.
 *
 * Every value lives in one arena at the offset the static memory plan gave
 * it (nl-planner.c); tensors are views into it. */
#include "engine/nl-graph.h"
#include "ops/cpu/nl-cpu-util.h"
#include "ops/nl-op-registry.h"

#include <math.h>
#include <string.h>

typedef struct {
  NlTensor *in[NL_MAX_PORTS + NL_GRAPH_MAX_SLOTS];
  NlTensor *in_grad[NL_MAX_PORTS + NL_GRAPH_MAX_SLOTS];
  NlTensor *out[1];
  NlTensor *out_grad[1];
  NlTensor *aux[NL_GRAPH_MAX_SLOTS];
  NlTensor *saved[NL_GRAPH_MAX_SLOTS];
  NlTensor *weight_grad[NL_GRAPH_MAX_SLOTS];
  void *state;
  guint64 seed;
  NlVar *state_var;        /* the kernel cache, touched by forward and backward */
} NodeBinding;

typedef struct NlProgram NlProgram;

/* What one pushed op needs: the program and which step (or weight) */
typedef struct {
  NlProgram *p;
  int index;
} Task;

struct NlProgram {
  NlModel *model;          /* borrowed */
  NlGraph *graph;
  NlTensor **values;       /* owned, per value id: views into the arena */
  NodeBinding *bind;       /* per graph node */
  NlMemoryPlan *plan;
  NlStorage *arena;
  NlVar **block_var;       /* per plan block: ops sharing memory keep their order */
  NlVar *scale_var;        /* the global-norm clipping factor */
  Task *step_tasks;        /* per step */
  Task *update_tasks;      /* per node * slot */
  const NlOptimConfig *cfg;
  float lr, scale;
  int64_t t;
  size_t bytes;
  gboolean profile;        /* NETLOOM_PROFILE=1: time every step, report at free */
  double *fwd_us, *bwd_us;
  guint64 runs;
  guint64 step;            /* of the last forward, for backward's random ops */
};

static void
profile_report (NlProgram *p)
{
  double total = 0;
  for (guint i = 0; i < p->graph->nodes->len; i++)
    total += p->fwd_us[i] + p->bwd_us[i];
  g_printerr ("profile (batch %d, %" G_GUINT64_FORMAT " steps): node, op, forward ms/step, backward ms/step, share\n",
              p->graph->opts.batch, p->runs);
  for (guint i = 0; i < p->graph->nodes->len; i++)
    {
      NlGraphNode *n = nl_graph_node (p->graph, i);
      g_printerr ("  %-16s %-22s %8.3f %8.3f %5.1f%%\n", n->id, n->def->name, p->fwd_us[i] / 1e3 / p->runs,
                  p->bwd_us[i] / 1e3 / p->runs, 100 * (p->fwd_us[i] + p->bwd_us[i]) / MAX (total, 1));
    }
  g_printerr ("  total %.3f ms/step\n", total / 1e3 / p->runs);
}

void
nl_program_free (NlProgram *p)
{
  if (!p)
    return;
  if (p->model && p->block_var)
    {
      /* our ops must be done before the memory and the vars go */
      nl_engine_wait_for_all (p->model->engine, NULL);
      for (int b = 0; b < p->plan->n_blocks; b++)
        nl_engine_delete_var (p->model->engine, p->block_var[b], NULL, NULL);
      nl_engine_delete_var (p->model->engine, p->scale_var, NULL, NULL);
      for (guint i = 0; p->graph && i < p->graph->nodes->len; i++)
        nl_engine_delete_var (p->model->engine, p->bind[i].state_var, NULL, NULL);
      nl_engine_wait_for_all (p->model->engine, NULL);
    }
  g_free (p->block_var);
  g_free (p->step_tasks);
  g_free (p->update_tasks);
  if (p->profile && p->runs > 0)
    profile_report (p);
  g_free (p->fwd_us);
  g_free (p->bwd_us);
  if (p->graph)
    {
      for (guint i = 0; i < p->graph->nodes->len; i++)
        {
          NodeBinding *b = &p->bind[i];
          const NlOpDef *def = nl_graph_node (p->graph, i)->def;
          if (b->state && def->free_state)
            def->free_state (b->state);
        }
      for (guint v = 0; v < p->graph->values->len; v++)
        nl_tensor_unref (p->values[v]);
    }
  g_free (p->values);
  g_free (p->bind);
  nl_memory_plan_free (p->plan);
  if (p->arena)
    nl_storage_unref (p->arena);
  nl_graph_free (p->graph);
  g_free (p);
}

NlProgram *
nl_program_new (NlModel *model, const NlCompileOptions *opts, GError **error)
{
  g_autoptr (NlProgram) p = g_new0 (NlProgram, 1);
  NlGraph *g;

  p->model = model;
  p->graph = nl_graph_compile (model->net, &model->sample_shape, opts, error);
  if (!p->graph)
    return NULL;
  g = p->graph;
  p->values = g_new0 (NlTensor *, g->values->len);
  p->bind = g_new0 (NodeBinding, g->nodes->len);
  p->profile = g_strcmp0 (g_getenv ("NETLOOM_PROFILE"), "1") == 0;
  p->fwd_us = g_new0 (double, g->nodes->len);
  p->bwd_us = g_new0 (double, g->nodes->len);

  p->plan = nl_memory_plan_new (g, opts->naive_memory || g_strcmp0 (g_getenv ("NETLOOM_NAIVE_MEMORY"), "1") == 0);
  p->bytes = p->plan->planned_bytes;
  p->arena = nl_storage_new (p->bytes, (NlDevice) { NL_DEVICE_CPU, 0 });
  if (!p->arena)
    {
      g_set_error (error, NL_NETWORK_ERROR, NL_NETWORK_ERROR_STRUCTURE,
                   "out of memory: the program for batch %d needs %zu MiB", opts->batch, p->bytes >> 20);
      return NULL;
    }
  memset (p->arena->data, 0, p->bytes);
  for (guint v = 0; v < g->values->len; v++)
    p->values[v] = nl_tensor_new_on (p->arena, p->plan->offset[v] / sizeof (float), NL_DTYPE_F32,
                                     &nl_graph_value (g, v)->shape);
  if (g->head_grad_value >= 0)
    nl_tensor_fill (p->values[g->head_grad_value], 1.0f / (float) opts->batch);
  p->block_var = g_new0 (NlVar *, MAX (p->plan->n_blocks, 1));
  for (int b = 0; b < p->plan->n_blocks; b++)
    p->block_var[b] = nl_engine_new_var (model->engine, "activation memory");
  p->scale_var = nl_engine_new_var (model->engine, "gradient scale");
  p->step_tasks = g_new0 (Task, g->steps->len);
  for (guint s = 0; s < g->steps->len; s++)
    p->step_tasks[s] = (Task) { p, (int) s };
  p->update_tasks = g_new0 (Task, g->nodes->len * NL_GRAPH_MAX_SLOTS);

  for (guint i = 0; i < g->nodes->len; i++)
    {
      NlGraphNode *n = nl_graph_node (g, i);
      NodeBinding *b = &p->bind[i];
      int nd = n->n_data;
      b->seed = nl_mix64 (model->seed * 0x9e3779b97f4a7c15ULL + (guint64) (n->net_index + 1) + 0x632be59bd9b4e019ULL);
      b->state_var = nl_engine_new_var (model->engine, n->id);
      for (int k = 0; k < NL_GRAPH_MAX_SLOTS; k++)
        p->update_tasks[i * NL_GRAPH_MAX_SLOTS + k] = (Task) { p, (int) (i * NL_GRAPH_MAX_SLOTS + k) };
      for (int k = 0; k < nd; k++)
        {
          b->in[k] = p->values[n->in[k]];
          b->in_grad[k] = n->in_grad[k] >= 0 ? p->values[n->in_grad[k]] : NULL;
        }
      b->out[0] = p->values[n->out];
      b->out_grad[0] = n->out_grad >= 0 ? p->values[n->out_grad] : NULL;
      for (int k = 0; k < n->def->n_weights; k++)
        {
          if (n->net_index >= 0)
            b->in[nd + k] = model->weights[NL_MODEL_SLOT (n->net_index, k)];
          if (n->wgrad_v[k] >= 0)
            b->in_grad[nd + k] = b->weight_grad[k] = p->values[n->wgrad_v[k]];
        }
      for (int k = 0; k < n->def->n_aux; k++)
        if (n->net_index >= 0)
          b->aux[k] = model->aux[NL_MODEL_SLOT (n->net_index, k)];
      for (int k = 0; k < n->def->n_saved; k++)
        if (n->saved_v[k] >= 0)
          b->saved[k] = p->values[n->saved_v[k]];
    }
  return g_steal_pointer (&p);
}

const NlMemoryPlan *
nl_program_get_plan (NlProgram *p)
{
  return p->plan;
}

const NlGraph *
nl_program_get_graph (NlProgram *p)
{
  return p->graph;
}

NlTensor *
nl_program_input (NlProgram *p)
{
  return p->values[p->graph->input_value];
}

NlTensor *
nl_program_label (NlProgram *p)
{
  return p->graph->label_value >= 0 ? p->values[p->graph->label_value] : NULL;
}

NlTensor *
nl_program_pred (NlProgram *p)
{
  return p->values[p->graph->pred_value];
}

NlTensor *
nl_program_loss (NlProgram *p)
{
  return p->graph->loss_value >= 0 ? p->values[p->graph->loss_value] : NULL;
}

size_t
nl_program_bytes (NlProgram *p)
{
  return p->bytes;
}

NlTensor *
nl_program_weight_grad (NlProgram *p, int node, int k)
{
  for (guint i = 0; i < p->graph->nodes->len; i++)
    if (nl_graph_node (p->graph, i)->net_index == node)
      return p->bind[i].weight_grad[k];
  return NULL;
}

static NlOpCtx
make_ctx (NlProgram *p, int i, guint64 step)
{
  NlGraphNode *n = nl_graph_node (p->graph, i);
  NodeBinding *b = &p->bind[i];
  return (NlOpCtx) { .def = n->def, .p = n->params, .n_data = n->n_data, .in = b->in, .out = b->out,
                     .aux = b->aux, .saved = b->saved, .out_grad = b->out_grad, .in_grad = b->in_grad,
                     .training = p->graph->opts.training, .seed = b->seed, .step = step, .state = &b->state };
}

static void
grad_sum (NlProgram *p, const NlStep *st)
{
  float *dst = nl_tensor_f32 (p->values[st->dst]);
  int64_t n = nl_tensor_numel (p->values[st->dst]);
  const float *a = nl_tensor_f32 (p->values[st->src[0]]);
  memcpy (dst, a, n * sizeof (float));
  for (int k = 1; k < st->n_src; k++)
    {
      const float *b = nl_tensor_f32 (p->values[st->src[k]]);
#pragma omp parallel for if (n > 65536)
      for (int64_t i = 0; i < n; i++)
        dst[i] += b[i];
    }
}

static gboolean
run_step (gpointer data, GError **error)
{
  Task *task = data;
  NlProgram *p = task->p;
  const NlStep *st = &g_array_index (p->graph->steps, NlStep, task->index);
  const NlGraphNode *n;
  NlOpCtx ctx;
  GError *local = NULL;
  gint64 t0;
  gboolean fwd;

  if (st->kind == NL_STEP_GRAD_SUM)
    {
      grad_sum (p, st);
      return TRUE;
    }
  n = nl_graph_node (p->graph, st->node);
  fwd = st->kind == NL_STEP_FORWARD;
  ctx = make_ctx (p, st->node, p->step);
  t0 = p->profile ? g_get_monotonic_time () : 0;
  /* the scheduler prefixes "op 'conv1 (Conv2D) forward' failed: " */
  if (!(fwd ? n->def->forward : n->def->backward) (&ctx, &local))
    {
      if (!local)
        local = g_error_new (NL_OP_ERROR, NL_OP_ERROR_RUNTIME, "failed without saying why");
      g_propagate_error (error, local);
      return FALSE;
    }
  if (p->profile)
    (fwd ? p->fwd_us : p->bwd_us)[st->node] += g_get_monotonic_time () - t0;
  return TRUE;
}

static void
add_var (NlVar **list, int *n, NlVar *v)
{
  for (int i = 0; i < *n; i++)
    if (list[i] == v)
      return;
  list[(*n)++] = v;
}

/* The scheduler's view of step s: the memory blocks, weights, running
 * statistics and kernel cache it touches. A block both read and written
 * (in place) is a write. */
static void
push_step (NlProgram *p, int s)
{
  const NlGraph *g = p->graph;
  const NlStep *st = &g_array_index (g->steps, NlStep, s);
  int reads[NL_GRAPH_MAX_ACCESS], writes[NL_GRAPH_MAX_ACCESS], nr, nw, nrv = 0, nwv = 0;
  NlVar *rv[NL_GRAPH_MAX_ACCESS + 2 * NL_GRAPH_MAX_SLOTS], *wv[NL_GRAPH_MAX_ACCESS + 2 * NL_GRAPH_MAX_SLOTS + 1];
  char name[128];

  nl_graph_step_access (g, s, reads, &nr, writes, &nw);
  for (int i = 0; i < nw; i++)
    add_var (wv, &nwv, p->block_var[p->plan->block[writes[i]]]);
  if (st->kind != NL_STEP_GRAD_SUM)
    {
      const NlGraphNode *n = nl_graph_node (g, st->node);
      gboolean fwd = st->kind == NL_STEP_FORWARD;
      add_var (wv, &nwv, p->bind[st->node].state_var);
      for (int k = 0; n->net_index >= 0 && k < NL_GRAPH_MAX_SLOTS; k++)
        {
          int slot = NL_MODEL_SLOT (n->net_index, k);
          if (p->model->weights[slot])
            add_var (rv, &nrv, p->model->weight_var[slot]);
          if (p->model->aux[slot])
            add_var (fwd && g->opts.training ? wv : rv, fwd && g->opts.training ? &nwv : &nrv,
                     p->model->aux_var[slot]);
        }
      g_snprintf (name, sizeof name, "%s (%s) %s", n->id, n->def->name, fwd ? "forward" : "backward");
    }
  else
    g_snprintf (name, sizeof name, "gradient sum");
  for (int i = 0; i < nr; i++)
    {
      NlVar *v = p->block_var[p->plan->block[reads[i]]];
      gboolean written = FALSE;
      for (int j = 0; j < nwv; j++)
        written = written || wv[j] == v;
      if (!written)
        add_var (rv, &nrv, v);
    }
  nl_engine_push (p->model->engine, name, run_step, &p->step_tasks[s], NULL, rv, nrv, wv, nwv, 0);
}

gboolean
nl_program_forward (NlProgram *p, guint64 step, GError **error)
{
  /* the previous step's ops read p->step; it may change once they are done */
  if (p->graph->opts.training && !nl_engine_wait_for_all (p->model->engine, error))
    return FALSE;
  p->step = step;
  for (int s = 0; s < p->graph->n_forward_steps; s++)
    push_step (p, s);
  p->runs++;
  if (!p->graph->opts.training)
    return nl_engine_wait_for_all (p->model->engine, error);
  return TRUE;
}

gboolean
nl_program_backward (NlProgram *p, GError **error)
{
  g_return_val_if_fail (p->graph->opts.training, FALSE);
  for (guint s = p->graph->n_forward_steps; s < p->graph->steps->len; s++)
    push_step (p, s);
  return nl_engine_wait_for_all (p->model->engine, error);
}

static gboolean
run_global_norm (gpointer data, GError **error)
{
  NlProgram *p = data;
  NlTensor *grads[256];
  int n = 0;
  double norm;
  for (guint i = 0; i < p->graph->nodes->len; i++)
    for (int k = 0; k < NL_GRAPH_MAX_SLOTS && n < 256; k++)
      if (p->bind[i].weight_grad[k])
        grads[n++] = p->bind[i].weight_grad[k];
  norm = nl_optim_global_norm (grads, n);
  if (!isfinite (norm))
    {
      g_set_error (error, NL_OP_ERROR, NL_OP_ERROR_RUNTIME, "the gradient norm is not finite");
      return FALSE;
    }
  p->scale = norm > p->cfg->clip_global_norm ? (float) (p->cfg->clip_global_norm / norm) : 1.0f;
  return TRUE;
}

static gboolean
run_update (gpointer data, GError **error)
{
  Task *task = data;
  NlProgram *p = task->p;
  int i = task->index / NL_GRAPH_MAX_SLOTS, k = task->index % NL_GRAPH_MAX_SLOTS;
  int slot = NL_MODEL_SLOT (nl_graph_node (p->graph, i)->net_index, k);
  nl_optim_update (p->cfg, p->lr, p->t, p->scale, p->model->weights[slot], p->bind[i].weight_grad[k],
                   &p->model->opt_state[slot * 4]);
  return TRUE;
}

gboolean
nl_program_update (NlProgram *p, const NlOptimConfig *cfg, float lr, int64_t t, GError **error)
{
  NlGraph *g = p->graph;
  NlVar *grad_vars[256];
  int n_grads = 0;

  p->cfg = cfg;
  p->lr = lr;
  p->t = t;
  p->scale = 1.0f;
  for (guint i = 0; i < g->nodes->len; i++)
    for (int k = 0; k < NL_GRAPH_MAX_SLOTS; k++)
      if (p->bind[i].weight_grad[k] && n_grads < 256)
        grad_vars[n_grads++] = p->block_var[p->plan->block[nl_graph_node (g, i)->wgrad_v[k]]];
  if (cfg->clip_global_norm > 0)
    nl_engine_push (p->model->engine, "global norm", run_global_norm, p, NULL, grad_vars, n_grads, &p->scale_var, 1, 1);
  /* one op per weight: it writes the weight, so the next forward that reads
   * it waits for it, and nothing else has to */
  for (guint i = 0; i < g->nodes->len; i++)
    {
      NlGraphNode *n = nl_graph_node (g, i);
      for (int k = 0; k < NL_GRAPH_MAX_SLOTS; k++)
        if (p->bind[i].weight_grad[k] && n->net_index >= 0)
          {
            int slot = NL_MODEL_SLOT (n->net_index, k);
            NlVar *reads[2] = { p->block_var[p->plan->block[n->wgrad_v[k]]], p->scale_var };
            char name[128];
            g_snprintf (name, sizeof name, "update %s.%s", n->id, n->def->weights[k]);
            nl_engine_push (p->model->engine, name, run_update, &p->update_tasks[i * NL_GRAPH_MAX_SLOTS + k], NULL,
                            reads, 2, &p->model->weight_var[slot], 1, 0);
          }
    }
  (void) error;
  return TRUE;
}
