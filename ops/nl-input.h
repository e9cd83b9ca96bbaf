/* nl-input.h — Input's parameter. Its kernels (ops/cpu/input.c,
 * ops/cuda/input.cu) read none: the shape is checked in shape inference. */
#pragma once

#include "ops/nl-op.h"

G_BEGIN_DECLS

enum { INPUT_SHAPE, INPUT_LENGTHS, INPUT_N };

/* Input's `lengths`: where a batch's per-sample sequence lengths come from
 * (ops/nl-op.h's ctx->lengths). */
typedef enum {
  NL_INPUT_LENGTHS_FULL,    /* every sample fills its T steps: no lengths */
  NL_INPUT_LENGTHS_NONZERO, /* a sample's length is 1 + the last step along axis 1 with any
                               non-zero value (token ids, <pad> = 0); at least 1 */
} NlInputLengths;

G_END_DECLS
