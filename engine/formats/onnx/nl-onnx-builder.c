/* nl-onnx-builder.c — ModelProto assembly over protobuf-c's generated
 * messages. Everything allocated goes to one pool freed at the end; the
 * repeated fields are collected in GPtrArrays and pointed at by the
 * messages just before packing. */
#include "engine/formats/onnx/nl-onnx-builder.h"

#include <string.h>

#define MAX_ATTRS 8 /* the most attributes an exported node carries (Conv: 5) */

struct NlOnnxBuilder {
  GPtrArray *pool;        /* g_free'd at the end */
  GHashTable *names;      /* names handed out (pool-owned keys) */
  GPtrArray *nodes, *initializers, *inputs, *outputs, *metadata;
  Onnx__ModelProto model;
  Onnx__GraphProto graph;
  Onnx__OperatorSetIdProto opset;
  Onnx__OperatorSetIdProto *opsets[1];
};

static gpointer
pool_new0 (NlOnnxBuilder *b, gsize size)
{
  gpointer p = g_malloc0 (size);
  g_ptr_array_add (b->pool, p);
  return p;
}

static gpointer
pool_dup (NlOnnxBuilder *b, gconstpointer data, gsize size)
{
  gpointer p = g_memdup2 (data, size);
  g_ptr_array_add (b->pool, p);
  return p;
}

char *
nl_onnx_builder_strdup (NlOnnxBuilder *b, const char *s)
{
  return pool_dup (b, s, strlen (s) + 1);
}

NlOnnxBuilder *
nl_onnx_builder_new (const char *graph_name, int opset)
{
  NlOnnxBuilder *b = g_new0 (NlOnnxBuilder, 1);
  b->pool = g_ptr_array_new_with_free_func (g_free);
  b->names = g_hash_table_new (g_str_hash, g_str_equal);
  b->nodes = g_ptr_array_new ();
  b->initializers = g_ptr_array_new ();
  b->inputs = g_ptr_array_new ();
  b->outputs = g_ptr_array_new ();
  b->metadata = g_ptr_array_new ();
  onnx__model_proto__init (&b->model);
  onnx__graph_proto__init (&b->graph);
  onnx__operator_set_id_proto__init (&b->opset);
  b->opset.domain = (char *) "";
  b->opset.has_version = TRUE;
  b->opset.version = opset;
  b->opsets[0] = &b->opset;
  /* IR version 8 (ONNX 1.10+): what opsets 13 to 17 need at most */
  b->model.has_ir_version = TRUE;
  b->model.ir_version = 8;
  b->model.n_opset_import = 1;
  b->model.opset_import = b->opsets;
  b->model.graph = &b->graph;
  b->graph.name = nl_onnx_builder_strdup (b, graph_name);
  return b;
}

void
nl_onnx_builder_free (NlOnnxBuilder *b)
{
  if (!b)
    return;
  g_ptr_array_unref (b->nodes);
  g_ptr_array_unref (b->initializers);
  g_ptr_array_unref (b->inputs);
  g_ptr_array_unref (b->outputs);
  g_ptr_array_unref (b->metadata);
  g_hash_table_unref (b->names);
  g_ptr_array_unref (b->pool);
  g_free (b);
}

const char *
nl_onnx_builder_unique (NlOnnxBuilder *b, const char *fmt, ...)
{
  va_list ap;
  g_autofree char *base = NULL;
  char *name;
  va_start (ap, fmt);
  base = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  name = nl_onnx_builder_strdup (b, base);
  for (int k = 1; g_hash_table_contains (b->names, name); k++)
    {
      g_autofree char *next = g_strdup_printf ("%s_%d", base, k);
      name = nl_onnx_builder_strdup (b, next);
    }
  g_hash_table_add (b->names, name);
  return name;
}

Onnx__NodeProto *
nl_onnx_builder_node (NlOnnxBuilder *b, const char *op_type, const char *name, const char *const *inputs,
                      int n_inputs, const char *output)
{
  Onnx__NodeProto *n = pool_new0 (b, sizeof *n);
  onnx__node_proto__init (n);
  n->op_type = nl_onnx_builder_strdup (b, op_type);
  n->name = nl_onnx_builder_strdup (b, name); /* node names are their own namespace */
  n->n_input = n_inputs;
  n->input = pool_new0 (b, sizeof (char *) * MAX (n_inputs, 1));
  for (int i = 0; i < n_inputs; i++)
    n->input[i] = nl_onnx_builder_strdup (b, inputs[i]);
  n->n_output = 1;
  n->output = pool_new0 (b, sizeof (char *));
  n->output[0] = nl_onnx_builder_strdup (b, output);
  n->attribute = pool_new0 (b, sizeof (Onnx__AttributeProto *) * MAX_ATTRS);
  g_ptr_array_add (b->nodes, n);
  return n;
}

void
nl_onnx_builder_add_output (NlOnnxBuilder *b, Onnx__NodeProto *n, const char *output)
{
  char **out = pool_new0 (b, sizeof (char *) * (n->n_output + 1));
  memcpy (out, n->output, sizeof (char *) * n->n_output);
  out[n->n_output++] = nl_onnx_builder_strdup (b, output);
  n->output = out;
}

static Onnx__AttributeProto *
attr_new (NlOnnxBuilder *b, Onnx__NodeProto *n, const char *name, Onnx__AttributeProto__AttributeType type)
{
  Onnx__AttributeProto *a = pool_new0 (b, sizeof *a);
  g_assert (n->n_attribute < MAX_ATTRS);
  onnx__attribute_proto__init (a);
  a->name = nl_onnx_builder_strdup (b, name);
  a->has_type = TRUE;
  a->type = type;
  n->attribute[n->n_attribute++] = a;
  return a;
}

void
nl_onnx_attr_int (NlOnnxBuilder *b, Onnx__NodeProto *n, const char *name, int64_t v)
{
  Onnx__AttributeProto *a = attr_new (b, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT);
  a->has_i = TRUE;
  a->i = v;
}

void
nl_onnx_attr_float (NlOnnxBuilder *b, Onnx__NodeProto *n, const char *name, float v)
{
  Onnx__AttributeProto *a = attr_new (b, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT);
  a->has_f = TRUE;
  a->f = v;
}

void
nl_onnx_attr_string (NlOnnxBuilder *b, Onnx__NodeProto *n, const char *name, const char *v)
{
  Onnx__AttributeProto *a = attr_new (b, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING);
  a->has_s = TRUE;
  a->s.data = (uint8_t *) nl_onnx_builder_strdup (b, v);
  a->s.len = strlen (v);
}

void
nl_onnx_attr_ints (NlOnnxBuilder *b, Onnx__NodeProto *n, const char *name, const int64_t *v, int len)
{
  Onnx__AttributeProto *a = attr_new (b, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS);
  a->n_ints = len;
  a->ints = pool_dup (b, v, sizeof (int64_t) * MAX (len, 1));
}

static const char *
tensor (NlOnnxBuilder *b, const char *name, int type, const int64_t *dims, int ndim, const void *data,
        gsize elem_size)
{
  Onnx__TensorProto *t = pool_new0 (b, sizeof *t);
  int64_t numel = 1;
  onnx__tensor_proto__init (t);
  t->name = (char *) nl_onnx_builder_unique (b, "%s", name);
  t->has_data_type = TRUE;
  t->data_type = type;
  t->n_dims = ndim;
  t->dims = pool_dup (b, dims, sizeof (int64_t) * MAX (ndim, 1));
  for (int i = 0; i < ndim; i++)
    numel *= dims[i];
  /* raw_data is little-endian, as this machine's memory (x86-64, arm64) */
  t->has_raw_data = TRUE;
  t->raw_data.len = numel * elem_size;
  t->raw_data.data = pool_dup (b, data, MAX (numel * elem_size, 1));
  g_ptr_array_add (b->initializers, t);
  return t->name;
}

const char *
nl_onnx_builder_floats (NlOnnxBuilder *b, const char *name, const int64_t *dims, int ndim, const float *data)
{
  return tensor (b, name, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, dims, ndim, data, sizeof (float));
}

const char *
nl_onnx_builder_int64s (NlOnnxBuilder *b, const char *name, const int64_t *dims, int ndim, const int64_t *data)
{
  return tensor (b, name, ONNX__TENSOR_PROTO__DATA_TYPE__INT64, dims, ndim, data, sizeof (int64_t));
}

const char *
nl_onnx_builder_scalar (NlOnnxBuilder *b, const char *name, float v)
{
  return tensor (b, name, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, NULL, 0, &v, sizeof (float));
}

const char *
nl_onnx_builder_bytes (NlOnnxBuilder *b, const char *name, int elem_type, const int64_t *dims, int ndim,
                       const void *data)
{
  g_return_val_if_fail (elem_type == ONNX__TENSOR_PROTO__DATA_TYPE__INT8
                          || elem_type == ONNX__TENSOR_PROTO__DATA_TYPE__UINT8, NULL);
  return tensor (b, name, elem_type, dims, ndim, data, 1);
}

static Onnx__ValueInfoProto *
value_info (NlOnnxBuilder *b, const char *name, int elem_type, const int64_t *dims, int ndim)
{
  Onnx__ValueInfoProto *v = pool_new0 (b, sizeof *v);
  Onnx__TypeProto *type = pool_new0 (b, sizeof *type);
  Onnx__TypeProto__Tensor *tt = pool_new0 (b, sizeof *tt);
  Onnx__TensorShapeProto *shape = pool_new0 (b, sizeof *shape);
  onnx__value_info_proto__init (v);
  onnx__type_proto__init (type);
  onnx__type_proto__tensor__init (tt);
  onnx__tensor_shape_proto__init (shape);
  v->name = nl_onnx_builder_strdup (b, name);
  v->type = type;
  type->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
  type->tensor_type = tt;
  tt->has_elem_type = TRUE;
  tt->elem_type = elem_type;
  tt->shape = shape;
  shape->n_dim = ndim;
  shape->dim = pool_new0 (b, sizeof (Onnx__TensorShapeProto__Dimension *) * MAX (ndim, 1));
  for (int i = 0; i < ndim; i++)
    {
      Onnx__TensorShapeProto__Dimension *d = pool_new0 (b, sizeof *d);
      onnx__tensor_shape_proto__dimension__init (d);
      if (dims[i] < 0)
        {
          d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
          d->dim_param = nl_onnx_builder_strdup (b, "N");
        }
      else
        {
          d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
          d->dim_value = dims[i];
        }
      shape->dim[i] = d;
    }
  return v;
}

void
nl_onnx_builder_input (NlOnnxBuilder *b, const char *name, int elem_type, const int64_t *dims, int ndim)
{
  g_ptr_array_add (b->inputs, value_info (b, name, elem_type, dims, ndim));
}

void
nl_onnx_builder_output (NlOnnxBuilder *b, const char *name, const int64_t *dims, int ndim)
{
  g_ptr_array_add (b->outputs, value_info (b, name, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, dims, ndim));
}

void
nl_onnx_builder_metadata (NlOnnxBuilder *b, const char *key, const char *value)
{
  Onnx__StringStringEntryProto *e = pool_new0 (b, sizeof *e);
  onnx__string_string_entry_proto__init (e);
  e->key = nl_onnx_builder_strdup (b, key);
  e->value = nl_onnx_builder_strdup (b, value);
  g_ptr_array_add (b->metadata, e);
}

void
nl_onnx_builder_producer (NlOnnxBuilder *b, const char *name, const char *version, const char *doc)
{
  b->model.producer_name = nl_onnx_builder_strdup (b, name);
  b->model.producer_version = nl_onnx_builder_strdup (b, version);
  if (doc)
    b->model.doc_string = nl_onnx_builder_strdup (b, doc);
}

GBytes *
nl_onnx_builder_pack (NlOnnxBuilder *b)
{
  gsize size;
  guint8 *buf;
  b->graph.n_node = b->nodes->len;
  b->graph.node = (Onnx__NodeProto **) b->nodes->pdata;
  b->graph.n_initializer = b->initializers->len;
  b->graph.initializer = (Onnx__TensorProto **) b->initializers->pdata;
  b->graph.n_input = b->inputs->len;
  b->graph.input = (Onnx__ValueInfoProto **) b->inputs->pdata;
  b->graph.n_output = b->outputs->len;
  b->graph.output = (Onnx__ValueInfoProto **) b->outputs->pdata;
  b->model.n_metadata_props = b->metadata->len;
  b->model.metadata_props = (Onnx__StringStringEntryProto **) b->metadata->pdata;
  size = onnx__model_proto__get_packed_size (&b->model);
  buf = g_malloc (MAX (size, 1));
  onnx__model_proto__pack (&b->model, buf);
  return g_bytes_new_take (buf, size);
}
