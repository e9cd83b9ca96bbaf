/* nl-dense.h — Dense as its CPU kernels (ops/cpu/dense.c) and CUDA kernels
 * (ops/cuda/dense.cu) see it: parameters, typed arguments. */
#pragma once

#include "ops/nl-op.h"

G_BEGIN_DECLS

enum { DENSE_UNITS, DENSE_USE_BIAS, DENSE_FLATTEN, DENSE_IN_UNITS, DENSE_N };

typedef struct {
  int64_t units, in_units; /* in_units 0: inferred from the data */
  gboolean use_bias, flatten;
} NlDenseArgs;

G_END_DECLS
