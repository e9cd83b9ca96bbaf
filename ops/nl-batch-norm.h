/* nl-batch-norm.h — BatchNorm as its definition, CPU kernels (ops/cpu/batch_norm.c)
 * and CUDA kernels (ops/cuda/batch_norm.cu) see it: parameters, slots,
 * typed arguments. */
#pragma once

#include "ops/nl-op.h"

G_BEGIN_DECLS

enum { BN_AXIS, BN_MOMENTUM, BN_EPSILON, BN_CENTER, BN_SCALE, BN_USE_GLOBAL_STATS, BN_N };

enum { BN_GAMMA, BN_BETA }; /* weights: in[1 + BN_GAMMA] ...; either may be absent */
enum { BN_RUNNING_MEAN, BN_RUNNING_VAR }; /* aux: the running statistics */
enum { BN_SAVED_MEAN, BN_SAVED_INVSTD }; /* saved: the batch's mean and inverse std */

typedef struct {
  int64_t axis;
  float momentum, epsilon;
  gboolean center, scale, use_global_stats;
} NlBatchNormArgs;

G_END_DECLS
