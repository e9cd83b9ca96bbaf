/* nl-onnx-fold.h — nodes of an ONNX graph whose inputs are all constants,
 * computed at import (private to engine/formats/onnx): the shape arithmetic and
 * weight preparation exporters leave in graphs. */
#pragma once

#include "engine/formats/onnx/nl-onnx-const.h"

G_BEGIN_DECLS

#define NL_ONNX_FOLD_MAX_INPUTS 16

/* The node's first output from its constant inputs (in[k] NULL for an
 * absent optional input). NULL with *why (g_free) when the op does not fold,
 * or with error when the node is malformed. */
NlOnnxConst *nl_onnx_fold (const Onnx__NodeProto *n, NlOnnxConst *const *in, int n_in, char **why,
                           GError **error);

G_END_DECLS
