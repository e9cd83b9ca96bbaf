/* nl-onnx-export-int8.c — an INT8 model as ONNX in QDQ form (see
 * nl-onnx-export-int8.h): the fp32 export's graph walk with hooks that add
 * the quantization.
 *
 * The graph computes what the INT8 executor (engine/infer/nl-infer-net.c)
 * computes, so its plan is the executor's: the same steps (a Conv2D or
 * Dense with the BatchNorm, residual Add and ReLU after it), the same heads
 * in INT8, the same values held in 8 bits. Where the executor holds a
 * value in 8 bits, QuantizeLinear -> DequantizeLinear follows its
 * producer; where an INT8 step reads a float value (the network input,
 * a value fp32 ops read too), the pair sits on that step's input alone. */
#include "engine/formats/onnx/nl-onnx-export-int8.h"
#include "engine/formats/onnx/nl-onnx-export-private.h"

#include <math.h>
#include <string.h>

#include "core/nl-atomic-file.h"
#include "engine/graph/nl-graph.h"
#include "ops/nl-activation.h"
#include "ops/nl-batch-norm.h"
#include "ops/nl-pool2d.h"

typedef struct {
  const NlQuantTable *t;
  int *bn;                    /* per node: the BatchNorm a head folds, -1: none */
  const NlGraphNode **last;   /* per node: a head's step's last node; NULL: no head */
  gboolean *absorbed;         /* per node: taken into a step (BatchNorm, Add, ReLU) */
  int *head;                  /* per node: the head of the step that took it, -1 */
  int *other;                 /* per node: a head's residual branch (the value its Add sums), -1 */
  gboolean *int8;             /* per node: a head with int8 weights and input */
  gboolean *folded;           /* per node: a BatchNorm folded into an INT8 head */
  gboolean *held8;            /* per value: held in 8 bits from its producer on */
} Int8;

static gboolean
is_op (const NlGraphNode *gn, const char *op)
{
  return !strcmp (gn->def->name, op);
}

static gboolean
is_pool (const NlGraphNode *gn)
{
  return is_op (gn, "MaxPool2D") || is_op (gn, "AvgPool2D") || is_op (gn, "GlobalAvgPool2D");
}

static int
node_index (const NlGraph *g, const NlGraphNode *gn)
{
  return (int) (gn - nl_graph_node (g, 0));
}

/* The one node that reads value v (not the prediction), else -1. */
static int
only_reader (const NlGraph *g, int v)
{
  int reader = -1;
  if (v == g->pred_value)
    return -1;
  for (guint i = 0; i < g->nodes->len; i++)
    {
      const NlGraphNode *gn = nl_graph_node (g, i);
      for (int k = 0; k < gn->n_data && !gn->def->is_loss; k++)
        if (gn->in[k] == v)
          {
            if (reader >= 0)
              return -1;
            reader = (int) i;
          }
    }
  return reader;
}

/* The executor's step of head h: a BatchNorm over its channels, an Add
 * whose other input was computed before h, a ReLU (plan_chain there). */
static void
plan_step (const NlGraph *g, Int8 *q, int h)
{
  const NlGraphNode *head = nl_graph_node (g, h), *k;
  int cur = head->out, r = only_reader (g, cur);
  q->last[h] = head;
  k = r >= 0 ? nl_graph_node (g, r) : NULL;
  if (k && is_op (k, "BatchNorm") && NL_P_INT (k->params, BN_AXIS) == 1
      && nl_graph_value (g, cur)->shape.ndim == (is_op (head, "Conv2D") ? 4 : 2))
    {
      q->bn[h] = r;
      q->absorbed[r] = TRUE;
      q->head[r] = h;
      q->last[h] = k;
      cur = k->out;
      k = (r = only_reader (g, cur)) >= 0 ? nl_graph_node (g, r) : NULL;
    }
  if (k && is_op (k, "Add") && k->n_data == 2)
    {
      int other = k->in[0] == cur ? k->in[1] : k->in[0];
      if (other != cur && nl_graph_value (g, other)->node < h
          && nl_shape_equal (&nl_graph_value (g, other)->shape, &nl_graph_value (g, cur)->shape))
        {
          q->absorbed[r] = TRUE;
          q->head[r] = h;
          q->other[h] = other;
          q->last[h] = k;
          cur = k->out;
          k = (r = only_reader (g, cur)) >= 0 ? nl_graph_node (g, r) : NULL;
        }
    }
  if (k && is_op (k, "Activation") && NL_P_ENUM (k->params, P_ACT_TYPE) == ACT_RELU)
    {
      q->absorbed[r] = TRUE;
      q->head[r] = h;
      q->last[h] = k;
    }
}

/* The executor runs a Conv2D of one input channel whose step only a
 * pooling reads (LeNet's first) in fp32, quantizing after the pool
 * (plan_fp32_heads there: faster so); every other head in INT8. */
static gboolean
int8_capable (const NlGraph *g, const Int8 *q, const NlGraphNode *head)
{
  int h = node_index (g, head), k = q->last[h] ? only_reader (g, q->last[h]->out) : -1;
  return !(k >= 0 && is_op (head, "Conv2D") && nl_graph_value (g, head->in[0])->shape.d[1] == 1
           && (is_op (nl_graph_node (g, k), "MaxPool2D") || is_op (nl_graph_node (g, k), "AvgPool2D")));
}

/* An average over windows past the padding counts as the executor's
 * kernel does not: such a pooling stays fp32 (nl_infer_pool_ok there). */
static gboolean
pool_int8 (const NlGraph *g, const NlGraphNode *gn)
{
  NlPool2dArgs a;
  const NlShape *is = &nl_graph_value (g, gn->in[0])->shape, *os = &nl_graph_value (g, gn->out)->shape;
  if (!is_op (gn, "AvgPool2D"))
    return TRUE;
  gn->def->resolve_args (gn->params, &a);
  return (os->d[2] - 1) * a.strides[0] + a.pool_size[0] <= is->d[2] + 2 * a.padding[0]
         && (os->d[3] - 1) * a.strides[1] + a.pool_size[1] <= is->d[3] + 2 * a.padding[1];
}

/* Whether every reader of value v takes it in 8 bits (wants_int8 there). */
static gboolean
wants8 (const NlGraph *g, const Int8 *q, int v)
{
  gboolean any = FALSE;
  if (v == g->pred_value)
    return FALSE;
  for (guint i = 0; i < g->nodes->len; i++)
    {
      const NlGraphNode *gn = nl_graph_node (g, i);
      gboolean reads = FALSE;
      for (int k = 0; k < gn->n_data && !gn->def->is_loss; k++)
        reads = reads || gn->in[k] == v;
      if (!reads)
        continue;
      any = TRUE;
      if (q->absorbed[i]) /* the residual branch of a fused sum */
        continue;
      if (q->last[i] ? !int8_capable (g, q, gn)
                     : is_pool (gn) ? !pool_int8 (g, gn) || !wants8 (g, q, gn->out)
                     : is_op (gn, "Flatten") || is_op (gn, "Dropout") || is_op (gn, "Input") ? !wants8 (g, q, gn->out)
                                                                                           : TRUE)
        return FALSE;
    }
  return any;
}

/* The range value v is quantized with when an INT8 step reads it: its
 * producer's point, or through the ops that move values unchanged and
 * the poolings, its input's; NULL: none. */
static const NlQuantRange *
value_range (const NlGraph *g, const Int8 *q, int v)
{
  for (int hops = 0; hops < 64; hops++)
    {
      int node = nl_graph_value (g, v)->node;
      const NlGraphNode *gn;
      const NlQuantRange *r;
      if (v == g->input_value)
        {
          for (guint i = 0; i < g->nodes->len; i++)
            if (is_op ((gn = nl_graph_node (g, i)), "Input"))
              return nl_quant_table_find (q->t, gn->id);
          return NULL;
        }
      if (node < 0)
        return NULL;
      gn = nl_graph_node (g, node);
      if ((r = nl_quant_table_find (q->t, gn->id)))
        return r;
      if (!(is_op (gn, "Input") || is_op (gn, "Dropout") || is_op (gn, "Flatten") || is_pool (gn)))
        return NULL;
      v = gn->in[0];
    }
  return NULL;
}

/* Whether value v is already on its 8-bit grid: its source (through
 * unchanged moves and poolings) is held in 8 bits. */
static gboolean
rounded (const NlGraph *g, const Int8 *q, int v)
{
  for (int hops = 0; hops < 64; hops++)
    {
      int node = nl_graph_value (g, v)->node;
      const NlGraphNode *gn = node >= 0 ? nl_graph_node (g, node) : NULL;
      if (q->held8[v])
        return TRUE;
      if (!gn || !(is_op (gn, "Input") || is_op (gn, "Dropout") || is_op (gn, "Flatten") || is_pool (gn)))
        return FALSE;
      v = gn->in[0];
    }
  return FALSE;
}

static gboolean
no_range (const char *point, GError **error)
{
  g_set_error (error, NL_ONNX_ERROR, NL_ONNX_ERROR_UNSUPPORTED,
               "the quantization table has no range for the calibration point “%s”", point);
  return FALSE;
}

/* Every point of the table is a node, every point of the executor has a
 * range (as the executor checks); then the steps and what they hold. */
static gboolean
plan (const NlGraph *g, Int8 *q, GError **error)
{
  guint nn = g->nodes->len;
  for (guint r = 0; r < q->t->ranges->len; r++)
    {
      const char *point = g_array_index (q->t->ranges, NlQuantRange, r).point;
      gboolean found = FALSE;
      for (guint i = 0; i < nn && !found; i++)
        found = !strcmp (nl_graph_node (g, i)->id, point);
      if (!found)
        {
          g_set_error (error, NL_ONNX_ERROR, NL_ONNX_ERROR_UNSUPPORTED,
                       "the quantization table has a range for “%s”, which is no node of network “%s”", point,
                       g->net->name ? g->net->name : "");
          return FALSE;
        }
    }
  q->bn = g_new (int, nn);
  q->last = g_new0 (const NlGraphNode *, nn);
  q->absorbed = g_new0 (gboolean, nn);
  q->int8 = g_new0 (gboolean, nn);
  q->folded = g_new0 (gboolean, nn);
  q->held8 = g_new0 (gboolean, g->values->len);
  q->head = g_new (int, nn);
  q->other = g_new (int, nn);
  for (guint i = 0; i < nn; i++)
    q->bn[i] = q->head[i] = q->other[i] = -1;
  for (guint i = 0; i < nn; i++)
    {
      const NlGraphNode *gn = nl_graph_node (g, i);
      if (!q->absorbed[i] && !gn->def->is_loss && (is_op (gn, "Conv2D") || is_op (gn, "Dense")))
        plan_step (g, q, (int) i);
    }
  for (guint i = 0; i < nn; i++)
    {
      const NlGraphNode *gn = nl_graph_node (g, i), *point = q->last[i] ? q->last[i] : is_op (gn, "Input") ? gn : NULL;
      if (point && !nl_quant_table_find (q->t, point->id))
        return no_range (point->id, error);
    }
  q->held8[g->input_value] = wants8 (g, q, g->input_value);
  for (guint i = 0; i < nn; i++)
    if (q->last[i])
      {
        const NlGraphNode *gn = nl_graph_node (g, i);
        q->int8[i] = int8_capable (g, q, gn) && value_range (g, q, gn->in[0]);
        q->held8[q->last[i]->out] = q->int8[i] && wants8 (g, q, q->last[i]->out);
        if (q->int8[i] && q->bn[i] >= 0)
          q->folded[q->bn[i]] = TRUE;
      }
  return TRUE;
}

/* x -> QuantizeLinear -> DequantizeLinear -> out at r's scale; nodes
 * "BASE/quantize", "BASE/dequantize", constants "BASE/scale", "BASE/zero_point" */
static void
qdq (NlOnnxCtx *c, const char *base, const char *x, const NlQuantRange *r, const char *out)
{
  guint8 zero = 0;
  int type = r->is_unsigned ? ONNX__TENSOR_PROTO__DATA_TYPE__UINT8 : ONNX__TENSOR_PROTO__DATA_TYPE__INT8;
  g_autofree char *sname = g_strdup_printf ("%s/scale", base), *zname = g_strdup_printf ("%s/zero_point", base);
  const char *scale = nl_onnx_builder_scalar (c->b, sname, r->threshold / (r->is_unsigned ? 255.0f : 127.0f));
  const char *zp = nl_onnx_builder_bytes (c->b, zname, type, NULL, 0, &zero);
  const char *q = nl_onnx_builder_unique (c->b, "%s/quantized", base);
  const char *qin[3] = { x, scale, zp }, *dqin[3] = { q, scale, zp };
  g_autofree char *qname = g_strdup_printf ("%s/quantize", base), *dqname = g_strdup_printf ("%s/dequantize", base);
  nl_onnx_builder_node (c->b, "QuantizeLinear", qname, qin, 3, q);
  nl_onnx_builder_node (c->b, "DequantizeLinear", dqname, dqin, 3, out);
}

static gboolean
hook_input (NlOnnxCtx *c, gpointer data, GError **error)
{
  Int8 *q = data;
  const NlGraph *g = c->g;
  const char *x = c->vname[g->input_value];
  if (!plan (g, q, error))
    return FALSE;
  if (q->held8[g->input_value])
    {
      c->vname[g->input_value] = nl_onnx_builder_unique (c->b, "%s/dequantized", x);
      qdq (c, x, x, value_range (g, q, g->input_value), c->vname[g->input_value]);
    }
  return TRUE;
}

/* The residual branch a step with an 8-bit output sums: in 8 bits at its
 * own scale (the step's output's when it has none), as the executor sums
 * it (fused_geom there); a float step sums it as it is. */
static void
residual_input (NlOnnxCtx *c, const Int8 *q, NlOnnxNode *n)
{
  const NlGraph *g = c->g;
  int h = q->head[node_index (g, n->gn)], other = q->other[h];
  const NlQuantRange *r;
  if (other < 0 || !q->held8[q->last[h]->out] || rounded (g, q, other))
    return;
  if (!(r = value_range (g, q, other)))
    r = nl_quant_table_find (q->t, q->last[h]->id);
  for (int k = 0; k < n->gn->n_data; k++)
    if (n->gn->in[k] == other)
      {
        const char *x = nl_onnx_export_temp (c, n, "residual");
        qdq (c, x, n->in[k], r, x);
        n->in[k] = x;
      }
}

/* A value held in 8 bits: its producer writes a float value that the QDQ
 * pair turns into the one its readers see (the graph output, when it is
 * that). An INT8 head reading a float value rounds it on its input. */
static gboolean
hook_node (NlOnnxCtx *c, NlOnnxNode *n, gpointer data, GError **error)
{
  Int8 *q = data;
  const NlGraph *g = c->g;
  const NlGraphNode *gn = n->gn;
  int node = node_index (g, gn);
  const NlQuantRange *r = q->held8[gn->out] ? nl_quant_table_find (q->t, gn->id) : NULL;
  const char *out = n->out;

  if (q->folded[node])
    {
      if (r)
        qdq (c, gn->id, n->in[0], r, out);
      else if (gn->out == g->pred_value)
        nl_onnx_builder_node (c->b, "Identity", gn->id, n->in, 1, out);
      else
        c->vname[gn->out] = n->in[0]; /* the head wrote it */
      return TRUE;
    }
  if (q->int8[node] && !rounded (g, q, gn->in[0]))
    {
      const char *x = nl_onnx_export_temp (c, n, "input");
      qdq (c, x, n->in[0], value_range (g, q, gn->in[0]), x);
      n->in[0] = x;
    }
  if (q->head[node] >= 0 && is_op (gn, "Add"))
    residual_input (c, q, n);
  /* an average of 8-bit values is rounded to their scale */
  if (!r && is_pool (gn) && !is_op (gn, "MaxPool2D") && rounded (g, q, gn->in[0]))
    r = value_range (g, q, gn->in[0]);
  if (r)
    n->out = nl_onnx_export_temp (c, n, "float");
  if (!nl_onnx_export_node (c, n, error))
    return FALSE;
  if (r)
    qdq (c, gn->id, n->out, r, out);
  return TRUE;
}

/* Weights and bias of Conv2D/Dense n with its BatchNorm folded in, as the
 * executor folds them: w * gamma / sqrt (var + eps) per output channel,
 * (b - mean) * gamma / sqrt (var + eps) + beta. *bias is NULL when the
 * node has none and nothing is folded. */
static void
folded (NlOnnxCtx *c, const Int8 *q, const NlOnnxNode *n, float **w, float **bias, int64_t *channels,
        int64_t *per)
{
  const NlModel *m = c->m;
  const NlTensor *wt = m->weights[NL_MODEL_SLOT (n->gn->net_index, 0)];
  const NlTensor *bt = m->weights[NL_MODEL_SLOT (n->gn->net_index, 1)];
  int node = nl_graph_value (c->g, n->gn->out)->node;
  int64_t C = wt->shape[0], P = nl_tensor_numel (wt) / C;

  *w = g_memdup2 (nl_tensor_f32 (wt), sizeof (float) * C * P);
  *bias = bt ? g_memdup2 (nl_tensor_f32 (bt), sizeof (float) * C) : NULL;
  *channels = C;
  *per = P;
  if (q->bn[node] >= 0)
    {
      const NlGraphNode *bn = nl_graph_node (c->g, q->bn[node]);
      const NlTensor *gamma = m->weights[NL_MODEL_SLOT (bn->net_index, BN_GAMMA)];
      const NlTensor *beta = m->weights[NL_MODEL_SLOT (bn->net_index, BN_BETA)];
      const float *mean = nl_tensor_f32 (m->aux[NL_MODEL_SLOT (bn->net_index, BN_RUNNING_MEAN)]);
      const float *var = nl_tensor_f32 (m->aux[NL_MODEL_SLOT (bn->net_index, BN_RUNNING_VAR)]);
      float eps = NL_P_FLOAT (bn->params, BN_EPSILON);
      if (!*bias)
        *bias = g_new0 (float, C);
      for (int64_t ch = 0; ch < C; ch++)
        {
          float s = (gamma ? nl_tensor_f32 (gamma)[ch] : 1.0f) / sqrtf (var[ch] + eps);
          for (int64_t i = 0; i < P; i++)
            (*w)[ch * P + i] *= s;
          (*bias)[ch] = ((*bias)[ch] - mean[ch]) * s + (beta ? nl_tensor_f32 (beta)[ch] : 0.0f);
        }
    }
}

/* The int8 weights through a per-channel DequantizeLinear: "conv1.weight"
 * (int8), "conv1.weight.scale"; W^T (axis 1) for a Dense on the last axis. */
static const char *
int8_weight (NlOnnxCtx *c, const NlOnnxNode *n, const float *w, int64_t C, int64_t P, gboolean transposed)
{
  const NlTensor *wt = c->m->weights[NL_MODEL_SLOT (n->gn->net_index, 0)];
  g_autofree char *wname = nl_model_weight_name (c->m, n->gn->net_index, 0);
  g_autofree char *tname = NULL, *sname = NULL, *zname = NULL, *dqname = NULL;
  g_autofree int8_t *qw = g_new (int8_t, C * P), *zeros = g_new0 (int8_t, C);
  g_autofree float *scales = g_new (float, C);
  int64_t dims[NL_MAX_DIMS], zdims = C;
  const char *in[3], *out;
  Onnx__NodeProto *dq;

  nl_quant_weights (w, C, P, qw, scales);
  for (int d = 0; d < wt->ndim; d++)
    dims[d] = wt->shape[d];
  if (transposed)
    {
      g_autofree int8_t *t = g_new (int8_t, C * P);
      for (int64_t i = 0; i < C; i++)
        for (int64_t j = 0; j < P; j++)
          t[j * C + i] = qw[i * P + j];
      memcpy (qw, t, C * P);
      dims[0] = P;
      dims[1] = C;
    }
  /* the builder makes initializer names unique: "fc1.weight", "fc1.weight.scale", "fc.weight.T" */
  tname = transposed ? g_strdup_printf ("%s.T", wname) : g_strdup (wname);
  in[0] = nl_onnx_builder_bytes (c->b, tname, ONNX__TENSOR_PROTO__DATA_TYPE__INT8, dims, wt->ndim, qw);
  sname = g_strdup_printf ("%s.scale", in[0]);
  zname = g_strdup_printf ("%s.zero_point", in[0]);
  dqname = g_strdup_printf ("%s/dequantize", in[0]);
  in[1] = nl_onnx_builder_floats (c->b, sname, &zdims, 1, scales);
  in[2] = nl_onnx_builder_bytes (c->b, zname, ONNX__TENSOR_PROTO__DATA_TYPE__INT8, &zdims, 1, zeros);
  out = nl_onnx_builder_unique (c->b, "%s/dequantized", in[0]);
  dq = nl_onnx_builder_node (c->b, "DequantizeLinear", dqname, in, 3, out);
  nl_onnx_attr_int (c->b, dq, "axis", transposed ? 1 : 0);
  return out;
}

static const char *
hook_weight (NlOnnxCtx *c, const NlOnnxNode *n, int k, gboolean transposed, gpointer data)
{
  const Int8 *q = data;
  int node = nl_graph_value (c->g, n->gn->out)->node;
  g_autofree float *w = NULL, *bias = NULL;
  int64_t C, P;
  g_autofree char *bname = NULL;

  if (!q->int8[node] || k > 1)
    return NULL;
  folded (c, q, n, &w, &bias, &C, &P);
  if (k == 0)
    return int8_weight (c, n, w, C, P, transposed);
  if (!bias)
    return NULL; /* none, as the model has none */
  bname = nl_model_weight_name (c->m, n->gn->net_index, 1);
  if (!bname)
    bname = g_strdup_printf ("%s.bias", n->gn->id); /* the folded BatchNorm's shift */
  return nl_onnx_builder_floats (c->b, bname, &C, 1, bias);
}

GBytes *
nl_onnx_export_int8 (const NlModel *m, const NlQuantTable *t, const NlOnnxExportOptions *o, GError **error)
{
  static const NlOnnxExportHooks hooks = { .input = hook_input, .node = hook_node, .weight = hook_weight };
  Int8 q = { .t = t };
  GBytes *bytes;
  g_return_val_if_fail (m != NULL && t != NULL, NULL);
  bytes = nl_onnx_export_hooked (m, o, &hooks, &q, error);
  g_free (q.bn);
  g_free (q.last);
  g_free (q.absorbed);
  g_free (q.int8);
  g_free (q.folded);
  g_free (q.held8);
  g_free (q.head);
  g_free (q.other);
  return bytes;
}

gboolean
nl_onnx_export_int8_file (const NlModel *m, const NlQuantTable *t, const NlOnnxExportOptions *o, const char *path,
                          GError **error)
{
  g_autoptr (GBytes) bytes = nl_onnx_export_int8 (m, t, o, error);
  return nl_atomic_file_set_bytes (path, bytes, error);
}
