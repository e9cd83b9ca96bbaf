/* nl-prob-row.h — one class's probability as a row: the name (bold for the
 * most likely), a bar, the percentage. The evaluation view's image and text
 * predictions list them most likely first. */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

GtkWidget *nl_prob_row_new (const char *name, double p, gboolean top);

G_END_DECLS
