/* bench-packed-read.c — the time to read every sample of a packed record
 * file once (an epoch's reading, in index order, on one thread), through
 * the dataset's read_u8 (uint8 files) or get (float32 files): what a
 * per-record checksum costs. Prints one JSON object.
 *
 *   build/bench/bench-packed-read FILE [--epochs N]
 *
 * The figures are the best of N epochs (default 5): the file is in the page
 * cache after the first, so this is the CPU cost of reading, not the disk;
 * cpu_ms (the thread's CPU time) is steadier than wall time on a busy
 * machine. */
#include <glib.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "engine/data/nl-dataset.h"
#include "engine/data/nl-packed-dataset.h"

int
main (int argc, char **argv)
{
  int epochs = 5;
  if (argc < 2)
    {
      fprintf (stderr, "usage: %s FILE [--epochs N]\n", argv[0]);
      return 2;
    }
  if (argc >= 4 && strcmp (argv[2], "--epochs") == 0)
    epochs = MAX (1, atoi (argv[3]));
  g_autoptr (GError) error = NULL;
  NlDataset *ds = nl_packed_dataset_open (argv[1], &error);
  if (!ds)
    {
      fprintf (stderr, "%s\n", error->message);
      return 1;
    }
  int64_t numel = nl_shape_numel (&ds->sample_shape);
  g_autofree guint8 *u8 = g_malloc (numel);
  g_autofree float *f32 = g_new (float, numel);
  double best = G_MAXDOUBLE, best_cpu = G_MAXDOUBLE, sum = 0;
  for (int e = 0; e < epochs; e++)
    {
      struct timespec c0, c1;
      clock_gettime (CLOCK_THREAD_CPUTIME_ID, &c0);
      gint64 t0 = g_get_monotonic_time ();
      for (int64_t i = 0; i < ds->length; i++)
        {
          float label;
          gboolean ok = ds->klass->read_u8 ? ds->klass->read_u8 (ds, i, u8, &label, &error)
                                           : nl_dataset_get (ds, i, f32, &label, &error);
          if (!ok)
            {
              fprintf (stderr, "%s\n", error->message);
              return 1;
            }
          sum += label;
        }
      best = MIN (best, (g_get_monotonic_time () - t0) / 1e3);
      clock_gettime (CLOCK_THREAD_CPUTIME_ID, &c1);
      best_cpu = MIN (best_cpu, (c1.tv_sec - c0.tv_sec) * 1e3 + (c1.tv_nsec - c0.tv_nsec) / 1e6);
    }
  printf ("{\"file\": \"%s\", \"samples\": %" G_GINT64_FORMAT ", \"epochs\": %d, \"version\": %d, \"best_epoch_ms\": %.2f, "
          "\"best_epoch_cpu_ms\": %.2f, \"us_per_sample\": %.3f, \"label_sum\": %.0f}\n", argv[1], ds->length,
          epochs, nl_packed_dataset_version (ds), best, best_cpu, best * 1e3 / ds->length, sum / epochs);
  nl_dataset_free (ds);
  return 0;
}
