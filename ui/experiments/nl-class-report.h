/* nl-class-report.h — a classification report in a grid (scikit-learn's
 * classification_report): a header row, precision, recall, F1 and support
 * per class, then the macro and weighted averages. */
#pragma once

#include <gtk/gtk.h>

#include "engine/session/nl-evaluate.h"

G_BEGIN_DECLS

/* Fills an empty GRID with EV's report. */
void nl_class_report_fill (GtkGrid *grid, const NlEvaluation *ev);

/* A label for a report cell: TEXT aligned at XALIGN, with CSS class CSS
 * (may be NULL); the evaluation view's lists use it too. */
GtkWidget *nl_class_report_cell (const char *text, float xalign, const char *css);

G_END_DECLS
