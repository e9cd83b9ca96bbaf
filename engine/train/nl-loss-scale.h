/* nl-loss-scale.h — dynamic loss scaling for float16 training, as PyTorch's
 * GradScaler does it.
 *
 * fp16 has a narrow range: small gradients flush to zero. The loss (so every
 * gradient) is multiplied by `scale` before backward, and the gradients are
 * divided by it again before the update. The scale is a power of two, so
 * both are exact. When a step's gradients come out non-finite the scale was
 * too large: the step is skipped and the scale halved; after
 * growth_interval finite steps in a row it is doubled to use as much of
 * fp16's range as the gradients allow.
 *
 * bf16 and fp32 have float32's exponent range and need no scaling: their
 * scale is 1 and never changes. They still report a step with non-finite
 * gradients as one not to apply (and count it in skipped); what the caller
 * does then (skip it, or stop the run as diverged) is its choice. */
#pragma once

#include <glib.h>

#include "ops/nl-op.h"

G_BEGIN_DECLS

#define NL_LOSS_SCALE_DEFAULT 65536.0f  /* 2^16, PyTorch's init_scale */
/* The scale stays within [MIN, MAX]. Above 2^24 a scaled fp16 gradient
 * would overflow at anything but tiny values anyway. The floor: a scale of
 * 2^-16 already maps gradients of fp16's largest magnitude (65504) down to 1;
 * gradients still non-finite there are NaN or Inf of their own (a diverged
 * model), which no scale cures, so halving further would only lose the
 * scale the run must climb back from. The steps keep being skipped and
 * counted; the caller sees that in bad_steps. */
#define NL_LOSS_SCALE_MAX 16777216.0f   /* 2^24 */
#define NL_LOSS_SCALE_MIN (1.0f / 65536.0f) /* 2^-16 */

typedef struct {
  float scale;           /* multiply the loss gradient by this; divide the weight gradients */
  float growth_factor;   /* 2 */
  float backoff;         /* 0.5 */
  int growth_interval;   /* 2000: finite steps in a row before the scale grows */
  int good_steps;        /* finite steps in a row since the scale last changed or a skip */
  int bad_steps;         /* non-finite steps in a row (0 after a finite one) */
  guint64 skipped;       /* steps not applied so far */
  gboolean dynamic;      /* fp16: the scale moves; otherwise it stays 1 */
} NlLossScale;

/* Defaults for precision. F16: a dynamic scale starting at initial (0 means
 * NL_LOSS_SCALE_DEFAULT; clamped to [MIN, MAX] and rounded down to a power
 * of two so scaling stays exact). BF16 and F32: scale 1, fixed, initial
 * ignored. growth_factor, backoff and growth_interval may be changed after
 * this (factors > 1 and in (0, 1), interval >= 1). */
void nl_loss_scale_init (NlLossScale *ls, NlPrecision precision, float initial);

/* After backward: grads_finite says whether every weight gradient is finite.
 * Returns whether this step's update should be applied (grads_finite), and
 * moves the scale for the next step: non-finite halves it (not below MIN)
 * and restarts the count of good steps; the growth_interval-th finite step
 * in a row doubles it (not above MAX) and restarts the count. */
gboolean nl_loss_scale_update (NlLossScale *ls, gboolean grads_finite);

G_END_DECLS
