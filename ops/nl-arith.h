/* nl-arith.h — the element-wise Mul and Sub as their definitions, CPU kernels
 * (ops/cpu/arith.c) and CUDA kernels (ops/cuda/arith.cu) see them.
 *
 * Either two data inputs of the same shape (as Add takes them), or one
 * data input and a constant operand: the auxiliary state "operand" of
 * shape `operand_shape`, broadcast numpy-style over the input (an ONNX
 * model's normalisation x * scale - mean). The operand is not learned
 * (fine-tuning keeps it) and never spans the batch dimension. */
#pragma once

#include "ops/nl-op.h"
#include "ops/nl-strided.h"

G_BEGIN_DECLS

enum { ARITH_OPERAND_SHAPE, ARITH_REVERSE, ARITH_N };

enum { ARITH_OPERAND }; /* the aux slot */

typedef struct {
  gboolean reverse; /* Sub: operand - x */
} NlArithArgs;

/* The operand's reading over an output shaped like t. */
static inline NlStrided
nl_arith_operand (const NlTensor *t, const NlTensor *operand)
{
  return nl_strided_broadcast (t->shape, t->ndim, operand->shape, operand->ndim);
}

G_END_DECLS
