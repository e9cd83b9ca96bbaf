/* arith.cu — Mul and Sub on CUDA, mirroring ops/cpu/arith.c: two inputs
 * of one shape, or one input and its constant operand (the aux state)
 * read through the broadcast of ops/nl-strided.h. Forward may run in place
 * (Sub) and backward may overwrite out_grad, so nothing is __restrict__:
 * each thread reads element i before writing it, and input 1's gradient is
 * written before input 0's. */
#include <cuda_runtime.h>

#include "ops/cuda/nl-cuda-kernel.cuh"
#include "core/cuda/nl-cuda.h"
#include "ops/nl-arith.h"
#include "ops/nl-op-registry.h"

namespace {

enum Kind { MUL, SUB };

/* y = a op b, b read at s (two inputs: s is the identity, nd 1) */
__global__ void
forward_kernel (const float *a, const float *b, NlStrided s, float *y, int64_t n, int kind, float sign)
{
  GRID_STRIDE (i, n)
  {
    float k = b[nl_strided_index (&s, i)];
    y[i] = kind == MUL ? a[i] * k : sign * (a[i] - k);
  }
}

/* dx = dy * (Mul: the other factor at s; Sub: sign) */
__global__ void
backward_kernel (const float *dy, const float *other, NlStrided s, float *dx, int64_t n, int kind, float sign)
{
  GRID_STRIDE (i, n) dx[i] = kind == MUL ? dy[i] * other[nl_strided_index (&s, i)] : sign * dy[i];
}

NlStrided
identity (int64_t n)
{
  NlStrided s = {};
  nl_strided_push (&s, n, 1);
  return s;
}

float
reverse_sign (const NlOpCtx *c, int kind)
{
  return kind == SUB && c->n_data == 1 && ((const NlArithArgs *) c->args)->reverse ? -1.0f : 1.0f;
}

gboolean
forward (NlOpCtx *c, int kind, GError **error)
{
  cudaStream_t stream;
  int64_t n = nl_tensor_numel (c->out[0]);
  const float *b;
  NlStrided s;

  if (!enter (c, &stream, error))
    return FALSE;
  if (n == 0)
    return TRUE;
  if (c->n_data == 2)
    {
      b = nl_tensor_f32 (c->in[1]);
      s = identity (n);
    }
  else
    {
      b = nl_tensor_f32 (c->aux[ARITH_OPERAND]);
      s = nl_arith_operand (c->out[0], c->aux[ARITH_OPERAND]);
    }
  forward_kernel<<<grid_for (n), kThreads, 0, stream>>> (nl_tensor_f32 (c->in[0]), b, s, nl_tensor_f32 (c->out[0]),
                                                          n, kind, reverse_sign (c, kind));
  return nl_cuda_check_launch (kind == MUL ? "Mul forward" : "Sub forward", error);
}

gboolean
backward (NlOpCtx *c, int kind, GError **error)
{
  cudaStream_t stream;
  int64_t n = nl_tensor_numel (c->out_grad[0]);
  const float *dy = nl_tensor_f32 (c->out_grad[0]);
  const char *what = kind == MUL ? "Mul backward" : "Sub backward";
  float sign = reverse_sign (c, kind);

  if (!enter (c, &stream, error))
    return FALSE;
  if (n == 0)
    return TRUE;
  if (c->n_data == 2)
    {
      NlStrided s = identity (n);
      if (c->in_grad[1])
        {
          backward_kernel<<<grid_for (n), kThreads, 0, stream>>> (dy, nl_tensor_f32 (c->in[0]), s,
                                                                   nl_tensor_f32 (c->in_grad[1]), n, kind, -1.0f);
          if (!nl_cuda_check_launch (what, error))
            return FALSE;
        }
      if (c->in_grad[0])
        {
          backward_kernel<<<grid_for (n), kThreads, 0, stream>>> (dy, nl_tensor_f32 (c->in[1]), s,
                                                                   nl_tensor_f32 (c->in_grad[0]), n, kind, 1.0f);
          return nl_cuda_check_launch (what, error);
        }
      return TRUE;
    }
  if (!c->in_grad[0])
    return TRUE;
  backward_kernel<<<grid_for (n), kThreads, 0, stream>>> (
    dy, nl_tensor_f32 (c->aux[ARITH_OPERAND]), nl_arith_operand (c->out_grad[0], c->aux[ARITH_OPERAND]),
    nl_tensor_f32 (c->in_grad[0]), n, kind, sign);
  return nl_cuda_check_launch (what, error);
}

gboolean
mul_forward (NlOpCtx *c, GError **error)
{
  return forward (c, MUL, error);
}

gboolean
mul_backward (NlOpCtx *c, GError **error)
{
  return backward (c, MUL, error);
}

gboolean
sub_forward (NlOpCtx *c, GError **error)
{
  return forward (c, SUB, error);
}

gboolean
sub_backward (NlOpCtx *c, GError **error)
{
  return backward (c, SUB, error);
}

} // namespace

extern "C" const NlOpKernels nl_op_cuda_mul = { mul_forward, mul_backward, NULL };
extern "C" const NlOpKernels nl_op_cuda_sub = { sub_forward, sub_backward, NULL };
