/* nl-int8-model.h — an INT8 model as one file (format "netloom.int8"): a
 * safetensors file holding the source checkpoint's fp32 weights and
 * running statistics under the names checkpoints give them ("fc1.weight",
 * "bn1.running_mean"), and metadata (all strings):
 *   format "netloom.int8", version "1",
 *   quant_table   nl_quant_table_to_json () of the calibration,
 *   network_hash  as checkpoints (nl_checkpoint_network_hash),
 *   epoch         of the source checkpoint,
 *   crc32         zlib's crc32 of the data section, 8 lowercase hex digits.
 * The weights stay fp32: the table and these weights determine the INT8
 * model (nl_quant_weights quantizes them per channel at load), so any
 * safetensors reader reads the file and the executor and ONNX export make
 * the same INT8 weights from it. */
#pragma once

#include <glib.h>

#include "engine/graph/nl-model.h"
#include "engine/infer/nl-quant-table.h"

G_BEGIN_DECLS

#define NL_INT8_MODEL_FORMAT "netloom.int8"
#define NL_INT8_MODEL_VERSION 1

/* The blob of m's weights with table t; epoch: the source checkpoint's. */
GBytes *nl_int8_model_write (NlModel *m, const NlQuantTable *t, int epoch, GError **error);
/* Validates the whole blob (safetensors, format, version, epoch, the table,
 * the network hash against m's, every tensor, the checksum), then loads the
 * weights into m and sets *t (free with nl_quant_table_free). On error m
 * and *t are unchanged and the one message starts "INT8 model: ". */
gboolean nl_int8_model_read (GBytes *blob, NlModel *m, NlQuantTable **t, GError **error);
/* The source checkpoint's epoch from the metadata, -1 when unreadable. */
int nl_int8_model_epoch (GBytes *blob);

G_END_DECLS
