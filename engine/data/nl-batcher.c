/* nl-batcher.c — batches from a dataset: seeded order, last-batch policy,
 * normalisation through a 256-entry table for uint8 datasets. */
#include "engine/data/nl-batcher.h"
#include "engine/data/nl-loader.h"

#include <math.h>
#include <string.h>
#ifdef __AVX2__
#include <immintrin.h>
#endif

struct NlBatcher {
  NlDataset *ds;
  int batch_size;
  gboolean shuffle;
  guint64 seed;
  NlLastBatch last_batch;
  float mean, std;
  gboolean normalise;
  float lut[256]; /* uint8 pixel -> normalised float */
  int64_t n, sample_numel;
  int64_t label_numel; /* of one sample: 1, or numel (ds->label_shape) */
  float *label;        /* 2 * label_numel: a sample's label, the prefetched one's (unread) */

  /* The epoch's sequence is carry[0..n_carry) then order[0..n). */
  int epoch;
  gboolean started;
  int64_t *order;
  int64_t *carry; /* batch_size entries */
  int64_t n_carry;
  int64_t pos; /* next position in the sequence */
};

/* The epoch's order: the loader's sampler, so both give the same batches. */
static void
make_order (const NlBatcher *b, int epoch, int64_t *order)
{
  nl_sampler_order (b->n, b->shuffle, b->seed, epoch, order);
}

/* Samples carried into `epoch` under ROLLOVER when every earlier epoch ran
 * to its end: (epoch * N) mod B of them. */
static int64_t
carried_count (const NlBatcher *b, int epoch)
{
  if (b->last_batch != NL_LAST_BATCH_ROLLOVER)
    return 0;
  int64_t B = b->batch_size;
  return ((int64_t) epoch % B) * (b->n % B) % B;
}

NlBatcher *
nl_batcher_new (NlDataset *ds, int batch_size, gboolean shuffle, guint64 seed,
                NlLastBatch last_batch, float mean, float std)
{
  g_return_val_if_fail (ds != NULL && ds->length >= 0, NULL);
  g_return_val_if_fail (batch_size > 0, NULL);
  g_return_val_if_fail (std > 0 && isfinite (std) && isfinite (mean), NULL);
  g_return_val_if_fail (last_batch <= NL_LAST_BATCH_ROLLOVER, NULL);

  NlBatcher *b = g_new0 (NlBatcher, 1);
  b->ds = ds;
  b->batch_size = batch_size;
  b->shuffle = shuffle;
  b->seed = seed;
  b->last_batch = last_batch;
  b->mean = mean;
  b->std = std;
  b->normalise = mean != 0.0f || std != 1.0f;
  for (int k = 0; k < 256; k++)
    b->lut[k] = b->normalise ? ((float) k / 255.0f - mean) / std : (float) k / 255.0f;
  b->n = ds->length;
  b->sample_numel = nl_shape_numel (&ds->sample_shape);
  b->label_numel = nl_dataset_label_numel (ds);
  b->label = g_new0 (float, 2 * b->label_numel);
  b->order = g_new (int64_t, MAX (b->n, 1));
  b->carry = g_new (int64_t, batch_size);
  return b;
}

void
nl_batcher_start_epoch (NlBatcher *b, int epoch)
{
  g_return_if_fail (b != NULL && epoch >= 0);
  b->epoch = epoch;
  b->started = TRUE;
  b->pos = 0;
  b->n_carry = carried_count (b, epoch);

  /* The carried samples are the tail of the previous epochs' sequences;
   * when B > N they reach back more than one epoch. */
  int64_t need = b->n_carry;
  for (int e = epoch - 1; need > 0 && e >= 0; e--)
    {
      make_order (b, e, b->order);
      int64_t take = MIN (need, b->n);
      memcpy (b->carry + need - take, b->order + b->n - take, take * sizeof (int64_t));
      need -= take;
    }
  make_order (b, epoch, b->order);
}

int64_t
nl_batcher_n_batches (const NlBatcher *b)
{
  g_return_val_if_fail (b != NULL, 0);
  int64_t B = b->batch_size;
  switch (b->last_batch)
    {
    case NL_LAST_BATCH_KEEP:
      return (b->n + B - 1) / B;
    case NL_LAST_BATCH_DISCARD:
      return b->n / B;
    case NL_LAST_BATCH_ROLLOVER:
      return (b->n + carried_count (b, b->started ? b->epoch : 0)) / B;
    }
  return 0;
}

/* Dataset index at position p of the epoch's sequence. */
static inline int64_t
sample_at (const NlBatcher *b, int64_t p)
{
  return p < b->n_carry ? b->carry[p] : b->order[p - b->n_carry];
}

int
nl_batcher_next (NlBatcher *b, NlTensor *data, NlTensor *labels, GError **error)
{
  g_return_val_if_fail (b != NULL && data != NULL, -1);
  const int64_t B = b->batch_size, numel = b->sample_numel, L = b->label_numel;
  if (!nl_batch_check_tensor (data, "data", B * numel, error)
      || (labels && !nl_batch_check_tensor (labels, "labels", B * L, error)))
    return -1;
  if (!b->started)
    nl_batcher_start_epoch (b, 0);

  int64_t total = b->n_carry + b->n;
  int64_t count = MIN (B, total - b->pos);
  if (count <= 0 || (count < B && b->last_batch != NL_LAST_BATCH_KEEP))
    {
      /* DISCARD drops the tail; ROLLOVER hands it to the next epoch's
       * start_epoch, which re-derives it. */
      b->pos = total;
      return 0;
    }

  float *x = nl_tensor_f32 (data);
  float *y = labels ? nl_tensor_f32 (labels) : NULL;
  const guint8 *(*get_u8) (NlDataset *, int64_t, float *) = b->ds->klass->get_u8;
  for (int64_t r = 0; r < count; r++)
    {
      float *row = x + r * numel, *label = b->label;
      memset (label, 0, L * sizeof (float));
      const guint8 *px = get_u8 ? get_u8 (b->ds, sample_at (b, b->pos + r), label) : NULL;
      if (px)
        {
          /* Shuffled samples are scattered over the dataset: fetching the
           * one after next while converting this one hides the misses. */
          if (r + 2 < count)
            {
              const char *ahead = (const char *) get_u8 (b->ds, sample_at (b, b->pos + r + 2), label + L);
              for (int64_t c = 0; ahead && c < numel; c += 64)
                __builtin_prefetch (ahead + c);
            }
          nl_lut_row (px, row, b->lut, numel);
        }
      else
        {
          if (!b->ds->klass->get (b->ds, sample_at (b, b->pos + r), row, label, error))
            return -1;
          if (b->normalise)
            for (int64_t k = 0; k < numel; k++)
              row[k] = (row[k] - b->mean) / b->std;
        }
      if (y)
        memcpy (y + r * L, label, L * sizeof (float));
    }
  if (count < B)
    {
      memset (x + count * numel, 0, (B - count) * numel * sizeof (float));
      if (y)
        memset (y + count * L, 0, (B - count) * L * sizeof (float));
    }
  b->pos += count;
  return (int) count;
}

void
nl_batcher_free (NlBatcher *b)
{
  if (!b)
    return;
  g_free (b->order);
  g_free (b->carry);
  g_free (b->label);
  g_free (b);
}
