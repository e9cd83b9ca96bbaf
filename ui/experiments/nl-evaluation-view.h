/* nl-evaluation-view.h — how a run's checkpoint does on its test data: the
 * confusion matrix, per-class precision / recall / F1 / support, overall
 * accuracy and F1, a gallery of the most confident mistakes, and a panel
 * that classifies an image file dropped on the view or chosen with
 * "Choose Image…" (probabilities as sorted bars), and an Explain panel
 * (nl-explain-panel.h) for a clicked mistake or the classified image.
 *
 * Loading runs nl_evaluate_run in a GTask thread with a progress bar and
 * nl_workspace_busy_push/pop around it; loading again cancels the previous
 * load. The Experiments page embeds it (a dialog or a stack page). */
#pragma once

#include <adwaita.h>

#include "engine/session/nl-evaluate.h"
#include "ui/nl-workspace.h"

G_BEGIN_DECLS

#define NL_TYPE_EVALUATION_VIEW (nl_evaluation_view_get_type ())
G_DECLARE_FINAL_TYPE (NlEvaluationView, nl_evaluation_view, NL, EVALUATION_VIEW, AdwBin)

GtkWidget *nl_evaluation_view_new (void);
/* Evaluates checkpoint `which` ("best", "last" or an epoch number; NULL:
 * "best") of RUN in the background. */
void nl_evaluation_view_load (NlEvaluationView *v, NlWorkspace *ws, gint64 run, const char *which);
/* The same; int8: the run's INT8 model made from that checkpoint (the
 * newest; Quantize…) instead of its fp32 weights (nl_evaluate_run_full). */
void nl_evaluation_view_load_full (NlEvaluationView *v, NlWorkspace *ws, gint64 run, const char *which,
                                   gboolean int8);
/* Classifies the image at PATH with the loaded model in the background and
 * shows it in the prediction panel. FALSE (and a message in the panel)
 * when no evaluation is loaded yet. */
gboolean nl_evaluation_view_predict_file (NlEvaluationView *v, const char *path);

/* What it shows, for the page that embeds it and for tests. */
gboolean nl_evaluation_view_is_loading (NlEvaluationView *v);    /* also ::notify::loading */
gboolean nl_evaluation_view_is_predicting (NlEvaluationView *v);
const NlEvaluation *nl_evaluation_view_get_evaluation (NlEvaluationView *v); /* NULL until loaded */
const char *nl_evaluation_view_get_error (NlEvaluationView *v);  /* the last load's error, or NULL */
GtkWidget *nl_evaluation_view_get_matrix (NlEvaluationView *v);  /* NlConfusionMatrix */
GtkWidget *nl_evaluation_view_get_table (NlEvaluationView *v);   /* GtkGrid: a header row, a row per class, averages */
GtkWidget *nl_evaluation_view_get_gallery (NlEvaluationView *v); /* GtkFlowBox of mistakes */
GtkWidget *nl_evaluation_view_get_probabilities (NlEvaluationView *v); /* GtkBox: a row per class, most likely first */
GtkWidget *nl_evaluation_view_get_explain_panel (NlEvaluationView *v); /* NlExplainPanel */
/* NlTextPredict: shown instead of "Classify an Image" for a text run */
GtkWidget *nl_evaluation_view_get_text_predict (NlEvaluationView *v);
/* Shows mistake i of the gallery (as clicking it does) in the Explain
 * panel, which computes its map in the background. FALSE: no such mistake. */
gboolean nl_evaluation_view_explain_mistake (NlEvaluationView *v, int i);

G_END_DECLS
