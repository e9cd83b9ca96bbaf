/* nl-record-writer.c — writing record files (nl-record-writer.h): parts
 * cut at the maximum part length and where the magic word would sit
 * aligned, through a buffer into an atomic file. */
#include "engine/data/nl-record-writer.h"
#include "engine/data/nl-record-private.h"
#include "core/nl-atomic-file.h"

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
