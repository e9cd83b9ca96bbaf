/* test-loader.c — transforms against reference loops, samplers and splits,
 * and the threaded loader: every sample once, order, equality with the
 * batcher and across worker counts, last-batch policies, subsets, errors in
 * workers, and prompt shutdown. */
#include <glib.h>
#include <math.h>
#include <string.h>

#include "engine/data/nl-batcher.h"
#include "engine/data/nl-loader.h"
#include "engine/data/nl-transform.h"
#include "nl-test-util.h"

/* ---- an in-memory dataset: value (i, k) = ((37 i + 11 k) mod 251) / 255,
 * label i ---- */

typedef struct {
  NlDataset base;
  int64_t numel;
  int64_t fail_index;       /* get() fails here; -1 never */
  int fail_names_index;     /* 1: the failure message names the index itself */
  int sleep_us;             /* per sample, to make races likely */
  guint8 *bytes;            /* the uint8 fast path, or NULL */
} TestDs;

static guint8
raw_value (int64_t i, int64_t k)
{
  return (guint8) ((i * 37 + k * 11) % 251);
}

static float
value_at (int64_t i, int64_t k)
{
  return (float) raw_value (i, k) / 255.0f;
}

/* The slow and failing parts shared by get and read_u8. */
static gboolean
test_access (TestDs *t, int64_t i, GError **error)
{
  if (t->sleep_us)
    g_usleep (t->sleep_us);
  if (i == t->fail_index)
    {
      if (t->fail_names_index == 1)
        g_set_error (error, NL_DATA_ERROR, NL_DATA_ERROR_CORRUPT, "test.bin: record %" G_GINT64_FORMAT " is corrupt", i);
      else if (t->fail_names_index == 2) /* the number only in a path */
        g_set_error (error, NL_DATA_ERROR, NL_DATA_ERROR_CORRUPT, "d/%" G_GINT64_FORMAT "/x1.bin: bad checksum", i);
      else
        g_set_error (error, NL_DATA_ERROR, NL_DATA_ERROR_CORRUPT, "test.bin: bad record checksum");
      return FALSE;
    }
  return TRUE;
}

static gboolean
test_get (NlDataset *ds, int64_t i, float *sample, float *label, GError **error)
{
  TestDs *t = (TestDs *) ds;
  if (!test_access (t, i, error))
    return FALSE;
  for (int64_t k = 0; k < t->numel; k++)
    sample[k] = value_at (i, k);
  *label = (float) i;
  return TRUE;
}

static const guint8 *
test_get_u8 (NlDataset *ds, int64_t i, float *label)
{
  TestDs *t = (TestDs *) ds;
  *label = (float) i;
  return t->bytes + i * t->numel;
}

static gboolean
test_read_u8 (NlDataset *ds, int64_t i, guint8 *sample, float *label, GError **error)
{
  TestDs *t = (TestDs *) ds;
  if (!test_access (t, i, error))
    return FALSE;
  for (int64_t k = 0; k < t->numel; k++)
    sample[k] = raw_value (i, k);
  *label = (float) i;
  return TRUE;
}

static void
test_free (NlDataset *ds)
{
  TestDs *t = (TestDs *) ds;
  g_free (t->bytes);
  g_free (t);
}

/* Three ways to deliver the same samples: floats only, resident uint8
 * (get_u8), uint8 read on demand (read_u8). */
enum { DS_FLOAT, DS_GET_U8, DS_READ_U8 };
static const NlDatasetClass test_classes[] = {
  { .type_name = "test", .get = test_get, .free = test_free },
  { .type_name = "test-get-u8", .get = test_get, .get_u8 = test_get_u8, .free = test_free },
  { .type_name = "test-read-u8", .get = test_get, .read_u8 = test_read_u8, .free = test_free },
};

static TestDs *
make_ds (int64_t n, NlShape shape, int u8)
{
  TestDs *t = g_new0 (TestDs, 1);
  t->base.klass = &test_classes[u8];
  t->base.length = n;
  t->base.sample_shape = shape;
  t->numel = nl_shape_numel (&shape);
  t->fail_index = -1;
  if (u8)
    {
      t->bytes = g_new (guint8, MAX (n * t->numel, 1));
      for (int64_t i = 0; i < n; i++)
        for (int64_t k = 0; k < t->numel; k++)
          t->bytes[i * t->numel + k] = raw_value (i, k);
    }
  return t;
}

/* ---- running a loader over an epoch ---- */

typedef struct {
  float *data, *labels;
  int *counts;
  int n_batches;
  int64_t row; /* floats per sample */
} Run;

static void
run_clear (Run *r)
{
  g_free (r->data);
  g_free (r->labels);
  g_free (r->counts);
  memset (r, 0, sizeof *r);
}

/* All batches of `epoch` (< 0: the current one, not restarted). */
static Run
run_epoch (NlLoader *l, int batch_size, int epoch)
{
  if (epoch >= 0)
    nl_loader_start_epoch (l, epoch);
  NlShape s = nl_loader_sample_shape (l);
  Run r = { .row = nl_shape_numel (&s) };
  int64_t nb = nl_loader_n_batches (l);
  r.data = g_new (float, MAX (nb, 1) * batch_size * r.row);
  r.labels = g_new (float, MAX (nb, 1) * batch_size);
  r.counts = g_new (int, MAX (nb, 1));
  g_autoptr (NlTensor) x = nl_tensor_new (NL_DTYPE_F32, 2, (int64_t[]) { batch_size, r.row });
  g_autoptr (NlTensor) y = nl_tensor_new (NL_DTYPE_F32, 1, (int64_t[]) { batch_size });
  for (;;)
    {
      g_autoptr (GError) error = NULL;
      int got = nl_loader_next (l, x, y, &error);
      g_assert_no_error (error);
      g_assert_cmpint (got, >=, 0);
      if (got == 0)
        break;
      g_assert_cmpint (r.n_batches, <, nb);
      memcpy (r.data + r.n_batches * batch_size * r.row, nl_tensor_f32 (x), batch_size * r.row * sizeof (float));
      memcpy (r.labels + r.n_batches * batch_size, nl_tensor_f32 (y), batch_size * sizeof (float));
      r.counts[r.n_batches++] = got;
    }
  g_assert_cmpint (r.n_batches, ==, nb);
  /* The end of an epoch stays the end. */
  g_autoptr (GError) error = NULL;
  g_assert_cmpint (nl_loader_next (l, x, y, &error), ==, 0);
  g_assert_no_error (error);
  return r;
}

static void
assert_runs_equal (const Run *a, const Run *b, int batch_size)
{
  g_assert_cmpint (a->n_batches, ==, b->n_batches);
  g_assert_cmpint (a->row, ==, b->row);
  for (int i = 0; i < a->n_batches; i++)
    g_assert_cmpint (a->counts[i], ==, b->counts[i]);
  g_assert_cmpmem (a->labels, a->n_batches * batch_size * sizeof (float), b->labels,
                   b->n_batches * batch_size * sizeof (float));
  g_assert_cmpmem (a->data, a->n_batches * batch_size * a->row * sizeof (float), b->data,
                   b->n_batches * batch_size * b->row * sizeof (float));
}

static NlLoader *
new_loader (TestDs *ds, const NlLoaderConfig *cfg)
{
  g_autoptr (GError) error = NULL;
  NlLoader *l = nl_loader_new (&ds->base, cfg, &error);
  g_assert_no_error (error);
  g_assert_nonnull (l);
  return l;
}

/* ---- samplers and splits ---- */

static void
test_sampler_order (void)
{
  const int64_t n = 57;
  int64_t a[57], b[57];
  nl_sampler_order (n, FALSE, 3, 4, a);
  for (int64_t i = 0; i < n; i++)
    g_assert_cmpint (a[i], ==, i);

  nl_sampler_order (n, TRUE, 3, 0, a);
  gboolean seen[57] = { 0 };
  int moved = 0;
  for (int64_t i = 0; i < n; i++)
    {
      g_assert_true (a[i] >= 0 && a[i] < n && !seen[a[i]]);
      seen[a[i]] = TRUE;
      moved += a[i] != i;
    }
  g_assert_cmpint (moved, >, n / 2);
  nl_sampler_order (n, TRUE, 3, 0, b);
  g_assert_cmpmem (a, sizeof a, b, sizeof b);
  nl_sampler_order (n, TRUE, 3, 1, b);
  g_assert_true (memcmp (a, b, sizeof a) != 0);
  nl_sampler_order (n, TRUE, 4, 0, b);
  g_assert_true (memcmp (a, b, sizeof a) != 0);

  /* The batcher's order: a batch-1 batcher hands out samples in order. */
  TestDs *ds = make_ds (n, nl_shape_of (1, (int64_t) 2), DS_FLOAT);
  for (int epoch = 0; epoch < 3; epoch++)
    {
      g_autoptr (NlBatcher) bt = nl_batcher_new (&ds->base, 1, TRUE, 99, NL_LAST_BATCH_KEEP, 0, 1);
      nl_batcher_start_epoch (bt, epoch);
      nl_sampler_order (n, TRUE, 99, epoch, a);
      g_autoptr (NlTensor) x = nl_tensor_new (NL_DTYPE_F32, 2, (int64_t[]) { 1, 2 });
      g_autoptr (NlTensor) y = nl_tensor_new (NL_DTYPE_F32, 1, (int64_t[]) { 1 });
      for (int64_t i = 0; i < n; i++)
        {
          g_assert_cmpint (nl_batcher_next (bt, x, y, NULL), ==, 1);
          g_assert_cmpint ((int64_t) nl_tensor_f32 (y)[0], ==, a[i]);
        }
    }
  nl_dataset_free (&ds->base);
}

static void
check_split (int64_t n, double frac, guint64 seed)
{
  int64_t *tr, *va, ntr, nva;
  nl_split_indices (n, frac, seed, &tr, &ntr, &va, &nva);
  g_assert_cmpint (nva, ==, (int64_t) llround (n * frac));
  g_assert_cmpint (ntr + nva, ==, n);
  guint8 *seen = g_new0 (guint8, MAX (n, 1));
  for (int64_t i = 0; i < ntr; i++)
    {
      g_assert_true (tr[i] >= 0 && tr[i] < n);
      g_assert_true (i == 0 || tr[i] > tr[i - 1]);
      seen[tr[i]]++;
    }
  for (int64_t i = 0; i < nva; i++)
    {
      g_assert_true (va[i] >= 0 && va[i] < n);
      g_assert_true (i == 0 || va[i] > va[i - 1]);
      seen[va[i]]++;
    }
  for (int64_t i = 0; i < n; i++)
    g_assert_cmpint (seen[i], ==, 1);
  g_free (seen);
  g_free (tr);
  g_free (va);
}

static void
test_split (void)
{
  check_split (1000, 0.2, 1);
  check_split (1000, 0.0, 1);
  check_split (1000, 1.0, 1);
  check_split (7, 0.5, 3);
  check_split (0, 0.3, 3);

  /* Seeded: the same seed gives the same split, another seed another, and
   * the validation part is spread over the range, not a block. */
  int64_t *tr1, *va1, *tr2, *va2, *tr3, *va3, ntr, nva;
  nl_split_indices (1000, 0.1, 5, &tr1, &ntr, &va1, &nva);
  nl_split_indices (1000, 0.1, 5, &tr2, &ntr, &va2, &nva);
  nl_split_indices (1000, 0.1, 6, &tr3, &ntr, &va3, &nva);
  g_assert_cmpint (nva, ==, 100);
  g_assert_cmpmem (va1, nva * sizeof (int64_t), va2, nva * sizeof (int64_t));
  g_assert_true (memcmp (va1, va3, nva * sizeof (int64_t)) != 0);
  g_assert_cmpint (va1[0], <, 100);
  g_assert_cmpint (va1[nva - 1], >, 900);
  g_free (tr1), g_free (va1), g_free (tr2), g_free (va2), g_free (tr3), g_free (va3);
}

/* ---- the loader ---- */

/* With no transform the loader must reproduce the batcher exactly: orders,
 * the last-batch policies (rollover included), normalisation, the uint8
 * path and the float path. */
static void
test_matches_batcher (void)
{
  const int B = 7;
  for (int u8 = DS_FLOAT; u8 <= DS_READ_U8; u8++)
    for (int last = NL_LAST_BATCH_KEEP; last <= NL_LAST_BATCH_ROLLOVER; last++)
      for (int shuffle = 0; shuffle < 2; shuffle++)
        for (int norm = 0; norm < 2; norm++)
          for (int workers = 0; workers <= 2; workers += 2)
            {
              TestDs *ds = make_ds (30, nl_shape_of (2, (int64_t) 3, (int64_t) 4), u8);
              float mean = norm ? 0.2f : 0.0f, std = norm ? 0.3f : 1.0f;
              g_autoptr (NlBatcher) bt = nl_batcher_new (&ds->base, B, shuffle, 11, last, mean, std);
              NlLoaderConfig cfg = { .batch_size = B, .shuffle = shuffle, .seed = 11, .last_batch = last,
                                     .num_workers = workers, .mean = mean, .std = std };
              NlLoader *l = new_loader (ds, &cfg);
              g_assert_cmpint (nl_loader_n_batches (l), ==, nl_batcher_n_batches (bt));
              g_autoptr (NlTensor) x = nl_tensor_new (NL_DTYPE_F32, 2, (int64_t[]) { B, 12 });
              g_autoptr (NlTensor) y = nl_tensor_new (NL_DTYPE_F32, 1, (int64_t[]) { B });
              /* Start at epoch 2 as well as 0: rollover must carry the same samples. */
              int epochs[] = { 0, 1, 2, 3, 2, 5 };
              for (size_t e = 0; e < G_N_ELEMENTS (epochs); e++)
                {
                  nl_batcher_start_epoch (bt, epochs[e]);
                  Run r = run_epoch (l, B, epochs[e]);
                  g_assert_cmpint (r.n_batches, ==, nl_batcher_n_batches (bt));
                  for (int b = 0; b <= r.n_batches; b++)
                    {
                      int got = nl_batcher_next (bt, x, y, NULL);
                      if (b == r.n_batches)
                        {
                          g_assert_cmpint (got, ==, 0);
                          break;
                        }
                      g_assert_cmpint (got, ==, r.counts[b]);
                      g_assert_cmpmem (nl_tensor_f32 (x), B * 12 * sizeof (float), r.data + b * B * 12,
                                       B * 12 * sizeof (float));
                      g_assert_cmpmem (nl_tensor_f32 (y), B * sizeof (float), r.labels + b * B, B * sizeof (float));
                    }
                  run_clear (&r);
                }
              nl_loader_free (l);
              nl_dataset_free (&ds->base);
            }
}

/* Every sample exactly once, in the sampler's order, with the right values,
 * for any worker count. */
static void
test_each_once_in_order (void)
{
  const int B = 10;
  const int64_t n = 103;
  TestDs *ds = make_ds (n, nl_shape_of (3, (int64_t) 1, (int64_t) 3, (int64_t) 5), DS_READ_U8);
  ds->sleep_us = 20;
  int workers[] = { 0, 1, 2, 4 };
  for (int shuffle = 0; shuffle < 2; shuffle++)
    for (size_t w = 0; w < G_N_ELEMENTS (workers); w++)
      {
        NlLoaderConfig cfg = { .batch_size = B, .shuffle = shuffle, .seed = 7, .num_workers = workers[w] };
        NlLoader *l = new_loader (ds, &cfg);
        for (int epoch = 0; epoch < 2; epoch++)
          {
            Run r = run_epoch (l, B, epoch);
            g_assert_cmpint (r.n_batches, ==, 11);
            int64_t order[103];
            nl_sampler_order (n, shuffle, 7, epoch, order);
            gboolean seen[103] = { 0 };
            int64_t p = 0;
            for (int b = 0; b < r.n_batches; b++)
              {
                g_assert_cmpint (r.counts[b], ==, b < 10 ? 10 : 3);
                for (int i = 0; i < r.counts[b]; i++, p++)
                  {
                    int64_t idx = (int64_t) r.labels[b * B + i];
                    g_assert_cmpint (idx, ==, order[p]);
                    g_assert_false (seen[idx]);
                    seen[idx] = TRUE;
                    for (int k = 0; k < 15; k++)
                      g_assert_cmpfloat (r.data[(b * B + i) * 15 + k], ==, value_at (idx, k));
                  }
                for (int i = r.counts[b]; i < B; i++)
                  {
                    g_assert_cmpfloat (r.labels[b * B + i], ==, 0);
                    for (int k = 0; k < 15; k++)
                      g_assert_cmpfloat (r.data[(b * B + i) * 15 + k], ==, 0);
                  }
              }
            g_assert_cmpint (p, ==, n);
            run_clear (&r);
          }
        nl_loader_free (l);
      }
  nl_dataset_free (&ds->base);
}

/* With random transforms and a slow dataset (so workers finish out of
 * order), every worker count and ring size gives the same bytes as the
 * consumer's own thread, and each sample is the transform of its input for
 * (seed, epoch, index). */
static void
test_workers_identical (void)
{
  const int B = 8;
  const NlShape in = nl_shape_of (3, (int64_t) 3, (int64_t) 8, (int64_t) 8);
  TestDs *ds = make_ds (150, in, DS_GET_U8);
  ds->sleep_us = 40;
  g_autoptr (GError) error = NULL;
  g_autoptr (NlTransform) t = nl_transform_parse ("random-crop:6:2,flip,brightness:0.2,contrast:0.3", &error);
  g_assert_no_error (error);
  NlShape out = nl_transform_output_shape (t, &in);
  int64_t in_numel = nl_shape_numel (&in), out_numel = nl_shape_numel (&out);
  g_assert_cmpint (out_numel, ==, 3 * 6 * 6);
  float *sample = g_new (float, in_numel), *want = g_new (float, out_numel);
  float *scratch = g_new (float, nl_transform_scratch_size (t, &in) + 1);

  for (int shuffle = 0; shuffle < 2; shuffle++)
    {
      NlLoaderConfig cfg = { .batch_size = B, .shuffle = shuffle, .seed = 21, .transform = t,
                             .last_batch = NL_LAST_BATCH_ROLLOVER };
      NlLoader *l0 = new_loader (ds, &cfg);
      NlShape ls = nl_loader_sample_shape (l0);
      g_assert_true (nl_shape_equal (&ls, &out));
      Run ref[2] = { run_epoch (l0, B, 0), run_epoch (l0, B, 1) };
      nl_loader_free (l0);

      for (int e = 0; e < 2; e++)
        for (int b = 0; b < ref[e].n_batches; b++)
          for (int i = 0; i < ref[e].counts[b]; i++)
            {
              int64_t idx = (int64_t) ref[e].labels[b * B + i];
              float label;
              g_assert_true (test_get (&ds->base, idx, sample, &label, NULL));
              nl_transform_apply (t, sample, &in, want, 21, e, idx, scratch);
              g_assert_cmpmem (ref[e].data + (b * B + i) * out_numel, out_numel * sizeof (float), want,
                               out_numel * sizeof (float));
            }
      /* The augmentation differs between the epochs. */
      g_assert_true (memcmp (ref[0].data, ref[1].data, B * out_numel * sizeof (float)) != 0);

      int workers[] = { 1, 2, 4, 4, 3 }, prefetch[] = { 0, 0, 0, 1, 7 };
      for (size_t w = 0; w < G_N_ELEMENTS (workers); w++)
        {
          cfg.num_workers = workers[w];
          cfg.prefetch = prefetch[w];
          NlLoader *l = new_loader (ds, &cfg);
          for (int e = 0; e < 2; e++)
            {
              Run r = run_epoch (l, B, e);
              assert_runs_equal (&r, &ref[e], B);
              run_clear (&r);
            }
          nl_loader_free (l);
        }
      run_clear (&ref[0]);
      run_clear (&ref[1]);
    }
  g_free (sample);
  g_free (want);
  g_free (scratch);
  nl_dataset_free (&ds->base);
}

/* Restarting mid-epoch abandons the old epoch's work: the new epoch's
 * batches are exactly those of a fresh loader. */
static void
test_restart_mid_epoch (void)
{
  const int B = 5;
  TestDs *ds = make_ds (60, nl_shape_of (1, (int64_t) 4), DS_FLOAT);
  ds->sleep_us = 200;
  NlLoaderConfig cfg = { .batch_size = B, .shuffle = TRUE, .seed = 4 };
  NlLoader *l0 = new_loader (ds, &cfg);
  Run ref = run_epoch (l0, B, 3);
  nl_loader_free (l0);

  cfg.num_workers = 3;
  NlLoader *l = new_loader (ds, &cfg);
  g_autoptr (NlTensor) x = nl_tensor_new (NL_DTYPE_F32, 2, (int64_t[]) { B, 4 });
  for (int i = 0; i < 2; i++)
    g_assert_cmpint (nl_loader_next (l, x, NULL, NULL), ==, B);
  g_usleep (2000); /* let workers get into the middle of batches */
  Run r = run_epoch (l, B, 3);
  assert_runs_equal (&r, &ref, B);
  run_clear (&r);
  run_clear (&ref);
  nl_loader_free (l);
  nl_dataset_free (&ds->base);
}

static void
labels_of_epoch (NlLoader *l, int B, int epoch, GString *out)
{
  Run r = run_epoch (l, B, epoch);
  g_string_truncate (out, 0);
  for (int b = 0; b < r.n_batches; b++)
    {
      g_string_append (out, b ? "|" : "");
      for (int i = 0; i < r.counts[b]; i++)
        g_string_append_printf (out, "%s%d", i ? "," : "", (int) r.labels[b * B + i]);
    }
  run_clear (&r);
}

static void
test_last_batch (void)
{
  const int B = 4;
  TestDs *ds = make_ds (10, nl_shape_of (1, (int64_t) 2), DS_FLOAT);
  g_autoptr (GString) s = g_string_new (NULL);
  for (int workers = 0; workers <= 2; workers += 2)
    {
      NlLoaderConfig cfg = { .batch_size = B, .num_workers = workers, .last_batch = NL_LAST_BATCH_KEEP };
      NlLoader *l = new_loader (ds, &cfg);
      g_assert_cmpint (nl_loader_n_batches (l), ==, 3);
      labels_of_epoch (l, B, 0, s);
      g_assert_cmpstr (s->str, ==, "0,1,2,3|4,5,6,7|8,9");
      nl_loader_free (l);

      cfg.last_batch = NL_LAST_BATCH_DISCARD;
      l = new_loader (ds, &cfg);
      g_assert_cmpint (nl_loader_n_batches (l), ==, 2);
      labels_of_epoch (l, B, 0, s);
      g_assert_cmpstr (s->str, ==, "0,1,2,3|4,5,6,7");
      labels_of_epoch (l, B, 1, s);
      g_assert_cmpstr (s->str, ==, "0,1,2,3|4,5,6,7");
      nl_loader_free (l);

      /* 10 = 2 * 4 + 2: epoch 1 begins with 8, 9 and then has 12 samples. */
      cfg.last_batch = NL_LAST_BATCH_ROLLOVER;
      l = new_loader (ds, &cfg);
      g_assert_cmpint (nl_loader_n_batches (l), ==, 2);
      labels_of_epoch (l, B, 0, s);
      g_assert_cmpstr (s->str, ==, "0,1,2,3|4,5,6,7");
      labels_of_epoch (l, B, 1, s);
      g_assert_cmpint (nl_loader_n_batches (l), ==, 3);
      g_assert_cmpstr (s->str, ==, "8,9,0,1|2,3,4,5|6,7,8,9");
      labels_of_epoch (l, B, 2, s);
      g_assert_cmpstr (s->str, ==, "0,1,2,3|4,5,6,7");
      labels_of_epoch (l, B, 3, s);
      g_assert_cmpstr (s->str, ==, "8,9,0,1|2,3,4,5|6,7,8,9");
      nl_loader_free (l);
    }
  /* A batch bigger than the dataset: 3 carried into epoch 1, 2 into 2
   * (reaching back over two epochs), 1 into 3, none into 4. */
  NlLoaderConfig cfg = { .batch_size = 4, .last_batch = NL_LAST_BATCH_ROLLOVER, .num_workers = 1 };
  TestDs *tiny = make_ds (3, nl_shape_of (1, (int64_t) 1), DS_FLOAT);
  NlLoader *l = new_loader (tiny, &cfg);
  labels_of_epoch (l, 4, 0, s);
  g_assert_cmpstr (s->str, ==, "");
  labels_of_epoch (l, 4, 1, s);
  g_assert_cmpstr (s->str, ==, "0,1,2,0");
  labels_of_epoch (l, 4, 2, s);
  g_assert_cmpstr (s->str, ==, "1,2,0,1");
  labels_of_epoch (l, 4, 3, s);
  g_assert_cmpstr (s->str, ==, "2,0,1,2");
  labels_of_epoch (l, 4, 4, s);
  g_assert_cmpstr (s->str, ==, "");
  nl_loader_free (l);
  nl_dataset_free (&tiny->base);
  nl_dataset_free (&ds->base);
}

static void
test_subset (void)
{
  const int64_t subset[] = { 17, 3, 8, 11, 0, 19, 3 };
  TestDs *ds = make_ds (20, nl_shape_of (1, (int64_t) 2), DS_GET_U8);
  g_autoptr (GString) s = g_string_new (NULL);
  for (int workers = 0; workers <= 2; workers++)
    {
      NlLoaderConfig cfg = { .batch_size = 3, .num_workers = workers, .indices = subset, .n_indices = 7 };
      NlLoader *l = new_loader (ds, &cfg);
      g_assert_cmpint (nl_loader_n_batches (l), ==, 3);
      labels_of_epoch (l, 3, 0, s);
      g_assert_cmpstr (s->str, ==, "17,3,8|11,0,19|3");
      nl_loader_free (l);

      cfg.shuffle = TRUE;
      cfg.seed = 8;
      l = new_loader (ds, &cfg);
      Run r = run_epoch (l, 3, 2);
      int64_t order[7];
      nl_sampler_order (7, TRUE, 8, 2, order);
      for (int p = 0; p < 7; p++)
        {
          int64_t idx = subset[order[p]];
          g_assert_cmpint ((int64_t) r.labels[p], ==, idx);
          g_assert_cmpfloat (r.data[p * 2 + 1], ==, value_at (idx, 1));
        }
      run_clear (&r);
      nl_loader_free (l);
    }
  /* An index outside the dataset. */
  const int64_t bad[] = { 1, 20 };
  NlLoaderConfig cfg = { .batch_size = 3, .indices = bad, .n_indices = 2 };
  g_autoptr (GError) error = NULL;
  g_assert_null (nl_loader_new (&ds->base, &cfg, &error));
  g_assert_error (error, NL_DATA_ERROR, NL_DATA_ERROR_MISMATCH);
  g_assert_nonnull (strstr (error->message, "20"));
  nl_dataset_free (&ds->base);
}

/* A failing sample K fails exactly the batch holding it, with the index in
 * the message; the loader stays failed and frees promptly. */
static void
test_worker_error (void)
{
  const int B = 8;
  const int64_t K = 37;
  g_autoptr (NlTensor) x = nl_tensor_new (NL_DTYPE_F32, 2, (int64_t[]) { B, 3 });
  g_autoptr (NlTensor) y = nl_tensor_new (NL_DTYPE_F32, 1, (int64_t[]) { B });
  int workers[] = { 0, 1, 2, 4 };
  for (int names = 0; names < 3; names++)
    for (int shuffle = 0; shuffle < 2; shuffle++)
      for (size_t w = 0; w < G_N_ELEMENTS (workers); w++)
        {
          /* Failures in read_u8 and in get, with and without a transform. */
          TestDs *ds = make_ds (100, nl_shape_of (2, (int64_t) 1, (int64_t) 3), shuffle ? DS_READ_U8 : DS_FLOAT);
          ds->fail_index = K;
          ds->sleep_us = 30;
          g_autoptr (NlTransform) t = (w + names) % 2 ? nl_transform_parse ("flip", NULL) : NULL;
          ds->fail_names_index = names;
          NlLoaderConfig cfg = { .batch_size = B, .shuffle = shuffle, .seed = 2, .num_workers = workers[w],
                                 .transform = t };
          NlLoader *l = new_loader (ds, &cfg);
          nl_loader_start_epoch (l, 1);
          int64_t order[100], pos = -1;
          nl_sampler_order (100, shuffle, 2, 1, order);
          for (int p = 0; p < 100; p++)
            if (order[p] == K)
              pos = p;
          for (int64_t b = 0; b < pos / B; b++)
            {
              g_autoptr (GError) error = NULL;
              g_assert_cmpint (nl_loader_next (l, x, y, &error), ==, B);
              g_assert_no_error (error);
              g_assert_cmpfloat (nl_tensor_f32 (y)[0], ==, order[b * B]);
            }
          const char *wants[] = { "sample 37: test.bin: bad record checksum", "test.bin: record 37 is corrupt",
                                  "sample 37: d/37/x1.bin: bad checksum" };
          const char *want = wants[names];
          for (int again = 0; again < 3; again++)
            {
              g_autoptr (GError) error = NULL;
              g_assert_cmpint (nl_loader_next (l, x, y, &error), ==, -1);
              g_assert_error (error, NL_DATA_ERROR, NL_DATA_ERROR_CORRUPT);
              g_assert_cmpstr (error->message, ==, want);
              if (again == 1)
                nl_loader_start_epoch (l, 2);
            }
          /* A hang check, not a speed check: the rest of the epoch is 3 ms. */
          gint64 t0 = g_get_monotonic_time ();
          nl_loader_free (l);
          g_assert_cmpint (g_get_monotonic_time () - t0, <, 20 * G_USEC_PER_SEC);
          nl_dataset_free (&ds->base);
        }
}

/* Free while workers are blocked on a full ring, mid-batch, or never
 * started; none may hang. */
static void
test_free_mid_epoch (void)
{
  /* 40 ms a sample: finishing the epoch would take 20 s with 4 workers,
   * while a free that stops the workers waits for one sample each. The
   * bound below sits far from both, so a loaded machine cannot fail it. */
  TestDs *ds = make_ds (2000, nl_shape_of (1, (int64_t) 16), DS_FLOAT);
  ds->sleep_us = 40000;
  g_autoptr (NlTensor) x = nl_tensor_new (NL_DTYPE_F32, 2, (int64_t[]) { 16, 16 });
  for (int mode = 0; mode < 3; mode++)
    {
      NlLoaderConfig cfg = { .batch_size = 16, .num_workers = 4, .prefetch = 2, .shuffle = TRUE };
      NlLoader *l = new_loader (ds, &cfg);
      if (mode == 1)
        nl_loader_start_epoch (l, 0); /* workers mid-batch */
      if (mode == 2)
        {
          g_assert_cmpint (nl_loader_next (l, x, NULL, NULL), ==, 16);
          g_usleep (100000); /* the ring fills; workers wait */
        }
      gint64 t0 = g_get_monotonic_time ();
      nl_loader_free (l);
      g_assert_cmpint (g_get_monotonic_time () - t0, <, 8 * G_USEC_PER_SEC);
    }
  nl_dataset_free (&ds->base);
}

static void
test_loader_normalise_and_errors (void)
{
  const NlShape in = nl_shape_of (3, (int64_t) 2, (int64_t) 3, (int64_t) 3);
  TestDs *ds = make_ds (12, in, DS_GET_U8);
  g_autoptr (GError) error = NULL;

  /* mean/std after a transform without normalize... */
  g_autoptr (NlTransform) crop = nl_transform_parse ("center-crop:2", &error);
  g_assert_no_error (error);
  NlLoaderConfig cfg = { .batch_size = 4, .transform = crop, .mean = 0.5f, .std = 0.25f, .num_workers = 1 };
  NlLoader *l = new_loader (ds, &cfg);
  Run r = run_epoch (l, 4, 0);
  g_assert_cmpint (r.row, ==, 8);
  for (int p = 0; p < 12; p++)
    for (int c = 0; c < 2; c++)
      for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++)
          {
            /* center-crop 2 of 3: offset (3 - 2) / 2 = 0 */
            float v = value_at (p, c * 9 + i * 3 + j);
            g_assert_cmpfloat (r.data[p * 8 + c * 4 + i * 2 + j], ==, (v - 0.5f) / 0.25f);
          }
  run_clear (&r);
  nl_loader_free (l);

  /* ...and not when the transform normalises. */
  g_autoptr (NlTransform) norm = nl_transform_parse ("normalize:0.1/0.2:0.5", &error);
  g_assert_no_error (error);
  cfg.transform = norm;
  l = new_loader (ds, &cfg);
  r = run_epoch (l, 4, 0);
  for (int p = 0; p < 12; p++)
    for (int k = 0; k < 18; k++)
      g_assert_cmpfloat (r.data[p * 18 + k], ==, (value_at (p, k) - (k < 9 ? 0.1f : 0.2f)) / 0.5f);
  run_clear (&r);

  /* Wrong tensors. */
  g_autoptr (NlTensor) small = nl_tensor_new (NL_DTYPE_F32, 2, (int64_t[]) { 4, 17 });
  g_assert_cmpint (nl_loader_next (l, small, NULL, &error), ==, -1);
  g_assert_error (error, NL_DATA_ERROR, NL_DATA_ERROR_MISMATCH);
  g_clear_error (&error);
  nl_loader_free (l);

  /* Bad settings. */
  g_autoptr (NlTransform) norm3 = nl_transform_parse ("normalize:0.1/0.2/0.3:1", &error);
  g_assert_no_error (error);
  NlLoaderConfig bad[] = {
    { .batch_size = 0 },
    { .batch_size = 2, .num_workers = -1 },
    { .batch_size = 2, .std = -1 },
    { .batch_size = 2, .transform = norm3 },
  };
  for (size_t i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_assert_null (nl_loader_new (&ds->base, &bad[i], &error));
      g_assert_nonnull (error);
      g_clear_error (&error);
    }
  nl_dataset_free (&ds->base);
}

/* ---- transforms ---- */

static NlTransform *
parse_ok (const char *spec)
{
  g_autoptr (GError) error = NULL;
  NlTransform *t = nl_transform_parse (spec, &error);
  g_assert_no_error (error);
  g_assert_nonnull (t);
  return t;
}

/* Apply with exactly the declared scratch, fenced by canaries. */
static void
apply_fenced (const NlTransform *t, const float *in, const NlShape *shape, float *out, guint64 seed,
              int epoch, int64_t idx)
{
  gsize n = nl_transform_scratch_size (t, shape);
  float *scratch = g_new (float, n + 8);
  for (int k = 0; k < 8; k++)
    scratch[n + k] = -1234.5f;
  nl_transform_apply (t, in, shape, out, seed, epoch, idx, scratch);
  for (int k = 0; k < 8; k++)
    g_assert_cmpfloat (scratch[n + k], ==, -1234.5f);
  g_free (scratch);
}

/* Pixel (c, y, x) of a C x H x W pattern, never 0 so padding shows. */
static float
pattern (int c, int y, int x)
{
  return 1 + c * 100 + y * 10 + x;
}

static void
test_transform_random_crop (void)
{
  g_autoptr (NlTransform) t = parse_ok ("random-crop:4x3:2");
  const int C = 2, H = 5, W = 6, OH = 3, OW = 4, P = 2;
  NlShape in = nl_shape_of (3, (int64_t) C, (int64_t) H, (int64_t) W);
  NlShape out = nl_transform_output_shape (t, &in);
  NlShape want_shape = nl_shape_of (3, (int64_t) C, (int64_t) OH, (int64_t) OW);
  g_assert_true (nl_shape_equal (&out, &want_shape));
  float src[2 * 5 * 6], dst[2 * 3 * 4];
  for (int c = 0; c < C; c++)
    for (int y = 0; y < H; y++)
      for (int x = 0; x < W; x++)
        src[(c * H + y) * W + x] = pattern (c, y, x);

  /* Offsets into the padded image: y in [0, H + 2P - OH], x likewise. */
  const int NY = H + 2 * P - OH + 1, NX = W + 2 * P - OW + 1;
  int hits[7][7] = { { 0 } };
  for (int64_t idx = 0; idx < 1000; idx++)
    {
      apply_fenced (t, src, &in, dst, 1, 0, idx);
      int found = 0;
      for (int oy = 0; oy < NY; oy++)
        for (int ox = 0; ox < NX; ox++)
          {
            gboolean same = TRUE;
            for (int c = 0; c < C && same; c++)
              for (int i = 0; i < OH && same; i++)
                for (int j = 0; j < OW && same; j++)
                  {
                    int sy = oy - P + i, sx = ox - P + j;
                    float v = sy >= 0 && sy < H && sx >= 0 && sx < W ? pattern (c, sy, sx) : 0;
                    same = dst[(c * OH + i) * OW + j] == v;
                  }
            if (same)
              hits[oy][ox]++, found++;
          }
      g_assert_cmpint (found, ==, 1);
    }
  /* Every offset, the extremes included, turns up. */
  for (int oy = 0; oy < NY; oy++)
    for (int ox = 0; ox < NX; ox++)
      g_assert_cmpint (hits[oy][ox], >, 0);

  /* Without padding the crop stays inside; SIZE N is square. */
  g_autoptr (NlTransform) t2 = parse_ok ("random-crop:3");
  out = nl_transform_output_shape (t2, &in);
  want_shape = nl_shape_of (3, (int64_t) C, (int64_t) 3, (int64_t) 3);
  g_assert_true (nl_shape_equal (&out, &want_shape));
  for (int64_t idx = 0; idx < 200; idx++)
    {
      apply_fenced (t2, src, &in, dst, 1, 0, idx);
      int oy = ((int) dst[0] - 1) / 10 % 10, ox = ((int) dst[0] - 1) % 10;
      g_assert_true (oy <= H - 3 && ox <= W - 3);
      for (int c = 0; c < C; c++)
        for (int i = 0; i < 3; i++)
          for (int j = 0; j < 3; j++)
            g_assert_cmpfloat (dst[(c * 3 + i) * 3 + j], ==, pattern (c, oy + i, ox + j));
    }
}

static void
test_transform_center_crop (void)
{
  const int H = 5, W = 6;
  NlShape in = nl_shape_of (2, (int64_t) H, (int64_t) W); /* 2-d: one channel */
  float src[30], dst[8 * 8];
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++)
      src[y * W + x] = pattern (0, y, x);

  g_autoptr (NlTransform) t = parse_ok ("center-crop:4x3");
  NlShape out = nl_transform_output_shape (t, &in);
  NlShape want_shape = nl_shape_of (2, (int64_t) 3, (int64_t) 4);
  g_assert_true (nl_shape_equal (&out, &want_shape));
  apply_fenced (t, src, &in, dst, 0, 0, 0);
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 4; j++)
      g_assert_cmpfloat (dst[i * 4 + j], ==, pattern (0, 1 + i, 1 + j));

  /* Bigger than the image: centred in zeros; the odd spare row goes on top
   * (offset floor ((5 - 8) / 2) = -2), the columns split 1 + 1. */
  g_autoptr (NlTransform) big = parse_ok ("center-crop:8");
  apply_fenced (big, src, &in, dst, 0, 0, 0);
  for (int i = 0; i < 8; i++)
    for (int j = 0; j < 8; j++)
      {
        int sy = i - 2, sx = j - 1;
        float v = sy >= 0 && sy < H && sx >= 0 && sx < W ? pattern (0, sy, sx) : 0;
        g_assert_cmpfloat (dst[i * 8 + j], ==, v);
      }
}

/* Bilinear with half-pixel centres, written out independently in double. */
static double
ref_bilinear (const float *p, int H, int W, int OH, int OW, int i, int j)
{
  double sy = fmax (0.0, (i + 0.5) * H / OH - 0.5), sx = fmax (0.0, (j + 0.5) * W / OW - 0.5);
  int y0 = (int) floor (sy), x0 = (int) floor (sx);
  int y1 = MIN (y0 + 1, H - 1), x1 = MIN (x0 + 1, W - 1);
  y0 = MIN (y0, H - 1);
  x0 = MIN (x0, W - 1);
  double wy = y1 == y0 ? 0 : sy - y0, wx = x1 == x0 ? 0 : sx - x0;
  return (1 - wy) * ((1 - wx) * p[y0 * W + x0] + wx * p[y0 * W + x1])
         + wy * ((1 - wx) * p[y1 * W + x0] + wx * p[y1 * W + x1]);
}

static void
test_transform_resize (void)
{
  /* Known values: doubling the row (a, b) gives a, .75a + .25b, .25a + .75b, b. */
  {
    g_autoptr (NlTransform) t = parse_ok ("resize:4x1");
    NlShape in = nl_shape_of (3, (int64_t) 1, (int64_t) 1, (int64_t) 2);
    float src[2] = { 1, 5 }, dst[4], want[4] = { 1, 2, 4, 5 };
    apply_fenced (t, src, &in, dst, 0, 0, 0);
    nl_test_assert_close (dst, want, 4, 1e-6, 0);
  }
  /* Halving averages pixel pairs; the same size is the identity. */
  {
    g_autoptr (NlTransform) half = parse_ok ("resize:2x2");
    g_autoptr (NlTransform) same = parse_ok ("resize:4");
    NlShape in = nl_shape_of (2, (int64_t) 4, (int64_t) 4);
    float src[16], dst[16], want[4];
    for (int k = 0; k < 16; k++)
      src[k] = (float) ((k * 7) % 11);
    for (int i = 0; i < 2; i++)
      for (int j = 0; j < 2; j++)
        want[i * 2 + j] = (src[(2 * i) * 4 + 2 * j] + src[(2 * i) * 4 + 2 * j + 1] + src[(2 * i + 1) * 4 + 2 * j]
                           + src[(2 * i + 1) * 4 + 2 * j + 1]) / 4;
    apply_fenced (half, src, &in, dst, 0, 0, 0);
    nl_test_assert_close (dst, want, 4, 1e-5, 0);
    apply_fenced (same, src, &in, dst, 0, 0, 0);
    g_assert_cmpmem (dst, sizeof dst, src, sizeof src);
  }
  /* Arbitrary sizes, up and down, against the reference. */
  {
    const int C = 2, H = 3, W = 5;
    int sizes[][2] = { { 7, 5 }, { 2, 2 }, { 11, 1 }, { 3, 8 } };
    NlShape in = nl_shape_of (3, (int64_t) C, (int64_t) H, (int64_t) W);
    g_autoptr (NlTensor) src = nl_tensor_new_shape (NL_DTYPE_F32, &in);
    nl_test_fill_uniform (src, 0, 1, 3);
    for (size_t s = 0; s < G_N_ELEMENTS (sizes); s++)
      {
        int OW = sizes[s][0], OH = sizes[s][1];
        g_autofree char *spec = g_strdup_printf ("resize:%dx%d", OW, OH);
        g_autoptr (NlTransform) t = parse_ok (spec);
        NlShape out = nl_transform_output_shape (t, &in);
        NlShape want_shape = nl_shape_of (3, (int64_t) C, (int64_t) OH, (int64_t) OW);
        g_assert_true (nl_shape_equal (&out, &want_shape));
        float *dst = g_new (float, C * OH * OW), *want = g_new (float, C * OH * OW);
        for (int c = 0; c < C; c++)
          for (int i = 0; i < OH; i++)
            for (int j = 0; j < OW; j++)
              want[(c * OH + i) * OW + j]
                = (float) ref_bilinear (nl_tensor_f32 (src) + c * H * W, H, W, OH, OW, i, j);
        apply_fenced (t, nl_tensor_f32 (src), &in, dst, 0, 0, 0);
        nl_test_assert_close (dst, want, C * OH * OW, 1e-5, 0);
        g_free (dst);
        g_free (want);
      }
  }
}

static void
test_transform_flip (void)
{
  g_autoptr (NlTransform) t = parse_ok ("flip");
  const int C = 3, H = 4, W = 5;
  NlShape in = nl_shape_of (3, (int64_t) C, (int64_t) H, (int64_t) W);
  float src[60], dst[60];
  for (int c = 0; c < C; c++)
    for (int y = 0; y < H; y++)
      for (int x = 0; x < W; x++)
        src[(c * H + y) * W + x] = pattern (c, y, x);
  int flipped = 0;
  for (int64_t idx = 0; idx < 1000; idx++)
    {
      apply_fenced (t, src, &in, dst, 9, 2, idx);
      gboolean is_flip = dst[0] != src[0];
      flipped += is_flip;
      for (int c = 0; c < C; c++)
        for (int y = 0; y < H; y++)
          for (int x = 0; x < W; x++)
            g_assert_cmpfloat (dst[(c * H + y) * W + x], ==, pattern (c, y, is_flip ? W - 1 - x : x));
    }
  g_assert_cmpint (flipped, >, 440);
  g_assert_cmpint (flipped, <, 560);
}

static void
test_transform_brightness_contrast (void)
{
  const int n = 3 * 4 * 4;
  NlShape in = nl_shape_of (3, (int64_t) 3, (int64_t) 4, (int64_t) 4);
  g_autoptr (NlTensor) st = nl_tensor_new_shape (NL_DTYPE_F32, &in);
  nl_test_fill_uniform (st, 0.1f, 1.0f, 5);
  const float *src = nl_tensor_f32 (st);
  float dst[48], want[48];
  double mean = 0;
  for (int k = 0; k < n; k++)
    mean += src[k];
  mean /= n;
  int far = 0; /* the pixel furthest from the mean estimates the factor best */
  for (int k = 0; k < n; k++)
    if (fabs (src[k] - mean) > fabs (src[far] - mean))
      far = k;

  g_autoptr (NlTransform) b = parse_ok ("brightness:0.3");
  g_autoptr (NlTransform) c = parse_ok ("contrast:0.5");
  double lo[2] = { 9, 9 }, hi[2] = { -9, -9 }, sum[2] = { 0, 0 };
  for (int64_t idx = 0; idx < 500; idx++)
    {
      /* brightness: x * f for one f in [0.7, 1.3] */
      apply_fenced (b, src, &in, dst, 1, 0, idx);
      double f = dst[far] / src[far];
      g_assert_cmpfloat (f, >=, 0.7 - 1e-6);
      g_assert_cmpfloat (f, <=, 1.3 + 1e-6);
      for (int k = 0; k < n; k++)
        want[k] = (float) (src[k] * f);
      nl_test_assert_close (dst, want, n, 1e-6, 1e-5);
      lo[0] = MIN (lo[0], f), hi[0] = MAX (hi[0], f), sum[0] += f;

      /* contrast: mean + (x - mean) * f for one f in [0.5, 1.5] */
      apply_fenced (c, src, &in, dst, 1, 0, idx);
      f = (dst[far] - mean) / (src[far] - mean);
      g_assert_cmpfloat (f, >=, 0.5 - 1e-4);
      g_assert_cmpfloat (f, <=, 1.5 + 1e-4);
      for (int k = 0; k < n; k++)
        want[k] = (float) (mean + (src[k] - mean) * f);
      nl_test_assert_close (dst, want, n, 1e-5, 1e-5);
      lo[1] = MIN (lo[1], f), hi[1] = MAX (hi[1], f), sum[1] += f;
    }
  /* Uniform over the whole range. */
  g_assert_cmpfloat (lo[0], <, 0.72);
  g_assert_cmpfloat (hi[0], >, 1.28);
  g_assert_cmpfloat (fabs (sum[0] / 500 - 1), <, 0.03);
  g_assert_cmpfloat (lo[1], <, 0.53);
  g_assert_cmpfloat (hi[1], >, 1.47);
  g_assert_cmpfloat (fabs (sum[1] / 500 - 1), <, 0.05);
}

static void
test_transform_normalize (void)
{
  NlShape in = nl_shape_of (3, (int64_t) 3, (int64_t) 2, (int64_t) 2);
  float src[12], dst[12], want[12];
  for (int k = 0; k < 12; k++)
    src[k] = (float) k / 12;
  const float m[3] = { 0.1f, 0.2f, 0.3f }, s[3] = { 0.5f, 0.25f, 2.0f };
  g_autoptr (NlTransform) t = parse_ok ("normalize:0.1/0.2/0.3:0.5/0.25/2");
  g_assert_true (nl_transform_has_normalize (t));
  g_assert_true (nl_transform_check (t, &in, NULL));
  apply_fenced (t, src, &in, dst, 0, 0, 0);
  for (int k = 0; k < 12; k++)
    want[k] = (src[k] - m[k / 4]) / s[k / 4];
  g_assert_cmpmem (dst, sizeof dst, want, sizeof want);

  g_autoptr (NlTransform) one = parse_ok ("normalize:0.25:0.5");
  apply_fenced (one, src, &in, dst, 0, 0, 0);
  for (int k = 0; k < 12; k++)
    want[k] = (src[k] - 0.25f) / 0.5f;
  g_assert_cmpmem (dst, sizeof dst, want, sizeof want);

  /* Three values for a one-channel sample. */
  NlShape gray = nl_shape_of (3, (int64_t) 1, (int64_t) 2, (int64_t) 2);
  g_autoptr (GError) error = NULL;
  g_assert_false (nl_transform_check (t, &gray, &error));
  g_assert_error (error, NL_DATA_ERROR, NL_DATA_ERROR_MISMATCH);
  NlShape bad = nl_transform_output_shape (t, &gray);
  g_assert_cmpint (bad.ndim, ==, -1);
}

/* Composition, identity, determinism per (seed, epoch, index), shapes and
 * the canonical description. */
static void
test_transform_compose (void)
{
  g_autoptr (NlTransform) id = parse_ok (" to-tensor ");
  g_autoptr (NlTransform) empty = parse_ok ("");
  g_assert_true (nl_transform_is_identity (id));
  g_assert_true (nl_transform_is_identity (empty));
  g_assert_cmpstr (nl_transform_describe (empty), ==, "identity");
  NlShape in = nl_shape_of (3, (int64_t) 3, (int64_t) 10, (int64_t) 12);
  g_autoptr (NlTensor) st = nl_tensor_new_shape (NL_DTYPE_F32, &in);
  nl_test_fill_uniform (st, 0, 1, 8);
  const float *src = nl_tensor_f32 (st);
  float a[3 * 10 * 12], b[3 * 10 * 12];
  g_assert_cmpint (nl_transform_scratch_size (id, &in), ==, 0);
  nl_transform_apply (id, src, &in, a, 0, 0, 0, NULL);
  g_assert_cmpmem (a, 360 * sizeof (float), src, 360 * sizeof (float));

  g_autoptr (NlTransform) t
    = parse_ok ("random-crop:8:1, flip,to-tensor,resize:6x5,brightness:0.4,contrast:0.2,normalize:0.5:0.2");
  g_assert_false (nl_transform_is_identity (t));
  g_assert_cmpstr (nl_transform_describe (t), ==,
                   "random-crop:8x8:1,flip,to-tensor,resize:6x5,brightness:0.4,contrast:0.2,normalize:0.5:0.2");
  g_autoptr (NlTransform) again = parse_ok (nl_transform_describe (t));
  g_assert_cmpstr (nl_transform_describe (again), ==, nl_transform_describe (t));
  NlShape out = nl_transform_output_shape (t, &in);
  NlShape want = nl_shape_of (3, (int64_t) 3, (int64_t) 5, (int64_t) 6);
  g_assert_true (nl_shape_equal (&out, &want));
  NlShape in2 = nl_shape_of (2, (int64_t) 10, (int64_t) 12);
  out = nl_transform_output_shape (t, &in2);
  want = nl_shape_of (2, (int64_t) 5, (int64_t) 6);
  g_assert_true (nl_shape_equal (&out, &want));
  NlShape in1 = nl_shape_of (1, (int64_t) 10);
  g_assert_false (nl_transform_check (t, &in1, NULL));

  /* A deterministic chain equals its steps applied one by one. */
  {
    g_autoptr (NlTransform) chain = parse_ok ("center-crop:9x7,resize:4x3,normalize:0.5:0.2");
    g_autoptr (NlTransform) s1 = parse_ok ("center-crop:9x7");
    g_autoptr (NlTransform) s2 = parse_ok ("resize:4x3");
    g_autoptr (NlTransform) s3 = parse_ok ("normalize:0.5:0.2");
    NlShape m1 = nl_transform_output_shape (s1, &in), m2 = nl_transform_output_shape (s2, &m1);
    float t1[3 * 7 * 9], t2[3 * 3 * 4], t3[3 * 3 * 4], whole[3 * 3 * 4];
    apply_fenced (s1, src, &in, t1, 0, 0, 0);
    apply_fenced (s2, t1, &m1, t2, 0, 0, 0);
    apply_fenced (s3, t2, &m2, t3, 0, 0, 0);
    apply_fenced (chain, src, &in, whole, 0, 0, 0);
    g_assert_cmpmem (whole, sizeof whole, t3, sizeof t3);
  }

  const int n_out = 3 * 5 * 6;
  int differ_epoch = 0, differ_seed = 0;
  for (int64_t idx = 0; idx < 50; idx++)
    {
      apply_fenced (t, src, &in, a, 77, 3, idx);
      apply_fenced (t, src, &in, b, 77, 3, idx);
      g_assert_cmpmem (a, n_out * sizeof (float), b, n_out * sizeof (float));
      apply_fenced (again, src, &in, b, 77, 3, idx);
      g_assert_cmpmem (a, n_out * sizeof (float), b, n_out * sizeof (float));
      apply_fenced (t, src, &in, b, 77, 4, idx);
      differ_epoch += memcmp (a, b, n_out * sizeof (float)) != 0;
      apply_fenced (t, src, &in, b, 78, 3, idx);
      differ_seed += memcmp (a, b, n_out * sizeof (float)) != 0;
      for (int k = 0; k < n_out; k++)
        g_assert_true (isfinite (a[k]));
    }
  g_assert_cmpint (differ_epoch, ==, 50);
  g_assert_cmpint (differ_seed, ==, 50);

  /* Neighbouring indices get unrelated flips. */
  g_autoptr (NlTransform) flip = parse_ok ("flip");
  int same_as_next = 0;
  gboolean prev = FALSE;
  for (int64_t idx = 0; idx < 400; idx++)
    {
      apply_fenced (flip, src, &in, a, 1, 0, idx);
      gboolean f = a[0] != src[0];
      same_as_next += idx > 0 && f == prev;
      prev = f;
    }
  g_assert_cmpint (same_as_next, >, 160);
  g_assert_cmpint (same_as_next, <, 240);
}

static void
test_transform_bad_specs (void)
{
  struct {
    const char *spec, *quote;
  } bad[] = {
    { "blur", "'blur'" },
    { "flip,sharpen:2", "'sharpen:2'" },
    { "random-crop", "'random-crop'" },
    { "random-crop:0", "'random-crop:0'" },
    { "random-crop:3x", "'random-crop:3x'" },
    { "random-crop:x3", "'random-crop:x3'" },
    { "random-crop:32:-1", "'random-crop:32:-1'" },
    { "random-crop:32:4:1", "'random-crop:32:4:1'" },
    { "center-crop:4:1", "'center-crop:4:1'" },
    { "center-crop:abc", "'center-crop:abc'" },
    { "resize", "'resize'" },
    { "resize:4x-4", "'resize:4x-4'" },
    { "flip:0.5", "'flip:0.5'" },
    { "to-tensor:1", "'to-tensor:1'" },
    { "brightness", "'brightness'" },
    { "brightness:1.5", "'brightness:1.5'" },
    { "contrast:-0.1", "'contrast:-0.1'" },
    { "contrast:nan", "'contrast:nan'" },
    { "contrast:0.2x", "'contrast:0.2x'" },
    { "normalize:0.5", "'normalize:0.5'" },
    { "normalize:0.5:0", "'normalize:0.5:0'" },
    { "normalize:0.5:-1", "'normalize:0.5:-1'" },
    { "normalize:a:1", "'normalize:a:1'" },
    { "normalize:1/2:1/2/3", "'normalize:1/2:1/2/3'" },
    { "normalize:1//2:1", "'normalize:1//2:1'" },
    { "flip,,flip", "item 2 is empty" },
    { "flip,", "item 2 is empty" },
  };
  for (size_t i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_autoptr (GError) error = NULL;
      NlTransform *t = nl_transform_parse (bad[i].spec, &error);
      if (t)
        g_error ("'%s' was accepted", bad[i].spec);
      g_assert_error (error, NL_DATA_ERROR, NL_DATA_ERROR_SPEC);
      if (!strstr (error->message, bad[i].quote))
        g_error ("error for '%s' does not quote %s: %s", bad[i].spec, bad[i].quote, error->message);
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/loader/sampler/order", test_sampler_order);
  g_test_add_func ("/loader/sampler/split", test_split);
  g_test_add_func ("/loader/matches-batcher", test_matches_batcher);
  g_test_add_func ("/loader/each-once-in-order", test_each_once_in_order);
  g_test_add_func ("/loader/workers-identical", test_workers_identical);
  g_test_add_func ("/loader/restart-mid-epoch", test_restart_mid_epoch);
  g_test_add_func ("/loader/last-batch", test_last_batch);
  g_test_add_func ("/loader/subset", test_subset);
  g_test_add_func ("/loader/worker-error", test_worker_error);
  g_test_add_func ("/loader/free-mid-epoch", test_free_mid_epoch);
  g_test_add_func ("/loader/normalise-and-errors", test_loader_normalise_and_errors);
  g_test_add_func ("/transform/random-crop", test_transform_random_crop);
  g_test_add_func ("/transform/center-crop", test_transform_center_crop);
  g_test_add_func ("/transform/resize", test_transform_resize);
  g_test_add_func ("/transform/flip", test_transform_flip);
  g_test_add_func ("/transform/brightness-contrast", test_transform_brightness_contrast);
  g_test_add_func ("/transform/normalize", test_transform_normalize);
  g_test_add_func ("/transform/compose", test_transform_compose);
  g_test_add_func ("/transform/bad-specs", test_transform_bad_specs);
  return g_test_run ();
}
