/* gelu.c — the CPU kernels of GELU (definition: ops/defs/gelu.c),
 * x * Phi(x), exact (erf) or with the tanh approximation.
 * Backward needs the input: GELU is not monotone, so the output alone does
 * not determine the slope. */
#include "ops/cpu/nl-cpu-util.h"
#include "ops/nl-gelu.h"

static gboolean
forward (NlOpCtx *c, GError **error)
{
  const float *x = nl_tensor_f32 (c->in[0]);
  float *y = nl_tensor_f32 (c->out[0]);
  int64_t n = nl_numel (c->in[0]);

  if (((const NlGeluArgs *) c->args)->approx == APPROX_ERF)
    {
#pragma omp parallel for if (n > NL_PAR_MIN / 8) schedule (static)
      for (int64_t i = 0; i < n; i++)
        y[i] = gelu_erf (x[i]);
    }
  else
    {
#pragma omp parallel for if (n > NL_PAR_MIN / 8) schedule (static)
      for (int64_t i = 0; i < n; i++)
        y[i] = gelu_tanh (x[i]);
    }
  return TRUE;
}

static gboolean
backward (NlOpCtx *c, GError **error)
{
  const float *x = nl_tensor_f32 (c->in[0]);
  const float *dy = nl_tensor_f32 (c->out_grad[0]);
  float *dx;
  int64_t n = nl_numel (c->in[0]);

  if (!c->in_grad[0])
    return TRUE;
  dx = nl_tensor_f32 (c->in_grad[0]);
  if (((const NlGeluArgs *) c->args)->approx == APPROX_ERF)
    {
#pragma omp parallel for if (n > NL_PAR_MIN / 8) schedule (static)
      for (int64_t i = 0; i < n; i++)
        dx[i] = gelu_erf_grad (x[i], dy[i]);
    }
  else
    {
#pragma omp parallel for if (n > NL_PAR_MIN / 8) schedule (static)
      for (int64_t i = 0; i < n; i++)
        dx[i] = gelu_tanh_grad (x[i], dy[i]);
    }
  return TRUE;
}

const NlOpKernels nl_op_cpu_gelu = { .forward = forward, .backward = backward };
