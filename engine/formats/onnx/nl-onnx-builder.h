/* nl-onnx-builder.h — an ONNX ModelProto under construction (private to
 * engine/formats/onnx). The messages are protobuf-c's, generated from Debian's
 * onnx.proto; the builder owns every string, array and message it hands
 * out and frees them together, so the exporter never tracks ownership. */
#pragma once

#include <glib.h>
#include <stdint.h>

#include "onnx.pb-c.h"

G_BEGIN_DECLS

typedef struct NlOnnxBuilder NlOnnxBuilder;

NlOnnxBuilder *nl_onnx_builder_new (const char *graph_name, int opset);
void nl_onnx_builder_free (NlOnnxBuilder *b);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (NlOnnxBuilder, nl_onnx_builder_free)

/* A string the builder owns; unique() also makes it unique among the
 * names handed out so far ("conv1.flat", "conv1.flat_1"). */
char *nl_onnx_builder_strdup (NlOnnxBuilder *b, const char *s);
const char *nl_onnx_builder_unique (NlOnnxBuilder *b, const char *fmt, ...) G_GNUC_PRINTF (2, 3);

/* Appends a node op_type(inputs) -> output (inputs may hold "" for an
 * absent optional input); attributes follow with the attr_ calls. */
Onnx__NodeProto *nl_onnx_builder_node (NlOnnxBuilder *b, const char *op_type, const char *name,
                                       const char *const *inputs, int n_inputs, const char *output);
/* Another output of n (LSTM's Y_h after Y). */
void nl_onnx_builder_add_output (NlOnnxBuilder *b, Onnx__NodeProto *n, const char *output);
void nl_onnx_attr_string (NlOnnxBuilder *b, Onnx__NodeProto *n, const char *name, const char *v);
void nl_onnx_attr_int (NlOnnxBuilder *b, Onnx__NodeProto *n, const char *name, int64_t v);
void nl_onnx_attr_float (NlOnnxBuilder *b, Onnx__NodeProto *n, const char *name, float v);
void nl_onnx_attr_ints (NlOnnxBuilder *b, Onnx__NodeProto *n, const char *name, const int64_t *v, int len);

/* Constant tensors (initializers), copied; return their name. */
const char *nl_onnx_builder_floats (NlOnnxBuilder *b, const char *name, const int64_t *dims, int ndim,
                                    const float *data);
const char *nl_onnx_builder_int64s (NlOnnxBuilder *b, const char *name, const int64_t *dims, int ndim,
                                    const int64_t *data);
const char *nl_onnx_builder_scalar (NlOnnxBuilder *b, const char *name, float v);
/* 8-bit integers: elem_type ONNX__TENSOR_PROTO__DATA_TYPE__INT8 or UINT8. */
const char *nl_onnx_builder_bytes (NlOnnxBuilder *b, const char *name, int elem_type, const int64_t *dims, int ndim,
                                   const void *data);

/* Graph inputs and outputs of float32 (or elem_type) with these dims; a
 * negative dim is the symbolic batch dimension "N". */
void nl_onnx_builder_input (NlOnnxBuilder *b, const char *name, int elem_type, const int64_t *dims, int ndim);
void nl_onnx_builder_output (NlOnnxBuilder *b, const char *name, const int64_t *dims, int ndim);
void nl_onnx_builder_metadata (NlOnnxBuilder *b, const char *key, const char *value);
void nl_onnx_builder_producer (NlOnnxBuilder *b, const char *name, const char *version, const char *doc);

/* The serialised ModelProto. */
GBytes *nl_onnx_builder_pack (NlOnnxBuilder *b);

G_END_DECLS
