/* matmul.c — the CPU kernels of MatMul (definition: ops/defs/matmul.c).
 *
 * A shared 2-D b with a not transposed is one sgemm over all batch rows at
 * once (oneDNN threads it). Otherwise each batch entry is its own sgemm:
 * many small products run one per OpenMP thread (inside a parallel region
 * dnnl_sgemm stays on its thread), few large ones one after the other with
 * oneDNN's threads. */
#include "ops/cpu/nl-cpu-util.h"
#include "ops/cpu/nl-gemm.h"
#include "ops/nl-matmul.h"

/* C[i] = op(A[i]) op(B[i]) (B shared: sb = 0) for every i < batch, with
 * op(A) (m, k) and op(B) (k, n); beta 0 or 1 (accumulate, serially over i
 * when C is shared: sc = 0). */
static gboolean
gemm_batch (char ta, char tb, int64_t batch, int64_t m, int64_t n, int64_t k, const float *a, int64_t sa,
            const float *b, int64_t sb, float beta, float *c, int64_t sc)
{
  int64_t lda = ta == 'N' ? k : m, ldb = tb == 'N' ? n : k;
  gboolean ok = TRUE;

  if (batch > 1 && sc != 0 && m * n * k < (int64_t) 1 << 21)
    {
#pragma omp parallel for schedule (static) reduction (&& : ok)
      for (int64_t i = 0; i < batch; i++)
        ok = nl_sgemm (ta, tb, m, n, k, 1.0f, a + i * sa, lda, b + i * sb, ldb, beta, c + i * sc, n) && ok;
      return ok;
    }
  for (int64_t i = 0; i < batch && ok; i++)
    ok = nl_sgemm (ta, tb, m, n, k, 1.0f, a + i * sa, lda, b + i * sb, ldb, sc == 0 && i > 0 ? 1.0f : beta,
                   c + i * sc, n);
  return ok;
}

static void
geom_of (const NlOpCtx *c, NlMatMulGeom *g)
{
  const NlMatMulArgs *a = c->args;
  NlShape sa = nl_tensor_get_shape (c->in[0]), sb = nl_tensor_get_shape (c->in[1]);
  gboolean ok = nl_matmul_geom (&sa, &sb, a->transpose_a, a->transpose_b, g);
  g_assert (ok); /* infer_shape checked the shapes */
}

static gboolean
forward (NlOpCtx *c, GError **error)
{
  const NlMatMulArgs *a = c->args;
  const float *ap = nl_tensor_f32 (c->in[0]), *bp = nl_tensor_f32 (c->in[1]);
  float *y = nl_tensor_f32 (c->out[0]);
  char ta = a->transpose_a ? 'T' : 'N', tb = a->transpose_b ? 'T' : 'N';
  NlMatMulGeom g;
  gboolean ok;

  geom_of (c, &g);
  if (g.b_shared && ta == 'N') /* rows of every a against one b */
    ok = nl_sgemm ('N', tb, g.batch * g.m, g.n, g.k, 1.0f, ap, g.k, bp, tb == 'N' ? g.n : g.k, 0.0f, y, g.n);
  else
    ok = gemm_batch (ta, tb, g.batch, g.m, g.n, g.k, ap, g.m * g.k, bp, g.b_shared ? 0 : g.k * g.n, 0.0f, y,
                     g.m * g.n);
  return ok || nl_dnnl_check (dnnl_out_of_memory, "MatMul forward sgemm", error);
}

/* With C = op(A) op(B) and dC:
 *   dA = dC op(B)^T      (ta N), or op(B) dC^T  (ta T: dA is (k, m))
 *   dB = op(A)^T dC      (tb N), or dC^T op(A)  (tb T: dB is (n, k)) */
static gboolean
backward (NlOpCtx *c, GError **error)
{
  const NlMatMulArgs *a = c->args;
  const float *ap = nl_tensor_f32 (c->in[0]), *bp = nl_tensor_f32 (c->in[1]);
  const float *dy = nl_tensor_f32 (c->out_grad[0]);
  NlTensor *da = c->in_grad[0], *db = c->in_grad[1];
  gboolean ta = a->transpose_a, tb = a->transpose_b, ok = TRUE;
  int64_t sb;
  NlMatMulGeom g;

  geom_of (c, &g);
  sb = g.b_shared ? 0 : g.k * g.n;
  if (da && !ta) /* (m, n) x op(B)^T: B stored (k, n) -> 'T'; stored (n, k) -> 'N' */
    ok = gemm_batch ('N', tb ? 'N' : 'T', g.batch, g.m, g.k, g.n, dy, g.m * g.n, bp, sb, 0.0f,
                     nl_tensor_f32 (da), g.m * g.k);
  else if (da) /* (k, m) = op(B) (k, n) x dC^T (n, m) */
    ok = gemm_batch (tb ? 'T' : 'N', 'T', g.batch, g.k, g.m, g.n, bp, sb, dy, g.m * g.n, 0.0f,
                     nl_tensor_f32 (da), g.m * g.k);
  if (ok && db && g.b_shared && !ta && !tb) /* one product over all rows */
    ok = nl_sgemm ('T', 'N', g.k, g.n, g.batch * g.m, 1.0f, ap, g.k, dy, g.n, 0.0f, nl_tensor_f32 (db), g.n);
  else if (ok && db && g.b_shared && !ta && tb)
    ok = nl_sgemm ('T', 'N', g.n, g.k, g.batch * g.m, 1.0f, dy, g.n, ap, g.k, 0.0f, nl_tensor_f32 (db), g.k);
  else if (ok && db && !tb) /* (k, n) = op(A)^T (k, m) x dC (m, n) */
    ok = gemm_batch (ta ? 'N' : 'T', 'N', g.batch, g.k, g.n, g.m, ap, g.m * g.k, dy, g.m * g.n, 0.0f,
                     nl_tensor_f32 (db), sb);
  else if (ok && db) /* (n, k) = dC^T (n, m) x op(A) (m, k) */
    ok = gemm_batch ('T', ta ? 'T' : 'N', g.batch, g.n, g.k, g.m, dy, g.m * g.n, ap, g.m * g.k, 0.0f,
                     nl_tensor_f32 (db), sb);
  return ok || nl_dnnl_check (dnnl_out_of_memory, "MatMul backward sgemm", error);
}

const NlOpKernels nl_op_cpu_matmul = { .forward = forward, .backward = backward };
