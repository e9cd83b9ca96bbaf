/* nl-class-histogram.h — a small chart of samples per class (the Data
 * page's class histogram). Hidden while it has no classes. */
#pragma once

#include <gtk/gtk.h>
#include <stdint.h>

G_BEGIN_DECLS

#define NL_TYPE_CLASS_HISTOGRAM (nl_class_histogram_get_type ())
G_DECLARE_FINAL_TYPE (NlClassHistogram, nl_class_histogram, NL, CLASS_HISTOGRAM, GtkWidget)

GtkWidget *nl_class_histogram_new (void);
/* N names and counts (copied); n 0 or NULLs clear it. */
void nl_class_histogram_set (NlClassHistogram *h, int n, char **names, const int64_t *counts);
int nl_class_histogram_get_n_classes (NlClassHistogram *h);

G_END_DECLS
