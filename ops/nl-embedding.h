/* nl-embedding.h — Embedding as its definition, CPU kernels (ops/cpu/embedding.c) and
 * CUDA kernels (ops/cuda/embedding.cu) see it: parameters, typed arguments. */
#pragma once

#include "ops/nl-op.h"

G_BEGIN_DECLS

enum { EMB_INPUT_DIM, EMB_OUTPUT_DIM, EMB_PADDING_INDEX, EMB_N };

typedef struct {
  int64_t input_dim;  /* vocabulary size */
  int64_t output_dim; /* vector length */
  int64_t padding_index; /* this index reads a zero vector and trains nothing; -1: none */
} NlEmbeddingArgs;

G_END_DECLS
