/* nl-input.h — Input's parameter. Its kernels (ops/cpu/input.c,
 * ops/cuda/input.cu) read none: the shape is checked in shape inference. */
#pragma once

#include "ops/nl-op.h"

G_BEGIN_DECLS

enum { INPUT_SHAPE, INPUT_N };

G_END_DECLS
