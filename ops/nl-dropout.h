/* nl-dropout.h — Dropout as its definition, CPU kernels (ops/cpu/dropout.c) and CUDA
 * kernels (ops/cuda/dropout.cu) see it: parameters, typed arguments. */
#pragma once

#include "ops/nl-op.h"

G_BEGIN_DECLS

enum { DROPOUT_RATE, DROPOUT_N };

typedef struct {
  float rate;
} NlDropoutArgs;

G_END_DECLS
