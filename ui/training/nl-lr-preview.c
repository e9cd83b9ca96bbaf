/* nl-lr-preview.c — the learning-rate schedule over a run, drawn with Cairo. */
#include "ui/training/nl-lr-preview.h"

/* The schedule itself: the trainer's own evaluation, so the preview cannot
 * drift from what a run does (no session header re-exports it). */
#include "engine/session/nl-run.h"

#include <math.h>

#define N_SAMPLES 256

struct _NlLrPreview {
  GtkWidget parent_instance;
  NlLrSchedule *schedule;
  gint64 total, steps_per_epoch;
  double y_max;
  char *error;
  double steps[N_SAMPLES], rates[N_SAMPLES];
  guint n_points;
};

G_DEFINE_FINAL_TYPE (NlLrPreview, nl_lr_preview, GTK_TYPE_WIDGET)

static void
set_source (cairo_t *cr, const GdkRGBA *c, double alpha)
{
  cairo_set_source_rgba (cr, c->red, c->green, c->blue, c->alpha * alpha);
}

static PangoLayout *
small_layout (NlLrPreview *self, const char *text)
{
  PangoLayout *layout = gtk_widget_create_pango_layout (GTK_WIDGET (self), text);
  PangoFontDescription *font = pango_font_description_copy (pango_context_get_font_description (
    pango_layout_get_context (layout)));
  pango_font_description_set_size (font, (int) (pango_font_description_get_size (font) * 0.8));
  pango_layout_set_font_description (layout, font);
  pango_font_description_free (font);
  return layout;
}

/* One evaluation per pixel column: every step of a step schedule and any
 * warm-up at least a column wide shows. */
static void
curve_path (NlLrPreview *self, cairo_t *cr, double left, double right, double top, double bottom)
{
  int n = MAX (2, (int) (right - left));
  double ymax = self->y_max > 0 ? self->y_max : 1;
  cairo_new_path (cr);
  for (int c = 0; c <= n; c++)
    {
      gint64 step = MIN (self->total - 1, (gint64) floor ((double) c * self->total / n));
      double y = nl_lr_schedule_get (self->schedule, MAX (step, 0));
      double px = left + (right - left) * c / n;
      double py = bottom - (bottom - top) * CLAMP (y / ymax, 0, 1);
      if (c == 0)
        cairo_move_to (cr, px, py);
      else
        cairo_line_to (cr, px, py);
    }
}

static void
draw (NlLrPreview *self, cairo_t *cr, int width, int height)
{
  GdkRGBA fg, accent = { 0.21, 0.52, 0.89, 1 };  /* Adwaita's blue: the plot's first series */
  double left = 4, right = width - 4, top = 16, bottom = height - 4;
  g_autoptr (PangoLayout) label = NULL;
  char text[64];

  /* gtk_widget_get_color () is 4.10; in 4.8 the style context is the way */
  G_GNUC_BEGIN_IGNORE_DEPRECATIONS
  gtk_style_context_get_color (gtk_widget_get_style_context (GTK_WIDGET (self)), &fg);
  G_GNUC_END_IGNORE_DEPRECATIONS

  if (self->error || !self->schedule || right - left < 8 || bottom - top < 8)
    {
      label = small_layout (self, self->error ? self->error : "");
      pango_layout_set_width (label, (width - 8) * PANGO_SCALE);
      pango_layout_set_wrap (label, PANGO_WRAP_WORD_CHAR);
      set_source (cr, &fg, 0.6);
      cairo_move_to (cr, 4, 4);
      pango_cairo_show_layout (cr, label);
      return;
    }

  /* the peak rate, top left: the scale of the curve */
  g_snprintf (text, sizeof text, "peak %.3g", self->y_max);
  label = small_layout (self, text);
  set_source (cr, &fg, 0.55);
  cairo_move_to (cr, left, 0);
  pango_cairo_show_layout (cr, label);

  /* epoch ticks (at most one per 6 pixels, else every k-th) */
  cairo_set_line_width (cr, 1);
  if (self->steps_per_epoch > 0 && self->total > 0)
    {
      gint64 epochs = (self->total + self->steps_per_epoch - 1) / self->steps_per_epoch;
      gint64 every = MAX (1, (gint64) ceil (epochs * 6.0 / (right - left)));
      set_source (cr, &fg, 0.12);
      for (gint64 e = every; e < epochs; e += every)
        {
          double x = round (left + (right - left) * (double) (e * self->steps_per_epoch) / self->total) + 0.5;
          cairo_move_to (cr, x, top);
          cairo_line_to (cr, x, bottom);
        }
      cairo_stroke (cr);
    }
  set_source (cr, &fg, 0.3);
  cairo_move_to (cr, left, bottom + 0.5);
  cairo_line_to (cr, right, bottom + 0.5);
  cairo_stroke (cr);

  /* the area under the curve, faint, then the curve itself */
  curve_path (self, cr, left, right, top, bottom);
  cairo_line_to (cr, right, bottom);
  cairo_line_to (cr, left, bottom);
  cairo_close_path (cr);
  set_source (cr, &accent, 0.18);
  cairo_fill (cr);
  curve_path (self, cr, left, right, top, bottom);
  cairo_set_line_width (cr, 2);
  set_source (cr, &accent, 1);
  cairo_stroke (cr);
}

static void
nl_lr_preview_snapshot (GtkWidget *widget, GtkSnapshot *snapshot)
{
  int w = gtk_widget_get_width (widget), h = gtk_widget_get_height (widget);
  cairo_t *cr;
  if (w <= 0 || h <= 0)
    return;
  cr = gtk_snapshot_append_cairo (snapshot, &GRAPHENE_RECT_INIT (0, 0, w, h));
  draw (NL_LR_PREVIEW (widget), cr, w, h);
  cairo_destroy (cr);
}

static void
nl_lr_preview_measure (GtkWidget *widget, GtkOrientation orientation, int for_size, int *minimum, int *natural,
                       int *minimum_baseline, int *natural_baseline)
{
  gboolean h = orientation == GTK_ORIENTATION_HORIZONTAL;
  *minimum = h ? 120 : 72;
  *natural = h ? 320 : 96;
}

static void
nl_lr_preview_finalize (GObject *object)
{
  NlLrPreview *self = NL_LR_PREVIEW (object);
  g_clear_pointer (&self->schedule, nl_lr_schedule_free);
  g_free (self->error);
  G_OBJECT_CLASS (nl_lr_preview_parent_class)->finalize (object);
}

static void
nl_lr_preview_class_init (NlLrPreviewClass *klass)
{
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);
  G_OBJECT_CLASS (klass)->finalize = nl_lr_preview_finalize;
  widget_class->snapshot = nl_lr_preview_snapshot;
  widget_class->measure = nl_lr_preview_measure;
  gtk_widget_class_set_css_name (widget_class, "lr-preview");
}

static void
nl_lr_preview_init (NlLrPreview *self)
{
}

GtkWidget *
nl_lr_preview_new (void)
{
  return g_object_new (NL_TYPE_LR_PREVIEW, NULL);
}

gboolean
nl_lr_preview_set_schedule (NlLrPreview *self, const char *spec, double base_lr, gint64 total_updates,
                            gint64 steps_per_epoch, GError **error)
{
  g_autoptr (GError) local = NULL;
  NlLrSchedule *s;

  g_return_val_if_fail (NL_IS_LR_PREVIEW (self), FALSE);
  g_clear_pointer (&self->schedule, nl_lr_schedule_free);
  g_clear_pointer (&self->error, g_free);
  self->n_points = 0;
  self->y_max = 0;
  self->total = MAX (total_updates, 1);
  self->steps_per_epoch = steps_per_epoch;
  s = nl_lr_schedule_new (spec && *spec ? spec : "constant", (float) base_lr, self->total, &local);
  if (!s)
    {
      self->error = g_strdup (local->message);
      gtk_widget_queue_draw (GTK_WIDGET (self));
      g_propagate_error (error, g_steal_pointer (&local));
      return FALSE;
    }
  self->schedule = s;
  self->n_points = (guint) MIN ((gint64) N_SAMPLES, self->total);
  for (guint i = 0; i < self->n_points; i++)
    {
      gint64 step = self->n_points > 1 ? (gint64) ((double) i * (self->total - 1) / (self->n_points - 1)) : 0;
      self->steps[i] = (double) step;
      self->rates[i] = nl_lr_schedule_get (s, step);
      self->y_max = MAX (self->y_max, self->rates[i]);
    }
  self->y_max = MAX (self->y_max, base_lr);
  gtk_widget_queue_draw (GTK_WIDGET (self));
  return TRUE;
}

const char *
nl_lr_preview_get_error (NlLrPreview *self)
{
  g_return_val_if_fail (NL_IS_LR_PREVIEW (self), NULL);
  return self->error;
}

guint
nl_lr_preview_get_n_points (NlLrPreview *self)
{
  g_return_val_if_fail (NL_IS_LR_PREVIEW (self), 0);
  return self->n_points;
}

gboolean
nl_lr_preview_get_point (NlLrPreview *self, guint i, double *step, double *lr)
{
  g_return_val_if_fail (NL_IS_LR_PREVIEW (self), FALSE);
  if (i >= self->n_points)
    return FALSE;
  if (step)
    *step = self->steps[i];
  if (lr)
    *lr = self->rates[i];
  return TRUE;
}
