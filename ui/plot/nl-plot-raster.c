/* nl-plot-raster.c — thick antialiased lines drawn straight into an A8
 * coverage mask, then composited once in the series' colour. Cairo 1.16
 * strokes a long self-overlapping polyline (a noisy series: a tall bar in
 * every pixel column) at 15-25 us a segment, far over a frame for one
 * series; spans written here cost about their area. Coverage is combined
 * with max, so overlaps do not darken a translucent series either. */
#include "ui/plot/nl-plot-private.h"

#include <math.h>
#include <string.h>

#define DASH_ON 6.0
#define DASH_OFF 4.0

void
_nl_plot_mask_init (NlPlotMask *m, int width, int height, double scale, double ox, double oy,
                   double line_width, gboolean dashed)
{
  m->width = MAX (1, (int) ceil (width * scale));
  m->height = MAX (1, (int) ceil (height * scale));
  m->surface = cairo_image_surface_create (CAIRO_FORMAT_A8, m->width, m->height);
  cairo_surface_set_device_scale (m->surface, scale, scale);
  cairo_surface_flush (m->surface);
  m->data = cairo_image_surface_get_data (m->surface);
  m->stride = cairo_image_surface_get_stride (m->surface);
  m->scale = scale;
  m->ox = ox;
  m->oy = oy;
  m->half_width = line_width * scale / 2;
  m->dashed = dashed;
  m->dash_pos = 0;
  m->down = FALSE;
}

void
_nl_plot_mask_finish (NlPlotMask *m)
{
  g_clear_pointer (&m->surface, cairo_surface_destroy);
  m->data = NULL;
}

void
_nl_plot_mask_paint (NlPlotMask *m, cairo_t *cr)
{
  cairo_surface_mark_dirty (m->surface);
  cairo_mask_surface (cr, m->surface, m->ox, m->oy);
}

static inline void
cover (guint8 *p, double c)
{
  int v = (int) (c * 255 + 0.5);
  if (v > *p)
    *p = (guint8) MIN (v, 255);
}

/* [a, b) rows of column x, weighted by w (how much of the column the line covers) */
static void
span_v (NlPlotMask *m, int x, double a, double b, double w)
{
  int r0, r1;
  if (x < 0 || x >= m->width || w <= 0)
    return;
  a = MAX (a, 0);
  b = MIN (b, m->height);
  if (b <= a)
    return;
  r0 = (int) a;
  r1 = (int) ceil (b);
  for (int r = r0; r < r1; r++)
    cover (m->data + (gsize) r * m->stride + x, (MIN (b, r + 1) - MAX (a, r)) * w);
}

static void
span_h (NlPlotMask *m, int y, double a, double b, double w)
{
  guint8 *row;
  int c0, c1;
  if (y < 0 || y >= m->height || w <= 0)
    return;
  a = MAX (a, 0);
  b = MIN (b, m->width);
  if (b <= a)
    return;
  row = m->data + (gsize) y * m->stride;
  c0 = (int) a;
  c1 = (int) ceil (b);
  for (int c = c0; c < c1; c++)
    cover (row + c, (MIN (b, c + 1) - MAX (a, c)) * w);
}

static inline gboolean
dash_on (const NlPlotMask *m, double s)
{
  double period = (DASH_ON + DASH_OFF) * m->scale;
  return !m->dashed || s - floor (s / period) * period < DASH_ON * m->scale;
}

/* One segment in mask pixels, its ends squared off half a width beyond:
 * walk the major axis one pixel at a time and cover the line's cross
 * section there (vertical span for shallow lines, horizontal for steep). */
static void
segment (NlPlotMask *m, double x0, double y0, double x1, double y1)
{
  double dx = x1 - x0, dy = y1 - y0, hw = m->half_width;
  double len = sqrt (dx * dx + dy * dy);

  if (fabs (dx) >= fabs (dy))
    {
      double lo = MIN (x0, x1) - hw, hi = MAX (x0, x1) + hw;
      double slope = dx != 0 ? dy / dx : 0, hv = hw * sqrt (1 + slope * slope);
      int c0 = MAX (0, (int) floor (lo)), c1 = MIN (m->width, (int) ceil (hi));
      for (int c = c0; c < c1; c++)
        {
          double xc = c + 0.5, t = dx != 0 ? CLAMP ((xc - x0) / dx, 0, 1) : 0, yc = y0 + t * dy;
          if (dash_on (m, m->dash_pos + t * len))
            span_v (m, c, yc - hv, yc + hv, MIN (hi, c + 1) - MAX (lo, c));
        }
    }
  else
    {
      double lo = MIN (y0, y1) - hw, hi = MAX (y0, y1) + hw;
      double inv = dx / dy, hh = hw * sqrt (1 + inv * inv);
      int r0 = MAX (0, (int) floor (lo)), r1 = MIN (m->height, (int) ceil (hi));
      for (int r = r0; r < r1; r++)
        {
          double yc = r + 0.5, t = CLAMP ((yc - y0) / dy, 0, 1), xc = x0 + t * dx;
          if (dash_on (m, m->dash_pos + t * len))
            span_h (m, r, xc - hh, xc + hh, MIN (hi, r + 1) - MAX (lo, r));
        }
    }
  m->dash_pos += len;
}

void
_nl_plot_mask_move_to (NlPlotMask *m, double x, double y)
{
  m->down = TRUE;
  m->px = (x - m->ox) * m->scale;
  m->py = (y - m->oy) * m->scale;
}

/* Like cairo_line_to: without a current point it only moves there. A
 * zero-length segment leaves a dot, as a round cap would. */
void
_nl_plot_mask_line_to (NlPlotMask *m, double x, double y)
{
  double mx = (x - m->ox) * m->scale, my = (y - m->oy) * m->scale;
  if (m->down)
    segment (m, m->px, m->py, mx, my);
  m->down = TRUE;
  m->px = mx;
  m->py = my;
}

/* A vertical bar at x from y0 to y1 that leaves the pen where it was. */
void
_nl_plot_mask_bar (NlPlotMask *m, double x, double y0, double y1)
{
  double mx = (x - m->ox) * m->scale;
  segment (m, mx, (y0 - m->oy) * m->scale, mx, (y1 - m->oy) * m->scale);
}
