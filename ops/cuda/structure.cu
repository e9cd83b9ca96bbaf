/* structure.cu — Flatten, Reshape, Concat and Add on CUDA, mirroring
 * ops/cpu/structure.c.
 *
 * Flatten and Reshape keep the element order: forward and backward are
 * device-to-device copies, skipped when the graph gives the output the
 * input's storage. Concat gathers (forward) or splits (backward) blocks in
 * one kernel over the whole output. Add sums its inputs in one kernel, in
 * the CPU's order ((a + b) + c) + ..., so the sums are bit-identical; its
 * output may be input 0 (in place), which is safe since every thread reads
 * element i of every input before writing element i. Transpose reads its
 * input through the permuted strides of ops/nl-strided.h. */
#include <cuda_runtime.h>

#include "ops/cuda/nl-cuda-kernel.cuh"
#include "core/cuda/nl-cuda.h"
#include "ops/nl-op-registry.h"
#include "ops/nl-strided.h"
#include "ops/nl-structure.h"

namespace {

gboolean
copy_floats (cudaStream_t stream, float *dst, const float *src, int64_t n, const char *what, GError **error)
{
  if (dst == src || n == 0)
    return TRUE;
  return nl_cuda_check (cudaMemcpyAsync (dst, src, (size_t) n * sizeof (float), cudaMemcpyDeviceToDevice, stream),
                        what, error);
}

/* ---- Flatten, Reshape ---- */

gboolean
copy_forward (NlOpCtx *c, GError **error)
{
  cudaStream_t stream;
  return enter (c, &stream, error)
         && copy_floats (stream, nl_tensor_f32 (c->out[0]), nl_tensor_f32 (c->in[0]), nl_tensor_numel (c->in[0]),
                         c->def->name, error);
}

gboolean
copy_backward (NlOpCtx *c, GError **error)
{
  cudaStream_t stream;
  if (!c->in_grad[0])
    return TRUE;
  return enter (c, &stream, error)
         && copy_floats (stream, nl_tensor_f32 (c->in_grad[0]), nl_tensor_f32 (c->out_grad[0]),
                         nl_tensor_numel (c->out_grad[0]), c->def->name, error);
}

/* ---- Concat ---- */

/* The parts of one Concat, passed by value (well under the kernel parameter
 * limit): part k is (outer, block[k]); the whole is (outer, row) with part
 * k's block at column offset[k]. A NULL part (an input gradient not asked
 * for) is skipped. */
struct ConcatParts
{
  float *part[NL_MAX_PORTS];
  int64_t block[NL_MAX_PORTS];
  int64_t offset[NL_MAX_PORTS + 1]; /* offset[n] = row */
  int n;
};

__global__ void
concat_kernel (ConcatParts p, float *whole, int64_t outer, int64_t row, bool gather)
{
  GRID_STRIDE (j, outer * row)
  {
    int64_t o = j / row, r = j - o * row;
    int k = 0;
    /* at most 16 parts: a linear scan, mostly uniform across a warp */
    while (k + 1 < p.n && r >= p.offset[k + 1])
      k++;
    float *part = p.part[k];
    if (part == nullptr)
      continue;
    int64_t at = o * p.block[k] + (r - p.offset[k]);
    if (gather)
      whole[j] = part[at];
    else
      part[at] = whole[j];
  }
}

/* Sizes as the CPU takes them: from `parts` where present, else from the
 * inputs (backward declares no need of the inputs' data, but their shapes
 * remain). */
gboolean
concat_copy (NlOpCtx *c, NlTensor *const *parts, float *whole, bool gather, GError **error)
{
  cudaStream_t stream;
  const NlTensor *t0 = parts[0] ? parts[0] : c->in[0];
  const int given = ((const NlConcatArgs *) c->args)->dim, dim = concat_axis (given, t0->ndim);
  int64_t outer = 1, inner = 1, row = 0;
  ConcatParts p = {};

  if (dim < 0 || dim >= t0->ndim) /* infer_shape has checked it: only a corrupt parameter gets here */
    {
      g_set_error (error, NL_OP_ERROR, NL_OP_ERROR_PARAM, "Concat along dimension %d of tensors with %d dimensions",
                   given, t0->ndim);
      return FALSE;
    }
  if (c->n_data < 1 || c->n_data > NL_MAX_PORTS)
    {
      g_set_error (error, NL_OP_ERROR, NL_OP_ERROR_SHAPE, "Concat takes 1 to %d inputs, but %d are connected",
                   NL_MAX_PORTS, c->n_data);
      return FALSE;
    }
  for (int i = 0; i < dim; i++)
    outer *= t0->shape[i];
  for (int i = dim + 1; i < t0->ndim; i++)
    inner *= t0->shape[i];
  p.n = c->n_data;
  for (int k = 0; k < c->n_data; k++)
    {
      const NlTensor *t = parts[k] ? parts[k] : c->in[k];
      p.part[k] = parts[k] ? nl_tensor_f32 (parts[k]) : nullptr;
      p.block[k] = t->shape[dim] * inner;
      p.offset[k] = row;
      row += p.block[k];
    }
  p.offset[c->n_data] = row;
  if (!enter (c, &stream, error))
    return FALSE;
  if (outer * row == 0)
    return TRUE;
  concat_kernel<<<grid_for (outer * row), kThreads, 0, stream>>> (p, whole, outer, row, gather);
  return nl_cuda_check_launch (gather ? "Concat forward" : "Concat backward", error);
}

gboolean
concat_forward (NlOpCtx *c, GError **error)
{
  return concat_copy (c, c->in, nl_tensor_f32 (c->out[0]), true, error);
}

gboolean
concat_backward (NlOpCtx *c, GError **error)
{
  return concat_copy (c, c->in_grad, nl_tensor_f32 (c->out_grad[0]), false, error);
}

/* ---- Add ---- */

struct AddInputs
{
  const float *in[NL_MAX_PORTS];
  int n;
};

__global__ void
add_kernel (AddInputs a, float *y, int64_t n)
{
  GRID_STRIDE (i, n)
  {
    /* the CPU's order: y = in0 + in1, then y += in_k */
    float s = a.in[0][i] + a.in[1][i];
    for (int k = 2; k < a.n; k++)
      s += a.in[k][i];
    y[i] = s;
  }
}

gboolean
add_forward (NlOpCtx *c, GError **error)
{
  cudaStream_t stream;
  float *y = nl_tensor_f32 (c->out[0]);
  int64_t n = nl_tensor_numel (c->out[0]);
  AddInputs a = {};

  if (!enter (c, &stream, error))
    return FALSE;
  if (c->n_data == 1)
    return copy_floats (stream, y, nl_tensor_f32 (c->in[0]), n, "Add", error);
  if (c->n_data < 1 || c->n_data > NL_MAX_PORTS)
    {
      g_set_error (error, NL_OP_ERROR, NL_OP_ERROR_SHAPE, "Add takes 1 to %d inputs, but %d are connected",
                   NL_MAX_PORTS, c->n_data);
      return FALSE;
    }
  a.n = c->n_data;
  for (int k = 0; k < c->n_data; k++)
    a.in[k] = nl_tensor_f32 (c->in[k]);
  if (n == 0)
    return TRUE;
  add_kernel<<<grid_for (n), kThreads, 0, stream>>> (a, y, n);
  return nl_cuda_check_launch ("Add forward", error);
}

gboolean
add_backward (NlOpCtx *c, GError **error)
{
  cudaStream_t stream;
  const float *dy = nl_tensor_f32 (c->out_grad[0]);
  int64_t n = nl_tensor_numel (c->out_grad[0]);

  if (!enter (c, &stream, error))
    return FALSE;
  for (int k = 0; k < c->n_data; k++)
    if (c->in_grad[k] && !copy_floats (stream, nl_tensor_f32 (c->in_grad[k]), dy, n, "Add backward", error))
      return FALSE;
  return TRUE;
}

/* ---- Transpose ---- */

__global__ void
permute_kernel (const float *x, NlStrided s, float *y, int64_t n)
{
  GRID_STRIDE (i, n) y[i] = x[nl_strided_index (&s, i)];
}

/* dst = src read in the order of perm */
gboolean
permute (NlOpCtx *c, const NlTensor *src, const int64_t *perm, float *dst, const char *what, GError **error)
{
  cudaStream_t stream;
  int64_t n = nl_tensor_numel (src);
  if (!enter (c, &stream, error))
    return FALSE;
  if (n == 0)
    return TRUE;
  permute_kernel<<<grid_for (n), kThreads, 0, stream>>> (nl_tensor_f32 (src),
                                                          nl_strided_permute (src->shape, src->ndim, perm), dst, n);
  return nl_cuda_check_launch (what, error);
}

gboolean
transpose_forward (NlOpCtx *c, GError **error)
{
  int64_t perm[NL_MAX_DIMS];
  transpose_perm ((const NlTransposeArgs *) c->args, c->in[0]->ndim, perm);
  return permute (c, c->in[0], perm, nl_tensor_f32 (c->out[0]), "Transpose forward", error);
}

gboolean
transpose_backward (NlOpCtx *c, GError **error)
{
  int64_t perm[NL_MAX_DIMS], inv[NL_MAX_DIMS];
  int nd = c->out_grad[0]->ndim;
  if (!c->in_grad[0])
    return TRUE;
  transpose_perm ((const NlTransposeArgs *) c->args, nd, perm);
  for (int k = 0; k < nd; k++)
    inv[perm[k]] = k;
  return permute (c, c->out_grad[0], inv, nl_tensor_f32 (c->in_grad[0]), "Transpose backward", error);
}

} // namespace

extern "C" const NlOpKernels nl_op_cuda_flatten = { copy_forward, copy_backward, NULL };
extern "C" const NlOpKernels nl_op_cuda_reshape = { copy_forward, copy_backward, NULL };
extern "C" const NlOpKernels nl_op_cuda_concat = { concat_forward, concat_backward, NULL };
extern "C" const NlOpKernels nl_op_cuda_add = { add_forward, add_backward, NULL };
extern "C" const NlOpKernels nl_op_cuda_transpose = { transpose_forward, transpose_backward, NULL };
