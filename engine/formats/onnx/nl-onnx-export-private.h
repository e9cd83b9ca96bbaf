/* nl-onnx-export-private.h — the graph walk of nl-onnx-export.c, open to
 * the exports that change parts of it (private to engine/formats/onnx).
 *
 * The INT8 export (nl-onnx-export-int8.c) is the fp32 export with hooks:
 * it wraps nodes in QuantizeLinear/DequantizeLinear and gives Conv and
 * Gemm other weights, and writes every other node as the fp32 export does.
 * Without hooks the walk is exactly the fp32 export. */
#pragma once

#include "engine/formats/onnx/nl-onnx-builder.h"
#include "engine/formats/onnx/nl-onnx-export.h"

G_BEGIN_DECLS

typedef struct NlOnnxExportHooks NlOnnxExportHooks;

typedef struct {
  NlOnnxBuilder *b;
  const NlModel *m;
  const NlGraph *g;
  int opset;
  const char **vname;   /* ONNX value name of each graph value */
  const NlOnnxExportHooks *hooks; /* NULL: the fp32 export */
  gpointer hook_data;
  const char *lengths;  /* the samples' lengths, float (N), once a sequence op asked
                           (nl-onnx-export-seq.c); NULL before */
} NlOnnxCtx;

/* One node: its data inputs' names, the name its output gets. */
typedef struct {
  const NlGraphNode *gn;
  const char *in[NL_MAX_PORTS];
  const char *out;
} NlOnnxNode;

struct NlOnnxExportHooks {
  /* Once the graph input is declared (c->vname[c->g->input_value] holds its
   * name) and before any node: may replace that name. */
  gboolean (*input) (NlOnnxCtx *c, gpointer data, GError **error);
  /* Writes node n, calling nl_onnx_export_node for its fp32 form as it
   * needs; its output's value is then c->vname[n->gn->out]. */
  gboolean (*node) (NlOnnxCtx *c, NlOnnxNode *n, gpointer data, GError **error);
  /* The tensor that stands for weight slot k of n (transposed: W^T of a
   * Dense on the last axis), or NULL for the model's own. */
  const char *(*weight) (NlOnnxCtx *c, const NlOnnxNode *n, int k, gboolean transposed, gpointer data);
};

/* The fp32 form of node n (its op's exporter). */
gboolean nl_onnx_export_node (NlOnnxCtx *c, const NlOnnxNode *n, GError **error);
/* An intermediate value name after the node: "conv1/what", made unique. */
const char *nl_onnx_export_temp (NlOnnxCtx *c, const NlOnnxNode *n, const char *what);

/* "node 'id' (Op) has no ONNX form: why"; returns FALSE. */
gboolean nl_onnx_export_unsupported (GError **error, const NlOnnxNode *n, const char *why);

/* The sequence ops (nl-onnx-export-seq.c): LSTM and GRU as ONNX's own
 * nodes, MultiHeadAttention, PositionalEmbedding and SequencePool as
 * subgraphs with the masks the samples' lengths give, MatMul. */
gboolean nl_onnx_export_rnn (NlOnnxCtx *c, const NlOnnxNode *n, GError **error);
gboolean nl_onnx_export_attention (NlOnnxCtx *c, const NlOnnxNode *n, GError **error);
gboolean nl_onnx_export_positional (NlOnnxCtx *c, const NlOnnxNode *n, GError **error);
gboolean nl_onnx_export_sequence_pool (NlOnnxCtx *c, const NlOnnxNode *n, GError **error);
gboolean nl_onnx_export_matmul (NlOnnxCtx *c, const NlOnnxNode *n, GError **error);
/* The embedding table with the padding row zeroed (Embedding's padding_index). */
const char *nl_onnx_export_embedding_table (NlOnnxCtx *c, const NlOnnxNode *n);

/* nl_onnx_export with hooks (NULL: none) and data handed to them. */
GBytes *nl_onnx_export_hooked (const NlModel *m, const NlOnnxExportOptions *o, const NlOnnxExportHooks *hooks,
                               gpointer data, GError **error);

/* Activation's act_types after softrelu (nl-onnx-export-acts.c): t is one. */
gboolean nl_onnx_export_activation_more (NlOnnxCtx *c, const NlOnnxNode *n, int t, GError **error);
/* Clip as ONNX's Clip, its bounds as inputs */
gboolean nl_onnx_export_clip (NlOnnxCtx *c, const NlOnnxNode *n, GError **error);
/* PReLU as PRelu, the slopes shaped to broadcast over axis 1 */
gboolean nl_onnx_export_prelu (NlOnnxCtx *c, const NlOnnxNode *n, GError **error);
/* Shrink as ONNX's Shrink */
gboolean nl_onnx_export_shrink (NlOnnxCtx *c, const NlOnnxNode *n, GError **error);

G_END_DECLS
