/* nl-activation.h — Activation, LeakyReLU, Clip, PReLU and Shrink as their definitions, CPU kernels
 * (ops/cpu/activation.c) and CUDA kernels (ops/cuda/activation.cu) see
 * them: parameters, typed arguments, and the per-element formulas both
 * compute. The first four act_types' backward (and LeakyReLU's) is written
 * in terms of the output y, so they may run in place; silu, mish,
 * hardswish and tanhshrink are not invertible from y cheaply, and their
 * backward reads the input x (Activation's needs_for says which). Fixed
 * constants are PyTorch's defaults: elu's alpha 1, hardsigmoid x / 6 + 1/2
 * (ONNX HardSigmoid's alpha 1/6), hardtanh's [-1, 1]. */
#pragma once

#include <math.h>

#include "ops/nl-op.h"

G_BEGIN_DECLS

/* Activation's act_type, in the order of its enum strings */
typedef enum {
  ACT_RELU, ACT_SIGMOID, ACT_TANH, ACT_SOFTRELU, ACT_ELU, ACT_SELU, ACT_SILU, ACT_MISH, ACT_SOFTSIGN,
  ACT_HARDSIGMOID, ACT_HARDSWISH, ACT_RELU6, ACT_HARDTANH, ACT_LOGSIGMOID, ACT_TANHSHRINK, ACT_N_TYPES
} NlActType;

/* SELU's constants (Klambauer et al.), as PyTorch and ONNX's Selu */
#define ACT_SELU_ALPHA 1.67326324235437728481f
#define ACT_SELU_SCALE 1.05070098735548049342f

enum { P_ACT_TYPE, P_ACT_N };

typedef struct {
  NlActType act_type;
} NlActivationArgs;

enum { P_ALPHA, P_LEAKY_N };

typedef struct {
  float alpha;
} NlLeakyReluArgs;

enum { P_CLIP_MIN, P_CLIP_MAX, P_CLIP_N };

typedef struct {
  float lo, hi;
} NlClipArgs;

enum { P_SHRINK_LAMBD, P_SHRINK_BIAS, P_SHRINK_N };

typedef struct {
  float lambd, bias;
} NlShrinkArgs;

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

/* Clip: lo <= hi, so y is strictly inside exactly when x is (a NaN gives lo) */
NL_OP_FN float
clip_value (float x, float lo, float hi)
{
  return fminf (fmaxf (x, lo), hi);
}

NL_OP_FN float
clip_grad (float y, float dy, float lo, float hi)
{
  return y > lo && y < hi ? dy : 0.0f;
}

/* PReLU: a slope per channel (axis 1); its backward reads x (a negative
 * slope flips the sign, so y does not tell the side) */
NL_OP_FN float
prelu_value (float x, float a)
{
  return x > 0.0f ? x : a * x;
}

NL_OP_FN float
prelu_grad (float x, float dy, float a)
{
  return x > 0.0f ? dy : a * dy;
}

/* Shrink (ONNX's): 0 inside [-lambd, lambd], x -+ bias outside (bias =
 * lambd: Softshrink, 0: Hardshrink); its backward reads x, since with
 * bias > lambd y does not tell the side */
NL_OP_FN float
shrink_value (float x, float lambd, float bias)
{
  return x < -lambd ? x + bias : x > lambd ? x - bias : 0.0f;
}

NL_OP_FN float
shrink_grad (float x, float dy, float lambd)
{
  return x < -lambd || x > lambd ? dy : 0.0f;
}

/* ---- the act_types after softrelu: one switch per element ---- */

/* Whether act_type t's backward reads the input x rather than the output y */
NL_OP_FN int
act_needs_input (int t)
{
  return t == ACT_SILU || t == ACT_MISH || t == ACT_HARDSWISH || t == ACT_TANHSHRINK;
}

NL_OP_FN float
act_hardsigmoid (float x)
{
  return fminf (fmaxf (x * (1.0f / 6.0f) + 0.5f, 0.0f), 1.0f);
}

NL_OP_FN float
act_apply (int t, float x)
{
  switch (t)
    {
    case ACT_RELU: return act_relu (x);
    case ACT_SIGMOID: return act_sigmoid (x);
    case ACT_TANH: return tanhf (x);
    case ACT_SOFTRELU: return act_softrelu (x);
    case ACT_ELU: return x > 0.0f ? x : expm1f (x);
    case ACT_SELU: return ACT_SELU_SCALE * (x > 0.0f ? x : ACT_SELU_ALPHA * expm1f (x));
    case ACT_SILU: return x * act_sigmoid (x);
    case ACT_MISH: return x * tanhf (act_softrelu (x));
    case ACT_SOFTSIGN: return x / (1.0f + fabsf (x));
    case ACT_HARDSIGMOID: return act_hardsigmoid (x);
    case ACT_HARDSWISH: return x * act_hardsigmoid (x);
    case ACT_RELU6: return fminf (fmaxf (x, 0.0f), 6.0f);
    case ACT_HARDTANH: return fminf (fmaxf (x, -1.0f), 1.0f);
    /* -softrelu(-x), without overflow */
    case ACT_LOGSIGMOID: return fminf (x, 0.0f) - log1pf (expf (-fabsf (x)));
    default: return x - tanhf (x); /* ACT_TANHSHRINK */
    }
}

/* dx from the output y, for the types act_needs_input says no to. elu's
 * and selu's y > 0 exactly when x > 0; their derivative below 0 is y plus
 * the scale; logsigmoid' = 1 - sigmoid(x) = 1 - e^y. */
NL_OP_FN float
act_grad_y (int t, float y, float dy)
{
  switch (t)
    {
    case ACT_RELU: return act_relu_grad (y, dy);
    case ACT_SIGMOID: return act_sigmoid_grad (y, dy);
    case ACT_TANH: return act_tanh_grad (y, dy);
    case ACT_SOFTRELU: return act_softrelu_grad (y, dy);
    case ACT_ELU: return y > 0.0f ? dy : dy * (y + 1.0f);
    case ACT_SELU: return y > 0.0f ? dy * ACT_SELU_SCALE : dy * (y + ACT_SELU_SCALE * ACT_SELU_ALPHA);
    case ACT_SOFTSIGN: return dy * (1.0f - fabsf (y)) * (1.0f - fabsf (y));
    case ACT_HARDSIGMOID: return y > 0.0f && y < 1.0f ? dy * (1.0f / 6.0f) : 0.0f;
    case ACT_RELU6: return y > 0.0f && y < 6.0f ? dy : 0.0f;
    case ACT_HARDTANH: return y > -1.0f && y < 1.0f ? dy : 0.0f;
    default: return -dy * expm1f (y); /* ACT_LOGSIGMOID */
    }
}

/* dx from the input x, for the types act_needs_input says yes to */
NL_OP_FN float
act_grad_x (int t, float x, float dy)
{
  float s, th;
  switch (t)
    {
    case ACT_SILU:
      s = act_sigmoid (x);
      return dy * s * (1.0f + x * (1.0f - s));
    case ACT_MISH:
      th = tanhf (act_softrelu (x));
      return dy * (th + x * (1.0f - th * th) * act_sigmoid (x));
    case ACT_HARDSWISH:
      return x < -3.0f ? 0.0f : x > 3.0f ? dy : dy * (x * (1.0f / 3.0f) + 0.5f);
    default: /* ACT_TANHSHRINK */
      th = tanhf (x);
      return dy * th * th;
    }
}

G_END_DECLS
