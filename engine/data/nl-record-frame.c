/* nl-record-frame.c — reading record files' framing (nl-record.h): a file
 * read with pread through a buffer or not, and one record's parts read,
 * checked and joined, for the reader and the packed dataset.
 *
 * Every read is bounded by the file size taken at open, so no length
 * field can make a reader allocate more than the file holds or loop
 * without advancing. */
#include "engine/data/nl-record-private.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- a file read with pread, through a buffer or not ---- */

static int64_t
pread_some (NlRecordSrc *s, void *dst, int64_t n, int64_t off, GError **error)
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

int64_t
nl_record_src_fill (NlRecordSrc *s, int64_t off, GError **error)
{
  int64_t r = pread_some (s, s->buf, MIN ((int64_t) IO_BUF, s->size - off), off, error);
  s->buf_off = off;
  s->buf_len = MAX (r, 0);
  return r;
}

int64_t
nl_record_src_read (NlRecordSrc *s, int64_t off, void *dst, int64_t n, GError **error)
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
        r = nl_record_src_fill (s, at, error); /* then copied from the buffer */
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

void
nl_record_error (GError **error, int code, const char *path, int64_t index, int64_t off, const char *fmt, ...)
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

gboolean
nl_record_read_part_header (NlRecordSrc *s, int64_t start, int64_t off, int part, int64_t index, guint32 *lrec,
                            GError **error)
{
  guint8 h[8];
  char wb[64];
  int64_t got = nl_record_src_read (s, off, h, 8, error);
  if (got < 0)
    return FALSE;
  if (got >= 4 && get_le32 (h) != NL_RECORD_MAGIC)
    {
      nl_record_error (error, NL_DATA_ERROR_CORRUPT, s->path, index, start, "is corrupt (bad magic 0x%08x%s)",
                       get_le32 (h), part_where (wb, sizeof wb, part, off));
      return FALSE;
    }
  if (got < 8)
    {
      nl_record_error (error, NL_DATA_ERROR_CORRUPT, s->path, index, start,
                       "is truncated (%" G_GINT64_FORMAT " bytes left for an 8-byte header%s)", got,
                       part_where (wb, sizeof wb, part, off));
      return FALSE;
    }
  *lrec = get_le32 (h + 4);
  guint32 cflag = (*lrec >> 29) & 3, len = *lrec & LEN_MASK;
  if (part == 0 && (cflag == CFLAG_MIDDLE || cflag == CFLAG_LAST))
    {
      nl_record_error (error, NL_DATA_ERROR_CORRUPT, s->path, index, start,
                       "is corrupt (a continuation part where a record should start)");
      return FALSE;
    }
  if (part > 0 && (cflag == CFLAG_WHOLE || cflag == CFLAG_FIRST))
    {
      nl_record_error (error, NL_DATA_ERROR_CORRUPT, s->path, index, start,
                       "is corrupt (its part %d at byte %" G_GINT64_FORMAT " starts a new record)", part, off);
      return FALSE;
    }
  if ((cflag == CFLAG_FIRST || cflag == CFLAG_MIDDLE) && len % 4 != 0)
    {
      nl_record_error (error, NL_DATA_ERROR_CORRUPT, s->path, index, start,
                       "is corrupt (part %d has length %u, not a multiple of 4%s)", part, len,
                       part_where (wb, sizeof wb, part, off));
      return FALSE;
    }
  int64_t left = s->size - off - 8;
  if (pad4 (len) > left)
    {
      nl_record_error (error, NL_DATA_ERROR_CORRUPT, s->path, index, start,
                       "is truncated (%u payload bytes declared, %" G_GINT64_FORMAT " left in the file%s)", len,
                       left, part_where (wb, sizeof wb, part, off));
      return FALSE;
    }
  return TRUE;
}

int
nl_record_read (NlRecordSrc *s, int64_t off, int64_t index, GByteArray *out, int64_t *next, GError **error)
{
  if (off >= s->size)
    return 0;
  int64_t start = off;
  for (int part = 0;; part++)
    {
      guint32 lrec;
      if (!nl_record_read_part_header (s, start, off, part, index, &lrec, error))
        return -1;
      guint32 cflag = (lrec >> 29) & 3, len = lrec & LEN_MASK;
      /* an empty part adds nothing: out->data may still be NULL */
      if (out && len > 0)
        {
          guint old = out->len;
          g_byte_array_set_size (out, old + len);
          int64_t got = nl_record_src_read (s, off + 8, out->data + old, len, error);
          if (got < 0)
            return -1;
          if (got < len)
            {
              nl_record_error (error, NL_DATA_ERROR_CORRUPT, s->path, index, start, "is truncated (the file shrank)");
              return -1;
            }
          /* the writer splits a payload where the magic word would sit
           * aligned, so readers starting mid-file stay in step: one there
           * was not written by it (a reader from the middle would take it
           * for a record) */
          for (guint32 k = 0; k + 4 <= len; k += 4)
            if (get_le32 (out->data + old + k) == NL_RECORD_MAGIC)
              {
                nl_record_error (error, NL_DATA_ERROR_CORRUPT, s->path, index, start,
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

gboolean
nl_record_src_open (NlRecordSrc *s, const char *path, gboolean buffered, GError **error)
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

void
nl_record_src_close (NlRecordSrc *s)
{
  if (s->fd >= 0)
    close (s->fd);
  s->fd = -1;
  g_clear_pointer (&s->buf, g_free);
}
