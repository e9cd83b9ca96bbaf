/* nl-evaluation-window.h — a window of its own around an
 * NlEvaluationView (so that several runs can be looked at side by side
 * while the workbench goes on): Evaluate on the Experiments page, and
 * Evaluate on a row of the Quantize dialog's INT8 models. For a run with
 * INT8 models its header bar chooses between the checkpoint's fp32 weights
 * and its INT8 model. Its header switches between the evaluation and the
 * Activations tab (feature maps and a projection of the test set). */
#pragma once

#include <adwaita.h>

#include "ui/nl-workspace.h"

G_BEGIN_DECLS

/* Shown at once, transient for PARENT (may be NULL), evaluating checkpoint
 * `which` ("best", "last", an epoch; NULL: "best") of RUN, fp32 or int8. */
GtkWindow *nl_evaluation_window_new (GtkWindow *parent, NlWorkspace *ws, gint64 run, const char *which,
                                     gboolean int8);
/* Its view (NlEvaluationView) and precision choice (GtkDropDown: 0 fp32,
 * 1 INT8; hidden for a run without INT8 models). */
GtkWidget *nl_evaluation_window_get_view (GtkWindow *window);
GtkWidget *nl_evaluation_window_get_precision (GtkWindow *window);
/* Its Activations tab (NlActivationView; it opens the checkpoint's model
 * the first time it is shown). */
GtkWidget *nl_evaluation_window_get_activations (GtkWindow *window);
/* Shows tab PAGE: "evaluation" or "activations". */
/* Its Generate tab (NlGenerateBox), shown first for a language-model run
 * (dataset text-lm:); NULL for other runs. */
GtkWidget *nl_evaluation_window_get_generate_box (GtkWindow *window);
void nl_evaluation_window_show_page (GtkWindow *window, const char *page);

G_END_DECLS
