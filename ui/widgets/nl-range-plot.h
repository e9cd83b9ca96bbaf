/* nl-range-plot.h — what INT8 calibration found, drawn with Cairo: one
 * row per calibration point of a quantization table (nl-quant-table.h),
 * in the executor's step order. Each row has its own symmetric scale
 * [-R, R] (R: the largest of |min|, |max| and the threshold), since the
 * points' ranges differ by orders of magnitude: the observed [min, max] as
 * a bar, the threshold the method chose as marks at +t (and -t for a
 * signed point), what lies beyond it (clipped) shaded, and on the right
 * the numbers and "u8" or "s8". Hovering a row gives the same in words. */
#pragma once

#include <gtk/gtk.h>

#include "engine/infer/nl-quant-table.h"

G_BEGIN_DECLS

#define NL_TYPE_RANGE_PLOT (nl_range_plot_get_type ())
G_DECLARE_FINAL_TYPE (NlRangePlot, nl_range_plot, NL, RANGE_PLOT, GtkWidget)

GtkWidget *nl_range_plot_new (void);
/* Copies the ranges of TABLE; NULL clears. */
void nl_range_plot_set_table (NlRangePlot *plot, const NlQuantTable *table);
/* The rows drawn. */
int nl_range_plot_get_n_rows (NlRangePlot *plot);
/* Row i as drawn (NULL past the end; owned by the plot). */
const NlQuantRange *nl_range_plot_get_row (NlRangePlot *plot, int i);
/* The row under y in widget coordinates, -1 when none. */
int nl_range_plot_row_at (NlRangePlot *plot, double y);
/* Row i in words, its tooltip (g_free); NULL past the end. */
char *nl_range_plot_describe_row (NlRangePlot *plot, int i);

G_END_DECLS
