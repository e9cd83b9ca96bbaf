/* nl-analysis.h — live analysis of a network being edited: every node's
 * output shape, learnable parameters and multiply-adds, the errors of each
 * node (it goes on past a bad node: nodes downstream of an error have an
 * unknown shape but no error of their own), totals, and the memory a
 * training step needs at a batch size (planned activations + weights,
 * gradients and optimizer state). Pure computation: safe to run in a
 * worker thread on a copy of the network. */
#pragma once

#include "engine/graph/nl-network.h"

G_BEGIN_DECLS

typedef struct {
  NlShape out;        /* with the batch dimension; ndim < 0 when unknown */
  int64_t params;     /* learnable scalars */
  int64_t macs;       /* forward multiply-adds for one batch */
  int64_t saved_bytes; /* what its forward keeps for the backward (attention's probabilities ...) */
  gboolean time_bound; /* out's axis 1 is time and only an upper bound: it descends from an
                          Input with lengths "nonzero", so a sample may use fewer steps */
  char *error;        /* NULL when the node is fine */
} NlNodeAnalysis;

typedef struct {
  int n_nodes;
  NlNodeAnalysis *nodes;  /* by network node index */
  int batch;
  NlShape sample;         /* the data's sample shape it was given (ndim < 0: none) */
  int64_t total_params, total_macs;
  int64_t train_bytes;    /* -1 when the network does not compile */
  int64_t activation_bytes; /* the planned arena for one training step; -1 likewise */
  int64_t saved_bytes;    /* the nodes' saved tensors at this batch (part of the arena) */
  int64_t attention_bytes; /* of those, MultiHeadAttention's: O(T²) per head */
  int n_errors;           /* node errors plus the network error */
  char *network_error;    /* a problem of the whole network (no Input, several
                             outputs, a cycle ...), NULL when none */
  double seconds;         /* how long the analysis took */
} NlAnalysis;

/* optimizer_slots: state tensors per weight (SGD with momentum 1, Adam 2). */
NlAnalysis *nl_analysis_new (const NlNetwork *net, int batch, int optimizer_slots);
/* The same for data of sample shape SAMPLE (without the batch; NULL: none),
 * as Gluon's deferred shapes: an Input with no fixed shape takes it, an
 * Input whose shape the user fixed keeps that, and with neither an Input
 * reads 1x28x28, or 128 token ids when its lengths are "nonzero" (the text
 * datasets' default max_length). */
NlAnalysis *nl_analysis_new_for_sample (const NlNetwork *net, const NlShape *sample, int batch,
                                        int optimizer_slots);
void nl_analysis_free (NlAnalysis *a);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (NlAnalysis, nl_analysis_free)

/* "(128, 20, 24, 24)" style without the batch: "20×24×24"; "?" when unknown. */
char *nl_analysis_format_shape (const NlShape *s);
/* The same for a node's output, the time axis marked "≤" when it is an
 * upper bound (time_bound): "≤128×256". */
char *nl_analysis_format_node_shape (const NlNodeAnalysis *na);
/* "431k", "1.2M", "6.4G" */
char *nl_format_count (int64_t n);
/* "12.4 MB" */
char *nl_format_bytes (int64_t bytes);

G_END_DECLS
