/* nl-attention.h — MultiHeadAttention as its definition
 * (ops/defs/attention.c), CPU kernels (ops/cpu/attention.c) and CUDA kernels
 * (ops/cuda/attention.cu) see it: parameters, weight and saved slots, typed
 * arguments, the masks both devices apply. */
#pragma once

#include "ops/nl-sequence.h"

G_BEGIN_DECLS

enum { ATT_HEADS, ATT_KEY_SIZE, ATT_UNITS, ATT_DROPOUT, ATT_CAUSAL, ATT_USE_BIAS, ATT_N };

/* weights: in[n_data + ATT_Q_WEIGHT] ...; the biases are absent without use_bias */
enum { ATT_Q_WEIGHT, ATT_K_WEIGHT, ATT_V_WEIGHT, ATT_OUT_WEIGHT,
       ATT_Q_BIAS, ATT_K_BIAS, ATT_V_BIAS, ATT_OUT_BIAS, ATT_N_WEIGHTS };

/* saved[ATT_SAVED_PROBS]: the softmax (B, heads, T, S) before dropout;
 * saved[ATT_SAVED_PROJ]: Q (B,T,hk), K (B,S,hk), V (B,S,hk) and the heads'
 * joined context (B,T,hk), one after the other (hk = heads * key_size). */
enum { ATT_SAVED_PROBS, ATT_SAVED_PROJ, ATT_N_SAVED };

typedef struct {
  int64_t heads, key_size, units; /* key_size, units 0: from the query's C */
  float dropout;
  gboolean causal, use_bias;
} NlAttentionArgs;

/* The sizes one call works on. */
typedef struct {
  int64_t B, T, S, C, Cm, heads, ks, hk, units;
  gboolean self;          /* no memory input: keys and values come from the query */
  gboolean mask_memory;   /* the lengths mask the keys (self-attention, or memory as long as the query) */
} NlAttentionGeom;

/* Whether key s is hidden from query t of a sample with `len` valid steps. */
NL_OP_FN int
nl_attention_masked (int64_t t, int64_t s, int64_t len, gboolean mask_keys, gboolean causal)
{
  return (mask_keys && s >= len) || (causal && s > t);
}

G_END_DECLS
