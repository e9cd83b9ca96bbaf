/* embedding.cu — Embedding on CUDA: out[i, :] = weight[index[i], :], the
 * weight gradient a scatter-add; the semantics of ops/cpu/embedding.c.
 *
 * Bad indices. On the CPU an index that is not an integer in [0, input_dim)
 * (NaN included) fails the call with an error naming the value and its
 * position. The indices live on the device here, and learning about one on
 * the host at once would mean waiting for the device every call. So:
 *  - forward writes zeros for a bad row, and its kernel records the first
 *    bad position with atomicMax on ~position (the largest key is the
 *    smallest position, so "first" means what it means on the CPU, not the
 *    first thread to get there);
 *  - a one-thread kernel then moves that into a sticky report (position as
 *    coordinates, the value itself, since the index tensor will be reused)
 *    unless a report is already pending, and clears the per-call key;
 *  - the report is copied into pinned host memory behind an event, at most
 *    one copy in flight (the report is sticky, so skipping a copy loses
 *    nothing);
 *  - every later forward or backward of the node first asks the event,
 *    without blocking, whether the copy has landed, and if it shows a bad
 *    index fails with the CPU's NL_OP_ERROR_RUNTIME message.
 * The error therefore arrives late: usually in the same step's backward or
 * the next step's forward, once the device has run the check. A bad index
 * in the very last call of a node is never reported (nothing calls the node
 * again); its rows are zeros, and backward skips bad indices, so nothing is
 * written out of bounds. Where pinned memory cannot be had, the check waits
 * for the stream instead and reports at once.
 *
 * Backward adds with atomicAdd, so repeated indices sum in an unspecified
 * order: the weight gradient matches the CPU's serial sum to rounding, not
 * bit for bit. The padding_index reads zeros and gets no gradient. */
#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>

#include "ops/cuda/nl-cuda-kernel.cuh"
#include "core/cuda/nl-cuda.h"
#include "ops/nl-embedding.h"
#include "ops/nl-op-registry.h"

namespace {

/* What the host learns about the first bad index. key == 0: none. */
struct Report
{
  unsigned long long key; /* ~flat position */
  float value;
  int ndim;
  int64_t pos[NL_MAX_DIMS];
};

/* Device side: the key of the call in progress, and the sticky report. */
struct Status
{
  unsigned long long key;
  Report report;
};

struct Shape
{
  int ndim;
  int64_t d[NL_MAX_DIMS];
};

struct State
{
  NlCudaCtx *dev;
  Status *status;     /* device, from the allocator */
  Report *host;       /* pinned, or g_malloc'd when pinned is FALSE */
  gboolean pinned;
  cudaEvent_t copied; /* recorded after the copy into host */
  gboolean in_flight;
};

/* The CPU's test, term for term: also false for NaN. */
__device__ inline bool
index_ok (float v, int64_t vocab, float fvocab)
{
  return v >= 0.0f && v < fvocab && v == floorf (v) && (int64_t) v < vocab;
}

__global__ void
gather_kernel (const float *idx, const float *w, float *y, int64_t n, int64_t dim, int64_t vocab, float fvocab,
               int64_t pad, Status *status)
{
  GRID_STRIDE (j, n * dim)
  {
    int64_t i = j / dim, k = j - i * dim;
    float v = idx[i];
    if (index_ok (v, vocab, fvocab))
      y[j] = (int64_t) v == pad ? 0.0f : w[(int64_t) v * dim + k];
    else
      {
        y[j] = 0.0f;
        if (k == 0)
          atomicMax (&status->key, ~(unsigned long long) i);
      }
  }
}

/* One thread: this call's first bad index into the report if none is
 * pending, then the per-call key back to zero for the next call. */
__global__ void
finalize_kernel (const float *idx, Shape shape, Status *status)
{
  unsigned long long key = status->key;
  if (key == 0)
    return;
  if (status->report.key == 0)
    {
      int64_t i = (int64_t) ~key;
      status->report.value = idx[i];
      status->report.ndim = shape.ndim;
      /* the CPU's format_position, as numbers */
      for (int d = shape.ndim - 1; d >= 0; d--)
        {
          status->report.pos[d] = shape.d[d] ? i % shape.d[d] : 0;
          i = shape.d[d] ? i / shape.d[d] : 0;
        }
      status->report.key = key;
    }
  status->key = 0;
}

__global__ void
scatter_add_kernel (const float *idx, const float *dy, float *dw, int64_t n, int64_t dim, int64_t vocab,
                    float fvocab, int64_t pad)
{
  GRID_STRIDE (j, n * dim)
  {
    int64_t i = j / dim, k = j - i * dim;
    float v = idx[i];
    /* forward has zeroed these rows and reported them; writing here
       would land outside the gradient */
    if (index_ok (v, vocab, fvocab) && (int64_t) v != pad)
      atomicAdd (&dw[(int64_t) v * dim + k], dy[j]);
  }
}

void
state_free (void *data)
{
  State *s = (State *) data;
  if (!s)
    return;
  nl_cuda_ctx_enter (s->dev, NULL);
  if (s->copied)
    {
      /* the copy into host must land before host is freed */
      if (s->in_flight)
        cudaEventSynchronize (s->copied);
      cudaEventDestroy (s->copied);
    }
  cudaGetLastError (); /* a failure above is not a later launch's */
  if (s->pinned)
    nl_cuda_host_free (s->host);
  else
    g_free (s->host);
  nl_cuda_release (s->dev, s->status);
  g_free (s);
}

State *
state_get (NlOpCtx *c, GError **error)
{
  NlCudaCtx *dev = cuda_ctx (c);
  State *s = (State *) *c->state;

  if (s)
    return s;
  s = g_new0 (State, 1);
  s->dev = dev;
  s->status = (Status *) nl_cuda_alloc (dev, sizeof (Status), "Embedding index check", error);
  if (!s->status)
    {
      g_free (s);
      return NULL;
    }
  s->host = (Report *) nl_cuda_host_alloc (sizeof (Report));
  s->pinned = s->host != NULL;
  if (!s->pinned)
    s->host = g_new0 (Report, 1);
  if (!nl_cuda_check (cudaMemsetAsync (s->status, 0, sizeof (Status), (cudaStream_t) nl_cuda_ctx_stream (dev)),
                      "Embedding index check", error)
      || (s->pinned
          && !nl_cuda_check (cudaEventCreateWithFlags (&s->copied, cudaEventDisableTiming), "Embedding event",
                             error)))
    {
      state_free (s);
      return NULL;
    }
  *c->state = s;
  return s;
}

/* FALSE with the CPU's error when the report in host shows a bad index;
 * the device report is then cleared, so each is reported once. */
gboolean
report (NlOpCtx *c, State *s, gboolean late, GError **error)
{
  Report r = *s->host;
  const int64_t vocab = ((const NlEmbeddingArgs *) c->args)->input_dim;
  char pos[128];
  size_t len = 0;
  const char *note = late ? " (the GPU checks indices without waiting, so this may be from an earlier batch)" : "";

  if (r.key == 0)
    return TRUE;
  s->host->key = 0;
  if (!nl_cuda_check (cudaMemsetAsync (&s->status->report, 0, sizeof (Report),
                                       (cudaStream_t) nl_cuda_ctx_stream (s->dev)),
                      "Embedding index check", error))
    return FALSE;
  len += snprintf (pos + len, sizeof pos - len, "(");
  for (int d = 0; d < r.ndim && d < NL_MAX_DIMS && len < sizeof pos; d++)
    len += snprintf (pos + len, sizeof pos - len, d ? ", %" G_GINT64_FORMAT : "%" G_GINT64_FORMAT, r.pos[d]);
  if (len < sizeof pos)
    snprintf (pos + len, sizeof pos - len, ")");
  if (isfinite (r.value) && r.value == floorf (r.value))
    g_set_error (error, NL_OP_ERROR, NL_OP_ERROR_RUNTIME,
                 "Embedding index %.0f at position %s is out of range: input_dim is %" G_GINT64_FORMAT
                 ", so indices must lie in [0, %" G_GINT64_FORMAT ")%s",
                 r.value, pos, vocab, vocab, note);
  else
    g_set_error (error, NL_OP_ERROR, NL_OP_ERROR_RUNTIME, "Embedding index %g at position %s is not an integer%s",
                 r.value, pos, note);
  return FALSE;
}

/* Without blocking: has the last copy of the report landed, and does it
 * show a bad index? */
gboolean
poll (NlOpCtx *c, State *s, GError **error)
{
  cudaError_t e;

  if (!s->in_flight)
    return TRUE;
  e = cudaEventQuery (s->copied);
  if (e == cudaErrorNotReady)
    {
      /* not an error, but the runtime records it as the last one; clear
         it so the next launch check does not see it */
      (void) cudaGetLastError ();
      return TRUE;
    }
  if (!nl_cuda_check (e, "Embedding event query", error))
    return FALSE;
  s->in_flight = FALSE;
  return report (c, s, TRUE, error);
}

/* After this call's check: send the report to the host (one copy in
 * flight), or without pinned memory, wait for it and report now. */
gboolean
send_report (NlOpCtx *c, State *s, GError **error)
{
  cudaStream_t stream = (cudaStream_t) nl_cuda_ctx_stream (s->dev);

  if (s->in_flight)
    return TRUE;
  if (!nl_cuda_check (cudaMemcpyAsync (s->host, &s->status->report, sizeof (Report), cudaMemcpyDeviceToHost,
                                       stream),
                      "Embedding index check copy", error))
    return FALSE;
  if (!s->pinned)
    return nl_cuda_check (cudaStreamSynchronize (stream), "Embedding index check", error)
           && report (c, s, FALSE, error);
  if (!nl_cuda_check (cudaEventRecord (s->copied, stream), "Embedding event", error))
    return FALSE;
  s->in_flight = TRUE;
  return TRUE;
}

gboolean
forward (NlOpCtx *c, GError **error)
{
  const NlTensor *idx = c->in[0];
  const NlEmbeddingArgs *a = (const NlEmbeddingArgs *) c->args;
  int64_t n = nl_tensor_numel (idx), vocab = a->input_dim, dim = a->output_dim;
  cudaStream_t stream;
  State *s;
  Shape shape = {};

  if (!enter (c, &stream, error))
    return FALSE;
  if (!(s = state_get (c, error)) || !poll (c, s, error))
    return FALSE;
  if (n == 0)
    return TRUE;
  gather_kernel<<<grid_for (n * dim), kThreads, 0, stream>>> (nl_tensor_f32 (idx), nl_tensor_f32 (c->in[1]),
                                                              nl_tensor_f32 (c->out[0]), n, dim, vocab,
                                                              (float) vocab, a->padding_index, s->status);
  if (!nl_cuda_check_launch ("Embedding forward", error))
    return FALSE;
  shape.ndim = idx->ndim;
  for (int d = 0; d < idx->ndim; d++)
    shape.d[d] = idx->shape[d];
  finalize_kernel<<<1, 1, 0, stream>>> (nl_tensor_f32 (idx), shape, s->status);
  if (!nl_cuda_check_launch ("Embedding index check", error))
    return FALSE;
  return send_report (c, s, error);
}

gboolean
backward (NlOpCtx *c, GError **error)
{
  const NlEmbeddingArgs *a = (const NlEmbeddingArgs *) c->args;
  int64_t n = nl_tensor_numel (c->in[0]), vocab = a->input_dim, dim = a->output_dim;
  cudaStream_t stream;
  State *s;
  float *dw;

  if (!enter (c, &stream, error))
    return FALSE;
  /* a late report of forward's check fails backward, as the CPU's own
     check would */
  if (!(s = state_get (c, error)) || !poll (c, s, error))
    return FALSE;
  if (!c->in_grad[1])
    return TRUE;
  dw = nl_tensor_f32 (c->in_grad[1]);
  if (!nl_cuda_check (cudaMemsetAsync (dw, 0, (size_t) nl_tensor_numel (c->in_grad[1]) * sizeof (float), stream),
                      "Embedding backward", error))
    return FALSE;
  if (n == 0)
    return TRUE;
  scatter_add_kernel<<<grid_for (n * dim), kThreads, 0, stream>>> (nl_tensor_f32 (c->in[0]),
                                                                   nl_tensor_f32 (c->out_grad[0]), dw, n, dim,
                                                                   vocab, (float) vocab, a->padding_index);
  return nl_cuda_check_launch ("Embedding backward", error);
}

} // namespace

extern "C" const NlOpKernels nl_op_cuda_embedding = { forward, backward, state_free };
