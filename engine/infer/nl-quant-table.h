/* nl-quant-table.h — what INT8 post-training quantization calibrated: one
 * activation range per calibration point of a network.
 *
 * A calibration point is a tensor the INT8 executor (nl-infer-net.h) keeps
 * in 8 bits: the network's input and the output of every fused step it runs
 * in INT8 (a Conv2D or Dense with its folded BatchNorm, its residual Add and
 * its ReLU). A point is named by the network node id whose output it is
 * (the last node fused into the step: "block1_relu", "fc1"); the input is
 * named by the Input node's id.
 *
 * Activations are quantized per tensor, symmetrically: a point whose
 * calibrated minimum is >= 0 (after a ReLU) is unsigned, u8 = round (x *
 * 255 / threshold); any other is signed, s8 = round (x * 127 / threshold),
 * both saturating. Weights are quantized per output channel by
 * nl_quant_weights() below, at load: the table and the fp32 weights it was
 * calibrated with determine the INT8 model. */
#pragma once

#include <glib.h>
#include <stdint.h>

G_BEGIN_DECLS

typedef enum {
  NL_QUANT_NAIVE,   /* threshold = max (|min|, |max|) over the calibration samples */
  NL_QUANT_ENTROPY, /* threshold minimising the KL divergence of the clipped
                       8-bit histogram from the fp32 one (MXNet's "entropy") */
  NL_QUANT_METHOD_COUNT
} NlQuantMethod;

/* "naive", "entropy": what --method takes and the table stores. */
const char *nl_quant_method_name (NlQuantMethod method);
gboolean nl_quant_method_parse (const char *text, NlQuantMethod *method);

typedef struct {
  char *point;          /* network node id whose output this is */
  float min, max;       /* observed over the calibration samples */
  float threshold;      /* the clip the method chose, > 0 (0 < threshold <= max |x|) */
  gboolean is_unsigned; /* min >= 0: u8 */
} NlQuantRange;

typedef struct {
  NlQuantMethod method;
  int calibration_samples;
  GArray *ranges;       /* NlQuantRange, in the executor's step order; owns the strings */
} NlQuantTable;

NlQuantTable *nl_quant_table_new (NlQuantMethod method, int calibration_samples);
void nl_quant_table_free (NlQuantTable *t);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (NlQuantTable, nl_quant_table_free)
void nl_quant_table_add (NlQuantTable *t, const char *point, float min, float max, float threshold);
/* The range of a point, NULL when the table has none. */
const NlQuantRange *nl_quant_table_find (const NlQuantTable *t, const char *point);
/* Scale from real to integer: 255 / threshold (unsigned) or 127 / threshold. */
float nl_quant_range_scale (const NlQuantRange *r);

/* {"method":"entropy","calibration_samples":512,"ranges":[{"point":"conv1",
 * "min":0,"max":3.2,"threshold":2.9,"unsigned":true},...]}; the reader
 * checks every member (a threshold <= 0 or not finite, a missing point, a
 * duplicate) and fails with one message naming what is wrong. */
char *nl_quant_table_to_json (const NlQuantTable *t);
NlQuantTable *nl_quant_table_from_json (const char *json, GError **error);

/* Per-output-channel symmetric weight quantization: w holds `channels` rows
 * of `per` floats; q[c * per + i] = round (w * 127 / max_c |w|) and
 * scales[c] = max_c |w| / 127 (1 for an all-zero row, whose q is 0). The
 * executor and ONNX export both call it, so both carry the same weights. */
void nl_quant_weights (const float *w, int64_t channels, int64_t per, int8_t *q, float *scales);

G_END_DECLS
