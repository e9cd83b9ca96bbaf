/* nl-strided.h — an element of a contiguous output as the position of its
 * source in another contiguous tensor, for the ops that read with other
 * strides: the constant operand of Mul and Sub, broadcast numpy-style
 * (stride 0 along the dimensions it lacks), and Transpose (the input's
 * strides, permuted). Host and device code share it (ops/cpu/, ops/cuda/). */
#pragma once

#include "ops/nl-op.h"

G_BEGIN_DECLS

typedef struct {
  int nd;                      /* after merging dimensions that read alike */
  int64_t size[NL_MAX_DIMS];   /* the output's sizes */
  int64_t stride[NL_MAX_DIMS]; /* the source's stride along each */
} NlStrided;

/* Where output element i reads from. */
NL_OP_FN int64_t
nl_strided_index (const NlStrided *s, int64_t i)
{
  int64_t j = 0;
  for (int d = s->nd - 1; d >= 0; d--)
    {
      int64_t q = i / s->size[d];
      j += (i - q * s->size[d]) * s->stride[d];
      i = q;
    }
  return j;
}

/* Appends one dimension, merged into the previous one where the two read
 * contiguously (its stride is the previous one's times its size); size-1
 * dimensions are dropped. */
NL_OP_FN void
nl_strided_push (NlStrided *s, int64_t size, int64_t stride)
{
  if (size == 1)
    return;
  if (s->nd > 0 && s->stride[s->nd - 1] == stride * size)
    {
      s->size[s->nd - 1] *= size;
      s->stride[s->nd - 1] = stride;
      return;
    }
  s->size[s->nd] = size;
  s->stride[s->nd] = stride;
  s->nd++;
}

/* An operand of shape op[op_nd] read over an output of shape out[out_nd]
 * (numpy broadcasting: aligned at the last dimension, the operand's size 1
 * or equal; shape inference has checked). */
NL_OP_FN NlStrided
nl_strided_broadcast (const int64_t *out, int out_nd, const int64_t *op, int op_nd)
{
  NlStrided s = { 0 };
  int64_t stride[NL_MAX_DIMS], acc = 1;
  for (int d = out_nd - 1; d >= 0; d--)
    {
      int k = d - (out_nd - op_nd);
      int64_t n = k >= 0 ? op[k] : 1;
      stride[d] = n == 1 ? 0 : acc;
      acc *= n;
    }
  for (int d = 0; d < out_nd; d++)
    nl_strided_push (&s, out[d], stride[d]);
  return s;
}

/* The input of shape in[nd] read in the order of perm: output dimension k
 * is input dimension perm[k]. */
NL_OP_FN NlStrided
nl_strided_permute (const int64_t *in, int nd, const int64_t *perm)
{
  NlStrided s = { 0 };
  int64_t stride[NL_MAX_DIMS], acc = 1;
  for (int d = nd - 1; d >= 0; d--)
    {
      stride[d] = acc;
      acc *= in[d];
    }
  for (int k = 0; k < nd; k++)
    nl_strided_push (&s, in[perm[k]], stride[perm[k]]);
  return s;
}

G_END_DECLS
