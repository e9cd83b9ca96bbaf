/* nl-plot-private.h — the plot's struct, shared by nl-plot.c (API and
 * controllers), nl-plot-draw.c (layout and Cairo drawing) and
 * nl-plot-export.c (PNG, SVG, CSV). */
#pragma once

#include "ui/plot/nl-plot.h"

struct _NlPlot {
  GtkWidget parent_instance;

  GPtrArray *series;      /* NlPlotSeries, owned */
  char *title, *x_label, *y_label;
  gboolean log_y;
  gboolean integer_x;      /* x counts whole things (epochs): ticks at integers */
  double smoothing;

  /* x view: following shows all points (with headroom, see
   * _nl_plot_compute_x_range); otherwise [view_x0, view_x1]. */
  gboolean following;
  double view_x0, view_x1;
  gboolean auto_valid;
  double auto_x0, auto_x1;

  /* Geometry of the last frame the widget drew (for the pointer). */
  gboolean have_frame;
  double area_x, area_y, area_w, area_h;
  double frame_x0, frame_x1;
  double left_margin;     /* guess for the next layout (see nl-plot-draw.c) */

  gboolean hovering;
  double hover_wx, hover_wy;
  double drag_x0, drag_x1;
};

/* nl-plot.c */
void _nl_plot_compute_x_range (NlPlot *self, double *x0, double *x1);
/* the colour series i is drawn in */
void _nl_plot_series_color (NlPlot *self, guint i, GdkRGBA *color);

/* nl-plot-raster.c: lines drawn into an A8 mask (user coordinates in,
 * scaled to device pixels), painted with the current source. */
typedef struct {
  cairo_surface_t *surface;
  guint8 *data;
  int stride, width, height;   /* in device pixels */
  double scale, ox, oy;        /* mask pixel = (user - origin) * scale */
  double half_width;           /* of the line, in device pixels */
  gboolean dashed;
  double dash_pos;
  gboolean down;               /* the pen has a current point (px, py) */
  double px, py;
} NlPlotMask;

void _nl_plot_mask_init (NlPlotMask *m, int width, int height, double scale, double ox, double oy,
                        double line_width, gboolean dashed);
void _nl_plot_mask_move_to (NlPlotMask *m, double x, double y);
void _nl_plot_mask_line_to (NlPlotMask *m, double x, double y);
void _nl_plot_mask_bar (NlPlotMask *m, double x, double y0, double y1);
void _nl_plot_mask_paint (NlPlotMask *m, cairo_t *cr);
void _nl_plot_mask_finish (NlPlotMask *m);

/* nl-plot-draw.c; widget: the widget's own frame (remember the geometry,
 * draw the hover guide and read-out). */
void _nl_plot_draw_full (NlPlot *self, cairo_t *cr, int width, int height, gboolean background,
                        gboolean widget);
/* shortest decimal that reads back as v */
void _nl_plot_format_exact (char *buf, gsize size, double v);
/* 1, 2 or 5 times a power of ten, at least RAW (ticks; the ridge plot's too). */
double _nl_plot_nice_step (double raw);
/* A tick label of V with the digits STEP needs. */
void _nl_plot_format_tick (char *buf, gsize size, double v, double step, double range_max);
