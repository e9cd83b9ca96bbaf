/* dense.c — the CPU kernels of Dense (definition: ops/defs/dense.c):
 * y = x W^T + b.
 *
 * W is (units, in_units). With flatten the input (N, d1, d2 ..) is read as
 * (N, d1*d2*..); without, the layer applies to the last axis and the other
 * axes are rows. Everything is one sgemm per product (see nl-gemm.h).
 *
 * In bf16/fp16 precision the data and weight (forward), and out_grad, data
 * and weight (backward) are rounded into cached scratch and the same sgemms
 * run on the copies: the numbers of a half-input, float-accumulate GEMM.
 * The bias and its gradient stay float32. */
#include "ops/cpu/nl-cpu-util.h"
#include "ops/cpu/nl-gemm.h"
#include "ops/nl-dense.h"

/* Scratch for the rounded copies; only half precision allocates it. */
typedef struct {
  void *buf;
  size_t cap;
} DenseState;

static void
free_state (void *state)
{
  DenseState *s = state;
  g_free (s->buf);
  g_free (s);
}

static float *
half_scratch (NlOpCtx *c, int64_t nfloats)
{
  DenseState *s = *c->state;
  if (!s)
    *c->state = s = g_new0 (DenseState, 1);
  return nl_scratch (&s->buf, &s->cap, MAX (nfloats, 1) * sizeof (float));
}

static gboolean
forward (NlOpCtx *c, GError **error)
{
  const NlTensor *x = c->in[0], *w = c->in[1], *b = c->in[2];
  NlShape xs = nl_tensor_get_shape (x);
  int64_t units = w->shape[0], rows, k;
  float *y = nl_tensor_f32 (c->out[0]);
  const float *xp = nl_tensor_f32 (x), *wp = nl_tensor_f32 (w);

  nl_dense_as_matrix (&xs, ((const NlDenseArgs *) c->args)->flatten, &rows, &k);
  if (c->precision != NL_PRECISION_F32)
    {
      float *xr = half_scratch (c, rows * k + units * k), *wr = xr + rows * k;
      nl_round_array (c->precision, xr, xp, rows * k);
      nl_round_array (c->precision, wr, wp, units * k);
      xp = xr;
      wp = wr;
    }
  if (b)
    {
      /* start from the bias so the sgemm adds onto it (beta = 1) */
      const float *bp = nl_tensor_f32 (b);
      for (int64_t r = 0; r < rows; r++)
        memcpy (y + r * units, bp, units * sizeof (float));
    }
  if (!nl_sgemm ('N', 'T', rows, units, k, 1.0f, xp, k, wp, k, b ? 1.0f : 0.0f, y, units))
    return nl_dnnl_check (dnnl_out_of_memory, "Dense forward sgemm", error);
  return TRUE;
}

static gboolean
backward (NlOpCtx *c, GError **error)
{
  const NlTensor *x = c->in[0], *w = c->in[1];
  NlTensor *dx = c->in_grad[0], *dw = c->in_grad[1], *db = c->in_grad[2];
  NlShape xs = nl_tensor_get_shape (x);
  int64_t units = w->shape[0], rows, k;
  const float *dy = nl_tensor_f32 (c->out_grad[0]);
  const float *dyp = dy, *xp = nl_tensor_f32 (x), *wp = nl_tensor_f32 (w);
  gboolean ok = TRUE;

  nl_dense_as_matrix (&xs, ((const NlDenseArgs *) c->args)->flatten, &rows, &k);
  if (c->precision != NL_PRECISION_F32 && (dw || dx))
    {
      /* round only what the wanted products read: x for dW, W for dx */
      int64_t nx = dw ? rows * k : 0, nw = dx ? units * k : 0;
      float *dyr = half_scratch (c, rows * units + nx + nw);
      float *xr = dyr + rows * units, *wr = xr + nx;
      nl_round_array (c->precision, dyr, dy, rows * units);
      nl_round_array (c->precision, xr, xp, nx);
      nl_round_array (c->precision, wr, wp, nw);
      dyp = dyr;
      xp = xr;
      wp = wr;
    }
  if (dw) /* dW = dy^T x */
    ok = ok && nl_sgemm ('T', 'N', units, k, rows, 1.0f, dyp, units, xp, k, 0.0f, nl_tensor_f32 (dw), k);
  if (dx) /* dx = dy W */
    ok = ok && nl_sgemm ('N', 'N', rows, k, units, 1.0f, dyp, units, wp, k, 0.0f, nl_tensor_f32 (dx), k);
  if (db && c->in[2]) /* column sums of the float32 dy */
    {
      float *g = nl_tensor_f32 (db);
      memset (g, 0, units * sizeof (float));
      for (int64_t r = 0; r < rows; r++)
        {
          const float *row = dy + r * units;
          for (int64_t u = 0; u < units; u++)
            g[u] += row[u];
        }
    }
  if (!ok)
    return nl_dnnl_check (dnnl_out_of_memory, "Dense backward sgemm", error);
  return TRUE;
}

const NlOpKernels nl_op_cpu_dense = { .forward = forward, .backward = backward, .free_state = free_state };
