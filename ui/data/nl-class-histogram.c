/* nl-class-histogram.c — one horizontal bar per class, drawn with Cairo:
 * the name on the left, the count after the bar. */
#include "ui/data/nl-class-histogram.h"

#include "engine/session/nl-data-preview.h"

struct _NlClassHistogram {
  GtkWidget parent_instance;
  int n;
  char **names;
  int64_t *counts;
};

G_DEFINE_FINAL_TYPE (NlClassHistogram, nl_class_histogram, GTK_TYPE_WIDGET)

/* rows with names while they fit; beyond, thin bars only */
static int
histogram_row_height (int n)
{
  return n <= 30 ? 20 : MAX (3, 360 / MAX (n, 1));
}

static void
nl_class_histogram_measure (GtkWidget *widget, GtkOrientation orientation, int for_size, int *min, int *nat,
                            int *min_baseline, int *nat_baseline)
{
  NlClassHistogram *h = NL_CLASS_HISTOGRAM (widget);
  if (orientation == GTK_ORIENTATION_HORIZONTAL)
    *min = *nat = 200;
  else
    *min = *nat = MAX (h->n, 1) * histogram_row_height (h->n) + 16;
}

static void
nl_class_histogram_snapshot (GtkWidget *widget, GtkSnapshot *snapshot)
{
  NlClassHistogram *h = NL_CLASS_HISTOGRAM (widget);
  int w = gtk_widget_get_width (widget), ht = gtk_widget_get_height (widget);
  int row = histogram_row_height (h->n), name_w = 0, count_w = 0, x0, x1;
  gboolean text = h->n <= 30;
  GtkStyleContext *style = gtk_widget_get_style_context (widget);
  GdkRGBA fg, accent;
  int64_t max = 1;
  cairo_t *cr;

  if (h->n == 0 || w <= 0)
    return;
  gtk_style_context_get_color (style, &fg);
  if (!gtk_style_context_lookup_color (style, "accent_bg_color", &accent))
    gdk_rgba_parse (&accent, "#3584e4");
  for (int c = 0; c < h->n; c++)
    max = MAX (max, h->counts[c]);
  cr = gtk_snapshot_append_cairo (snapshot, &GRAPHENE_RECT_INIT (0, 0, w, ht));
  if (text)
    for (int c = 0; c < h->n; c++)
      {
        g_autofree char *num = nl_data_format_count (h->counts[c]);
        g_autoptr (PangoLayout) a = gtk_widget_create_pango_layout (widget, h->names[c]);
        g_autoptr (PangoLayout) b = gtk_widget_create_pango_layout (widget, num);
        int lw, cw;
        pango_layout_get_pixel_size (a, &lw, NULL);
        pango_layout_get_pixel_size (b, &cw, NULL);
        name_w = MAX (name_w, lw);
        count_w = MAX (count_w, cw);
      }
  name_w = MIN (name_w, w * 2 / 5);
  x0 = 12 + (text ? name_w + 8 : 0);
  x1 = w - 12 - (text ? count_w + 8 : 0);
  for (int c = 0; c < h->n; c++)
    {
      double y = 8 + c * row, bar = (double) h->counts[c] / max * MAX (x1 - x0, 1);
      gdk_cairo_set_source_rgba (cr, &accent);
      cairo_rectangle (cr, x0, y + (text ? 3 : 0.5), MAX (bar, 1), row - (text ? 6 : 1));
      cairo_fill (cr);
      if (!text)
        continue;
      {
        g_autofree char *num = nl_data_format_count (h->counts[c]);
        g_autoptr (PangoLayout) a = gtk_widget_create_pango_layout (widget, h->names[c]);
        g_autoptr (PangoLayout) b = gtk_widget_create_pango_layout (widget, num);
        int lw, lh;
        pango_layout_set_width (a, name_w * PANGO_SCALE);
        pango_layout_set_ellipsize (a, PANGO_ELLIPSIZE_END);
        pango_layout_get_pixel_size (a, &lw, &lh);
        gdk_cairo_set_source_rgba (cr, &fg);
        cairo_move_to (cr, 12 + name_w - lw, y + (row - lh) / 2.0);
        pango_cairo_show_layout (cr, a);
        cairo_move_to (cr, x0 + bar + 6, y + (row - lh) / 2.0);
        pango_cairo_show_layout (cr, b);
      }
    }
  cairo_destroy (cr);
}

static void
nl_class_histogram_finalize (GObject *object)
{
  NlClassHistogram *h = NL_CLASS_HISTOGRAM (object);
  g_strfreev (h->names);
  g_free (h->counts);
  G_OBJECT_CLASS (nl_class_histogram_parent_class)->finalize (object);
}

static void
nl_class_histogram_class_init (NlClassHistogramClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = nl_class_histogram_finalize;
  GTK_WIDGET_CLASS (klass)->measure = nl_class_histogram_measure;
  GTK_WIDGET_CLASS (klass)->snapshot = nl_class_histogram_snapshot;
  gtk_widget_class_set_css_name (GTK_WIDGET_CLASS (klass), "nl-class-histogram");
  gtk_widget_class_set_accessible_role (GTK_WIDGET_CLASS (klass), GTK_ACCESSIBLE_ROLE_IMG);
}

static void
nl_class_histogram_init (NlClassHistogram *h)
{
}

void
nl_class_histogram_set (NlClassHistogram *h, int n, char **names, const int64_t *counts)
{
  g_return_if_fail (NL_IS_CLASS_HISTOGRAM (h));
  g_strfreev (h->names);
  g_free (h->counts);
  h->n = names && counts ? n : 0;
  h->names = h->n ? g_strdupv (names) : NULL;
  h->counts = h->n ? g_memdup2 (counts, sizeof (int64_t) * n) : NULL;
  gtk_widget_set_visible (GTK_WIDGET (h), h->n > 0);
  gtk_widget_queue_resize (GTK_WIDGET (h));
}

GtkWidget *
nl_class_histogram_new (void)
{
  return g_object_new (NL_TYPE_CLASS_HISTOGRAM, NULL);
}

int
nl_class_histogram_get_n_classes (NlClassHistogram *h)
{
  g_return_val_if_fail (NL_IS_CLASS_HISTOGRAM (h), 0);
  return h->n;
}
