/* test-graph-canvas.c — NlGraphCanvas on LeNet in a real window: fit,
 * zoom about the pointer, card drags (one undo step), selection, rubber
 * band, wires (valid and refused), wire selection and deletion, palette
 * drops, double-click, analysis on the cards, PNG / SVG export. Pointer
 * gestures are driven through the handlers the event controllers call
 * (nl-graph-canvas-private.h). */
#include <math.h>
#include <string.h>

#include "engine/session/nl-analysis.h"
#include "tests/nl-test-gui.h"
#include "tests/nl-test-util.h"
#include "ui/network/nl-graph-canvas-private.h"
#include "ui/nl-screenshot.h"

typedef struct {
  NlNetworkDoc *doc;
  NlGraphCanvas *canvas;
  GtkWindow *win;
  GPtrArray *problems;
  int activated;
} Fixture;

static void
on_problem (NlGraphCanvas *c, const char *message, Fixture *f)
{
  g_ptr_array_add (f->problems, g_strdup (message));
}

static void
on_activated (NlGraphCanvas *c, int node, Fixture *f)
{
  f->activated = node;
}

static void
setup (Fixture *f, gconstpointer data)
{
  f->doc = nl_network_doc_new (nl_test_load_template ("lenet"));
  f->canvas = NL_GRAPH_CANVAS (nl_graph_canvas_new ());
  f->problems = g_ptr_array_new_with_free_func (g_free);
  f->activated = -1;
  g_signal_connect (f->canvas, "problem", G_CALLBACK (on_problem), f);
  g_signal_connect (f->canvas, "node-activated", G_CALLBACK (on_activated), f);
  nl_graph_canvas_set_document (f->canvas, f->doc);
  f->win = nl_test_show_in_window (GTK_WIDGET (f->canvas), 900, 700);
  nl_graph_canvas_fit (f->canvas);
  nl_test_pump (30);
}

static void
teardown (Fixture *f, gconstpointer data)
{
  gtk_window_destroy (f->win);
  nl_test_pump (10);
  g_object_unref (f->doc);
  g_ptr_array_unref (f->problems);
}

static const NlNetwork *
net (Fixture *f)
{
  return nl_network_doc_get_network (f->doc);
}

/* The widget's rendering is that of its last frame: let one be drawn. */
static double
drawn (Fixture *f)
{
  nl_test_pump (100);
  return nl_test_drawn_fraction (GTK_WIDGET (f->canvas));
}

static void
card_centre (Fixture *f, int node, double *wx, double *wy)
{
  const NlNode *nd = nl_network_node (net (f), node);
  nl_graph_canvas_canvas_to_widget (f->canvas, nd->x + NL_CARD_WIDTH / 2, nd->y + NL_CARD_HEIGHT / 2, wx, wy);
}

static void
port_widget (Fixture *f, int node, int port, gboolean output, double *wx, double *wy)
{
  double x, y;
  if (output)
    _nl_graph_canvas_output_port_pos (f->canvas, node, &x, &y);
  else
    _nl_graph_canvas_input_port_pos (f->canvas, node, port, &x, &y);
  nl_graph_canvas_canvas_to_widget (f->canvas, x, y, wx, wy);
}

static int
find_edge (Fixture *f, int from, int to)
{
  const NlNetwork *n = net (f);
  for (guint i = 0; i < n->edges->len; i++)
    {
      NlEdge e = g_array_index (n->edges, NlEdge, i);
      if (e.from == from && e.to == to)
        return (int) i;
    }
  return -1;
}

static void
test_fit (Fixture *f, gconstpointer data)
{
  int w = gtk_widget_get_width (GTK_WIDGET (f->canvas)), h = gtk_widget_get_height (GTK_WIDGET (f->canvas));
  int n = nl_network_n_nodes (net (f));
  graphene_rect_t b;
  g_assert_cmpint (n, ==, 11);
  g_assert_cmpint (w, >, 100);
  /* LeNet is a 1072-unit column: it only fits zoomed out */
  g_assert_cmpfloat (nl_graph_canvas_get_zoom (f->canvas), <, 0.9);
  for (int i = 0; i < n; i++)
    {
      double wx, wy;
      const NlNode *nd = nl_network_node (net (f), i);
      card_centre (f, i, &wx, &wy);
      g_assert_cmpfloat (wx, >, 0);
      g_assert_cmpfloat (wx, <, w);
      g_assert_cmpfloat (wy, >, 0);
      g_assert_cmpfloat (wy, <, h);
      g_assert_cmpint (nl_graph_canvas_node_at (f->canvas, wx, wy), ==, i);
      /* the card's corners are in the widget too */
      nl_graph_canvas_canvas_to_widget (f->canvas, nd->x, nd->y, &wx, &wy);
      g_assert_cmpfloat (wx, >=, 0);
      g_assert_cmpfloat (wy, >=, 0);
      nl_graph_canvas_canvas_to_widget (f->canvas, nd->x + NL_CARD_WIDTH, nd->y + NL_CARD_HEIGHT, &wx, &wy);
      g_assert_cmpfloat (wx, <=, w);
      g_assert_cmpfloat (wy, <=, h);
    }
  g_assert_cmpint (nl_graph_canvas_node_at (f->canvas, 2, 2), ==, -1);
  g_assert_true (nl_graph_canvas_get_bounds (f->canvas, &b));
  g_assert_cmpfloat (b.size.width, >=, NL_CARD_WIDTH);
  g_assert_cmpfloat (b.size.height, >=, 1000 + NL_CARD_HEIGHT);
  g_assert_cmpfloat (drawn (f), >, 0.02);
}

static void
test_zoom (Fixture *f, gconstpointer data)
{
  double z0 = nl_graph_canvas_get_zoom (f->canvas), z, x0, y0, x1, y1, cx, cy;

  nl_graph_canvas_zoom_in (f->canvas);
  g_assert_cmpfloat (nl_graph_canvas_get_zoom (f->canvas), >, z0 * 1.1);
  nl_graph_canvas_zoom_out (f->canvas);
  nl_graph_canvas_zoom_out (f->canvas);
  g_assert_cmpfloat (nl_graph_canvas_get_zoom (f->canvas), <, z0 * 0.9);

  /* the pure function keeps the canvas point under the pointer */
  for (int k = 0; k < 20; k++)
    {
      double zz = 0.1 + k * 0.15, z2 = zz * (k % 2 ? 1.7 : 0.6), wx = 13 + 37 * k, wy = 400 - 11 * k;
      _nl_canvas_zoom_about (zz, 50 - k, -20 + 3 * k, 800, 600, wx, wy, z2, &cx, &cy);
      g_assert_cmpfloat (fabs ((50 - k) + (wx - 400) / zz - (cx + (wx - 400) / z2)), <, 1e-9);
      g_assert_cmpfloat (fabs ((-20 + 3 * k) + (wy - 300) / zz - (cy + (wy - 300) / z2)), <, 1e-9);
    }

  /* Ctrl+scroll through the canvas: the same, and zoom changes */
  z = nl_graph_canvas_get_zoom (f->canvas);
  nl_graph_canvas_widget_to_canvas (f->canvas, 120, 90, &x0, &y0);
  _nl_graph_canvas_scroll (f->canvas, 0, -2, GDK_CONTROL_MASK, TRUE, 120, 90);
  g_assert_cmpfloat (nl_graph_canvas_get_zoom (f->canvas), >, z * 1.2);
  nl_graph_canvas_widget_to_canvas (f->canvas, 120, 90, &x1, &y1);
  g_assert_cmpfloat (fabs (x1 - x0), <, 1e-6);
  g_assert_cmpfloat (fabs (y1 - y0), <, 1e-6);
  _nl_graph_canvas_scroll (f->canvas, 0, 30, GDK_CONTROL_MASK, FALSE, 700, 500);
  g_assert_cmpfloat (nl_graph_canvas_get_zoom (f->canvas), <, z);

  /* plain scroll pans down 48 px a notch, Shift sideways */
  z = nl_graph_canvas_get_zoom (f->canvas);
  nl_graph_canvas_get_view (f->canvas, NULL, &x0, &y0);
  _nl_graph_canvas_scroll (f->canvas, 0, 1, 0, TRUE, 0, 0);
  nl_graph_canvas_get_view (f->canvas, NULL, &x1, &y1);
  g_assert_cmpfloat (fabs (y1 - y0 - 48 / z), <, 1e-6);
  g_assert_cmpfloat (x1, ==, x0);
  _nl_graph_canvas_scroll (f->canvas, 0, 1, GDK_SHIFT_MASK, TRUE, 0, 0);
  nl_graph_canvas_get_view (f->canvas, NULL, &x0, &y0);
  g_assert_cmpfloat (fabs (x0 - x1 - 48 / z), <, 1e-6);
  g_assert_cmpfloat (nl_graph_canvas_get_zoom (f->canvas), ==, z);

  /* keys: + and - zoom, arrows pan, Ctrl+0 fits again */
  g_assert_true (_nl_graph_canvas_key (f->canvas, GDK_KEY_plus, 0));
  g_assert_cmpfloat (nl_graph_canvas_get_zoom (f->canvas), >, z);
  g_assert_true (_nl_graph_canvas_key (f->canvas, GDK_KEY_minus, 0));
  g_assert_true (_nl_graph_canvas_key (f->canvas, GDK_KEY_minus, 0));
  g_assert_cmpfloat (nl_graph_canvas_get_zoom (f->canvas), <, z);
  nl_graph_canvas_get_view (f->canvas, NULL, &x0, &y0);
  g_assert_true (_nl_graph_canvas_key (f->canvas, GDK_KEY_Right, 0));
  nl_graph_canvas_get_view (f->canvas, NULL, &x1, &y1);
  g_assert_cmpfloat (x1, >, x0);
  g_assert_false (_nl_graph_canvas_key (f->canvas, GDK_KEY_0, 0));
  g_assert_true (_nl_graph_canvas_key (f->canvas, GDK_KEY_0, GDK_CONTROL_MASK));
  g_assert_cmpfloat (fabs (nl_graph_canvas_get_zoom (f->canvas) - z0), <, 1e-9);

  /* clamped */
  nl_graph_canvas_set_view (f->canvas, 1000, 0, 0);
  g_assert_cmpfloat (nl_graph_canvas_get_zoom (f->canvas), ==, NL_GRAPH_CANVAS_MAX_ZOOM);
  nl_graph_canvas_set_view (f->canvas, 0, 0, 0);
  g_assert_cmpfloat (nl_graph_canvas_get_zoom (f->canvas), ==, NL_GRAPH_CANVAS_MIN_ZOOM);

  /* a drag on empty space pans by the dragged distance */
  nl_graph_canvas_set_view (f->canvas, 0.5, -2000, -2000);
  _nl_graph_canvas_press (f->canvas, 100, 100, 0);
  _nl_graph_canvas_drag_to (f->canvas, 150, 110);
  _nl_graph_canvas_release (f->canvas, 200, 120);
  nl_graph_canvas_get_view (f->canvas, NULL, &x1, &y1);
  g_assert_cmpfloat (fabs (x1 - (-2000 - 100 / 0.5)), <, 1e-9);
  g_assert_cmpfloat (fabs (y1 - (-2000 - 20 / 0.5)), <, 1e-9);
}

static void
test_move_undo (Fixture *f, gconstpointer data)
{
  const NlNode *conv1 = nl_network_node (net (f), 1), *pool1 = nl_network_node (net (f), 3);
  double x0 = conv1->x, y0 = conv1->y, px = pool1->x, py = pool1->y, wx, wy;
  int n = 0;
  const int *sel;

  nl_graph_canvas_set_view (f->canvas, 0.8, conv1->x + 100, conv1->y + 36);
  card_centre (f, 1, &wx, &wy);
  _nl_graph_canvas_press (f->canvas, wx, wy, 0);
  for (int k = 1; k <= 5; k++)
    _nl_graph_canvas_drag_to (f->canvas, wx + 8 * k, wy + 6 * k);
  _nl_graph_canvas_release (f->canvas, wx + 40, wy + 30);
  g_assert_cmpfloat (fabs (conv1->x - (x0 + 40 / 0.8)), <, 1e-9);
  g_assert_cmpfloat (fabs (conv1->y - (y0 + 30 / 0.8)), <, 1e-9);
  g_assert_cmpfloat (pool1->x, ==, px);
  g_assert_cmpfloat (pool1->y, ==, py);
  sel = nl_network_doc_get_selection (f->doc, &n);
  g_assert_cmpint (n, ==, 1);
  g_assert_cmpint (sel[0], ==, 1);

  /* one undo step restores it */
  g_assert_true (nl_network_doc_can_undo (f->doc));
  nl_network_doc_undo (f->doc);
  conv1 = nl_network_node (net (f), 1);
  g_assert_cmpfloat (fabs (conv1->x - x0), <, 1e-9);
  g_assert_cmpfloat (fabs (conv1->y - y0), <, 1e-9);
  g_assert_false (nl_network_doc_can_undo (f->doc));

  /* two selected cards move together */
  {
    int two[2] = { 1, 3 };
    nl_network_doc_select (f->doc, two, 2);
  }
  card_centre (f, 3, &wx, &wy);
  _nl_graph_canvas_press (f->canvas, wx, wy, 0);
  _nl_graph_canvas_release (f->canvas, wx - 16, wy);
  g_assert_cmpfloat (fabs (nl_network_node (net (f), 1)->x - (x0 - 20)), <, 1e-9);
  g_assert_cmpfloat (fabs (nl_network_node (net (f), 3)->x - (px - 20)), <, 1e-9);
  nl_network_doc_undo (f->doc);
  g_assert_cmpfloat (fabs (nl_network_node (net (f), 3)->x - px), <, 1e-9);
  g_assert_false (nl_network_doc_can_undo (f->doc));

  /* a press and release without moving changes nothing */
  _nl_graph_canvas_press (f->canvas, wx, wy, 0);
  _nl_graph_canvas_drag_to (f->canvas, wx + 1, wy + 1);
  _nl_graph_canvas_release (f->canvas, wx + 1, wy);
  g_assert_false (nl_network_doc_can_undo (f->doc));
}

static void
click (Fixture *f, double wx, double wy, GdkModifierType mods)
{
  _nl_graph_canvas_press (f->canvas, wx, wy, mods);
  _nl_graph_canvas_release (f->canvas, wx, wy);
}

static void
test_select (Fixture *f, gconstpointer data)
{
  double wx, wy, ax, ay, bx, by;
  const int *sel;
  int n = 0, edge, n_edges = (int) net (f)->edges->len;

  card_centre (f, 2, &wx, &wy);
  click (f, wx, wy, 0);
  sel = nl_network_doc_get_selection (f->doc, &n);
  g_assert_cmpint (n, ==, 1);
  g_assert_cmpint (sel[0], ==, 2);
  card_centre (f, 4, &wx, &wy);
  click (f, wx, wy, GDK_SHIFT_MASK);
  sel = nl_network_doc_get_selection (f->doc, &n);
  g_assert_cmpint (n, ==, 2);
  g_assert_cmpint (sel[0], ==, 2);
  g_assert_cmpint (sel[1], ==, 4);
  click (f, wx, wy, GDK_CONTROL_MASK);   /* toggles off */
  sel = nl_network_doc_get_selection (f->doc, &n);
  g_assert_cmpint (n, ==, 1);
  g_assert_cmpint (sel[0], ==, 2);

  /* a click on empty space clears it */
  click (f, 5, 5, 0);
  nl_network_doc_get_selection (f->doc, &n);
  g_assert_cmpint (n, ==, 0);

  /* Shift+drag on empty space: a rubber band over cards 5..7 */
  card_centre (f, 5, &ax, &ay);
  card_centre (f, 7, &bx, &by);
  _nl_graph_canvas_press (f->canvas, ax - 200, ay - 5, GDK_SHIFT_MASK);
  g_assert_cmpint (f->canvas->mode, ==, NL_DRAG_RUBBER);
  _nl_graph_canvas_drag_to (f->canvas, ax - 100, ay);
  _nl_graph_canvas_release (f->canvas, bx + 10, by + 5);
  sel = nl_network_doc_get_selection (f->doc, &n);
  g_assert_cmpint (n, ==, 3);
  g_assert_cmpint (sel[0], ==, 5);
  g_assert_cmpint (sel[2], ==, 7);
  g_assert_false (nl_network_doc_can_undo (f->doc));

  /* a wire: click between pool1 and conv2, in the gap between the cards
   * (at zoom 1 the gap is wider than the ports' grab radius) */
  nl_graph_canvas_set_view (f->canvas, 1.0, 100, 386);
  edge = find_edge (f, 3, 4);
  g_assert_cmpint (edge, >=, 0);
  port_widget (f, 3, 0, TRUE, &ax, &ay);
  port_widget (f, 4, 0, FALSE, &bx, &by);
  g_assert_cmpint (nl_graph_canvas_edge_at (f->canvas, (ax + bx) / 2, (ay + by) / 2), ==, edge);
  click (f, (ax + bx) / 2, (ay + by) / 2, 0);
  g_assert_cmpint (nl_graph_canvas_get_selected_edge (f->canvas), ==, edge);
  nl_network_doc_get_selection (f->doc, &n);
  g_assert_cmpint (n, ==, 0);
  g_assert_cmpfloat (drawn (f), >, 0.02);
  /* Delete removes the wire, as one undo step */
  g_assert_true (_nl_graph_canvas_key (f->canvas, GDK_KEY_Delete, 0));
  g_assert_cmpint ((int) net (f)->edges->len, ==, n_edges - 1);
  g_assert_cmpint (find_edge (f, 3, 4), ==, -1);
  g_assert_cmpint (nl_graph_canvas_get_selected_edge (f->canvas), ==, -1);
  nl_network_doc_undo (f->doc);
  g_assert_cmpint (find_edge (f, 3, 4), >=, 0);

  /* Delete with cards selected removes them */
  nl_graph_canvas_fit (f->canvas);
  card_centre (f, 10, &wx, &wy);
  click (f, wx, wy, 0);
  g_assert_true (_nl_graph_canvas_key (f->canvas, GDK_KEY_Delete, 0));
  g_assert_cmpint (nl_network_n_nodes (net (f)), ==, 10);
  nl_network_doc_undo (f->doc);
  g_assert_cmpint (nl_network_n_nodes (net (f)), ==, 11);

  /* focus_node selects and centres */
  nl_graph_canvas_focus_node (f->canvas, 8);
  sel = nl_network_doc_get_selection (f->doc, &n);
  g_assert_cmpint (n, ==, 1);
  g_assert_cmpint (sel[0], ==, 8);
  g_assert_cmpint (nl_graph_canvas_node_at (f->canvas, gtk_widget_get_width (GTK_WIDGET (f->canvas)) / 2.0,
                                            gtk_widget_get_height (GTK_WIDGET (f->canvas)) / 2.0), ==, 8);
}

static void
test_connect (Fixture *f, gconstpointer data)
{
  g_autofree char *before = NULL, *after = NULL;
  double ax, ay, bx, by;
  int edge = find_edge (f, 9, 10), n_edges;

  /* cut relu3 -> fc2, then wire it again by dragging port to port */
  nl_network_doc_disconnect (f->doc, edge);
  g_assert_cmpint (find_edge (f, 9, 10), ==, -1);
  n_edges = (int) net (f)->edges->len;
  port_widget (f, 9, 0, TRUE, &ax, &ay);
  port_widget (f, 10, 0, FALSE, &bx, &by);
  _nl_graph_canvas_press (f->canvas, ax, ay, 0);
  g_assert_cmpint (f->canvas->mode, ==, NL_DRAG_WIRE);
  _nl_graph_canvas_drag_to (f->canvas, (ax + bx) / 2, (ay + by) / 2 + 20);
  _nl_graph_canvas_drag_to (f->canvas, bx + 1, by + 1);
  g_assert_cmpint (f->canvas->wire_to, ==, 10);
  g_assert_true (f->canvas->wire_ok);
  g_assert_cmpfloat (drawn (f), >, 0.02);
  _nl_graph_canvas_release (f->canvas, bx + 1, by + 1);
  g_assert_cmpint ((int) net (f)->edges->len, ==, n_edges + 1);
  g_assert_cmpint (find_edge (f, 9, 10), >=, 0);
  g_assert_cmpuint (f->problems->len, ==, 0);
  nl_network_doc_undo (f->doc);
  g_assert_cmpint (find_edge (f, 9, 10), ==, -1);
  nl_network_doc_redo (f->doc);

  /* fc2's output onto conv1's input, which is taken: refused, nothing changes */
  before = nl_network_to_json (net (f));
  port_widget (f, 10, 0, TRUE, &ax, &ay);
  port_widget (f, 1, 0, FALSE, &bx, &by);
  _nl_graph_canvas_press (f->canvas, ax, ay, 0);
  _nl_graph_canvas_drag_to (f->canvas, bx, by);
  g_assert_cmpint (f->canvas->wire_to, ==, 1);
  g_assert_false (f->canvas->wire_ok);
  _nl_graph_canvas_release (f->canvas, bx, by);
  g_assert_cmpuint (f->problems->len, ==, 1);
  g_assert_nonnull (strstr (g_ptr_array_index (f->problems, 0), "already connected"));
  after = nl_network_to_json (net (f));
  g_assert_cmpstr (before, ==, after);

  /* onto the Input card (no inputs at all): refused with the doc's reason */
  card_centre (f, 0, &bx, &by);
  _nl_graph_canvas_press (f->canvas, ax, ay, 0);
  _nl_graph_canvas_release (f->canvas, bx, by);
  g_assert_cmpuint (f->problems->len, ==, 2);
  g_assert_nonnull (strstr (g_ptr_array_index (f->problems, 1), "Input"));
  g_clear_pointer (&after, g_free);
  after = nl_network_to_json (net (f));
  g_assert_cmpstr (before, ==, after);

  /* released on empty space: no wire, no problem */
  _nl_graph_canvas_press (f->canvas, ax, ay, 0);
  _nl_graph_canvas_release (f->canvas, ax + 300, ay + 40);
  g_assert_cmpuint (f->problems->len, ==, 2);
  g_assert_cmpint ((int) net (f)->edges->len, ==, n_edges + 1);
}

static void
test_variadic_ports (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  int add = nl_network_doc_add_node (f->doc, "Add", 400, 500, &error);
  double ax, ay, bx, by;
  g_assert_no_error (error);
  g_assert_cmpint (_nl_graph_canvas_n_input_ports (f->canvas, add), ==, 1);
  g_assert_cmpint (_nl_graph_canvas_n_input_ports (f->canvas, 0), ==, 0);
  g_assert_cmpint (_nl_graph_canvas_n_input_ports (f->canvas, 1), ==, 1);
  g_assert_true (nl_network_doc_connect (f->doc, 3, 0, add, 0, &error));
  g_assert_cmpint (_nl_graph_canvas_n_input_ports (f->canvas, add), ==, 2);
  /* dropping a wire on the card body takes the free port */
  nl_graph_canvas_set_view (f->canvas, 0.5, 300, 500);
  port_widget (f, 5, 0, TRUE, &ax, &ay);
  card_centre (f, add, &bx, &by);
  _nl_graph_canvas_press (f->canvas, ax, ay, 0);
  _nl_graph_canvas_release (f->canvas, bx, by);
  g_assert_cmpuint (f->problems->len, ==, 0);
  g_assert_cmpint (nl_network_n_connected (net (f), add), ==, 2);
  g_assert_cmpint (_nl_graph_canvas_n_input_ports (f->canvas, add), ==, 3);
}

static void
test_drop (Fixture *f, gconstpointer data)
{
  int n0 = nl_network_n_nodes (net (f)), node, n = 0;
  const NlNode *nd;
  const int *sel;
  double x, y;

  nl_graph_canvas_widget_to_canvas (f->canvas, 700, 300, &x, &y);
  g_assert_true (_nl_graph_canvas_drop_string (f->canvas, "netloom-op:Dense", 700, 300));
  g_assert_cmpint (nl_network_n_nodes (net (f)), ==, n0 + 1);
  node = nl_graph_canvas_node_at (f->canvas, 700, 300);
  g_assert_cmpint (node, >=, 0);
  nd = nl_network_node (net (f), node);
  g_assert_cmpstr (nd->def->name, ==, "Dense");
  /* centred on the drop point */
  g_assert_cmpfloat (fabs (nd->x + NL_CARD_WIDTH / 2 - x), <, 1e-6);
  g_assert_cmpfloat (fabs (nd->y + NL_CARD_HEIGHT / 2 - y), <, 1e-6);
  sel = nl_network_doc_get_selection (f->doc, &n);
  g_assert_cmpint (n, ==, 1);
  g_assert_cmpint (sel[0], ==, node);

  g_assert_false (_nl_graph_canvas_drop_string (f->canvas, "netloom-op:NoSuchOp", 100, 100));
  g_assert_cmpuint (f->problems->len, ==, 1);
  g_assert_false (_nl_graph_canvas_drop_string (f->canvas, "some text", 100, 100));
  g_assert_cmpuint (f->problems->len, ==, 1);
  g_assert_cmpint (nl_network_n_nodes (net (f)), ==, n0 + 1);
}

static void
test_activate (Fixture *f, gconstpointer data)
{
  double wx, wy;
  card_centre (f, 6, &wx, &wy);
  _nl_graph_canvas_double_click (f->canvas, wx, wy);
  g_assert_cmpint (f->activated, ==, 6);
  f->activated = -1;
  _nl_graph_canvas_double_click (f->canvas, 3, 3);
  g_assert_cmpint (f->activated, ==, -1);
}

static guint
count_color (GdkTexture *tex, const GdkRGBA *c)
{
  int w = gdk_texture_get_width (tex), h = gdk_texture_get_height (tex);
  g_autofree guint32 *px = g_new (guint32, (gsize) w * h);
  guint count = 0;
  gdk_texture_download (tex, (guchar *) px, (gsize) w * 4);
  for (gsize i = 0; i < (gsize) w * h; i++)
    {
      /* memory format: premultiplied BGRA in a little-endian word */
      int r = (px[i] >> 16) & 255, g = (px[i] >> 8) & 255, b = px[i] & 255;
      if (abs (r - (int) (c->red * 255)) < 12 && abs (g - (int) (c->green * 255)) < 12
          && abs (b - (int) (c->blue * 255)) < 12)
        count++;
    }
  return count;
}

static void
test_analysis (Fixture *f, gconstpointer data)
{
  g_autoptr (NlAnalysis) a = nl_analysis_new (net (f), 1, 0);
  g_autoptr (GdkTexture) plain = NULL, marked = NULL;
  NlCardText *t;
  guint before, after;

  nl_graph_canvas_set_view (f->canvas, 1.0, 100, 136);
  nl_test_pump (100);
  plain = nl_widget_render_texture (GTK_WIDGET (f->canvas), NULL);
  g_assert_nonnull (plain);
  before = count_color (plain, &f->canvas->colors.error);

  g_assert_cmpint (a->n_nodes, ==, 11);
  g_free (a->nodes[1].error);
  a->nodes[1].error = g_strdup ("conv1: made-up trouble for the test");
  nl_graph_canvas_set_analysis (f->canvas, a);
  g_clear_pointer (&a, nl_analysis_free);   /* copied: freeing it is fine */
  g_assert_cmpstr (f->canvas->an[1].error, ==, "conv1: made-up trouble for the test");
  g_assert_nonnull (strstr (f->canvas->an[2].info, "20×24×24"));
  g_assert_nonnull (strstr (f->canvas->an[1].info, "params"));
  nl_test_pump (100);
  marked = nl_widget_render_texture (GTK_WIDGET (f->canvas), NULL);
  after = count_color (marked, &f->canvas->colors.error);
  /* the error border and message are drawn in the error colour */
  g_assert_cmpuint (after, >, before + 200);
  t = g_ptr_array_index (f->canvas->texts, 2);
  g_assert_nonnull (t);
  g_assert_nonnull (strstr (t->info_text, "20×24×24"));
  g_assert_nonnull (strstr (t->summary_text, "relu"));

  nl_graph_canvas_set_analysis (f->canvas, NULL);
  g_assert_cmpint (f->canvas->n_an, ==, 0);
}

static void
test_export (Fixture *f, gconstpointer data)
{
  g_autofree char *dir = g_dir_make_tmp ("nl-canvas-XXXXXX", NULL);
  g_autofree char *png = g_build_filename (dir, "lenet.png", NULL);
  g_autofree char *svg = g_build_filename (dir, "lenet.svg", NULL);
  g_autofree char *bad = g_build_filename (dir, "no", "such", "dir.png", NULL);
  g_autofree char *svg_text = NULL, *png_data = NULL;
  g_autoptr (GError) error = NULL;
  g_autoptr (GdkTexture) tex = NULL;
  g_autoptr (GFile) file = NULL;
  g_autoptr (NlNetworkDoc) empty = NULL;
  graphene_rect_t b;
  gsize len = 0;

  /* zoomed in on one card: the export still has the whole diagram */
  nl_graph_canvas_set_view (f->canvas, 2.0, 0, 0);
  g_assert_true (nl_graph_canvas_get_bounds (f->canvas, &b));
  g_assert_true (nl_graph_canvas_export_png (f->canvas, png, &error));
  g_assert_no_error (error);
  file = g_file_new_for_path (png);
  tex = gdk_texture_new_from_file (file, &error);
  g_assert_no_error (error);
  g_assert_cmpint (gdk_texture_get_width (tex), >=, b.size.width);
  g_assert_cmpint (gdk_texture_get_height (tex), >=, b.size.height);
  g_assert_true (g_file_get_contents (png, &png_data, &len, NULL));
  g_assert_cmpuint (len, >, 10000);

  g_assert_true (nl_graph_canvas_export_svg (f->canvas, svg, &error));
  g_assert_no_error (error);
  g_assert_true (g_file_get_contents (svg, &svg_text, &len, NULL));
  g_assert_cmpuint (len, >, 5000);
  g_assert_nonnull (strstr (svg_text, "<svg"));

  g_assert_false (nl_graph_canvas_export_png (f->canvas, bad, &error));
  g_assert_nonnull (error);
  g_assert_nonnull (strstr (error->message, "dir.png"));
  g_clear_error (&error);

  empty = nl_network_doc_new (NULL);
  nl_graph_canvas_set_document (f->canvas, empty);
  g_assert_false (nl_graph_canvas_export_svg (f->canvas, svg, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA);
  nl_graph_canvas_set_document (f->canvas, f->doc);
  nl_test_remove_tree (dir);
}

static void
test_large_view (Fixture *f, gconstpointer data)
{
  /* many cards, most out of view: zoom levels with and without text draw */
  NlNetwork *big = nl_network_new ("big");
  g_autoptr (GError) error = NULL;
  for (int i = 0; i < 400; i++)
    {
      g_autofree char *id = g_strdup_printf ("d%d", i);
      int k = nl_network_add_node (big, id, i == 0 ? "Input" : "Dense", &error);
      g_assert_no_error (error);
      nl_network_node (big, k)->x = (i % 20) * 260;
      nl_network_node (big, k)->y = (i / 20) * 120;
      if (i > 0)
        g_assert_true (nl_network_connect (big, i - 1, 0, i, 0, &error));
    }
  nl_network_doc_set_network (f->doc, big);
  nl_graph_canvas_set_view (f->canvas, 1.0, 0, 0);
  nl_test_pump (20);
  g_assert_cmpfloat (drawn (f), >, 0.05);
  nl_graph_canvas_fit (f->canvas);
  g_assert_cmpfloat (nl_graph_canvas_get_zoom (f->canvas), <, NL_SHAPE_MIN_ZOOM);
  nl_test_pump (20);
  g_assert_cmpfloat (drawn (f), >, 0.05);
  /* text is laid out only for cards that were drawn with text */
  g_assert_cmpuint (f->canvas->texts->len, <=, 400);
  {
    guint made = 0;
    for (guint i = 0; i < f->canvas->texts->len; i++)
      made += g_ptr_array_index (f->canvas->texts, i) != NULL;
    g_assert_cmpuint (made, >, 0);
    g_assert_cmpuint (made, <, 40);
  }
}

int
main (int argc, char **argv)
{
  nl_test_gui_init (&argc, &argv);
  g_test_add ("/graph-canvas/fit", Fixture, NULL, setup, test_fit, teardown);
  g_test_add ("/graph-canvas/zoom", Fixture, NULL, setup, test_zoom, teardown);
  g_test_add ("/graph-canvas/move-undo", Fixture, NULL, setup, test_move_undo, teardown);
  g_test_add ("/graph-canvas/select", Fixture, NULL, setup, test_select, teardown);
  g_test_add ("/graph-canvas/connect", Fixture, NULL, setup, test_connect, teardown);
  g_test_add ("/graph-canvas/variadic-ports", Fixture, NULL, setup, test_variadic_ports, teardown);
  g_test_add ("/graph-canvas/drop", Fixture, NULL, setup, test_drop, teardown);
  g_test_add ("/graph-canvas/activate", Fixture, NULL, setup, test_activate, teardown);
  g_test_add ("/graph-canvas/analysis", Fixture, NULL, setup, test_analysis, teardown);
  g_test_add ("/graph-canvas/export", Fixture, NULL, setup, test_export, teardown);
  g_test_add ("/graph-canvas/large-view", Fixture, NULL, setup, test_large_view, teardown);
  return g_test_run ();
}
