/* structure.c — the CPU kernels of the ops that move data without
 * computing on it: Flatten, Reshape, Concat, Transpose, and Add (the join
 * of a residual block; definitions: ops/defs/structure.c).
 *
 * Flatten and Reshape keep the element order, so forward and backward are
 * plain copies, skipped when the graph gives the output the input's storage. */
#include "ops/cpu/nl-cpu-util.h"
#include "ops/nl-strided.h"
#include "ops/nl-structure.h"

static void
copy_floats (float *dst, const float *src, int64_t n)
{
  if (dst != src)
    memcpy (dst, src, n * sizeof (float));
}

static gboolean
copy_forward (NlOpCtx *c, GError **error)
{
  copy_floats (nl_tensor_f32 (c->out[0]), nl_tensor_f32 (c->in[0]), nl_numel (c->in[0]));
  return TRUE;
}

static gboolean
copy_backward (NlOpCtx *c, GError **error)
{
  if (c->in_grad[0])
    copy_floats (nl_tensor_f32 (c->in_grad[0]), nl_tensor_f32 (c->out_grad[0]), nl_numel (c->out_grad[0]));
  return TRUE;
}

/* Concat as a copy of blocks: every input is (outer, its_block) where
 * block = size along dim * inner; the output row is the blocks side by side.
 * Forward gathers parts into whole, backward splits whole into parts. Sizes
 * come from `sizes` (the inputs, or in backward, which declares no need of the
 * inputs' data, the input gradients where present). */
static void
concat_copy (NlOpCtx *c, NlTensor *const *parts, NlTensor *const *sizes, float *whole, gboolean gather)
{
  const NlTensor *t0 = sizes[0] ? sizes[0] : c->in[0];
  int dim = concat_axis (((const NlConcatArgs *) c->args)->dim, t0->ndim);
  int64_t outer = 1, inner = 1, row = 0;
  int64_t block[NL_MAX_PORTS], offset[NL_MAX_PORTS];

  for (int i = 0; i < dim; i++)
    outer *= t0->shape[i];
  for (int i = dim + 1; i < t0->ndim; i++)
    inner *= t0->shape[i];
  for (int k = 0; k < c->n_data; k++)
    {
      const NlTensor *t = sizes[k] ? sizes[k] : c->in[k];
      block[k] = t->shape[dim] * inner;
      offset[k] = row;
      row += block[k];
    }
#pragma omp parallel for if (outer * row > NL_PAR_MIN && outer > 1) schedule (static)
  for (int64_t o = 0; o < outer; o++)
    for (int k = 0; k < c->n_data; k++)
      {
        float *part;
        if (!parts[k])
          continue;
        part = nl_tensor_f32 (parts[k]) + o * block[k];
        if (gather)
          memcpy (whole + o * row + offset[k], part, block[k] * sizeof (float));
        else
          memcpy (part, whole + o * row + offset[k], block[k] * sizeof (float));
      }
}

static gboolean
concat_forward (NlOpCtx *c, GError **error)
{
  concat_copy (c, c->in, c->in, nl_tensor_f32 (c->out[0]), TRUE);
  return TRUE;
}

static gboolean
concat_backward (NlOpCtx *c, GError **error)
{
  concat_copy (c, c->in_grad, c->in_grad, nl_tensor_f32 (c->out_grad[0]), FALSE);
  return TRUE;
}

static gboolean
add_forward (NlOpCtx *c, GError **error)
{
  float *y = nl_tensor_f32 (c->out[0]);
  const float *a = nl_tensor_f32 (c->in[0]), *b;
  int64_t n = nl_numel (c->out[0]);

  if (c->n_data == 1)
    {
      copy_floats (y, a, n);
      return TRUE;
    }
  /* the first pair writes y (which may be input 0 itself), the rest accumulate */
  b = nl_tensor_f32 (c->in[1]);
#pragma omp parallel for simd if (parallel: n > NL_PAR_MIN) schedule (static)
  for (int64_t i = 0; i < n; i++)
    y[i] = a[i] + b[i];
  for (int k = 2; k < c->n_data; k++)
    {
      const float *x = nl_tensor_f32 (c->in[k]);
#pragma omp parallel for simd if (parallel: n > NL_PAR_MIN) schedule (static)
      for (int64_t i = 0; i < n; i++)
        y[i] += x[i];
    }
  return TRUE;
}

static gboolean
add_backward (NlOpCtx *c, GError **error)
{
  const float *dy = nl_tensor_f32 (c->out_grad[0]);
  int64_t n = nl_numel (c->out_grad[0]);

  for (int k = 0; k < c->n_data; k++)
    if (c->in_grad[k])
      copy_floats (nl_tensor_f32 (c->in_grad[k]), dy, n);
  return TRUE;
}

/* dst = src read in the order of perm (src has src->ndim dimensions) */
static void
permute (const NlTensor *src, const int64_t *perm, float *dst)
{
  NlStrided s = nl_strided_permute (src->shape, src->ndim, perm);
  const float *x = nl_tensor_f32 (src);
  int64_t n = nl_numel (src);
#pragma omp parallel for if (n > NL_PAR_MIN) schedule (static)
  for (int64_t i = 0; i < n; i++)
    dst[i] = x[nl_strided_index (&s, i)];
}

static gboolean
transpose_forward (NlOpCtx *c, GError **error)
{
  int64_t perm[NL_MAX_DIMS];
  transpose_perm (c->args, c->in[0]->ndim, perm);
  permute (c->in[0], perm, nl_tensor_f32 (c->out[0]));
  return TRUE;
}

/* the gradient is the output gradient put back by the inverse permutation */
static gboolean
transpose_backward (NlOpCtx *c, GError **error)
{
  int64_t perm[NL_MAX_DIMS], inv[NL_MAX_DIMS];
  int nd = c->out_grad[0]->ndim;
  if (!c->in_grad[0])
    return TRUE;
  transpose_perm (c->args, nd, perm);
  for (int k = 0; k < nd; k++)
    inv[perm[k]] = k;
  permute (c->out_grad[0], inv, nl_tensor_f32 (c->in_grad[0]));
  return TRUE;
}

const NlOpKernels nl_op_cpu_flatten = { .forward = copy_forward, .backward = copy_backward };
const NlOpKernels nl_op_cpu_reshape = { .forward = copy_forward, .backward = copy_backward };
const NlOpKernels nl_op_cpu_concat = { .forward = concat_forward, .backward = concat_backward };
const NlOpKernels nl_op_cpu_add = { .forward = add_forward, .backward = add_backward };
const NlOpKernels nl_op_cpu_transpose = { .forward = transpose_forward, .backward = transpose_backward };
