/* dense.cu — Dense on CUDA: y = x W^T + b with cuBLAS, as ops/cpu/dense.c.
 *
 * W is (units, in_units) row-major, x is read as a (rows, in_units) matrix
 * (flattened per sample, or over the last axis only). cuBLAS is
 * column-major: a row-major (m, n) matrix is its column-major transpose, so
 * every row-major product C = A B is issued as C^T = B^T A^T.
 *
 * Precision (ops/nl-op.h, NlPrecision): in BF16/F16 mode x and W (and, in
 * backward, out_grad) are rounded to the half type (round to nearest even)
 * into device-allocator buffers and multiplied on tensor cores with float32 accumulation
 * and float32 output; the bias add and the bias gradient stay float32 on
 * the unrounded values. Every tensor in memory stays float32. */
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "ops/cuda/nl-cuda-gemm.cuh"
#include "ops/cuda/nl-cuda-kernel.cuh"
#include "core/cuda/nl-cuda.h"
#include "ops/nl-dense.h"
#include "ops/nl-op-registry.h"

namespace {

/* Round-to-nearest-even casts, what the CPU emulation of the half types gives. */
__device__ inline __nv_bfloat16
to_half (float v, __nv_bfloat16 *)
{
  return __float2bfloat16_rn (v);
}

__device__ inline __half
to_half (float v, __half *)
{
  return __float2half_rn (v);
}

template <typename T>
__global__ void
cast_kernel (const float *src, T *dst, int64_t n)
{
  GRID_STRIDE (i, n) dst[i] = to_half (src[i], (T *) nullptr);
}

/* y[r, u] = b[u]: the sgemm then adds onto it (beta = 1), as the CPU does */
__global__ void
bias_rows_kernel (const float *b, float *y, int64_t rows, int64_t units)
{
  GRID_STRIDE (i, rows * units) y[i] = b[i % units];
}

__global__ void
ones_kernel (float *x, int64_t n)
{
  GRID_STRIDE (i, n) x[i] = 1.0f;
}

typedef NlCudaBlasEnv Env;

/* x as a (rows, k) matrix, as as_matrix() in ops/cpu/dense.c. */
void
as_matrix (const NlOpCtx *c, int64_t *rows, int64_t *k)
{
  const NlTensor *x = c->in[0];
  int64_t r = 1, n = 1;

  if (((const NlDenseArgs *) c->args)->flatten)
    {
      r = x->shape[0];
      for (int i = 1; i < x->ndim; i++)
        n *= x->shape[i];
    }
  else
    {
      for (int i = 0; i < x->ndim - 1; i++)
        r *= x->shape[i];
      n = x->shape[x->ndim - 1];
    }
  *rows = r;
  *k = n;
}

/* Half copies of up to three float32 operands in one allocator block; NULL
 * sources are skipped. Offsets are 256-byte aligned for the tensor cores. */
typedef struct {
  void *block;
  void *half[3];
} HalfCopies;

size_t
align256 (size_t n)
{
  return (n + 255) & ~(size_t) 255;
}

gboolean
make_half_copies (const Env *e, NlPrecision prec, const float *const src[3], const int64_t n[3],
                  const char *what, HalfCopies *h, GError **error)
{
  size_t off[3], total = 0;

  h->block = NULL;
  for (int i = 0; i < 3; i++)
    {
      h->half[i] = NULL;
      off[i] = total;
      if (src[i])
        total += align256 ((size_t) n[i] * 2);
    }
  h->block = nl_cuda_alloc (e->dev, total, what, error);
  if (!h->block)
    return FALSE;
  for (int i = 0; i < 3; i++)
    {
      if (!src[i])
        continue;
      h->half[i] = (char *) h->block + off[i];
      if (n[i] == 0)
        continue;
      if (prec == NL_PRECISION_BF16)
        cast_kernel<<<grid_for (n[i]), kThreads, 0, e->stream>>> (src[i], (__nv_bfloat16 *) h->half[i], n[i]);
      else
        cast_kernel<<<grid_for (n[i]), kThreads, 0, e->stream>>> (src[i], (__half *) h->half[i], n[i]);
      if (!nl_cuda_check_launch (what, error))
        {
          nl_cuda_release (e->dev, h->block);
          h->block = NULL;
          return FALSE;
        }
    }
  return TRUE;
}

/* Column-major C (m, n) = alpha op(A) op(B) + beta C with float32
 * accumulation and a float32 C; A and B are float32 or the half type of
 * prec. CUBLAS_COMPUTE_32F keeps float32 products exact float32 (no TF32
 * unless the handle's math mode asks for it). */
gboolean
gemm (const Env *e, NlPrecision prec, cublasOperation_t ta, cublasOperation_t tb, int64_t m, int64_t n,
      int64_t k, const void *a, int64_t lda, const void *b, int64_t ldb, float beta, float *cmat, int64_t ldc,
      const char *what, GError **error)
{
  const float alpha = 1.0f;
  cudaDataType_t t = prec == NL_PRECISION_BF16 ? CUDA_R_16BF : prec == NL_PRECISION_F16 ? CUDA_R_16F : CUDA_R_32F;

  return nl_cublas_check (cublasGemmEx_64 (e->blas, ta, tb, m, n, k, &alpha, a, t, lda, b, t, ldb, &beta, cmat,
                                           CUDA_R_32F, ldc, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
                          what, error);
}

gboolean
half_mode (NlPrecision p)
{
  return p == NL_PRECISION_BF16 || p == NL_PRECISION_F16;
}

gboolean
dense_forward (NlOpCtx *c, GError **error)
{
  const NlTensor *x = c->in[0], *w = c->in[1], *b = c->in[2];
  const int64_t units = w->shape[0];
  float *y = nl_tensor_f32 (c->out[0]);
  const NlPrecision prec = half_mode (c->precision) ? c->precision : NL_PRECISION_F32;
  const void *xa = nl_tensor_f32 (x), *wa = nl_tensor_f32 (w);
  HalfCopies h = { NULL, { NULL, NULL, NULL } };
  int64_t rows, k;
  gboolean ok;
  Env e;

  as_matrix (c, &rows, &k);
  if (!enter_blas (c, &e, error))
    return FALSE;
  if (rows == 0)
    return TRUE;
  if (b)
    {
      bias_rows_kernel<<<grid_for (rows * units), kThreads, 0, e.stream>>> (nl_tensor_f32 (b), y, rows, units);
      if (!nl_cuda_check_launch ("Dense forward bias", error))
        return FALSE;
    }
  if (prec != NL_PRECISION_F32)
    {
      const float *src[3] = { nl_tensor_f32 (x), nl_tensor_f32 (w), NULL };
      const int64_t n[3] = { rows * k, units * k, 0 };
      if (!make_half_copies (&e, prec, src, n, "Dense forward (half copies)", &h, error))
        return FALSE;
      xa = h.half[0];
      wa = h.half[1];
    }
  /* Y^T (units, rows) = W (units, k) X^T (k, rows): W's row-major storage
   * is W^T column-major (ld k), so it is transposed; X's is X^T (ld k). */
  ok = gemm (&e, prec, CUBLAS_OP_T, CUBLAS_OP_N, units, rows, k, wa, k, xa, k, b ? 1.0f : 0.0f, y, units,
             "Dense forward GEMM", error);
  /* stream-ordered allocator: the block may go back before the GEMM has run */
  if (h.block)
    nl_cuda_release (e.dev, h.block);
  return ok;
}

gboolean
dense_backward (NlOpCtx *c, GError **error)
{
  const NlTensor *x = c->in[0], *w = c->in[1];
  NlTensor *dx = c->in_grad[0], *dw = c->in_grad[1], *db = c->in[2] ? c->in_grad[2] : NULL;
  const int64_t units = w->shape[0];
  const float *dy = nl_tensor_f32 (c->out_grad[0]);
  const NlPrecision prec = half_mode (c->precision) ? c->precision : NL_PRECISION_F32;
  const void *xa = nl_tensor_f32 (x), *wa = nl_tensor_f32 (w), *dya = dy;
  HalfCopies h = { NULL, { NULL, NULL, NULL } };
  int64_t rows, k;
  gboolean ok = TRUE;
  Env e;

  if (!dx && !dw && !db)
    return TRUE;
  as_matrix (c, &rows, &k);
  if (!enter_blas (c, &e, error))
    return FALSE;
  if (rows == 0)
    {
      /* sums over no rows: the CPU's sgemm with k = 0 writes zeros */
      if (dw && !nl_cuda_check (cudaMemsetAsync (nl_tensor_f32 (dw), 0, (size_t) units * k * sizeof (float),
                                                 e.stream), "Dense backward (zero dW)", error))
        return FALSE;
      if (db && !nl_cuda_check (cudaMemsetAsync (nl_tensor_f32 (db), 0, (size_t) units * sizeof (float), e.stream),
                                "Dense backward (zero db)", error))
        return FALSE;
      return TRUE;
    }

  if (prec != NL_PRECISION_F32 && (dx || dw))
    {
      /* dW needs dY and X, dX needs dY and W: round only those */
      const float *src[3] = { dy, dw ? nl_tensor_f32 (x) : NULL, dx ? nl_tensor_f32 (w) : NULL };
      const int64_t n[3] = { rows * units, rows * k, units * k };
      if (!make_half_copies (&e, prec, src, n, "Dense backward (half copies)", &h, error))
        return FALSE;
      dya = h.half[0];
      xa = h.half[1];
      wa = h.half[2];
    }

  /* dW (units, k) = dY^T X: column-major dW^T (k, units) = X^T (k, rows) dY (rows, units);
   * X's storage is X^T (ld k), dY's is dY^T (ld units), transposed. */
  if (dw)
    ok = gemm (&e, prec, CUBLAS_OP_N, CUBLAS_OP_T, k, units, rows, xa, k, dya, units, 0.0f, nl_tensor_f32 (dw), k,
               "Dense backward GEMM (dW)", error);
  /* dX (rows, k) = dY W: column-major dX^T (k, rows) = W^T (k, units) dY^T (units, rows) */
  if (ok && dx)
    ok = gemm (&e, prec, CUBLAS_OP_N, CUBLAS_OP_N, k, rows, units, wa, k, dya, units, 0.0f, nl_tensor_f32 (dx), k,
               "Dense backward GEMM (dX)", error);
  if (h.block)
    nl_cuda_release (e.dev, h.block);

  /* db = column sums of dY (float32, unrounded): dY^T (units, rows) times ones */
  if (ok && db)
    {
      const float one = 1.0f, zero = 0.0f;
      float *ones = (float *) nl_cuda_alloc (e.dev, (size_t) rows * sizeof (float), "Dense backward (bias)", error);
      if (!ones)
        return FALSE;
      ones_kernel<<<grid_for (rows), kThreads, 0, e.stream>>> (ones, rows);
      ok = nl_cuda_check_launch ("Dense backward (bias ones)", error)
           && nl_cublas_check (cublasSgemv_v2_64 (e.blas, CUBLAS_OP_N, units, rows, &one, dy, units, ones, 1, &zero,
                                                  nl_tensor_f32 (db), 1),
                               "Dense backward GEMV (db)", error);
      nl_cuda_release (e.dev, ones);
    }
  return ok;
}

} // namespace

extern "C" const NlOpKernels nl_op_cuda_dense = { dense_forward, dense_backward, NULL };
