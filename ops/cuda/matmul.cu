/* matmul.cu — MatMul on CUDA: the products of ops/cpu/matmul.c as cuBLAS
 * strided-batched sgemms (nl-cuda-gemm.cuh). A shared 2-D b's gradient is
 * one product over every row when a is not transposed, else a sum of one
 * product per batch entry. */
#include <cuda_runtime.h>

#include "ops/cuda/nl-cuda-gemm.cuh"
#include "ops/cuda/nl-cuda-kernel.cuh"
#include "ops/nl-matmul.h"

namespace {

void
geom_of (const NlOpCtx *c, NlMatMulGeom *g)
{
  const NlMatMulArgs *a = (const NlMatMulArgs *) c->args;
  NlShape sa = nl_tensor_get_shape (c->in[0]), sb = nl_tensor_get_shape (c->in[1]);
  nl_matmul_geom (&sa, &sb, a->transpose_a, a->transpose_b, g); /* infer_shape checked them */
}

gboolean
forward (NlOpCtx *c, GError **error)
{
  const NlMatMulArgs *a = (const NlMatMulArgs *) c->args;
  const float *ap = nl_tensor_f32 (c->in[0]), *bp = nl_tensor_f32 (c->in[1]);
  float *y = nl_tensor_f32 (c->out[0]);
  char ta = a->transpose_a ? 'T' : 'N', tb = a->transpose_b ? 'T' : 'N';
  NlCudaBlasEnv e;
  NlMatMulGeom g;

  if (!enter_blas (c, &e, error))
    return FALSE;
  geom_of (c, &g);
  if (g.b_shared && ta == 'N')
    return gemm_rm (e.blas, 'N', tb, g.batch * g.m, g.n, g.k, 1.0f, ap, g.k, 0, bp, tb == 'N' ? g.n : g.k, 0, 0.0f,
                    y, g.n, 0, 1, "MatMul forward", error);
  return gemm_rm (e.blas, ta, tb, g.m, g.n, g.k, 1.0f, ap, ta == 'N' ? g.k : g.m, g.m * g.k, bp, tb == 'N' ? g.n : g.k,
                  g.b_shared ? 0 : g.k * g.n, 0.0f, y, g.n, g.m * g.n, g.batch, "MatMul forward", error);
}

/* The products of the CPU's backward, term for term. */
gboolean
backward (NlOpCtx *c, GError **error)
{
  const NlMatMulArgs *a = (const NlMatMulArgs *) c->args;
  const float *ap = nl_tensor_f32 (c->in[0]), *bp = nl_tensor_f32 (c->in[1]);
  const float *dy = nl_tensor_f32 (c->out_grad[0]);
  NlTensor *da = c->in_grad[0], *db = c->in_grad[1];
  gboolean ta = a->transpose_a, tb = a->transpose_b, ok = TRUE;
  const char *what = "MatMul backward";
  NlCudaBlasEnv e;
  int64_t sb;
  NlMatMulGeom g;

  if (!enter_blas (c, &e, error))
    return FALSE;
  geom_of (c, &g);
  sb = g.b_shared ? 0 : g.k * g.n;
  if (da && !ta) /* dA (m, k) = dC op(B)^T */
    ok = gemm_rm (e.blas, 'N', tb ? 'N' : 'T', g.m, g.k, g.n, 1.0f, dy, g.n, g.m * g.n, bp, tb ? g.k : g.n, sb, 0.0f,
                  nl_tensor_f32 (da), g.k, g.m * g.k, g.batch, what, error);
  else if (da) /* dA (k, m) = op(B) dC^T */
    ok = gemm_rm (e.blas, tb ? 'T' : 'N', 'T', g.k, g.m, g.n, 1.0f, bp, tb ? g.k : g.n, sb, dy, g.n, g.m * g.n, 0.0f,
                  nl_tensor_f32 (da), g.m, g.m * g.k, g.batch, what, error);
  if (!ok || !db)
    return ok;
  if (g.b_shared && !ta && !tb) /* one product over all rows */
    return gemm_rm (e.blas, 'T', 'N', g.k, g.n, g.batch * g.m, 1.0f, ap, g.k, 0, dy, g.n, 0, 0.0f, nl_tensor_f32 (db),
                    g.n, 0, 1, what, error);
  if (g.b_shared && !ta)
    return gemm_rm (e.blas, 'T', 'N', g.n, g.k, g.batch * g.m, 1.0f, dy, g.n, 0, ap, g.k, 0, 0.0f, nl_tensor_f32 (db),
                    g.k, 0, 1, what, error);
  if (!tb) /* dB (k, n) = op(A)^T dC */
    return gemm_rm (e.blas, ta ? 'N' : 'T', 'N', g.k, g.n, g.m, 1.0f, ap, ta ? g.m : g.k, g.m * g.k, dy, g.n, g.m * g.n,
                    0.0f, nl_tensor_f32 (db), g.n, sb, g.batch, what, error);
  /* dB (n, k) = dC^T op(A) */
  return gemm_rm (e.blas, 'T', ta ? 'T' : 'N', g.n, g.k, g.m, 1.0f, dy, g.n, g.m * g.n, ap, ta ? g.m : g.k, g.m * g.k,
                  0.0f, nl_tensor_f32 (db), g.k, sb, g.batch, what, error);
}

} // namespace

extern "C" const NlOpKernels nl_op_cuda_matmul = { forward, backward, NULL };
