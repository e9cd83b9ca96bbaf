/* nl-explain-panel.h — the Explain overlay: a sample with the heat map of
 * where the model looked laid over it (NlHeatmapView), a method switch
 * (every NlExplainMethod; Grad-CAM with a layer selector), a class selector (the predicted class, the true
 * class, any class by name) and an opacity slider. Maps are computed with
 * nl_explainer_explain in a GTask thread, one at a time: a change while one
 * computes is computed when it ends, so the main loop never waits. Errors
 * are shown in the panel. The evaluation view shows one under its gallery
 * of mistakes and its prediction panel. */
#pragma once

#include <adwaita.h>

#include "ui/experiments/nl-explain-source.h"

G_BEGIN_DECLS

#define NL_TYPE_EXPLAIN_PANEL (nl_explain_panel_get_type ())
G_DECLARE_FINAL_TYPE (NlExplainPanel, nl_explain_panel, NL, EXPLAIN_PANEL, AdwBin)

GtkWidget *nl_explain_panel_new (void);
/* What it explains with (referenced; NULL: nothing) and the class names
 * (n_classes, copied) of its selector. Clears the sample. */
void nl_explain_panel_set_source (NlExplainPanel *p, NlExplainSource *src, const char *const *class_names,
                                  int n_classes);
/* Shows a sample ((C, H, W) pixels in [0, 1], as the dataset gives them;
 * truth: its class, or -1 when unknown, e.g. an image file) under TITLE and
 * explains it in the background, with the class selector on "predicted".
 * Scrolls the panel into view. */
void nl_explain_panel_show_sample (NlExplainPanel *p, const float *pixels, const NlShape *shape, int truth,
                                   const char *title);
/* The same for a mistake of EV (its sample is read here: one decode). */
gboolean nl_explain_panel_show_mistake (NlExplainPanel *p, NlEvaluation *ev, const NlMisclassified *m);
/* Selects class c in the class selector (-1: the predicted class), which
 * recomputes. FALSE if the selector has no such entry. */
gboolean nl_explain_panel_select_class (NlExplainPanel *p, int c);
/* Selects Grad-CAM's layer by node id (NULL: the last convolution), which
 * recomputes a Grad-CAM map; the selector lists the layers with feature
 * maps once the first map has been computed. FALSE: no such layer listed. */
gboolean nl_explain_panel_select_layer (NlExplainPanel *p, const char *id);
const char *nl_explain_panel_get_layer (NlExplainPanel *p);  /* NULL: the last convolution */
/* The class explained (-1: the predicted) and the method selected. */
int nl_explain_panel_get_target_class (NlExplainPanel *p);
NlExplainMethod nl_explain_panel_get_method (NlExplainPanel *p);

/* What it shows, for tests. */
gboolean nl_explain_panel_is_computing (NlExplainPanel *p);   /* also ::notify::computing */
const char *nl_explain_panel_get_error (NlExplainPanel *p);   /* the last computation's, or NULL */
const NlExplanation *nl_explain_panel_get_explanation (NlExplainPanel *p); /* the map shown, or NULL */
GtkWidget *nl_explain_panel_get_heatmap (NlExplainPanel *p);  /* NlHeatmapView */
GtkWidget *nl_explain_panel_get_method_dropdown (NlExplainPanel *p);
GtkWidget *nl_explain_panel_get_class_dropdown (NlExplainPanel *p);
GtkWidget *nl_explain_panel_get_opacity_scale (NlExplainPanel *p);
GtkWidget *nl_explain_panel_get_layer_dropdown (NlExplainPanel *p); /* shown for Grad-CAM only */

G_END_DECLS
