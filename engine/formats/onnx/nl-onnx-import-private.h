/* nl-onnx-import-private.h — the importer's state, shared by the graph walk
 * (nl-onnx-import.c) and the per-op mappers (nl-onnx-map.c). Private to
 * engine/formats/onnx. */
#pragma once

#include "engine/formats/onnx/nl-onnx-const.h"
#include "engine/formats/onnx/nl-onnx-import.h"

G_BEGIN_DECLS

typedef struct {
  int node;
  gboolean aux;
  int slot;
  NlTensor *t;
} NlOnnxWeight;

struct NlOnnxImport {
  NlNetwork *net;
  NlShape sample;
  GArray *weights;     /* NlOnnxWeight */
  GHashTable *meta;    /* key -> value */
};

typedef struct {
  NlOnnxImport *imp;
  const Onnx__GraphProto *g;
  int opset;
  GHashTable *consts;  /* name -> NlOnnxConst (owned) */
  GHashTable *values;  /* name -> node index + 1 */
  GHashTable *uses;    /* name -> how many node inputs read it */
  GHashTable *poisoned; /* outputs of unsupported nodes and of what reads them */
  GHashTable *consumer; /* value name -> index + 1 of the last node reading it */
  GHashTable *absorbed; /* nodes folded into a pattern already mapped */
  GHashTable *views;   /* name -> a layout view of a netloom node's output (nl-onnx-map-seq.c) */
  GHashTable *shapes;  /* values computed from the input's shape at run time */
  GHashTable *zeros;   /* zero tensors shaped at run time (initial states) */
  int64_t batch;       /* the graph input's first dimension, -1 when symbolic */
  char *why;           /* why the current node is unsupported */
} NlOnnxImp;

/* How one node went: mapped (or folded, or aliased), unsupported (why in
 * im->why), a malformed model (error set), or skipped because an input
 * comes from an unsupported node. */
typedef enum { NL_ONNX_MAPPED, NL_ONNX_UNSUPPORTED, NL_ONNX_FAILED, NL_ONNX_SKIPPED } NlOnnxResult;

/* im->why = the formatted reason; returns NL_ONNX_UNSUPPORTED. */
NlOnnxResult nl_onnx_imp_unsupported (NlOnnxImp *im, const char *fmt, ...) G_GNUC_PRINTF (2, 3);
/* Input k of the node ("" when absent). */
const char *nl_onnx_in_name (const Onnx__NodeProto *n, size_t k);
/* The constant named name, NULL when it is none. */
NlOnnxConst *nl_onnx_imp_const (NlOnnxImp *im, const char *name);
/* The netloom node computing value name, -1 when it is no data value. */
int nl_onnx_imp_data (NlOnnxImp *im, const char *name);
/* The node's first output is computed by netloom node `node`. */
void nl_onnx_imp_produce (NlOnnxImp *im, const Onnx__NodeProto *n, int node);

/* Building the network (nl-onnx-map.c): a node of op named after n; a
 * parameter from text (out of range: unsupported, why in im->why); an
 * edge; constant c (reshaped to shape when given) as weight or aux slot. */
int nl_onnx_imp_add (NlOnnxImp *im, const Onnx__NodeProto *n, const char *op);
gboolean nl_onnx_imp_set (NlOnnxImp *im, int node, const char *name, const char *fmt, ...) G_GNUC_PRINTF (4, 5);
void nl_onnx_imp_connect (NlOnnxImp *im, int from, int to, int port);
void nl_onnx_imp_store (NlOnnxImp *im, int node, gboolean aux, int slot, const NlOnnxConst *c, const NlShape *shape);
/* The one node reading value, if it is of type op (any type: op NULL), or NULL. */
const Onnx__NodeProto *nl_onnx_imp_sole_reader (NlOnnxImp *im, const char *value, const char *op);

/* Whether an op type has a mapper (nl-onnx-map.c). */
gboolean nl_onnx_map_has_op (const char *op_type);
/* Maps one node whose inputs are not all constants: its op's mapper, or a
 * pattern starting at it (GELU from its formula). */
NlOnnxResult nl_onnx_map_op (NlOnnxImp *im, const Onnx__NodeProto *n);
/* The patterns exporters write for ops ONNX lacks (nl-onnx-pattern.c):
 * GELU from its erf or tanh formula, LayerNormalization decomposed (before
 * opset 17). TRUE when one starts at n and was mapped (its other nodes
 * absorbed); FALSE leaves n to its mapper. */
gboolean nl_onnx_map_pattern (NlOnnxImp *im, const Onnx__NodeProto *n);

/* The sequence side (nl-onnx-map-seq.c): LSTM and GRU nodes; the layout
 * ops around them and the zero initial states made from the input's shape
 * (TRUE with *r when n is one of those); the netloom node a graph output
 * that is a view stands for (-1: none); whether the graph input feeds a
 * time-major LSTM/GRU directly, and then that it is read batch-first. */
NlOnnxResult nl_onnx_map_rnn (NlOnnxImp *im, const Onnx__NodeProto *n);
gboolean nl_onnx_map_seq_layout (NlOnnxImp *im, const Onnx__NodeProto *n, NlOnnxResult *r);
int nl_onnx_map_seq_output (NlOnnxImp *im, const char *name);
gboolean nl_onnx_map_seq_time_major_input (NlOnnxImp *im, const char *input);
void nl_onnx_map_seq_input_view (NlOnnxImp *im, const char *input, int node);
/* PyTorch's nn.MultiheadAttention from its input projection mm (reading
 * the time-major view of netloom node `from`) as one MultiHeadAttention
 * (nl-onnx-pattern-attn.c); FALSE leaves mm unmatched. */
gboolean nl_onnx_map_attention_pattern (NlOnnxImp *im, const Onnx__NodeProto *mm, int from);

/* For the mappers outside nl-onnx-map.c: one data input connected to a new
 * node of op (nl-onnx-map.c); the other input of a two-input node than
 * `one`, NULL unless it has two; one netloom node of op reading x for the
 * chain of nodes, the other nodes absorbed (nl-onnx-pattern.c). */
NlOnnxResult nl_onnx_imp_unary (NlOnnxImp *im, const Onnx__NodeProto *n, const char *op, int *node);
const char *nl_onnx_imp_other_input (const Onnx__NodeProto *n, const char *one);
int nl_onnx_imp_fuse (NlOnnxImp *im, const Onnx__NodeProto *const *chain, int len, const char *x, const char *op);

/* The activations and Pad-before-pool (nl-onnx-import-acts.c): whether it
 * maps op_type; the mapper; a chain (SiLU, Mish ...) starting at n fused
 * into one Activation, FALSE leaving n to its mapper. */
gboolean nl_onnx_acts_has_op (const char *op_type);
NlOnnxResult nl_onnx_acts_map_op (NlOnnxImp *im, const Onnx__NodeProto *n);
gboolean nl_onnx_acts_map_pattern (NlOnnxImp *im, const Onnx__NodeProto *n);

G_END_DECLS
