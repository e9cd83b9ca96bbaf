/* nl-structure.h — the structure ops (Flatten, Reshape, Concat, Add,
 * Transpose) as their definitions, CPU kernels (ops/cpu/structure.c) and CUDA kernels
 * (ops/cuda/structure.cu) see them: parameters, typed arguments. Only
 * Concat's and Transpose's kernels read a parameter. */
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

enum { TRANSPOSE_AXES, TRANSPOSE_N };

typedef struct {
  int n;                    /* 0: reverse the dimensions after the batch */
  int64_t axes[NL_MAX_DIMS]; /* output dimension k is input dimension axes[k] */
} NlTransposeArgs;

/* The permutation Transpose applies to nd dimensions (axes unset: the
 * dimensions after the batch reversed), into perm. */
NL_OP_FN void
transpose_perm (const NlTransposeArgs *a, int nd, int64_t *perm)
{
  for (int k = 0; k < nd; k++)
    perm[k] = a->n > 0 ? a->axes[k] : k == 0 ? 0 : nd - k;
}

G_END_DECLS
