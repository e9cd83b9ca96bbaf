/* nl-onnx-export.h — a trained model as an ONNX inference graph that
 * onnxruntime, Netron or TensorRT read.
 *
 * The graph is the network compiled for inference: Dropout is gone,
 * BatchNorm uses its running statistics, a loss node is left out, and a
 * Softmax may be appended so the output is probabilities. The input keeps
 * the Input node's id and has a symbolic batch dimension "N"; the output is
 * "probabilities" (Softmax at the end), "log_probabilities" (LogSoftmax) or
 * "output". Weights are initializers named as in safetensors exports
 * ("conv1.weight"). Ops ONNX lacks at the chosen opset (Gelu, and
 * LayerNormalization before 17) are written as their formula in ONNX ops.
 *
 * Sequence networks (nl-onnx-export-seq.c): LSTM and GRU are ONNX's LSTM
 * and GRU nodes, one per layer; MultiHeadAttention, PositionalEmbedding,
 * SequencePool and MatMul are subgraphs of standard ops. When the Input
 * has `lengths: nonzero` the graph computes each sample's length from the
 * input as netloom does (1 + the last step with a non-zero value), so the
 * model takes the token ids alone, and the masks and LSTM/GRU
 * sequence_lens come from those lengths. */
#pragma once

#include "engine/graph/nl-model.h"

G_BEGIN_DECLS

#define NL_ONNX_ERROR (nl_onnx_error_quark ())
GQuark nl_onnx_error_quark (void);

typedef enum {
  NL_ONNX_ERROR_UNAVAILABLE, /* built without protobuf-c / onnx.proto */
  NL_ONNX_ERROR_UNSUPPORTED, /* an op or parameter with no ONNX equivalent */
  NL_ONNX_ERROR_OPSET,       /* opset out of range */
  NL_ONNX_ERROR_PARSE,       /* not a ModelProto, truncated, malformed */
  NL_ONNX_ERROR_UNSAFE,      /* external data outside the model's folder */
} NlOnnxErrorCode;

#define NL_ONNX_OPSET_MIN 13
#define NL_ONNX_OPSET_MAX 17

typedef struct {
  int opset;                    /* NL_ONNX_OPSET_MIN .. MAX; 0: MAX */
  gboolean softmax;             /* end in Softmax when the network ends in scores */
  const char *const *metadata;  /* "key", "value", ..., NULL; may be NULL */
  const char *doc;              /* the model's doc_string; may be NULL */
  const char *vocab;            /* a text run's vocabulary (nl_vocab_to_json), written as
                                   metadata "netloom.vocab"; may be NULL */
} NlOnnxExportOptions;

/* TRUE when this build reads and writes ONNX. */
gboolean nl_onnx_available (void);

/* How an op of the registry (ops/nl-op-list.h) reaches an ONNX file. The
 * op definitions know nothing of ONNX, so the export keeps this; every op
 * has an exporter or a not-exportable mark (tests/test-op-cases checks). */
typedef enum {
  NL_ONNX_OP_UNMAPPED,       /* neither (or a build without ONNX) */
  NL_ONNX_OP_EXPORTED,       /* written as ONNX ops */
  NL_ONNX_OP_NOT_EXPORTABLE, /* marked: never in an exported graph; *why says so */
} NlOnnxOpForm;

/* The form of the op named op_name ("Conv2D"); why (may be NULL) gets the
 * mark's reason for NL_ONNX_OP_NOT_EXPORTABLE, else NULL. */
NlOnnxOpForm nl_onnx_op_form (const char *op_name, const char **why);

/* The serialised ModelProto of m (its CPU tensors: sync first). Errors name
 * the node whose op or parameter has no ONNX form. */
GBytes *nl_onnx_export (const NlModel *m, const NlOnnxExportOptions *o, GError **error);
/* The same written to path atomically (temporary file, then rename). */
gboolean nl_onnx_export_file (const NlModel *m, const NlOnnxExportOptions *o, const char *path, GError **error);

G_END_DECLS
