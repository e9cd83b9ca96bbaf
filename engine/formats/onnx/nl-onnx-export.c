/* nl-onnx-export.c — NlModel -> ONNX ModelProto (see nl-onnx-export.h).
 *
 * The network is compiled for inference with batch 1 to learn each value's
 * shape; every graph node then becomes one ONNX node or a short chain, by
 * its op's entry in `exporters`. Only the batch dimension is left symbolic:
 * every op below works on any batch size. */
#include "engine/formats/onnx/nl-onnx-export.h"
#include "engine/formats/onnx/nl-onnx-builder.h"
#include "engine/formats/onnx/nl-onnx-export-private.h"
#include "nl-onnx-version.h"

#include <math.h>
#include <string.h>

#include "core/nl-atomic-file.h"
#include "engine/graph/nl-graph.h"
#include "ops/nl-activation.h"
#include "ops/nl-arith.h"
#include "ops/nl-batch-norm.h"
#include "ops/nl-conv2d.h"
#include "ops/nl-dense.h"
#include "ops/nl-embedding.h"
#include "ops/nl-gelu.h"
#include "ops/nl-layer-norm.h"
#include "ops/nl-pool2d.h"
#include "ops/nl-softmax.h"
#include "ops/nl-structure.h"

G_DEFINE_QUARK (nl-onnx-error-quark, nl_onnx_error)

gboolean
nl_onnx_available (void)
{
  return TRUE;
}

typedef NlOnnxCtx Ctx;
typedef NlOnnxNode Node;

static gboolean
unsupported (GError **error, const Node *n, const char *why)
{
  g_set_error (error, NL_ONNX_ERROR, NL_ONNX_ERROR_UNSUPPORTED, "node '%s' (%s) has no ONNX form: %s", n->gn->id,
               n->gn->def->name, why);
  return FALSE;
}

static const NlShape *
in_shape (Ctx *c, const Node *n, int k)
{
  return &nl_graph_value (c->g, n->gn->in[k])->shape;
}

/* The model's tensor of weight slot k (NULL when absent), as an initializer
 * (or what a hook puts in its place). */
static const char *
weight (Ctx *c, const Node *n, int k)
{
  const NlTensor *t = c->m->weights[NL_MODEL_SLOT (n->gn->net_index, k)];
  g_autofree char *name = NULL;
  const char *hooked = c->hooks && c->hooks->weight ? c->hooks->weight (c, n, k, FALSE, c->hook_data) : NULL;
  if (hooked)
    return hooked;
  if (!t)
    return NULL;
  name = nl_model_weight_name (c->m, n->gn->net_index, k);
  return nl_onnx_builder_floats (c->b, name, t->shape, t->ndim, nl_tensor_f32 (t));
}

static const char *
aux (Ctx *c, const Node *n, int k)
{
  const NlTensor *t = c->m->aux[NL_MODEL_SLOT (n->gn->net_index, k)];
  g_autofree char *name = g_strdup_printf ("%s.%s", n->gn->id, n->gn->def->aux[k]);
  return nl_onnx_builder_floats (c->b, name, t->shape, t->ndim, nl_tensor_f32 (t));
}

/* A vector of `len` copies of v (BatchNorm or LayerNorm without gamma/beta). */
static const char *
filled (Ctx *c, const char *name, int64_t len, float v)
{
  g_autofree float *data = g_new (float, MAX (len, 1));
  for (int64_t i = 0; i < len; i++)
    data[i] = v;
  return nl_onnx_builder_floats (c->b, name, &len, 1, data);
}

/* An intermediate value named after the node. */
static const char *
temp (Ctx *c, const Node *n, const char *what)
{
  return nl_onnx_builder_unique (c->b, "%s/%s", n->gn->id, what);
}

const char *
nl_onnx_export_temp (NlOnnxCtx *c, const NlOnnxNode *n, const char *what)
{
  return temp (c, n, what);
}

static Onnx__NodeProto *
node1 (Ctx *c, const char *op, const char *name, const char *in, const char *out)
{
  return nl_onnx_builder_node (c->b, op, name, &in, 1, out);
}

static Onnx__NodeProto *
node2 (Ctx *c, const char *op, const char *name, const char *a, const char *b, const char *out)
{
  const char *in[2] = { a, b };
  return nl_onnx_builder_node (c->b, op, name, in, 2, out);
}

/* ---- one function per op ---- */

static gboolean
export_identity (Ctx *c, const Node *n, GError **error)
{
  node1 (c, "Identity", n->gn->id, n->in[0], n->out);
  return TRUE;
}

/* W^T of a Dense applied to the last axis, "fc.weight.T" */
static const char *
weight_transposed (Ctx *c, const Node *n, const NlTensor *w)
{
  int64_t units = w->shape[0], k = w->shape[1], dims[2] = { k, units };
  g_autofree float *wt = NULL;
  g_autofree char *wname = NULL, *tname = NULL;
  const char *hooked = c->hooks && c->hooks->weight ? c->hooks->weight (c, n, 0, TRUE, c->hook_data) : NULL;
  const float *src = nl_tensor_f32 (w);
  if (hooked)
    return hooked;
  wt = g_new (float, units * k);
  wname = nl_model_weight_name (c->m, n->gn->net_index, 0);
  tname = g_strdup_printf ("%s.T", wname);
  for (int64_t i = 0; i < units; i++)
    for (int64_t j = 0; j < k; j++)
      wt[j * units + i] = src[i * k + j];
  return nl_onnx_builder_floats (c->b, tname, dims, 2, wt);
}

static gboolean
export_dense (Ctx *c, const Node *n, GError **error)
{
  const NlShape *s = in_shape (c, n, 0);
  const NlTensor *w = c->m->weights[NL_MODEL_SLOT (n->gn->net_index, 0)];
  const char *bias = weight (c, n, 1);
  gboolean flatten = NL_P_BOOL (n->gn->params, DENSE_FLATTEN);

  if (flatten || s->ndim == 2)
    {
      const char *x = n->in[0];
      const char *in[3];
      Onnx__NodeProto *gemm;
      if (s->ndim != 2)
        {
          x = temp (c, n, "flatten");
          nl_onnx_attr_int (c->b, node1 (c, "Flatten", x, n->in[0], x), "axis", 1);
        }
      in[0] = x;
      in[1] = weight (c, n, 0);
      in[2] = bias;
      gemm = nl_onnx_builder_node (c->b, "Gemm", n->gn->id, in, bias ? 3 : 2, n->out);
      nl_onnx_attr_int (c->b, gemm, "transB", 1);
      return TRUE;
    }
  /* applied to the last dimension: MatMul by W^T (stored transposed), + b */
  {
    const char *y = bias ? temp (c, n, "matmul") : n->out;
    node2 (c, "MatMul", bias ? y : n->gn->id, n->in[0], weight_transposed (c, n, w), y);
    if (bias)
      node2 (c, "Add", n->gn->id, y, bias, n->out);
  }
  return TRUE;
}

static gboolean
export_conv (Ctx *c, const Node *n, GError **error)
{
  const NlParamValue *p = n->gn->params;
  const char *w = weight (c, n, 0), *bias = weight (c, n, 1); /* in this order: the initializers' */
  const char *in[3] = { n->in[0], w, bias };
  Onnx__NodeProto *conv = nl_onnx_builder_node (c->b, "Conv", n->gn->id, in, in[2] ? 3 : 2, n->out);
  int64_t k[2] = { NL_P_V (p, CONV_KERNEL, 0), NL_P_V (p, CONV_KERNEL, 1) };
  int64_t s[2] = { NL_P_V (p, CONV_STRIDE, 0), NL_P_V (p, CONV_STRIDE, 1) };
  int64_t d[2] = { NL_P_V (p, CONV_DILATION, 0), NL_P_V (p, CONV_DILATION, 1) };
  int64_t pads[4] = { NL_P_V (p, CONV_PADDING, 0), NL_P_V (p, CONV_PADDING, 1), NL_P_V (p, CONV_PADDING, 0),
                      NL_P_V (p, CONV_PADDING, 1) };
  nl_onnx_attr_ints (c->b, conv, "kernel_shape", k, 2);
  nl_onnx_attr_ints (c->b, conv, "strides", s, 2);
  nl_onnx_attr_ints (c->b, conv, "dilations", d, 2);
  nl_onnx_attr_ints (c->b, conv, "pads", pads, 4);
  nl_onnx_attr_int (c->b, conv, "group", NL_P_INT (p, CONV_GROUPS));
  return TRUE;
}

static gboolean
export_pool (Ctx *c, const Node *n, GError **error)
{
  NlPool2dArgs a;
  gboolean max = !strcmp (n->gn->def->name, "MaxPool2D");
  Onnx__NodeProto *pool = node1 (c, max ? "MaxPool" : "AveragePool", n->gn->id, n->in[0], n->out);
  int64_t pads[4];
  n->gn->def->resolve_args (n->gn->params, &a);
  pads[0] = pads[2] = a.padding[0];
  pads[1] = pads[3] = a.padding[1];
  nl_onnx_attr_ints (c->b, pool, "kernel_shape", a.pool_size, 2);
  nl_onnx_attr_ints (c->b, pool, "strides", a.strides, 2);
  nl_onnx_attr_ints (c->b, pool, "pads", pads, 4);
  nl_onnx_attr_int (c->b, pool, "ceil_mode", a.ceil_mode);
  if (!max)
    nl_onnx_attr_int (c->b, pool, "count_include_pad", a.count_include_pad);
  return TRUE;
}

static gboolean
export_global_pool (Ctx *c, const Node *n, GError **error)
{
  node1 (c, "GlobalAveragePool", n->gn->id, n->in[0], n->out);
  return TRUE;
}

static gboolean
export_batch_norm (Ctx *c, const Node *n, GError **error)
{
  const NlShape *s = in_shape (c, n, 0);
  int64_t axis = NL_P_INT (n->gn->params, BN_AXIS), C;
  const char *in[5];
  Onnx__NodeProto *bn;
  if (axis < 0)
    axis += s->ndim;
  if (axis != 1)
    return unsupported (error, n, "ONNX normalises the channel axis 1 only");
  C = s->d[1];
  in[0] = n->in[0];
  in[1] = weight (c, n, BN_GAMMA);
  in[2] = weight (c, n, BN_BETA);
  if (!in[1])
    in[1] = filled (c, temp (c, n, "gamma"), C, 1.0f);
  if (!in[2])
    in[2] = filled (c, temp (c, n, "beta"), C, 0.0f);
  in[3] = aux (c, n, BN_RUNNING_MEAN);
  in[4] = aux (c, n, BN_RUNNING_VAR);
  bn = nl_onnx_builder_node (c->b, "BatchNormalization", n->gn->id, in, 5, n->out);
  nl_onnx_attr_float (c->b, bn, "epsilon", NL_P_FLOAT (n->gn->params, BN_EPSILON));
  return TRUE;
}

static gboolean
export_layer_norm (Ctx *c, const Node *n, GError **error)
{
  const NlShape *s = in_shape (c, n, 0);
  int64_t D = s->d[s->ndim - 1], last = -1;
  const char *gamma = weight (c, n, LN_GAMMA), *beta = weight (c, n, LN_BETA);
  float eps = NL_P_FLOAT (n->gn->params, LN_EPSILON);

  if (c->opset >= 17)
    {
      const char *in[3] = { n->in[0], gamma ? gamma : filled (c, temp (c, n, "gamma"), D, 1.0f), beta };
      Onnx__NodeProto *ln = nl_onnx_builder_node (c->b, "LayerNormalization", n->gn->id, in, beta ? 3 : 2, n->out);
      nl_onnx_attr_int (c->b, ln, "axis", -1);
      nl_onnx_attr_float (c->b, ln, "epsilon", eps);
      return TRUE;
    }
  /* (x - mean) / sqrt(var + eps) * gamma + beta over the last axis */
  {
    const char *mean = temp (c, n, "mean"), *d = temp (c, n, "centred"), *sq = temp (c, n, "squared");
    const char *var = temp (c, n, "var"), *ve = temp (c, n, "var_eps"), *sd = temp (c, n, "std");
    const char *y = gamma || beta ? temp (c, n, "normalised") : n->out;
    nl_onnx_attr_ints (c->b, node1 (c, "ReduceMean", mean, n->in[0], mean), "axes", &last, 1);
    node2 (c, "Sub", d, n->in[0], mean, d);
    node2 (c, "Mul", sq, d, d, sq);
    nl_onnx_attr_ints (c->b, node1 (c, "ReduceMean", var, sq, var), "axes", &last, 1);
    node2 (c, "Add", ve, var, nl_onnx_builder_scalar (c->b, temp (c, n, "epsilon"), eps), ve);
    node1 (c, "Sqrt", sd, ve, sd);
    node2 (c, "Div", gamma || beta ? y : n->gn->id, d, sd, y);
    if (gamma)
      {
        const char *g = beta ? temp (c, n, "scaled") : n->out;
        node2 (c, "Mul", beta ? g : n->gn->id, y, gamma, g);
        y = g;
      }
    if (beta)
      node2 (c, "Add", n->gn->id, y, beta, n->out);
  }
  return TRUE;
}

static gboolean
export_activation (Ctx *c, const Node *n, GError **error)
{
  static const char *const onnx[] = { [ACT_RELU] = "Relu", [ACT_SIGMOID] = "Sigmoid", [ACT_TANH] = "Tanh",
                                      [ACT_SOFTRELU] = "Softplus" };
  int t = NL_P_ENUM (n->gn->params, P_ACT_TYPE);
  if (t < 0 || t >= (int) G_N_ELEMENTS (onnx))
    return unsupported (error, n, "unknown act_type");
  node1 (c, onnx[t], n->gn->id, n->in[0], n->out);
  return TRUE;
}

static gboolean
export_leaky_relu (Ctx *c, const Node *n, GError **error)
{
  nl_onnx_attr_float (c->b, node1 (c, "LeakyRelu", n->gn->id, n->in[0], n->out), "alpha",
                      NL_P_FLOAT (n->gn->params, P_ALPHA));
  return TRUE;
}

/* GELU has no ONNX op before opset 20: its formula, as ops/nl-gelu.h computes it. */
static gboolean
export_gelu (Ctx *c, const Node *n, GError **error)
{
  const char *x = n->in[0], *u, *t = temp (c, n, "t"), *t1 = temp (c, n, "one_plus"), *xt = temp (c, n, "x_t");
  if (NL_P_ENUM (n->gn->params, GELU_APPROX) == APPROX_ERF)
    {
      const char *xs = temp (c, n, "x_scaled");
      node2 (c, "Mul", xs, x, nl_onnx_builder_scalar (c->b, temp (c, n, "rsqrt2"), (float) M_SQRT1_2), xs);
      node1 (c, "Erf", t, xs, t);
    }
  else
    {
      const char *x2 = temp (c, n, "x2"), *x3 = temp (c, n, "x3"), *cx3 = temp (c, n, "c_x3");
      const char *in = temp (c, n, "inner"), *sin = temp (c, n, "inner_scaled");
      node2 (c, "Mul", x2, x, x, x2);
      node2 (c, "Mul", x3, x2, x, x3);
      node2 (c, "Mul", cx3, x3, nl_onnx_builder_scalar (c->b, temp (c, n, "c"), 0.044715f), cx3);
      node2 (c, "Add", in, x, cx3, in);
      node2 (c, "Mul", sin, in, nl_onnx_builder_scalar (c->b, temp (c, n, "sqrt_2_pi"), (float) sqrt (2.0 / M_PI)), sin);
      node1 (c, "Tanh", t, sin, t);
    }
  u = nl_onnx_builder_scalar (c->b, temp (c, n, "one"), 1.0f);
  node2 (c, "Add", t1, t, u, t1);
  node2 (c, "Mul", xt, x, t1, xt);
  node2 (c, "Mul", n->gn->id, xt, nl_onnx_builder_scalar (c->b, temp (c, n, "half"), 0.5f), n->out);
  return TRUE;
}

static gboolean
export_flatten (Ctx *c, const Node *n, GError **error)
{
  nl_onnx_attr_int (c->b, node1 (c, "Flatten", n->gn->id, n->in[0], n->out), "axis", 1);
  return TRUE;
}

/* Reshape's own semantics are ONNX's (0 keeps a dimension, one -1 is inferred). */
static gboolean
export_reshape (Ctx *c, const Node *n, GError **error)
{
  const NlParamValue *shape = &n->gn->params[RESHAPE_SHAPE];
  int64_t len = shape->n;
  node2 (c, "Reshape", n->gn->id, n->in[0],
         nl_onnx_builder_int64s (c->b, temp (c, n, "shape"), &len, 1, shape->v), n->out);
  return TRUE;
}

static gboolean
export_concat (Ctx *c, const Node *n, GError **error)
{
  Onnx__NodeProto *cat = nl_onnx_builder_node (c->b, "Concat", n->gn->id, n->in, n->gn->n_data, n->out);
  nl_onnx_attr_int (c->b, cat, "axis", NL_P_INT (n->gn->params, CONCAT_DIM));
  return TRUE;
}

static gboolean
export_add (Ctx *c, const Node *n, GError **error)
{
  const char *op = n->gn->n_data == 1 ? "Identity" : n->gn->n_data == 2 ? "Add" : "Sum";
  nl_onnx_builder_node (c->b, op, n->gn->id, n->in, n->gn->n_data, n->out);
  return TRUE;
}

/* Mul, Sub: of two inputs, or of the input and the constant operand,
 * whose broadcasting is ONNX's (numpy's) */
static gboolean
export_arith (Ctx *c, const Node *n, GError **error)
{
  const char *op = n->gn->def->name, *k;
  if (n->gn->n_data == 2)
    {
      node2 (c, op, n->gn->id, n->in[0], n->in[1], n->out);
      return TRUE;
    }
  k = aux (c, n, ARITH_OPERAND);
  if (!strcmp (op, "Sub") && NL_P_BOOL (n->gn->params, ARITH_REVERSE))
    node2 (c, op, n->gn->id, k, n->in[0], n->out);
  else
    node2 (c, op, n->gn->id, n->in[0], k, n->out);
  return TRUE;
}

static gboolean
export_transpose (Ctx *c, const Node *n, GError **error)
{
  NlTransposeArgs a;
  int64_t perm[NL_MAX_DIMS];
  int nd = in_shape (c, n, 0)->ndim;
  n->gn->def->resolve_args (n->gn->params, &a);
  transpose_perm (&a, nd, perm);
  nl_onnx_attr_ints (c->b, node1 (c, "Transpose", n->gn->id, n->in[0], n->out), "perm", perm, nd);
  return TRUE;
}

static gboolean
export_softmax (Ctx *c, const Node *n, GError **error)
{
  const char *op = !strcmp (n->gn->def->name, "Softmax") ? "Softmax" : "LogSoftmax";
  nl_onnx_attr_int (c->b, node1 (c, op, n->gn->id, n->in[0], n->out), "axis",
                    NL_P_INT (n->gn->params, SOFTMAX_AXIS));
  return TRUE;
}

/* Indices arrive as floats holding integers (ops/nl-op.h): Cast, then Gather. */
static gboolean
export_embedding (Ctx *c, const Node *n, GError **error)
{
  const char *idx = temp (c, n, "indices");
  nl_onnx_attr_int (c->b, node1 (c, "Cast", idx, n->in[0], idx), "to", ONNX__TENSOR_PROTO__DATA_TYPE__INT64);
  nl_onnx_attr_int (c->b, node2 (c, "Gather", n->gn->id, weight (c, n, 0), idx, n->out), "axis", 0);
  return TRUE;
}

static const struct {
  const char *op;
  gboolean (*fn) (Ctx *c, const Node *n, GError **error);
} exporters[] = {
  { "Dense", export_dense },
  { "Conv2D", export_conv },
  { "MaxPool2D", export_pool },
  { "AvgPool2D", export_pool },
  { "GlobalAvgPool2D", export_global_pool },
  { "BatchNorm", export_batch_norm },
  { "LayerNorm", export_layer_norm },
  { "Input", export_identity },   /* these two only when they are the output: */
  { "Dropout", export_identity }, /* elsewhere they are elided */
  { "Activation", export_activation },
  { "LeakyReLU", export_leaky_relu },
  { "GELU", export_gelu },
  { "Flatten", export_flatten },
  { "Reshape", export_reshape },
  { "Concat", export_concat },
  { "Add", export_add },
  { "Mul", export_arith },
  { "Sub", export_arith },
  { "Transpose", export_transpose },
  { "Softmax", export_softmax },
  { "LogSoftmax", export_softmax },
  { "Embedding", export_embedding },
};

/* Ops that never reach an ONNX file, and why. */
static const struct {
  const char *op;
  const char *why;
} not_exportable[] = {
  { "SoftmaxCrossEntropy", "a loss: the inference graph leaves it out" },
  { "SigmoidBinaryCrossEntropy", "a loss: the inference graph leaves it out" },
  { "L2Loss", "a loss: the inference graph leaves it out" },
  { "L1Loss", "a loss: the inference graph leaves it out" },
  { "HuberLoss", "a loss: the inference graph leaves it out" },
  /* temporary (issue 21): branch h-onnx writes these exports and drops the marks */
  { "MatMul", "its ONNX export is not written yet" },
  { "MultiHeadAttention", "its ONNX export is not written yet" },
  { "PositionalEmbedding", "its ONNX export is not written yet" },
  { "SequencePool", "its ONNX export is not written yet" },
  /* temporary (branch h-rnn): h-onnx replaces these with the ONNX LSTM and GRU nodes */
  { "LSTM", "its ONNX export is not written yet" },
  { "GRU", "its ONNX export is not written yet" },
};

NlOnnxOpForm
nl_onnx_op_form (const char *op_name, const char **why)
{
  if (why)
    *why = NULL;
  for (gsize e = 0; e < G_N_ELEMENTS (exporters); e++)
    if (!strcmp (exporters[e].op, op_name))
      return NL_ONNX_OP_EXPORTED;
  for (gsize e = 0; e < G_N_ELEMENTS (not_exportable); e++)
    if (!strcmp (not_exportable[e].op, op_name))
      {
        if (why)
          *why = not_exportable[e].why;
        return NL_ONNX_OP_NOT_EXPORTABLE;
      }
  return NL_ONNX_OP_UNMAPPED;
}

gboolean
nl_onnx_export_node (NlOnnxCtx *c, const NlOnnxNode *n, GError **error)
{
  for (gsize e = 0; e < G_N_ELEMENTS (exporters); e++)
    if (!strcmp (exporters[e].op, n->gn->def->name))
      return exporters[e].fn (c, n, error);
  return unsupported (error, n, "no ONNX mapping for this op");
}

/* ---- the graph ---- */

static const char *
output_name (const NlGraph *g, gboolean softmax_appended)
{
  int node = nl_graph_value (g, g->pred_value)->node;
  const char *op = node >= 0 ? nl_graph_node (g, node)->def->name : "";
  if (softmax_appended || !strcmp (op, "Softmax"))
    return "probabilities";
  return !strcmp (op, "LogSoftmax") ? "log_probabilities" : "output";
}

static gboolean
export_graph (Ctx *c, const NlOnnxExportOptions *o, GError **error)
{
  const NlGraph *g = c->g;
  const NlShape *is = &nl_graph_value (g, g->input_value)->shape;
  const NlShape *ps = &nl_graph_value (g, g->pred_value)->shape;
  int pred_node = nl_graph_value (g, g->pred_value)->node;
  const char *last_op = pred_node >= 0 ? nl_graph_node (g, pred_node)->def->name : "";
  gboolean append = o->softmax && ps->ndim == 2 && strcmp (last_op, "Softmax") != 0;
  const char *out_name = output_name (g, append);
  int64_t dims[NL_MAX_DIMS + 1];

  for (guint i = 0; i < g->nodes->len; i++)
    {
      const NlGraphNode *gn = nl_graph_node (g, i);
      if (!strcmp (gn->def->name, "Input"))
        {
          c->vname[g->input_value] = nl_onnx_builder_unique (c->b, "%s", gn->id);
          dims[0] = -1;
          for (int d = 1; d < is->ndim; d++)
            dims[d] = is->d[d];
          nl_onnx_builder_input (c->b, c->vname[g->input_value], ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, dims,
                                 is->ndim);
        }
    }
  if (c->hooks && c->hooks->input && !c->hooks->input (c, c->hook_data, error))
    return FALSE;
  for (guint i = 0; i < g->nodes->len; i++)
    {
      const NlGraphNode *gn = nl_graph_node (g, i);
      Node n = { .gn = gn };
      if (gn->def->is_loss)
        continue;
      for (int k = 0; k < gn->n_data; k++)
        n.in[k] = c->vname[gn->in[k]];
      /* Input and Dropout only pass their input on */
      if (!strcmp (gn->def->name, "Input") || !strcmp (gn->def->name, "Dropout"))
        {
          if (gn->out != g->pred_value || append)
            {
              c->vname[gn->out] = n.in[0];
              continue;
            }
        }
      n.out = c->vname[gn->out] = gn->out == g->pred_value && !append
                                    ? nl_onnx_builder_unique (c->b, "%s", out_name)
                                    : nl_onnx_builder_unique (c->b, "%s", gn->id);
      if (c->hooks && c->hooks->node ? !c->hooks->node (c, &n, c->hook_data, error)
                                     : !nl_onnx_export_node (c, &n, error))
        return FALSE;
    }
  if (append)
    {
      const char *scores = c->vname[g->pred_value];
      if (!strcmp (last_op, "LogSoftmax"))
        node1 (c, "Exp", "probabilities", scores, out_name);
      else
        nl_onnx_attr_int (c->b, node1 (c, "Softmax", "probabilities", scores, out_name), "axis", -1);
      c->vname[g->pred_value] = out_name;
    }
  dims[0] = -1;
  for (int d = 1; d < ps->ndim; d++)
    dims[d] = ps->d[d];
  nl_onnx_builder_output (c->b, c->vname[g->pred_value], dims, ps->ndim);
  return TRUE;
}

GBytes *
nl_onnx_export (const NlModel *m, const NlOnnxExportOptions *o, GError **error)
{
  return nl_onnx_export_hooked (m, o, NULL, NULL, error);
}

GBytes *
nl_onnx_export_hooked (const NlModel *m, const NlOnnxExportOptions *o, const NlOnnxExportHooks *hooks,
                       gpointer data, GError **error)
{
  static const NlOnnxExportOptions defaults = { 0 };
  NlCompileOptions copts = { .batch = 1, .training = FALSE, .loss = NULL };
  g_autoptr (NlGraph) g = NULL;
  g_autoptr (NlOnnxBuilder) b = NULL;
  g_autofree const char **vname = NULL;
  Ctx c = { .m = m, .hooks = hooks, .hook_data = data };

  g_return_val_if_fail (m != NULL, NULL);
  if (!o)
    o = &defaults;
  c.opset = o->opset ? o->opset : NL_ONNX_OPSET_MAX;
  if (c.opset < NL_ONNX_OPSET_MIN || c.opset > NL_ONNX_OPSET_MAX)
    {
      g_set_error (error, NL_ONNX_ERROR, NL_ONNX_ERROR_OPSET, "opset %d: netloom exports opsets %d to %d", c.opset,
                   NL_ONNX_OPSET_MIN, NL_ONNX_OPSET_MAX);
      return NULL;
    }
  if (!(g = nl_graph_compile (m->net, &m->sample_shape, &copts, error)))
    return NULL;
  b = nl_onnx_builder_new (m->net->name ? m->net->name : "netloom", c.opset);
  vname = g_new0 (const char *, g->values->len);
  c.b = b;
  c.g = g;
  c.vname = vname;
  if (!export_graph (&c, o, error))
    return NULL;
  nl_onnx_builder_producer (b, "netloom", NL_VERSION, o->doc);
  nl_onnx_builder_metadata (b, "netloom_version", NL_VERSION);
  nl_onnx_builder_metadata (b, "netloom_network", m->net->name ? m->net->name : "");
  for (int i = 0; o->metadata && o->metadata[i] && o->metadata[i + 1]; i += 2)
    nl_onnx_builder_metadata (b, o->metadata[i], o->metadata[i + 1]);
  return nl_onnx_builder_pack (b);
}

gboolean
nl_onnx_export_file (const NlModel *m, const NlOnnxExportOptions *o, const char *path, GError **error)
{
  g_autoptr (GBytes) bytes = nl_onnx_export (m, o, error);
  return nl_atomic_file_set_bytes (path, bytes, error);
}
