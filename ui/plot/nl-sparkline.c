/* nl-sparkline.c — a line with no axes: the shape of a metric at a glance.
 * The y scale spans the points shown (log or linear); the usual range is
 * drawn as a faint band when it is inside the view, and each point outside
 * it as a dot in the error colour, so that a glance down a column of
 * sparklines finds the layer that went wrong. */
#include "ui/plot/nl-sparkline.h"

#include <math.h>

struct _NlSparkline {
  GtkWidget parent_instance;
  GArray *x, *y;               /* double */
  double lo, hi;               /* usual range, NaN: open */
  double y_lo, y_hi;           /* fixed scale; NaN: the points' */
  gboolean log_y;
};

G_DEFINE_FINAL_TYPE (NlSparkline, nl_sparkline, GTK_TYPE_WIDGET)

gboolean
nl_sparkline_out_of_range (NlSparkline *s, double y)
{
  g_return_val_if_fail (NL_IS_SPARKLINE (s), FALSE);
  if (!isfinite (y))
    return TRUE;
  return (!isnan (s->lo) && y < s->lo) || (!isnan (s->hi) && y > s->hi);
}

static gboolean
y_shown (NlSparkline *s, double y)
{
  return isfinite (y) && (!s->log_y || y > 0);
}

static double
y_scaled (NlSparkline *s, double y)
{
  return s->log_y ? log10 (y) : y;
}

static void
nl_sparkline_measure (GtkWidget *widget, GtkOrientation orientation, int for_size, int *min, int *nat,
                      int *min_baseline, int *nat_baseline)
{
  if (orientation == GTK_ORIENTATION_HORIZONTAL)
    {
      *min = 40;
      *nat = 120;
    }
  else
    *min = *nat = 24;
}

/* Colours from the theme: the line as text, the error colour for points
 * out of range. */
static void
sparkline_colors (GtkWidget *widget, GdkRGBA *fg, GdkRGBA *err)
{
  GtkStyleContext *style = gtk_widget_get_style_context (widget);
  G_GNUC_BEGIN_IGNORE_DEPRECATIONS
  gtk_style_context_get_color (style, fg);
  if (!gtk_style_context_lookup_color (style, "error_color", err))
    gdk_rgba_parse (err, "#e01b24");
  G_GNUC_END_IGNORE_DEPRECATIONS
}

static void
draw_band (NlSparkline *s, cairo_t *cr, const GdkRGBA *fg, double y0, double y1, int h)
{
  double lo = isnan (s->lo) || (s->log_y && s->lo <= 0) ? y0 : y_scaled (s, s->lo);
  double hi = isnan (s->hi) ? y1 : y_scaled (s, s->hi);
  double a, b;
  lo = MAX (lo, y0);
  hi = MIN (hi, y1);
  if (hi <= lo || (lo == y0 && hi == y1))
    return;  /* the whole view is usual: no band to show */
  a = h - 2 - (hi - y0) / (y1 - y0) * (h - 4);
  b = h - 2 - (lo - y0) / (y1 - y0) * (h - 4);
  cairo_set_source_rgba (cr, fg->red, fg->green, fg->blue, 0.08);
  cairo_rectangle (cr, 0, a, 1e4, b - a);
  cairo_fill (cr);
}

static void
nl_sparkline_snapshot (GtkWidget *widget, GtkSnapshot *snapshot)
{
  NlSparkline *s = NL_SPARKLINE (widget);
  int w = gtk_widget_get_width (widget), h = gtk_widget_get_height (widget);
  double x0 = INFINITY, x1 = -INFINITY, y0 = INFINITY, y1 = -INFINITY;
  GdkRGBA fg, err;
  gboolean first = TRUE;
  cairo_t *cr;

  for (guint i = 0; i < s->x->len; i++)
    {
      double y = g_array_index (s->y, double, i);
      if (!y_shown (s, y))
        continue;
      x0 = MIN (x0, g_array_index (s->x, double, i));
      x1 = MAX (x1, g_array_index (s->x, double, i));
      y0 = MIN (y0, y_scaled (s, y));
      y1 = MAX (y1, y_scaled (s, y));
    }
  if (w <= 4 || h <= 4 || !isfinite (x0))
    return;
  if (!isnan (s->y_lo))
    y0 = MIN (y0, y_scaled (s, s->y_lo)), y1 = MAX (y1, y_scaled (s, s->y_hi));
  if (x1 <= x0)
    x0 -= 1, x1 += 1;
  if (y1 - y0 < 1e-12 * MAX (fabs (y0), 1))
    y0 -= 0.5 * MAX (fabs (y0), 1e-3), y1 += 0.5 * MAX (fabs (y1), 1e-3);
  sparkline_colors (widget, &fg, &err);
  cr = gtk_snapshot_append_cairo (snapshot, &GRAPHENE_RECT_INIT (0, 0, w, h));
  draw_band (s, cr, &fg, y0, y1, h);
  cairo_set_source_rgba (cr, fg.red, fg.green, fg.blue, 0.75);
  cairo_set_line_width (cr, 1.25);
  for (guint i = 0; i < s->x->len; i++)
    {
      double y = g_array_index (s->y, double, i);
      double px = 2 + (g_array_index (s->x, double, i) - x0) / (x1 - x0) * (w - 4);
      if (!y_shown (s, y))
        continue;
      if (first)
        cairo_move_to (cr, px, h - 2 - (y_scaled (s, y) - y0) / (y1 - y0) * (h - 4));
      else
        cairo_line_to (cr, px, h - 2 - (y_scaled (s, y) - y0) / (y1 - y0) * (h - 4));
      first = FALSE;
    }
  cairo_stroke (cr);
  gdk_cairo_set_source_rgba (cr, &err);
  for (guint i = 0; i < s->x->len; i++)
    {
      double y = g_array_index (s->y, double, i);
      double px = 2 + (g_array_index (s->x, double, i) - x0) / (x1 - x0) * (w - 4);
      if (!nl_sparkline_out_of_range (s, y))
        continue;
      /* NaN and Inf have no height: a dot on the top edge */
      cairo_arc (cr, px, y_shown (s, y) ? h - 2 - (y_scaled (s, y) - y0) / (y1 - y0) * (h - 4) : 2, 2.2, 0,
                 2 * G_PI);
      cairo_fill (cr);
    }
  cairo_destroy (cr);
}

static void
nl_sparkline_finalize (GObject *object)
{
  NlSparkline *s = NL_SPARKLINE (object);
  g_array_unref (s->x);
  g_array_unref (s->y);
  G_OBJECT_CLASS (nl_sparkline_parent_class)->finalize (object);
}

static void
nl_sparkline_class_init (NlSparklineClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = nl_sparkline_finalize;
  GTK_WIDGET_CLASS (klass)->measure = nl_sparkline_measure;
  GTK_WIDGET_CLASS (klass)->snapshot = nl_sparkline_snapshot;
  gtk_widget_class_set_css_name (GTK_WIDGET_CLASS (klass), "nl-sparkline");
  gtk_widget_class_set_accessible_role (GTK_WIDGET_CLASS (klass), GTK_ACCESSIBLE_ROLE_IMG);
}

static void
nl_sparkline_init (NlSparkline *s)
{
  s->x = g_array_new (FALSE, FALSE, sizeof (double));
  s->y = g_array_new (FALSE, FALSE, sizeof (double));
  s->lo = s->hi = s->y_lo = s->y_hi = NAN;
}

GtkWidget *
nl_sparkline_new (void)
{
  return g_object_new (NL_TYPE_SPARKLINE, NULL);
}

void
nl_sparkline_clear (NlSparkline *s)
{
  g_return_if_fail (NL_IS_SPARKLINE (s));
  g_array_set_size (s->x, 0);
  g_array_set_size (s->y, 0);
  gtk_widget_queue_draw (GTK_WIDGET (s));
}

gboolean
nl_sparkline_append (NlSparkline *s, double x, double y)
{
  g_return_val_if_fail (NL_IS_SPARKLINE (s), FALSE);
  if (s->x->len && x < g_array_index (s->x, double, s->x->len - 1))
    return FALSE;  /* read twice (a resumed run's history, then the store) */
  if (s->x->len && g_array_index (s->x, double, s->x->len - 1) == x)
    g_array_index (s->y, double, s->y->len - 1) = y;  /* a resumed run writes the step again */
  else
    {
      g_array_append_val (s->x, x);
      g_array_append_val (s->y, y);
    }
  gtk_widget_queue_draw (GTK_WIDGET (s));
  return TRUE;
}

void
nl_sparkline_set_range (NlSparkline *s, double lo, double hi)
{
  g_return_if_fail (NL_IS_SPARKLINE (s));
  if ((s->lo == lo || (isnan (s->lo) && isnan (lo))) && (s->hi == hi || (isnan (s->hi) && isnan (hi))))
    return;
  s->lo = lo;
  s->hi = hi;
  gtk_widget_queue_draw (GTK_WIDGET (s));
}

void
nl_sparkline_set_y_bounds (NlSparkline *s, double lo, double hi)
{
  g_return_if_fail (NL_IS_SPARKLINE (s));
  g_return_if_fail (hi > lo);
  s->y_lo = lo;
  s->y_hi = hi;
  gtk_widget_queue_draw (GTK_WIDGET (s));
}

void
nl_sparkline_set_log (NlSparkline *s, gboolean log_y)
{
  g_return_if_fail (NL_IS_SPARKLINE (s));
  s->log_y = log_y;
  gtk_widget_queue_draw (GTK_WIDGET (s));
}

guint
nl_sparkline_get_n_points (NlSparkline *s)
{
  g_return_val_if_fail (NL_IS_SPARKLINE (s), 0);
  return s->x->len;
}

double
nl_sparkline_get_last (NlSparkline *s)
{
  g_return_val_if_fail (NL_IS_SPARKLINE (s), NAN);
  return s->y->len ? g_array_index (s->y, double, s->y->len - 1) : NAN;
}

gboolean
nl_sparkline_last_out_of_range (NlSparkline *s)
{
  g_return_val_if_fail (NL_IS_SPARKLINE (s), FALSE);
  return s->y->len > 0 && nl_sparkline_out_of_range (s, nl_sparkline_get_last (s));
}
