/* nl-tensor.h — n-dimensional arrays over refcounted, 64-byte aligned
 * storage (core/nl-storage.h) on any device.
 *
 * Tensors are plain data: they never own graph structure. Row-major with
 * explicit strides (in elements); every tensor made by nl_tensor_new() is
 * contiguous, views (nl_tensor_reshape) share storage. */
#pragma once

#include <glib.h>
#include <stddef.h>
#include <stdint.h>

#include "core/nl-dtype.h"
#include "core/nl-shape.h"
#include "core/nl-storage.h"

G_BEGIN_DECLS

typedef struct {
  gatomicrefcount ref;
  NlDType dtype;
  int ndim;
  int64_t shape[NL_MAX_DIMS];
  int64_t strides[NL_MAX_DIMS];
  NlStorage *storage;
  size_t offset; /* in elements */
} NlTensor;

/* Uninitialised (nl_tensor_new) or zero-filled (nl_tensor_zeros) CPU tensors.
 * Return NULL only when memory cannot be had. */
NlTensor *nl_tensor_new (NlDType dtype, int ndim, const int64_t *shape);
NlTensor *nl_tensor_new_shape (NlDType dtype, const NlShape *shape);
NlTensor *nl_tensor_zeros (NlDType dtype, const NlShape *shape);
/* A tensor over existing storage (takes a reference on it). */
NlTensor *nl_tensor_new_on (NlStorage *storage, size_t offset, NlDType dtype, const NlShape *shape);
NlTensor *nl_tensor_ref (NlTensor *t);
void nl_tensor_unref (NlTensor *t);
/* A contiguous view with another shape of the same element count. */
NlTensor *nl_tensor_reshape (NlTensor *t, const NlShape *shape);
NlTensor *nl_tensor_copy (const NlTensor *t);

gboolean nl_tensor_is_contiguous (const NlTensor *t);
void nl_tensor_fill (NlTensor *t, float value); /* F32 only */

/* Inline, like nl_tensor_numel: the CUDA module's kernels read shapes and
 * link no core/nl-tensor.c. */
static inline NlShape
nl_tensor_get_shape (const NlTensor *t)
{
  NlShape s;
  s.ndim = t->ndim;
  for (int i = 0; i < NL_MAX_DIMS; i++)
    s.d[i] = i < t->ndim ? t->shape[i] : 0;
  return s;
}

static inline int64_t
nl_tensor_numel (const NlTensor *t)
{
  int64_t n = 1;
  for (int i = 0; i < t->ndim; i++)
    n *= t->shape[i];
  return n;
}

static inline float *
nl_tensor_f32 (const NlTensor *t)
{
  return (float *) t->storage->data + t->offset;
}

static inline int32_t *
nl_tensor_i32 (const NlTensor *t)
{
  return (int32_t *) t->storage->data + t->offset;
}

static inline uint8_t *
nl_tensor_u8 (const NlTensor *t)
{
  return (uint8_t *) t->storage->data + t->offset;
}


G_DEFINE_AUTOPTR_CLEANUP_FUNC (NlTensor, nl_tensor_unref)

G_END_DECLS
