/* nl-cuda-gemm.cuh — row-major float32 products on cuBLAS for the ops that
 * multiply activations by activations (MatMul, MultiHeadAttention), with
 * the arguments of the CPU's nl_sgemm (ops/cpu/nl-gemm.h) plus batch
 * strides. cuBLAS is column-major: a row-major (m, n) matrix is its
 * column-major transpose, so C = op(A) op(B) is issued as
 * C^T = op(B)^T op(A)^T. CUBLAS_COMPUTE_32F: exact float32 products, no
 * TF32. Included by .cu files only. */
#pragma once

#include <cublas_v2.h>

#include "core/cuda/nl-cuda.h"
#include "ops/cuda/nl-cuda-kernel.cuh"

namespace {

/* What a cuBLAS op's kernels need of the context: its device, its one
 * stream and the cuBLAS handle bound to that stream. */
struct NlCudaBlasEnv
{
  NlCudaCtx *dev;
  cudaStream_t stream;
  cublasHandle_t blas;
};

/* enter() for an op that calls cuBLAS: the device made current, its stream
 * and its handle. */
inline gboolean
enter_blas (const NlOpCtx *c, NlCudaBlasEnv *e, GError **error)
{
  e->dev = cuda_ctx (c);
  if (!enter (c, &e->stream, error))
    return FALSE;
  e->blas = (cublasHandle_t) nl_cuda_ctx_cublas (e->dev);
  return TRUE;
}

/* C[i] = alpha op(A[i]) op(B[i]) + beta C[i] for i < batch; ta, tb 'N' or
 * 'T'; sa, sb, sc the strides between the batch's matrices (sa or sb 0: one
 * matrix shared by all). sc 0 (one C for every i) sums the products one
 * after the other, beta applying to the first only. */
inline gboolean
gemm_rm (cublasHandle_t blas, char ta, char tb, int64_t m, int64_t n, int64_t k, float alpha, const float *a,
         int64_t lda, int64_t sa, const float *b, int64_t ldb, int64_t sb, float beta, float *c, int64_t ldc,
         int64_t sc, int64_t batch, const char *what, GError **error)
{
  cublasOperation_t oa = ta == 'T' ? CUBLAS_OP_T : CUBLAS_OP_N, ob = tb == 'T' ? CUBLAS_OP_T : CUBLAS_OP_N;

  if (m <= 0 || n <= 0 || batch <= 0)
    return TRUE;
  if (sc == 0 && batch > 1)
    {
      for (int64_t i = 0; i < batch; i++)
        {
          float bi = i == 0 ? beta : 1.0f;
          if (!nl_cublas_check (cublasSgemm_64 (blas, ob, oa, n, m, k, &alpha, b + i * sb, ldb, a + i * sa, lda, &bi,
                                                c, ldc),
                                what, error))
            return FALSE;
        }
      return TRUE;
    }
  return nl_cublas_check (cublasSgemmStridedBatched_64 (blas, ob, oa, n, m, k, &alpha, b, ldb, sb, a, lda, sa, &beta,
                                                        c, ldc, sc, batch),
                          what, error);
}

} // namespace
