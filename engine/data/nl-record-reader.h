/* nl-record-reader.h — reading record files (nl-record.h describes the
 * format): every record from byte 0, or the records of a byte range, so
 * that N readers over N adjacent ranges read every record once. */
#pragma once

#include <glib.h>
#include <stdint.h>

#include "engine/data/nl-record.h"

G_BEGIN_DECLS

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

G_END_DECLS
