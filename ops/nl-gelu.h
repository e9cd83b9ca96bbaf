/* nl-gelu.h — GELU as its definition, CPU kernels (ops/cpu/gelu.c) and CUDA kernels
 * (ops/cuda/gelu.cu) see it: parameters, typed arguments, constants and
 * the per-element formulas both compute. */
#pragma once

#include <math.h>

#include "ops/nl-op.h"

G_BEGIN_DECLS

enum { GELU_APPROX, GELU_N };

/* approximation, in the order of its enum strings */
typedef enum { APPROX_ERF, APPROX_TANH } NlGeluApprox;

typedef struct {
  NlGeluApprox approx;
} NlGeluArgs;

#define SQRT1_2 0.70710678118654752f    /* 1 / sqrt(2) */
#define INV_SQRT_2PI 0.39894228040143268f /* 1 / sqrt(2 pi) */
#define SQRT_2_PI 0.79788456080286536f  /* sqrt(2 / pi) */
#define TANH_C 0.044715f

/* x * Phi(x) */
NL_OP_FN float
gelu_erf (float v)
{
  return 0.5f * v * (1.0f + erff (v * SQRT1_2));
}

NL_OP_FN float
gelu_tanh (float v)
{
  return 0.5f * v * (1.0f + tanhf (SQRT_2_PI * (v + TANH_C * v * v * v)));
}

/* dy * d/dx x Phi(x) = dy * (Phi(x) + x phi(x)) */
NL_OP_FN float
gelu_erf_grad (float v, float dy)
{
  float cdf = 0.5f * (1.0f + erff (v * SQRT1_2));
  float pdf = INV_SQRT_2PI * expf (-0.5f * v * v);
  return dy * (cdf + v * pdf);
}

NL_OP_FN float
gelu_tanh_grad (float v, float dy)
{
  float t = tanhf (SQRT_2_PI * (v + TANH_C * v * v * v));
  float du = SQRT_2_PI * (1.0f + 3.0f * TANH_C * v * v);
  return dy * (0.5f * (1.0f + t) + 0.5f * v * (1.0f - t * t) * du);
}

G_END_DECLS
