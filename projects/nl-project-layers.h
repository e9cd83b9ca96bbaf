/* nl-project-layers.h — a run's layer histograms (schema 5): per statistics
 * step, per weight tensor, the histogram of its weights and of its
 * gradients over fixed bins between that step's min and max. The scalar
 * layer statistics are metrics (layer/<node>.<tensor>/grad_norm ...).
 * Deleted with the run; a resume drops those after its checkpoint's step,
 * as nl_project_truncate_metrics does the metrics. */
#pragma once

#include "projects/nl-project.h"

G_BEGIN_DECLS

#define NL_LAYER_HIST_BINS 32

typedef struct {
  gint64 step;
  const char *tensor;   /* interned: "fc1.weight" */
  gboolean is_grad;     /* FALSE: weights, TRUE: gradients */
  float lo, hi;         /* the bins cover [lo, hi] evenly */
  int n_bins;           /* NL_LAYER_HIST_BINS = 32 */
  guint32 *counts;      /* [n_bins], owned by the array's clear func */
} NlLayerHistogram;

/* Stores n histograms of run in one transaction (a run another process
 * took over is refused, as metrics are). Each needs a tensor name, 1 to
 * 1024 bins and lo <= hi. */
gboolean nl_project_add_layer_histograms (NlProject *p, gint64 run, const NlLayerHistogram *h, int n,
                                          GError **error);
/* oldest step first; tensor NULL: every tensor */
GArray *nl_project_list_layer_histograms (NlProject *p, gint64 run, const char *tensor, gboolean is_grad,
                                          GError **error);

G_END_DECLS
