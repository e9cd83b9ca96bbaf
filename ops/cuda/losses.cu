/* losses.cu — the losses of ops/cpu/losses.c on CUDA: SoftmaxCrossEntropy,
 * SigmoidBinaryCrossEntropy, L2Loss, L1Loss, HuberLoss. Same formulas; the
 * output is one loss per sample, shape (N), the mean over the sample's
 * elements (SoftmaxCrossEntropy: over the rows of a (N, ..., C) pred);
 * backward writes d(loss_n)/d(pred) * out_grad[n]; the label takes no
 * gradient.
 *
 * Bad sparse labels. The CPU checks every label before any work and fails
 * the forward with a message naming the sample. On the device that check
 * would need the labels on the host, or a synchronisation, every step. So
 * the kernel gives a bad label's row (not an integer in [0, C)) a NaN loss
 * and a zero gradient (so the weights are not wrecked before the error
 * arrives), and records the first bad row of the batch in a small
 * per-node device record, copied asynchronously into pinned host memory
 * with an event behind it. The next forward or backward of the node that
 * finds the event complete reports the CPU's message as an error: the
 * backward of the same step when the host has waited for the stream in
 * between (reading the loss back does), else a later call. A bad label in
 * the very last batch a node ever runs is only seen as a NaN loss, and so
 * is every bad label when pinned memory cannot be had. */

#include <cuda_runtime.h>
#include <math.h>

#include "ops/cuda/nl-cuda-kernel.cuh"
#include "core/cuda/nl-cuda.h"
#include "ops/nl-losses.h"
#include "ops/nl-op-registry.h"

namespace {

/* Launches kernel<G> with G chosen from the row length. */
#define LAUNCH_ROWS(kernel, len, rows, stream, ...)                                                         \
  do                                                                                                        \
    {                                                                                                       \
      const int g_ = group_for (len);                                                                       \
      const unsigned int b_ = row_blocks (rows, g_);                                                        \
      if (g_ == 1)                                                                                          \
        kernel<1><<<b_, kThreads, 0, stream>>> (__VA_ARGS__);                                                 \
      else if (g_ == 32)                                                                                    \
        kernel<32><<<b_, kThreads, 0, stream>>> (__VA_ARGS__);                                                \
      else                                                                                                  \
        kernel<kThreads><<<b_, kThreads, 0, stream>>> (__VA_ARGS__);                                            \
    }                                                                                                       \
  while (0)

/* ---- SoftmaxCrossEntropy ---------------------------------------------- */

/* The first bad sparse label of a batch (see the top of the file). */
typedef struct {
  unsigned long long row; /* ~0: none */
  long long per_sample;   /* M and C of the batch it came from, for the message */
  long long classes;
  float value;
  int done;               /* set once recorded; later batches leave it alone */
} LabelRecord;

typedef struct {
  NlCudaCtx *dev;
  LabelRecord *rec_dev;  /* from the device allocator */
  LabelRecord *rec_host; /* pinned; NULL: no deferred report */
  cudaEvent_t copied;
  gboolean pending;      /* a copy was queued since the last look */
} SceState;

__device__ inline bool
label_ok (float v, int64_t C)
{
  /* the CPU's test; NaN fails it */
  return v >= 0 && v < (float) C && v == floorf (v);
}

__global__ void
record_reset_kernel (LabelRecord *rec)
{
  rec->row = ~0ull;
  rec->per_sample = 0;
  rec->classes = 0;
  rec->value = 0;
  rec->done = 0;
}

/* After the forward: fills in the first bad row's label and the shape. */
__global__ void
record_finish_kernel (LabelRecord *rec, const float *z, int64_t M, int64_t C)
{
  if (!rec->done && rec->row != ~0ull)
    {
      rec->value = z[rec->row];
      rec->per_sample = M;
      rec->classes = C;
      rec->done = 1;
    }
}

/* One row of R = N * M rows of C scores: the row's loss term into rowloss
 * (loss[n] directly when M == 1), probabilities into prob when given.
 * Per row, -sum_j t_j log softmax (x)_j = sum_j t_j (mx - x_j) + lse sum_j t_j
 * with lse = log sum exp (x - mx), as on the CPU. */
template <int G>
__global__ void
sce_forward_kernel (const float *x, const float *z, float *prob, float *rowloss, LabelRecord *rec, int64_t R,
                    int64_t C, bool sparse, bool logits)
{
  const int lane = threadIdx.x % G;
  ROW_LOOP (G, r, R)
  {
    const float *xr = x + r * C;
    int64_t y = -1;
    float term;

    if (sparse)
      {
        const float v = z[r];
        if (label_ok (v, C))
          y = (int64_t) v;
        else if (lane == 0 && rec && !rec->done)
          atomicMin (&rec->row, (unsigned long long) r);
      }
    if (logits)
      {
        float mx = -INFINITY, s = 0;
        for (int64_t j = lane; j < C; j += G)
          mx = fmaxf (mx, xr[j]);
        mx = group_reduce<G> (mx, Max ());
        for (int64_t j = lane; j < C; j += G)
          s += expf (xr[j] - mx);
        s = group_reduce<G> (s, Sum ());
        const float lse = logf (s);
        if (prob)
          {
            const float inv = 1.0f / s;
            float *pr = prob + r * C;
            for (int64_t j = lane; j < C; j += G)
              pr[j] = expf (xr[j] - mx) * inv;
          }
        if (sparse)
          term = y >= 0 ? (mx - xr[y]) + lse : NAN;
        else
          {
            const float *zr = z + r * C;
            float t = 0, zs = 0;
            for (int64_t j = lane; j < C; j += G)
              {
                t += zr[j] * (mx - xr[j]);
                zs += zr[j];
              }
            t = group_reduce<G> (t, Sum ());
            zs = group_reduce<G> (zs, Sum ());
            term = t + lse * zs;
          }
      }
    else if (sparse)
      term = y >= 0 ? -xr[y] : NAN;
    else
      {
        const float *zr = z + r * C;
        float t = 0;
        for (int64_t j = lane; j < C; j += G)
          t += zr[j] * xr[j];
        term = -group_reduce<G> (t, Sum ());
      }
    if (lane == 0)
      rowloss[r] = term;
  }
}

/* loss[n] = mean of the sample's M row terms (M > 1) */
__global__ void
sce_sample_kernel (const float *rowloss, float *loss, int64_t N, int64_t M, float inv_m)
{
  GRID_STRIDE (n, N)
  {
    float acc = 0;
    for (int64_t r = n * M; r < (n + 1) * M; r++)
      acc += rowloss[r];
    loss[n] = acc * inv_m;
  }
}

template <int G>
__global__ void
sce_backward_kernel (const float *x, const float *z, const float *prob, const float *og, float *dx, int64_t R,
                     int64_t M, int64_t C, float inv_m, bool sparse, bool logits)
{
  const int lane = threadIdx.x % G;
  ROW_LOOP (G, r, R)
  {
    const float g = og[r / M] * inv_m;
    const float *xr = x + r * C, *zr = sparse ? NULL : z + r * C;
    float *gr = dx + r * C;
    int64_t y = -1;

    if (sparse)
      {
        const float v = z[r];
        if (!label_ok (v, C))
          {
            /* the forward has recorded it; the row teaches nothing */
            for (int64_t j = lane; j < C; j += G)
              gr[j] = 0.0f;
            continue;
          }
        y = (int64_t) v;
      }
    if (logits)
      {
        float mx = 0, inv = 0, zs = 0;
        if (!prob)
          {
            /* no saved probabilities: recompute the softmax */
            float s = 0;
            mx = -INFINITY;
            for (int64_t j = lane; j < C; j += G)
              mx = fmaxf (mx, xr[j]);
            mx = group_reduce<G> (mx, Max ());
            for (int64_t j = lane; j < C; j += G)
              s += expf (xr[j] - mx);
            inv = 1.0f / group_reduce<G> (s, Sum ());
          }
        if (!sparse)
          {
            for (int64_t j = lane; j < C; j += G)
              zs += zr[j];
            zs = group_reduce<G> (zs, Sum ());
          }
        const float *pr = prob ? prob + r * C : NULL;
        for (int64_t j = lane; j < C; j += G)
          {
            const float p = pr ? pr[j] : expf (xr[j] - mx) * inv;
            if (sparse)
              {
                float v = p * g;
                if (j == y)
                  v -= g;
                gr[j] = v;
              }
            else
              /* d/dx_j of -sum_k z_k log p_k = p_j * sum_k z_k - z_j */
              gr[j] = (p * zs - zr[j]) * g;
          }
      }
    else if (sparse)
      for (int64_t j = lane; j < C; j += G)
        gr[j] = j == y ? -g : 0.0f;
    else
      for (int64_t j = lane; j < C; j += G)
        gr[j] = -zr[j] * g;
  }
}

struct Sce {
  int64_t N, C, R, M;
  bool sparse, logits;
};

void
sce_setup (const NlOpCtx *c, Sce *s)
{
  const NlSceArgs *a = (const NlSceArgs *) c->args;
  const NlTensor *pred = c->in[0];

  s->N = pred->shape[0];
  s->C = pred->shape[pred->ndim - 1];
  s->R = nl_tensor_numel (pred) / s->C;
  s->M = s->R / s->N;
  s->sparse = a->sparse_label;
  s->logits = !a->from_logits;
}

void
sce_free_state (void *p)
{
  SceState *st = (SceState *) p;
  if (!st)
    return;
  nl_cuda_ctx_enter (st->dev, NULL);
  if (st->copied)
    {
      /* a copy into rec_host may still be queued: it must land before the
       * pinned memory goes back */
      if (st->pending)
        cudaEventSynchronize (st->copied);
      cudaEventDestroy (st->copied);
    }
  cudaGetLastError (); /* a failure above is not a later launch's */
  nl_cuda_host_free (st->rec_host);
  nl_cuda_release (st->dev, st->rec_dev);
  g_free (st);
}

/* The node's record, made on the first sparse forward. */
SceState *
sce_state (NlOpCtx *c, cudaStream_t stream, GError **error)
{
  SceState *st = (SceState *) *c->state;

  if (st)
    return st;
  st = g_new0 (SceState, 1);
  st->dev = cuda_ctx (c);
  st->rec_dev = (LabelRecord *) nl_cuda_alloc (st->dev, sizeof (LabelRecord),
                                               "SoftmaxCrossEntropy (label check)", error);
  if (!st->rec_dev)
    {
      g_free (st);
      return NULL;
    }
  record_reset_kernel<<<1, 1, 0, stream>>> (st->rec_dev);
  if (!nl_cuda_check_launch ("SoftmaxCrossEntropy (label check)", error))
    {
      sce_free_state (st);
      return NULL;
    }
  st->rec_host = (LabelRecord *) nl_cuda_host_alloc (sizeof (LabelRecord));
  if (st->rec_host
      && cudaEventCreateWithFlags (&st->copied, cudaEventDisableTiming) != cudaSuccess)
    {
      cudaGetLastError ();
      st->copied = NULL;
      nl_cuda_host_free (st->rec_host);
      st->rec_host = NULL;
    }
  *c->state = st;
  return st;
}

/* Reports a bad label the device has recorded, once the copy of the record
 * has arrived; FALSE with the CPU's message. Never waits. */
gboolean
sce_take_error (NlOpCtx *c, cudaStream_t stream, GError **error)
{
  SceState *st = (SceState *) *c->state;
  LabelRecord r;
  cudaError_t q;

  if (!st || !st->rec_host || !st->pending)
    return TRUE;
  q = cudaEventQuery (st->copied);
  if (q == cudaErrorNotReady)
    {
      cudaGetLastError (); /* not an error; keep it out of the next launch check */
      return TRUE;
    }
  if (!nl_cuda_check (q, "SoftmaxCrossEntropy (label check)", error))
    return FALSE;
  st->pending = FALSE;
  r = *st->rec_host;
  if (!r.done)
    return TRUE;
  /* start over, so the node can run again after the error */
  st->rec_host->done = 0;
  record_reset_kernel<<<1, 1, 0, stream>>> (st->rec_dev);
  nl_cuda_check_launch ("SoftmaxCrossEntropy (label check)", NULL);
  if (r.per_sample == 1)
    g_set_error (error, NL_OP_ERROR, NL_OP_ERROR_RUNTIME,
                 "SoftmaxCrossEntropy: the label of sample %" G_GINT64_FORMAT " is %g, "
                 "not a class index in 0 .. %" G_GINT64_FORMAT " (found on the GPU in a recent batch)",
                 (gint64) r.row, r.value, (gint64) r.classes - 1);
  else
    g_set_error (error, NL_OP_ERROR, NL_OP_ERROR_RUNTIME,
                 "SoftmaxCrossEntropy: label %" G_GINT64_FORMAT " of sample %" G_GINT64_FORMAT " is %g, "
                 "not a class index in 0 .. %" G_GINT64_FORMAT " (found on the GPU in a recent batch)",
                 (gint64) (r.row % r.per_sample), (gint64) (r.row / r.per_sample), r.value,
                 (gint64) r.classes - 1);
  return FALSE;
}

gboolean
sce_forward (NlOpCtx *c, GError **error)
{
  const float *x = nl_tensor_f32 (c->in[0]), *z = nl_tensor_f32 (c->in[1]);
  float *loss = nl_tensor_f32 (c->out[0]);
  float *prob = c->saved[0] ? nl_tensor_f32 (c->saved[0]) : NULL;
  NlCudaCtx *dev = cuda_ctx (c);
  LabelRecord *rec = NULL;
  cudaStream_t stream;
  SceState *st = NULL;
  float *rowloss;
  Sce s;

  sce_setup (c, &s);
  if (!enter (c, &stream, error) || !sce_take_error (c, stream, error))
    return FALSE;
  if (s.sparse)
    {
      if (!(st = sce_state (c, stream, error)))
        return FALSE;
      rec = st->rec_dev;
    }
  /* the CPU keeps probabilities only for logits */
  if (!s.logits)
    prob = NULL;
  rowloss = loss;
  if (s.M > 1
      && !(rowloss = (float *) nl_cuda_alloc (dev, s.R * sizeof (float), "SoftmaxCrossEntropy forward", error)))
    return FALSE;
  LAUNCH_ROWS (sce_forward_kernel, s.C, s.R, stream, x, z, prob, rowloss, rec, s.R, s.C, s.sparse, s.logits);
  gboolean ok = nl_cuda_check_launch ("SoftmaxCrossEntropy forward", error);
  if (ok && s.M > 1)
    {
      sce_sample_kernel<<<grid_for (s.N), kThreads, 0, stream>>> (rowloss, loss, s.N, s.M, 1.0f / (float) s.M);
      ok = nl_cuda_check_launch ("SoftmaxCrossEntropy forward (per sample)", error);
    }
  if (rowloss != loss)
    nl_cuda_release (dev, rowloss);
  if (!ok || !st)
    return ok;

  record_finish_kernel<<<1, 1, 0, stream>>> (rec, z, s.M, s.C);
  if (!nl_cuda_check_launch ("SoftmaxCrossEntropy (label check)", error))
    return FALSE;
  if (st->rec_host)
    {
      if (!nl_cuda_check (cudaMemcpyAsync (st->rec_host, rec, sizeof (LabelRecord), cudaMemcpyDeviceToHost, stream),
                          "SoftmaxCrossEntropy (label check copy)", error)
          || !nl_cuda_check (cudaEventRecord (st->copied, stream), "SoftmaxCrossEntropy (label check)", error))
        return FALSE;
      st->pending = TRUE;
    }
  return TRUE;
}

gboolean
sce_backward (NlOpCtx *c, GError **error)
{
  const float *prob = c->saved[0] ? nl_tensor_f32 (c->saved[0]) : NULL;
  cudaStream_t stream;
  Sce s;

  sce_setup (c, &s);
  if (!enter (c, &stream, error) || !sce_take_error (c, stream, error))
    return FALSE;
  if (!c->in_grad[0])
    return TRUE;
  if (!s.logits)
    prob = NULL;
  LAUNCH_ROWS (sce_backward_kernel, s.C, s.R, stream, nl_tensor_f32 (c->in[0]), nl_tensor_f32 (c->in[1]), prob,
               nl_tensor_f32 (c->out_grad[0]), nl_tensor_f32 (c->in_grad[0]), s.R, s.M, s.C, 1.0f / (float) s.M,
               s.sparse, s.logits);
  return nl_cuda_check_launch ("SoftmaxCrossEntropy backward", error);
}

/* ---- elementwise losses ------------------------------------------------- */

/* the formulas: ops/nl-loss-elementwise.h, shared with the CPU */

/* loss[n] = mean over the sample's M elements */
template <int G>
__global__ void
el_forward_kernel (const float *x, const float *z, float *loss, int64_t N, int64_t M, float inv_m, int k, float rho)
{
  const int lane = threadIdx.x % G;
  ROW_LOOP (G, n, N)
  {
    float acc = 0;
    for (int64_t i = n * M + lane; i < (n + 1) * M; i += G)
      acc += el_loss (k, x[i], z[i], rho);
    acc = group_reduce<G> (acc, Sum ());
    if (lane == 0)
      loss[n] = acc * inv_m;
  }
}

__global__ void
el_backward_kernel (const float *x, const float *z, const float *og, float *dx, int64_t n, int64_t M, float inv_m,
                    int k, float rho)
{
  GRID_STRIDE (i, n)
  {
    const float g = og[i / M] * inv_m;
    dx[i] = el_grad (k, x[i], z[i], rho) * g;
  }
}

gboolean
el_forward (NlOpCtx *c, int k, float rho, GError **error)
{
  const int64_t N = c->in[0]->shape[0], M = nl_tensor_numel (c->in[0]) / N;
  cudaStream_t stream;

  if (!enter (c, &stream, error))
    return FALSE;
  LAUNCH_ROWS (el_forward_kernel, M, N, stream, nl_tensor_f32 (c->in[0]), nl_tensor_f32 (c->in[1]),
               nl_tensor_f32 (c->out[0]), N, M, 1.0f / (float) M, k, rho);
  return nl_cuda_check_launch ("loss forward", error);
}

gboolean
el_backward (NlOpCtx *c, int k, float rho, GError **error)
{
  const int64_t N = c->in[0]->shape[0], M = nl_tensor_numel (c->in[0]) / N;
  cudaStream_t stream;

  if (!c->in_grad[0])
    return TRUE;
  if (!enter (c, &stream, error))
    return FALSE;
  el_backward_kernel<<<grid_for (N * M), kThreads, 0, stream>>> (nl_tensor_f32 (c->in[0]), nl_tensor_f32 (c->in[1]),
                                                                nl_tensor_f32 (c->out_grad[0]),
                                                                nl_tensor_f32 (c->in_grad[0]), N * M, M,
                                                                1.0f / (float) M, k, rho);
  return nl_cuda_check_launch ("loss backward", error);
}

gboolean
sbce_forward (NlOpCtx *c, GError **error)
{
  return el_forward (c, ((const NlSbceArgs *) c->args)->kind, 0, error);
}

gboolean
sbce_backward (NlOpCtx *c, GError **error)
{
  return el_backward (c, ((const NlSbceArgs *) c->args)->kind, 0, error);
}

gboolean l2_forward (NlOpCtx *c, GError **error) { return el_forward (c, EL_L2, 0, error); }
gboolean l2_backward (NlOpCtx *c, GError **error) { return el_backward (c, EL_L2, 0, error); }
gboolean l1_forward (NlOpCtx *c, GError **error) { return el_forward (c, EL_L1, 0, error); }
gboolean l1_backward (NlOpCtx *c, GError **error) { return el_backward (c, EL_L1, 0, error); }

gboolean
huber_forward (NlOpCtx *c, GError **error)
{
  return el_forward (c, EL_HUBER, ((const NlHuberArgs *) c->args)->rho, error);
}

gboolean
huber_backward (NlOpCtx *c, GError **error)
{
  return el_backward (c, EL_HUBER, ((const NlHuberArgs *) c->args)->rho, error);
}

} // namespace

extern "C" const NlOpKernels nl_op_cuda_softmax_cross_entropy = { sce_forward, sce_backward, sce_free_state };
extern "C" const NlOpKernels nl_op_cuda_sigmoid_binary_cross_entropy = { sbce_forward, sbce_backward, NULL };
extern "C" const NlOpKernels nl_op_cuda_l2_loss = { l2_forward, l2_backward, NULL };
extern "C" const NlOpKernels nl_op_cuda_l1_loss = { l1_forward, l1_backward, NULL };
extern "C" const NlOpKernels nl_op_cuda_huber_loss = { huber_forward, huber_backward, NULL };
