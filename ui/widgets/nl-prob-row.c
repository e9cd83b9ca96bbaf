/* nl-prob-row.c — a class name, a bar and a percentage in a row. */
#include "ui/widgets/nl-prob-row.h"

GtkWidget *
nl_prob_row_new (const char *name, double p, gboolean top)
{
  GtkWidget *row = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 12);
  GtkWidget *bar = gtk_progress_bar_new ();
  GtkWidget *l = gtk_label_new (name);
  g_autofree char *pct = g_strdup_printf ("%.1f %%", 100 * p);
  gtk_label_set_xalign (GTK_LABEL (l), 0);
  gtk_label_set_width_chars (GTK_LABEL (l), 14);
  gtk_label_set_max_width_chars (GTK_LABEL (l), 14);
  gtk_label_set_ellipsize (GTK_LABEL (l), PANGO_ELLIPSIZE_END);
  if (top)
    {
      PangoAttrList *attrs = pango_attr_list_new ();
      pango_attr_list_insert (attrs, pango_attr_weight_new (PANGO_WEIGHT_BOLD));
      gtk_label_set_attributes (GTK_LABEL (l), attrs);
      pango_attr_list_unref (attrs);
    }
  gtk_box_append (GTK_BOX (row), l);
  gtk_progress_bar_set_fraction (GTK_PROGRESS_BAR (bar), CLAMP (p, 0, 1));
  gtk_widget_set_hexpand (bar, TRUE);
  gtk_widget_set_valign (bar, GTK_ALIGN_CENTER);
  gtk_box_append (GTK_BOX (row), bar);
  l = gtk_label_new (pct);
  gtk_label_set_xalign (GTK_LABEL (l), 1);
  gtk_widget_add_css_class (l, "nl-numeric");
  gtk_label_set_width_chars (GTK_LABEL (l), 7);
  gtk_box_append (GTK_BOX (row), l);
  return row;
}
