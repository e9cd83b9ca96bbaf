/* nl-matmul.h — MatMul as its definition (ops/defs/matmul.c), CPU kernels
 * (ops/cpu/matmul.c) and CUDA kernels (ops/cuda/matmul.cu) see it:
 * parameters, typed arguments, the batched geometry. */
#pragma once

#include "ops/nl-op.h"

G_BEGIN_DECLS

enum { MATMUL_TRANSPOSE_A, MATMUL_TRANSPOSE_B, MATMUL_N };

typedef struct {
  gboolean transpose_a, transpose_b;
} NlMatMulArgs;

/* out[i] = op(a[i]) op(b[i]) for i < batch; op(a) is (m, k), op(b) (k, n).
 * b_shared: b is one 2-D matrix used for every i. */
typedef struct {
  int64_t batch, m, n, k;
  gboolean b_shared;
} NlMatMulGeom;

/* The geometry of a (..., M, K) times b; FALSE when the shapes do not fit. */
static inline gboolean
nl_matmul_geom (const NlShape *a, const NlShape *b, gboolean ta, gboolean tb, NlMatMulGeom *g)
{
  if (a->ndim < 2 || b->ndim < 2)
    return FALSE;
  g->batch = 1;
  for (int i = 0; i < a->ndim - 2; i++)
    g->batch *= a->d[i];
  g->m = ta ? a->d[a->ndim - 1] : a->d[a->ndim - 2];
  g->k = ta ? a->d[a->ndim - 2] : a->d[a->ndim - 1];
  g->n = tb ? b->d[b->ndim - 2] : b->d[b->ndim - 1];
  g->b_shared = b->ndim == 2 && a->ndim > 2;
  if ((tb ? b->d[b->ndim - 1] : b->d[b->ndim - 2]) != g->k)
    return FALSE;
  if (!g->b_shared)
    {
      if (b->ndim != a->ndim)
        return FALSE;
      for (int i = 0; i < a->ndim - 2; i++)
        if (a->d[i] != b->d[i])
          return FALSE;
    }
  return TRUE;
}

G_END_DECLS
