/* nl-loss-scale.c — dynamic loss scaling (see nl-loss-scale.h). */
#include "engine/train/nl-loss-scale.h"

#include <math.h>

void
nl_loss_scale_init (NlLossScale *ls, NlPrecision precision, float initial)
{
  g_return_if_fail (ls != NULL);
  *ls = (NlLossScale) {
    .scale = 1.0f,
    .growth_factor = 2.0f,
    .backoff = 0.5f,
    .growth_interval = 2000,
    .dynamic = precision == NL_PRECISION_F16,
  };
  if (!ls->dynamic)
    return;
  if (!(initial > 0.0f) || !isfinite (initial))
    initial = NL_LOSS_SCALE_DEFAULT; /* 0, negative or NaN: the default */
  initial = CLAMP (initial, NL_LOSS_SCALE_MIN, NL_LOSS_SCALE_MAX);
  /* the power of two at or below: x = m * 2^e with m in [0.5, 1) */
  {
    int e;
    frexpf (initial, &e);
    ls->scale = ldexpf (1.0f, e - 1);
  }
}

gboolean
nl_loss_scale_update (NlLossScale *ls, gboolean grads_finite)
{
  g_return_val_if_fail (ls != NULL, FALSE);
  if (!grads_finite)
    {
      ls->skipped++;
      ls->bad_steps++;
      ls->good_steps = 0;
      if (ls->dynamic)
        ls->scale = MAX (ls->scale * ls->backoff, NL_LOSS_SCALE_MIN);
      return FALSE;
    }
  ls->bad_steps = 0;
  if (!ls->dynamic)
    return TRUE;
  if (++ls->good_steps >= ls->growth_interval)
    {
      ls->scale = MIN (ls->scale * ls->growth_factor, NL_LOSS_SCALE_MAX);
      ls->good_steps = 0;
    }
  return TRUE;
}
