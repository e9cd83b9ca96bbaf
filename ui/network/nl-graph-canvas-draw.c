/* nl-graph-canvas-draw.c — the canvas's snapshot and its PNG / SVG export.
 *
 * Cards are render nodes (rounded clip + colour, border, text layouts kept
 * across frames) under one scale transform; every wire goes into a single
 * Cairo node in pixel coordinates. Only what intersects the view is drawn,
 * and the level of detail drops with the zoom: no text below
 * NL_TEXT_MIN_ZOOM, plain rectangles and no ports below NL_SHAPE_MIN_ZOOM. */
#include "ui/network/nl-graph-canvas-private.h"
#include <glib/gi18n.h>
#include "core/nl-atomic-file.h"
#include "ui/widgets/nl-cairo-bytes.h"

#include <adwaita.h>
#include <cairo-svg.h>
#include <math.h>
#include <string.h>

/* ---- colours ---- */

static void
lookup (GtkStyleContext *ctx, const char *name, const char *fallback, GdkRGBA *out)
{
  G_GNUC_BEGIN_IGNORE_DEPRECATIONS
  if (!gtk_style_context_lookup_color (ctx, name, out))
    gdk_rgba_parse (out, fallback);
  G_GNUC_END_IGNORE_DEPRECATIONS
}

static GdkRGBA
over (GdkRGBA top, GdkRGBA base)
{
  /* flatten a translucent colour (Adwaita's dark card_bg_color) onto the
   * background so that wires do not show through cards */
  GdkRGBA r = {
    top.red * top.alpha + base.red * (1 - top.alpha),
    top.green * top.alpha + base.green * (1 - top.alpha),
    top.blue * top.alpha + base.blue * (1 - top.alpha),
    1,
  };
  return r;
}

void
_nl_graph_canvas_update_colors (NlGraphCanvas *c)
{
  NlCanvasColors *k = &c->colors;
  GtkStyleContext *ctx;
  gboolean dark = adw_style_manager_get_dark (adw_style_manager_get_default ());
  G_GNUC_BEGIN_IGNORE_DEPRECATIONS
  ctx = gtk_widget_get_style_context (GTK_WIDGET (c));
  G_GNUC_END_IGNORE_DEPRECATIONS
  lookup (ctx, "window_bg_color", dark ? "#242424" : "#fafafa", &k->bg);
  lookup (ctx, "window_fg_color", dark ? "#ffffff" : "rgba(0,0,0,0.8)", &k->fg);
  lookup (ctx, "card_bg_color", dark ? "rgba(255,255,255,0.08)" : "#ffffff", &k->card);
  lookup (ctx, "accent_bg_color", "#3584e4", &k->accent);
  lookup (ctx, "error_color", dark ? "#ff7b63" : "#c01c28", &k->error);
  k->bg.alpha = 1;
  k->card = over (k->card, k->bg);
  k->dim = k->fg;
  k->dim.alpha *= 0.6f;
  k->border = k->fg;
  k->border.alpha = 0.18f;
  k->grid = k->fg;
  k->grid.alpha = 0.16f;
}

/* One colour per operator category (palette order of nl-op.h), GNOME palette. */
static const struct {
  const char *category;
  GdkRGBA color;
} category_colors[] = {
  { "Input", { 0.208f, 0.518f, 0.894f, 1 } },         /* blue */
  { "Core", { 0.569f, 0.255f, 0.675f, 1 } },          /* purple */
  { "Convolution", { 1.000f, 0.471f, 0.000f, 1 } },   /* orange */
  { "Pooling", { 0.898f, 0.647f, 0.039f, 1 } },       /* yellow */
  { "Normalization", { 0.129f, 0.565f, 0.643f, 1 } }, /* teal */
  { "Activation", { 0.180f, 0.761f, 0.494f, 1 } },    /* green */
  { "Structure", { 0.596f, 0.416f, 0.267f, 1 } },     /* brown */
  { "Loss", { 0.863f, 0.541f, 0.867f, 1 } },          /* pink */
};

static const GdkRGBA *
category_color (const NlOpDef *def)
{
  static const GdkRGBA grey = { 0.6f, 0.6f, 0.6f, 1 };
  for (guint i = 0; i < G_N_ELEMENTS (category_colors); i++)
    if (def->category && g_str_equal (def->category, category_colors[i].category))
      return &category_colors[i].color;
  return &grey;
}

/* ---- card text ---- */

void
_nl_card_text_free (gpointer p)
{
  NlCardText *t = p;
  if (!t)
    return;
  g_free (t->title_text);
  g_free (t->summary_text);
  g_free (t->info_text);
  g_clear_object (&t->title);
  g_clear_object (&t->summary);
  g_clear_object (&t->info);
  g_free (t);
}

static void
set_layout_text (NlGraphCanvas *c, char **text, PangoLayout **layout, char *value,
                 double px, gboolean markup)
{
  if (*layout && g_strcmp0 (*text, value) == 0)
    {
      g_free (value);
      return;
    }
  g_free (*text);
  *text = value;
  if (!*layout)
    {
      PangoContext *pc = gtk_widget_get_pango_context (GTK_WIDGET (c));
      PangoFontDescription *fd = pango_font_description_copy (pango_context_get_font_description (pc));
      pango_font_description_set_absolute_size (fd, px * PANGO_SCALE);
      *layout = pango_layout_new (pc);
      pango_layout_set_font_description (*layout, fd);
      pango_layout_set_width (*layout, (int) ((NL_CARD_WIDTH - 22) * PANGO_SCALE));
      pango_layout_set_ellipsize (*layout, PANGO_ELLIPSIZE_END);
      pango_layout_set_single_paragraph_mode (*layout, TRUE);
      pango_font_description_free (fd);
    }
  if (markup)
    pango_layout_set_markup (*layout, value, -1);
  else
    pango_layout_set_text (*layout, value, -1);
}

static NlCardText *
card_text (NlGraphCanvas *c, const NlNetwork *net, int i)
{
  NlCardText *t;
  const NlNode *nd;
  if ((int) c->texts->len <= i)
    g_ptr_array_set_size (c->texts, nl_network_n_nodes (net));
  t = g_ptr_array_index (c->texts, i);
  if (!t)
    {
      t = g_new0 (NlCardText, 1);
      t->stamp = c->stamp - 1;
      g_ptr_array_index (c->texts, i) = t;
    }
  if (t->stamp == c->stamp)
    return t;
  nd = nl_network_node (net, i);
  set_layout_text (c, &t->title_text, &t->title,
                   g_markup_printf_escaped ("<b>%s</b>  <span alpha=\"65%%\">%s</span>", nd->def->name, nd->id),
                   13, TRUE);
  set_layout_text (c, &t->summary_text, &t->summary, nl_catalog_node_summary (nd), 11.5, FALSE);
  t->info_is_error = i < c->n_an && c->an[i].error;
  set_layout_text (c, &t->info_text, &t->info,
                   g_strdup (i >= c->n_an ? "" : t->info_is_error ? c->an[i].error : c->an[i].info ? c->an[i].info : ""),
                   11.5, FALSE);
  t->stamp = c->stamp;
  return t;
}

/* ---- pieces ---- */

static void
append_circle (GtkSnapshot *s, double x, double y, double r, const GdkRGBA *fill,
               const GdkRGBA *ring, double ring_width)
{
  GskRoundedRect rr;
  gsk_rounded_rect_init_from_rect (&rr, &GRAPHENE_RECT_INIT (x - r, y - r, 2 * r, 2 * r), r);
  gtk_snapshot_push_rounded_clip (s, &rr);
  gtk_snapshot_append_color (s, fill, &rr.bounds);
  gtk_snapshot_pop (s);
  if (ring)
    {
      float w[4] = { ring_width, ring_width, ring_width, ring_width };
      GdkRGBA cs[4] = { *ring, *ring, *ring, *ring };
      gtk_snapshot_append_border (s, &rr, w, cs);
    }
}

static void
append_layout_at (GtkSnapshot *s, PangoLayout *layout, double x, double y, const GdkRGBA *color)
{
  gtk_snapshot_save (s);
  gtk_snapshot_translate (s, &GRAPHENE_POINT_INIT (x, y));
  gtk_snapshot_append_layout (s, layout, color);
  gtk_snapshot_restore (s);
}

static void
draw_card (NlGraphCanvas *c, GtkSnapshot *s, const NlNetwork *net, int i, const NlCanvasView *v,
           gboolean selected)
{
  const NlCanvasColors *k = &c->colors;
  const NlNode *nd = nl_network_node (net, i);
  const GdkRGBA *cat = category_color (nd->def);
  gboolean error = i < c->n_an && c->an[i].error;
  gboolean text = v->export || v->zoom >= NL_TEXT_MIN_ZOOM;
  graphene_rect_t r = GRAPHENE_RECT_INIT (nd->x, nd->y, NL_CARD_WIDTH, NL_CARD_HEIGHT);
  GskRoundedRect rr;
  float bw;
  GdkRGBA bc;
  int np;

  if (!v->export && v->zoom < NL_SHAPE_MIN_ZOOM)
    {
      /* a few pixels wide: colour says all there is to say; at least two
       * pixels tall so that far out a card does not vanish */
      double min = 2 / v->zoom;
      graphene_rect_t big = GRAPHENE_RECT_INIT (nd->x, nd->y, NL_CARD_WIDTH, MAX (NL_CARD_HEIGHT, min));
      gtk_snapshot_append_color (s, selected ? &k->accent : error ? &k->error : &k->card, &big);
      if (NL_CARD_WIDTH * v->zoom >= 8)
        gtk_snapshot_append_color (s, cat, &GRAPHENE_RECT_INIT (nd->x, nd->y, 24, big.size.height));
      else if (!selected && !error)
        gtk_snapshot_append_color (s, cat, &big);
      return;
    }

  gsk_rounded_rect_init_from_rect (&rr, &r, NL_CARD_RADIUS);
  gtk_snapshot_push_rounded_clip (s, &rr);
  gtk_snapshot_append_color (s, &k->card, &r);
  gtk_snapshot_append_color (s, cat, &GRAPHENE_RECT_INIT (nd->x, nd->y, 6, NL_CARD_HEIGHT));
  gtk_snapshot_pop (s);

  bw = selected ? 2.5f : error ? 2.0f : 1.0f;
  bc = selected ? k->accent : error ? k->error : k->border;
  {
    float w[4] = { bw, bw, bw, bw };
    GdkRGBA cs[4] = { bc, bc, bc, bc };
    gtk_snapshot_append_border (s, &rr, w, cs);
  }
  if (selected && error)
    {
      /* keep the error visible on a selected card: an outer error ring */
      GskRoundedRect outer = rr;
      float w[4] = { 2, 2, 2, 2 };
      GdkRGBA cs[4] = { k->error, k->error, k->error, k->error };
      gsk_rounded_rect_shrink (&outer, -3, -3, -3, -3);
      gtk_snapshot_append_border (s, &outer, w, cs);
    }

  if (text)
    {
      NlCardText *t = card_text (c, net, i);
      append_layout_at (s, t->title, nd->x + 14, nd->y + 7, &k->fg);
      append_layout_at (s, t->summary, nd->x + 14, nd->y + 30, &k->dim);
      append_layout_at (s, t->info, nd->x + 14, nd->y + 49, t->info_is_error ? &k->error : &k->dim);
    }

  np = _nl_graph_canvas_n_input_ports (c, i);
  for (int p = 0; p < np; p++)
    {
      double px, py;
      gboolean used = p < 32 && (c->port_used[i] & (1u << p));
      _nl_graph_canvas_input_port_pos (c, i, p, &px, &py);
      if (used)
        append_circle (s, px, py, NL_PORT_RADIUS, &k->dim, NULL, 0);
      else
        append_circle (s, px, py, NL_PORT_RADIUS, &k->card, &k->dim, 1.5);
    }
  if (nd->def->n_outputs > 0)
    {
      double px, py;
      _nl_graph_canvas_output_port_pos (c, i, &px, &py);
      append_circle (s, px, py, NL_PORT_RADIUS, cat, &k->card, 1.5);
    }
}

static void
draw_grid (NlGraphCanvas *c, GtkSnapshot *s, const NlCanvasView *v)
{
  double step = 24 * v->zoom;
  int tile;
  double x0, y0;
  while (step < 14)
    step *= 2;
  /* whole pixels: a repeat node with a fractional tile drifts across the view */
  tile = (int) round (step);
  x0 = fmod (-v->ox * v->zoom, tile);
  y0 = fmod (-v->oy * v->zoom, tile);
  if (x0 < 0)
    x0 += tile;
  if (y0 < 0)
    y0 += tile;
  gtk_snapshot_push_repeat (s, &GRAPHENE_RECT_INIT (0, 0, v->w, v->h),
                            &GRAPHENE_RECT_INIT (x0 - 1 - tile, y0 - 1 - tile, tile, tile));
  gtk_snapshot_append_color (s, &c->colors.grid, &GRAPHENE_RECT_INIT (x0 - 1 - tile, y0 - 1 - tile, 2, 2));
  gtk_snapshot_pop (s);
}

static void
curve_to_pixels (const NlCanvasView *v, double p[8])
{
  for (int j = 0; j < 8; j += 2)
    {
      p[j] = (p[j] - v->ox) * v->zoom;
      p[j + 1] = (p[j + 1] - v->oy) * v->zoom;
    }
}

static gboolean
curve_visible (const NlCanvasView *v, const double p[8], double pad)
{
  double x0 = MIN (p[0], p[6]), x1 = MAX (p[0], p[6]);
  double y0 = MIN (MIN (p[1], p[3]), MIN (p[5], p[7])), y1 = MAX (MAX (p[1], p[3]), MAX (p[5], p[7]));
  return x1 >= -pad && x0 <= v->w + pad && y1 >= -pad && y0 <= v->h + pad;
}

static void
grow_box (double box[4], const double p[8])
{
  for (int j = 0; j < 8; j += 2)
    {
      box[0] = MIN (box[0], p[j]);
      box[1] = MIN (box[1], p[j + 1]);
      box[2] = MAX (box[2], p[j]);
      box[3] = MAX (box[3], p[j + 1]);
    }
}

static void
stroke_curve (cairo_t *cr, const double p[8])
{
  cairo_move_to (cr, p[0], p[1]);
  cairo_curve_to (cr, p[2], p[3], p[4], p[5], p[6], p[7]);
}

static void
draw_wires (NlGraphCanvas *c, GtkSnapshot *s, const NlNetwork *net, const NlCanvasView *v)
{
  const NlCanvasColors *k = &c->colors;
  double lw = CLAMP (2 * v->zoom, 1, 3), pad = (NL_PORT_RADIUS + 4) * v->zoom + lw + 2;
  double box[4] = { G_MAXDOUBLE, G_MAXDOUBLE, -G_MAXDOUBLE, -G_MAXDOUBLE };
  double sel[8], drag[8];
  gboolean has_sel = FALSE, has_drag = FALSE;
  g_autoptr (GArray) curves = g_array_new (FALSE, FALSE, sizeof (double) * 8);
  graphene_rect_t bounds;
  cairo_t *cr;

  for (guint e = 0; e < net->edges->len; e++)
    {
      NlEdge ed = g_array_index (net->edges, NlEdge, e);
      double p[8];
      _nl_graph_canvas_edge_curve (c, ed.from, ed.to, ed.to_port, p);
      curve_to_pixels (v, p);
      if (!curve_visible (v, p, lw))
        continue;
      grow_box (box, p);
      if ((int) e == c->sel_edge && !v->export)
        {
          memcpy (sel, p, sizeof sel);
          has_sel = TRUE;
        }
      else
        g_array_append_vals (curves, p, 1);
    }
  if (!v->export && c->mode == NL_DRAG_WIRE && c->wire_from >= 0)
    {
      double x0, y0, x1, y1;
      _nl_graph_canvas_output_port_pos (c, c->wire_from, &x0, &y0);
      if (c->wire_to >= 0)
        _nl_graph_canvas_input_port_pos (c, c->wire_to, c->wire_port, &x1, &y1);
      else
        nl_graph_canvas_widget_to_canvas (c, c->last_x, c->last_y, &x1, &y1);
      _nl_graph_canvas_wire_curve (x0, y0, x1, y1, drag);
      curve_to_pixels (v, drag);
      grow_box (box, drag);
      has_drag = TRUE;
    }
  /* a Cairo node is rasterised over its whole bounds: keep them to the wires */
  box[0] = MAX (box[0] - pad, 0);
  box[1] = MAX (box[1] - pad, 0);
  box[2] = MIN (box[2] + pad, v->w);
  box[3] = MIN (box[3] + pad, v->h);
  if (box[2] <= box[0] || box[3] <= box[1])
    return;
  graphene_rect_init (&bounds, floor (box[0]), floor (box[1]), ceil (box[2] - floor (box[0])),
                      ceil (box[3] - floor (box[1])));
  cr = gtk_snapshot_append_cairo (s, &bounds);
  cairo_set_line_width (cr, lw);
  gdk_cairo_set_source_rgba (cr, &k->dim);
  for (guint i = 0; i < curves->len; i++)
    stroke_curve (cr, &g_array_index (curves, double, 8 * i));
  cairo_stroke (cr);

  if (has_sel)
    {
      cairo_set_line_width (cr, lw + 2);
      gdk_cairo_set_source_rgba (cr, &k->accent);
      stroke_curve (cr, sel);
      cairo_stroke (cr);
    }

  if (has_drag)
    {
      cairo_set_line_width (cr, lw + 1);
      if (c->wire_to >= 0 && !c->wire_ok)
        {
          /* a refused target: red and dashed; the reason comes as ::problem on drop */
          double dash[2] = { 6, 4 };
          cairo_set_dash (cr, dash, 2, 0);
          gdk_cairo_set_source_rgba (cr, &k->error);
        }
      else
        gdk_cairo_set_source_rgba (cr, &k->accent);
      stroke_curve (cr, drag);
      cairo_stroke (cr);
      if (c->wire_to >= 0)
        {
          cairo_set_dash (cr, NULL, 0, 0);
          cairo_arc (cr, drag[6], drag[7], (NL_PORT_RADIUS + 3) * v->zoom + 1, 0, 2 * G_PI);
          cairo_stroke (cr);
        }
    }
  cairo_destroy (cr);
}

static void
draw_band (NlGraphCanvas *c, GtkSnapshot *s)
{
  GdkRGBA fill = c->colors.accent;
  graphene_rect_t r = GRAPHENE_RECT_INIT (MIN (c->press_x, c->last_x), MIN (c->press_y, c->last_y),
                                          fabs (c->last_x - c->press_x), fabs (c->last_y - c->press_y));
  GskRoundedRect rr;
  float w[4] = { 1, 1, 1, 1 };
  GdkRGBA cs[4] = { c->colors.accent, c->colors.accent, c->colors.accent, c->colors.accent };
  fill.alpha = 0.15f;
  gtk_snapshot_append_color (s, &fill, &r);
  gsk_rounded_rect_init_from_rect (&rr, &r, 0);
  gtk_snapshot_append_border (s, &rr, w, cs);
}

void
_nl_graph_canvas_draw (NlGraphCanvas *c, GtkSnapshot *s, const NlCanvasView *v)
{
  const NlNetwork *net = c->doc ? nl_network_doc_get_network (c->doc) : NULL;
  double pad = NL_PORT_RADIUS + 4;
  double vx0 = v->ox - pad, vy0 = v->oy - pad;
  double vx1 = v->ox + v->w / v->zoom + pad, vy1 = v->oy + v->h / v->zoom + pad;
  const int *sel;
  int n, n_sel = 0;

  gtk_snapshot_append_color (s, &c->colors.bg, &GRAPHENE_RECT_INIT (0, 0, v->w, v->h));
  /* the grid says "this moves" when panning; zoomed far out it is noise,
   * and with the Cairo renderer it costs a few ms a frame */
  if (!v->export && v->zoom >= NL_SHAPE_MIN_ZOOM)
    draw_grid (c, s, v);
  if (!net)
    return;
  n = nl_network_n_nodes (net);
  _nl_graph_canvas_n_input_ports (c, 0);   /* refresh the port cache once */
  draw_wires (c, s, net, v);

  gtk_snapshot_save (s);
  gtk_snapshot_scale (s, v->zoom, v->zoom);
  gtk_snapshot_translate (s, &GRAPHENE_POINT_INIT (-v->ox, -v->oy));
  sel = nl_network_doc_get_selection (c->doc, &n_sel);
  for (int i = 0, j = 0; i < n; i++)
    {
      const NlNode *nd = nl_network_node (net, i);
      gboolean selected;
      /* the selection is sorted: walk it alongside the nodes */
      while (j < n_sel && sel[j] < i)
        j++;
      selected = j < n_sel && sel[j] == i;
      if (nd->x + NL_CARD_WIDTH < vx0 || nd->x > vx1 || nd->y + NL_CARD_HEIGHT < vy0 || nd->y > vy1)
        continue;
      draw_card (c, s, net, i, v, selected && !v->export);
    }
  gtk_snapshot_restore (s);

  if (!v->export && c->mode == NL_DRAG_RUBBER)
    draw_band (c, s);
}

void
_nl_graph_canvas_snapshot (GtkWidget *widget, GtkSnapshot *snapshot)
{
  NlGraphCanvas *c = NL_GRAPH_CANVAS (widget);
  NlCanvasView v;
  _nl_graph_canvas_get_render_view (c, &v);
  if (v.w <= 0 || v.h <= 0)
    return;
  _nl_graph_canvas_update_colors (c);
  _nl_graph_canvas_draw (c, snapshot, &v);
}

/* ---- export ---- */

static gboolean
export_to (NlGraphCanvas *c, const char *path, gboolean svg, GError **error)
{
  const double margin = 24;
  graphene_rect_t b;
  NlCanvasView v = { 0 };
  GtkSnapshot *s;
  GskRenderNode *node;
  cairo_surface_t *surface;
  cairo_t *cr;
  cairo_status_t st;
  double bw, bh, scale;
  g_autoptr (GByteArray) bytes = g_byte_array_new ();

  if (!nl_graph_canvas_get_bounds (c, &b))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                   _("Cannot export %s: the network has no layers"), path);
      return FALSE;
    }
  bw = b.size.width + 2 * margin;
  bh = b.size.height + 2 * margin;
  scale = svg ? 1 : (bw < 1500 && bh < 1500 ? 2 : 1);
  if (!svg)
    scale = MIN (scale, MIN (16384 / bw, 16384 / bh));   /* Cairo's image limit is 32767 */
  v.zoom = scale;
  v.ox = b.origin.x - margin;
  v.oy = b.origin.y - margin;
  v.w = ceil (bw * scale);
  v.h = ceil (bh * scale);
  v.export = TRUE;

  _nl_graph_canvas_update_colors (c);
  s = gtk_snapshot_new ();
  _nl_graph_canvas_draw (c, s, &v);
  node = gtk_snapshot_free_to_node (s);

  /* into memory, then the file whole or not at all */
  surface = svg ? cairo_svg_surface_create_for_stream (nl_cairo_append_bytes, bytes, v.w, v.h)
                : cairo_image_surface_create (CAIRO_FORMAT_ARGB32, (int) v.w, (int) v.h);
  cr = cairo_create (surface);
  if (node)
    gsk_render_node_draw (node, cr);
  cairo_destroy (cr);
  if (svg)
    cairo_surface_finish (surface);
  st = cairo_surface_status (surface);
  if (st == CAIRO_STATUS_SUCCESS && !svg)
    st = cairo_surface_write_to_png_stream (surface, nl_cairo_append_bytes, bytes);
  cairo_surface_destroy (surface);
  g_clear_pointer (&node, gsk_render_node_unref);
  if (st != CAIRO_STATUS_SUCCESS)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED, _("Cannot write %s: %s"), path,
                   cairo_status_to_string (st));
      return FALSE;
    }
  return nl_atomic_file_set_contents (path, bytes->data, bytes->len, error);
}

gboolean
nl_graph_canvas_export_png (NlGraphCanvas *c, const char *path, GError **error)
{
  g_return_val_if_fail (NL_IS_GRAPH_CANVAS (c), FALSE);
  g_return_val_if_fail (path != NULL, FALSE);
  return export_to (c, path, FALSE, error);
}

gboolean
nl_graph_canvas_export_svg (NlGraphCanvas *c, const char *path, GError **error)
{
  g_return_val_if_fail (NL_IS_GRAPH_CANVAS (c), FALSE);
  g_return_val_if_fail (path != NULL, FALSE);
  return export_to (c, path, TRUE, error);
}
