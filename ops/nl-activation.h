/* nl-activation.h — Activation and LeakyReLU as their CPU kernels
 * (ops/cpu/activation.c) and CUDA kernels (ops/cuda/activation.cu) see
 * them: parameters, typed arguments. */
#pragma once

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

G_END_DECLS
