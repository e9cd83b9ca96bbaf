/* nl-plot.c — the metric plot widget: series, settings, the x view
 * (following, zoom, pan) and the pointer controllers. Drawing is in
 * nl-plot-draw.c, exports in nl-plot-export.c. */
#include "ui/plot/nl-plot-private.h"

#include <math.h>

G_DEFINE_FINAL_TYPE (NlPlot, nl_plot, GTK_TYPE_WIDGET)

enum { PROP_0, PROP_TITLE, PROP_LOG_Y, PROP_SMOOTHING, N_PROPS };
static GParamSpec *props[N_PROPS];

/* Mid-tone colours that read on Adwaita's light and dark backgrounds. */
static const char *const palette[] = {
  "#3584e4", "#e66100", "#26a269", "#c01c28", "#9141ac", "#0e9a9c", "#986a44", "#d56199",
};

static void
on_series_changed (NlPlot *self)
{
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

static void
nl_plot_snapshot (GtkWidget *widget, GtkSnapshot *snapshot)
{
  int w = gtk_widget_get_width (widget), h = gtk_widget_get_height (widget);
  cairo_t *cr;
  if (w <= 0 || h <= 0)
    return;
  cr = gtk_snapshot_append_cairo (snapshot, &GRAPHENE_RECT_INIT (0, 0, w, h));
  _nl_plot_draw_full (NL_PLOT (widget), cr, w, h, FALSE, TRUE);
  cairo_destroy (cr);
}

static void
nl_plot_measure (GtkWidget *widget, GtkOrientation orientation, int for_size, int *minimum,
                 int *natural, int *minimum_baseline, int *natural_baseline)
{
  gboolean h = orientation == GTK_ORIENTATION_HORIZONTAL;
  *minimum = h ? 160 : 100;
  *natural = h ? 600 : 320;
}

static void
nl_plot_dispose (GObject *object)
{
  nl_plot_clear (NL_PLOT (object));
  G_OBJECT_CLASS (nl_plot_parent_class)->dispose (object);
}

static void
nl_plot_finalize (GObject *object)
{
  NlPlot *self = NL_PLOT (object);
  g_ptr_array_unref (self->series);
  g_free (self->title);
  g_free (self->x_label);
  g_free (self->y_label);
  G_OBJECT_CLASS (nl_plot_parent_class)->finalize (object);
}

static void
nl_plot_get_property (GObject *object, guint id, GValue *value, GParamSpec *pspec)
{
  NlPlot *self = NL_PLOT (object);
  switch (id)
    {
    case PROP_TITLE: g_value_set_string (value, self->title); break;
    case PROP_LOG_Y: g_value_set_boolean (value, self->log_y); break;
    case PROP_SMOOTHING: g_value_set_double (value, self->smoothing); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, id, pspec);
    }
}

static void
nl_plot_set_property (GObject *object, guint id, const GValue *value, GParamSpec *pspec)
{
  NlPlot *self = NL_PLOT (object);
  switch (id)
    {
    case PROP_TITLE: nl_plot_set_title (self, g_value_get_string (value)); break;
    case PROP_LOG_Y: nl_plot_set_log_y (self, g_value_get_boolean (value)); break;
    case PROP_SMOOTHING: nl_plot_set_smoothing (self, g_value_get_double (value)); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, id, pspec);
    }
}

/* --- controllers --- */

static void
on_motion (GtkEventControllerMotion *c, double x, double y, NlPlot *self)
{
  nl_plot_hover (self, x, y);
}

static void
on_leave (GtkEventControllerMotion *c, NlPlot *self)
{
  nl_plot_hover_end (self);
}

static gboolean
on_scroll (GtkEventControllerScroll *c, double dx, double dy, NlPlot *self)
{
  double wx = self->hovering ? self->hover_wx : self->area_x + self->area_w / 2;
  if (dy == 0 || !self->have_frame)
    return FALSE;
  /* plain and Ctrl+scroll both zoom: the plot has nothing to scroll */
  nl_plot_zoom_at (self, wx, pow (1.2, CLAMP (dy, -5, 5)));
  return TRUE;
}

static void
on_drag_begin (GtkGestureDrag *g, double x, double y, NlPlot *self)
{
  _nl_plot_compute_x_range (self, &self->drag_x0, &self->drag_x1);
}

static void
on_drag_update (GtkGestureDrag *g, double ox, double oy, NlPlot *self)
{
  double shift;
  if (!self->have_frame || self->area_w <= 0 || (self->following && fabs (ox) < 3))
    return; /* a click, not yet a drag: keep following */
  shift = -ox * (self->drag_x1 - self->drag_x0) / self->area_w;
  nl_plot_set_x_range (self, self->drag_x0 + shift, self->drag_x1 + shift);
}

static void
on_pressed (GtkGestureClick *g, int n_press, double x, double y, NlPlot *self)
{
  if (n_press == 2)
    nl_plot_reset_view (self);
}

static void
nl_plot_class_init (NlPlotClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = nl_plot_dispose;
  object_class->finalize = nl_plot_finalize;
  object_class->get_property = nl_plot_get_property;
  object_class->set_property = nl_plot_set_property;
  widget_class->snapshot = nl_plot_snapshot;
  widget_class->measure = nl_plot_measure;

  props[PROP_TITLE] = g_param_spec_string ("title", NULL, NULL, NULL,
                                           G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  props[PROP_LOG_Y] = g_param_spec_boolean ("log-y", NULL, NULL, FALSE,
                                            G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  props[PROP_SMOOTHING] = g_param_spec_double ("smoothing", NULL, NULL, 0, 0.999, 0,
                                               G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, props);

  gtk_widget_class_set_css_name (widget_class, "plot");
}

static void
nl_plot_init (NlPlot *self)
{
  GtkWidget *widget = GTK_WIDGET (self);
  GtkEventController *motion = gtk_event_controller_motion_new ();
  GtkEventController *scroll = gtk_event_controller_scroll_new (GTK_EVENT_CONTROLLER_SCROLL_VERTICAL);
  GtkGesture *drag = gtk_gesture_drag_new ();
  GtkGesture *click = gtk_gesture_click_new ();

  self->series = g_ptr_array_new_with_free_func (g_object_unref);
  self->following = TRUE;

  g_signal_connect (motion, "motion", G_CALLBACK (on_motion), self);
  g_signal_connect (motion, "leave", G_CALLBACK (on_leave), self);
  gtk_widget_add_controller (widget, motion);
  g_signal_connect (scroll, "scroll", G_CALLBACK (on_scroll), self);
  gtk_widget_add_controller (widget, scroll);
  gtk_gesture_single_set_button (GTK_GESTURE_SINGLE (drag), GDK_BUTTON_PRIMARY);
  g_signal_connect (drag, "drag-begin", G_CALLBACK (on_drag_begin), self);
  g_signal_connect (drag, "drag-update", G_CALLBACK (on_drag_update), self);
  gtk_widget_add_controller (widget, GTK_EVENT_CONTROLLER (drag));
  gtk_gesture_single_set_button (GTK_GESTURE_SINGLE (click), GDK_BUTTON_PRIMARY);
  g_signal_connect (click, "pressed", G_CALLBACK (on_pressed), self);
  gtk_widget_add_controller (widget, GTK_EVENT_CONTROLLER (click));

  gtk_widget_set_cursor_from_name (widget, "crosshair");
  gtk_widget_set_focusable (widget, FALSE);
}

GtkWidget *
nl_plot_new (void)
{
  return g_object_new (NL_TYPE_PLOT, NULL);
}

/* --- series --- */

void
nl_plot_add_series (NlPlot *plot, NlPlotSeries *series)
{
  g_return_if_fail (NL_IS_PLOT (plot));
  g_return_if_fail (NL_IS_PLOT_SERIES (series));
  if (g_ptr_array_find (plot->series, series, NULL))
    return;
  g_ptr_array_add (plot->series, g_object_ref (series));
  g_signal_connect_object (series, "changed", G_CALLBACK (on_series_changed), plot, G_CONNECT_SWAPPED);
  gtk_widget_queue_draw (GTK_WIDGET (plot));
}

void
nl_plot_remove_series (NlPlot *plot, NlPlotSeries *series)
{
  g_return_if_fail (NL_IS_PLOT (plot));
  g_return_if_fail (NL_IS_PLOT_SERIES (series));
  if (!g_ptr_array_find (plot->series, series, NULL))
    return;
  g_signal_handlers_disconnect_by_func (series, on_series_changed, plot);
  g_ptr_array_remove (plot->series, series);
  gtk_widget_queue_draw (GTK_WIDGET (plot));
}

void
nl_plot_clear (NlPlot *plot)
{
  g_return_if_fail (NL_IS_PLOT (plot));
  while (plot->series->len > 0)
    nl_plot_remove_series (plot, g_ptr_array_index (plot->series, plot->series->len - 1));
}

guint
nl_plot_get_n_series (NlPlot *plot)
{
  g_return_val_if_fail (NL_IS_PLOT (plot), 0);
  return plot->series->len;
}

NlPlotSeries *
nl_plot_get_series (NlPlot *plot, guint i)
{
  g_return_val_if_fail (NL_IS_PLOT (plot), NULL);
  g_return_val_if_fail (i < plot->series->len, NULL);
  return g_ptr_array_index (plot->series, i);
}

void
_nl_plot_series_color (NlPlot *self, guint i, GdkRGBA *color)
{
  const GdkRGBA *own = nl_plot_series_get_color (g_ptr_array_index (self->series, i));
  if (own)
    *color = *own;
  else
    gdk_rgba_parse (color, palette[i % G_N_ELEMENTS (palette)]);
}

/* --- settings --- */

static void
set_string (NlPlot *plot, char **field, const char *value)
{
  if (g_strcmp0 (*field, value) == 0)
    return;
  g_free (*field);
  *field = g_strdup (value);
  gtk_widget_queue_draw (GTK_WIDGET (plot));
}

void
nl_plot_set_title (NlPlot *plot, const char *title)
{
  g_return_if_fail (NL_IS_PLOT (plot));
  if (g_strcmp0 (plot->title, title) == 0)
    return;
  set_string (plot, &plot->title, title);
  g_object_notify_by_pspec (G_OBJECT (plot), props[PROP_TITLE]);
}

void
nl_plot_set_x_label (NlPlot *plot, const char *label)
{
  g_return_if_fail (NL_IS_PLOT (plot));
  set_string (plot, &plot->x_label, label);
}

void
nl_plot_set_y_label (NlPlot *plot, const char *label)
{
  g_return_if_fail (NL_IS_PLOT (plot));
  set_string (plot, &plot->y_label, label);
}

void
nl_plot_set_x_integer (NlPlot *plot, gboolean integer_x)
{
  g_return_if_fail (NL_IS_PLOT (plot));
  plot->integer_x = integer_x;
  gtk_widget_queue_draw (GTK_WIDGET (plot));
}

void
nl_plot_set_log_y (NlPlot *plot, gboolean log_y)
{
  g_return_if_fail (NL_IS_PLOT (plot));
  log_y = !!log_y;
  if (plot->log_y == log_y)
    return;
  plot->log_y = log_y;
  g_object_notify_by_pspec (G_OBJECT (plot), props[PROP_LOG_Y]);
  gtk_widget_queue_draw (GTK_WIDGET (plot));
}

gboolean
nl_plot_get_log_y (NlPlot *plot)
{
  g_return_val_if_fail (NL_IS_PLOT (plot), FALSE);
  return plot->log_y;
}

void
nl_plot_set_smoothing (NlPlot *plot, double smoothing)
{
  g_return_if_fail (NL_IS_PLOT (plot));
  if (isnan (smoothing))
    smoothing = 0;
  smoothing = CLAMP (smoothing, 0, 0.999);
  if (plot->smoothing == smoothing)
    return;
  plot->smoothing = smoothing;
  g_object_notify_by_pspec (G_OBJECT (plot), props[PROP_SMOOTHING]);
  gtk_widget_queue_draw (GTK_WIDGET (plot));
}

double
nl_plot_get_smoothing (NlPlot *plot)
{
  g_return_val_if_fail (NL_IS_PLOT (plot), 0);
  return plot->smoothing;
}

/* --- the x view --- */

/* Following, the range is [first x, last x + span/16], and it only moves
 * when a point passes its end (or the data shrink): between those moments
 * the key of every series' cached reduction stays the same, so a frame
 * after appends folds in only the new points. The range grows
 * geometrically, so the full recomputations it causes add up to a few
 * passes over the data in all, not one per frame. */
void
_nl_plot_compute_x_range (NlPlot *self, double *x0, double *x1)
{
  double lo = INFINITY, hi = -INFINITY;
  if (!self->following)
    {
      *x0 = self->view_x0;
      *x1 = self->view_x1;
      return;
    }
  for (guint i = 0; i < self->series->len; i++)
    {
      double a, b;
      if (nl_plot_series_get_bounds (g_ptr_array_index (self->series, i), &a, &b, NULL, NULL))
        {
          lo = MIN (lo, a);
          hi = MAX (hi, b);
        }
    }
  if (!isfinite (lo))
    {
      self->auto_valid = FALSE;
      *x0 = 0;
      *x1 = 1;
      return;
    }
  if (!self->auto_valid || lo != self->auto_x0 || hi > self->auto_x1
      || hi < self->auto_x0 + (self->auto_x1 - self->auto_x0) / 2)
    {
      double span = hi - lo;
      if (span <= 0)
        span = MAX (1.0, fabs (lo) * 0.1);
      self->auto_valid = TRUE;
      self->auto_x0 = lo;
      self->auto_x1 = hi + span / 16;
    }
  *x0 = self->auto_x0;
  *x1 = self->auto_x1;
}

void
nl_plot_set_x_range (NlPlot *plot, double x0, double x1)
{
  g_return_if_fail (NL_IS_PLOT (plot));
  g_return_if_fail (isfinite (x0) && isfinite (x1) && x1 > x0);
  plot->following = FALSE;
  plot->view_x0 = x0;
  plot->view_x1 = x1;
  gtk_widget_queue_draw (GTK_WIDGET (plot));
}

void
nl_plot_get_x_range (NlPlot *plot, double *x0, double *x1)
{
  double a, b;
  g_return_if_fail (NL_IS_PLOT (plot));
  _nl_plot_compute_x_range (plot, &a, &b);
  if (x0)
    *x0 = a;
  if (x1)
    *x1 = b;
}

void
nl_plot_reset_view (NlPlot *plot)
{
  g_return_if_fail (NL_IS_PLOT (plot));
  plot->following = TRUE;
  plot->auto_valid = FALSE;
  gtk_widget_queue_draw (GTK_WIDGET (plot));
}

gboolean
nl_plot_get_following (NlPlot *plot)
{
  g_return_val_if_fail (NL_IS_PLOT (plot), FALSE);
  return plot->following;
}

gboolean
nl_plot_x_at (NlPlot *plot, double wx, double *x)
{
  g_return_val_if_fail (NL_IS_PLOT (plot), FALSE);
  if (!plot->have_frame || plot->area_w <= 0)
    return FALSE;
  if (x)
    *x = plot->frame_x0 + (wx - plot->area_x) / plot->area_w * (plot->frame_x1 - plot->frame_x0);
  return TRUE;
}

void
nl_plot_zoom_at (NlPlot *plot, double wx, double factor)
{
  double x0, x1, at, n0, n1;
  g_return_if_fail (NL_IS_PLOT (plot));
  g_return_if_fail (factor > 0 && isfinite (factor));
  _nl_plot_compute_x_range (plot, &x0, &x1);
  if (!nl_plot_x_at (plot, wx, &at))
    at = (x0 + x1) / 2;
  at = CLAMP (at, x0, x1);
  n0 = at - (at - x0) * factor;
  n1 = at + (x1 - at) * factor;
  /* stop where doubles run out of room between the ends */
  if (!(n1 - n0 > 1e-9 * MAX (1.0, MAX (fabs (n0), fabs (n1)))) || !isfinite (n0) || !isfinite (n1))
    return;
  nl_plot_set_x_range (plot, n0, n1);
}

void
nl_plot_pan (NlPlot *plot, double dx)
{
  double x0, x1, shift;
  g_return_if_fail (NL_IS_PLOT (plot));
  if (!plot->have_frame || plot->area_w <= 0)
    return;
  _nl_plot_compute_x_range (plot, &x0, &x1);
  shift = -dx * (x1 - x0) / plot->area_w;
  nl_plot_set_x_range (plot, x0 + shift, x1 + shift);
}

/* --- hover --- */

void
nl_plot_hover (NlPlot *plot, double wx, double wy)
{
  g_return_if_fail (NL_IS_PLOT (plot));
  plot->hovering = TRUE;
  plot->hover_wx = wx;
  plot->hover_wy = wy;
  gtk_widget_queue_draw (GTK_WIDGET (plot));
}

void
nl_plot_hover_end (NlPlot *plot)
{
  g_return_if_fail (NL_IS_PLOT (plot));
  if (!plot->hovering)
    return;
  plot->hovering = FALSE;
  gtk_widget_queue_draw (GTK_WIDGET (plot));
}

gboolean
nl_plot_get_hover_index (NlPlot *plot, guint i, gsize *index)
{
  double x;
  g_return_val_if_fail (NL_IS_PLOT (plot), FALSE);
  if (!plot->hovering || i >= plot->series->len || !plot->have_frame)
    return FALSE;
  if (plot->hover_wx < plot->area_x || plot->hover_wx > plot->area_x + plot->area_w
      || plot->hover_wy < plot->area_y || plot->hover_wy > plot->area_y + plot->area_h)
    return FALSE;
  nl_plot_x_at (plot, plot->hover_wx, &x);
  return nl_plot_series_find_nearest (g_ptr_array_index (plot->series, i), x, index);
}

char *
nl_plot_get_hover_text (NlPlot *plot)
{
  GString *text;
  double x;
  char a[G_ASCII_DTOSTR_BUF_SIZE], b[G_ASCII_DTOSTR_BUF_SIZE];
  gboolean any = FALSE;

  g_return_val_if_fail (NL_IS_PLOT (plot), NULL);
  if (!plot->hovering || !plot->have_frame || !nl_plot_x_at (plot, plot->hover_wx, &x))
    return NULL;
  text = g_string_new (NULL);
  g_string_append_printf (text, "%s %.6g", plot->x_label ? plot->x_label : "x", x);
  for (guint i = 0; i < plot->series->len; i++)
    {
      NlPlotSeries *s = g_ptr_array_index (plot->series, i);
      double px, py;
      gsize k;
      if (!nl_plot_get_hover_index (plot, i, &k))
        continue;
      nl_plot_series_get_point (s, k, &px, &py);
      _nl_plot_format_exact (a, sizeof a, px);
      _nl_plot_format_exact (b, sizeof b, py);
      g_string_append_printf (text, "\n%s: x = %s, y = %s", nl_plot_series_get_label (s), a, b);
      if (plot->smoothing > 0)
        {
          _nl_plot_format_exact (b, sizeof b, nl_plot_series_get_smoothed (s, plot->smoothing)[k]);
          g_string_append_printf (text, ", smoothed %s", b);
        }
      any = TRUE;
    }
  if (!any)
    return g_string_free (text, TRUE), NULL;
  return g_string_free (text, FALSE);
}
