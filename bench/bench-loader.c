/* bench-loader.c — data loader throughput in images/s: Fashion-MNIST (the
 * uint8 table path, and with an augmentation) and a generated CIFAR-sized
 * in-memory dataset (3x32x32, 50000 samples) with "random-crop:32:4,flip",
 * for 0, 1 and 2 workers. One JSON object per line.
 *
 *   build-xxx/bench/bench-loader [--epochs N] [--batch B] [--consume-us U]
 *
 * Each figure is the best of N epochs (default 3), which keeps some of the
 * other load on the machine out of it; cpu_us_per_image is the process's CPU
 * time (all threads, the consumer's spinning included) per image. --consume-us spins that long per
 * batch in the consumer, standing in for a training step, to show how much
 * loading the workers hide. */
#include <glib.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "engine/data/nl-dataset.h"
#include "engine/data/nl-loader.h"
#include "engine/data/nl-transform.h"

/* ---- a CIFAR-sized dataset in memory ---- */

typedef struct {
  NlDataset base;
  int64_t numel;
  guint8 *pixels;
  guint8 *labels;
} BenchDs;

static gboolean
bench_get (NlDataset *ds, int64_t i, float *sample, float *label, GError **error)
{
  BenchDs *d = (BenchDs *) ds;
  const guint8 *p = d->pixels + i * d->numel;
  for (int64_t k = 0; k < d->numel; k++)
    sample[k] = (float) p[k] / 255.0f;
  *label = d->labels[i];
  return TRUE;
}

static const guint8 *
bench_get_u8 (NlDataset *ds, int64_t i, float *label)
{
  BenchDs *d = (BenchDs *) ds;
  *label = d->labels[i];
  return d->pixels + i * d->numel;
}

static void
bench_free (NlDataset *ds)
{
  BenchDs *d = (BenchDs *) ds;
  g_free (d->pixels);
  g_free (d->labels);
  g_free (d);
}

static const NlDatasetClass bench_class = { "bench-cifar", bench_get, bench_get_u8, bench_free };

static NlDataset *
cifar_like (int64_t n)
{
  BenchDs *d = g_new0 (BenchDs, 1);
  d->base.klass = &bench_class;
  d->base.length = n;
  d->base.sample_shape = nl_shape_of (3, (int64_t) 3, (int64_t) 32, (int64_t) 32);
  d->base.n_classes = 10;
  d->base.description = g_strdup ("generated CIFAR-sized images in memory");
  d->numel = 3 * 32 * 32;
  d->pixels = g_new (guint8, n * d->numel);
  d->labels = g_new (guint8, n);
  guint64 s = 88172645463325252ULL; /* xorshift64: fast, and the content does not matter */
  for (int64_t k = 0; k < n * d->numel; k += 8)
    {
      s ^= s << 13, s ^= s >> 7, s ^= s << 17;
      memcpy (d->pixels + k, &s, MIN (8, n * d->numel - k));
    }
  for (int64_t i = 0; i < n; i++)
    d->labels[i] = (guint8) (i % 10);
  return &d->base;
}

/* ---- timing ---- */

/* CPU seconds of the whole process, all threads: what loading costs, which
 * other load on the machine does not inflate the way it does wall time. */
static double
cpu_now (void)
{
  struct timespec t;
  clock_gettime (CLOCK_PROCESS_CPUTIME_ID, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static void
spin_us (int us)
{
  gint64 end = g_get_monotonic_time () + us;
  while (g_get_monotonic_time () < end)
    ;
}

static void
bench (const char *name, NlDataset *ds, const char *spec, int workers, int batch, int epochs,
       int consume_us)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (NlTransform) t = spec ? nl_transform_parse (spec, &error) : NULL;
  if (spec && !t)
    g_error ("%s", error->message);
  NlLoaderConfig cfg = { .batch_size = batch, .shuffle = TRUE, .seed = 1, .num_workers = workers,
                         .transform = t, .mean = 0.13f, .std = 0.31f };
  NlLoader *l = nl_loader_new (ds, &cfg, &error);
  if (!l)
    g_error ("%s", error->message);
  NlShape s = nl_loader_sample_shape (l);
  int64_t numel = nl_shape_numel (&s);
  g_autoptr (NlTensor) x = nl_tensor_new (NL_DTYPE_F32, 2, (int64_t[]) { batch, numel });
  g_autoptr (NlTensor) y = nl_tensor_new (NL_DTYPE_F32, 1, (int64_t[]) { batch });

  double best = 0, best_cpu = 1e30, checksum = 0;
  int64_t images = 0;
  for (int e = 0; e < epochs; e++)
    {
      gint64 t0 = g_get_monotonic_time ();
      double c0 = cpu_now ();
      nl_loader_start_epoch (l, e);
      images = 0;
      int got;
      while ((got = nl_loader_next (l, x, y, &error)) > 0)
        {
          images += got;
          checksum += nl_tensor_f32 (x)[numel / 2]; /* keep the copy observable */
          if (consume_us)
            spin_us (consume_us);
        }
      if (got < 0)
        g_error ("%s", error->message);
      double secs = (g_get_monotonic_time () - t0) / 1e6, cpu = cpu_now () - c0;
      best = MAX (best, images / secs);
      best_cpu = MIN (best_cpu, cpu);
    }
  nl_loader_free (l);
  char buf[96];
  printf ("{\"bench\":\"loader\",\"dataset\":\"%s\",\"images\":%" G_GINT64_FORMAT ",\"sample_shape\":\"%s\","
          "\"batch\":%d,\"transform\":\"%s\",\"workers\":%d,\"consume_us\":%d,\"epochs\":%d,"
          "\"images_per_s\":%.0f,\"epoch_s\":%.4f,\"cpu_us_per_image\":%.3f,\"checksum\":%.3f}\n",
          name, images, nl_shape_format (&s, buf, sizeof buf), batch, t ? nl_transform_describe (t) : "none",
          workers, consume_us, epochs, best, images / best, best_cpu / images * 1e6, checksum);
  fflush (stdout);
}

int
main (int argc, char **argv)
{
  int epochs = 3, batch = 128, consume_us = 0, max_workers = 2;
  GOptionEntry entries[] = {
    { "epochs", 'e', 0, G_OPTION_ARG_INT, &epochs, "Epochs per figure (best one counts)", "N" },
    { "batch", 'b', 0, G_OPTION_ARG_INT, &batch, "Batch size", "B" },
    { "consume-us", 'c', 0, G_OPTION_ARG_INT, &consume_us, "Consumer work per batch (busy wait)", "US" },
    { "max-workers", 'w', 0, G_OPTION_ARG_INT, &max_workers, "Measure 0..W workers", "W" },
    { NULL },
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new ("- data loader throughput");
  g_option_context_add_main_entries (ctx, entries, NULL);
  g_autoptr (GError) error = NULL;
  if (!g_option_context_parse (ctx, &argc, &argv, &error) || epochs < 1 || batch < 1 || max_workers < 0)
    {
      fprintf (stderr, "%s\n", error ? error->message : "epochs, batch must be positive");
      return 2;
    }

  NlDataset *fashion = nl_dataset_open ("fashion-mnist", TRUE, &error);
  if (fashion)
    {
      for (int w = 0; w <= max_workers; w++)
        bench ("fashion-mnist", fashion, NULL, w, batch, epochs, consume_us);
      for (int w = 0; w <= max_workers; w++)
        bench ("fashion-mnist", fashion, "random-crop:28:2,flip", w, batch, epochs, consume_us);
      nl_dataset_free (fashion);
    }
  else
    {
      g_autofree char *msg = g_strescape (error->message, NULL);
      printf ("{\"bench\":\"loader\",\"dataset\":\"fashion-mnist\",\"error\":\"%s\"}\n", msg);
      g_clear_error (&error);
    }

  NlDataset *cifar = cifar_like (50000);
  for (int w = 0; w <= max_workers; w++)
    bench ("cifar-like", cifar, "random-crop:32:4,flip", w, batch, epochs, consume_us);
  for (int w = 0; w <= max_workers; w++)
    bench ("cifar-like", cifar, NULL, w, batch, epochs, consume_us);
  nl_dataset_free (cifar);
  return 0;
}
