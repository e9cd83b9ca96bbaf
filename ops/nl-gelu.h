/* nl-gelu.h — GELU as its CPU kernels (ops/cpu/gelu.c) and CUDA kernels
 * (ops/cuda/gelu.cu) see it: parameters, typed arguments, constants. */
#pragma once

#include "ops/nl-op.h"

G_BEGIN_DECLS

enum { P_APPROX, P_N };

/* approximation, in the order of its enum strings */
typedef enum { APPROX_ERF, APPROX_TANH } NlGeluApprox;

typedef struct {
  NlGeluApprox approx;
} NlGeluArgs;

#define SQRT1_2 0.70710678118654752f    /* 1 / sqrt(2) */
#define INV_SQRT_2PI 0.39894228040143268f /* 1 / sqrt(2 pi) */
#define SQRT_2_PI 0.79788456080286536f  /* sqrt(2 / pi) */
#define TANH_C 0.044715f

G_END_DECLS
