/* sequence_pool.c — the CPU kernels of SequencePool (definition:
 * ops/defs/sequence_pool.c): last, mean or max over each sample's valid
 * steps. An empty sample (length 0) pools to 0. Max's backward finds the
 * winning step again from the input (the first of equal values). */
#include "ops/cpu/nl-cpu-util.h"
#include "ops/nl-sequence-pool.h"

/* The step of channel k that max picks among the first len steps. */
static int64_t
argmax_step (const float *x, int64_t len, int64_t C, int64_t k)
{
  int64_t best = 0;
  for (int64_t t = 1; t < len; t++)
    if (x[t * C + k] > x[best * C + k])
      best = t;
  return best;
}

static gboolean
forward (NlOpCtx *c, GError **error)
{
  const NlTensor *xt = c->in[0];
  int64_t B = xt->shape[0], T = xt->shape[1], C = xt->shape[2];
  NlSequencePoolMode mode = ((const NlSequencePoolArgs *) c->args)->mode;
  const float *x = nl_tensor_f32 (xt);
  float *y = nl_tensor_f32 (c->out[0]);

#pragma omp parallel for if (B * T * C > NL_PAR_MIN) schedule (static)
  for (int64_t b = 0; b < B; b++)
    {
      int64_t len = nl_sequence_length (c->host_lengths, b, T);
      const float *xb = x + b * T * C;
      float *yb = y + b * C;
      memset (yb, 0, C * sizeof (float));
      if (len == 0)
        continue;
      if (mode == NL_SEQPOOL_LAST)
        memcpy (yb, xb + (len - 1) * C, C * sizeof (float));
      else if (mode == NL_SEQPOOL_MAX)
        for (int64_t k = 0; k < C; k++)
          yb[k] = xb[argmax_step (xb, len, C, k) * C + k];
      else
        {
          for (int64_t t = 0; t < len; t++)
            for (int64_t k = 0; k < C; k++)
              yb[k] += xb[t * C + k];
          for (int64_t k = 0; k < C; k++)
            yb[k] /= (float) len;
        }
    }
  return TRUE;
}

static gboolean
backward (NlOpCtx *c, GError **error)
{
  const NlTensor *xt = c->in[0];
  int64_t B = xt->shape[0], T = xt->shape[1], C = xt->shape[2];
  NlSequencePoolMode mode = ((const NlSequencePoolArgs *) c->args)->mode;
  const float *x = nl_tensor_f32 (xt), *dy = nl_tensor_f32 (c->out_grad[0]);
  float *dx;

  if (!c->in_grad[0])
    return TRUE;
  dx = nl_tensor_f32 (c->in_grad[0]);
  memset (dx, 0, nl_numel (c->in_grad[0]) * sizeof (float));
#pragma omp parallel for if (B * T * C > NL_PAR_MIN) schedule (static)
  for (int64_t b = 0; b < B; b++)
    {
      int64_t len = nl_sequence_length (c->host_lengths, b, T);
      const float *g = dy + b * C;
      float *db = dx + b * T * C;
      if (len == 0)
        continue;
      if (mode == NL_SEQPOOL_LAST)
        memcpy (db + (len - 1) * C, g, C * sizeof (float));
      else if (mode == NL_SEQPOOL_MAX)
        for (int64_t k = 0; k < C; k++)
          db[argmax_step (x + b * T * C, len, C, k) * C + k] = g[k];
      else
        for (int64_t t = 0; t < len; t++)
          for (int64_t k = 0; k < C; k++)
            db[t * C + k] = g[k] / (float) len;
    }
  return TRUE;
}

const NlOpKernels nl_op_cpu_sequence_pool = { .forward = forward, .backward = backward };
