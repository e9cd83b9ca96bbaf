/* nl-plot-reduce.c — the per-pixel-column min/max/first/last reduction of a
 * series (what the plot draws), cached and extended on append so a live
 * plot costs only the new points per frame. */
#include "ui/plot/nl-plot-series-private.h"

#include <math.h>
#include <string.h>

/* first i in [lo, hi) with x[i] >= v (strict: x[i] > v) */
static gsize
bound (const double *x, gsize lo, gsize hi, double v, gboolean strict)
{
  while (lo < hi)
    {
      gsize mid = lo + (hi - lo) / 2;
      if (strict ? x[mid] <= v : x[mid] < v)
        lo = mid + 1;
      else
        hi = mid;
    }
  return lo;
}

static inline gsize
column_of (double x, double x0, double scale, gsize last_col)
{
  gsize c = (gsize) floor ((x - x0) * scale);
  return MIN (c, last_col);
}

static inline gboolean
kept (double y, gboolean positive_only)
{
  return fabs (y) <= G_MAXDOUBLE && (!positive_only || y > 0);
}

/* Folds points [i, j), all in one column, into it. Exactly the result of
 * taking them one by one (a NaN/inf before anything kept in the column
 * marks gap_before, after the last kept one gap_after), but the middle is
 * a branch-free loop the compiler vectorises. */
static void
fold_run (NlPlotColumn *col, const double *ys, gsize i, gsize j, gboolean positive_only)
{
  gsize a = i, b;
  gboolean trailing_gap = FALSE;
  double mn, mx;
  guint32 count = 0;

  for (; a < j && !kept (ys[a], positive_only); a++)
    if (!isfinite (ys[a]))
      {
        col->gap_after = TRUE;
        if (col->n == 0)
          col->gap_before = TRUE;
      }
  if (a == j)
    return;
  for (b = j - 1; !kept (ys[b], positive_only); b--)
    if (!isfinite (ys[b]))
      trailing_gap = TRUE;
  if (col->n == 0)
    col->first = col->min = col->max = ys[a];
  mn = col->min;
  mx = col->max;
  for (gsize k = a; k <= b; k++)
    {
      double y = ys[k];
      gboolean keep = kept (y, positive_only);
      mn = keep && y < mn ? y : mn;
      mx = keep && y > mx ? y : mx;
      count += keep;
    }
  col->min = mn;
  col->max = mx;
  col->last = ys[b];
  col->n += count;
  col->gap_after = trailing_gap;
}

/* Folds points [from, to) (all with x in [x0, x1]) into the columns. x
 * never decreases, so a column's points are a run: its end is found by
 * galloping and bisection on the column formula (monotone in x), and the
 * formula runs O(log run) times per column instead of once per point.
 * Continuing the fold later over new points gives exactly what one pass
 * over everything would. */
static void
fold (NlPlotColumn *cols, guint width, double x0, double x1, gboolean positive_only,
      const double *xs, const double *ys, gsize from, gsize to)
{
  const double scale = (double) width / (x1 - x0);
  const gsize last_col = width - 1;
  gsize i = from;

  while (i < to)
    {
      gsize c = column_of (xs[i], x0, scale, last_col);
      gsize inside = i, step = 1, lo, hi;
      /* gallop: inside stays in column c, hi ends up past it (or at to) */
      for (hi = i + 1; hi < to && column_of (xs[hi], x0, scale, last_col) == c; hi = inside + step)
        {
          inside = hi;
          step *= 2;
        }
      hi = MIN (hi, to);
      lo = inside + 1;
      while (lo < hi)
        {
          gsize mid = lo + (hi - lo) / 2;
          if (column_of (xs[mid], x0, scale, last_col) == c)
            lo = mid + 1;
          else
            hi = mid;
        }
      fold_run (&cols[c], ys, i, lo, positive_only);
      i = lo;
    }
}

static NlPlotReduceCache *
find_slot (NlPlotSeries *s, double x0, double x1, guint width, double smoothing, gboolean positive_only)
{
  for (guint k = 0; k < G_N_ELEMENTS (s->cache); k++)
    {
      NlPlotReduceCache *c = &s->cache[k];
      if (c->valid && c->epoch == s->epoch && c->len_seen <= s->len && c->r.x0 == x0 && c->r.x1 == x1
          && c->r.width == width && c->r.smoothing == smoothing && c->r.positive_only == positive_only)
        return c;
    }
  return NULL;
}

static NlPlotReduceCache *
lru_slot (NlPlotSeries *s)
{
  NlPlotReduceCache *best = &s->cache[0];
  for (guint k = 1; k < G_N_ELEMENTS (s->cache); k++)
    if (!s->cache[k].valid || (best->valid && s->cache[k].used < best->used))
      best = &s->cache[k];
  return best;
}

const NlPlotReduction *
nl_plot_series_reduce (NlPlotSeries *s, double x0, double x1, guint width, double smoothing,
                       gboolean positive_only)
{
  NlPlotReduceCache *c;
  const double *ys;
  gsize from;

  g_return_val_if_fail (NL_IS_PLOT_SERIES (s), NULL);
  g_return_val_if_fail (width > 0, NULL);
  g_return_val_if_fail (isfinite (x0) && isfinite (x1) && x1 > x0, NULL);
  g_return_val_if_fail (smoothing >= 0 && smoothing < 1, NULL);

  positive_only = !!positive_only;
  ys = nl_plot_series_get_smoothed (s, smoothing);
  c = find_slot (s, x0, x1, width, smoothing, positive_only);
  if (!c)
    {
      c = lru_slot (s);
      if (c->cols_cap < width)
        {
          g_free (c->cols);
          c->cols = g_new (NlPlotColumn, width);
          c->cols_cap = width;
        }
      memset (c->cols, 0, sizeof (NlPlotColumn) * width);
      c->valid = TRUE;
      c->epoch = s->epoch;
      c->r = (NlPlotReduction) { .x0 = x0, .x1 = x1, .width = width, .smoothing = smoothing,
                                 .positive_only = positive_only, .columns = c->cols };
      c->r.begin = bound (s->x, 0, s->len, x0, FALSE);
      c->r.end = c->r.begin;
      c->len_seen = c->r.begin;
    }
  c->used = ++s->clock;
  if (c->len_seen == s->len)
    return &c->r;

  /* New points (or the first pass): x never decreases, so they lie at or
   * after the old ones. If some old point already passed x1, so do they. */
  if (c->r.end == c->len_seen)
    {
      from = c->len_seen;
      if (c->r.begin == c->r.end)
        {
          /* nothing in range yet: the range may start among the new points */
          from = bound (s->x, c->len_seen, s->len, x0, FALSE);
          c->r.begin = c->r.end = from;
        }
      c->r.end = bound (s->x, from, s->len, x1, TRUE);
      fold (c->cols, width, x0, x1, positive_only, s->x, ys, from, c->r.end);
      s->n_folded += c->r.end - from;
    }
  c->len_seen = s->len;
  return &c->r;
}

guint64
nl_plot_series_get_n_folded (NlPlotSeries *s)
{
  g_return_val_if_fail (NL_IS_PLOT_SERIES (s), 0);
  return s->n_folded;
}

void
_nl_plot_series_reduce_free (NlPlotSeries *s)
{
  for (guint k = 0; k < G_N_ELEMENTS (s->cache); k++)
    g_clear_pointer (&s->cache[k].cols, g_free);
}
