/* nl-metric.h — evaluation metrics as in Gluon 2.0 (mxnet.gluon.metric):
 * each accumulates over updates, so two updates give the same value as one
 * update with the two batches concatenated.
 *
 * Specs (names lower-case, arguments after ':'):
 *   accuracy                       preds (N, C) scores, argmax with ties to
 *                                  the first maximum; preds with as many
 *                                  values as labels are taken as class indices
 *   top_k_accuracy[:K]             label among the K best scores (K 5); ties
 *                                  rank the lower class index first, as argmax
 *   cross_entropy                  -log(p[label] + 1e-12), preds probabilities
 *   perplexity                     exp of cross_entropy
 *   binary_accuracy[:THRESHOLD]    (pred > THRESHOLD) == (label > 0.5), every
 *                                  element counts; THRESHOLD 0.5
 *   f1[:binary|micro|macro]        F1 from confusion counts accumulated over
 *   fbeta:BETA[:binary|micro|macro] all updates. Without an average: binary
 *                                  for one- or two-column preds, macro for
 *                                  more. binary: positive class 1, one-column
 *                                  preds thresholded (> 0.5), two columns
 *                                  argmax. micro/macro: as scikit-learn;
 *                                  macro averages over the classes that occur
 *                                  in the labels or the predictions (a class
 *                                  with neither is left out). A zero
 *                                  denominator gives 0 (zero_division=0).
 *   mae, mse                       per-sample mean of |d| or d^2, averaged
 *   rmse                           sqrt of the accumulated mse
 *   mean_cosine_similarity         along the last axis, each row counts;
 *                                  dot / max(|l| |p|, 1e-12)
 *   mean_pairwise_distance[:P]     per-sample (sum |d|^P)^(1/P), P 2
 *
 * Classification labels are (N) or (N, 1) class indices stored as floats;
 * per-step labels (N, T...) go with preds (N, T..., C): one prediction per
 * label value, the class axis last (a language model's accuracy counts
 * steps). Regression over a horizon: (N, H) preds against (N, H) labels.
 * Regression/similarity labels have as many values as preds and the same
 * batch size ((N) against (N, 1) is fine). An update whose shapes do not fit,
 * or (for cross_entropy, perplexity, f1, fbeta) whose labels are not class
 * indices of the preds, is a programming error: it emits a g_critical and
 * leaves the metric unchanged. */
#pragma once

#include <glib.h>

#include "core/nl-comm.h"
#include "core/nl-tensor.h"

G_BEGIN_DECLS

typedef struct NlMetric NlMetric;

/* The predicted class of one row of C scores: the index of the first
 * maximum, as accuracy counts it (evaluation and quantization use it too,
 * so their accuracies agree with training's). */
static inline int64_t
nl_metric_argmax (const float *x, int64_t C)
{
  int64_t best = 0;
  for (int64_t j = 1; j < C; j++)
    if (x[j] > x[best])
      best = j;
  return best;
}

/* NULL with G_IO_ERROR_INVALID_ARGUMENT (listing the valid specs) for an
 * unknown name or a bad argument. */
NlMetric *nl_metric_new (const char *spec, GError **error);
void nl_metric_update (NlMetric *m, const NlTensor *labels, const NlTensor *preds);
double nl_metric_get (const NlMetric *m);   /* NAN before any update */
/* "accuracy", "top_5_accuracy", "f1", "fbeta", ... */
const char *nl_metric_name (const NlMetric *m);
gboolean nl_metric_higher_is_better (const NlMetric *m);
void nl_metric_reset (NlMetric *m);
/* The running sum and count (what every metric but f1 and fbeta keeps),
 * to store a partial epoch and to go on from it: set replaces them. */
void nl_metric_get_totals (const NlMetric *m, double *sum, int64_t *count);
void nl_metric_set_totals (NlMetric *m, double sum, int64_t count);
/* Data parallelism: every process's counts summed into every process's
 * metric (each saw its shard), so nl_metric_get gives the whole data's. */
gboolean nl_metric_reduce (NlMetric *m, NlComm *comm, GError **error);
void nl_metric_free (NlMetric *m);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (NlMetric, nl_metric_free)

G_END_DECLS
