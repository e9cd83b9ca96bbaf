/* nl-run-quantize.h — INT8 post-training quantization of a run's
 * checkpoint, stored with the run (netloom-cli quantize, the experiments
 * page's "Quantize…").
 *
 * Calibrates on the first `calibration_samples` samples of the run's
 * training split (its own pipeline: normalisation, no augmentation),
 * builds the INT8 model (nl-infer-net.h), evaluates fp32 and INT8 on the
 * test split and times both at batch 128, then stores the INT8 model in the
 * project beside the run's checkpoints (nl_project_add_int8_model): the
 * fp32 weights of the source checkpoint and the quantization table, in one
 * safetensors blob, format "netloom.int8". Deleting the run deletes it.
 * Nothing is written when anything fails. */
#pragma once

#include <gio/gio.h>

#include "engine/infer/nl-quant-table.h"
#include "projects/nl-project.h"

G_BEGIN_DECLS

typedef struct {
  const char *which;          /* "best", "last" or an epoch; NULL: "best" */
  int calibration_samples;    /* 0: 512 */
  NlQuantMethod method;
} NlQuantizeOptions;

typedef struct {
  gint64 int8_id;             /* the stored INT8 model */
  gint64 checkpoint;          /* the fp32 checkpoint it came from */
  int epoch;
  double fp32_test_acc, int8_test_acc;         /* 0..1 */
  double fp32_images_per_s, int8_images_per_s; /* batch 128, median */
  NlQuantTable *table;        /* owned: per-point ranges, for the range plot */
  int n_classes;
  gint64 *fp32_confusion, *int8_confusion;     /* n_classes x n_classes, row = true class; owned */
} NlQuantizeResult;

void nl_quantize_result_clear (NlQuantizeResult *r);

/* Phase text ("calibrating", "evaluating fp32", ...) and a fraction 0..1;
 * called on the calling thread. */
typedef void (*NlQuantizeProgress) (const char *phase, double fraction, gpointer user_data);

/* Runs on the calling thread (the GUI calls it from a GTask's). An error
 * and nothing stored when: the run has no checkpoint, the network has
 * nothing to quantize (no Conv2D or Dense), calibration_samples exceeds the
 * training split ("... has N samples"), the dataset cannot be opened, or
 * cancellable was cancelled. */
gboolean nl_run_quantize (NlProject *p, gint64 run, const NlQuantizeOptions *opts, NlQuantizeProgress progress,
                          gpointer user_data, NlQuantizeResult *result, GCancellable *cancellable,
                          GError **error);

G_END_DECLS
