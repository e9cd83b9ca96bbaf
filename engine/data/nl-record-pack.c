/* nl-record-pack.c — packing a dataset into one packed record file
 * (nl-packed-dataset.h): a metadata record, then one checksummed record
 * per sample, through the record writer. */
#include "engine/data/nl-packed-dataset.h"
#include "engine/data/nl-record-private.h"
#include "engine/data/nl-record-writer.h"

#include <json-glib/json-glib.h>

/* ---- sample payloads ---- */

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
  /* a record holds one label: per-step labels (language models, series) stay unpacked */
  if (ds->label_shape.ndim > 0)
    {
      g_set_error (error, NL_DATA_ERROR, NL_DATA_ERROR_MISMATCH, "cannot pack %s: %s has %" G_GINT64_FORMAT
                   " label values per sample, and packed files hold one", out_path,
                   ds->description ? ds->description : "the dataset", nl_shape_numel (&ds->label_shape));
      return FALSE;
    }
  for (int k = 0; k < shape->ndim; k++)
    if (shape->d[k] <= 0 || shape->d[k] > G_MAXUINT32)
      {
        g_set_error (error, NL_DATA_ERROR, NL_DATA_ERROR_MISMATCH, "cannot pack %s: sample dimension %d is %"
                     G_GINT64_FORMAT, out_path, k, shape->d[k]);
        return FALSE;
      }
  /* token ids mean nothing without their vocabulary, which a packed file does not keep */
  if (ds->vocab)
    {
      g_set_error (error, NL_DATA_ERROR, NL_DATA_ERROR_MISMATCH,
                   "cannot pack %s: a packed file keeps no vocabulary for text samples", out_path);
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
