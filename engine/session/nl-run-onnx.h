/* nl-run-onnx.h — a run's checkpoint as an ONNX model (what `netloom-cli
 * export --onnx` writes; the graph is described in
 * engine/formats/onnx/nl-onnx-export.h), and an ONNX model as a network with a run
 * holding its weights (`netloom-cli import-onnx`). */
#pragma once

#include "engine/graph/nl-network.h"
#include "projects/nl-project.h"

G_BEGIN_DECLS

/* Checkpoint `which` ("best", "last" or an id; NULL: the last) of RUN to
 * path. opset 0: the newest exported; softmax: end in probabilities. The
 * metadata names the netloom version, run, checkpoint, epoch, the input
 * normalisation the run's pipeline applies ((x - input_mean) / input_std
 * of pixels in [0, 1]) and the class names. *checkpoint (may be NULL)
 * receives what was exported. */
gboolean nl_run_export_onnx (NlProject *p, gint64 run, const char *which, const char *path, int opset,
                             gboolean softmax, gint64 *checkpoint, GError **error);

/* The INT8 model of RUN (engine/session/nl-run-quantize.h; the newest, or
 * with `which` the newest made from that checkpoint: "best", "last", an
 * epoch) as ONNX in QDQ form (engine/formats/onnx/nl-onnx-export-int8.h)
 * to path. The metadata is the fp32 export's (its checkpoint: the source
 * of the INT8 model) and netloom_int8_model, calibration (the method),
 * calibration_samples. An error naming the run when it has no INT8 model
 * ("run netloom-cli quantize first"). *int8_model (may be NULL) receives
 * the id of what was exported. */
gboolean nl_run_export_onnx_int8 (NlProject *p, gint64 run, const char *which, const char *path, int opset,
                                  gboolean softmax, gint64 *int8_model, GError **error);

/* Imports the ONNX model at path (engine/formats/onnx/nl-onnx-import.h) as the
 * project network `name` (NULL: the file's name without .onnx) and a
 * finished run holding its weights as its one checkpoint, ready to
 * evaluate, predict with or fork to fine-tune. Nothing is written unless
 * all of it can be: unsupported nodes (all listed), a malformed file or a
 * name taken already leave the project as it was. Returns the run id;
 * *network_name (may be NULL; g_free) receives the network's name. */
gint64 nl_run_import_onnx (NlProject *p, const char *path, const char *name, char **network_name, GError **error);
/* The same, with ARRANGE (net, user_data) called on the network before it
 * is saved: the GUI lays the cards out there, so the saved version opens
 * arranged. It runs on the calling thread and may only move nodes. */
typedef void (*NlNetworkArrangeFunc) (NlNetwork *net, gpointer user_data);
gint64 nl_run_import_onnx_arranged (NlProject *p, const char *path, const char *name, NlNetworkArrangeFunc arrange,
                                    gpointer user_data, char **network_name, GError **error);

G_END_DECLS
