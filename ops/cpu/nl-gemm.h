/* nl-gemm.h — the one sgemm Dense and Conv2D call.
 *
 * oneDNN's sgemm rather than OpenBLAS: on our 2-core AVX-512 machines it is
 * as fast or faster for the layer shapes we train, and it threads with
 * OpenMP like every other kernel. OpenBLAS keeps its own pthread pool whose
 * workers spin after each call; alternating it with OpenMP regions leaves
 * three busy threads on two cores. Called inside an OpenMP parallel region,
 * dnnl_sgemm runs on the calling thread only, which the convolution relies
 * on to run one image per thread. */
#pragma once

#include <dnnl.h>
#include <stdint.h>

/* Row-major C = alpha * op(A) * op(B) + beta * C; ta/tb are 'N' or 'T'.
 * Returns FALSE only if oneDNN fails (out of memory for its packing). */
static inline gboolean
nl_sgemm (char ta, char tb, int64_t m, int64_t n, int64_t k, float alpha,
          const float *a, int64_t lda, const float *b, int64_t ldb,
          float beta, float *c, int64_t ldc)
{
  if (m <= 0 || n <= 0)
    return TRUE;
  if (k <= 0)
    {
      /* C = beta * C; oneDNN rejects k == 0 */
      for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++)
          c[i * ldc + j] = beta == 0.0f ? 0.0f : beta * c[i * ldc + j];
      return TRUE;
    }
  return dnnl_sgemm (ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc) == dnnl_success;
}
