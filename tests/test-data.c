/* test-data.c — the IDX reader (raw, gzip, bad input, fuzzing), dataset
 * specs, the real Fashion-MNIST files when installed, and the batcher. */
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "engine/data/nl-batcher.h"
#include "engine/data/nl-dataset.h"
#include "nl-test-util.h"

#define FASHION_DIR "/usr/share/datasets/fashion-mnist"

static char *tmp_dir;

/* ---- writing test files ---- */

static void
put_be32 (GByteArray *a, guint32 v)
{
  guint8 b[4] = { v >> 24, v >> 16, v >> 8, v };
  g_byte_array_append (a, b, 4);
}

/* An IDX file's bytes: magic, dims, then body. */
static GByteArray *
idx_bytes (guint32 magic, int ndims, const guint32 *dims, const guint8 *body, size_t len)
{
  GByteArray *a = g_byte_array_new ();
  put_be32 (a, magic);
  for (int i = 0; i < ndims; i++)
    put_be32 (a, dims[i]);
  g_byte_array_append (a, body, len);
  return a;
}

static void
write_raw (const char *path, const guint8 *data, size_t len)
{
  g_autoptr (GError) error = NULL;
  g_file_set_contents (path, (const char *) data, len, &error);
  g_assert_no_error (error);
}

static void
write_gz (const char *path, const guint8 *data, size_t len)
{
  gzFile f = gzopen (path, "wb6");
  g_assert_nonnull (f);
  if (len > 0)
    g_assert_cmpint (gzwrite (f, data, (unsigned) len), ==, (int) len);
  g_assert_cmpint (gzclose (f), ==, Z_OK);
}

static GBytes *
read_all (const char *path)
{
  g_autoptr (GError) error = NULL;
  char *buf;
  gsize len;
  g_file_get_contents (path, &buf, &len, &error);
  g_assert_no_error (error);
  return g_bytes_new_take (buf, len);
}

/* The reference pixel pattern: independent of anything in the reader. */
static guint8
pix (int64_t i, int64_t k)
{
  return (guint8) ((i * 31 + k * 7 + (i * k) % 5) % 256);
}

/* Write NAME (raw) or NAME.gz holding n images of rows x cols with pix(),
 * and labels[i]. */
static void
write_pair (const char *images, const char *labels, guint32 n, guint32 rows, guint32 cols,
            const guint8 *label_values, gboolean gz)
{
  g_autofree guint8 *body = g_malloc (MAX ((size_t) n * rows * cols, 1));
  for (guint32 i = 0; i < n; i++)
    for (guint32 k = 0; k < rows * cols; k++)
      body[(size_t) i * rows * cols + k] = pix (i, k);
  guint32 idims[3] = { n, rows, cols };
  g_autoptr (GByteArray) ib = idx_bytes (0x803, 3, idims, body, (size_t) n * rows * cols);
  guint32 ldims[1] = { n };
  g_autoptr (GByteArray) lb = idx_bytes (0x801, 1, ldims, label_values, n);
  if (gz)
    {
      g_autofree char *ig = g_strconcat (images, ".gz", NULL);
      g_autofree char *lg = g_strconcat (labels, ".gz", NULL);
      write_gz (ig, ib->data, ib->len);
      write_gz (lg, lb->data, lb->len);
    }
  else
    {
      write_raw (images, ib->data, ib->len);
      write_raw (labels, lb->data, lb->len);
    }
}


/* A fresh subdirectory per test so files never leak between tests. */
static char *
fresh_dir (const char *name)
{
  char *d = g_build_filename (tmp_dir, name, NULL);
  nl_test_remove_tree (d);
  g_assert_cmpint (g_mkdir (d, 0700), ==, 0);
  return d;
}

/* ---- reading small files ---- */

static void
check_pattern (NlDataset *ds, guint32 n, guint32 rows, guint32 cols, const guint8 *labels)
{
  g_assert_cmpint (ds->length, ==, n);
  g_assert_cmpint (ds->sample_shape.ndim, ==, 3);
  g_assert_cmpint (ds->sample_shape.d[0], ==, 1);
  g_assert_cmpint (ds->sample_shape.d[1], ==, rows);
  g_assert_cmpint (ds->sample_shape.d[2], ==, cols);
  int64_t numel = (int64_t) rows * cols;
  g_autofree float *s = g_new (float, numel);
  g_autofree float *want = g_new (float, numel);
  for (guint32 i = 0; i < n; i++)
    {
      float label = -1;
      g_autoptr (GError) error = NULL;
      g_assert_true (ds->klass->get (ds, i, s, &label, &error));
      g_assert_no_error (error);
      for (int64_t k = 0; k < numel; k++)
        want[k] = pix (i, k) / 255.0f;
      nl_test_assert_close (s, want, numel, 1e-7, 0);
      g_assert_cmpfloat (label, ==, labels[i]);
      g_assert_nonnull (ds->klass->get_u8);
      float l2 = -1;
      const guint8 *u = ds->klass->get_u8 (ds, i, &l2);
      g_assert_nonnull (u);
      for (int64_t k = 0; k < numel; k++)
        g_assert_cmpuint (u[k], ==, pix (i, k));
      g_assert_cmpfloat (l2, ==, labels[i]);
    }
  /* Out of range is an error, not a crash. */
  float label;
  g_autoptr (GError) error = NULL;
  g_assert_false (nl_dataset_get (ds, n, s, &label, &error));
  g_assert_error (error, NL_DATA_ERROR, NL_DATA_ERROR_MISMATCH);
  g_clear_error (&error);
  g_assert_false (ds->klass->get (ds, -1, s, &label, &error));
  g_assert_nonnull (error);
  g_assert_null (ds->klass->get_u8 (ds, n, &label));
}

static void
test_idx_raw_and_gz (void)
{
  for (int gz = 0; gz < 2; gz++)
    {
      g_autofree char *dir = fresh_dir (gz ? "small-gz" : "small-raw");
      g_autofree char *images = g_build_filename (dir, "img", NULL);
      g_autofree char *labels = g_build_filename (dir, "lab", NULL);
      guint8 lv[37];
      for (int i = 0; i < 37; i++)
        lv[i] = (i * 3) % 7; /* max label 6 */
      write_pair (images, labels, 37, 5, 4, lv, gz);

      g_autoptr (GError) error = NULL;
      g_autoptr (NlDataset) ds = nl_idx_dataset_open (images, labels, &error);
      g_assert_no_error (error);
      g_assert_nonnull (ds);
      check_pattern (ds, 37, 5, 4, lv);
      g_assert_cmpint (ds->n_classes, ==, 7);
      g_assert_null (ds->class_names);
      g_assert_nonnull (ds->description);
      g_assert_cmpstr (ds->klass->type_name, ==, "idx");

      /* An explicit .gz path works too. */
      if (gz)
        {
          g_autofree char *ig = g_strconcat (images, ".gz", NULL);
          g_autofree char *lg = g_strconcat (labels, ".gz", NULL);
          g_autoptr (NlDataset) ds2 = nl_idx_dataset_open (ig, lg, &error);
          g_assert_no_error (error);
          check_pattern (ds2, 37, 5, 4, lv);
        }
    }
}

/* NAME.gz is preferred over NAME when both exist. */
static void
test_idx_gz_preferred (void)
{
  g_autofree char *dir = fresh_dir ("both");
  g_autofree char *images = g_build_filename (dir, "img", NULL);
  g_autofree char *labels = g_build_filename (dir, "lab", NULL);
  guint8 lv_raw[3] = { 1, 1, 1 }, lv_gz[9] = { 0, 1, 2, 3, 4, 5, 6, 7, 8 };
  write_pair (images, labels, 3, 2, 2, lv_raw, FALSE);
  write_pair (images, labels, 9, 3, 3, lv_gz, TRUE);
  g_autoptr (GError) error = NULL;
  g_autoptr (NlDataset) ds = nl_idx_dataset_open (images, labels, &error);
  g_assert_no_error (error);
  check_pattern (ds, 9, 3, 3, lv_gz);
}

static void
test_spec (void)
{
  g_autofree char *dir = fresh_dir ("spec");
  g_autofree char *ti = g_build_filename (dir, "train-images-idx3-ubyte", NULL);
  g_autofree char *tl = g_build_filename (dir, "train-labels-idx1-ubyte", NULL);
  g_autofree char *vi = g_build_filename (dir, "t10k-images-idx3-ubyte", NULL);
  g_autofree char *vl = g_build_filename (dir, "t10k-labels-idx1-ubyte", NULL);
  guint8 lt[12], lv[5];
  for (int i = 0; i < 12; i++)
    lt[i] = (19 - i) % 10;
  for (int i = 0; i < 5; i++)
    lv[i] = i * 2;
  write_pair (ti, tl, 12, 6, 7, lt, TRUE); /* train gzipped */
  write_pair (vi, vl, 5, 6, 7, lv, FALSE); /* test raw */

  g_autoptr (GError) error = NULL;
  g_autofree char *spec = g_strdup_printf ("mnist:%s", dir);
  g_autoptr (NlDataset) tr = nl_dataset_open (spec, TRUE, &error);
  g_assert_no_error (error);
  check_pattern (tr, 12, 6, 7, lt);
  g_assert_cmpint (tr->n_classes, ==, 10);
  g_assert_nonnull (tr->class_names);
  g_assert_cmpuint (g_strv_length (tr->class_names), ==, 10);
  for (int c = 0; c < 10; c++)
    {
      char want[2] = { (char) ('0' + c), 0 };
      g_assert_cmpstr (tr->class_names[c], ==, want);
    }
  g_autofree char *desc = g_strdup_printf ("MNIST train (12 images) from %s", dir);
  g_assert_cmpstr (tr->description, ==, desc);

  g_autoptr (NlDataset) te = nl_dataset_open (spec, FALSE, &error);
  g_assert_no_error (error);
  check_pattern (te, 5, 6, 7, lv);
  g_autofree char *desc2 = g_strdup_printf ("MNIST test (5 images) from %s", dir);
  g_assert_cmpstr (te->description, ==, desc2);

  g_autofree char *fspec = g_strdup_printf ("fashion-mnist:%s", dir);
  g_autoptr (NlDataset) fm = nl_dataset_open (fspec, TRUE, &error);
  g_assert_no_error (error);
  static const char *const fnames[] = { "T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
                                        "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot" };
  g_assert_cmpuint (g_strv_length (fm->class_names), ==, 10);
  for (int c = 0; c < 10; c++)
    g_assert_cmpstr (fm->class_names[c], ==, fnames[c]);
  g_autofree char *desc3 = g_strdup_printf ("Fashion-MNIST train (12 images) from %s", dir);
  g_assert_cmpstr (fm->description, ==, desc3);

  /* Unknown kinds name the known ones. */
  NlDataset *bad = nl_dataset_open ("imagenet:/tmp", TRUE, &error);
  g_assert_null (bad);
  g_assert_error (error, NL_DATA_ERROR, NL_DATA_ERROR_SPEC);
  g_assert_nonnull (strstr (error->message, "imagenet"));
  g_assert_nonnull (strstr (error->message, "cifar10"));
  g_assert_nonnull (strstr (error->message, "fashion-mnist"));
  g_assert_nonnull (strstr (error->message, "mnist"));
  g_clear_error (&error);
  g_assert_null (nl_dataset_open ("", TRUE, &error));
  g_assert_error (error, NL_DATA_ERROR, NL_DATA_ERROR_SPEC);
  g_clear_error (&error);

  /* A directory without the files: NOT_FOUND naming the file. */
  g_autofree char *empty = fresh_dir ("spec-empty");
  g_autofree char *espec = g_strdup_printf ("mnist:%s", empty);
  g_assert_null (nl_dataset_open (espec, TRUE, &error));
  g_assert_error (error, NL_DATA_ERROR, NL_DATA_ERROR_NOT_FOUND);
  g_autofree char *want = g_strdup_printf ("cannot open %s/train-images-idx3-ubyte: ", empty);
  g_assert_true (g_str_has_prefix (error->message, want));
}

/* ---- bad input ---- */

/* Open images/labels and expect an error of `code` whose message contains
 * `want` (with %I and %L replaced by the images / labels file names). */
static void
expect_error (const char *images, const char *labels, int n_classes, int code, const char *want)
{
  g_autoptr (GError) error = NULL;
  NlDataset *ds = nl_idx_dataset_open_full (images, labels, n_classes, NULL, &error);
  g_assert_null (ds);
  g_assert_nonnull (error);
  g_autoptr (GString) w = g_string_new (want);
  g_string_replace (w, "%I", images, 0);
  g_string_replace (w, "%L", labels, 0);
  if (!g_error_matches (error, NL_DATA_ERROR, code) || !strstr (error->message, w->str))
    g_error ("expected error %d containing \"%s\", got %d: %s", code, w->str, error->code, error->message);
}

static void
test_bad_input (void)
{
  g_autofree char *dir = fresh_dir ("bad");
  g_autofree char *gi = g_build_filename (dir, "good-img", NULL);
  g_autofree char *gl = g_build_filename (dir, "good-lab", NULL);
  guint8 lv[10] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9 };
  write_pair (gi, gl, 10, 4, 4, lv, FALSE);
  g_autoptr (GBytes) good_img = read_all (gi);
  const guint8 *gid = g_bytes_get_data (good_img, NULL);
  g_autofree char *p = g_build_filename (dir, "x", NULL);
  g_autofree char *pgz = g_build_filename (dir, "y.gz", NULL);

  /* Missing file. */
  g_autofree char *missing = g_build_filename (dir, "no-such-file", NULL);
  expect_error (missing, gl, 0, NL_DATA_ERROR_NOT_FOUND, "cannot open %I: ");
  expect_error (gi, missing, 0, NL_DATA_ERROR_NOT_FOUND, "cannot open %L: ");
  /* A directory is not a file. */
  expect_error (dir, gl, 0, NL_DATA_ERROR_NOT_FOUND, "cannot open %I: ");

  /* Truncated body, raw and gzipped (a complete gzip stream of too little
   * data), and a gzip stream that is itself cut short. */
  write_raw (p, gid, 16 + 100);
  expect_error (p, gl, 0, NL_DATA_ERROR_CORRUPT,
                "%I is truncated: expected 160 bytes of image data, found 100");
  write_gz (pgz, gid, 16 + 100);
  expect_error (pgz, gl, 0, NL_DATA_ERROR_CORRUPT,
                "%I is truncated: expected 160 bytes of image data, found 100");
  {
    g_autofree char *ggz = g_build_filename (dir, "good.gz", NULL);
    write_gz (ggz, gid, g_bytes_get_size (good_img));
    g_autoptr (GBytes) gzb = read_all (ggz);
    const guint8 *z = g_bytes_get_data (gzb, NULL);
    size_t zlen = g_bytes_get_size (gzb);
    /* Cut inside the deflate data. */
    write_raw (pgz, z, zlen / 2);
    expect_error (pgz, gl, 0, NL_DATA_ERROR_CORRUPT, "%I is truncated");
    /* Cut inside the trailer: all data is there, the CRC is not. */
    write_raw (pgz, z, zlen - 3);
    expect_error (pgz, gl, 0, NL_DATA_ERROR_CORRUPT, "%I is truncated");
    /* A wrong CRC: corrupt gzip. */
    g_autofree guint8 *bad = g_memdup2 (z, zlen);
    bad[zlen - 8] ^= 0x5a;
    write_raw (pgz, bad, zlen);
    expect_error (pgz, gl, 0, NL_DATA_ERROR_CORRUPT, "%I is not a valid gzip file");
    /* A gzip header followed by garbage. */
    guint8 junk[64] = { 0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3 };
    for (int i = 10; i < 64; i++)
      junk[i] = (guint8) (i * 37 + 11);
    junk[10] = 0xff; /* reserved block type 3: always invalid deflate */
    write_raw (pgz, junk, sizeof junk);
    expect_error (pgz, gl, 0, NL_DATA_ERROR_CORRUPT, "%I is not a valid gzip file");
  }

  /* A gzip trailer that agrees with a lying header: 16 bytes declaring
   * 65536 images of 1024 x 1024 (2^36 + 16 bytes, 16 mod 2^32, the size
   * the trailer gives) made a file of a few dozen bytes ask for 64 GiB;
   * now it gets what it could hold (a 1032:1 deflate) and one error. */
  {
    g_autofree char *img = g_build_filename (dir, "65536-img", NULL);
    g_autofree char *lab = g_build_filename (dir, "65536-lab", NULL);
    g_autoptr (GByteArray) h = g_byte_array_new ();
    /* 65536 labels and 65536 images of 1 x 1, raw and true */
    put_be32 (h, 0x801);
    put_be32 (h, 65536);
    g_byte_array_set_size (h, 8 + 65536);
    memset (h->data + 8, 0, 65536);
    write_raw (lab, h->data, h->len);
    g_byte_array_set_size (h, 0);
    put_be32 (h, 0x803);
    put_be32 (h, 65536);
    put_be32 (h, 1);
    put_be32 (h, 1);
    g_byte_array_set_size (h, 16 + 65536);
    memset (h->data + 16, 0, 65536);
    write_raw (img, h->data, h->len);
    /* the images' header alone, gzipped, claiming 1024 x 1024 each */
    g_byte_array_set_size (h, 0);
    put_be32 (h, 0x803);
    put_be32 (h, 65536);
    put_be32 (h, 1024);
    put_be32 (h, 1024);
    write_gz (pgz, h->data, h->len);
    expect_error (pgz, lab, 0, NL_DATA_ERROR_CORRUPT,
                  "%I is truncated: expected 68719476736 bytes of image data, found 0");
    /* the labels' header alone, gzipped: 65536 declared */
    g_byte_array_set_size (h, 0);
    put_be32 (h, 0x801);
    put_be32 (h, 65536);
    write_gz (pgz, h->data, h->len);
    expect_error (img, pgz, 0, NL_DATA_ERROR_CORRUPT,
                  "%L is truncated: expected 65536 bytes of label data, found 0");
  }

  /* Bad magic numbers: a labels file given as images, garbage, and the
   * reverse. */
  g_autoptr (GBytes) good_lab = read_all (gl);
  write_raw (p, g_bytes_get_data (good_lab, NULL), g_bytes_get_size (good_lab));
  expect_error (p, gl, 0, NL_DATA_ERROR_CORRUPT, "%I is not an IDX image file (magic 0x00000801");
  guint8 garbage[40] = { 0x12, 0x34, 0x56, 0x78 };
  write_raw (p, garbage, sizeof garbage);
  expect_error (p, gl, 0, NL_DATA_ERROR_CORRUPT, "%I is not an IDX image file (magic 0x12345678");
  write_gz (pgz, garbage, sizeof garbage);
  expect_error (pgz, gl, 0, NL_DATA_ERROR_CORRUPT, "%I is not an IDX image file (magic 0x12345678");
  expect_error (gi, gi, 0, NL_DATA_ERROR_CORRUPT, "%L is not an IDX label file (magic 0x00000803");

  /* Empty and short headers. */
  write_raw (p, gid, 0);
  expect_error (p, gl, 0, NL_DATA_ERROR_CORRUPT, "%I is truncated: expected a 16-byte IDX image header, found 0");
  write_raw (p, gid, 9);
  expect_error (p, gl, 0, NL_DATA_ERROR_CORRUPT, "%I is truncated: expected a 16-byte IDX image header, found 9");

  /* Count mismatch. */
  {
    g_autofree char *mi = g_build_filename (dir, "m-img", NULL);
    g_autofree char *ml = g_build_filename (dir, "m-lab", NULL);
    write_pair (mi, ml, 6, 2, 2, lv, FALSE);
    g_autofree char *ml5 = g_build_filename (dir, "m-lab5", NULL);
    guint32 d5[1] = { 5 };
    g_autoptr (GByteArray) l5 = idx_bytes (0x801, 1, d5, lv, 5);
    write_raw (ml5, l5->data, l5->len);
    expect_error (mi, ml5, 0, NL_DATA_ERROR_MISMATCH, "%I has 6 images but %L has 5 labels");
  }

  /* Labels out of range for the class count (through a spec, as users
   * meet it). */
  {
    g_autofree char *sd = fresh_dir ("bad-labels");
    g_autofree char *ti = g_build_filename (sd, "train-images-idx3-ubyte", NULL);
    g_autofree char *tl = g_build_filename (sd, "train-labels-idx1-ubyte", NULL);
    guint8 bl[6] = { 1, 2, 3, 10, 4, 5 };
    write_pair (ti, tl, 6, 2, 2, bl, FALSE);
    g_autoptr (GError) error = NULL;
    g_autofree char *spec = g_strdup_printf ("fashion-mnist:%s", sd);
    g_assert_null (nl_dataset_open (spec, TRUE, &error));
    g_assert_error (error, NL_DATA_ERROR, NL_DATA_ERROR_CORRUPT);
    g_autofree char *want = g_strdup_printf ("%s: label 10 of sample 3 is out of range for 10 classes", tl);
    g_assert_cmpstr (error->message, ==, want);
    /* Opened directly, the class count is inferred instead. */
    g_clear_error (&error);
    g_autoptr (NlDataset) ds = nl_idx_dataset_open (ti, tl, &error);
    g_assert_no_error (error);
    g_assert_cmpint (ds->n_classes, ==, 11);
  }

  /* More data than declared. */
  {
    g_autofree guint8 *big = g_malloc (g_bytes_get_size (good_img) + 5);
    memcpy (big, gid, g_bytes_get_size (good_img));
    memset (big + g_bytes_get_size (good_img), 7, 5);
    write_raw (p, big, g_bytes_get_size (good_img) + 5);
    expect_error (p, gl, 0, NL_DATA_ERROR_CORRUPT, "%I has more data than its header declares");
    write_gz (pgz, big, g_bytes_get_size (good_img) + 5);
    expect_error (pgz, gl, 0, NL_DATA_ERROR_CORRUPT, "%I has more data than its header declares");
  }

  /* Absurd header sizes: rejected, or bounded by what the file holds,
   * without allocating what the header claims. */
  {
    guint32 huge[3] = { 0xffffffffu, 0xffffu, 0xffffu };
    g_autoptr (GByteArray) h = idx_bytes (0x803, 3, huge, gid + 16, 50);
    write_raw (p, h->data, h->len);
    expect_error (p, gl, 0, NL_DATA_ERROR_CORRUPT, "%I declares an impossible size");
    guint32 wide[3] = { 2, 0xc0000000u, 0xc0000000u }; /* rows * cols > 2^63 */
    g_autoptr (GByteArray) hw = idx_bytes (0x803, 3, wide, gid + 16, 50);
    write_raw (p, hw->data, hw->len);
    expect_error (p, gl, 0, NL_DATA_ERROR_CORRUPT, "%I declares an impossible size");
    guint32 big[3] = { 1000000, 1000, 1000 }; /* 1e12 bytes */
    g_autoptr (GByteArray) h2 = idx_bytes (0x803, 3, big, gid + 16, 50);
    guint32 ld[1] = { 1000000 };
    g_autoptr (GByteArray) l2 = idx_bytes (0x801, 1, ld, lv, 10);
    g_autofree char *bl = g_build_filename (dir, "big-lab", NULL);
    write_raw (bl, l2->data, l2->len);
    write_raw (p, h2->data, h2->len);
    expect_error (p, bl, 0, NL_DATA_ERROR_CORRUPT,
                  "%I is truncated: expected 1000000000000 bytes of image data, found 50");
    write_gz (pgz, h2->data, h2->len);
    expect_error (pgz, bl, 0, NL_DATA_ERROR_CORRUPT,
                  "%I is truncated: expected 1000000000000 bytes of image data, found 50");
    guint32 zero[3] = { 0, 28, 28 };
    g_autoptr (GByteArray) h3 = idx_bytes (0x803, 3, zero, NULL, 0);
    write_raw (p, h3->data, h3->len);
    expect_error (p, gl, 0, NL_DATA_ERROR_CORRUPT, "%I holds no image data");
  }
}

/* Random, truncated and bit-flipped files: the reader must return a dataset
 * or an error, never crash or hang. */
static void
test_fuzz (void)
{
  g_autofree char *dir = fresh_dir ("fuzz");
  g_autofree char *gi = g_build_filename (dir, "good-img", NULL);
  g_autofree char *gl = g_build_filename (dir, "good-lab", NULL);
  guint8 lv[20];
  for (int i = 0; i < 20; i++)
    lv[i] = i % 10;
  write_pair (gi, gl, 20, 6, 5, lv, FALSE);
  g_autoptr (GBytes) img = read_all (gi);
  g_autoptr (GBytes) lab = read_all (gl);
  g_autofree char *gzp = g_build_filename (dir, "good.gz", NULL);
  write_gz (gzp, g_bytes_get_data (img, NULL), g_bytes_get_size (img));
  g_autoptr (GBytes) imgz = read_all (gzp);

  g_autofree char *fi = g_build_filename (dir, "f-img", NULL);
  g_autofree char *fl = g_build_filename (dir, "f-lab", NULL);
  GRand *r = g_rand_new_with_seed (1234);
  int opened = 0, failed = 0;
  /* NETLOOM_FUZZ_ITERATIONS runs a longer fuzz (e.g. under ASan). */
  const char *iters_env = g_getenv ("NETLOOM_FUZZ_ITERATIONS");
  int iters = iters_env ? atoi (iters_env) : 600;
  for (int it = 0; it < iters; it++)
    {
      GBytes *src = it % 3 == 0 ? img : it % 3 == 1 ? imgz : lab;
      size_t len = g_bytes_get_size (src);
      g_autofree guint8 *buf = g_malloc (len + 64);
      memcpy (buf, g_bytes_get_data (src, NULL), len);
      int mode = g_rand_int_range (r, 0, 4);
      if (mode == 0) /* truncate */
        len = g_rand_int_range (r, 0, (gint32) len + 1);
      else if (mode == 1) /* flip a few bytes */
        for (int k = g_rand_int_range (r, 1, 6); k > 0; k--)
          buf[g_rand_int_range (r, 0, (gint32) len)] ^= (guint8) g_rand_int_range (r, 1, 256);
      else if (mode == 2) /* pure noise, sometimes behind a valid magic */
        {
          len = g_rand_int_range (r, 0, (gint32) len + 64);
          for (size_t k = 0; k < len; k++)
            buf[k] = (guint8) g_rand_int (r);
          if (len >= 4 && g_rand_boolean (r))
            memcpy (buf, g_bytes_get_data (src, NULL), 4);
        }
      else /* corrupt a header field */
        buf[g_rand_int_range (r, 0, MIN ((gint32) len, 16))] ^= 0xff;

      gboolean as_labels = src == lab;
      /* The gz variants go through a .gz name so zlib reads them. */
      g_autofree char *path = g_strdup_printf ("%s%s", as_labels ? fl : fi, src == imgz ? ".gz" : "");
      write_raw (path, buf, len);
      g_autoptr (GError) error = NULL;
      g_autoptr (NlDataset) ds = as_labels ? nl_idx_dataset_open_full (gi, path, 10, NULL, &error)
                                           : nl_idx_dataset_open_full (path, gl, 10, NULL, &error);
      g_unlink (path);
      if (ds)
        {
          g_assert_no_error (error);
          opened++;
          int64_t numel = nl_shape_numel (&ds->sample_shape);
          g_autofree float *s = g_new (float, numel);
          for (int64_t i = 0; i < ds->length; i++)
            {
              float label;
              g_assert_true (ds->klass->get (ds, i, s, &label, NULL));
              g_assert_cmpfloat (label, >=, 0);
              g_assert_cmpfloat (label, <, 10);
              for (int64_t k = 0; k < numel; k++)
                g_assert_true (s[k] >= 0 && s[k] <= 1);
            }
        }
      else
        {
          g_assert_nonnull (error);
          g_assert_true (error->domain == NL_DATA_ERROR);
          g_assert_nonnull (strstr (error->message, path));
          failed++;
        }
    }
  g_rand_free (r);
  g_test_message ("fuzz: %d opened, %d rejected", opened, failed);
  g_assert_cmpint (failed, >, iters / 2);
  g_assert_cmpint (opened, >, 0); /* pixel flips leave valid files */
}

/* ---- the real Fashion-MNIST files ---- */

/* Read image i and label i of a gz IDX pair with plain zlib, independently
 * of the reader. */
static void
reference_sample (const char *dir, const char *prefix, int64_t i, guint8 *img, guint8 *label)
{
  g_autofree char *ip = g_strdup_printf ("%s/%s-images-idx3-ubyte.gz", dir, prefix);
  g_autofree char *lp = g_strdup_printf ("%s/%s-labels-idx1-ubyte.gz", dir, prefix);
  gzFile f = gzopen (ip, "rb");
  g_assert_nonnull (f);
  g_assert_cmpint (gzseek (f, 16 + i * 784, SEEK_SET), ==, 16 + i * 784);
  g_assert_cmpint (gzread (f, img, 784), ==, 784);
  gzclose (f);
  f = gzopen (lp, "rb");
  g_assert_cmpint (gzseek (f, 8 + i, SEEK_SET), ==, 8 + i);
  g_assert_cmpint (gzread (f, label, 1), ==, 1);
  gzclose (f);
}

static void
test_fashion_mnist (void)
{
  g_autofree char *probe = g_build_filename (FASHION_DIR, "train-images-idx3-ubyte.gz", NULL);
  if (!g_file_test (probe, G_FILE_TEST_EXISTS))
    {
      g_test_skip ("Fashion-MNIST is not installed in " FASHION_DIR);
      return;
    }
  for (int train = 1; train >= 0; train--)
    {
      g_autoptr (GError) error = NULL;
      gint64 t0 = g_get_monotonic_time ();
      g_autoptr (NlDataset) ds = nl_dataset_open ("fashion-mnist", train, &error);
      double secs = (g_get_monotonic_time () - t0) / 1e6;
      g_assert_no_error (error);
      g_test_message ("Fashion-MNIST %s: loaded in %.3f s", train ? "train" : "test", secs);
      int64_t n = train ? 60000 : 10000;
      g_assert_cmpint (ds->length, ==, n);
      NlShape want = nl_shape_of (3, (int64_t) 1, (int64_t) 28, (int64_t) 28);
      g_assert_true (nl_shape_equal (&ds->sample_shape, &want));
      g_assert_cmpint (ds->n_classes, ==, 10);
      g_assert_cmpstr (ds->class_names[0], ==, "T-shirt/top");
      g_assert_cmpstr (ds->class_names[9], ==, "Ankle boot");
      g_autofree char *desc = g_strdup_printf ("Fashion-MNIST %s (%" G_GINT64_FORMAT " images) from %s",
                                               train ? "train" : "test", n, FASHION_DIR);
      g_assert_cmpstr (ds->description, ==, desc);

      float s[784], label;
      g_assert_true (ds->klass->get (ds, 0, s, &label, &error));
      g_assert_cmpfloat (label, ==, 9); /* both splits start with an ankle boot */

      /* Balanced classes: 6000 / 1000 of each. */
      int64_t counts[10] = { 0 };
      guint8 maxpix = 0;
      for (int64_t i = 0; i < n; i++)
        {
          const guint8 *u = ds->klass->get_u8 (ds, i, &label);
          counts[(int) label]++;
          for (int k = 0; k < 784; k++)
            maxpix = MAX (maxpix, u[k]);
        }
      for (int c = 0; c < 10; c++)
        g_assert_cmpint (counts[c], ==, n / 10);
      g_assert_cmpuint (maxpix, ==, 255);

      /* Samples match a plain zlib read. */
      int64_t probes[3] = { 0, 1234, n - 1 };
      for (int j = 0; j < 3; j++)
        {
          guint8 ref[784], rl;
          reference_sample (FASHION_DIR, train ? "train" : "t10k", probes[j], ref, &rl);
          g_assert_true (ds->klass->get (ds, probes[j], s, &label, &error));
          float want_s[784];
          for (int k = 0; k < 784; k++)
            want_s[k] = ref[k] / 255.0f;
          nl_test_assert_close (s, want_s, 784, 1e-7, 0);
          g_assert_cmpfloat (label, ==, rl);
        }

      if (train)
        {
          /* Unshuffled, batch 0 is samples 0..127, normalised. */
          g_autoptr (NlBatcher) b0 = nl_batcher_new (ds, 128, FALSE, 0, NL_LAST_BATCH_KEEP, 0.2860f, 0.3530f);
          int64_t shape0[2] = { 128, 784 }, lshape0[1] = { 128 };
          g_autoptr (NlTensor) x0 = nl_tensor_new (NL_DTYPE_F32, 2, shape0);
          g_autoptr (NlTensor) y0 = nl_tensor_new (NL_DTYPE_F32, 1, lshape0);
          g_assert_cmpint (nl_batcher_next (b0, x0, y0, &error), ==, 128);
          for (int r = 0; r < 128; r++)
            {
              float want_s[784];
              g_assert_true (ds->klass->get (ds, r, s, &label, &error));
              for (int k = 0; k < 784; k++)
                want_s[k] = (s[k] - 0.2860f) / 0.3530f;
              nl_test_assert_close (nl_tensor_f32 (x0) + r * 784, want_s, 784, 1e-6, 1e-6);
              g_assert_cmpfloat (nl_tensor_f32 (y0)[r], ==, label);
            }

          /* The batcher's per-batch cost, for the record. */
          g_autoptr (NlBatcher) b = nl_batcher_new (ds, 128, TRUE, 42, NL_LAST_BATCH_DISCARD, 0.2860f, 0.3530f);
          int64_t shape[4] = { 128, 1, 28, 28 }, lshape[1] = { 128 };
          g_autoptr (NlTensor) x = nl_tensor_new (NL_DTYPE_F32, 4, shape);
          g_autoptr (NlTensor) y = nl_tensor_new (NL_DTYPE_F32, 1, lshape);
          t0 = g_get_monotonic_time ();
          nl_batcher_start_epoch (b, 0);
          int nb = 0, got;
          while ((got = nl_batcher_next (b, x, y, &error)) > 0)
            nb++;
          g_assert_no_error (error);
          g_assert_cmpint (nb, ==, 468);
          g_assert_cmpint (nl_batcher_n_batches (b), ==, 468);
          double us = (g_get_monotonic_time () - t0) / (double) nb;
          g_test_message ("batcher: %.1f us per batch of 128 (epoch %.3f s)", us, us * nb / 1e6);
        }
    }
}

/* ---- the batcher ---- */

/* A dataset without the uint8 fast path: sample i is (i, i + 0.25, -i),
 * label i % 7. */
typedef struct {
  NlDataset base;
} FakeDataset;

static gboolean
fake_get (NlDataset *ds, int64_t i, float *sample, float *label, GError **error)
{
  g_assert_cmpint (i, >=, 0);
  g_assert_cmpint (i, <, ds->length);
  sample[0] = (float) i;
  sample[1] = (float) i + 0.25f;
  sample[2] = -(float) i;
  *label = (float) (i % 7);
  return TRUE;
}

static void
fake_free (NlDataset *ds)
{
  g_free (ds);
}

static const NlDatasetClass fake_class = { "fake", fake_get, NULL, fake_free };

static NlDataset *
fake_new (int64_t n)
{
  FakeDataset *d = g_new0 (FakeDataset, 1);
  d->base.klass = &fake_class;
  d->base.length = n;
  d->base.sample_shape = nl_shape_of (1, (int64_t) 3);
  d->base.n_classes = 7;
  d->base.description = g_strdup ("fake");
  return &d->base;
}

/* Run one epoch; return the sample ids in order (checking each row and
 * label against the id), and the batch sizes. */
static GArray *
run_epoch (NlBatcher *b, int epoch, int bs, GArray *sizes)
{
  GArray *ids = g_array_new (FALSE, FALSE, sizeof (int64_t));
  int64_t shape[2] = { bs, 3 }, lshape[1] = { bs };
  g_autoptr (NlTensor) x = nl_tensor_new (NL_DTYPE_F32, 2, shape);
  g_autoptr (NlTensor) y = nl_tensor_new (NL_DTYPE_F32, 1, lshape);
  nl_batcher_start_epoch (b, epoch);
  g_autoptr (GError) error = NULL;
  int got;
  while ((got = nl_batcher_next (b, x, y, &error)) > 0)
    {
      g_assert_cmpint (got, <=, bs);
      if (sizes)
        g_array_append_val (sizes, got);
      const float *px = nl_tensor_f32 (x), *py = nl_tensor_f32 (y);
      for (int r = 0; r < got; r++)
        {
          int64_t id = (int64_t) px[r * 3];
          g_assert_cmpfloat (px[r * 3 + 1], ==, (float) id + 0.25f);
          g_assert_cmpfloat (px[r * 3 + 2], ==, -(float) id);
          g_assert_cmpfloat (py[r], ==, (float) (id % 7));
          g_array_append_val (ids, id);
        }
      for (int r = got; r < bs; r++) /* kept short batch: zero rows */
        {
          g_assert_cmpfloat (px[r * 3], ==, 0);
          g_assert_cmpfloat (py[r], ==, 0);
        }
    }
  g_assert_no_error (error);
  g_assert_cmpint (got, ==, 0);
  /* Still 0 after the end. */
  g_assert_cmpint (nl_batcher_next (b, x, y, &error), ==, 0);
  return ids;
}

static void
assert_each_once (GArray *ids, int64_t n, int times)
{
  g_assert_cmpuint (ids->len, ==, n * times);
  g_autofree int *seen = g_new0 (int, n);
  for (guint i = 0; i < ids->len; i++)
    {
      int64_t id = g_array_index (ids, int64_t, i);
      g_assert_cmpint (id, >=, 0);
      g_assert_cmpint (id, <, n);
      seen[id]++;
    }
  for (int64_t i = 0; i < n; i++)
    g_assert_cmpint (seen[i], ==, times);
}

static gboolean
same_ids (GArray *a, GArray *b)
{
  return a->len == b->len && memcmp (a->data, b->data, a->len * sizeof (int64_t)) == 0;
}

static void
test_batcher_keep_and_order (void)
{
  g_autoptr (NlDataset) ds = fake_new (103);
  for (int shuffle = 0; shuffle < 2; shuffle++)
    {
      g_autoptr (NlBatcher) b = nl_batcher_new (ds, 10, shuffle, 7, NL_LAST_BATCH_KEEP, 0, 1);
      g_assert_cmpint (nl_batcher_n_batches (b), ==, 11);
      g_autoptr (GArray) sizes = g_array_new (FALSE, FALSE, sizeof (int));
      g_autoptr (GArray) e0 = run_epoch (b, 0, 10, sizes);
      g_assert_cmpuint (sizes->len, ==, 11);
      for (int i = 0; i < 10; i++)
        g_assert_cmpint (g_array_index (sizes, int, i), ==, 10);
      g_assert_cmpint (g_array_index (sizes, int, 10), ==, 3);
      assert_each_once (e0, 103, 1);
      g_autoptr (GArray) e1 = run_epoch (b, 1, 10, NULL);
      assert_each_once (e1, 103, 1);

      gboolean identity = TRUE;
      for (int i = 0; i < 103; i++)
        identity = identity && g_array_index (e0, int64_t, i) == i;
      if (!shuffle)
        {
          g_assert_true (identity);
          g_assert_true (same_ids (e0, e1));
        }
      else
        {
          g_assert_false (identity);
          g_assert_false (same_ids (e0, e1)); /* epochs differ */
          /* Same seed, same orders; replaying epoch 0 after epoch 1 too. */
          g_autoptr (NlBatcher) b2 = nl_batcher_new (ds, 10, TRUE, 7, NL_LAST_BATCH_KEEP, 0, 1);
          g_autoptr (GArray) f1 = run_epoch (b2, 1, 10, NULL);
          g_autoptr (GArray) f0 = run_epoch (b2, 0, 10, NULL);
          g_assert_true (same_ids (e0, f0));
          g_assert_true (same_ids (e1, f1));
          /* Another seed, another order. */
          g_autoptr (NlBatcher) b3 = nl_batcher_new (ds, 10, TRUE, 8, NL_LAST_BATCH_KEEP, 0, 1);
          g_autoptr (GArray) g0 = run_epoch (b3, 0, 10, NULL);
          g_assert_false (same_ids (e0, g0));
        }
    }

  /* Not calling start_epoch means epoch 0. */
  g_autoptr (NlBatcher) a = nl_batcher_new (ds, 16, TRUE, 99, NL_LAST_BATCH_KEEP, 0, 1);
  g_autoptr (NlBatcher) c = nl_batcher_new (ds, 16, TRUE, 99, NL_LAST_BATCH_KEEP, 0, 1);
  int64_t shape[2] = { 16, 3 };
  g_autoptr (NlTensor) x1 = nl_tensor_new (NL_DTYPE_F32, 2, shape);
  g_autoptr (NlTensor) x2 = nl_tensor_new (NL_DTYPE_F32, 2, shape);
  g_assert_cmpint (nl_batcher_next (a, x1, NULL, NULL), ==, 16);
  nl_batcher_start_epoch (c, 0);
  g_assert_cmpint (nl_batcher_next (c, x2, NULL, NULL), ==, 16);
  nl_test_assert_close (nl_tensor_f32 (x1), nl_tensor_f32 (x2), 48, 0, 0);
}

/* The shuffle is close to uniform: each sample lands in each position
 * about equally often over many epochs. */
static void
test_batcher_uniform (void)
{
  const int n = 8, epochs = 8000;
  g_autoptr (NlDataset) ds = fake_new (n);
  g_autoptr (NlBatcher) b = nl_batcher_new (ds, n, TRUE, 3, NL_LAST_BATCH_KEEP, 0, 1);
  int counts[8][8] = { { 0 } };
  for (int e = 0; e < epochs; e++)
    {
      g_autoptr (GArray) ids = run_epoch (b, e, n, NULL);
      for (int p = 0; p < n; p++)
        counts[g_array_index (ids, int64_t, p)][p]++;
    }
  /* Expected 1000 each, sd ~ 29.6: 6 sd is a safe bound. */
  for (int i = 0; i < n; i++)
    for (int p = 0; p < n; p++)
      g_assert_cmpint (abs (counts[i][p] - epochs / n), <, 180);
}

static void
test_batcher_discard (void)
{
  g_autoptr (NlDataset) ds = fake_new (103);
  g_autoptr (NlBatcher) b = nl_batcher_new (ds, 10, TRUE, 5, NL_LAST_BATCH_DISCARD, 0, 1);
  g_assert_cmpint (nl_batcher_n_batches (b), ==, 10);
  for (int e = 0; e < 3; e++)
    {
      g_autoptr (GArray) sizes = g_array_new (FALSE, FALSE, sizeof (int));
      g_autoptr (GArray) ids = run_epoch (b, e, 10, sizes);
      g_assert_cmpuint (sizes->len, ==, 10);
      g_assert_cmpuint (ids->len, ==, 100);
      g_autofree int *seen = g_new0 (int, 103);
      for (guint i = 0; i < ids->len; i++)
        seen[g_array_index (ids, int64_t, i)]++;
      int missing = 0;
      for (int i = 0; i < 103; i++)
        {
          g_assert_cmpint (seen[i], <=, 1);
          missing += seen[i] == 0;
        }
      g_assert_cmpint (missing, ==, 3);
      g_assert_cmpint (nl_batcher_n_batches (b), ==, 10);
    }
  /* Batch larger than the dataset: nothing. */
  g_autoptr (NlBatcher) big = nl_batcher_new (ds, 200, TRUE, 5, NL_LAST_BATCH_DISCARD, 0, 1);
  g_assert_cmpint (nl_batcher_n_batches (big), ==, 0);
  g_autoptr (GArray) none = run_epoch (big, 0, 200, NULL);
  g_assert_cmpuint (none->len, ==, 0);
}

static void
test_batcher_rollover (void)
{
  const int n = 103, bs = 10, epochs = 10;
  g_autoptr (NlDataset) ds = fake_new (n);
  g_autoptr (NlBatcher) b = nl_batcher_new (ds, bs, TRUE, 11, NL_LAST_BATCH_ROLLOVER, 0, 1);
  /* The plain per-epoch order, from a KEEP batcher with the same seed. */
  g_autoptr (NlBatcher) plain = nl_batcher_new (ds, bs, TRUE, 11, NL_LAST_BATCH_KEEP, 0, 1);

  g_autoptr (GArray) all = g_array_new (FALSE, FALSE, sizeof (int64_t));
  GArray *runs[10];
  int64_t carried = 0;
  for (int e = 0; e < epochs; e++)
    {
      nl_batcher_start_epoch (b, e);
      g_assert_cmpint (nl_batcher_n_batches (b), ==, (n + carried) / bs);
      g_autoptr (GArray) sizes = g_array_new (FALSE, FALSE, sizeof (int));
      runs[e] = run_epoch (b, e, bs, sizes);
      g_assert_cmpuint (sizes->len, ==, (n + carried) / bs);
      for (guint i = 0; i < sizes->len; i++)
        g_assert_cmpint (g_array_index (sizes, int, i), ==, bs); /* never short */

      /* The epoch is the previous leftover, then the plain order. */
      g_autoptr (GArray) order = run_epoch (plain, e, bs, NULL);
      g_array_append_vals (all, runs[e]->data, runs[e]->len);
      int64_t next_carry = (n + carried) % bs;
      g_assert_cmpuint (runs[e]->len, ==, n + carried - next_carry);
      /* It starts with the tail of the previous epoch's plain order. */
      if (e > 0)
        {
          g_autoptr (GArray) prev_order = run_epoch (plain, e - 1, bs, NULL);
          for (int64_t i = 0; i < carried; i++)
            g_assert_cmpint (g_array_index (runs[e], int64_t, i), ==,
                             g_array_index (prev_order, int64_t, n - carried + i));
        }
      for (int64_t i = carried; i < (int64_t) runs[e]->len; i++)
        g_assert_cmpint (g_array_index (runs[e], int64_t, i), ==, g_array_index (order, int64_t, i - carried));
      carried = next_carry;
    }
  /* 10 epochs of 103 = 1030 = 103 full batches: every sample 10 times. */
  g_assert_cmpint (carried, ==, 0);
  assert_each_once (all, n, epochs);

  /* Resume: a fresh batcher started at epoch 7 gives the same batches. */
  g_autoptr (NlBatcher) r = nl_batcher_new (ds, bs, TRUE, 11, NL_LAST_BATCH_ROLLOVER, 0, 1);
  g_autoptr (GArray) r7 = run_epoch (r, 7, bs, NULL);
  g_assert_true (same_ids (r7, runs[7]));
  for (int e = 0; e < epochs; e++)
    g_array_unref (runs[e]);

  /* Batch bigger than the dataset: epoch 0 has nothing, epoch 1 one batch
   * of all of epoch 0 then the start of epoch 1. */
  g_autoptr (NlDataset) small = fake_new (7);
  g_autoptr (NlBatcher) s = nl_batcher_new (small, 10, TRUE, 2, NL_LAST_BATCH_ROLLOVER, 0, 1);
  g_autoptr (NlBatcher) sp = nl_batcher_new (small, 10, TRUE, 2, NL_LAST_BATCH_KEEP, 0, 1);
  g_autoptr (GArray) s0 = run_epoch (s, 0, 10, NULL);
  g_assert_cmpuint (s0->len, ==, 0);
  nl_batcher_start_epoch (s, 1);
  g_assert_cmpint (nl_batcher_n_batches (s), ==, 1);
  g_autoptr (GArray) s1 = run_epoch (s, 1, 10, NULL);
  g_autoptr (GArray) p0 = run_epoch (sp, 0, 10, NULL);
  g_autoptr (GArray) p1 = run_epoch (sp, 1, 10, NULL);
  g_assert_cmpuint (s1->len, ==, 10);
  for (int i = 0; i < 7; i++)
    g_assert_cmpint (g_array_index (s1, int64_t, i), ==, g_array_index (p0, int64_t, i));
  for (int i = 0; i < 3; i++)
    g_assert_cmpint (g_array_index (s1, int64_t, 7 + i), ==, g_array_index (p1, int64_t, i));
  /* Epoch 2 carries 4: the last 4 of epoch 1, then 6 of epoch 2. */
  g_autoptr (GArray) s2 = run_epoch (s, 2, 10, NULL);
  g_autoptr (GArray) p2 = run_epoch (sp, 2, 10, NULL);
  g_assert_cmpuint (s2->len, ==, 10);
  for (int i = 0; i < 4; i++)
    g_assert_cmpint (g_array_index (s2, int64_t, i), ==, g_array_index (p1, int64_t, 3 + i));
  for (int i = 0; i < 6; i++)
    g_assert_cmpint (g_array_index (s2, int64_t, 4 + i), ==, g_array_index (p2, int64_t, i));
}

/* Normalisation, through the uint8 fast path (IDX) and the float path
 * (fake dataset), against (x / 255 - mean) / std computed here. */
static void
test_batcher_normalise (void)
{
  g_autofree char *dir = fresh_dir ("norm");
  g_autofree char *images = g_build_filename (dir, "img", NULL);
  g_autofree char *labels = g_build_filename (dir, "lab", NULL);
  guint8 lv[50];
  for (int i = 0; i < 50; i++)
    lv[i] = (i * 7) % 10;
  write_pair (images, labels, 50, 3, 3, lv, TRUE);
  g_autoptr (GError) error = NULL;
  g_autoptr (NlDataset) ds = nl_idx_dataset_open (images, labels, &error);
  g_assert_no_error (error);

  const float means[2] = { 0, 0.2860f }, stds[2] = { 1, 0.3530f };
  for (int m = 0; m < 2; m++)
    {
      g_autoptr (NlBatcher) b = nl_batcher_new (ds, 8, FALSE, 0, NL_LAST_BATCH_KEEP, means[m], stds[m]);
      int64_t shape[4] = { 8, 1, 3, 3 }, lshape[1] = { 8 };
      g_autoptr (NlTensor) x = nl_tensor_new (NL_DTYPE_F32, 4, shape);
      g_autoptr (NlTensor) y = nl_tensor_new (NL_DTYPE_F32, 1, lshape);
      int64_t seen = 0;
      int got;
      while ((got = nl_batcher_next (b, x, y, &error)) > 0)
        {
          for (int r = 0; r < got; r++, seen++)
            {
              float want[9];
              for (int k = 0; k < 9; k++)
                want[k] = m == 0 ? pix (seen, k) / 255.0f : (pix (seen, k) / 255.0f - means[m]) / stds[m];
              nl_test_assert_close (nl_tensor_f32 (x) + r * 9, want, 9, 1e-6, 1e-6);
              g_assert_cmpfloat (nl_tensor_f32 (y)[r], ==, lv[seen]);
            }
        }
      g_assert_no_error (error);
      g_assert_cmpint (seen, ==, 50);
    }

  g_autoptr (NlDataset) fake = fake_new (20);
  g_autoptr (NlBatcher) fb = nl_batcher_new (fake, 20, TRUE, 1, NL_LAST_BATCH_KEEP, 0.5f, 2.0f);
  int64_t fshape[2] = { 20, 3 };
  g_autoptr (NlTensor) fx = nl_tensor_new (NL_DTYPE_F32, 2, fshape);
  g_assert_cmpint (nl_batcher_next (fb, fx, NULL, &error), ==, 20);
  const float *p = nl_tensor_f32 (fx);
  for (int r = 0; r < 20; r++)
    {
      float id = p[r * 3] * 2.0f + 0.5f;
      float want[3] = { (id - 0.5f) / 2.0f, (id + 0.25f - 0.5f) / 2.0f, (-id - 0.5f) / 2.0f };
      nl_test_assert_close (p + r * 3, want, 3, 1e-6, 1e-6);
      g_assert_cmpfloat (id, ==, roundf (id));
    }
}

static void
test_batcher_bad_tensors (void)
{
  g_autoptr (NlDataset) ds = fake_new (10);
  g_autoptr (NlBatcher) b = nl_batcher_new (ds, 4, FALSE, 0, NL_LAST_BATCH_KEEP, 0, 1);
  g_autoptr (GError) error = NULL;
  int64_t wrong[2] = { 4, 4 }, right[2] = { 4, 3 }, l3[1] = { 3 };
  g_autoptr (NlTensor) xw = nl_tensor_new (NL_DTYPE_F32, 2, wrong);
  g_autoptr (NlTensor) xr = nl_tensor_new (NL_DTYPE_F32, 2, right);
  g_autoptr (NlTensor) xi = nl_tensor_new (NL_DTYPE_I32, 2, right);
  g_autoptr (NlTensor) yw = nl_tensor_new (NL_DTYPE_F32, 1, l3);
  g_assert_cmpint (nl_batcher_next (b, xw, NULL, &error), ==, -1);
  g_assert_error (error, NL_DATA_ERROR, NL_DATA_ERROR_MISMATCH);
  g_assert_nonnull (strstr (error->message, "data"));
  g_clear_error (&error);
  g_assert_cmpint (nl_batcher_next (b, xi, NULL, &error), ==, -1);
  g_assert_error (error, NL_DATA_ERROR, NL_DATA_ERROR_MISMATCH);
  g_clear_error (&error);
  g_assert_cmpint (nl_batcher_next (b, xr, yw, &error), ==, -1);
  g_assert_error (error, NL_DATA_ERROR, NL_DATA_ERROR_MISMATCH);
  g_assert_nonnull (strstr (error->message, "labels"));
  g_clear_error (&error);
  /* A failed call consumed nothing. */
  g_assert_cmpint (nl_batcher_next (b, xr, NULL, &error), ==, 4);
  g_assert_cmpfloat (nl_tensor_f32 (xr)[0], ==, 0);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_autoptr (GError) error = NULL;
  tmp_dir = g_dir_make_tmp ("netloom-test-data-XXXXXX", &error);
  g_assert_no_error (error);

  g_test_add_func ("/data/idx/raw-and-gz", test_idx_raw_and_gz);
  g_test_add_func ("/data/idx/gz-preferred", test_idx_gz_preferred);
  g_test_add_func ("/data/idx/spec", test_spec);
  g_test_add_func ("/data/idx/bad-input", test_bad_input);
  g_test_add_func ("/data/idx/fuzz", test_fuzz);
  g_test_add_func ("/data/idx/fashion-mnist", test_fashion_mnist);
  g_test_add_func ("/data/batcher/keep-and-order", test_batcher_keep_and_order);
  g_test_add_func ("/data/batcher/uniform", test_batcher_uniform);
  g_test_add_func ("/data/batcher/discard", test_batcher_discard);
  g_test_add_func ("/data/batcher/rollover", test_batcher_rollover);
  g_test_add_func ("/data/batcher/normalise", test_batcher_normalise);
  g_test_add_func ("/data/batcher/bad-tensors", test_batcher_bad_tensors);

  int rc = g_test_run ();
  nl_test_remove_tree (tmp_dir);
  g_free (tmp_dir);
  return rc;
}
