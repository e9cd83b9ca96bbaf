/* nl-run-onnx.h — a run's checkpoint as an ONNX model (what `netloom-cli
 * export --onnx` writes; the graph is described in
 * engine/onnx/nl-onnx-export.h). */
#pragma once

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

G_END_DECLS
