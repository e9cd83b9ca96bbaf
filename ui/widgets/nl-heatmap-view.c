/* nl-heatmap-view.c — a sample with a heat map over it (see nl-heatmap-view.h). */
#include "ui/widgets/nl-heatmap-view.h"

#include <math.h>

#define BAR_W 12       /* the colour bar, right of the image */
#define BAR_GAP 8

struct _NlHeatmapView {
  GtkWidget parent_instance;
  cairo_surface_t *image;   /* the sample at its own size */
  cairo_surface_t *overlay; /* the map at its own size, alpha premultiplied */
  float *map;
  int map_h, map_w;
  double opacity;
};

G_DEFINE_FINAL_TYPE (NlHeatmapView, nl_heatmap_view, GTK_TYPE_WIDGET)

void
nl_heatmap_color (double t, double rgb[3])
{
  /* a perceptually even-ish ramp; blue for little, red for most attention */
  static const double stops[5][3] = {
    { 0.19, 0.07, 0.48 }, { 0.13, 0.56, 0.85 }, { 0.27, 0.82, 0.55 }, { 0.98, 0.80, 0.13 }, { 0.86, 0.10, 0.10 },
  };
  double x = CLAMP (t, 0, 1) * 4;
  int i = MIN ((int) x, 3);
  double f = x - i;
  for (int k = 0; k < 3; k++)
    rgb[k] = stops[i][k] * (1 - f) + stops[i + 1][k] * f;
}

static guint32
argb (double a, const double rgb[3])
{
  /* cairo ARGB32 is premultiplied */
  return ((guint32) lround (a * 255) << 24) | ((guint32) lround (a * rgb[0] * 255) << 16)
         | ((guint32) lround (a * rgb[1] * 255) << 8) | (guint32) lround (a * rgb[2] * 255);
}

cairo_surface_t *
nl_heatmap_surface (const float *map, int h, int w)
{
  cairo_surface_t *s = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, w, h);
  guint8 *data = cairo_image_surface_get_data (s);
  int stride = cairo_image_surface_get_stride (s);
  float lo = INFINITY, hi = -INFINITY;

  for (int i = 0; i < h * w; i++)
    if (isfinite (map[i]))
      lo = MIN (lo, map[i]), hi = MAX (hi, map[i]);
  cairo_surface_flush (s);
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++)
      {
        float v = map[y * w + x];
        double rgb[3];
        nl_heatmap_color (hi > lo && isfinite (v) ? (v - lo) / (hi - lo) : 0, rgb);
        ((guint32 *) (data + y * stride))[x] = argb (1, rgb);
      }
  cairo_surface_mark_dirty (s);
  return s;
}

void
nl_heatmap_view_set_sample (NlHeatmapView *v, const float *pixels, const NlShape *shape)
{
  g_return_if_fail (NL_IS_HEATMAP_VIEW (v));
  g_clear_pointer (&v->image, cairo_surface_destroy);
  if (pixels && shape && (shape->ndim == 3 || shape->ndim == 2))
    {
      int c = shape->ndim == 3 ? (int) shape->d[0] : 1;
      int h = (int) shape->d[shape->ndim - 2], w = (int) shape->d[shape->ndim - 1];
      guint8 *data;
      int stride;
      v->image = cairo_image_surface_create (CAIRO_FORMAT_RGB24, w, h);
      data = cairo_image_surface_get_data (v->image);
      stride = cairo_image_surface_get_stride (v->image);
      cairo_surface_flush (v->image);
      for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
          {
            double rgb[3];
            for (int k = 0; k < 3; k++)
              rgb[k] = CLAMP (pixels[(c == 3 ? k : 0) * h * w + y * w + x], 0, 1);
            ((guint32 *) (data + y * stride))[x] = argb (1, rgb);
          }
      cairo_surface_mark_dirty (v->image);
    }
  gtk_widget_queue_draw (GTK_WIDGET (v));
}

void
nl_heatmap_view_set_map (NlHeatmapView *v, const float *map, int h, int w)
{
  g_return_if_fail (NL_IS_HEATMAP_VIEW (v));
  g_clear_pointer (&v->map, g_free);
  g_clear_pointer (&v->overlay, cairo_surface_destroy);
  v->map_h = v->map_w = 0;
  if (map && h > 0 && w > 0)
    {
      guint8 *data;
      int stride;
      v->map = g_memdup2 (map, sizeof (float) * h * w);
      v->map_h = h;
      v->map_w = w;
      /* alpha follows the value too, so a cold region leaves the image visible */
      v->overlay = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, w, h);
      data = cairo_image_surface_get_data (v->overlay);
      stride = cairo_image_surface_get_stride (v->overlay);
      cairo_surface_flush (v->overlay);
      for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
          {
            double t = CLAMP (map[y * w + x], 0, 1), rgb[3];
            nl_heatmap_color (t, rgb);
            ((guint32 *) (data + y * stride))[x] = argb (0.2 + 0.8 * t, rgb);
          }
      cairo_surface_mark_dirty (v->overlay);
    }
  gtk_widget_queue_draw (GTK_WIDGET (v));
}

const float *
nl_heatmap_view_get_map (NlHeatmapView *v, int *h, int *w)
{
  g_return_val_if_fail (NL_IS_HEATMAP_VIEW (v), NULL);
  if (h)
    *h = v->map_h;
  if (w)
    *w = v->map_w;
  return v->map;
}

void
nl_heatmap_view_set_opacity (NlHeatmapView *v, double opacity)
{
  g_return_if_fail (NL_IS_HEATMAP_VIEW (v));
  v->opacity = CLAMP (opacity, 0, 1);
  gtk_widget_queue_draw (GTK_WIDGET (v));
}

double
nl_heatmap_view_get_opacity (NlHeatmapView *v)
{
  g_return_val_if_fail (NL_IS_HEATMAP_VIEW (v), 0);
  return v->opacity;
}

/* paints surface s (sw x sh) into the rectangle, nearest-neighbour */
static void
paint_scaled (cairo_t *cr, cairo_surface_t *s, double x, double y, double w, double h, double alpha)
{
  int sw = cairo_image_surface_get_width (s), sh = cairo_image_surface_get_height (s);
  cairo_save (cr);
  cairo_translate (cr, x, y);
  cairo_scale (cr, w / sw, h / sh);
  cairo_set_source_surface (cr, s, 0, 0);
  cairo_pattern_set_filter (cairo_get_source (cr), CAIRO_FILTER_NEAREST);
  cairo_rectangle (cr, 0, 0, sw, sh);
  cairo_clip (cr);
  cairo_paint_with_alpha (cr, alpha);
  cairo_restore (cr);
}

void
nl_heatmap_view_draw (NlHeatmapView *v, cairo_t *cr, int width, int height)
{
  int iw = v->image ? cairo_image_surface_get_width (v->image) : MAX (v->map_w, 1);
  int ih = v->image ? cairo_image_surface_get_height (v->image) : MAX (v->map_h, 1);
  double room = width - BAR_W - BAR_GAP, scale = MIN (room / iw, (double) height / ih);
  double w = iw * scale, h = ih * scale, x0 = MAX (0, (room - w) / 2), y0 = MAX (0, (height - h) / 2);

  if (scale <= 0)
    return;
  if (v->image)
    paint_scaled (cr, v->image, x0, y0, w, h, 1);
  else
    {
      cairo_set_source_rgb (cr, 0.5, 0.5, 0.5);
      cairo_rectangle (cr, x0, y0, w, h);
      cairo_fill (cr);
    }
  if (v->overlay)
    paint_scaled (cr, v->overlay, x0, y0, w, h, v->opacity);
  /* the colour bar: what the colours mean, low at the bottom */
  for (int i = 0; v->overlay && i < (int) h; i++)
    {
      double rgb[3];
      nl_heatmap_color (1 - i / MAX (h - 1, 1.0), rgb);
      cairo_set_source_rgb (cr, rgb[0], rgb[1], rgb[2]);
      cairo_rectangle (cr, x0 + w + BAR_GAP, y0 + i, BAR_W, 1);
      cairo_fill (cr);
    }
}

static void
nl_heatmap_view_snapshot (GtkWidget *widget, GtkSnapshot *snapshot)
{
  int w = gtk_widget_get_width (widget), h = gtk_widget_get_height (widget);
  cairo_t *cr = gtk_snapshot_append_cairo (snapshot, &GRAPHENE_RECT_INIT (0, 0, w, h));
  nl_heatmap_view_draw (NL_HEATMAP_VIEW (widget), cr, w, h);
  cairo_destroy (cr);
}

static void
nl_heatmap_view_measure (GtkWidget *widget, GtkOrientation o, int for_size, int *min, int *nat, int *min_base,
                         int *nat_base)
{
  *min = 96;
  *nat = o == GTK_ORIENTATION_HORIZONTAL ? 280 + BAR_W + BAR_GAP : 280;
}

static void
nl_heatmap_view_finalize (GObject *object)
{
  NlHeatmapView *v = NL_HEATMAP_VIEW (object);
  g_clear_pointer (&v->image, cairo_surface_destroy);
  g_clear_pointer (&v->overlay, cairo_surface_destroy);
  g_free (v->map);
  G_OBJECT_CLASS (nl_heatmap_view_parent_class)->finalize (object);
}

static void
nl_heatmap_view_class_init (NlHeatmapViewClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = nl_heatmap_view_finalize;
  GTK_WIDGET_CLASS (klass)->snapshot = nl_heatmap_view_snapshot;
  GTK_WIDGET_CLASS (klass)->measure = nl_heatmap_view_measure;
}

static void
nl_heatmap_view_init (NlHeatmapView *v)
{
  v->opacity = 0.6;
}

GtkWidget *
nl_heatmap_view_new (void)
{
  return g_object_new (NL_TYPE_HEATMAP_VIEW, NULL);
}
