/* nl-onnx-pattern-attn.c — PyTorch 1.13's export of nn.MultiheadAttention
 * (inside nn.TransformerEncoderLayer, batch_first, no masks) as one netloom
 * MultiHeadAttention.
 *
 * The exporter writes the attention time-major, with the packed input
 * projection and reshapes whose sizes it computes from Shape at run time:
 *   x -> Transpose(1,0,2) -> MatMul(W_in^T) [-> Add(b_in)] -> three Slices (q, k, v)
 *   q -> Reshape -> Transpose(1,0,2) -> Div(sqrt(ks)) -+
 *   k -> Reshape -> Transpose(1,2,0) -----------------> MatMul -> Softmax -+
 *   v -> Reshape -> Transpose(1,0,2) -----------------------------------> MatMul
 *     -> Transpose(1,0,2) -> Reshape -> Gemm(W_out, b_out) -> Reshape -> Transpose(1,0,2)
 * The chain is matched by structure (the slices in the order PyTorch writes
 * them: q, k, v), the key size read from the scale, the heads from it; the
 * sizes computed from Shape are not evaluated (their nodes only feed the
 * absorbed Reshapes and Slices). */
#include "engine/formats/onnx/nl-onnx-import-private.h"

#include <math.h>
#include <string.h>

#define ATT_NODES 24

typedef struct {
  const Onnx__NodeProto *node[ATT_NODES];
  int len;
} Chain;

/* The first node after `after` in graph order reading value as input `port` with type op. */
static const Onnx__NodeProto *
reader (NlOnnxImp *im, Chain *ch, const char *value, const char *op, int port)
{
  for (size_t k = 0; value && k < im->g->n_node; k++)
    {
      const Onnx__NodeProto *n = im->g->node[k];
      if (n->op_type && !strcmp (n->op_type, op) && n->n_output > 0 && n->output[0]
          && !strcmp (nl_onnx_in_name (n, port), value))
        {
          if (ch->len < ATT_NODES)
            ch->node[ch->len++] = n;
          return n;
        }
    }
  return NULL;
}

static gboolean
perm_is (const Onnx__NodeProto *n, int64_t a, int64_t b, int64_t c)
{
  int np;
  const int64_t *p = n ? nl_onnx_node_ints (n, "perm", &np) : NULL;
  return p && np == 3 && p[0] == a && p[1] == b && p[2] == c;
}

static const char *
out (const Onnx__NodeProto *n)
{
  return n ? n->output[0] : NULL;
}

/* x's slices: q, k, v as the three Slices of p in graph order. */
static gboolean
slices (NlOnnxImp *im, Chain *ch, const char *p, const Onnx__NodeProto *s[3])
{
  int found = 0;
  for (size_t k = 0; k < im->g->n_node; k++)
    {
      const Onnx__NodeProto *n = im->g->node[k];
      if (n->op_type && !strcmp (n->op_type, "Slice") && !strcmp (nl_onnx_in_name (n, 0), p))
        {
          if (found == 3)
            return FALSE;
          s[found++] = n;
          ch->node[ch->len++] = n;
        }
    }
  return found == 3;
}

/* The key size from q's scaling: Div by sqrt(ks) or Mul by 1/sqrt(ks); 0 if neither. */
static int64_t
key_size (NlOnnxImp *im, const Onnx__NodeProto *scale)
{
  NlOnnxConst *c = scale ? nl_onnx_imp_const (im, nl_onnx_in_name (scale, 1)) : NULL;
  double s, ks;
  if (!c || c->numel != 1 || (s = nl_onnx_const_get (c, 0)) <= 0)
    return 0;
  ks = !strcmp (scale->op_type, "Div") ? s * s : 1.0 / (s * s);
  return fabs (ks - round (ks)) < 1e-3 * ks ? (int64_t) round (ks) : 0;
}

/* The MultiHeadAttention node's weights from W_in^T (C, 3E), b_in (3E or
 * none), W_out (units, E) and b_out (units or none). */
static void
store_weights (NlOnnxImp *im, int node, const NlOnnxConst *win, const NlOnnxConst *bin, const NlOnnxConst *wout,
               const NlOnnxConst *bout)
{
  int64_t Cin = win->shape.d[0], E = win->shape.d[1] / 3, U = wout->shape.d[0];
  NlShape ws = nl_shape_of (2, E, Cin), bs = nl_shape_of (1, E), us = nl_shape_of (1, U);
  for (int p = 0; p < 3; p++)
    {
      g_autoptr (NlOnnxConst) w = nl_onnx_const_new (&ws, FALSE), b = nl_onnx_const_new (&bs, FALSE);
      for (int64_t i = 0; i < E; i++)
        {
          for (int64_t c = 0; c < Cin; c++)
            w->f[i * Cin + c] = (float) nl_onnx_const_get (win, c * 3 * E + p * E + i);
          b->f[i] = bin ? (float) nl_onnx_const_get (bin, p * E + i) : 0.0f;
        }
      nl_onnx_imp_store (im, node, FALSE, p, w, NULL);
      nl_onnx_imp_store (im, node, FALSE, 4 + p, b, NULL);
    }
  nl_onnx_imp_store (im, node, FALSE, 3, wout, NULL);
  {
    g_autoptr (NlOnnxConst) b = nl_onnx_const_new (&us, FALSE);
    for (int64_t i = 0; i < U; i++)
      b->f[i] = bout ? (float) nl_onnx_const_get (bout, bout->numel == 1 ? 0 : i) : 0.0f;
    nl_onnx_imp_store (im, node, FALSE, 7, b, NULL);
  }
}

gboolean
nl_onnx_map_attention_pattern (NlOnnxImp *im, const Onnx__NodeProto *mm, int from)
{
  Chain ch = { .len = 0 };
  const Onnx__NodeProto *add, *s[3], *rq, *tq, *dq, *rk, *tk, *m1, *sm, *rv, *tv, *m2, *to, *ro, *go, *rg, *tg;
  NlOnnxConst *win = nl_onnx_imp_const (im, nl_onnx_in_name (mm, 1)), *bin = NULL, *wout, *bout;
  const char *p;
  int64_t E, ks, U;
  int node;

  if (!win || win->shape.ndim != 2 || win->shape.d[1] % 3 != 0)
    return FALSE;
  E = win->shape.d[1] / 3;
  ch.node[ch.len++] = mm;
  p = mm->output[0];
  /* the bias, either operand order */
  if ((add = reader (im, &ch, p, "Add", 1)) && (bin = nl_onnx_imp_const (im, nl_onnx_in_name (add, 0))))
    p = add->output[0];
  else if (add)
    return FALSE;
  else if ((add = reader (im, &ch, p, "Add", 0)) && (bin = nl_onnx_imp_const (im, nl_onnx_in_name (add, 1))))
    p = add->output[0];
  else if (add)
    return FALSE;
  if (bin && bin->numel != 3 * E)
    return FALSE;
  if (!slices (im, &ch, p, s))
    return FALSE;
  rq = reader (im, &ch, out (s[0]), "Reshape", 0);
  tq = reader (im, &ch, out (rq), "Transpose", 0);
  if (!(dq = reader (im, &ch, out (tq), "Div", 0)))
    dq = reader (im, &ch, out (tq), "Mul", 0);
  rk = reader (im, &ch, out (s[1]), "Reshape", 0);
  tk = reader (im, &ch, out (rk), "Transpose", 0);
  m1 = reader (im, &ch, out (dq), "MatMul", 0);
  sm = reader (im, &ch, out (m1), "Softmax", 0);
  rv = reader (im, &ch, out (s[2]), "Reshape", 0);
  tv = reader (im, &ch, out (rv), "Transpose", 0);
  m2 = reader (im, &ch, out (sm), "MatMul", 0);
  to = reader (im, &ch, out (m2), "Transpose", 0);
  ro = reader (im, &ch, out (to), "Reshape", 0);
  go = reader (im, &ch, out (ro), "Gemm", 0);
  rg = reader (im, &ch, out (go), "Reshape", 0);
  tg = reader (im, &ch, out (rg), "Transpose", 0);
  if (!tg || !perm_is (tq, 1, 0, 2) || !perm_is (tk, 1, 2, 0) || !perm_is (tv, 1, 0, 2) || !perm_is (to, 1, 0, 2)
      || !perm_is (tg, 1, 0, 2) || strcmp (nl_onnx_in_name (m1, 1), out (tk)) || strcmp (nl_onnx_in_name (m2, 1), out (tv))
      || nl_onnx_node_int (sm, "axis", -1) != -1 || nl_onnx_node_int (go, "transA", 0))
    return FALSE;
  ks = key_size (im, dq);
  wout = nl_onnx_imp_const (im, nl_onnx_in_name (go, 1));
  bout = nl_onnx_imp_const (im, nl_onnx_in_name (go, 2));
  if (ks < 1 || E % ks != 0 || !wout || wout->shape.ndim != 2 || !nl_onnx_node_int (go, "transB", 0)
      || wout->shape.d[1] != E || (*nl_onnx_in_name (go, 2) && !bout)
      || (bout && bout->numel != 1 && bout->numel != wout->shape.d[0])
      || nl_onnx_node_float (go, "alpha", 1.0f) != 1.0f || nl_onnx_node_float (go, "beta", 1.0f) != 1.0f)
    return FALSE;
  U = wout->shape.d[0];
  node = nl_onnx_imp_add (im, tg, "MultiHeadAttention");
  if (node < 0)
    return FALSE;
  nl_onnx_imp_connect (im, from, node, 0);
  nl_onnx_imp_produce (im, tg, node);
  if (!nl_onnx_imp_set (im, node, "heads", "%" G_GINT64_FORMAT, E / ks)
      || !nl_onnx_imp_set (im, node, "key_size", "%" G_GINT64_FORMAT, ks)
      || !nl_onnx_imp_set (im, node, "units", "%" G_GINT64_FORMAT, U))
    return FALSE;
  store_weights (im, node, win, bin, wout, bout);
  for (int k = 0; k < ch.len; k++)
    g_hash_table_add (im->absorbed, (gpointer) ch.node[k]);
  return TRUE;
}
