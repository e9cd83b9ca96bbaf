/* nl-system-strip.c — system metrics beside the loss: what the machine
 * did while the run trained. A cell shows only once its metric has a
 * point (no GPU: no GPU cells), the strip only once a cell does. */
#include "ui/training/nl-system-strip.h"
#include <glib/gi18n.h>

#include <string.h>

typedef struct {
  const char *name, *title, *unit;
  int digits;
} SystemMetric;

static const SystemMetric metrics[] = {
  { "system/cpu_percent", N_("CPU"), "%", 0 },
  { "system/rss_mb", N_("Memory"), N_("MB"), 0 },
  { "system/gpu_util_percent", N_("GPU"), "%", 0 },
  { "system/gpu_mem_mb", N_("GPU memory"), N_("MB"), 0 },
  { "system/input_wait_ms", N_("Input wait"), N_("ms"), 1 },
};

#define N_METRICS G_N_ELEMENTS (metrics)

struct _NlSystemStrip {
  GtkBox parent_instance;
  GtkWidget *cells[N_METRICS];
  GtkLabel *values[N_METRICS];
  NlSparkline *lines[N_METRICS];
};

G_DEFINE_FINAL_TYPE (NlSystemStrip, nl_system_strip, GTK_TYPE_BOX)

static int
metric_index (const char *name)
{
  for (guint i = 0; i < N_METRICS; i++)
    if (!strcmp (metrics[i].name, name))
      return (int) i;
  return -1;
}

const char *
nl_system_metric_title (const char *name, const char **unit)
{
  int i = name ? metric_index (name) : -1;
  if (i < 0)
    return NULL;
  if (unit)
    *unit = metrics[i].unit[0] == '%' ? "%" : _(metrics[i].unit);
  return _(metrics[i].title);
}

static GtkWidget *
make_cell (NlSystemStrip *self, guint i)
{
  GtkWidget *cell = gtk_box_new (GTK_ORIENTATION_VERTICAL, 2);
  GtkWidget *head = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 6);
  GtkWidget *title = gtk_label_new (_(metrics[i].title));
  GtkWidget *value = gtk_label_new ("");
  GtkWidget *line = nl_sparkline_new ();
  g_autofree char *tip = g_strdup_printf (_("%s (%s) over the run's steps"), metrics[i].name,
                                          metrics[i].unit[0] == '%' ? "%" : _(metrics[i].unit));

  gtk_label_set_xalign (GTK_LABEL (title), 0);
  gtk_widget_add_css_class (title, "caption");
  gtk_widget_add_css_class (title, "dim-label");
  gtk_widget_set_hexpand (title, TRUE);
  gtk_label_set_xalign (GTK_LABEL (value), 1);
  gtk_widget_add_css_class (value, "caption-heading");
  gtk_widget_add_css_class (value, "nl-numeric");
  gtk_box_append (GTK_BOX (head), title);
  gtk_box_append (GTK_BOX (head), value);
  gtk_box_append (GTK_BOX (cell), head);
  gtk_box_append (GTK_BOX (cell), line);
  gtk_widget_set_hexpand (cell, TRUE);
  gtk_widget_set_tooltip_text (cell, tip);
  gtk_widget_set_visible (cell, FALSE);
  self->values[i] = GTK_LABEL (value);
  self->lines[i] = NL_SPARKLINE (line);
  return cell;
}

static void
nl_system_strip_class_init (NlSystemStripClass *klass)
{
  gtk_widget_class_set_css_name (GTK_WIDGET_CLASS (klass), "nl-system-strip");
}

static void
nl_system_strip_init (NlSystemStrip *self)
{
  gtk_orientable_set_orientation (GTK_ORIENTABLE (self), GTK_ORIENTATION_HORIZONTAL);
  gtk_box_set_spacing (GTK_BOX (self), 18);
  gtk_box_set_homogeneous (GTK_BOX (self), TRUE);
  for (guint i = 0; i < N_METRICS; i++)
    {
      self->cells[i] = make_cell (self, i);
      gtk_box_append (GTK_BOX (self), self->cells[i]);
    }
  gtk_widget_set_visible (GTK_WIDGET (self), FALSE);
}

GtkWidget *
nl_system_strip_new (void)
{
  return g_object_new (NL_TYPE_SYSTEM_STRIP, NULL);
}

void
nl_system_strip_clear (NlSystemStrip *self)
{
  g_return_if_fail (NL_IS_SYSTEM_STRIP (self));
  for (guint i = 0; i < N_METRICS; i++)
    {
      nl_sparkline_clear (self->lines[i]);
      gtk_label_set_label (self->values[i], "");
      gtk_widget_set_visible (self->cells[i], FALSE);
    }
  gtk_widget_set_visible (GTK_WIDGET (self), FALSE);
}

gboolean
nl_system_strip_add_row (NlSystemStrip *self, const NlMetricRow *row)
{
  int i;
  g_return_val_if_fail (NL_IS_SYSTEM_STRIP (self), FALSE);
  if (!g_str_has_prefix (row->name, "system/") || (i = metric_index (row->name)) < 0)
    return FALSE;
  if (!nl_sparkline_append (self->lines[i], (double) row->step, row->value))
    return TRUE;
  {
    const char *unit = metrics[i].unit[0] == '%' ? "%" : _(metrics[i].unit);
    g_autofree char *text = g_strdup_printf ("%.*f %s", metrics[i].digits, row->value, unit);
    gtk_label_set_label (self->values[i], text);
  }
  gtk_widget_set_visible (self->cells[i], TRUE);
  gtk_widget_set_visible (GTK_WIDGET (self), TRUE);
  return TRUE;
}

NlSparkline *
nl_system_strip_get_sparkline (NlSystemStrip *self, const char *name)
{
  int i;
  g_return_val_if_fail (NL_IS_SYSTEM_STRIP (self), NULL);
  i = metric_index (name);
  return i < 0 ? NULL : self->lines[i];
}

const char *
nl_system_strip_get_value_text (NlSystemStrip *self, const char *name)
{
  int i;
  g_return_val_if_fail (NL_IS_SYSTEM_STRIP (self), NULL);
  i = metric_index (name);
  return i < 0 ? NULL : gtk_label_get_label (self->values[i]);
}
