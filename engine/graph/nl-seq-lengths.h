/* nl-seq-lengths.h — each sample's sequence length from a padded batch, for
 * an Input whose `lengths` is "nonzero" (ops/nl-input.h; the value the
 * uses_lengths ops read as ctx->lengths, ops/nl-op.h). */
#pragma once

#include <glib.h>

#include "core/nl-shape.h"

G_BEGIN_DECLS

/* batch: (B, T, ...) float32, contiguous. lengths[b] = 1 + the last t with
 * any non-zero element in batch[b, t, ...], at least 1 (an all-zero sample
 * counts one step, so every op has a step to read). A (B) batch has one step
 * per sample. */
void nl_seq_lengths_compute (const float *batch, const NlShape *batch_shape, float *lengths);

G_END_DECLS
