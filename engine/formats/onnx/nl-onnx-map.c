/* nl-onnx-map.c — one ONNX node to netloom nodes, by op type (the
 * `mappers` table), after the patterns exporters write for ops ONNX lacks
 * (nl-onnx-pattern.c). Attributes netloom cannot express make the node
 * unsupported, with the reason; nl-onnx-import.h lists what maps. */
#include "engine/formats/onnx/nl-onnx-import-private.h"
#include "engine/formats/onnx/nl-onnx-export.h"

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

int
nl_onnx_imp_add (NlOnnxImp *im, const Onnx__NodeProto *n, const char *op)
{
  g_autoptr (GString) id = g_string_new (NULL);
  g_autofree char *base = NULL;
  const char *src = n->name && *n->name ? n->name : n->op_type;
  for (const char *c = src; *c; c++)
    if (isalnum ((guchar) *c) || *c == '_' || *c == '.') /* '-' is an edge's arrow in node ids */
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

/* A parameter out of netloom's range makes the node nl_onnx_imp_unsupported (im->why). */
gboolean
nl_onnx_imp_set (NlOnnxImp *im, int node, const char *name, const char *fmt, ...)
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

void
nl_onnx_imp_connect (NlOnnxImp *im, int from, int to, int port)
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
void
nl_onnx_imp_store (NlOnnxImp *im, int node, gboolean aux, int slot, const NlOnnxConst *c, const NlShape *shape)
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
  *node = nl_onnx_imp_add (im, n, op);
  if (*node < 0)
    return nl_onnx_imp_unsupported (im, "its name gives no valid node id");
  nl_onnx_imp_connect (im, from, *node, 0);
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
  if (!nl_onnx_imp_set (im, node, "channels", "%" G_GINT64_FORMAT, w->shape.d[0])
      || !nl_onnx_imp_set (im, node, "kernel", "%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT, k[0], k[1])
      || !nl_onnx_imp_set (im, node, "stride", "%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT, s[0], s[1])
      || !nl_onnx_imp_set (im, node, "padding", "%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT, p[0], p[1])
      || !nl_onnx_imp_set (im, node, "dilation", "%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT, d[0], d[1])
      || !nl_onnx_imp_set (im, node, "groups", "%" G_GINT64_FORMAT, nl_onnx_node_int (n, "group", 1))
      || !nl_onnx_imp_set (im, node, "use_bias", "%s", b ? "true" : "false"))
    return NL_ONNX_UNSUPPORTED;
  nl_onnx_imp_store (im, node, FALSE, 0, w, NULL);
  if (b)
    nl_onnx_imp_store (im, node, FALSE, 1, b, NULL);
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
  if (!nl_onnx_imp_set (im, node, "units", "%" G_GINT64_FORMAT, w->shape.d[0]) || !nl_onnx_imp_set (im, node, "flatten", flatten ? "true" : "false")
      || !nl_onnx_imp_set (im, node, "use_bias", b ? "true" : "false"))
    return NL_ONNX_UNSUPPORTED;
  nl_onnx_imp_store (im, node, FALSE, 0, w, NULL);
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
      nl_onnx_imp_store (im, node, FALSE, 1, full, NULL);
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

/* x op k, k a constant: Mul or Sub with k as its constant operand (x / k:
 * Mul by 1 / k; x + k: Sub of -k; k - x: Sub reversed). */
static NlOnnxResult
map_constant_operand (NlOnnxImp *im, const Onnx__NodeProto *n, gboolean const_first)
{
  char t = n->op_type[0]; /* Add, Sub, Mul, Div */
  const NlOnnxConst *k = nl_onnx_imp_const (im, nl_onnx_in_name (n, const_first ? 0 : 1));
  int from = nl_onnx_imp_data (im, nl_onnx_in_name (n, const_first ? 1 : 0)), node;
  NlShape s = k->shape.ndim > 0 ? k->shape : nl_shape_of (1, (int64_t) 1);
  g_autoptr (NlOnnxConst) v = NULL;
  g_autoptr (GString) text = g_string_new ("[");
  if (from < 0)
    return nl_onnx_imp_unsupported (im, "its other input is not computed from the graph input");
  if (t == 'D' && const_first)
    return nl_onnx_imp_unsupported (im, "a constant divided by a computed value");
  v = nl_onnx_const_new (&s, FALSE);
  for (int64_t i = 0; i < k->numel; i++)
    {
      double x = nl_onnx_const_get (k, i);
      v->f[i] = (float) (t == 'D' ? 1.0 / x : t == 'A' ? -x : x);
    }
  for (int d = 0; d < s.ndim; d++)
    g_string_append_printf (text, "%s%" G_GINT64_FORMAT, d ? "," : "", s.d[d]);
  g_string_append_c (text, ']');
  node = nl_onnx_imp_add (im, n, t == 'M' || t == 'D' ? "Mul" : "Sub");
  nl_onnx_imp_connect (im, from, node, 0);
  nl_onnx_imp_produce (im, n, node);
  if (!nl_onnx_imp_set (im, node, "operand_shape", "%s", text->str)
      || (t == 'S' && const_first && !nl_onnx_imp_set (im, node, "reverse", "true")))
    return NL_ONNX_UNSUPPORTED;
  nl_onnx_imp_store (im, node, TRUE, 0, v, NULL);
  return NL_ONNX_MAPPED;
}

/* Mul, Sub, Div: of two data values of one shape, or of one and a constant */
static NlOnnxResult
map_binary (NlOnnxImp *im, const Onnx__NodeProto *n)
{
  gboolean const_first = nl_onnx_imp_const (im, nl_onnx_in_name (n, 0)) != NULL;
  int node;
  if (n->n_input != 2)
    return nl_onnx_imp_unsupported (im, "it takes two inputs");
  if (const_first || nl_onnx_imp_const (im, nl_onnx_in_name (n, 1)))
    return map_constant_operand (im, n, const_first);
  if (n->op_type[0] == 'D')
    return nl_onnx_imp_unsupported (im, "a division of two computed values");
  node = nl_onnx_imp_add (im, n, n->op_type[0] == 'M' ? "Mul" : "Sub");
  for (int k = 0; k < 2; k++)
    {
      int from = nl_onnx_imp_data (im, nl_onnx_in_name (n, k));
      if (from < 0)
        return nl_onnx_imp_unsupported (im, "input %d is not computed from the graph input", k);
      nl_onnx_imp_connect (im, from, node, k);
    }
  nl_onnx_imp_produce (im, n, node);
  return NL_ONNX_MAPPED;
}

/* Transpose of computed values (of constants: folded), the batch staying first */
static NlOnnxResult
map_transpose (NlOnnxImp *im, const Onnx__NodeProto *n)
{
  int np, node = -1;
  const int64_t *perm = nl_onnx_node_ints (n, "perm", &np);
  g_autoptr (GString) text = g_string_new ("[");
  if (np == 0)
    return nl_onnx_imp_unsupported (im, "no perm: it reverses every dimension, the batch dimension too");
  if (perm[0] != 0)
    return nl_onnx_imp_unsupported (im, "perm moves the batch dimension (netloom keeps it first)");
  for (int k = 0; k < np; k++)
    g_string_append_printf (text, "%s%" G_GINT64_FORMAT, k ? "," : "", perm[k]);
  g_string_append_c (text, ']');
  if (unary (im, n, "Transpose", &node) != NL_ONNX_MAPPED)
    return NL_ONNX_UNSUPPORTED;
  return nl_onnx_imp_set (im, node, "axes", "%s", text->str) ? NL_ONNX_MAPPED : NL_ONNX_UNSUPPORTED;
}

/* Add: of two data values, a constant bias after a Dense without one, or
 * another constant (as Sub of its negation) */
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
        return map_constant_operand (im, n, first);
      nl_onnx_imp_set (im, from, "use_bias", "true");
      nl_onnx_imp_store (im, from, FALSE, 1, b, &(NlShape) { .ndim = 1, .d = { b->numel } });
      nl_onnx_imp_produce (im, n, from);
      return NL_ONNX_MAPPED;
    }
  node = nl_onnx_imp_add (im, n, "Add");
  for (size_t k = 0; k < n->n_input; k++)
    {
      int from = nl_onnx_imp_data (im, nl_onnx_in_name (n, k));
      if (from < 0)
        return nl_onnx_imp_unsupported (im, "input %zu is not computed from the graph input", k);
      nl_onnx_imp_connect (im, from, node, (int) k);
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
  return nl_onnx_imp_set (im, node, "act_type", "%s", t) ? NL_ONNX_MAPPED : NL_ONNX_UNSUPPORTED;
}

static NlOnnxResult
map_leaky_relu (NlOnnxImp *im, const Onnx__NodeProto *n)
{
  int node = -1;
  if (unary (im, n, "LeakyReLU", &node) != NL_ONNX_MAPPED)
    return NL_ONNX_UNSUPPORTED;
  return nl_onnx_imp_set (im, node, "alpha", "%.9g", nl_onnx_node_float (n, "alpha", 0.01f)) ? NL_ONNX_MAPPED : NL_ONNX_UNSUPPORTED;
}

static NlOnnxResult
map_gelu (NlOnnxImp *im, const Onnx__NodeProto *n)
{
  int node = -1;
  if (unary (im, n, "GELU", &node) != NL_ONNX_MAPPED)
    return NL_ONNX_UNSUPPORTED;
  return nl_onnx_imp_set (im, node, "approximation", nl_onnx_node_string_is (n, "approximate", "tanh", FALSE) ? "tanh" : "erf")
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
  if (!nl_onnx_imp_set (im, node, "pool_size", "%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT, k[0], k[1])
      || !nl_onnx_imp_set (im, node, "strides", "%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT, s[0], s[1])
      || !nl_onnx_imp_set (im, node, "padding", "%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT, p[0], p[1])
      || !nl_onnx_imp_set (im, node, "ceil_mode", nl_onnx_node_int (n, "ceil_mode", 0) ? "true" : "false")
      || (!max && !nl_onnx_imp_set (im, node, "count_include_pad", nl_onnx_node_int (n, "count_include_pad", 0) ? "true" : "false")))
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
  if (unary (im, n, "BatchNorm", &node) != NL_ONNX_MAPPED || !nl_onnx_imp_set (im, node, "epsilon", "%.9g", nl_onnx_node_float (n, "epsilon", 1e-5f)))
    return NL_ONNX_UNSUPPORTED;
  nl_onnx_imp_store (im, node, FALSE, 0, c[0], NULL);
  nl_onnx_imp_store (im, node, FALSE, 1, c[1], NULL);
  nl_onnx_imp_store (im, node, TRUE, 0, c[2], NULL);
  nl_onnx_imp_store (im, node, TRUE, 1, c[3], NULL);
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
  if (unary (im, n, "LayerNorm", &node) != NL_ONNX_MAPPED || !nl_onnx_imp_set (im, node, "epsilon", "%.9g", nl_onnx_node_float (n, "epsilon", 1e-5f))
      || !nl_onnx_imp_set (im, node, "center", b ? "true" : "false"))
    return NL_ONNX_UNSUPPORTED;
  nl_onnx_imp_store (im, node, FALSE, 0, g, NULL);
  if (b)
    nl_onnx_imp_store (im, node, FALSE, 1, b, NULL);
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
  return nl_onnx_imp_set (im, node, "rate", "%.9g", rate) ? NL_ONNX_MAPPED : NL_ONNX_UNSUPPORTED;
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
  return nl_onnx_imp_set (im, node, "shape", "%s", text->str) ? NL_ONNX_MAPPED : NL_ONNX_UNSUPPORTED;
}

static NlOnnxResult
map_concat (NlOnnxImp *im, const Onnx__NodeProto *n)
{
  int node = nl_onnx_imp_add (im, n, "Concat");
  for (size_t k = 0; k < n->n_input; k++)
    {
      int from = nl_onnx_imp_data (im, nl_onnx_in_name (n, k));
      if (from < 0)
        return nl_onnx_imp_unsupported (im, "input %zu is a constant", k);
      nl_onnx_imp_connect (im, from, node, (int) k);
    }
  nl_onnx_imp_produce (im, n, node);
  return nl_onnx_imp_set (im, node, "dim", "%" G_GINT64_FORMAT, nl_onnx_node_int (n, "axis", 1)) ? NL_ONNX_MAPPED : NL_ONNX_UNSUPPORTED;
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
  return nl_onnx_imp_set (im, node, "axis", "%" G_GINT64_FORMAT, axis) ? NL_ONNX_MAPPED : NL_ONNX_UNSUPPORTED;
}

static NlOnnxResult
map_gather (NlOnnxImp *im, const Onnx__NodeProto *n)
{
  NlOnnxConst *table = nl_onnx_imp_const (im, nl_onnx_in_name (n, 0));
  int from = nl_onnx_imp_data (im, nl_onnx_in_name (n, 1)), node = -1;
  if (!table || table->shape.ndim != 2 || from < 0 || nl_onnx_node_int (n, "axis", 0) != 0)
    return nl_onnx_imp_unsupported (im, "only rows of a constant table by computed indices (an embedding) are supported");
  node = nl_onnx_imp_add (im, n, "Embedding");
  nl_onnx_imp_connect (im, from, node, 0);
  nl_onnx_imp_produce (im, n, node);
  if (!nl_onnx_imp_set (im, node, "input_dim", "%" G_GINT64_FORMAT, table->shape.d[0])
      || !nl_onnx_imp_set (im, node, "output_dim", "%" G_GINT64_FORMAT, table->shape.d[1]))
    return NL_ONNX_UNSUPPORTED;
  nl_onnx_imp_store (im, node, FALSE, 0, table, NULL);
  return NL_ONNX_MAPPED;
}

/* Indices cast to integers for a Gather (an Embedding): netloom holds them
 * as floats already, so the Cast is an alias. Other casts of computed
 * values would change them. */
static NlOnnxResult
map_cast (NlOnnxImp *im, const Onnx__NodeProto *n)
{
  int from = nl_onnx_imp_data (im, nl_onnx_in_name (n, 0));
  if (from < 0 || n->n_output < 1 || !nl_onnx_imp_sole_reader (im, n->output[0], "Gather"))
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
  { "Mul", map_binary },
  { "Sub", map_binary },
  { "Div", map_binary },
  { "Transpose", map_transpose },
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
  { "LSTM", nl_onnx_map_rnn },
  { "GRU", nl_onnx_map_rnn },
};

gboolean
nl_onnx_map_has_op (const char *op_type)
{
  for (gsize k = 0; k < G_N_ELEMENTS (mappers); k++)
    if (!strcmp (mappers[k].op, op_type))
      return TRUE;
  return nl_onnx_acts_has_op (op_type);
}

NlOnnxResult
nl_onnx_map_op (NlOnnxImp *im, const Onnx__NodeProto *n)
{
  NlOnnxResult r;
  if (nl_onnx_map_seq_layout (im, n, &r))
    return r;
  if (nl_onnx_map_pattern (im, n))
    return NL_ONNX_MAPPED;
  for (gsize k = 0; k < G_N_ELEMENTS (mappers); k++)
    if (!strcmp (mappers[k].op, n->op_type))
      return mappers[k].fn (im, n);
  if (nl_onnx_acts_has_op (n->op_type))
    return nl_onnx_acts_map_op (im, n);
  return nl_onnx_imp_unsupported (im, "no netloom op for it");
}

NlOnnxResult
nl_onnx_imp_unary (NlOnnxImp *im, const Onnx__NodeProto *n, const char *op, int *node)
{
  return unary (im, n, op, node);
}
