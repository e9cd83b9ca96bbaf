/* nl-range-plot.c — the per-point dynamic ranges of an INT8 calibration
 * (see nl-range-plot.h). */
#include "ui/widgets/nl-range-plot.h"
#include <glib/gi18n.h>

#include <math.h>

#define PAD 8.0
#define GAP 12.0
#define ROW_H 24.0
#define BAR_H 10.0

struct _NlRangePlot {
  GtkWidget parent_instance;
  GArray *rows;               /* NlQuantRange, the strings owned */
  int hover;                  /* -1: none */
};

G_DEFINE_FINAL_TYPE (NlRangePlot, nl_range_plot, GTK_TYPE_WIDGET)

static void
range_clear (gpointer data)
{
  g_free (((NlQuantRange *) data)->point);
}

/* The numbers of row i: "[-1.23, 4.56] → 3.90 u8". */
static char *
row_numbers (const NlQuantRange *r)
{
  /* TRANSLATORS: a calibrated range: [observed min, observed max] → chosen threshold, then u8 or s8 */
  return g_strdup_printf (_("[%.3g, %.3g] → %.3g %s"), r->min, r->max, r->threshold, r->is_unsigned ? "u8" : "s8");
}

static void
set_bold (PangoLayout *layout)
{
  PangoAttrList *attrs = pango_attr_list_new ();
  pango_attr_list_insert (attrs, pango_attr_weight_new (PANGO_WEIGHT_BOLD));
  pango_layout_set_attributes (layout, attrs);
  pango_attr_list_unref (attrs);
}

static double
text_size (GtkWidget *w, const char *text, gboolean bold)
{
  g_autoptr (PangoLayout) layout = gtk_widget_create_pango_layout (w, text);
  int tw, th;
  if (bold)
    set_bold (layout);
  pango_layout_get_pixel_size (layout, &tw, &th);
  return tw;
}

/* Widest point name and widest numbers column. */
static void
measure_columns (NlRangePlot *p, double *name_w, double *num_w)
{
  *name_w = text_size (GTK_WIDGET (p), _("Point"), TRUE);
  *num_w = text_size (GTK_WIDGET (p), _("Observed → threshold"), TRUE);
  for (guint i = 0; i < p->rows->len; i++)
    {
      const NlQuantRange *r = &g_array_index (p->rows, NlQuantRange, i);
      g_autofree char *nums = row_numbers (r);
      *name_w = MAX (*name_w, text_size (GTK_WIDGET (p), r->point, FALSE));
      *num_w = MAX (*num_w, text_size (GTK_WIDGET (p), nums, FALSE));
    }
}

static void
lookup (GtkWidget *w, const char *name, const char *fallback, GdkRGBA *out)
{
  G_GNUC_BEGIN_IGNORE_DEPRECATIONS
  if (!gtk_style_context_lookup_color (gtk_widget_get_style_context (w), name, out))
    gdk_rgba_parse (out, fallback);
  G_GNUC_END_IGNORE_DEPRECATIONS
}

static void
draw_text (cairo_t *cr, GtkWidget *w, const char *text, double x, double y, double align_x, gboolean bold)
{
  g_autoptr (PangoLayout) layout = gtk_widget_create_pango_layout (w, text);
  int tw, th;
  if (bold)
    set_bold (layout);
  pango_layout_get_pixel_size (layout, &tw, &th);
  cairo_move_to (cr, x - align_x * tw, y - th / 2.0);
  pango_cairo_show_layout (cr, layout);
}

typedef struct {
  GdkRGBA fg, dim, accent, clip, warn;
} Colors;

/* One row: its scale [-R, R] over [x0, x0 + w], centred on 0. */
static void
draw_row (cairo_t *cr, const NlQuantRange *r, double x0, double w, double y, const Colors *c)
{
  double R = MAX (MAX (fabsf (r->min), fabsf (r->max)), r->threshold), mid = x0 + w / 2, half = w / 2;
  double lo, hi, t, keep_lo, keep_hi;
  if (!(R > 0) || !isfinite (R))
    R = 1;
  lo = mid + r->min / R * half;
  hi = mid + r->max / R * half;
  t = r->threshold / R * half;
  /* what survives quantization: up to +t, and down to -t when signed */
  keep_lo = r->is_unsigned ? lo : MAX (lo, mid - t);
  keep_hi = MIN (hi, mid + t);
  /* the axis and its zero */
  gdk_cairo_set_source_rgba (cr, &c->dim);
  cairo_set_line_width (cr, 1);
  cairo_move_to (cr, x0, y + 0.5);
  cairo_line_to (cr, x0 + w, y + 0.5);
  cairo_move_to (cr, floor (mid) + 0.5, y - BAR_H / 2 - 2);
  cairo_line_to (cr, floor (mid) + 0.5, y + BAR_H / 2 + 2);
  cairo_stroke (cr);
  /* the observed range; the part beyond the threshold is clipped */
  gdk_cairo_set_source_rgba (cr, &c->accent);
  cairo_rectangle (cr, keep_lo, y - BAR_H / 2, MAX (keep_hi - keep_lo, 1), BAR_H);
  cairo_fill (cr);
  gdk_cairo_set_source_rgba (cr, &c->clip);
  if (hi > mid + t)
    cairo_rectangle (cr, mid + t, y - BAR_H / 2, hi - (mid + t), BAR_H);
  if (!r->is_unsigned && lo < mid - t)
    cairo_rectangle (cr, lo, y - BAR_H / 2, (mid - t) - lo, BAR_H);
  cairo_fill (cr);
  /* the threshold: what maps to 255 (u8) or ±127 (s8) */
  gdk_cairo_set_source_rgba (cr, &c->warn);
  cairo_set_line_width (cr, 2);
  cairo_move_to (cr, mid + t, y - BAR_H / 2 - 4);
  cairo_line_to (cr, mid + t, y + BAR_H / 2 + 4);
  if (!r->is_unsigned)
    {
      cairo_move_to (cr, mid - t, y - BAR_H / 2 - 4);
      cairo_line_to (cr, mid - t, y + BAR_H / 2 + 4);
    }
  cairo_stroke (cr);
}

static void
nl_range_plot_snapshot (GtkWidget *widget, GtkSnapshot *snapshot)
{
  NlRangePlot *p = NL_RANGE_PLOT (widget);
  int w = gtk_widget_get_width (widget), h = gtk_widget_get_height (widget);
  double name_w, num_w, bar_x, bar_w;
  Colors c;
  cairo_t *cr;

  if (p->rows->len == 0 || w <= 0 || h <= 0)
    return;
  measure_columns (p, &name_w, &num_w);
  bar_x = PAD + name_w + GAP;
  bar_w = MAX (w - bar_x - GAP - num_w - PAD, 40);
  G_GNUC_BEGIN_IGNORE_DEPRECATIONS
  gtk_style_context_get_color (gtk_widget_get_style_context (widget), &c.fg);
  G_GNUC_END_IGNORE_DEPRECATIONS
  c.dim = c.fg;
  c.dim.alpha *= 0.35f;
  lookup (widget, "accent_bg_color", "#3584e4", &c.accent);
  lookup (widget, "warning_color", "#c64600", &c.warn);
  c.clip = c.accent;
  c.clip.alpha *= 0.3f;
  cr = gtk_snapshot_append_cairo (snapshot, &GRAPHENE_RECT_INIT (0, 0, w, h));

  gdk_cairo_set_source_rgba (cr, &c.fg);
  draw_text (cr, widget, _("Point"), PAD, PAD + ROW_H / 2, 0, TRUE);
  draw_text (cr, widget, _("Range (each row to its own scale, 0 in the middle)"), bar_x + bar_w / 2,
             PAD + ROW_H / 2, 0.5, TRUE);
  draw_text (cr, widget, _("Observed → threshold"), bar_x + bar_w + GAP, PAD + ROW_H / 2, 0, TRUE);
  for (guint i = 0; i < p->rows->len; i++)
    {
      const NlQuantRange *r = &g_array_index (p->rows, NlQuantRange, i);
      double y = PAD + ROW_H * (i + 1.5);
      g_autofree char *nums = row_numbers (r);
      if ((int) i == p->hover)
        {
          GdkRGBA band = c.fg;
          band.alpha *= 0.08f;
          gdk_cairo_set_source_rgba (cr, &band);
          cairo_rectangle (cr, 0, y - ROW_H / 2, w, ROW_H);
          cairo_fill (cr);
        }
      draw_row (cr, r, bar_x, bar_w, floor (y), &c);
      gdk_cairo_set_source_rgba (cr, &c.fg);
      draw_text (cr, widget, r->point, PAD, y, 0, FALSE);
      draw_text (cr, widget, nums, bar_x + bar_w + GAP, y, 0, FALSE);
    }
  cairo_destroy (cr);
}

static void
nl_range_plot_measure (GtkWidget *widget, GtkOrientation orientation, int for_size, int *minimum, int *natural,
                       int *minimum_baseline, int *natural_baseline)
{
  NlRangePlot *p = NL_RANGE_PLOT (widget);
  double name_w, num_w;
  if (orientation == GTK_ORIENTATION_HORIZONTAL)
    {
      measure_columns (p, &name_w, &num_w);
      *minimum = (int) ceil (PAD + name_w + GAP + 120 + GAP + num_w + PAD);
      *natural = (int) ceil (PAD + name_w + GAP + 360 + GAP + num_w + PAD);
    }
  else
    *minimum = *natural = p->rows->len ? (int) ceil (2 * PAD + ROW_H * (p->rows->len + 1)) : 0;
}

int
nl_range_plot_row_at (NlRangePlot *plot, double y)
{
  int i;
  g_return_val_if_fail (NL_IS_RANGE_PLOT (plot), -1);
  i = (int) floor ((y - PAD) / ROW_H) - 1;
  return i >= 0 && i < (int) plot->rows->len ? i : -1;
}

char *
nl_range_plot_describe_row (NlRangePlot *plot, int i)
{
  const NlQuantRange *r;
  g_return_val_if_fail (NL_IS_RANGE_PLOT (plot), NULL);
  if (!(r = nl_range_plot_get_row (plot, i)))
    return NULL;
  if (r->is_unsigned)
    return g_strdup_printf (_("%s: observed %g to %g, unsigned (u8): 0 to %g maps to 0 to 255"), r->point,
                            r->min, r->max, r->threshold);
  return g_strdup_printf (_("%s: observed %g to %g, signed (s8): ±%g maps to ±127"), r->point, r->min, r->max,
                          r->threshold);
}

static gboolean
on_query_tooltip (GtkWidget *widget, int x, int y, gboolean keyboard, GtkTooltip *tooltip, gpointer data)
{
  NlRangePlot *p = NL_RANGE_PLOT (widget);
  g_autofree char *text = nl_range_plot_describe_row (p, nl_range_plot_row_at (p, y));
  if (!text)
    return FALSE;
  gtk_tooltip_set_text (tooltip, text);
  return TRUE;
}

static void
set_hover (NlRangePlot *p, int row)
{
  if (row == p->hover)
    return;
  p->hover = row;
  gtk_widget_queue_draw (GTK_WIDGET (p));
}

static void
on_motion (GtkEventControllerMotion *m, double x, double y, NlRangePlot *p)
{
  set_hover (p, nl_range_plot_row_at (p, y));
}

static void
on_leave (GtkEventControllerMotion *m, NlRangePlot *p)
{
  set_hover (p, -1);
}

void
nl_range_plot_set_table (NlRangePlot *plot, const NlQuantTable *table)
{
  g_return_if_fail (NL_IS_RANGE_PLOT (plot));
  g_array_set_size (plot->rows, 0);
  for (guint i = 0; table && i < table->ranges->len; i++)
    {
      NlQuantRange r = g_array_index (table->ranges, NlQuantRange, i);
      r.point = g_strdup (r.point);
      g_array_append_val (plot->rows, r);
    }
  plot->hover = -1;
  gtk_widget_queue_resize (GTK_WIDGET (plot));
}

int
nl_range_plot_get_n_rows (NlRangePlot *plot)
{
  g_return_val_if_fail (NL_IS_RANGE_PLOT (plot), 0);
  return (int) plot->rows->len;
}

const NlQuantRange *
nl_range_plot_get_row (NlRangePlot *plot, int i)
{
  g_return_val_if_fail (NL_IS_RANGE_PLOT (plot), NULL);
  return i >= 0 && i < (int) plot->rows->len ? &g_array_index (plot->rows, NlQuantRange, i) : NULL;
}

GtkWidget *
nl_range_plot_new (void)
{
  return g_object_new (NL_TYPE_RANGE_PLOT, NULL);
}

static void
nl_range_plot_finalize (GObject *object)
{
  g_array_unref (NL_RANGE_PLOT (object)->rows);
  G_OBJECT_CLASS (nl_range_plot_parent_class)->finalize (object);
}

static void
nl_range_plot_class_init (NlRangePlotClass *klass)
{
  GtkWidgetClass *wc = GTK_WIDGET_CLASS (klass);
  G_OBJECT_CLASS (klass)->finalize = nl_range_plot_finalize;
  wc->snapshot = nl_range_plot_snapshot;
  wc->measure = nl_range_plot_measure;
  gtk_widget_class_set_css_name (wc, "nl-range-plot");
}

static void
nl_range_plot_init (NlRangePlot *p)
{
  GtkEventController *motion = gtk_event_controller_motion_new ();
  p->rows = g_array_new (FALSE, TRUE, sizeof (NlQuantRange));
  g_array_set_clear_func (p->rows, range_clear);
  p->hover = -1;
  g_signal_connect (motion, "motion", G_CALLBACK (on_motion), p);
  g_signal_connect (motion, "leave", G_CALLBACK (on_leave), p);
  gtk_widget_add_controller (GTK_WIDGET (p), motion);
  gtk_widget_set_has_tooltip (GTK_WIDGET (p), TRUE);
  g_signal_connect (p, "query-tooltip", G_CALLBACK (on_query_tooltip), NULL);
}
