/* nl-onnx-export-int8.h — an INT8 model (fp32 weights and the calibrated
 * quantization table, engine/infer/nl-quant-table.h) as ONNX in QDQ form,
 * the form onnxruntime and TensorRT take quantized models in.
 *
 * The graph is the fp32 export's (nl-onnx-export.h) with the rounding of
 * the INT8 executor (engine/infer/nl-infer-net.h) made explicit, so that
 * it computes what `netloom-cli evaluate --int8` computes:
 *  - each Conv2D/Dense step the executor runs in INT8 carries its weights,
 *    folded with the BatchNorm after it (which is then gone), as an int8
 *    initializer quantized per output channel (nl_quant_weights) through a
 *    per-axis DequantizeLinear; its bias stays float32;
 *  - a value the executor holds in 8 bits (a step's output that only INT8
 *    steps, poolings and flattens read) passes through QuantizeLinear ->
 *    DequantizeLinear after its producer at its point's scale: threshold /
 *    255 with a uint8 zero point 0 for an unsigned point, threshold / 127
 *    int8 for a signed one; an average pooling of such a value is rounded
 *    again at the same scale;
 *  - where an INT8 step reads a float value (the network input, a value
 *    fp32 ops read too) the pair sits on that step's input alone;
 *  - the prediction stays float, as do the steps the executor runs in fp32
 *    (a Conv2D of one input channel that only a pooling reads) and every
 *    other op.
 * Needs opset 13 or newer (per-axis DequantizeLinear), which every opset
 * netloom writes is. */
#pragma once

#include "engine/formats/onnx/nl-onnx-export.h"
#include "engine/infer/nl-quant-table.h"

G_BEGIN_DECLS

/* The serialised ModelProto of m quantized by t. Errors name a point of t
 * that is no node of m's network, a point of the executor that t has no
 * range for, and whatever the fp32 export refuses. */
GBytes *nl_onnx_export_int8 (const NlModel *m, const NlQuantTable *t, const NlOnnxExportOptions *o,
                             GError **error);
/* The same written to path atomically. */
gboolean nl_onnx_export_int8_file (const NlModel *m, const NlQuantTable *t, const NlOnnxExportOptions *o,
                                   const char *path, GError **error);

G_END_DECLS
