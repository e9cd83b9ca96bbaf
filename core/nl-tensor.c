/* nl-tensor.c — tensor lifetime, dtypes, shapes. */
#include "core/nl-tensor.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const size_t dtype_sizes[] = { 4, 4, 1 };
static const char *const dtype_names[] = { "float32", "int32", "uint8" };
G_STATIC_ASSERT (G_N_ELEMENTS (dtype_sizes) == NL_DTYPE_COUNT);
G_STATIC_ASSERT (G_N_ELEMENTS (dtype_names) == NL_DTYPE_COUNT);

size_t
nl_dtype_size (NlDType dtype)
{
  g_return_val_if_fail (dtype < NL_DTYPE_COUNT, 0);
  return dtype_sizes[dtype];
}

const char *
nl_dtype_name (NlDType dtype)
{
  g_return_val_if_fail (dtype < NL_DTYPE_COUNT, "?");
  return dtype_names[dtype];
}

NlShape
nl_shape_make (int ndim, const int64_t *dims)
{
  NlShape s = { .ndim = ndim };
  g_return_val_if_fail (ndim >= -1 && ndim <= NL_MAX_DIMS, NL_SHAPE_ABSENT);
  for (int i = 0; i < ndim; i++)
    s.d[i] = dims[i];
  return s;
}

NlShape
nl_shape_of (int ndim, ...)
{
  NlShape s = { .ndim = ndim };
  va_list ap;
  g_return_val_if_fail (ndim >= 0 && ndim <= NL_MAX_DIMS, NL_SHAPE_ABSENT);
  va_start (ap, ndim);
  for (int i = 0; i < ndim; i++)
    s.d[i] = va_arg (ap, int64_t);
  va_end (ap);
  return s;
}

int64_t
nl_shape_numel (const NlShape *s)
{
  int64_t n = 1;
  if (s->ndim < 0)
    return 0;
  for (int i = 0; i < s->ndim; i++)
    n *= s->d[i];
  return n;
}

gboolean
nl_shape_equal (const NlShape *a, const NlShape *b)
{
  if (a->ndim != b->ndim)
    return FALSE;
  for (int i = 0; i < a->ndim; i++)
    if (a->d[i] != b->d[i])
      return FALSE;
  return TRUE;
}

NlShape
nl_shape_batched (int64_t n, const NlShape *s)
{
  NlShape out = { .ndim = 1 + MAX (s->ndim, 0) };
  out.d[0] = n;
  for (int i = 0; i < s->ndim; i++)
    out.d[i + 1] = s->d[i];
  return out;
}

char *
nl_shape_format (const NlShape *s, char *buf, size_t size)
{
  size_t n = 0;
  if (s->ndim < 0)
    {
      g_strlcpy (buf, "(absent)", size);
      return buf;
    }
  n += snprintf (buf + n, size - n, "(");
  for (int i = 0; i < s->ndim && n < size; i++)
    n += snprintf (buf + n, size - n, i ? ", %" G_GINT64_FORMAT : "%" G_GINT64_FORMAT, s->d[i]);
  if (n < size)
    snprintf (buf + n, size - n, ")");
  return buf;
}

static void
set_contiguous (NlTensor *t, const NlShape *shape)
{
  int64_t stride = 1;
  t->ndim = shape->ndim;
  for (int i = shape->ndim - 1; i >= 0; i--)
    {
      t->shape[i] = shape->d[i];
      t->strides[i] = stride;
      stride *= shape->d[i];
    }
}

NlTensor *
nl_tensor_new_on (NlStorage *storage, size_t offset, NlDType dtype, const NlShape *shape)
{
  NlTensor *t;
  g_return_val_if_fail (storage != NULL && shape->ndim >= 0, NULL);
  g_return_val_if_fail ((offset + nl_shape_numel (shape)) * nl_dtype_size (dtype) <= storage->nbytes, NULL);
  t = g_new0 (NlTensor, 1);
  g_atomic_ref_count_init (&t->ref);
  t->dtype = dtype;
  t->storage = nl_storage_ref (storage);
  t->offset = offset;
  set_contiguous (t, shape);
  return t;
}

NlTensor *
nl_tensor_new_shape (NlDType dtype, const NlShape *shape)
{
  NlStorage *s;
  NlTensor *t;
  g_return_val_if_fail (shape->ndim >= 0 && shape->ndim <= NL_MAX_DIMS, NULL);
  s = nl_storage_new (nl_shape_numel (shape) * nl_dtype_size (dtype));
  if (s == NULL)
    return NULL;
  t = nl_tensor_new_on (s, 0, dtype, shape);
  nl_storage_unref (s);
  return t;
}

NlTensor *
nl_tensor_new (NlDType dtype, int ndim, const int64_t *shape)
{
  NlShape s = nl_shape_make (ndim, shape);
  return nl_tensor_new_shape (dtype, &s);
}

NlTensor *
nl_tensor_zeros (NlDType dtype, const NlShape *shape)
{
  NlTensor *t = nl_tensor_new_shape (dtype, shape);
  if (t)
    memset ((char *) t->storage->data + t->offset * nl_dtype_size (dtype), 0,
            nl_shape_numel (shape) * nl_dtype_size (dtype));
  return t;
}

NlTensor *
nl_tensor_ref (NlTensor *t)
{
  g_atomic_ref_count_inc (&t->ref);
  return t;
}

void
nl_tensor_unref (NlTensor *t)
{
  if (t && g_atomic_ref_count_dec (&t->ref))
    {
      nl_storage_unref (t->storage);
      g_free (t);
    }
}

gboolean
nl_tensor_is_contiguous (const NlTensor *t)
{
  int64_t stride = 1;
  for (int i = t->ndim - 1; i >= 0; i--)
    {
      if (t->shape[i] != 1 && t->strides[i] != stride)
        return FALSE;
      stride *= t->shape[i];
    }
  return TRUE;
}

NlTensor *
nl_tensor_reshape (NlTensor *t, const NlShape *shape)
{
  g_return_val_if_fail (nl_tensor_is_contiguous (t), NULL);
  g_return_val_if_fail (nl_shape_numel (shape) == nl_tensor_numel (t), NULL);
  return nl_tensor_new_on (t->storage, t->offset, t->dtype, shape);
}

NlTensor *
nl_tensor_copy (const NlTensor *t)
{
  NlShape s = nl_tensor_get_shape (t);
  NlTensor *c;
  g_return_val_if_fail (nl_tensor_is_contiguous (t), NULL);
  c = nl_tensor_new_shape (t->dtype, &s);
  if (c)
    memcpy (c->storage->data, (char *) t->storage->data + t->offset * nl_dtype_size (t->dtype),
            nl_shape_numel (&s) * nl_dtype_size (t->dtype));
  return c;
}

void
nl_tensor_fill (NlTensor *t, float value)
{
  float *p = nl_tensor_f32 (t);
  int64_t n = nl_tensor_numel (t);
  g_return_if_fail (t->dtype == NL_DTYPE_F32 && nl_tensor_is_contiguous (t));
  for (int64_t i = 0; i < n; i++)
    p[i] = value;
}
