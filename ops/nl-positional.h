/* nl-positional.h — PositionalEmbedding as its definition
 * (ops/defs/positional.c), CPU kernels (ops/cpu/positional.c) and CUDA
 * kernels (ops/cuda/positional.cu) see it: parameters, typed arguments, the
 * sinusoidal table's formula. */
#pragma once

#include <math.h>

#include "ops/nl-sequence.h"

G_BEGIN_DECLS

enum { POS_MODE, POS_MAX_LENGTH, POS_N };

typedef enum { NL_POS_LEARNED, NL_POS_SINUSOIDAL } NlPositionalMode;

typedef struct {
  NlPositionalMode mode;
  int64_t max_length;
} NlPositionalArgs;

/* P[t, 2i] = sin (t / 10000^(2i/C)), P[t, 2i+1] = cos (the same angle), in
 * double so both devices give the float nearest the true value. */
NL_OP_FN float
nl_positional_sinusoid (int64_t t, int64_t c, int64_t channels)
{
  double angle = (double) t / pow (10000.0, (double) (c - c % 2) / (double) channels);
  return (float) (c % 2 ? cos (angle) : sin (angle));
}

G_END_DECLS
