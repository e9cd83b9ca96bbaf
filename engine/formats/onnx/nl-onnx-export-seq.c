/* nl-onnx-export-seq.c — the sequence ops as ONNX (see nl-onnx-export.h).
 *
 * Data stays batch-first (N, T, C) between nodes, as in netloom. The
 * samples' lengths are not a second graph input: like the Input's
 * `lengths: nonzero`, the graph computes them from the input itself
 * (1 + the last step with any non-zero value, at least 1), once, as
 * "sequence_lengths" (float, (N)); a network whose Input has no lengths
 * uses the full T everywhere and writes no masks. LSTM and GRU become
 * ONNX's own nodes (one per layer, time-major inside, sequence_lens from
 * the lengths); attention, positional embeddings and pooling become
 * subgraphs whose masks come from the same lengths. */
#include "engine/formats/onnx/nl-onnx-export-private.h"

#include <math.h>
#include <string.h>

#include "engine/graph/nl-graph.h"
#include "ops/nl-op-registry.h"
#include "ops/nl-positional.h"

typedef NlOnnxCtx Ctx;
typedef NlOnnxNode Node;

/* What a softmax treats as minus infinity: exp underflows to exactly 0,
 * and unlike -inf a row of it stays finite. */
#define MASKED (-1e9f)

static const NlParamValue *
param (const Node *n, const char *name)
{
  static const NlParamValue none = { 0 };
  int k = nl_op_param_index (n->gn->def, name);
  return k >= 0 ? &n->gn->params[k] : &none;
}

static gboolean
enum_is (const Node *n, const char *name, const char *value)
{
  int k = nl_op_param_index (n->gn->def, name);
  const NlParamSpec *s = k >= 0 ? &n->gn->def->params[k] : NULL;
  return s && s->enum_values && !strcmp (s->enum_values[n->gn->params[k].i], value);
}

static const NlShape *
in_shape (Ctx *c, const Node *n, int k)
{
  return &nl_graph_value (c->g, n->gn->in[k])->shape;
}

static const NlTensor *
tensor (Ctx *c, const Node *n, int k)
{
  return c->m->weights[NL_MODEL_SLOT (n->gn->net_index, k)];
}

static const char *
temp (Ctx *c, const Node *n, const char *what)
{
  return nl_onnx_export_temp (c, n, what);
}

static Onnx__NodeProto *
op1 (Ctx *c, const char *op, const char *in, const char *out)
{
  return nl_onnx_builder_node (c->b, op, out, &in, 1, out);
}

static Onnx__NodeProto *
op2 (Ctx *c, const char *op, const char *a, const char *b, const char *out)
{
  const char *in[2] = { a, b };
  return nl_onnx_builder_node (c->b, op, out, in, 2, out);
}

static const char *
ints (Ctx *c, const Node *n, const char *what, const int64_t *v, int64_t len)
{
  g_autofree char *name = g_strdup_printf ("%s/%s", n->gn->id, what);
  return nl_onnx_builder_int64s (c->b, name, &len, 1, v);
}

static const char *
scalar (Ctx *c, const Node *n, const char *what, float v)
{
  g_autofree char *name = g_strdup_printf ("%s/%s", n->gn->id, what);
  return nl_onnx_builder_scalar (c->b, name, v);
}

static const char *
floats (Ctx *c, const char *name, const int64_t *dims, int ndim, const float *v)
{
  return nl_onnx_builder_floats (c->b, name, dims, ndim, v);
}

/* x -> Transpose(perm) -> a new value */
static const char *
transpose (Ctx *c, const Node *n, const char *x, const int64_t *perm, int nd, const char *what)
{
  const char *y = temp (c, n, what);
  nl_onnx_attr_ints (c->b, op1 (c, "Transpose", x, y), "perm", perm, nd);
  return y;
}

static const char *
reshape (Ctx *c, const Node *n, const char *x, const int64_t *shape, int nd, const char *what)
{
  const char *y = temp (c, n, what);
  op2 (c, "Reshape", x, ints (c, n, what, shape, nd), y);
  return y;
}

/* ---- the samples' lengths ---- */

/* "sequence_lengths" (float (N)), computed from the graph input once, or
 * NULL when the network's Input gives none (every sample is T long). */
static const char *
lengths (Ctx *c)
{
  const NlShape *s = &nl_graph_value (c->g, c->g->input_value)->shape;
  const char *x = c->vname[c->g->input_value];
  int64_t T = s->d[1], one = 1, rest[NL_MAX_DIMS];
  g_autofree float *pos = NULL;
  const char *a, *nz, *m, *p, *l;
  Onnx__NodeProto *r;

  if (c->g->lengths_value < 0 || c->lengths)
    return c->lengths;
  a = nl_onnx_builder_unique (c->b, "sequence_lengths/abs");
  op1 (c, "Abs", x, a);
  if (s->ndim > 2)
    {
      const char *red = nl_onnx_builder_unique (c->b, "sequence_lengths/any");
      for (int d = 2; d < s->ndim; d++)
        rest[d - 2] = d;
      r = op1 (c, "ReduceMax", a, red);
      nl_onnx_attr_ints (c->b, r, "axes", rest, s->ndim - 2);
      nl_onnx_attr_int (c->b, r, "keepdims", 0);
      a = red;
    }
  nz = nl_onnx_builder_unique (c->b, "sequence_lengths/nonzero");
  op2 (c, "Greater", a, nl_onnx_builder_scalar (c->b, "sequence_lengths/zero", 0.0f), nz);
  m = nl_onnx_builder_unique (c->b, "sequence_lengths/mask");
  nl_onnx_attr_int (c->b, op1 (c, "Cast", nz, m), "to", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT);
  pos = g_new (float, T);
  for (int64_t t = 0; t < T; t++)
    pos[t] = (float) (t + 1);
  p = nl_onnx_builder_unique (c->b, "sequence_lengths/steps");
  op2 (c, "Mul", m, floats (c, "sequence_lengths/positions", &T, 1, pos), p);
  l = nl_onnx_builder_unique (c->b, "sequence_lengths/last");
  r = op1 (c, "ReduceMax", p, l);
  nl_onnx_attr_ints (c->b, r, "axes", &one, 1);
  nl_onnx_attr_int (c->b, r, "keepdims", 0);
  c->lengths = nl_onnx_builder_unique (c->b, "sequence_lengths");
  op2 (c, "Max", l, nl_onnx_builder_scalar (c->b, "sequence_lengths/one", 1.0f), c->lengths);
  return c->lengths;
}

/* (N, T) of 1 at valid steps and 0 at padding, as float (bool: as bool). */
static const char *
step_mask (Ctx *c, const Node *n, int64_t T, gboolean as_bool)
{
  g_autofree float *pos = g_new (float, T);
  int64_t col[2] = { -1, 1 };
  const char *len = reshape (c, n, lengths (c), col, 2, "lengths_col");
  const char *lt = temp (c, n, "valid"), *f;
  for (int64_t t = 0; t < T; t++)
    pos[t] = (float) t;
  {
    g_autofree char *name = g_strdup_printf ("%s/steps", n->gn->id);
    op2 (c, "Less", floats (c, name, &T, 1, pos), len, lt);
  }
  if (as_bool)
    return lt;
  f = temp (c, n, "valid_f");
  nl_onnx_attr_int (c->b, op1 (c, "Cast", lt, f), "to", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT);
  return f;
}

/* x (N, T, C) with its padded steps set to 0, into out */
static void
zero_padding (Ctx *c, const Node *n, const char *x, int64_t T, const char *out)
{
  int64_t shape[3] = { 0, T, 1 };
  const char *m = reshape (c, n, step_mask (c, n, T, FALSE), shape, 3, "valid_3d");
  nl_onnx_builder_node (c->b, "Mul", n->gn->id, (const char *[]) { x, m }, 2, out);
}

/* ---- LSTM, GRU ---- */

/* ONNX's gate order as PyTorch's gate indices: LSTM i,o,f,c of i,f,g,o;
 * GRU z,r,h of r,z,n. */
static const int lstm_gates[4] = { 0, 3, 1, 2 };
static const int gru_gates[3] = { 1, 0, 2 };

/* Rows [row0, row0 + G*H) of a (rows, cols) tensor, gates reordered, to dst. */
static void
gate_rows (const NlTensor *t, int64_t row0, int64_t G, int64_t H, const int *order, float *dst)
{
  int64_t cols = t->shape[1];
  const float *src = nl_tensor_f32 (t);
  for (int64_t g = 0; g < G; g++)
    memcpy (dst + g * H * cols, src + (row0 + order[g] * H) * cols, sizeof (float) * H * cols);
}

/* W, R, B of layer l as ONNX initializers (D directions stacked). */
static void
rnn_layer_weights (Ctx *c, const Node *n, int64_t l, int64_t D, int64_t G, int64_t H, const char *w[3])
{
  const int *order = G == 4 ? lstm_gates : gru_gates;
  const NlTensor *wi = l == 0 ? tensor (c, n, 0) : tensor (c, n, 1), *wh = tensor (c, n, 2);
  const NlTensor *bi = tensor (c, n, 3), *bh = tensor (c, n, 4);
  int64_t C = wi->shape[1], GH = G * H;
  int64_t wd[3] = { D, GH, C }, rd[3] = { D, GH, H }, bd[2] = { D, 2 * GH };
  g_autofree float *W = g_new (float, D * GH * C), *R = g_new (float, D * GH * H), *B = g_new0 (float, D * 2 * GH);
  g_autofree char *wn = g_strdup_printf ("%s.W_l%" G_GINT64_FORMAT, n->gn->id, l);
  g_autofree char *rn = g_strdup_printf ("%s.R_l%" G_GINT64_FORMAT, n->gn->id, l);
  g_autofree char *bn = g_strdup_printf ("%s.B_l%" G_GINT64_FORMAT, n->gn->id, l);
  for (int64_t d = 0; d < D; d++)
    {
      int64_t k = l * D + d; /* this layer and direction among all */
      gate_rows (wi, (l == 0 ? d : k - D) * GH, G, H, order, W + d * GH * C);
      gate_rows (wh, k * GH, G, H, order, R + d * GH * H);
      for (int64_t g = 0; g < G; g++)
        for (int64_t j = 0; j < H; j++)
          {
            if (bi)
              B[d * 2 * GH + g * H + j] = nl_tensor_f32 (bi)[k * GH + order[g] * H + j];
            if (bh)
              B[d * 2 * GH + GH + g * H + j] = nl_tensor_f32 (bh)[k * GH + order[g] * H + j];
          }
    }
  w[0] = floats (c, wn, wd, 3, W);
  w[1] = floats (c, rn, rd, 3, R);
  w[2] = floats (c, bn, bd, 2, B);
}

/* Layer l's initial h (and c) (D, N, H) from the state input, time-major
 * already: rows [first, first + D). */
static const char *
state_rows (Ctx *c, const Node *n, const char *state_tm, int64_t first, int64_t D, const char *what)
{
  int64_t s = first, e = first + D, axis = 0;
  const char *y = temp (c, n, what);
  const char *in[4] = { state_tm, ints (c, n, "starts", &s, 1), ints (c, n, "ends", &e, 1), ints (c, n, "axes", &axis, 1) };
  nl_onnx_builder_node (c->b, "Slice", y, in, 4, y);
  return y;
}

gboolean
nl_onnx_export_rnn (NlOnnxCtx *c, const NlOnnxNode *n, GError **error)
{
  gboolean lstm = !strcmp (n->gn->def->name, "LSTM");
  int64_t H = param (n, "units")->i, L = param (n, "layers")->i, D = param (n, "bidirectional")->i ? 2 : 1;
  int64_t G = lstm ? 4 : 3;
  gboolean last = enum_is (n, "output", "last"), sum = D == 2 && enum_is (n, "merge", "sum");
  int64_t p102[3] = { 1, 0, 2 }, p0213[4] = { 0, 2, 1, 3 }, flat3[3] = { 0, 0, -1 }, flat2[2] = { 0, -1 }, zero = 0;
  const char *len_i = NULL, *state_tm = NULL, *x, *yh = NULL;

  if (!lstm && !enum_is (n, "variant", "linear_before_reset") && !enum_is (n, "variant", "classic"))
    return nl_onnx_export_unsupported (error, n, "unknown GRU variant");
  if (lengths (c))
    {
      len_i = temp (c, n, "sequence_lens");
      nl_onnx_attr_int (c->b, op1 (c, "Cast", lengths (c), len_i), "to", ONNX__TENSOR_PROTO__DATA_TYPE__INT32);
    }
  if (n->gn->n_data > 1)
    state_tm = transpose (c, n, n->in[1], p102, 3, "state_tm");
  x = transpose (c, n, n->in[0], p102, 3, "x_tm");
  for (int64_t l = 0; l < L; l++)
    {
      /* the last layer of `last` leaves Y unused: unnamed, so no dead branch follows it */
      gboolean need_y = !(last && l == L - 1);
      const char *w[3], *in[8], *y = need_y ? temp (c, n, "Y") : "", *h = temp (c, n, "Y_h");
      Onnx__NodeProto *r;
      rnn_layer_weights (c, n, l, D, G, H, w);
      in[0] = x;
      in[1] = w[0];
      in[2] = w[1];
      in[3] = w[2];
      in[4] = len_i ? len_i : "";
      in[5] = state_tm ? state_rows (c, n, state_tm, l * D, D, "initial_h") : "";
      in[6] = state_tm && lstm ? state_rows (c, n, state_tm, (L + l) * D, D, "initial_c") : "";
      r = nl_onnx_builder_node (c->b, lstm ? "LSTM" : "GRU", temp (c, n, lstm ? "lstm" : "gru"), in,
                                in[6][0] ? 7 : in[5][0] ? 6 : len_i ? 5 : 4, y);
      nl_onnx_builder_add_output (c->b, r, h);
      nl_onnx_attr_int (c->b, r, "hidden_size", H);
      if (D == 2)
        nl_onnx_attr_string (c->b, r, "direction", "bidirectional");
      if (!lstm)
        nl_onnx_attr_int (c->b, r, "linear_before_reset", enum_is (n, "variant", "linear_before_reset"));
      yh = h;
      if (!need_y)
        break;
      /* Y (T, D, N, H) -> (T, N, D, H); the next layer reads (T, N, D*H) */
      x = transpose (c, n, y, p0213, 4, "Y_tndh");
      if (!(sum && l == L - 1))
        x = reshape (c, n, x, flat3, 3, "Y_flat");
    }
  if (last)
    {
      /* Y_h (D, N, H) -> (N, D*H), or summed over D */
      if (sum)
        {
          Onnx__NodeProto *r = nl_onnx_builder_node (c->b, "ReduceSum", n->gn->id,
                                                     (const char *[]) { yh, ints (c, n, "axes_d", &zero, 1) }, 2, n->out);
          nl_onnx_attr_int (c->b, r, "keepdims", 0);
          return TRUE;
        }
      nl_onnx_builder_node (c->b, "Reshape", n->gn->id,
                            (const char *[]) { transpose (c, n, yh, p102, 3, "Y_h_n"), ints (c, n, "flat", flat2, 2) }, 2,
                            n->out);
      return TRUE;
    }
  if (sum)
    {
      int64_t axis = 2;
      const char *s = temp (c, n, "Y_sum");
      nl_onnx_attr_int (c->b, nl_onnx_builder_node (c->b, "ReduceSum", s,
                                                    (const char *[]) { x, ints (c, n, "axes_d", &axis, 1) }, 2, s),
                        "keepdims", 0);
      x = s;
    }
  /* (T, N, F) -> (N, T, F); ONNX's Y is 0 past each length already */
  nl_onnx_attr_ints (c->b, nl_onnx_builder_node (c->b, "Transpose", n->gn->id, &x, 1, n->out), "perm", p102, 3);
  return TRUE;
}

/* ---- MatMul ---- */

gboolean
nl_onnx_export_matmul (NlOnnxCtx *c, const NlOnnxNode *n, GError **error)
{
  const char *in[2] = { n->in[0], n->in[1] };
  static const char *const flag[2] = { "transpose_a", "transpose_b" };
  for (int k = 0; k < 2; k++)
    if (param (n, flag[k])->i)
      {
        int nd = in_shape (c, n, k)->ndim;
        int64_t perm[NL_MAX_DIMS];
        for (int d = 0; d < nd; d++)
          perm[d] = d;
        perm[nd - 2] = nd - 1;
        perm[nd - 1] = nd - 2;
        in[k] = transpose (c, n, in[k], perm, nd, k ? "b_t" : "a_t");
      }
  nl_onnx_builder_node (c->b, "MatMul", n->gn->id, in, 2, n->out);
  return TRUE;
}

/* ---- MultiHeadAttention ---- */

/* x (N, L, Cin) @ W^T + b (weight slot k, bias slot kb: may be absent), in a new value */
static const char *
project (Ctx *c, const Node *n, const char *x, int k, int kb, const char *what)
{
  const NlTensor *w = tensor (c, n, k), *b = kb >= 0 ? tensor (c, n, kb) : NULL;
  int64_t rows = w->shape[0], cols = w->shape[1], dims[2] = { cols, rows };
  g_autofree float *wt = g_new (float, rows * cols);
  g_autofree char *wname = g_strdup_printf ("%s.%s.T", n->gn->id, n->gn->def->weights[k]);
  const char *y = temp (c, n, what);
  for (int64_t i = 0; i < rows; i++)
    for (int64_t j = 0; j < cols; j++)
      wt[j * rows + i] = nl_tensor_f32 (w)[i * cols + j];
  op2 (c, "MatMul", x, floats (c, wname, dims, 2, wt), y);
  if (b)
    {
      g_autofree char *bname = g_strdup_printf ("%s.%s", n->gn->id, n->gn->def->weights[kb]);
      const char *yb = temp (c, n, what);
      op2 (c, "Add", y, floats (c, bname, &rows, 1, nl_tensor_f32 (b)), yb);
      y = yb;
    }
  return y;
}

/* (N, L, heads*ks) -> (N, heads, L, ks) */
static const char *
split_heads (Ctx *c, const Node *n, const char *x, int64_t heads, int64_t ks, const char *what)
{
  int64_t shape[4] = { 0, 0, heads, ks }, perm[4] = { 0, 2, 1, 3 };
  return transpose (c, n, reshape (c, n, x, shape, 4, what), perm, 4, what);
}

/* The additive mask (broadcasting to (N, heads, T, S)) or NULL: the
 * causal (T, S) one and the keys past each length. */
static const char *
attention_mask (Ctx *c, const Node *n, int64_t T, int64_t S, gboolean causal, gboolean mask_keys)
{
  const char *mask = NULL;
  if (causal)
    {
      g_autofree float *m = g_new (float, T * S);
      g_autofree char *name = g_strdup_printf ("%s/causal_mask", n->gn->id);
      int64_t dims[2] = { T, S };
      for (int64_t t = 0; t < T; t++)
        for (int64_t s = 0; s < S; s++)
          m[t * S + s] = s > t ? MASKED : 0.0f;
      mask = floats (c, name, dims, 2, m);
    }
  if (mask_keys && lengths (c))
    {
      int64_t shape[4] = { 0, 1, 1, S };
      const char *valid = step_mask (c, n, S, TRUE), *km = temp (c, n, "key_mask");
      const char *in[3] = { valid, scalar (c, n, "zero", 0.0f), scalar (c, n, "masked", MASKED) };
      nl_onnx_builder_node (c->b, "Where", km, in, 3, km);
      km = reshape (c, n, km, shape, 4, "key_mask_4d");
      if (mask)
        {
          const char *both = temp (c, n, "mask");
          op2 (c, "Add", km, mask, both);
          km = both;
        }
      mask = km;
    }
  return mask;
}

gboolean
nl_onnx_export_attention (NlOnnxCtx *c, const NlOnnxNode *n, GError **error)
{
  const NlShape *qs = in_shape (c, n, 0);
  gboolean self = n->gn->n_data < 2, bias = tensor (c, n, 4) != NULL;
  const NlShape *ms = in_shape (c, n, self ? 0 : 1);
  int64_t heads = param (n, "heads")->i, ks = param (n, "key_size")->i, T = qs->d[1], S = ms->d[1];
  int64_t kperm[4] = { 0, 1, 3, 2 }, back[4] = { 0, 2, 1, 3 }, join[3] = { 0, 0, -1 };
  const char *mem = self ? n->in[0] : n->in[1], *q, *k, *v, *s, *mask, *p, *ctx, *o;

  if (ks <= 0)
    ks = qs->d[2] / heads;
  q = split_heads (c, n, project (c, n, n->in[0], 0, bias ? 4 : -1, "q"), heads, ks, "q_heads");
  k = split_heads (c, n, project (c, n, mem, 1, bias ? 5 : -1, "k"), heads, ks, "k_heads");
  v = split_heads (c, n, project (c, n, mem, 2, bias ? 6 : -1, "v"), heads, ks, "v_heads");
  s = temp (c, n, "scores");
  op2 (c, "MatMul", q, transpose (c, n, k, kperm, 4, "k_t"), s);
  {
    const char *scaled = temp (c, n, "scores_scaled");
    op2 (c, "Mul", s, scalar (c, n, "scale", (float) (1.0 / sqrt ((double) ks))), scaled);
    s = scaled;
  }
  /* keys are masked in self-attention and when the memory is as long as the query */
  mask = attention_mask (c, n, T, S, param (n, "causal")->i, self || S == T);
  if (mask)
    {
      const char *sm = temp (c, n, "scores_masked");
      op2 (c, "Add", s, mask, sm);
      s = sm;
    }
  p = temp (c, n, "probabilities");
  nl_onnx_attr_int (c->b, op1 (c, "Softmax", s, p), "axis", -1);
  ctx = temp (c, n, "context");
  op2 (c, "MatMul", p, v, ctx);
  ctx = reshape (c, n, transpose (c, n, ctx, back, 4, "context_t"), join, 3, "context_joined");
  o = project (c, n, ctx, 3, bias ? 7 : -1, "out");
  if (!lengths (c))
    {
      nl_onnx_builder_node (c->b, "Identity", n->gn->id, &o, 1, n->out);
      return TRUE;
    }
  zero_padding (c, n, o, T, n->out); /* padded query rows give 0 */
  return TRUE;
}

/* ---- PositionalEmbedding ---- */

gboolean
nl_onnx_export_positional (NlOnnxCtx *c, const NlOnnxNode *n, GError **error)
{
  const NlShape *s = in_shape (c, n, 0);
  int64_t T = s->d[1], C = s->d[2];
  const char *table, *y = lengths (c) ? temp (c, n, "sum") : n->out;
  if (enum_is (n, "mode", "learned"))
    {
      /* the whole learned table, sliced to T */
      const NlTensor *w = tensor (c, n, 0);
      g_autofree char *name = g_strdup_printf ("%s.weight", n->gn->id);
      int64_t zero = 0, axis = 0;
      const char *in[4] = { floats (c, name, w->shape, w->ndim, nl_tensor_f32 (w)), ints (c, n, "starts", &zero, 1),
                            ints (c, n, "ends", &T, 1), ints (c, n, "axes", &axis, 1) };
      table = temp (c, n, "table");
      nl_onnx_builder_node (c->b, "Slice", table, in, 4, table);
    }
  else
    {
      g_autofree float *P = g_new (float, T * C);
      g_autofree char *name = g_strdup_printf ("%s/sinusoids", n->gn->id);
      int64_t dims[2] = { T, C };
      for (int64_t t = 0; t < T; t++)
        for (int64_t i = 0; i < C; i++)
          P[t * C + i] = nl_positional_sinusoid (t, i, C); /* the kernel's own formula */
      table = floats (c, name, dims, 2, P);
    }
  nl_onnx_builder_node (c->b, "Add", lengths (c) ? y : n->gn->id, (const char *[]) { n->in[0], table }, 2, y);
  if (lengths (c))
    zero_padding (c, n, y, T, n->out);
  return TRUE;
}

/* ---- SequencePool ---- */

static gboolean
pool_full (Ctx *c, const Node *n, int64_t T)
{
  int64_t one = 1, last = T - 1;
  Onnx__NodeProto *r;
  if (enum_is (n, "mode", "last"))
    {
      int64_t none = 0;
      const char *idx = nl_onnx_builder_int64s (c->b, temp (c, n, "last_step"), &none, 0, &last);
      nl_onnx_attr_int (c->b, nl_onnx_builder_node (c->b, "Gather", n->gn->id, (const char *[]) { n->in[0], idx }, 2, n->out),
                        "axis", 1);
      return TRUE;
    }
  r = nl_onnx_builder_node (c->b, enum_is (n, "mode", "max") ? "ReduceMax" : "ReduceMean", n->gn->id, &n->in[0], 1, n->out);
  nl_onnx_attr_ints (c->b, r, "axes", &one, 1);
  nl_onnx_attr_int (c->b, r, "keepdims", 0);
  return TRUE;
}

gboolean
nl_onnx_export_sequence_pool (NlOnnxCtx *c, const NlOnnxNode *n, GError **error)
{
  int64_t T = in_shape (c, n, 0)->d[1], one = 1, shape3[3] = { 0, T, 1 }, col[2] = { -1, 1 };
  const char *w, *prod, *sum;
  if (!lengths (c))
    return pool_full (c, n, T);
  if (enum_is (n, "mode", "max"))
    {
      /* padding steps become the lowest float, then the max over T */
      const char *valid = reshape (c, n, step_mask (c, n, T, TRUE), shape3, 3, "valid_3d");
      const char *in[3] = { valid, n->in[0], scalar (c, n, "lowest", -G_MAXFLOAT) }, *y = temp (c, n, "masked");
      Onnx__NodeProto *r;
      nl_onnx_builder_node (c->b, "Where", y, in, 3, y);
      r = nl_onnx_builder_node (c->b, "ReduceMax", n->gn->id, &y, 1, n->out);
      nl_onnx_attr_ints (c->b, r, "axes", &one, 1);
      nl_onnx_attr_int (c->b, r, "keepdims", 0);
      return TRUE;
    }
  /* a weighted sum over T: 1 at valid steps (mean: then / length), or 1 at
   * the last valid step only */
  if (enum_is (n, "mode", "last"))
    {
      g_autofree float *pos = g_new (float, T);
      g_autofree char *name = g_strdup_printf ("%s/steps_plus_one", n->gn->id);
      const char *eq = temp (c, n, "is_last"), *f = temp (c, n, "is_last_f");
      for (int64_t t = 0; t < T; t++)
        pos[t] = (float) (t + 1);
      op2 (c, "Equal", floats (c, name, &T, 1, pos), reshape (c, n, lengths (c), col, 2, "lengths_col"), eq);
      nl_onnx_attr_int (c->b, op1 (c, "Cast", eq, f), "to", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT);
      w = f;
    }
  else
    w = step_mask (c, n, T, FALSE);
  w = reshape (c, n, w, shape3, 3, "weights_3d");
  prod = temp (c, n, "weighted");
  op2 (c, "Mul", n->in[0], w, prod);
  sum = enum_is (n, "mode", "mean") ? temp (c, n, "sum") : n->out;
  nl_onnx_attr_int (c->b, nl_onnx_builder_node (c->b, "ReduceSum", sum == n->out ? n->gn->id : sum,
                                                (const char *[]) { prod, ints (c, n, "axes_t", &one, 1) }, 2, sum),
                    "keepdims", 0);
  if (sum != n->out)
    nl_onnx_builder_node (c->b, "Div", n->gn->id, (const char *[]) { sum, reshape (c, n, lengths (c), col, 2, "divisor") },
                          2, n->out);
  return TRUE;
}

/* ---- Embedding ---- */

const char *
nl_onnx_export_embedding_table (NlOnnxCtx *c, const NlOnnxNode *n)
{
  const NlTensor *t = tensor (c, n, 0);
  int64_t pad = param (n, "padding_index")->i;
  g_autofree char *name = nl_model_weight_name (c->m, n->gn->net_index, 0);
  g_autofree float *copy = NULL;
  if (nl_op_param_index (n->gn->def, "padding_index") < 0 || pad < 0 || pad >= t->shape[0])
    return NULL;
  /* its output is 0 whatever the row holds */
  copy = g_memdup2 (nl_tensor_f32 (t), sizeof (float) * t->shape[0] * t->shape[1]);
  memset (copy + pad * t->shape[1], 0, sizeof (float) * t->shape[1]);
  return floats (c, name, t->shape, t->ndim, copy);
}
