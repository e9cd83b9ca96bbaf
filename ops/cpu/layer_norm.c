/* layer_norm.c — the CPU kernels of LayerNorm (definition:
 * ops/defs/layer_norm.c) over the last axis, as Gluon's LayerNorm: each
 * row of D values is normalised by its own mean and (biased) variance, then
 * scaled by gamma (D) and shifted by beta (D). No running statistics, so
 * training and predict mode compute the same thing. */
#include "ops/cpu/nl-cpu-util.h"
#include "ops/nl-layer-norm.h"

#include <omp.h>

static int
threads_for (int64_t work)
{
  return work >= NL_PAR_MIN ? nl_threads_get () : 1;
}

static gboolean
forward (NlOpCtx *c, GError **error)
{
  const int64_t dim = c->in[0]->shape[c->in[0]->ndim - 1];
  const int64_t rows = nl_numel (c->in[0]) / dim;
  const float *x = nl_tensor_f32 (c->in[0]);
  float *y = nl_tensor_f32 (c->out[0]);
  const float *gamma = c->in[1 + LN_GAMMA] ? nl_tensor_f32 (c->in[1 + LN_GAMMA]) : NULL;
  const float *beta = c->in[1 + LN_BETA] ? nl_tensor_f32 (c->in[1 + LN_BETA]) : NULL;
  float *smean = c->saved[LN_SAVED_MEAN] ? nl_tensor_f32 (c->saved[LN_SAVED_MEAN]) : NULL;
  float *sinv = c->saved[LN_SAVED_INVSTD] ? nl_tensor_f32 (c->saved[LN_SAVED_INVSTD]) : NULL;
  const float eps = ((const NlLayerNormArgs *) c->args)->epsilon;

#pragma omp parallel for num_threads (threads_for (rows * dim)) schedule (static)
  for (int64_t r = 0; r < rows; r++)
    {
      const float *xr = x + r * dim;
      float *yr = y + r * dim;
      float s = 0, ss = 0;
#pragma omp simd reduction (+ : s)
      for (int64_t i = 0; i < dim; i++)
        s += xr[i];
      const float mean = s / (float) dim;
      /* second pass about the mean: no cancellation for large offsets */
#pragma omp simd reduction (+ : ss)
      for (int64_t i = 0; i < dim; i++)
        ss += (xr[i] - mean) * (xr[i] - mean);
      const float inv = 1.0f / sqrtf (ss / (float) dim + eps);
      if (smean)
        smean[r] = mean;
      if (sinv)
        sinv[r] = inv;
#pragma omp simd
      for (int64_t i = 0; i < dim; i++)
        yr[i] = (xr[i] - mean) * inv * (gamma ? gamma[i] : 1.0f) + (beta ? beta[i] : 0.0f);
    }
  return TRUE;
}

static gboolean
backward (NlOpCtx *c, GError **error)
{
  const int64_t dim = c->in[0]->shape[c->in[0]->ndim - 1];
  const int64_t rows = nl_numel (c->in[0]) / dim;
  const float *x = nl_tensor_f32 (c->in[0]);
  const float *dy = nl_tensor_f32 (c->out_grad[0]);
  float *dx = c->in_grad[0] ? nl_tensor_f32 (c->in_grad[0]) : NULL;
  const float *gamma = c->in[1 + LN_GAMMA] ? nl_tensor_f32 (c->in[1 + LN_GAMMA]) : NULL;
  float *dgamma = c->in_grad[1 + LN_GAMMA] ? nl_tensor_f32 (c->in_grad[1 + LN_GAMMA]) : NULL;
  float *dbeta = c->in_grad[1 + LN_BETA] ? nl_tensor_f32 (c->in_grad[1 + LN_BETA]) : NULL;
  const float *smean = nl_tensor_f32 (c->saved[LN_SAVED_MEAN]), *sinv = nl_tensor_f32 (c->saved[LN_SAVED_INVSTD]);
  const int nt = threads_for (rows * dim);
  const gboolean want_w = dgamma || dbeta;
  /* gamma/beta gradients sum over rows: per-thread float partials, flushed
   * into double totals every FLUSH rows (fast and still accurate for many
   * rows), added up after the parallel loop: no atomics, same result every run */
  enum { FLUSH = 64 };
  const size_t stride = 2 * (size_t) dim;
  double *total = want_w ? g_new0 (double, nt * stride) : NULL;
  float *part = want_w ? g_new0 (float, nt * stride) : NULL;

#pragma omp parallel num_threads (nt)
  {
    const int t = omp_get_thread_num ();
    float *pg = part ? part + t * stride : NULL, *pb = pg ? pg + dim : NULL;
    double *tot = total ? total + t * stride : NULL;
    int64_t pending = 0;
#pragma omp for schedule (static)
    for (int64_t r = 0; r < rows; r++)
      {
        const float *xr = x + r * dim, *gr = dy + r * dim;
        const float mean = smean[r], inv = sinv[r];
        if (pg)
          {
#pragma omp simd
            for (int64_t i = 0; i < dim; i++)
              {
                pg[i] += gr[i] * (xr[i] - mean) * inv;
                pb[i] += gr[i];
              }
            if (++pending == FLUSH)
              {
                for (size_t i = 0; i < stride; i++)
                  tot[i] += pg[i], pg[i] = 0;
                pending = 0;
              }
          }
        if (!dx)
          continue;
        /* dx = inv * (g - mean(g) - xhat * mean(g * xhat)), g = dy * gamma */
        float sg = 0, sgx = 0;
#pragma omp simd reduction (+ : sg, sgx)
        for (int64_t i = 0; i < dim; i++)
          {
            float g = gr[i] * (gamma ? gamma[i] : 1.0f);
            sg += g;
            sgx += g * (xr[i] - mean) * inv;
          }
        const float mg = sg / (float) dim, mgx = sgx / (float) dim;
        float *dr = dx + r * dim;
#pragma omp simd
        for (int64_t i = 0; i < dim; i++)
          dr[i] = inv * (gr[i] * (gamma ? gamma[i] : 1.0f) - mg - (xr[i] - mean) * inv * mgx);
      }
    if (pg)
      for (size_t i = 0; i < stride; i++)
        tot[i] += pg[i];
  }

  if (total)
    {
      for (int t = 1; t < nt; t++)
        for (size_t i = 0; i < stride; i++)
          total[i] += total[t * stride + i];
      for (int64_t i = 0; i < dim; i++)
        {
          if (dgamma)
            dgamma[i] = (float) total[i];
          if (dbeta)
            dbeta[i] = (float) total[dim + i];
        }
      g_free (total);
      g_free (part);
    }
  return TRUE;
}

const NlOpKernels nl_op_cpu_layer_norm = { .forward = forward, .backward = backward };
