/* nl-onnx-export-int8.c — an INT8 model as ONNX in QDQ form (see
 * nl-onnx-export-int8.h): the fp32 export's graph walk with hooks that add
 * the quantization.
 *
 * Which values are quantized is the table's to say: the export puts
 * QuantizeLinear/DequantizeLinear after every node the table names, so it
 * follows however the executor grouped its steps. The grouping itself is
 * needed only for the weights: a Conv2D/Dense folds the BatchNorm that
 * alone reads its output, and holds int8 weights when a point ends its
 * step (the first point on its chain of folded BatchNorm, residual Add and
 * ReLU). */
#include "engine/formats/onnx/nl-onnx-export-int8.h"
#include "engine/formats/onnx/nl-onnx-export-private.h"

#include <math.h>
#include <string.h>

#include "core/nl-atomic-file.h"
#include "engine/graph/nl-graph.h"
#include "ops/nl-activation.h"
#include "ops/nl-batch-norm.h"

typedef struct {
  const NlQuantTable *t;
  int *fold;        /* per graph node: the BatchNorm folded into this Conv2D/Dense, -1: none */
  gboolean *folded; /* per graph node: a BatchNorm folded into the Conv2D/Dense before it */
  gboolean *int8;   /* per graph node: a Conv2D/Dense with int8 weights */
} Int8;

static gboolean
is_op (const NlGraphNode *gn, const char *op)
{
  return !strcmp (gn->def->name, op);
}

static gboolean
is_gemm (const NlGraphNode *gn)
{
  return is_op (gn, "Conv2D") || is_op (gn, "Dense");
}

/* The one node that reads value v, -1 when none or several do. */
static int
sole_reader (const NlGraph *g, int v)
{
  int reader = -1;
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

/* A BatchNorm of the channel axis of a Conv2D/Dense output that nothing
 * else reads: the executor folds it into the weights. */
static int
foldable_batch_norm (const NlGraph *g, int node)
{
  int r = sole_reader (g, nl_graph_node (g, node)->out);
  const NlGraphNode *bn = r >= 0 ? nl_graph_node (g, r) : NULL;
  int64_t axis;
  if (!bn || !is_op (bn, "BatchNorm"))
    return -1;
  axis = NL_P_INT (bn->params, BN_AXIS);
  if (axis < 0)
    axis += nl_graph_value (g, bn->in[0])->shape.ndim;
  return axis == 1 ? r : -1;
}

/* Does a point end the step of Conv2D/Dense `node`? Its chain: the folded
 * BatchNorm, then an Add, a ReLU (and Dropouts, which inference drops). */
static gboolean
step_has_point (const NlGraph *g, const Int8 *q, int node)
{
  int cur = node;
  for (int hops = 0; cur >= 0 && hops < 8; hops++)
    {
      const NlGraphNode *gn = nl_graph_node (g, cur);
      int next;
      const NlGraphNode *nx;
      if (nl_quant_table_find (q->t, gn->id))
        return TRUE;
      if ((next = sole_reader (g, gn->out)) < 0)
        return FALSE;
      nx = nl_graph_node (g, next);
      if (!((is_op (nx, "BatchNorm") && q->fold[node] == next) || is_op (nx, "Add") || is_op (nx, "Dropout")
            || (is_op (nx, "Activation") && NL_P_ENUM (nx->params, P_ACT_TYPE) == ACT_RELU)))
        return FALSE;
      cur = next;
    }
  return FALSE;
}

/* Every point names a node of the network; the steps' folds and weights. */
static gboolean
plan (const NlGraph *g, Int8 *q, GError **error)
{
  for (guint r = 0; r < q->t->ranges->len; r++)
    {
      const char *point = g_array_index (q->t->ranges, NlQuantRange, r).point;
      gboolean found = FALSE;
      for (guint i = 0; i < g->nodes->len && !found; i++)
        found = !strcmp (nl_graph_node (g, i)->id, point);
      if (!found)
        {
          g_set_error (error, NL_ONNX_ERROR, NL_ONNX_ERROR_UNSUPPORTED,
                       "the quantization table has a range for “%s”, which is no node of network “%s”", point,
                       g->net->name ? g->net->name : "");
          return FALSE;
        }
    }
  q->fold = g_new (int, g->nodes->len);
  q->folded = g_new0 (gboolean, g->nodes->len);
  q->int8 = g_new0 (gboolean, g->nodes->len);
  for (guint i = 0; i < g->nodes->len; i++)
    q->fold[i] = -1;
  for (guint i = 0; i < g->nodes->len; i++)
    if (is_gemm (nl_graph_node (g, i)) && (q->fold[i] = foldable_batch_norm (g, i)) >= 0)
      q->folded[q->fold[i]] = TRUE;
  for (guint i = 0; i < g->nodes->len; i++)
    q->int8[i] = is_gemm (nl_graph_node (g, i)) && step_has_point (g, q, i);
  /* a BatchNorm stays a node of its own unless its Conv2D/Dense is INT8 */
  for (guint i = 0; i < g->nodes->len; i++)
    if (q->fold[i] >= 0 && !q->int8[i])
      q->folded[q->fold[i]] = FALSE;
  return TRUE;
}

/* The range value v is held in 8 bits with: its producer's point, or (for
 * ops that move 8-bit values without new rounding, and pooling) its
 * input's; NULL for a float value. */
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
      if (!(is_op (gn, "Input") || is_op (gn, "Dropout") || is_op (gn, "Flatten") || is_op (gn, "Reshape")
            || is_op (gn, "MaxPool2D") || is_op (gn, "AvgPool2D") || is_op (gn, "GlobalAvgPool2D")))
        return NULL;
      v = gn->in[0];
    }
  return NULL;
}

/* x -> QuantizeLinear -> DequantizeLinear -> out at r's scale; nodes
 * "BASE/quantize", "BASE/dequantize", constants "BASE/scale", "BASE/zero_point" */
static void
qdq (NlOnnxCtx *c, const char *base, const char *x, const NlQuantRange *r, const char *out)
{
  guint8 zero = 0;
  int type = r->is_unsigned ? ONNX__TENSOR_PROTO__DATA_TYPE__UINT8 : ONNX__TENSOR_PROTO__DATA_TYPE__INT8;
  const char *scale = nl_onnx_builder_scalar (c->b, nl_onnx_builder_unique (c->b, "%s/scale", base),
                                              r->threshold / (r->is_unsigned ? 255.0f : 127.0f));
  const char *zp = nl_onnx_builder_bytes (c->b, nl_onnx_builder_unique (c->b, "%s/zero_point", base), type, NULL, 0,
                                          &zero);
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
  if (!plan (g, q, error))
    return FALSE;
  for (guint i = 0; i < g->nodes->len; i++)
    {
      const NlGraphNode *gn = nl_graph_node (g, i);
      const NlQuantRange *r = is_op (gn, "Input") ? nl_quant_table_find (q->t, gn->id) : NULL;
      if (r)
        {
          const char *x = c->vname[g->input_value];
          c->vname[g->input_value] = nl_onnx_builder_unique (c->b, "%s/dequantized", x);
          qdq (c, x, x, r, c->vname[g->input_value]);
        }
    }
  return TRUE;
}

/* A point's node writes a float value that the QDQ pair turns into the
 * value its readers see (and the graph output, when it is that). */
static gboolean
hook_node (NlOnnxCtx *c, NlOnnxNode *n, gpointer data, GError **error)
{
  Int8 *q = data;
  const NlGraphNode *gn = n->gn;
  const NlQuantRange *r = nl_quant_table_find (q->t, gn->id);
  const char *out = n->out;
  int node = nl_graph_value (c->g, gn->out)->node;

  if (q->folded[node])
    {
      if (r)
        qdq (c, gn->id, n->in[0], r, out);
      else if (gn->out == c->g->pred_value)
        nl_onnx_builder_node (c->b, "Identity", gn->id, n->in, 1, out);
      else
        c->vname[gn->out] = n->in[0]; /* the Conv2D/Dense wrote it */
      return TRUE;
    }
  /* 8-bit average pooling rounds to its input's scale */
  if (!r && (is_op (gn, "AvgPool2D") || is_op (gn, "GlobalAvgPool2D")))
    r = value_range (c->g, q, gn->in[0]);
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
  if (q->fold[node] >= 0)
    {
      const NlGraphNode *bn = nl_graph_node (c->g, q->fold[node]);
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
  in[0] = nl_onnx_builder_bytes (c->b, transposed ? nl_onnx_export_temp (c, n, "weight.T") : wname,
                                 ONNX__TENSOR_PROTO__DATA_TYPE__INT8, dims, wt->ndim, qw);
  in[1] = nl_onnx_builder_floats (c->b, nl_onnx_builder_unique (c->b, "%s.scale", in[0]), &zdims, 1, scales);
  in[2] = nl_onnx_builder_bytes (c->b, nl_onnx_builder_unique (c->b, "%s.zero_point", in[0]),
                                 ONNX__TENSOR_PROTO__DATA_TYPE__INT8, &zdims, 1, zeros);
  out = nl_onnx_builder_unique (c->b, "%s/dequantized", in[0]);
  dq = nl_onnx_builder_node (c->b, "DequantizeLinear", nl_onnx_builder_unique (c->b, "%s/dequantize", in[0]), in,
                             3, out);
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
  g_free (q.fold);
  g_free (q.folded);
  g_free (q.int8);
  return bytes;
}

gboolean
nl_onnx_export_int8_file (const NlModel *m, const NlQuantTable *t, const NlOnnxExportOptions *o, const char *path,
                          GError **error)
{
  g_autoptr (GBytes) bytes = nl_onnx_export_int8 (m, t, o, error);
  gsize size;
  const char *data;
  if (!bytes)
    return FALSE;
  data = g_bytes_get_data (bytes, &size);
  return nl_atomic_file_set_contents (path, data, size, error);
}
