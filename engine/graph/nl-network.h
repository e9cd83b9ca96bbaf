/* nl-network.h — the network as a document: nodes (id, op, params, canvas
 * position) and edges "node:port -> node:port". Serialised as JSON
 * {"format": "netloom.network", "version": 1, ...}; the GUI edits it, the
 * CLI reads it from a file or a project. Nothing here allocates tensors. */
#pragma once

#include <glib.h>

#include "ops/nl-op.h"

G_BEGIN_DECLS

#define NL_NETWORK_ERROR (nl_network_error_quark ())
GQuark nl_network_error_quark (void);

typedef enum {
  NL_NETWORK_ERROR_PARSE,     /* not JSON, not a netloom network, newer version */
  NL_NETWORK_ERROR_UNKNOWN_OP,
  NL_NETWORK_ERROR_PARAM,
  NL_NETWORK_ERROR_EDGE,      /* dangling edge, bad port, port connected twice */
  NL_NETWORK_ERROR_CYCLE,
  NL_NETWORK_ERROR_STRUCTURE, /* no input, several outputs, unconnected port */
  NL_NETWORK_ERROR_SHAPE,
} NlNetworkErrorCode;

#define NL_NETWORK_FORMAT "netloom.network"
#define NL_NETWORK_VERSION 1

typedef struct {
  char *id;
  const NlOpDef *def;
  NlParamValue *params;   /* def->n_params */
  double x, y;            /* canvas position */
  gboolean has_position;
} NlNode;

typedef struct {
  int from, from_port;    /* node indices */
  int to, to_port;
} NlEdge;

typedef struct {
  char *name;
  GPtrArray *nodes;       /* NlNode* */
  GArray *edges;          /* NlEdge */
} NlNetwork;

NlNetwork *nl_network_new (const char *name);
void nl_network_free (NlNetwork *net);
NlNetwork *nl_network_copy (const NlNetwork *net);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (NlNetwork, nl_network_free)

NlNetwork *nl_network_load_file (const char *path, GError **error);
NlNetwork *nl_network_load_data (const char *json, gssize length, GError **error);
char *nl_network_to_json (const NlNetwork *net);
gboolean nl_network_save_file (const NlNetwork *net, const char *path, GError **error);

static inline NlNode *
nl_network_node (const NlNetwork *net, int i)
{
  return g_ptr_array_index (net->nodes, i);
}

static inline int
nl_network_n_nodes (const NlNetwork *net)
{
  return (int) net->nodes->len;
}

int nl_network_find (const NlNetwork *net, const char *id); /* -1 if none */
/* Adds a node with default parameters; returns its index or -1 (duplicate id, unknown op). */
int nl_network_add_node (NlNetwork *net, const char *id, const char *op, GError **error);
gboolean nl_network_set_param (NlNetwork *net, int node, const char *name, const char *value, GError **error);
gboolean nl_network_connect (NlNetwork *net, int from, int from_port, int to, int to_port, GError **error);

/* Structural checks: parameters valid, every data port connected once (a
 * loss's label port may stay open: the trainer binds the labels there),
 * edges in range, no cycles. On success fills order[] (node indices in a
 * topological order, n_nodes entries) when order != NULL. Messages name the
 * node. */
gboolean nl_network_validate (const NlNetwork *net, int *order, GError **error);
/* Number of data inputs connected to node i (its variadic width). */
int nl_network_n_connected (const NlNetwork *net, int node);
/* Each node's incoming (by_to) or outgoing edges, as indices into
 * net->edges in their order: those of node i are edge[first[i]] up to
 * edge[first[i + 1]] (exclusive); edges whose node at that end is out of
 * range are left out. One pass over the edges instead of one per node. The
 * caller g_free()s both arrays. */
void nl_network_edges_by_node (const NlNetwork *net, gboolean by_to, int **first, int **edge);

G_END_DECLS
