/* nl-rnn.h — LSTM and GRU as their definitions (ops/defs/lstm.c,
 * ops/defs/gru.c), CPU kernels (ops/cpu/rnn.c over oneDNN) and CUDA kernels
 * (ops/cuda/rnn.cu over cuDNN) see them: parameters, typed arguments and
 * where each layer's and direction's weights lie in the five weight slots.
 *
 * Weights are in PyTorch's layout, so slicing a slot gives
 * weight_ih_l{k}[_reverse] etc. exactly: layer-major, then direction
 * (forward, reverse), gates in PyTorch's order (LSTM i,f,g,o; GRU r,z,n).
 * G gates, H units, D directions, L layers, C input features:
 *   l0_i2h_weight (D*G*H, C)            layer 0's input weights
 *   i2h_weight    ((L-1)*D*G*H, D*H)    the later layers' (absent when L = 1)
 *   h2h_weight    (L*D*G*H, H)
 *   i2h_bias      (L*D*G*H)
 *   h2h_bias      (L*D*G*H)
 * The optional state input is (B, L*D, H) for GRU and (B, 2*L*D, H) for
 * LSTM (every h0, then every c0), row l*D + d. Between layers the two
 * directions are always concatenated (the next layer reads D*H features);
 * `merge` only shapes the op's output. */
#pragma once

#include "ops/nl-op.h"

G_BEGIN_DECLS

/* Shared by both ops; LSTM has every parameter but the last. */
enum {
  RNN_UNITS,
  RNN_LAYERS,
  RNN_BIDIRECTIONAL,
  RNN_MERGE,
  RNN_DROPOUT,
  RNN_OUTPUT,
  RNN_VARIANT, /* GRU only */
  RNN_N
};

typedef enum { NL_RNN_MERGE_CONCAT, NL_RNN_MERGE_SUM } NlRnnMerge;
typedef enum { NL_RNN_OUTPUT_ALL, NL_RNN_OUTPUT_LAST } NlRnnOutput;
typedef enum { NL_GRU_LINEAR_BEFORE_RESET, NL_GRU_CLASSIC } NlGruVariant;

typedef enum {
  NL_RNN_LSTM,
  NL_RNN_GRU,         /* linear before reset: n = tanh (W_in x + b_in + r * (W_hn h + b_hn)) */
  NL_RNN_GRU_CLASSIC, /* n = tanh (W_in x + b_in + W_hn (r * h) + b_hn) */
} NlRnnCell;

/* The weight slots. */
enum { RNN_W_L0_I2H, RNN_W_I2H, RNN_W_H2H, RNN_B_I2H, RNN_B_H2H, RNN_N_WEIGHTS };

typedef struct {
  NlRnnCell cell;
  int64_t units, layers;
  int dirs;           /* 1 or 2 */
  gboolean merge_sum; /* the op's output sums the directions instead of concatenating */
  gboolean last;      /* output each direction's final state instead of every step */
  float dropout;      /* on each layer's output but the last, training only */
} NlRnnArgs;

static inline int
nl_rnn_gates (NlRnnCell cell)
{
  return cell == NL_RNN_LSTM ? 4 : 3;
}

/* Rows of the state input per layer and direction (h, and c for LSTM). */
static inline int
nl_rnn_state_kinds (NlRnnCell cell)
{
  return cell == NL_RNN_LSTM ? 2 : 1;
}

/* Input features of layer l: C for layer 0, D*H after it. */
static inline int64_t
nl_rnn_layer_in (const NlRnnArgs *a, int64_t l, int64_t c)
{
  return l == 0 ? c : a->dirs * a->units;
}

/* Offsets (in floats) of layer l, direction d's blocks within their slots:
 * its input weights (slot RNN_W_L0_I2H for l = 0, else RNN_W_I2H), its
 * recurrent weights, and its biases (both bias slots alike). */
static inline int64_t
nl_rnn_i2h_offset (const NlRnnArgs *a, int64_t l, int d, int64_t c)
{
  int64_t gh = nl_rnn_gates (a->cell) * a->units;
  return l == 0 ? d * gh * c : ((l - 1) * a->dirs + d) * gh * (a->dirs * a->units);
}

static inline int64_t
nl_rnn_h2h_offset (const NlRnnArgs *a, int64_t l, int d)
{
  int64_t gh = nl_rnn_gates (a->cell) * a->units;
  return (l * a->dirs + d) * gh * a->units;
}

static inline int64_t
nl_rnn_bias_offset (const NlRnnArgs *a, int64_t l, int d)
{
  return (l * a->dirs + d) * nl_rnn_gates (a->cell) * a->units;
}

/* Row of the state input holding layer l, direction d's h0 (kind 0) or
 * c0 (kind 1, LSTM). */
static inline int64_t
nl_rnn_state_row (const NlRnnArgs *a, int kind, int64_t l, int d)
{
  return kind * a->layers * a->dirs + l * a->dirs + d;
}

/* Sample b's valid steps: all T without lengths, clamped to [0, T] (NaN
 * counts as 0). */
static inline int64_t
nl_rnn_length (const float *lengths, int64_t b, int64_t t)
{
  if (!lengths)
    return t;
  float v = lengths[b];
  return !(v > 0) ? 0 : v >= (float) t ? t : (int64_t) v;
}

/* Shape inference of both ops (ops/defs/lstm.c). */
gboolean nl_rnn_infer (NlInferCtx *c, NlRnnCell cell, GError **error);
/* Resolves the shared parameters (ops/defs/lstm.c); GRU sets its cell after. */
void nl_rnn_resolve_common (const NlParamValue *p, NlRnnArgs *a);
int64_t nl_rnn_macs (const NlShape *out, const NlShape *weights);

G_END_DECLS
