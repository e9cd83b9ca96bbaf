/* nl-onnx-map-seq.c — ONNX's LSTM and GRU nodes as netloom's, and the
 * layout changes around them (see nl-onnx-import.h).
 *
 * ONNX recurrent nodes run time-major by default: PyTorch's export of a
 * batch_first nn.LSTM is Transpose (1,0,2) -> LSTM -> Transpose (0,2,1,3)
 * -> Reshape (or Squeeze) -> ... -> Transpose (1,0,2), with zero initial
 * states computed from Shape -> ... -> ConstantOfShape. netloom keeps the
 * batch first, so the importer follows *views*: a value that is a known
 * permutation of a netloom node's output (time-major, ONNX's Y or Y_h)
 * gets no node of its own, and the layout ops between views become
 * aliases; values computed from the input's shape are followed only as
 * far as a zero initial state. Anything else reading a view or a shape
 * is refused with the reason. */
#include "engine/formats/onnx/nl-onnx-import-private.h"

#include <string.h>

#include "ops/nl-op-registry.h"

typedef enum {
  VIEW_TIME_MAJOR, /* (T, N, F) of the node's (N, T, F) */
  VIEW_Y,          /* ONNX's Y (T, D, N, H) of the node's (N, T, D*H) */
  VIEW_Y_TNDH,     /* (T, N, D, H) of the same */
  VIEW_Y_H,        /* ONNX's Y_h (D, N, H) of the node's (N, D*H) */
  VIEW_LENGTHS,    /* the samples' lengths netloom's export computes from the input (node: the Input) */
} ViewKind;

typedef struct {
  ViewKind kind;
  int node;
  int64_t D, H;
  gboolean sole; /* the node's output reaches nothing else: a next layer may join the node */
} View;

static const View *
view_of (NlOnnxImp *im, const char *name)
{
  return *name ? g_hash_table_lookup (im->views, name) : NULL;
}

static gboolean is_graph_output (NlOnnxImp *im, const char *name);

/* sole: the view it comes from was its node's only use (TRUE for an LSTM/GRU's Y) */
static void
set_view (NlOnnxImp *im, const char *name, ViewKind kind, int node, int64_t D, int64_t H, gboolean sole)
{
  View *v = g_new (View, 1);
  *v = (View) { kind, node, D, H, sole && GPOINTER_TO_INT (g_hash_table_lookup (im->uses, name)) == 1
                                     && !is_graph_output (im, name) };
  g_hash_table_insert (im->views, g_strdup (name), v);
}

static const char *
out0 (const Onnx__NodeProto *n)
{
  return n->n_output > 0 && n->output[0] ? n->output[0] : "";
}

/* The graph's first output: the network's (the others beside it are left). */
static gboolean
is_graph_output (NlOnnxImp *im, const char *name)
{
  return im->g->n_output > 0 && im->g->output[0]->name && !strcmp (im->g->output[0]->name, name);
}

static gboolean
used (NlOnnxImp *im, const Onnx__NodeProto *n, size_t k)
{
  const char *name = k < n->n_output && n->output[k] ? n->output[k] : "";
  return *name && (g_hash_table_contains (im->uses, name) || is_graph_output (im, name));
}

static gboolean
perm_is (const Onnx__NodeProto *n, const int64_t *want, int len)
{
  int np;
  const int64_t *perm = nl_onnx_node_ints (n, "perm", &np);
  return np == len && !memcmp (perm, want, sizeof (int64_t) * len);
}

/* Squeeze's axes (an attribute before opset 13, an input since) is just `axis`. */
static gboolean
squeezes (NlOnnxImp *im, const Onnx__NodeProto *n, int64_t axis)
{
  int na;
  const int64_t *a = nl_onnx_node_ints (n, "axes", &na);
  NlOnnxConst *c = nl_onnx_imp_const (im, nl_onnx_in_name (n, 1));
  if (c)
    return c->numel == 1 && nl_onnx_const_get (c, 0) == (double) axis;
  return na == 1 && a[0] == axis;
}

/* Gather's indices are one constant scalar, a or b. */
static gboolean
scalar_index_is (NlOnnxImp *im, const Onnx__NodeProto *n, int64_t a, int64_t b)
{
  NlOnnxConst *c = nl_onnx_imp_const (im, nl_onnx_in_name (n, 1));
  return c && c->shape.ndim == 0 && c->numel == 1 && (nl_onnx_const_get (c, 0) == (double) a
                                                     || nl_onnx_const_get (c, 0) == (double) b);
}

/* A netloom Reshape of node's output to shape, as n's output. */
static NlOnnxResult
reshape_node (NlOnnxImp *im, const Onnx__NodeProto *n, int from, const char *shape)
{
  int node = nl_onnx_imp_add (im, n, "Reshape");
  nl_onnx_imp_connect (im, from, node, 0);
  nl_onnx_imp_produce (im, n, node);
  return nl_onnx_imp_set (im, node, "shape", "%s", shape) ? NL_ONNX_MAPPED : NL_ONNX_UNSUPPORTED;
}

/* A node reading view v (input 0): the layout steps PyTorch writes. */
static NlOnnxResult
map_on_view (NlOnnxImp *im, const Onnx__NodeProto *n, const View *v)
{
  static const int64_t p102[3] = { 1, 0, 2 }, p0213[4] = { 0, 2, 1, 3 };
  const char *op = n->op_type, *out = out0 (n);
  g_autofree char *shape = NULL;
  if (!strcmp (op, "Identity") || (v->kind == VIEW_LENGTHS && !strcmp (op, "Cast")))
    return set_view (im, out, v->kind, v->node, v->D, v->H, v->sole), NL_ONNX_MAPPED;
  if (v->kind == VIEW_TIME_MAJOR && !strcmp (op, "Transpose") && perm_is (n, p102, 3))
    return nl_onnx_imp_produce (im, n, v->node), NL_ONNX_MAPPED;
  if (v->kind == VIEW_Y && !strcmp (op, "Transpose") && perm_is (n, p0213, 4))
    return set_view (im, out, VIEW_Y_TNDH, v->node, v->D, v->H, v->sole), NL_ONNX_MAPPED;
  if (v->kind == VIEW_Y && v->D == 1 && !strcmp (op, "Squeeze") && squeezes (im, n, 1))
    return set_view (im, out, VIEW_TIME_MAJOR, v->node, 1, v->H, v->sole), NL_ONNX_MAPPED;
  if (v->kind == VIEW_Y_TNDH && !strcmp (op, "Reshape"))
    {
      NlOnnxConst *s = nl_onnx_imp_const (im, nl_onnx_in_name (n, 1));
      if (s && s->is_int && s->numel == 3 && (s->i[2] == -1 || s->i[2] == v->D * v->H))
        return set_view (im, out, VIEW_TIME_MAJOR, v->node, 1, v->D * v->H, v->sole), NL_ONNX_MAPPED;
    }
  if (v->kind == VIEW_Y_H && v->D == 1 && !strcmp (op, "Squeeze") && squeezes (im, n, 0))
    return nl_onnx_imp_produce (im, n, v->node), NL_ONNX_MAPPED;
  /* h_n[-1] of a one-direction node: its final state */
  if (v->kind == VIEW_Y_H && v->D == 1 && !strcmp (op, "Gather") && nl_onnx_node_int (n, "axis", 0) == 0
      && scalar_index_is (im, n, 0, -1))
    return nl_onnx_imp_produce (im, n, v->node), NL_ONNX_MAPPED;
  if (v->kind == VIEW_Y_H && !strcmp (op, "Transpose") && perm_is (n, p102, 3))
    {
      shape = g_strdup_printf ("[0,%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT "]", v->D, v->H);
      return reshape_node (im, n, v->node, shape);
    }
  return nl_onnx_imp_unsupported (im, "it reads %s, which netloom (batch first) cannot follow here",
                                  v->kind == VIEW_TIME_MAJOR ? "a time-major (T, N, C) value"
                                  : v->kind == VIEW_Y_H      ? "an LSTM/GRU's Y_h"
                                  : v->kind == VIEW_LENGTHS  ? "the samples' lengths (a mask netloom's ops apply)"
                                                             : "an LSTM/GRU's time-major Y");
}

/* ---- the samples' lengths of netloom's export (nl-onnx-export-seq.c) ---- */

static gboolean
scalar_const_is (NlOnnxImp *im, const Onnx__NodeProto *n, const char *one, double v)
{
  const char *o = n && n->n_input == 2 ? (!strcmp (nl_onnx_in_name (n, 0), one) ? nl_onnx_in_name (n, 1)
                                          : nl_onnx_in_name (n, 0)) : NULL;
  NlOnnxConst *c = o ? nl_onnx_imp_const (im, o) : NULL;
  return c && c->numel == 1 && nl_onnx_const_get (c, 0) == v;
}

/* Abs(x) [-> ReduceMax over features] -> Greater 0 -> Cast -> Mul (1..T) ->
 * ReduceMax (axis 1) -> Max 1: the Input's lengths nonzero, read from its
 * output x (node `input`). TRUE when n starts it; the chain is absorbed and
 * its end is a lengths view. */
static gboolean
lengths_pattern (NlOnnxImp *im, const Onnx__NodeProto *n, int input)
{
  const Onnx__NodeProto *c[7] = { NULL }, *any;
  const char *v;
  int len = 0, k;
  if (strcmp (nl_network_node (im->imp->net, input)->def->name, "Input") != 0)
    return FALSE;
  v = n->output[0];
  if ((any = nl_onnx_imp_sole_reader (im, v, "ReduceMax")))
    c[len++] = any, v = any->output[0];
  if (!(c[len] = nl_onnx_imp_sole_reader (im, v, "Greater")) || !scalar_const_is (im, c[len], v, 0.0))
    return FALSE;
  v = c[len++]->output[0];
  if (!(c[len] = nl_onnx_imp_sole_reader (im, v, "Cast")))
    return FALSE;
  v = c[len++]->output[0];
  if (!(c[len] = nl_onnx_imp_sole_reader (im, v, "Mul")))
    return FALSE;
  v = c[len++]->output[0];
  if (!(c[len] = nl_onnx_imp_sole_reader (im, v, "ReduceMax")) || nl_onnx_node_int (c[len], "keepdims", 1) != 0)
    return FALSE;
  v = c[len++]->output[0];
  if (!(c[len] = nl_onnx_imp_sole_reader (im, v, "Max")) || !scalar_const_is (im, c[len], v, 1.0))
    return FALSE;
  v = c[len++]->output[0];
  if (!nl_onnx_imp_set (im, input, "lengths", "nonzero"))
    return FALSE;
  for (k = 0; k < len; k++)
    g_hash_table_add (im->absorbed, (gpointer) c[k]);
  set_view (im, v, VIEW_LENGTHS, input, 0, 0, FALSE);
  return TRUE;
}

/* ---- values computed from the input's shape (zero initial states) ---- */

static gboolean
attr_value_is_zero (const Onnx__NodeProto *n)
{
  const Onnx__AttributeProto *a = nl_onnx_node_attr (n, "value");
  g_autoptr (NlOnnxConst) c = a && a->t ? nl_onnx_const_from_proto (a->t, NULL, NULL) : NULL;
  if (!a)
    return TRUE; /* ConstantOfShape's default: float 0 */
  if (!c)
    return FALSE;
  for (int64_t k = 0; k < c->numel; k++)
    if (nl_onnx_const_get (c, k) != 0.0)
      return FALSE;
  return TRUE;
}

/* TRUE (result in *r) when n reads the input's shape or zeros made from it. */
static gboolean
map_on_shape (NlOnnxImp *im, const Onnx__NodeProto *n, NlOnnxResult *r)
{
  static const char *const zero_keeping[] = { "Slice", "Identity", "Expand", "Reshape", "Unsqueeze", "Squeeze",
                                              "Transpose", "Cast", "Concat", NULL };
  gboolean shape = FALSE, zeros = FALSE, other = FALSE;
  const char *out = out0 (n);
  /* of data, of a view, or of a value inside a matched pattern */
  if (!strcmp (n->op_type, "Shape") && !nl_onnx_imp_const (im, nl_onnx_in_name (n, 0)))
    {
      g_hash_table_add (im->shapes, g_strdup (out));
      return *r = NL_ONNX_MAPPED, TRUE;
    }
  for (size_t k = 0; k < n->n_input; k++)
    {
      const char *in = nl_onnx_in_name (n, k);
      if (!*in || nl_onnx_imp_const (im, in))
        continue;
      if (g_hash_table_contains (im->shapes, in))
        shape = TRUE;
      else if (g_hash_table_contains (im->zeros, in))
        zeros = TRUE;
      else
        other = TRUE;
    }
  if (!shape && !zeros)
    return FALSE;
  *r = NL_ONNX_MAPPED;
  if (other)
    *r = nl_onnx_imp_unsupported (im, "it computes with the input's shape at run time");
  else if (!strcmp (n->op_type, "ConstantOfShape") && shape)
    {
      if (!attr_value_is_zero (n))
        *r = nl_onnx_imp_unsupported (im, "a tensor filled with a non-zero value, shaped at run time");
      else
        g_hash_table_add (im->zeros, g_strdup (out));
    }
  else if (zeros)
    {
      gboolean keeps = FALSE;
      for (int k = 0; zero_keeping[k]; k++)
        keeps = keeps || !strcmp (zero_keeping[k], n->op_type);
      if (keeps)
        g_hash_table_add (im->zeros, g_strdup (out));
      else
        *r = nl_onnx_imp_unsupported (im, "it computes with a tensor shaped at run time");
    }
  else
    g_hash_table_add (im->shapes, g_strdup (out));
  return TRUE;
}

gboolean
nl_onnx_map_seq_layout (NlOnnxImp *im, const Onnx__NodeProto *n, NlOnnxResult *r)
{
  static const int64_t p102[3] = { 1, 0, 2 };
  const View *v = view_of (im, nl_onnx_in_name (n, 0));
  int from;
  /* their zero initial states are read by nl_onnx_map_rnn */
  if (!strcmp (n->op_type, "LSTM") || !strcmp (n->op_type, "GRU"))
    return FALSE;
  if (map_on_shape (im, n, r))
    return TRUE;
  if (v && v->kind == VIEW_TIME_MAJOR && !strcmp (n->op_type, "MatMul") && nl_onnx_map_attention_pattern (im, n, v->node))
    return *r = NL_ONNX_MAPPED, TRUE;
  if (v)
    return *r = map_on_view (im, n, v), TRUE;
  for (size_t k = 1; k < n->n_input; k++)
    if (view_of (im, nl_onnx_in_name (n, k)))
      return *r = nl_onnx_imp_unsupported (im, "it reads a time-major value or an LSTM/GRU output in ONNX's layout"), TRUE;
  /* batch-first (N, T, C) to time-major: a view, for an LSTM or GRU to read */
  from = nl_onnx_imp_data (im, nl_onnx_in_name (n, 0));
  if (from >= 0 && !strcmp (n->op_type, "Abs") && lengths_pattern (im, n, from))
    return *r = NL_ONNX_MAPPED, TRUE;
  /* y[:, -1] of (N, T, C): the last step, which SequencePool's last is when
   * every sample is T long (an imported Input has no lengths) */
  if (from >= 0 && !strcmp (n->op_type, "Gather") && nl_onnx_node_int (n, "axis", 0) == 1
      && scalar_index_is (im, n, -1, -1))
    {
      int node = nl_onnx_imp_add (im, n, "SequencePool");
      nl_onnx_imp_connect (im, from, node, 0);
      nl_onnx_imp_produce (im, n, node);
      return *r = nl_onnx_imp_set (im, node, "mode", "last") ? NL_ONNX_MAPPED : NL_ONNX_UNSUPPORTED, TRUE;
    }
  if (from >= 0 && !strcmp (n->op_type, "Transpose") && perm_is (n, p102, 3))
    {
      set_view (im, out0 (n), VIEW_TIME_MAJOR, from, 1, 0, FALSE);
      return *r = NL_ONNX_MAPPED, TRUE;
    }
  return FALSE;
}

int
nl_onnx_map_seq_output (NlOnnxImp *im, const char *name)
{
  const View *v = view_of (im, name);
  /* ONNX's (1, N, H) Y_h is netloom's (N, H), element for element */
  return v && v->kind == VIEW_Y_H && v->D == 1 ? v->node : -1;
}

gboolean
nl_onnx_map_seq_time_major_input (NlOnnxImp *im, const char *input)
{
  for (size_t k = 0; k < im->g->n_node; k++)
    {
      const Onnx__NodeProto *n = im->g->node[k];
      if (n->op_type && (!strcmp (n->op_type, "LSTM") || !strcmp (n->op_type, "GRU"))
          && !strcmp (nl_onnx_in_name (n, 0), input) && nl_onnx_node_int (n, "layout", 0) == 0)
        return TRUE;
    }
  return FALSE;
}

void
nl_onnx_map_seq_input_view (NlOnnxImp *im, const char *input, int node)
{
  set_view (im, input, VIEW_TIME_MAJOR, node, 1, 0, FALSE);
}

/* ---- LSTM, GRU ---- */

/* ONNX gate k is PyTorch's (netloom's) gate order[k]: LSTM i,o,f,c of
 * i,f,g,o; GRU z,r,h of r,z,n. */
static const int lstm_gates[4] = { 0, 3, 1, 2 };
static const int gru_gates[3] = { 1, 0, 2 };

/* The attributes netloom's LSTM/GRU cannot express: a reason, or NULL. */
static const char *
rnn_refusal (NlOnnxImp *im, const Onnx__NodeProto *n, gboolean lstm)
{
  const Onnx__AttributeProto *acts = nl_onnx_node_attr (n, "activations");
  const char *state_h = nl_onnx_in_name (n, 5), *state_c = nl_onnx_in_name (n, 6);
  if (nl_onnx_node_string_is (n, "direction", "reverse", FALSE))
    return "direction reverse (netloom runs forward or bidirectional)";
  if (nl_onnx_node_attr (n, "clip"))
    return "clip (netloom does not clip the cell)";
  if (nl_onnx_node_int (n, "input_forget", 0))
    return "input_forget = 1 (coupled input and forget gates)";
  if (acts)
    for (size_t k = 0; k < acts->n_strings; k++)
      {
        const char *want = k % (lstm ? 3 : 2) == 0 ? "Sigmoid" : "Tanh";
        if (acts->strings[k].len != strlen (want) || memcmp (acts->strings[k].data, want, strlen (want)))
          return "activations other than the defaults (Sigmoid, Tanh)";
      }
  if (lstm && *nl_onnx_in_name (n, 7))
    return "peepholes (P)";
  if (*nl_onnx_in_name (n, 4) && !(view_of (im, nl_onnx_in_name (n, 4))
                                    && view_of (im, nl_onnx_in_name (n, 4))->kind == VIEW_LENGTHS))
    return "sequence_lens as an input (netloom takes each sample's length from the Input's lengths parameter)";
  for (int k = 0; k < 2; k++)
    {
      const char *s = k ? state_c : state_h;
      NlOnnxConst *c = nl_onnx_imp_const (im, s);
      if (!*s || g_hash_table_contains (im->zeros, s))
        continue;
      for (int64_t i = 0; c && i < c->numel; i++)
        if (nl_onnx_const_get (c, i) != 0.0)
          c = NULL;
      if (!c)
        return "an initial state that is not zero (netloom's state input is a second data input)";
    }
  if (lstm && used (im, n, 2))
    return "its Y_c output is used";
  return NULL;
}

/* Weight slot `slot` of node grown by c's rows (a layer appended), or c itself when it has none. */
static void
append_rows (NlOnnxImp *im, int node, int slot, const NlOnnxConst *c)
{
  for (guint i = 0; i < im->imp->weights->len; i++)
    {
      NlOnnxWeight *w = &g_array_index (im->imp->weights, NlOnnxWeight, i);
      NlShape s;
      NlTensor *t;
      if (w->node != node || w->aux || w->slot != slot)
        continue;
      s = nl_tensor_get_shape (w->t);
      s.d[0] += c->shape.d[0];
      t = nl_tensor_zeros (NL_DTYPE_F32, &s);
      memcpy (nl_tensor_f32 (t), nl_tensor_f32 (w->t), sizeof (float) * nl_tensor_numel (w->t));
      for (int64_t k = 0; k < c->numel; k++)
        nl_tensor_f32 (t)[nl_tensor_numel (w->t) + k] = (float) nl_onnx_const_get (c, k);
      nl_tensor_unref (w->t);
      w->t = t;
      return;
    }
  nl_onnx_imp_store (im, node, FALSE, slot, c, NULL);
}

/* Netloom's five weights (one layer) from W (D, G*H, C), R (D, G*H, H), B (D, 2*G*H) or none;
 * join: appended to node's as its next layer. */
static void
store_rnn_weights (NlOnnxImp *im, int node, const NlOnnxConst *W, const NlOnnxConst *R, const NlOnnxConst *B,
                   int64_t D, int64_t G, int64_t H, gboolean join)
{
  const int *order = G == 4 ? lstm_gates : gru_gates;
  int64_t C = W->shape.d[2], GH = G * H;
  NlShape ws = nl_shape_of (2, D * GH, C), rs = nl_shape_of (2, D * GH, H), bs = nl_shape_of (1, D * GH);
  g_autoptr (NlOnnxConst) w = nl_onnx_const_new (&ws, FALSE), r = nl_onnx_const_new (&rs, FALSE);
  g_autoptr (NlOnnxConst) bi = nl_onnx_const_new (&bs, FALSE), bh = nl_onnx_const_new (&bs, FALSE);
  for (int64_t d = 0; d < D; d++)
    for (int64_t k = 0; k < G; k++)
      for (int64_t j = 0; j < H; j++)
        {
          int64_t dst = d * GH + order[k] * H + j, src = d * GH + k * H + j;
          for (int64_t i = 0; i < C; i++)
            w->f[dst * C + i] = (float) nl_onnx_const_get (W, src * C + i);
          for (int64_t i = 0; i < H; i++)
            r->f[dst * H + i] = (float) nl_onnx_const_get (R, src * H + i);
          bi->f[dst] = B ? (float) nl_onnx_const_get (B, d * 2 * GH + k * H + j) : 0.0f;
          bh->f[dst] = B ? (float) nl_onnx_const_get (B, d * 2 * GH + GH + k * H + j) : 0.0f;
        }
  if (join)
    {
      append_rows (im, node, 1, w);
      append_rows (im, node, 2, r);
      append_rows (im, node, 3, bi);
      append_rows (im, node, 4, bh);
      return;
    }
  nl_onnx_imp_store (im, node, FALSE, 0, w, NULL);
  nl_onnx_imp_store (im, node, FALSE, 2, r, NULL);
  nl_onnx_imp_store (im, node, FALSE, 3, bi, NULL);
  nl_onnx_imp_store (im, node, FALSE, 4, bh, NULL);
}

static int64_t
node_param (NlOnnxImp *im, int node, const char *name)
{
  const NlNode *nn = nl_network_node (im->imp->net, node);
  int k = nl_op_param_index (nn->def, name);
  return k >= 0 ? nn->params[k].i : -1;
}

/* n, time-major and reading only the previous layer's Y (a sole view), as
 * that netloom node's next layer: the node grows a layer instead of the
 * network a node (PyTorch's 2-layer nn.LSTM is one LSTM, layers 2). */
static gboolean
join_layer (NlOnnxImp *im, const Onnx__NodeProto *n, const View *xv, gboolean lstm, int64_t D, int64_t H)
{
  const NlNode *prev = nl_network_node (im->imp->net, xv->node);
  int64_t layers = node_param (im, xv->node, "layers");
  if (!xv->sole || strcmp (prev->def->name, n->op_type) != 0 || used (im, n, 1) || layers < 1 || layers >= 8
      || node_param (im, xv->node, "units") != H || node_param (im, xv->node, "bidirectional") != (D == 2)
      || node_param (im, xv->node, "output") != 0 || node_param (im, xv->node, "merge") != 0
      || (!lstm && node_param (im, xv->node, "variant") != (nl_onnx_node_int (n, "linear_before_reset", 0) ? 0 : 1)))
    return FALSE;
  return nl_onnx_imp_set (im, xv->node, "layers", "%" G_GINT64_FORMAT, layers + 1);
}

/* One netloom LSTM/GRU node reading `from`, every step or the last. */
static int
rnn_node (NlOnnxImp *im, const Onnx__NodeProto *n, int from, gboolean lstm, gboolean last, int64_t D, int64_t H)
{
  int node = nl_onnx_imp_add (im, n, lstm ? "LSTM" : "GRU");
  if (node < 0)
    return -1;
  nl_onnx_imp_connect (im, from, node, 0);
  if (!nl_onnx_imp_set (im, node, "units", "%" G_GINT64_FORMAT, H)
      || !nl_onnx_imp_set (im, node, "bidirectional", D == 2 ? "true" : "false")
      || !nl_onnx_imp_set (im, node, "output", last ? "last" : "all")
      || (!lstm && !nl_onnx_imp_set (im, node, "variant", nl_onnx_node_int (n, "linear_before_reset", 0)
                                                             ? "linear_before_reset" : "classic")))
    return -1;
  return node;
}

NlOnnxResult
nl_onnx_map_rnn (NlOnnxImp *im, const Onnx__NodeProto *n)
{
  gboolean lstm = !strcmp (n->op_type, "LSTM"), batch_first = nl_onnx_node_int (n, "layout", 0) == 1;
  NlOnnxConst *W = nl_onnx_imp_const (im, nl_onnx_in_name (n, 1)), *R = nl_onnx_imp_const (im, nl_onnx_in_name (n, 2));
  NlOnnxConst *B = nl_onnx_imp_const (im, nl_onnx_in_name (n, 3));
  int64_t G = lstm ? 4 : 3, H = nl_onnx_node_int (n, "hidden_size", 0);
  int64_t D = nl_onnx_node_string_is (n, "direction", "bidirectional", FALSE) ? 2 : 1;
  const View *xv = view_of (im, nl_onnx_in_name (n, 0));
  const char *why = rnn_refusal (im, n, lstm);
  int from = batch_first ? nl_onnx_imp_data (im, nl_onnx_in_name (n, 0)) : -1;
  g_autofree char *shape = NULL;

  if (why)
    return nl_onnx_imp_unsupported (im, "%s", why);
  if (!W || !R || (*nl_onnx_in_name (n, 3) && !B))
    return nl_onnx_imp_unsupported (im, "its W, R and B must be constants");
  if (H < 1 || W->shape.ndim != 3 || W->shape.d[0] != D || W->shape.d[1] != G * H || R->shape.ndim != 3
      || R->shape.d[0] != D || R->shape.d[1] != G * H || R->shape.d[2] != H || (B && B->numel != D * 2 * G * H))
    return nl_onnx_imp_unsupported (im, "W, R or B does not have the shape hidden_size and direction give");
  if (!batch_first)
    {
      if (!xv || xv->kind != VIEW_TIME_MAJOR)
        return nl_onnx_imp_unsupported (im, "its time-major X does not come from a batch-first value");
      from = xv->node;
    }
  if (from < 0)
    return nl_onnx_imp_unsupported (im, "its X is not computed from the graph input");
  if (!batch_first && join_layer (im, n, xv, lstm, D, H))
    {
      store_rnn_weights (im, xv->node, W, R, B, D, G, H, TRUE);
      set_view (im, n->output[0], VIEW_Y, xv->node, D, H, TRUE);
      return NL_ONNX_MAPPED;
    }
  for (int last = 0; last < 2; last++)
    {
      int node;
      if (!used (im, n, last))
        continue;
      if ((node = rnn_node (im, n, from, lstm, last, D, H)) < 0)
        return NL_ONNX_UNSUPPORTED;
      store_rnn_weights (im, node, W, R, B, D, G, H, FALSE);
      if (!batch_first)
        {
          set_view (im, n->output[last], last ? VIEW_Y_H : VIEW_Y, node, D, H, !last);
          continue;
        }
      /* batch-first Y (N, T, D, H) and Y_h (N, D, H): netloom's, reshaped */
      shape = last ? g_strdup_printf ("[0,%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT "]", D, H)
                   : g_strdup_printf ("[0,0,%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT "]", D, H);
      {
        int rs = nl_onnx_imp_add (im, n, "Reshape");
        nl_onnx_imp_connect (im, node, rs, 0);
        g_hash_table_insert (im->values, g_strdup (n->output[last]), GINT_TO_POINTER (rs + 1));
        if (!nl_onnx_imp_set (im, rs, "shape", "%s", shape))
          return NL_ONNX_UNSUPPORTED;
      }
      g_clear_pointer (&shape, g_free);
    }
  return NL_ONNX_MAPPED;
}
