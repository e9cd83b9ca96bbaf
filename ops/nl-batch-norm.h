/* nl-batch-norm.h — BatchNorm as its CPU kernels (ops/cpu/batch_norm.c)
 * and CUDA kernels (ops/cuda/batch_norm.cu) see it: parameters, slots,
 * typed arguments. */
#pragma once

#include "ops/nl-op.h"

G_BEGIN_DECLS

enum { P_AXIS, P_MOMENTUM, P_EPSILON, P_CENTER, P_SCALE, P_USE_GLOBAL_STATS, P_N };

enum { W_GAMMA, W_BETA };    /* weights: in[1 + W_...]; either may be absent */
enum { A_MEAN, A_VAR };      /* aux: the running statistics */
enum { S_MEAN, S_INVSTD };   /* saved: the batch's mean and inverse std */

typedef struct {
  int64_t axis;
  float momentum, epsilon;
  gboolean center, scale, use_global_stats;
} NlBatchNormArgs;

G_END_DECLS
