/* nl-quant-calib.h — calibration of activation ranges for INT8: feed it
 * what an fp32 NlInferNet observes over a few batches, get a table.
 *
 * Naive: one pass, min and max per point. Entropy (KL, as MXNet's
 * quantize_net with calib_mode='entropy'): a first pass for each point's
 * largest |x|, a second over the same batches histograms |x| into 8001
 * bins up to it, and the threshold is the bin edge whose clipped
 * 255-level (unsigned) or 127-level (signed) histogram diverges least
 * from the original. */
#pragma once

#include "engine/infer/nl-quant-table.h"

G_BEGIN_DECLS

typedef struct NlQuantCalib NlQuantCalib;

NlQuantCalib *nl_quant_calib_new (NlQuantMethod method);
void nl_quant_calib_free (NlQuantCalib *c);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (NlQuantCalib, nl_quant_calib_free)
/* How many passes over the calibration batches the method needs (1 or 2). */
int nl_quant_calib_passes (NlQuantCalib *c);
/* Start pass `pass` (0-based); the batches must be the same in each pass. */
void nl_quant_calib_begin_pass (NlQuantCalib *c, int pass);
/* An NlInferObserve: pass the calibrator as user_data. */
void nl_quant_calib_observe (const char *point, const float *values, int64_t n, gpointer calib);
/* The table, ranges in the order points were first observed; samples is
 * stored in it as calibration_samples. An error when nothing was observed
 * or a point saw only non-finite values (naming it). */
NlQuantTable *nl_quant_calib_finish (NlQuantCalib *c, int samples, GError **error);

G_END_DECLS
