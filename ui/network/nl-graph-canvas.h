/* nl-graph-canvas.h — the network editor's canvas: draws an NlNetworkDoc as
 * cards joined by wires, shows an NlAnalysis on the cards, and edits the
 * document (move, connect, select, delete, drop operators from the palette).
 *
 * Coordinates: "canvas units" are those of NlNode.x/.y (a card's top-left
 * corner; a card is NL_CARD_WIDTH x NL_CARD_HEIGHT). The view is a zoom
 * factor (widget pixels per canvas unit) and the canvas point shown at the
 * widget's centre.
 *
 * Pointer: click selects a card (Shift or Ctrl toggles it); dragging a card
 * moves the selection (one undo step per drag); dragging on empty space
 * pans, and with Shift or Ctrl held draws a rubber band that adds the cards
 * it touches to the selection; dragging from a card's output port (bottom)
 * to an input port (top) connects them; clicking a wire selects it;
 * double-click on a card emits ::node-activated. Scroll pans (Shift:
 * sideways), Ctrl+scroll and pinch zoom around the pointer.
 * Keys (when focused): + and - zoom, Ctrl+0 fits, arrows pan, Delete removes
 * the selected wire or else the selected cards, Escape clears the selection.
 * A GtkDropTarget takes strings "netloom-op:OPNAME" and adds that operator
 * centred on the drop point, selected.
 *
 * Signals:
 *   ::node-activated (int node)          double-click on a card
 *   ::problem (const char *message)      an edit was refused (show a toast) */
#pragma once

#include <gtk/gtk.h>

#include "engine/session/nl-analysis.h"
#include "ui/network/nl-network-doc.h"

G_BEGIN_DECLS

#define NL_TYPE_GRAPH_CANVAS (nl_graph_canvas_get_type ())
G_DECLARE_FINAL_TYPE (NlGraphCanvas, nl_graph_canvas, NL, GRAPH_CANVAS, GtkWidget)

#define NL_GRAPH_CANVAS_MIN_ZOOM 0.01
#define NL_GRAPH_CANVAS_MAX_ZOOM 4.0

GtkWidget *nl_graph_canvas_new (void);

/* Refs doc (NULL: none); redraws on its ::changed and ::selection-changed. */
void nl_graph_canvas_set_document (NlGraphCanvas *c, NlNetworkDoc *doc);
NlNetworkDoc *nl_graph_canvas_get_document (NlGraphCanvas *c);

/* Copies what the cards show (shape, parameter count, error message per
 * node), so a may be freed right after the call. NULL clears it. Indices are
 * the network's node indices at the time of the analysis. */
void nl_graph_canvas_set_analysis (NlGraphCanvas *c, const NlAnalysis *a);
/* The line under node's name on its card ("≤128×64 · 64k params"), or its
 * error; NULL before an analysis. */
const char *nl_graph_canvas_get_card_text (NlGraphCanvas *c, int node);

/* Whole graph in view (before the first allocation: done once allocated). */
void nl_graph_canvas_fit (NlGraphCanvas *c);
void nl_graph_canvas_zoom_in (NlGraphCanvas *c);   /* around the view's centre */
void nl_graph_canvas_zoom_out (NlGraphCanvas *c);
double nl_graph_canvas_get_zoom (NlGraphCanvas *c);
/* zoom is clamped to [MIN_ZOOM, MAX_ZOOM]; (cx, cy) in canvas units is put
 * at the widget's centre. */
void nl_graph_canvas_set_view (NlGraphCanvas *c, double zoom, double cx, double cy);
void nl_graph_canvas_get_view (NlGraphCanvas *c, double *zoom, double *cx, double *cy);
/* Selects node and centres the view on it (at zoom 1 when zoomed out
 * below 0.5, where cards carry no text). */
void nl_graph_canvas_focus_node (NlGraphCanvas *c, int node);

void nl_graph_canvas_widget_to_canvas (NlGraphCanvas *c, double wx, double wy, double *x, double *y);
void nl_graph_canvas_canvas_to_widget (NlGraphCanvas *c, double x, double y, double *wx, double *wy);

/* The selected wire (index into the network's edges) or -1. */
int nl_graph_canvas_get_selected_edge (NlGraphCanvas *c);
void nl_graph_canvas_select_edge (NlGraphCanvas *c, int edge);
/* Removes the selected wire if there is one, else the selected cards. */
void nl_graph_canvas_delete_selection (NlGraphCanvas *c);

/* The whole diagram (not the view), without selection or grid, on the view
 * background. PNG at scale 1, or 2 when the diagram is small (both sides
 * under 1500 units); scaled down to fit 16384 pixels a side when huge. */
gboolean nl_graph_canvas_export_png (NlGraphCanvas *c, const char *path, GError **error);
gboolean nl_graph_canvas_export_svg (NlGraphCanvas *c, const char *path, GError **error);
/* The diagram's bounding box in canvas units (cards only); FALSE when empty. */
gboolean nl_graph_canvas_get_bounds (NlGraphCanvas *c, graphene_rect_t *bounds);

/* The card under the widget point, topmost first; -1 when none. */
int nl_graph_canvas_node_at (NlGraphCanvas *c, double wx, double wy);
/* The wire under the widget point, or -1. */
int nl_graph_canvas_edge_at (NlGraphCanvas *c, double wx, double wy);

G_END_DECLS
