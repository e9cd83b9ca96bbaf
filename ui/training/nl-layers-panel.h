/* nl-layers-panel.h — the dashboard's Layers view: one row per layer
 * (node) with sparklines of its gradient norm, update-to-weight ratio and
 * dead fraction (the layer/ metrics), marked where a value leaves its
 * usual range or where the first NaN/Inf was made, the layer's share of
 * step time (profile/<node>/ms) and a button that profiles the next steps.
 * Activating a row shows the layer's histograms over time in a ridge plot,
 * read from the project and re-read as new points arrive. */
#pragma once

#include <gtk/gtk.h>

#include "projects/nl-project.h"
#include "ui/nl-workspace.h"
#include "ui/plot/nl-ridge-plot.h"
#include "ui/plot/nl-sparkline.h"

G_BEGIN_DECLS

#define NL_TYPE_LAYERS_PANEL (nl_layers_panel_get_type ())
G_DECLARE_FINAL_TYPE (NlLayersPanel, nl_layers_panel, NL, LAYERS_PANEL, GtkBox)

/* The steps the Profile button asks for. */
#define NL_LAYERS_PANEL_PROFILE_STEPS 50
/* The usual ranges (the rows' tooltips say them). */
#define NL_LAYERS_GRAD_SPREAD 100.0      /* grad norm within [median/100, median*100] */
#define NL_LAYERS_RATIO_LO 1e-4          /* update ratio within [1e-4, 1e-1] */
#define NL_LAYERS_RATIO_HI 1e-1
#define NL_LAYERS_DEAD_MAX 0.5           /* dead fraction at most 0.5 */

GtkWidget *nl_layers_panel_new (void);
/* Forgets every layer (a new run). */
void nl_layers_panel_clear (NlLayersPanel *self);
/* Takes a layer/ or profile/ point; FALSE (nothing done) for another. */
gboolean nl_layers_panel_add_row (NlLayersPanel *self, const NlMetricRow *row);
/* The rows in the order of the network's nodes (NULL-terminated ids);
 * nodes not among them after, as they came. */
void nl_layers_panel_set_node_order (NlLayersPanel *self, const char *const *nodes);
/* The project and run the ridge plot reads histograms of (NULL/0: none). */
void nl_layers_panel_set_run (NlLayersPanel *self, NlWorkspace *ws, gint64 run);
/* New points were stored: an open ridge plot reads its histograms again. */
void nl_layers_panel_refresh (NlLayersPanel *self);
/* Whether the Profile button works (this process trains the run), and
 * why not in a tooltip otherwise. */
void nl_layers_panel_set_can_profile (NlLayersPanel *self, gboolean can);
/* The Profile Next 50 Steps button (emits ::profile-requested (int n_steps)). */
GtkButton *nl_layers_panel_get_profile_button (NlLayersPanel *self);
/* Shows NODE's histograms, as activating its row does; FALSE without such a row. */
gboolean nl_layers_panel_open_layer (NlLayersPanel *self, const char *node);

/* What the panel shows (tests, screenshots). */
guint nl_layers_panel_get_n_layers (NlLayersPanel *self);
GtkListBoxRow *nl_layers_panel_get_row (NlLayersPanel *self, const char *node);
/* METRIC: "grad_norm", "update_ratio" or "dead_fraction". */
NlSparkline *nl_layers_panel_get_sparkline (NlLayersPanel *self, const char *node, const char *metric);
/* The text shown beside that sparkline. */
const char *nl_layers_panel_get_value_text (NlLayersPanel *self, const char *node, const char *metric);
/* Whether the row is marked: a newest value out of its range, or the first NaN/Inf. */
gboolean nl_layers_panel_is_flagged (NlLayersPanel *self, const char *node);
/* 1 forward, 2 backward: NODE made the run's first NaN/Inf; 0: not. */
int nl_layers_panel_get_nonfinite (NlLayersPanel *self, const char *node);
/* NODE's share of the profiled step time in [0, 1]; NaN when not profiled. */
double nl_layers_panel_get_time_share (NlLayersPanel *self, const char *node);
NlRidgePlot *nl_layers_panel_get_ridge_plot (NlLayersPanel *self);
/* The tensor the ridge plot shows ("fc1.weight"), NULL when closed. */
const char *nl_layers_panel_get_ridge_tensor (NlLayersPanel *self);
/* Whether the ridge plot's histograms are being read. */
gboolean nl_layers_panel_is_loading (NlLayersPanel *self);
/* Shows gradients (TRUE) or weights in the ridge plot, as its switch does. */
void nl_layers_panel_set_ridge_gradients (NlLayersPanel *self, gboolean gradients);

G_END_DECLS
