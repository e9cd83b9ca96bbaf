/* nl-dtype.h — element types of tensors. */
#pragma once

#include <glib.h>
#include <stddef.h>

G_BEGIN_DECLS

typedef enum {
  NL_DTYPE_F32,
  NL_DTYPE_I32,
  NL_DTYPE_U8,
  NL_DTYPE_COUNT
} NlDType;

size_t nl_dtype_size (NlDType dtype);
const char *nl_dtype_name (NlDType dtype);

G_END_DECLS
