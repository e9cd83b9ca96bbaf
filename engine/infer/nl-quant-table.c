/* nl-quant-table.c — calibrated activation ranges, their JSON, and the
 * per-channel weight quantization the executor and the ONNX export share.
 *
 * The JSON is read with the strict reader (core/nl-json-doc.h): a table
 * decides what an INT8 model computes, so a damaged one is refused with
 * the member named rather than half taken. */
#include "engine/infer/nl-quant-table.h"
#include "core/nl-json-doc.h"

#include <gio/gio.h>
#include <math.h>
#include <string.h>

static const char *const method_names[NL_QUANT_METHOD_COUNT] = { "naive", "entropy" };

const char *
nl_quant_method_name (NlQuantMethod method)
{
  return method >= 0 && method < NL_QUANT_METHOD_COUNT ? method_names[method] : "unknown";
}

gboolean
nl_quant_method_parse (const char *text, NlQuantMethod *method)
{
  for (int m = 0; m < NL_QUANT_METHOD_COUNT; m++)
    if (text && strcmp (text, method_names[m]) == 0)
      {
        *method = (NlQuantMethod) m;
        return TRUE;
      }
  return FALSE;
}

static void
range_clear (gpointer p)
{
  g_free (((NlQuantRange *) p)->point);
}

NlQuantTable *
nl_quant_table_new (NlQuantMethod method, int calibration_samples)
{
  NlQuantTable *t = g_new0 (NlQuantTable, 1);
  t->method = method;
  t->calibration_samples = calibration_samples;
  t->ranges = g_array_new (FALSE, TRUE, sizeof (NlQuantRange));
  g_array_set_clear_func (t->ranges, range_clear);
  return t;
}

void
nl_quant_table_free (NlQuantTable *t)
{
  if (!t)
    return;
  g_array_unref (t->ranges);
  g_free (t);
}

void
nl_quant_table_add (NlQuantTable *t, const char *point, float min, float max, float threshold)
{
  NlQuantRange r = { g_strdup (point), min, max, threshold, min >= 0 };
  g_array_append_val (t->ranges, r);
}

const NlQuantRange *
nl_quant_table_find (const NlQuantTable *t, const char *point)
{
  for (guint i = 0; t && i < t->ranges->len; i++)
    {
      const NlQuantRange *r = &g_array_index (t->ranges, NlQuantRange, i);
      if (strcmp (r->point, point) == 0)
        return r;
    }
  return NULL;
}

float
nl_quant_range_scale (const NlQuantRange *r)
{
  return (r->is_unsigned ? 255.0f : 127.0f) / r->threshold;
}

char *
nl_quant_table_to_json (const NlQuantTable *t)
{
  GString *s = g_string_new (NULL);
  char a[G_ASCII_DTOSTR_BUF_SIZE], b[G_ASCII_DTOSTR_BUF_SIZE], c[G_ASCII_DTOSTR_BUF_SIZE];
  g_autofree char *method = g_strescape (nl_quant_method_name (t->method), NULL);
  g_string_append_printf (s, "{\"method\":\"%s\",\"calibration_samples\":%d,\"ranges\":[", method,
                          t->calibration_samples);
  for (guint i = 0; i < t->ranges->len; i++)
    {
      const NlQuantRange *r = &g_array_index (t->ranges, NlQuantRange, i);
      g_autofree char *point = g_strescape (r->point, NULL);
      /* %.9g keeps every float exactly through the text */
      g_string_append_printf (s, "%s{\"point\":\"%s\",\"min\":%s,\"max\":%s,\"threshold\":%s,\"unsigned\":%s}",
                              i ? "," : "", point, g_ascii_formatd (a, sizeof a, "%.9g", r->min),
                              g_ascii_formatd (b, sizeof b, "%.9g", r->max),
                              g_ascii_formatd (c, sizeof c, "%.9g", r->threshold), r->is_unsigned ? "true" : "false");
    }
  g_string_append (s, "]}");
  return g_string_free (s, FALSE);
}

static gboolean
bad (GError **error, const char *fmt, ...) G_GNUC_PRINTF (2, 3);

static gboolean
bad (GError **error, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  g_autofree char *msg = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, "quantization table: %s", msg);
  return FALSE;
}

/* Members of an object other than those named: an unknown one is refused,
 * so a misspelt key is not silently ignored. */
static gboolean
only_members (const NlJsonValue *o, const char *const *known, const char *where, GError **error)
{
  for (const NlJsonValue *k = nl_json_first (o); k; k = nl_json_next (o, k))
    {
      if (!g_strv_contains (known, k->s))
        return bad (error, "%s has an unknown member \"%s\"", where, k->s);
      /* the reader takes the last of a repeated name: refuse the doubt */
      for (const NlJsonValue *e = nl_json_first (o); e != k; e = nl_json_next (o, e))
        if (strcmp (e->s, k->s) == 0)
          return bad (error, "%s has \"%s\" twice", where, k->s);
    }
  return TRUE;
}

static gboolean
read_float (const NlJsonValue *r, const char *name, const char *point, float *out, GError **error)
{
  const NlJsonValue *v = nl_json_member (r, name);
  if (!v || (v->type != NL_JSON_INT && v->type != NL_JSON_DOUBLE))
    return bad (error, "the range of \"%s\" has no number \"%s\"", point, name);
  *out = (float) nl_json_number (v);
  if (!isfinite (*out))
    return bad (error, "the range of \"%s\" has a \"%s\" that is not a finite float", point, name);
  return TRUE;
}

static gboolean
read_range (NlQuantTable *t, const NlJsonValue *r, guint index, GError **error)
{
  static const char *const known[] = { "point", "min", "max", "threshold", "unsigned", NULL };
  const NlJsonValue *point = r->type == NL_JSON_OBJECT ? nl_json_member (r, "point") : NULL;
  const NlJsonValue *uns;
  float min = 0, max = 0, threshold = 0;
  if (r->type != NL_JSON_OBJECT)
    return bad (error, "range %u is not an object", index);
  if (!point || point->type != NL_JSON_STRING || !*point->s)
    return bad (error, "range %u has no \"point\" (a node id)", index);
  if (nl_quant_table_find (t, point->s))
    return bad (error, "the point \"%s\" has two ranges", point->s);
  if (!only_members (r, known, point->s, error) || !read_float (r, "min", point->s, &min, error)
      || !read_float (r, "max", point->s, &max, error) || !read_float (r, "threshold", point->s, &threshold, error))
    return FALSE;
  if (min > max)
    return bad (error, "the range of \"%s\" has min %g above max %g", point->s, min, max);
  if (!(threshold > 0))
    return bad (error, "the range of \"%s\" has threshold %g; it must be above 0", point->s, threshold);
  uns = nl_json_member (r, "unsigned");
  if (!uns || uns->type != NL_JSON_BOOL)
    return bad (error, "the range of \"%s\" has no true or false \"unsigned\"", point->s);
  if (uns->b != (min >= 0))
    return bad (error, "the range of \"%s\" says unsigned %s but its min is %g", point->s, uns->b ? "true" : "false",
                min);
  nl_quant_table_add (t, point->s, min, max, threshold);
  return TRUE;
}

NlQuantTable *
nl_quant_table_from_json (const char *json, GError **error)
{
  static const char *const known[] = { "method", "calibration_samples", "ranges", NULL };
  g_autoptr (GError) local = NULL;
  g_autoptr (NlJsonDoc) doc = nl_json_doc_parse (json, -1, &local);
  const NlJsonValue *root, *m, *n, *ranges;
  NlQuantMethod method;
  guint i = 0;
  if (!doc)
    return bad (error, "not JSON: %s", local->message), NULL;
  root = nl_json_doc_root (doc);
  if (root->type != NL_JSON_OBJECT)
    return bad (error, "not a JSON object"), NULL;
  if (!only_members (root, known, "the table", error))
    return NULL;
  m = nl_json_member (root, "method");
  if (!m || m->type != NL_JSON_STRING || !nl_quant_method_parse (m->s, &method))
    return bad (error, "\"method\" must be \"naive\" or \"entropy\""), NULL;
  n = nl_json_member (root, "calibration_samples");
  if (!n || n->type != NL_JSON_INT || n->i < 0 || n->i > G_MAXINT)
    return bad (error, "\"calibration_samples\" must be a whole number >= 0"), NULL;
  ranges = nl_json_member (root, "ranges");
  if (!ranges || ranges->type != NL_JSON_ARRAY)
    return bad (error, "\"ranges\" must be an array"), NULL;
  g_autoptr (NlQuantTable) t = nl_quant_table_new (method, (int) n->i);
  for (const NlJsonValue *r = nl_json_first (ranges); r; r = nl_json_next (ranges, r), i++)
    if (!read_range (t, r, i, error))
      return NULL;
  return g_steal_pointer (&t);
}

void
nl_quant_weights (const float *w, int64_t channels, int64_t per, int8_t *q, float *scales)
{
  for (int64_t c = 0; c < channels; c++)
    {
      const float *row = w + c * per;
      float m = 0.0f, inv;
      for (int64_t i = 0; i < per; i++)
        m = fmaxf (m, fabsf (row[i]));
      scales[c] = m > 0 ? m / 127.0f : 1.0f;
      inv = m > 0 ? 127.0f / m : 0.0f;
      for (int64_t i = 0; i < per; i++)
        {
          /* nearest, halves away from zero; |row * inv| <= 127 */
          float v = roundf (row[i] * inv);
          q[c * per + i] = (int8_t) fminf (fmaxf (v, -127.0f), 127.0f);
        }
    }
}
