/* nl-ridge-plot.c — offset histograms. Each ridge is its histogram's
 * outline through the bin centres, scaled to its own highest bin (the
 * shape matters, not the count: every step counts the same tensor), filled
 * opaque so that newer ridges hide what they cover. Colour goes from the
 * background (old) to the accent (new), so time reads top to bottom as in
 * TensorBoard. The x axis spans every shown ridge's range. */
#include "ui/plot/nl-ridge-plot.h"
#include <glib/gi18n.h>
#include "ui/plot/nl-plot-private.h"

#include <math.h>

typedef struct {
  gint64 step;
  float lo, hi;
  int n_bins;
  guint32 *counts;
} Ridge;

struct _NlRidgePlot {
  GtkWidget parent_instance;
  GArray *ridges;              /* Ridge, oldest first */
  char *title;
  guint n_drawn;
};

G_DEFINE_FINAL_TYPE (NlRidgePlot, nl_ridge_plot, GTK_TYPE_WIDGET)

#define MARGIN_L 16
#define MARGIN_R 76            /* step labels */
#define MARGIN_T 30            /* title */
#define MARGIN_B 30            /* x ticks */

static void
ridge_clear (gpointer data)
{
  g_free (((Ridge *) data)->counts);
}

/* Indices of the ridges to draw: all, or NL_RIDGE_PLOT_MAX_SHOWN spread
 * evenly with the first and the newest. */
static guint
shown_ridges (NlRidgePlot *r, guint *idx)
{
  guint n = r->ridges->len, m = MIN (n, NL_RIDGE_PLOT_MAX_SHOWN);
  for (guint k = 0; k < m; k++)
    idx[k] = m == 1 ? n - 1 : (guint) llround ((double) k * (n - 1) / (m - 1));
  return m;
}

static void
nl_ridge_plot_measure (GtkWidget *widget, GtkOrientation orientation, int for_size, int *min, int *nat,
                       int *min_baseline, int *nat_baseline)
{
  *min = orientation == GTK_ORIENTATION_HORIZONTAL ? 240 : 160;
  *nat = orientation == GTK_ORIENTATION_HORIZONTAL ? 480 : 320;
}

static void
mix (GdkRGBA *out, const GdkRGBA *a, const GdkRGBA *b, double t)
{
  out->red = a->red + (b->red - a->red) * t;
  out->green = a->green + (b->green - a->green) * t;
  out->blue = a->blue + (b->blue - a->blue) * t;
  out->alpha = 1;
}

static void
draw_text (GtkWidget *widget, cairo_t *cr, const char *text, double x, double y, double align, gboolean bold)
{
  g_autoptr (PangoLayout) l = gtk_widget_create_pango_layout (widget, NULL);
  int tw, th;
  if (bold)
    pango_layout_set_markup (l, text, -1);
  else
    pango_layout_set_text (l, text, -1);
  pango_layout_get_pixel_size (l, &tw, &th);
  cairo_move_to (cr, x - align * tw, y - th / 2.0);
  pango_cairo_show_layout (cr, l);
}

static void
draw_x_axis (GtkWidget *widget, cairo_t *cr, double x0, double x1, int w, int h, const GdkRGBA *fg)
{
  double step = _nl_plot_nice_step ((x1 - x0) / MAX (1.0, (w - MARGIN_L - MARGIN_R) / 80.0));
  double range_max = MAX (fabs (x0), fabs (x1));
  cairo_set_source_rgba (cr, fg->red, fg->green, fg->blue, 0.35);
  cairo_set_line_width (cr, 1);
  cairo_move_to (cr, MARGIN_L, h - MARGIN_B + 0.5);
  cairo_line_to (cr, w - MARGIN_R, h - MARGIN_B + 0.5);
  cairo_stroke (cr);
  for (double k = ceil (x0 / step); k * step <= x1 + step * 1e-9; k++)
    {
      double v = fabs (k * step) < step * 1e-9 ? 0 : k * step;
      double px = MARGIN_L + (v - x0) / (x1 - x0) * (w - MARGIN_L - MARGIN_R);
      char buf[48];
      _nl_plot_format_tick (buf, sizeof buf, v, step, range_max);
      cairo_set_source_rgba (cr, fg->red, fg->green, fg->blue, 0.35);
      cairo_move_to (cr, floor (px) + 0.5, h - MARGIN_B);
      cairo_line_to (cr, floor (px) + 0.5, h - MARGIN_B + 4);
      cairo_stroke (cr);
      cairo_set_source_rgba (cr, fg->red, fg->green, fg->blue, 0.8);
      draw_text (widget, cr, buf, px, h - MARGIN_B + 14, 0.5, FALSE);
    }
}

/* One ridge: its outline over [lo, hi] on baseline BASE, PEAK high. */
static void
ridge_path (cairo_t *cr, const Ridge *g, double x0, double x1, int w, double base, double peak)
{
  double sx = (w - MARGIN_L - MARGIN_R) / (x1 - x0), bw = (g->hi - g->lo) / g->n_bins;
  guint32 top = 1;
  for (int b = 0; b < g->n_bins; b++)
    top = MAX (top, g->counts[b]);
  cairo_move_to (cr, MARGIN_L + (g->lo - x0) * sx, base);
  for (int b = 0; b < g->n_bins; b++)
    cairo_line_to (cr, MARGIN_L + (g->lo + (b + 0.5) * bw - x0) * sx, base - peak * g->counts[b] / top);
  cairo_line_to (cr, MARGIN_L + (g->hi - x0) * sx, base);
  cairo_close_path (cr);
}

static void
theme_colors (GtkWidget *widget, GdkRGBA *fg, GdkRGBA *bg, GdkRGBA *accent)
{
  GtkStyleContext *style = gtk_widget_get_style_context (widget);
  G_GNUC_BEGIN_IGNORE_DEPRECATIONS
  gtk_style_context_get_color (style, fg);
  if (!gtk_style_context_lookup_color (style, "view_bg_color", bg))
    gdk_rgba_parse (bg, "#ffffff");
  if (!gtk_style_context_lookup_color (style, "accent_bg_color", accent))
    gdk_rgba_parse (accent, "#3584e4");
  G_GNUC_END_IGNORE_DEPRECATIONS
}

static void
nl_ridge_plot_snapshot (GtkWidget *widget, GtkSnapshot *snapshot)
{
  NlRidgePlot *r = NL_RIDGE_PLOT (widget);
  int w = gtk_widget_get_width (widget), h = gtk_widget_get_height (widget);
  guint idx[NL_RIDGE_PLOT_MAX_SHOWN], m = shown_ridges (r, idx);
  double x0 = INFINITY, x1 = -INFINITY, plot_h = h - MARGIN_T - MARGIN_B, peak, gap, last_base, label_y = -INFINITY;
  GdkRGBA fg, bg, accent, fill;
  cairo_t *cr;

  r->n_drawn = 0;
  if (w <= MARGIN_L + MARGIN_R + 10 || plot_h < 20)
    return;
  theme_colors (widget, &fg, &bg, &accent);
  cr = gtk_snapshot_append_cairo (snapshot, &GRAPHENE_RECT_INIT (0, 0, w, h));
  gdk_cairo_set_source_rgba (cr, &fg);
  if (r->title)
    draw_text (widget, cr, r->title, MARGIN_L, MARGIN_T / 2.0, 0, TRUE);
  if (m == 0)
    {
      cairo_set_source_rgba (cr, fg.red, fg.green, fg.blue, 0.6);
      draw_text (widget, cr, _("No histograms stored for this tensor yet"), w / 2.0, h / 2.0, 0.5, FALSE);
      cairo_destroy (cr);
      return;
    }
  for (guint k = 0; k < m; k++)
    {
      const Ridge *g = &g_array_index (r->ridges, Ridge, idx[k]);
      x0 = MIN (x0, g->lo);
      x1 = MAX (x1, g->hi);
    }
  if (x1 - x0 < 1e-12)
    x0 -= 0.5, x1 += 0.5;
  /* a ridge rises over about three of the gaps between baselines */
  peak = m > 1 ? MIN (plot_h * 0.45, 3.5 * plot_h / (m + 2.5)) : plot_h * 0.9;
  gap = m > 1 ? (plot_h - peak) / (m - 1) : 0;
  last_base = MARGIN_T + peak + (m - 1) * gap;
  draw_x_axis (widget, cr, x0, x1, w, h, &fg);
  cairo_set_line_width (cr, 1);
  for (guint k = 0; k < m; k++)
    {
      const Ridge *g = &g_array_index (r->ridges, Ridge, idx[k]);
      double base = MARGIN_T + peak + k * gap, t = m > 1 ? (double) k / (m - 1) : 1;
      ridge_path (cr, g, x0, x1, w, base, peak);
      mix (&fill, &bg, &accent, 0.15 + 0.75 * t);
      gdk_cairo_set_source_rgba (cr, &fill);
      cairo_fill_preserve (cr);
      cairo_set_source_rgba (cr, fg.red, fg.green, fg.blue, 0.55);
      cairo_stroke (cr);
      /* step labels where they do not crowd, the newest always */
      if (k == m - 1 || (base - label_y >= 16 && last_base - base >= 16))
        {
          g_autofree char *s = g_strdup_printf (_("step %" G_GINT64_FORMAT), g->step);
          cairo_set_source_rgba (cr, fg.red, fg.green, fg.blue, 0.8);
          draw_text (widget, cr, s, w - MARGIN_R + 8, base, 0, FALSE);
          label_y = base;
        }
    }
  r->n_drawn = m;
  cairo_destroy (cr);
}

static void
nl_ridge_plot_finalize (GObject *object)
{
  NlRidgePlot *r = NL_RIDGE_PLOT (object);
  g_array_unref (r->ridges);
  g_free (r->title);
  G_OBJECT_CLASS (nl_ridge_plot_parent_class)->finalize (object);
}

static void
nl_ridge_plot_class_init (NlRidgePlotClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = nl_ridge_plot_finalize;
  GTK_WIDGET_CLASS (klass)->measure = nl_ridge_plot_measure;
  GTK_WIDGET_CLASS (klass)->snapshot = nl_ridge_plot_snapshot;
  gtk_widget_class_set_css_name (GTK_WIDGET_CLASS (klass), "nl-ridge-plot");
  gtk_widget_class_set_accessible_role (GTK_WIDGET_CLASS (klass), GTK_ACCESSIBLE_ROLE_IMG);
}

static void
nl_ridge_plot_init (NlRidgePlot *r)
{
  r->ridges = g_array_new (FALSE, FALSE, sizeof (Ridge));
  g_array_set_clear_func (r->ridges, ridge_clear);
}

GtkWidget *
nl_ridge_plot_new (void)
{
  return g_object_new (NL_TYPE_RIDGE_PLOT, NULL);
}

void
nl_ridge_plot_clear (NlRidgePlot *r)
{
  g_return_if_fail (NL_IS_RIDGE_PLOT (r));
  g_array_set_size (r->ridges, 0);
  gtk_widget_queue_draw (GTK_WIDGET (r));
}

gboolean
nl_ridge_plot_add (NlRidgePlot *r, gint64 step, float lo, float hi, const guint32 *counts, int n_bins)
{
  Ridge g = { step, lo, hi, n_bins, NULL };
  g_return_val_if_fail (NL_IS_RIDGE_PLOT (r), FALSE);
  if (n_bins <= 0 || !counts || !isfinite (lo) || !isfinite (hi) || hi < lo)
    return FALSE;
  if (r->ridges->len)
    {
      Ridge *last = &g_array_index (r->ridges, Ridge, r->ridges->len - 1);
      if (step < last->step)
        return FALSE;
      if (step == last->step)
        g_array_set_size (r->ridges, r->ridges->len - 1);
    }
  g.counts = g_memdup2 (counts, sizeof (guint32) * n_bins);
  g_array_append_val (r->ridges, g);
  gtk_widget_queue_draw (GTK_WIDGET (r));
  return TRUE;
}

void
nl_ridge_plot_set_title (NlRidgePlot *r, const char *title)
{
  g_return_if_fail (NL_IS_RIDGE_PLOT (r));
  g_free (r->title);
  r->title = title ? g_markup_printf_escaped ("<b>%s</b>", title) : NULL;
  gtk_widget_queue_draw (GTK_WIDGET (r));
}

guint
nl_ridge_plot_get_n_ridges (NlRidgePlot *r)
{
  g_return_val_if_fail (NL_IS_RIDGE_PLOT (r), 0);
  return r->ridges->len;
}

gint64
nl_ridge_plot_get_step (NlRidgePlot *r, guint i)
{
  g_return_val_if_fail (NL_IS_RIDGE_PLOT (r) && i < r->ridges->len, -1);
  return g_array_index (r->ridges, Ridge, i).step;
}

guint
nl_ridge_plot_get_n_drawn (NlRidgePlot *r)
{
  g_return_val_if_fail (NL_IS_RIDGE_PLOT (r), 0);
  return r->n_drawn;
}
