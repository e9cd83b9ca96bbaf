/* nl-class-report.c — the evaluation view's table of per-class scores. */
#include "ui/experiments/nl-class-report.h"
#include <glib/gi18n.h>

GtkWidget *
nl_class_report_cell (const char *text, float xalign, const char *css)
{
  GtkWidget *l = gtk_label_new (text);
  gtk_label_set_xalign (GTK_LABEL (l), xalign);
  if (css)
    gtk_widget_add_css_class (l, css);
  return l;
}

static void
set_bold (GtkWidget *label)
{
  PangoAttrList *attrs = pango_attr_list_new ();
  pango_attr_list_insert (attrs, pango_attr_weight_new (PANGO_WEIGHT_BOLD));
  gtk_label_set_attributes (GTK_LABEL (label), attrs);
  pango_attr_list_unref (attrs);
}

static void
table_row (GtkGrid *grid, int row, const char *name, double p, double r, double f, int64_t support, gboolean bold)
{
  char buf[4][32];
  g_snprintf (buf[0], 32, "%.3f", p);
  g_snprintf (buf[1], 32, "%.3f", r);
  g_snprintf (buf[2], 32, "%.3f", f);
  g_snprintf (buf[3], 32, "%" G_GINT64_FORMAT, support);
  GtkWidget *l = nl_class_report_cell (name, 0, NULL);
  gtk_label_set_ellipsize (GTK_LABEL (l), PANGO_ELLIPSIZE_END);
  gtk_label_set_max_width_chars (GTK_LABEL (l), 18);
  if (bold)
    set_bold (l);
  gtk_grid_attach (grid, l, 0, row, 1, 1);
  for (int k = 0; k < 4; k++)
    gtk_grid_attach (grid, nl_class_report_cell (buf[k], 1, "nl-numeric"), k + 1, row, 1, 1);
}

void
nl_class_report_fill (GtkGrid *grid, const NlEvaluation *ev)
{
  static const char *const heads[] = { N_("Class"), N_("Precision"), N_("Recall"), N_("F1"), N_("Support") };
  int n = ev->n_classes, counted = 0;
  double mp = 0, mr = 0, wp = 0, wr = 0;

  for (int k = 0; k < 5; k++)
    gtk_grid_attach (grid, nl_class_report_cell (_(heads[k]), k ? 1 : 0, "dim-label"), k, 0, 1, 1);
  for (int c = 0; c < n; c++)
    {
      int64_t predicted = 0;
      for (int t = 0; t < n; t++)
        predicted += ev->confusion[t * n + c];
      table_row (grid, c + 1, ev->class_names[c], ev->precision[c], ev->recall[c], ev->f1[c], ev->support[c], FALSE);
      /* the classes macro F1 counts: those that occur as truth or prediction */
      if (ev->support[c] + predicted > 0)
        {
          mp += ev->precision[c];
          mr += ev->recall[c];
          counted++;
        }
      wp += ev->precision[c] * ev->support[c];
      wr += ev->recall[c] * ev->support[c];
    }
  gtk_grid_attach (grid, gtk_separator_new (GTK_ORIENTATION_HORIZONTAL), 0, n + 1, 5, 1);
  table_row (grid, n + 2, _("Macro average"), counted ? mp / counted : 0, counted ? mr / counted : 0, ev->macro_f1,
             ev->n_samples, TRUE);
  table_row (grid, n + 3, _("Weighted average"), ev->n_samples ? wp / ev->n_samples : 0,
             ev->n_samples ? wr / ev->n_samples : 0, ev->weighted_f1, ev->n_samples, TRUE);
}

