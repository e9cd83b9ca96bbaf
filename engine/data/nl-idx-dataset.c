/* nl-idx-dataset.c — MNIST-style IDX files (images idx3 uint8, labels idx1
 * uint8), raw or gzipped.
 *
 * Images stay uint8 in memory (47 MB for 60000 28x28 images rather than
 * 188 MB of floats); the batcher scales them through a lookup table. Every
 * read is bounded by what the file really holds, so no header value can make
 * us allocate or loop without limit. */
#include "engine/data/nl-dataset.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define IDX_IMAGES_MAGIC 0x00000803u /* uint8, 3 dims */
#define IDX_LABELS_MAGIC 0x00000801u /* uint8, 1 dim */
/* Sanity bounds on header values: far above any real dataset, far below
 * anything that could overflow. */
#define IDX_MAX_BYTES (G_GINT64_CONSTANT (1) << 40)
/* Start size of the buffer when the file cannot tell us its decompressed
 * size; it doubles up to what the header declares. */
#define IDX_GROW_START (64u << 20)
/* deflate's best ratio (258-byte matches at 2 bits each, 1032:1):
 * no gzip file inflates to more than this times its size. */
#define IDX_GZ_MAX_RATIO 1032

typedef struct {
  char *path; /* the file really opened, for messages */
  int fd;
  gzFile gz;
  int64_t total_hint; /* decompressed file size (mod 2^32 for gzip), or -1 */
  int64_t gz_size;    /* size of the gzip file, or -1 (a pipe, or not gzip) */
  gboolean hint_exact;   /* raw file: total_hint is its exact size */
  gboolean gz_truncated; /* the gzip stream ended early */
} IdxFile;

static void
idx_file_close (IdxFile *f)
{
  if (f->gz)
    gzclose_r (f->gz); /* closes fd too */
  else if (f->fd >= 0)
    close (f->fd);
  f->gz = NULL;
  f->fd = -1;
  g_clear_pointer (&f->path, g_free);
}

static gboolean
idx_file_open (IdxFile *f, const char *path, GError **error)
{
  memset (f, 0, sizeof *f);
  f->fd = -1;
  f->total_hint = -1;
  f->gz_size = -1;

  /* NAME.gz wins over NAME, as the dataset directories ship gz files. */
  gboolean gz = g_str_has_suffix (path, ".gz");
  g_autofree char *gz_path = gz ? NULL : g_strconcat (path, ".gz", NULL);
  if (!gz && g_file_test (gz_path, G_FILE_TEST_EXISTS))
    {
      gz = TRUE;
      f->path = g_steal_pointer (&gz_path);
    }
  else
    f->path = g_strdup (path);

  f->fd = open (f->path, O_RDONLY | O_CLOEXEC);
  struct stat st;
  int err = f->fd < 0 ? errno : fstat (f->fd, &st) < 0 ? errno : S_ISDIR (st.st_mode) ? EISDIR : 0;
  if (err)
    {
      g_set_error (error, NL_DATA_ERROR, NL_DATA_ERROR_NOT_FOUND, "cannot open %s: %s%s%s%s",
                   f->path, g_strerror (err), gz_path ? " (nor " : "", gz_path ? gz_path : "",
                   gz_path ? ")" : "");
      idx_file_close (f);
      return FALSE;
    }

  /* Regular files get a size hint; a pipe has none to go by. */
  gboolean regular = S_ISREG (st.st_mode);
  guint8 head[2] = { 0, 0 };
  gboolean is_gzip = regular && gz && st.st_size >= 18 && pread (f->fd, head, 2, 0) == 2
                     && head[0] == 0x1f && head[1] == 0x8b;
  if (is_gzip)
    {
      /* The gzip trailer holds the decompressed size mod 2^32: with it we
       * can allocate the exact buffer instead of growing one. */
      guint8 t[4];
      f->gz_size = st.st_size;
      if (pread (f->fd, t, 4, st.st_size - 4) == 4)
        f->total_hint = (int64_t) ((guint32) t[0] | (guint32) t[1] << 8 | (guint32) t[2] << 16
                                   | (guint32) t[3] << 24);
    }
  else if (regular)
    {
      /* zlib reads non-gzip data transparently: the size is the file's. */
      f->total_hint = st.st_size;
      f->hint_exact = TRUE;
    }

  if (gz)
    {
      f->gz = gzdopen (f->fd, "rb");
      if (!f->gz)
        {
          g_set_error (error, NL_DATA_ERROR, NL_DATA_ERROR_NOT_FOUND, "cannot open %s: %s",
                       f->path, "zlib could not allocate its state");
          idx_file_close (f);
          return FALSE;
        }
      gzbuffer (f->gz, 1u << 20);
    }
  return TRUE;
}

/* Read up to n bytes: fewer only at the end of the file; -1 with error set
 * when the data is unreadable or the gzip stream is corrupt. */
static int64_t
idx_file_read (IdxFile *f, void *buf, int64_t n, GError **error)
{
  int64_t got = 0;
  while (got < n)
    {
      /* gzread and read take at most an int / ssize_t worth; 1 GiB chunks. */
      int64_t want = MIN (n - got, (int64_t) 1 << 30);
      int64_t r;
      if (f->gz)
        {
          r = gzread (f->gz, (guint8 *) buf + got, (unsigned) want);
          if (r < 0)
            {
              int errnum;
              const char *msg = gzerror (f->gz, &errnum);
              g_set_error (error, NL_DATA_ERROR, NL_DATA_ERROR_CORRUPT, "%s is not a valid gzip file: %s",
                           f->path, errnum == Z_ERRNO ? g_strerror (errno) : msg);
              return -1;
            }
        }
      else
        {
          r = read (f->fd, (guint8 *) buf + got, (size_t) want);
          if (r < 0 && errno == EINTR)
            continue;
          if (r < 0)
            {
              int err = errno;
              g_set_error (error, NL_DATA_ERROR, NL_DATA_ERROR_NOT_FOUND, "cannot read %s: %s",
                           f->path, g_strerror (err));
              return -1;
            }
        }
      if (r == 0)
        break;
      got += r;
    }
  if (got < n && f->gz)
    {
      int errnum;
      gzerror (f->gz, &errnum);
      f->gz_truncated = errnum == Z_BUF_ERROR;
    }
  return got;
}

static guint32
be32 (const guint8 *p)
{
  return (guint32) p[0] << 24 | (guint32) p[1] << 16 | (guint32) p[2] << 8 | p[3];
}

static gboolean
truncated (IdxFile *f, const char *what, int64_t expected, int64_t found, GError **error)
{
  g_set_error (error, NL_DATA_ERROR, NL_DATA_ERROR_CORRUPT,
               "%s is truncated: expected %" G_GINT64_FORMAT " bytes of %s, found %" G_GINT64_FORMAT "%s",
               f->path, expected, what, found, f->gz_truncated ? " (the gzip stream ends early)" : "");
  return FALSE;
}

/* Read the magic number and the dims that follow it. */
static gboolean
read_header (IdxFile *f, guint32 magic, const char *kind, int ndims, guint32 *dims, GError **error)
{
  guint8 h[16];
  int64_t len = 4 + 4 * (int64_t) ndims;
  int64_t got = idx_file_read (f, h, len, error);
  if (got < 0)
    return FALSE;
  if (got >= 4 && be32 (h) != magic)
    {
      g_set_error (error, NL_DATA_ERROR, NL_DATA_ERROR_CORRUPT,
                   "%s is not an IDX %s file (magic 0x%08x, expected 0x%08x)", f->path, kind, be32 (h), magic);
      return FALSE;
    }
  if (got < len)
    {
      g_set_error (error, NL_DATA_ERROR, NL_DATA_ERROR_CORRUPT,
                   "%s is truncated: expected a %" G_GINT64_FORMAT "-byte IDX %s header, found %" G_GINT64_FORMAT
                   " bytes%s", f->path, len, kind, got, f->gz_truncated ? " (the gzip stream ends early)" : "");
      return FALSE;
    }
  for (int i = 0; i < ndims; i++)
    dims[i] = be32 (h + 4 + 4 * i);
  return TRUE;
}

/* Read exactly `expected` bytes of body after a header of header_len bytes,
 * and make sure nothing follows (which also lets zlib verify the CRC). */
static guint8 *
read_body (IdxFile *f, int64_t header_len, int64_t expected, const char *what, GError **error)
{
  int64_t alloc = MIN (expected, (int64_t) IDX_GROW_START);
  /* No gzip file inflates past this: the buffer starts no bigger, and the
   * trailer (four bytes anyone can write) sizes it only within it. */
  int64_t can_hold = f->gz_size >= 0 ? f->gz_size * IDX_GZ_MAX_RATIO : G_MAXINT64;
  if (alloc > can_hold - header_len)
    alloc = MAX (can_hold - header_len, 1);
  if (f->hint_exact)
    {
      int64_t have = f->total_hint - header_len;
      if (have < expected)
        {
          truncated (f, what, expected, have, error);
          return NULL;
        }
      alloc = expected;
    }
  else if (f->total_hint >= 0 && f->total_hint == ((header_len + expected) & 0xffffffff)
           && header_len + expected <= can_hold)
    alloc = expected;

  guint8 *buf = g_try_malloc (MAX (alloc, 1));
  if (!buf)
    goto nomem;
  int64_t got = 0;
  for (;;)
    {
      int64_t r = idx_file_read (f, buf + got, alloc - got, error);
      if (r < 0)
        goto fail;
      got += r;
      if (got < alloc)
        {
          truncated (f, what, expected, got, error);
          goto fail;
        }
      if (got == expected)
        break;
      /* Only grow once the data has proven to be there. */
      alloc = MIN (expected, alloc * 2);
      guint8 *nbuf = g_try_realloc (buf, alloc);
      if (!nbuf)
        goto nomem;
      buf = nbuf;
    }

  guint8 probe;
  int64_t extra = idx_file_read (f, &probe, 1, error);
  if (extra < 0)
    goto fail;
  if (extra > 0)
    {
      g_set_error (error, NL_DATA_ERROR, NL_DATA_ERROR_CORRUPT,
                   "%s has more data than its header declares (%" G_GINT64_FORMAT " bytes of %s)",
                   f->path, expected, what);
      goto fail;
    }
  if (f->gz_truncated)
    {
      g_set_error (error, NL_DATA_ERROR, NL_DATA_ERROR_CORRUPT,
                   "%s is truncated: the gzip stream ends before its trailer", f->path);
      goto fail;
    }
  return buf;

nomem:
  g_set_error (error, NL_DATA_ERROR, NL_DATA_ERROR_CORRUPT,
               "cannot allocate %" G_GINT64_FORMAT " bytes for %s of %s", alloc, what, f->path);
fail:
  g_free (buf);
  return NULL;
}

typedef struct {
  NlDataset base;
  guint8 *images;
  guint8 *labels;
  int64_t sample_numel;
} NlIdxDataset;

static gboolean
idx_get (NlDataset *ds, int64_t i, float *sample, float *label, GError **error)
{
  NlIdxDataset *d = (NlIdxDataset *) ds;
  if (i < 0 || i >= ds->length)
    {
      g_set_error (error, NL_DATA_ERROR, NL_DATA_ERROR_MISMATCH,
                   "sample index %" G_GINT64_FORMAT " is out of range for a dataset of %" G_GINT64_FORMAT,
                   i, ds->length);
      return FALSE;
    }
  const guint8 *p = d->images + i * d->sample_numel;
  for (int64_t k = 0; k < d->sample_numel; k++)
    sample[k] = (float) p[k] / 255.0f;
  *label = d->labels[i];
  return TRUE;
}

static const guint8 *
idx_get_u8 (NlDataset *ds, int64_t i, float *label)
{
  NlIdxDataset *d = (NlIdxDataset *) ds;
  if (i < 0 || i >= ds->length)
    return NULL;
  *label = d->labels[i];
  return d->images + i * d->sample_numel;
}

static void
idx_free (NlDataset *ds)
{
  NlIdxDataset *d = (NlIdxDataset *) ds;
  g_free (d->images);
  g_free (d->labels);
  g_free (d);
}

static const NlDatasetClass idx_class = {
  .type_name = "idx",
  .get = idx_get,
  .get_u8 = idx_get_u8,
  .free = idx_free,
};

NlDataset *
nl_idx_dataset_open_full (const char *images_path, const char *labels_path, int n_classes,
                          const char *const *class_names, GError **error)
{
  g_return_val_if_fail (images_path && labels_path && n_classes >= 0, NULL);
  IdxFile fi, fl;
  guint32 idims[3], ldims[1];
  guint8 *images = NULL, *labels = NULL;
  NlIdxDataset *d = NULL;

  memset (&fl, 0, sizeof fl);
  fl.fd = -1;
  if (!idx_file_open (&fi, images_path, error))
    return NULL;
  if (!read_header (&fi, IDX_IMAGES_MAGIC, "image", 3, idims, error))
    goto out;

  int64_t n = idims[0], rows = idims[1], cols = idims[2];
  if (n == 0 || rows == 0 || cols == 0)
    {
      g_set_error (error, NL_DATA_ERROR, NL_DATA_ERROR_CORRUPT,
                   "%s holds no image data (%" G_GINT64_FORMAT " images of %" G_GINT64_FORMAT "x%" G_GINT64_FORMAT ")",
                   fi.path, n, rows, cols);
      goto out;
    }
  /* Each factor is < 2^32, so rows * cols fits in 64 unsigned bits; the
   * product with n is checked before it is formed. */
  guint64 numel_u = (guint64) rows * (guint64) cols;
  if (numel_u > (guint64) (IDX_MAX_BYTES / n))
    {
      g_set_error (error, NL_DATA_ERROR, NL_DATA_ERROR_CORRUPT,
                   "%s declares an impossible size (%" G_GINT64_FORMAT " images of %" G_GINT64_FORMAT
                   "x%" G_GINT64_FORMAT ")", fi.path, n, rows, cols);
      goto out;
    }
  int64_t numel = (int64_t) numel_u;

  if (!idx_file_open (&fl, labels_path, error))
    goto out;
  if (!read_header (&fl, IDX_LABELS_MAGIC, "label", 1, ldims, error))
    goto out;
  if (ldims[0] != n)
    {
      g_set_error (error, NL_DATA_ERROR, NL_DATA_ERROR_MISMATCH,
                   "%s has %" G_GINT64_FORMAT " images but %s has %u labels", fi.path, n, fl.path, ldims[0]);
      goto out;
    }

  images = read_body (&fi, 16, n * numel, "image data", error);
  if (!images)
    goto out;
  labels = read_body (&fl, 8, n, "label data", error);
  if (!labels)
    goto out;

  int max_label = 0;
  for (int64_t i = 0; i < n; i++)
    {
      if (n_classes > 0 && labels[i] >= n_classes)
        {
          g_set_error (error, NL_DATA_ERROR, NL_DATA_ERROR_CORRUPT,
                       "%s: label %d of sample %" G_GINT64_FORMAT " is out of range for %d classes",
                       fl.path, labels[i], i, n_classes);
          goto out;
        }
      max_label = MAX (max_label, labels[i]);
    }

  d = g_new0 (NlIdxDataset, 1);
  d->base.klass = &idx_class;
  d->base.length = n;
  d->base.sample_shape = nl_shape_of (3, (int64_t) 1, rows, cols);
  d->base.n_classes = n_classes > 0 ? n_classes : max_label + 1;
  if (class_names)
    {
      d->base.class_names = g_new0 (char *, d->base.n_classes + 1);
      for (int c = 0; c < d->base.n_classes && class_names[c]; c++)
        d->base.class_names[c] = g_strdup (class_names[c]);
    }
  d->base.description = g_strdup_printf ("IDX %s (%" G_GINT64_FORMAT " images)", fi.path, n);
  d->images = g_steal_pointer (&images);
  d->labels = g_steal_pointer (&labels);
  d->sample_numel = numel;

out:
  g_free (images);
  g_free (labels);
  idx_file_close (&fi);
  idx_file_close (&fl);
  return d ? &d->base : NULL;
}

NlDataset *
nl_idx_dataset_open (const char *images_path, const char *labels_path, GError **error)
{
  return nl_idx_dataset_open_full (images_path, labels_path, 0, NULL, error);
}
