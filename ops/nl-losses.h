/* nl-losses.h — the losses as their definitions, CPU kernels (ops/cpu/losses.c) and
 * CUDA kernels (ops/cuda/losses.cu) see them: parameters, typed arguments.
 * The elementwise losses' per-element formulas are in nl-loss-elementwise.h. */
#pragma once

#include "ops/nl-loss-elementwise.h"
#include "ops/nl-op.h"

G_BEGIN_DECLS

/* SoftmaxCrossEntropy */
enum { SCE_AXIS, SCE_SPARSE_LABEL, SCE_FROM_LOGITS, SCE_N };

typedef struct {
  int64_t axis;
  gboolean sparse_label, from_logits;
} NlSceArgs;

/* SigmoidBinaryCrossEntropy */
enum { SBCE_FROM_SIGMOID, SBCE_N };

typedef struct {
  ElKind kind; /* EL_SBCE_SIGMOID with from_sigmoid, else EL_SBCE_LOGITS */
} NlSbceArgs;

/* HuberLoss */
enum { HUBER_RHO, HUBER_N };

typedef struct {
  float rho;
} NlHuberArgs;

G_END_DECLS
