/* nl-layer-norm.h — LayerNorm as its definition, CPU kernels (ops/cpu/layer_norm.c)
 * and CUDA kernels (ops/cuda/layer_norm.cu) see it: parameters, slots,
 * typed arguments. */
#pragma once

#include "ops/nl-op.h"

G_BEGIN_DECLS

enum { LN_AXIS, LN_EPSILON, LN_CENTER, LN_SCALE, LN_N };

enum { LN_GAMMA, LN_BETA }; /* weights: in[1 + LN_GAMMA] ...; either may be absent */
enum { LN_SAVED_MEAN, LN_SAVED_INVSTD }; /* saved: each row's mean and inverse std */

typedef struct {
  int64_t axis;
  float epsilon;
  gboolean center, scale;
} NlLayerNormArgs;

G_END_DECLS
