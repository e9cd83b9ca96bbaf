/* rnn.c — the CPU kernels of LSTM and GRU (definitions: ops/defs/lstm.c,
 * ops/defs/gru.c; layouts: ops/nl-rnn.h), layer by layer and direction by
 * direction through oneDNN's RNN primitives (ops/cpu/rnn-cell.c).
 *
 * oneDNN has no per-sample lengths, so padding is handled around it: each
 * direction runs left to right over its own copy of the input, the reverse
 * direction's copy holding each sample reversed within its own length, and
 * with lengths the padded steps of both copies are zeroed (whatever the
 * padding held never enters a product). Padding comes after every valid
 * step in both copies, so it cannot reach a valid output; padded output
 * steps are written as 0, padded output gradients are read as 0, and
 * `last` is step length-1 of each copy. Backward therefore sees zero
 * gradients at every padded step and gives padding no gradient.
 *
 * Threads split the batch, not the steps: each of the n threads runs its
 * own single-threaded primitive on a contiguous slice of the samples
 * (they are independent), so a layer costs one fork and join instead of
 * oneDNN's barriers at every step of every matrix product, which stall
 * whenever a core is shared; the slices' weight gradients are summed.
 *
 * The node's state keeps the primitives (per layer kind and slice), the
 * packed weights, every direction's outputs and oneDNN's workspace from
 * the training forward, which backward reuses; a backward without that
 * forward reruns it first. */
#include "ops/cpu/nl-rnn-cell.h"

#include <omp.h>

#define MAX_LAYERS 8
#define MAX_SLICES 16
#define MIN_SLICE 16 /* samples: below, one product is too thin to pay a thread */

typedef struct {
  float *src;      /* the direction's input copy, or NULL: reads the layer input itself */
  float *dst;      /* (B, T, H), the copy's order */
  float *hx, *cx;  /* (B, H) initial states */
  void *ws[MAX_SLICES];
  size_t ws_cap[MAX_SLICES];
  NlRnnPacked pk;
} Cell;

typedef struct {
  NlRnnPrims prims[2][MAX_SLICES]; /* layer 0, later layers; per slice */
  int n_slices;
  int64_t b0[MAX_SLICES + 1];      /* slice k: samples b0[k] .. b0[k+1]-1 */
  int64_t b, t, c;
  NlRnnArgs a;
  Cell cell[MAX_LAYERS][2];
  float *y[MAX_LAYERS];    /* layer outputs below the top, (B, T, D*H), after dropout */
  float *mask[MAX_LAYERS]; /* their dropout masks */
  /* backward scratch */
  float *ddst, *dsrc, *dhx, *dcx, *dwl, *dwi, *dbias, *dlay[2];
  float *dpart;            /* slices 1..n-1's weight gradients, summed into dwl, dwi, dbias */
  int64_t part_size;
  gboolean forward_done;   /* a training forward filled the cells */
} RnnState;

static void
state_clear (RnnState *s)
{
  for (int i = 0; i < 2; i++)
    for (int k = 0; k < MAX_SLICES; k++)
      nl_rnn_prims_clear (&s->prims[i][k]);
  for (int l = 0; l < MAX_LAYERS; l++)
    {
      for (int d = 0; d < 2; d++)
        {
          Cell *k = &s->cell[l][d];
          g_free (k->src), g_free (k->dst), g_free (k->hx), g_free (k->cx);
          for (int j = 0; j < MAX_SLICES; j++)
            g_free (k->ws[j]);
          g_free (k->pk.wl), g_free (k->pk.wi), g_free (k->pk.bias), g_free (k->pk.wl_t), g_free (k->pk.wi_t);
        }
      g_free (s->y[l]), g_free (s->mask[l]);
    }
  g_free (s->ddst), g_free (s->dsrc), g_free (s->dhx), g_free (s->dcx);
  g_free (s->dwl), g_free (s->dwi), g_free (s->dbias), g_free (s->dlay[0]), g_free (s->dlay[1]);
  g_free (s->dpart);
  memset (s, 0, sizeof *s);
}

static void
free_state (void *state)
{
  state_clear (state);
  g_free (state);
}

static float *
floats (int64_t n)
{
  return g_malloc0 (MAX (n, 1) * sizeof (float));
}

/* The state for this shape: buffers reallocated when it changes. */
static RnnState *
state_for (NlOpCtx *c, int64_t b, int64_t t, int64_t cin0)
{
  const NlRnnArgs *a = c->args;
  RnnState *s = *c->state;
  int64_t h = a->units, bt = b * t, g = nl_rnn_gates (a->cell), wide = MAX (cin0, a->dirs * h);
  int n = CLAMP (nl_threads_get (), 1, MAX_SLICES);

  n = (int) MIN ((int64_t) n, MAX (b / MIN_SLICE, 1));
  if (!s)
    *c->state = s = g_new0 (RnnState, 1);
  if (s->b == b && s->t == t && s->c == cin0 && s->n_slices == n && s->a.cell == a->cell && s->a.units == a->units
      && s->a.layers == a->layers && s->a.dirs == a->dirs)
    {
      s->a = *a;
      return s;
    }
  state_clear (s);
  s->b = b, s->t = t, s->c = cin0, s->a = *a, s->n_slices = n;
  for (int k = 0; k <= n; k++)
    s->b0[k] = b * k / n;
  for (int64_t l = 0; l < a->layers; l++)
    {
      int64_t cin = nl_rnn_layer_in (a, l, cin0);
      for (int d = 0; d < a->dirs; d++)
        {
          Cell *k = &s->cell[l][d];
          k->src = floats (bt * cin);
          k->dst = floats (bt * h);
          k->hx = floats (b * h);
          k->cx = floats (b * h);
          k->pk.wl = floats (cin * g * h), k->pk.wl_t = floats (cin * g * h);
          k->pk.wi = floats (h * g * h), k->pk.wi_t = floats (h * g * h);
          k->pk.bias = floats ((g + 1) * h);
        }
      if (l < a->layers - 1)
        s->y[l] = floats (bt * a->dirs * h), s->mask[l] = floats (bt * a->dirs * h);
    }
  s->ddst = floats (bt * h), s->dsrc = floats (bt * wide);
  s->dhx = floats (b * h), s->dcx = floats (b * h);
  s->dwl = floats (wide * g * h), s->dwi = floats (h * g * h), s->dbias = floats ((g + 1) * h);
  s->dlay[0] = floats (bt * wide), s->dlay[1] = floats (bt * wide);
  s->part_size = (wide + h) * g * h + (g + 1) * h;
  s->dpart = floats ((n - 1) * s->part_size);
  return s;
}

/* dst[b, t, 0..n) = src[b, t', off..off+n) over the valid steps, t' = t
 * or, reversed, len-1-t; padded steps 0. Rows of src are `stride` floats. */
static void
gather (const float *src, int64_t stride, int64_t off, float *dst, int64_t n, int64_t b, int64_t t,
        gboolean reverse, const float *lengths)
{
#pragma omp parallel for if (b * t * n > NL_PAR_MIN) schedule (static)
  for (int64_t i = 0; i < b; i++)
    {
      int64_t len = nl_rnn_length (lengths, i, t);
      for (int64_t j = 0; j < t; j++)
        {
          float *row = dst + (i * t + j) * n;
          if (j < len)
            memcpy (row, src + (i * t + (reverse ? len - 1 - j : j)) * stride + off, n * sizeof (float));
          else
            memset (row, 0, n * sizeof (float));
        }
    }
}

/* The inverse: dst[b, t', off..off+n) = (or +=) src[b, t]; padded steps
 * of dst are set to 0 (when not adding). */
static void
scatter (const float *src, float *dst, int64_t stride, int64_t off, int64_t n, int64_t b, int64_t t,
         gboolean reverse, const float *lengths, gboolean add)
{
#pragma omp parallel for if (b * t * n > NL_PAR_MIN) schedule (static)
  for (int64_t i = 0; i < b; i++)
    {
      int64_t len = nl_rnn_length (lengths, i, t);
      for (int64_t j = 0; j < t; j++)
        {
          float *row = dst + (i * t + (j < len && reverse ? len - 1 - j : j)) * stride + off;
          const float *s = src + (i * t + j) * n;
          if (j >= len)
            {
              if (!add)
                memset (row, 0, n * sizeof (float));
            }
          else if (add)
            for (int64_t k = 0; k < n; k++)
              row[k] += s[k];
          else
            memcpy (row, s, n * sizeof (float));
        }
    }
}

/* The initial states of cell (l, d) from the state input, or zeros. */
static void
load_state (const NlRnnArgs *a, const float *state, int64_t b, int64_t l, int d, Cell *k)
{
  int64_t h = a->units, rows = nl_rnn_state_kinds (a->cell) * a->layers * a->dirs;
  for (int kind = 0; kind < nl_rnn_state_kinds (a->cell); kind++)
    {
      float *dst = kind == 0 ? k->hx : k->cx;
      int64_t row = nl_rnn_state_row (a, kind, l, d);
      for (int64_t i = 0; i < b; i++)
        if (state)
          memcpy (dst + i * h, state + (i * rows + row) * h, h * sizeof (float));
        else
          memset (dst + i * h, 0, h * sizeof (float));
    }
}

static void
pack_cell (NlOpCtx *c, int64_t l, int d, int64_t cin0, Cell *k)
{
  const NlRnnArgs *a = c->args;
  NlTensor *const *w = c->in + c->n_data;
  int64_t h = a->units, cin = nl_rnn_layer_in (a, l, cin0);
  const float *wih = nl_tensor_f32 (w[l == 0 ? RNN_W_L0_I2H : RNN_W_I2H]) + nl_rnn_i2h_offset (a, l, d, cin0);
  const float *whh = nl_tensor_f32 (w[RNN_W_H2H]) + nl_rnn_h2h_offset (a, l, d);
  int64_t bo = nl_rnn_bias_offset (a, l, d);

  nl_rnn_pack (a->cell, cin, h, wih, whh, nl_tensor_f32 (w[RNN_B_I2H]) + bo, nl_tensor_f32 (w[RNN_B_H2H]) + bo,
               c->training, &k->pk);
}

/* Dropout on a layer's output, keyed by (seed, step, layer, element) like
 * ops/cpu/dropout.c's. */
static void
dropout_apply (NlOpCtx *c, int64_t l, float *y, float *mask, int64_t n)
{
  float rate = ((const NlRnnArgs *) c->args)->dropout, scale = 1.0f / (1.0f - rate);
  guint64 seed = c->seed, stream = c->step, base = (guint64) l * (guint64) n;
#pragma omp parallel for if (n > NL_PAR_MIN / 4) schedule (static)
  for (int64_t i = 0; i < n; i++)
    {
      mask[i] = nl_rand_uniform (seed, stream, base + (guint64) i) >= rate ? scale : 0.0f;
      y[i] *= mask[i];
    }
}

/* The top layer's outputs into out. */
static void
write_output (const NlRnnArgs *a, RnnState *s, const float *lengths, float *out)
{
  int64_t b = s->b, t = s->t, h = a->units, l = a->layers - 1;
  int64_t feat = a->merge_sum ? h : a->dirs * h;

  for (int d = 0; d < a->dirs; d++)
    {
      const float *dst = s->cell[l][d].dst;
      int64_t off = a->merge_sum ? 0 : d * h;
      gboolean add = a->merge_sum && d > 0;
      if (!a->last)
        {
          scatter (dst, out, feat, off, h, b, t, d == 1, lengths, add);
          continue;
        }
      for (int64_t i = 0; i < b; i++)
        {
          int64_t len = nl_rnn_length (lengths, i, t);
          float *o = out + i * feat + off;
          const float *src = dst + (i * t + len - 1) * h;
          for (int64_t u = 0; u < h; u++)
            o[u] = (add ? o[u] : 0.0f) + (len > 0 ? src[u] : 0.0f);
        }
    }
}

/* Runs cell k of layer l on every slice at once (backward: and sums the
 * slices' weight gradients into whole's); whole's pointers cover the
 * batch. The primitives and workspaces are made before, on this thread. */
static gboolean
run_slices (RnnState *s, int64_t l, Cell *k, const NlRnnRun *whole, gboolean backward, GError **error)
{
  const NlRnnArgs *a = &s->a;
  int n = s->n_slices, g = nl_rnn_gates (a->cell), gb = nl_rnn_cell_bias_rows (a->cell);
  int64_t t = s->t, h = a->units, cin = nl_rnn_layer_in (a, l, s->c);
  int64_t nwl = cin * g * h, nwi = h * g * h;
  GError *errs[MAX_SLICES] = { 0 };

#pragma omp parallel for num_threads (n) schedule (static, 1) if (n > 1)
  for (int j = 0; j < n; j++)
    {
      int64_t b0 = s->b0[j];
      float *part = j ? s->dpart + (j - 1) * s->part_size : NULL;
      NlRnnRun r = *whole;
      r.src += b0 * t * cin, r.hx += b0 * h, r.cx += b0 * h, r.dst += b0 * t * h, r.ws = k->ws[j];
      if (backward)
        {
          r.ddst += b0 * t * h, r.dsrc += b0 * t * cin, r.dhx += b0 * h, r.dcx += b0 * h;
          if (part)
            r.dwl = part, r.dwi = part + nwl, r.dbias = part + nwl + nwi;
          nl_rnn_cell_backward (&s->prims[l > 0][j], &k->pk, &r, &errs[j]);
        }
      else
        nl_rnn_cell_forward (&s->prims[l > 0][j], &k->pk, &r, &errs[j]);
    }
  for (int j = 0; j < n; j++)
    if (errs[j])
      {
        g_propagate_error (error, errs[j]);
        for (int i = j + 1; i < n; i++)
          g_clear_error (&errs[i]);
        return FALSE;
      }
  for (int j = 1; backward && j < n; j++)
    {
      const float *part = s->dpart + (j - 1) * s->part_size;
      for (int64_t i = 0; i < nwl; i++)
        whole->dwl[i] += part[i];
      for (int64_t i = 0; i < nwi; i++)
        whole->dwi[i] += part[nwl + i];
      for (int64_t i = 0; i < gb * h; i++)
        whole->dbias[i] += part[nwl + nwi + i];
    }
  return TRUE;
}

/* Layer l's primitives for every slice, and each cell's workspaces. */
static gboolean
prepare_layer (RnnState *s, int64_t l, gboolean training, GError **error)
{
  const NlRnnArgs *a = &s->a;
  int64_t cin = nl_rnn_layer_in (a, l, s->c);
  for (int j = 0; j < s->n_slices; j++)
    {
      NlRnnPrims *p = &s->prims[l > 0][j];
      if (!nl_rnn_prims_ensure (p, a->cell, s->b0[j + 1] - s->b0[j], s->t, cin, a->units, training, error))
        return FALSE;
      for (int d = 0; training && d < a->dirs; d++)
        {
          Cell *k = &s->cell[l][d];
          k->ws[j] = nl_scratch (&k->ws[j], &k->ws_cap[j], MAX (p->ws_bytes, 1));
        }
    }
  return TRUE;
}

static gboolean
forward (NlOpCtx *c, GError **error)
{
  const NlRnnArgs *a = c->args;
  NlShape xs = nl_tensor_get_shape (c->in[0]);
  int64_t b = xs.d[0], t = xs.d[1], cin0 = xs.d[2], h = a->units;
  const float *lengths = c->host_lengths, *in_l = nl_tensor_f32 (c->in[0]);
  const float *state = c->n_data > 1 ? nl_tensor_f32 (c->in[1]) : NULL;
  RnnState *s = state_for (c, b, t, cin0);

  s->forward_done = FALSE;
  for (int64_t l = 0; l < a->layers; l++)
    {
      int64_t cin = nl_rnn_layer_in (a, l, cin0);
      if (!prepare_layer (s, l, c->training, error))
        return FALSE;
      for (int d = 0; d < a->dirs; d++)
        {
          Cell *k = &s->cell[l][d];
          NlRnnRun r = { .src = in_l, .hx = k->hx, .cx = k->cx, .dst = k->dst };
          if (d == 1 || lengths)
            {
              gather (in_l, cin, 0, k->src, cin, b, t, d == 1, lengths);
              r.src = k->src;
            }
          load_state (a, state, b, l, d, k);
          pack_cell (c, l, d, cin0, k);
          if (!run_slices (s, l, k, &r, FALSE, error))
            return FALSE;
        }
      if (l == a->layers - 1)
        break;
      for (int d = 0; d < a->dirs; d++)
        scatter (s->cell[l][d].dst, s->y[l], a->dirs * h, d * h, h, b, t, d == 1, lengths, FALSE);
      if (c->training && a->dropout > 0)
        dropout_apply (c, l, s->y[l], s->mask[l], b * t * a->dirs * h);
      in_l = s->y[l];
    }
  write_output (a, s, lengths, nl_tensor_f32 (c->out[0]));
  s->forward_done = c->training;
  return TRUE;
}

/* Direction d's output gradient at the top layer, in its copy's order. */
static void
top_out_grad (const NlRnnArgs *a, RnnState *s, const float *og, int d, const float *lengths)
{
  int64_t b = s->b, t = s->t, h = a->units;
  int64_t feat = a->merge_sum ? h : a->dirs * h, off = a->merge_sum ? 0 : d * h;

  if (!a->last)
    {
      gather (og, feat, off, s->ddst, h, b, t, d == 1, lengths);
      return;
    }
  memset (s->ddst, 0, b * t * h * sizeof (float));
  for (int64_t i = 0; i < b; i++)
    {
      int64_t len = nl_rnn_length (lengths, i, t);
      if (len > 0)
        memcpy (s->ddst + (i * t + len - 1) * h, og + i * feat + off, h * sizeof (float));
    }
}

/* Cell (l, d)'s weight and state gradients into in_grad. */
static void
store_cell_grads (NlOpCtx *c, RnnState *s, int64_t l, int d)
{
  const NlRnnArgs *a = c->args;
  NlTensor *const *wg = c->in_grad + c->n_data;
  int64_t h = a->units, cin = nl_rnn_layer_in (a, l, s->c), bo = nl_rnn_bias_offset (a, l, d);
  NlTensor *gih = wg[l == 0 ? RNN_W_L0_I2H : RNN_W_I2H];
#define SLICE(t, off) ((t) ? nl_tensor_f32 (t) + (off) : NULL)
  nl_rnn_unpack_grads (a->cell, cin, h, s->dwl, s->dwi, s->dbias, SLICE (gih, nl_rnn_i2h_offset (a, l, d, s->c)),
                       SLICE (wg[RNN_W_H2H], nl_rnn_h2h_offset (a, l, d)), SLICE (wg[RNN_B_I2H], bo),
                       SLICE (wg[RNN_B_H2H], bo));
#undef SLICE
  if (c->n_data > 1 && c->in_grad[1])
    {
      float *gs = nl_tensor_f32 (c->in_grad[1]);
      int64_t rows = nl_rnn_state_kinds (a->cell) * a->layers * a->dirs;
      for (int kind = 0; kind < nl_rnn_state_kinds (a->cell); kind++)
        for (int64_t i = 0; i < s->b; i++)
          memcpy (gs + (i * rows + nl_rnn_state_row (a, kind, l, d)) * h, (kind ? s->dcx : s->dhx) + i * h,
                  h * sizeof (float));
    }
}

static gboolean
backward (NlOpCtx *c, GError **error)
{
  const NlRnnArgs *a = c->args;
  NlShape xs = nl_tensor_get_shape (c->in[0]);
  int64_t b = xs.d[0], t = xs.d[1], cin0 = xs.d[2], h = a->units;
  const float *lengths = c->host_lengths, *og = nl_tensor_f32 (c->out_grad[0]);
  RnnState *s = state_for (c, b, t, cin0);
  const float *dy = NULL; /* gradient of layer l's output (B, T, D*H), below the top */

  if (!s->forward_done && !forward (c, error))
    return FALSE;
  for (int64_t l = a->layers - 1; l >= 0; l--)
    {
      int64_t cin = nl_rnn_layer_in (a, l, cin0);
      const float *in_l = l == 0 ? nl_tensor_f32 (c->in[0]) : s->y[l - 1];
      float *din = s->dlay[l & 1];
      for (int d = 0; d < a->dirs; d++)
        {
          Cell *k = &s->cell[l][d];
          NlRnnRun r = { .src = (d == 1 || lengths) ? k->src : in_l, .hx = k->hx, .cx = k->cx, .dst = k->dst,
                         .ddst = s->ddst, .dsrc = s->dsrc, .dhx = s->dhx, .dcx = s->dcx,
                         .dwl = s->dwl, .dwi = s->dwi, .dbias = s->dbias };
          if (dy)
            gather (dy, a->dirs * h, d * h, s->ddst, h, b, t, d == 1, lengths);
          else
            top_out_grad (a, s, og, d, lengths);
          if (!run_slices (s, l, k, &r, TRUE, error))
            return FALSE;
          store_cell_grads (c, s, l, d);
          scatter (s->dsrc, din, cin, 0, cin, b, t, d == 1, lengths, d > 0);
        }
      if (l > 0 && a->dropout > 0 && c->training)
        {
          const float *m = s->mask[l - 1];
          for (int64_t i = 0; i < b * t * cin; i++)
            din[i] *= m[i];
        }
      dy = din;
    }
  if (c->in_grad[0])
    memcpy (nl_tensor_f32 (c->in_grad[0]), dy, b * t * cin0 * sizeof (float));
  return TRUE;
}

const NlOpKernels nl_op_cpu_lstm = { .forward = forward, .backward = backward, .free_state = free_state };
const NlOpKernels nl_op_cpu_gru = { .forward = forward, .backward = backward, .free_state = free_state };
