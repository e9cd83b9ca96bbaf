/* nl-plot-series-private.h — the series struct, shared by nl-plot-series.c
 * (points, smoothing, signals) and nl-plot-reduce.c (the reduction). */
#pragma once

#include "ui/plot/nl-plot-series.h"

typedef struct {
  NlPlotReduction r;    /* r.columns points at cols */
  NlPlotColumn *cols;
  guint cols_cap;
  gboolean valid;
  guint64 epoch;        /* the series' epoch it was computed in */
  gsize len_seen;       /* points already folded (or known to be out of range) */
  guint64 used;         /* LRU clock */
} NlPlotReduceCache;

struct _NlPlotSeries {
  GObject parent_instance;

  char *label;
  GdkRGBA color;
  gboolean has_color;
  gboolean dashed;

  double *x, *y;
  gsize len, cap;
  double ymin, ymax;    /* of the finite y; valid when has_y */
  gboolean has_y;
  guint64 epoch;        /* bumped by clear: anything cached before is void */
  guint changed_idle;

  /* The debiased EMA for one smoothing value, extended on append. */
  double *sm;
  gsize sm_len, sm_cap;
  double sm_w;
  guint64 sm_epoch;
  gboolean sm_valid;
  double sm_acc;        /* s_t before debiasing */
  double sm_wt;         /* w^t */

  NlPlotReduceCache cache[2];
  guint64 clock;
  guint64 n_folded;
};

/* nl-plot-reduce.c */
void _nl_plot_series_reduce_free (NlPlotSeries *s);
