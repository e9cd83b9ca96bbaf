/* nl-graph-canvas-private.h — the canvas's state shared by its three files
 * (nl-graph-canvas.c: document, view, geometry, hit testing; -draw.c:
 * snapshot and export; -input.c: gestures, keys, drop) and the entry points
 * the tests drive directly (a pointer drag cannot be synthesised portably). */
#pragma once

#include "ui/network/nl-graph-canvas.h"

G_BEGIN_DECLS

#define NL_PORT_RADIUS 5.0        /* canvas units */
#define NL_CARD_RADIUS 8.0
#define NL_DRAG_THRESHOLD 3.0     /* widget pixels before a press becomes a drag */
#define NL_TEXT_MIN_ZOOM 0.45     /* below this, cards carry no text */
#define NL_SHAPE_MIN_ZOOM 0.18    /* below this, cards are plain rectangles */

typedef enum {
  NL_DRAG_NONE,
  NL_DRAG_PAN,
  NL_DRAG_MOVE,
  NL_DRAG_RUBBER,
  NL_DRAG_WIRE,
} NlDragMode;

typedef struct {
  GdkRGBA bg, fg, dim, card, border, accent, error, grid;
} NlCanvasColors;

/* A card's laid-out text, kept across frames; texts are compared on use
 * so that a ::changed (every drag step emits one) rebuilds only what differs. */
typedef struct {
  guint stamp;
  char *title_text, *summary_text, *info_text;
  PangoLayout *title, *summary, *info;
  gboolean info_is_error;
} NlCardText;

typedef struct {
  char *info;   /* "20×24×24 · 10.0k params" */
  char *error;  /* NULL when fine */
} NlCardAnalysis;

/* What is drawn: widget pixel = (canvas - origin) * zoom. */
typedef struct {
  double zoom, ox, oy;
  double w, h;        /* pixels */
  gboolean export;    /* full detail, no grid, no selection or drag feedback */
} NlCanvasView;

struct _NlGraphCanvas {
  GtkWidget parent_instance;

  NlNetworkDoc *doc;
  gulong changed_id, selection_id;

  double zoom, cx, cy;
  gboolean fit_pending;

  guint stamp;              /* bumped on ::changed and on analysis / style changes */
  GPtrArray *texts;         /* NlCardText* by node index, lazily filled */
  int *ports;               /* input ports shown per node; NULL when stale */
  guint32 *port_used;       /* bit p: input port p is connected */
  int n_ports;
  NlCardAnalysis *an;
  int n_an;

  int sel_edge;             /* -1 */
  NlEdge sel_edge_ends;     /* to find it again after edits renumber edges */

  NlCanvasColors colors;

  /* the primary-button drag in progress */
  NlDragMode mode;
  double press_x, press_y, last_x, last_y;
  double pan_cx, pan_cy;
  GdkModifierType press_mods;
  int press_node;
  gboolean moved, toggled, group_open;
  gboolean pan_only;        /* middle-button drag */
  int cursor;               /* which pointer cursor is set (0 default, 1 crosshair) */
  int *band_base;           /* the selection when a rubber band started */
  int n_band_base;
  int wire_from;
  int wire_to, wire_port;   /* target or -1 */
  gboolean wire_ok;
  char *wire_msg;

  double pointer_x, pointer_y;
  double pinch_zoom;
};

/* ---- nl-graph-canvas.c ---- */
void _nl_graph_canvas_get_render_view (NlGraphCanvas *c, NlCanvasView *v);
int _nl_graph_canvas_n_input_ports (NlGraphCanvas *c, int node);
void _nl_graph_canvas_input_port_pos (NlGraphCanvas *c, int node, int port, double *x, double *y);
void _nl_graph_canvas_output_port_pos (NlGraphCanvas *c, int node, double *x, double *y);
/* The port under a widget point: returns the node (or -1), *port and
 * whether it is the output port. */
int _nl_graph_canvas_port_at (NlGraphCanvas *c, double wx, double wy, int *port, gboolean *is_output);
/* Bézier control points of edge e in canvas units (p[0..3] x, y pairs). */
void _nl_graph_canvas_edge_curve (NlGraphCanvas *c, int from, int to, int to_port, double p[8]);
void _nl_graph_canvas_wire_curve (double x0, double y0, double x1, double y1, double p[8]);
void _nl_graph_canvas_emit_problem (NlGraphCanvas *c, const char *message);
void _nl_graph_canvas_emit_activated (NlGraphCanvas *c, int node);
/* Zooms to z (clamped) keeping the canvas point under widget (wx, wy) fixed. */
void _nl_graph_canvas_zoom_at (NlGraphCanvas *c, double z, double wx, double wy);
/* The pure form: the centre that keeps widget point (wx, wy) on the same
 * canvas point when a w x h view centred on (cx, cy) goes from zoom z to z2. */
void _nl_canvas_zoom_about (double z, double cx, double cy, double w, double h,
                           double wx, double wy, double z2, double *cx2, double *cy2);

/* ---- nl-graph-canvas-draw.c ---- */
void _nl_graph_canvas_update_colors (NlGraphCanvas *c);
void _nl_graph_canvas_draw (NlGraphCanvas *c, GtkSnapshot *snapshot, const NlCanvasView *v);
void _nl_graph_canvas_snapshot (GtkWidget *widget, GtkSnapshot *snapshot);
void _nl_card_text_free (gpointer p);

/* ---- nl-graph-canvas-input.c ---- */
void _nl_graph_canvas_install_controllers (NlGraphCanvas *c);
/* A primary-button drag, in widget coordinates (what the gestures call). */
void _nl_graph_canvas_press (NlGraphCanvas *c, double wx, double wy, GdkModifierType mods);
void _nl_graph_canvas_drag_to (NlGraphCanvas *c, double wx, double wy);
void _nl_graph_canvas_release (NlGraphCanvas *c, double wx, double wy);
void _nl_graph_canvas_cancel_drag (NlGraphCanvas *c);
/* A double-click: ::node-activated when it is on a card. */
void _nl_graph_canvas_double_click (NlGraphCanvas *c, double wx, double wy);
/* A scroll step: dy > 0 scrolls down (Ctrl: zooms out around the pointer). */
void _nl_graph_canvas_scroll (NlGraphCanvas *c, double dx, double dy, GdkModifierType mods,
                             gboolean discrete, double wx, double wy);
/* What the drop target does with a dropped string; FALSE when refused. */
gboolean _nl_graph_canvas_drop_string (NlGraphCanvas *c, const char *s, double wx, double wy);
gboolean _nl_graph_canvas_key (NlGraphCanvas *c, guint keyval, GdkModifierType mods);

G_END_DECLS
