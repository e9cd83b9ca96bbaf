/* rnn.cu — LSTM and GRU on CUDA through cuDNN 9's RNN API (definitions:
 * ops/defs/lstm.c, ops/defs/gru.c; layouts: ops/nl-rnn.h).
 *
 * One cuDNN RNN per node covers every layer and direction: batch-major
 * unpadded-by-length data (CUDNN_RNN_DATA_LAYOUT_BATCH_MAJOR_UNPACKED with
 * CUDNN_RNN_PADDED_IO_ENABLED) and the per-sample lengths (devSeqLengths),
 * so cuDNN itself runs the reverse direction within each sample's length
 * and fills padded output steps with 0; hy holds each direction's final
 * state (`last`). cuDNN's gate orders are PyTorch's (LSTM i,f,g,o; GRU
 * r,z,n, linear before reset), so each gate block of the weight slots is
 * copied as is into cuDNN's weight space, found by cudnnGetRNNWeightParams.
 * The classic GRU has no cuDNN form: it is refused (CPU only, as its
 * parameter's doc says). Dropout between layers is cuDNN's, with its own
 * random stream (not the CPU's mask).
 *
 * The state keeps the descriptors, the weight space, its gradient, the
 * reserve space of the training forward (read by backward) and the
 * lengths as int32 on the device.
 *
 * NOT RUN: written and compiled on a machine without a GPU. */
#include <cuda_runtime.h>
#include <cudnn.h>

#include "core/cuda/nl-cuda.h"
#include "ops/cuda/nl-cuda-kernel.cuh"
#include "ops/nl-op-registry.h"
#include "ops/nl-rnn.h"

namespace {

struct RnnCudaState
{
  NlCudaCtx *dev = nullptr;
  int64_t b = 0, t = 0, c = 0;
  NlRnnArgs a = {};
  bool training = false;
  cudnnRNNDescriptor_t rnn = nullptr;
  cudnnDropoutDescriptor_t drop = nullptr;
  cudnnRNNDataDescriptor_t xd = nullptr, yd = nullptr;
  cudnnTensorDescriptor_t hd = nullptr, md = nullptr, bd = nullptr;
  void *drop_states = nullptr;
  size_t weight_bytes = 0, work_bytes = 0, reserve_bytes = 0;
  float *w = nullptr, *dw = nullptr;        /* weight space and its gradient */
  void *reserve = nullptr;
  float *y = nullptr;                       /* (B, T, D*H) when out is not it */
  float *hx = nullptr, *cx = nullptr, *hy = nullptr; /* (L*D, B, H) */
  float *dy = nullptr, *dhy = nullptr, *dhx = nullptr, *dcx = nullptr, *dx = nullptr;
  int32_t *dev_len = nullptr;
  int *host_len = nullptr;
  bool forward_done = false;
};

void
release (RnnCudaState *s)
{
  void *bufs[] = { s->drop_states, s->w, s->dw, s->reserve, s->y, s->hx, s->cx, s->hy, s->dy, s->dhy, s->dhx,
                   s->dcx, s->dx, s->dev_len };
  for (void *p : bufs)
    if (p)
      nl_cuda_release (s->dev, p);
  if (s->rnn)
    cudnnDestroyRNNDescriptor (s->rnn);
  if (s->drop)
    cudnnDestroyDropoutDescriptor (s->drop);
  if (s->xd)
    cudnnDestroyRNNDataDescriptor (s->xd);
  if (s->yd)
    cudnnDestroyRNNDataDescriptor (s->yd);
  if (s->hd)
    cudnnDestroyTensorDescriptor (s->hd);
  if (s->md)
    cudnnDestroyTensorDescriptor (s->md);
  if (s->bd)
    cudnnDestroyTensorDescriptor (s->bd);
  g_free (s->host_len);
  NlCudaCtx *dev = s->dev;
  *s = RnnCudaState ();
  s->dev = dev;
}

void
rnn_free_state (void *state)
{
  RnnCudaState *s = (RnnCudaState *) state;
  if (!s)
    return;
  release (s);
  delete s;
}

template <typename T>
bool
alloc (RnnCudaState *s, T **p, size_t nbytes, GError **error)
{
  *p = (T *) nl_cuda_alloc (s->dev, nbytes > 0 ? nbytes : 4, "LSTM/GRU buffers", error);
  return *p != nullptr;
}

/* ---- small kernels ---- */

/* hx[(k, b, u)] = state[b, k, u] for the S = L*D rows of one kind (row0). */
__global__ void
state_to_cudnn (const float *state, float *hx, int64_t b, int64_t rows, int64_t row0, int64_t s, int64_t h)
{
  GRID_STRIDE (i, s * b * h)
  {
    int64_t u = i % h, bi = (i / h) % b, k = i / (h * b);
    hx[i] = state[(bi * rows + row0 + k) * h + u];
  }
}

__global__ void
cudnn_to_state (const float *dhx, float *dstate, int64_t b, int64_t rows, int64_t row0, int64_t s, int64_t h)
{
  GRID_STRIDE (i, s * b * h)
  {
    int64_t u = i % h, bi = (i / h) % b, k = i / (h * b);
    dstate[(bi * rows + row0 + k) * h + u] = dhx[i];
  }
}

/* out[b, t, u] = y[b, t, u] + y[b, t, H + u] (merge sum) */
__global__ void
sum_dirs (const float *y, float *out, int64_t bt, int64_t h)
{
  GRID_STRIDE (i, bt * h) out[i] = y[(i / h) * 2 * h + i % h] + y[(i / h) * 2 * h + h + i % h];
}

/* dy[b, t, d*H + u] = og[b, t, u] for both directions (merge sum) */
__global__ void
spread_dirs (const float *og, float *dy, int64_t bt, int64_t h)
{
  GRID_STRIDE (i, bt * 2 * h) dy[i] = og[(i / (2 * h)) * h + i % h];
}

/* last: out[b, d*H + u] (or summed) from hy's top layer rows */
__global__ void
last_out (const float *hy, float *out, int64_t b, int64_t h, int64_t top, int dirs, bool msum)
{
  int64_t feat = msum ? h : dirs * h;
  GRID_STRIDE (i, b * feat)
  {
    int64_t bi = i / feat, f = i % feat;
    if (msum)
      {
        float v = 0;
        for (int d = 0; d < dirs; d++)
          v += hy[((top + d) * b + bi) * h + f];
        out[i] = v;
      }
    else
      out[i] = hy[((top + f / h) * b + bi) * h + f % h];
  }
}

/* last backward: dhy's top rows from out_grad, the rest 0 */
__global__ void
last_grad (const float *og, float *dhy, int64_t b, int64_t h, int64_t top, int64_t s, int dirs, bool msum)
{
  int64_t feat = msum ? h : dirs * h;
  GRID_STRIDE (i, s * b * h)
  {
    int64_t u = i % h, bi = (i / h) % b, k = i / (h * b);
    int64_t d = k - top;
    dhy[i] = d < 0 ? 0.0f : og[bi * feat + (msum ? u : d * h + u)];
  }
}

/* zeroes the padded steps of a (B, T, n) tensor */
__global__ void
mask_padding (float *x, const float *lengths, int64_t b, int64_t t, int64_t n)
{
  GRID_STRIDE (i, b * t * n)
  {
    int64_t step = (i / n) % t, bi = i / (n * t);
    if ((float) step >= lengths[bi])
      x[i] = 0.0f;
  }
}

/* ---- set-up ---- */

bool
cudnn_ok (cudnnStatus_t st, const char *what, GError **error)
{
  return nl_cudnn_check ((int) st, what, error);
}

/* Descriptors and buffers for this shape (kept while it stays). */
bool
setup (NlOpCtx *c, RnnCudaState *s, int64_t b, int64_t t, int64_t cin, GError **error)
{
  const NlRnnArgs *a = (const NlRnnArgs *) c->args;
  cudnnHandle_t h = (cudnnHandle_t) nl_cuda_ctx_cudnn (s->dev);
  int64_t hh = a->units, ld = a->layers * a->dirs;
  bool lstm = a->cell == NL_RNN_LSTM;
  int dims[3] = { (int) ld, (int) b, (int) hh }, strides[3] = { (int) (b * hh), (int) hh, 1 };
  size_t drop_bytes = 0;

  if (s->rnn && s->b == b && s->t == t && s->c == cin && s->training == (bool) c->training
      && s->a.cell == a->cell && s->a.units == a->units && s->a.layers == a->layers && s->a.dirs == a->dirs
      && s->a.dropout == a->dropout && s->a.last == a->last && s->a.merge_sum == a->merge_sum)
    return true;
  release (s);
  s->b = b, s->t = t, s->c = cin, s->a = *a, s->training = c->training;
  if (!cudnn_ok (cudnnCreateRNNDescriptor (&s->rnn), "LSTM/GRU descriptor", error)
      || !cudnn_ok (cudnnCreateDropoutDescriptor (&s->drop), "LSTM/GRU dropout", error)
      || !cudnn_ok (cudnnCreateRNNDataDescriptor (&s->xd), "LSTM/GRU data descriptor", error)
      || !cudnn_ok (cudnnCreateRNNDataDescriptor (&s->yd), "LSTM/GRU data descriptor", error)
      || !cudnn_ok (cudnnCreateTensorDescriptor (&s->hd), "LSTM/GRU state descriptor", error)
      || !cudnn_ok (cudnnCreateTensorDescriptor (&s->md), "LSTM/GRU weight descriptor", error)
      || !cudnn_ok (cudnnCreateTensorDescriptor (&s->bd), "LSTM/GRU weight descriptor", error))
    return false;
  if (a->dropout > 0 && c->training)
    {
      if (!cudnn_ok (cudnnDropoutGetStatesSize (h, &drop_bytes), "LSTM/GRU dropout", error)
          || !alloc (s, &s->drop_states, drop_bytes, error))
        return false;
    }
  if (!cudnn_ok (cudnnSetDropoutDescriptor (s->drop, h, c->training ? a->dropout : 0.0f, s->drop_states, drop_bytes,
                                            (unsigned long long) c->seed),
                 "LSTM/GRU dropout", error)
      || !cudnn_ok (cudnnSetRNNDescriptor_v8 (s->rnn, CUDNN_RNN_ALGO_STANDARD, lstm ? CUDNN_LSTM : CUDNN_GRU,
                                              CUDNN_RNN_DOUBLE_BIAS,
                                              a->dirs == 2 ? CUDNN_BIDIRECTIONAL : CUDNN_UNIDIRECTIONAL,
                                              CUDNN_LINEAR_INPUT, CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT,
                                              CUDNN_FMA_MATH, (int32_t) cin, (int32_t) hh, (int32_t) hh,
                                              (int32_t) a->layers, s->drop, CUDNN_RNN_PADDED_IO_ENABLED),
                    "LSTM/GRU descriptor", error)
      || !cudnn_ok (cudnnSetTensorNdDescriptor (s->hd, CUDNN_DATA_FLOAT, 3, dims, strides), "LSTM/GRU state", error))
    return false;
  s->host_len = g_new0 (int, b);
  for (int64_t i = 0; i < b; i++)
    s->host_len[i] = (int) t;
  float fill = 0.0f;
  if (!cudnn_ok (cudnnSetRNNDataDescriptor (s->xd, CUDNN_DATA_FLOAT, CUDNN_RNN_DATA_LAYOUT_BATCH_MAJOR_UNPACKED,
                                            (int) t, (int) b, (int) cin, s->host_len, &fill),
                 "LSTM/GRU data descriptor", error)
      || !cudnn_ok (cudnnGetRNNWeightSpaceSize (h, s->rnn, &s->weight_bytes), "LSTM/GRU weight space", error)
      || !cudnn_ok (cudnnGetRNNTempSpaceSizes (h, s->rnn, c->training ? CUDNN_FWD_MODE_TRAINING
                                                                        : CUDNN_FWD_MODE_INFERENCE,
                                               s->xd, &s->work_bytes, &s->reserve_bytes),
                    "LSTM/GRU workspace", error))
    return false;
  size_t st = (size_t) ld * b * hh * sizeof (float), seq = (size_t) b * t * a->dirs * hh * sizeof (float);
  return alloc (s, &s->w, s->weight_bytes, error) && alloc (s, &s->dw, s->weight_bytes, error)
         && alloc (s, &s->reserve, s->reserve_bytes, error) && alloc (s, &s->y, seq, error)
         && alloc (s, &s->hx, st, error) && alloc (s, &s->cx, st, error) && alloc (s, &s->hy, st, error)
         && alloc (s, &s->dy, seq, error) && alloc (s, &s->dhy, st, error) && alloc (s, &s->dhx, st, error)
         && alloc (s, &s->dcx, st, error) && alloc (s, &s->dx, (size_t) b * t * cin * sizeof (float), error)
         && alloc (s, &s->dev_len, (size_t) b * sizeof (int32_t), error);
}

/* This batch's lengths into both data descriptors and onto the device. */
bool
set_lengths (NlOpCtx *c, RnnCudaState *s, GError **error)
{
  const NlRnnArgs *a = &s->a;
  float fill = 0.0f;
  for (int64_t i = 0; i < s->b; i++)
    {
      int64_t len = nl_rnn_length (c->host_lengths, i, s->t);
      s->host_len[i] = (int) (len < 1 ? 1 : len); /* cuDNN wants >= 1; a 0 length runs one step */
    }
  return cudnn_ok (cudnnSetRNNDataDescriptor (s->xd, CUDNN_DATA_FLOAT, CUDNN_RNN_DATA_LAYOUT_BATCH_MAJOR_UNPACKED,
                                              (int) s->t, (int) s->b, (int) s->c, s->host_len, &fill),
                   "LSTM/GRU data descriptor", error)
         && cudnn_ok (cudnnSetRNNDataDescriptor (s->yd, CUDNN_DATA_FLOAT, CUDNN_RNN_DATA_LAYOUT_BATCH_MAJOR_UNPACKED,
                                                 (int) s->t, (int) s->b, (int) (a->dirs * a->units), s->host_len,
                                                 &fill),
                      "LSTM/GRU data descriptor", error)
         && nl_cuda_copy (s->dev, s->dev_len, s->host_len, (size_t) s->b * sizeof (int32_t), NL_COPY_HOST_TO_DEVICE,
                          error)
         /* host_len is pageable and rewritten by the next call */
         && nl_cuda_sync (s->dev, error);
}

/* Copies every gate block between the weight slots (PyTorch's layout) and
 * cuDNN's weight space wspace; to_slots: the other way (gradients). */
bool
copy_weights (NlOpCtx *c, RnnCudaState *s, float *wspace, NlTensor *const *slots, bool to_slots, GError **error)
{
  const NlRnnArgs *a = &s->a;
  cudnnHandle_t h = (cudnnHandle_t) nl_cuda_ctx_cudnn (s->dev);
  cudaStream_t stream = (cudaStream_t) nl_cuda_ctx_stream (s->dev);
  int g = nl_rnn_gates (a->cell);
  int64_t hh = a->units;

  for (int64_t l = 0; l < a->layers; l++)
    for (int d = 0; d < a->dirs; d++)
      for (int lin = 0; lin < 2 * g; lin++)
        {
          bool rec = lin >= g;
          int gate = lin % g;
          int64_t cin = rec ? hh : nl_rnn_layer_in (a, l, s->c);
          NlTensor *wt = slots[rec ? RNN_W_H2H : l == 0 ? RNN_W_L0_I2H : RNN_W_I2H];
          NlTensor *bt = slots[rec ? RNN_B_H2H : RNN_B_I2H];
          int64_t woff = (rec ? nl_rnn_h2h_offset (a, l, d) : nl_rnn_i2h_offset (a, l, d, s->c)) + gate * hh * cin;
          int64_t boff = nl_rnn_bias_offset (a, l, d) + gate * hh;
          void *maddr = nullptr, *baddr = nullptr;
          if (!cudnn_ok (cudnnGetRNNWeightParams (h, s->rnn, (int32_t) (l * a->dirs + d), s->weight_bytes, wspace,
                                                  lin, s->md, &maddr, s->bd, &baddr),
                         "LSTM/GRU weight params", error))
            return false;
          size_t mb = (size_t) hh * cin * sizeof (float), bb = (size_t) hh * sizeof (float);
          if (wt && maddr)
            {
              float *slot = nl_tensor_f32 (wt) + woff;
              if (!nl_cuda_check (cudaMemcpyAsync (to_slots ? slot : maddr, to_slots ? maddr : slot, mb,
                                                   cudaMemcpyDeviceToDevice, stream), "LSTM/GRU weights", error))
                return false;
            }
          if (bt && baddr)
            {
              float *slot = nl_tensor_f32 (bt) + boff;
              if (!nl_cuda_check (cudaMemcpyAsync (to_slots ? slot : baddr, to_slots ? baddr : slot, bb,
                                                   cudaMemcpyDeviceToDevice, stream), "LSTM/GRU biases", error))
                return false;
            }
        }
  return true;
}

RnnCudaState *
state_of (NlOpCtx *c)
{
  RnnCudaState *s = (RnnCudaState *) *c->state;
  if (!s)
    {
      *c->state = s = new RnnCudaState ();
      s->dev = cuda_ctx (c);
    }
  return s;
}

bool
refuse_classic (const NlOpCtx *c, GError **error)
{
  if (((const NlRnnArgs *) c->args)->cell != NL_RNN_GRU_CLASSIC)
    return false;
  g_set_error_literal (error, NL_OP_ERROR, NL_OP_ERROR_PARAM,
                       "GRU variant classic runs on the CPU only: cuDNN has only the linear_before_reset GRU");
  return true;
}

gboolean
rnn_forward (NlOpCtx *c, GError **error)
{
  const NlRnnArgs *a = (const NlRnnArgs *) c->args;
  cudaStream_t stream;
  NlShape xs = nl_tensor_get_shape (c->in[0]);
  int64_t b = xs.d[0], t = xs.d[1], cin = xs.d[2], hh = a->units, ld = a->layers * a->dirs;
  int kinds = nl_rnn_state_kinds (a->cell);
  bool direct = !a->last && !a->merge_sum; /* cuDNN's y is the output itself */
  float *out = nl_tensor_f32 (c->out[0]);

  if (refuse_classic (c, error) || !enter (c, &stream, error))
    return FALSE;
  RnnCudaState *s = state_of (c);
  s->forward_done = false;
  if (!setup (c, s, b, t, cin, error) || !set_lengths (c, s, error)
      || !copy_weights (c, s, s->w, c->in + c->n_data, false, error))
    return FALSE;
  size_t st = (size_t) ld * b * hh * sizeof (float);
  if (c->n_data > 1)
    {
      const float *state = nl_tensor_f32 (c->in[1]);
      for (int k = 0; k < kinds; k++)
        state_to_cudnn<<<grid_for (ld * b * hh), kThreads, 0, stream>>> (state, k ? s->cx : s->hx, b, kinds * ld,
                                                                          k * ld, ld, hh);
    }
  else if (!nl_cuda_check (cudaMemsetAsync (s->hx, 0, st, stream), "LSTM/GRU state", error)
           || !nl_cuda_check (cudaMemsetAsync (s->cx, 0, st, stream), "LSTM/GRU state", error))
    return FALSE;
  void *work = s->work_bytes ? nl_cuda_ctx_workspace (s->dev, s->work_bytes, error) : nullptr;
  if (s->work_bytes && !work)
    return FALSE;
  float *y = direct ? out : s->y;
  if (!cudnn_ok (cudnnRNNForward ((cudnnHandle_t) nl_cuda_ctx_cudnn (s->dev), s->rnn,
                                  c->training ? CUDNN_FWD_MODE_TRAINING : CUDNN_FWD_MODE_INFERENCE, s->dev_len, s->xd,
                                  nl_tensor_f32 (c->in[0]), s->yd, y, s->hd, s->hx, s->hy, s->hd,
                                  a->cell == NL_RNN_LSTM ? s->cx : nullptr, nullptr, s->weight_bytes, s->w,
                                  s->work_bytes, work, s->reserve_bytes, s->reserve),
                 "LSTM/GRU forward", error))
    return FALSE;
  if (a->last)
    last_out<<<grid_for (b * a->dirs * hh), kThreads, 0, stream>>> (s->hy, out, b, hh, (a->layers - 1) * a->dirs,
                                                                     a->dirs, a->merge_sum);
  else
    {
      if (a->merge_sum && a->dirs == 2)
        sum_dirs<<<grid_for (b * t * hh), kThreads, 0, stream>>> (y, out, b * t, hh);
      else if (!direct)
        nl_cuda_check (cudaMemcpyAsync (out, y, (size_t) b * t * hh * sizeof (float), cudaMemcpyDeviceToDevice,
                                        stream), "LSTM/GRU output", NULL);
      if (c->lengths)
        mask_padding<<<grid_for (nl_tensor_numel (c->out[0])), kThreads, 0, stream>>> (
          out, nl_tensor_f32 (c->lengths), b, t, nl_tensor_numel (c->out[0]) / (b * t));
    }
  if (!nl_cuda_check_launch ("LSTM/GRU output", error))
    return FALSE;
  s->forward_done = c->training;
  return TRUE;
}

gboolean
rnn_backward (NlOpCtx *c, GError **error)
{
  const NlRnnArgs *a = (const NlRnnArgs *) c->args;
  cudaStream_t stream;
  NlShape xs = nl_tensor_get_shape (c->in[0]);
  int64_t b = xs.d[0], t = xs.d[1], cin = xs.d[2], hh = a->units, ld = a->layers * a->dirs;
  int kinds = nl_rnn_state_kinds (a->cell);
  bool direct = !a->last && !a->merge_sum;
  const float *og = nl_tensor_f32 (c->out_grad[0]);
  cudnnHandle_t h;

  if (refuse_classic (c, error) || !enter (c, &stream, error))
    return FALSE;
  RnnCudaState *s = state_of (c);
  if (!s->forward_done && !rnn_forward (c, error))
    return FALSE;
  h = (cudnnHandle_t) nl_cuda_ctx_cudnn (s->dev);
  size_t st = (size_t) ld * b * hh * sizeof (float);
  const float *y = direct ? nl_tensor_f32 (c->out[0]) : s->y;
  const float *dy = direct ? og : s->dy;
  if (a->last)
    {
      if (!nl_cuda_check (cudaMemsetAsync (s->dy, 0, (size_t) b * t * a->dirs * hh * sizeof (float), stream),
                          "LSTM/GRU backward", error))
        return FALSE;
      last_grad<<<grid_for (ld * b * hh), kThreads, 0, stream>>> (og, s->dhy, b, hh, (a->layers - 1) * a->dirs, ld,
                                                                   a->dirs, a->merge_sum);
    }
  else
    {
      if (a->merge_sum && a->dirs == 2)
        spread_dirs<<<grid_for (b * t * 2 * hh), kThreads, 0, stream>>> (og, s->dy, b * t, hh);
      else if (!direct)
        nl_cuda_check (cudaMemcpyAsync (s->dy, og, (size_t) b * t * hh * sizeof (float), cudaMemcpyDeviceToDevice,
                                        stream), "LSTM/GRU backward", NULL);
      if (!nl_cuda_check (cudaMemsetAsync (s->dhy, 0, st, stream), "LSTM/GRU backward", error))
        return FALSE;
    }
  void *work = s->work_bytes ? nl_cuda_ctx_workspace (s->dev, s->work_bytes, error) : nullptr;
  if (s->work_bytes && !work)
    return FALSE;
  bool lstm = a->cell == NL_RNN_LSTM;
  float *dx = c->in_grad[0] ? nl_tensor_f32 (c->in_grad[0]) : s->dx;
  /* dcy NULL: no gradient reaches the final cell state */
  if (!nl_cuda_check_launch ("LSTM/GRU backward", error)
      || !cudnn_ok (cudnnRNNBackwardData_v8 (h, s->rnn, s->dev_len, s->yd, y, dy, s->xd, dx, s->hd, s->hx, s->dhy,
                                             s->dhx, s->hd, lstm ? s->cx : nullptr, nullptr,
                                             lstm ? s->dcx : nullptr, s->weight_bytes, s->w, s->work_bytes, work,
                                             s->reserve_bytes, s->reserve),
                    "LSTM/GRU backward data", error)
      || !nl_cuda_check (cudaMemsetAsync (s->dw, 0, s->weight_bytes, stream), "LSTM/GRU backward", error)
      || !cudnn_ok (cudnnRNNBackwardWeights_v8 (h, s->rnn, CUDNN_WGRAD_MODE_ADD, s->dev_len, s->xd,
                                                nl_tensor_f32 (c->in[0]), s->hd, s->hx, s->yd, y, s->weight_bytes,
                                                s->dw, s->work_bytes, work, s->reserve_bytes, s->reserve),
                    "LSTM/GRU backward weights", error)
      || !copy_weights (c, s, s->dw, c->in_grad + c->n_data, true, error))
    return FALSE;
  if (c->in_grad[0] && c->lengths)
    mask_padding<<<grid_for (b * t * cin), kThreads, 0, stream>>> (dx, nl_tensor_f32 (c->lengths), b, t, cin);
  if (c->n_data > 1 && c->in_grad[1])
    for (int k = 0; k < kinds; k++)
      cudnn_to_state<<<grid_for (ld * b * hh), kThreads, 0, stream>>> (k ? s->dcx : s->dhx,
                                                                        nl_tensor_f32 (c->in_grad[1]), b, kinds * ld,
                                                                        k * ld, ld, hh);
  return nl_cuda_check_launch ("LSTM/GRU backward", error);
}

} // namespace

extern "C" const NlOpKernels nl_op_cuda_lstm = { rnn_forward, rnn_backward, rnn_free_state };
extern "C" const NlOpKernels nl_op_cuda_gru = { rnn_forward, rnn_backward, rnn_free_state };
