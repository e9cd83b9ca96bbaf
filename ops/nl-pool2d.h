/* nl-pool2d.h — MaxPool2D, AvgPool2D and GlobalAvgPool2D as their
 * definitions (ops/defs/pool2d.c), CPU kernels (ops/cpu/pool2d.c) and CUDA
 * kernels (ops/cuda/pool2d.cu) see them: parameters, typed arguments.
 * GlobalAvgPool2D has neither. */
#pragma once

#include "ops/nl-op.h"

G_BEGIN_DECLS

/* MaxPool2D has the first POOL_COUNT_INCLUDE_PAD of these, AvgPool2D all */
enum { POOL_SIZE, POOL_STRIDES, POOL_PADDING, POOL_CEIL_MODE, POOL_COUNT_INCLUDE_PAD, POOL_N };

/* The (h, w) pairs as [0] = h, [1] = w. */
typedef struct {
  int64_t pool_size[2];
  int64_t strides[2];     /* resolved: a stride of 0 is the pool size */
  int64_t padding[2];
  gboolean ceil_mode;
  gboolean count_include_pad; /* FALSE for MaxPool2D, which has no such parameter */
} NlPool2dArgs;

/* The window of the CPU's shape inference and kernels; planes and sizes
 * are filled from the tensors at hand. */
typedef struct {
  int64_t planes, h, w, oh, ow;
  int64_t kh, kw, sh, sw, ph, pw;
  gboolean ceil_mode, include_pad;
} NlPool2dGeom;

static inline NlPool2dGeom
nl_pool2d_geom (const NlPool2dArgs *a)
{
  NlPool2dGeom g = { 0 };
  g.kh = a->pool_size[0];
  g.kw = a->pool_size[1];
  g.sh = a->strides[0];
  g.sw = a->strides[1];
  g.ph = a->padding[0];
  g.pw = a->padding[1];
  g.ceil_mode = a->ceil_mode;
  g.include_pad = a->count_include_pad;
  return g;
}

G_END_DECLS
