/* nl-network-doc.h — the network being edited: an NlNetwork with undo and
 * redo of every edit, the selection, clipboard JSON and auto-layout.
 * GObject only (no GTK), so it is tested without a display.
 *
 * Node indices are those of the NlNetwork (nl_network_node); removing nodes
 * renumbers the ones after them, so callers keep ids (or re-read the
 * selection) across edits. Every successful edit emits ::changed once; a
 * group (begin_group .. end_group) emits once at its end and undoes as one
 * step. Refused edits change nothing and say why in the GError
 * (NL_NETWORK_ERROR). */
#pragma once

#include <glib-object.h>

#include "engine/session/nl-catalog.h"

G_BEGIN_DECLS

#define NL_TYPE_NETWORK_DOC (nl_network_doc_get_type ())
G_DECLARE_FINAL_TYPE (NlNetworkDoc, nl_network_doc, NL, NETWORK_DOC, GObject)

/* Takes ownership of net (NULL: an empty network named "untitled"). */
NlNetworkDoc *nl_network_doc_new (NlNetwork *net);
const NlNetwork *nl_network_doc_get_network (NlNetworkDoc *doc);
/* Replaces the whole document (loading another network): clears undo,
 * redo and the selection, marks it unmodified. Takes ownership. */
void nl_network_doc_set_network (NlNetworkDoc *doc, NlNetwork *net);
const char *nl_network_doc_get_name (NlNetworkDoc *doc);
void nl_network_doc_set_name (NlNetworkDoc *doc, const char *name);  /* undoable */

/* ---- edits (each undoable) ---- */
/* A node of OP with default parameters and a fresh id at (x, y). Returns its index or -1. */
int nl_network_doc_add_node (NlNetworkDoc *doc, const char *op, double x, double y, GError **error);
/* Removes the nodes and every edge touching them. */
void nl_network_doc_remove_nodes (NlNetworkDoc *doc, const int *nodes, int n);
/* Moves the nodes by (dx, dy). Consecutive moves of the same set of nodes
 * between begin_group/end_group (a drag) merge into one undo step. */
void nl_network_doc_move_nodes (NlNetworkDoc *doc, const int *nodes, int n, double dx, double dy);
/* Sets absolute positions (auto-layout results); xy has 2n entries. */
void nl_network_doc_set_positions (NlNetworkDoc *doc, const int *nodes, int n, const double *xy);
/* Refused with the reason: same node, a port that does not exist, an input
 * port already connected, an edge into Input, a cycle it would create. */
gboolean nl_network_doc_connect (NlNetworkDoc *doc, int from, int from_port, int to, int to_port,
                                 GError **error);
/* TRUE when connect would succeed (no change); the reason otherwise. For
 * feedback while dragging. */
gboolean nl_network_doc_can_connect (NlNetworkDoc *doc, int from, int from_port, int to, int to_port,
                                     GError **error);
/* The lowest input port of node that nothing is connected to (for a
 * variadic op: the next one, so its inputs stay contiguous), or -1 when
 * all are taken or node is an Input. For dropping a wire on a card. */
int nl_network_doc_free_input_port (NlNetworkDoc *doc, int node);
/* Removes edge i (index into net->edges). */
void nl_network_doc_disconnect (NlNetworkDoc *doc, int edge);
/* VALUE as nl_params_set_from_string takes it ("5", "5x5", "relu", "true", "[1,28,28]"). */
gboolean nl_network_doc_set_param (NlNetworkDoc *doc, int node, const char *name, const char *value,
                                   GError **error);
gboolean nl_network_doc_rename_node (NlNetworkDoc *doc, int node, const char *id, GError **error);

void nl_network_doc_begin_group (NlNetworkDoc *doc, const char *label);
void nl_network_doc_end_group (NlNetworkDoc *doc);

gboolean nl_network_doc_can_undo (NlNetworkDoc *doc);
gboolean nl_network_doc_can_redo (NlNetworkDoc *doc);
/* "Add Conv2D", "Move 3 layers", "Change kernel of conv1" ... or NULL */
const char *nl_network_doc_get_undo_label (NlNetworkDoc *doc);
const char *nl_network_doc_get_redo_label (NlNetworkDoc *doc);
void nl_network_doc_undo (NlNetworkDoc *doc);
void nl_network_doc_redo (NlNetworkDoc *doc);

/* Modified since the last set_network or mark_saved (undoing back to that
 * point makes it unmodified again). */
gboolean nl_network_doc_is_modified (NlNetworkDoc *doc);
void nl_network_doc_mark_saved (NlNetworkDoc *doc);

/* ---- selection (not undoable; ::selection-changed) ---- */
void nl_network_doc_select (NlNetworkDoc *doc, const int *nodes, int n);
void nl_network_doc_select_all (NlNetworkDoc *doc);
/* Sorted node indices; *n receives the count. Owned by the doc. */
const int *nl_network_doc_get_selection (NlNetworkDoc *doc, int *n);
gboolean nl_network_doc_is_selected (NlNetworkDoc *doc, int node);

/* ---- clipboard ---- */
/* The nodes and the edges among them as a netloom.network JSON document. */
char *nl_network_doc_copy_json (NlNetworkDoc *doc, const int *nodes, int n);
/* Adds the nodes of JSON (ids renamed where they collide, edges kept,
 * positions offset by dx, dy) as one undo step and selects them. */
gboolean nl_network_doc_paste_json (NlNetworkDoc *doc, const char *json, double dx, double dy, GError **error);
/* copy + paste of the selection, offset a little. */
gboolean nl_network_doc_duplicate_selection (NlNetworkDoc *doc, GError **error);

/* ---- layout ---- */
/* Layered top-to-bottom layout (longest-path layers, barycentric ordering
 * to reduce crossings) of the nodes (n 0: all), as one undo step. Card
 * size and spacing in canvas units. */
#define NL_CARD_WIDTH 200.0
#define NL_CARD_HEIGHT 72.0
void nl_network_doc_auto_layout (NlNetworkDoc *doc, const int *nodes, int n);
/* The positions auto_layout gives, without changing anything: xy receives
 * x, y (a card's top-left) for each of the n distinct nodes (n 0: all, in
 * index order, xy then has 2 * n_nodes entries). Edges from or to nodes
 * outside the set are ignored; the result's top-left is that of the nodes'
 * current bounding box (0, 0 when none has a position). */
void nl_network_layout_compute (const NlNetwork *net, const int *nodes, int n, double *xy);

/* Signals:
 *   ::changed ()            after every edit, undo, redo and set_network
 *   ::selection-changed () */

G_END_DECLS
