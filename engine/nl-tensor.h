/* nl-tensor.h — n-dimensional arrays with refcounted, 64-byte aligned storage.
 *
 * Tensors are plain data: they never own graph structure. Row-major with
 * explicit strides (in elements); every tensor made by nl_tensor_new() is
 * contiguous, views (nl_tensor_reshape) share storage. */
#pragma once

#include <glib.h>
#include <stddef.h>
#include <stdint.h>

G_BEGIN_DECLS

#define NL_MAX_DIMS 6
#define NL_ALIGN 64

typedef enum {
  NL_DTYPE_F32,
  NL_DTYPE_I32,
  NL_DTYPE_U8,
  NL_DTYPE_COUNT
} NlDType;

typedef enum {
  NL_DEVICE_CPU,
  NL_DEVICE_CUDA,
} NlDeviceType;

typedef struct {
  NlDeviceType type;
  int index;
} NlDevice;

/* A shape without storage: what shape inference works on. ndim == -1 marks
 * an absent tensor (e.g. the bias of a Dense with use_bias=false). */
typedef struct {
  int ndim;
  int64_t d[NL_MAX_DIMS];
} NlShape;

typedef struct {
  gatomicrefcount ref;
  void *data;
  size_t nbytes;
  NlDevice device;
  gboolean pinned;  /* CPU memory page-locked for fast copies to a GPU */
} NlStorage;

typedef struct {
  gatomicrefcount ref;
  NlDType dtype;
  int ndim;
  int64_t shape[NL_MAX_DIMS];
  int64_t strides[NL_MAX_DIMS];
  NlStorage *storage;
  size_t offset; /* in elements */
} NlTensor;

size_t nl_dtype_size (NlDType dtype);
const char *nl_dtype_name (NlDType dtype);

NlShape nl_shape_make (int ndim, const int64_t *dims);
NlShape nl_shape_of (int ndim, ...); /* nl_shape_of (2, (int64_t) 3, (int64_t) 4) */
int64_t nl_shape_numel (const NlShape *s);
gboolean nl_shape_equal (const NlShape *a, const NlShape *b);
/* "(128, 1, 28, 28)"; buf of at least 96 bytes */
char *nl_shape_format (const NlShape *s, char *buf, size_t size);
#define NL_SHAPE_ABSENT ((NlShape) { .ndim = -1 })

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

NlShape nl_tensor_get_shape (const NlTensor *t);
int64_t nl_tensor_numel (const NlTensor *t);
gboolean nl_tensor_is_contiguous (const NlTensor *t);
void nl_tensor_fill (NlTensor *t, float value); /* F32 only */

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

NlStorage *nl_storage_new (size_t nbytes, NlDevice device);
/* Memory on any device; what names the asker in the out-of-memory error
 * (NL_POOL_ERROR_NOMEM, ops/nl-pool.h). A CUDA device's comes from its pool. */
NlStorage *nl_storage_new_device (size_t nbytes, NlDevice device, const char *what, GError **error);
/* Page-locked CPU memory when a CUDA driver is there, else ordinary memory. */
NlStorage *nl_storage_new_pinned (size_t nbytes);
NlStorage *nl_storage_ref (NlStorage *s);
void nl_storage_unref (NlStorage *s);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (NlTensor, nl_tensor_unref)

G_END_DECLS
