/* nl-infer-net.h — a trained model compiled for inference on the CPU:
 * fp32 or INT8, through oneDNN primitives.
 *
 * Inference has its own path, apart from the training program
 * (nl-program.h): no backward, no optimizer, no saved tensors. At compile
 * time the graph's nodes are grouped into steps (MXNet's oneDNN subgraph
 * fusion): a Conv2D or Dense takes the BatchNorm after it (folded into its
 * weights and bias), an Add of a residual branch (oneDNN's sum post-op) and
 * the ReLU after them (eltwise post-op); Dropout is gone; Flatten is a view.
 * Convolution chains stay in oneDNN's blocked layouts; a reorder to plain
 * NCHW is placed only where a step that needs it reads the value.
 *
 * INT8: Conv2D and Dense steps run with s8 weights (per output channel,
 * nl_quant_weights()) and u8/s8 activations at the calibrated scales
 * (nl-quant-table.h), requantisation fused as output scales; max and
 * average pooling and the residual sum stay in 8 bits. Ops without an INT8
 * kernel run in fp32 from a dequantized copy. Every quantize and dequantize
 * boundary is placed once, at compile time, never chosen per call.
 *
 * A node the executor has no step for runs through its op's own CPU kernel
 * (ops/cpu/), so every network that the training program runs, runs here. */
#pragma once

#include <glib.h>

#include "engine/graph/nl-model.h"
#include "engine/infer/nl-quant-table.h"

G_BEGIN_DECLS

typedef struct NlInferNet NlInferNet;

typedef enum {
  NL_INFER_FP32,
  NL_INFER_INT8,
} NlInferMode;

/* Called by nl_infer_net_run in fp32 mode, after the run, once per
 * calibration point in step order: the point's values for the valid rows,
 * float32 in plain (N, C, H, W) / (N, C) layout, n floats. */
typedef void (*NlInferObserve) (const char *point, const float *values, int64_t n, gpointer user_data);

typedef struct {
  int batch;                  /* rows per run, >= 1 */
  NlInferMode mode;
  const NlQuantTable *quant;  /* INT8: required; every calibration point must have a range */
  NlInferObserve observe;     /* FP32 only, may be NULL */
  gpointer observe_data;
  NlShape label_shape;        /* one sample's label (ndim 0: one value); per-step labels are
                                 declined, as are sequences with lengths (the training program
                                 runs those) */
} NlInferOptions;

/* Compiles MODEL (a CPU model; its weights are read now, so a later change
 * of them is not seen) for inference. Fails with one message naming the
 * node when the network cannot run (a loss-only graph, an INT8 table
 * without a range for a point). */
NlInferNet *nl_infer_net_new (NlModel *model, const NlInferOptions *opts, GError **error);
void nl_infer_net_free (NlInferNet *n);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (NlInferNet, nl_infer_net_free)

/* (batch, sample shape...) float32, plain layout: fill rows, then run. */
NlTensor *nl_infer_net_input (NlInferNet *n);
/* Runs the first `rows` rows (1..batch). */
gboolean nl_infer_net_run (NlInferNet *n, int rows, GError **error);
/* (batch, outputs...) float32, plain: the network's prediction. */
NlTensor *nl_infer_net_output (NlInferNet *n);

/* The calibration points, in step order (NULL-terminated, owned by n);
 * the same for FP32 and INT8 compiles of one network. */
const char *const *nl_infer_net_points (NlInferNet *n);

/* One line per step for --verbose, tests and the GUI: "conv1+relu1 int8
 * conv u8->u8", "fc2 fp32 dense". Owned by n, NULL-terminated. */
const char *const *nl_infer_net_describe (NlInferNet *n);

/* Bytes of activation and scratch memory the compiled net holds. */
size_t nl_infer_net_bytes (NlInferNet *n);

G_END_DECLS
