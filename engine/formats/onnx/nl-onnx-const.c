/* nl-onnx-const.c — TensorProto values into NlOnnxConst, including the
 * external-data files of large models, which must stay inside the model's
 * folder (a model is data: it never names what else on the disk we read). */
#include "engine/formats/onnx/nl-onnx-const.h"
#include "engine/formats/onnx/nl-onnx-export.h"

#include <math.h>
#include <string.h>

void
nl_onnx_const_free (NlOnnxConst *c)
{
  if (!c)
    return;
  g_free (c->f);
  g_free (c->i);
  g_free (c);
}

NlOnnxConst *
nl_onnx_const_new (const NlShape *shape, gboolean is_int)
{
  NlOnnxConst *c = g_new0 (NlOnnxConst, 1);
  c->shape = *shape;
  c->is_int = is_int;
  c->numel = nl_shape_numel (shape);
  if (is_int)
    c->i = g_new0 (int64_t, MAX (c->numel, 1));
  else
    c->f = g_new0 (float, MAX (c->numel, 1));
  return c;
}

static gboolean
bad (GError **error, const Onnx__TensorProto *t, const char *why)
{
  g_set_error (error, NL_ONNX_ERROR, NL_ONNX_ERROR_PARSE, "tensor “%s”: %s", t->name ? t->name : "", why);
  return FALSE;
}

static float
half_to_float (guint16 h)
{
  int e = (h >> 10) & 0x1f, m = h & 0x3ff;
  float v = e == 0 ? ldexpf ((float) m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexpf ((float) (m | 0x400), e - 25);
  return (h & 0x8000) ? -v : v;
}

/* The bytes of external data: location (relative, inside base_dir), offset, length. */
static GBytes *
read_external (const Onnx__TensorProto *t, const char *base_dir, GError **error)
{
  const char *location = NULL;
  gint64 offset = 0, length = -1;
  g_autofree char *path = NULL, *dir = NULL, *contents = NULL;
  gsize size;
  for (size_t k = 0; k < t->n_external_data; k++)
    {
      const Onnx__StringStringEntryProto *e = t->external_data[k];
      if (!e->key || !e->value)
        continue;
      if (!strcmp (e->key, "location"))
        location = e->value;
      else if (!strcmp (e->key, "offset"))
        offset = g_ascii_strtoll (e->value, NULL, 10);
      else if (!strcmp (e->key, "length"))
        length = g_ascii_strtoll (e->value, NULL, 10);
    }
  if (!location || !*location)
    return bad (error, t, "external data without a location"), NULL;
  dir = g_canonicalize_filename (base_dir ? base_dir : ".", NULL);
  path = g_canonicalize_filename (location, dir);
  if (g_path_is_absolute (location) || !g_str_has_prefix (path, dir) || path[strlen (dir)] != G_DIR_SEPARATOR)
    {
      g_set_error (error, NL_ONNX_ERROR, NL_ONNX_ERROR_UNSAFE,
                   "tensor “%s”: its external data “%s” is outside the model's folder %s: refused",
                   t->name ? t->name : "", location, dir);
      return NULL;
    }
  if (!g_file_get_contents (path, &contents, &size, error))
    return NULL;
  if (offset < 0 || (gsize) offset > size || (length >= 0 && (gsize) (offset + length) > size))
    return bad (error, t, "external data range is outside its file"), NULL;
  if (length < 0)
    length = size - offset;
  return g_bytes_new (contents + offset, length);
}

/* How many values the typed repeated field of type holds. */
static size_t
typed_count (const Onnx__TensorProto *t, int type)
{
  switch (type)
    {
    case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT: return t->n_float_data;
    case ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE: return t->n_double_data;
    case ONNX__TENSOR_PROTO__DATA_TYPE__INT64: return t->n_int64_data;
    default: return t->n_int32_data; /* float16 (as bits), int32 and smaller */
    }
}

NlOnnxConst *
nl_onnx_const_from_proto (const Onnx__TensorProto *t, const char *base_dir, GError **error)
{
  g_autoptr (NlOnnxConst) c = NULL;
  g_autoptr (GBytes) external = NULL;
  NlShape shape = { 0 };
  const guint8 *raw = NULL;
  gsize raw_len = 0, elem;
  int type = t->has_data_type ? t->data_type : 0;
  int64_t numel = 1;

  if (t->n_dims > NL_MAX_DIMS)
    return bad (error, t, "more dimensions than netloom handles"), NULL;
  shape.ndim = (int) t->n_dims;
  for (size_t d = 0; d < t->n_dims; d++)
    {
      if (t->dims[d] < 0 || (t->dims[d] > 0 && numel > G_MAXINT64 / 4 / t->dims[d]))
        return bad (error, t, "a dimension is negative or too large"), NULL;
      shape.d[d] = t->dims[d];
      numel *= t->dims[d];
    }
  switch (type)
    {
    case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT: elem = 4; break;
    case ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE: elem = 8; break;
    case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16: elem = 2; break;
    case ONNX__TENSOR_PROTO__DATA_TYPE__INT64: elem = 8; break;
    case ONNX__TENSOR_PROTO__DATA_TYPE__INT32: elem = 4; break;
    case ONNX__TENSOR_PROTO__DATA_TYPE__INT8:
    case ONNX__TENSOR_PROTO__DATA_TYPE__UINT8:
    case ONNX__TENSOR_PROTO__DATA_TYPE__BOOL: elem = 1; break;
    default:
      g_set_error (error, NL_ONNX_ERROR, NL_ONNX_ERROR_UNSUPPORTED, "tensor “%s” has data type %d, which netloom "
                   "does not read (float, double, float16, int8/32/64, uint8, bool)", t->name ? t->name : "", type);
      return NULL;
    }
  if (t->has_data_location && t->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL)
    {
      if (!(external = read_external (t, base_dir, error)))
        return NULL;
      raw = g_bytes_get_data (external, &raw_len);
    }
  else if (t->has_raw_data)
    {
      raw = t->raw_data.data;
      raw_len = t->raw_data.len;
    }
  /* the values must all be there before room for them is allocated: a
   * few bytes of a model can declare any shape */
  if ((raw || numel == 0) ? raw_len != (gsize) numel * elem : typed_count (t, type) != (size_t) numel)
    return bad (error, t, "its data does not have as many values as its shape says"), NULL;
  c = nl_onnx_const_new (&shape, type != ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT
                                   && type != ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE
                                   && type != ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16);
  if (raw || numel == 0)
    {
      /* raw data is little-endian, as this machine */
      for (int64_t k = 0; k < numel; k++)
        {
          const guint8 *p = raw + k * elem;
          switch (type)
            {
            case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT: memcpy (&c->f[k], p, 4); break;
            case ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE: { double v; memcpy (&v, p, 8); c->f[k] = (float) v; } break;
            case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16: { guint16 h; memcpy (&h, p, 2); c->f[k] = half_to_float (h); } break;
            case ONNX__TENSOR_PROTO__DATA_TYPE__INT64: memcpy (&c->i[k], p, 8); break;
            case ONNX__TENSOR_PROTO__DATA_TYPE__INT32: { gint32 v; memcpy (&v, p, 4); c->i[k] = v; } break;
            case ONNX__TENSOR_PROTO__DATA_TYPE__INT8: c->i[k] = (gint8) *p; break;
            default: c->i[k] = *p; break;
            }
        }
      return g_steal_pointer (&c);
    }
  /* the typed repeated fields */
  switch (type)
    {
    case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT:
      if (t->n_float_data != (size_t) numel)
        break;
      memcpy (c->f, t->float_data, sizeof (float) * numel);
      return g_steal_pointer (&c);
    case ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE:
      if (t->n_double_data != (size_t) numel)
        break;
      for (int64_t k = 0; k < numel; k++)
        c->f[k] = (float) t->double_data[k];
      return g_steal_pointer (&c);
    case ONNX__TENSOR_PROTO__DATA_TYPE__INT64:
      if (t->n_int64_data != (size_t) numel)
        break;
      memcpy (c->i, t->int64_data, sizeof (int64_t) * numel);
      return g_steal_pointer (&c);
    default: /* float16 (as bits), int32 and smaller live in int32_data */
      if (t->n_int32_data != (size_t) numel)
        break;
      for (int64_t k = 0; k < numel; k++)
        {
          if (type == ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16)
            c->f[k] = half_to_float ((guint16) t->int32_data[k]);
          else
            c->i[k] = t->int32_data[k];
        }
      return g_steal_pointer (&c);
    }
  return bad (error, t, "its data does not have as many values as its shape says"), NULL;
}

/* ---- node attributes ---- */

const Onnx__AttributeProto *
nl_onnx_node_attr (const Onnx__NodeProto *n, const char *name)
{
  for (size_t k = 0; k < n->n_attribute; k++)
    if (n->attribute[k]->name && !strcmp (n->attribute[k]->name, name))
      return n->attribute[k];
  return NULL;
}

int64_t
nl_onnx_node_int (const Onnx__NodeProto *n, const char *name, int64_t def)
{
  const Onnx__AttributeProto *a = nl_onnx_node_attr (n, name);
  return a && a->has_i ? a->i : def;
}

float
nl_onnx_node_float (const Onnx__NodeProto *n, const char *name, float def)
{
  const Onnx__AttributeProto *a = nl_onnx_node_attr (n, name);
  return a && a->has_f ? a->f : def;
}

const int64_t *
nl_onnx_node_ints (const Onnx__NodeProto *n, const char *name, int *len)
{
  const Onnx__AttributeProto *a = nl_onnx_node_attr (n, name);
  *len = a ? (int) a->n_ints : 0;
  return a ? a->ints : NULL;
}

gboolean
nl_onnx_node_string_is (const Onnx__NodeProto *n, const char *name, const char *value, gboolean if_absent)
{
  const Onnx__AttributeProto *a = nl_onnx_node_attr (n, name);
  if (!a || !a->has_s)
    return if_absent;
  return a->s.len == strlen (value) && !memcmp (a->s.data, value, a->s.len);
}
