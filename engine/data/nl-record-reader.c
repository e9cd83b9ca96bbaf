/* nl-record-reader.c — reading record files (nl-record-reader.h): the
 * records of a byte range, found by scanning for an aligned magic word when
 * the range starts mid-file, read strictly from there on. */
#include "engine/data/nl-record-reader.h"
#include "engine/data/nl-record-private.h"

struct NlRecordReader {
  char *path;
  NlRecordSrc src;
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
  if (!nl_record_src_open (&r->src, r->path, TRUE, error))
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
  NlRecordSrc *s = &r->src;
  int64_t q = pad4 (r->begin);
  while (q < r->end && q + 8 <= s->size)
    {
      /* Scan the buffer directly: words one by one through nl_record_src_read would
       * cost a call per 4 bytes of a large record. */
      if (!(q >= s->buf_off && q + 8 <= s->buf_off + s->buf_len))
        {
          int64_t got = nl_record_src_fill (s, q, error);
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
      if (r->pos < r->src.size && !nl_record_read_part_header (&r->src, r->pos, r->pos, 0, r->index, &lrec, error))
        return -1;
      return 0;
    }
  g_byte_array_set_size (r->rec, 0);
  int64_t next;
  if (nl_record_read (&r->src, r->pos, r->index, r->rec, &next, error) < 0)
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
  nl_record_src_close (&r->src);
  g_byte_array_unref (r->rec);
  g_free (r->path);
  g_free (r);
}
