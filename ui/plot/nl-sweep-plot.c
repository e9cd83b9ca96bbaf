/* nl-sweep-plot.c — parallel coordinates and scatter of a sweep's trials. */
#include "ui/plot/nl-sweep-plot.h"

#include <math.h>
#include <string.h>

#define MARGIN_X 56
#define MARGIN_TOP 28
#define MARGIN_BOTTOM 34
#define GRAB_PX 14

typedef struct {
  double *t;                 /* [n_axes] fractions, NaN: none */
  gboolean pruned;
} Row;

struct _NlSweepPlot {
  GtkWidget parent_instance;
  NlSweepPlotKind kind;
  NlSweepSpace *space;
  char *metric;
  gboolean maximize;
  GArray *rows;              /* Row */
  double metric_lo, metric_hi;
  int best, scatter_param, n_axes;
  double *brush_lo, *brush_hi; /* [n_axes], lo > hi: none */
  int drag_axis;
  double drag_y0;
};

G_DEFINE_FINAL_TYPE (NlSweepPlot, nl_sweep_plot, GTK_TYPE_WIDGET)

G_DEFINE_ENUM_TYPE (NlSweepPlotKind, nl_sweep_plot_kind, G_DEFINE_ENUM_VALUE (NL_SWEEP_PLOT_PARALLEL, "parallel"),
                    G_DEFINE_ENUM_VALUE (NL_SWEEP_PLOT_SCATTER, "scatter"))

enum { SIGNAL_BRUSH_CHANGED, N_SIGNALS };
static guint signals[N_SIGNALS];

enum { PROP_0, PROP_KIND, N_PROPS };

static void
rows_clear (NlSweepPlot *self)
{
  for (guint i = 0; i < self->rows->len; i++)
    g_free (g_array_index (self->rows, Row, i).t);
  g_array_set_size (self->rows, 0);
}

/* A setting's value as a fraction of its axis: log ranges in log scale,
 * choices spread evenly. */
static double
param_fraction (const NlSweepParam *p, double v)
{
  if (p->kind == NL_SWEEP_CHOICE)
    return p->n_choices > 1 ? v / (p->n_choices - 1) : 0.5;
  if (p->hi <= p->lo)
    return 0.5;
  if (p->kind == NL_SWEEP_LOG)
    return (log (v) - log (p->lo)) / (log (p->hi) - log (p->lo));
  return (v - p->lo) / (p->hi - p->lo);
}

void
nl_sweep_plot_set_trials (NlSweepPlot *self, const char *space_text, GPtrArray *trials, const char *metric,
                          gboolean maximize)
{
  g_autoptr (NlSweepSpace) space = space_text ? nl_sweep_space_parse (space_text, NULL) : NULL;
  int dim = space ? nl_sweep_space_dim (space) : 0, old_axes = self->n_axes;
  double best = NAN;

  g_return_if_fail (NL_IS_SWEEP_PLOT (self));
  rows_clear (self);
  g_clear_pointer (&self->space, nl_sweep_space_free);
  self->space = g_steal_pointer (&space);
  g_free (self->metric);
  self->metric = g_strdup (metric);
  self->maximize = maximize;
  self->n_axes = self->space ? dim + 1 : 0;
  if (self->n_axes != old_axes)
    {
      self->brush_lo = g_renew (double, self->brush_lo, self->n_axes);
      self->brush_hi = g_renew (double, self->brush_hi, self->n_axes);
      for (int a = 0; a < self->n_axes; a++)
        self->brush_lo[a] = 1, self->brush_hi[a] = 0;
    }
  self->metric_lo = INFINITY;
  self->metric_hi = -INFINITY;
  self->best = -1;
  for (guint i = 0; self->space && trials && i < trials->len; i++)
    {
      const NlSweepTrial *tr = g_ptr_array_index (trials, i);
      g_autofree double *point = g_new0 (double, dim);
      Row row = { g_new (double, self->n_axes), !g_strcmp0 (tr->status, "pruned") };
      gboolean ok = tr->params_json && nl_sweep_space_point_from_json (self->space, tr->params_json, point, NULL);
      for (int a = 0; a < dim; a++)
        row.t[a] = ok ? param_fraction (nl_sweep_space_param (self->space, a), point[a]) : NAN;
      row.t[dim] = tr->value;   /* scaled below, once the range is known */
      if (!isnan (tr->value))
        {
          self->metric_lo = MIN (self->metric_lo, tr->value);
          self->metric_hi = MAX (self->metric_hi, tr->value);
          if (isnan (best) || (maximize ? tr->value > best : tr->value < best))
            {
              best = tr->value;
              self->best = (int) i;
            }
        }
      g_array_append_val (self->rows, row);
    }
  if (self->metric_hi - self->metric_lo < 1e-9)
    {
      /* one value (or none): a range around it */
      double mid = isfinite (self->metric_lo) ? self->metric_lo : 0;
      self->metric_lo = mid - 0.5;
      self->metric_hi = mid + 0.5;
    }
  for (guint i = 0; i < self->rows->len; i++)
    {
      double *t = g_array_index (self->rows, Row, i).t;
      t[dim] = (t[dim] - self->metric_lo) / (self->metric_hi - self->metric_lo);
    }
  self->scatter_param = CLAMP (self->scatter_param, 0, MAX (dim - 1, 0));
  gtk_widget_queue_draw (GTK_WIDGET (self));
  g_signal_emit (self, signals[SIGNAL_BRUSH_CHANGED], 0);
}

void
nl_sweep_plot_set_scatter_param (NlSweepPlot *self, int param)
{
  g_return_if_fail (NL_IS_SWEEP_PLOT (self));
  self->scatter_param = MAX (param, 0);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

int
nl_sweep_plot_get_n_axes (NlSweepPlot *self)
{
  return self->n_axes;
}

static gboolean
row_complete (NlSweepPlot *self, const Row *r)
{
  for (int a = 0; a < self->n_axes; a++)
    if (isnan (r->t[a]))
      return FALSE;
  return TRUE;
}

int
nl_sweep_plot_get_n_drawn (NlSweepPlot *self)
{
  int n = 0;
  for (guint i = 0; i < self->rows->len; i++)
    n += row_complete (self, &g_array_index (self->rows, Row, i));
  return n;
}

int
nl_sweep_plot_get_best (NlSweepPlot *self)
{
  return self->best;
}

double
nl_sweep_plot_axis_fraction (NlSweepPlot *self, guint i, int axis)
{
  g_return_val_if_fail (i < self->rows->len && axis >= 0 && axis < self->n_axes, NAN);
  return g_array_index (self->rows, Row, i).t[axis];
}

void
nl_sweep_plot_set_brush (NlSweepPlot *self, int axis, double lo, double hi)
{
  g_return_if_fail (axis >= 0 && axis < self->n_axes);
  self->brush_lo[axis] = lo;
  self->brush_hi[axis] = hi;
  gtk_widget_queue_draw (GTK_WIDGET (self));
  g_signal_emit (self, signals[SIGNAL_BRUSH_CHANGED], 0);
}

gboolean
nl_sweep_plot_trial_selected (NlSweepPlot *self, guint i)
{
  const Row *r;
  g_return_val_if_fail (i < self->rows->len, FALSE);
  r = &g_array_index (self->rows, Row, i);
  for (int a = 0; a < self->n_axes; a++)
    if (self->brush_lo[a] <= self->brush_hi[a] && !(r->t[a] >= self->brush_lo[a] && r->t[a] <= self->brush_hi[a]))
      return FALSE;
  return TRUE;
}

/* ---- drawing ---- */

static double
axis_x (NlSweepPlot *self, int a, int w)
{
  return self->n_axes > 1 ? MARGIN_X + a * (double) (w - 2 * MARGIN_X) / (self->n_axes - 1) : w / 2.0;
}

static double
frac_y (double t, int h)
{
  return MARGIN_TOP + (1 - t) * (h - MARGIN_TOP - MARGIN_BOTTOM);
}

static char *
axis_end_text (NlSweepPlot *self, int a, gboolean top)
{
  const NlSweepParam *p;
  if (a == self->n_axes - 1)
    return g_strdup_printf ("%.4g", top ? self->metric_hi : self->metric_lo);
  p = nl_sweep_space_param (self->space, a);
  if (p->kind == NL_SWEEP_CHOICE)
    return g_strdup (p->choices[top ? p->n_choices - 1 : 0]);
  return g_strdup_printf ("%.4g", top ? p->hi : p->lo);
}

static const char *
axis_name (NlSweepPlot *self, int a)
{
  return a == self->n_axes - 1 ? self->metric : nl_sweep_space_param (self->space, a)->key;
}

static void
text_at (cairo_t *cr, const char *text, double x, double y, double align)
{
  cairo_text_extents_t ext;
  cairo_text_extents (cr, text, &ext);
  cairo_move_to (cr, x - align * ext.width, y);
  cairo_show_text (cr, text);
}

/* Colours: each trial in the accent, pruned ones faint, brushed-out ones
 * grey, the best bold and warm. */
static void
trial_source (NlSweepPlot *self, cairo_t *cr, guint i, const GdkRGBA *fg)
{
  const Row *r = &g_array_index (self->rows, Row, i);
  if ((int) i == self->best)
    cairo_set_source_rgba (cr, 0.90, 0.38, 0.0, 1.0);
  else if (!nl_sweep_plot_trial_selected (self, i))
    cairo_set_source_rgba (cr, fg->red, fg->green, fg->blue, 0.08);
  else
    cairo_set_source_rgba (cr, 0.21, 0.52, 0.89, r->pruned ? 0.22 : 0.75);
}

static void
draw_parallel (NlSweepPlot *self, cairo_t *cr, int w, int h, const GdkRGBA *fg)
{
  /* lines first, the best last so that it stays on top */
  for (int pass = 0; pass < 2; pass++)
    for (guint i = 0; i < self->rows->len; i++)
      {
        const Row *r = &g_array_index (self->rows, Row, i);
        if (((int) i == self->best) != (pass == 1) || !row_complete (self, r))
          continue;
        trial_source (self, cr, i, fg);
        cairo_set_line_width (cr, (int) i == self->best ? 3.0 : 1.5);
        for (int a = 0; a < self->n_axes; a++)
          cairo_line_to (cr, axis_x (self, a, w), frac_y (r->t[a], h));
        cairo_stroke (cr);
      }
  for (int a = 0; a < self->n_axes; a++)
    {
      double x = axis_x (self, a, w);
      g_autofree char *top = axis_end_text (self, a, TRUE), *bottom = axis_end_text (self, a, FALSE);
      cairo_set_source_rgba (cr, fg->red, fg->green, fg->blue, 0.6);
      cairo_set_line_width (cr, 1);
      cairo_move_to (cr, x + 0.5, frac_y (1, h));
      cairo_line_to (cr, x + 0.5, frac_y (0, h));
      cairo_stroke (cr);
      if (self->brush_lo[a] <= self->brush_hi[a])
        {
          cairo_set_source_rgba (cr, 0.21, 0.52, 0.89, 0.25);
          cairo_rectangle (cr, x - 7, frac_y (self->brush_hi[a], h), 14,
                           frac_y (self->brush_lo[a], h) - frac_y (self->brush_hi[a], h));
          cairo_fill (cr);
        }
      cairo_set_source_rgba (cr, fg->red, fg->green, fg->blue, 1);
      text_at (cr, axis_name (self, a), x, 14, 0.5);
      cairo_set_source_rgba (cr, fg->red, fg->green, fg->blue, 0.7);
      text_at (cr, top, x, frac_y (1, h) - 2 + 12, a == self->n_axes - 1 ? 1.1 : -0.1);
      text_at (cr, bottom, x, frac_y (0, h) + 14, 0.5);
    }
}

static void
draw_scatter (NlSweepPlot *self, cairo_t *cr, int w, int h, const GdkRGBA *fg)
{
  int m = self->n_axes - 1, p = MIN (self->scatter_param, m - 1);
  double x0 = MARGIN_X, x1 = w - MARGIN_X / 2.0;
  g_autofree char *lo = NULL, *hi = NULL, *mlo = NULL, *mhi = NULL;

  if (p < 0)
    return;
  cairo_set_source_rgba (cr, fg->red, fg->green, fg->blue, 0.6);
  cairo_set_line_width (cr, 1);
  cairo_move_to (cr, x0, frac_y (1, h));
  cairo_line_to (cr, x0, frac_y (0, h));
  cairo_line_to (cr, x1, frac_y (0, h));
  cairo_stroke (cr);
  for (int pass = 0; pass < 2; pass++)
    for (guint i = 0; i < self->rows->len; i++)
      {
        const Row *r = &g_array_index (self->rows, Row, i);
        if (((int) i == self->best) != (pass == 1) || isnan (r->t[p]) || isnan (r->t[m]))
          continue;
        trial_source (self, cr, i, fg);
        cairo_arc (cr, x0 + r->t[p] * (x1 - x0), frac_y (r->t[m], h), (int) i == self->best ? 5 : 3.5, 0, 2 * G_PI);
        cairo_fill (cr);
      }
  lo = axis_end_text (self, p, FALSE);
  hi = axis_end_text (self, p, TRUE);
  mlo = axis_end_text (self, m, FALSE);
  mhi = axis_end_text (self, m, TRUE);
  cairo_set_source_rgba (cr, fg->red, fg->green, fg->blue, 0.8);
  text_at (cr, axis_name (self, p), (x0 + x1) / 2, h - 6, 0.5);
  text_at (cr, lo, x0, frac_y (0, h) + 14, 0);
  text_at (cr, hi, x1, frac_y (0, h) + 14, 1);
  text_at (cr, self->metric, x0, 14, 0);
  text_at (cr, mhi, x0 - 4, frac_y (1, h) + 4, 1);
  text_at (cr, mlo, x0 - 4, frac_y (0, h), 1);
}

static void
nl_sweep_plot_snapshot (GtkWidget *widget, GtkSnapshot *snapshot)
{
  NlSweepPlot *self = NL_SWEEP_PLOT (widget);
  int w = gtk_widget_get_width (widget), h = gtk_widget_get_height (widget);
  GdkRGBA fg;
  cairo_t *cr;

  if (w <= 0 || h <= 0 || self->n_axes == 0)
    return;
  /* gtk_widget_get_color () is 4.10; in 4.8 the style context is the way */
  G_GNUC_BEGIN_IGNORE_DEPRECATIONS
  gtk_style_context_get_color (gtk_widget_get_style_context (widget), &fg);
  G_GNUC_END_IGNORE_DEPRECATIONS
  cr = gtk_snapshot_append_cairo (snapshot, &GRAPHENE_RECT_INIT (0, 0, w, h));
  cairo_set_font_size (cr, 11);
  if (self->kind == NL_SWEEP_PLOT_PARALLEL)
    draw_parallel (self, cr, w, h, &fg);
  else
    draw_scatter (self, cr, w, h, &fg);
  cairo_destroy (cr);
}

/* ---- brushing ---- */

static double
y_frac (GtkWidget *w, double y)
{
  int h = gtk_widget_get_height (w);
  return CLAMP (1 - (y - MARGIN_TOP) / MAX (h - MARGIN_TOP - MARGIN_BOTTOM, 1), 0, 1);
}

static void
on_drag_begin (GtkGestureDrag *g, double x, double y, NlSweepPlot *self)
{
  int w = gtk_widget_get_width (GTK_WIDGET (self));
  self->drag_axis = -1;
  for (int a = 0; a < self->n_axes; a++)
    if (fabs (x - axis_x (self, a, w)) <= GRAB_PX)
      self->drag_axis = a;
  self->drag_y0 = y;
  if (self->drag_axis < 0)
    gtk_gesture_set_state (GTK_GESTURE (g), GTK_EVENT_SEQUENCE_DENIED);
}

static void
on_drag_update (GtkGestureDrag *g, double dx, double dy, NlSweepPlot *self)
{
  double a = y_frac (GTK_WIDGET (self), self->drag_y0), b = y_frac (GTK_WIDGET (self), self->drag_y0 + dy);
  if (self->drag_axis >= 0 && fabs (dy) >= 3)
    nl_sweep_plot_set_brush (self, self->drag_axis, MIN (a, b), MAX (a, b));
}

static void
on_drag_end (GtkGestureDrag *g, double dx, double dy, NlSweepPlot *self)
{
  /* a click on an axis clears its brush */
  if (self->drag_axis >= 0 && fabs (dy) < 3)
    nl_sweep_plot_set_brush (self, self->drag_axis, 1, 0);
  self->drag_axis = -1;
}

static void
nl_sweep_plot_measure (GtkWidget *widget, GtkOrientation orientation, int for_size, int *minimum, int *natural,
                       int *minimum_baseline, int *natural_baseline)
{
  gboolean h = orientation == GTK_ORIENTATION_HORIZONTAL;
  *minimum = h ? 200 : 140;
  *natural = h ? 640 : 260;
}

static void
nl_sweep_plot_finalize (GObject *object)
{
  NlSweepPlot *self = NL_SWEEP_PLOT (object);
  rows_clear (self);
  g_array_unref (self->rows);
  nl_sweep_space_free (self->space);
  g_free (self->metric);
  g_free (self->brush_lo);
  g_free (self->brush_hi);
  G_OBJECT_CLASS (nl_sweep_plot_parent_class)->finalize (object);
}

static void
nl_sweep_plot_set_property (GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec)
{
  if (prop_id == PROP_KIND)
    NL_SWEEP_PLOT (object)->kind = g_value_get_enum (value);
  else
    G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
}

static void
nl_sweep_plot_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  if (prop_id == PROP_KIND)
    g_value_set_enum (value, NL_SWEEP_PLOT (object)->kind);
  else
    G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
}

/* the kind is known here, from nl_sweep_plot_new or a template: only the
 * parallel coordinates take brushes */
static void
nl_sweep_plot_constructed (GObject *object)
{
  NlSweepPlot *self = NL_SWEEP_PLOT (object);
  G_OBJECT_CLASS (nl_sweep_plot_parent_class)->constructed (object);
  if (self->kind == NL_SWEEP_PLOT_PARALLEL)
    {
      GtkGesture *drag = gtk_gesture_drag_new ();
      g_signal_connect (drag, "drag-begin", G_CALLBACK (on_drag_begin), self);
      g_signal_connect (drag, "drag-update", G_CALLBACK (on_drag_update), self);
      g_signal_connect (drag, "drag-end", G_CALLBACK (on_drag_end), self);
      gtk_widget_add_controller (GTK_WIDGET (self), GTK_EVENT_CONTROLLER (drag));
    }
}

static void
nl_sweep_plot_class_init (NlSweepPlotClass *klass)
{
  GObjectClass *oc = G_OBJECT_CLASS (klass);
  GtkWidgetClass *wc = GTK_WIDGET_CLASS (klass);
  oc->set_property = nl_sweep_plot_set_property;
  oc->get_property = nl_sweep_plot_get_property;
  oc->constructed = nl_sweep_plot_constructed;
  oc->finalize = nl_sweep_plot_finalize;
  g_object_class_install_property (oc, PROP_KIND,
                                   g_param_spec_enum ("kind", NULL, NULL, NL_TYPE_SWEEP_PLOT_KIND,
                                                      NL_SWEEP_PLOT_PARALLEL,
                                                      G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY
                                                        | G_PARAM_STATIC_STRINGS));
  wc->snapshot = nl_sweep_plot_snapshot;
  wc->measure = nl_sweep_plot_measure;
  signals[SIGNAL_BRUSH_CHANGED] = g_signal_new ("brush-changed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0,
                                                NULL, NULL, NULL, G_TYPE_NONE, 0);
}

static void
nl_sweep_plot_init (NlSweepPlot *self)
{
  self->rows = g_array_new (FALSE, FALSE, sizeof (Row));
  self->best = -1;
  self->drag_axis = -1;
}

GtkWidget *
nl_sweep_plot_new (NlSweepPlotKind kind)
{
  return g_object_new (NL_TYPE_SWEEP_PLOT, "kind", kind, NULL);
}
