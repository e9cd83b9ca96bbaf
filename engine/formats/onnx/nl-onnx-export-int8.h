/* nl-onnx-export-int8.h — an INT8 model (fp32 weights and the calibrated
 * quantization table, engine/infer/nl-quant-table.h) as ONNX in QDQ form,
 * the form onnxruntime and TensorRT take quantized models in.
 *
 * The graph is the fp32 export's (nl-onnx-export.h) with what the INT8
 * executor (engine/infer/nl-infer-net.h) rounds made explicit:
 *  - every calibration point's value (the network input, the output of each
 *    fused Conv2D/Dense step) passes through QuantizeLinear ->
 *    DequantizeLinear at the point's scale: threshold / 255 with a uint8
 *    zero point 0 for an unsigned point, threshold / 127 int8 for a signed
 *    one;
 *  - the output of an average pooling of such a value is requantized at
 *    its input's scale, as the executor pools in 8 bits;
 *  - each Conv2D/Dense of a step carries its weights folded with the
 *    BatchNorm after it (which is then gone) as an int8 initializer
 *    quantized per output channel (nl_quant_weights) through a per-axis
 *    DequantizeLinear; its bias stays float32.
 * A Conv2D/Dense that is no INT8 step (none of its fused outputs is a
 * point) and every other node are written as the fp32 export writes them.
 * Needs opset 13 or newer (per-axis DequantizeLinear), which every opset
 * netloom writes is. */
#pragma once

#include "engine/formats/onnx/nl-onnx-export.h"
#include "engine/infer/nl-quant-table.h"

G_BEGIN_DECLS

/* The serialised ModelProto of m quantized by t. Errors name a point of t
 * that is no node of m's network, and whatever the fp32 export refuses. */
GBytes *nl_onnx_export_int8 (const NlModel *m, const NlQuantTable *t, const NlOnnxExportOptions *o,
                             GError **error);
/* The same written to path atomically. */
gboolean nl_onnx_export_int8_file (const NlModel *m, const NlQuantTable *t, const NlOnnxExportOptions *o,
                                   const char *path, GError **error);

G_END_DECLS
