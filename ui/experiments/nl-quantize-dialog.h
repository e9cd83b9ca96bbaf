/* nl-quantize-dialog.h — "Quantize…" on the Experiments page: INT8
 * post-training quantization of a run's checkpoint
 * (engine/session/nl-run-quantize.h) with its options (calibration
 * samples, method, checkpoint), its progress, then the per-point dynamic
 * ranges (ui/widgets/nl-range-plot.h) and fp32 and INT8 side by side: test
 * accuracy, images/s and their ratio, the two confusion matrices. Below the
 * options it lists the run's INT8 models (each can be deleted, and the
 * newest of each checkpoint exported as ONNX in QDQ form). The work runs in a GTask thread
 * with the workspace busy; an error is shown in the dialog, and then
 * nothing was stored. */
#pragma once

#include <adwaita.h>

#include "engine/session/nl-run-quantize.h"
#include "ui/nl-workspace.h"

G_BEGIN_DECLS

#define NL_TYPE_QUANTIZE_DIALOG (nl_quantize_dialog_get_type ())
G_DECLARE_FINAL_TYPE (NlQuantizeDialog, nl_quantize_dialog, NL, QUANTIZE_DIALOG, AdwWindow)

/* A dialog transient for OWNER's window for RUN of WS's project; RUN_NAME
 * is its subtitle (may be NULL). Present it. */
NlQuantizeDialog *nl_quantize_dialog_new (GtkWidget *owner, NlWorkspace *ws, gint64 run, const char *run_name);

/* The options: calibration samples (512 at first), the method (the table
 * of nl_quant_method_name; entropy at first) and "best" or "last". */
int nl_quantize_dialog_get_calibration_samples (NlQuantizeDialog *self);
void nl_quantize_dialog_set_calibration_samples (NlQuantizeDialog *self, int samples);
NlQuantMethod nl_quantize_dialog_get_method (NlQuantizeDialog *self);
void nl_quantize_dialog_set_method (NlQuantizeDialog *self, NlQuantMethod method);
const char *nl_quantize_dialog_get_checkpoint (NlQuantizeDialog *self);
void nl_quantize_dialog_set_checkpoint (NlQuantizeDialog *self, const char *which);

/* Start: quantizes with the options in the background (nothing while it
 * runs). Cancel stops it; nothing is stored then. */
void nl_quantize_dialog_start (NlQuantizeDialog *self);
void nl_quantize_dialog_cancel (NlQuantizeDialog *self);
gboolean nl_quantize_dialog_is_running (NlQuantizeDialog *self);

/* What it shows, for tests. The last result (NULL until one finished),
 * the error shown (NULL when none), the range plot (NlRangePlot), the
 * confusion matrices (NlConfusionMatrix), the accuracy labels' text, and
 * the list of the run's INT8 models (GtkListBox, a row per model, oldest
 * first, or one placeholder row). */
const NlQuantizeResult *nl_quantize_dialog_get_result (NlQuantizeDialog *self);
const char *nl_quantize_dialog_get_error (NlQuantizeDialog *self);
/* The message shown, an error or a note ("Exported …"); NULL when none. */
const char *nl_quantize_dialog_get_message (NlQuantizeDialog *self);
GtkWidget *nl_quantize_dialog_get_range_plot (NlQuantizeDialog *self);
GtkWidget *nl_quantize_dialog_get_matrix (NlQuantizeDialog *self, gboolean int8);
const char *nl_quantize_dialog_get_accuracy_text (NlQuantizeDialog *self, gboolean int8);
GtkWidget *nl_quantize_dialog_get_models_list (NlQuantizeDialog *self);
/* Reads the run's INT8 models again (after a change elsewhere). */
void nl_quantize_dialog_refresh_models (NlQuantizeDialog *self);

G_END_DECLS
