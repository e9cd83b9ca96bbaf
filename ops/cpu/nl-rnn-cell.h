/* nl-rnn-cell.h — one recurrent layer in one direction through oneDNN's
 * RNN primitives (lstm, gru = the classic GRU, lbr_gru), as ops/cpu/rnn.c
 * drives it: a single-layer, left-to-right primitive over (B, T, Cin)
 * batch-first data. The reverse direction is the same primitive on each
 * sample reversed within its own length (rnn.c gathers), since oneDNN
 * knows no per-sample lengths. */
#pragma once

#include "ops/cpu/nl-cpu-util.h"
#include "ops/nl-rnn.h"

G_BEGIN_DECLS

/* The primitives of one shape (B, T, Cin -> H), made on first use. */
typedef struct {
  NlRnnCell cell;
  int64_t b, t, cin, h;
  gboolean training;
  dnnl_primitive_desc_t fwd_pd, bwd_pd;
  dnnl_primitive_t fwd, bwd;
  size_t ws_bytes; /* training forward's workspace */
  /* user-managed scratchpad, one per NlRnnPrims: oneDNN's own is one
   * process-wide buffer, and the batch's slices run at once */
  void *scratch;
  size_t scratch_cap;
} NlRnnPrims;

/* One cell's weights, gates in oneDNN's order (GRU: u, r, o; PyTorch's
 * r, z, n), as the primitives read them: ldigo for forward, ldgoi for
 * backward, biases summed where oneDNN has one (lbr_gru: 4 rows, the last
 * the recurrent candidate bias b_hn). */
typedef struct {
  float *wl, *wi, *bias;         /* forward: (Cin, G, H), (H, G, H), (Gb, H) */
  float *wl_t, *wi_t;            /* backward: (G, H, Cin), (G, H, H) */
} NlRnnPacked;

/* One direction's tensors for one run (B, T batch-first throughout). */
typedef struct {
  const float *src;   /* (B, T, Cin) */
  const float *hx;    /* (B, H) initial state */
  const float *cx;    /* (B, H) LSTM initial cell */
  float *dst;         /* (B, T, H) */
  void *ws;           /* training workspace, prims->ws_bytes */
  /* backward */
  const float *ddst;  /* (B, T, H) */
  float *dsrc, *dhx, *dcx;
  float *dwl, *dwi, *dbias; /* oneDNN layouts ldigo and (Gb, H) */
} NlRnnRun;

/* Bias rows oneDNN keeps: G, or G + 1 for lbr_gru. */
int nl_rnn_cell_bias_rows (NlRnnCell cell);
/* Sets up prims for the shape (destroying what it held for another);
 * builds the forward primitive. */
gboolean nl_rnn_prims_ensure (NlRnnPrims *p, NlRnnCell cell, int64_t b, int64_t t, int64_t cin, int64_t h,
                              gboolean training, GError **error);
void nl_rnn_prims_clear (NlRnnPrims *p);
gboolean nl_rnn_cell_forward (NlRnnPrims *p, const NlRnnPacked *w, const NlRnnRun *r, GError **error);
/* Writes dsrc, dhx, dcx, dwl, dwi, dbias (overwritten, not accumulated). */
gboolean nl_rnn_cell_backward (NlRnnPrims *p, const NlRnnPacked *w, const NlRnnRun *r, GError **error);

/* PyTorch-layout weights of one cell (w_ih (G*H, Cin), w_hh (G*H, H),
 * b_ih, b_hh (G*H)) into pk's buffers; backward: also the ldgoi copies. */
void nl_rnn_pack (NlRnnCell cell, int64_t cin, int64_t h, const float *w_ih, const float *w_hh,
                  const float *b_ih, const float *b_hh, gboolean backward, NlRnnPacked *pk);
/* oneDNN's weight gradients back into PyTorch's layout (any pointer NULL:
 * that gradient is not wanted). */
void nl_rnn_unpack_grads (NlRnnCell cell, int64_t cin, int64_t h, const float *dwl, const float *dwi,
                          const float *dbias, float *dw_ih, float *dw_hh, float *db_ih, float *db_hh);

G_END_DECLS
