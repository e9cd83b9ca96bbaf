/* nl-graph-canvas-input.c — the canvas's pointer, scroll, pinch, keyboard
 * and drop handling. The event controllers only translate events into the
 * _nl_graph_canvas_press / drag_to / release / scroll / key / drop_string
 * calls, which the tests drive directly. */
#include "ui/network/nl-graph-canvas-private.h"
#include <glib/gi18n.h>

#include <math.h>
#include <string.h>

#define OP_DROP_PREFIX "netloom-op:"
#define PAN_STEP 48.0   /* pixels per wheel notch or arrow key */

static const NlNetwork *
net_of (NlGraphCanvas *c)
{
  return c->doc ? nl_network_doc_get_network (c->doc) : NULL;
}

static void
set_selection_one (NlGraphCanvas *c, int node)
{
  c->sel_edge = -1;
  nl_network_doc_select (c->doc, &node, node >= 0 ? 1 : 0);
}

static void
toggle_selected (NlGraphCanvas *c, int node)
{
  int n = 0, k = 0;
  const int *sel = nl_network_doc_get_selection (c->doc, &n);
  g_autofree int *next = g_new (int, n + 1);
  gboolean was = FALSE;
  for (int i = 0; i < n; i++)
    if (sel[i] == node)
      was = TRUE;
    else
      next[k++] = sel[i];
  if (!was)
    next[k++] = node;
  c->sel_edge = -1;
  nl_network_doc_select (c->doc, next, k);
}

/* ---- primary-button drag ---- */

static void
begin (NlGraphCanvas *c, double wx, double wy, GdkModifierType mods, gboolean pan_only)
{
  gboolean is_output = FALSE;
  int port = 0, node;

  if (c->mode != NL_DRAG_NONE)
    _nl_graph_canvas_cancel_drag (c);
  c->press_x = c->last_x = wx;
  c->press_y = c->last_y = wy;
  c->press_mods = mods;
  c->press_node = -1;
  c->moved = c->toggled = FALSE;
  c->pan_only = pan_only;
  c->pan_cx = c->cx;
  c->pan_cy = c->cy;
  if (!pan_only && !gtk_widget_has_focus (GTK_WIDGET (c)))
    gtk_widget_grab_focus (GTK_WIDGET (c));
  if (pan_only || !c->doc)
    {
      c->mode = NL_DRAG_PAN;
      return;
    }

  node = _nl_graph_canvas_port_at (c, wx, wy, &port, &is_output);
  if (node >= 0 && is_output)
    {
      c->mode = NL_DRAG_WIRE;
      c->wire_from = node;
      c->wire_to = c->wire_port = -1;
      c->wire_ok = FALSE;
      g_clear_pointer (&c->wire_msg, g_free);
      gtk_widget_queue_draw (GTK_WIDGET (c));
      return;
    }

  node = nl_graph_canvas_node_at (c, wx, wy);
  if (node >= 0)
    {
      c->press_node = node;
      c->mode = NL_DRAG_MOVE;
      if (mods & (GDK_SHIFT_MASK | GDK_CONTROL_MASK))
        {
          toggle_selected (c, node);
          c->toggled = TRUE;
          if (!nl_network_doc_is_selected (c->doc, node))
            c->mode = NL_DRAG_NONE;   /* just deselected it: nothing to move */
        }
      else if (!nl_network_doc_is_selected (c->doc, node))
        set_selection_one (c, node);
      else
        c->sel_edge = -1;
      return;
    }

  node = nl_graph_canvas_edge_at (c, wx, wy);
  if (node >= 0)
    {
      nl_graph_canvas_select_edge (c, node);
      c->mode = NL_DRAG_NONE;
      return;
    }

  if (mods & (GDK_SHIFT_MASK | GDK_CONTROL_MASK))
    {
      const int *sel = nl_network_doc_get_selection (c->doc, &c->n_band_base);
      g_free (c->band_base);
      c->band_base = g_memdup2 (sel, sizeof (int) * MAX (c->n_band_base, 1));
      c->mode = NL_DRAG_RUBBER;
    }
  else
    c->mode = NL_DRAG_PAN;
}

void
_nl_graph_canvas_press (NlGraphCanvas *c, double wx, double wy, GdkModifierType mods)
{
  g_return_if_fail (NL_IS_GRAPH_CANVAS (c));
  begin (c, wx, wy, mods, FALSE);
}

static void
update_band (NlGraphCanvas *c)
{
  const NlNetwork *net = net_of (c);
  int n = nl_network_n_nodes (net), k = 0;
  double x0, y0, x1, y1;
  g_autofree gboolean *in = g_new0 (gboolean, MAX (n, 1));
  g_autofree int *sel = g_new (int, MAX (n, 1));
  nl_graph_canvas_widget_to_canvas (c, MIN (c->press_x, c->last_x), MIN (c->press_y, c->last_y), &x0, &y0);
  nl_graph_canvas_widget_to_canvas (c, MAX (c->press_x, c->last_x), MAX (c->press_y, c->last_y), &x1, &y1);
  for (int i = 0; i < c->n_band_base; i++)
    if (c->band_base[i] >= 0 && c->band_base[i] < n)
      in[c->band_base[i]] = TRUE;
  for (int i = 0; i < n; i++)
    {
      const NlNode *nd = nl_network_node (net, i);
      if (nd->x <= x1 && nd->x + NL_CARD_WIDTH >= x0 && nd->y <= y1 && nd->y + NL_CARD_HEIGHT >= y0)
        in[i] = TRUE;
    }
  for (int i = 0; i < n; i++)
    if (in[i])
      sel[k++] = i;
  nl_network_doc_select (c->doc, sel, k);
}

static void
update_wire_target (NlGraphCanvas *c, double wx, double wy)
{
  gboolean is_output = FALSE;
  int port = 0, to = -1, tp = -1;
  int node = _nl_graph_canvas_port_at (c, wx, wy, &port, &is_output);
  g_autoptr (GError) error = NULL;

  if (node >= 0 && !is_output)
    to = node, tp = port;
  else if ((node = nl_graph_canvas_node_at (c, wx, wy)) >= 0 && node != c->wire_from)
    {
      /* dropped on a card body: its first input that accepts the wire */
      int np = _nl_graph_canvas_n_input_ports (c, node);
      to = node;
      tp = 0;
      for (int p = 0; p < np; p++)
        if (nl_network_doc_can_connect (c->doc, c->wire_from, 0, node, p, NULL))
          {
            tp = p;
            break;
          }
    }
  if (to == c->wire_to && tp == c->wire_port)
    return;
  c->wire_to = to;
  c->wire_port = tp;
  g_clear_pointer (&c->wire_msg, g_free);
  c->wire_ok = to >= 0 && nl_network_doc_can_connect (c->doc, c->wire_from, 0, to, tp, &error);
  if (error)
    c->wire_msg = g_strdup (error->message);
}

void
_nl_graph_canvas_drag_to (NlGraphCanvas *c, double wx, double wy)
{
  g_return_if_fail (NL_IS_GRAPH_CANVAS (c));
  if (!c->moved && hypot (wx - c->press_x, wy - c->press_y) < NL_DRAG_THRESHOLD)
    return;
  switch (c->mode)
    {
    case NL_DRAG_NONE:
      return;
    case NL_DRAG_PAN:
      nl_graph_canvas_set_view (c, c->zoom, c->pan_cx - (wx - c->press_x) / c->zoom,
                                c->pan_cy - (wy - c->press_y) / c->zoom);
      break;
    case NL_DRAG_MOVE:
      {
        int n = 0;
        const int *sel = nl_network_doc_get_selection (c->doc, &n);
        g_autofree int *nodes = g_memdup2 (sel, sizeof (int) * MAX (n, 1));
        if (n == 0)
          break;
        if (!c->group_open)
          {
            g_autofree char *label = n == 1 ? g_strdup (_("Move layer"))
                                            : g_strdup_printf (ngettext ("Move %d layer", "Move %d layers", n), n);
            nl_network_doc_begin_group (c->doc, label);
            c->group_open = TRUE;
          }
        nl_network_doc_move_nodes (c->doc, nodes, n, (wx - c->last_x) / c->zoom, (wy - c->last_y) / c->zoom);
        break;
      }
    case NL_DRAG_RUBBER:
      c->last_x = wx, c->last_y = wy;
      update_band (c);
      break;
    case NL_DRAG_WIRE:
      update_wire_target (c, wx, wy);
      break;
    }
  c->moved = TRUE;
  c->last_x = wx;
  c->last_y = wy;
  gtk_widget_queue_draw (GTK_WIDGET (c));
}

void
_nl_graph_canvas_release (NlGraphCanvas *c, double wx, double wy)
{
  NlDragMode mode;
  g_return_if_fail (NL_IS_GRAPH_CANVAS (c));
  _nl_graph_canvas_drag_to (c, wx, wy);
  mode = c->mode;
  c->mode = NL_DRAG_NONE;
  switch (mode)
    {
    case NL_DRAG_MOVE:
      if (c->group_open)
        {
          c->group_open = FALSE;
          nl_network_doc_end_group (c->doc);
        }
      else if (!c->toggled && c->press_node >= 0)
        set_selection_one (c, c->press_node);   /* a click in a multiple selection */
      break;
    case NL_DRAG_PAN:
      if (!c->moved && !c->pan_only && c->doc)
        {
          c->sel_edge = -1;
          nl_network_doc_select (c->doc, NULL, 0);   /* a click on empty space */
        }
      break;
    case NL_DRAG_WIRE:
      if (c->wire_to >= 0)
        {
          g_autoptr (GError) error = NULL;
          if (!c->wire_ok)
            _nl_graph_canvas_emit_problem (c, c->wire_msg ? c->wire_msg : _("These ports cannot be connected"));
          else if (!nl_network_doc_connect (c->doc, c->wire_from, 0, c->wire_to, c->wire_port, &error))
            _nl_graph_canvas_emit_problem (c, error->message);
        }
      c->wire_to = c->wire_port = -1;
      g_clear_pointer (&c->wire_msg, g_free);
      break;
    case NL_DRAG_RUBBER:
    case NL_DRAG_NONE:
      break;
    }
  gtk_widget_queue_draw (GTK_WIDGET (c));
}

void
_nl_graph_canvas_cancel_drag (NlGraphCanvas *c)
{
  if (c->group_open && c->doc)
    nl_network_doc_end_group (c->doc);   /* the moves so far stay, as one step */
  c->group_open = FALSE;
  c->mode = NL_DRAG_NONE;
  c->wire_to = c->wire_port = -1;
  g_clear_pointer (&c->wire_msg, g_free);
  gtk_widget_queue_draw (GTK_WIDGET (c));
}

void
_nl_graph_canvas_double_click (NlGraphCanvas *c, double wx, double wy)
{
  int node = nl_graph_canvas_node_at (c, wx, wy);
  if (node >= 0)
    _nl_graph_canvas_emit_activated (c, node);
}

/* ---- scroll, keys, drop ---- */

void
_nl_graph_canvas_scroll (NlGraphCanvas *c, double dx, double dy, GdkModifierType mods,
                        gboolean discrete, double wx, double wy)
{
  g_return_if_fail (NL_IS_GRAPH_CANVAS (c));
  if (mods & GDK_CONTROL_MASK)
    {
      double f = discrete ? pow (1.15, -dy) : exp (-dy * 0.01);
      _nl_graph_canvas_zoom_at (c, c->zoom * f, wx, wy);
      return;
    }
  if (discrete)
    dx *= PAN_STEP, dy *= PAN_STEP;
  if ((mods & GDK_SHIFT_MASK) && dx == 0)
    dx = dy, dy = 0;
  nl_graph_canvas_set_view (c, c->zoom, c->cx + dx / c->zoom, c->cy + dy / c->zoom);
}

gboolean
_nl_graph_canvas_key (NlGraphCanvas *c, guint keyval, GdkModifierType mods)
{
  double step = PAN_STEP / c->zoom;
  switch (keyval)
    {
    case GDK_KEY_plus:
    case GDK_KEY_equal:
    case GDK_KEY_KP_Add:
      nl_graph_canvas_zoom_in (c);
      return TRUE;
    case GDK_KEY_minus:
    case GDK_KEY_underscore:
    case GDK_KEY_KP_Subtract:
      nl_graph_canvas_zoom_out (c);
      return TRUE;
    case GDK_KEY_0:
    case GDK_KEY_KP_0:
      if (!(mods & GDK_CONTROL_MASK))
        return FALSE;
      nl_graph_canvas_fit (c);
      return TRUE;
    case GDK_KEY_Left:
      nl_graph_canvas_set_view (c, c->zoom, c->cx - step, c->cy);
      return TRUE;
    case GDK_KEY_Right:
      nl_graph_canvas_set_view (c, c->zoom, c->cx + step, c->cy);
      return TRUE;
    case GDK_KEY_Up:
      nl_graph_canvas_set_view (c, c->zoom, c->cx, c->cy - step);
      return TRUE;
    case GDK_KEY_Down:
      nl_graph_canvas_set_view (c, c->zoom, c->cx, c->cy + step);
      return TRUE;
    case GDK_KEY_Delete:
    case GDK_KEY_KP_Delete:
    case GDK_KEY_BackSpace:
      nl_graph_canvas_delete_selection (c);
      return TRUE;
    case GDK_KEY_Escape:
      if (c->mode != NL_DRAG_NONE)
        _nl_graph_canvas_cancel_drag (c);
      else if (c->doc)
        {
          c->sel_edge = -1;
          nl_network_doc_select (c->doc, NULL, 0);
          gtk_widget_queue_draw (GTK_WIDGET (c));
        }
      return TRUE;
    default:
      return FALSE;
    }
}

gboolean
_nl_graph_canvas_drop_string (NlGraphCanvas *c, const char *s, double wx, double wy)
{
  g_autoptr (GError) error = NULL;
  double x, y;
  int node;
  g_return_val_if_fail (NL_IS_GRAPH_CANVAS (c), FALSE);
  if (!c->doc || !s || !g_str_has_prefix (s, OP_DROP_PREFIX))
    return FALSE;
  nl_graph_canvas_widget_to_canvas (c, wx, wy, &x, &y);
  node = nl_network_doc_add_node (c->doc, s + strlen (OP_DROP_PREFIX),
                                  x - NL_CARD_WIDTH / 2, y - NL_CARD_HEIGHT / 2, &error);
  if (node < 0)
    {
      _nl_graph_canvas_emit_problem (c, error ? error->message : _("Cannot add this layer"));
      return FALSE;
    }
  set_selection_one (c, node);
  gtk_widget_grab_focus (GTK_WIDGET (c));
  return TRUE;
}

/* ---- event controllers ---- */

static GdkModifierType
current_mods (GtkEventController *ec)
{
  return gtk_event_controller_get_current_event_state (ec);
}

static void
on_drag_begin (GtkGestureDrag *g, double x, double y, NlGraphCanvas *c)
{
  gtk_gesture_set_state (GTK_GESTURE (g), GTK_EVENT_SEQUENCE_CLAIMED);
  begin (c, x, y, current_mods (GTK_EVENT_CONTROLLER (g)), FALSE);
}

static void
on_pan_begin (GtkGestureDrag *g, double x, double y, NlGraphCanvas *c)
{
  gtk_gesture_set_state (GTK_GESTURE (g), GTK_EVENT_SEQUENCE_CLAIMED);
  begin (c, x, y, 0, TRUE);
}

static void
on_drag_update (GtkGestureDrag *g, double dx, double dy, NlGraphCanvas *c)
{
  double x, y;
  gtk_gesture_drag_get_start_point (g, &x, &y);
  _nl_graph_canvas_drag_to (c, x + dx, y + dy);
}

static void
on_drag_end (GtkGestureDrag *g, double dx, double dy, NlGraphCanvas *c)
{
  double x, y;
  if (c->mode == NL_DRAG_NONE && !c->moved)
    return;
  gtk_gesture_drag_get_start_point (g, &x, &y);
  _nl_graph_canvas_release (c, x + dx, y + dy);
}

static void
on_drag_cancel (GtkGesture *g, GdkEventSequence *seq, NlGraphCanvas *c)
{
  _nl_graph_canvas_cancel_drag (c);
}

static void
on_click_pressed (GtkGestureClick *g, int n_press, double x, double y, NlGraphCanvas *c)
{
  if (n_press == 2)
    _nl_graph_canvas_double_click (c, x, y);
}

static gboolean
on_scroll (GtkEventControllerScroll *ec, double dx, double dy, NlGraphCanvas *c)
{
  gboolean discrete = gtk_event_controller_scroll_get_unit (ec) == GDK_SCROLL_UNIT_WHEEL;
  _nl_graph_canvas_scroll (c, dx, dy, current_mods (GTK_EVENT_CONTROLLER (ec)), discrete,
                          c->pointer_x, c->pointer_y);
  return TRUE;
}

static void
on_motion (GtkEventControllerMotion *ec, double x, double y, NlGraphCanvas *c)
{
  gboolean is_output = FALSE;
  int port = 0, cursor;
  c->pointer_x = x;
  c->pointer_y = y;
  if (c->mode != NL_DRAG_NONE)
    return;
  cursor = _nl_graph_canvas_port_at (c, x, y, &port, &is_output) >= 0 && is_output ? 1 : 0;
  if (cursor != c->cursor)
    {
      c->cursor = cursor;
      gtk_widget_set_cursor_from_name (GTK_WIDGET (c), cursor ? "crosshair" : NULL);
    }
}

static void
on_pinch_begin (GtkGesture *g, GdkEventSequence *seq, NlGraphCanvas *c)
{
  c->pinch_zoom = c->zoom;
}

static void
on_pinch_scale (GtkGestureZoom *g, double scale, NlGraphCanvas *c)
{
  double x, y;
  if (!gtk_gesture_get_bounding_box_center (GTK_GESTURE (g), &x, &y))
    x = gtk_widget_get_width (GTK_WIDGET (c)) / 2.0, y = gtk_widget_get_height (GTK_WIDGET (c)) / 2.0;
  _nl_graph_canvas_zoom_at (c, c->pinch_zoom * scale, x, y);
}

static gboolean
on_key_pressed (GtkEventControllerKey *ec, guint keyval, guint keycode, GdkModifierType state, NlGraphCanvas *c)
{
  return _nl_graph_canvas_key (c, keyval, state);
}

static gboolean
on_drop (GtkDropTarget *target, const GValue *value, double x, double y, NlGraphCanvas *c)
{
  return G_VALUE_HOLDS_STRING (value) && _nl_graph_canvas_drop_string (c, g_value_get_string (value), x, y);
}

void
_nl_graph_canvas_install_controllers (NlGraphCanvas *c)
{
  GtkWidget *w = GTK_WIDGET (c);
  GtkGesture *drag = gtk_gesture_drag_new ();
  GtkGesture *click = gtk_gesture_click_new ();
  GtkGesture *pan = gtk_gesture_drag_new ();
  GtkGesture *pinch = gtk_gesture_zoom_new ();
  GtkEventController *ec;
  GtkDropTarget *drop;

  /* grouped, so that claiming the drag keeps the click (double-click) alive */
  gtk_gesture_group (click, drag);
  g_signal_connect (drag, "drag-begin", G_CALLBACK (on_drag_begin), c);
  g_signal_connect (drag, "drag-update", G_CALLBACK (on_drag_update), c);
  g_signal_connect (drag, "drag-end", G_CALLBACK (on_drag_end), c);
  g_signal_connect (drag, "cancel", G_CALLBACK (on_drag_cancel), c);
  gtk_widget_add_controller (w, GTK_EVENT_CONTROLLER (drag));
  g_signal_connect (click, "pressed", G_CALLBACK (on_click_pressed), c);
  gtk_widget_add_controller (w, GTK_EVENT_CONTROLLER (click));

  gtk_gesture_single_set_button (GTK_GESTURE_SINGLE (pan), GDK_BUTTON_MIDDLE);
  g_signal_connect (pan, "drag-begin", G_CALLBACK (on_pan_begin), c);
  g_signal_connect (pan, "drag-update", G_CALLBACK (on_drag_update), c);
  g_signal_connect (pan, "drag-end", G_CALLBACK (on_drag_end), c);
  g_signal_connect (pan, "cancel", G_CALLBACK (on_drag_cancel), c);
  gtk_widget_add_controller (w, GTK_EVENT_CONTROLLER (pan));

  g_signal_connect (pinch, "begin", G_CALLBACK (on_pinch_begin), c);
  g_signal_connect (pinch, "scale-changed", G_CALLBACK (on_pinch_scale), c);
  gtk_widget_add_controller (w, GTK_EVENT_CONTROLLER (pinch));

  ec = gtk_event_controller_scroll_new (GTK_EVENT_CONTROLLER_SCROLL_BOTH_AXES);
  g_signal_connect (ec, "scroll", G_CALLBACK (on_scroll), c);
  gtk_widget_add_controller (w, ec);

  ec = gtk_event_controller_motion_new ();
  g_signal_connect (ec, "motion", G_CALLBACK (on_motion), c);
  g_signal_connect (ec, "enter", G_CALLBACK (on_motion), c);
  gtk_widget_add_controller (w, ec);

  ec = gtk_event_controller_key_new ();
  g_signal_connect (ec, "key-pressed", G_CALLBACK (on_key_pressed), c);
  gtk_widget_add_controller (w, ec);

  drop = gtk_drop_target_new (G_TYPE_STRING, GDK_ACTION_COPY);
  g_signal_connect (drop, "drop", G_CALLBACK (on_drop), c);
  gtk_widget_add_controller (w, GTK_EVENT_CONTROLLER (drop));
}
