/* nl-program.c — a compiled graph bound to tensors, run step by step.
 *
 * Every value lives in one arena at the offset the static memory plan gave
 * it (nl-memory-plan.c); tensors are views into it. The arena is the
 * model's backend's memory and every step goes through that backend. Where
 * its memory is not the CPU's (a GPU), the ops queue on its one queue in
 * push order, and the input, label, prediction and loss have CPU mirrors
 * (page-locked where the backend can) that the trainer fills and reads:
 * forward copies the batch up first, backward (or an inference forward)
 * copies loss and prediction down last and waits. */
#include "core/nl-device.h"
#include "core/nl-random.h"
#include "engine/graph/nl-device-timer.h"
#include "engine/graph/nl-grad-reducer.h"
#include "engine/graph/nl-program.h"
#include "engine/graph/nl-seq-lengths.h"
#include "engine/graph/nl-test-inject.h"
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
  void *args;              /* the op's typed arguments (nl_op_args_new), owned */
  guint64 seed;
  NlVar *state_var;        /* the kernel cache, touched by forward and backward */
  NlOpKernels kernels;     /* of the program's device */
} NodeBinding;

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
  NlTrace *trace;          /* nl_program_set_trace's (atomic: workers read it) */
  NlDeviceTimer *timer;    /* each op's device time while tracing; NULL on the CPU */
  guint64 runs;
  guint64 step;            /* of the last forward, for backward's random ops */
  NlBackend *backend;      /* the model's */
  gboolean mirrored;       /* the backend's memory is not the CPU's: input, label, pred and loss have mirrors */
  NlTensor *host_input, *host_label, *host_pred, *host_loss; /* the trainer's view of them */
  NlTensor *host_lengths;  /* forward computes it from host_input (NULL: no lengths) */
  float loss_scale;        /* the head gradient's factor (1: none) */
  float update_loss_scale; /* what the pushed updates divide out: set with lr and t, so
                              the next step's nl_program_set_loss_scale cannot race them */
  /* data parallelism (nl_program_set_comm) */
  NlGradReducer *reducer;  /* NULL in a group of one */
  int *bucket_after;       /* per bucket: the backward step after which it is pushed */
  gboolean overlap;        /* buckets go as backward writes them ($NETLOOM_ALLREDUCE_OVERLAP=0: after it) */
  int grad_batch;          /* samples the head gradient averages over (0: this program's batch) */
  gint64 backward_done;    /* µs the last backward step finished */
  double exposed;          /* seconds backward waited on the all-reduce after its own work */
  NlProgramStepHook hook;  /* nl_program_set_step_hook */
  gpointer hook_user;
  NlTestInject inject;     /* NETLOOM_TEST_NONFINITE (nl-test-inject.h) */
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
      nl_scheduler_wait_for_all (p->model->scheduler, NULL);
      for (int b = 0; b < p->plan->n_blocks; b++)
        nl_scheduler_delete_var (p->model->scheduler, p->block_var[b], NULL, NULL);
      nl_scheduler_delete_var (p->model->scheduler, p->scale_var, NULL, NULL);
      for (guint i = 0; p->graph && i < p->graph->nodes->len; i++)
        nl_scheduler_delete_var (p->model->scheduler, p->bind[i].state_var, NULL, NULL);
      nl_scheduler_wait_for_all (p->model->scheduler, NULL);
    }
  g_clear_pointer (&p->reducer, nl_grad_reducer_free);
  g_free (p->bucket_after);
  g_free (p->block_var);
  g_free (p->step_tasks);
  g_free (p->update_tasks);
  if (p->profile && p->runs > 0)
    profile_report (p);
  g_free (p->fwd_us);
  g_free (p->bwd_us);
  g_clear_pointer (&p->timer, nl_device_timer_free);
  if (p->backend)
    nl_backend_synchronize (p->backend, NULL); /* kernels may still use the arena */
  if (p->graph)
    {
      for (guint i = 0; i < p->graph->nodes->len; i++)
        {
          NodeBinding *b = &p->bind[i];
          if (b->state && b->kernels.free_state)
            b->kernels.free_state (b->state);
          g_free (b->args);
        }
      for (guint v = 0; v < p->graph->values->len; v++)
        nl_tensor_unref (p->values[v]);
    }
  g_free (p->values);
  g_free (p->bind);
  g_clear_pointer (&p->host_input, nl_tensor_unref);
  g_clear_pointer (&p->host_label, nl_tensor_unref);
  g_clear_pointer (&p->host_pred, nl_tensor_unref);
  g_clear_pointer (&p->host_loss, nl_tensor_unref);
  g_clear_pointer (&p->host_lengths, nl_tensor_unref);
  nl_memory_plan_free (p->plan);
  if (p->arena)
    nl_storage_unref (p->arena);
  nl_graph_free (p->graph);
  g_free (p);
}

/* Every node's kernels on the program's device; an op without them is an
 * error naming it, before any memory is taken. */
static gboolean
bind_kernels (NlProgram *p, GError **error)
{
  NlDevice dev = p->graph->opts.device;
  for (guint i = 0; i < p->graph->nodes->len; i++)
    p->bind[i].kernels = nl_op_kernels (nl_graph_node (p->graph, i)->def, p->backend);
  for (guint s = 0; s < p->graph->steps->len; s++)
    {
      const NlStep *st = &g_array_index (p->graph->steps, NlStep, s);
      NlGraphNode *n;
      if (st->kind == NL_STEP_GRAD_SUM)
        continue;
      n = nl_graph_node (p->graph, st->node);
      if (!(st->kind == NL_STEP_FORWARD ? p->bind[st->node].kernels.forward : p->bind[st->node].kernels.backward))
        {
          g_autofree char *d = nl_device_to_string (dev);
          g_set_error (error, NL_NETWORK_ERROR, NL_NETWORK_ERROR_STRUCTURE,
                       "%s (%s) cannot run on %s: the op has no kernels there", n->id, n->def->name, d);
          return FALSE;
        }
    }
  return TRUE;
}

/* A CPU tensor the shape of v, page-locked for fast copies where the
 * backend can give such memory. */
static NlTensor *
pinned_like (NlProgram *p, int v)
{
  const NlShape *shape = &nl_graph_value (p->graph, v)->shape;
  NlStorage *st = nl_storage_new_pinned (p->backend, (size_t) nl_shape_numel (shape) * sizeof (float));
  NlTensor *t;
  if (!st)
    return NULL;
  memset (st->data, 0, st->nbytes);
  t = nl_tensor_new_on (st, 0, NL_DTYPE_F32, shape);
  nl_storage_unref (st);
  return t;
}

/* The trainer's view of v: the value itself where the backend's memory is
 * the CPU's, else a mirror. */
static NlTensor *
host_view (NlProgram *p, int v)
{
  if (v < 0)
    return NULL;
  return p->mirrored ? pinned_like (p, v) : nl_tensor_ref (p->values[v]);
}

static gboolean
make_mirrors (NlProgram *p, GError **error)
{
  const NlGraph *g = p->graph;
  const int v[] = { g->input_value, g->label_value, g->pred_value, g->loss_value, g->lengths_value };
  NlTensor **host[] = { &p->host_input, &p->host_label, &p->host_pred, &p->host_loss, &p->host_lengths };
  size_t bytes = 0;
  gboolean ok = TRUE;
  for (guint i = 0; i < G_N_ELEMENTS (v); i++)
    {
      *host[i] = host_view (p, v[i]);
      ok = ok && (v[i] < 0 || *host[i]);
      bytes += v[i] >= 0 ? (size_t) nl_shape_numel (&nl_graph_value (g, v[i])->shape) * sizeof (float) : 0;
    }
  if (!ok)
    g_set_error (error, NL_BACKEND_ERROR, NL_BACKEND_ERROR_NOMEM, "out of memory: the CPU copies of input, "
                 "label, prediction, loss and lengths for batch %d (%zu bytes)", g->opts.batch, bytes);
  return ok;
}

gboolean
nl_program_set_loss_scale (NlProgram *p, float scale, GError **error)
{
  const NlGraph *g = p->graph;
  float v = scale / (float) (p->grad_batch > 0 ? p->grad_batch : g->opts.batch);
  p->loss_scale = scale;
  if (g->head_grad_value < 0 || g->opts.explain)
    return TRUE;
  /* queued behind the last backward that read it */
  return nl_backend_fill (p->backend, nl_tensor_f32 (p->values[g->head_grad_value]),
                          nl_tensor_numel (p->values[g->head_grad_value]), v, error);
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
  p->backend = model->backend;
  p->mirrored = !p->backend->iface->host_visible;
  p->timer = nl_device_timer_new (p->backend);
  /* the mirrors' copies are ordered by the backend's one queue */
  g_return_val_if_fail (!p->mirrored || p->backend->iface->in_order, NULL);
  g_return_val_if_fail (opts->device.type == p->backend->device.type && opts->device.index == p->backend->device.index,
                        NULL);
  if (!bind_kernels (p, error))
    return NULL;
  nl_test_inject_parse (&p->inject, p->graph, opts->training && !p->mirrored);
  {
    g_autofree char *what = g_strdup_printf ("the %s activations and gradients for batch %d",
                                             opts->training ? "training" : "inference", opts->batch);
    p->arena = nl_storage_new_device (p->bytes, opts->device, what, error);
  }
  if (!p->arena || !nl_backend_memset0 (p->backend, p->arena->data, p->bytes, error))
    return NULL;
  for (guint v = 0; v < g->values->len; v++)
    p->values[v] = nl_tensor_new_on (p->arena, p->plan->offset[v] / sizeof (float), NL_DTYPE_F32,
                                     &nl_graph_value (g, v)->shape);
  if (!make_mirrors (p, error) || !nl_program_set_loss_scale (p, opts->loss_scale > 0 ? opts->loss_scale : 1, error))
    return NULL;
  p->block_var = g_new0 (NlVar *, MAX (p->plan->n_blocks, 1));
  for (int b = 0; b < p->plan->n_blocks; b++)
    p->block_var[b] = nl_scheduler_new_var (model->scheduler, "activation memory");
  p->scale_var = nl_scheduler_new_var (model->scheduler, "gradient scale");
  p->step_tasks = g_new0 (Task, g->steps->len);
  for (guint s = 0; s < g->steps->len; s++)
    p->step_tasks[s] = (Task) { p, (int) s };
  p->update_tasks = g_new0 (Task, g->nodes->len * NL_GRAPH_MAX_SLOTS);

  for (guint i = 0; i < g->nodes->len; i++)
    {
      NlGraphNode *n = nl_graph_node (g, i);
      NodeBinding *b = &p->bind[i];
      int nd = n->n_data;
      b->args = nl_op_args_new (n->def, n->params);
      b->seed = nl_mix64 (model->seed * 0x9e3779b97f4a7c15ULL + (guint64) (n->net_index + 1) + 0x632be59bd9b4e019ULL);
      b->state_var = nl_scheduler_new_var (model->scheduler, n->id);
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
            b->in[nd + k] = nl_model_weight_for_device (model, NL_MODEL_SLOT (n->net_index, k));
          if (n->wgrad_v[k] >= 0)
            b->in_grad[nd + k] = b->weight_grad[k] = p->values[n->wgrad_v[k]];
        }
      for (int k = 0; k < n->def->n_aux; k++)
        if (n->net_index >= 0)
          b->aux[k] = nl_model_aux_for_device (model, NL_MODEL_SLOT (n->net_index, k));
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
  return p->host_input;
}

NlTensor *
nl_program_label (NlProgram *p)
{
  return p->host_label;
}

NlTensor *
nl_program_pred (NlProgram *p)
{
  return p->host_pred;
}

NlTensor *
nl_program_loss (NlProgram *p)
{
  return p->host_loss;
}

NlTensor *
nl_program_lengths (NlProgram *p)
{
  return p->host_lengths;
}

NlTensor *
nl_program_value (NlProgram *p, int v)
{
  g_return_val_if_fail (v >= 0 && v < (int) p->graph->values->len, NULL);
  return p->values[v];
}

size_t
nl_program_bytes (NlProgram *p)
{
  return p->bytes;
}

void
nl_program_set_step_hook (NlProgram *p, NlProgramStepHook hook, gpointer user)
{
  p->hook = hook;
  p->hook_user = user;
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
  gboolean lengths = n->def->uses_lengths && p->graph->lengths_value >= 0;
  return (NlOpCtx) { .def = n->def, .p = n->params, .args = b->args, .n_data = n->n_data, .in = b->in, .out = b->out,
                     .aux = b->aux, .saved = b->saved, .out_grad = b->out_grad, .in_grad = b->in_grad,
                     .training = p->graph->opts.training, .seed = b->seed, .step = step, .state = &b->state,
                     .backend = p->backend, .precision = p->graph->opts.precision,
                     .autotune = p->graph->opts.autotune, .deterministic = p->graph->opts.deterministic,
                     .lengths = lengths ? p->values[p->graph->lengths_value] : NULL,
                     .host_lengths = lengths ? nl_tensor_f32 (p->host_lengths) : NULL };
}

static gboolean
grad_sum (NlProgram *p, const NlStep *st, GError **error)
{
  const float *src[NL_MAX_PORTS * 2];
  for (int k = 0; k < st->n_src; k++)
    src[k] = nl_tensor_f32 (p->values[st->src[k]]);
  return nl_backend_sum_n (p->backend, nl_tensor_f32 (p->values[st->dst]), src, st->n_src,
                           nl_tensor_numel (p->values[st->dst]), error);
}

static gboolean
run_step (gpointer data, GError **error)
{
  Task *task = data;
  NlProgram *p = task->p;
  const NlStep *st = &g_array_index (p->graph->steps, NlStep, task->index);
  const NlOpKernels *k;
  NlOpCtx ctx;
  GError *local = NULL;
  gint64 t0;
  gboolean fwd;
  NlTrace *trace = __atomic_load_n (&p->trace, __ATOMIC_RELAXED);
  void *mark;

  if (st->kind == NL_STEP_GRAD_SUM)
    return grad_sum (p, st, error);
  k = &p->bind[st->node].kernels;
  fwd = st->kind == NL_STEP_FORWARD;
  ctx = make_ctx (p, st->node, p->step);
  t0 = p->profile || trace ? g_get_monotonic_time () : 0;
  mark = trace && p->timer ? nl_device_timer_begin (p->timer) : NULL;
  /* the scheduler prefixes "op 'conv1 (Conv2D) forward' failed: " */
  if (!(fwd ? k->forward : k->backward) (&ctx, &local))
    {
      if (!local)
        local = g_error_new (NL_OP_ERROR, NL_OP_ERROR_RUNTIME, "failed without saying why");
      g_propagate_error (error, local);
      return FALSE;
    }
  if (p->profile)
    (fwd ? p->fwd_us : p->bwd_us)[st->node] += g_get_monotonic_time () - t0;
  if (p->hook || G_UNLIKELY (p->inject.node >= 0))
    {
      const NlGraphNode *n = nl_graph_node (p->graph, st->node);
      NlTensor *const *written = fwd ? ctx.out : ctx.in_grad;
      int n_written = fwd ? 1 : n->n_data + n->def->n_weights;
      nl_test_inject_apply (&p->inject, st->node, fwd, p->step, written, n_written);
      if (p->hook)
        p->hook (p->hook_user, st->node, fwd, written, n_written);
    }
  if (trace)
    nl_device_timer_op_done (p->timer, trace, mark, nl_graph_node (p->graph, st->node), fwd, (gint64) p->step, t0);
  if (!fwd && p->reducer)
    {
      /* the latest end of any backward step (workers race to store it) */
      gint64 now = g_get_monotonic_time (), seen = __atomic_load_n (&p->backward_done, __ATOMIC_RELAXED);
      while (now > seen && !__atomic_compare_exchange_n (&p->backward_done, &seen, now, TRUE, __ATOMIC_RELAXED,
                                                         __ATOMIC_RELAXED))
        ;
    }
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
  nl_scheduler_push (p->model->scheduler, name, run_step, &p->step_tasks[s], NULL, rv, nrv, wv, nwv, 0);
}

/* A CPU mirror to its device value, or back; nothing where the trainer's
 * view is the value itself. */
static gboolean
mirror_copy (NlProgram *p, NlTensor *host, int v, gboolean up, GError **error)
{
  NlTensor *dev;
  size_t nbytes;
  if (!p->mirrored || !host || v < 0)
    return TRUE;
  dev = p->values[v];
  nbytes = (size_t) nl_tensor_numel (dev) * sizeof (float);
  /* down: queued only, when the mirror is page-locked; every caller then
   * waits for the stream once (wait_all) before the mirror is read */
  if (up)
    return nl_backend_copy (p->backend, nl_tensor_f32 (dev), nl_tensor_f32 (host), nbytes, NL_COPY_HOST_TO_DEVICE,
                            error);
  return nl_backend_copy (p->backend, nl_tensor_f32 (host), nl_tensor_f32 (dev), nbytes,
                          host->storage->pinned ? NL_COPY_DEVICE_TO_HOST_ASYNC : NL_COPY_DEVICE_TO_HOST, error);
}

/* Every pushed op done, and everything the backend queued (the CPU
 * mirrors are then filled). */
static gboolean
wait_all (NlProgram *p, GError **error)
{
  if (!nl_scheduler_wait_for_all (p->model->scheduler, error))
    return FALSE;
  return nl_backend_synchronize (p->backend, error);
}

gboolean
nl_program_forward (NlProgram *p, guint64 step, GError **error)
{
  const NlGraph *g = p->graph;
  /* the previous step's ops read p->step; it may change once they are done */
  if (g->opts.training && !nl_scheduler_wait_for_all (p->model->scheduler, error))
    return FALSE;
  /* a backend with mirrors runs its work in order on one queue (in_order:
   * the model's ops are pushed inline), so these copies queue after the
   * previous step and before this one's kernels */
  if (p->host_lengths)
    nl_seq_lengths_compute (nl_tensor_f32 (p->host_input), &nl_graph_value (g, g->input_value)->shape,
                            nl_tensor_f32 (p->host_lengths));
  if (!nl_model_upload (p->model, error) || !mirror_copy (p, p->host_input, g->input_value, TRUE, error)
      || !mirror_copy (p, p->host_label, g->label_value, TRUE, error)
      || !mirror_copy (p, p->host_lengths, g->lengths_value, TRUE, error))
    return FALSE;
  p->step = step;
  if (p->mirrored && g->opts.training)
    p->model->device_newer = TRUE; /* running statistics move even on a skipped step */
  for (int s = 0; s < g->n_forward_steps; s++)
    push_step (p, s);
  p->runs++;
  if (g->opts.training)
    return TRUE;
  if (!nl_scheduler_wait_for_all (p->model->scheduler, error))
    return FALSE;
  return !p->mirrored || (mirror_copy (p, p->host_pred, g->pred_value, FALSE, error) && wait_all (p, error));
}

gboolean
nl_program_backward (NlProgram *p, GError **error)
{
  const NlGraph *g = p->graph;
  g_return_val_if_fail (g->opts.training || g->opts.explain, FALSE);
  int bucket = 0, n_buckets = nl_grad_reducer_n_buckets (p->reducer);
  gboolean ok;
  p->backward_done = 0;
  for (guint s = g->n_forward_steps; s < g->steps->len; s++)
    {
      push_step (p, s);
      /* a bucket op waits only for its own gradients' writers */
      for (; p->overlap && bucket < n_buckets && p->bucket_after[bucket] == (int) s; bucket++)
        nl_grad_reducer_push (p->reducer, p->model->scheduler, bucket);
    }
  if (bucket < n_buckets && !nl_scheduler_wait_for_all (p->model->scheduler, error))
    return FALSE;
  for (; bucket < n_buckets; bucket++)
    nl_grad_reducer_push (p->reducer, p->model->scheduler, bucket);
  if (!nl_scheduler_wait_for_all (p->model->scheduler, error))
    return FALSE;
  if (p->reducer && p->backward_done > 0)
    p->exposed += MAX (0, nl_grad_reducer_last_done (p->reducer) - p->backward_done) / 1e6;
  if (!(mirror_copy (p, p->host_loss, g->loss_value, FALSE, error)
        && mirror_copy (p, p->host_pred, g->pred_value, FALSE, error)))
    return FALSE;
  ok = wait_all (p, error);
  nl_device_timer_flush (p->timer, p->trace);
  return ok;
}

gboolean
nl_program_set_comm (NlProgram *p, NlComm *comm, GError **error)
{
  const NlGraph *g = p->graph;
  g_autoptr (GPtrArray) grads = g_ptr_array_new ();
  g_autoptr (GPtrArray) vars = g_ptr_array_new ();
  g_autoptr (GArray) step_of = g_array_new (FALSE, FALSE, sizeof (int));

  g_return_val_if_fail (g->opts.training && p->reducer == NULL, FALSE);
  if (!comm || comm->size <= 1)
    return TRUE;
  /* the gradients in the order backward writes them */
  for (guint s = g->n_forward_steps; s < g->steps->len; s++)
    {
      const NlStep *st = &g_array_index (g->steps, NlStep, s);
      if (st->kind == NL_STEP_GRAD_SUM)
        continue;
      for (int k = 0; k < NL_GRAPH_MAX_SLOTS; k++)
        if (p->bind[st->node].weight_grad[k] && nl_graph_node (g, st->node)->net_index >= 0)
          {
            g_ptr_array_add (grads, p->bind[st->node].weight_grad[k]);
            g_ptr_array_add (vars, p->block_var[p->plan->block[nl_graph_node (g, st->node)->wgrad_v[k]]]);
            g_array_append_val (step_of, s);
          }
    }
  p->overlap = g_strcmp0 (g_getenv ("NETLOOM_ALLREDUCE_OVERLAP"), "0") != 0;
  p->reducer = nl_grad_reducer_new (p->backend, comm, (NlTensor *const *) grads->pdata, (NlVar *const *) vars->pdata,
                                    (int) grads->len, NL_GRAD_BUCKET_BYTES, error);
  if (!p->reducer)
    return FALSE;
  p->bucket_after = g_new0 (int, MAX (nl_grad_reducer_n_buckets (p->reducer), 1));
  for (guint i = 0; i < grads->len; i++)
    {
      int k = nl_grad_reducer_bucket_of (p->reducer, (int) i);
      if (k >= 0)
        p->bucket_after[k] = MAX (p->bucket_after[k], g_array_index (step_of, int, i));
    }
  return TRUE;
}

gboolean
nl_program_set_grad_batch (NlProgram *p, int samples, GError **error)
{
  if (p->grad_batch == samples)
    return TRUE;
  p->grad_batch = samples;
  return nl_program_set_loss_scale (p, p->loss_scale, error);
}

void
nl_program_set_trace (NlProgram *p, NlTrace *trace)
{
  nl_device_timer_flush (p->timer, p->trace);
  __atomic_store_n (&p->trace, trace, __ATOMIC_RELAXED);
  nl_grad_reducer_set_trace (p->reducer, trace);
}

void
nl_program_comm_seconds (NlProgram *p, double *busy, double *exposed)
{
  *busy = nl_grad_reducer_busy_seconds (p->reducer);
  *exposed = p->exposed;
}

/* The global L2 norm of every weight gradient (double accumulation, in a
 * fixed order). */
static gboolean
grad_norm (NlProgram *p, double *out, GError **error)
{
  g_autoptr (GArray) x = g_array_new (FALSE, FALSE, sizeof (const float *));
  g_autoptr (GArray) n = g_array_new (FALSE, FALSE, sizeof (int64_t));
  double sum = 0;
  for (guint i = 0; i < p->graph->nodes->len; i++)
    for (int k = 0; k < NL_GRAPH_MAX_SLOTS; k++)
      if (p->bind[i].weight_grad[k])
        {
          const float *data = nl_tensor_f32 (p->bind[i].weight_grad[k]);
          int64_t len = nl_tensor_numel (p->bind[i].weight_grad[k]);
          g_array_append_val (x, data);
          g_array_append_val (n, len);
        }
  if (!nl_backend_sum_squares (p->backend, (const float *const *) x->data, (const int64_t *) n->data, (int) x->len,
                               &sum, error))
    return FALSE;
  *out = sqrt (sum);
  return TRUE;
}

gboolean
nl_program_grads_finite (NlProgram *p, gboolean *finite, GError **error)
{
  double norm = 0;
  if (!wait_all (p, error) || !grad_norm (p, &norm, error))
    return FALSE;
  *finite = isfinite (norm);
  return TRUE;
}

static gboolean
run_global_norm (gpointer data, GError **error)
{
  NlProgram *p = data;
  double norm;
  if (!grad_norm (p, &norm, error))
    return FALSE;
  /* gradients of a scaled loss: the norm of the true gradients */
  norm /= p->update_loss_scale;
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
  float scale = p->scale / p->update_loss_scale;
  NlTensor *w = nl_model_weight_for_device (p->model, slot), *g = p->bind[i].weight_grad[k];
  float *state[4];
  NlTrace *trace = __atomic_load_n (&p->trace, __ATOMIC_RELAXED);
  gint64 t0 = trace ? g_get_monotonic_time () : 0;
  gboolean ok;
  char name[160];
  for (int s = 0; s < 4; s++)
    {
      NlTensor *st = nl_model_state_for_device (p->model, slot, s);
      state[s] = st ? nl_tensor_f32 (st) : NULL;
    }
  ok = nl_backend_optim_update (p->backend, p->cfg, p->lr, p->t, scale, nl_tensor_f32 (w), nl_tensor_f32 (g), state,
                                nl_tensor_numel (w), error);
  if (trace)
    {
      g_snprintf (name, sizeof name, "%s update", nl_graph_node (p->graph, i)->id);
      nl_trace_add (trace, NL_TRACE_CAT_UPDATE, name, "step", (gint64) p->step, t0, g_get_monotonic_time ());
    }
  return ok;
}

gboolean
nl_program_update (NlProgram *p, const NlOptimConfig *cfg, float lr, int64_t t, GError **error)
{
  NlGraph *g = p->graph;
  g_autoptr (GPtrArray) grad_vars = g_ptr_array_new ();

  p->cfg = cfg;
  p->lr = lr;
  p->t = t;
  p->scale = 1.0f;
  p->update_loss_scale = p->loss_scale;
  p->model->device_newer = p->mirrored;
  for (guint i = 0; i < g->nodes->len; i++)
    for (int k = 0; k < NL_GRAPH_MAX_SLOTS; k++)
      if (p->bind[i].weight_grad[k])
        g_ptr_array_add (grad_vars, p->block_var[p->plan->block[nl_graph_node (g, i)->wgrad_v[k]]]);
  if (cfg->clip_global_norm > 0)
    nl_scheduler_push (p->model->scheduler, "global norm", run_global_norm, p, NULL, (NlVar **) grad_vars->pdata,
                    (int) grad_vars->len, &p->scale_var, 1, 1);
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
            nl_scheduler_push (p->model->scheduler, name, run_update, &p->update_tasks[i * NL_GRAPH_MAX_SLOTS + k], NULL,
                            reads, 2, &p->model->weight_var[slot], 1, 0);
          }
    }
  (void) error;
  return TRUE;
}
