/* nl-sequence.h — what every sequence op (uses_lengths) reads of a
 * sample's length, on the CPU and in CUDA kernels alike. */
#pragma once

#include "ops/nl-op.h"

G_BEGIN_DECLS

/* Sample b's valid steps out of T (lengths NULL: all; clamped to [0, T]). */
NL_OP_FN int64_t
nl_sequence_length (const float *lengths, int64_t b, int64_t T)
{
  if (!lengths)
    return T;
  float l = lengths[b];
  return l <= 0.0f ? 0 : l >= (float) T ? T : (int64_t) l;
}

G_END_DECLS
