/* nl-activation-view.h — inside a run's model: for a chosen test sample,
 * the feature maps of a chosen layer (any node with spatial outputs) as a
 * grid, one small colour-mapped image per channel, each normalised by its
 * own range; and a projection of a chosen layer's outputs over the first N
 * test samples (PCA, nl_explainer_project) as a scatter coloured by class,
 * where clicking a point shows that sample, its class and the prediction.
 * Everything is computed in GTask threads; errors are shown in place. The
 * evaluation window shows it on its Activations tab. */
#pragma once

#include <adwaita.h>

#include "ui/experiments/nl-explain-source.h"

G_BEGIN_DECLS

#define NL_TYPE_ACTIVATION_VIEW (nl_activation_view_get_type ())
G_DECLARE_FINAL_TYPE (NlActivationView, nl_activation_view, NL, ACTIVATION_VIEW, AdwBin)

GtkWidget *nl_activation_view_new (void);
/* Opens SRC's model in the background (referenced), lists its layers and
 * shows sample 0's maps of its first spatial layer. */
void nl_activation_view_set_source (NlActivationView *v, NlExplainSource *src);
/* Shows test sample INDEX (and its maps). */
void nl_activation_view_set_sample (NlActivationView *v, int64_t index);
/* Selects the feature-map layer (or, for_projection, the projected one)
 * by node id; FALSE when the list has no such layer. */
gboolean nl_activation_view_set_layer (NlActivationView *v, const char *id, gboolean for_projection);
/* Projects the selected projection layer over the first n test samples. */
void nl_activation_view_project (NlActivationView *v, int n);

/* What it shows, for tests. */
gboolean nl_activation_view_is_busy (NlActivationView *v);   /* also ::notify::busy */
const char *nl_activation_view_get_error (NlActivationView *v); /* the last task's, or NULL */
int64_t nl_activation_view_get_sample (NlActivationView *v);  /* whose maps are shown; -1: none */
const char *nl_activation_view_get_layer (NlActivationView *v); /* whose maps are shown, or NULL */
GtkWidget *nl_activation_view_get_grid (NlActivationView *v);   /* GtkFlowBox, a cell per channel */
GtkWidget *nl_activation_view_get_scatter (NlActivationView *v); /* NlScatterPlot */
GtkWidget *nl_activation_view_get_sample_label (NlActivationView *v); /* GtkLabel: class and prediction */
GtkWidget *nl_activation_view_get_layer_dropdown (NlActivationView *v, gboolean for_projection);

G_END_DECLS
