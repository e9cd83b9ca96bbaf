/* nl-infer-net.c — the inference executor: the graph's nodes grouped into
 * steps (fusion), each value's layout, type and scale chosen once at
 * compile time, then a run is a list of primitive executions.
 *
 * Steps (nl-infer-prims.c): Conv2D/Dense with the BatchNorm, residual Add
 * and ReLU after them; pooling and activations in oneDNN; Dropout gone;
 * Flatten a view (a Dense reads a blocked 4D input as it is); the rest
 * through the op's own CPU kernel on plain fp32 tensors. */
#include "engine/infer/nl-infer-priv.h"
#include "ops/nl-activation.h"
#include "ops/nl-batch-norm.h"
#include "ops/nl-conv2d.h"
#include "ops/nl-dense.h"

#include <string.h>

/* Consumers of every graph value (loss nodes left out), as CSR. */
typedef struct {
  int *first, *node;
} Consumers;

static void
consumers_init (Consumers *c, const NlGraph *g)
{
  guint nv = g->values->len;
  c->first = g_new0 (int, nv + 1);
  for (guint i = 0; i < g->nodes->len; i++)
    for (int k = 0; !nl_graph_node (g, i)->def->is_loss && k < nl_graph_node (g, i)->n_data; k++)
      c->first[nl_graph_node (g, i)->in[k] + 1]++;
  for (guint v = 0; v < nv; v++)
    c->first[v + 1] += c->first[v];
  c->node = g_new (int, MAX (c->first[nv], 1));
  g_autofree int *fill = g_memdup2 (c->first, nv * sizeof (int));
  for (guint i = 0; i < g->nodes->len; i++)
    for (int k = 0; !nl_graph_node (g, i)->def->is_loss && k < nl_graph_node (g, i)->n_data; k++)
      c->node[fill[nl_graph_node (g, i)->in[k]]++] = (int) i;
}

static int
only_consumer (const NlGraph *g, const Consumers *c, int v)
{
  return v != g->pred_value && c->first[v + 1] - c->first[v] == 1 ? c->node[c->first[v]] : -1;
}

static gboolean
is_op (const NlGraphNode *node, const char *name)
{
  return strcmp (node->def->name, name) == 0;
}

static gboolean
is_relu (const NlGraphNode *node)
{
  return is_op (node, "Activation") && NL_P_ENUM (node->params, P_ACT_TYPE) == ACT_RELU;
}

/* The chain a Conv2D or Dense at node h takes: a BatchNorm over its
 * channels, an Add whose other input was computed before h (so the sum
 * can be done into it), a ReLU. Marks what it took. */
static void
plan_chain (const NlGraph *g, const Consumers *c, int h, FusedSpec *f, gboolean *absorbed)
{
  const NlGraphNode *head = nl_graph_node (g, h);
  int cur = head->out, k;
  memset (f, 0, sizeof *f);
  f->head = f->last = head;
  f->other = -1;
  k = only_consumer (g, c, cur);
  if (k >= 0 && is_op (nl_graph_node (g, k), "BatchNorm") && NL_P_INT (nl_graph_node (g, k)->params, BN_AXIS) == 1
      && nl_graph_value (g, cur)->shape.ndim == (is_op (head, "Conv2D") ? 4 : 2))
    {
      f->bn = f->last = nl_graph_node (g, k);
      absorbed[k] = TRUE;
      cur = f->bn->out;
      k = only_consumer (g, c, cur);
    }
  if (k >= 0 && is_op (nl_graph_node (g, k), "Add") && nl_graph_node (g, k)->n_data == 2)
    {
      const NlGraphNode *add = nl_graph_node (g, k);
      int other = add->in[0] == cur ? add->in[1] : add->in[0];
      int producer = nl_graph_value (g, other)->node;
      if (other != cur && producer < h && nl_shape_equal (&nl_graph_value (g, other)->shape, &nl_graph_value (g, cur)->shape))
        {
          f->add = f->last = add;
          f->other = other;
          absorbed[k] = TRUE;
          cur = add->out;
          k = only_consumer (g, c, cur);
        }
    }
  if (k >= 0 && is_relu (nl_graph_node (g, k)))
    {
      f->relu = f->last = nl_graph_node (g, k);
      absorbed[k] = TRUE;
    }
}

/* A Conv2D with one input channel whose output is pooled before anything
 * else reads it (LeNet's conv1) stays fp32 in INT8 mode: its 8-bit form
 * gains little (K = 25 taps) and costs the requantisation of the unpooled
 * output, where fp32 quantizes once after the pool, on a quarter of the
 * values (measured: lenet 111k against 103k images/s at batch 128). One
 * read by more than a pool (ResNet's stem: two reorders of its fp32
 * output) is faster in INT8 (49k against 41k). */
static void
plan_fp32_heads (NlInferNet *n, const Consumers *c, const FusedSpec *specs)
{
  const NlGraph *g = n->graph;
  n->fp32_head = g_new0 (gboolean, g->nodes->len);
  for (guint i = 0; i < g->nodes->len; i++)
    {
      const NlGraphNode *h = nl_graph_node (g, i);
      int k = specs[i].head ? only_consumer (g, c, specs[i].last->out) : -1;
      n->fp32_head[i] = k >= 0 && is_op (h, "Conv2D") && nl_graph_value (g, h->in[0])->shape.d[1] == 1
                        && (is_op (nl_graph_node (g, k), "MaxPool2D") || is_op (nl_graph_node (g, k), "AvgPool2D"));
    }
}

static gboolean
int8_head (const NlInferNet *n, const NlGraphNode *h)
{
  return n->opts.mode == NL_INFER_INT8 && !n->fp32_head[h - nl_graph_node (n->graph, 0)];
}

/* Whether every reader of graph value v takes it in 8 bits. */
static gboolean
wants_int8 (const NlInferNet *n, const Consumers *c, const gboolean *absorbed, int v)
{
  const NlGraph *g = n->graph;
  if (v == g->pred_value || c->first[v + 1] == c->first[v])
    return FALSE;
  for (int e = c->first[v]; e < c->first[v + 1]; e++)
    {
      const NlGraphNode *r = nl_graph_node (g, c->node[e]);
      if (absorbed[c->node[e]]) /* the residual branch of a fused sum */
        continue;
      if (is_op (r, "Conv2D") || is_op (r, "Dense"))
        {
          if (!int8_head (n, r))
            return FALSE;
        }
      else if (is_op (r, "MaxPool2D") || is_op (r, "AvgPool2D") || is_op (r, "GlobalAvgPool2D"))
        {
          if (!nl_infer_pool_ok (n, r) || !wants_int8 (n, c, absorbed, r->out))
            return FALSE;
        }
      else if (is_op (r, "Flatten") || is_op (r, "Dropout"))
        {
          if (!wants_int8 (n, c, absorbed, r->out))
            return FALSE;
        }
      else
        return FALSE;
    }
  return TRUE;
}

/* Flatten: a Dense reads a 4D input as it is; anything else a plain view. */
static int
build_flatten (NlInferNet *n, const Consumers *c, const NlGraphNode *node, GError **error)
{
  int in = n->gv[node->in[0]];
  gboolean all_dense = c->first[node->out + 1] > c->first[node->out] && node->out != n->graph->pred_value;
  for (int e = c->first[node->out]; e < c->first[node->out + 1]; e++)
    all_dense = all_dense && is_op (nl_graph_node (n->graph, c->node[e]), "Dense")
                && NL_P_BOOL (nl_graph_node (n->graph, c->node[e])->params, DENSE_FLATTEN);
  if (all_dense)
    return in;
  dnnl_memory_desc_t md;
  nl_infer_plain_md (&md, &nl_graph_value (n->graph, node->out)->shape, ival (n, in)->md.data_type);
  return nl_infer_want (n, in, &md, ival (n, in)->scale, error);
}

static void
set_range (NlInferNet *n, int v, const char *point)
{
  const NlQuantRange *r = n->opts.quant ? nl_quant_table_find (n->opts.quant, point) : NULL;
  if (r)
    {
      ival (n, v)->qscale = nl_quant_range_scale (r);
      ival (n, v)->qunsigned = r->is_unsigned;
    }
}

static int
build_head (NlInferNet *n, const Consumers *c, const gboolean *absorbed, FusedSpec *f, GError **error)
{
  const NlQuantRange *r = n->opts.quant ? nl_quant_table_find (n->opts.quant, f->last->id) : NULL;
  f->int8 = int8_head (n, f->head) && ival (n, n->gv[f->head->in[0]])->qscale > 0;
  if (n->opts.mode == NL_INFER_INT8 && !f->int8)
    f->fp32_why = int8_head (n, f->head) ? " (input without a calibrated range)"
                                         : " (1 input channel, pooled: quantized once after the pool)";
  f->out_int8 = f->int8 && r && wants_int8 (n, c, absorbed, f->last->out);
  f->out_scale = r ? nl_quant_range_scale (r) : 1.0f;
  f->out_unsigned = r && r->is_unsigned;
  if (f->other >= 0)
    {
      /* in place when nothing reads the branch after the Add, and it is
       * neither the caller's input nor a point observed after the run */
      int other = n->gv[f->other];
      const NlValue *ov = nl_graph_value (n->graph, f->other);
      int add_pos = (int) (f->add - nl_graph_node (n->graph, 0)), head_pos = (int) (f->head - nl_graph_node (n->graph, 0));
      f->in_place = !ibuf (n, ival (n, other)->buf)->ext && !(n->opts.observe && ov->node >= 0
                                                                && g_ptr_array_find_with_equal_func (
                                                                  n->points, nl_graph_node (n->graph, ov->node)->id,
                                                                  g_str_equal, NULL));
      for (int e = c->first[f->other]; e < c->first[f->other + 1]; e++)
        f->in_place = f->in_place && (c->node[e] == add_pos || c->node[e] < head_pos);
    }
  int out = nl_infer_build_fused (n, f, error);
  if (out >= 0)
    set_range (n, out, f->last->id);
  return out;
}

static int
build_node (NlInferNet *n, const Consumers *c, const gboolean *absorbed, FusedSpec *specs, int i, GError **error)
{
  const NlGraphNode *node = nl_graph_node (n->graph, i);
  if (is_op (node, "Input"))
    return n->input_val;
  if (is_op (node, "Dropout"))
    return n->gv[node->in[0]];
  if (is_op (node, "Flatten"))
    return build_flatten (n, c, node, error);
  if (specs[i].head)
    return build_head (n, c, absorbed, &specs[i], error);
  if (is_op (node, "MaxPool2D") || is_op (node, "AvgPool2D") || is_op (node, "GlobalAvgPool2D"))
    {
      IVal *in = ival (n, n->gv[node->in[0]]);
      /* oneDNN pools plain NCHW fp32 slowly; the op's kernel is faster there */
      if (nl_infer_pool_ok (n, node) && in->md.ndims == 4 && !(nl_infer_is_plain (&in->md) && in->md.data_type == dnnl_f32))
        return nl_infer_build_pool (n, node, error);
      /* pooling keeps within the input's range: its calibration holds */
      float qscale = in->qscale;
      gboolean qunsigned = in->qunsigned;
      int v = nl_infer_build_kernel (n, node, error);
      if (v >= 0)
        {
          ival (n, v)->qscale = qscale;
          ival (n, v)->qunsigned = qunsigned;
        }
      return v;
    }
  /* oneDNN's eltwise for the act_types it had first; the op's kernel for
   * the later ones, so that inference computes what training does */
  if (is_op (node, "LeakyReLU") || (is_op (node, "Activation") && NL_P_ENUM (node->params, P_ACT_TYPE) <= ACT_SOFTRELU))
    return nl_infer_build_eltwise (n, node, error);
  return nl_infer_build_kernel (n, node, error);
}

/* The calibration points: the input, then each fused step's last node. */
static gboolean
plan_points (NlInferNet *n, FusedSpec *specs, GError **error)
{
  const NlGraph *g = n->graph;
  for (guint i = 0; i < g->nodes->len; i++)
    {
      const NlGraphNode *node = nl_graph_node (g, i);
      const char *point = is_op (node, "Input") ? node->id : specs[i].head ? specs[i].last->id : NULL;
      if (!point)
        continue;
      g_ptr_array_add (n->points, g_strdup (point));
      if (n->opts.mode == NL_INFER_INT8 && !nl_quant_table_find (n->opts.quant, point))
        {
          g_set_error (error, NL_NETWORK_ERROR, NL_NETWORK_ERROR_STRUCTURE,
                       "the quantization table has no range for the calibration point %s", point);
          return FALSE;
        }
    }
  return TRUE;
}

static gboolean
build_steps (NlInferNet *n, GError **error)
{
  const NlGraph *g = n->graph;
  Consumers c;
  guint nn = g->nodes->len;
  g_autofree gboolean *absorbed = g_new0 (gboolean, nn);
  g_autofree FusedSpec *specs = g_new0 (FusedSpec, nn);
  gboolean ok = TRUE;
  consumers_init (&c, g);
  for (guint i = 0; i < nn; i++)
    if (!absorbed[i] && (is_op (nl_graph_node (g, i), "Conv2D") || is_op (nl_graph_node (g, i), "Dense")))
      plan_chain (g, &c, (int) i, &specs[i], absorbed);
  plan_fp32_heads (n, &c, specs);
  ok = plan_points (n, specs, error);
  for (guint i = 0; ok && i < nn; i++)
    if (is_op (nl_graph_node (g, i), "Input"))
      set_range (n, n->input_val, nl_graph_node (g, i)->id);
  for (guint i = 0; ok && i < nn; i++)
    {
      const NlGraphNode *node = nl_graph_node (g, i);
      int v;
      if (absorbed[i] || node->def->is_loss)
        continue;
      if ((v = build_node (n, &c, absorbed, specs, (int) i, error)) < 0)
        ok = FALSE;
      else
        n->gv[(specs[i].head ? specs[i].last : node)->out] = v;
    }
  g_free (c.first);
  g_free (c.node);
  return ok;
}

/* The prediction as a plain f32 value that outlives the run. */
static gboolean
finish_output (NlInferNet *n, GError **error)
{
  const NlShape *ps = &nl_graph_value (n->graph, n->graph->pred_value)->shape;
  dnnl_memory_desc_t md;
  int v = n->gv[n->graph->pred_value];
  if (v < 0)
    {
      g_set_error (error, NL_NETWORK_ERROR, NL_NETWORK_ERROR_STRUCTURE, "the network computes no prediction to infer");
      return FALSE;
    }
  nl_infer_plain_md (&md, ps, dnnl_f32);
  if ((n->output_val = nl_infer_want (n, v, &md, 1.0f, error)) < 0)
    return FALSE;
  ibuf (n, ival (n, n->output_val)->buf)->last = G_MAXINT;
  return TRUE;
}

/* Each point's value; observed points outlive the run. */
static void
find_points (NlInferNet *n)
{
  const NlGraph *g = n->graph;
  n->point_val = g_new (int, n->points->len);
  for (guint p = 0; p < n->points->len; p++)
    {
      n->point_val[p] = -1;
      for (guint i = 0; i < g->nodes->len; i++)
        if (strcmp (nl_graph_node (g, i)->id, g_ptr_array_index (n->points, p)) == 0)
          n->point_val[p] = n->gv[nl_graph_node (g, i)->out];
      if (n->opts.observe && n->point_val[p] >= 0)
        ibuf (n, ival (n, n->point_val[p])->buf)->last = G_MAXINT;
    }
}

/* fp32 observe: a reorder of each blocked point into plain memory of its
 * own, run after the steps (not a step: only the observer reads it). */
static gboolean
observe_prims (NlInferNet *n, GError **error)
{
  n->obs = g_new0 (IStep, n->points->len + 1); /* and the NULL terminator's */
  for (guint p = 0; p < n->points->len; p++)
    {
      IVal *v = n->point_val[p] >= 0 ? ival (n, n->point_val[p]) : NULL;
      dnnl_memory_desc_t md;
      dnnl_primitive_desc_t pd = NULL;
      if (!v || (nl_infer_is_plain (&v->md) && v->md.data_type == dnnl_f32))
        continue;
      nl_infer_plain_md (&md, &v->shape, dnnl_f32);
      if (v->md.ndims != md.ndims)
        {
          NlShape s = { .ndim = v->md.ndims };
          for (int i = 0; i < s.ndim; i++)
            s.d[i] = v->md.dims[i];
          nl_infer_plain_md (&md, &s, dnnl_f32);
        }
      if (!nl_dnnl_check (dnnl_memory_create (&n->obs[p].arg_mem[1], &md, nl_dnnl_engine (), DNNL_MEMORY_ALLOCATE),
                          "observe", error)
          || !nl_dnnl_check (dnnl_reorder_primitive_desc_create (&pd, &v->md, nl_dnnl_engine (), &md,
                                                                 nl_dnnl_engine (), NULL),
                             "observe", error))
        return FALSE;
      gboolean ok = nl_infer_prim_new (&n->obs[p].prim, pd, "observe", error);
      dnnl_primitive_desc_destroy (pd);
      if (!ok)
        return FALSE;
      n->obs[p].exec[0] = (dnnl_exec_arg_t) { DNNL_ARG_FROM, v->mem };
      n->obs[p].exec[1] = (dnnl_exec_arg_t) { DNNL_ARG_TO, n->obs[p].arg_mem[1] };
    }
  return TRUE;
}

/* Memory objects and tensors onto the planned buffers. */
static gboolean
bind (NlInferNet *n, GError **error)
{
  for (guint v = 0; v < n->vals->len; v++)
    {
      IVal *x = ival (n, (int) v);
      if (!nl_dnnl_check (dnnl_memory_create (&x->mem, &x->md, nl_dnnl_engine (), nl_infer_buf_storage (n, x->buf)->data),
                          "memory", error))
        return FALSE;
    }
  for (guint i = 0; i < n->steps->len; i++)
    {
      IStep *s = g_ptr_array_index (n->steps, i);
      for (int k = 0; k < s->n_args; k++)
        s->exec[k] = (dnnl_exec_arg_t) { s->arg[k], s->arg_val[k] >= 0 ? ival (n, s->arg_val[k])->mem : s->arg_mem[k] };
      for (int k = 0; s->kind == STEP_KERNEL && k < s->n_in; k++)
        s->in[k] = nl_tensor_new_on (nl_infer_buf_storage (n, ival (n, s->in_val[k])->buf), 0, NL_DTYPE_F32,
                                     &ival (n, s->in_val[k])->shape);
      if (s->kind == STEP_KERNEL)
        s->out[0] = nl_tensor_new_on (nl_infer_buf_storage (n, ival (n, s->out_val)->buf), 0, NL_DTYPE_F32,
                                      &ival (n, s->out_val)->shape);
    }
  n->output = nl_tensor_new_on (nl_infer_buf_storage (n, ival (n, n->output_val)->buf), 0, NL_DTYPE_F32,
                                &nl_graph_value (n->graph, n->graph->pred_value)->shape);
  return TRUE;
}

/* Sequences with per-sample lengths stay with the training program, which
 * computes and binds them (nl-program.c): the executor's fused steps do not
 * mask padding. Per-step labels (label_shape) likewise. */
static gboolean
check_supported (NlInferNet *n, GError **error)
{
  const NlGraph *g = n->graph;
  if (n->opts.label_shape.ndim > 0)
    {
      g_set_error (error, NL_NETWORK_ERROR, NL_NETWORK_ERROR_STRUCTURE,
                   "the inference executor takes one label per sample; this model's labels have more");
      return FALSE;
    }
  for (guint i = 0; i < g->nodes->len; i++)
    {
      const NlGraphNode *node = nl_graph_node (g, i);
      if (node->def->uses_lengths || (g->lengths_value >= 0 && is_op (node, "Input")))
        {
          g_set_error (error, NL_NETWORK_ERROR, NL_NETWORK_ERROR_STRUCTURE,
                       "node '%s' (%s): the inference executor does not run sequences with per-sample lengths",
                       node->id, node->def->name);
          return FALSE;
        }
    }
  return TRUE;
}

static gboolean
compile (NlInferNet *n, GError **error)
{
  NlCompileOptions co = { .batch = n->opts.batch, .training = FALSE, .device = n->model->backend->device };
  if (!(n->graph = nl_graph_compile (n->model->net, &n->model->sample_shape, &co, error)) || !check_supported (n, error))
    return FALSE;
  n->gv = g_new (int, n->graph->values->len);
  for (guint v = 0; v < n->graph->values->len; v++)
    n->gv[v] = -1;
  const NlShape *is = &nl_graph_value (n->graph, n->graph->input_value)->shape;
  dnnl_memory_desc_t md;
  n->input = nl_tensor_zeros (NL_DTYPE_F32, is);
  nl_infer_plain_md (&md, is, dnnl_f32);
  n->input_val = n->gv[n->graph->input_value] = nl_infer_new_val (n, &md, is, 1.0f, -1);
  ibuf (n, ival (n, n->input_val)->buf)->ext = nl_storage_ref (n->input->storage);
  if (!build_steps (n, error) || !finish_output (n, error))
    return FALSE;
  find_points (n);
  if (!nl_infer_plan_memory (n, error) || !bind (n, error) || (n->opts.observe && !observe_prims (n, error)))
    return FALSE;
  for (guint i = 0; i < n->steps->len; i++)
    g_ptr_array_add (n->describe, ((IStep *) g_ptr_array_index (n->steps, i))->desc);
  n->profile = g_strcmp0 (g_getenv ("NETLOOM_PROFILE"), "1") == 0;
  n->step_us = g_new0 (double, n->steps->len);
  g_ptr_array_add (n->describe, NULL);
  g_ptr_array_add (n->points, NULL);
  return TRUE;
}

NlInferNet *
nl_infer_net_new (NlModel *model, const NlInferOptions *opts, GError **error)
{
  g_return_val_if_fail (model && opts && opts->batch >= 1, NULL);
  if (model->backend->device.type != NL_DEVICE_CPU)
    {
      g_set_error (error, NL_NETWORK_ERROR, NL_NETWORK_ERROR_STRUCTURE, "inference runs on the CPU; the model is not there");
      return NULL;
    }
  if (opts->mode == NL_INFER_INT8 && !opts->quant)
    {
      g_set_error (error, NL_NETWORK_ERROR, NL_NETWORK_ERROR_STRUCTURE, "INT8 inference needs a quantization table");
      return NULL;
    }
  if (!nl_model_sync (model, error))
    return NULL;
  g_autoptr (NlInferNet) n = g_new0 (NlInferNet, 1);
  n->model = model;
  n->opts = *opts;
  if (opts->mode != NL_INFER_FP32)
    n->opts.observe = NULL;
  n->vals = g_array_new (FALSE, TRUE, sizeof (IVal));
  n->bufs = g_array_new (FALSE, TRUE, sizeof (IBuf));
  n->steps = g_ptr_array_new ();
  n->reorders = g_array_new (FALSE, FALSE, sizeof (int));
  n->points = g_ptr_array_new_with_free_func (g_free);
  n->describe = g_ptr_array_new ();
  n->output_val = -1;
  if (!compile (n, error))
    return NULL;
  return g_steal_pointer (&n);
}

static void
step_free (IStep *s)
{
  if (s->prim)
    dnnl_primitive_destroy (s->prim);
  for (int k = 0; k < STEP_MAX_ARGS; k++)
    if (s->arg_mem[k])
      dnnl_memory_destroy (s->arg_mem[k]);
  if (s->state && s->kernels.free_state)
    s->kernels.free_state (s->state);
  g_free (s->args);
  for (int k = 0; k < NL_MAX_PORTS + NL_GRAPH_MAX_SLOTS; k++)
    g_clear_pointer (&s->in[k], nl_tensor_unref);
  g_clear_pointer (&s->out[0], nl_tensor_unref);
  for (int k = 0; k < NL_GRAPH_MAX_SLOTS; k++)
    {
      g_clear_pointer (&s->aux[k], nl_tensor_unref);
      g_clear_pointer (&s->saved[k], nl_tensor_unref);
    }
}

static void
profile_report (NlInferNet *n)
{
  double total = 0;
  for (guint i = 0; i < n->steps->len; i++)
    total += n->step_us[i];
  g_printerr ("inference profile (batch %d, %" G_GUINT64_FORMAT " runs): step, ms/run, share\n", n->opts.batch, n->runs);
  for (guint i = 0; i < n->steps->len; i++)
    g_printerr ("  %-60s %8.4f %5.1f%%\n", ((IStep *) g_ptr_array_index (n->steps, i))->desc,
                n->step_us[i] / 1e3 / n->runs, 100 * n->step_us[i] / MAX (total, 1));
  g_printerr ("  total %.4f ms/run\n", total / 1e3 / n->runs);
}

void
nl_infer_net_free (NlInferNet *n)
{
  if (!n)
    return;
  if (n->profile && n->runs > 0)
    profile_report (n);
  g_free (n->step_us);
  g_free (n->fp32_head);
  for (guint i = 0; n->steps && i < n->steps->len; i++)
    {
      IStep *s = g_ptr_array_index (n->steps, i);
      step_free (s);
      g_free (s->desc);
      g_free (s);
    }
  for (guint p = 0; n->obs && p < n->points->len; p++)
    step_free (&n->obs[p]);
  g_free (n->obs);
  for (guint v = 0; n->vals && v < n->vals->len; v++)
    if (ival (n, (int) v)->mem)
      dnnl_memory_destroy (ival (n, (int) v)->mem);
  for (guint b = 0; n->bufs && b < n->bufs->len; b++)
    if (ibuf (n, (int) b)->ext)
      nl_storage_unref (ibuf (n, (int) b)->ext);
  for (int k = 0; k < n->n_blocks; k++)
    if (n->blocks[k])
      nl_storage_unref (n->blocks[k]);
  g_free (n->blocks);
  g_clear_pointer (&n->vals, g_array_unref);
  g_clear_pointer (&n->bufs, g_array_unref);
  g_clear_pointer (&n->steps, g_ptr_array_unref);
  g_clear_pointer (&n->reorders, g_array_unref);
  g_clear_pointer (&n->points, g_ptr_array_unref);
  g_clear_pointer (&n->describe, g_ptr_array_unref);
  g_clear_pointer (&n->input, nl_tensor_unref);
  g_clear_pointer (&n->output, nl_tensor_unref);
  g_free (n->gv);
  g_free (n->point_val);
  nl_graph_free (n->graph);
  g_free (n);
}

NlTensor *
nl_infer_net_input (NlInferNet *n)
{
  return n->input;
}

NlTensor *
nl_infer_net_output (NlInferNet *n)
{
  return n->output;
}

const char *const *
nl_infer_net_points (NlInferNet *n)
{
  return (const char *const *) n->points->pdata;
}

const char *const *
nl_infer_net_describe (NlInferNet *n)
{
  return (const char *const *) n->describe->pdata;
}

size_t
nl_infer_net_bytes (NlInferNet *n)
{
  return n->bytes;
}

static gboolean
run_kernel (NlInferNet *n, IStep *s, GError **error)
{
  NlOpCtx ctx = { .def = s->node->def, .p = s->node->params, .args = s->args, .n_data = s->n_in, .in = s->in,
                  .out = s->out, .aux = s->aux, .saved = s->saved, .training = FALSE, .state = &s->state,
                  .backend = n->model->backend, .precision = NL_PRECISION_F32 };
  GError *local = NULL;
  if (s->kernels.forward (&ctx, &local))
    return TRUE;
  g_set_error (error, NL_OP_ERROR, NL_OP_ERROR_RUNTIME, "%s (%s): %s", s->node->id, s->node->def->name,
               local ? local->message : "failed without saying why");
  g_clear_error (&local);
  return FALSE;
}

static void
observe (NlInferNet *n, int rows)
{
  for (guint p = 0; p < n->points->len - 1; p++)
    {
      IVal *v = n->point_val[p] >= 0 ? ival (n, n->point_val[p]) : NULL;
      void *data;
      if (!v)
        continue;
      if (n->obs[p].prim)
        {
          dnnl_primitive_execute (n->obs[p].prim, nl_dnnl_stream (), 2, n->obs[p].exec);
          dnnl_stream_wait (nl_dnnl_stream ());
          dnnl_memory_get_data_handle (n->obs[p].arg_mem[1], &data);
        }
      else
        data = nl_infer_buf_storage (n, v->buf)->data;
      int64_t per = nl_shape_numel (&v->shape) / v->shape.d[0];
      n->opts.observe (g_ptr_array_index (n->points, p), data, per * rows, n->opts.observe_data);
    }
}

gboolean
nl_infer_net_run (NlInferNet *n, int rows, GError **error)
{
  dnnl_stream_t st = nl_dnnl_stream ();
  g_return_val_if_fail (rows >= 1 && rows <= n->opts.batch, FALSE);
  /* the rows past `rows` run too (one compiled batch) on zeros, so that no
   * stale row can fail a kernel (an Embedding index) */
  if (rows < n->opts.batch)
    {
      size_t row = nl_tensor_numel (n->input) / n->opts.batch * sizeof (float);
      memset ((char *) nl_tensor_f32 (n->input) + rows * row, 0, (n->opts.batch - rows) * row);
    }
  for (guint i = 0; i < n->steps->len; i++)
    {
      IStep *s = g_ptr_array_index (n->steps, i);
      gint64 t0 = n->profile ? g_get_monotonic_time () : 0;
      if (s->kind == STEP_PRIM)
        {
          if (!nl_dnnl_check (dnnl_primitive_execute (s->prim, st, s->n_args, s->exec), s->desc, error))
            return FALSE;
        }
      else if (!nl_dnnl_check (dnnl_stream_wait (st), s->desc, error) || !run_kernel (n, s, error))
        return FALSE;
      if (n->profile)
        n->step_us[i] += g_get_monotonic_time () - t0;
    }
  n->runs++;
  if (!nl_dnnl_check (dnnl_stream_wait (st), "inference", error))
    return FALSE;
  if (n->opts.observe)
    observe (n, rows);
  return TRUE;
}
