/* nl-onnx-pattern.c — the chains of nodes exporters write for ops ONNX
 * lacks before some opset, mapped back onto the one netloom op: GELU from
 * its erf formula (PyTorch's nn.GELU) or its tanh approximation (netloom
 * exports both before opset 20), and LayerNormalization decomposed into
 * ReduceMean, Sub, Mul or Pow, Add, Sqrt, Div (netloom and PyTorch before
 * opset 17). A chain matches only where each of its values has no other
 * reader; its nodes but the first are then absorbed. */
#include "engine/formats/onnx/nl-onnx-import-private.h"

#include <math.h>
#include <string.h>

#define MAX_CHAIN 12

typedef struct {
  const Onnx__NodeProto *node[MAX_CHAIN];
  int len;
} Chain;

static gboolean
scalar_is (const NlOnnxConst *c, double v)
{
  return c && c->numel == 1 && fabs (nl_onnx_const_get (c, 0) - v) <= 1e-4 * fabs (v);
}

static int
uses (NlOnnxImp *im, const char *value)
{
  return GPOINTER_TO_INT (g_hash_table_lookup (im->uses, value));
}

const Onnx__NodeProto *
nl_onnx_imp_sole_reader (NlOnnxImp *im, const char *value, const char *op)
{
  int k = GPOINTER_TO_INT (g_hash_table_lookup (im->consumer, value)) - 1;
  const Onnx__NodeProto *n;
  if (k < 0 || uses (im, value) != 1)
    return NULL;
  n = im->g->node[k];
  return n->op_type && (!op || !strcmp (n->op_type, op)) && n->n_output > 0 && n->output[0] ? n : NULL;
}

/* The sole reader of value, of type op, appended to the chain. */
static const Onnx__NodeProto *
next (NlOnnxImp *im, Chain *ch, const char *value, const char *op)
{
  const Onnx__NodeProto *n = nl_onnx_imp_sole_reader (im, value, op);
  if (n && ch->len < MAX_CHAIN)
    ch->node[ch->len++] = n;
  return n;
}

/* The other input of a two-input node than `one`; NULL unless it has two. */
static const char *
other_input (const Onnx__NodeProto *n, const char *one)
{
  if (!n || n->n_input != 2)
    return NULL;
  return !strcmp (nl_onnx_in_name (n, 0), one) ? nl_onnx_in_name (n, 1)
         : !strcmp (nl_onnx_in_name (n, 1), one) ? nl_onnx_in_name (n, 0) : NULL;
}

static NlOnnxConst *
const_other (NlOnnxImp *im, const Onnx__NodeProto *n, const char *one)
{
  const char *o = other_input (n, one);
  return o ? nl_onnx_imp_const (im, o) : NULL;
}

/* One netloom node of op for the chain, reading x; its output is the
 * chain's last. */
static int
replace (NlOnnxImp *im, Chain *ch, const char *x, const char *op)
{
  const Onnx__NodeProto *last = ch->node[ch->len - 1];
  int node = nl_onnx_imp_add (im, last, op);
  nl_onnx_imp_connect (im, nl_onnx_imp_data (im, x), node, 0);
  nl_onnx_imp_produce (im, last, node);
  for (int k = 0; k < ch->len; k++)
    g_hash_table_add (im->absorbed, (gpointer) ch->node[k]);
  return node;
}

/* ---- GELU: x * (1 + erf(x / sqrt 2)) * 0.5, x * (1 + tanh(...)) * 0.5 ---- */

/* t + 1 -> x * that -> * 0.5 */
static gboolean
gelu_tail (NlOnnxImp *im, Chain *ch, const char *t, const char *x)
{
  const Onnx__NodeProto *plus, *mul, *half;
  return (plus = next (im, ch, t, "Add")) && scalar_is (const_other (im, plus, t), 1.0)
         && (mul = next (im, ch, plus->output[0], "Mul")) && !g_strcmp0 (other_input (mul, plus->output[0]), x)
         && (half = next (im, ch, mul->output[0], "Mul")) && scalar_is (const_other (im, half, mul->output[0]), 0.5);
}

static gboolean
gelu (NlOnnxImp *im, Chain *ch, const char *x, const char *approx)
{
  int node = replace (im, ch, x, "GELU");
  nl_onnx_imp_set (im, node, "approximation", "%s", approx);
  return TRUE;
}

/* x / sqrt(2) (or x * 1/sqrt(2)) -> Erf -> the tail */
static gboolean
gelu_erf (NlOnnxImp *im, const Onnx__NodeProto *n)
{
  const char *x = nl_onnx_in_name (n, 0);
  NlOnnxConst *c = nl_onnx_imp_const (im, nl_onnx_in_name (n, 1));
  const Onnx__NodeProto *erf;
  Chain ch = { .len = 0 };
  if (n->n_input != 2 || !(strcmp (n->op_type, "Div") == 0 ? scalar_is (c, G_SQRT2) : scalar_is (c, 1 / G_SQRT2)))
    return FALSE;
  return (erf = next (im, &ch, n->output[0], "Erf")) && gelu_tail (im, &ch, erf->output[0], x)
         && gelu (im, &ch, x, "erf");
}

/* x * x * x (or x ^ 3) -> * 0.044715 -> + x -> * sqrt(2 / pi) -> Tanh -> the tail */
static gboolean
gelu_tanh (NlOnnxImp *im, const Onnx__NodeProto *n)
{
  const char *x = nl_onnx_in_name (n, 0), *x3 = n->output[0];
  const Onnx__NodeProto *cube = NULL, *scaled, *inner, *arg, *tanh_node;
  Chain ch = { .len = 0 };
  if (n->n_input != 2)
    return FALSE;
  if (!strcmp (n->op_type, "Pow"))
    {
      if (!scalar_is (nl_onnx_imp_const (im, nl_onnx_in_name (n, 1)), 3.0))
        return FALSE;
    }
  else
    {
      if (strcmp (nl_onnx_in_name (n, 1), x) != 0 || !(cube = next (im, &ch, n->output[0], "Mul"))
          || g_strcmp0 (other_input (cube, n->output[0]), x) != 0)
        return FALSE;
      x3 = cube->output[0];
    }
  return (scaled = next (im, &ch, x3, "Mul")) && scalar_is (const_other (im, scaled, x3), 0.044715)
         && (inner = next (im, &ch, scaled->output[0], "Add")) && !g_strcmp0 (other_input (inner, scaled->output[0]), x)
         && (arg = next (im, &ch, inner->output[0], "Mul"))
         && scalar_is (const_other (im, arg, inner->output[0]), sqrt (2.0 / G_PI))
         && (tanh_node = next (im, &ch, arg->output[0], "Tanh")) && gelu_tail (im, &ch, tanh_node->output[0], x)
         && gelu (im, &ch, x, "tanh");
}

/* ---- LayerNorm: (x - mean) / sqrt(mean((x - mean)^2) + eps) [* gamma] [+ beta] ---- */

static gboolean
mean_of_last (const Onnx__NodeProto *n)
{
  int na;
  const int64_t *axes = nl_onnx_node_ints (n, "axes", &na);
  return n->n_input == 1 && na == 1 && axes[0] == -1 && nl_onnx_node_int (n, "keepdims", 1) == 1;
}

/* The reader of d, other than by the Sub that made it, of type op with d as input 0. */
static const Onnx__NodeProto *
reader_of (NlOnnxImp *im, const char *d, const char *op)
{
  for (size_t k = 0; k < im->g->n_node; k++)
    {
      const Onnx__NodeProto *n = im->g->node[k];
      if (n->op_type && !strcmp (n->op_type, op) && n->n_output > 0 && n->output[0]
          && !strcmp (nl_onnx_in_name (n, 0), d))
        return n;
    }
  return NULL;
}

static gboolean
layer_norm (NlOnnxImp *im, const Onnx__NodeProto *n)
{
  const char *x = nl_onnx_in_name (n, 0), *d, *y;
  const Onnx__NodeProto *sub, *sq, *var, *plus, *sd, *div, *scale, *shift;
  NlOnnxConst *eps, *gamma = NULL, *beta = NULL;
  Chain ch = { .len = 0 };
  int node;

  if (!mean_of_last (n) || nl_onnx_imp_data (im, x) < 0 || !(sub = next (im, &ch, n->output[0], "Sub"))
      || strcmp (nl_onnx_in_name (sub, 0), x) != 0)
    return FALSE;
  d = sub->output[0];
  /* (x - mean) squared, by Mul(d, d) (netloom) or Pow(d, 2) (PyTorch), and divided */
  if ((sq = reader_of (im, d, "Mul")) && !strcmp (nl_onnx_in_name (sq, 1), d) && uses (im, d) == 3)
    ;
  else if ((sq = reader_of (im, d, "Pow")) && scalar_is (nl_onnx_imp_const (im, nl_onnx_in_name (sq, 1)), 2.0)
           && uses (im, d) == 2)
    ;
  else
    return FALSE;
  ch.node[ch.len++] = sq;
  if (!(var = next (im, &ch, sq->output[0], "ReduceMean")) || !mean_of_last (var)
      || !(plus = next (im, &ch, var->output[0], "Add")) || !(eps = const_other (im, plus, var->output[0]))
      || eps->numel != 1 || !(nl_onnx_const_get (eps, 0) >= 1e-30) || !(sd = next (im, &ch, plus->output[0], "Sqrt"))
      || !(div = next (im, &ch, sd->output[0], "Div")) || strcmp (nl_onnx_in_name (div, 0), d) != 0)
    return FALSE;
  y = div->output[0];
  if ((scale = nl_onnx_imp_sole_reader (im, y, "Mul")) && (gamma = const_other (im, scale, y)) && gamma->shape.ndim == 1)
    {
      ch.node[ch.len++] = scale;
      y = scale->output[0];
    }
  else
    gamma = NULL;
  if ((shift = nl_onnx_imp_sole_reader (im, y, "Add")) && (beta = const_other (im, shift, y)) && beta->shape.ndim == 1)
    ch.node[ch.len++] = shift;
  else
    beta = NULL;
  /* past the match: the parameters are in range (epsilon > 0) */
  node = replace (im, &ch, x, "LayerNorm");
  nl_onnx_imp_set (im, node, "epsilon", "%.9g", nl_onnx_const_get (eps, 0));
  nl_onnx_imp_set (im, node, "scale", gamma ? "true" : "false");
  nl_onnx_imp_set (im, node, "center", beta ? "true" : "false");
  if (gamma)
    nl_onnx_imp_store (im, node, FALSE, 0, gamma, NULL);
  if (beta)
    nl_onnx_imp_store (im, node, FALSE, 1, beta, NULL);
  return TRUE;
}

gboolean
nl_onnx_map_pattern (NlOnnxImp *im, const Onnx__NodeProto *n)
{
  const char *op = n->op_type;
  if (n->n_output < 1 || !n->output[0] || nl_onnx_imp_data (im, nl_onnx_in_name (n, 0)) < 0)
    return FALSE;
  if (nl_onnx_acts_map_pattern (im, n))
    return TRUE;
  if (!strcmp (op, "Div") || !strcmp (op, "Mul"))
    if (gelu_erf (im, n))
      return TRUE;
  if (!strcmp (op, "Mul") || !strcmp (op, "Pow"))
    if (gelu_tanh (im, n))
      return TRUE;
  return !strcmp (op, "ReduceMean") && layer_norm (im, n);
}

const char *
nl_onnx_imp_other_input (const Onnx__NodeProto *n, const char *one)
{
  return other_input (n, one);
}

int
nl_onnx_imp_fuse (NlOnnxImp *im, const Onnx__NodeProto *const *chain, int len, const char *x, const char *op)
{
  Chain ch = { .len = MIN (len, MAX_CHAIN) };
  for (int k = 0; k < ch.len; k++)
    ch.node[k] = chain[k];
  return replace (im, &ch, x, op);
}
