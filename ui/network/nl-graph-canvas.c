/* nl-graph-canvas.c — NlGraphCanvas: the document, the view, card and port
 * geometry, hit testing and the public API. Drawing is in -draw.c, pointer
 * and keyboard handling in -input.c. */
#include "ui/network/nl-graph-canvas-private.h"
#include <glib/gi18n.h>

#include <math.h>
#include <string.h>

G_DEFINE_FINAL_TYPE (NlGraphCanvas, nl_graph_canvas, GTK_TYPE_WIDGET)

enum { PROP_0, PROP_ZOOM, N_PROPS };
enum { SIG_NODE_ACTIVATED, SIG_PROBLEM, N_SIGNALS };

static GParamSpec *props[N_PROPS];
static guint signals[N_SIGNALS];

static const NlNetwork *
net_of (NlGraphCanvas *c)
{
  return c->doc ? nl_network_doc_get_network (c->doc) : NULL;
}

static int
n_nodes_of (NlGraphCanvas *c)
{
  const NlNetwork *net = net_of (c);
  return net ? nl_network_n_nodes (net) : 0;
}

/* ---- document ---- */

static void
clear_analysis (NlGraphCanvas *c)
{
  for (int i = 0; i < c->n_an; i++)
    {
      g_free (c->an[i].info);
      g_free (c->an[i].error);
    }
  g_clear_pointer (&c->an, g_free);
  c->n_an = 0;
}

static void
refind_selected_edge (NlGraphCanvas *c)
{
  const NlNetwork *net = net_of (c);
  NlEdge want = c->sel_edge_ends;
  if (c->sel_edge < 0)
    return;
  if (net && c->sel_edge < (int) net->edges->len)
    {
      NlEdge e = g_array_index (net->edges, NlEdge, c->sel_edge);
      if (memcmp (&e, &want, sizeof e) == 0)
        return;
    }
  c->sel_edge = -1;
  for (guint i = 0; net && i < net->edges->len; i++)
    {
      NlEdge e = g_array_index (net->edges, NlEdge, i);
      if (memcmp (&e, &want, sizeof e) == 0)
        {
          c->sel_edge = (int) i;
          break;
        }
    }
}

static void
on_doc_changed (NlNetworkDoc *doc, NlGraphCanvas *c)
{
  c->stamp++;
  g_clear_pointer (&c->ports, g_free);
  if ((int) c->texts->len > n_nodes_of (c))
    g_ptr_array_set_size (c->texts, n_nodes_of (c));
  refind_selected_edge (c);
  gtk_widget_queue_draw (GTK_WIDGET (c));
}

static void
on_selection_changed (NlNetworkDoc *doc, NlGraphCanvas *c)
{
  int n = 0;
  nl_network_doc_get_selection (doc, &n);
  if (n > 0)
    c->sel_edge = -1;   /* cards and a wire are never selected together */
  gtk_widget_queue_draw (GTK_WIDGET (c));
}

void
nl_graph_canvas_set_document (NlGraphCanvas *c, NlNetworkDoc *doc)
{
  g_return_if_fail (NL_IS_GRAPH_CANVAS (c));
  g_return_if_fail (doc == NULL || NL_IS_NETWORK_DOC (doc));
  if (c->doc == doc)
    return;
  _nl_graph_canvas_cancel_drag (c);
  if (c->doc)
    {
      g_clear_signal_handler (&c->changed_id, c->doc);
      g_clear_signal_handler (&c->selection_id, c->doc);
      g_clear_object (&c->doc);
    }
  if (doc)
    {
      c->doc = g_object_ref (doc);
      c->changed_id = g_signal_connect_object (doc, "changed", G_CALLBACK (on_doc_changed), c, 0);
      c->selection_id = g_signal_connect_object (doc, "selection-changed", G_CALLBACK (on_selection_changed), c, 0);
    }
  c->sel_edge = -1;
  g_ptr_array_set_size (c->texts, 0);
  on_doc_changed (doc, c);
}

NlNetworkDoc *
nl_graph_canvas_get_document (NlGraphCanvas *c)
{
  g_return_val_if_fail (NL_IS_GRAPH_CANVAS (c), NULL);
  return c->doc;
}

void
nl_graph_canvas_set_analysis (NlGraphCanvas *c, const NlAnalysis *a)
{
  g_return_if_fail (NL_IS_GRAPH_CANVAS (c));
  clear_analysis (c);
  if (a && a->n_nodes > 0)
    {
      c->n_an = a->n_nodes;
      c->an = g_new0 (NlCardAnalysis, a->n_nodes);
      for (int i = 0; i < a->n_nodes; i++)
        {
          const NlNodeAnalysis *na = &a->nodes[i];
          g_autofree char *shape = nl_analysis_format_node_shape (na);
          if (na->params > 0)
            {
              g_autofree char *count = nl_format_count (na->params);
              c->an[i].info = g_strdup_printf (_("%s · %s params"), shape, count);
            }
          else
            c->an[i].info = g_steal_pointer (&shape);
          c->an[i].error = g_strdup (na->error);
        }
    }
  c->stamp++;
  gtk_widget_queue_draw (GTK_WIDGET (c));
}

const char *
nl_graph_canvas_get_card_text (NlGraphCanvas *c, int node)
{
  g_return_val_if_fail (NL_IS_GRAPH_CANVAS (c), NULL);
  if (node < 0 || node >= c->n_an)
    return NULL;
  return c->an[node].error ? c->an[node].error : c->an[node].info;
}

/* ---- geometry ---- */

static void
compute_ports (NlGraphCanvas *c)
{
  const NlNetwork *net = net_of (c);
  int n = n_nodes_of (c);
  g_free (c->ports);
  g_free (c->port_used);
  c->ports = g_new0 (int, MAX (n, 1));
  c->port_used = g_new0 (guint32, MAX (n, 1));
  c->n_ports = n;
  for (int i = 0; i < n; i++)
    {
      const NlOpDef *def = nl_network_node (net, i)->def;
      /* Input's "data" port is fed by the pipeline, never by a wire */
      c->ports[i] = g_strcmp0 (def->category, "Input") == 0 ? 0 : def->variadic ? 1 : def->n_inputs;
    }
  /* variadic: every used port plus one free one */
  for (guint k = 0; net && k < net->edges->len; k++)
    {
      NlEdge e = g_array_index (net->edges, NlEdge, k);
      if (e.to < 0 || e.to >= n)
        continue;
      if (e.to_port >= 0 && e.to_port < 32)
        c->port_used[e.to] |= 1u << e.to_port;
      if (!nl_network_node (net, e.to)->def->variadic)
        continue;
      c->ports[e.to] = MAX (c->ports[e.to], MIN (e.to_port + 2, NL_MAX_PORTS));
    }
}

int
_nl_graph_canvas_n_input_ports (NlGraphCanvas *c, int node)
{
  if (!c->ports || c->n_ports != n_nodes_of (c))
    compute_ports (c);
  return node >= 0 && node < c->n_ports ? c->ports[node] : 0;
}

void
_nl_graph_canvas_input_port_pos (NlGraphCanvas *c, int node, int port, double *x, double *y)
{
  const NlNode *nd = nl_network_node (net_of (c), node);
  int n = MAX (_nl_graph_canvas_n_input_ports (c, node), port + 1);
  *x = nd->x + NL_CARD_WIDTH * (port + 1) / (n + 1);
  *y = nd->y;
}

void
_nl_graph_canvas_output_port_pos (NlGraphCanvas *c, int node, double *x, double *y)
{
  const NlNode *nd = nl_network_node (net_of (c), node);
  *x = nd->x + NL_CARD_WIDTH / 2;
  *y = nd->y + NL_CARD_HEIGHT;
}

void
_nl_graph_canvas_wire_curve (double x0, double y0, double x1, double y1, double p[8])
{
  /* vertical tangents at both ends; longer for longer wires so they stay smooth */
  double d = MAX (fabs (y1 - y0) * 0.5, 40.0);
  p[0] = x0, p[1] = y0;
  p[2] = x0, p[3] = y0 + d;
  p[4] = x1, p[5] = y1 - d;
  p[6] = x1, p[7] = y1;
}

void
_nl_graph_canvas_edge_curve (NlGraphCanvas *c, int from, int to, int to_port, double p[8])
{
  double x0, y0, x1, y1;
  _nl_graph_canvas_output_port_pos (c, from, &x0, &y0);
  _nl_graph_canvas_input_port_pos (c, to, to_port, &x1, &y1);
  _nl_graph_canvas_wire_curve (x0, y0, x1, y1, p);
}

/* ---- view ---- */

void
_nl_canvas_zoom_about (double z, double cx, double cy, double w, double h,
                      double wx, double wy, double z2, double *cx2, double *cy2)
{
  double px = cx + (wx - w / 2) / z, py = cy + (wy - h / 2) / z;
  *cx2 = px - (wx - w / 2) / z2;
  *cy2 = py - (wy - h / 2) / z2;
}

void
_nl_graph_canvas_get_render_view (NlGraphCanvas *c, NlCanvasView *v)
{
  v->w = gtk_widget_get_width (GTK_WIDGET (c));
  v->h = gtk_widget_get_height (GTK_WIDGET (c));
  v->zoom = c->zoom;
  v->ox = c->cx - v->w / 2 / c->zoom;
  v->oy = c->cy - v->h / 2 / c->zoom;
  v->export = FALSE;
}

void
nl_graph_canvas_set_view (NlGraphCanvas *c, double zoom, double cx, double cy)
{
  g_return_if_fail (NL_IS_GRAPH_CANVAS (c));
  zoom = CLAMP (zoom, NL_GRAPH_CANVAS_MIN_ZOOM, NL_GRAPH_CANVAS_MAX_ZOOM);
  if (!isfinite (cx) || !isfinite (cy))
    return;
  c->fit_pending = FALSE;
  c->cx = cx;
  c->cy = cy;
  if (zoom != c->zoom)
    {
      c->zoom = zoom;
      g_object_notify_by_pspec (G_OBJECT (c), props[PROP_ZOOM]);
    }
  gtk_widget_queue_draw (GTK_WIDGET (c));
}

void
nl_graph_canvas_get_view (NlGraphCanvas *c, double *zoom, double *cx, double *cy)
{
  g_return_if_fail (NL_IS_GRAPH_CANVAS (c));
  if (zoom)
    *zoom = c->zoom;
  if (cx)
    *cx = c->cx;
  if (cy)
    *cy = c->cy;
}

double
nl_graph_canvas_get_zoom (NlGraphCanvas *c)
{
  g_return_val_if_fail (NL_IS_GRAPH_CANVAS (c), 1.0);
  return c->zoom;
}

void
_nl_graph_canvas_zoom_at (NlGraphCanvas *c, double z, double wx, double wy)
{
  double cx, cy;
  z = CLAMP (z, NL_GRAPH_CANVAS_MIN_ZOOM, NL_GRAPH_CANVAS_MAX_ZOOM);
  _nl_canvas_zoom_about (c->zoom, c->cx, c->cy, gtk_widget_get_width (GTK_WIDGET (c)),
                        gtk_widget_get_height (GTK_WIDGET (c)), wx, wy, z, &cx, &cy);
  nl_graph_canvas_set_view (c, z, cx, cy);
}

void
nl_graph_canvas_zoom_in (NlGraphCanvas *c)
{
  g_return_if_fail (NL_IS_GRAPH_CANVAS (c));
  nl_graph_canvas_set_view (c, c->zoom * 1.25, c->cx, c->cy);
}

void
nl_graph_canvas_zoom_out (NlGraphCanvas *c)
{
  g_return_if_fail (NL_IS_GRAPH_CANVAS (c));
  nl_graph_canvas_set_view (c, c->zoom / 1.25, c->cx, c->cy);
}

gboolean
nl_graph_canvas_get_bounds (NlGraphCanvas *c, graphene_rect_t *bounds)
{
  const NlNetwork *net;
  double x0 = G_MAXDOUBLE, y0 = G_MAXDOUBLE, x1 = -G_MAXDOUBLE, y1 = -G_MAXDOUBLE;
  int n;
  g_return_val_if_fail (NL_IS_GRAPH_CANVAS (c), FALSE);
  net = net_of (c);
  n = n_nodes_of (c);
  for (int i = 0; i < n; i++)
    {
      const NlNode *nd = nl_network_node (net, i);
      x0 = MIN (x0, nd->x);
      y0 = MIN (y0, nd->y);
      x1 = MAX (x1, nd->x + NL_CARD_WIDTH);
      y1 = MAX (y1, nd->y + NL_CARD_HEIGHT);
    }
  if (n == 0)
    {
      graphene_rect_init (bounds, 0, 0, 0, 0);
      return FALSE;
    }
  /* ports stick out by their radius */
  graphene_rect_init (bounds, x0, y0 - NL_PORT_RADIUS, x1 - x0, y1 - y0 + 2 * NL_PORT_RADIUS);
  return TRUE;
}

void
nl_graph_canvas_fit (NlGraphCanvas *c)
{
  graphene_rect_t b;
  double w, h, margin = 32, z;
  g_return_if_fail (NL_IS_GRAPH_CANVAS (c));
  w = gtk_widget_get_width (GTK_WIDGET (c));
  h = gtk_widget_get_height (GTK_WIDGET (c));
  if (w <= 0 || h <= 0)
    {
      c->fit_pending = TRUE;   /* done in size_allocate */
      return;
    }
  if (!nl_graph_canvas_get_bounds (c, &b))
    {
      nl_graph_canvas_set_view (c, 1.0, w / 2, h / 2);
      return;
    }
  z = MIN ((w - 2 * margin) / b.size.width, (h - 2 * margin) / b.size.height);
  z = MIN (z, 1.0);   /* a small graph is shown at its natural size */
  nl_graph_canvas_set_view (c, z, b.origin.x + b.size.width / 2, b.origin.y + b.size.height / 2);
}

void
nl_graph_canvas_focus_node (NlGraphCanvas *c, int node)
{
  const NlNode *nd;
  g_return_if_fail (NL_IS_GRAPH_CANVAS (c));
  g_return_if_fail (node >= 0 && node < n_nodes_of (c));
  nd = nl_network_node (net_of (c), node);
  nl_network_doc_select (c->doc, &node, 1);
  /* at a zoom without text the card would not say what it is */
  nl_graph_canvas_set_view (c, c->zoom < 0.5 ? 1.0 : c->zoom,
                            nd->x + NL_CARD_WIDTH / 2, nd->y + NL_CARD_HEIGHT / 2);
}

void
nl_graph_canvas_widget_to_canvas (NlGraphCanvas *c, double wx, double wy, double *x, double *y)
{
  g_return_if_fail (NL_IS_GRAPH_CANVAS (c));
  *x = c->cx + (wx - gtk_widget_get_width (GTK_WIDGET (c)) / 2.0) / c->zoom;
  *y = c->cy + (wy - gtk_widget_get_height (GTK_WIDGET (c)) / 2.0) / c->zoom;
}

void
nl_graph_canvas_canvas_to_widget (NlGraphCanvas *c, double x, double y, double *wx, double *wy)
{
  g_return_if_fail (NL_IS_GRAPH_CANVAS (c));
  *wx = (x - c->cx) * c->zoom + gtk_widget_get_width (GTK_WIDGET (c)) / 2.0;
  *wy = (y - c->cy) * c->zoom + gtk_widget_get_height (GTK_WIDGET (c)) / 2.0;
}

/* ---- hit testing ---- */

int
nl_graph_canvas_node_at (NlGraphCanvas *c, double wx, double wy)
{
  const NlNetwork *net;
  double x, y;
  g_return_val_if_fail (NL_IS_GRAPH_CANVAS (c), -1);
  net = net_of (c);
  nl_graph_canvas_widget_to_canvas (c, wx, wy, &x, &y);
  /* cards are drawn in index order: the last one is on top */
  for (int i = n_nodes_of (c) - 1; i >= 0; i--)
    {
      const NlNode *nd = nl_network_node (net, i);
      if (x >= nd->x && x < nd->x + NL_CARD_WIDTH && y >= nd->y && y < nd->y + NL_CARD_HEIGHT)
        return i;
    }
  return -1;
}

static double
hit_radius (NlGraphCanvas *c)
{
  /* at least 8 pixels so that ports stay grabbable when zoomed out */
  return MAX (NL_PORT_RADIUS * 1.8, 8.0 / c->zoom);
}

int
_nl_graph_canvas_port_at (NlGraphCanvas *c, double wx, double wy, int *port, gboolean *is_output)
{
  const NlNetwork *net = net_of (c);
  double x, y, r = hit_radius (c), best = r * r;
  int found = -1;
  nl_graph_canvas_widget_to_canvas (c, wx, wy, &x, &y);
  for (int i = n_nodes_of (c) - 1; i >= 0; i--)
    {
      const NlNode *nd = nl_network_node (net, i);
      double px, py, d;
      int np;
      if (x < nd->x - r || x > nd->x + NL_CARD_WIDTH + r || y < nd->y - r || y > nd->y + NL_CARD_HEIGHT + r)
        continue;
      np = _nl_graph_canvas_n_input_ports (c, i);
      for (int p = 0; p < np; p++)
        {
          _nl_graph_canvas_input_port_pos (c, i, p, &px, &py);
          d = (px - x) * (px - x) + (py - y) * (py - y);
          if (d <= best)
            best = d, found = i, *port = p, *is_output = FALSE;
        }
      if (nd->def->n_outputs > 0)
        {
          _nl_graph_canvas_output_port_pos (c, i, &px, &py);
          d = (px - x) * (px - x) + (py - y) * (py - y);
          if (d <= best)
            best = d, found = i, *port = 0, *is_output = TRUE;
        }
    }
  return found;
}

static double
dist_to_segment (double x, double y, double ax, double ay, double bx, double by)
{
  double dx = bx - ax, dy = by - ay, l2 = dx * dx + dy * dy, t = 0;
  if (l2 > 0)
    t = CLAMP (((x - ax) * dx + (y - ay) * dy) / l2, 0, 1);
  dx = ax + t * dx - x;
  dy = ay + t * dy - y;
  return sqrt (dx * dx + dy * dy);
}

int
nl_graph_canvas_edge_at (NlGraphCanvas *c, double wx, double wy)
{
  const NlNetwork *net;
  double x, y, tol, best;
  int found = -1;
  g_return_val_if_fail (NL_IS_GRAPH_CANVAS (c), -1);
  net = net_of (c);
  if (!net)
    return -1;
  nl_graph_canvas_widget_to_canvas (c, wx, wy, &x, &y);
  tol = best = 6.0 / c->zoom;
  for (guint k = 0; k < net->edges->len; k++)
    {
      NlEdge e = g_array_index (net->edges, NlEdge, k);
      double p[8], ax, ay;
      _nl_graph_canvas_edge_curve (c, e.from, e.to, e.to_port, p);
      if (x < MIN (p[0], p[6]) - tol || x > MAX (p[0], p[6]) + tol
          || y < MIN (MIN (p[1], p[3]), MIN (p[5], p[7])) - tol
          || y > MAX (MAX (p[1], p[3]), MAX (p[5], p[7])) + tol)
        continue;
      /* flatten the curve into 24 segments */
      ax = p[0], ay = p[1];
      for (int s = 1; s <= 24; s++)
        {
          double t = s / 24.0, u = 1 - t;
          double bx = u * u * u * p[0] + 3 * u * u * t * p[2] + 3 * u * t * t * p[4] + t * t * t * p[6];
          double by = u * u * u * p[1] + 3 * u * u * t * p[3] + 3 * u * t * t * p[5] + t * t * t * p[7];
          double d = dist_to_segment (x, y, ax, ay, bx, by);
          if (d < best)
            best = d, found = (int) k;
          ax = bx, ay = by;
        }
    }
  return found;
}

/* ---- edge selection ---- */

int
nl_graph_canvas_get_selected_edge (NlGraphCanvas *c)
{
  g_return_val_if_fail (NL_IS_GRAPH_CANVAS (c), -1);
  return c->sel_edge;
}

void
nl_graph_canvas_select_edge (NlGraphCanvas *c, int edge)
{
  const NlNetwork *net;
  g_return_if_fail (NL_IS_GRAPH_CANVAS (c));
  net = net_of (c);
  if (edge >= 0 && net && edge < (int) net->edges->len)
    {
      nl_network_doc_select (c->doc, NULL, 0);
      c->sel_edge = edge;
      c->sel_edge_ends = g_array_index (net->edges, NlEdge, edge);
    }
  else
    c->sel_edge = -1;
  gtk_widget_queue_draw (GTK_WIDGET (c));
}

void
nl_graph_canvas_delete_selection (NlGraphCanvas *c)
{
  const int *sel;
  int n = 0;
  g_return_if_fail (NL_IS_GRAPH_CANVAS (c));
  if (!c->doc)
    return;
  if (c->sel_edge >= 0)
    {
      int e = c->sel_edge;
      c->sel_edge = -1;
      nl_network_doc_disconnect (c->doc, e);
      return;
    }
  sel = nl_network_doc_get_selection (c->doc, &n);
  if (n > 0)
    {
      g_autofree int *copy = g_memdup2 (sel, sizeof (int) * n);
      nl_network_doc_remove_nodes (c->doc, copy, n);
    }
}

/* ---- signals ---- */

void
_nl_graph_canvas_emit_problem (NlGraphCanvas *c, const char *message)
{
  g_signal_emit (c, signals[SIG_PROBLEM], 0, message);
}

void
_nl_graph_canvas_emit_activated (NlGraphCanvas *c, int node)
{
  g_signal_emit (c, signals[SIG_NODE_ACTIVATED], 0, node);
}

/* ---- GtkWidget ---- */

static gboolean
nl_graph_canvas_query_tooltip (GtkWidget *widget, int x, int y, gboolean keyboard, GtkTooltip *tooltip)
{
  NlGraphCanvas *c = NL_GRAPH_CANVAS (widget);
  gboolean is_output = FALSE;
  int port = 0, node = _nl_graph_canvas_port_at (c, x, y, &port, &is_output);
  if (node >= 0)
    {
      const NlOpDef *def = nl_network_node (net_of (c), node)->def;
      if (is_output)
        gtk_tooltip_set_text (tooltip, _("output — drag to an input to connect"));
      else if (def->n_inputs > 0)
        gtk_tooltip_set_text (tooltip, def->inputs[def->variadic ? 0 : MIN (port, def->n_inputs - 1)]);
      else
        return FALSE;
      return TRUE;
    }
  node = nl_graph_canvas_node_at (c, x, y);
  if (node >= 0 && node < c->n_an && c->an[node].error)
    {
      gtk_tooltip_set_text (tooltip, c->an[node].error);
      return TRUE;
    }
  return FALSE;
}

static void
nl_graph_canvas_size_allocate (GtkWidget *widget, int width, int height, int baseline)
{
  NlGraphCanvas *c = NL_GRAPH_CANVAS (widget);
  if (c->fit_pending && width > 0 && height > 0)
    nl_graph_canvas_fit (c);
}

static void
nl_graph_canvas_css_changed (GtkWidget *widget, GtkCssStyleChange *change)
{
  NlGraphCanvas *c = NL_GRAPH_CANVAS (widget);
  GTK_WIDGET_CLASS (nl_graph_canvas_parent_class)->css_changed (widget, change);
  /* fonts may have changed: lay the text out again */
  g_ptr_array_set_size (c->texts, 0);
  c->stamp++;
  gtk_widget_queue_draw (widget);
}

static void
nl_graph_canvas_get_property (GObject *object, guint id, GValue *value, GParamSpec *pspec)
{
  NlGraphCanvas *c = NL_GRAPH_CANVAS (object);
  switch (id)
    {
    case PROP_ZOOM:
      g_value_set_double (value, c->zoom);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, id, pspec);
    }
}

static void
nl_graph_canvas_dispose (GObject *object)
{
  NlGraphCanvas *c = NL_GRAPH_CANVAS (object);
  nl_graph_canvas_set_document (c, NULL);
  G_OBJECT_CLASS (nl_graph_canvas_parent_class)->dispose (object);
}

static void
nl_graph_canvas_finalize (GObject *object)
{
  NlGraphCanvas *c = NL_GRAPH_CANVAS (object);
  clear_analysis (c);
  g_ptr_array_unref (c->texts);
  g_free (c->ports);
  g_free (c->port_used);
  g_free (c->band_base);
  g_free (c->wire_msg);
  G_OBJECT_CLASS (nl_graph_canvas_parent_class)->finalize (object);
}

static void
nl_graph_canvas_class_init (NlGraphCanvasClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->get_property = nl_graph_canvas_get_property;
  object_class->dispose = nl_graph_canvas_dispose;
  object_class->finalize = nl_graph_canvas_finalize;
  widget_class->snapshot = _nl_graph_canvas_snapshot;
  widget_class->size_allocate = nl_graph_canvas_size_allocate;
  widget_class->query_tooltip = nl_graph_canvas_query_tooltip;
  widget_class->css_changed = nl_graph_canvas_css_changed;

  props[PROP_ZOOM] = g_param_spec_double ("zoom", NULL, NULL, NL_GRAPH_CANVAS_MIN_ZOOM,
                                          NL_GRAPH_CANVAS_MAX_ZOOM, 1.0,
                                          G_PARAM_READABLE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY);
  g_object_class_install_properties (object_class, N_PROPS, props);

  signals[SIG_NODE_ACTIVATED] = g_signal_new ("node-activated", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                                              0, NULL, NULL, NULL, G_TYPE_NONE, 1, G_TYPE_INT);
  signals[SIG_PROBLEM] = g_signal_new ("problem", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                                       0, NULL, NULL, NULL, G_TYPE_NONE, 1, G_TYPE_STRING);

  gtk_widget_class_set_css_name (widget_class, "graph-canvas");
}

static void
nl_graph_canvas_init (NlGraphCanvas *c)
{
  c->zoom = 1.0;
  c->sel_edge = -1;
  c->wire_to = -1;
  c->texts = g_ptr_array_new_with_free_func (_nl_card_text_free);
  gtk_widget_set_focusable (GTK_WIDGET (c), TRUE);
  gtk_widget_set_has_tooltip (GTK_WIDGET (c), TRUE);
  gtk_widget_set_overflow (GTK_WIDGET (c), GTK_OVERFLOW_HIDDEN);
  gtk_widget_set_hexpand (GTK_WIDGET (c), TRUE);
  gtk_widget_set_vexpand (GTK_WIDGET (c), TRUE);
  _nl_graph_canvas_install_controllers (c);
}

GtkWidget *
nl_graph_canvas_new (void)
{
  return g_object_new (NL_TYPE_GRAPH_CANVAS, NULL);
}
