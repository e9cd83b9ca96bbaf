/* nl-packed-dataset.c — the "packed:FILE" dataset (nl-packed-dataset.h):
 * an index of record offsets built at open, samples read and checked
 * (checksum, shape, label) one pread at a time, and the whole-file check. */
#include "engine/data/nl-packed-dataset.h"
#include "engine/data/nl-record-private.h"
#include "core/nl-json-member.h"
#include "core/nl-json-guard.h"

#include <json-glib/json-glib.h>
#include <math.h>
#include <unistd.h>

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
  NlRecordSrc s = { .fd = d->fd, .path = d->path, .size = d->size }; /* unbuffered: pread only, thread-safe */
  GByteArray *rec = g_byte_array_new ();
  int64_t next;
  int rc = nl_record_read (&s, d->offsets[i], i + 1, rec, &next, error);
  if (rc <= 0)
    {
      if (rc == 0)
        nl_record_error (error, NL_DATA_ERROR_CORRUPT, d->path, i + 1, d->offsets[i], "is missing (the file shrank)");
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
          nl_record_error (error, NL_DATA_ERROR_CORRUPT, d->path, i + 1, d->offsets[i],
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
      nl_record_error (error, NL_DATA_ERROR_CORRUPT, d->path, i + 1, d->offsets[i],
                       "does not hold a sample of shape %s and dtype %s as the metadata says (%u bytes)",
                       nl_shape_format (shape, buf, sizeof buf), d->dtype == NL_RECORD_DTYPE_U8 ? "u8" : "f32",
                       rec->len);
      g_byte_array_unref (rec);
      return NULL;
    }
  guint32 bits = get_le32 (rec->data);
  memcpy (label, &bits, 4);
  /* a class index the loss would read out of range, or a NaN it would spread */
  if (!isfinite (*label) || (ds->n_classes > 0 && (*label < 0 || *label >= ds->n_classes || *label != floorf (*label))))
    {
      if (ds->n_classes > 0)
        nl_record_error (error, NL_DATA_ERROR_CORRUPT, d->path, i + 1, d->offsets[i],
                         "has label %g, not a class index from 0 to %d", (double) *label, ds->n_classes - 1);
      else
        nl_record_error (error, NL_DATA_ERROR_CORRUPT, d->path, i + 1, d->offsets[i],
                         "has label %g, not a finite number", (double) *label);
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

/* A whole number member, present and within [lo, hi] */
static gboolean
json_int (JsonObject *o, const char *name, int64_t lo, int64_t hi, int64_t *v)
{
  return nl_json_node_int (json_object_get_member (o, name), v) && *v >= lo && *v <= hi;
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
      if (!nl_json_node_int (json_array_get_element (shape, k), &dims[k]) || dims[k] <= 0 || dims[k] > G_MAXUINT32
          || numel > G_MAXINT64 / 4 / dims[k])
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
          const char *name = nl_json_node_string (json_array_get_element (a, c));
          if (!name)
            {
              g_strfreev (names);
              return meta_error (error, path, "\"class_names\" holds something other than a string");
            }
          names[c] = g_strdup (name);
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
  NlRecordSrc s;
  GArray *offsets = g_array_new (FALSE, FALSE, sizeof (int64_t));
  g_autoptr (GByteArray) meta = g_byte_array_new ();
  gboolean ok = FALSE;
  int64_t length = 0, off = 0, next;
  if (!nl_record_src_open (&s, d->path, TRUE, error))
    goto out;
  d->fd = s.fd;
  d->size = s.size;
  int rc = nl_record_read (&s, 0, 0, meta, &next, error);
  if (rc == 0)
    g_set_error (error, NL_DATA_ERROR, NL_DATA_ERROR_CORRUPT, "%s is empty (no records)", path);
  if (rc <= 0 || !parse_metadata (d, meta, &length, error))
    goto out;

  /* The index: walk the part headers only (payloads are skipped, through a
   * buffer when records are small, by direct preads when they are not). */
  for (off = next;; off = next)
    {
      rc = nl_record_read (&s, off, offsets->len + 1, NULL, &next, error);
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
