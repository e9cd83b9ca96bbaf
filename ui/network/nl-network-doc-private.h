/* nl-network-doc-private.h — what the files of NlNetworkDoc share: the
 * instance struct, the undo step and its primitive operations
 * (nl-network-doc.c: object, history, primitives, selection;
 * nl-network-doc-edit.c: the edits; nl-network-doc-clipboard.c: copy and
 * paste; nl-network-layout.c: auto-layout). Not for other callers. */
#pragma once

#include "ui/network/nl-network-doc.h"

G_BEGIN_DECLS

#define NL_DOC_MAX_UNDO 200

typedef enum {
  OP_NODES,     /* insert (add) or remove nodes at ascending indices */
  OP_EDGES,     /* insert (add) or remove edges at ascending indices */
  OP_POSITIONS, /* old and new position of some nodes */
  OP_PARAM,     /* one parameter's old and new value */
  OP_RENAME,    /* a node's id */
  OP_NAME,      /* the network's name */
} OpKind;

typedef struct {
  OpKind kind;
  gboolean add;     /* OP_NODES / OP_EDGES: forward inserts */
  gboolean is_move; /* OP_POSITIONS made by move_nodes (may merge) */
  int n;
  int *idx;         /* ascending for nodes/edges */
  NlNode **nodes;   /* the nodes while they are out of the network, else NULL */
  NlEdge *edges;
  double *xy;       /* POSITIONS: per node old x, old y, new x, new y */
  guint8 *had;      /* POSITIONS: old has_position */
  int node, param;
  NlParamValue old_v, new_v;
  char *old_s, *new_s;
} Op;

typedef struct {
  char *label;
  GPtrArray *ops; /* Op*, in the order they were applied */
  int *sel_before, n_before;
  int *sel_after, n_after;
  guint64 serial;
} Step;

struct _NlNetworkDoc {
  GObject parent_instance;
  NlNetwork *net;
  GPtrArray *undo, *redo; /* Step*, oldest first */
  Step *pending;          /* the open group */
  int depth;
  GArray *sel;            /* int, sorted unique */
  guint64 next_serial, base_serial, saved_serial;
};

/* NlNode allocated as engine/graph/nl-network.c allocates them */
void _nl_doc_node_free (NlNode *n);
NlNode *_nl_doc_node_copy (const NlNode *n);

Op *_nl_doc_op_new (OpKind kind, int n);
void _nl_doc_op_free (gpointer op);
/* Applies op forward (redo) or backward (undo) to doc's network. */
void _nl_doc_op_apply (NlNetworkDoc *doc, Op *op, gboolean forward);
/* Appends an operation already applied to the open group (begin_group first). */
void _nl_doc_record (NlNetworkDoc *doc, Op *op);

/* Primitives: idx[] ascending final indices. Node insertion/removal
 * renumbers the edges and the selection; nodes[] receives or gives up the
 * nodes. Removed nodes must have no edges left. */
void _nl_doc_nodes_insert (NlNetworkDoc *doc, const int *idx, NlNode **nodes, int n);
void _nl_doc_nodes_remove (NlNetworkDoc *doc, const int *idx, NlNode **nodes, int n);
void _nl_doc_edges_insert (NlNetworkDoc *doc, const int *idx, const NlEdge *edges, int n);
void _nl_doc_edges_remove (NlNetworkDoc *doc, const int *idx, NlEdge *edges, int n);
/* Records and applies new positions (xy: 2 per node) of the nodes that
 * move; is_move lets consecutive moves of the same nodes in a group merge. */
void _nl_doc_set_positions (NlNetworkDoc *doc, const int *idx, int n, const double *xy, gboolean is_move);

/* Sorted unique copy of the valid indices among nodes[]; *m receives the count. */
int *_nl_doc_sort_unique (const NlNetworkDoc *doc, const int *nodes, int n, int *m);
gboolean _nl_doc_all_valid (const NlNetworkDoc *doc, const int *nodes, int n);
/* "conv1" for one node, "3 layers" for several */
char *_nl_doc_describe (const NlNetworkDoc *doc, const int *sorted, int n);
int *_nl_doc_sel_dup (const NlNetworkDoc *doc, int *n);
/* Emits ::selection-changed when the selection differs from old[]. */
void _nl_doc_sel_notify (NlNetworkDoc *doc, const int *old, int n_old);
/* Successors in CSR form: those of v are succ[first[v] .. first[v + 1] - 1]. */
void _nl_doc_build_succ (const NlNetwork *net, int **first, int **succ);

G_END_DECLS
