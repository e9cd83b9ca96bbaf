/* nl-safetensors.c — safetensors reader (validates everything first) and
 * writer (in memory, then atomically to a file). */
#include "engine/formats/nl-safetensors.h"
#include "core/nl-atomic-file.h"
#include "core/nl-json-doc.h"
#include "core/nl-json-guard.h"

#include <json-glib/json-glib.h>
#include <stdlib.h>
#include <string.h>

/* Tensor bytes are copied as they lie on disk (little-endian). */
G_STATIC_ASSERT (G_BYTE_ORDER == G_LITTLE_ENDIAN);

G_DEFINE_QUARK (nl-safetensors-error-quark, nl_safetensors_error)

#define METADATA_KEY "__metadata__"
/* Our headers nest 3 deep; deeper ones have always been refused. */
#define MAX_JSON_DEPTH 32

static const struct {
  const char *name;
  size_t size;
} dtypes[NL_ST_COUNT] = {
  [NL_ST_BOOL] = { "BOOL", 1 },
  [NL_ST_U8] = { "U8", 1 },
  [NL_ST_I8] = { "I8", 1 },
  [NL_ST_F8_E4M3] = { "F8_E4M3", 1 },
  [NL_ST_F8_E5M2] = { "F8_E5M2", 1 },
  [NL_ST_I16] = { "I16", 2 },
  [NL_ST_U16] = { "U16", 2 },
  [NL_ST_F16] = { "F16", 2 },
  [NL_ST_BF16] = { "BF16", 2 },
  [NL_ST_I32] = { "I32", 4 },
  [NL_ST_U32] = { "U32", 4 },
  [NL_ST_F32] = { "F32", 4 },
  [NL_ST_F64] = { "F64", 8 },
  [NL_ST_I64] = { "I64", 8 },
  [NL_ST_U64] = { "U64", 8 },
};

const char *
nl_st_dtype_name (NlStDType d)
{
  g_return_val_if_fail (d < NL_ST_COUNT, "?");
  return dtypes[d].name;
}

size_t
nl_st_dtype_size (NlStDType d)
{
  g_return_val_if_fail (d < NL_ST_COUNT, 0);
  return dtypes[d].size;
}

gboolean
nl_st_dtype_parse (const char *name, NlStDType *d)
{
  for (int i = 0; i < NL_ST_COUNT; i++)
    if (strcmp (dtypes[i].name, name) == 0)
      {
        *d = (NlStDType) i;
        return TRUE;
      }
  return FALSE;
}

char *
nl_st_format_shape (int ndim, const int64_t *shape)
{
  GString *s = g_string_new ("(");
  for (int i = 0; i < ndim; i++)
    g_string_append_printf (s, "%s%" G_GINT64_FORMAT, i ? ", " : "", shape[i]);
  g_string_append_c (s, ')');
  return g_string_free (s, FALSE);
}

/* ---- reading ---- */

struct NlSafetensors {
  GBytes *bytes;
  GArray *tensors;      /* NlStTensor, sorted by offset */
  GHashTable *by_name;  /* name -> index + 1 */
  GHashTable *metadata;
};

static void
st_tensor_clear (gpointer p)
{
  NlStTensor *t = p;
  g_free (t->name);
  g_free (t->shape);
}

void
nl_safetensors_free (NlSafetensors *st)
{
  if (!st)
    return;
  g_clear_pointer (&st->bytes, g_bytes_unref);
  g_clear_pointer (&st->tensors, g_array_unref);
  g_clear_pointer (&st->by_name, g_hash_table_unref);
  g_clear_pointer (&st->metadata, g_hash_table_unref);
  g_free (st);
}

static gboolean
fail (GError **error, const char *fmt, ...) G_GNUC_PRINTF (2, 3);

static gboolean
fail (GError **error, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  if (error)
    {
      g_assert (*error == NULL);
      *error = g_error_new_valist (NL_SAFETENSORS_ERROR, NL_SAFETENSORS_ERROR_FORMAT, fmt, ap);
    }
  va_end (ap);
  return FALSE;
}

/* What the header should have held where the shared reader found a fault,
 * in the words this reader has always used (its messages name the byte). */
static const char *const json_expected[NL_JSON_FAULT_COUNT] = {
  [NL_JSON_FAULT_NONE] = "valid JSON",
  [NL_JSON_FAULT_EMPTY] = "a value",
  [NL_JSON_FAULT_VALUE] = "a value",
  [NL_JSON_FAULT_NUMBER] = "a digit",
  [NL_JSON_FAULT_INT_RANGE] = "an integer that fits 64 bits",
  [NL_JSON_FAULT_NUMBER_RANGE] = "a number of at most 63 characters within a double's range",
  [NL_JSON_FAULT_KEY] = "a string",
  [NL_JSON_FAULT_COLON] = "':'",
  [NL_JSON_FAULT_OBJECT_COMMA] = "',' or '}'",
  [NL_JSON_FAULT_ARRAY_COMMA] = "',' or ']'",
  [NL_JSON_FAULT_TRAILING] = "the end of the header",
  [NL_JSON_FAULT_STRING_END] = "the end of a string",
  [NL_JSON_FAULT_CONTROL] = "no control character in a string",
  [NL_JSON_FAULT_ESCAPE] = "a valid escape",
  [NL_JSON_FAULT_HEX] = "four hex digits after \\u",
  [NL_JSON_FAULT_LONE_LOW] = "no lone low surrogate",
  [NL_JSON_FAULT_MISSING_LOW] = "a low surrogate after a high one",
  [NL_JSON_FAULT_NUL] = "no \\u0000 in a string",
  [NL_JSON_FAULT_UTF8] = "UTF-8",
  [NL_JSON_FAULT_TOO_MANY] = "fewer values",
};

/* A key twice in one object, anywhere: json-glib used to fold them into
 * one, so a second "dtype" or a tensor named twice went unseen. */
static gboolean
has_duplicate_key (const NlJsonValue *root)
{
  g_autoptr (GHashTable) keys = g_hash_table_new (g_str_hash, g_str_equal);
  for (const NlJsonValue *v = root; v < root + root->size; v++)
    {
      if (v->type != NL_JSON_OBJECT)
        continue;
      g_hash_table_remove_all (keys);
      for (const NlJsonValue *k = nl_json_first (v); k; k = nl_json_next (v, k))
        if (!g_hash_table_add (keys, (gpointer) k->s))
          return TRUE;
    }
  return FALSE;
}

/* The header (n bytes, UTF-8, opening with '{') read by the shared strict
 * reader, which does not recurse; the nesting limit stays because files
 * deeper than it have always been refused. */
static NlJsonDoc *
parse_header_json (const char *header, size_t n, GError **error)
{
  g_autoptr (NlJsonDoc) doc = NULL;
  NlJsonFault fault = NL_JSON_FAULT_NONE;
  gsize at = 0;
  gssize too_deep = nl_json_find_too_deep (header, (gssize) n, MAX_JSON_DEPTH);

  if (too_deep >= 0)
    {
      fail (error, "header is not valid JSON: expected less nesting (at most " G_STRINGIFY (MAX_JSON_DEPTH)
            " levels) at byte %zu", (size_t) too_deep + 8);
      return NULL;
    }
  doc = nl_json_doc_parse_full (header, (gssize) n, &fault, &at, NULL);
  if (!doc)
    {
      fail (error, "header is not valid JSON: expected %s at byte %zu", json_expected[fault], (size_t) at + 8);
      return NULL;
    }
  if (has_duplicate_key (nl_json_doc_root (doc)))
    {
      fail (error, "header has a key twice in one object (a tensor name or an entry's field)");
      return NULL;
    }
  return g_steal_pointer (&doc);
}

static gboolean
get_uint (const NlJsonValue *v, int64_t *out)
{
  if (v->type != NL_JSON_INT)
    return FALSE;
  *out = v->i;
  return *out >= 0;
}

static gboolean
parse_entry (const char *name, const NlJsonValue *o, NlStTensor *t, GError **error)
{
  const NlJsonValue *dtype, *shape, *offsets, *e;
  int64_t begin, end;
  size_t nbytes;

  t->name = g_strdup (name);
  if (o->type != NL_JSON_OBJECT)
    return fail (error, "tensor '%s': header entry is not an object", name);
  dtype = nl_json_member (o, "dtype");
  shape = nl_json_member (o, "shape");
  offsets = nl_json_member (o, "data_offsets");
  if (!dtype || !shape || !offsets)
    return fail (error, "tensor '%s': header entry lacks \"%s\"", name,
                 !dtype ? "dtype" : !shape ? "shape" : "data_offsets");
  if (dtype->type != NL_JSON_STRING)
    return fail (error, "tensor '%s': dtype is not a string", name);
  if (!nl_st_dtype_parse (dtype->s, &t->dtype))
    return fail (error, "tensor '%s': unknown dtype '%s'", name, dtype->s);

  if (shape->type != NL_JSON_ARRAY)
    return fail (error, "tensor '%s': shape is not an array", name);
  t->ndim = (int) shape->count;
  t->shape = g_new0 (int64_t, MAX (t->ndim, 1));
  t->numel = 1;
  e = nl_json_first (shape);
  for (int i = 0; i < t->ndim; i++, e = nl_json_next (shape, e))
    if (!get_uint (e, &t->shape[i]))
      return fail (error, "tensor '%s': shape entry %d is not a non-negative integer", name, i);
  for (int i = 0; i < t->ndim; i++)
    if (t->shape[i] == 0)
      t->numel = 0;
  for (int i = 0; i < t->ndim && t->numel; i++)
    if (__builtin_mul_overflow (t->numel, t->shape[i], &t->numel))
      return fail (error, "tensor '%s': shape overflows", name);

  if (offsets->type != NL_JSON_ARRAY || offsets->count != 2)
    return fail (error, "tensor '%s': data_offsets is not an array of two integers", name);
  e = nl_json_first (offsets);
  if (!get_uint (e, &begin) || !get_uint (nl_json_next (offsets, e), &end))
    return fail (error, "tensor '%s': data_offsets are not non-negative integers", name);
  if (begin > end)
    return fail (error, "tensor '%s': data_offsets [%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT "] end before they begin",
                 name, begin, end);
  if (__builtin_mul_overflow ((uint64_t) t->numel, dtypes[t->dtype].size, &nbytes)
      || nbytes != (uint64_t) (end - begin))
    {
      g_autofree char *s = nl_st_format_shape (t->ndim, t->shape);
      return fail (error, "tensor '%s': %s %s needs %" G_GINT64_FORMAT " x %zu bytes but data_offsets [%" G_GINT64_FORMAT
                   ", %" G_GINT64_FORMAT "] hold %" G_GINT64_FORMAT,
                   name, dtypes[t->dtype].name, s, t->numel, dtypes[t->dtype].size, begin, end, end - begin);
    }
  t->begin = (size_t) begin;
  t->end = (size_t) end;
  return TRUE;
}

static int
cmp_offsets (gconstpointer a, gconstpointer b)
{
  const NlStTensor *x = a, *y = b;
  if (x->begin != y->begin)
    return x->begin < y->begin ? -1 : 1;
  if (x->end != y->end)
    return x->end < y->end ? -1 : 1;
  return strcmp (x->name, y->name);
}

static gboolean
parse_metadata (NlSafetensors *st, const NlJsonValue *o, GError **error)
{
  if (o->type != NL_JSON_OBJECT)
    return fail (error, "__metadata__ is not an object");
  for (const NlJsonValue *k = nl_json_first (o); k; k = nl_json_next (o, k))
    {
      if (k[1].type != NL_JSON_STRING)
        return fail (error, "__metadata__ value of '%s' is not a string", k->s);
      g_hash_table_insert (st->metadata, g_strdup (k->s), g_strdup (k[1].s));
    }
  return TRUE;
}

/* The 8-byte little-endian length of the header, which must fit the file */
static gboolean
read_header_length (const guint8 *data, gsize size, guint64 *length, GError **error)
{
  guint64 n = 0;
  if (size < 8)
    return fail (error, "file is %zu bytes, too short for the 8-byte header length", size);
  for (int i = 7; i >= 0; i--)
    n = n << 8 | data[i];
  if (n < 2 || n > size - 8 || n > NL_SAFETENSORS_MAX_HEADER)
    {
      fail (error, "header length %" G_GUINT64_FORMAT " at byte 0 is %s", n,
            n < 2 ? "below the minimum of 2"
            : n > NL_SAFETENSORS_MAX_HEADER ? "above the limit of 100 MB"
            : "past the end of the file");
      if (n >= 2 && n <= NL_SAFETENSORS_MAX_HEADER)
        g_prefix_error (error, "file is %zu bytes: ", size);
      return FALSE;
    }
  *length = n;
  return TRUE;
}

/* One tensor per member of the header's object, __metadata__ aside */
static gboolean
add_tensors (NlSafetensors *st, const NlJsonValue *root, size_t data_len, GError **error)
{
  for (const NlJsonValue *k = nl_json_first (root); k; k = nl_json_next (root, k))
    {
      const char *name = k->s;
      NlStTensor t = { 0 };
      if (strcmp (name, METADATA_KEY) == 0)
        {
          if (!parse_metadata (st, k + 1, error))
            return FALSE;
          continue;
        }
      if (!parse_entry (name, k + 1, &t, error))
        {
          st_tensor_clear (&t);
          return FALSE;
        }
      if (t.end > data_len)
        {
          fail (error, "tensor '%s': data_offsets [%zu, %zu] run past the %zu-byte data section", name,
                t.begin, t.end, data_len);
          st_tensor_clear (&t);
          return FALSE;
        }
      g_array_append_val (st->tensors, t);
    }
  return TRUE;
}

/* The tensors contiguous, in order, no gaps or overlaps, every byte of the
 * data section used; then each one's bytes and its name's index. */
static gboolean
place_tensors (NlSafetensors *st, const guint8 *data, size_t data_len, GError **error)
{
  size_t expected = 0;
  g_array_sort (st->tensors, cmp_offsets);
  for (guint i = 0; i < st->tensors->len; i++)
    {
      NlStTensor *t = &g_array_index (st->tensors, NlStTensor, i);
      if (t->begin < expected)
        {
          NlStTensor *prev = &g_array_index (st->tensors, NlStTensor, i - 1);
          return fail (error, "tensor '%s' (data bytes %zu to %zu) overlaps tensor '%s' (data bytes %zu to %zu)",
                       t->name, t->begin, t->end, prev->name, prev->begin, prev->end);
        }
      if (t->begin > expected)
        return fail (error, "data bytes %zu to %zu belong to no tensor (gap before tensor '%s')", expected, t->begin,
                     t->name);
      expected = t->end;
      t->data = data + t->begin;
    }
  if (expected != data_len)
    return fail (error, "data bytes %zu to %zu belong to no tensor (the data section is %zu bytes)", expected,
                 data_len, data_len);
  for (guint i = 0; i < st->tensors->len; i++)
    {
      NlStTensor *t = &g_array_index (st->tensors, NlStTensor, i);
      g_hash_table_insert (st->by_name, t->name, GUINT_TO_POINTER (i + 1));
    }
  return TRUE;
}

NlSafetensors *
nl_safetensors_parse (GBytes *bytes, GError **error)
{
  g_autoptr (NlSafetensors) st = g_new0 (NlSafetensors, 1);
  g_autoptr (NlJsonDoc) doc = NULL;
  gsize size;
  const guint8 *data = g_bytes_get_data (bytes, &size);
  const char *header, *bad_utf8;
  guint64 n = 0;

  st->bytes = g_bytes_ref (bytes);
  st->tensors = g_array_new (FALSE, TRUE, sizeof (NlStTensor));
  g_array_set_clear_func (st->tensors, st_tensor_clear);
  st->by_name = g_hash_table_new (g_str_hash, g_str_equal);
  st->metadata = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);

  if (!read_header_length (data, size, &n, error))
    return NULL;
  header = (const char *) data + 8;
  if (!g_utf8_validate_len (header, n, &bad_utf8))
    {
      fail (error, "header is not UTF-8 at byte %zu", (size_t) (bad_utf8 - (const char *) data));
      return NULL;
    }
  if (header[0] != '{')
    {
      fail (error, "header at byte 8 does not start with '{'");
      return NULL;
    }
  doc = parse_header_json (header, n, error);
  if (!doc || !add_tensors (st, nl_json_doc_root (doc), size - 8 - n, error)
      || !place_tensors (st, data + 8 + n, size - 8 - n, error))
    return NULL;
  return g_steal_pointer (&st);
}

NlSafetensors *
nl_safetensors_read_file (const char *path, GError **error)
{
  char *contents;
  gsize len;
  g_autoptr (GBytes) bytes = NULL;
  NlSafetensors *st;

  /* read, not map: a file truncated under a mapping would be a SIGBUS */
  if (!g_file_get_contents (path, &contents, &len, error))
    return NULL;
  bytes = g_bytes_new_take (contents, len);
  st = nl_safetensors_parse (bytes, error);
  if (!st)
    g_prefix_error (error, "%s: ", path);
  return st;
}

int
nl_safetensors_n_tensors (const NlSafetensors *st)
{
  return (int) st->tensors->len;
}

const NlStTensor *
nl_safetensors_tensor (const NlSafetensors *st, int i)
{
  g_return_val_if_fail (i >= 0 && (guint) i < st->tensors->len, NULL);
  return &g_array_index (st->tensors, NlStTensor, i);
}

const NlStTensor *
nl_safetensors_find (const NlSafetensors *st, const char *name)
{
  guint i = GPOINTER_TO_UINT (g_hash_table_lookup (st->by_name, name));
  return i ? &g_array_index (st->tensors, NlStTensor, i - 1) : NULL;
}

const char *
nl_safetensors_metadata (const NlSafetensors *st, const char *key)
{
  return g_hash_table_lookup (st->metadata, key);
}

GHashTable *
nl_safetensors_metadata_table (const NlSafetensors *st)
{
  return st->metadata;
}

GBytes *
nl_safetensors_get_bytes (const NlSafetensors *st)
{
  return st->bytes;
}

/* ---- writing ---- */

typedef struct {
  char *name;
  NlStDType dtype;
  int ndim;
  int64_t *shape;
  const void *data;
  size_t nbytes;
} WEntry;

struct NlSafetensorsWriter {
  GArray *entries;   /* WEntry */
  GPtrArray *meta;   /* key, value, key, value ... in insertion order */
};

static void
wentry_clear (gpointer p)
{
  WEntry *e = p;
  g_free (e->name);
  g_free (e->shape);
}

NlSafetensorsWriter *
nl_safetensors_writer_new (void)
{
  NlSafetensorsWriter *w = g_new0 (NlSafetensorsWriter, 1);
  w->entries = g_array_new (FALSE, TRUE, sizeof (WEntry));
  g_array_set_clear_func (w->entries, wentry_clear);
  w->meta = g_ptr_array_new_with_free_func (g_free);
  return w;
}

void
nl_safetensors_writer_free (NlSafetensorsWriter *w)
{
  if (!w)
    return;
  g_array_unref (w->entries);
  g_ptr_array_unref (w->meta);
  g_free (w);
}

void
nl_safetensors_writer_add (NlSafetensorsWriter *w, const char *name, NlStDType dtype, int ndim,
                           const int64_t *shape, const void *data)
{
  WEntry e = { .dtype = dtype, .ndim = ndim, .data = data };
  int64_t numel = 1;
  g_return_if_fail (dtype < NL_ST_COUNT && ndim >= 0);
  for (int i = 0; i < ndim; i++)
    {
      g_return_if_fail (shape[i] >= 0);
      numel *= shape[i];
    }
  e.name = g_strdup (name);
  e.shape = g_memdup2 (shape, sizeof (int64_t) * MAX (ndim, 1));
  e.nbytes = (size_t) numel * dtypes[dtype].size;
  g_array_append_val (w->entries, e);
}

void
nl_safetensors_writer_set_metadata (NlSafetensorsWriter *w, const char *key, const char *value)
{
  for (guint i = 0; i < w->meta->len; i += 2)
    if (strcmp (w->meta->pdata[i], key) == 0)
      {
        g_free (w->meta->pdata[i + 1]);
        w->meta->pdata[i + 1] = g_strdup (value);
        return;
      }
  g_ptr_array_add (w->meta, g_strdup (key));
  g_ptr_array_add (w->meta, g_strdup (value));
}

static gpointer
invalid (GError **error, const char *what, const char *name)
{
  g_autofree char *valid = g_utf8_make_valid (name, -1);
  g_set_error (error, NL_SAFETENSORS_ERROR, NL_SAFETENSORS_ERROR_INVALID, "%s '%s'", what, valid);
  return NULL;
}

GBytes *
nl_safetensors_writer_finish (NlSafetensorsWriter *w, GError **error)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();
  g_autoptr (JsonGenerator) gen = json_generator_new ();
  g_autoptr (JsonNode) root = NULL;
  g_autoptr (GHashTable) seen = g_hash_table_new (g_str_hash, g_str_equal);
  g_autofree char *json = NULL;
  size_t json_len, header_len, data_len = 0, total;
  guint8 *out, *p;

  for (guint i = 0; i < w->entries->len; i++)
    {
      const char *name = g_array_index (w->entries, WEntry, i).name;
      if (!*name || !g_utf8_validate (name, -1, NULL) || strcmp (name, METADATA_KEY) == 0)
        return invalid (error, "invalid tensor name", name);
      if (!g_hash_table_add (seen, (gpointer) name))
        return invalid (error, "tensor name used twice:", name);
    }
  for (guint i = 0; i < w->meta->len; i++)
    if (!g_utf8_validate (w->meta->pdata[i], -1, NULL))
      return invalid (error, "metadata is not UTF-8:", w->meta->pdata[i - i % 2]);

  json_builder_begin_object (b);
  if (w->meta->len)
    {
      json_builder_set_member_name (b, METADATA_KEY);
      json_builder_begin_object (b);
      for (guint i = 0; i < w->meta->len; i += 2)
        {
          json_builder_set_member_name (b, w->meta->pdata[i]);
          json_builder_add_string_value (b, w->meta->pdata[i + 1]);
        }
      json_builder_end_object (b);
    }
  for (guint i = 0; i < w->entries->len; i++)
    {
      const WEntry *e = &g_array_index (w->entries, WEntry, i);
      json_builder_set_member_name (b, e->name);
      json_builder_begin_object (b);
      json_builder_set_member_name (b, "dtype");
      json_builder_add_string_value (b, dtypes[e->dtype].name);
      json_builder_set_member_name (b, "shape");
      json_builder_begin_array (b);
      for (int d = 0; d < e->ndim; d++)
        json_builder_add_int_value (b, e->shape[d]);
      json_builder_end_array (b);
      json_builder_set_member_name (b, "data_offsets");
      json_builder_begin_array (b);
      json_builder_add_int_value (b, (gint64) data_len);
      json_builder_add_int_value (b, (gint64) (data_len + e->nbytes));
      json_builder_end_array (b);
      json_builder_end_object (b);
      data_len += e->nbytes;
    }
  json_builder_end_object (b);
  root = json_builder_get_root (b);
  json_generator_set_root (gen, root);
  json = json_generator_to_data (gen, &json_len);

  header_len = (json_len + 7) / 8 * 8;
  total = 8 + header_len + data_len;
  out = g_try_malloc (total);
  if (!out)
    {
      g_set_error (error, NL_SAFETENSORS_ERROR, NL_SAFETENSORS_ERROR_INVALID,
                   "out of memory for a %zu-byte safetensors file", total);
      return NULL;
    }
  for (int i = 0; i < 8; i++)
    out[i] = (guint8) ((guint64) header_len >> (8 * i));
  memcpy (out + 8, json, json_len);
  memset (out + 8 + json_len, ' ', header_len - json_len);
  p = out + 8 + header_len;
  for (guint i = 0; i < w->entries->len; i++)
    {
      const WEntry *e = &g_array_index (w->entries, WEntry, i);
      if (e->nbytes)
        memcpy (p, e->data, e->nbytes);
      p += e->nbytes;
    }
  return g_bytes_new_take (out, total);
}

gboolean
nl_safetensors_write_file (const char *path, GBytes *bytes, GError **error)
{
  /* temporary file, fsync, rename: a crash leaves the old file or the new one */
  return nl_atomic_file_set_bytes (path, bytes, error);
}
