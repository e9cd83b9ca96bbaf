/* nl-record.h — packed record files (the MXNet RecordIO layout): a writer,
 * a reader that can start anywhere in a file, packing a dataset into one
 * file, and the "packed:FILE" dataset that reads it back.
 *
 * Record framing (all words uint32 little-endian, every part starts at a
 * 4-byte-aligned file offset):
 *
 *   magic   0xced7230a
 *   lrecord (cflag << 29) | length      length < 2^29, cflag in bits 29-30:
 *                                       0 whole record, 1 first part,
 *                                       2 middle part, 3 last part
 *   payload `length` bytes
 *   padding zero bytes up to a multiple of 4 (after the last part only;
 *           earlier parts have lengths that are multiples of 4)
 *
 * As in MXNet, the writer never lets the magic word appear at an aligned
 * position inside a payload: where it would, the record is split there,
 * the word is left out, and a reader joining the parts puts it back. So an
 * aligned magic word in a file is always a part header, and a reader can
 * start at any byte, scan forward for the magic at 4-byte alignment, skip
 * continuation parts (cflag 2, 3) and be in step at the next record.
 * Payloads longer than the maximum part length (2^29 - 4 bytes, settable
 * for tests) are also split; such a cut has bit 31 of lrecord set on the
 * part before it, meaning "no magic word between this part and the next"
 * (MXNet cannot write records this long and leaves bit 31 zero). A reader
 * given the byte range [begin, end) returns exactly the records whose first
 * part starts in it, so N readers over N adjacent ranges read every record
 * once, with no index.
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

G_BEGIN_DECLS

#define NL_RECORD_MAGIC 0xced7230au
/* The longest part: the length field has 29 bits, and parts other than
 * the last must be a multiple of 4 long. */
#define NL_RECORD_MAX_PART ((guint32) ((1u << 29) - 4))

typedef enum {
  NL_RECORD_DTYPE_F32 = 0,
  NL_RECORD_DTYPE_U8 = 2,
  NL_RECORD_DTYPE_META = 0xff,
} NlRecordDType;

/* ---- writing ---- */

typedef struct NlRecordWriter NlRecordWriter;

/* Records go to a temporary file next to `path`, which becomes `path` only
 * on a successful nl_record_writer_close (fsync, then rename), so a failed
 * or interrupted write never leaves a partial file under that name. */
NlRecordWriter *nl_record_writer_open (const char *path, GError **error);
/* For tests: split payloads into parts of at most max_part bytes (a
 * multiple of 4, 4 .. NL_RECORD_MAX_PART). */
void nl_record_writer_set_max_part (NlRecordWriter *w, guint32 max_part);
gboolean nl_record_writer_append (NlRecordWriter *w, const void *data, size_t len, GError **error);
int64_t nl_record_writer_count (const NlRecordWriter *w);
/* Flush, fsync, rename into place and free w (also on failure, which
 * removes the temporary file). */
gboolean nl_record_writer_close (NlRecordWriter *w, GError **error);
/* Drop everything written and free w. NULL is ignored. */
void nl_record_writer_abort (NlRecordWriter *w);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (NlRecordWriter, nl_record_writer_abort)

/* ---- reading ---- */

typedef struct NlRecordReader NlRecordReader;

/* Every record, strictly from byte 0: anything that is not a record is an
 * error ("FILE: record 12 at byte 40960 is corrupt (bad magic ...)"). */
NlRecordReader *nl_record_reader_open (const char *path, GError **error);
/* The records whose first part starts in [begin, end) (end clamped to the
 * file size). Bytes before the first record start are scanned, not
 * checked; from there on reading is strict, and the record start at or
 * after `end` that stops the reader is checked too, so N readers over
 * adjacent ranges check the whole file between them. */
NlRecordReader *nl_record_reader_open_range (const char *path, int64_t begin, int64_t end,
                                             GError **error);
/* Part `part` of n_parts equal byte ranges of the file. */
NlRecordReader *nl_record_reader_open_part (const char *path, int part, int n_parts, GError **error);
/* 1 with the next record in *data / *len (valid until the next call),
 * 0 at the end of the range, -1 with error. */
int nl_record_reader_next (NlRecordReader *r, const guint8 **data, size_t *len, GError **error);
/* Byte offset of the record last returned by nl_record_reader_next. */
int64_t nl_record_reader_offset (const NlRecordReader *r);
void nl_record_reader_free (NlRecordReader *r);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (NlRecordReader, nl_record_reader_free)

/* ---- datasets ---- */

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
