/* nl-sequence-plot.c — a length histogram or a series plot with its marks. */
#include "ui/data/nl-sequence-plot.h"
#include <glib/gi18n.h>

#include <math.h>

#define PAD 12.0
#define TEXT_H 18.0

struct _NlSequencePlot {
  GtkWidget parent_instance;
  gboolean series;
  int n;
  double *v;          /* bins or values */
  int64_t bin_width, stride, n_rows, val_start;
  int max_length, window, horizon;
};

G_DEFINE_FINAL_TYPE (NlSequencePlot, nl_sequence_plot, GTK_TYPE_WIDGET)

static void
plot_measure (GtkWidget *widget, GtkOrientation orientation, int for_size, int *min, int *nat, int *min_baseline,
              int *nat_baseline)
{
  *min = orientation == GTK_ORIENTATION_HORIZONTAL ? 200 : 140;
  *nat = orientation == GTK_ORIENTATION_HORIZONTAL ? 420 : 180;
}

/* the plot area's x of a position along the axis (tokens, or rows) */
static double
axis_x (NlSequencePlot *p, double at, int w)
{
  double span = p->series ? (double) MAX (p->n_rows, 1) : (double) p->bin_width * MAX (p->n, 1);
  return PAD + at / span * (w - 2 * PAD);
}

double
nl_sequence_plot_get_mark_x (NlSequencePlot *p)
{
  g_return_val_if_fail (NL_IS_SEQUENCE_PLOT (p), -1);
  if (p->n == 0)
    return -1;
  return axis_x (p, p->series ? (double) p->window : (double) p->max_length, gtk_widget_get_width (GTK_WIDGET (p)));
}

static void
show_text (GtkWidget *widget, cairo_t *cr, double x, double y, const char *text, gboolean right)
{
  g_autoptr (PangoLayout) l = gtk_widget_create_pango_layout (widget, text);
  int lw;
  pango_layout_get_pixel_size (l, &lw, NULL);
  cairo_move_to (cr, right ? x - lw - 4 : x + 4, y);
  pango_cairo_show_layout (cr, l);
}

static void
draw_lengths (NlSequencePlot *p, cairo_t *cr, int w, int h, const GdkRGBA *fg, const GdkRGBA *accent)
{
  double max = 1, bottom = h - TEXT_H, top = TEXT_H, bw = (w - 2 * PAD) / MAX (p->n, 1), mx;
  g_autofree char *mark = g_strdup_printf (_("max length %d"), p->max_length);
  for (int k = 0; k < p->n; k++)
    max = MAX (max, p->v[k]);
  gdk_cairo_set_source_rgba (cr, accent);
  for (int k = 0; k < p->n; k++)
    {
      double bh = p->v[k] / max * (bottom - top);
      cairo_rectangle (cr, PAD + k * bw + 0.5, bottom - bh, MAX (bw - 1, 1), bh);
    }
  cairo_fill (cr);
  /* the truncation point: samples right of it are cut */
  mx = MIN (nl_sequence_plot_get_mark_x (p), w - PAD);
  cairo_set_source_rgba (cr, 0.88, 0.11, 0.14, 1);
  cairo_set_line_width (cr, 2);
  cairo_move_to (cr, mx, top - 4);
  cairo_line_to (cr, mx, bottom);
  cairo_stroke (cr);
  show_text (GTK_WIDGET (p), cr, mx, 0, mark, mx > w / 2.0);
  gdk_cairo_set_source_rgba (cr, fg);
  show_text (GTK_WIDGET (p), cr, PAD - 4, bottom + 1, "0", FALSE);
  {
    g_autofree char *end = g_strdup_printf (_("%" G_GINT64_FORMAT "+ tokens"), p->bin_width * (p->n - 1));
    show_text (GTK_WIDGET (p), cr, w - PAD, bottom + 1, end, TRUE);
  }
}

static void
draw_series (NlSequencePlot *p, cairo_t *cr, int w, int h, const GdkRGBA *fg, const GdkRGBA *accent)
{
  double lo = INFINITY, hi = -INFINITY, bottom = h - TEXT_H, top = TEXT_H;
  double wx0 = axis_x (p, 0, w), wx1 = axis_x (p, p->window, w), hx1 = axis_x (p, p->window + p->horizon, w);
  for (int k = 0; k < p->n; k++)
    if (isfinite (p->v[k]))
      {
        lo = MIN (lo, p->v[k]);
        hi = MAX (hi, p->v[k]);
      }
  if (!(hi >= lo))
    lo = 0, hi = 1;
  if (hi - lo < 1e-9)
    hi = lo + 1;
  /* the first sample: its window of inputs, then the horizon it predicts */
  cairo_set_source_rgba (cr, accent->red, accent->green, accent->blue, 0.18);
  cairo_rectangle (cr, wx0, top, wx1 - wx0, bottom - top);
  cairo_fill (cr);
  cairo_set_source_rgba (cr, 0.9, 0.38, 0.0, 0.3);
  cairo_rectangle (cr, wx1, top, MAX (hx1 - wx1, 2), bottom - top);
  cairo_fill (cr);
  gdk_cairo_set_source_rgba (cr, fg);
  show_text (GTK_WIDGET (p), cr, wx0, 0, _("window"), FALSE);
  show_text (GTK_WIDGET (p), cr, hx1, bottom + 1, _("horizon"), FALSE);
  if (p->val_start < p->n_rows)
    {
      double vx = axis_x (p, p->val_start, w);
      cairo_set_source_rgba (cr, fg->red, fg->green, fg->blue, 0.5);
      cairo_set_line_width (cr, 1);
      cairo_move_to (cr, vx, top);
      cairo_line_to (cr, vx, bottom);
      cairo_stroke (cr);
      show_text (GTK_WIDGET (p), cr, vx, 0, _("validation"), FALSE);
    }
  gdk_cairo_set_source_rgba (cr, accent);
  cairo_set_line_width (cr, 1.5);
  for (int k = 0; k < p->n; k++)
    {
      double x = axis_x (p, (double) k * p->stride, w), y = bottom - (p->v[k] - lo) / (hi - lo) * (bottom - top);
      if (k == 0)
        cairo_move_to (cr, x, y);
      else
        cairo_line_to (cr, x, y);
    }
  cairo_stroke (cr);
}

static void
plot_snapshot (GtkWidget *widget, GtkSnapshot *snapshot)
{
  NlSequencePlot *p = NL_SEQUENCE_PLOT (widget);
  int w = gtk_widget_get_width (widget), h = gtk_widget_get_height (widget);
  GtkStyleContext *style = gtk_widget_get_style_context (widget);
  GdkRGBA fg, accent;
  cairo_t *cr;

  if (p->n == 0 || w <= 2 * PAD || h <= 3 * TEXT_H)
    return;
  /* gtk_widget_get_color () is 4.10; in 4.8 the style context is the way */
  G_GNUC_BEGIN_IGNORE_DEPRECATIONS
  gtk_style_context_get_color (style, &fg);
  if (!gtk_style_context_lookup_color (style, "accent_bg_color", &accent))
    gdk_rgba_parse (&accent, "#3584e4");
  G_GNUC_END_IGNORE_DEPRECATIONS
  cr = gtk_snapshot_append_cairo (snapshot, &GRAPHENE_RECT_INIT (0, 0, w, h));
  if (p->series)
    draw_series (p, cr, w, h, &fg, &accent);
  else
    draw_lengths (p, cr, w, h, &fg, &accent);
  cairo_destroy (cr);
}

static void
nl_sequence_plot_finalize (GObject *object)
{
  g_free (NL_SEQUENCE_PLOT (object)->v);
  G_OBJECT_CLASS (nl_sequence_plot_parent_class)->finalize (object);
}

static void
nl_sequence_plot_class_init (NlSequencePlotClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = nl_sequence_plot_finalize;
  GTK_WIDGET_CLASS (klass)->measure = plot_measure;
  GTK_WIDGET_CLASS (klass)->snapshot = plot_snapshot;
  gtk_widget_class_set_css_name (GTK_WIDGET_CLASS (klass), "nl-sequence-plot");
  gtk_widget_class_set_accessible_role (GTK_WIDGET_CLASS (klass), GTK_ACCESSIBLE_ROLE_IMG);
}

static void
nl_sequence_plot_init (NlSequencePlot *p)
{
}

GtkWidget *
nl_sequence_plot_new (void)
{
  return g_object_new (NL_TYPE_SEQUENCE_PLOT, NULL);
}

static void
set_values (NlSequencePlot *p, int n)
{
  g_free (p->v);
  p->n = MAX (n, 0);
  p->v = g_new0 (double, MAX (p->n, 1));
  gtk_widget_queue_draw (GTK_WIDGET (p));
}

void
nl_sequence_plot_set_lengths (NlSequencePlot *p, const int64_t *bins, int n_bins, int64_t bin_width, int max_length)
{
  g_return_if_fail (NL_IS_SEQUENCE_PLOT (p));
  set_values (p, bins ? n_bins : 0);
  p->series = FALSE;
  for (int k = 0; k < p->n; k++)
    p->v[k] = (double) bins[k];
  p->bin_width = MAX (bin_width, 1);
  p->max_length = max_length;
}

void
nl_sequence_plot_set_series (NlSequencePlot *p, const float *values, int n, int64_t stride, int64_t n_rows,
                             int64_t val_start_row, int window, int horizon)
{
  g_return_if_fail (NL_IS_SEQUENCE_PLOT (p));
  set_values (p, values ? n : 0);
  p->series = TRUE;
  for (int k = 0; k < p->n; k++)
    p->v[k] = values[k];
  p->stride = MAX (stride, 1);
  p->n_rows = MAX (n_rows, 1);
  p->val_start = val_start_row;
  p->window = window;
  p->horizon = horizon;
}
