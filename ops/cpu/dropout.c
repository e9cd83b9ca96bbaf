/* dropout.c — the CPU kernels of Dropout (definition: ops/defs/dropout.c):
 * in training, zero each element with probability
 * `rate` and scale the rest by 1 / (1 - rate); in prediction, identity.
 *
 * The mask comes from the counter-based nl_rand_uniform keyed by
 * (seed, step, element index), so a step draws the same mask whatever the
 * thread count. It is saved already scaled (0 or 1 / (1 - rate)), which makes
 * both forward and backward a single multiply. */
#include "ops/cpu/nl-cpu-util.h"
#include "ops/nl-dropout.h"

static gboolean
forward (NlOpCtx *c, GError **error)
{
  const float *x = nl_tensor_f32 (c->in[0]);
  float *y = nl_tensor_f32 (c->out[0]);
  int64_t n = nl_numel (c->in[0]);
  float rate = ((const NlDropoutArgs *) c->args)->rate;
  float scale = 1.0f / (1.0f - rate);
  guint64 seed = c->seed, stream = c->step;
  float *mask;

  if (!c->training)
    {
      if (y != x)
        memcpy (y, x, n * sizeof (float));
      return TRUE;
    }
  g_return_val_if_fail (c->saved[0] != NULL, FALSE);
  mask = nl_tensor_f32 (c->saved[0]);
#pragma omp parallel for if (n > NL_PAR_MIN / 4) schedule (static)
  for (int64_t i = 0; i < n; i++)
    {
      float m = nl_rand_uniform (seed, stream, (guint64) i) >= rate ? scale : 0.0f;
      mask[i] = m;
      y[i] = x[i] * m;
    }
  return TRUE;
}

static gboolean
backward (NlOpCtx *c, GError **error)
{
  const float *dy = nl_tensor_f32 (c->out_grad[0]);
  const float *mask;
  float *dx;
  int64_t n = nl_numel (c->out_grad[0]);

  if (!c->in_grad[0])
    return TRUE;
  dx = nl_tensor_f32 (c->in_grad[0]);
  if (!c->training)
    {
      /* forward was the identity */
      if (dx != dy)
        memcpy (dx, dy, n * sizeof (float));
      return TRUE;
    }
  mask = nl_tensor_f32 (c->saved[0]);
#pragma omp parallel for simd if (parallel: n > NL_PAR_MIN) schedule (static)
  for (int64_t i = 0; i < n; i++)
    dx[i] = dy[i] * mask[i];
  return TRUE;
}

const NlOpKernels nl_op_cpu_dropout = { .forward = forward, .backward = backward };
