/* nl-confusion-matrix.c — the confusion-matrix heat map. */
#include "ui/experiments/nl-confusion-matrix.h"
#include <glib/gi18n.h>
#include <inttypes.h>

#include <math.h>

#define PAD 8.0
#define GAP 6.0

struct _NlConfusionMatrix {
  GtkWidget parent_instance;
  int n;
  int64_t *counts;
  int64_t *row_totals;
  char **names;
  int hover_row, hover_col;   /* -1: none */
};

G_DEFINE_FINAL_TYPE (NlConfusionMatrix, nl_confusion_matrix, GTK_TYPE_WIDGET)

/* Where things go for a widget of w x h. */
typedef struct {
  double label_w, text_h;     /* widest class name, one line of text */
  double x0, y0, cell;        /* the grid */
} Layout;

static double
text_width (GtkWidget *w, const char *text, double *height)
{
  g_autoptr (PangoLayout) layout = gtk_widget_create_pango_layout (w, text);
  int tw, th;
  pango_layout_get_pixel_size (layout, &tw, &th);
  if (height)
    *height = th;
  return tw;
}

static void
measure_labels (NlConfusionMatrix *m, double *label_w, double *text_h)
{
  *label_w = 0;
  text_width (GTK_WIDGET (m), _("Predicted"), text_h);
  for (int i = 0; i < m->n; i++)
    *label_w = MAX (*label_w, text_width (GTK_WIDGET (m), m->names[i], NULL));
}

/* Left: axis title (rotated), names; bottom: names (rotated), axis title. */
static void
layout_for (NlConfusionMatrix *m, double w, double h, Layout *l)
{
  double left, bottom, avail_w, avail_h;
  measure_labels (m, &l->label_w, &l->text_h);
  left = PAD + l->text_h + GAP + l->label_w + GAP;
  bottom = GAP + l->label_w + GAP + l->text_h + PAD;
  avail_w = MAX (w - left - PAD, 0);
  avail_h = MAX (h - PAD - bottom, 0);
  l->cell = m->n > 0 ? floor (MIN (avail_w, avail_h) / m->n) : 0;
  l->x0 = left + floor ((avail_w - l->cell * m->n) / 2);
  l->y0 = PAD + floor ((avail_h - l->cell * m->n) / 2);
}

static void
lookup (GtkWidget *w, const char *name, const char *fallback, GdkRGBA *out)
{
  G_GNUC_BEGIN_IGNORE_DEPRECATIONS
  if (!gtk_style_context_lookup_color (gtk_widget_get_style_context (w), name, out))
    gdk_rgba_parse (out, fallback);
  G_GNUC_END_IGNORE_DEPRECATIONS
}

static void
draw_text (cairo_t *cr, GtkWidget *w, const char *text, double x, double y, double angle, double align_x,
           double align_y, gboolean bold)
{
  g_autoptr (PangoLayout) layout = gtk_widget_create_pango_layout (w, text);
  int tw, th;
  if (bold)
    {
      PangoAttrList *attrs = pango_attr_list_new ();
      pango_attr_list_insert (attrs, pango_attr_weight_new (PANGO_WEIGHT_BOLD));
      pango_layout_set_attributes (layout, attrs);
      pango_attr_list_unref (attrs);
    }
  pango_layout_get_pixel_size (layout, &tw, &th);
  cairo_save (cr);
  cairo_translate (cr, x, y);
  cairo_rotate (cr, angle);
  cairo_move_to (cr, -align_x * tw, -align_y * th);
  pango_cairo_show_layout (cr, layout);
  cairo_restore (cr);
}

static void
set_source_mix (cairo_t *cr, const GdkRGBA *a, const GdkRGBA *b, double t)
{
  cairo_set_source_rgb (cr, a->red + (b->red - a->red) * t, a->green + (b->green - a->green) * t,
                        a->blue + (b->blue - a->blue) * t);
}

static void
nl_confusion_matrix_snapshot (GtkWidget *widget, GtkSnapshot *snapshot)
{
  NlConfusionMatrix *m = NL_CONFUSION_MATRIX (widget);
  int w = gtk_widget_get_width (widget), h = gtk_widget_get_height (widget), n = m->n;
  GdkRGBA fg, base, accent, accent_fg;
  Layout l;
  cairo_t *cr;

  if (n == 0 || w <= 0 || h <= 0)
    return;
  layout_for (m, w, h, &l);
  if (l.cell < 1)
    return;
  G_GNUC_BEGIN_IGNORE_DEPRECATIONS
  gtk_style_context_get_color (gtk_widget_get_style_context (widget), &fg);
  G_GNUC_END_IGNORE_DEPRECATIONS
  lookup (widget, "view_bg_color", "#ffffff", &base);
  lookup (widget, "accent_bg_color", "#3584e4", &accent);
  lookup (widget, "accent_fg_color", "#ffffff", &accent_fg);
  cr = gtk_snapshot_append_cairo (snapshot, &GRAPHENE_RECT_INIT (0, 0, w, h));

  for (int r = 0; r < n; r++)
    for (int c = 0; c < n; c++)
      {
        int64_t count = m->counts[r * n + c];
        double t = m->row_totals[r] > 0 ? (double) count / m->row_totals[r] : 0;
        double x = l.x0 + c * l.cell, y = l.y0 + r * l.cell;
        /* a faint floor keeps empty cells visible against the background */
        set_source_mix (cr, &base, &accent, 0.06 + 0.94 * sqrt (t));
        cairo_rectangle (cr, x, y, l.cell, l.cell);
        cairo_fill (cr);
        if (count > 0)
          {
            char text[32];
            double tw, th;
            g_snprintf (text, sizeof text, "%" G_GINT64_FORMAT, count);
            tw = text_width (widget, text, &th);
            if (tw + 4 <= l.cell && th + 2 <= l.cell)
              {
                GdkRGBA ink = sqrt (t) > 0.55 ? accent_fg : fg;
                gdk_cairo_set_source_rgba (cr, &ink);
                draw_text (cr, widget, text, x + l.cell / 2, y + l.cell / 2, 0, 0.5, 0.5, r == c);
              }
          }
      }
  /* grid lines in the background colour separate the cells */
  gdk_cairo_set_source_rgba (cr, &base);
  cairo_set_line_width (cr, 1);
  for (int k = 1; k < n; k++)
    {
      cairo_move_to (cr, l.x0 + k * l.cell + 0.5, l.y0);
      cairo_rel_line_to (cr, 0, n * l.cell);
      cairo_move_to (cr, l.x0, l.y0 + k * l.cell + 0.5);
      cairo_rel_line_to (cr, n * l.cell, 0);
    }
  cairo_stroke (cr);

  gdk_cairo_set_source_rgba (cr, &fg);
  for (int k = 0; k < n; k++)
    {
      gboolean hot_row = k == m->hover_row, hot_col = k == m->hover_col;
      double mid = l.cell * (k + 0.5);
      draw_text (cr, widget, m->names[k], l.x0 - GAP, l.y0 + mid, 0, 1, 0.5, hot_row);
      /* reading upwards, ending at the grid */
      draw_text (cr, widget, m->names[k], l.x0 + mid, l.y0 + n * l.cell + GAP, -G_PI / 2, 1, 0.5, hot_col);
    }
  draw_text (cr, widget, _("True class"), PAD, l.y0 + n * l.cell / 2, -G_PI / 2, 0.5, 0, TRUE);
  draw_text (cr, widget, _("Predicted class"), l.x0 + n * l.cell / 2,
             l.y0 + n * l.cell + GAP + l.label_w + GAP, 0, 0.5, 0, TRUE);

  if (m->hover_row >= 0)
    {
      gdk_cairo_set_source_rgba (cr, &fg);
      cairo_set_line_width (cr, 2);
      cairo_rectangle (cr, l.x0 + m->hover_col * l.cell + 1, l.y0 + m->hover_row * l.cell + 1, l.cell - 2,
                       l.cell - 2);
      cairo_stroke (cr);
    }
  cairo_destroy (cr);
}

/* Height for width: square cells as wide as the width allows, so the
 * widget is no taller than its grid. */
static GtkSizeRequestMode
nl_confusion_matrix_get_request_mode (GtkWidget *widget)
{
  return GTK_SIZE_REQUEST_HEIGHT_FOR_WIDTH;
}

static void
nl_confusion_matrix_measure (GtkWidget *widget, GtkOrientation orientation, int for_size, int *minimum,
                             int *natural, int *minimum_baseline, int *natural_baseline)
{
  NlConfusionMatrix *m = NL_CONFUSION_MATRIX (widget);
  int n = MAX (m->n, 2);
  double label_w, text_h, chrome_w, chrome_h, cell = MIN (48, 480 / n);
  measure_labels (m, &label_w, &text_h);
  chrome_w = PAD + text_h + GAP + label_w + GAP + PAD;
  chrome_h = PAD + GAP + label_w + GAP + text_h + PAD;
  if (orientation == GTK_ORIENTATION_HORIZONTAL)
    {
      *minimum = (int) ceil (chrome_w + n * 14);
      *natural = (int) ceil (chrome_w + n * cell);
      return;
    }
  if (for_size >= 0)
    cell = CLAMP (floor ((for_size - chrome_w) / n), 14, 72);
  *minimum = (int) ceil (chrome_h + n * 14);
  *natural = (int) ceil (chrome_h + n * cell);
}

static void
set_hover (NlConfusionMatrix *m, int row, int col)
{
  if (row == m->hover_row && col == m->hover_col)
    return;
  m->hover_row = row;
  m->hover_col = col;
  gtk_widget_queue_draw (GTK_WIDGET (m));
}

static void
on_motion (GtkEventControllerMotion *ctl, double x, double y, NlConfusionMatrix *m)
{
  int row = -1, col = -1;
  if (!nl_confusion_matrix_cell_at (m, x, y, &row, &col))
    row = col = -1;
  set_hover (m, row, col);
}

static void
on_leave (GtkEventControllerMotion *ctl, NlConfusionMatrix *m)
{
  set_hover (m, -1, -1);
}

static gboolean
on_query_tooltip (GtkWidget *widget, int x, int y, gboolean keyboard, GtkTooltip *tooltip, NlConfusionMatrix *m)
{
  int row, col;
  g_autofree char *text = NULL;
  if (!nl_confusion_matrix_cell_at (m, x, y, &row, &col))
    return FALSE;
  text = nl_confusion_matrix_describe_cell (m, row, col);
  gtk_tooltip_set_text (tooltip, text);
  return TRUE;
}

static void
nl_confusion_matrix_finalize (GObject *object)
{
  NlConfusionMatrix *m = NL_CONFUSION_MATRIX (object);
  g_free (m->counts);
  g_free (m->row_totals);
  g_strfreev (m->names);
  G_OBJECT_CLASS (nl_confusion_matrix_parent_class)->finalize (object);
}

static void
nl_confusion_matrix_class_init (NlConfusionMatrixClass *klass)
{
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);
  G_OBJECT_CLASS (klass)->finalize = nl_confusion_matrix_finalize;
  widget_class->snapshot = nl_confusion_matrix_snapshot;
  widget_class->get_request_mode = nl_confusion_matrix_get_request_mode;
  widget_class->measure = nl_confusion_matrix_measure;
  gtk_widget_class_set_css_name (widget_class, "confusionmatrix");
}

static void
nl_confusion_matrix_init (NlConfusionMatrix *m)
{
  GtkEventController *motion = gtk_event_controller_motion_new ();
  m->hover_row = m->hover_col = -1;
  g_signal_connect (motion, "motion", G_CALLBACK (on_motion), m);
  g_signal_connect (motion, "leave", G_CALLBACK (on_leave), m);
  gtk_widget_add_controller (GTK_WIDGET (m), motion);
  gtk_widget_set_has_tooltip (GTK_WIDGET (m), TRUE);
  g_signal_connect (m, "query-tooltip", G_CALLBACK (on_query_tooltip), m);
}

GtkWidget *
nl_confusion_matrix_new (void)
{
  return g_object_new (NL_TYPE_CONFUSION_MATRIX, NULL);
}

void
nl_confusion_matrix_set_data (NlConfusionMatrix *m, int n, const int64_t *counts, const char *const *names)
{
  g_return_if_fail (NL_IS_CONFUSION_MATRIX (m));
  g_return_if_fail (n >= 0 && (n == 0 || counts != NULL));
  g_clear_pointer (&m->counts, g_free);
  g_clear_pointer (&m->row_totals, g_free);
  g_clear_pointer (&m->names, g_strfreev);
  m->n = n;
  m->hover_row = m->hover_col = -1;
  if (n > 0)
    {
      m->counts = g_memdup2 (counts, sizeof (int64_t) * n * n);
      m->row_totals = g_new0 (int64_t, n);
      m->names = g_new0 (char *, n + 1);
      for (int r = 0; r < n; r++)
        {
          for (int c = 0; c < n; c++)
            m->row_totals[r] += counts[r * n + c];
          m->names[r] = names && names[r] ? g_strdup (names[r]) : g_strdup_printf ("%d", r);
        }
    }
  gtk_widget_queue_resize (GTK_WIDGET (m));
}

int
nl_confusion_matrix_get_n_classes (NlConfusionMatrix *m)
{
  g_return_val_if_fail (NL_IS_CONFUSION_MATRIX (m), 0);
  return m->n;
}

int64_t
nl_confusion_matrix_get_count (NlConfusionMatrix *m, int row, int col)
{
  g_return_val_if_fail (NL_IS_CONFUSION_MATRIX (m), 0);
  g_return_val_if_fail (row >= 0 && row < m->n && col >= 0 && col < m->n, 0);
  return m->counts[row * m->n + col];
}

gboolean
nl_confusion_matrix_cell_at (NlConfusionMatrix *m, double x, double y, int *row, int *col)
{
  Layout l;
  int r, c;
  g_return_val_if_fail (NL_IS_CONFUSION_MATRIX (m), FALSE);
  if (m->n == 0)
    return FALSE;
  layout_for (m, gtk_widget_get_width (GTK_WIDGET (m)), gtk_widget_get_height (GTK_WIDGET (m)), &l);
  if (l.cell < 1 || x < l.x0 || y < l.y0)
    return FALSE;
  c = (int) ((x - l.x0) / l.cell);
  r = (int) ((y - l.y0) / l.cell);
  if (r >= m->n || c >= m->n)
    return FALSE;
  if (row)
    *row = r;
  if (col)
    *col = c;
  return TRUE;
}

gboolean
nl_confusion_matrix_get_hover (NlConfusionMatrix *m, int *row, int *col)
{
  g_return_val_if_fail (NL_IS_CONFUSION_MATRIX (m), FALSE);
  if (row)
    *row = m->hover_row;
  if (col)
    *col = m->hover_col;
  return m->hover_row >= 0;
}

char *
nl_confusion_matrix_describe_cell (NlConfusionMatrix *m, int row, int col)
{
  int64_t count, total;
  g_return_val_if_fail (NL_IS_CONFUSION_MATRIX (m), NULL);
  if (row < 0 || col < 0 || row >= m->n || col >= m->n)
    return NULL;
  count = m->counts[row * m->n + col];
  total = m->row_totals[row];
  return g_strdup_printf (_("True %s, predicted %s: %" PRId64 " (%.1f %% of %s)"), m->names[row],
                          m->names[col], count, total ? 100.0 * count / total : 0.0, m->names[row]);
}
