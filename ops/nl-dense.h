/* nl-dense.h — Dense as its definition (ops/defs/dense.c), CPU kernels
 * (ops/cpu/dense.c) and CUDA kernels (ops/cuda/dense.cu) see it:
 * parameters, typed arguments, the input's matrix view. */
#pragma once

#include "ops/nl-op.h"

G_BEGIN_DECLS

enum { DENSE_UNITS, DENSE_USE_BIAS, DENSE_FLATTEN, DENSE_IN_UNITS, DENSE_N };

typedef struct {
  int64_t units, in_units; /* in_units 0: inferred from the data */
  gboolean use_bias, flatten;
} NlDenseArgs;

/* The input as a (rows, in_units) matrix. */
static inline void
nl_dense_as_matrix (const NlShape *s, gboolean flatten, int64_t *rows, int64_t *k)
{
  int64_t r = 1, c = 1;
  if (flatten)
    {
      r = s->d[0];
      for (int i = 1; i < s->ndim; i++)
        c *= s->d[i];
    }
  else
    {
      for (int i = 0; i < s->ndim - 1; i++)
        r *= s->d[i];
      c = s->d[s->ndim - 1];
    }
  *rows = r;
  *k = c;
}

G_END_DECLS
