/* nl-scatter-plot.c — a class-coloured scatter with a legend (see nl-scatter-plot.h). */
#include "ui/widgets/nl-scatter-plot.h"

#include <glib/gi18n.h>
#include <math.h>

#define PAD 12          /* around the plotting area */
#define LEGEND_W 130    /* the legend, right of the points */
#define DOT_R 3.0
#define HIT_R 8.0       /* how near a click must be */
#define INSET 6.0       /* points stay this far inside the frame */

struct _NlScatterPlot {
  GtkWidget parent_instance;
  float *xy;
  int *labels, n, n_classes;
  char **names;
  float lo[2], hi[2];
  int selected;
};

enum { POINT_ACTIVATED, N_SIGNALS };
static guint signals[N_SIGNALS];

G_DEFINE_FINAL_TYPE (NlScatterPlot, nl_scatter_plot, GTK_TYPE_WIDGET)

void
nl_scatter_plot_class_color (int c, GdkRGBA *out)
{
  /* Tableau 10: distinct at a glance; hues repeat, darker, past ten classes */
  static const guint32 palette[10] = { 0x4e79a7, 0xf28e2b, 0xe15759, 0x76b7b2, 0x59a14f,
                                       0xedc948, 0xb07aa1, 0xff9da7, 0x9c755f, 0xbab0ac };
  guint32 rgb = c >= 0 ? palette[c % 10] : 0x808080;  /* no class: grey */
  double dim = c >= 10 ? 0.7 : 1.0;
  out->red = ((rgb >> 16) & 0xff) / 255.0 * dim;
  out->green = ((rgb >> 8) & 0xff) / 255.0 * dim;
  out->blue = (rgb & 0xff) / 255.0 * dim;
  out->alpha = 1;
}

void
nl_scatter_plot_set_points (NlScatterPlot *p, const float *xy, const int *labels, int n,
                            const char *const *class_names, int n_classes)
{
  g_return_if_fail (NL_IS_SCATTER_PLOT (p));
  g_clear_pointer (&p->xy, g_free);
  g_clear_pointer (&p->labels, g_free);
  g_clear_pointer (&p->names, g_strfreev);
  p->n = MAX (n, 0);
  p->n_classes = MAX (n_classes, 0);
  p->selected = -1;
  p->xy = p->n ? g_memdup2 (xy, sizeof (float) * 2 * p->n) : NULL;
  p->labels = p->n ? g_memdup2 (labels, sizeof (int) * p->n) : NULL;
  p->names = g_new0 (char *, p->n_classes + 1);
  for (int c = 0; c < p->n_classes; c++)
    p->names[c] = class_names && class_names[c] ? g_strdup (class_names[c]) : g_strdup_printf ("%d", c);
  p->lo[0] = p->lo[1] = INFINITY;
  p->hi[0] = p->hi[1] = -INFINITY;
  for (int i = 0; i < p->n; i++)
    for (int k = 0; k < 2; k++)
      if (isfinite (p->xy[2 * i + k]))
        p->lo[k] = MIN (p->lo[k], p->xy[2 * i + k]), p->hi[k] = MAX (p->hi[k], p->xy[2 * i + k]);
  for (int k = 0; k < 2; k++)
    if (!(p->hi[k] > p->lo[k]))  /* one point, or none: a unit range around it */
      {
        double mid = isfinite (p->lo[k]) ? p->lo[k] : 0;
        p->lo[k] = mid - 1, p->hi[k] = mid + 1;
      }
  gtk_widget_queue_draw (GTK_WIDGET (p));
}

int
nl_scatter_plot_get_n_points (NlScatterPlot *p)
{
  g_return_val_if_fail (NL_IS_SCATTER_PLOT (p), 0);
  return p->n;
}

const float *
nl_scatter_plot_get_points (NlScatterPlot *p, const int **labels)
{
  g_return_val_if_fail (NL_IS_SCATTER_PLOT (p), NULL);
  if (labels)
    *labels = p->labels;
  return p->xy;
}

static void
plot_area (NlScatterPlot *p, double *x0, double *y0, double *w, double *h)
{
  *x0 = PAD;
  *y0 = PAD;
  *w = MAX (gtk_widget_get_width (GTK_WIDGET (p)) - 2 * PAD - LEGEND_W, 1);
  *h = MAX (gtk_widget_get_height (GTK_WIDGET (p)) - 2 * PAD, 1);
}

gboolean
nl_scatter_plot_point_position (NlScatterPlot *p, int i, double *x, double *y)
{
  double x0, y0, w, h;
  g_return_val_if_fail (NL_IS_SCATTER_PLOT (p), FALSE);
  if (i < 0 || i >= p->n || !isfinite (p->xy[2 * i]) || !isfinite (p->xy[2 * i + 1]))
    return FALSE;
  plot_area (p, &x0, &y0, &w, &h);
  x0 += INSET, y0 += INSET, w = MAX (w - 2 * INSET, 1), h = MAX (h - 2 * INSET, 1);
  *x = x0 + (p->xy[2 * i] - p->lo[0]) / (p->hi[0] - p->lo[0]) * w;
  *y = y0 + h - (p->xy[2 * i + 1] - p->lo[1]) / (p->hi[1] - p->lo[1]) * h;  /* y grows upwards */
  return TRUE;
}

int
nl_scatter_plot_point_at (NlScatterPlot *p, double x, double y)
{
  int best = -1;
  double best_d = HIT_R * HIT_R;
  g_return_val_if_fail (NL_IS_SCATTER_PLOT (p), -1);
  for (int i = 0; i < p->n; i++)
    {
      double px, py, d;
      if (!nl_scatter_plot_point_position (p, i, &px, &py))
        continue;
      d = (px - x) * (px - x) + (py - y) * (py - y);
      if (d <= best_d)
        best = i, best_d = d;
    }
  return best;
}

int
nl_scatter_plot_get_selected (NlScatterPlot *p)
{
  g_return_val_if_fail (NL_IS_SCATTER_PLOT (p), -1);
  return p->selected;
}

void
nl_scatter_plot_select (NlScatterPlot *p, int i)
{
  g_return_if_fail (NL_IS_SCATTER_PLOT (p));
  p->selected = i >= 0 && i < p->n ? i : -1;
  gtk_widget_queue_draw (GTK_WIDGET (p));
}

static void
fg_color (GtkWidget *w, GdkRGBA *fg)
{
  /* gtk_widget_get_color () is 4.10; in 4.8 the style context is the way */
  G_GNUC_BEGIN_IGNORE_DEPRECATIONS
  gtk_style_context_get_color (gtk_widget_get_style_context (w), fg);
  G_GNUC_END_IGNORE_DEPRECATIONS
}

static void
draw_legend (NlScatterPlot *p, GtkWidget *widget, cairo_t *cr, double x, double y)
{
  GdkRGBA fg;
  fg_color (widget, &fg);
  for (int c = 0; c < p->n_classes; c++, y += 18)
    {
      g_autoptr (PangoLayout) layout = gtk_widget_create_pango_layout (widget, p->names[c]);
      GdkRGBA col;
      nl_scatter_plot_class_color (c, &col);
      gdk_cairo_set_source_rgba (cr, &col);
      cairo_arc (cr, x + 6, y + 8, 5, 0, 2 * G_PI);
      cairo_fill (cr);
      pango_layout_set_width (layout, (LEGEND_W - 24) * PANGO_SCALE);
      pango_layout_set_ellipsize (layout, PANGO_ELLIPSIZE_END);
      gdk_cairo_set_source_rgba (cr, &fg);
      cairo_move_to (cr, x + 16, y);
      pango_cairo_show_layout (cr, layout);
    }
}

static void
nl_scatter_plot_snapshot (GtkWidget *widget, GtkSnapshot *snapshot)
{
  NlScatterPlot *p = NL_SCATTER_PLOT (widget);
  int W = gtk_widget_get_width (widget), H = gtk_widget_get_height (widget);
  cairo_t *cr = gtk_snapshot_append_cairo (snapshot, &GRAPHENE_RECT_INIT (0, 0, W, H));
  double x0, y0, w, h, px, py;
  GdkRGBA fg;

  fg_color (widget, &fg);
  plot_area (p, &x0, &y0, &w, &h);
  cairo_set_source_rgba (cr, fg.red, fg.green, fg.blue, 0.25);
  cairo_set_line_width (cr, 1);
  cairo_rectangle (cr, x0 - 0.5, y0 - 0.5, w + 1, h + 1);
  cairo_stroke (cr);
  for (int i = 0; i < p->n; i++)
    if (nl_scatter_plot_point_position (p, i, &px, &py))
      {
        GdkRGBA col;
        nl_scatter_plot_class_color (p->labels[i], &col);
        cairo_set_source_rgba (cr, col.red, col.green, col.blue, 0.8);
        cairo_arc (cr, px, py, DOT_R, 0, 2 * G_PI);
        cairo_fill (cr);
      }
  if (nl_scatter_plot_point_position (p, p->selected, &px, &py))
    {
      gdk_cairo_set_source_rgba (cr, &fg);
      cairo_set_line_width (cr, 2);
      cairo_arc (cr, px, py, DOT_R + 4, 0, 2 * G_PI);
      cairo_stroke (cr);
    }
  draw_legend (p, widget, cr, x0 + w + PAD, y0);
  cairo_destroy (cr);
}

static void
on_pressed (GtkGestureClick *gesture, int n_press, double x, double y, NlScatterPlot *p)
{
  int i = nl_scatter_plot_point_at (p, x, y);
  if (i < 0)
    return;
  nl_scatter_plot_select (p, i);
  g_signal_emit (p, signals[POINT_ACTIVATED], 0, i);
}

static gboolean
on_query_tooltip (GtkWidget *w, int x, int y, gboolean keyboard, GtkTooltip *tooltip, gpointer unused)
{
  NlScatterPlot *p = NL_SCATTER_PLOT (w);
  int i = keyboard ? p->selected : nl_scatter_plot_point_at (p, x, y);
  g_autofree char *text = NULL;
  if (i < 0)
    return FALSE;
  /* TRANSLATORS: a point of the projection: the test sample's index and class */
  text = g_strdup_printf (_("Sample %d: %s"), i,
                          p->labels[i] >= 0 && p->labels[i] < p->n_classes ? p->names[p->labels[i]] : "?");
  gtk_tooltip_set_text (tooltip, text);
  return TRUE;
}

static void
nl_scatter_plot_measure (GtkWidget *widget, GtkOrientation o, int for_size, int *min, int *nat, int *min_base,
                         int *nat_base)
{
  *min = o == GTK_ORIENTATION_HORIZONTAL ? LEGEND_W + 120 : 160;
  *nat = o == GTK_ORIENTATION_HORIZONTAL ? LEGEND_W + 420 : 360;
}

static void
nl_scatter_plot_finalize (GObject *object)
{
  NlScatterPlot *p = NL_SCATTER_PLOT (object);
  g_free (p->xy);
  g_free (p->labels);
  g_strfreev (p->names);
  G_OBJECT_CLASS (nl_scatter_plot_parent_class)->finalize (object);
}

static void
nl_scatter_plot_class_init (NlScatterPlotClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = nl_scatter_plot_finalize;
  GTK_WIDGET_CLASS (klass)->snapshot = nl_scatter_plot_snapshot;
  GTK_WIDGET_CLASS (klass)->measure = nl_scatter_plot_measure;
  signals[POINT_ACTIVATED] = g_signal_new ("point-activated", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL,
                                           NULL, NULL, G_TYPE_NONE, 1, G_TYPE_INT);
}

static void
nl_scatter_plot_init (NlScatterPlot *p)
{
  GtkGesture *click = gtk_gesture_click_new ();
  p->selected = -1;
  p->names = g_new0 (char *, 1);
  g_signal_connect (click, "pressed", G_CALLBACK (on_pressed), p);
  gtk_widget_add_controller (GTK_WIDGET (p), GTK_EVENT_CONTROLLER (click));
  gtk_widget_set_cursor_from_name (GTK_WIDGET (p), "crosshair");
  gtk_widget_set_has_tooltip (GTK_WIDGET (p), TRUE);
  g_signal_connect (p, "query-tooltip", G_CALLBACK (on_query_tooltip), NULL);
}

GtkWidget *
nl_scatter_plot_new (void)
{
  return g_object_new (NL_TYPE_SCATTER_PLOT, NULL);
}
