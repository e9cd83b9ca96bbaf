/* nl-softmax.h — Softmax and LogSoftmax as their CPU kernels
 * (ops/cpu/softmax.c) and CUDA kernels (ops/cuda/softmax.cu) see them:
 * parameters, typed arguments (the same for both ops). */
#pragma once

#include "ops/nl-op.h"

G_BEGIN_DECLS

enum { SOFTMAX_AXIS, SOFTMAX_N };

typedef struct {
  int axis; /* as given: negative counts from the end */
} NlSoftmaxArgs;

G_END_DECLS
