/* nl-fuzz.c — the shared part of the fuzz targets (nl-fuzz.h). */
#include "nl-fuzz.h"
#include "tests/nl-test-util.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static char *fuzz_dir;

static void
remove_dir_at_exit (void)
{
  if (fuzz_dir)
    nl_test_remove_tree (fuzz_dir);
}

static GLogWriterOutput
fatal_writer (GLogLevelFlags level, const GLogField *fields, gsize n_fields, gpointer data)
{
  g_log_writer_default (level & ~G_LOG_FLAG_FATAL, fields, n_fields, data);
  if (level & (G_LOG_LEVEL_ERROR | G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_WARNING))
    abort ();
  return G_LOG_WRITER_HANDLED;
}

void
nl_fuzz_init (void)
{
  if (fuzz_dir)
    return;
  /* A critical or a warning is a bug the input found: abort, so libFuzzer
   * keeps the input as a crash (GLib's own fatal messages trap, SIGTRAP,
   * which libFuzzer does not catch). */
  g_log_set_writer_func (fatal_writer, NULL, NULL);
  g_setenv ("OMP_NUM_THREADS", "1", FALSE);
  /* in memory where there is a tmpfs: the readers' files are written for
   * every input, and a disk makes that ten times slower */
  if (!g_getenv ("TMPDIR") && access ("/dev/shm", W_OK) == 0)
    fuzz_dir = g_mkdtemp (g_strdup ("/dev/shm/netloom-fuzz-XXXXXX"));
  if (!fuzz_dir)
    fuzz_dir = g_dir_make_tmp ("netloom-fuzz-XXXXXX", NULL);
  if (!fuzz_dir)
    {
      fprintf (stderr, "nl-fuzz: no temporary directory: %s\n", g_strerror (errno));
      abort ();
    }
  atexit (remove_dir_at_exit);
}

const char *
nl_fuzz_dir (void)
{
  nl_fuzz_init ();
  return fuzz_dir;
}

char *
nl_fuzz_write (const char *rel, const void *data, size_t size)
{
  char *path = g_build_filename (nl_fuzz_dir (), rel, NULL);
  g_autofree char *parent = g_path_get_dirname (path);
  GError *error = NULL;
  if (g_mkdir_with_parents (parent, 0700) != 0
      || !g_file_set_contents (path, size ? (const char *) data : "", (gssize) size, &error))
    {
      fprintf (stderr, "nl-fuzz: cannot write %s: %s\n", path, error ? error->message : g_strerror (errno));
      abort ();
    }
  return path;
}

void
nl_fuzz_clear (void)
{
  /* the directory stays the process's until exit */
  nl_test_clear_dir (nl_fuzz_dir ());
}

/* ---- datasets ---- */

#include <math.h>

#include "engine/data/nl-dataset.h"

#define MAX_SAMPLE_FLOATS (16 << 20)
#define SAMPLES_READ 8

static void
check_sample (NlDataset *ds, int64_t i, const float *sample, int64_t numel, const float *label, int64_t n_labels)
{
  const char *what = NULL;
  for (int64_t k = 0; k < n_labels && !what; k++)
    if (ds->n_classes > 0 ? !(label[k] >= 0 && label[k] < ds->n_classes && label[k] == floorf (label[k]))
                          : !isfinite (label[k]))
      what = "label";
  for (int64_t k = 0; k < numel && !what; k++)
    if (!isfinite (sample[k]))
      what = "value";
  if (what)
    {
      fprintf (stderr, "nl-fuzz: %s sample %" G_GINT64_FORMAT " has a bad %s (label %g, %d classes)\n",
               ds->description ? ds->description : "dataset", i, what, label[0], ds->n_classes);
      abort ();
    }
}

void
nl_fuzz_read_samples (NlDataset *ds)
{
  int64_t numel = 1;
  for (int d = 0; d < ds->sample_shape.ndim; d++)
    {
      if (ds->sample_shape.d[d] < 1 || numel > MAX_SAMPLE_FLOATS / ds->sample_shape.d[d])
        return;
      numel *= ds->sample_shape.d[d];
    }
  int64_t n_labels = 1;
  for (int d = 0; d < ds->label_shape.ndim; d++)
    {
      if (ds->label_shape.d[d] < 1 || n_labels > MAX_SAMPLE_FLOATS / ds->label_shape.d[d])
        return;
      n_labels *= ds->label_shape.d[d];
    }
  g_autofree float *sample = g_new (float, numel);
  g_autofree float *label = g_new0 (float, n_labels);
  g_autofree guint8 *bytes = ds->klass->read_u8 ? g_new (guint8, numel) : NULL;
  for (int64_t j = 0; j <= SAMPLES_READ && j < ds->length; j++)
    {
      int64_t i = j < SAMPLES_READ ? j : ds->length - 1;
      g_autoptr (GError) error = NULL;
      if (nl_dataset_get (ds, i, sample, label, &error))
        check_sample (ds, i, sample, numel, label, n_labels);
      if (ds->klass->get_u8)
        ds->klass->get_u8 (ds, i, label);
      g_clear_error (&error);
      if (bytes && ds->klass->read_u8 (ds, i, bytes, label, &error))
        check_sample (ds, i, sample, 0, label, 1);
    }
}
