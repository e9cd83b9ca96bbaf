/* nl-plot-series.c — the points of one series, their smoothing, and the
 * coalesced ::changed signal. The reduction lives in nl-plot-reduce.c. */
#include "ui/plot/nl-plot-series-private.h"

#include <math.h>
#include <string.h>

G_DEFINE_FINAL_TYPE (NlPlotSeries, nl_plot_series, G_TYPE_OBJECT)

enum { PROP_0, PROP_LABEL, PROP_DASHED, N_PROPS };
enum { SIGNAL_CHANGED, N_SIGNALS };

static GParamSpec *props[N_PROPS];
static guint signals[N_SIGNALS];

static gboolean
emit_changed (gpointer data)
{
  NlPlotSeries *s = data;
  s->changed_idle = 0;
  g_signal_emit (s, signals[SIGNAL_CHANGED], 0);
  return G_SOURCE_REMOVE;
}

/* One emission per main-loop iteration however many appends: a training
 * run may append thousands of points between two frames. The priority is
 * above GDK's redraw so the view redraws in the same iteration. */
static void
schedule_changed (NlPlotSeries *s)
{
  if (s->changed_idle == 0)
    s->changed_idle = g_idle_add_full (G_PRIORITY_HIGH_IDLE, emit_changed, s, NULL);
}

static void
nl_plot_series_finalize (GObject *object)
{
  NlPlotSeries *s = NL_PLOT_SERIES (object);
  g_clear_handle_id (&s->changed_idle, g_source_remove);
  g_free (s->label);
  g_free (s->x);
  g_free (s->y);
  g_free (s->sm);
  _nl_plot_series_reduce_free (s);
  G_OBJECT_CLASS (nl_plot_series_parent_class)->finalize (object);
}

static void
nl_plot_series_get_property (GObject *object, guint id, GValue *value, GParamSpec *pspec)
{
  NlPlotSeries *s = NL_PLOT_SERIES (object);
  switch (id)
    {
    case PROP_LABEL: g_value_set_string (value, s->label); break;
    case PROP_DASHED: g_value_set_boolean (value, s->dashed); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, id, pspec);
    }
}

static void
nl_plot_series_set_property (GObject *object, guint id, const GValue *value, GParamSpec *pspec)
{
  NlPlotSeries *s = NL_PLOT_SERIES (object);
  switch (id)
    {
    case PROP_LABEL:
      g_free (s->label);
      s->label = g_value_dup_string (value);
      if (!s->label)
        s->label = g_strdup ("");
      break;
    case PROP_DASHED: nl_plot_series_set_dashed (s, g_value_get_boolean (value)); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, id, pspec);
    }
}

static void
nl_plot_series_class_init (NlPlotSeriesClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  object_class->finalize = nl_plot_series_finalize;
  object_class->get_property = nl_plot_series_get_property;
  object_class->set_property = nl_plot_series_set_property;

  props[PROP_LABEL] = g_param_spec_string ("label", NULL, NULL, "",
                                           G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  props[PROP_DASHED] = g_param_spec_boolean ("dashed", NULL, NULL, FALSE,
                                             G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, props);

  /* Points, colour or dash changed: views redraw. */
  signals[SIGNAL_CHANGED] = g_signal_new ("changed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                                          0, NULL, NULL, NULL, G_TYPE_NONE, 0);
}

static void
nl_plot_series_init (NlPlotSeries *s)
{
  s->label = g_strdup ("");
}

NlPlotSeries *
nl_plot_series_new (const char *label)
{
  return g_object_new (NL_TYPE_PLOT_SERIES, "label", label ? label : "", NULL);
}

const char *
nl_plot_series_get_label (NlPlotSeries *s)
{
  g_return_val_if_fail (NL_IS_PLOT_SERIES (s), NULL);
  return s->label;
}

void
nl_plot_series_set_color (NlPlotSeries *s, const GdkRGBA *color)
{
  g_return_if_fail (NL_IS_PLOT_SERIES (s));
  s->has_color = color != NULL;
  if (color)
    s->color = *color;
  schedule_changed (s);
}

const GdkRGBA *
nl_plot_series_get_color (NlPlotSeries *s)
{
  g_return_val_if_fail (NL_IS_PLOT_SERIES (s), NULL);
  return s->has_color ? &s->color : NULL;
}

void
nl_plot_series_set_dashed (NlPlotSeries *s, gboolean dashed)
{
  g_return_if_fail (NL_IS_PLOT_SERIES (s));
  dashed = !!dashed;
  if (s->dashed == dashed)
    return;
  s->dashed = dashed;
  g_object_notify_by_pspec (G_OBJECT (s), props[PROP_DASHED]);
  schedule_changed (s);
}

gboolean
nl_plot_series_get_dashed (NlPlotSeries *s)
{
  g_return_val_if_fail (NL_IS_PLOT_SERIES (s), FALSE);
  return s->dashed;
}

static void
reserve (NlPlotSeries *s, gsize n)
{
  gsize cap;
  if (n <= s->cap)
    return;
  cap = MAX (s->cap * 2, MAX (n, 1024));
  s->x = g_renew (double, s->x, cap);
  s->y = g_renew (double, s->y, cap);
  s->cap = cap;
}

static inline void
push (NlPlotSeries *s, double x, double y)
{
  /* x never decreases (the reduction and the hover search rely on it); a
   * NaN or infinite x has no place on the axis, so it takes the last x. */
  if (s->len > 0 && !(x >= s->x[s->len - 1]))
    x = s->x[s->len - 1];
  if (!isfinite (x))
    x = s->len > 0 ? s->x[s->len - 1] : 0.0;
  s->x[s->len] = x;
  s->y[s->len] = y;
  s->len++;
  if (isfinite (y))
    {
      if (!s->has_y)
        s->ymin = s->ymax = y;
      s->ymin = MIN (s->ymin, y);
      s->ymax = MAX (s->ymax, y);
      s->has_y = TRUE;
    }
}

void
nl_plot_series_append (NlPlotSeries *s, double x, double y)
{
  g_return_if_fail (NL_IS_PLOT_SERIES (s));
  reserve (s, s->len + 1);
  push (s, x, y);
  schedule_changed (s);
}

void
nl_plot_series_append_many (NlPlotSeries *s, const double *x, const double *y, gsize n)
{
  g_return_if_fail (NL_IS_PLOT_SERIES (s));
  g_return_if_fail (n == 0 || (x != NULL && y != NULL));
  if (n == 0)
    return;
  reserve (s, s->len + n);
  for (gsize i = 0; i < n; i++)
    push (s, x[i], y[i]);
  schedule_changed (s);
}

void
nl_plot_series_clear (NlPlotSeries *s)
{
  g_return_if_fail (NL_IS_PLOT_SERIES (s));
  s->len = 0;
  s->has_y = FALSE;
  s->epoch++;
  s->sm_valid = FALSE;
  schedule_changed (s);
}

gsize
nl_plot_series_get_length (NlPlotSeries *s)
{
  g_return_val_if_fail (NL_IS_PLOT_SERIES (s), 0);
  return s->len;
}

gboolean
nl_plot_series_get_point (NlPlotSeries *s, gsize i, double *x, double *y)
{
  g_return_val_if_fail (NL_IS_PLOT_SERIES (s), FALSE);
  if (i >= s->len)
    return FALSE;
  if (x)
    *x = s->x[i];
  if (y)
    *y = s->y[i];
  return TRUE;
}

gboolean
nl_plot_series_get_bounds (NlPlotSeries *s, double *x0, double *x1, double *y0, double *y1)
{
  g_return_val_if_fail (NL_IS_PLOT_SERIES (s), FALSE);
  if (s->len == 0)
    return FALSE;
  if (x0)
    *x0 = s->x[0];
  if (x1)
    *x1 = s->x[s->len - 1];
  if (y0)
    *y0 = s->has_y ? s->ymin : NAN;
  if (y1)
    *y1 = s->has_y ? s->ymax : NAN;
  return TRUE;
}

const double *
nl_plot_series_get_smoothed (NlPlotSeries *s, double smoothing)
{
  g_return_val_if_fail (NL_IS_PLOT_SERIES (s), NULL);
  g_return_val_if_fail (smoothing >= 0 && smoothing < 1, NULL);
  if (smoothing == 0)
    return s->y;
  if (!s->sm_valid || s->sm_w != smoothing || s->sm_epoch != s->epoch || s->sm_len > s->len)
    {
      s->sm_valid = TRUE;
      s->sm_w = smoothing;
      s->sm_epoch = s->epoch;
      s->sm_len = 0;
      s->sm_acc = 0;
      s->sm_wt = 1;
    }
  if (s->sm_cap < s->len)
    {
      s->sm_cap = MAX (s->cap, s->len);
      s->sm = g_renew (double, s->sm, s->sm_cap);
    }
  /* Extend from where we stopped: after appends only the new points cost. */
  {
    double acc = s->sm_acc, wt = s->sm_wt;
    const double *y = s->y;
    double *out = s->sm;
    for (gsize i = s->sm_len; i < s->len; i++)
      {
        if (!isfinite (y[i]))
          {
            out[i] = NAN;
            continue;
          }
        acc = acc * smoothing + (1 - smoothing) * y[i];
        wt *= smoothing;
        /* w^t would get stuck at the smallest subnormal (w > 0.5 rounds
         * it back up), where every multiply is slow; once below 2^-54,
         * 1 - w^t is exactly 1 anyway. */
        if (wt < 0x1p-60)
          wt = 0;
        out[i] = acc / (1 - wt);
      }
    s->sm_acc = acc;
    s->sm_wt = wt;
  }
  s->sm_len = s->len;
  return s->sm;
}

gboolean
nl_plot_series_find_nearest (NlPlotSeries *s, double x, gsize *index)
{
  gsize lo = 0, hi;
  double v;
  g_return_val_if_fail (NL_IS_PLOT_SERIES (s), FALSE);
  if (s->len == 0 || isnan (x))
    return FALSE;
  /* first point with x >= the target */
  hi = s->len;
  while (lo < hi)
    {
      gsize mid = lo + (hi - lo) / 2;
      if (s->x[mid] < x)
        lo = mid + 1;
      else
        hi = mid;
    }
  if (lo == s->len)
    v = s->x[s->len - 1];
  else if (lo == 0)
    v = s->x[0];
  else
    v = (x - s->x[lo - 1] <= s->x[lo] - x) ? s->x[lo - 1] : s->x[lo];
  /* the first point with that x */
  lo = 0;
  hi = s->len;
  while (lo < hi)
    {
      gsize mid = lo + (hi - lo) / 2;
      if (s->x[mid] < v)
        lo = mid + 1;
      else
        hi = mid;
    }
  if (index)
    *index = lo;
  return TRUE;
}
