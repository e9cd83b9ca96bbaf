/* nl-record-private.h — what the record files' parts share: the framing
 * constants, byte helpers, the sample payload's header, and reading a
 * record through a bounded pread source (nl-record-frame.c). Private to
 * nl-record-frame.c, nl-record-writer.c, nl-record-reader.c,
 * nl-record-pack.c and nl-packed-dataset.c; the format is described in
 * nl-record.h and nl-packed-dataset.h. */
#pragma once

#include <glib.h>
#include <stdint.h>
#include <string.h>
#include <zlib.h>

#include "engine/data/nl-dataset.h" /* NL_DATA_ERROR */
#include "engine/data/nl-record.h"

G_BEGIN_DECLS

#define LEN_MASK ((1u << 29) - 1)
#define FLAG_NO_MAGIC 0x80000000u /* this part is followed by the next without a magic word */
#define CFLAG_WHOLE 0u
#define CFLAG_FIRST 1u
#define CFLAG_MIDDLE 2u
#define CFLAG_LAST 3u
#define IO_BUF (1 << 20)
#define PACK_FORMAT "netloom-packed"
/* version 2: every record ends in its crc32; version 1 (no checksums) still reads */
#define PACK_VERSION 2
#define CRC_BYTES 4

static inline guint32
get_le32 (const guint8 *p)
{
  return (guint32) p[0] | (guint32) p[1] << 8 | (guint32) p[2] << 16 | (guint32) p[3] << 24;
}

static inline void
put_le32 (guint8 *p, guint32 v)
{
  p[0] = v;
  p[1] = v >> 8;
  p[2] = v >> 16;
  p[3] = v >> 24;
}

static inline int64_t
pad4 (int64_t n)
{
  return (n + 3) & ~(int64_t) 3;
}

static inline guint32
crc32_of (const guint8 *p, size_t n)
{
  return (guint32) crc32_z (0, p, n);
}

/* ---- a file read with pread, through a buffer or not ---- */

typedef struct {
  int fd;
  const char *path;
  int64_t size; /* taken at open: the bound for every read */
  guint8 *buf;  /* NULL: unbuffered (and then thread-safe) */
  int64_t buf_off, buf_len;
} NlRecordSrc;

/* Open path for reading (buffered: through an IO_BUF buffer, else
 * unbuffered and then thread-safe), taking its size. */
gboolean nl_record_src_open (NlRecordSrc *s, const char *path, gboolean buffered, GError **error);
void nl_record_src_close (NlRecordSrc *s);
/* Load the buffer from off; the number of bytes it got, -1 on error. */
int64_t nl_record_src_fill (NlRecordSrc *s, int64_t off, GError **error);
/* Up to n bytes at off: fewer only at the end of the file; -1 on error. */
int64_t nl_record_src_read (NlRecordSrc *s, int64_t off, void *dst, int64_t n, GError **error);

/* ---- record framing ---- */

/* "PATH: record INDEX at byte OFF WHAT" (INDEX < 0: not known). */
void nl_record_error (GError **error, int code, const char *path, int64_t index, int64_t off, const char *fmt, ...)
  G_GNUC_PRINTF (6, 7);
/* Read and check the part header at off of the record at `start`: part 0
 * must begin a record, later ones must continue it. */
gboolean nl_record_read_part_header (NlRecordSrc *s, int64_t start, int64_t off, int part, int64_t index,
                                     guint32 *lrec, GError **error);
/* Read the record starting at off into out (NULL: only walk its parts).
 * 1 with *next after it, 0 at the end of the file, -1 with error. */
int nl_record_read (NlRecordSrc *s, int64_t off, int64_t index, GByteArray *out, int64_t *next, GError **error);

/* ---- sample payloads ---- */

/* The bytes before a sample record's values: label, ndim, dims, dtype. */
static inline int
header_size (int ndim)
{
  return 4 + 1 + 4 * ndim + 1;
}

G_END_DECLS
