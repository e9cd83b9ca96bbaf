/* nl-sequence-pool.h — SequencePool as its definition
 * (ops/defs/sequence_pool.c), CPU kernels (ops/cpu/sequence_pool.c) and CUDA
 * kernels (ops/cuda/sequence_pool.cu) see it: parameters, typed arguments. */
#pragma once

#include "ops/nl-sequence.h"

G_BEGIN_DECLS

enum { SEQPOOL_MODE, SEQPOOL_N };

typedef enum { NL_SEQPOOL_LAST, NL_SEQPOOL_MEAN, NL_SEQPOOL_MAX } NlSequencePoolMode;

typedef struct {
  NlSequencePoolMode mode;
} NlSequencePoolArgs;

G_END_DECLS
