/* nl-sweep-plot.h — a sweep's trials drawn with Cairo: as parallel
 * coordinates (one axis per varied setting plus the metric, a line per
 * trial) or as a scatter of the metric against one setting. The best
 * trial is drawn bold, pruned ones faint. Dragging along an axis of the
 * parallel coordinates brushes a range on it; trials outside any brush
 * are greyed and ::brush-changed tells the sweep's table to filter. */
#pragma once

#include <gtk/gtk.h>

#include "engine/session/nl-sweep.h"

G_BEGIN_DECLS

typedef enum {
  NL_SWEEP_PLOT_PARALLEL,
  NL_SWEEP_PLOT_SCATTER,
} NlSweepPlotKind;

/* The kind is the construct-only property "kind" ("parallel" or
 * "scatter" in a template). */
#define NL_TYPE_SWEEP_PLOT_KIND (nl_sweep_plot_kind_get_type ())
GType nl_sweep_plot_kind_get_type (void);

#define NL_TYPE_SWEEP_PLOT (nl_sweep_plot_get_type ())
G_DECLARE_FINAL_TYPE (NlSweepPlot, nl_sweep_plot, NL, SWEEP_PLOT, GtkWidget)

GtkWidget *nl_sweep_plot_new (NlSweepPlotKind kind);
/* The trials (NlSweepTrial*, copied) of a sweep over SPACE_TEXT, scored
 * by METRIC. Brushes on axes that still exist are kept. */
void nl_sweep_plot_set_trials (NlSweepPlot *self, const char *space_text, GPtrArray *trials, const char *metric,
                               gboolean maximize);
/* The setting on the scatter's x axis (0-based; default 0). */
void nl_sweep_plot_set_scatter_param (NlSweepPlot *self, int param);
/* Trials with a value on every axis: the lines (or points) drawn. */
int nl_sweep_plot_get_n_drawn (NlSweepPlot *self);
/* Axes: the space's settings, then the metric (index = dimension). */
int nl_sweep_plot_get_n_axes (NlSweepPlot *self);
/* A brush on AXIS over [lo, hi] in axis fractions (0 bottom, 1 top); lo > hi removes it. */
void nl_sweep_plot_set_brush (NlSweepPlot *self, int axis, double lo, double hi);
/* Whether trial I (in the order given) is inside every brush. */
gboolean nl_sweep_plot_trial_selected (NlSweepPlot *self, guint i);
/* Trial I's position on AXIS as a fraction, NaN when it has none. */
double nl_sweep_plot_axis_fraction (NlSweepPlot *self, guint i, int axis);
/* The best trial's index, or -1. */
int nl_sweep_plot_get_best (NlSweepPlot *self);

G_END_DECLS
