/* nl-loader.c — samplers, splits and the threaded loader.
 *
 * Workers claim batch numbers in order and fill slot (batch % n_slots) of a
 * ring; a batch is claimed only when the batch n_slots before it has been
 * consumed, so the ring bounds the work ahead and no two batches ever share
 * a slot. The consumer waits for its next batch in order and copies it out.
 * One mutex guards the bookkeeping; filling and copying happen outside it. */
#include "engine/data/nl-loader.h"

#include <math.h>
#include <stdarg.h>
#include <string.h>
#ifdef __AVX2__
#include <immintrin.h>
#endif

/* ---- the loader ---- */

typedef struct {
  float *data;   /* batch_size * out_numel */
  float *labels; /* batch_size * label_numel */
  int64_t batch; /* the batch it holds once ready */
  gboolean ready;
  GError *error; /* the batch failed */
} NlLoaderSlot;

/* What one filling thread needs of its own. */
typedef struct {
  float *sample;  /* the dataset's sample before transforms */
  float *scratch; /* the transforms' scratch */
  guint8 *bytes;  /* a read_u8 sample */
  float *label;   /* 2 * label_numel: the sample's label, the prefetched one's (unread) */
} NlFillBuffers;

typedef struct {
  NlLoader *l;
  GThread *thread;
  NlFillBuffers buf;
} NlLoaderWorker;

struct NlLoader {
  NlDataset *ds;
  int batch_size;     /* of this shard */
  int global_batch;   /* over every shard (batch_size without sharding) */
  int shard_index, shard_count;
  gboolean shard_drop_short;
  int64_t global_len; /* the epoch's samples over every shard */
  gboolean shuffle;
  guint64 seed;
  NlLastBatch last_batch;
  const NlTransform *transform; /* NULL when absent or the identity */
  gboolean normalise;
  float mean, std;
  float lut[256];   /* uint8 pixel -> normalised float */
  float lut01[256]; /* uint8 pixel -> [0, 1], as the datasets' get */
  int64_t *subset; /* NULL = every sample */
  int64_t n;       /* samples per epoch before rollover */
  NlShape in_shape, out_shape;
  int64_t in_numel, out_numel;
  int64_t label_numel; /* of one sample (the dataset's label_shape; 1 for ndim 0) */
  gsize scratch_floats;

  /* The current epoch: seq holds dataset indices, carried ones first. */
  int epoch;
  gboolean started;
  int64_t *seq;
  int64_t seq_len, n_batches;

  NlFillBuffers buf; /* for filling in the consumer's thread (no workers) */

  int n_workers, n_slots;
  NlLoaderWorker *workers;
  NlLoaderSlot *slots;
  GMutex lock;
  GCond work_cond; /* workers: a batch may be claimed, or stop */
  GCond done_cond; /* consumer: a batch is ready, or a worker went idle */
  gint gen;        /* bumped per epoch; in-flight work for an older one is dropped */
  gint stop;
  int64_t next_claim, next_consume;
  int64_t error_batch; /* the earliest failed batch: no point working past it */
  int busy;
  GError *failed; /* sticky: the error the consumer received */
  NlTrace *trace; /* nl_loader_set_trace's, read under lock by the workers */
};

static int64_t
carried_count (const NlLoader *l, int epoch)
{
  if (l->last_batch != NL_LAST_BATCH_ROLLOVER)
    return 0;
  int64_t B = l->batch_size;
  return ((int64_t) epoch % B) * (l->n % B) % B;
}

static int64_t
batches_for (const NlLoader *l, int64_t total)
{
  int64_t B = l->batch_size;
  return l->last_batch == NL_LAST_BATCH_KEEP ? (total + B - 1) / B : total / B;
}

/* Of a global batch of m samples, where shard r's share starts and how
 * many it has: the first m % count shards take one more. */
static void
shard_share (int64_t m, int r, int count, int64_t *start, int64_t *n)
{
  *start = r * (m / count) + MIN (r, m % count);
  *n = m / count + (r < m % count);
}

/* This shard's part of the epoch's global sequence: its share of each
 * global batch, in order (takes seq, returns a new one). */
static int64_t *
shard_sequence (NlLoader *l, int64_t *seq, int64_t *len)
{
  const int64_t B = l->global_batch, total = *len;
  int64_t usable = total, out = 0;
  int64_t *mine;
  if (l->shard_drop_short && total % B != 0 && total % B < l->shard_count)
    usable = total - total % B;
  mine = g_new (int64_t, MAX (usable, 1)); /* a shard's share is at most all of it */
  for (int64_t first = 0; first < usable; first += B)
    {
      int64_t start, n;
      shard_share (MIN (B, usable - first), l->shard_index, l->shard_count, &start, &n);
      memcpy (mine + out, seq + first + start, n * sizeof (int64_t));
      out += n;
    }
  g_free (seq);
  l->global_len = usable;
  *len = out;
  return mine;
}

/* The epoch's sequence of dataset indices, as nl_batcher_start_epoch builds
 * it: the tail of earlier epochs' orders carried under ROLLOVER, then this
 * epoch's order. Returns a new array of *len entries. */
static int64_t *
build_sequence (NlLoader *l, int epoch, int64_t *len)
{
  int64_t n_carry = carried_count (l, epoch);
  int64_t *seq = g_new (int64_t, MAX (n_carry + l->n, 1));
  int64_t need = n_carry;
  if (need > 0)
    {
      int64_t *tmp = g_new (int64_t, l->n);
      for (int e = epoch - 1; need > 0 && e >= 0; e--)
        {
          nl_sampler_order (l->n, l->shuffle, l->seed, e, tmp);
          int64_t take = MIN (need, l->n);
          memcpy (seq + need - take, tmp + l->n - take, take * sizeof (int64_t));
          need -= take;
        }
      g_free (tmp);
    }
  nl_sampler_order (l->n, l->shuffle, l->seed, epoch, seq + n_carry);
  if (l->subset)
    for (int64_t p = 0; p < n_carry + l->n; p++)
      seq[p] = l->subset[seq[p]];
  *len = n_carry + l->n;
  return l->shard_count > 1 ? shard_sequence (l, seq, len) : seq;
}

/* row[k] = lut[px[k]]: the table makes normalisation free; with AVX2, 8
 * lookups per gather are about 2x faster than the plain loop. */
void
nl_lut_row (const guint8 *restrict px, float *restrict row, const float *restrict lut, int64_t n)
{
  int64_t k = 0;
#ifdef __AVX2__
  for (; k + 8 <= n; k += 8)
    {
      __m256i idx = _mm256_cvtepu8_epi32 (_mm_loadl_epi64 ((const __m128i *) (px + k)));
      _mm256_storeu_ps (row + k, _mm256_i32gather_ps (lut, idx, 4));
    }
#endif
  for (; k < n; k++)
    row[k] = lut[px[k]];
}

/* Whether msg mentions the number idx as a word ("record 12", "image #12";
 * not "x12" nor a path's "/12/"). */
static gboolean
names_index (const char *msg, int64_t idx)
{
  char num[32];
  g_snprintf (num, sizeof num, "%" G_GINT64_FORMAT, idx);
  size_t len = strlen (num);
  for (const char *p = strstr (msg, num); p; p = strstr (p + 1, num))
    if (p > msg && (p[-1] == ' ' || p[-1] == '#') && !g_ascii_isalnum (p[len]) && p[len] != '/')
      return TRUE;
  return FALSE;
}

static GError *
sample_error (GError *err, int64_t idx)
{
  if (!err)
    return g_error_new (NL_DATA_ERROR, NL_DATA_ERROR_CORRUPT,
                        "sample %" G_GINT64_FORMAT ": the dataset failed without saying why", idx);
  if (!names_index (err->message, idx))
    g_prefix_error (&err, "sample %" G_GINT64_FORMAT ": ", idx);
  return err;
}

enum { FILL_ERROR = -1, FILL_ABORTED = 0, FILL_OK = 1 };

/* Batch k of the epoch (seq, epoch) into x (batch_size rows, the ones after
 * a short batch zeroed) and y (may be NULL). Gives up early, returning
 * FILL_ABORTED, when the loader stops or moves to another epoch than gen. */
static int
fill_batch (NlLoader *l, const int64_t *seq, int64_t seq_len, int epoch, int64_t k, float *x,
            float *y, NlFillBuffers *buf, int gen, GError **error)
{
  const int64_t B = l->batch_size, numel = l->out_numel, L = l->label_numel;
  const int64_t first = k * B, count = MIN (B, seq_len - first);
  const NlDatasetClass *klass = l->ds->klass;
  const float mean = l->mean, std = l->std;
  for (int64_t r = 0; r < count; r++)
    {
      if (g_atomic_int_get (&l->stop) || g_atomic_int_get (&l->gen) != gen)
        return FILL_ABORTED;
      int64_t idx = seq[first + r];
      float *row = x + r * numel;
      float *dst = l->transform ? buf->sample : row, *label = buf->label;
      GError *err = NULL;

      memset (label, 0, L * sizeof (float));

      /* uint8 datasets (resident, else read on demand) go through a table:
       * their get is exactly bytes / 255, so this only saves time. */
      const guint8 *px = klass->get_u8 ? klass->get_u8 (l->ds, idx, label) : NULL;
      if (px && r + 2 < count)
        {
          /* Shuffled samples are scattered: touch the one after next while
           * converting this one (as the batcher does). */
          const char *ahead = (const char *) klass->get_u8 (l->ds, seq[first + r + 2], label + L);
          for (int64_t c = 0; ahead && c < l->in_numel; c += 64)
            __builtin_prefetch (ahead + c);
        }
      if (!px && buf->bytes)
        {
          if (!klass->read_u8 (l->ds, idx, buf->bytes, label, &err))
            {
              g_propagate_error (error, sample_error (err, idx));
              return FILL_ERROR;
            }
          px = buf->bytes;
        }
      if (px)
        nl_lut_row (px, dst, l->transform ? l->lut01 : l->lut, l->in_numel);
      else
        {
          if (!klass->get (l->ds, idx, dst, label, &err))
            {
              g_propagate_error (error, sample_error (err, idx));
              return FILL_ERROR;
            }
          if (!l->transform && l->normalise)
            for (int64_t q = 0; q < numel; q++)
              row[q] = (row[q] - mean) / std;
        }
      if (l->transform)
        {
          nl_transform_apply (l->transform, buf->sample, &l->in_shape, row, l->seed, epoch, idx, buf->scratch);
          if (l->normalise)
            for (int64_t q = 0; q < numel; q++)
              row[q] = (row[q] - mean) / std;
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
  return FILL_OK;
}

static gpointer
worker_main (gpointer data)
{
  NlLoaderWorker *w = data;
  NlLoader *l = w->l;
  g_mutex_lock (&l->lock);
  while (!l->stop)
    {
      int64_t k = l->next_claim;
      if (!l->started || l->failed || k >= l->n_batches || k >= l->next_consume + l->n_slots
          || k > l->error_batch)
        {
          g_cond_wait (&l->work_cond, &l->lock);
          continue;
        }
      l->next_claim++;
      l->busy++;
      int gen = l->gen, epoch = l->epoch;
      const int64_t *seq = l->seq;
      int64_t seq_len = l->seq_len;
      NlLoaderSlot *s = &l->slots[k % l->n_slots];
      g_mutex_unlock (&l->lock);
      GError *err = NULL;
      gint64 t0 = g_get_monotonic_time ();
      int rc = fill_batch (l, seq, seq_len, epoch, k, s->data, s->labels, &w->buf, gen, &err);
      g_mutex_lock (&l->lock);
      if (l->trace && rc == FILL_OK)
        nl_trace_add (l->trace, NL_TRACE_CAT_LOADER, "batch", "batch", k + 1, t0, g_get_monotonic_time ());
      l->busy--;
      if (rc != FILL_ABORTED && gen == l->gen)
        {
          s->batch = k;
          s->error = err;
          s->ready = TRUE;
          if (err)
            l->error_batch = MIN (l->error_batch, k);
        }
      else
        g_clear_error (&err);
      g_cond_broadcast (&l->done_cond);
    }
  g_mutex_unlock (&l->lock);
  return NULL;
}

static void
init_buffers (const NlLoader *l, NlFillBuffers *buf)
{
  if (l->transform)
    {
      buf->sample = g_new (float, l->in_numel);
      buf->scratch = g_new (float, MAX (l->scratch_floats, 1));
    }
  if (l->ds->klass->read_u8)
    buf->bytes = g_new (guint8, l->in_numel);
  buf->label = g_new0 (float, 2 * l->label_numel);
}

static void
free_buffers (NlFillBuffers *buf)
{
  g_free (buf->sample);
  g_free (buf->scratch);
  g_free (buf->bytes);
  g_free (buf->label);
}

static void
stop_workers (NlLoader *l)
{
  if (!l->workers)
    return;
  g_mutex_lock (&l->lock);
  g_atomic_int_set (&l->stop, 1);
  g_cond_broadcast (&l->work_cond);
  g_mutex_unlock (&l->lock);
  for (int i = 0; i < l->n_workers; i++)
    if (l->workers[i].thread)
      g_thread_join (l->workers[i].thread);
}

void
nl_loader_free (NlLoader *l)
{
  if (!l)
    return;
  stop_workers (l);
  for (int i = 0; l->workers && i < l->n_workers; i++)
    free_buffers (&l->workers[i].buf);
  for (int i = 0; l->slots && i < l->n_slots; i++)
    {
      g_free (l->slots[i].data);
      g_free (l->slots[i].labels);
      g_clear_error (&l->slots[i].error);
    }
  g_free (l->workers);
  g_free (l->slots);
  g_mutex_clear (&l->lock);
  g_cond_clear (&l->work_cond);
  g_cond_clear (&l->done_cond);
  g_clear_error (&l->failed);
  g_free (l->seq);
  free_buffers (&l->buf);
  g_free (l->subset);
  g_free (l);
}

static gboolean G_GNUC_PRINTF (2, 3)
spec_error (GError **error, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  char *msg = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  g_set_error_literal (error, NL_DATA_ERROR, NL_DATA_ERROR_SPEC, msg);
  g_free (msg);
  return FALSE;
}

/* The settings that need no dataset; *std is the one to divide by. */
static gboolean
check_config (const NlLoaderConfig *cfg, float *std_out, GError **error)
{
  if (cfg->batch_size <= 0)
    return spec_error (error, "loader batch size must be positive, not %d", cfg->batch_size);
  if (cfg->num_workers < 0 || cfg->num_workers > NL_LOADER_MAX_WORKERS)
    return spec_error (error, "loader workers must be 0 to %d, not %d", NL_LOADER_MAX_WORKERS,
                       cfg->num_workers);
  if ((guint) cfg->last_batch > NL_LAST_BATCH_ROLLOVER)
    return spec_error (error, "unknown last-batch policy %d", (int) cfg->last_batch);
  float std = cfg->std == 0.0f ? 1.0f : cfg->std;
  if (!(std > 0) || !isfinite (std) || !isfinite (cfg->mean))
    return spec_error (error, "loader normalisation needs a finite mean and a positive std (got %g, %g)",
                       cfg->mean, cfg->std);
  *std_out = std;
  return TRUE;
}

/* Batch size, this process's share of it, and the order of samples */
static gboolean
set_batches (NlLoader *l, const NlLoaderConfig *cfg, GError **error)
{
  l->batch_size = l->global_batch = cfg->batch_size;
  if (cfg->shard_count > 1)
    {
      int64_t start, n;
      if (cfg->shard_index < 0 || cfg->shard_index >= cfg->shard_count || cfg->last_batch != NL_LAST_BATCH_KEEP)
        return spec_error (error, "loader shard %d of %d (a shard needs the kept last batch)",
                           cfg->shard_index, cfg->shard_count);
      if (cfg->batch_size < cfg->shard_count)
        return spec_error (error, "a batch of %d cannot be shared by %d processes: each needs a sample",
                           cfg->batch_size, cfg->shard_count);
      l->shard_index = cfg->shard_index;
      l->shard_count = cfg->shard_count;
      l->shard_drop_short = cfg->shard_drop_short;
      shard_share (cfg->batch_size, l->shard_index, l->shard_count, &start, &n);
      l->batch_size = (int) n;
    }
  l->shuffle = cfg->shuffle;
  l->seed = cfg->seed;
  l->last_batch = cfg->last_batch;
  return TRUE;
}

/* The samples read: the whole dataset or the subset asked for */
static gboolean
set_subset (NlLoader *l, NlDataset *ds, const NlLoaderConfig *cfg, GError **error)
{
  l->n = ds->length;
  if (cfg->indices)
    {
      if (cfg->n_indices < 0)
        return spec_error (error, "negative subset size %" G_GINT64_FORMAT, cfg->n_indices);
      for (int64_t p = 0; p < cfg->n_indices; p++)
        if (cfg->indices[p] < 0 || cfg->indices[p] >= ds->length)
          {
            g_set_error (error, NL_DATA_ERROR, NL_DATA_ERROR_MISMATCH,
                         "subset entry %" G_GINT64_FORMAT " is sample %" G_GINT64_FORMAT
                         ", out of range for a dataset of %" G_GINT64_FORMAT,
                         p, cfg->indices[p], ds->length);
            return FALSE;
          }
      l->subset = g_new (int64_t, MAX (cfg->n_indices, 1));
      memcpy (l->subset, cfg->indices, cfg->n_indices * sizeof (int64_t));
      l->n = cfg->n_indices;
    }
  return TRUE;
}

/* The sample's shape as read, and as the transform leaves it */
static gboolean
set_shapes (NlLoader *l, NlDataset *ds, const NlLoaderConfig *cfg, GError **error)
{
  l->in_shape = ds->sample_shape;
  l->in_numel = nl_shape_numel (&l->in_shape);
  l->out_shape = l->in_shape;
  if (cfg->transform && !nl_transform_is_identity (cfg->transform))
    {
      if (!nl_transform_check (cfg->transform, &l->in_shape, error))
        return FALSE;
      l->transform = cfg->transform;
      l->out_shape = nl_transform_output_shape (l->transform, &l->in_shape);
      l->scratch_floats = nl_transform_scratch_size (l->transform, &l->in_shape);
    }
  l->out_numel = nl_shape_numel (&l->out_shape);
  l->label_numel = nl_dataset_label_numel (ds);
  return TRUE;
}

/* The prefetch slots and the worker threads (num_workers > 0) */
static gboolean
start_workers (NlLoader *l, const NlLoaderConfig *cfg, GError **error)
{
  l->n_slots = cfg->prefetch > 0 ? cfg->prefetch : 2 * l->n_workers;
  l->slots = g_new0 (NlLoaderSlot, l->n_slots);
  for (int i = 0; i < l->n_slots; i++)
    {
      l->slots[i].data = g_try_new (float, l->batch_size * l->out_numel);
      l->slots[i].labels = g_new (float, l->batch_size * l->label_numel);
      if (!l->slots[i].data)
        return spec_error (error, "cannot allocate %d prefetch buffers of %" G_GINT64_FORMAT " floats",
                           l->n_slots, l->batch_size * l->out_numel);
    }
  l->workers = g_new0 (NlLoaderWorker, l->n_workers);
  for (int i = 0; i < l->n_workers; i++)
    {
      NlLoaderWorker *w = &l->workers[i];
      w->l = l;
      init_buffers (l, &w->buf);
    }
  for (int i = 0; i < l->n_workers; i++)
    {
      char name[32];
      GError *err = NULL;
      g_snprintf (name, sizeof name, "nl-loader-%d", i);
      l->workers[i].thread = g_thread_try_new (name, worker_main, &l->workers[i], &err);
      if (!l->workers[i].thread)
        {
          g_set_error (error, NL_DATA_ERROR, NL_DATA_ERROR_SPEC, "cannot start loader thread %d: %s", i,
                       err->message);
          g_error_free (err);
          return FALSE;
        }
    }
  return TRUE;
}

NlLoader *
nl_loader_new (NlDataset *ds, const NlLoaderConfig *cfg, GError **error)
{
  g_return_val_if_fail (ds != NULL && ds->length >= 0 && cfg != NULL, NULL);
  NlLoader *l = g_new0 (NlLoader, 1);
  float std = 1.0f;
  g_mutex_init (&l->lock);
  g_cond_init (&l->work_cond);
  g_cond_init (&l->done_cond);
  l->ds = ds;
  l->error_batch = G_MAXINT64;
  if (!check_config (cfg, &std, error) || !set_batches (l, cfg, error) || !set_subset (l, ds, cfg, error)
      || !set_shapes (l, ds, cfg, error))
    {
      nl_loader_free (l);
      return NULL;
    }
  l->mean = cfg->mean;
  l->std = std;
  l->normalise = (l->mean != 0.0f || l->std != 1.0f) && !nl_transform_has_normalize (l->transform);
  for (int k = 0; k < 256; k++)
    {
      l->lut01[k] = (float) k / 255.0f;
      l->lut[k] = l->normalise ? (l->lut01[k] - l->mean) / l->std : l->lut01[k];
    }
  l->seq = build_sequence (l, 0, &l->seq_len);
  l->n_batches = batches_for (l, l->seq_len);

  l->n_workers = cfg->num_workers;
  if (l->n_workers == 0)
    init_buffers (l, &l->buf);
  else if (!start_workers (l, cfg, error))
    {
      nl_loader_free (l);
      return NULL;
    }
  return l;
}

NlShape
nl_loader_sample_shape (const NlLoader *l)
{
  g_return_val_if_fail (l != NULL, NL_SHAPE_ABSENT);
  return l->out_shape;
}

int
nl_loader_batch_size (const NlLoader *l)
{
  return l->batch_size;
}

int
nl_loader_global_count (const NlLoader *l, int64_t k)
{
  int64_t len = l->shard_count > 1 ? l->global_len : l->seq_len;
  return (int) CLAMP (len - k * l->global_batch, 0, l->global_batch);
}

int64_t
nl_loader_n_batches (const NlLoader *l)
{
  g_return_val_if_fail (l != NULL, 0);
  return l->n_batches;
}

void
nl_loader_start_epoch (NlLoader *l, int epoch)
{
  nl_loader_start_epoch_at (l, epoch, 0);
}

void
nl_loader_start_epoch_at (NlLoader *l, int epoch, int64_t batch)
{
  g_return_if_fail (l != NULL && epoch >= 0 && batch >= 0);
  if (l->failed)
    return;
  int64_t len;
  int64_t *seq = build_sequence (l, epoch, &len);

  g_mutex_lock (&l->lock);
  /* In-flight batches belong to the old epoch: make their workers give up,
   * and wait until none still reads the old sequence or writes a slot. */
  g_atomic_int_inc (&l->gen);
  while (l->busy > 0)
    g_cond_wait (&l->done_cond, &l->lock);
  g_free (l->seq);
  l->seq = seq;
  l->seq_len = len;
  l->n_batches = batches_for (l, len);
  l->epoch = epoch;
  l->started = TRUE;
  /* batches depend on (seed, epoch, sample) only: skipping is starting later */
  l->next_claim = l->next_consume = MIN (batch, l->n_batches);
  l->error_batch = G_MAXINT64;
  for (int i = 0; i < l->n_slots; i++)
    {
      l->slots[i].ready = FALSE;
      g_clear_error (&l->slots[i].error);
    }
  g_cond_broadcast (&l->work_cond);
  g_mutex_unlock (&l->lock);
}

gboolean
nl_batch_check_tensor (NlTensor *t, const char *what, int64_t want, GError **error)
{
  if (t->dtype != NL_DTYPE_F32 || !nl_tensor_is_contiguous (t) || nl_tensor_numel (t) != want)
    {
      char buf[96];
      NlShape s = nl_tensor_get_shape (t);
      g_set_error (error, NL_DATA_ERROR, NL_DATA_ERROR_MISMATCH,
                   "batch %s tensor is %s %s%s, expected %" G_GINT64_FORMAT " contiguous float32 values",
                   what, nl_dtype_name (t->dtype), nl_shape_format (&s, buf, sizeof buf),
                   nl_tensor_is_contiguous (t) ? "" : " (not contiguous)", want);
      return FALSE;
    }
  return TRUE;
}

/* Record the first error for good and let the workers go idle. */
static int
fail (NlLoader *l, GError *err, GError **error)
{
  g_mutex_lock (&l->lock);
  l->failed = err;
  g_cond_broadcast (&l->work_cond);
  g_mutex_unlock (&l->lock);
  g_propagate_error (error, g_error_copy (err));
  return -1;
}

int
nl_loader_next (NlLoader *l, NlTensor *data, NlTensor *labels, GError **error)
{
  g_return_val_if_fail (l != NULL && data != NULL, -1);
  const int64_t B = l->batch_size, numel = l->out_numel;
  if (!nl_batch_check_tensor (data, "data", B * numel, error)
      || (labels && !nl_batch_check_tensor (labels, "labels", B * l->label_numel, error)))
    return -1;
  if (l->failed)
    {
      g_propagate_error (error, g_error_copy (l->failed));
      return -1;
    }
  if (!l->started)
    nl_loader_start_epoch (l, 0);
  int64_t k = l->next_consume;
  if (k >= l->n_batches)
    return 0;
  int count = (int) MIN (B, l->seq_len - k * B);
  float *x = nl_tensor_f32 (data);
  float *y = labels ? nl_tensor_f32 (labels) : NULL;
  if (l->n_workers == 0)
    {
      GError *err = NULL;
      gint64 t0 = g_get_monotonic_time ();
      if (fill_batch (l, l->seq, l->seq_len, l->epoch, k, x, y, &l->buf, l->gen, &err) == FILL_ERROR)
        return fail (l, err, error);
      if (l->trace)
        nl_trace_add (l->trace, NL_TRACE_CAT_LOADER, "batch", "batch", k + 1, t0, g_get_monotonic_time ());
      l->next_consume++;
      return count;
    }
  NlLoaderSlot *s = &l->slots[k % l->n_slots];
  g_mutex_lock (&l->lock);
  while (!(s->ready && s->batch == k))
    g_cond_wait (&l->done_cond, &l->lock);
  GError *err = g_steal_pointer (&s->error);
  g_mutex_unlock (&l->lock);
  if (err)
    return fail (l, err, error);
  /* The slot stays ours until next_consume moves past it. */
  memcpy (x, s->data, B * numel * sizeof (float));
  if (y)
    memcpy (y, s->labels, B * l->label_numel * sizeof (float));
  g_mutex_lock (&l->lock);
  s->ready = FALSE;
  l->next_consume++;
  g_cond_broadcast (&l->work_cond);
  g_mutex_unlock (&l->lock);
  return count;
}

void
nl_loader_set_trace (NlLoader *l, NlTrace *trace)
{
  g_mutex_lock (&l->lock);
  l->trace = trace;
  g_mutex_unlock (&l->lock);
}
