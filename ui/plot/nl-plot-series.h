/* nl-plot-series.h — one series of a plot (the model in Sysprof's
 * model/view split): every point kept, x non-decreasing, with a per-pixel
 * min/max/last reduction the view asks for when it draws. No GTK drawing
 * here, only GdkRGBA for the colour. */
#pragma once

#include <gdk/gdk.h>

G_BEGIN_DECLS

#define NL_TYPE_PLOT_SERIES (nl_plot_series_get_type ())
G_DECLARE_FINAL_TYPE (NlPlotSeries, nl_plot_series, NL, PLOT_SERIES, GObject)

NlPlotSeries *nl_plot_series_new (const char *label);
const char *nl_plot_series_get_label (NlPlotSeries *s);
/* NULL colour: the plot picks one from its palette. */
void nl_plot_series_set_color (NlPlotSeries *s, const GdkRGBA *color);
const GdkRGBA *nl_plot_series_get_color (NlPlotSeries *s);
/* Dashed line (e.g. validation vs train). */
void nl_plot_series_set_dashed (NlPlotSeries *s, gboolean dashed);
gboolean nl_plot_series_get_dashed (NlPlotSeries *s);

/* x must not decrease (an x smaller than the last is clamped to it). NaN y
 * is kept as a gap. ::changed is emitted (at most once per main-loop
 * iteration) so views redraw. */
void nl_plot_series_append (NlPlotSeries *s, double x, double y);
void nl_plot_series_append_many (NlPlotSeries *s, const double *x, const double *y, gsize n);
void nl_plot_series_clear (NlPlotSeries *s);
gsize nl_plot_series_get_length (NlPlotSeries *s);
/* Point i; FALSE when out of range. */
gboolean nl_plot_series_get_point (NlPlotSeries *s, gsize i, double *x, double *y);
/* Range of x and of finite y (FALSE when empty). */
gboolean nl_plot_series_get_bounds (NlPlotSeries *s, double *x0, double *x1, double *y0, double *y1);

/* --- Added for the view (drawing, hover, smoothing). --- */

/* One pixel column of a reduction: the finite y values (for a log plot the
 * finite positive ones) of the points that fall into it, in x order. */
typedef struct {
  double min, max;
  double first, last;
  guint32 n;            /* how many such points; 0: none (min..last unset) */
  gboolean gap_before;  /* a NaN/inf y came before the first such point */
  gboolean gap_after;   /* a NaN/inf y came after the last such point */
} NlPlotColumn;

/* A point with x in [x0, x1] falls into column
 *   c = floor ((x - x0) * ((double) width / (x1 - x0)))
 * and c == width (x == x1, or rounding) counts as width - 1. */
typedef struct {
  double x0, x1;
  guint width;
  double smoothing;       /* 0: raw y; > 0: the debiased EMA of y */
  gboolean positive_only; /* y <= 0 skipped (log scale) */
  gsize begin, end;       /* the points [begin, end) are those with x0 <= x <= x1 */
  const NlPlotColumn *columns; /* width of them */
} NlPlotReduction;

/* Binary search to [x0, x1], then one pass over the points in range. The
 * series keeps its two most recently used reductions, keyed on (x0, x1,
 * width, smoothing, positive_only) and the length: asking again without a
 * change costs nothing, and after appends only the new points are folded
 * in. The result belongs to s: valid until two other keys are asked for,
 * or the series is cleared; read it again after appends. NULL (with a
 * critical) on bad arguments: width 0, x1 <= x0, non-finite bounds. */
const NlPlotReduction *nl_plot_series_reduce (NlPlotSeries *s, double x0, double x1, guint width,
                                              double smoothing, gboolean positive_only);
/* Points folded into reductions so far (cost meter for tests and benches). */
guint64 nl_plot_series_get_n_folded (NlPlotSeries *s);

/* TensorBoard's smoothing over ALL points: with w = smoothing and t the
 * count of finite y so far, s_t = w s_{t-1} + (1 - w) y_t and the value
 * shown is s_t / (1 - w^t); a NaN/inf y stays NaN and does not count.
 * smoothing 0 is the identity. The values are cached for one smoothing
 * and extended on append. Returns s's array of get_length values (valid
 * until the next change or another smoothing is asked for). */
const double *nl_plot_series_get_smoothed (NlPlotSeries *s, double smoothing);
/* Index of the point whose x is nearest to x (ties: the first such point);
 * FALSE when the series is empty. */
gboolean nl_plot_series_find_nearest (NlPlotSeries *s, double x, gsize *index);

G_END_DECLS
