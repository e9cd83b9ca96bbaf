/* nl-packed-dataset.h — packed datasets: a dataset packed into one
 * record file (nl-record.h), and the "packed:FILE" dataset that reads it
 * back.
 *
 * A netloom sample record's payload:
 *   float32 LE  label
 *   uint8       ndim (<= NL_MAX_DIMS)
 *   uint32 LE   dims[ndim]
 *   uint8       dtype: 0 float32 LE, 2 uint8 (0..255 meaning 0..1)
 *   data        numel (dims) values of dtype
 *   uint32 LE   crc32 (zlib's) of everything above (version 2)
 * A packed dataset file starts with one metadata record: the same header
 * with ndim 0 and dtype 0xff, the label word holding the crc32 of the
 * JSON that follows (version 1: 0), then UTF-8 JSON:
 *   { "format": "netloom-packed", "version": 2, "checksum": "crc32",
 *     "length": N, "sample_shape": [3, 32, 32], "dtype": "u8" | "f32",
 *     "n_classes": 10, "class_names": [...] | null, "description": "..." }
 * followed by exactly N sample records, all of that shape and dtype.
 * Version 1 files (netloom before checksums) read the same, unchecked. */
#pragma once

#include <gio/gio.h>
#include <glib.h>
#include <stdint.h>

#include "engine/data/nl-dataset.h"
#include "engine/data/nl-record.h"

G_BEGIN_DECLS

/* The dtype byte of a sample record's header. */
typedef enum {
  NL_RECORD_DTYPE_F32 = 0,
  NL_RECORD_DTYPE_U8 = 2,
  NL_RECORD_DTYPE_META = 0xff,
} NlRecordDType;

/* Write every sample of ds (in order) to out_path as a packed dataset:
 * uint8 data when ds has get_u8 or read_u8, else float32. Checks
 * `cancellable` between samples; on any failure out_path is untouched. */
gboolean nl_record_pack_dataset (NlDataset *ds, const char *out_path, GCancellable *cancellable,
                                 GError **error);
/* As above with a maximum part length (0 = NL_RECORD_MAX_PART), for tests. */
gboolean nl_record_pack_dataset_full (NlDataset *ds, const char *out_path, guint32 max_part,
                                      GCancellable *cancellable, GError **error);

/* "packed:FILE": scans the file once at open to index its records (and
 * checks the framing and the metadata), then get(i) preads record i, so
 * memory is 8 bytes per sample. uint8 files provide read_u8. */
NlDataset *nl_packed_dataset_open (const char *path, GError **error);
/* The format version of a packed dataset: 1 (records without checksums)
 * or 2. */
int nl_packed_dataset_version (const NlDataset *ds);

/* What nl_packed_dataset_verify found. */
typedef struct {
  int version;        /* 1: the records carry no checksums */
  int64_t n_records;  /* sample records read */
  int64_t n_damaged;  /* of those, failing their checksum, shape or label */
} NlPackedVerify;

/* Checks a whole packed file: its framing, metadata and record count (as
 * opening it does), then every sample record (its checksum, shape and
 * label, as reading it does). Each damaged record's error (naming file,
 * record and byte) goes to `damaged` (may be NULL), and reading goes on.
 * FALSE with error only when the file cannot be opened as a packed dataset
 * (then nothing after the broken framing can be found). */
gboolean nl_packed_dataset_verify (const char *path, void (*damaged) (gpointer user, const GError *e), gpointer user,
                                   NlPackedVerify *out, GError **error);

G_END_DECLS
