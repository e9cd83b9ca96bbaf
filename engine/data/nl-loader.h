/* nl-loader.h — the threaded data loader (Gluon 2.0's DataLoader on native
 * threads): samplers, train/validation splits, and worker threads that
 * decode and augment batches into a bounded ring ahead of the consumer.
 *
 * Batches arrive in order and are bit-identical whatever the number of
 * workers: a batch's samples depend only on (seed, epoch) and the transforms'
 * randomness only on (seed, epoch, sample index). With no transform the
 * batches equal nl_batcher's for the same settings. uint8 datasets are read
 * through get_u8 (else read_u8) and a 256-entry table, which also folds in
 * the normalisation when there is no transform; others through get. */
#pragma once

#include <glib.h>
#include <stdint.h>

#include "engine/data/nl-batcher.h"
#include "engine/data/nl-dataset.h"
#include "engine/data/nl-transform.h"
#include "core/nl-tensor.h"
#include "core/nl-trace.h"

G_BEGIN_DECLS

/* The order of an epoch over n items: 0..n-1, or with shuffle a seeded
 * Fisher-Yates permutation from (seed, epoch). The same permutation as
 * nl_batcher's (the code is a copy of its static make_order). */
void nl_sampler_order (int64_t n, gboolean shuffle, guint64 seed, int epoch, int64_t *out);
/* row[k] = lut[px[k]] for k < n: uint8 samples normalised by a 256-entry table. */
void nl_lut_row (const guint8 *px, float *row, const float *lut, int64_t n);
/* A batch tensor must be contiguous float32 of `want` values; else a
 * NL_DATA_ERROR_MISMATCH naming `what` ("data", "labels"). */
gboolean nl_batch_check_tensor (NlTensor *t, const char *what, int64_t want, GError **error);

/* Split 0..n-1 at random (from seed) into a training and a validation part:
 * n_val = round (n * val_fraction) indices go to validation, the rest to
 * training; both lists are sorted ascending (free with g_free). val_fraction
 * in [0, 1]. */
void nl_split_indices (int64_t n, double val_fraction, guint64 seed, int64_t **train_idx,
                       int64_t *n_train, int64_t **val_idx, int64_t *n_val);

/* The most loader threads a loader takes (the run settings' limit too). */
#define NL_LOADER_MAX_WORKERS 256

typedef struct {
  int batch_size; /* > 0 */
  gboolean shuffle;
  guint64 seed; /* the order and the transforms' randomness */
  NlLastBatch last_batch;
  int num_workers;              /* decode/augment threads; 0 = in the consumer's thread; at most
                                   NL_LOADER_MAX_WORKERS */
  int prefetch;                 /* batches buffered ahead; <= 0 means 2 * num_workers */
  const NlTransform *transform; /* NULL = none; borrowed, must outlive the loader */
  /* (x - mean) / std after the transforms, as nl_batcher does, unless the
   * transform has its own normalize. mean 0 std 1 is off; std 0 counts as 1
   * so that a zeroed config works. */
  float mean, std;
  /* Optional subset of the dataset (e.g. from nl_split_indices), copied;
   * NULL = every sample. Positions in the epoch order index this list. */
  const int64_t *indices;
  int64_t n_indices;
  /* Data parallelism (PyTorch's DistributedSampler over a global batch):
   * batch_size is then the global batch; of each global batch of the
   * epoch's order, shard_index (of shard_count) takes its share, the first
   * ones one sample more where the count does not divide it. Needs
   * NL_LAST_BATCH_KEEP. With shard_drop_short a last global batch smaller
   * than shard_count (not every shard would get a sample) is dropped, so
   * that every shard has as many batches (training); without, a shard may
   * have one batch less (evaluation). shard_count <= 1: no sharding. */
  int shard_index, shard_count;
  gboolean shard_drop_short;
} NlLoaderConfig;

typedef struct NlLoader NlLoader;

/* ds is borrowed and must outlive the loader. Errors: bad settings,
 * out-of-range indices, a transform that cannot take the dataset's samples,
 * threads that cannot be started. */
NlLoader *nl_loader_new (NlDataset *ds, const NlLoaderConfig *cfg, GError **error);

/* One sample's shape after the transforms. */
NlShape nl_loader_sample_shape (const NlLoader *l);

/* Batches in the current epoch, as nl_batcher_n_batches. */
int64_t nl_loader_n_batches (const NlLoader *l);

/* The batch size of the tensors nl_loader_next fills: batch_size, or a
 * shard's share of it. */
int nl_loader_batch_size (const NlLoader *l);
/* Samples of batch k of the current epoch over every shard (the global
 * batch's size; nl_loader_next's count without sharding). */
int nl_loader_global_count (const NlLoader *l, int64_t k);

/* Begin epoch `epoch` (0-based); workers start on it at once, abandoning
 * whatever they were doing for the previous one. Under ROLLOVER, the carried
 * samples are those of nl_batcher_start_epoch. */
void nl_loader_start_epoch (NlLoader *l, int epoch);
/* The same, but the epoch's first `batch` batches are skipped (a run
 * resumed inside an epoch): the next batch is batch number `batch`, the
 * same samples, order and augmentation as without the skip. */
void nl_loader_start_epoch_at (NlLoader *l, int epoch, int64_t batch);

/* As nl_batcher_next: fills data (batch_size * numel (sample shape) float32,
 * contiguous, any shape) and labels (batch_size * numel (the dataset's
 * label_shape; 1 for ndim 0) float32, or NULL); returns the
 * samples written (rows after a short kept batch are zero), 0 at the end of
 * the epoch, -1 with error. Starts epoch 0 if none was started.
 * A dataset error fails the batch holding that sample, with the dataset's
 * message prefixed by "sample N: " (N the dataset index) unless it already
 * names N; the loader is then finished: workers stop and every later call
 * returns -1 with the same error. Call nl_loader_next and
 * nl_loader_start_epoch from one thread at a time. */
int nl_loader_next (NlLoader *l, NlTensor *data, NlTensor *labels, GError **error);

/* Stops the workers (each finishes at most the sample it is on) and frees. */
void nl_loader_free (NlLoader *l);
/* Profiling: each batch filled from now on is a span in trace (NULL: off);
 * once this returns, no worker touches the old one. */
void nl_loader_set_trace (NlLoader *l, NlTrace *trace);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (NlLoader, nl_loader_free)

G_END_DECLS
