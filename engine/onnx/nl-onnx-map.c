/* nl-onnx-map.c — one ONNX node to netloom nodes, by op type (the
 * `mappers` table), and the patterns exporters write for ops ONNX lacks
 * (GELU). Attributes netloom cannot express make the node unsupported,
 * with the reason; nl-onnx-import.h lists what maps. */
#include "engine/onnx/nl-onnx-import-private.h"
#include "engine/onnx/nl-onnx-export.h"

#include <ctype.h>
#include <math.h>
#include <string.h>

#include "ops/nl-op-registry.h"

NlOnnxResult
nl_onnx_imp_unsupported (NlOnnxImp *im, const char *fmt, ...)
{
  va_list ap;
  g_free (im->why);
  va_start (ap, fmt);
  im->why = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  return NL_ONNX_UNSUPPORTED;
}

/* ---- inputs ---- */

const char *
nl_onnx_in_name (const Onnx__NodeProto *n, size_t k)
{
  return k < n->n_input && n->input[k] ? n->input[k] : "";
}

NlOnnxConst *
nl_onnx_imp_const (NlOnnxImp *im, const char *name)
{
  return *name ? g_hash_table_lookup (im->consts, name) : NULL;
}

/* The netloom node producing value `name`, -1 when it is no data value. */
int
nl_onnx_imp_data (NlOnnxImp *im, const char *name)
{
  return GPOINTER_TO_INT (g_hash_table_lookup (im->values, name)) - 1;
}

/* ---- building the network ---- */

static int
add (NlOnnxImp *im, const Onnx__NodeProto *n, const char *op)
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
set (NlOnnxImp *im, int node, const char *name, const char *fmt, ...) G_GNUC_PRINTF (4, 5);

/* A parameter out of netloom's range makes the node nl_onnx_imp_unsupported (im->why). */
static gboolean
set (NlOnnxImp *im, int node, const char *name, const char *fmt, ...)
{
  va_list ap;
  g_autofree char *text = NULL;
  g_autoptr (GError) local = NULL;
  va_start (ap, fmt);
  text = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  if (nl_network_set_param (im->imp->net, node, name, text, &local))
    return TRUE;
  nl_onnx_imp_unsupported (im, "%s", local->message);
  return FALSE;
}

static void
connect_data (NlOnnxImp *im, int from, int to, int port)
{
  nl_network_connect (im->imp->net, from, 0, to, port, NULL);
}

void
nl_onnx_imp_produce (NlOnnxImp *im, const Onnx__NodeProto *n, int node)
{
  if (n->n_output > 0 && n->output[0] && *n->output[0])
    g_hash_table_insert (im->values, g_strdup (n->output[0]), GINT_TO_POINTER (node + 1));
}

/* c (reshaped to shape when given) as weight or aux slot of node. */
static void
store (NlOnnxImp *im, int node, gboolean aux, int slot, const NlOnnxConst *c, const NlShape *shape)
{
  NlShape s = shape ? *shape : c->shape;
  NlOnnxWeight w = { node, aux, slot, nl_tensor_zeros (NL_DTYPE_F32, &s) };
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
unary (NlOnnxImp *im, const Onnx__NodeProto *n, const char *op, int *node)
{
  int from = nl_onnx_imp_data (im, nl_onnx_in_name (n, 0));
  if (from < 0)
    return nl_onnx_imp_unsupported (im, "its input is not computed from the graph input");
  *node = add (im, n, op);
  connect_data (im, from, *node, 0);
  nl_onnx_imp_produce (im, n, *node);
  return NL_ONNX_MAPPED;
}

/* Symmetric pads (h, w) of a 2-D conv or pool; auto_pad VALID, or SAME with
 * stride 1 and an odd window, where the padding is known without shapes. */
static gboolean
pads_2d (NlOnnxImp *im, const Onnx__NodeProto *n, const int64_t k[2], const int64_t s[2], const int64_t d[2],
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
            return nl_onnx_imp_unsupported (im, "auto_pad SAME with stride %" G_GINT64_FORMAT " and window %" G_GINT64_FORMAT
                                    " needs the input size", s[i], k[i]), FALSE;
          out[i] = span / 2;
        }
      return TRUE;
    }
  if (np == 0)
    return TRUE;
  if (np != 4 || p[0] != p[2] || p[1] != p[3])
    return nl_onnx_imp_unsupported (im, "pads must be the same before and after (netloom pads symmetrically)"), FALSE;
  out[0] = p[0];
  out[1] = p[1];
  return TRUE;
}

/* kernel_shape (or the weight's), strides and dilations of a 2-D window */
static gboolean
window_2d (NlOnnxImp *im, const Onnx__NodeProto *n, const NlOnnxConst *w, int64_t k[2], int64_t s[2], int64_t d[2])
{
  int nk, ns, nd;
  const int64_t *ka = nl_onnx_node_ints (n, "kernel_shape", &nk), *sa = nl_onnx_node_ints (n, "strides", &ns);
  const int64_t *da = nl_onnx_node_ints (n, "dilations", &nd);
  if ((nk && nk != 2) || (ns && ns != 2) || (nd && nd != 2) || (w && w->shape.ndim != 4))
    return nl_onnx_imp_unsupported (im, "only 2-D windows are supported"), FALSE;
  if (!nk && !w)
    return nl_onnx_imp_unsupported (im, "no kernel_shape"), FALSE;
  for (int i = 0; i < 2; i++)
    {
      k[i] = nk ? ka[i] : w->shape.d[2 + i];
      s[i] = ns ? sa[i] : 1;
      d[i] = nd ? da[i] : 1;
    }
  return TRUE;
}

/* ---- one function per op ---- */

static NlOnnxResult
map_conv (NlOnnxImp *im, const Onnx__NodeProto *n)
{
  NlOnnxConst *w = nl_onnx_imp_const (im, nl_onnx_in_name (n, 1)), *b = nl_onnx_imp_const (im, nl_onnx_in_name (n, 2));
  int64_t k[2], s[2], d[2], p[2];
  int node = -1;
  if (!w)
    return nl_onnx_imp_unsupported (im, "its weight is not a constant");
  if (!window_2d (im, n, w, k, s, d) || !pads_2d (im, n, k, s, d, p))
    return NL_ONNX_UNSUPPORTED;
  if (unary (im, n, "Conv2D", &node) != NL_ONNX_MAPPED)
    return NL_ONNX_UNSUPPORTED;
  if (!set (im, node, "channels", "%" G_GINT64_FORMAT, w->shape.d[0])
      || !set (im, node, "kernel", "%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT, k[0], k[1])
      || !set (im, node, "stride", "%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT, s[0], s[1])
      || !set (im, node, "padding", "%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT, p[0], p[1])
      || !set (im, node, "dilation", "%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT, d[0], d[1])
      || !set (im, node, "groups", "%" G_GINT64_FORMAT, nl_onnx_node_int (n, "group", 1))
      || !set (im, node, "use_bias", "%s", b ? "true" : "false"))
    return NL_ONNX_UNSUPPORTED;
  store (im, node, FALSE, 0, w, NULL);
  if (b)
    store (im, node, FALSE, 1, b, NULL);
  return NL_ONNX_MAPPED;
}

/* Dense from a (units, in) weight; bias (may be NULL) of units values. */
static NlOnnxResult
dense (NlOnnxImp *im, const Onnx__NodeProto *n, const NlOnnxConst *w, const NlOnnxConst *b, gboolean flatten,
       float alpha, float beta)
{
  int node = -1;
  NlShape bs = nl_shape_of (1, w->shape.d[0]);
  if (b && b->numel != w->shape.d[0] && b->numel != 1)
    return nl_onnx_imp_unsupported (im, "its bias has %" G_GINT64_FORMAT " values for %" G_GINT64_FORMAT " units", b->numel,
                        w->shape.d[0]);
  if (unary (im, n, "Dense", &node) != NL_ONNX_MAPPED)
    return NL_ONNX_UNSUPPORTED;
  if (!set (im, node, "units", "%" G_GINT64_FORMAT, w->shape.d[0]) || !set (im, node, "flatten", flatten ? "true" : "false")
      || !set (im, node, "use_bias", b ? "true" : "false"))
    return NL_ONNX_UNSUPPORTED;
  store (im, node, FALSE, 0, w, NULL);
  if (alpha != 1.0f)
    {
      NlOnnxWeight *wt = &g_array_index (im->imp->weights, NlOnnxWeight, im->imp->weights->len - 1);
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
  return NL_ONNX_MAPPED;
}

static NlOnnxResult
map_gemm (NlOnnxImp *im, const Onnx__NodeProto *n)
{
  NlOnnxConst *w = nl_onnx_imp_const (im, nl_onnx_in_name (n, 1)), *b = nl_onnx_imp_const (im, nl_onnx_in_name (n, 2));
  g_autoptr (NlOnnxConst) wt = NULL;
  if (!w || w->shape.ndim != 2)
    return nl_onnx_imp_unsupported (im, "B is not a constant matrix");
  if (*nl_onnx_in_name (n, 2) && !b)
    return nl_onnx_imp_unsupported (im, "C is not a constant");
  if (nl_onnx_node_int (n, "transA", 0))
    return nl_onnx_imp_unsupported (im, "transA = 1");
  if (!nl_onnx_node_int (n, "transB", 0))
    w = wt = transposed (w);
  return dense (im, n, w, b, TRUE, nl_onnx_node_float (n, "alpha", 1.0f), nl_onnx_node_float (n, "beta", 1.0f));
}

static NlOnnxResult
map_matmul (NlOnnxImp *im, const Onnx__NodeProto *n)
{
  NlOnnxConst *w = nl_onnx_imp_const (im, nl_onnx_in_name (n, 1));
  g_autoptr (NlOnnxConst) wt = NULL;
  if (!w || w->shape.ndim != 2)
    return nl_onnx_imp_unsupported (im, "only a product with a constant matrix is supported");
  wt = transposed (w);
  return dense (im, n, wt, NULL, FALSE, 1.0f, 1.0f);
}

/* Add: of two data values, or a constant bias after a Dense without one */
static NlOnnxResult
map_add (NlOnnxImp *im, const Onnx__NodeProto *n)
{
  int node = -1;
  if (n->n_input == 2 && (nl_onnx_imp_const (im, nl_onnx_in_name (n, 0)) || nl_onnx_imp_const (im, nl_onnx_in_name (n, 1))))
    {
      gboolean first = nl_onnx_imp_const (im, nl_onnx_in_name (n, 0)) != NULL;
      NlOnnxConst *b = nl_onnx_imp_const (im, nl_onnx_in_name (n, first ? 0 : 1));
      const char *x = nl_onnx_in_name (n, first ? 1 : 0);
      int from = nl_onnx_imp_data (im, x);
      NlNode *dn = from >= 0 ? nl_network_node (im->imp->net, from) : NULL;
      if (!dn || strcmp (dn->def->name, "Dense") != 0 || dn->params[nl_op_param_index (dn->def, "use_bias")].i
          || GPOINTER_TO_INT (g_hash_table_lookup (im->uses, x)) != 1
          || b->numel != dn->params[nl_op_param_index (dn->def, "units")].i)
        return nl_onnx_imp_unsupported (im, "adding a constant is supported only as the bias of a MatMul or Gemm");
      set (im, from, "use_bias", "true");
      store (im, from, FALSE, 1, b, &(NlShape) { .ndim = 1, .d = { b->numel } });
      nl_onnx_imp_produce (im, n, from);
      return NL_ONNX_MAPPED;
    }
  node = add (im, n, "Add");
  for (size_t k = 0; k < n->n_input; k++)
    {
      int from = nl_onnx_imp_data (im, nl_onnx_in_name (n, k));
      if (from < 0)
        return nl_onnx_imp_unsupported (im, "input %zu is not computed from the graph input", k);
      connect_data (im, from, node, (int) k);
    }
  nl_onnx_imp_produce (im, n, node);
  return NL_ONNX_MAPPED;
}

static NlOnnxResult
map_activation (NlOnnxImp *im, const Onnx__NodeProto *n)
{
  const char *t = !strcmp (n->op_type, "Relu") ? "relu" : !strcmp (n->op_type, "Sigmoid") ? "sigmoid"
                  : !strcmp (n->op_type, "Tanh") ? "tanh" : "softrelu";
  int node = -1;
  if (unary (im, n, "Activation", &node) != NL_ONNX_MAPPED)
    return NL_ONNX_UNSUPPORTED;
  return set (im, node, "act_type", "%s", t) ? NL_ONNX_MAPPED : NL_ONNX_UNSUPPORTED;
}

static NlOnnxResult
map_leaky_relu (NlOnnxImp *im, const Onnx__NodeProto *n)
{
  int node = -1;
  if (unary (im, n, "LeakyReLU", &node) != NL_ONNX_MAPPED)
    return NL_ONNX_UNSUPPORTED;
  return set (im, node, "alpha", "%.9g", nl_onnx_node_float (n, "alpha", 0.01f)) ? NL_ONNX_MAPPED : NL_ONNX_UNSUPPORTED;
}

static NlOnnxResult
map_gelu (NlOnnxImp *im, const Onnx__NodeProto *n)
{
  int node = -1;
  if (unary (im, n, "GELU", &node) != NL_ONNX_MAPPED)
    return NL_ONNX_UNSUPPORTED;
  return set (im, node, "approximation", nl_onnx_node_string_is (n, "approximate", "tanh", FALSE) ? "tanh" : "erf")
           ? NL_ONNX_MAPPED : NL_ONNX_UNSUPPORTED;
}

static NlOnnxResult
map_pool (NlOnnxImp *im, const Onnx__NodeProto *n)
{
  gboolean max = !strcmp (n->op_type, "MaxPool");
  int64_t k[2], s[2], d[2], p[2];
  int node = -1;
  if (n->n_output > 1 && n->output[1] && *n->output[1])
    return nl_onnx_imp_unsupported (im, "its Indices output is used");
  if (!window_2d (im, n, NULL, k, s, d) || !pads_2d (im, n, k, s, d, p))
    return NL_ONNX_UNSUPPORTED;
  if (d[0] != 1 || d[1] != 1)
    return nl_onnx_imp_unsupported (im, "dilated pooling");
  if (unary (im, n, max ? "MaxPool2D" : "AvgPool2D", &node) != NL_ONNX_MAPPED)
    return NL_ONNX_UNSUPPORTED;
  if (!set (im, node, "pool_size", "%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT, k[0], k[1])
      || !set (im, node, "strides", "%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT, s[0], s[1])
      || !set (im, node, "padding", "%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT, p[0], p[1])
      || !set (im, node, "ceil_mode", nl_onnx_node_int (n, "ceil_mode", 0) ? "true" : "false")
      || (!max && !set (im, node, "count_include_pad", nl_onnx_node_int (n, "count_include_pad", 0) ? "true" : "false")))
    return NL_ONNX_UNSUPPORTED;
  return NL_ONNX_MAPPED;
}

static NlOnnxResult
map_global_pool (NlOnnxImp *im, const Onnx__NodeProto *n)
{
  int node = -1;
  return unary (im, n, "GlobalAvgPool2D", &node);
}

static NlOnnxResult
map_batch_norm (NlOnnxImp *im, const Onnx__NodeProto *n)
{
  NlOnnxConst *c[4];
  int node = -1;
  for (int k = 0; k < 4; k++)
    if (!(c[k] = nl_onnx_imp_const (im, nl_onnx_in_name (n, k + 1))))
      return nl_onnx_imp_unsupported (im, "its scale, bias, mean and variance must be constants");
  if (nl_onnx_node_int (n, "training_mode", 0))
    return nl_onnx_imp_unsupported (im, "training_mode = 1");
  for (size_t k = 1; k < n->n_output; k++)
    if (n->output[k] && *n->output[k])
      return nl_onnx_imp_unsupported (im, "its running statistics outputs are used");
  if (unary (im, n, "BatchNorm", &node) != NL_ONNX_MAPPED || !set (im, node, "epsilon", "%.9g", nl_onnx_node_float (n, "epsilon", 1e-5f)))
    return NL_ONNX_UNSUPPORTED;
  store (im, node, FALSE, 0, c[0], NULL);
  store (im, node, FALSE, 1, c[1], NULL);
  store (im, node, TRUE, 0, c[2], NULL);
  store (im, node, TRUE, 1, c[3], NULL);
  return NL_ONNX_MAPPED;
}

static NlOnnxResult
map_layer_norm (NlOnnxImp *im, const Onnx__NodeProto *n)
{
  NlOnnxConst *g = nl_onnx_imp_const (im, nl_onnx_in_name (n, 1)), *b = nl_onnx_imp_const (im, nl_onnx_in_name (n, 2));
  int node = -1;
  if (nl_onnx_node_int (n, "axis", -1) != -1)
    return nl_onnx_imp_unsupported (im, "axis %" G_GINT64_FORMAT ": netloom normalises the last axis only", nl_onnx_node_int (n, "axis", -1));
  if (!g || (*nl_onnx_in_name (n, 2) && !b))
    return nl_onnx_imp_unsupported (im, "its scale and bias must be constants");
  if (unary (im, n, "LayerNorm", &node) != NL_ONNX_MAPPED || !set (im, node, "epsilon", "%.9g", nl_onnx_node_float (n, "epsilon", 1e-5f))
      || !set (im, node, "center", b ? "true" : "false"))
    return NL_ONNX_UNSUPPORTED;
  store (im, node, FALSE, 0, g, NULL);
  if (b)
    store (im, node, FALSE, 1, b, NULL);
  return NL_ONNX_MAPPED;
}

static NlOnnxResult
map_dropout (NlOnnxImp *im, const Onnx__NodeProto *n)
{
  NlOnnxConst *r = nl_onnx_imp_const (im, nl_onnx_in_name (n, 1));
  float rate = r && r->numel == 1 ? (float) nl_onnx_const_get (r, 0) : nl_onnx_node_float (n, "ratio", 0.5f);
  int node = -1;
  if (n->n_output > 1 && n->output[1] && *n->output[1])
    return nl_onnx_imp_unsupported (im, "its mask output is used");
  if (unary (im, n, "Dropout", &node) != NL_ONNX_MAPPED)
    return NL_ONNX_UNSUPPORTED;
  return set (im, node, "rate", "%.9g", rate) ? NL_ONNX_MAPPED : NL_ONNX_UNSUPPORTED;
}

static NlOnnxResult
map_flatten (NlOnnxImp *im, const Onnx__NodeProto *n)
{
  int node = -1;
  if (nl_onnx_node_int (n, "axis", 1) != 1)
    return nl_onnx_imp_unsupported (im, "axis %" G_GINT64_FORMAT ": netloom flattens after the batch dimension only",
                        nl_onnx_node_int (n, "axis", 1));
  return unary (im, n, "Flatten", &node);
}

static NlOnnxResult
map_reshape (NlOnnxImp *im, const Onnx__NodeProto *n)
{
  NlOnnxConst *s = nl_onnx_imp_const (im, nl_onnx_in_name (n, 1));
  g_autoptr (GString) text = g_string_new ("[");
  int node = -1;
  if (!s || s->shape.ndim != 1 || !s->is_int)
    return nl_onnx_imp_unsupported (im, "its shape is not a constant");
  if (nl_onnx_node_int (n, "allowzero", 0))
    return nl_onnx_imp_unsupported (im, "allowzero = 1");
  for (int64_t k = 0; k < s->numel; k++)
    {
      int64_t v = s->i[k];
      /* a batch fixed when the model was exported keeps whatever batch comes */
      if (k == 0 && v > 0 && v == im->batch)
        v = 0;
      g_string_append_printf (text, "%s%" G_GINT64_FORMAT, k ? "," : "", v);
    }
  g_string_append_c (text, ']');
  if (unary (im, n, "Reshape", &node) != NL_ONNX_MAPPED)
    return NL_ONNX_UNSUPPORTED;
  return set (im, node, "shape", "%s", text->str) ? NL_ONNX_MAPPED : NL_ONNX_UNSUPPORTED;
}

static NlOnnxResult
map_concat (NlOnnxImp *im, const Onnx__NodeProto *n)
{
  int node = add (im, n, "Concat");
  for (size_t k = 0; k < n->n_input; k++)
    {
      int from = nl_onnx_imp_data (im, nl_onnx_in_name (n, k));
      if (from < 0)
        return nl_onnx_imp_unsupported (im, "input %zu is a constant", k);
      connect_data (im, from, node, (int) k);
    }
  nl_onnx_imp_produce (im, n, node);
  return set (im, node, "dim", "%" G_GINT64_FORMAT, nl_onnx_node_int (n, "axis", 1)) ? NL_ONNX_MAPPED : NL_ONNX_UNSUPPORTED;
}

static NlOnnxResult
map_softmax (NlOnnxImp *im, const Onnx__NodeProto *n)
{
  int64_t axis = nl_onnx_node_int (n, "axis", im->opset >= 13 ? -1 : 1);
  int node = -1;
  /* before opset 13 the input was coerced to 2-D at axis: the same over the
   * last axis for the (N, classes) input of a classifier */
  if (im->opset < 13 && axis == 1)
    axis = -1;
  if (unary (im, n, !strcmp (n->op_type, "Softmax") ? "Softmax" : "LogSoftmax", &node) != NL_ONNX_MAPPED)
    return NL_ONNX_UNSUPPORTED;
  return set (im, node, "axis", "%" G_GINT64_FORMAT, axis) ? NL_ONNX_MAPPED : NL_ONNX_UNSUPPORTED;
}

static NlOnnxResult
map_gather (NlOnnxImp *im, const Onnx__NodeProto *n)
{
  NlOnnxConst *table = nl_onnx_imp_const (im, nl_onnx_in_name (n, 0));
  int from = nl_onnx_imp_data (im, nl_onnx_in_name (n, 1)), node = -1;
  if (!table || table->shape.ndim != 2 || from < 0 || nl_onnx_node_int (n, "axis", 0) != 0)
    return nl_onnx_imp_unsupported (im, "only rows of a constant table by computed indices (an embedding) are supported");
  node = add (im, n, "Embedding");
  connect_data (im, from, node, 0);
  nl_onnx_imp_produce (im, n, node);
  if (!set (im, node, "input_dim", "%" G_GINT64_FORMAT, table->shape.d[0])
      || !set (im, node, "output_dim", "%" G_GINT64_FORMAT, table->shape.d[1]))
    return NL_ONNX_UNSUPPORTED;
  store (im, node, FALSE, 0, table, NULL);
  return NL_ONNX_MAPPED;
}

/* ---- patterns ---- */

static gboolean
scalar_is (const NlOnnxConst *c, double v)
{
  return c && c->numel == 1 && fabs (nl_onnx_const_get (c, 0) - v) <= 1e-4 * fabs (v);
}

/* The one node reading value (of type op), or NULL. */
static const Onnx__NodeProto *
sole_reader (NlOnnxImp *im, const char *value, const char *op)
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
  return !strcmp (nl_onnx_in_name (n, 0), one) ? nl_onnx_in_name (n, 1) : !strcmp (nl_onnx_in_name (n, 1), one) ? nl_onnx_in_name (n, 0) : NULL;
}

/* x / sqrt(2) (or x * 1/sqrt(2)) -> Erf -> + 1 -> x * that -> * 0.5: GELU,
 * as PyTorch exports nn.GELU and netloom exports it before opset 20. */
static gboolean
map_gelu_pattern (NlOnnxImp *im, const Onnx__NodeProto *n)
{
  const char *x = nl_onnx_in_name (n, 0), *c;
  const Onnx__NodeProto *erf, *plus, *mul, *half;
  int from = nl_onnx_imp_data (im, x), node;
  if (from < 0 || n->n_input != 2 || n->n_output < 1)
    return FALSE;
  c = nl_onnx_in_name (n, 1);
  if (!(strcmp (n->op_type, "Div") == 0 ? scalar_is (nl_onnx_imp_const (im, c), G_SQRT2) : scalar_is (nl_onnx_imp_const (im, c), 1 / G_SQRT2)))
    return FALSE;
  if (!(erf = sole_reader (im, n->output[0], "Erf")) || !(plus = sole_reader (im, erf->output[0], "Add"))
      || !scalar_is (nl_onnx_imp_const (im, other_input (plus, erf->output[0]) ? other_input (plus, erf->output[0]) : ""), 1.0)
      || !(mul = sole_reader (im, plus->output[0], "Mul")) || g_strcmp0 (other_input (mul, plus->output[0]), x) != 0
      || !(half = sole_reader (im, mul->output[0], "Mul"))
      || !scalar_is (nl_onnx_imp_const (im, other_input (half, mul->output[0]) ? other_input (half, mul->output[0]) : ""), 0.5))
    return FALSE;
  node = add (im, half, "GELU");
  connect_data (im, from, node, 0);
  nl_onnx_imp_produce (im, half, node);
  g_hash_table_add (im->absorbed, (gpointer) erf);
  g_hash_table_add (im->absorbed, (gpointer) plus);
  g_hash_table_add (im->absorbed, (gpointer) mul);
  g_hash_table_add (im->absorbed, (gpointer) half);
  return TRUE;
}

/* Indices cast to integers for a Gather (an Embedding): netloom holds them
 * as floats already, so the Cast is an alias. Other casts of computed
 * values would change them. */
static NlOnnxResult
map_cast (NlOnnxImp *im, const Onnx__NodeProto *n)
{
  int from = nl_onnx_imp_data (im, nl_onnx_in_name (n, 0));
  if (from < 0 || n->n_output < 1 || !sole_reader (im, n->output[0], "Gather"))
    return nl_onnx_imp_unsupported (im, "only the indices of an embedding may be cast");
  nl_onnx_imp_produce (im, n, from);
  return NL_ONNX_MAPPED;
}

static const struct {
  const char *op;
  NlOnnxResult (*fn) (NlOnnxImp *im, const Onnx__NodeProto *n);
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
  { "Cast", map_cast },
};

gboolean
nl_onnx_map_has_op (const char *op_type)
{
  for (gsize k = 0; k < G_N_ELEMENTS (mappers); k++)
    if (!strcmp (mappers[k].op, op_type))
      return TRUE;
  return FALSE;
}

NlOnnxResult
nl_onnx_map_op (NlOnnxImp *im, const Onnx__NodeProto *n)
{
  if ((!strcmp (n->op_type, "Div") || !strcmp (n->op_type, "Mul")) && map_gelu_pattern (im, n))
    return NL_ONNX_MAPPED;
  for (gsize k = 0; k < G_N_ELEMENTS (mappers); k++)
    if (!strcmp (mappers[k].op, n->op_type))
      return mappers[k].fn (im, n);
  return nl_onnx_imp_unsupported (im, "no netloom op for it");
}
