/* nl-plot.h — the metric plot widget (Cairo in snapshot): several series,
 * legend, axes with ticks, hover read-out of exact values, zoom and pan on
 * x, linear or log y, EMA smoothing with bias correction drawn over the
 * faint raw series, export as PNG, SVG and CSV. Draws a per-pixel-column
 * min/max/last reduction so a million points per series draw in a frame. */
#pragma once

#include <gtk/gtk.h>

#include "ui/plot/nl-plot-series.h"

G_BEGIN_DECLS

#define NL_TYPE_PLOT (nl_plot_get_type ())
G_DECLARE_FINAL_TYPE (NlPlot, nl_plot, NL, PLOT, GtkWidget)

GtkWidget *nl_plot_new (void);
void nl_plot_add_series (NlPlot *plot, NlPlotSeries *series);
void nl_plot_remove_series (NlPlot *plot, NlPlotSeries *series);
void nl_plot_clear (NlPlot *plot);
guint nl_plot_get_n_series (NlPlot *plot);
NlPlotSeries *nl_plot_get_series (NlPlot *plot, guint i);

void nl_plot_set_title (NlPlot *plot, const char *title);
void nl_plot_set_x_label (NlPlot *plot, const char *label);
void nl_plot_set_y_label (NlPlot *plot, const char *label);
/* x counts whole things (epochs): no ticks between integers. */
void nl_plot_set_x_integer (NlPlot *plot, gboolean integer_x);
void nl_plot_set_log_y (NlPlot *plot, gboolean log_y);
gboolean nl_plot_get_log_y (NlPlot *plot);
/* 0 (off) .. 0.999: EMA weight of the past, TensorBoard's slider. */
void nl_plot_set_smoothing (NlPlot *plot, double smoothing);
double nl_plot_get_smoothing (NlPlot *plot);
/* Visible x range; reset shows everything (and follows new points). */
void nl_plot_set_x_range (NlPlot *plot, double x0, double x1);
void nl_plot_get_x_range (NlPlot *plot, double *x0, double *x1);
void nl_plot_reset_view (NlPlot *plot);

gboolean nl_plot_export_png (NlPlot *plot, const char *path, int width, int height, GError **error);
gboolean nl_plot_export_svg (NlPlot *plot, const char *path, int width, int height, GError **error);
/* Every point of every series (raw, not reduced): series,x,y. */
gboolean nl_plot_export_csv (NlPlot *plot, const char *path, GError **error);

/* --- Added: drawing at any size, and the controllers' paths (tests call
 * them as the pointer would). Coordinates are the widget's, in pixels. --- */

/* The whole plot on any Cairo context (the widget, PNG and SVG exports use
 * it); background: also fill the background (exports), not just draw. */
void nl_plot_draw (NlPlot *plot, cairo_t *cr, int width, int height, gboolean background);
/* Plot x at widget x, from the last frame drawn; FALSE before the first. */
gboolean nl_plot_x_at (NlPlot *plot, double wx, double *x);
/* Pointer moved to (wx, wy) / left: the guide and read-out follow it. */
void nl_plot_hover (NlPlot *plot, double wx, double wy);
void nl_plot_hover_end (NlPlot *plot);
/* Nearest point of series i to the hovered x; FALSE when not hovering,
 * the pointer is outside the plot area or the series is empty. */
gboolean nl_plot_get_hover_index (NlPlot *plot, guint i, gsize *index);
/* The read-out's text (one line for x, one per series); NULL if none. */
char *nl_plot_get_hover_text (NlPlot *plot);
/* Zoom x around widget x by factor (< 1 zooms in), pan by dx pixels (the
 * content moves with the pointer). Both stop following new points. */
void nl_plot_zoom_at (NlPlot *plot, double wx, double factor);
void nl_plot_pan (NlPlot *plot, double dx);
/* TRUE after nl_plot_reset_view() until zoom, pan or set_x_range. */
gboolean nl_plot_get_following (NlPlot *plot);

G_END_DECLS
