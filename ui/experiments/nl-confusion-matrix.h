/* nl-confusion-matrix.h — a confusion matrix as a heat map (Cairo in
 * snapshot): rows are true classes, columns predicted ones, each cell
 * coloured by its share of the row (the class's recall on the diagonal)
 * on a scale towards the Adwaita accent colour, counts printed where they
 * fit, class names on both axes. Hovering a cell outlines it and its
 * tooltip reads "True Shirt, predicted T-shirt/top: 121 (12.1 % of Shirt)". */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define NL_TYPE_CONFUSION_MATRIX (nl_confusion_matrix_get_type ())
G_DECLARE_FINAL_TYPE (NlConfusionMatrix, nl_confusion_matrix, NL, CONFUSION_MATRIX, GtkWidget)

GtkWidget *nl_confusion_matrix_new (void);
/* Copies n x n counts ([true * n + predicted]) and n names (NULL: numbers);
 * n 0 clears. */
void nl_confusion_matrix_set_data (NlConfusionMatrix *m, int n, const int64_t *counts, const char *const *names);
int nl_confusion_matrix_get_n_classes (NlConfusionMatrix *m);
int64_t nl_confusion_matrix_get_count (NlConfusionMatrix *m, int row, int col);
/* The cell under (x, y) in widget coordinates; FALSE outside the grid. */
gboolean nl_confusion_matrix_cell_at (NlConfusionMatrix *m, double x, double y, int *row, int *col);
/* The hovered cell; FALSE when none. */
gboolean nl_confusion_matrix_get_hover (NlConfusionMatrix *m, int *row, int *col);
/* The tooltip text of a cell (g_free); NULL outside. */
char *nl_confusion_matrix_describe_cell (NlConfusionMatrix *m, int row, int col);

G_END_DECLS
