/* softmax.c — the CPU kernels of Softmax and LogSoftmax over any axis
 * (definitions: ops/defs/softmax.c).
 *
 * The tensor is viewed as (outer, len, inner) around the axis. For the last
 * axis (inner == 1) rows are contiguous; otherwise a block of up to CHUNK
 * neighbouring columns is reduced at once, so memory is still read in order.
 * Both subtract the maximum first; both backward passes read the output only. */
#include "ops/cpu/nl-cpu-util.h"
#include "ops/nl-softmax.h"

#define CHUNK 64

typedef struct {
  int64_t outer, len, inner;
} Geom;

static Geom
geom_of (const NlTensor *t, int axis)
{
  Geom g = { 1, t->shape[axis], 1 };
  for (int i = 0; i < axis; i++)
    g.outer *= t->shape[i];
  for (int i = axis + 1; i < t->ndim; i++)
    g.inner *= t->shape[i];
  return g;
}

/* One (outer index, column block) unit of work: columns k0 .. k0 + w of
 * outer slice o, or a whole row when inner == 1. */
static void
forward_unit (const float *x0, float *y0, Geom g, int64_t unit, gboolean logp)
{
  int64_t nblk = (g.inner + CHUNK - 1) / CHUNK;
  int64_t o = unit / nblk, k0 = unit % nblk * CHUNK;
  int w = (int) MIN (CHUNK, g.inner - k0);
  const float *x = x0 + o * g.len * g.inner + k0;
  float *y = y0 + o * g.len * g.inner + k0;
  int64_t L = g.len, st = g.inner;

  if (st == 1)
    {
      float m = -INFINITY, s = 0.0f;
      for (int64_t j = 0; j < L; j++)
        m = fmaxf (m, x[j]);
      if (logp)
        {
          for (int64_t j = 0; j < L; j++)
            s += expf (x[j] - m);
          /* (x - m) is exact near the max; adding m to log(s) first would
             round it to the scale of m */
          float ls = logf (s);
          for (int64_t j = 0; j < L; j++)
            y[j] = (x[j] - m) - ls;
        }
      else
        {
          for (int64_t j = 0; j < L; j++)
            {
              y[j] = expf (x[j] - m);
              s += y[j];
            }
          float r = 1.0f / s;
          for (int64_t j = 0; j < L; j++)
            y[j] *= r;
        }
      return;
    }

  float m[CHUNK], s[CHUNK];
  for (int k = 0; k < w; k++)
    {
      m[k] = -INFINITY;
      s[k] = 0.0f;
    }
  for (int64_t j = 0; j < L; j++)
    for (int k = 0; k < w; k++)
      m[k] = fmaxf (m[k], x[j * st + k]);
  if (logp)
    {
      for (int64_t j = 0; j < L; j++)
        for (int k = 0; k < w; k++)
          s[k] += expf (x[j * st + k] - m[k]);
      for (int k = 0; k < w; k++)
        s[k] = logf (s[k]);
      for (int64_t j = 0; j < L; j++)
        for (int k = 0; k < w; k++)
          y[j * st + k] = (x[j * st + k] - m[k]) - s[k];
    }
  else
    {
      for (int64_t j = 0; j < L; j++)
        for (int k = 0; k < w; k++)
          {
            float e = expf (x[j * st + k] - m[k]);
            y[j * st + k] = e;
            s[k] += e;
          }
      for (int k = 0; k < w; k++)
        s[k] = 1.0f / s[k];
      for (int64_t j = 0; j < L; j++)
        for (int k = 0; k < w; k++)
          y[j * st + k] *= s[k];
    }
}

/* softmax:     dx = y * (dy - sum(dy * y))
 * log-softmax: dx = dy - exp(y) * sum(dy) */
static void
backward_unit (const float *y0, const float *dy0, float *dx0, Geom g, int64_t unit, gboolean logp)
{
  int64_t nblk = (g.inner + CHUNK - 1) / CHUNK;
  int64_t o = unit / nblk, k0 = unit % nblk * CHUNK;
  int w = (int) MIN (CHUNK, g.inner - k0);
  int64_t base = o * g.len * g.inner + k0;
  const float *y = y0 + base, *dy = dy0 + base;
  float *dx = dx0 + base;
  int64_t L = g.len, st = g.inner;
  float s[CHUNK];

  for (int k = 0; k < w; k++)
    s[k] = 0.0f;
  if (logp)
    {
      for (int64_t j = 0; j < L; j++)
        for (int k = 0; k < w; k++)
          s[k] += dy[j * st + k];
      for (int64_t j = 0; j < L; j++)
        for (int k = 0; k < w; k++)
          dx[j * st + k] = dy[j * st + k] - expf (y[j * st + k]) * s[k];
    }
  else
    {
      for (int64_t j = 0; j < L; j++)
        for (int k = 0; k < w; k++)
          s[k] += dy[j * st + k] * y[j * st + k];
      for (int64_t j = 0; j < L; j++)
        for (int k = 0; k < w; k++)
          dx[j * st + k] = y[j * st + k] * (dy[j * st + k] - s[k]);
    }
}

static int64_t
n_units (Geom g)
{
  return g.outer * ((g.inner + CHUNK - 1) / CHUNK);
}

static void
run_forward (NlOpCtx *c, gboolean logp)
{
  const NlTensor *x = c->in[0];
  Geom g = geom_of (x, nl_softmax_axis (((const NlSoftmaxArgs *) c->args)->axis, x->ndim));
  int64_t units = n_units (g);
  const float *xp = nl_tensor_f32 (x);
  float *yp = nl_tensor_f32 (c->out[0]);

  if (g.len == 0)
    return;
#pragma omp parallel for if (nl_numel (x) > NL_PAR_MIN / 8 && units > 1) schedule (static)
  for (int64_t u = 0; u < units; u++)
    forward_unit (xp, yp, g, u, logp);
}

static void
run_backward (NlOpCtx *c, gboolean logp)
{
  const NlTensor *y = c->out[0];
  Geom g = geom_of (y, nl_softmax_axis (((const NlSoftmaxArgs *) c->args)->axis, y->ndim));
  int64_t units = n_units (g);
  const float *yp = nl_tensor_f32 (y), *dyp = nl_tensor_f32 (c->out_grad[0]);
  float *dxp;

  if (!c->in_grad[0] || g.len == 0)
    return;
  dxp = nl_tensor_f32 (c->in_grad[0]);
#pragma omp parallel for if (nl_numel (y) > NL_PAR_MIN / 8 && units > 1) schedule (static)
  for (int64_t u = 0; u < units; u++)
    backward_unit (yp, dyp, dxp, g, u, logp);
}

static gboolean
softmax_forward (NlOpCtx *c, GError **error)
{
  run_forward (c, FALSE);
  return TRUE;
}

static gboolean
softmax_backward (NlOpCtx *c, GError **error)
{
  run_backward (c, FALSE);
  return TRUE;
}

static gboolean
log_softmax_forward (NlOpCtx *c, GError **error)
{
  run_forward (c, TRUE);
  return TRUE;
}

static gboolean
log_softmax_backward (NlOpCtx *c, GError **error)
{
  run_backward (c, TRUE);
  return TRUE;
}

const NlOpKernels nl_op_cpu_softmax = { .forward = softmax_forward, .backward = softmax_backward };
const NlOpKernels nl_op_cpu_log_softmax = { .forward = log_softmax_forward, .backward = log_softmax_backward };
