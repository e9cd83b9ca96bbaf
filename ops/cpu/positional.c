/* positional.c — the CPU kernels of PositionalEmbedding (definition:
 * ops/defs/positional.c): y[b, t] = x[b, t] + P[t] at valid steps, 0 at
 * padded ones. The sinusoidal table is computed once per shape and cached. */
#include "ops/cpu/nl-cpu-util.h"
#include "ops/nl-positional.h"

typedef struct {
  float *table; /* T x C sinusoids */
  int64_t T, C;
} PosState;

static void
free_state (void *state)
{
  PosState *s = state;
  g_free (s->table);
  g_free (s);
}

/* The (T, C) rows added: the learned weight's first T, or the sinusoids. */
static const float *
table_of (NlOpCtx *c, int64_t T, int64_t C)
{
  PosState *s = *c->state;
  if (c->in[1])
    return nl_tensor_f32 (c->in[1]);
  if (!s)
    *c->state = s = g_new0 (PosState, 1);
  if (s->T != T || s->C != C)
    {
      g_free (s->table);
      s->table = g_new (float, MAX (T * C, 1));
      for (int64_t t = 0; t < T; t++)
        for (int64_t k = 0; k < C; k++)
          s->table[t * C + k] = nl_positional_sinusoid (t, k, C);
      s->T = T;
      s->C = C;
    }
  return s->table;
}

static gboolean
forward (NlOpCtx *c, GError **error)
{
  const NlTensor *x = c->in[0];
  int64_t B = x->shape[0], T = x->shape[1], C = x->shape[2];
  const float *xp = nl_tensor_f32 (x), *P = table_of (c, T, C);
  float *y = nl_tensor_f32 (c->out[0]);

#pragma omp parallel for if (B * T * C > NL_PAR_MIN) schedule (static)
  for (int64_t bt = 0; bt < B * T; bt++)
    {
      int64_t b = bt / T, t = bt % T;
      float *yr = y + bt * C;
      const float *xr = xp + bt * C, *pr = P + t * C;
      if (t >= nl_sequence_length (c->host_lengths, b, T))
        memset (yr, 0, C * sizeof (float));
      else
        for (int64_t k = 0; k < C; k++)
          yr[k] = xr[k] + pr[k];
    }
  return TRUE;
}

static gboolean
backward (NlOpCtx *c, GError **error)
{
  const NlTensor *dyt = c->out_grad[0];
  int64_t B = dyt->shape[0], T = dyt->shape[1], C = dyt->shape[2];
  const float *dy = nl_tensor_f32 (dyt);
  float *dx = c->in_grad[0] ? nl_tensor_f32 (c->in_grad[0]) : NULL;
  float *dw = c->in[1] && c->in_grad[1] ? nl_tensor_f32 (c->in_grad[1]) : NULL;

  if (dw)
    memset (dw, 0, nl_numel (c->in_grad[1]) * sizeof (float));
  for (int64_t b = 0; b < B; b++)
    {
      int64_t len = nl_sequence_length (c->host_lengths, b, T);
      for (int64_t t = 0; t < T; t++)
        {
          const float *g = dy + (b * T + t) * C;
          if (dx && t >= len)
            memset (dx + (b * T + t) * C, 0, C * sizeof (float));
          else if (dx)
            memcpy (dx + (b * T + t) * C, g, C * sizeof (float));
          for (int64_t k = 0; dw && t < len && k < C; k++)
            dw[t * C + k] += g[k];
        }
    }
  return TRUE;
}

const NlOpKernels nl_op_cpu_positional_embedding = { .forward = forward, .backward = backward,
                                                     .free_state = free_state };
