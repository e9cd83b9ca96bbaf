/* nl-onnx-export-dialog.h — "Export ONNX" from the workbench: a dialog
 * with the options (checkpoint, opset, a trailing Softmax), then the save
 * chooser, then the export on a worker thread
 * (engine/session/nl-run-onnx.h); a toast of the workspace names the file
 * written or the error. The Experiments page exports a run; the Network
 * page the newest run of its network that holds weights (trained or
 * imported). */
#pragma once

#include <adwaita.h>

#include "ui/nl-workspace.h"

G_BEGIN_DECLS

#define NL_TYPE_ONNX_EXPORT_DIALOG (nl_onnx_export_dialog_get_type ())
G_DECLARE_FINAL_TYPE (NlOnnxExportDialog, nl_onnx_export_dialog, NL, ONNX_EXPORT_DIALOG, AdwMessageDialog)

/* A dialog transient for OWNER's window exporting RUN (> 0), or else the
 * newest run of the project network NETWORK with a checkpoint. SUGGESTED:
 * the file name the chooser offers (".onnx" is added when missing). The
 * chooser belongs to OWNER: it closes when OWNER goes. Present it. */
NlOnnxExportDialog *nl_onnx_export_dialog_new (GtkWidget *owner, NlWorkspace *ws, gint64 run, const char *network,
                                               const char *suggested);
/* The options as chosen: "best" (the best checkpoint, else the last) or
 * "last"; opset 13 .. 17 (17 at first); softmax on at first. */
const char *nl_onnx_export_dialog_get_checkpoint (NlOnnxExportDialog *self);
void nl_onnx_export_dialog_set_checkpoint (NlOnnxExportDialog *self, const char *which);
int nl_onnx_export_dialog_get_opset (NlOnnxExportDialog *self);
void nl_onnx_export_dialog_set_opset (NlOnnxExportDialog *self, int opset);
gboolean nl_onnx_export_dialog_get_softmax (NlOnnxExportDialog *self);
void nl_onnx_export_dialog_set_softmax (NlOnnxExportDialog *self, gboolean softmax);
/* INT8: the run's newest INT8 model made from that checkpoint (Quantize…),
 * in QDQ form; offered only for a run that has INT8 models (fp32 at first). */
gboolean nl_onnx_export_dialog_get_int8 (NlOnnxExportDialog *self);
void nl_onnx_export_dialog_set_int8 (NlOnnxExportDialog *self, gboolean int8);

/* The export itself on a worker thread, the workspace (and so the project)
 * kept alive until it is done; callback on the main loop. run and network
 * as above; which "best" or "last"; int8 (run > 0 only): its INT8 model. */
void nl_onnx_export_async (NlWorkspace *ws, gint64 run, const char *network, const char *which, int opset,
                           gboolean softmax, gboolean int8, const char *path, GAsyncReadyCallback callback,
                           gpointer user_data);
/* A message for the user ("Exported … to “x.onnx”"), or NULL with error. */
char *nl_onnx_export_finish (GAsyncResult *result, GError **error);

G_END_DECLS
