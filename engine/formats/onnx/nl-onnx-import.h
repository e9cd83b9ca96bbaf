/* nl-onnx-import.h — an ONNX model as a netloom network with its weights.
 *
 * Opsets 9 to 17 of the default domain (older models import where their
 * nodes read the same). Conv (2-D: groups, dilations,
 * symmetric pads, auto_pad VALID or SAME with stride 1), Gemm and
 * MatMul (+ Add of a constant bias) as Dense, Relu, Sigmoid, Tanh,
 * Softplus, LeakyRelu, Gelu (also from its erf or tanh formula, as PyTorch
 * and netloom export it), the activations of nl-onnx-import-acts.c (Elu,
 * Celu, Selu, Softsign, HardSigmoid, HardSwish, Clip, PRelu, Shrink, and
 * the chains PyTorch writes for SiLU, Mish, Softsign, Hardswish,
 * LogSigmoid, Tanhshrink, Softshrink, Hardshrink), MaxPool, AveragePool
 * (also after a zero Pad: count_include_pad), GlobalAveragePool,
 * BatchNormalization, LayerNormalization (last axis; also decomposed, as
 * exported before opset 17), Dropout, Flatten (axis 1), Reshape to a
 * constant shape, Concat, Add and Sum, Mul and Sub (of two values of one
 * shape, or of a value and a constant that broadcasts over it without
 * spanning the batch; Div and Add by such a constant too), Transpose
 * keeping the batch first, Softmax and LogSoftmax, Gather of a constant
 * table as Embedding (its indices may be Cast), Identity; nodes
 * whose inputs are all constants (Constant, Transpose, Reshape, Cast,
 * Squeeze, Unsqueeze, element-wise arithmetic ...) are folded. LSTM and
 * GRU (forward or bidirectional, default activations, zero or no initial
 * state, no peepholes, clip or sequence_lens input; a node reading only
 * the previous one's Y joins it as its next layer, so PyTorch's 2-layer
 * nn.LSTM is one LSTM of 2 layers) with the layout ops PyTorch writes
 * around them: time-major
 * values are followed as views of netloom's batch-first ones (a model
 * whose time-major graph input feeds an LSTM directly is read batch-first,
 * metadata "netloom.input_layout" says so), and a graph whose first output
 * is Y takes Y (its other outputs, Y_h, are left); h_n[-1] of a
 * one-direction node is its final state (output last), y[:, -1] of a
 * batch-first sequence (Gather, axis 1) a SequencePool of the last step;
 * PyTorch's nn.MultiheadAttention subgraph inside
 * nn.TransformerEncoderLayer is one MultiHeadAttention. Anything
 * else is reported, every such node in one message, and nothing is made.
 *
 * Importing reads data only: no code runs, external-data files must lie in
 * the model's folder, and a malformed or truncated file is one error. */
#pragma once

#include "engine/graph/nl-model.h"

G_BEGIN_DECLS

typedef struct NlOnnxImport NlOnnxImport;

/* base_dir: where external data may be read from (the model's folder;
 * NULL: none may be). bound (may be NULL): graph inputs given as constants,
 * name -> GBytes of a serialised TensorProto (the node tests give weights
 * as inputs). */
NlOnnxImport *nl_onnx_import_data (const void *data, gsize size, const char *base_dir, GHashTable *bound,
                                   GError **error);
NlOnnxImport *nl_onnx_import_file (const char *path, GError **error);
void nl_onnx_import_free (NlOnnxImport *imp);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (NlOnnxImport, nl_onnx_import_free)

/* The network (borrowed; named after the graph) and its sample shape (the
 * graph input's shape without the batch dimension). */
NlNetwork *nl_onnx_import_get_network (NlOnnxImport *imp);
NlShape nl_onnx_import_get_sample_shape (NlOnnxImport *imp);
/* A model of the network holding the imported weights and running
 * statistics, and zeros of optim's state (NULL: none). */
NlModel *nl_onnx_import_new_model (NlOnnxImport *imp, const NlOptimConfig *optim, GError **error);
/* The value of metadata key (NULL when absent): a netloom export's
 * input_mean, input_std, class_names ... */
const char *nl_onnx_import_get_metadata (NlOnnxImport *imp, const char *key);

G_END_DECLS
