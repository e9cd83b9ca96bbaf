/* nl-run-layers.h — a training run's layer statistics into its project:
 * the numbers as metrics through the run's metric writer (split "train",
 * layer/<node>.<tensor>/grad_norm, layer/<node>/dead_fraction ...), the
 * histograms into the project's layer_histograms (nl-project-layers.h). */
#pragma once

#include "engine/train/nl-layer-stats.h"
#include "projects/nl-project.h"

G_BEGIN_DECLS

/* FALSE with the error when the histograms could not be stored. */
gboolean nl_run_layers_record (NlProject *p, NlMetricWriter *w, gint64 run, const NlLayerStatsReport *r,
                               GError **error);
/* layer/<node>/first_nonfinite: 1 forward, 2 backward, at step. */
void nl_run_layers_nonfinite (NlMetricWriter *w, gint64 run, int epoch, const NlNonfinite *nf, gint64 step);

G_END_DECLS
