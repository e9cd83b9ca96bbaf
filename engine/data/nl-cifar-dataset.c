/* nl-cifar-dataset.c — CIFAR-10, binary version: files of 3073-byte records
 * (1 label byte, then 1024 R, 1024 G, 1024 B bytes of a 32x32 image).
 *
 * The records are kept as read, label bytes included, so get_u8 is a
 * pointer into the file data: 150 MB for the 50000 training images and no
 * second copy. */
#include "engine/data/nl-dataset.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#define CIFAR_PIXELS 3072
#define CIFAR_RECORD (1 + CIFAR_PIXELS)
#define CIFAR_CLASSES 10
#define CIFAR_TRAIN_FILES 5
#define CIFAR_SUBDIR "cifar-10-batches-bin" /* what the official tarball unpacks to */

static const char *const cifar_names[] = {
  "airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck", NULL,
};

typedef struct {
  NlDataset base;
  guint8 *records; /* length * CIFAR_RECORD bytes */
} NlCifarDataset;

static gboolean
cifar_get (NlDataset *ds, int64_t i, float *sample, float *label, GError **error)
{
  NlCifarDataset *d = (NlCifarDataset *) ds;
  if (i < 0 || i >= ds->length)
    {
      g_set_error (error, NL_DATA_ERROR, NL_DATA_ERROR_MISMATCH,
                   "sample index %" G_GINT64_FORMAT " is out of range for a dataset of %" G_GINT64_FORMAT,
                   i, ds->length);
      return FALSE;
    }
  const guint8 *r = d->records + i * CIFAR_RECORD;
  *label = r[0];
  for (int k = 0; k < CIFAR_PIXELS; k++)
    sample[k] = (float) r[1 + k] / 255.0f;
  return TRUE;
}

static const guint8 *
cifar_get_u8 (NlDataset *ds, int64_t i, float *label)
{
  NlCifarDataset *d = (NlCifarDataset *) ds;
  if (i < 0 || i >= ds->length)
    return NULL;
  const guint8 *r = d->records + i * CIFAR_RECORD;
  *label = r[0];
  return r + 1;
}

static void
cifar_free (NlDataset *ds)
{
  NlCifarDataset *d = (NlCifarDataset *) ds;
  g_free (d->records);
  g_free (d);
}

static const NlDatasetClass cifar_class = {
  .type_name = "cifar10",
  .get = cifar_get,
  .get_u8 = cifar_get_u8,
  .free = cifar_free,
};

/* Read exactly `size` bytes of an open file into buf. */
static gboolean
read_exact (int fd, const char *path, guint8 *buf, int64_t size, GError **error)
{
  int64_t got = 0;
  while (got < size)
    {
      ssize_t r = read (fd, buf + got, (size_t) MIN (size - got, (int64_t) 1 << 30));
      if (r < 0 && errno == EINTR)
        continue;
      if (r < 0)
        {
          int err = errno;
          g_set_error (error, NL_DATA_ERROR, NL_DATA_ERROR_NOT_FOUND, "cannot read %s: %s", path,
                       g_strerror (err));
          return FALSE;
        }
      if (r == 0)
        {
          g_set_error (error, NL_DATA_ERROR, NL_DATA_ERROR_CORRUPT,
                       "%s is truncated: it shrank to %" G_GINT64_FORMAT " bytes while being read", path, got);
          return FALSE;
        }
      got += r;
    }
  return TRUE;
}

NlDataset *
nl_cifar_dataset_open (const char *dir, gboolean train, GError **error)
{
  g_return_val_if_fail (dir, NULL);
  int n_files = train ? CIFAR_TRAIN_FILES : 1;
  char *names[CIFAR_TRAIN_FILES];
  char *paths[CIFAR_TRAIN_FILES] = { NULL };
  int fds[CIFAR_TRAIN_FILES];
  int64_t sizes[CIFAR_TRAIN_FILES];
  guint8 *records = NULL;
  NlCifarDataset *d = NULL;
  for (int f = 0; f < n_files; f++)
    {
      names[f] = train ? g_strdup_printf ("data_batch_%d.bin", f + 1) : g_strdup ("test_batch.bin");
      fds[f] = -1;
    }

  /* The tarball's own directory is accepted too, decided on the first file
   * so that a missing later batch is reported where the others are. */
  g_autofree char *first = g_build_filename (dir, names[0], NULL);
  g_autofree char *sub = g_build_filename (dir, CIFAR_SUBDIR, NULL);
  g_autofree char *sub_first = g_build_filename (sub, names[0], NULL);
  const char *base = !g_file_test (first, G_FILE_TEST_EXISTS) && g_file_test (sub_first, G_FILE_TEST_EXISTS)
                       ? sub : dir;

  int64_t total = 0;
  for (int f = 0; f < n_files; f++)
    {
      paths[f] = g_build_filename (base, names[f], NULL);
      fds[f] = open (paths[f], O_RDONLY | O_CLOEXEC);
      struct stat st;
      int err = fds[f] < 0 ? errno : fstat (fds[f], &st) < 0 ? errno : S_ISDIR (st.st_mode) ? EISDIR : 0;
      if (err)
        {
          g_set_error (error, NL_DATA_ERROR, NL_DATA_ERROR_NOT_FOUND, "cannot open %s: %s%s", paths[f],
                       g_strerror (err), train ? " (CIFAR-10 training needs data_batch_1.bin .. data_batch_5.bin)" : "");
          goto out;
        }
      sizes[f] = st.st_size;
      if (sizes[f] == 0)
        {
          g_set_error (error, NL_DATA_ERROR, NL_DATA_ERROR_CORRUPT, "%s is empty (no CIFAR-10 records)", paths[f]);
          goto out;
        }
      if (sizes[f] % CIFAR_RECORD != 0)
        {
          int64_t whole = sizes[f] / CIFAR_RECORD;
          g_set_error (error, NL_DATA_ERROR, NL_DATA_ERROR_CORRUPT,
                       "%s is truncated or not a CIFAR-10 batch: %" G_GINT64_FORMAT
                       " bytes is not a whole number of %d-byte records (record %" G_GINT64_FORMAT
                       " at byte %" G_GINT64_FORMAT " is cut short)",
                       paths[f], sizes[f], CIFAR_RECORD, whole, whole * CIFAR_RECORD);
          goto out;
        }
      total += sizes[f];
    }

  records = g_try_malloc (total);
  if (!records)
    {
      g_set_error (error, NL_DATA_ERROR, NL_DATA_ERROR_CORRUPT, "cannot allocate %" G_GINT64_FORMAT
                   " bytes for CIFAR-10 in %s", total, base);
      goto out;
    }
  int64_t at = 0;
  for (int f = 0; f < n_files; f++)
    {
      if (!read_exact (fds[f], paths[f], records + at, sizes[f], error))
        goto out;
      /* A label byte >= 10 means this is not CIFAR-10 (CIFAR-100's files
       * have 2 label bytes, so their records misalign right away). */
      for (int64_t r = 0; r < sizes[f] / CIFAR_RECORD; r++)
        {
          guint8 label = records[at + r * CIFAR_RECORD];
          if (label >= CIFAR_CLASSES)
            {
              g_set_error (error, NL_DATA_ERROR, NL_DATA_ERROR_CORRUPT,
                           "%s: record %" G_GINT64_FORMAT " at byte %" G_GINT64_FORMAT
                           " has label %d (CIFAR-10 labels are 0..9)",
                           paths[f], r, r * CIFAR_RECORD, label);
              goto out;
            }
        }
      at += sizes[f];
    }

  d = g_new0 (NlCifarDataset, 1);
  d->base.klass = &cifar_class;
  d->base.length = total / CIFAR_RECORD;
  d->base.sample_shape = nl_shape_of (3, (int64_t) 3, (int64_t) 32, (int64_t) 32);
  d->base.n_classes = CIFAR_CLASSES;
  d->base.class_names = g_strdupv ((char **) cifar_names);
  d->base.description = g_strdup_printf ("CIFAR-10 %s (%" G_GINT64_FORMAT " images) from %s",
                                         train ? "train" : "test", d->base.length, base);
  d->records = g_steal_pointer (&records);

out:
  g_free (records);
  for (int f = 0; f < n_files; f++)
    {
      if (fds[f] >= 0)
        close (fds[f]);
      g_free (paths[f]);
      g_free (names[f]);
    }
  return d ? &d->base : NULL;
}
