/* nl-sequence-plot.h — the Data page's plots of sequence data, drawn with
 * Cairo: a text dataset's length histogram with the truncation point
 * (max_length) marked, or a series' target with the first sample's window
 * and horizon shaded and where validation begins. */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define NL_TYPE_SEQUENCE_PLOT (nl_sequence_plot_get_type ())
G_DECLARE_FINAL_TYPE (NlSequencePlot, nl_sequence_plot, NL, SEQUENCE_PLOT, GtkWidget)

GtkWidget *nl_sequence_plot_new (void);
/* BINS[n_bins] samples per length bin of BIN_WIDTH tokens (the last: that
 * many or more); the line at MAX_LENGTH tokens. Copies. */
void nl_sequence_plot_set_lengths (NlSequencePlot *p, const int64_t *bins, int n_bins, int64_t bin_width,
                                   int max_length);
/* VALUES[n] at rows 0, stride, 2*stride, ...; the first sample's WINDOW
 * rows and the HORIZON after them shaded; validation from VAL_START_ROW
 * (n_rows: none). Copies. */
void nl_sequence_plot_set_series (NlSequencePlot *p, const float *values, int n, int64_t stride, int64_t n_rows,
                                  int64_t val_start_row, int window, int horizon);
/* The x (widget pixels) where the marked point (max_length, or the end of
 * the window) is drawn; -1 when nothing is set. For tests. */
double nl_sequence_plot_get_mark_x (NlSequencePlot *p);

G_END_DECLS
