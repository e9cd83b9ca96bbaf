/* nl-loss-elementwise.h — the per-element formulas of the elementwise
 * losses (SigmoidBinaryCrossEntropy, L2Loss, L1Loss, HuberLoss), shared by
 * the CPU kernels (ops/cpu/losses.c) and the CUDA kernels
 * (ops/cuda/losses.cu), so both backends compute the same expressions. */
#pragma once

#include <math.h>

#include "ops/nl-op.h"

typedef enum { EL_SBCE_LOGITS, EL_SBCE_SIGMOID, EL_L2, EL_L1, EL_HUBER } ElKind;

#define SBCE_EPS 1e-12f /* Gluon's eps for from_sigmoid */

/* The loss of one prediction x against its label z (rho: Huber's). */
NL_OP_FN float
el_loss (int k, float x, float z, float rho)
{
  float d = x - z, ad = fabsf (d);
  switch (k)
    {
    case EL_SBCE_LOGITS:
      /* max(x, 0) - x z + log(1 + exp(-|x|)): finite for any x */
      return fmaxf (x, 0.0f) - x * z + log1pf (expf (-fabsf (x)));
    case EL_SBCE_SIGMOID:
      return -(logf (x + SBCE_EPS) * z + logf (1.0f - x + SBCE_EPS) * (1.0f - z));
    case EL_L2:
      return 0.5f * d * d;
    case EL_L1:
      return ad;
    case EL_HUBER:
      return ad < rho ? 0.5f / rho * d * d : ad - 0.5f * rho;
    }
  return 0;
}

/* d loss / d x */
NL_OP_FN float
el_grad (int k, float x, float z, float rho)
{
  float d = x - z;
  switch (k)
    {
    case EL_SBCE_LOGITS:
      {
        /* sigmoid(x) - z, with exp of a non-positive argument only */
        float e = expf (-fabsf (x));
        float s = x >= 0 ? 1.0f / (1.0f + e) : e / (1.0f + e);
        return s - z;
      }
    case EL_SBCE_SIGMOID:
      return -(z / (x + SBCE_EPS) - (1.0f - z) / (1.0f - x + SBCE_EPS));
    case EL_L2:
      return d;
    case EL_L1:
      return (float) ((d > 0) - (d < 0));
    case EL_HUBER:
      return fabsf (d) < rho ? d / rho : (float) ((d > 0) - (d < 0));
    }
  return 0;
}
