/* nl-onnx-import.c — ONNX ModelProto -> NlNetwork + weights (see
 * nl-onnx-import.h). Nodes are visited in the graph's (topological) order;
 * each either folds into a constant, aliases a value (Identity), or becomes
 * netloom nodes by its entry in `mappers`. Nodes that cannot be mapped are
 * collected and reported together; nothing is returned then. */
#include "engine/onnx/nl-onnx-import.h"
#include "engine/onnx/nl-onnx-const.h"
#include "engine/onnx/nl-onnx-export.h"
#include "engine/onnx/nl-onnx-fold.h"

#include <ctype.h>
#include <math.h>
#include <string.h>

#include "ops/nl-op-registry.h"

typedef struct {
  int node;
  gboolean aux;
  int slot;
  NlTensor *t;
} Weight;

struct NlOnnxImport {
  NlNetwork *net;
  NlShape sample;
  GArray *weights;     /* Weight */
  GHashTable *meta;    /* key -> value */
};

typedef enum { MAPPED, UNSUPPORTED, FAILED, SKIPPED } Result;

typedef struct {
  NlOnnxImport *imp;
  const Onnx__GraphProto *g;
  int opset;
  GHashTable *consts;  /* name -> NlOnnxConst (owned) */
  GHashTable *values;  /* name -> node index + 1 */
  GHashTable *uses;    /* name -> how many node inputs read it */
  GHashTable *poisoned; /* outputs of unsupported nodes and of what reads them */
  GHashTable *consumer; /* value name -> index + 1 of the last node reading it */
  GHashTable *absorbed; /* nodes folded into a pattern already mapped */
  int64_t batch;       /* the graph input's first dimension, -1 when symbolic */
  char *why;           /* why the current node is unsupported */
} Imp;

static Result
unsupported (Imp *im, const char *fmt, ...) G_GNUC_PRINTF (2, 3);

static Result
unsupported (Imp *im, const char *fmt, ...)
{
  va_list ap;
  g_free (im->why);
  va_start (ap, fmt);
  im->why = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  return UNSUPPORTED;
}

/* ---- inputs ---- */

static const char *
in_name (const Onnx__NodeProto *n, size_t k)
{
  return k < n->n_input && n->input[k] ? n->input[k] : "";
}

static NlOnnxConst *
cst (Imp *im, const char *name)
{
  return *name ? g_hash_table_lookup (im->consts, name) : NULL;
}

/* The netloom node producing value `name`, -1 when it is no data value. */
static int
data (Imp *im, const char *name)
{
  return GPOINTER_TO_INT (g_hash_table_lookup (im->values, name)) - 1;
}

/* ---- building the network ---- */

static int
add (Imp *im, const Onnx__NodeProto *n, const char *op)
{
  g_autoptr (GString) id = g_string_new (NULL);
  g_autofree char *base = NULL;
  const char *src = n->name && *n->name ? n->name : n->op_type;
  for (const char *c = src; *c; c++)
    if (isalnum ((guchar) *c) || *c == '_' || *c == '.' || *c == '-')
      g_string_append_c (id, *c);
    else if (id->len > 0 && id->str[id->len - 1] != '_')
      g_string_append_c (id, '_');
  while (id->len > 0 && (id->str[id->len - 1] == '_' || id->str[id->len - 1] == '.'))
    g_string_truncate (id, id->len - 1);
  if (id->len == 0)
    g_string_append (id, op);
  base = g_strdup (id->str);
  for (int k = 1; nl_network_find (im->imp->net, id->str) >= 0; k++)
    g_string_printf (id, "%s_%d", base, k);
  return nl_network_add_node (im->imp->net, id->str, op, NULL);
}

static gboolean
set (Imp *im, int node, const char *name, const char *fmt, ...) G_GNUC_PRINTF (4, 5);

/* A parameter out of netloom's range makes the node unsupported (im->why). */
static gboolean
set (Imp *im, int node, const char *name, const char *fmt, ...)
{
  va_list ap;
  g_autofree char *text = NULL;
  g_autoptr (GError) local = NULL;
  va_start (ap, fmt);
  text = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  if (nl_network_set_param (im->imp->net, node, name, text, &local))
    return TRUE;
  unsupported (im, "%s", local->message);
  return FALSE;
}

static void
connect_data (Imp *im, int from, int to, int port)
{
  nl_network_connect (im->imp->net, from, 0, to, port, NULL);
}

static void
produce (Imp *im, const Onnx__NodeProto *n, int node)
{
  if (n->n_output > 0 && n->output[0] && *n->output[0])
    g_hash_table_insert (im->values, g_strdup (n->output[0]), GINT_TO_POINTER (node + 1));
}

/* c (reshaped to shape when given) as weight or aux slot of node. */
static void
store (Imp *im, int node, gboolean aux, int slot, const NlOnnxConst *c, const NlShape *shape)
{
  NlShape s = shape ? *shape : c->shape;
  Weight w = { node, aux, slot, nl_tensor_zeros (NL_DTYPE_F32, &s) };
  float *dst = nl_tensor_f32 (w.t);
  for (int64_t k = 0; k < c->numel; k++)
    dst[k] = (float) nl_onnx_const_get (c, k);
  g_array_append_val (im->imp->weights, w);
}

/* The 2-D transpose of a (rows, cols) constant, as float. */
static NlOnnxConst *
transposed (const NlOnnxConst *c)
{
  NlShape s = nl_shape_of (2, c->shape.d[1], c->shape.d[0]);
  NlOnnxConst *t = nl_onnx_const_new (&s, FALSE);
  for (int64_t i = 0; i < c->shape.d[0]; i++)
    for (int64_t j = 0; j < c->shape.d[1]; j++)
      t->f[j * c->shape.d[0] + i] = (float) nl_onnx_const_get (c, i * c->shape.d[1] + j);
  return t;
}

/* One data input of the node, connected to port 0 of a new node of op. */
static int
unary (Imp *im, const Onnx__NodeProto *n, const char *op, int *node)
{
  int from = data (im, in_name (n, 0));
  if (from < 0)
    return unsupported (im, "its input is not computed from the graph input");
  *node = add (im, n, op);
  connect_data (im, from, *node, 0);
  produce (im, n, *node);
  return MAPPED;
}

/* Symmetric pads (h, w) of a 2-D conv or pool; auto_pad VALID, or SAME with
 * stride 1 and an odd window, where the padding is known without shapes. */
static gboolean
pads_2d (Imp *im, const Onnx__NodeProto *n, const int64_t k[2], const int64_t s[2], const int64_t d[2],
         int64_t out[2])
{
  int np;
  const int64_t *p = nl_onnx_node_ints (n, "pads", &np);
  out[0] = out[1] = 0;
  if (nl_onnx_node_string_is (n, "auto_pad", "SAME_UPPER", FALSE) || nl_onnx_node_string_is (n, "auto_pad", "SAME_LOWER", FALSE))
    {
      for (int i = 0; i < 2; i++)
        {
          int64_t span = d[i] * (k[i] - 1);
          if (s[i] != 1 || span % 2)
            return unsupported (im, "auto_pad SAME with stride %" G_GINT64_FORMAT " and window %" G_GINT64_FORMAT
                                    " needs the input size", s[i], k[i]), FALSE;
          out[i] = span / 2;
        }
      return TRUE;
    }
  if (np == 0)
    return TRUE;
  if (np != 4 || p[0] != p[2] || p[1] != p[3])
    return unsupported (im, "pads must be the same before and after (netloom pads symmetrically)"), FALSE;
  out[0] = p[0];
  out[1] = p[1];
  return TRUE;
}

/* kernel_shape (or the weight's), strides and dilations of a 2-D window */
static gboolean
window_2d (Imp *im, const Onnx__NodeProto *n, const NlOnnxConst *w, int64_t k[2], int64_t s[2], int64_t d[2])
{
  int nk, ns, nd;
  const int64_t *ka = nl_onnx_node_ints (n, "kernel_shape", &nk), *sa = nl_onnx_node_ints (n, "strides", &ns);
  const int64_t *da = nl_onnx_node_ints (n, "dilations", &nd);
  if ((nk && nk != 2) || (ns && ns != 2) || (nd && nd != 2) || (w && w->shape.ndim != 4))
    return unsupported (im, "only 2-D windows are supported"), FALSE;
  if (!nk && !w)
    return unsupported (im, "no kernel_shape"), FALSE;
  for (int i = 0; i < 2; i++)
    {
      k[i] = nk ? ka[i] : w->shape.d[2 + i];
      s[i] = ns ? sa[i] : 1;
      d[i] = nd ? da[i] : 1;
    }
  return TRUE;
}

/* ---- one function per op ---- */

static Result
map_conv (Imp *im, const Onnx__NodeProto *n)
{
  NlOnnxConst *w = cst (im, in_name (n, 1)), *b = cst (im, in_name (n, 2));
  int64_t k[2], s[2], d[2], p[2];
  int node = -1;
  if (!w)
    return unsupported (im, "its weight is not a constant");
  if (!window_2d (im, n, w, k, s, d) || !pads_2d (im, n, k, s, d, p))
    return UNSUPPORTED;
  if (unary (im, n, "Conv2D", &node) != MAPPED)
    return UNSUPPORTED;
  if (!set (im, node, "channels", "%" G_GINT64_FORMAT, w->shape.d[0])
      || !set (im, node, "kernel", "%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT, k[0], k[1])
      || !set (im, node, "stride", "%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT, s[0], s[1])
      || !set (im, node, "padding", "%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT, p[0], p[1])
      || !set (im, node, "dilation", "%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT, d[0], d[1])
      || !set (im, node, "groups", "%" G_GINT64_FORMAT, nl_onnx_node_int (n, "group", 1))
      || !set (im, node, "use_bias", "%s", b ? "true" : "false"))
    return UNSUPPORTED;
  store (im, node, FALSE, 0, w, NULL);
  if (b)
    store (im, node, FALSE, 1, b, NULL);
  return MAPPED;
}

/* Dense from a (units, in) weight; bias (may be NULL) of units values. */
static Result
dense (Imp *im, const Onnx__NodeProto *n, const NlOnnxConst *w, const NlOnnxConst *b, gboolean flatten,
       float alpha, float beta)
{
  int node = -1;
  NlShape bs = nl_shape_of (1, w->shape.d[0]);
  if (b && b->numel != w->shape.d[0] && b->numel != 1)
    return unsupported (im, "its bias has %" G_GINT64_FORMAT " values for %" G_GINT64_FORMAT " units", b->numel,
                        w->shape.d[0]);
  if (unary (im, n, "Dense", &node) != MAPPED)
    return UNSUPPORTED;
  if (!set (im, node, "units", "%" G_GINT64_FORMAT, w->shape.d[0]) || !set (im, node, "flatten", flatten ? "true" : "false")
      || !set (im, node, "use_bias", b ? "true" : "false"))
    return UNSUPPORTED;
  store (im, node, FALSE, 0, w, NULL);
  if (alpha != 1.0f)
    {
      Weight *wt = &g_array_index (im->imp->weights, Weight, im->imp->weights->len - 1);
      float *x = nl_tensor_f32 (wt->t);
      for (int64_t k = 0; k < w->numel; k++)
        x[k] *= alpha;
    }
  if (b)
    {
      g_autoptr (NlOnnxConst) full = nl_onnx_const_new (&bs, FALSE);
      for (int64_t k = 0; k < full->numel; k++)
        full->f[k] = beta * (float) nl_onnx_const_get (b, b->numel == 1 ? 0 : k);
      store (im, node, FALSE, 1, full, NULL);
    }
  return MAPPED;
}

static Result
map_gemm (Imp *im, const Onnx__NodeProto *n)
{
  NlOnnxConst *w = cst (im, in_name (n, 1)), *b = cst (im, in_name (n, 2));
  g_autoptr (NlOnnxConst) wt = NULL;
  if (!w || w->shape.ndim != 2)
    return unsupported (im, "B is not a constant matrix");
  if (*in_name (n, 2) && !b)
    return unsupported (im, "C is not a constant");
  if (nl_onnx_node_int (n, "transA", 0))
    return unsupported (im, "transA = 1");
  if (!nl_onnx_node_int (n, "transB", 0))
    w = wt = transposed (w);
  return dense (im, n, w, b, TRUE, nl_onnx_node_float (n, "alpha", 1.0f), nl_onnx_node_float (n, "beta", 1.0f));
}

static Result
map_matmul (Imp *im, const Onnx__NodeProto *n)
{
  NlOnnxConst *w = cst (im, in_name (n, 1));
  g_autoptr (NlOnnxConst) wt = NULL;
  if (!w || w->shape.ndim != 2)
    return unsupported (im, "only a product with a constant matrix is supported");
  wt = transposed (w);
  return dense (im, n, wt, NULL, FALSE, 1.0f, 1.0f);
}

/* Add: of two data values, or a constant bias after a Dense without one */
static Result
map_add (Imp *im, const Onnx__NodeProto *n)
{
  int node = -1;
  if (n->n_input == 2 && (cst (im, in_name (n, 0)) || cst (im, in_name (n, 1))))
    {
      gboolean first = cst (im, in_name (n, 0)) != NULL;
      NlOnnxConst *b = cst (im, in_name (n, first ? 0 : 1));
      const char *x = in_name (n, first ? 1 : 0);
      int from = data (im, x);
      NlNode *dn = from >= 0 ? nl_network_node (im->imp->net, from) : NULL;
      if (!dn || strcmp (dn->def->name, "Dense") != 0 || dn->params[nl_op_param_index (dn->def, "use_bias")].i
          || GPOINTER_TO_INT (g_hash_table_lookup (im->uses, x)) != 1
          || b->numel != dn->params[nl_op_param_index (dn->def, "units")].i)
        return unsupported (im, "adding a constant is supported only as the bias of a MatMul or Gemm");
      set (im, from, "use_bias", "true");
      store (im, from, FALSE, 1, b, &(NlShape) { .ndim = 1, .d = { b->numel } });
      produce (im, n, from);
      return MAPPED;
    }
  node = add (im, n, "Add");
  for (size_t k = 0; k < n->n_input; k++)
    {
      int from = data (im, in_name (n, k));
      if (from < 0)
        return unsupported (im, "input %zu is not computed from the graph input", k);
      connect_data (im, from, node, (int) k);
    }
  produce (im, n, node);
  return MAPPED;
}

static Result
map_activation (Imp *im, const Onnx__NodeProto *n)
{
  const char *t = !strcmp (n->op_type, "Relu") ? "relu" : !strcmp (n->op_type, "Sigmoid") ? "sigmoid"
                  : !strcmp (n->op_type, "Tanh") ? "tanh" : "softrelu";
  int node = -1;
  if (unary (im, n, "Activation", &node) != MAPPED)
    return UNSUPPORTED;
  return set (im, node, "act_type", "%s", t) ? MAPPED : UNSUPPORTED;
}

static Result
map_leaky_relu (Imp *im, const Onnx__NodeProto *n)
{
  int node = -1;
  if (unary (im, n, "LeakyReLU", &node) != MAPPED)
    return UNSUPPORTED;
  return set (im, node, "alpha", "%.9g", nl_onnx_node_float (n, "alpha", 0.01f)) ? MAPPED : UNSUPPORTED;
}

static Result
map_gelu (Imp *im, const Onnx__NodeProto *n)
{
  int node = -1;
  if (unary (im, n, "GELU", &node) != MAPPED)
    return UNSUPPORTED;
  return set (im, node, "approximation", nl_onnx_node_string_is (n, "approximate", "tanh", FALSE) ? "tanh" : "erf")
           ? MAPPED : UNSUPPORTED;
}

static Result
map_pool (Imp *im, const Onnx__NodeProto *n)
{
  gboolean max = !strcmp (n->op_type, "MaxPool");
  int64_t k[2], s[2], d[2], p[2];
  int node = -1;
  if (n->n_output > 1 && n->output[1] && *n->output[1])
    return unsupported (im, "its Indices output is used");
  if (!window_2d (im, n, NULL, k, s, d) || !pads_2d (im, n, k, s, d, p))
    return UNSUPPORTED;
  if (d[0] != 1 || d[1] != 1)
    return unsupported (im, "dilated pooling");
  if (unary (im, n, max ? "MaxPool2D" : "AvgPool2D", &node) != MAPPED)
    return UNSUPPORTED;
  if (!set (im, node, "pool_size", "%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT, k[0], k[1])
      || !set (im, node, "strides", "%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT, s[0], s[1])
      || !set (im, node, "padding", "%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT, p[0], p[1])
      || !set (im, node, "ceil_mode", nl_onnx_node_int (n, "ceil_mode", 0) ? "true" : "false")
      || (!max && !set (im, node, "count_include_pad", nl_onnx_node_int (n, "count_include_pad", 0) ? "true" : "false")))
    return UNSUPPORTED;
  return MAPPED;
}

static Result
map_global_pool (Imp *im, const Onnx__NodeProto *n)
{
  int node = -1;
  return unary (im, n, "GlobalAvgPool2D", &node);
}

static Result
map_batch_norm (Imp *im, const Onnx__NodeProto *n)
{
  NlOnnxConst *c[4];
  int node = -1;
  for (int k = 0; k < 4; k++)
    if (!(c[k] = cst (im, in_name (n, k + 1))))
      return unsupported (im, "its scale, bias, mean and variance must be constants");
  if (nl_onnx_node_int (n, "training_mode", 0))
    return unsupported (im, "training_mode = 1");
  for (size_t k = 1; k < n->n_output; k++)
    if (n->output[k] && *n->output[k])
      return unsupported (im, "its running statistics outputs are used");
  if (unary (im, n, "BatchNorm", &node) != MAPPED || !set (im, node, "epsilon", "%.9g", nl_onnx_node_float (n, "epsilon", 1e-5f)))
    return UNSUPPORTED;
  store (im, node, FALSE, 0, c[0], NULL);
  store (im, node, FALSE, 1, c[1], NULL);
  store (im, node, TRUE, 0, c[2], NULL);
  store (im, node, TRUE, 1, c[3], NULL);
  return MAPPED;
}

static Result
map_layer_norm (Imp *im, const Onnx__NodeProto *n)
{
  NlOnnxConst *g = cst (im, in_name (n, 1)), *b = cst (im, in_name (n, 2));
  int node = -1;
  if (nl_onnx_node_int (n, "axis", -1) != -1)
    return unsupported (im, "axis %" G_GINT64_FORMAT ": netloom normalises the last axis only", nl_onnx_node_int (n, "axis", -1));
  if (!g || (*in_name (n, 2) && !b))
    return unsupported (im, "its scale and bias must be constants");
  if (unary (im, n, "LayerNorm", &node) != MAPPED || !set (im, node, "epsilon", "%.9g", nl_onnx_node_float (n, "epsilon", 1e-5f))
      || !set (im, node, "center", b ? "true" : "false"))
    return UNSUPPORTED;
  store (im, node, FALSE, 0, g, NULL);
  if (b)
    store (im, node, FALSE, 1, b, NULL);
  return MAPPED;
}

static Result
map_dropout (Imp *im, const Onnx__NodeProto *n)
{
  NlOnnxConst *r = cst (im, in_name (n, 1));
  float rate = r && r->numel == 1 ? (float) nl_onnx_const_get (r, 0) : nl_onnx_node_float (n, "ratio", 0.5f);
  int node = -1;
  if (n->n_output > 1 && n->output[1] && *n->output[1])
    return unsupported (im, "its mask output is used");
  if (unary (im, n, "Dropout", &node) != MAPPED)
    return UNSUPPORTED;
  return set (im, node, "rate", "%.9g", rate) ? MAPPED : UNSUPPORTED;
}

static Result
map_flatten (Imp *im, const Onnx__NodeProto *n)
{
  int node = -1;
  if (nl_onnx_node_int (n, "axis", 1) != 1)
    return unsupported (im, "axis %" G_GINT64_FORMAT ": netloom flattens after the batch dimension only",
                        nl_onnx_node_int (n, "axis", 1));
  return unary (im, n, "Flatten", &node);
}

static Result
map_reshape (Imp *im, const Onnx__NodeProto *n)
{
  NlOnnxConst *s = cst (im, in_name (n, 1));
  g_autoptr (GString) text = g_string_new ("[");
  int node = -1;
  if (!s || s->shape.ndim != 1 || !s->is_int)
    return unsupported (im, "its shape is not a constant");
  if (nl_onnx_node_int (n, "allowzero", 0))
    return unsupported (im, "allowzero = 1");
  for (int64_t k = 0; k < s->numel; k++)
    {
      int64_t v = s->i[k];
      /* a batch fixed when the model was exported keeps whatever batch comes */
      if (k == 0 && v > 0 && v == im->batch)
        v = 0;
      g_string_append_printf (text, "%s%" G_GINT64_FORMAT, k ? "," : "", v);
    }
  g_string_append_c (text, ']');
  if (unary (im, n, "Reshape", &node) != MAPPED)
    return UNSUPPORTED;
  return set (im, node, "shape", "%s", text->str) ? MAPPED : UNSUPPORTED;
}

static Result
map_concat (Imp *im, const Onnx__NodeProto *n)
{
  int node = add (im, n, "Concat");
  for (size_t k = 0; k < n->n_input; k++)
    {
      int from = data (im, in_name (n, k));
      if (from < 0)
        return unsupported (im, "input %zu is a constant", k);
      connect_data (im, from, node, (int) k);
    }
  produce (im, n, node);
  return set (im, node, "dim", "%" G_GINT64_FORMAT, nl_onnx_node_int (n, "axis", 1)) ? MAPPED : UNSUPPORTED;
}

static Result
map_softmax (Imp *im, const Onnx__NodeProto *n)
{
  int64_t axis = nl_onnx_node_int (n, "axis", im->opset >= 13 ? -1 : 1);
  int node = -1;
  /* before opset 13 the input was coerced to 2-D at axis: the same over the
   * last axis for the (N, classes) input of a classifier */
  if (im->opset < 13 && axis == 1)
    axis = -1;
  if (unary (im, n, !strcmp (n->op_type, "Softmax") ? "Softmax" : "LogSoftmax", &node) != MAPPED)
    return UNSUPPORTED;
  return set (im, node, "axis", "%" G_GINT64_FORMAT, axis) ? MAPPED : UNSUPPORTED;
}

static Result
map_gather (Imp *im, const Onnx__NodeProto *n)
{
  NlOnnxConst *table = cst (im, in_name (n, 0));
  int from = data (im, in_name (n, 1)), node = -1;
  if (!table || table->shape.ndim != 2 || from < 0 || nl_onnx_node_int (n, "axis", 0) != 0)
    return unsupported (im, "only rows of a constant table by computed indices (an embedding) are supported");
  node = add (im, n, "Embedding");
  connect_data (im, from, node, 0);
  produce (im, n, node);
  if (!set (im, node, "input_dim", "%" G_GINT64_FORMAT, table->shape.d[0])
      || !set (im, node, "output_dim", "%" G_GINT64_FORMAT, table->shape.d[1]))
    return UNSUPPORTED;
  store (im, node, FALSE, 0, table, NULL);
  return MAPPED;
}

/* ---- patterns ---- */

static gboolean
scalar_is (const NlOnnxConst *c, double v)
{
  return c && c->numel == 1 && fabs (nl_onnx_const_get (c, 0) - v) <= 1e-4 * fabs (v);
}

/* The one node reading value (of type op), or NULL. */
static const Onnx__NodeProto *
sole_reader (Imp *im, const char *value, const char *op)
{
  int k = GPOINTER_TO_INT (g_hash_table_lookup (im->consumer, value)) - 1;
  const Onnx__NodeProto *n;
  if (k < 0 || GPOINTER_TO_INT (g_hash_table_lookup (im->uses, value)) != 1)
    return NULL;
  n = im->g->node[k];
  return n->op_type && !strcmp (n->op_type, op) && n->n_output > 0 ? n : NULL;
}

/* The other input of a two-input node than `one`; NULL unless it has two. */
static const char *
other_input (const Onnx__NodeProto *n, const char *one)
{
  if (n->n_input != 2)
    return NULL;
  return !strcmp (in_name (n, 0), one) ? in_name (n, 1) : !strcmp (in_name (n, 1), one) ? in_name (n, 0) : NULL;
}

/* x / sqrt(2) (or x * 1/sqrt(2)) -> Erf -> + 1 -> x * that -> * 0.5: GELU,
 * as PyTorch exports nn.GELU and netloom exports it before opset 20. */
static gboolean
map_gelu_pattern (Imp *im, const Onnx__NodeProto *n)
{
  const char *x = in_name (n, 0), *c;
  const Onnx__NodeProto *erf, *plus, *mul, *half;
  int from = data (im, x), node;
  if (from < 0 || n->n_input != 2 || n->n_output < 1)
    return FALSE;
  c = in_name (n, 1);
  if (!(strcmp (n->op_type, "Div") == 0 ? scalar_is (cst (im, c), G_SQRT2) : scalar_is (cst (im, c), 1 / G_SQRT2)))
    return FALSE;
  if (!(erf = sole_reader (im, n->output[0], "Erf")) || !(plus = sole_reader (im, erf->output[0], "Add"))
      || !scalar_is (cst (im, other_input (plus, erf->output[0]) ? other_input (plus, erf->output[0]) : ""), 1.0)
      || !(mul = sole_reader (im, plus->output[0], "Mul")) || g_strcmp0 (other_input (mul, plus->output[0]), x) != 0
      || !(half = sole_reader (im, mul->output[0], "Mul"))
      || !scalar_is (cst (im, other_input (half, mul->output[0]) ? other_input (half, mul->output[0]) : ""), 0.5))
    return FALSE;
  node = add (im, half, "GELU");
  connect_data (im, from, node, 0);
  produce (im, half, node);
  g_hash_table_add (im->absorbed, (gpointer) erf);
  g_hash_table_add (im->absorbed, (gpointer) plus);
  g_hash_table_add (im->absorbed, (gpointer) mul);
  g_hash_table_add (im->absorbed, (gpointer) half);
  return TRUE;
}

static const struct {
  const char *op;
  Result (*fn) (Imp *im, const Onnx__NodeProto *n);
} mappers[] = {
  { "Conv", map_conv },
  { "Gemm", map_gemm },
  { "MatMul", map_matmul },
  { "Add", map_add },
  { "Sum", map_add },
  { "Relu", map_activation },
  { "Sigmoid", map_activation },
  { "Tanh", map_activation },
  { "Softplus", map_activation },
  { "LeakyRelu", map_leaky_relu },
  { "Gelu", map_gelu },
  { "MaxPool", map_pool },
  { "AveragePool", map_pool },
  { "GlobalAveragePool", map_global_pool },
  { "BatchNormalization", map_batch_norm },
  { "LayerNormalization", map_layer_norm },
  { "Dropout", map_dropout },
  { "Flatten", map_flatten },
  { "Reshape", map_reshape },
  { "Concat", map_concat },
  { "Softmax", map_softmax },
  { "LogSoftmax", map_softmax },
  { "Gather", map_gather },
};

/* ---- the graph ---- */

static Result
map_node (Imp *im, const Onnx__NodeProto *n, GError **error)
{
  gboolean all_const = TRUE, any = FALSE;
  if (n->domain && *n->domain && strcmp (n->domain, "ai.onnx") != 0)
    return unsupported (im, "domain %s", n->domain);
  if (!n->op_type)
    return unsupported (im, "no op_type");
  if (g_hash_table_contains (im->absorbed, n))
    return MAPPED;
  /* downstream of an unsupported node: reported there, not again here,
   * unless netloom has nothing for this op either */
  for (size_t k = 0; k < n->n_input; k++)
    if (g_hash_table_contains (im->poisoned, in_name (n, k)))
      {
        if (!strcmp (n->op_type, "Identity"))
          return SKIPPED;
        for (gsize j = 0; j < G_N_ELEMENTS (mappers); j++)
          if (!strcmp (mappers[j].op, n->op_type))
            return SKIPPED;
        return unsupported (im, "no netloom op for it");
      }
  for (size_t k = 0; k < n->n_input; k++)
    if (*in_name (n, k))
      {
        any = TRUE;
        all_const = all_const && cst (im, in_name (n, k));
      }
  if (!strcmp (n->op_type, "Identity") && data (im, in_name (n, 0)) >= 0)
    {
      produce (im, n, data (im, in_name (n, 0)));
      return MAPPED;
    }
  if (all_const && (any || !strcmp (n->op_type, "Constant")))
    {
      NlOnnxConst *in[NL_ONNX_FOLD_MAX_INPUTS] = { NULL };
      NlOnnxConst *out;
      g_autofree char *why = NULL;
      if (n->n_input > NL_ONNX_FOLD_MAX_INPUTS)
        return unsupported (im, "too many constant inputs to fold");
      for (size_t k = 0; k < n->n_input; k++)
        in[k] = cst (im, in_name (n, k));
      out = nl_onnx_fold (n, in, (int) n->n_input, &why, error);
      if (!out)
        return why ? unsupported (im, "%s", why) : FAILED;
      if (n->n_output > 0 && n->output[0])
        g_hash_table_insert (im->consts, g_strdup (n->output[0]), out);
      else
        nl_onnx_const_free (out);
      return MAPPED;
    }
  if ((!strcmp (n->op_type, "Div") || !strcmp (n->op_type, "Mul")) && map_gelu_pattern (im, n))
    return MAPPED;
  for (gsize k = 0; k < G_N_ELEMENTS (mappers); k++)
    if (!strcmp (mappers[k].op, n->op_type))
      return mappers[k].fn (im, n);
  return unsupported (im, "no netloom op for it");
}

/* The one graph input that is no initializer: the Input node. */
static gboolean
map_input (Imp *im, GString *problems, int *n_problems)
{
  const Onnx__ValueInfoProto *found = NULL;
  const Onnx__TensorShapeProto *shape;
  NlShape s = { 0 };
  int node = -1;
  for (size_t k = 0; k < im->g->n_input; k++)
    {
      const Onnx__ValueInfoProto *v = im->g->input[k];
      if (!v->name || cst (im, v->name))
        continue;
      if (found)
        {
          g_string_append_printf (problems, "\n  graph input “%s”: netloom networks take one input", v->name);
          (*n_problems)++;
          continue;
        }
      found = v;
    }
  if (!found)
    {
      g_string_append (problems, "\n  the graph has no input that is not a constant");
      (*n_problems)++;
      return FALSE;
    }
  shape = found->type && found->type->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE
            ? found->type->tensor_type->shape : NULL;
  if (!shape || shape->n_dim < 1 || shape->n_dim > NL_MAX_DIMS)
    {
      g_string_append_printf (problems, "\n  graph input “%s” has no shape with a batch dimension", found->name);
      (*n_problems)++;
      return FALSE;
    }
  im->batch = shape->dim[0]->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE
                ? shape->dim[0]->dim_value : -1;
  s.ndim = (int) shape->n_dim - 1;
  for (size_t d = 1; d < shape->n_dim; d++)
    {
      if (shape->dim[d]->value_case != ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE
          || shape->dim[d]->dim_value < 1)
        {
          g_string_append_printf (problems, "\n  graph input “%s”: dimension %zu has no fixed size", found->name, d);
          (*n_problems)++;
          return FALSE;
        }
      s.d[d - 1] = shape->dim[d]->dim_value;
    }
  im->imp->sample = s;
  node = nl_network_add_node (im->imp->net, "data", "Input", NULL);
  {
    g_autoptr (GString) text = g_string_new ("[");
    for (int d = 0; d < s.ndim; d++)
      g_string_append_printf (text, "%s%" G_GINT64_FORMAT, d ? "," : "", s.d[d]);
    g_string_append_c (text, ']');
    if (s.ndim > 0)
      nl_network_set_param (im->imp->net, node, "shape", text->str, NULL);
  }
  g_hash_table_insert (im->values, g_strdup (found->name), GINT_TO_POINTER (node + 1));
  return TRUE;
}

void
nl_onnx_import_free (NlOnnxImport *imp)
{
  if (!imp)
    return;
  g_clear_pointer (&imp->net, nl_network_free);
  for (guint i = 0; imp->weights && i < imp->weights->len; i++)
    nl_tensor_unref (g_array_index (imp->weights, Weight, i).t);
  g_clear_pointer (&imp->weights, g_array_unref);
  g_clear_pointer (&imp->meta, g_hash_table_unref);
  g_free (imp);
}

static int
model_opset (const Onnx__ModelProto *m)
{
  for (size_t k = 0; k < m->n_opset_import; k++)
    {
      const Onnx__OperatorSetIdProto *o = m->opset_import[k];
      if (!o->domain || !*o->domain || !strcmp (o->domain, "ai.onnx"))
        return o->has_version ? (int) o->version : 1;
    }
  return 0;
}

static gboolean
import_graph (Imp *im, const Onnx__ModelProto *m, const char *base_dir, GHashTable *bound, GError **error)
{
  const Onnx__GraphProto *g = m->graph;
  g_autoptr (GString) problems = g_string_new (NULL);
  int n_problems = 0;

  for (size_t k = 0; k < g->n_initializer; k++)
    {
      NlOnnxConst *c;
      if (!g->initializer[k]->name || !(c = nl_onnx_const_from_proto (g->initializer[k], base_dir, error)))
        return error && *error ? FALSE : (g_set_error (error, NL_ONNX_ERROR, NL_ONNX_ERROR_PARSE,
                                                        "an initializer has no name"), FALSE);
      g_hash_table_insert (im->consts, g_strdup (g->initializer[k]->name), c);
    }
  if (bound)
    {
      GHashTableIter it;
      gpointer key, value;
      g_hash_table_iter_init (&it, bound);
      while (g_hash_table_iter_next (&it, &key, &value))
        {
          gsize size;
          const guint8 *bytes = g_bytes_get_data (value, &size);
          Onnx__TensorProto *t = onnx__tensor_proto__unpack (NULL, size, bytes);
          NlOnnxConst *c = t ? nl_onnx_const_from_proto (t, NULL, error) : NULL;
          if (t)
            onnx__tensor_proto__free_unpacked (t, NULL);
          if (!c)
            return error && *error ? FALSE : (g_set_error (error, NL_ONNX_ERROR, NL_ONNX_ERROR_PARSE,
                                                            "bound input “%s” is not a tensor", (char *) key), FALSE);
          g_hash_table_insert (im->consts, g_strdup (key), c);
        }
    }
  for (size_t k = 0; k < g->n_node; k++)
    for (size_t j = 0; j < g->node[k]->n_input; j++)
      if (g->node[k]->input[j])
        {
          g_hash_table_insert (im->uses, g_strdup (g->node[k]->input[j]),
                               GINT_TO_POINTER (GPOINTER_TO_INT (g_hash_table_lookup (im->uses, g->node[k]->input[j])) + 1));
          g_hash_table_insert (im->consumer, g_strdup (g->node[k]->input[j]), GINT_TO_POINTER ((int) k + 1));
        }

  /* Constant nodes first: patterns look ahead at constants defined later */
  for (size_t k = 0; k < g->n_node; k++)
    {
      const Onnx__NodeProto *n = g->node[k];
      g_autofree char *why = NULL;
      NlOnnxConst *c;
      if (!n->op_type || strcmp (n->op_type, "Constant") != 0 || n->n_input > 0 || n->n_output < 1 || !n->output[0])
        continue;
      if (!(c = nl_onnx_fold (n, NULL, 0, &why, error)))
        return FALSE;
      g_hash_table_insert (im->consts, g_strdup (n->output[0]), c);
      g_hash_table_add (im->absorbed, (gpointer) n);
    }
  map_input (im, problems, &n_problems);
  for (size_t k = 0; k < g->n_node; k++)
    {
      const Onnx__NodeProto *n = g->node[k];
      Result r = map_node (im, n, error);
      if (r == FAILED)
        return FALSE;
      if (r == UNSUPPORTED || r == SKIPPED)
        for (size_t j = 0; j < n->n_output; j++)
          if (n->output[j] && *n->output[j])
            g_hash_table_add (im->poisoned, g_strdup (n->output[j]));
      if (r == UNSUPPORTED)
        {
          g_string_append_printf (problems, "\n  %s “%s” (opset %d): %s", n->op_type ? n->op_type : "?",
                                  n->name && *n->name ? n->name : "unnamed", im->opset, im->why);
          n_problems++;
        }
    }
  if (n_problems == 0 && (g->n_output != 1 || !g->output[0]->name || data (im, g->output[0]->name) < 0))
    {
      g_string_append_printf (problems, "\n  the graph must have one output computed from its input (it has %zu)",
                              g->n_output);
      n_problems++;
    }
  if (n_problems > 0)
    {
      g_set_error (error, NL_ONNX_ERROR, NL_ONNX_ERROR_UNSUPPORTED, "%d node%s cannot be imported:%s", n_problems,
                   n_problems == 1 ? "" : "s", problems->str);
      return FALSE;
    }
  return nl_network_validate (im->imp->net, NULL, error);
}

NlOnnxImport *
nl_onnx_import_data (const void *data, gsize size, const char *base_dir, GHashTable *bound, GError **error)
{
  Onnx__ModelProto *m = onnx__model_proto__unpack (NULL, size, data);
  g_autoptr (NlOnnxImport) imp = NULL;
  Imp im = { 0 };
  gboolean ok;

  if (!m || !m->graph)
    {
      g_set_error (error, NL_ONNX_ERROR, NL_ONNX_ERROR_PARSE,
                   "not an ONNX model (the protobuf is malformed or truncated%s)", m ? ", or has no graph" : "");
      if (m)
        onnx__model_proto__free_unpacked (m, NULL);
      return NULL;
    }
  im.opset = model_opset (m);
  /* 9 to 17 are what the mappers are written for; older models import when
   * their nodes read the same (Relu, Softplus ... never changed) */
  if (im.opset < 1 || im.opset > NL_ONNX_OPSET_MAX)
    {
      g_set_error (error, NL_ONNX_ERROR, NL_ONNX_ERROR_OPSET, "the model uses opset %d; netloom imports up to %d",
                   im.opset, NL_ONNX_OPSET_MAX);
      onnx__model_proto__free_unpacked (m, NULL);
      return NULL;
    }
  imp = g_new0 (NlOnnxImport, 1);
  imp->net = nl_network_new (m->graph->name && *m->graph->name ? m->graph->name : "imported");
  imp->weights = g_array_new (FALSE, FALSE, sizeof (Weight));
  imp->meta = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  for (size_t k = 0; k < m->n_metadata_props; k++)
    if (m->metadata_props[k]->key && m->metadata_props[k]->value)
      g_hash_table_insert (imp->meta, g_strdup (m->metadata_props[k]->key), g_strdup (m->metadata_props[k]->value));
  im.imp = imp;
  im.g = m->graph;
  im.consts = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, (GDestroyNotify) nl_onnx_const_free);
  im.values = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  im.uses = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  im.poisoned = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  im.consumer = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  im.absorbed = g_hash_table_new (NULL, NULL);
  ok = import_graph (&im, m, base_dir, bound, error);
  g_hash_table_unref (im.consts);
  g_hash_table_unref (im.values);
  g_hash_table_unref (im.uses);
  g_hash_table_unref (im.poisoned);
  g_hash_table_unref (im.consumer);
  g_hash_table_unref (im.absorbed);
  g_free (im.why);
  onnx__model_proto__free_unpacked (m, NULL);
  return ok ? g_steal_pointer (&imp) : NULL;
}

NlOnnxImport *
nl_onnx_import_file (const char *path, GError **error)
{
  g_autofree char *contents = NULL, *dir = NULL;
  gsize size;
  g_autoptr (GError) local = NULL;
  NlOnnxImport *imp;
  if (!g_file_get_contents (path, &contents, &size, error))
    return NULL;
  dir = g_path_get_dirname (path);
  if (!(imp = nl_onnx_import_data (contents, size, dir, NULL, &local)))
    g_propagate_prefixed_error (error, g_steal_pointer (&local), "%s: ", path);
  return imp;
}

NlNetwork *
nl_onnx_import_get_network (NlOnnxImport *imp)
{
  return imp->net;
}

NlShape
nl_onnx_import_get_sample_shape (NlOnnxImport *imp)
{
  return imp->sample;
}

const char *
nl_onnx_import_get_metadata (NlOnnxImport *imp, const char *key)
{
  return g_hash_table_lookup (imp->meta, key);
}

NlModel *
nl_onnx_import_new_model (NlOnnxImport *imp, GError **error)
{
  g_autoptr (NlModel) m = nl_model_new (imp->net, &imp->sample, 0, error);
  char a[96], b[96];
  if (!m)
    return NULL;
  for (guint i = 0; i < imp->weights->len; i++)
    {
      const Weight *w = &g_array_index (imp->weights, Weight, i);
      NlTensor *dst = (w->aux ? m->aux : m->weights)[NL_MODEL_SLOT (w->node, w->slot)];
      NlShape ws = nl_tensor_get_shape (w->t);
      if (!dst || nl_tensor_numel (dst) != nl_tensor_numel (w->t))
        {
          NlShape ds = dst ? nl_tensor_get_shape (dst) : (NlShape) { 0 };
          g_set_error (error, NL_ONNX_ERROR, NL_ONNX_ERROR_UNSUPPORTED,
                       "node '%s': the model gives a tensor of shape %s where netloom expects %s",
                       nl_network_node (imp->net, w->node)->id, nl_shape_format (&ws, a, sizeof a),
                       dst ? nl_shape_format (&ds, b, sizeof b) : "none");
          return NULL;
        }
      memcpy (nl_tensor_f32 (dst), nl_tensor_f32 (w->t), sizeof (float) * nl_tensor_numel (dst));
    }
  nl_model_host_changed (m);
  return g_steal_pointer (&m);
}
