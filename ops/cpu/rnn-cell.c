/* rnn-cell.c — one recurrent layer and direction through oneDNN's RNN
 * primitives (see nl-rnn-cell.h). The primitives are made once per shape
 * and kept in the node's state; the weights are repacked from PyTorch's
 * layout on every call (they change every step), which is a transpose of
 * G*H*(Cin + H) floats, small beside the T steps of matrix products. */
#include "ops/cpu/nl-rnn-cell.h"

/* oneDNN gate g reads PyTorch gate perm[g]: LSTM i,f,g,o are the same;
 * GRU's oneDNN u, r, o are PyTorch's z, r, n. */
static const int lstm_perm[4] = { 0, 1, 2, 3 };
static const int gru_perm[3] = { 1, 0, 2 };

static const int *
gate_perm (NlRnnCell cell)
{
  return cell == NL_RNN_LSTM ? lstm_perm : gru_perm;
}

int
nl_rnn_cell_bias_rows (NlRnnCell cell)
{
  return nl_rnn_gates (cell) + (cell == NL_RNN_GRU ? 1 : 0);
}

typedef struct {
  dnnl_memory_desc_t src, iter, wl, wi, bias, dst, wl_t, wi_t, none;
} Mds;

static void
mds_init (Mds *m, NlRnnCell cell, int64_t b, int64_t t, int64_t cin, int64_t h)
{
  int g = nl_rnn_gates (cell);
  dnnl_dims_t src = { t, b, cin }, dst = { t, b, h }, iter = { 1, 1, b, h };
  dnnl_dims_t wl = { 1, 1, cin, g, h }, wi = { 1, 1, h, g, h }, bias = { 1, 1, nl_rnn_cell_bias_rows (cell), h };

  memset (m, 0, sizeof *m);
  dnnl_memory_desc_init_by_tag (&m->src, 3, src, dnnl_f32, dnnl_ntc);
  dnnl_memory_desc_init_by_tag (&m->dst, 3, dst, dnnl_f32, dnnl_ntc);
  dnnl_memory_desc_init_by_tag (&m->iter, 4, iter, dnnl_f32, dnnl_ldnc);
  dnnl_memory_desc_init_by_tag (&m->wl, 5, wl, dnnl_f32, dnnl_ldigo);
  dnnl_memory_desc_init_by_tag (&m->wi, 5, wi, dnnl_f32, dnnl_ldigo);
  dnnl_memory_desc_init_by_tag (&m->wl_t, 5, wl, dnnl_f32, dnnl_ldgoi);
  dnnl_memory_desc_init_by_tag (&m->wi_t, 5, wi, dnnl_f32, dnnl_ldgoi);
  dnnl_memory_desc_init_by_tag (&m->bias, 4, bias, dnnl_f32, dnnl_ldgo);
}

static dnnl_status_t
fwd_desc (dnnl_rnn_desc_t *d, NlRnnCell cell, dnnl_prop_kind_t prop, const Mds *m)
{
  dnnl_rnn_direction_t dir = dnnl_unidirectional_left2right;
  if (cell == NL_RNN_LSTM)
    return dnnl_lstm_forward_desc_init (d, prop, dir, &m->src, &m->iter, &m->iter, &m->wl, &m->wi, &m->bias,
                                        &m->dst, NULL, NULL, 0);
  if (cell == NL_RNN_GRU)
    return dnnl_lbr_gru_forward_desc_init (d, prop, dir, &m->src, &m->iter, &m->wl, &m->wi, &m->bias, &m->dst,
                                           NULL, 0);
  return dnnl_gru_forward_desc_init (d, prop, dir, &m->src, &m->iter, &m->wl, &m->wi, &m->bias, &m->dst, NULL, 0);
}

static dnnl_status_t
bwd_desc (dnnl_rnn_desc_t *d, NlRnnCell cell, const Mds *m)
{
  dnnl_rnn_direction_t dir = dnnl_unidirectional_left2right;
  dnnl_prop_kind_t prop = dnnl_backward;
  if (cell == NL_RNN_LSTM)
    return dnnl_lstm_backward_desc_init (d, prop, dir, &m->src, &m->iter, &m->iter, &m->wl_t, &m->wi_t, &m->bias,
                                         &m->dst, NULL, NULL, &m->src, &m->iter, &m->iter, &m->wl, &m->wi,
                                         &m->bias, &m->dst, NULL, NULL, 0);
  if (cell == NL_RNN_GRU)
    return dnnl_lbr_gru_backward_desc_init (d, prop, dir, &m->src, &m->iter, &m->wl_t, &m->wi_t, &m->bias,
                                            &m->dst, NULL, &m->src, &m->iter, &m->wl, &m->wi, &m->bias, &m->dst,
                                            NULL, 0);
  return dnnl_gru_backward_desc_init (d, prop, dir, &m->src, &m->iter, &m->wl_t, &m->wi_t, &m->bias, &m->dst,
                                      NULL, &m->src, &m->iter, &m->wl, &m->wi, &m->bias, &m->dst, NULL, 0);
}

void
nl_rnn_prims_clear (NlRnnPrims *p)
{
  if (p->fwd)
    dnnl_primitive_destroy (p->fwd);
  if (p->bwd)
    dnnl_primitive_destroy (p->bwd);
  if (p->fwd_pd)
    dnnl_primitive_desc_destroy (p->fwd_pd);
  if (p->bwd_pd)
    dnnl_primitive_desc_destroy (p->bwd_pd);
  g_free (p->scratch);
  memset (p, 0, sizeof *p);
}

/* Attributes with a user-managed scratchpad. */
static dnnl_primitive_attr_t
user_scratch_attr (void)
{
  dnnl_primitive_attr_t attr = NULL;
  if (dnnl_primitive_attr_create (&attr) == dnnl_success)
    dnnl_primitive_attr_set_scratchpad_mode (attr, dnnl_scratchpad_mode_user);
  return attr;
}

/* The scratchpad pd needs, grown in p->scratch. */
static void
grow_scratch (NlRnnPrims *p, const_dnnl_primitive_desc_t pd)
{
  const dnnl_memory_desc_t *md = dnnl_primitive_desc_query_md (pd, dnnl_query_scratchpad_md, 0);
  size_t need = md ? dnnl_memory_desc_get_size (md) : 0;
  nl_scratch (&p->scratch, &p->scratch_cap, MAX (need, 64));
}

gboolean
nl_rnn_prims_ensure (NlRnnPrims *p, NlRnnCell cell, int64_t b, int64_t t, int64_t cin, int64_t h,
                     gboolean training, GError **error)
{
  dnnl_rnn_desc_t d;
  dnnl_primitive_attr_t attr;
  Mds m;
  gboolean ok;

  if (p->fwd && p->cell == cell && p->b == b && p->t == t && p->cin == cin && p->h == h && p->training == training)
    return TRUE;
  nl_rnn_prims_clear (p);
  mds_init (&m, cell, b, t, cin, h);
  attr = user_scratch_attr ();
  ok = nl_dnnl_check (fwd_desc (&d, cell, training ? dnnl_forward_training : dnnl_forward_inference, &m),
                      "the recurrent layer's forward descriptor", error)
       && nl_dnnl_check (dnnl_primitive_desc_create (&p->fwd_pd, &d, attr, nl_dnnl_engine (), NULL),
                         "the recurrent layer's forward primitive", error)
       && nl_dnnl_check (dnnl_primitive_create (&p->fwd, p->fwd_pd), "the recurrent layer's forward primitive",
                         error);
  if (attr)
    dnnl_primitive_attr_destroy (attr);
  if (!ok)
    {
      nl_rnn_prims_clear (p);
      return FALSE;
    }
  grow_scratch (p, p->fwd_pd);
  p->cell = cell, p->b = b, p->t = t, p->cin = cin, p->h = h, p->training = training;
  if (training)
    {
      const dnnl_memory_desc_t *ws = dnnl_primitive_desc_query_md (p->fwd_pd, dnnl_query_workspace_md, 0);
      p->ws_bytes = ws ? dnnl_memory_desc_get_size (ws) : 0;
    }
  return TRUE;
}

static gboolean
ensure_bwd (NlRnnPrims *p, GError **error)
{
  dnnl_rnn_desc_t d;
  dnnl_primitive_attr_t attr;
  Mds m;
  gboolean ok;

  if (p->bwd)
    return TRUE;
  mds_init (&m, p->cell, p->b, p->t, p->cin, p->h);
  attr = user_scratch_attr ();
  ok = nl_dnnl_check (bwd_desc (&d, p->cell, &m), "the recurrent layer's backward descriptor", error)
       && nl_dnnl_check (dnnl_primitive_desc_create (&p->bwd_pd, &d, attr, nl_dnnl_engine (), p->fwd_pd),
                         "the recurrent layer's backward primitive", error)
       && nl_dnnl_check (dnnl_primitive_create (&p->bwd, p->bwd_pd), "the recurrent layer's backward primitive",
                         error);
  if (attr)
    dnnl_primitive_attr_destroy (attr);
  if (ok)
    grow_scratch (p, p->bwd_pd);
  return ok;
}

/* Runs prim with (arg, md of pd, pointer) triples; memories wrap the
 * caller's buffers, made and dropped per call (microseconds). */
#define MAX_ARGS 20
typedef struct {
  int n;
  dnnl_exec_arg_t a[MAX_ARGS];
} Args;

static dnnl_status_t
args_add (Args *x, const_dnnl_primitive_desc_t pd, int arg, const void *ptr)
{
  const dnnl_memory_desc_t *md = dnnl_primitive_desc_query_md (pd, dnnl_query_exec_arg_md, arg);
  dnnl_memory_t mem;
  dnnl_status_t st;

  if (!ptr || !md || md->ndims == 0)
    return dnnl_success;
  st = dnnl_memory_create (&mem, md, nl_dnnl_engine (), (void *) ptr);
  if (st == dnnl_success)
    x->a[x->n++] = (dnnl_exec_arg_t) { arg, mem };
  return st;
}

static gboolean
args_run (Args *x, dnnl_primitive_t prim, dnnl_status_t st, const char *what, GError **error)
{
  if (st == dnnl_success)
    st = dnnl_primitive_execute (prim, nl_dnnl_stream (), x->n, x->a);
  if (st == dnnl_success)
    st = dnnl_stream_wait (nl_dnnl_stream ());
  for (int i = 0; i < x->n; i++)
    dnnl_memory_destroy (x->a[i].memory);
  return nl_dnnl_check (st, what, error);
}

/* The arguments both directions share: inputs, states, weights, output. */
static dnnl_status_t
args_add_io (Args *x, const_dnnl_primitive_desc_t pd, const NlRnnPrims *p, const NlRnnRun *r, const float *wl,
             const float *wi, const float *bias)
{
  dnnl_status_t st = args_add (x, pd, DNNL_ARG_SRC_LAYER, r->src);
  st = st ? st : args_add (x, pd, DNNL_ARG_SRC_ITER, r->hx);
  st = st ? st : args_add (x, pd, DNNL_ARG_SRC_ITER_C, p->cell == NL_RNN_LSTM ? r->cx : NULL);
  st = st ? st : args_add (x, pd, DNNL_ARG_WEIGHTS_LAYER, wl);
  st = st ? st : args_add (x, pd, DNNL_ARG_WEIGHTS_ITER, wi);
  st = st ? st : args_add (x, pd, DNNL_ARG_BIAS, bias);
  return st ? st : args_add (x, pd, DNNL_ARG_DST_LAYER, r->dst);
}

gboolean
nl_rnn_cell_forward (NlRnnPrims *p, const NlRnnPacked *w, const NlRnnRun *r, GError **error)
{
  const_dnnl_primitive_desc_t pd = p->fwd_pd;
  Args x = { 0 };
  dnnl_status_t st;

  st = args_add_io (&x, pd, p, r, w->wl, w->wi, w->bias);
  st = st ? st : args_add (&x, pd, DNNL_ARG_WORKSPACE, p->training ? r->ws : NULL);
  st = st ? st : args_add (&x, pd, DNNL_ARG_SCRATCHPAD, p->scratch);
  return args_run (&x, p->fwd, st, "the recurrent layer's forward", error);
}

gboolean
nl_rnn_cell_backward (NlRnnPrims *p, const NlRnnPacked *w, const NlRnnRun *r, GError **error)
{
  const_dnnl_primitive_desc_t pd;
  Args x = { 0 };
  dnnl_status_t st;
  gboolean lstm = p->cell == NL_RNN_LSTM;
  int64_t g = nl_rnn_gates (p->cell);

  if (!ensure_bwd (p, error))
    return FALSE;
  pd = p->bwd_pd;
  /* oneDNN adds into the weight gradients */
  memset (r->dwl, 0, p->cin * g * p->h * sizeof (float));
  memset (r->dwi, 0, p->h * g * p->h * sizeof (float));
  memset (r->dbias, 0, nl_rnn_cell_bias_rows (p->cell) * p->h * sizeof (float));
  st = args_add_io (&x, pd, p, r, w->wl_t, w->wi_t, w->bias);
  st = st ? st : args_add (&x, pd, DNNL_ARG_WORKSPACE, r->ws);
  st = st ? st : args_add (&x, pd, DNNL_ARG_DIFF_DST_LAYER, r->ddst);
  st = st ? st : args_add (&x, pd, DNNL_ARG_DIFF_SRC_LAYER, r->dsrc);
  st = st ? st : args_add (&x, pd, DNNL_ARG_DIFF_SRC_ITER, r->dhx);
  st = st ? st : args_add (&x, pd, DNNL_ARG_DIFF_SRC_ITER_C, lstm ? r->dcx : NULL);
  st = st ? st : args_add (&x, pd, DNNL_ARG_DIFF_WEIGHTS_LAYER, r->dwl);
  st = st ? st : args_add (&x, pd, DNNL_ARG_DIFF_WEIGHTS_ITER, r->dwi);
  st = st ? st : args_add (&x, pd, DNNL_ARG_DIFF_BIAS, r->dbias);
  st = st ? st : args_add (&x, pd, DNNL_ARG_SCRATCHPAD, p->scratch);
  return args_run (&x, p->bwd, st, "the recurrent layer's backward", error);
}

/* (G*H, n) PyTorch rows into ldigo (n, G, H) and, optionally, ldgoi (G, H, n),
 * both in oneDNN's gate order. */
static void
pack_matrix (const int *perm, int g, int64_t h, int64_t n, const float *src, float *igo, float *goi)
{
  for (int k = 0; k < g; k++)
    {
      const float *blk = src + perm[k] * h * n;
      /* a transpose in 16 x 16 tiles, so both sides stay in cache lines */
      for (int64_t o0 = 0; o0 < h; o0 += 16)
        for (int64_t i0 = 0; i0 < n; i0 += 16)
          for (int64_t i = i0; i < MIN (i0 + 16, n); i++)
            for (int64_t o = o0; o < MIN (o0 + 16, h); o++)
              igo[(i * g + k) * h + o] = blk[o * n + i];
      if (goi)
        memcpy (goi + k * h * n, blk, h * n * sizeof (float));
    }
}

void
nl_rnn_pack (NlRnnCell cell, int64_t cin, int64_t h, const float *w_ih, const float *w_hh, const float *b_ih,
             const float *b_hh, gboolean backward, NlRnnPacked *pk)
{
  const int *perm = gate_perm (cell);
  int g = nl_rnn_gates (cell);

  pack_matrix (perm, g, h, cin, w_ih, pk->wl, backward ? pk->wl_t : NULL);
  pack_matrix (perm, g, h, h, w_hh, pk->wi, backward ? pk->wi_t : NULL);
  for (int k = 0; k < g; k++)
    {
      const float *bi = b_ih + perm[k] * h, *bh = b_hh + perm[k] * h;
      /* lbr_gru keeps the candidate's recurrent bias apart (row G): it sits
       * inside the reset gate's product */
      gboolean apart = cell == NL_RNN_GRU && k == 2;
      for (int64_t o = 0; o < h; o++)
        pk->bias[k * h + o] = bi[o] + (apart ? 0.0f : bh[o]);
    }
  if (cell == NL_RNN_GRU)
    memcpy (pk->bias + 3 * h, b_hh + 2 * h, h * sizeof (float));
}

void
nl_rnn_unpack_grads (NlRnnCell cell, int64_t cin, int64_t h, const float *dwl, const float *dwi,
                     const float *dbias, float *dw_ih, float *dw_hh, float *db_ih, float *db_hh)
{
  const int *perm = gate_perm (cell);
  int g = nl_rnn_gates (cell);

  for (int k = 0; k < g; k++)
    {
      float *ih = dw_ih ? dw_ih + perm[k] * h * cin : NULL, *hh = dw_hh ? dw_hh + perm[k] * h * h : NULL;
      gboolean apart = cell == NL_RNN_GRU && k == 2;
      for (int64_t o = 0; o < h; o++)
        {
          if (ih)
            for (int64_t i = 0; i < cin; i++)
              ih[o * cin + i] = dwl[(i * g + k) * h + o];
          if (hh)
            for (int64_t i = 0; i < h; i++)
              hh[o * h + i] = dwi[(i * g + k) * h + o];
          if (db_ih)
            db_ih[perm[k] * h + o] = dbias[k * h + o];
          if (db_hh)
            db_hh[perm[k] * h + o] = apart ? dbias[3 * h + o] : dbias[k * h + o];
        }
    }
}
