/* nl-structure.h — the structure ops (Flatten, Reshape, Concat, Add) as
 * their CPU kernels (ops/cpu/structure.c) and CUDA kernels
 * (ops/cuda/structure.cu) see them: parameters, typed arguments. Only
 * Concat's kernels read a parameter. */
#pragma once

#include "ops/nl-op.h"

G_BEGIN_DECLS

enum { RESHAPE_SHAPE, RESHAPE_N };

enum { CONCAT_DIM, CONCAT_N };

typedef struct {
  int dim; /* as given: negative counts from the end */
} NlConcatArgs;

/* Concat's dim as an index into ndim dimensions (out of range if bad) */
NL_OP_FN int
concat_axis (int dim, int ndim)
{
  return dim < 0 ? dim + ndim : dim;
}

G_END_DECLS
