/* nl-onnx-fold.c — constant folding at import: Constant, Identity, Cast,
 * Shape, Reshape, Flatten, Transpose, Squeeze, Unsqueeze, Concat, Gather,
 * and element-wise Add, Sub, Mul, Div, Sqrt, Neg with numpy broadcasting. */
#include "engine/formats/onnx/nl-onnx-fold.h"
#include "engine/formats/onnx/nl-onnx-export.h"

#include <math.h>
#include <string.h>

static NlOnnxConst *
malformed (GError **error, const Onnx__NodeProto *n, const char *why)
{
  g_set_error (error, NL_ONNX_ERROR, NL_ONNX_ERROR_PARSE, "node “%s” (%s): %s", n->name ? n->name : "",
               n->op_type, why);
  return NULL;
}

static NlOnnxConst *
copy_as (const NlOnnxConst *c, const NlShape *shape, gboolean is_int)
{
  NlOnnxConst *r = nl_onnx_const_new (shape, is_int);
  for (int64_t k = 0; k < c->numel; k++)
    if (is_int)
      r->i[k] = (int64_t) nl_onnx_const_get (c, k);
    else
      r->f[k] = (float) nl_onnx_const_get (c, k);
  return r;
}

static NlOnnxConst *
fold_constant (const Onnx__NodeProto *n, GError **error)
{
  const Onnx__AttributeProto *a;
  NlShape s = { 0 };
  NlOnnxConst *c;
  if ((a = nl_onnx_node_attr (n, "value")) && a->t)
    return nl_onnx_const_from_proto (a->t, NULL, error);
  if ((a = nl_onnx_node_attr (n, "value_float")) && a->has_f)
    {
      c = nl_onnx_const_new (&s, FALSE);
      c->f[0] = a->f;
      return c;
    }
  if ((a = nl_onnx_node_attr (n, "value_int")) && a->has_i)
    {
      c = nl_onnx_const_new (&s, TRUE);
      c->i[0] = a->i;
      return c;
    }
  if ((a = nl_onnx_node_attr (n, "value_floats")))
    {
      s = nl_shape_of (1, (int64_t) a->n_floats);
      c = nl_onnx_const_new (&s, FALSE);
      memcpy (c->f, a->floats, sizeof (float) * a->n_floats);
      return c;
    }
  if ((a = nl_onnx_node_attr (n, "value_ints")))
    {
      s = nl_shape_of (1, (int64_t) a->n_ints);
      c = nl_onnx_const_new (&s, TRUE);
      memcpy (c->i, a->ints, sizeof (int64_t) * a->n_ints);
      return c;
    }
  return malformed (error, n, "a Constant without a value netloom reads");
}

/* ONNX Reshape's target: 0 keeps a dimension, one -1 is inferred */
static gboolean
reshape_target (const NlOnnxConst *x, const NlOnnxConst *shape, NlShape *out)
{
  int64_t known = 1;
  int infer = -1;
  if (!shape->is_int || shape->numel > NL_MAX_DIMS)
    return FALSE;
  out->ndim = (int) shape->numel;
  for (int k = 0; k < out->ndim; k++)
    {
      int64_t v = shape->i[k];
      if (v == 0 && k < x->shape.ndim)
        v = x->shape.d[k];
      if (v == -1 && infer < 0)
        infer = k;
      else if (v < 0)
        return FALSE;
      else
        known *= v;
      out->d[k] = v;
    }
  if (infer >= 0)
    {
      if (known == 0 || x->numel % known)
        return FALSE;
      out->d[infer] = x->numel / known;
    }
  return nl_shape_numel (out) == x->numel;
}

static NlOnnxConst *
fold_transpose (const Onnx__NodeProto *n, const NlOnnxConst *x, GError **error)
{
  int np, nd = x->shape.ndim;
  const int64_t *perm = nl_onnx_node_ints (n, "perm", &np);
  int64_t p[NL_MAX_DIMS], stride[NL_MAX_DIMS], idx[NL_MAX_DIMS] = { 0 };
  NlShape s = { .ndim = nd };
  NlOnnxConst *r;
  if (np && np != nd)
    return malformed (error, n, "perm does not match the input's dimensions");
  for (int k = 0; k < nd; k++)
    {
      p[k] = np ? perm[k] : nd - 1 - k;
      if (p[k] < 0 || p[k] >= nd)
        return malformed (error, n, "perm out of range");
      s.d[k] = x->shape.d[p[k]];
    }
  for (int k = nd - 1, acc = 1; k >= 0; k--)
    {
      stride[k] = acc;
      acc *= (int) x->shape.d[k];
    }
  r = nl_onnx_const_new (&s, x->is_int);
  for (int64_t o = 0; o < r->numel; o++)
    {
      int64_t src = 0;
      for (int k = 0; k < nd; k++)
        src += idx[k] * stride[p[k]];
      if (x->is_int)
        r->i[o] = x->i[src];
      else
        r->f[o] = x->f[src];
      for (int k = nd - 1; k >= 0 && ++idx[k] == s.d[k]; k--)
        idx[k] = 0;
    }
  return r;
}

/* Squeeze / Unsqueeze: axes from the attribute (before opset 13) or input 1 */
static NlOnnxConst *
fold_squeeze (const Onnx__NodeProto *n, NlOnnxConst *const *in, int n_in, gboolean un, GError **error)
{
  const NlOnnxConst *x = in[0];
  int na;
  const int64_t *attr_axes = nl_onnx_node_ints (n, "axes", &na);
  int64_t axes[NL_MAX_DIMS];
  gboolean mark[NL_MAX_DIMS + 1] = { FALSE };
  NlShape s = { 0 };
  int out_nd;
  if (n_in > 1 && in[1])
    {
      na = (int) MIN (in[1]->numel, NL_MAX_DIMS);
      for (int k = 0; k < na; k++)
        axes[k] = (int64_t) nl_onnx_const_get (in[1], k);
    }
  else
    for (int k = 0; k < MIN (na, NL_MAX_DIMS); k++)
      axes[k] = attr_axes[k];
  out_nd = un ? x->shape.ndim + na : x->shape.ndim;
  if (out_nd > NL_MAX_DIMS)
    return malformed (error, n, "too many dimensions");
  for (int k = 0; k < na; k++)
    {
      int64_t a = axes[k] < 0 ? axes[k] + (un ? out_nd : x->shape.ndim) : axes[k];
      if (a < 0 || a >= (un ? out_nd : x->shape.ndim))
        return malformed (error, n, "axis out of range");
      mark[a] = TRUE;
    }
  for (int k = 0, j = 0; k < (un ? out_nd : x->shape.ndim); k++)
    {
      if (un)
        s.d[s.ndim++] = mark[k] ? 1 : x->shape.d[j++];
      else if (!(na ? mark[k] : x->shape.d[k] == 1))
        s.d[s.ndim++] = x->shape.d[k];
    }
  return copy_as (x, &s, x->is_int);
}

static NlOnnxConst *
fold_concat (const Onnx__NodeProto *n, NlOnnxConst *const *in, int n_in, GError **error)
{
  int64_t axis = nl_onnx_node_int (n, "axis", 0), outer = 1, total = 0;
  NlShape s = in[0]->shape;
  gboolean is_int = in[0]->is_int;
  NlOnnxConst *r;
  int64_t pos = 0;
  if (axis < 0)
    axis += s.ndim;
  if (axis < 0 || axis >= s.ndim)
    return malformed (error, n, "axis out of range");
  for (int k = 0; k < n_in; k++)
    {
      if (!in[k] || in[k]->shape.ndim != s.ndim)
        return malformed (error, n, "inputs of different ranks");
      total += in[k]->shape.d[axis];
    }
  for (int d = 0; d < axis; d++)
    outer *= s.d[d];
  s.d[axis] = total;
  r = nl_onnx_const_new (&s, is_int);
  for (int64_t o = 0; o < outer; o++)
    for (int k = 0; k < n_in; k++)
      {
        int64_t chunk = outer ? in[k]->numel / outer : 0;
        for (int64_t j = 0; j < chunk; j++, pos++)
          if (is_int)
            r->i[pos] = (int64_t) nl_onnx_const_get (in[k], o * chunk + j);
          else
            r->f[pos] = (float) nl_onnx_const_get (in[k], o * chunk + j);
      }
  return r;
}

/* element-wise with numpy broadcasting */
static NlOnnxConst *
fold_binary (const Onnx__NodeProto *n, const NlOnnxConst *a, const NlOnnxConst *b, GError **error)
{
  int nd = MAX (a->shape.ndim, b->shape.ndim);
  NlShape s = { .ndim = nd };
  int64_t idx[NL_MAX_DIMS] = { 0 };
  gboolean is_int = a->is_int && b->is_int;
  char op = n->op_type[0]; /* Add, Sub, Mul, Div */
  NlOnnxConst *r;
  for (int k = 0; k < nd; k++)
    {
      int64_t da = k - (nd - a->shape.ndim) >= 0 ? a->shape.d[k - (nd - a->shape.ndim)] : 1;
      int64_t db = k - (nd - b->shape.ndim) >= 0 ? b->shape.d[k - (nd - b->shape.ndim)] : 1;
      if (da != db && da != 1 && db != 1)
        return malformed (error, n, "shapes do not broadcast");
      s.d[k] = MAX (da, db);
    }
  r = nl_onnx_const_new (&s, is_int);
  for (int64_t o = 0; o < r->numel; o++)
    {
      int64_t ia = 0, ib = 0;
      double x, y, v;
      for (int k = 0; k < nd; k++)
        {
          int ka = k - (nd - a->shape.ndim), kb = k - (nd - b->shape.ndim);
          if (ka >= 0)
            ia = ia * a->shape.d[ka] + (a->shape.d[ka] == 1 ? 0 : idx[k]);
          if (kb >= 0)
            ib = ib * b->shape.d[kb] + (b->shape.d[kb] == 1 ? 0 : idx[k]);
        }
      x = nl_onnx_const_get (a, ia);
      y = nl_onnx_const_get (b, ib);
      v = op == 'A' ? x + y : op == 'S' ? x - y : op == 'M' ? x * y : is_int ? (y ? trunc (x / y) : 0) : x / y;
      if (is_int)
        r->i[o] = (int64_t) v;
      else
        r->f[o] = (float) v;
      for (int k = nd - 1; k >= 0 && ++idx[k] == s.d[k]; k--)
        idx[k] = 0;
    }
  return r;
}

static NlOnnxConst *
fold_gather (const Onnx__NodeProto *n, const NlOnnxConst *x, const NlOnnxConst *idx, GError **error)
{
  int64_t axis = nl_onnx_node_int (n, "axis", 0), outer = 1, inner = 1, len;
  NlShape s = { 0 };
  NlOnnxConst *r;
  if (axis < 0)
    axis += x->shape.ndim;
  if (axis < 0 || axis >= x->shape.ndim || x->shape.ndim + idx->shape.ndim - 1 > NL_MAX_DIMS)
    return malformed (error, n, "axis out of range");
  len = x->shape.d[axis];
  for (int d = 0; d < axis; d++)
    s.d[s.ndim++] = x->shape.d[d], outer *= x->shape.d[d];
  for (int d = 0; d < idx->shape.ndim; d++)
    s.d[s.ndim++] = idx->shape.d[d];
  for (int d = axis + 1; d < x->shape.ndim; d++)
    s.d[s.ndim++] = x->shape.d[d], inner *= x->shape.d[d];
  r = nl_onnx_const_new (&s, x->is_int);
  for (int64_t o = 0, pos = 0; o < outer; o++)
    for (int64_t j = 0; j < idx->numel; j++)
      {
        int64_t i = (int64_t) nl_onnx_const_get (idx, j);
        if (i < 0)
          i += len;
        if (i < 0 || i >= len)
          {
            nl_onnx_const_free (r);
            return malformed (error, n, "index out of range");
          }
        for (int64_t k = 0; k < inner; k++, pos++)
          if (x->is_int)
            r->i[pos] = x->i[(o * len + i) * inner + k];
          else
            r->f[pos] = x->f[(o * len + i) * inner + k];
      }
  return r;
}

NlOnnxConst *
nl_onnx_fold (const Onnx__NodeProto *n, NlOnnxConst *const *in, int n_in, char **why, GError **error)
{
  const char *op = n->op_type;
  NlShape s;
  if (!strcmp (op, "Constant"))
    return fold_constant (n, error);
  if (n_in < 1 || !in[0])
    return malformed (error, n, "a missing input");
  if (!strcmp (op, "Identity"))
    return copy_as (in[0], &in[0]->shape, in[0]->is_int);
  if (!strcmp (op, "Cast"))
    {
      int64_t to = nl_onnx_node_int (n, "to", 1);
      gboolean to_float = to == ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT || to == ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE
                          || to == ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16;
      return copy_as (in[0], &in[0]->shape, !to_float);
    }
  if (!strcmp (op, "Shape"))
    {
      NlOnnxConst *r;
      s = nl_shape_of (1, (int64_t) in[0]->shape.ndim);
      r = nl_onnx_const_new (&s, TRUE);
      for (int k = 0; k < in[0]->shape.ndim; k++)
        r->i[k] = in[0]->shape.d[k];
      return r;
    }
  if (!strcmp (op, "Reshape"))
    {
      if (n_in < 2 || !in[1] || !reshape_target (in[0], in[1], &s))
        return malformed (error, n, "a target shape that does not fit");
      return copy_as (in[0], &s, in[0]->is_int);
    }
  if (!strcmp (op, "Flatten"))
    {
      int64_t axis = nl_onnx_node_int (n, "axis", 1), outer = 1;
      if (axis < 0)
        axis += in[0]->shape.ndim;
      for (int d = 0; d < axis && d < in[0]->shape.ndim; d++)
        outer *= in[0]->shape.d[d];
      s = nl_shape_of (2, outer, outer ? in[0]->numel / outer : 0);
      return copy_as (in[0], &s, in[0]->is_int);
    }
  if (!strcmp (op, "Transpose"))
    return fold_transpose (n, in[0], error);
  if (!strcmp (op, "Squeeze") || !strcmp (op, "Unsqueeze"))
    return fold_squeeze (n, in, n_in, op[0] == 'U', error);
  if (!strcmp (op, "Concat"))
    return fold_concat (n, in, n_in, error);
  if (!strcmp (op, "Gather") && n_in == 2 && in[1])
    return fold_gather (n, in[0], in[1], error);
  if ((!strcmp (op, "Add") || !strcmp (op, "Sub") || !strcmp (op, "Mul") || !strcmp (op, "Div")) && n_in == 2
      && in[1])
    return fold_binary (n, in[0], in[1], error);
  if (!strcmp (op, "Sqrt") || !strcmp (op, "Neg"))
    {
      NlOnnxConst *r = copy_as (in[0], &in[0]->shape, FALSE);
      for (int64_t k = 0; k < r->numel; k++)
        r->f[k] = op[0] == 'S' ? sqrtf (r->f[k]) : -r->f[k];
      return r;
    }
  *why = g_strdup ("this op is not folded when its inputs are constants");
  return NULL;
}
