/* nl-batcher.h — cuts a dataset into float32 batches: seeded shuffling,
 * what to do with the last partial batch, and (x - mean) / std
 * normalisation.
 *
 * The order of an epoch depends only on (seed, epoch), never on GLib's
 * global RNG or on earlier calls, so a resumed run re-creates it exactly. */
#pragma once

#include <glib.h>
#include <stdint.h>

#include "engine/data/nl-dataset.h"
#include "core/nl-tensor.h"

G_BEGIN_DECLS

typedef enum {
  NL_LAST_BATCH_KEEP,     /* a short last batch; the rows after it are zero */
  NL_LAST_BATCH_DISCARD,  /* drop samples that do not fill a batch */
  NL_LAST_BATCH_ROLLOVER, /* they begin the next epoch's first batch */
} NlLastBatch;

typedef struct NlBatcher NlBatcher;

/* ds is borrowed and must outlive the batcher. batch_size > 0, std > 0.
 * mean/std: normalise every value as (x - mean) / std after scaling to
 * [0, 1] (mean 0, std 1 = off). */
NlBatcher *nl_batcher_new (NlDataset *ds, int batch_size, gboolean shuffle, guint64 seed,
                           NlLastBatch last_batch, float mean, float std);

/* Begin epoch `epoch` (0-based): the order is a seeded Fisher-Yates
 * permutation from (seed, epoch). Under ROLLOVER the samples carried into the
 * epoch are the ones every earlier epoch, run to its end, would have left
 * over, so starting at any epoch gives the same batches as getting there. */
void nl_batcher_start_epoch (NlBatcher *b, int epoch);

/* Batches in the current epoch (epoch 0 before nl_batcher_start_epoch):
 * ceil(N / B) for KEEP, floor(N / B) for DISCARD, floor((N + carried) / B)
 * for ROLLOVER. */
int64_t nl_batcher_n_batches (const NlBatcher *b);

/* Fill data (batch_size * numel (sample_shape) float32, any shape with the
 * batch first, e.g. (batch_size, 1, 28, 28) or (batch_size, 784)) and labels
 * (batch_size * numel (ds->label_shape) float32, one value a sample for ndim
 * 0; may be NULL), both contiguous. Returns the number of
 * samples written (batch_size, or fewer for a kept last batch), 0 at the end
 * of the epoch, -1 with error. Starts epoch 0 if no epoch was started. */
int nl_batcher_next (NlBatcher *b, NlTensor *data, NlTensor *labels, GError **error);

void nl_batcher_free (NlBatcher *b);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (NlBatcher, nl_batcher_free)

G_END_DECLS
