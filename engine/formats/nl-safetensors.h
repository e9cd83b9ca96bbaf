/* nl-safetensors.h — a small reader and writer of the safetensors format
 * (https://github.com/huggingface/safetensors), so that standard readers
 * read what netloom writes and netloom can import their files:
 *
 *   8 bytes   N, little-endian unsigned: the header length
 *   N bytes   UTF-8 JSON object: name -> {"dtype": "F32", "shape": [..],
 *             "data_offsets": [begin, end]}, plus an optional
 *             "__metadata__": {string: string}; padded with spaces to a
 *             multiple of 8
 *   rest      the data section: raw little-endian tensors, offsets relative
 *             to its start, contiguous, no gaps, no overlaps
 *
 * The reader trusts nothing: every length, offset, shape and dtype is
 * checked before a tensor is handed out, and a file that fails a check is
 * rejected whole with one error naming the tensor or the byte position.
 *
 * Data is little-endian on disk and copied as is: netloom builds only for
 * little-endian hosts (asserted in nl-safetensors.c). */
#pragma once

#include <glib.h>
#include <stdint.h>

G_BEGIN_DECLS

#define NL_SAFETENSORS_ERROR (nl_safetensors_error_quark ())
GQuark nl_safetensors_error_quark (void);
typedef enum {
  NL_SAFETENSORS_ERROR_FORMAT,  /* not a valid safetensors file */
  NL_SAFETENSORS_ERROR_INVALID, /* writer misuse: duplicate or bad name */
} NlSafetensorsError;

/* Header size limit (the reference implementation's). */
#define NL_SAFETENSORS_MAX_HEADER (100 * 1000 * 1000)

typedef enum {
  NL_ST_BOOL,
  NL_ST_U8,
  NL_ST_I8,
  NL_ST_F8_E4M3,
  NL_ST_F8_E5M2,
  NL_ST_I16,
  NL_ST_U16,
  NL_ST_F16,
  NL_ST_BF16,
  NL_ST_I32,
  NL_ST_U32,
  NL_ST_F32,
  NL_ST_F64,
  NL_ST_I64,
  NL_ST_U64,
  NL_ST_COUNT
} NlStDType;

const char *nl_st_dtype_name (NlStDType d);     /* "F32" */
size_t nl_st_dtype_size (NlStDType d);           /* bytes per element */
gboolean nl_st_dtype_parse (const char *name, NlStDType *d);

typedef struct {
  char *name;
  NlStDType dtype;
  int ndim;
  int64_t *shape;          /* [ndim] */
  int64_t numel;
  size_t begin, end;       /* byte offsets into the data section */
  const guint8 *data;      /* begin of the bytes (inside the parsed GBytes; may be unaligned) */
} NlStTensor;

/* ---- reading ---- */

typedef struct NlSafetensors NlSafetensors;

/* Validates the whole file; keeps a reference on bytes. */
NlSafetensors *nl_safetensors_parse (GBytes *bytes, GError **error);
/* Maps the file and parses it; errors name the path. */
NlSafetensors *nl_safetensors_read_file (const char *path, GError **error);
void nl_safetensors_free (NlSafetensors *st);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (NlSafetensors, nl_safetensors_free)

/* Tensors in data-section order. */
int nl_safetensors_n_tensors (const NlSafetensors *st);
const NlStTensor *nl_safetensors_tensor (const NlSafetensors *st, int i);
const NlStTensor *nl_safetensors_find (const NlSafetensors *st, const char *name);
/* "__metadata__" entries; NULL when absent. */
const char *nl_safetensors_metadata (const NlSafetensors *st, const char *key);
GHashTable *nl_safetensors_metadata_table (const NlSafetensors *st); /* char* -> char*, borrowed */
GBytes *nl_safetensors_get_bytes (const NlSafetensors *st);           /* borrowed */

/* "(256, 784)"; free with g_free. */
char *nl_st_format_shape (int ndim, const int64_t *shape);

/* ---- writing ---- */

typedef struct NlSafetensorsWriter NlSafetensorsWriter;

NlSafetensorsWriter *nl_safetensors_writer_new (void);
void nl_safetensors_writer_free (NlSafetensorsWriter *w);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (NlSafetensorsWriter, nl_safetensors_writer_free)
/* data: numel * dtype size bytes (little-endian), borrowed until
 * finish. Tensors are written in the order added. */
void nl_safetensors_writer_add (NlSafetensorsWriter *w, const char *name, NlStDType dtype,
                                int ndim, const int64_t *shape, const void *data);
void nl_safetensors_writer_set_metadata (NlSafetensorsWriter *w, const char *key, const char *value);
/* The whole file in memory. Fails on duplicate, empty, reserved or non-UTF-8
 * names and non-UTF-8 metadata (checked here so that add stays void). */
GBytes *nl_safetensors_writer_finish (NlSafetensorsWriter *w, GError **error);

/* Writes bytes to path atomically: a temporary file, fsync, rename. */
gboolean nl_safetensors_write_file (const char *path, GBytes *bytes, GError **error);

G_END_DECLS
