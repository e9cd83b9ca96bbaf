/* nl-onnx-import-acts.c — the activations and the pooling form that
 * PyTorch 1.13's exporter writes and nl-onnx-map.c's table lacks: ONNX's
 * own ops (Elu, Celu, Selu, Softsign, HardSigmoid, HardSwish) as
 * Activation act_types, Clip as relu6, hardtanh or a Clip, PRelu as a
 * LeakyReLU (one slope) or a PReLU, the chains written for ops ONNX
 * lacks fused back into one Activation (SiLU: Sigmoid, Mul; Mish: Softplus,
 * Tanh, Mul; Softsign: Abs, Add, Div; Hardswish before opset 14:
 * HardSigmoid, Mul; LogSigmoid: Sigmoid, Log or Neg, Softplus, Neg;
 * Tanhshrink: Tanh, Sub; Softshrink and Hardshrink: Greater, Less, Where
 * chains, into a Shrink, as ONNX's Shrink op), and a zero Pad before an AveragePool (what
 * count_include_pad = True exports as) into AvgPool2D's own padding.
 * Where netloom's fixed constants (elu's alpha 1, hardsigmoid's x / 6 +
 * 1/2) differ from the node's, the node is refused naming the attribute. */
#include "engine/formats/onnx/nl-onnx-import-private.h"
#include "ops/nl-activation.h"

#include <math.h>
#include <string.h>

static gboolean
near (double a, double b)
{
  return fabs (a - b) <= 1e-6 * MAX (1.0, fabs (b));
}

/* One Activation of act_type t reading the node's input */
static NlOnnxResult
act (NlOnnxImp *im, const Onnx__NodeProto *n, const char *t)
{
  int node = -1;
  if (nl_onnx_imp_unary (im, n, "Activation", &node) != NL_ONNX_MAPPED)
    return NL_ONNX_UNSUPPORTED;
  return nl_onnx_imp_set (im, node, "act_type", "%s", t) ? NL_ONNX_MAPPED : NL_ONNX_UNSUPPORTED;
}

/* ---- ONNX's own ops ---- */

static NlOnnxResult
map_elu (NlOnnxImp *im, const Onnx__NodeProto *n)
{
  float alpha = nl_onnx_node_float (n, "alpha", 1.0f);
  if (!near (alpha, 1.0))
    return nl_onnx_imp_unsupported (im, "alpha %g: netloom's elu has alpha 1 (PyTorch's default)", alpha);
  return act (im, n, "elu");
}

static NlOnnxResult
map_selu (NlOnnxImp *im, const Onnx__NodeProto *n)
{
  float alpha = nl_onnx_node_float (n, "alpha", ACT_SELU_ALPHA), gamma = nl_onnx_node_float (n, "gamma", ACT_SELU_SCALE);
  if (!near (alpha, ACT_SELU_ALPHA) || !near (gamma, ACT_SELU_SCALE))
    return nl_onnx_imp_unsupported (im, "alpha %g, gamma %g: netloom's selu has the standard constants", alpha, gamma);
  return act (im, n, "selu");
}

static NlOnnxResult
map_hard_sigmoid (NlOnnxImp *im, const Onnx__NodeProto *n)
{
  float alpha = nl_onnx_node_float (n, "alpha", 0.2f), beta = nl_onnx_node_float (n, "beta", 0.5f);
  if (!near (alpha, 1.0 / 6.0) || !near (beta, 0.5))
    return nl_onnx_imp_unsupported (im, "alpha %g, beta %g: netloom's hardsigmoid is x / 6 + 1/2 (PyTorch's)", alpha,
                                    beta);
  return act (im, n, "hardsigmoid");
}

/* Clip's bound k (1: min, 2: max): an input from opset 11, an attribute before */
static gboolean
clip_bound (NlOnnxImp *im, const Onnx__NodeProto *n, int k, double *v)
{
  const char *name = nl_onnx_in_name (n, k);
  NlOnnxConst *c;
  if (im->opset < 11)
    {
      *v = nl_onnx_node_float (n, k == 1 ? "min" : "max", k == 1 ? -INFINITY : INFINITY);
      return TRUE;
    }
  if (!*name)
    {
      *v = k == 1 ? -INFINITY : INFINITY;
      return TRUE;
    }
  if (!(c = nl_onnx_imp_const (im, name)) || c->numel != 1)
    return FALSE;
  *v = nl_onnx_const_get (c, 0);
  return TRUE;
}

/* Clip to [0, 6]: ReLU6, [-1, 1]: Hardtanh, [0, inf): ReLU, other bounds:
 * a Clip (an absent or infinite bound as +-1e18, the parameters' range) */
static NlOnnxResult
map_clip (NlOnnxImp *im, const Onnx__NodeProto *n)
{
  double lo, hi;
  int node = -1;
  if (!clip_bound (im, n, 1, &lo) || !clip_bound (im, n, 2, &hi))
    return nl_onnx_imp_unsupported (im, "its bounds are not constant scalars");
  if (lo == 0 && hi == 6)
    return act (im, n, "relu6");
  if (lo == -1 && hi == 1)
    return act (im, n, "hardtanh");
  if (lo == 0 && hi >= 3.4e38)
    return act (im, n, "relu");
  if (!(lo <= hi))
    return nl_onnx_imp_unsupported (im, "bounds [%g, %g]: min is above max", lo, hi);
  if (nl_onnx_imp_unary (im, n, "Clip", &node) != NL_ONNX_MAPPED)
    return NL_ONNX_UNSUPPORTED;
  return nl_onnx_imp_set (im, node, "min", "%.9g", MAX (lo, -1e18)) && nl_onnx_imp_set (im, node, "max", "%.9g", MIN (hi, 1e18))
           ? NL_ONNX_MAPPED : NL_ONNX_UNSUPPORTED;
}

/* PRelu with one slope for every channel (nn.PReLU()): a LeakyReLU when
 * the slope is >= 0; slopes per channel, shaped (C) (a 2-D input's) or
 * (C, 1, ...) (PyTorch's for images): a PReLU */
static NlOnnxResult
map_prelu (NlOnnxImp *im, const Onnx__NodeProto *n)
{
  NlOnnxConst *s = nl_onnx_imp_const (im, nl_onnx_in_name (n, 1));
  int node = -1;
  double a;
  gboolean same = TRUE;
  char buf[96];
  if (!s || s->numel < 1)
    return nl_onnx_imp_unsupported (im, "its slope is not a constant");
  a = nl_onnx_const_get (s, 0);
  for (int64_t k = 1; k < s->numel; k++)
    same = same && nl_onnx_const_get (s, k) == a;
  if (same && a >= 0)
    {
      if (nl_onnx_imp_unary (im, n, "LeakyReLU", &node) != NL_ONNX_MAPPED)
        return NL_ONNX_UNSUPPORTED;
      return nl_onnx_imp_set (im, node, "alpha", "%.9g", a) ? NL_ONNX_MAPPED : NL_ONNX_UNSUPPORTED;
    }
  for (int k = 1; k < s->shape.ndim; k++)
    if (s->shape.d[k] != 1)
      return nl_onnx_imp_unsupported (im, "slopes shaped %s: netloom's PReLU has one per channel (axis 1)",
                                      nl_shape_format (&s->shape, buf, sizeof buf));
  if (nl_onnx_imp_unary (im, n, "PReLU", &node) != NL_ONNX_MAPPED)
    return NL_ONNX_UNSUPPORTED;
  nl_onnx_imp_store (im, node, FALSE, 0, s, &(NlShape) { .ndim = 1, .d = { s->numel } });
  return NL_ONNX_MAPPED;
}

/* The H and W pads of a Pad node (the same before and after); FALSE with
 * im->why set when it pads otherwise. */
static gboolean
pad_hw (NlOnnxImp *im, const Onnx__NodeProto *n, int64_t p[2])
{
  NlOnnxConst *c = nl_onnx_imp_const (im, nl_onnx_in_name (n, 1)), *v = nl_onnx_imp_const (im, nl_onnx_in_name (n, 2));
  int64_t pads[8];
  int np = 0;
  if (im->opset < 11)
    {
      const int64_t *a = nl_onnx_node_ints (n, "pads", &np);
      for (int k = 0; k < np && k < 8; k++)
        pads[k] = a[k];
      if (nl_onnx_node_float (n, "value", 0.0f) != 0.0f)
        return nl_onnx_imp_unsupported (im, "it pads with a value other than 0"), FALSE;
    }
  else
    {
      if (!c || !c->is_int || c->numel != 8)
        return nl_onnx_imp_unsupported (im, "its pads are not 8 constant integers (a 4-D input's)"), FALSE;
      np = 8;
      for (int k = 0; k < 8; k++)
        pads[k] = c->i[k];
      if ((*nl_onnx_in_name (n, 2) && !v) || (v && (v->numel != 1 || nl_onnx_const_get (v, 0) != 0)))
        return nl_onnx_imp_unsupported (im, "it pads with a value other than 0"), FALSE;
    }
  if (np != 8)
    return nl_onnx_imp_unsupported (im, "only a 4-D input's pads are supported"), FALSE;
  if (!nl_onnx_node_string_is (n, "mode", "constant", TRUE))
    return nl_onnx_imp_unsupported (im, "only mode constant is supported"), FALSE;
  if (pads[0] || pads[1] || pads[4] || pads[5] || pads[2] != pads[6] || pads[3] != pads[7])
    return nl_onnx_imp_unsupported (im, "only the same pads before and after H and W are supported"), FALSE;
  p[0] = pads[2];
  p[1] = pads[3];
  return TRUE;
}

/* Pad, then an AveragePool without pads of its own: an AvgPool2D that
 * pads itself and counts the padding (nn.AvgPool2d's count_include_pad =
 * True; the window's end stops at the padded border, in ceil_mode too, as
 * in PyTorch). */
static NlOnnxResult
map_pad (NlOnnxImp *im, const Onnx__NodeProto *n)
{
  const Onnx__NodeProto *pool = n->n_output > 0 ? nl_onnx_imp_sole_reader (im, n->output[0], "AveragePool") : NULL;
  int nk, ns, np, nd, node = -1, from = nl_onnx_imp_data (im, nl_onnx_in_name (n, 0));
  const int64_t *k, *s, *pp, *d;
  int64_t p[2];
  if (!pool)
    return nl_onnx_imp_unsupported (im, "a Pad imports only before an AveragePool (PyTorch's count_include_pad)");
  if (!pad_hw (im, n, p))
    return NL_ONNX_UNSUPPORTED;
  k = nl_onnx_node_ints (pool, "kernel_shape", &nk);
  s = nl_onnx_node_ints (pool, "strides", &ns);
  pp = nl_onnx_node_ints (pool, "pads", &np);
  d = nl_onnx_node_ints (pool, "dilations", &nd);
  if (nk != 2 || (ns && ns != 2) || (nd && (nd != 2 || d[0] != 1 || d[1] != 1)))
    return nl_onnx_imp_unsupported (im, "the AveragePool after it is no undilated 2-D pool");
  for (int j = 0; j < np; j++)
    if (pp[j])
      return nl_onnx_imp_unsupported (im, "the AveragePool after it pads too");
  if (!nl_onnx_node_string_is (pool, "auto_pad", "NOTSET", TRUE))
    return nl_onnx_imp_unsupported (im, "the AveragePool after it has auto_pad");
  node = nl_onnx_imp_add (im, pool, "AvgPool2D");
  nl_onnx_imp_connect (im, from, node, 0);
  nl_onnx_imp_produce (im, pool, node);
  g_hash_table_add (im->absorbed, (gpointer) pool);
  if (!nl_onnx_imp_set (im, node, "pool_size", "%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT, k[0], k[1])
      || !nl_onnx_imp_set (im, node, "strides", "%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT, ns ? s[0] : 1, ns ? s[1] : 1)
      || !nl_onnx_imp_set (im, node, "padding", "%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT, p[0], p[1])
      || !nl_onnx_imp_set (im, node, "ceil_mode", nl_onnx_node_int (pool, "ceil_mode", 0) ? "true" : "false")
      || !nl_onnx_imp_set (im, node, "count_include_pad", "true"))
    return NL_ONNX_UNSUPPORTED;
  return NL_ONNX_MAPPED;
}

static NlOnnxResult
map_shrink (NlOnnxImp *im, const Onnx__NodeProto *n)
{
  int node = -1;
  float lambd = nl_onnx_node_float (n, "lambd", 0.5f), bias = nl_onnx_node_float (n, "bias", 0.0f);
  if (!(lambd >= 0))
    return nl_onnx_imp_unsupported (im, "lambd %g: netloom's Shrink needs lambd >= 0", lambd);
  if (nl_onnx_imp_unary (im, n, "Shrink", &node) != NL_ONNX_MAPPED)
    return NL_ONNX_UNSUPPORTED;
  return nl_onnx_imp_set (im, node, "lambd", "%.9g", lambd) && nl_onnx_imp_set (im, node, "bias", "%.9g", bias)
           ? NL_ONNX_MAPPED : NL_ONNX_UNSUPPORTED;
}

static NlOnnxResult
map_simple (NlOnnxImp *im, const Onnx__NodeProto *n)
{
  const char *t = n->op_type;
  if (!strcmp (t, "Celu"))
    return map_elu (im, n); /* Celu with alpha 1 is Elu */
  return act (im, n, !strcmp (t, "Softsign") ? "softsign" : "hardswish");
}

static const struct {
  const char *op;
  NlOnnxResult (*fn) (NlOnnxImp *im, const Onnx__NodeProto *n);
} mappers[] = {
  { "Elu", map_elu },       { "Celu", map_simple },  { "Selu", map_selu },         { "Softsign", map_simple },
  { "HardSwish", map_simple }, { "HardSigmoid", map_hard_sigmoid }, { "Clip", map_clip }, { "PRelu", map_prelu },
  { "Pad", map_pad },       { "Shrink", map_shrink },
};

gboolean
nl_onnx_acts_has_op (const char *op_type)
{
  for (gsize k = 0; k < G_N_ELEMENTS (mappers); k++)
    if (!strcmp (mappers[k].op, op_type))
      return TRUE;
  return FALSE;
}

NlOnnxResult
nl_onnx_acts_map_op (NlOnnxImp *im, const Onnx__NodeProto *n)
{
  for (gsize k = 0; k < G_N_ELEMENTS (mappers); k++)
    if (!strcmp (mappers[k].op, n->op_type))
      return mappers[k].fn (im, n);
  return nl_onnx_imp_unsupported (im, "no netloom op for it");
}

/* ---- chains fused into one Activation ---- */

/* The sole reader of value, of type op */
static const Onnx__NodeProto *
reader (NlOnnxImp *im, const char *value, const char *op)
{
  return nl_onnx_imp_sole_reader (im, value, op);
}

/* last reads x and the chain's previous value, in that order when ordered */
static gboolean
reads_x (const Onnx__NodeProto *last, const char *prev, const char *x, gboolean ordered)
{
  if (ordered)
    return last->n_input == 2 && !strcmp (nl_onnx_in_name (last, 0), x) && !strcmp (nl_onnx_in_name (last, 1), prev);
  return !g_strcmp0 (nl_onnx_imp_other_input (last, prev), x);
}

static gboolean
fuse (NlOnnxImp *im, const Onnx__NodeProto *const *chain, int len, const char *x, const char *t)
{
  int node = nl_onnx_imp_fuse (im, chain, len, x, "Activation");
  nl_onnx_imp_set (im, node, "act_type", "%s", t);
  return TRUE;
}

/* x op1 -> then `second` reading x and that: silu, hardswish, tanhshrink;
 * Sigmoid then Log: logsigmoid */
static gboolean
two (NlOnnxImp *im, const Onnx__NodeProto *n, const char *second, gboolean ordered, const char *t)
{
  const char *x = nl_onnx_in_name (n, 0);
  const Onnx__NodeProto *m = reader (im, n->output[0], second);
  const Onnx__NodeProto *chain[2] = { n, m };
  return m && reads_x (m, n->output[0], x, ordered) && fuse (im, chain, 2, x, t);
}

static gboolean
log_sigmoid (NlOnnxImp *im, const Onnx__NodeProto *n)
{
  const Onnx__NodeProto *m = reader (im, n->output[0], "Log");
  const Onnx__NodeProto *chain[2] = { n, m };
  return m && fuse (im, chain, 2, nl_onnx_in_name (n, 0), "logsigmoid");
}

/* Softplus -> Tanh -> Mul by x: mish */
static gboolean
mish (NlOnnxImp *im, const Onnx__NodeProto *n)
{
  const char *x = nl_onnx_in_name (n, 0);
  const Onnx__NodeProto *t = reader (im, n->output[0], "Tanh"), *m = t ? reader (im, t->output[0], "Mul") : NULL;
  const Onnx__NodeProto *chain[3] = { n, t, m };
  return m && reads_x (m, t->output[0], x, FALSE) && fuse (im, chain, 3, x, "mish");
}

/* Abs -> + 1 -> x divided by it: softsign */
static gboolean
softsign (NlOnnxImp *im, const Onnx__NodeProto *n)
{
  const char *x = nl_onnx_in_name (n, 0);
  const Onnx__NodeProto *a = reader (im, n->output[0], "Add"), *d = a ? reader (im, a->output[0], "Div") : NULL;
  const Onnx__NodeProto *chain[3] = { n, a, d };
  const char *one = a ? nl_onnx_imp_other_input (a, n->output[0]) : NULL;
  NlOnnxConst *c = one ? nl_onnx_imp_const (im, one) : NULL;
  return d && c && c->numel == 1 && nl_onnx_const_get (c, 0) == 1.0 && reads_x (d, a->output[0], x, TRUE)
         && fuse (im, chain, 3, x, "softsign");
}

/* Neg -> Softplus -> Neg: logsigmoid as netloom exports it */
static gboolean
neg_softplus (NlOnnxImp *im, const Onnx__NodeProto *n)
{
  const Onnx__NodeProto *s = reader (im, n->output[0], "Softplus"), *m = s ? reader (im, s->output[0], "Neg") : NULL;
  const Onnx__NodeProto *chain[3] = { n, s, m };
  return m && fuse (im, chain, 3, nl_onnx_in_name (n, 0), "logsigmoid");
}

/* ---- Softshrink and Hardshrink as PyTorch 1.13 writes them ---- */

/* The node computing value, of type op, read only once; NULL otherwise */
static const Onnx__NodeProto *
producer (NlOnnxImp *im, const char *value, const char *op)
{
  if (!value || !nl_onnx_imp_sole_reader (im, value, NULL))
    return NULL;
  for (size_t k = 0; k < im->g->n_node; k++)
    {
      const Onnx__NodeProto *n = im->g->node[k];
      if (n->n_output > 0 && n->output[0] && !strcmp (n->output[0], value))
        return n->op_type && !strcmp (n->op_type, op) ? n : NULL;
    }
  return NULL;
}

/* node is op(x, k) with k the constant scalar *v */
static gboolean
of_x_and (NlOnnxImp *im, const Onnx__NodeProto *node, const char *x, double *v)
{
  NlOnnxConst *c;
  if (!node || node->n_input != 2 || strcmp (nl_onnx_in_name (node, 0), x) != 0
      || !(c = nl_onnx_imp_const (im, nl_onnx_in_name (node, 1))) || c->numel != 1)
    return FALSE;
  *v = nl_onnx_const_get (c, 0);
  return TRUE;
}

/* a Where choosing its input 1 or the constant 0 */
static gboolean
where_or_zero (NlOnnxImp *im, const Onnx__NodeProto *w)
{
  NlOnnxConst *z = w && w->n_input == 3 ? nl_onnx_imp_const (im, nl_onnx_in_name (w, 2)) : NULL;
  return z && z->numel == 1 && nl_onnx_const_get (z, 0) == 0;
}

static gboolean
shrink (NlOnnxImp *im, const Onnx__NodeProto *const *chain, int len, const char *x, double lambd, double bias)
{
  int node = nl_onnx_imp_fuse (im, chain, len, x, "Shrink");
  nl_onnx_imp_set (im, node, "lambd", "%.9g", lambd);
  nl_onnx_imp_set (im, node, "bias", "%.9g", bias);
  return TRUE;
}

/* Where(x > l, x - l, 0) + Where(x < -l, x + l, 0), from the Greater */
static gboolean
soft_shrink (NlOnnxImp *im, const Onnx__NodeProto *gt, double l)
{
  const char *x = nl_onnx_in_name (gt, 0);
  const Onnx__NodeProto *w1 = reader (im, gt->output[0], "Where"), *sub, *y, *w2, *lt, *add;
  double b1, b2, m;
  if (!where_or_zero (im, w1) || strcmp (nl_onnx_in_name (w1, 0), gt->output[0]) != 0
      || !of_x_and (im, sub = producer (im, nl_onnx_in_name (w1, 1), "Sub"), x, &b1) || !(y = reader (im, w1->output[0], "Add"))
      || !where_or_zero (im, w2 = producer (im, nl_onnx_imp_other_input (y, w1->output[0]), "Where"))
      || !of_x_and (im, lt = producer (im, nl_onnx_in_name (w2, 0), "Less"), x, &m)
      || !of_x_and (im, add = producer (im, nl_onnx_in_name (w2, 1), "Add"), x, &b2) || m != -l || b1 != b2)
    return FALSE;
  {
    const Onnx__NodeProto *chain[7] = { gt, sub, w1, lt, add, w2, y };
    return shrink (im, chain, 7, x, l, b1);
  }
}

/* Where(x > l or x < -l, x, 0), the comparisons cast to bool, from the Greater */
static gboolean
hard_shrink (NlOnnxImp *im, const Onnx__NodeProto *gt, double l)
{
  const char *x = nl_onnx_in_name (gt, 0);
  const Onnx__NodeProto *cg = reader (im, gt->output[0], "Cast"), *o = cg ? reader (im, cg->output[0], "Or") : NULL;
  const Onnx__NodeProto *cl = o ? producer (im, nl_onnx_imp_other_input (o, cg->output[0]), "Cast") : NULL;
  const Onnx__NodeProto *lt = cl ? producer (im, nl_onnx_in_name (cl, 0), "Less") : NULL;
  const Onnx__NodeProto *y = o ? reader (im, o->output[0], "Where") : NULL;
  double m;
  if (!where_or_zero (im, y) || strcmp (nl_onnx_in_name (y, 1), x) != 0 || !of_x_and (im, lt, x, &m) || m != -l)
    return FALSE;
  {
    const Onnx__NodeProto *chain[6] = { gt, lt, cg, cl, o, y };
    return shrink (im, chain, 6, x, l, 0);
  }
}

gboolean
nl_onnx_acts_map_pattern (NlOnnxImp *im, const Onnx__NodeProto *n)
{
  const char *op = n->op_type;
  if (!strcmp (op, "Sigmoid"))
    return two (im, n, "Mul", FALSE, "silu") || log_sigmoid (im, n);
  if (!strcmp (op, "HardSigmoid"))
    return near (nl_onnx_node_float (n, "alpha", 0.2f), 1.0 / 6.0) && near (nl_onnx_node_float (n, "beta", 0.5f), 0.5)
           && two (im, n, "Mul", FALSE, "hardswish");
  if (!strcmp (op, "Tanh"))
    return two (im, n, "Sub", TRUE, "tanhshrink");
  if (!strcmp (op, "Softplus"))
    return mish (im, n);
  if (!strcmp (op, "Abs"))
    return softsign (im, n);
  if (!strcmp (op, "Greater"))
    {
      double l;
      return of_x_and (im, n, nl_onnx_in_name (n, 0), &l) && l >= 0 && (soft_shrink (im, n, l) || hard_shrink (im, n, l));
    }
  return !strcmp (op, "Neg") && neg_softplus (im, n);
}
