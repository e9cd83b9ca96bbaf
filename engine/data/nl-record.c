/* nl-record.c — packed record files: writer, range reader, dataset packer
 * and the packed dataset. The format is described in nl-record.h.
 *
 * Every read is bounded by the file size taken at open, so no length
 * field can make a reader allocate more than the file holds or loop
 * without advancing. */
#include "engine/data/nl-record.h"
#include "engine/nl-atomic-file.h"
#include "engine/nl-json-member.h"
#include "core/nl-json-guard.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

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
} Src;

static int64_t
pread_some (Src *s, void *dst, int64_t n, int64_t off, GError **error)
{
  for (;;)
    {
      ssize_t r = pread (s->fd, dst, (size_t) MIN (n, (int64_t) 1 << 30), off);
      if (r >= 0)
        return r;
      if (errno != EINTR)
        {
          int err = errno;
          g_set_error (error, NL_DATA_ERROR, NL_DATA_ERROR_NOT_FOUND, "cannot read %s: %s", s->path,
                       g_strerror (err));
          return -1;
        }
    }
}

/* Load the buffer from off; the number of bytes it got, -1 on error. */
static int64_t
src_fill (Src *s, int64_t off, GError **error)
{
  int64_t r = pread_some (s, s->buf, MIN ((int64_t) IO_BUF, s->size - off), off, error);
  s->buf_off = off;
  s->buf_len = MAX (r, 0);
  return r;
}

/* Up to n bytes at off: fewer only at the end of the file; -1 on error. */
static int64_t
src_read (Src *s, int64_t off, void *dst, int64_t n, GError **error)
{
  n = CLAMP (s->size - off, 0, n);
  int64_t got = 0;
  while (got < n)
    {
      int64_t at = off + got;
      if (s->buf && at >= s->buf_off && at < s->buf_off + s->buf_len)
        {
          int64_t k = MIN (n - got, s->buf_off + s->buf_len - at);
          memcpy ((guint8 *) dst + got, s->buf + (at - s->buf_off), k);
          got += k;
          continue;
        }
      int64_t r;
      if (s->buf && n - got < IO_BUF)
        r = src_fill (s, at, error); /* then copied from the buffer */
      else if ((r = pread_some (s, (guint8 *) dst + got, n - got, at, error)) > 0)
        got += r;
      if (r < 0)
        return -1;
      if (r == 0)
        break; /* the file shrank */
    }
  return got;
}

/* ---- record framing ---- */

static void G_GNUC_PRINTF (6, 7)
record_error (GError **error, int code, const char *path, int64_t index, int64_t off, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  g_autofree char *what = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  if (index >= 0)
    g_set_error (error, NL_DATA_ERROR, code, "%s: record %" G_GINT64_FORMAT " at byte %" G_GINT64_FORMAT " %s",
                 path, index, off, what);
  else
    g_set_error (error, NL_DATA_ERROR, code, "%s: record at byte %" G_GINT64_FORMAT " %s", path, off, what);
}

/* " in its part at byte N" for parts after the first, for messages. */
static const char *
part_where (char *buf, gsize size, int part, int64_t off)
{
  if (!part)
    return "";
  g_snprintf (buf, size, " in its part at byte %" G_GINT64_FORMAT, off);
  return buf;
}

/* Read and check the part header at off of the record at `start`: part 0
 * must begin a record, later ones must continue it. */
static gboolean
read_part_header (Src *s, int64_t start, int64_t off, int part, int64_t index, guint32 *lrec, GError **error)
{
  guint8 h[8];
  char wb[64];
  int64_t got = src_read (s, off, h, 8, error);
  if (got < 0)
    return FALSE;
  if (got >= 4 && get_le32 (h) != NL_RECORD_MAGIC)
    {
      record_error (error, NL_DATA_ERROR_CORRUPT, s->path, index, start, "is corrupt (bad magic 0x%08x%s)",
                    get_le32 (h), part_where (wb, sizeof wb, part, off));
      return FALSE;
    }
  if (got < 8)
    {
      record_error (error, NL_DATA_ERROR_CORRUPT, s->path, index, start,
                    "is truncated (%" G_GINT64_FORMAT " bytes left for an 8-byte header%s)", got,
                    part_where (wb, sizeof wb, part, off));
      return FALSE;
    }
  *lrec = get_le32 (h + 4);
  guint32 cflag = (*lrec >> 29) & 3, len = *lrec & LEN_MASK;
  if (part == 0 && (cflag == CFLAG_MIDDLE || cflag == CFLAG_LAST))
    {
      record_error (error, NL_DATA_ERROR_CORRUPT, s->path, index, start,
                    "is corrupt (a continuation part where a record should start)");
      return FALSE;
    }
  if (part > 0 && (cflag == CFLAG_WHOLE || cflag == CFLAG_FIRST))
    {
      record_error (error, NL_DATA_ERROR_CORRUPT, s->path, index, start,
                    "is corrupt (its part %d at byte %" G_GINT64_FORMAT " starts a new record)", part, off);
      return FALSE;
    }
  if ((cflag == CFLAG_FIRST || cflag == CFLAG_MIDDLE) && len % 4 != 0)
    {
      record_error (error, NL_DATA_ERROR_CORRUPT, s->path, index, start,
                    "is corrupt (part %d has length %u, not a multiple of 4%s)", part, len,
                    part_where (wb, sizeof wb, part, off));
      return FALSE;
    }
  int64_t left = s->size - off - 8;
  if (pad4 (len) > left)
    {
      record_error (error, NL_DATA_ERROR_CORRUPT, s->path, index, start,
                    "is truncated (%u payload bytes declared, %" G_GINT64_FORMAT " left in the file%s)", len,
                    left, part_where (wb, sizeof wb, part, off));
      return FALSE;
    }
  return TRUE;
}

/* Read the record starting at off into out (NULL: only walk its parts).
 * 1 with *next after it, 0 at the end of the file, -1 with error. */
static int
read_record (Src *s, int64_t off, int64_t index, GByteArray *out, int64_t *next, GError **error)
{
  if (off >= s->size)
    return 0;
  int64_t start = off;
  for (int part = 0;; part++)
    {
      guint32 lrec;
      if (!read_part_header (s, start, off, part, index, &lrec, error))
        return -1;
      guint32 cflag = (lrec >> 29) & 3, len = lrec & LEN_MASK;
      /* an empty part adds nothing: out->data may still be NULL */
      if (out && len > 0)
        {
          guint old = out->len;
          g_byte_array_set_size (out, old + len);
          int64_t got = src_read (s, off + 8, out->data + old, len, error);
          if (got < 0)
            return -1;
          if (got < len)
            {
              record_error (error, NL_DATA_ERROR_CORRUPT, s->path, index, start, "is truncated (the file shrank)");
              return -1;
            }
          /* the writer splits a payload where the magic word would sit
           * aligned, so readers starting mid-file stay in step: one there
           * was not written by it (a reader from the middle would take it
           * for a record) */
          for (guint32 k = 0; k + 4 <= len; k += 4)
            if (get_le32 (out->data + old + k) == NL_RECORD_MAGIC)
              {
                record_error (error, NL_DATA_ERROR_CORRUPT, s->path, index, start,
                              "is corrupt (the magic word inside its payload at byte %" G_GINT64_FORMAT ")",
                              off + 8 + k);
                return -1;
              }
        }
      off += 8 + pad4 (len);
      if (cflag == CFLAG_WHOLE || cflag == CFLAG_LAST)
        break;
      if (out && !(lrec & FLAG_NO_MAGIC))
        {
          guint8 m[4];
          put_le32 (m, NL_RECORD_MAGIC);
          g_byte_array_append (out, m, 4);
        }
    }
  *next = off;
  return 1;
}

static gboolean
open_src (Src *s, const char *path, gboolean buffered, GError **error)
{
  memset (s, 0, sizeof *s);
  s->path = path;
  s->fd = open (path, O_RDONLY | O_CLOEXEC);
  struct stat st;
  int err = s->fd < 0 ? errno : fstat (s->fd, &st) < 0 ? errno : S_ISDIR (st.st_mode) ? EISDIR : 0;
  if (err)
    {
      if (s->fd >= 0)
        close (s->fd);
      s->fd = -1;
      g_set_error (error, NL_DATA_ERROR, NL_DATA_ERROR_NOT_FOUND, "cannot open %s: %s", path, g_strerror (err));
      return FALSE;
    }
  s->size = st.st_size;
  if (buffered)
    s->buf = g_malloc (IO_BUF);
  return TRUE;
}

static void
close_src (Src *s)
{
  if (s->fd >= 0)
    close (s->fd);
  s->fd = -1;
  g_clear_pointer (&s->buf, g_free);
}

/* ---- writer ---- */

struct NlRecordWriter {
  NlAtomicFile *file;
  GByteArray *buf;
  guint32 max_part;
  int64_t count;
  gboolean failed;
};

static gboolean
write_all (NlRecordWriter *w, const guint8 *p, size_t n, GError **error)
{
  if (!nl_atomic_file_write (w->file, p, n, error))
    {
      w->failed = TRUE;
      return FALSE;
    }
  return TRUE;
}

static gboolean
flush_buf (NlRecordWriter *w, GError **error)
{
  gboolean ok = write_all (w, w->buf->data, w->buf->len, error);
  g_byte_array_set_size (w->buf, 0);
  return ok;
}

static gboolean
put_bytes (NlRecordWriter *w, const guint8 *p, size_t n, GError **error)
{
  if (w->buf->len + n <= IO_BUF)
    {
      g_byte_array_append (w->buf, p, n);
      return TRUE;
    }
  if (!flush_buf (w, error))
    return FALSE;
  if (n >= IO_BUF)
    return write_all (w, p, n, error);
  g_byte_array_append (w->buf, p, n);
  return TRUE;
}

static gboolean
put_part (NlRecordWriter *w, guint32 cflag, gboolean no_magic, const guint8 *p, guint32 len, GError **error)
{
  guint8 h[8];
  put_le32 (h, NL_RECORD_MAGIC);
  put_le32 (h + 4, (no_magic ? FLAG_NO_MAGIC : 0) | cflag << 29 | len);
  return put_bytes (w, h, 8, error) && put_bytes (w, p, len, error);
}

NlRecordWriter *
nl_record_writer_open (const char *path, GError **error)
{
  g_return_val_if_fail (path, NULL);
  NlAtomicFile *file = nl_atomic_file_open (path, error);
  if (!file)
    return NULL;
  NlRecordWriter *w = g_new0 (NlRecordWriter, 1);
  w->file = file;
  w->buf = g_byte_array_sized_new (IO_BUF);
  w->max_part = NL_RECORD_MAX_PART;
  return w;
}

void
nl_record_writer_set_max_part (NlRecordWriter *w, guint32 max_part)
{
  g_return_if_fail (max_part >= 4 && max_part % 4 == 0 && max_part <= NL_RECORD_MAX_PART);
  w->max_part = max_part;
}

int64_t
nl_record_writer_count (const NlRecordWriter *w)
{
  return w->count;
}

gboolean
nl_record_writer_append (NlRecordWriter *w, const void *data, size_t len, GError **error)
{
  g_return_val_if_fail (w && (data || len == 0), FALSE);
  if (w->failed)
    {
      g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_FAILED, "cannot append to %s: an earlier write failed",
                   nl_atomic_file_path (w->file));
      return FALSE;
    }
  /* an empty record may come as NULL: no offset may be applied to that */
  static const guint8 no_bytes[1];
  const guint8 *p = len > 0 ? data : no_bytes;
  guint8 magic[4];
  put_le32 (magic, NL_RECORD_MAGIC);
  /* Cut where a part reaches max_part (no magic dropped) and where the
   * magic word sits at an aligned offset (the word dropped). Every cut is
   * at an aligned offset, so all parts but the last are multiples of 4
   * long and every part header stays aligned in the file. */
  size_t dptr = 0;
  gboolean first = TRUE;
  for (size_t i = 0; i + 4 <= len; i += 4)
    {
      if (i - dptr == w->max_part)
        {
          if (!put_part (w, first ? CFLAG_FIRST : CFLAG_MIDDLE, TRUE, p + dptr, (guint32) (i - dptr), error))
            return FALSE;
          first = FALSE;
          dptr = i;
        }
      if (memcmp (p + i, magic, 4) == 0)
        {
          if (!put_part (w, first ? CFLAG_FIRST : CFLAG_MIDDLE, FALSE, p + dptr, (guint32) (i - dptr), error))
            return FALSE;
          first = FALSE;
          dptr = i + 4;
        }
    }
  /* The unaligned tail (< 4 bytes) can push the last piece over. */
  if (len - dptr > w->max_part)
    {
      if (!put_part (w, first ? CFLAG_FIRST : CFLAG_MIDDLE, TRUE, p + dptr, w->max_part, error))
        return FALSE;
      first = FALSE;
      dptr += w->max_part;
    }
  if (!put_part (w, first ? CFLAG_WHOLE : CFLAG_LAST, FALSE, p + dptr, (guint32) (len - dptr), error))
    return FALSE;
  static const guint8 zeros[4] = { 0 };
  if (!put_bytes (w, zeros, pad4 (len - dptr) - (len - dptr), error))
    return FALSE;
  w->count++;
  return TRUE;
}

void
nl_record_writer_abort (NlRecordWriter *w)
{
  if (!w)
    return;
  nl_atomic_file_abort (w->file);
  g_byte_array_unref (w->buf);
  g_free (w);
}

gboolean
nl_record_writer_close (NlRecordWriter *w, GError **error)
{
  g_return_val_if_fail (w, FALSE);
  if (w->failed)
    {
      g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_FAILED, "cannot finish %s: an earlier write failed",
                   nl_atomic_file_path (w->file));
      nl_record_writer_abort (w);
      return FALSE;
    }
  if (!flush_buf (w, error))
    {
      nl_record_writer_abort (w);
      return FALSE;
    }
  gboolean ok = nl_atomic_file_commit (g_steal_pointer (&w->file), error);
  g_byte_array_unref (w->buf);
  g_free (w);
  return ok;
}

/* ---- reader ---- */

struct NlRecordReader {
  char *path;
  Src src;
  int64_t begin, end;
  int64_t pos;   /* the next record start */
  int64_t index; /* the next record's index, -1 when not known (range not at 0) */
  int64_t last;  /* offset of the record last returned */
  gboolean started, done;
  GByteArray *rec;
};

NlRecordReader *
nl_record_reader_open_range (const char *path, int64_t begin, int64_t end, GError **error)
{
  g_return_val_if_fail (path, NULL);
  NlRecordReader *r = g_new0 (NlRecordReader, 1);
  r->path = g_strdup (path);
  if (!open_src (&r->src, r->path, TRUE, error))
    {
      g_free (r->path);
      g_free (r);
      return NULL;
    }
  r->begin = CLAMP (begin, 0, r->src.size);
  r->end = CLAMP (end, r->begin, r->src.size);
  r->index = r->begin == 0 ? 0 : -1;
  r->last = -1;
  r->rec = g_byte_array_new ();
  return r;
}

NlRecordReader *
nl_record_reader_open (const char *path, GError **error)
{
  return nl_record_reader_open_range (path, 0, G_MAXINT64, error);
}

NlRecordReader *
nl_record_reader_open_part (const char *path, int part, int n_parts, GError **error)
{
  g_return_val_if_fail (n_parts > 0 && part >= 0 && part < n_parts, NULL);
  NlRecordReader *r = nl_record_reader_open_range (path, 0, G_MAXINT64, error);
  if (!r)
    return NULL;
  int64_t size = r->src.size;
  /* size * part / n_parts without overflow for any file size. */
  r->begin = size / n_parts * part + size % n_parts * part / n_parts;
  r->end = size / n_parts * (part + 1) + size % n_parts * (part + 1) / n_parts;
  r->index = r->begin == 0 ? 0 : -1;
  return r;
}

/* Find the first record start at an aligned offset in [begin, end) and
 * put it in r->pos: 1, or 0 when there is none, -1 on error. Continuation
 * parts are skipped whole; the writer keeps the magic out of aligned
 * payload positions, so the first aligned magic word found is a real part
 * header. */
static int
resync (NlRecordReader *r, GError **error)
{
  Src *s = &r->src;
  int64_t q = pad4 (r->begin);
  while (q < r->end && q + 8 <= s->size)
    {
      /* Scan the buffer directly: words one by one through src_read would
       * cost a call per 4 bytes of a large record. */
      if (!(q >= s->buf_off && q + 8 <= s->buf_off + s->buf_len))
        {
          int64_t got = src_fill (s, q, error);
          if (got < 0)
            return -1;
          if (got < 8)
            return 0; /* the file shrank */
        }
      const guint8 *b = s->buf + (q - s->buf_off);
      int64_t stop = MIN (s->buf_off + s->buf_len - 8, r->end - 1);
      while (q <= stop && get_le32 (b) != NL_RECORD_MAGIC)
        q += 4, b += 4;
      if (q > stop)
        continue; /* refill at q */
      guint32 lrec = get_le32 (b + 4), cflag = (lrec >> 29) & 3;
      if (cflag == CFLAG_WHOLE || cflag == CFLAG_FIRST)
        {
          r->pos = q;
          return 1;
        }
      int64_t skip = q + 8 + pad4 (lrec & LEN_MASK);
      q = skip <= s->size ? skip : q + 4;
    }
  return 0;
}

int
nl_record_reader_next (NlRecordReader *r, const guint8 **data, size_t *len, GError **error)
{
  if (r->done)
    return 0;
  if (!r->started)
    {
      r->started = TRUE;
      r->pos = r->begin;
      int rc = r->begin > 0 ? resync (r, error) : 1;
      if (rc <= 0)
        {
          r->done = TRUE;
          return rc;
        }
    }
  if (r->pos >= r->end || r->pos >= r->src.size)
    {
      r->done = TRUE;
      /* The record after our range must start properly, or the bytes
       * between here and the next reader's first record go unchecked. */
      guint32 lrec;
      if (r->pos < r->src.size && !read_part_header (&r->src, r->pos, r->pos, 0, r->index, &lrec, error))
        return -1;
      return 0;
    }
  g_byte_array_set_size (r->rec, 0);
  int64_t next;
  if (read_record (&r->src, r->pos, r->index, r->rec, &next, error) < 0)
    {
      r->done = TRUE;
      return -1;
    }
  r->last = r->pos;
  r->pos = next;
  if (r->index >= 0)
    r->index++;
  *data = r->rec->data;
  *len = r->rec->len;
  return 1;
}

int64_t
nl_record_reader_offset (const NlRecordReader *r)
{
  return r->last;
}

void
nl_record_reader_free (NlRecordReader *r)
{
  if (!r)
    return;
  close_src (&r->src);
  g_byte_array_unref (r->rec);
  g_free (r->path);
  g_free (r);
}

/* ---- sample payloads ---- */

static int
header_size (int ndim)
{
  return 4 + 1 + 4 * ndim + 1;
}

static void
put_header (guint8 *p, float label, const NlShape *shape, guint8 dtype)
{
  guint32 bits;
  memcpy (&bits, &label, 4);
  put_le32 (p, bits);
  p[4] = (guint8) shape->ndim;
  for (int k = 0; k < shape->ndim; k++)
    put_le32 (p + 5 + 4 * k, (guint32) shape->d[k]);
  p[5 + 4 * shape->ndim] = dtype;
}

static char *
metadata_json (NlDataset *ds, gboolean u8)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "format");
  json_builder_add_string_value (b, PACK_FORMAT);
  json_builder_set_member_name (b, "version");
  json_builder_add_int_value (b, PACK_VERSION);
  json_builder_set_member_name (b, "checksum");
  json_builder_add_string_value (b, "crc32");
  json_builder_set_member_name (b, "length");
  json_builder_add_int_value (b, ds->length);
  json_builder_set_member_name (b, "sample_shape");
  json_builder_begin_array (b);
  for (int k = 0; k < ds->sample_shape.ndim; k++)
    json_builder_add_int_value (b, ds->sample_shape.d[k]);
  json_builder_end_array (b);
  json_builder_set_member_name (b, "dtype");
  json_builder_add_string_value (b, u8 ? "u8" : "f32");
  json_builder_set_member_name (b, "n_classes");
  json_builder_add_int_value (b, ds->n_classes);
  json_builder_set_member_name (b, "class_names");
  if (ds->class_names)
    {
      json_builder_begin_array (b);
      for (int c = 0; ds->class_names[c]; c++)
        json_builder_add_string_value (b, ds->class_names[c]);
      json_builder_end_array (b);
    }
  else
    json_builder_add_null_value (b);
  json_builder_set_member_name (b, "description");
  json_builder_add_string_value (b, ds->description ? ds->description : "");
  json_builder_end_object (b);
  g_autoptr (JsonNode) root = json_builder_get_root (b);
  return json_to_string (root, FALSE);
}

gboolean
nl_record_pack_dataset_full (NlDataset *ds, const char *out_path, guint32 max_part, GCancellable *cancellable,
                             GError **error)
{
  g_return_val_if_fail (ds && out_path, FALSE);
  const NlShape *shape = &ds->sample_shape;
  for (int k = 0; k < shape->ndim; k++)
    if (shape->d[k] <= 0 || shape->d[k] > G_MAXUINT32)
      {
        g_set_error (error, NL_DATA_ERROR, NL_DATA_ERROR_MISMATCH, "cannot pack %s: sample dimension %d is %"
                     G_GINT64_FORMAT, out_path, k, shape->d[k]);
        return FALSE;
      }
  int64_t numel = nl_shape_numel (shape);
  gboolean u8 = ds->klass->get_u8 || ds->klass->read_u8;
  int hs = header_size (shape->ndim);
  int64_t data_bytes = numel * (u8 ? 1 : 4);

  g_autoptr (NlRecordWriter) w = nl_record_writer_open (out_path, error);
  if (!w)
    return FALSE;
  if (max_part)
    nl_record_writer_set_max_part (w, max_part);

  g_autofree char *json = metadata_json (ds, u8);
  gsize json_len = strlen (json);
  g_autofree guint8 *meta = g_malloc (header_size (0) + json_len);
  NlShape none = { .ndim = 0 };
  put_header (meta, 0.0f, &none, NL_RECORD_DTYPE_META);
  /* the metadata's checksum (of its JSON) takes the label's place */
  put_le32 (meta, crc32_of ((const guint8 *) json, json_len));
  memcpy (meta + header_size (0), json, json_len);
  if (!nl_record_writer_append (w, meta, header_size (0) + json_len, error))
    return FALSE;

  g_autofree guint8 *rec = g_malloc (hs + data_bytes + CRC_BYTES);
  g_autofree float *values = u8 ? NULL : g_new (float, numel);
  for (int64_t i = 0; i < ds->length; i++)
    {
      if (g_cancellable_set_error_if_cancelled (cancellable, error))
        return FALSE;
      float label = 0;
      if (ds->klass->get_u8)
        {
          const guint8 *px = ds->klass->get_u8 (ds, i, &label);
          if (!px)
            {
              g_set_error (error, NL_DATA_ERROR, NL_DATA_ERROR_MISMATCH, "cannot pack %s: sample %" G_GINT64_FORMAT
                           " of %s has no data", out_path, i, ds->description ? ds->description : "the dataset");
              return FALSE;
            }
          memcpy (rec + hs, px, numel);
        }
      else if (ds->klass->read_u8)
        {
          if (!ds->klass->read_u8 (ds, i, rec + hs, &label, error))
            return FALSE;
        }
      else
        {
          if (!nl_dataset_get (ds, i, values, &label, error))
            return FALSE;
          for (int64_t k = 0; k < numel; k++)
            {
              guint32 bits;
              memcpy (&bits, &values[k], 4);
              put_le32 (rec + hs + 4 * k, bits);
            }
        }
      put_header (rec, label, shape, u8 ? NL_RECORD_DTYPE_U8 : NL_RECORD_DTYPE_F32);
      put_le32 (rec + hs + data_bytes, crc32_of (rec, hs + data_bytes));
      if (!nl_record_writer_append (w, rec, hs + data_bytes + CRC_BYTES, error))
        return FALSE;
    }
  return nl_record_writer_close (g_steal_pointer (&w), error);
}

gboolean
nl_record_pack_dataset (NlDataset *ds, const char *out_path, GCancellable *cancellable, GError **error)
{
  return nl_record_pack_dataset_full (ds, out_path, 0, cancellable, error);
}

/* ---- the packed dataset ---- */

typedef struct {
  NlDataset base;
  char *path;
  int fd;
  int64_t size;
  int64_t *offsets; /* of sample i's record (record i + 1) */
  guint8 dtype;
  int64_t numel;
  int version; /* >= 2: records end in their crc32 */
} NlPackedDataset;

/* Read sample i's record and check it against the metadata; returns the
 * payload (g_byte_array_unref) with *data at the values. */
static GByteArray *
packed_read (NlPackedDataset *d, int64_t i, const guint8 **data, float *label, GError **error)
{
  NlDataset *ds = &d->base;
  if (i < 0 || i >= ds->length)
    {
      g_set_error (error, NL_DATA_ERROR, NL_DATA_ERROR_MISMATCH,
                   "sample index %" G_GINT64_FORMAT " is out of range for a dataset of %" G_GINT64_FORMAT,
                   i, ds->length);
      return NULL;
    }
  Src s = { .fd = d->fd, .path = d->path, .size = d->size }; /* unbuffered: pread only, thread-safe */
  GByteArray *rec = g_byte_array_new ();
  int64_t next;
  int rc = read_record (&s, d->offsets[i], i + 1, rec, &next, error);
  if (rc <= 0)
    {
      if (rc == 0)
        record_error (error, NL_DATA_ERROR_CORRUPT, d->path, i + 1, d->offsets[i], "is missing (the file shrank)");
      g_byte_array_unref (rec);
      return NULL;
    }
  const NlShape *shape = &ds->sample_shape;
  int hs = header_size (shape->ndim);
  int64_t body = hs + d->numel * (d->dtype == NL_RECORD_DTYPE_U8 ? 1 : 4);
  int64_t want = body + (d->version >= 2 ? CRC_BYTES : 0);
  /* damage inside the record: caught here, before any field is trusted */
  if (d->version >= 2 && rec->len == want)
    {
      guint32 stored = get_le32 (rec->data + body), computed = crc32_of (rec->data, body);
      if (stored != computed)
        {
          record_error (error, NL_DATA_ERROR_CORRUPT, d->path, i + 1, d->offsets[i],
                        "is damaged: checksum mismatch (stored %08x, computed %08x)", stored, computed);
          g_byte_array_unref (rec);
          return NULL;
        }
    }
  gboolean ok = rec->len == want && rec->data[4] == shape->ndim && rec->data[hs - 1] == d->dtype;
  for (int k = 0; ok && k < shape->ndim; k++)
    ok = get_le32 (rec->data + 5 + 4 * k) == (guint32) shape->d[k];
  if (!ok)
    {
      char buf[64];
      record_error (error, NL_DATA_ERROR_CORRUPT, d->path, i + 1, d->offsets[i],
                    "does not hold a sample of shape %s and dtype %s as the metadata says (%u bytes)",
                    nl_shape_format (shape, buf, sizeof buf), d->dtype == NL_RECORD_DTYPE_U8 ? "u8" : "f32", rec->len);
      g_byte_array_unref (rec);
      return NULL;
    }
  guint32 bits = get_le32 (rec->data);
  memcpy (label, &bits, 4);
  /* a class index the loss would read out of range, or a NaN it would spread */
  if (!isfinite (*label) || (ds->n_classes > 0 && (*label < 0 || *label >= ds->n_classes || *label != floorf (*label))))
    {
      if (ds->n_classes > 0)
        record_error (error, NL_DATA_ERROR_CORRUPT, d->path, i + 1, d->offsets[i],
                      "has label %g, not a class index from 0 to %d", (double) *label, ds->n_classes - 1);
      else
        record_error (error, NL_DATA_ERROR_CORRUPT, d->path, i + 1, d->offsets[i], "has label %g, not a finite number",
                      (double) *label);
      g_byte_array_unref (rec);
      return NULL;
    }
  *data = rec->data + hs;
  return rec;
}

static gboolean
packed_get (NlDataset *ds, int64_t i, float *sample, float *label, GError **error)
{
  NlPackedDataset *d = (NlPackedDataset *) ds;
  const guint8 *p;
  g_autoptr (GByteArray) rec = packed_read (d, i, &p, label, error);
  if (!rec)
    return FALSE;
  if (d->dtype == NL_RECORD_DTYPE_U8)
    for (int64_t k = 0; k < d->numel; k++)
      sample[k] = (float) p[k] / 255.0f;
  else
    for (int64_t k = 0; k < d->numel; k++)
      {
        guint32 bits = get_le32 (p + 4 * k);
        memcpy (&sample[k], &bits, 4);
      }
  return TRUE;
}

static gboolean
packed_read_u8 (NlDataset *ds, int64_t i, guint8 *sample, float *label, GError **error)
{
  NlPackedDataset *d = (NlPackedDataset *) ds;
  const guint8 *p;
  g_autoptr (GByteArray) rec = packed_read (d, i, &p, label, error);
  if (!rec)
    return FALSE;
  memcpy (sample, p, d->numel);
  return TRUE;
}

static void
packed_free (NlDataset *ds)
{
  NlPackedDataset *d = (NlPackedDataset *) ds;
  if (d->fd >= 0)
    close (d->fd);
  g_free (d->offsets);
  g_free (d->path);
  g_free (d);
}

static const NlDatasetClass packed_f32_class = {
  .type_name = "packed",
  .get = packed_get,
  .free = packed_free,
};

static const NlDatasetClass packed_u8_class = {
  .type_name = "packed",
  .get = packed_get,
  .read_u8 = packed_read_u8,
  .free = packed_free,
};

static gboolean
meta_error (GError **error, const char *path, const char *what)
{
  g_set_error (error, NL_DATA_ERROR, NL_DATA_ERROR_CORRUPT, "%s: record 0 at byte 0 has bad metadata: %s", path, what);
  return FALSE;
}

static gboolean
json_int (JsonObject *o, const char *name, int64_t lo, int64_t hi, int64_t *v)
{
  JsonNode *n = json_object_get_member (o, name);
  if (!n || !JSON_NODE_HOLDS_VALUE (n) || json_node_get_value_type (n) != G_TYPE_INT64)
    return FALSE;
  *v = json_node_get_int (n);
  return *v >= lo && *v <= hi;
}

/* Parse the metadata record into d's fields. */
static gboolean
parse_metadata (NlPackedDataset *d, const GByteArray *meta, int64_t *length, GError **error)
{
  const char *path = d->path;
  if (meta->len < (guint) header_size (0) || meta->data[4] != 0 || meta->data[5] != NL_RECORD_DTYPE_META)
    {
      g_set_error (error, NL_DATA_ERROR, NL_DATA_ERROR_CORRUPT,
                   "%s: record 0 at byte 0 is not netloom metadata (a packed dataset starts with it; is this "
                   "some other record file?)", path);
      return FALSE;
    }
  /* version 1 leaves the label word 0; version 2 holds the JSON's crc32
   * there, checked before the JSON is trusted (and again below, by
   * version, for a crc that happens to be 0) */
  guint32 stored_crc = get_le32 (meta->data);
  guint32 json_crc = crc32_of (meta->data + header_size (0), meta->len - header_size (0));
  if (stored_crc != 0 && stored_crc != json_crc)
    return meta_error (error, path, "checksum mismatch (the record is damaged)");
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_autoptr (GError) json_error = NULL;
  if (!nl_json_check_depth ((const char *) meta->data + header_size (0), meta->len - header_size (0), "the JSON",
                            &json_error)
      || !json_parser_load_from_data (parser, (const char *) meta->data + header_size (0),
                                      meta->len - header_size (0), &json_error))
    return meta_error (error, path, json_error->message);
  JsonNode *root = json_parser_get_root (parser);
  JsonObject *o = root && JSON_NODE_HOLDS_OBJECT (root) ? json_node_get_object (root) : NULL;
  if (!o)
    return meta_error (error, path, "not a JSON object");
  const char *format, *dtype, *desc;
  int64_t version, n_classes;
  if (!nl_json_string_member (o, "format", &format) || !format || strcmp (format, PACK_FORMAT) != 0)
    return meta_error (error, path, "\"format\" is not \"" PACK_FORMAT "\"");
  if (!json_int (o, "version", 0, G_MAXINT, &version) || version < 1 || version > PACK_VERSION)
    return meta_error (error, path, "unsupported \"version\" (this reader knows versions 1 and 2)");
  if (version >= 2 && stored_crc != json_crc)
    return meta_error (error, path, "checksum mismatch (the record is damaged)");
  d->version = (int) version;
  if (!json_int (o, "length", 0, G_MAXINT64, length))
    return meta_error (error, path, "\"length\" is not a count");
  if (!json_int (o, "n_classes", 0, G_MAXINT32, &n_classes))
    return meta_error (error, path, "\"n_classes\" is not a count");
  if (!nl_json_string_member (o, "description", &desc))
    return meta_error (error, path, "\"description\" is not a string");
  if (!nl_json_string_member (o, "dtype", &dtype) || !dtype || (strcmp (dtype, "u8") != 0 && strcmp (dtype, "f32") != 0))
    return meta_error (error, path, "\"dtype\" is not \"u8\" or \"f32\"");
  JsonNode *shape_node = json_object_get_member (o, "sample_shape");
  JsonArray *shape = shape_node && JSON_NODE_HOLDS_ARRAY (shape_node) ? json_node_get_array (shape_node) : NULL;
  guint ndim = shape ? json_array_get_length (shape) : 0;
  if (!shape || ndim > NL_MAX_DIMS)
    return meta_error (error, path, "\"sample_shape\" is not an array of at most 6 sizes");
  int64_t dims[NL_MAX_DIMS];
  int64_t numel = 1;
  for (guint k = 0; k < ndim; k++)
    {
      JsonNode *n = json_array_get_element (shape, k);
      if (!JSON_NODE_HOLDS_VALUE (n) || json_node_get_value_type (n) != G_TYPE_INT64
          || (dims[k] = json_node_get_int (n)) <= 0 || dims[k] > G_MAXUINT32 || numel > G_MAXINT64 / 4 / dims[k])
        return meta_error (error, path, "\"sample_shape\" holds a size that is not a positive count");
      numel *= dims[k];
    }
  JsonNode *names_node = json_object_get_member (o, "class_names");
  char **names = NULL;
  if (names_node && JSON_NODE_HOLDS_ARRAY (names_node))
    {
      JsonArray *a = json_node_get_array (names_node);
      guint n = json_array_get_length (a);
      if (n != n_classes)
        return meta_error (error, path, "\"class_names\" does not hold n_classes names");
      names = g_new0 (char *, n + 1);
      for (guint c = 0; c < n; c++)
        {
          JsonNode *e = json_array_get_element (a, c);
          if (!JSON_NODE_HOLDS_VALUE (e) || json_node_get_value_type (e) != G_TYPE_STRING)
            {
              g_strfreev (names);
              return meta_error (error, path, "\"class_names\" holds something other than a string");
            }
          names[c] = g_strdup (json_node_get_string (e));
        }
    }
  d->base.sample_shape = nl_shape_make ((int) ndim, dims);
  d->base.n_classes = (int) n_classes;
  d->base.class_names = names;
  d->dtype = strcmp (dtype, "u8") == 0 ? NL_RECORD_DTYPE_U8 : NL_RECORD_DTYPE_F32;
  d->numel = numel;
  desc = desc ? desc : "";
  d->base.description = g_strdup_printf ("packed %s (%" G_GINT64_FORMAT " samples)%s%s", path, *length,
                                         *desc ? ": " : "", desc);
  return TRUE;
}

NlDataset *
nl_packed_dataset_open (const char *path, GError **error)
{
  g_return_val_if_fail (path, NULL);
  NlPackedDataset *d = g_new0 (NlPackedDataset, 1);
  d->base.klass = &packed_f32_class; /* so that nl_dataset_free works on failure */
  d->path = g_strdup (path);
  d->fd = -1;
  Src s;
  GArray *offsets = g_array_new (FALSE, FALSE, sizeof (int64_t));
  g_autoptr (GByteArray) meta = g_byte_array_new ();
  gboolean ok = FALSE;
  int64_t length = 0, off = 0, next;
  if (!open_src (&s, d->path, TRUE, error))
    goto out;
  d->fd = s.fd;
  d->size = s.size;
  int rc = read_record (&s, 0, 0, meta, &next, error);
  if (rc == 0)
    g_set_error (error, NL_DATA_ERROR, NL_DATA_ERROR_CORRUPT, "%s is empty (no records)", path);
  if (rc <= 0 || !parse_metadata (d, meta, &length, error))
    goto out;

  /* The index: walk the part headers only (payloads are skipped, through a
   * buffer when records are small, by direct preads when they are not). */
  for (off = next;; off = next)
    {
      rc = read_record (&s, off, offsets->len + 1, NULL, &next, error);
      if (rc < 0)
        goto out;
      if (rc == 0)
        break;
      if ((int64_t) offsets->len == length)
        {
          g_set_error (error, NL_DATA_ERROR, NL_DATA_ERROR_CORRUPT,
                       "%s: record %" G_GINT64_FORMAT " at byte %" G_GINT64_FORMAT
                       " is one more than the %" G_GINT64_FORMAT " samples its metadata declares",
                       path, length + 1, off, length);
          goto out;
        }
      g_array_append_val (offsets, off);
    }
  if ((int64_t) offsets->len != length)
    {
      g_set_error (error, NL_DATA_ERROR, NL_DATA_ERROR_CORRUPT,
                   "%s is truncated: it holds %u samples but its metadata declares %" G_GINT64_FORMAT, path,
                   offsets->len, length);
      goto out;
    }
  ok = TRUE;

out:
  g_free (s.buf);
  if (!ok)
    {
      /* fd is closed by packed_free through d->fd */
      nl_dataset_free (&d->base);
      g_array_free (offsets, TRUE);
      return NULL;
    }
  d->base.klass = d->dtype == NL_RECORD_DTYPE_U8 ? &packed_u8_class : &packed_f32_class;
  d->base.length = length;
  d->offsets = (int64_t *) g_array_free (offsets, FALSE);
  return &d->base;
}

int
nl_packed_dataset_version (const NlDataset *ds)
{
  g_return_val_if_fail (ds && ds->klass->free == packed_free, 0);
  return ((const NlPackedDataset *) ds)->version;
}

gboolean
nl_packed_dataset_verify (const char *path, void (*damaged) (gpointer user, const GError *e), gpointer user,
                          NlPackedVerify *out, GError **error)
{
  g_return_val_if_fail (path && out, FALSE);
  memset (out, 0, sizeof *out);
  NlPackedDataset *d = (NlPackedDataset *) nl_packed_dataset_open (path, error);
  if (!d)
    return FALSE;
  out->version = d->version;
  for (int64_t i = 0; i < d->base.length; i++)
    {
      g_autoptr (GError) local = NULL;
      const guint8 *p;
      float label;
      GByteArray *rec = packed_read (d, i, &p, &label, &local);
      out->n_records++;
      if (rec)
        g_byte_array_unref (rec);
      else
        {
          out->n_damaged++;
          if (damaged)
            damaged (user, local);
        }
    }
  nl_dataset_free (&d->base);
  return TRUE;
}
