/* nl-activation.h — Activation and LeakyReLU as their definitions, CPU kernels
 * (ops/cpu/activation.c) and CUDA kernels (ops/cuda/activation.cu) see
 * them: parameters, typed arguments, and the per-element formulas both
 * compute. Every backward is written in terms of the output y. */
#pragma once

#include <math.h>

#include "ops/nl-op.h"

G_BEGIN_DECLS

/* Activation's act_type, in the order of its enum strings */
typedef enum { ACT_RELU, ACT_SIGMOID, ACT_TANH, ACT_SOFTRELU } NlActType;

enum { P_ACT_TYPE, P_ACT_N };

typedef struct {
  NlActType act_type;
} NlActivationArgs;

enum { P_ALPHA, P_LEAKY_N };

typedef struct {
  float alpha;
} NlLeakyReluArgs;

NL_OP_FN float
act_relu (float x)
{
  return x > 0.0f ? x : 0.0f;
}

NL_OP_FN float
act_sigmoid (float x)
{
  return 1.0f / (1.0f + expf (-x));
}

/* log(1 + e^x) = max(x, 0) + log1p(e^-|x|): no overflow for large x */
NL_OP_FN float
act_softrelu (float x)
{
  return fmaxf (x, 0.0f) + log1pf (expf (-fabsf (x)));
}

NL_OP_FN float
act_relu_grad (float y, float dy)
{
  return y > 0.0f ? dy : 0.0f;
}

NL_OP_FN float
act_sigmoid_grad (float y, float dy)
{
  return dy * y * (1.0f - y);
}

NL_OP_FN float
act_tanh_grad (float y, float dy)
{
  return dy * (1.0f - y * y);
}

/* sigmoid(x) = 1 - exp(-softrelu(x)); -expm1 keeps it exact for tiny y */
NL_OP_FN float
act_softrelu_grad (float y, float dy)
{
  return -dy * expm1f (-y);
}

/* Two selects rather than x > 0 ? x : alpha * x, which stays a branch on
 * the CPU (the multiply might trap); a NaN input gives 0 on both devices. */
NL_OP_FN float
leaky_relu (float x, float alpha)
{
  return (x > 0.0f ? x : 0.0f) + alpha * (x < 0.0f ? x : 0.0f);
}

/* alpha >= 0, so y > 0 exactly when x > 0 (alpha = 0: the gradient is 0 either way) */
NL_OP_FN float
leaky_relu_grad (float y, float dy, float alpha)
{
  return (y > 0.0f ? dy : 0.0f) + alpha * (y > 0.0f ? 0.0f : dy);
}

G_END_DECLS
