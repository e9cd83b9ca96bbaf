/* nl-softmax.h — Softmax and LogSoftmax as their definitions
 * (ops/defs/softmax.c), CPU kernels (ops/cpu/softmax.c) and CUDA kernels
 * (ops/cuda/softmax.cu) see them: parameters, typed arguments (the same
 * for both ops). */
#pragma once

#include "ops/nl-op.h"

G_BEGIN_DECLS

enum { SOFTMAX_AXIS, SOFTMAX_N };

typedef struct {
  int axis; /* as given: negative counts from the end */
} NlSoftmaxArgs;

/* The axis a counted from the front of ndim dimensions. */
static inline int
nl_softmax_axis (int a, int ndim)
{
  return a < 0 ? a + ndim : a;
}

G_END_DECLS
