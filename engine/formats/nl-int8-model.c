/* nl-int8-model.c — INT8 models as files: a weights file (nl-checkpoint.h)
 * with the quantization table in its metadata. */
#include "engine/formats/nl-int8-model.h"

#include <string.h>

#include "engine/formats/nl-checkpoint.h"
#include "engine/formats/nl-safetensors.h"

GBytes *
nl_int8_model_write (NlModel *m, const NlQuantTable *t, int epoch, GError **error)
{
  g_autofree char *table = NULL, *epoch_text = NULL;
  g_return_val_if_fail (m != NULL && t != NULL && epoch >= 0, NULL);
  table = nl_quant_table_to_json (t);
  epoch_text = g_strdup_printf ("%d", epoch);
  const char *const metadata[] = {
    "format", NL_INT8_MODEL_FORMAT, "version", G_STRINGIFY (NL_INT8_MODEL_VERSION), "epoch", epoch_text,
    "quant_table", table, NULL,
  };
  return nl_weights_save_bytes (m, metadata, error);
}

static gboolean
bad (GError **error, const char *fmt, ...) G_GNUC_PRINTF (2, 3);

static gboolean
bad (GError **error, const char *fmt, ...)
{
  va_list ap;
  g_autofree char *msg = NULL;
  va_start (ap, fmt);
  msg = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  g_set_error (error, NL_CHECKPOINT_ERROR, NL_CHECKPOINT_ERROR_FORMAT, "INT8 model: %s", msg);
  return FALSE;
}

/* format, version and epoch of a parsed blob */
static gboolean
check_metadata (const NlSafetensors *st, gint64 *epoch, GError **error)
{
  const char *f = nl_safetensors_metadata (st, "format");
  const char *v = nl_safetensors_metadata (st, "version");
  const char *e = nl_safetensors_metadata (st, "epoch");
  guint64 version;
  if (!f || strcmp (f, NL_INT8_MODEL_FORMAT) != 0)
    return bad (error, "not a " NL_INT8_MODEL_FORMAT " file (metadata format is %s%s%s)", f ? "'" : "",
                f ? f : "missing", f ? "'" : "");
  if (!v || !g_ascii_string_to_unsigned (v, 10, 1, G_MAXINT, &version, NULL))
    return bad (error, "metadata version is %s%s%s, not a positive integer", v ? "'" : "", v ? v : "missing",
                v ? "'" : "");
  if (version > NL_INT8_MODEL_VERSION)
    return bad (error, "version %" G_GUINT64_FORMAT " is newer than this netloom reads (%d)", version,
                NL_INT8_MODEL_VERSION);
  if (!e || !g_ascii_string_to_signed (e, 10, 0, G_MAXINT, epoch, NULL))
    return bad (error, "metadata epoch is %s%s%s, not an integer >= 0", e ? "'" : "", e ? e : "missing",
                e ? "'" : "");
  return TRUE;
}

gboolean
nl_int8_model_read (GBytes *blob, NlModel *m, NlQuantTable **t, GError **error)
{
  g_autoptr (NlSafetensors) st = NULL;
  g_autoptr (NlQuantTable) table = NULL;
  g_autoptr (GError) local = NULL;
  const char *json;
  gint64 epoch;

  g_return_val_if_fail (blob != NULL && m != NULL && t != NULL, FALSE);
  if (!(st = nl_safetensors_parse (blob, &local)))
    return bad (error, "%s", local->message);
  if (!check_metadata (st, &epoch, error))
    return FALSE;
  if (!(json = nl_safetensors_metadata (st, "quant_table")))
    return bad (error, "metadata quant_table is missing");
  if (!(table = nl_quant_table_from_json (json, &local)))
    return bad (error, "quant_table: %s", local->message);
  /* the weights last: they are copied only when all else holds */
  if (!nl_weights_load_parsed (m, st, blob, "file", &local))
    {
      g_set_error (error, local->domain, local->code, "INT8 model: %s", local->message);
      return FALSE;
    }
  *t = g_steal_pointer (&table);
  return TRUE;
}

int
nl_int8_model_epoch (GBytes *blob)
{
  g_autoptr (NlSafetensors) st = nl_safetensors_parse (blob, NULL);
  gint64 epoch;
  return st && check_metadata (st, &epoch, NULL) ? (int) epoch : -1;
}
