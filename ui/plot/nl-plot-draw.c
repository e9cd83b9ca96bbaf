/* nl-plot-draw.c — layout and Cairo drawing of the plot, one code path for
 * the widget (in snapshot) and the PNG/SVG exports. Each series is drawn
 * from its per-pixel-column reduction: a vertical bar from min to max
 * joined through first and last, so a one-point spike still shows. */
#include "ui/plot/nl-plot-private.h"
#include <glib/gi18n.h>

#include <math.h>

#define PAD 8.0
#define RIGHT 16.0
#define MAX_TICKS 64

typedef struct {
  double ax, ay, aw, ah;  /* plot area in pixels */
  double x0, x1;          /* visible x */
  double y0, y1;          /* visible y, log10 of it on a log axis */
  gboolean log_y;
} Frame;

typedef struct {
  double pos[MAX_TICKS];  /* in the axis' space (log10 on a log axis) */
  double val[MAX_TICKS];
  int n;
  double step;            /* linear ticks: for the label precision; 0: log */
} Ticks;

static inline double
fx (const Frame *f, double x)
{
  return f->ax + (x - f->x0) / (f->x1 - f->x0) * f->aw;
}

/* y in pixels, unclamped (NaN for y <= 0 on a log axis) */
static inline double
fy_raw (const Frame *f, double y)
{
  double v = f->log_y ? (y > 0 ? log10 (y) : NAN) : y;
  return f->ay + f->ah - (v - f->y0) / (f->y1 - f->y0) * f->ah;
}

/* Cairo's fixed-point coordinates overflow far away; anything past the
 * area is clipped anyway. */
static inline double
fy (const Frame *f, double y)
{
  return CLAMP (fy_raw (f, y), f->ay - 4 * f->ah - 100, f->ay + 5 * f->ah + 100);
}

static inline gboolean
drawable (const Frame *f, double y)
{
  return isfinite (y) && (!f->log_y || y > 0);
}

/* --- ticks --- */

double
_nl_plot_nice_step (double raw)
{
  double e = pow (10, floor (log10 (raw)));
  double m = raw / e;
  return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * e;
}

static void
linear_ticks (double lo, double hi, double pixels, double spacing, double min_step, Ticks *t)
{
  double step = MAX (_nl_plot_nice_step ((hi - lo) / MAX (1.0, pixels / spacing)), min_step);
  double first = ceil (lo / step);
  t->n = 0;
  t->step = step;
  for (double k = first; t->n < MAX_TICKS; k++)
    {
      double v = k * step;
      if (v > hi + step * 1e-9)
        break;
      if (fabs (v) < step * 1e-9)
        v = 0;
      t->pos[t->n] = v;
      t->val[t->n] = v;
      t->n++;
    }
}

static void
log_ticks (double l0, double l1, double pixels, Ticks *t)
{
  static const double mults[] = { 1, 2, 5 };
  double decades = l1 - l0;
  int every = MAX (1, (int) ceil (decades / MAX (1.0, pixels / 40)));
  guint n_mult = decades <= 3 ? 3 : 1;
  t->n = 0;
  t->step = 0;
  for (int k = (int) floor (l0); k <= (int) ceil (l1) && t->n < MAX_TICKS; k++)
    {
      if (k % every != 0)
        continue;
      for (guint m = 0; m < n_mult && t->n < MAX_TICKS; m++)
        {
          double v = mults[m] * pow (10, k);
          double lv = log10 (v);
          if (lv >= l0 - 1e-9 && lv <= l1 + 1e-9)
            {
              t->pos[t->n] = lv;
              t->val[t->n] = v;
              t->n++;
            }
        }
    }
  if (t->n < 2)
    {
      /* less than a decade in view: linear steps, placed on the log axis */
      int kept = 0;
      linear_ticks (pow (10, l0), pow (10, l1), pixels, 40, 0, t);
      for (int i = 0; i < t->n; i++)
        if (t->val[i] > 0)
          {
            t->val[kept] = t->val[i];
            t->pos[kept++] = log10 (t->val[i]);
          }
      t->n = kept;
    }
}

void
_nl_plot_format_tick (char *buf, gsize size, double v, double step, double range_max)
{
  if (step > 0 && range_max < 1e6 && step >= 1e-4)
    g_snprintf (buf, size, "%.*f", MAX (0, (int) -floor (log10 (step) + 1e-9)), v);
  else if (step > 0)
    {
      int sig = (int) floor (log10 (MAX (fabs (v), step))) - (int) floor (log10 (step)) + 1;
      g_snprintf (buf, size, "%.*g", CLAMP (sig, 1, 15), v);
    }
  else
    g_snprintf (buf, size, "%g", v);
}

void
_nl_plot_format_exact (char *buf, gsize size, double v)
{
  for (int digits = 6; digits <= 17; digits++)
    {
      g_snprintf (buf, size, "%.*g", digits, v);
      if (!isfinite (v) || g_strtod (buf, NULL) == v)
        return;
    }
}

/* --- text --- */

static void
text_size (PangoLayout *layout, const char *text, gboolean bold, int *w, int *h)
{
  if (bold)
    {
      g_autofree char *markup = g_markup_printf_escaped ("<b>%s</b>", text);
      pango_layout_set_markup (layout, markup, -1);
    }
  else
    {
      pango_layout_set_attributes (layout, NULL);
      pango_layout_set_text (layout, text, -1);
    }
  pango_layout_get_pixel_size (layout, w, h);
}

static void
show_text (cairo_t *cr, PangoLayout *layout, const char *text, gboolean bold, double x, double y)
{
  int w, h;
  text_size (layout, text, bold, &w, &h);
  cairo_move_to (cr, x, y);
  pango_cairo_show_layout (cr, layout);
}

static void
set_rgba (cairo_t *cr, const GdkRGBA *c, double alpha)
{
  cairo_set_source_rgba (cr, c->red, c->green, c->blue, c->alpha * alpha);
}

/* Legend entries flowing in rows from (x, y) within maxw; returns the rows
 * used. Draws only when draw is set (the first call measures). */
static int
legend (NlPlot *self, cairo_t *cr, PangoLayout *layout, const GdkRGBA *fg, double x, double y,
        double maxw, int line_h, gboolean draw)
{
  double cx = x;
  int rows = self->series->len > 0 ? 1 : 0;
  for (guint i = 0; i < self->series->len; i++)
    {
      NlPlotSeries *s = g_ptr_array_index (self->series, i);
      int w, h;
      double entry;
      GdkRGBA color;
      text_size (layout, nl_plot_series_get_label (s), FALSE, &w, &h);
      entry = 22 + w + 16;
      if (cx > x && cx + entry > x + maxw)
        {
          cx = x;
          y += line_h + 2;
          rows++;
        }
      if (draw)
        {
          static const double dash[] = { 5, 3 };
          _nl_plot_series_color (self, i, &color);
          set_rgba (cr, &color, 1);
          cairo_set_line_width (cr, 2.5);
          cairo_set_dash (cr, dash, nl_plot_series_get_dashed (s) ? 2 : 0, 0);
          cairo_move_to (cr, cx, y + line_h / 2.0);
          cairo_line_to (cr, cx + 18, y + line_h / 2.0);
          cairo_stroke (cr);
          cairo_set_dash (cr, NULL, 0, 0);
          set_rgba (cr, fg, 0.85);
          cairo_move_to (cr, cx + 22, y);
          pango_cairo_show_layout (cr, layout);
        }
      cx += entry;
    }
  return rows;
}

/* --- series --- */

/* Where the segment between points a and b crosses x, in the axis' space
 * (log10 on a log axis): the segments that join the view to the points
 * just outside it. */
static gboolean
edge_value (const Frame *f, NlPlotSeries *s, const double *ys, gsize a, gsize b, double x, double *v)
{
  double xa, xb, va, vb;
  if (!drawable (f, ys[a]) || !drawable (f, ys[b]))
    return FALSE;
  nl_plot_series_get_point (s, a, &xa, NULL);
  nl_plot_series_get_point (s, b, &xb, NULL);
  va = f->log_y ? log10 (ys[a]) : ys[a];
  vb = f->log_y ? log10 (ys[b]) : ys[b];
  *v = xb > xa ? va + (x - xa) / (xb - xa) * (vb - va) : va;
  return TRUE;
}

/* Where lines go: a Cairo path (vector surfaces: SVG), or the coverage
 * mask of nl-plot-raster.c (image and recording surfaces: the widget and
 * PNG), which is many times faster for dense series. */
typedef struct {
  cairo_t *cr;
  NlPlotMask *mask;
} Pen;

static inline void
pen_move (const Pen *p, double x, double y)
{
  if (p->mask)
    _nl_plot_mask_move_to (p->mask, x, y);
  else
    cairo_move_to (p->cr, x, y);
}

static inline void
pen_line (const Pen *p, double x, double y)
{
  if (p->mask)
    _nl_plot_mask_line_to (p->mask, x, y);
  else
    cairo_line_to (p->cr, x, y);
}

/* the column's bar from min to max; the pen ends at (x, last) */
static inline void
pen_bar (const Pen *p, double x, double min, double max, double last)
{
  if (p->mask)
    {
      _nl_plot_mask_bar (p->mask, x, min, max);
      _nl_plot_mask_move_to (p->mask, x, last);
    }
  else
    {
      cairo_line_to (p->cr, x, min);
      cairo_line_to (p->cr, x, max);
      cairo_line_to (p->cr, x, last);
    }
}

static gboolean
edge_point (const Pen *pen, const Frame *f, NlPlotSeries *s, const double *ys, gsize a, gsize b,
            gboolean left)
{
  double v, py;
  if (!edge_value (f, s, ys, a, b, left ? f->x0 : f->x1, &v))
    return FALSE;
  py = f->ay + f->ah - (v - f->y0) / (f->y1 - f->y0) * f->ah;
  py = CLAMP (py, f->ay - 4 * f->ah - 100, f->ay + 5 * f->ah + 100);
  if (left)
    pen_move (pen, f->ax, py);
  else
    pen_line (pen, f->ax + f->aw, py);
  return TRUE;
}

/* Each column: joined from the previous column's last point to its first,
 * then a bar over its min..max, so a one-point spike still shows. */
static void
draw_reduction (const Pen *pen, const Frame *f, NlPlotSeries *s, const NlPlotReduction *r)
{
  const double *ys = nl_plot_series_get_smoothed (s, r->smoothing);
  gsize len = nl_plot_series_get_length (s);
  double colw = f->aw / r->width;
  gboolean down = FALSE;

  if (r->begin > 0 && r->begin < len)
    down = edge_point (pen, f, s, ys, r->begin - 1, r->begin, TRUE);
  for (guint c = 0; c < r->width; c++)
    {
      const NlPlotColumn *col = &r->columns[c];
      double px;
      if (col->n == 0)
        {
          if (col->gap_before)
            down = FALSE;
          continue;
        }
      px = f->ax + (c + 0.5) * colw;
      if (down && !col->gap_before)
        pen_line (pen, px, fy (f, col->first));
      else
        pen_move (pen, px, fy (f, col->first));
      if (col->min < col->max)
        pen_bar (pen, px, fy (f, col->min), fy (f, col->max), fy (f, col->last));
      else
        /* a lone point: a zero-length segment, which shows as a dot */
        pen_line (pen, px, fy (f, col->last));
      down = !col->gap_after;
    }
  if (down && r->end > 0 && r->end < len)
    edge_point (pen, f, s, ys, r->end - 1, r->end, FALSE);
}

/* One layer of a series (raw or smoothed) in colour at alpha. */
static void
draw_layer (cairo_t *cr, const Frame *f, double scale, NlPlotSeries *s, const NlPlotReduction *r,
            const GdkRGBA *color, double alpha)
{
  static const double dash[] = { 6, 4 };
  gboolean dashed = nl_plot_series_get_dashed (s);
  cairo_surface_type_t type = cairo_surface_get_type (cairo_get_target (cr));

  set_rgba (cr, color, alpha);
  if (type == CAIRO_SURFACE_TYPE_IMAGE || type == CAIRO_SURFACE_TYPE_RECORDING)
    {
      NlPlotMask mask;
      Pen pen = { cr, &mask };
      _nl_plot_mask_init (&mask, (int) f->aw, (int) f->ah + 4, scale, f->ax, f->ay - 2, 1.5, dashed);
      draw_reduction (&pen, f, s, r);
      _nl_plot_mask_paint (&mask, cr);
      _nl_plot_mask_finish (&mask);
    }
  else
    {
      Pen pen = { cr, NULL };
      cairo_save (cr);
      cairo_rectangle (cr, f->ax, f->ay - 2, f->aw, f->ah + 4);
      cairo_clip (cr);
      cairo_set_line_cap (cr, CAIRO_LINE_CAP_ROUND);
      cairo_set_line_join (cr, CAIRO_LINE_JOIN_ROUND);
      cairo_set_line_width (cr, 1.5);
      cairo_set_dash (cr, dash, dashed ? 2 : 0, 0);
      cairo_new_path (cr);
      draw_reduction (&pen, f, s, r);
      cairo_stroke (cr);
      cairo_restore (cr);
    }
}

static void
colors (NlPlot *self, GdkRGBA *fg, GdkRGBA *bg)
{
  double lum;
  /* gtk_widget_get_color () is 4.10; in 4.8 the style context is the way */
  G_GNUC_BEGIN_IGNORE_DEPRECATIONS
  gtk_style_context_get_color (gtk_widget_get_style_context (GTK_WIDGET (self)), fg);
  G_GNUC_END_IGNORE_DEPRECATIONS
  lum = 0.2126 * fg->red + 0.7152 * fg->green + 0.0722 * fg->blue;
  if (lum > 0.5)
    *bg = (GdkRGBA) { 0.141, 0.141, 0.141, 1 };
  else
    *bg = (GdkRGBA) { 1, 1, 1, 1 };
}

/* Visible y, in the axis' space (log10 on a log axis): over the
 * reductions, which does not depend on their width (every point in
 * [x0, x1] is in some column), and where the segments to the points just
 * outside the view cross its edges. */
static gboolean
y_range (NlPlot *self, const Frame *f, const NlPlotReduction *const *reds, double *lo, double *hi)
{
  double a = INFINITY, b = -INFINITY, v;
  for (guint i = 0; i < 2 * self->series->len; i++)
    {
      const NlPlotReduction *r = reds[i];
      NlPlotSeries *s = g_ptr_array_index (self->series, i / 2);
      gsize len = nl_plot_series_get_length (s);
      const double *ys;
      if (!r)
        continue;
      for (guint c = 0; c < r->width; c++)
        if (r->columns[c].n > 0)
          {
            a = MIN (a, f->log_y ? log10 (r->columns[c].min) : r->columns[c].min);
            b = MAX (b, f->log_y ? log10 (r->columns[c].max) : r->columns[c].max);
          }
      ys = nl_plot_series_get_smoothed (s, r->smoothing);
      if (r->begin > 0 && r->begin < len && edge_value (f, s, ys, r->begin - 1, r->begin, f->x0, &v))
        {
          a = MIN (a, v);
          b = MAX (b, v);
        }
      if (r->end > 0 && r->end < len && edge_value (f, s, ys, r->end - 1, r->end, f->x1, &v))
        {
          a = MIN (a, v);
          b = MAX (b, v);
        }
    }
  *lo = a;
  *hi = b;
  return isfinite (a);
}

static void
reduce_all (NlPlot *self, const Frame *f, guint cols, const NlPlotReduction **reds)
{
  guint n = self->series->len;
  for (guint i = 0; i < n; i++)
    {
      NlPlotSeries *s = g_ptr_array_index (self->series, i);
      reds[2 * i] = nl_plot_series_reduce (s, f->x0, f->x1, cols, 0, f->log_y);
      reds[2 * i + 1] = self->smoothing > 0
        ? nl_plot_series_reduce (s, f->x0, f->x1, cols, self->smoothing, f->log_y) : NULL;
    }
}

static void
draw_hover (NlPlot *self, cairo_t *cr, PangoLayout *layout, const Frame *f, const GdkRGBA *fg,
            const GdkRGBA *bg, int line_h)
{
  g_autofree char *text = nl_plot_get_hover_text (self);
  g_auto (GStrv) lines = NULL;
  guint series_of[256];
  guint n_lines = 0;
  int tw = 0, th, w, h;
  double bx, by;

  if (!text)
    return;
  cairo_set_line_width (cr, 1);
  set_rgba (cr, fg, 0.4);
  cairo_move_to (cr, floor (self->hover_wx) + 0.5, f->ay);
  cairo_line_to (cr, floor (self->hover_wx) + 0.5, f->ay + f->ah);
  cairo_stroke (cr);

  for (guint i = 0; i < self->series->len; i++)
    {
      NlPlotSeries *s = g_ptr_array_index (self->series, i);
      GdkRGBA color;
      double x, y;
      gsize k;
      if (!nl_plot_get_hover_index (self, i, &k))
        continue;
      if (n_lines < G_N_ELEMENTS (series_of))
        series_of[n_lines++] = i;
      _nl_plot_series_color (self, i, &color);
      nl_plot_series_get_point (s, k, &x, &y);
      if (self->smoothing > 0)
        y = nl_plot_series_get_smoothed (s, self->smoothing)[k];
      if (drawable (f, y) && x >= f->x0 && x <= f->x1)
        {
          set_rgba (cr, &color, 1);
          cairo_arc (cr, fx (f, x), fy (f, y), 3.5, 0, 2 * G_PI);
          cairo_fill (cr);
        }
    }

  lines = g_strsplit (text, "\n", -1);
  for (guint l = 0; lines[l]; l++)
    {
      text_size (layout, lines[l], l == 0, &w, &h);
      tw = MAX (tw, w + (l > 0 ? 14 : 0));
    }
  th = (int) g_strv_length (lines) * line_h;
  bx = self->hover_wx + 14;
  by = self->hover_wy + 14;
  if (bx + tw + 12 > f->ax + f->aw)
    bx = self->hover_wx - 14 - tw - 12;
  if (bx < 0)
    bx = MAX (0, f->ax + f->aw - tw - 12);
  if (by + th + 8 > f->ay + f->ah)
    by = MAX (f->ay, f->ay + f->ah - th - 8);
  set_rgba (cr, bg, 0.92);
  cairo_rectangle (cr, bx, by, tw + 12, th + 8);
  cairo_fill_preserve (cr);
  set_rgba (cr, fg, 0.3);
  cairo_stroke (cr);
  for (guint l = 0; lines[l]; l++)
    {
      double ty = by + 4 + l * line_h;
      if (l > 0 && l - 1 < n_lines)
        {
          GdkRGBA color;
          _nl_plot_series_color (self, series_of[l - 1], &color);
          set_rgba (cr, &color, 1);
          cairo_rectangle (cr, bx + 6, ty + line_h / 2.0 - 4, 8, 8);
          cairo_fill (cr);
        }
      set_rgba (cr, fg, 1);
      show_text (cr, layout, lines[l], l == 0, bx + 6 + (l > 0 ? 14 : 0), ty);
    }
}

static void
draw_axes (NlPlot *self, cairo_t *cr, PangoLayout *layout, const Frame *f, const Ticks *xt,
           const Ticks *yt, const GdkRGBA *fg, int line_h)
{
  char buf[64];
  double range_max = MAX (fabs (f->y0), fabs (f->y1));
  int w, h;

  cairo_set_line_width (cr, 1);
  set_rgba (cr, fg, 0.1);
  for (int i = 0; i < xt->n; i++)
    {
      double px = floor (fx (f, xt->pos[i])) + 0.5;
      cairo_move_to (cr, px, f->ay);
      cairo_line_to (cr, px, f->ay + f->ah);
    }
  for (int i = 0; i < yt->n; i++)
    {
      double py = floor (f->ay + f->ah - (yt->pos[i] - f->y0) / (f->y1 - f->y0) * f->ah) + 0.5;
      cairo_move_to (cr, f->ax, py);
      cairo_line_to (cr, f->ax + f->aw, py);
    }
  cairo_stroke (cr);

  set_rgba (cr, fg, 0.5);
  cairo_move_to (cr, f->ax - 0.5, f->ay);
  cairo_line_to (cr, f->ax - 0.5, f->ay + f->ah + 0.5);
  cairo_line_to (cr, f->ax + f->aw, f->ay + f->ah + 0.5);
  cairo_stroke (cr);

  set_rgba (cr, fg, 0.75);
  for (int i = 0; i < xt->n; i++)
    {
      _nl_plot_format_tick (buf, sizeof buf, xt->val[i], xt->step, MAX (fabs (f->x0), fabs (f->x1)));
      text_size (layout, buf, FALSE, &w, &h);
      cairo_move_to (cr, fx (f, xt->pos[i]) - w / 2.0, f->ay + f->ah + 4);
      pango_cairo_show_layout (cr, layout);
    }
  for (int i = 0; i < yt->n; i++)
    {
      double py = f->ay + f->ah - (yt->pos[i] - f->y0) / (f->y1 - f->y0) * f->ah;
      _nl_plot_format_tick (buf, sizeof buf, yt->val[i], yt->step, range_max);
      text_size (layout, buf, FALSE, &w, &h);
      cairo_move_to (cr, f->ax - 6 - w, py - h / 2.0);
      pango_cairo_show_layout (cr, layout);
    }
}

/* Widest y tick label, for the left margin. */
static int
y_labels_width (PangoLayout *layout, const Frame *f, const Ticks *yt)
{
  char buf[64];
  int best = 0, w, h;
  for (int i = 0; i < yt->n; i++)
    {
      _nl_plot_format_tick (buf, sizeof buf, yt->val[i], yt->step, MAX (fabs (f->y0), fabs (f->y1)));
      text_size (layout, buf, FALSE, &w, &h);
      best = MAX (best, w);
    }
  return best;
}

static void
draw_labels (NlPlot *self, cairo_t *cr, PangoLayout *layout, const Frame *f, const GdkRGBA *fg,
             int width, int height, int line_h)
{
  int w, h;
  set_rgba (cr, fg, 1);
  if (self->title && *self->title)
    show_text (cr, layout, self->title, TRUE, PAD, PAD);
  set_rgba (cr, fg, 0.85);
  if (self->x_label && *self->x_label)
    {
      text_size (layout, self->x_label, FALSE, &w, &h);
      cairo_move_to (cr, f->ax + (f->aw - w) / 2, height - PAD - line_h);
      pango_cairo_show_layout (cr, layout);
    }
  if (self->y_label && *self->y_label)
    {
      text_size (layout, self->y_label, FALSE, &w, &h);
      cairo_save (cr);
      cairo_move_to (cr, PAD, f->ay + (f->ah + w) / 2);
      cairo_rotate (cr, -G_PI / 2);
      pango_cairo_show_layout (cr, layout);
      cairo_restore (cr);
    }
}

/* The y range and ticks, and a left margin (*left) that fits their
 * labels; FALSE when the plot area is too small to draw.
 * The left margin fits the y labels, which depend on the y range, which
 * comes from the reductions, whose width depends on the margin. The y
 * range does not depend on that width, so start from last frame's
 * margin and redo the reductions at most once when it was wrong. */
static gboolean
fit_frame (NlPlot *self, PangoLayout *layout, Frame *frame, const NlPlotReduction **reds, int width, double scale,
           int line_h, Ticks *yt, double *left_out, gboolean *have_y)
{
  Frame f = *frame;
  double left, lo, hi;
  guint cols;

  left = self->left_margin > 0 ? self->left_margin : 56;
  f.ax = left;
  f.aw = floor (width - left - RIGHT);
  if (f.aw < 8 || f.ah < 8)
    return FALSE;
  cols = (guint) (f.aw * scale);
  reduce_all (self, &f, cols, reds);
  *have_y = y_range (self, &f, reds, &lo, &hi);
  if (!*have_y)
    {
      lo = 0;
      hi = 1;
    }
  if (hi - lo <= fabs (hi) * 1e-12)
    {
      double d = fabs (hi) > 0 ? fabs (hi) * 0.1 : 0.5;
      lo -= d;
      hi += d;
    }
  f.y0 = lo - (hi - lo) * 0.05;
  f.y1 = hi + (hi - lo) * 0.05;
  if (f.log_y)
    log_ticks (f.y0, f.y1, f.ah, yt);
  else
    linear_ticks (f.y0, f.y1, f.ah, 40, 0, yt);
  {
    double needed = ceil (PAD + ((self->y_label && *self->y_label) ? line_h + 6 : 0)
                          + y_labels_width (layout, &f, yt) + 8);
    if (needed != left)
      {
        left = needed;
        f.ax = left;
        f.aw = floor (width - left - RIGHT);
        if (f.aw < 8)
          return FALSE;
        cols = (guint) (f.aw * scale);
        reduce_all (self, &f, cols, reds);
      }
  }
  *frame = f;
  *left_out = left;
  return TRUE;
}

/* Why nothing is drawn, in the middle of the plot area */
static void
draw_empty_note (NlPlot *self, cairo_t *cr, PangoLayout *layout, const Frame *f, const GdkRGBA *fg)
{
  guint n = self->series->len;
  int tw, th;
  set_rgba (cr, fg, 0.5);
  gboolean any = FALSE;
  for (guint i = 0; i < n; i++)
    any |= nl_plot_series_get_length (g_ptr_array_index (self->series, i)) > 0;
  text_size (layout, n == 0 ? _("No series") : !any ? _("No data yet")
             : f->log_y ? _("No positive values to show on a log scale") : _("No values in this range"),
             FALSE, &tw, &th);
  cairo_move_to (cr, f->ax + (f->aw - tw) / 2, f->ay + (f->ah - th) / 2);
  pango_cairo_show_layout (cr, layout);
}

void
_nl_plot_draw_full (NlPlot *self, cairo_t *cr, int width, int height, gboolean background,
                   gboolean widget)
{
  g_autoptr (PangoLayout) layout = gtk_widget_create_pango_layout (GTK_WIDGET (self), NULL);
  guint n = self->series->len;
  g_autofree const NlPlotReduction **reds = g_new0 (const NlPlotReduction *, 2 * n + 1);
  GdkRGBA fg, bg;
  Frame f = { 0 };
  Ticks xt, yt;
  int line_h, w, top, rows;
  double left, bottom;
  gboolean have_y;
  double scale = 1, sy;

  /* one column per device pixel: the window's scale, or the target's */
  if (widget)
    scale = gtk_widget_get_scale_factor (GTK_WIDGET (self));
  else
    cairo_surface_get_device_scale (cairo_get_target (cr), &scale, &sy);
  scale = CLAMP (scale, 1, 4);

  colors (self, &fg, &bg);
  if (background)
    {
      set_rgba (cr, &bg, 1);
      cairo_paint (cr);
    }
  text_size (layout, "0", FALSE, &w, &line_h);

  top = PAD;
  if (self->title && *self->title)
    top += line_h + 4;
  rows = legend (self, cr, layout, &fg, PAD, top, width - 2 * PAD, line_h, FALSE);
  top += rows * (line_h + 2) + (rows ? 6 : 0);
  bottom = PAD + line_h + 4 + ((self->x_label && *self->x_label) ? line_h + 4 : 0);
  f.ay = top;
  f.ah = floor (height - top - bottom);
  f.log_y = self->log_y;
  _nl_plot_compute_x_range (self, &f.x0, &f.x1);
  if (!fit_frame (self, layout, &f, reds, width, scale, line_h, &yt, &left, &have_y))
    return;
  linear_ticks (f.x0, f.x1, f.aw, 90, self->integer_x ? 1 : 0, &xt);

  if (widget)
    {
      self->left_margin = left;
      self->have_frame = TRUE;
      self->area_x = f.ax;
      self->area_y = f.ay;
      self->area_w = f.aw;
      self->area_h = f.ah;
      self->frame_x0 = f.x0;
      self->frame_x1 = f.x1;
    }

  draw_axes (self, cr, layout, &f, &xt, &yt, &fg, line_h);
  draw_labels (self, cr, layout, &f, &fg, width, height, line_h);
  legend (self, cr, layout, &fg, PAD, (self->title && *self->title) ? PAD + line_h + 4 : PAD,
          width - 2 * PAD, line_h, TRUE);

  for (guint i = 0; i < n; i++)
    {
      NlPlotSeries *s = g_ptr_array_index (self->series, i);
      GdkRGBA color;
      _nl_plot_series_color (self, i, &color);
      /* smoothing on: the raw series stays visible, faint, behind */
      draw_layer (cr, &f, scale, s, reds[2 * i], &color, reds[2 * i + 1] ? 0.25 : 1);
      if (reds[2 * i + 1])
        draw_layer (cr, &f, scale, s, reds[2 * i + 1], &color, 1);
    }

  if (!have_y)
    draw_empty_note (self, cr, layout, &f, &fg);
  if (widget && self->hovering)
    draw_hover (self, cr, layout, &f, &fg, &bg, line_h);
}

void
nl_plot_draw (NlPlot *plot, cairo_t *cr, int width, int height, gboolean background)
{
  g_return_if_fail (NL_IS_PLOT (plot));
  g_return_if_fail (cr != NULL);
  g_return_if_fail (width > 0 && height > 0);
  _nl_plot_draw_full (plot, cr, width, height, background, FALSE);
}
