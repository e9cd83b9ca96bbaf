/* nl-onnx-const.h — constant tensors of an ONNX model (initializers,
 * Constant nodes, folded results) as the importer holds them (private to
 * engine/formats/onnx). */
#pragma once

#include <glib.h>
#include <stdint.h>

#include "core/nl-shape.h"
#include "onnx.pb-c.h"

G_BEGIN_DECLS

typedef struct {
  NlShape shape;        /* ndim 0: a scalar */
  gboolean is_int;      /* integer types: i holds them; else f */
  float *f;
  int64_t *i;
  int64_t numel;
} NlOnnxConst;

void nl_onnx_const_free (NlOnnxConst *c);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (NlOnnxConst, nl_onnx_const_free)
NlOnnxConst *nl_onnx_const_new (const NlShape *shape, gboolean is_int);

/* A TensorProto's values: float, double, float16 as floats; integer and
 * bool types as int64. External data is read from base_dir (the model's
 * folder), and only from files inside it. Errors name the tensor. */
NlOnnxConst *nl_onnx_const_from_proto (const Onnx__TensorProto *t, const char *base_dir, GError **error);

/* Element k as a double, whatever the type. */
static inline double
nl_onnx_const_get (const NlOnnxConst *c, int64_t k)
{
  return c->is_int ? (double) c->i[k] : (double) c->f[k];
}

/* A node's attribute by name (NULL when absent), and typed reads with a
 * default for an absent one; ints: *len 0 when absent. */
const Onnx__AttributeProto *nl_onnx_node_attr (const Onnx__NodeProto *n, const char *name);
int64_t nl_onnx_node_int (const Onnx__NodeProto *n, const char *name, int64_t def);
float nl_onnx_node_float (const Onnx__NodeProto *n, const char *name, float def);
const int64_t *nl_onnx_node_ints (const Onnx__NodeProto *n, const char *name, int *len);
gboolean nl_onnx_node_string_is (const Onnx__NodeProto *n, const char *name, const char *value, gboolean if_absent);

G_END_DECLS
