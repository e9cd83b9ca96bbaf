/* test-formats.c — the CIFAR-10, CSV, image-folder and packed-record
 * formats: values against the formulas that generated the files, splits,
 * error messages, truncated and corrupt files, and pack / unpack round trips. */
#include <glib.h>
#include <glib/gstdio.h>
#include <gio/gio.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <jpeglib.h>
#include <png.h>
#include <zlib.h>

#include "engine/data/nl-dataset.h"
#include "engine/data/nl-packed-dataset.h"
#include "engine/data/nl-record-reader.h"
#include "engine/data/nl-record-writer.h"
#include "core/nl-atomic-file.h"
#include "nl-test-util.h"

static char *tmp_dir;

/* ---- files ---- */


static char *
fresh_dir (const char *name)
{
  char *d = g_build_filename (tmp_dir, name, NULL);
  nl_test_remove_tree (d);
  g_assert_cmpint (g_mkdir_with_parents (d, 0700), ==, 0);
  return d;
}

static void
write_bytes (const char *path, const void *data, gsize len)
{
  /* Plain stdio, no fsync: the tests rewrite files thousands of times.
   * Unlinking first keeps ext4 from flushing a truncated file on close. */
  g_unlink (path);
  FILE *f = fopen (path, "wb");
  g_assert_nonnull (f);
  g_assert_cmpuint (fwrite (data, 1, len, f), ==, len);
  g_assert_cmpint (fclose (f), ==, 0);
}

static void
write_text (const char *path, const char *text)
{
  write_bytes (path, text, strlen (text));
}

static GBytes *
read_all (const char *path)
{
  char *buf;
  gsize len;
  g_autoptr (GError) error = NULL;
  g_file_get_contents (path, &buf, &len, &error);
  g_assert_no_error (error);
  return g_bytes_new_take (buf, len);
}

static int
compare_strp (gconstpointer a, gconstpointer b)
{
  return strcmp (*(char *const *) a, *(char *const *) b);
}

/* Names in dir, sorted, as one string: to check no temp file is left. */
static char *
dir_listing (const char *dir)
{
  GDir *d = g_dir_open (dir, 0, NULL);
  g_assert_nonnull (d);
  g_autoptr (GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  const char *name;
  while ((name = g_dir_read_name (d)))
    g_ptr_array_add (names, g_strdup (name));
  g_dir_close (d);
  g_ptr_array_sort (names, compare_strp);
  g_ptr_array_add (names, NULL);
  return g_strjoinv (" ", (char **) names->pdata);
}

static void
assert_error_has (const GError *error, int code, const char *part)
{
  g_assert_nonnull (error);
  if (!g_error_matches (error, NL_DATA_ERROR, code) || !strstr (error->message, part))
    g_error ("expected NL_DATA_ERROR %d containing \"%s\", got %s %d: %s", code, part,
             g_quark_to_string (error->domain), error->code, error->message);
}

/* Dataset i's sample and label through get, checked against the class's
 * other accessors (get_u8 / read_u8) on the way. */
static float *
get_sample (NlDataset *ds, int64_t i, float *label)
{
  int64_t n = nl_shape_numel (&ds->sample_shape);
  float *x = g_new (float, n);
  g_autoptr (GError) error = NULL;
  g_assert_true (nl_dataset_get (ds, i, x, label, &error));
  g_assert_no_error (error);
  if (ds->klass->get_u8 || ds->klass->read_u8)
    {
      float l2 = -1;
      g_autofree guint8 *copy = g_malloc (n);
      const guint8 *u;
      if (ds->klass->get_u8)
        u = ds->klass->get_u8 (ds, i, &l2);
      else
        {
          g_assert_true (ds->klass->read_u8 (ds, i, copy, &l2, &error));
          u = copy;
        }
      g_assert_nonnull (u);
      g_assert_cmpfloat (l2, ==, *label);
      for (int64_t k = 0; k < n; k++)
        g_assert_cmpfloat (x[k], ==, (float) u[k] / 255.0f);
    }
  return x;
}

/* ---- CIFAR-10 ---- */

static guint8
cifar_pix (int64_t i, int k)
{
  return (guint8) ((i * 37 + k * 11 + (k / 1024) * 5 + (k * i) % 7) % 256);
}

static guint8
cifar_label (int64_t i)
{
  return (guint8) ((i * 7 + 3) % 10);
}

/* A batch file of n records numbered from `first`. */
static void
write_cifar_batch (const char *path, int64_t first, int n)
{
  g_autofree guint8 *b = g_malloc (3073 * (gsize) n);
  for (int r = 0; r < n; r++)
    {
      b[r * 3073] = cifar_label (first + r);
      for (int k = 0; k < 3072; k++)
        b[r * 3073 + 1 + k] = cifar_pix (first + r, k);
    }
  write_bytes (path, b, 3073 * (gsize) n);
}

static const int cifar_counts[5] = { 3, 2, 4, 1, 2 };

static void
write_cifar_dir (const char *dir)
{
  int64_t first = 0;
  for (int f = 0; f < 5; f++)
    {
      g_autofree char *name = g_strdup_printf ("data_batch_%d.bin", f + 1);
      g_autofree char *path = g_build_filename (dir, name, NULL);
      write_cifar_batch (path, first, cifar_counts[f]);
      first += cifar_counts[f];
    }
  g_autofree char *test = g_build_filename (dir, "test_batch.bin", NULL);
  write_cifar_batch (test, 1000, 5);
}

static void
check_cifar (NlDataset *ds, int64_t n, int64_t first)
{
  static const char *const names[] = { "airplane", "automobile", "bird", "cat", "deer",
                                       "dog", "frog", "horse", "ship", "truck" };
  g_assert_cmpint (ds->length, ==, n);
  g_assert_cmpint (ds->sample_shape.ndim, ==, 3);
  g_assert_cmpint (ds->sample_shape.d[0], ==, 3);
  g_assert_cmpint (ds->sample_shape.d[1], ==, 32);
  g_assert_cmpint (ds->sample_shape.d[2], ==, 32);
  g_assert_cmpint (ds->n_classes, ==, 10);
  g_assert_cmpuint (g_strv_length (ds->class_names), ==, 10);
  for (int c = 0; c < 10; c++)
    g_assert_cmpstr (ds->class_names[c], ==, names[c]);
  g_assert_true (ds->klass->get_u8 || ds->klass->read_u8);
  for (int64_t i = 0; i < n; i++)
    {
      float label;
      g_autofree float *x = get_sample (ds, i, &label);
      g_assert_cmpfloat (label, ==, cifar_label (first + i));
      for (int k = 0; k < 3072; k++)
        g_assert_cmpfloat (x[k], ==, (float) cifar_pix (first + i, k) / 255.0f);
    }
}

static void
test_cifar (void)
{
  g_autofree char *dir = fresh_dir ("cifar");
  write_cifar_dir (dir);
  g_autofree char *spec = g_strdup_printf ("cifar10:%s", dir);
  g_autoptr (GError) error = NULL;

  /* val_fraction is ignored: CIFAR has its own test file. */
  NlDatasetOptions opts = { .val_fraction = 0.5 };
  g_autoptr (NlDataset) tr = nl_dataset_open_full (spec, TRUE, &opts, &error);
  g_assert_no_error (error);
  check_cifar (tr, 12, 0);
  g_autofree char *desc = g_strdup_printf ("CIFAR-10 train (12 images) from %s", dir);
  g_assert_cmpstr (tr->description, ==, desc);
  g_autoptr (NlDataset) te = nl_dataset_open (spec, FALSE, &error);
  g_assert_no_error (error);
  check_cifar (te, 5, 1000);

  /* The tarball's directory layout is found too. */
  g_autofree char *outer = fresh_dir ("cifar-outer");
  g_autofree char *inner = g_build_filename (outer, "cifar-10-batches-bin", NULL);
  g_assert_cmpint (g_mkdir (inner, 0700), ==, 0);
  write_cifar_dir (inner);
  g_autoptr (NlDataset) te2 = nl_cifar_dataset_open (outer, FALSE, &error);
  g_assert_no_error (error);
  check_cifar (te2, 5, 1000);

  /* A missing batch among 1..5 is named. */
  g_autofree char *b3 = g_build_filename (dir, "data_batch_3.bin", NULL);
  g_autofree char *b3_aside = g_build_filename (dir, "aside", NULL);
  g_assert_cmpint (g_rename (b3, b3_aside), ==, 0);
  g_assert_null (nl_dataset_open (spec, TRUE, &error));
  g_autofree char *want = g_strdup_printf ("cannot open %s: ", b3);
  assert_error_has (error, NL_DATA_ERROR_NOT_FOUND, want);
  g_clear_error (&error);
  g_assert_null (nl_dataset_open (spec, TRUE, &error)); /* test still opens */
  g_clear_error (&error);
  G_GNUC_UNUSED g_autoptr (NlDataset) te3 = nl_dataset_open (spec, FALSE, &error);
  g_assert_no_error (error);

  /* Truncated: the cut record is named. */
  g_autoptr (GBytes) whole = read_all (b3_aside);
  gsize len;
  const guint8 *data = g_bytes_get_data (whole, &len);
  write_bytes (b3, data, len - 100);
  g_assert_null (nl_dataset_open (spec, TRUE, &error));
  g_autofree char *want2 = g_strdup_printf ("%s is truncated", b3);
  assert_error_has (error, NL_DATA_ERROR_CORRUPT, want2);
  assert_error_has (error, NL_DATA_ERROR_CORRUPT, "record 3 at byte 9219");
  g_clear_error (&error);
  /* Empty. */
  write_bytes (b3, "", 0);
  g_assert_null (nl_dataset_open (spec, TRUE, &error));
  assert_error_has (error, NL_DATA_ERROR_CORRUPT, "is empty");
  g_clear_error (&error);
  /* A label out of range. */
  g_autofree guint8 *bad = g_memdup2 (data, len);
  bad[3073 * 2] = 10;
  write_bytes (b3, bad, len);
  g_assert_null (nl_dataset_open (spec, TRUE, &error));
  g_autofree char *want3 = g_strdup_printf ("%s: record 2 at byte 6146 has label 10", b3);
  assert_error_has (error, NL_DATA_ERROR_CORRUPT, want3);
  g_clear_error (&error);
  /* Every truncation of a whole-record file is an error, never a crash. */
  for (gsize cut = 1; cut < len; cut += 997)
    {
      write_bytes (b3, data, cut);
      g_assert_null (nl_dataset_open (spec, TRUE, &error));
      assert_error_has (error, NL_DATA_ERROR_CORRUPT, b3);
      g_clear_error (&error);
    }
  write_bytes (b3, data, len);
  g_autoptr (NlDataset) again = nl_dataset_open (spec, TRUE, &error);
  g_assert_no_error (error);
  check_cifar (again, 12, 0);
}

/* ---- specs and splits ---- */

static void
test_specs (void)
{
  g_autoptr (GError) error = NULL;
  static const char *const need_path[] = { "cifar10", "csv", "folder", "packed", "csv:" };
  for (gsize i = 0; i < G_N_ELEMENTS (need_path); i++)
    {
      g_assert_null (nl_dataset_open (need_path[i], TRUE, &error));
      assert_error_has (error, NL_DATA_ERROR_SPEC, "needs a path");
      g_clear_error (&error);
    }
  g_assert_null (nl_dataset_open ("imagenet:/x", TRUE, &error));
  assert_error_has (error, NL_DATA_ERROR_SPEC, "known: fashion-mnist, mnist, cifar10, csv, folder, packed");
  g_clear_error (&error);
  NlDatasetOptions opts = { .val_fraction = 1.5 };
  g_assert_null (nl_dataset_open_full ("csv:/nonexistent.csv", TRUE, &opts, &error));
  assert_error_has (error, NL_DATA_ERROR_SPEC, "outside [0, 1]");
  g_clear_error (&error);
  opts.val_fraction = NAN;
  g_assert_null (nl_dataset_open_full ("csv:/nonexistent.csv", TRUE, &opts, &error));
  assert_error_has (error, NL_DATA_ERROR_SPEC, "outside [0, 1]");
  g_clear_error (&error);
  g_assert_null (nl_dataset_open ("csv:/nonexistent.csv", TRUE, &error));
  assert_error_has (error, NL_DATA_ERROR_NOT_FOUND, "/nonexistent.csv");
  g_clear_error (&error);
}

static void
check_split (int64_t n, double v)
{
  g_autoptr (GError) error = NULL;
  int64_t nt, nv;
  g_autofree int64_t *t = nl_dataset_split (n, v, TRUE, "x", &nt, &error);
  g_assert_no_error (error);
  g_autofree int64_t *u = nl_dataset_split (n, v, FALSE, "x", &nv, &error);
  g_assert_no_error (error);
  int64_t want_v = (int64_t) floor (v * (double) n + 0.5);
  g_assert_cmpint (nv, ==, want_v);
  g_assert_cmpint (nt, ==, n - want_v);
  g_autofree int *seen = g_new0 (int, n);
  for (int64_t i = 0; i < nt; i++)
    {
      g_assert_true (i == 0 || t[i] > t[i - 1]);
      seen[t[i]]++;
    }
  for (int64_t i = 0; i < nv; i++)
    {
      g_assert_true (i == 0 || u[i] > u[i - 1]);
      seen[u[i]]++;
    }
  for (int64_t i = 0; i < n; i++)
    g_assert_cmpint (seen[i], ==, 1);
  /* Deterministic. */
  int64_t nv2;
  g_autofree int64_t *u2 = nl_dataset_split (n, v, FALSE, "x", &nv2, &error);
  g_assert_cmpint (nv2, ==, nv);
  g_assert_cmpmem (u2, nv2 * sizeof (int64_t), u, nv * sizeof (int64_t));
}

static void
test_split (void)
{
  check_split (10, 0.3);
  check_split (23, 0.3);
  check_split (1000, 0.1);
  check_split (7, 0.5); /* round half away: 4 */
  /* The validation side is shuffled, not a prefix or suffix. */
  int64_t nv;
  g_autofree int64_t *u = nl_dataset_split (1000, 0.1, FALSE, "x", &nv, NULL);
  g_assert_cmpint (nv, ==, 100);
  g_assert_cmpint (u[0], <, 100);
  g_assert_cmpint (u[nv - 1], >, 900);
  /* v == 0: both sides are everything. */
  g_autoptr (GError) error = NULL;
  int64_t na, nb;
  g_autofree int64_t *a = nl_dataset_split (5, 0, TRUE, "x", &na, &error);
  g_autofree int64_t *b = nl_dataset_split (5, 0, FALSE, "x", &nb, &error);
  g_assert_cmpint (na, ==, 5);
  g_assert_cmpint (nb, ==, 5);
  for (int i = 0; i < 5; i++)
    g_assert_true (a[i] == i && b[i] == i);
  /* Empty sides are errors naming the source. */
  g_assert_null (nl_dataset_split (5, 1.0, TRUE, "data.csv", &na, &error));
  assert_error_has (error, NL_DATA_ERROR_SPEC, "data.csv");
  g_clear_error (&error);
  g_assert_null (nl_dataset_split (5, 0.01, FALSE, "data.csv", &na, &error));
  assert_error_has (error, NL_DATA_ERROR_SPEC, "validation side empty");
  g_clear_error (&error);
}

/* ---- CSV ---- */

static NlDataset *
open_csv (const char *path, gboolean train, const NlDatasetOptions *opts, GError **error)
{
  g_autofree char *spec = g_strdup_printf ("csv:%s", path);
  return nl_dataset_open_full (spec, train, opts, error);
}

static void
test_csv_basic (void)
{
  g_autofree char *dir = fresh_dir ("csv");
  g_autofree char *path = g_build_filename (dir, "iris.csv", NULL);
  /* Header, CRLF, a quoted name, spaces, a blank line, a BOM. */
  write_text (path, "\xef\xbb\xbfsepal_length, \"sepal width\",petal_width,species\r\n"
                    "5.1,3.5,0.2,0\r\n"
                    "\r\n"
                    " 4.9 ,3.0,0.2,2\r\n"
                    "6.3,2.5,1.9,1");
  g_autoptr (GError) error = NULL;
  g_autoptr (NlDataset) ds = open_csv (path, TRUE, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpint (ds->length, ==, 3);
  g_assert_cmpint (ds->sample_shape.ndim, ==, 1);
  g_assert_cmpint (ds->sample_shape.d[0], ==, 3);
  g_assert_cmpint (ds->n_classes, ==, 3);
  g_assert_null (ds->class_names);
  static const float want[3][4] = { { 5.1f, 3.5f, 0.2f, 0 }, { 4.9f, 3.0f, 0.2f, 2 }, { 6.3f, 2.5f, 1.9f, 1 } };
  for (int i = 0; i < 3; i++)
    {
      float label;
      g_autofree float *x = get_sample (ds, i, &label);
      g_assert_cmpmem (x, 3 * sizeof (float), want[i], 3 * sizeof (float));
      g_assert_cmpfloat (label, ==, want[i][3]);
    }
  g_assert_nonnull (strstr (ds->description, "label column 3 ('species')"));

  /* Label by name (with the quotes gone) and by index. */
  NlDatasetOptions by_name = { .label_column = "sepal width", .regression = TRUE };
  g_autoptr (NlDataset) n1 = open_csv (path, TRUE, &by_name, &error);
  g_assert_no_error (error);
  g_assert_cmpint (n1->n_classes, ==, 0);
  float label;
  g_autofree float *x1 = get_sample (n1, 1, &label);
  g_assert_cmpfloat (label, ==, 3.0f);
  static const float row1[3] = { 4.9f, 0.2f, 2 };
  g_assert_cmpmem (x1, sizeof row1, row1, sizeof row1);
  NlDatasetOptions by_index = { .label_column = "0", .regression = TRUE };
  g_autoptr (NlDataset) n2 = open_csv (path, TRUE, &by_index, &error);
  g_assert_no_error (error);
  g_autofree float *x2 = get_sample (n2, 2, &label);
  g_assert_cmpfloat (label, ==, 6.3f);
  static const float row2[3] = { 2.5f, 1.9f, 1 };
  g_assert_cmpmem (x2, sizeof row2, row2, sizeof row2);
  /* Real-valued labels are not classes. */
  NlDatasetOptions col0 = { .label_column = "sepal_length" };
  g_assert_null (open_csv (path, TRUE, &col0, &error));
  g_autofree char *w0 = g_strdup_printf ("%s:2: the label in column 0 ('sepal_length') must be a whole number", path);
  assert_error_has (error, NL_DATA_ERROR_CORRUPT, w0);
  g_clear_error (&error);
  NlDatasetOptions nope = { .label_column = "petal_length" };
  g_assert_null (open_csv (path, TRUE, &nope, &error));
  assert_error_has (error, NL_DATA_ERROR_SPEC, "no column named 'petal_length' (columns: 'sepal_length', "
                                               "'sepal width', 'petal_width', 'species')");
  g_clear_error (&error);
  NlDatasetOptions far = { .label_column = "4" };
  g_assert_null (open_csv (path, TRUE, &far, &error));
  assert_error_has (error, NL_DATA_ERROR_SPEC, "label column 4 is out of range");
  g_clear_error (&error);

  /* No header: the first line is data; tabs detected. */
  g_autofree char *plain = g_build_filename (dir, "plain.tsv", NULL);
  write_text (plain, "1\t2\t3\n4\t5\t6\n-7e-1\t8\t0\n");
  g_autoptr (NlDataset) p = open_csv (plain, TRUE, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpint (p->length, ==, 3);
  g_assert_cmpint (p->n_classes, ==, 7);
  g_autofree float *x3 = get_sample (p, 2, &label);
  g_assert_cmpfloat (x3[0], ==, -0.7f);
  g_assert_cmpfloat (x3[1], ==, 8.0f);
  g_assert_cmpfloat (label, ==, 0.0f);
  NlDatasetOptions named = { .label_column = "c" };
  g_assert_null (open_csv (plain, TRUE, &named, &error));
  assert_error_has (error, NL_DATA_ERROR_SPEC, "has no header line");
  g_clear_error (&error);

  /* Regression. */
  g_autofree char *reg = g_build_filename (dir, "reg.csv", NULL);
  write_text (reg, "x,y\n0.5,-1.25\n2,3.75\n");
  NlDatasetOptions r = { .regression = TRUE };
  g_autoptr (NlDataset) rd = open_csv (reg, TRUE, &r, &error);
  g_assert_no_error (error);
  g_assert_cmpint (rd->n_classes, ==, 0);
  g_autofree float *x4 = get_sample (rd, 0, &label);
  g_assert_cmpfloat (x4[0], ==, 0.5f);
  g_assert_cmpfloat (label, ==, -1.25f);
  g_assert_null (open_csv (reg, TRUE, NULL, &error));
  assert_error_has (error, NL_DATA_ERROR_CORRUPT, ":2: the label in column 1 ('y')");
  g_clear_error (&error);
}

static void
expect_csv_error (const char *dir, const char *text, int code, const char *want_fmt)
{
  g_autofree char *path = g_build_filename (dir, "bad.csv", NULL);
  write_text (path, text);
  g_autoptr (GError) error = NULL;
  g_assert_null (open_csv (path, TRUE, NULL, &error));
  g_autofree char *want = g_strdup_printf (want_fmt, path);
  assert_error_has (error, code, want);
}

static void
test_csv_errors (void)
{
  g_autofree char *dir = fresh_dir ("csv-bad");
  expect_csv_error (dir, "a,b,petal_width,c\n1,2,3,0\n\n1,2,abc,1\n", NL_DATA_ERROR_CORRUPT,
                    "%s:4: column 2 ('petal_width') is not a number: 'abc'");
  expect_csv_error (dir, "1,2,3\n4,5,6\n7,x,9\n", NL_DATA_ERROR_CORRUPT, "%s:3: column 1 is not a number: 'x'");
  expect_csv_error (dir, "1,2,3\n4,,6\n", NL_DATA_ERROR_CORRUPT, "%s:2: column 1 is not a number: ''");
  expect_csv_error (dir, "1,2,3\n4,nan,6\n", NL_DATA_ERROR_CORRUPT, "%s:2: column 1 is not a number: 'nan'");
  expect_csv_error (dir, "a,b,c,d,e\n1,2,3,4,5\n1,2,3,4,5\n1,2,3,4,5\n\n\n\n\n1,2,3,4\n", NL_DATA_ERROR_CORRUPT,
                    "%s:9: 4 columns, expected 5");
  expect_csv_error (dir, "1,2\n1,2,3\n", NL_DATA_ERROR_CORRUPT, "%s:2: 3 columns, expected 2");
  expect_csv_error (dir, "", NL_DATA_ERROR_CORRUPT, "%s is empty");
  expect_csv_error (dir, "\n  \n\r\n", NL_DATA_ERROR_CORRUPT, "%s is empty");
  expect_csv_error (dir, "a,b\n", NL_DATA_ERROR_CORRUPT, "%s has a header line but no data rows");
  expect_csv_error (dir, "1\n2\n", NL_DATA_ERROR_CORRUPT, "%s:1: only 1 column");
  expect_csv_error (dir, "1,\"2\n", NL_DATA_ERROR_CORRUPT, "%s:1: column 1 has an opening quote");
  expect_csv_error (dir, "1,2\n3,-1\n", NL_DATA_ERROR_CORRUPT, "%s:2: the label in column 1 must be a whole number");
  expect_csv_error (dir, "1,2\n3,1.5\n", NL_DATA_ERROR_CORRUPT, "%s:2: the label in column 1 must be a whole number");
  /* samples are floats: past their range a value would become infinity */
  expect_csv_error (dir, "x,y,label\n1,2,0\n1e39,2,1\n", NL_DATA_ERROR_CORRUPT,
                    "%s:3: column 0 ('x') holds '1e39', beyond a 32-bit float's range (about ±3.4e38)");
  expect_csv_error (dir, "1,2,0\n1,-4e38,1\n", NL_DATA_ERROR_CORRUPT, "%s:2: column 1 holds '-4e38', beyond");
  expect_csv_error (dir, "1,2\n3,1e300\n", NL_DATA_ERROR_CORRUPT, "%s:2: column 1 holds '1e300', beyond");
  /* A truncated file is a ragged last row. */
  expect_csv_error (dir, "a,b,c\n1,2,0\n3,4", NL_DATA_ERROR_CORRUPT, "%s:3: 2 columns, expected 3");
}

static void
test_csv_split (void)
{
  g_autofree char *dir = fresh_dir ("csv-split");
  g_autofree char *path = g_build_filename (dir, "rows.csv", NULL);
  g_autoptr (GString) text = g_string_new ("id,twice,label\n");
  int n = 23;
  for (int i = 0; i < n; i++)
    g_string_append_printf (text, "%d,%d,%d\n", i, 2 * i, i % 4);
  write_text (path, text->str);

  NlDatasetOptions opts = { .val_fraction = 0.3 };
  g_autoptr (GError) error = NULL;
  g_autoptr (NlDataset) tr = open_csv (path, TRUE, &opts, &error);
  g_assert_no_error (error);
  g_autoptr (NlDataset) va = open_csv (path, FALSE, &opts, &error);
  g_assert_no_error (error);
  g_assert_cmpint (va->length, ==, 7); /* round (6.9) */
  g_assert_cmpint (tr->length, ==, 16);
  g_assert_cmpint (tr->n_classes, ==, 4);
  g_assert_cmpint (va->n_classes, ==, 4); /* from the whole file */
  int seen[23] = { 0 };
  NlDataset *sides[2] = { tr, va };
  for (int s = 0; s < 2; s++)
    for (int64_t i = 0; i < sides[s]->length; i++)
      {
        float label;
        g_autofree float *x = get_sample (sides[s], i, &label);
        int id = (int) x[0];
        g_assert_cmpfloat (x[1], ==, 2.0f * id);
        g_assert_cmpfloat (label, ==, id % 4);
        seen[id]++;
      }
  for (int i = 0; i < n; i++)
    g_assert_cmpint (seen[i], ==, 1);
  /* The same split every time. */
  g_autoptr (NlDataset) va2 = open_csv (path, FALSE, &opts, &error);
  for (int64_t i = 0; i < va->length; i++)
    {
      float l1, l2;
      g_autofree float *a = get_sample (va, i, &l1);
      g_autofree float *b = get_sample (va2, i, &l2);
      g_assert_cmpfloat (a[0], ==, b[0]);
    }
  /* v = 0: both sides are everything. */
  g_autoptr (NlDataset) all = open_csv (path, FALSE, NULL, &error);
  g_assert_cmpint (all->length, ==, n);
}

/* ---- image folders ---- */

static guint8
ipix (int img, int y, int x, int c)
{
  return (guint8) ((img * 29 + y * 17 + x * 7 + c * 61 + (x * y) % 13) % 256);
}

/* Smooth, so that JPEG keeps it within a few levels. */
static guint8
jpix (int img, int y, int x, int c)
{
  return (guint8) (40 + img * 10 + x * 6 + y * 4 + c * 50);
}

static void
write_png (const char *path, int img, int w, int h, png_uint_32 format)
{
  int ch = PNG_IMAGE_PIXEL_CHANNELS (format);
  g_autofree guint8 *buf = g_malloc ((gsize) w * h * ch);
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++)
      for (int c = 0; c < ch; c++)
        buf[((gsize) y * w + x) * ch + c] = ch == 1 ? ipix (img, y, x, 0) : c == 3 ? (guint8) (x * 30) : ipix (img, y, x, c);
  png_image pi;
  memset (&pi, 0, sizeof pi);
  pi.version = PNG_IMAGE_VERSION;
  pi.width = w;
  pi.height = h;
  pi.format = format;
  g_assert_true (png_image_write_to_file (&pi, path, 0, buf, 0, NULL));
}

static void
write_jpeg (const char *path, int img, int w, int h, gboolean gray)
{
  FILE *f = fopen (path, "wb");
  g_assert_nonnull (f);
  struct jpeg_compress_struct cinfo;
  struct jpeg_error_mgr jerr;
  cinfo.err = jpeg_std_error (&jerr);
  jpeg_create_compress (&cinfo);
  jpeg_stdio_dest (&cinfo, f);
  cinfo.image_width = w;
  cinfo.image_height = h;
  cinfo.input_components = gray ? 1 : 3;
  cinfo.in_color_space = gray ? JCS_GRAYSCALE : JCS_RGB;
  jpeg_set_defaults (&cinfo);
  jpeg_set_quality (&cinfo, 98, TRUE);
  cinfo.comp_info[0].h_samp_factor = 1; /* 4:4:4, no chroma subsampling */
  cinfo.comp_info[0].v_samp_factor = 1;
  jpeg_start_compress (&cinfo, TRUE);
  g_autofree guint8 *row = g_malloc ((gsize) w * 3);
  while (cinfo.next_scanline < cinfo.image_height)
    {
      int y = cinfo.next_scanline;
      for (int x = 0; x < w; x++)
        for (int c = 0; c < (gray ? 1 : 3); c++)
          row[x * (gray ? 1 : 3) + c] = jpix (img, y, x, c);
      JSAMPROW rows[1] = { row };
      jpeg_write_scanlines (&cinfo, rows, 1);
    }
  jpeg_finish_compress (&cinfo);
  jpeg_destroy_compress (&cinfo);
  fclose (f);
}

/* The folder used by several tests:
 *   ant/a0.png (RGB 8x6, img 0)  ant/a1.PNG (gray, img 1)  ant/notes.txt
 *   cat/c0.jpg (RGB JPEG, img 2) cat/c1.png (RGBA, img 3)
 *   dog/d0.jpeg (gray JPEG, img 4)
 *   empty/ (no images)   .hidden/x.png (skipped)   top.png (skipped) */
static char *
make_folder (const char *name)
{
  char *dir = fresh_dir (name);
  const char *subs[] = { "ant", "cat", "dog", "empty", ".hidden" };
  for (gsize i = 0; i < G_N_ELEMENTS (subs); i++)
    {
      g_autofree char *p = g_build_filename (dir, subs[i], NULL);
      g_assert_cmpint (g_mkdir (p, 0700), ==, 0);
    }
  g_autofree char *a0 = g_build_filename (dir, "ant", "a0.png", NULL);
  g_autofree char *a1 = g_build_filename (dir, "ant", "a1.PNG", NULL);
  g_autofree char *txt = g_build_filename (dir, "ant", "notes.txt", NULL);
  g_autofree char *c0 = g_build_filename (dir, "cat", "c0.jpg", NULL);
  g_autofree char *c1 = g_build_filename (dir, "cat", "c1.png", NULL);
  g_autofree char *d0 = g_build_filename (dir, "dog", "d0.jpeg", NULL);
  g_autofree char *hid = g_build_filename (dir, ".hidden", "x.png", NULL);
  g_autofree char *top = g_build_filename (dir, "top.png", NULL);
  write_png (a0, 0, 8, 6, PNG_FORMAT_RGB);
  write_png (a1, 1, 8, 6, PNG_FORMAT_GRAY);
  write_text (txt, "not an image");
  write_jpeg (c0, 2, 8, 6, FALSE);
  write_png (c1, 3, 8, 6, PNG_FORMAT_RGBA);
  write_jpeg (d0, 4, 8, 6, TRUE);
  write_png (hid, 5, 8, 6, PNG_FORMAT_RGB);
  write_png (top, 6, 8, 6, PNG_FORMAT_RGB);
  return dir;
}

/* The expected (3, h, w) image of sample `img` of make_folder at its own size. */
static void
expected_image (int img, float *out, double *tol)
{
  *tol = 0;
  for (int c = 0; c < 3; c++)
    for (int y = 0; y < 6; y++)
      for (int x = 0; x < 8; x++)
        {
          int v;
          switch (img)
            {
            case 1:
              v = ipix (1, y, x, 0); /* gray replicated */
              break;
            case 2:
              v = jpix (2, y, x, c);
              *tol = 4.5 / 255;
              break;
            case 4:
              v = jpix (4, y, x, 0);
              *tol = 4.5 / 255;
              break;
            default:
              v = ipix (img, y, x, c); /* alpha of img 3 dropped */
            }
          out[(c * 6 + y) * 8 + x] = (float) v / 255.0f;
        }
}

typedef struct {
  NlDataset *ds;
  float serial[5][144];
  int failures;
} FolderThreads;

static gpointer
decode_worker (gpointer data)
{
  FolderThreads *ft = data;
  float x[144], label;
  for (int round = 0; round < 20; round++)
    for (int i = 0; i < 5; i++)
      if (!nl_dataset_get (ft->ds, i, x, &label, NULL) || memcmp (x, ft->serial[i], sizeof x) != 0)
        g_atomic_int_inc (&ft->failures);
  return NULL;
}

static void
test_folder (void)
{
  g_autofree char *dir = make_folder ("folder");
  g_autofree char *spec = g_strdup_printf ("folder:%s", dir);
  g_autoptr (GError) error = NULL;
  g_autoptr (NlDataset) ds = nl_dataset_open (spec, TRUE, &error);
  g_assert_no_error (error);
  g_assert_cmpint (ds->length, ==, 5);
  g_assert_cmpint (ds->sample_shape.ndim, ==, 3);
  g_assert_cmpint (ds->sample_shape.d[0], ==, 3);
  g_assert_cmpint (ds->sample_shape.d[1], ==, 6);
  g_assert_cmpint (ds->sample_shape.d[2], ==, 8);
  g_assert_cmpint (ds->n_classes, ==, 4);
  const char *names[] = { "ant", "cat", "dog", "empty", NULL };
  g_assert_true (g_strv_equal ((const char *const *) ds->class_names, names));
  g_assert_null (ds->klass->get_u8);
  g_assert_nonnull (ds->klass->read_u8);
  static const int labels[5] = { 0, 0, 1, 1, 2 };
  for (int i = 0; i < 5; i++)
    {
      float label, want[144];
      double tol;
      g_autofree float *x = get_sample (ds, i, &label);
      g_assert_cmpfloat (label, ==, labels[i]);
      expected_image (i, want, &tol);
      nl_test_assert_close (x, want, 144, tol, 0);
    }

  /* Threads decoding at once get what one thread gets. */
  FolderThreads ft = { .ds = ds };
  for (int i = 0; i < 5; i++)
    {
      float label;
      g_autofree float *x = get_sample (ds, i, &label);
      memcpy (ft.serial[i], x, sizeof ft.serial[i]);
    }
  GThread *threads[4];
  for (int t = 0; t < 4; t++)
    threads[t] = g_thread_new ("decode", decode_worker, &ft);
  for (int t = 0; t < 4; t++)
    g_thread_join (threads[t]);
  g_assert_cmpint (g_atomic_int_get (&ft.failures), ==, 0);
}

/* Bilinear with pixel centres aligned, in double: the reference for
 * resizing an image of make_folder (PNG ones, so exact sources). */
static double
ref_bilinear (int img, int c, int sh, int sw, int dh, int dw, int y, int x)
{
  double fy = (y + 0.5) * sh / dh - 0.5, fx = (x + 0.5) * sw / dw - 0.5;
  fy = fy < 0 ? 0 : fy > sh - 1 ? sh - 1 : fy;
  fx = fx < 0 ? 0 : fx > sw - 1 ? sw - 1 : fx;
  int y0 = (int) fy, x0 = (int) fx;
  int y1 = y0 + 1 < sh ? y0 + 1 : y0, x1 = x0 + 1 < sw ? x0 + 1 : x0;
  double wy = fy - y0, wx = fx - x0;
  int cc = img == 1 ? 0 : c;
  double top = ipix (img, y0, x0, cc) * (1 - wx) + ipix (img, y0, x1, cc) * wx;
  double bot = ipix (img, y1, x0, cc) * (1 - wx) + ipix (img, y1, x1, cc) * wx;
  return top * (1 - wy) + bot * wy;
}

static void
test_folder_resize (void)
{
  g_autofree char *dir = make_folder ("folder-resize");
  g_autoptr (GError) error = NULL;
  static const int pngs[3] = { 0, 1, 3 }; /* sample index = img for these */

  /* Halving: each output pixel is the rounded mean of a 2x2 block. */
  NlDatasetOptions half = { .image_width = 4, .image_height = 3 };
  g_autoptr (NlDataset) ds = nl_folder_dataset_open (dir, TRUE, &half, &error);
  g_assert_no_error (error);
  g_assert_cmpint (ds->sample_shape.d[1], ==, 3);
  g_assert_cmpint (ds->sample_shape.d[2], ==, 4);
  for (int k = 0; k < 3; k++)
    {
      int img = pngs[k];
      float label;
      g_autofree float *x = get_sample (ds, img, &label);
      for (int c = 0; c < 3; c++)
        for (int y = 0; y < 3; y++)
          for (int xx = 0; xx < 4; xx++)
            {
              int cc = img == 1 ? 0 : c;
              int sum = ipix (img, 2 * y, 2 * xx, cc) + ipix (img, 2 * y, 2 * xx + 1, cc)
                        + ipix (img, 2 * y + 1, 2 * xx, cc) + ipix (img, 2 * y + 1, 2 * xx + 1, cc);
              int want = (sum * 2 + 4) / 8; /* round half up of sum / 4 */
              g_assert_cmpfloat (x[(c * 3 + y) * 4 + xx], ==, (float) want / 255.0f);
            }
    }
  /* The JPEG ones too, within JPEG's error. */
  float label;
  g_autofree float *jx = get_sample (ds, 2, &label);
  for (int c = 0; c < 3; c++)
    for (int y = 0; y < 3; y++)
      for (int xx = 0; xx < 4; xx++)
        {
          double want = (jpix (2, 2 * y, 2 * xx, c) + jpix (2, 2 * y, 2 * xx + 1, c) + jpix (2, 2 * y + 1, 2 * xx, c)
                         + jpix (2, 2 * y + 1, 2 * xx + 1, c)) / 4.0;
          g_assert_cmpfloat_with_epsilon (jx[(c * 3 + y) * 4 + xx] * 255.0, want, 5.0);
        }

  /* Up and odd sizes against the reference, to the nearest level. */
  static const int sizes[][2] = { { 16, 12 }, { 5, 7 }, { 3, 13 }, { 1, 1 } };
  for (gsize s = 0; s < G_N_ELEMENTS (sizes); s++)
    {
      int dw = sizes[s][0], dh = sizes[s][1];
      NlDatasetOptions o = { .image_width = dw, .image_height = dh };
      g_autoptr (NlDataset) r = nl_folder_dataset_open (dir, TRUE, &o, &error);
      g_assert_no_error (error);
      for (int k = 0; k < 3; k++)
        {
          g_autofree float *x = get_sample (r, pngs[k], &label);
          for (int c = 0; c < 3; c++)
            for (int y = 0; y < dh; y++)
              for (int xx = 0; xx < dw; xx++)
                {
                  double want = ref_bilinear (pngs[k], c, 6, 8, dh, dw, y, xx);
                  double got = x[(c * dh + y) * dw + xx] * 255.0;
                  g_assert_cmpfloat (fabs (got - floor (want + 0.5)), <=, fabs (want - floor (want) - 0.5) < 1e-4 ? 1.0001 : 1e-3);
                }
        }
    }

  /* One side given, the other from the first image. */
  NlDatasetOptions one = { .image_width = 10 };
  g_autoptr (NlDataset) o1 = nl_folder_dataset_open (dir, TRUE, &one, &error);
  g_assert_no_error (error);
  g_assert_cmpint (o1->sample_shape.d[1], ==, 6);
  g_assert_cmpint (o1->sample_shape.d[2], ==, 10);
}

static void
test_folder_errors (void)
{
  g_autoptr (GError) error = NULL;
  /* Corrupt images: open works (the size comes from the first image), get
   * fails naming the file, the other samples still load. */
  g_autofree char *dir = make_folder ("folder-corrupt");
  g_autofree char *c0 = g_build_filename (dir, "cat", "c0.jpg", NULL);
  g_autofree char *c1 = g_build_filename (dir, "cat", "c1.png", NULL);
  g_autofree char *d0 = g_build_filename (dir, "dog", "d0.jpeg", NULL);
  g_autoptr (GBytes) jpg = read_all (c0);
  g_autoptr (GBytes) png = read_all (c1);
  write_bytes (c0, g_bytes_get_data (jpg, NULL), g_bytes_get_size (jpg) * 2 / 3);
  write_bytes (c1, g_bytes_get_data (png, NULL), g_bytes_get_size (png) - 20);
  write_text (d0, "<html>not a picture</html>");
  g_autoptr (NlDataset) ds = nl_folder_dataset_open (dir, TRUE, NULL, &error);
  g_assert_no_error (error);
  float x[144], label;
  g_assert_false (nl_dataset_get (ds, 2, x, &label, &error));
  g_autofree char *w2 = g_strdup_printf ("%s: corrupt JPEG: ", c0);
  assert_error_has (error, NL_DATA_ERROR_CORRUPT, w2);
  g_clear_error (&error);
  g_assert_false (nl_dataset_get (ds, 3, x, &label, &error));
  g_autofree char *w3 = g_strdup_printf ("%s: corrupt PNG: ", c1);
  assert_error_has (error, NL_DATA_ERROR_CORRUPT, w3);
  g_clear_error (&error);
  g_assert_false (nl_dataset_get (ds, 4, x, &label, &error));
  g_autofree char *w4 = g_strdup_printf ("%s is not a PNG or JPEG image", d0);
  assert_error_has (error, NL_DATA_ERROR_CORRUPT, w4);
  g_clear_error (&error);
  g_assert_true (nl_dataset_get (ds, 0, x, &label, &error));
  /* Every truncation of a PNG and a JPEG fails cleanly. (A PNG missing
   * only its 12-byte IEND trailer has all its pixels and decodes.) */
  for (gsize cut = 0; cut < g_bytes_get_size (png) - 12; cut += 3)
    {
      write_bytes (c1, g_bytes_get_data (png, NULL), cut);
      g_assert_false (nl_dataset_get (ds, 3, x, &label, &error));
      assert_error_has (error, NL_DATA_ERROR_CORRUPT, c1);
      g_clear_error (&error);
    }
  for (gsize cut = 0; cut < g_bytes_get_size (jpg) - 2; cut += 5)
    {
      write_bytes (c0, g_bytes_get_data (jpg, NULL), cut);
      g_assert_false (nl_dataset_get (ds, 2, x, &label, &error));
      assert_error_has (error, NL_DATA_ERROR_CORRUPT, c0);
      g_clear_error (&error);
    }
  /* A missing file (deleted after open) is named too. */
  g_unlink (c1);
  g_assert_false (nl_dataset_get (ds, 3, x, &label, &error));
  g_autofree char *w5 = g_strdup_printf ("cannot open %s: ", c1);
  assert_error_has (error, NL_DATA_ERROR_NOT_FOUND, w5);
  g_clear_error (&error);
  /* A corrupt first image fails open, which needs its size. */
  g_autofree char *a0 = g_build_filename (dir, "ant", "a0.png", NULL);
  write_text (a0, "\x89PNG\r\n\x1a\n garbage");
  g_assert_null (nl_folder_dataset_open (dir, TRUE, NULL, &error));
  assert_error_has (error, NL_DATA_ERROR_CORRUPT, a0);
  g_clear_error (&error);

  /* Empty folder, folders without images, no folder. */
  g_autofree char *empty = fresh_dir ("folder-empty");
  g_autofree char *top = g_build_filename (empty, "stray.png", NULL);
  write_png (top, 0, 4, 4, PNG_FORMAT_RGB);
  g_assert_null (nl_folder_dataset_open (empty, TRUE, NULL, &error));
  g_autofree char *w6 = g_strdup_printf ("folder %s has no class subfolders", empty);
  assert_error_has (error, NL_DATA_ERROR_NOT_FOUND, w6);
  g_clear_error (&error);
  g_autofree char *sub = g_build_filename (empty, "cls", NULL);
  g_assert_cmpint (g_mkdir (sub, 0700), ==, 0);
  g_autofree char *txt = g_build_filename (sub, "readme.txt", NULL);
  write_text (txt, "x");
  g_assert_null (nl_folder_dataset_open (empty, TRUE, NULL, &error));
  g_autofree char *w7 = g_strdup_printf ("folder %s has 1 class subfolders but no", empty);
  assert_error_has (error, NL_DATA_ERROR_NOT_FOUND, w7);
  g_clear_error (&error);
  g_autofree char *missing = g_build_filename (empty, "nope", NULL);
  g_assert_null (nl_folder_dataset_open (missing, TRUE, NULL, &error));
  g_autofree char *w8 = g_strdup_printf ("cannot open folder %s", missing);
  assert_error_has (error, NL_DATA_ERROR_NOT_FOUND, w8);
  g_clear_error (&error);
  NlDatasetOptions huge = { .image_width = 100000 };
  g_assert_null (nl_folder_dataset_open (dir, TRUE, &huge, &error));
  assert_error_has (error, NL_DATA_ERROR_SPEC, "image size");
  g_clear_error (&error);
}

static void
test_folder_split (void)
{
  g_autofree char *dir = fresh_dir ("folder-split");
  int n = 10;
  for (int i = 0; i < n; i++)
    {
      g_autofree char *cls = g_build_filename (dir, i < 4 ? "a" : "b", NULL);
      g_mkdir (cls, 0700);
      g_autofree char *name = g_strdup_printf ("img%02d.png", i);
      g_autofree char *p = g_build_filename (cls, name, NULL);
      write_png (p, i, 4, 3, PNG_FORMAT_RGB);
    }
  NlDatasetOptions opts = { .val_fraction = 0.3 };
  g_autoptr (GError) error = NULL;
  g_autofree char *spec = g_strdup_printf ("folder:%s", dir);
  g_autoptr (NlDataset) tr = nl_dataset_open_full (spec, TRUE, &opts, &error);
  g_assert_no_error (error);
  g_autoptr (NlDataset) va = nl_dataset_open_full (spec, FALSE, &opts, &error);
  g_assert_no_error (error);
  g_assert_cmpint (tr->length, ==, 7);
  g_assert_cmpint (va->length, ==, 3);
  g_assert_cmpint (va->n_classes, ==, 2);
  int seen[10] = { 0 };
  NlDataset *sides[2] = { tr, va };
  for (int s = 0; s < 2; s++)
    for (int64_t i = 0; i < sides[s]->length; i++)
      {
        float label;
        g_autofree float *x = get_sample (sides[s], i, &label);
        /* Which image: the one whose pattern this is. */
        int id = -1;
        for (int k = 0; k < n; k++)
          if (x[0] == ipix (k, 0, 0, 0) / 255.0f && x[1] == ipix (k, 0, 1, 0) / 255.0f)
            id = k;
        g_assert_cmpint (id, >=, 0);
        g_assert_cmpfloat (label, ==, id < 4 ? 0 : 1);
        seen[id]++;
      }
  for (int i = 0; i < n; i++)
    g_assert_cmpint (seen[i], ==, 1);
  g_assert_nonnull (strstr (va->description, "validation (3 of 10 images"));
}

/* ---- packed records ---- */

static void
test_record_bytes (void)
{
  g_autofree char *dir = fresh_dir ("rec-bytes");
  g_autofree char *path = g_build_filename (dir, "r.rec", NULL);
  g_autoptr (GError) error = NULL;
  NlRecordWriter *w = nl_record_writer_open (path, &error);
  g_assert_no_error (error);
  g_assert_true (nl_record_writer_append (w, "abcde", 5, &error));
  static const guint8 with_magic[8] = { 0x0a, 0x23, 0xd7, 0xce, 'w', 'x', 'y', 'z' };
  g_assert_true (nl_record_writer_append (w, with_magic, 8, &error));
  g_assert_true (nl_record_writer_append (w, "", 0, &error));
  g_assert_cmpint (nl_record_writer_count (w), ==, 3);
  /* Nothing under the final name until close. */
  g_assert_false (g_file_test (path, G_FILE_TEST_EXISTS));
  g_assert_true (nl_record_writer_close (w, &error));
  g_assert_no_error (error);
  g_autofree char *listing = dir_listing (dir);
  g_assert_cmpstr (listing, ==, "r.rec");

  static const guint8 want[] = {
    0x0a, 0x23, 0xd7, 0xce, 5, 0, 0, 0, 'a', 'b', 'c', 'd', 'e', 0, 0, 0, /* whole */
    0x0a, 0x23, 0xd7, 0xce, 0, 0, 0, 0x20,                                /* first, empty */
    0x0a, 0x23, 0xd7, 0xce, 4, 0, 0, 0x60, 'w', 'x', 'y', 'z',            /* last */
    0x0a, 0x23, 0xd7, 0xce, 0, 0, 0, 0,                                   /* whole, empty */
  };
  g_autoptr (GBytes) got = read_all (path);
  g_assert_cmpmem (g_bytes_get_data (got, NULL), g_bytes_get_size (got), want, sizeof want);

  g_autoptr (NlRecordReader) r = nl_record_reader_open (path, &error);
  g_assert_no_error (error);
  const guint8 *data;
  size_t len;
  g_assert_cmpint (nl_record_reader_next (r, &data, &len, &error), ==, 1);
  g_assert_cmpmem (data, len, "abcde", 5);
  g_assert_cmpint (nl_record_reader_offset (r), ==, 0);
  g_assert_cmpint (nl_record_reader_next (r, &data, &len, &error), ==, 1);
  g_assert_cmpmem (data, len, with_magic, 8);
  g_assert_cmpint (nl_record_reader_offset (r), ==, 16);
  g_assert_cmpint (nl_record_reader_next (r, &data, &len, &error), ==, 1);
  g_assert_cmpuint (len, ==, 0);
  g_assert_cmpint (nl_record_reader_next (r, &data, &len, &error), ==, 0);
  g_assert_no_error (error);

  /* Abort leaves nothing, not even the old file's replacement. */
  NlRecordWriter *w2 = nl_record_writer_open (path, &error);
  g_assert_true (nl_record_writer_append (w2, "zz", 2, &error));
  nl_record_writer_abort (w2);
  g_autofree char *listing2 = dir_listing (dir);
  g_assert_cmpstr (listing2, ==, "r.rec");
  g_autoptr (GBytes) same = read_all (path);
  g_assert_true (g_bytes_equal (same, got));
  /* A writer into a missing directory fails at open. */
  g_autofree char *bad = g_build_filename (dir, "no", "x.rec", NULL);
  g_assert_null (nl_record_writer_open (bad, &error));
  g_assert_error (error, G_FILE_ERROR, G_FILE_ERROR_NOENT);
}

/* Random payloads, many with the magic word planted (followed by zeros, a
 * valid-looking "whole, empty" header), at aligned and unaligned offsets,
 * some consecutive, and lengths that need several parts at max_part 64.
 * Each starts with its index. */
static GPtrArray *
make_payloads (int n, guint32 seed)
{
  GPtrArray *all = g_ptr_array_new_with_free_func ((GDestroyNotify) g_bytes_unref);
  GRand *rng = g_rand_new_with_seed (seed);
  for (int i = 0; i < n; i++)
    {
      int len = 4 + g_rand_int_range (rng, 0, i % 10 == 0 ? 700 : 120);
      guint8 *p = g_malloc (len);
      for (int k = 0; k < len; k++)
        p[k] = (guint8) g_rand_int (rng);
      memcpy (p, &i, 4);
      int plants = i % 3 == 0 ? g_rand_int_range (rng, 1, 6) : 0;
      for (int t = 0; t < plants && len >= 16; t++)
        {
          int at = g_rand_int_range (rng, 4, len - 8);
          if (t % 2 == 0)
            at &= ~3;
          if (at < 4)
            at = 4;
          static const guint8 fake[8] = { 0x0a, 0x23, 0xd7, 0xce, 0, 0, 0, 0 };
          memcpy (p + at, fake, MIN (8, len - at));
        }
      if (i % 17 == 5 && len >= 20) /* consecutive magic words */
        for (int at = 4; at + 4 <= 20; at += 4)
          memcpy (p + at, (guint8[]) { 0x0a, 0x23, 0xd7, 0xce }, 4);
      g_ptr_array_add (all, g_bytes_new_take (p, len));
    }
  g_rand_free (rng);
  return all;
}

static void
write_payloads (const char *path, GPtrArray *all, guint32 max_part)
{
  g_autoptr (GError) error = NULL;
  NlRecordWriter *w = nl_record_writer_open (path, &error);
  g_assert_no_error (error);
  if (max_part)
    nl_record_writer_set_max_part (w, max_part);
  for (guint i = 0; i < all->len; i++)
    {
      gsize len;
      const void *p = g_bytes_get_data (all->pdata[i], &len);
      g_assert_true (nl_record_writer_append (w, p, len, &error));
    }
  g_assert_true (nl_record_writer_close (w, &error));
  g_assert_no_error (error);
}

/* Read [begin, end) and check its records are all[*next ...], advancing *next. */
static void
read_range_into (const char *path, int64_t begin, int64_t end, GPtrArray *all, guint *next)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (NlRecordReader) r = nl_record_reader_open_range (path, begin, end, &error);
  g_assert_no_error (error);
  const guint8 *data;
  size_t len;
  int rc;
  while ((rc = nl_record_reader_next (r, &data, &len, &error)) == 1)
    {
      g_assert_cmpuint (*next, <, all->len);
      gsize wl;
      const void *want = g_bytes_get_data (all->pdata[*next], &wl);
      g_assert_cmpmem (data, len, want, wl);
      g_assert_cmpint (nl_record_reader_offset (r), >=, begin);
      g_assert_cmpint (nl_record_reader_offset (r), <, end);
      (*next)++;
    }
  g_assert_no_error (error);
  g_assert_cmpint (rc, ==, 0);
}

static void
test_record_parts (void)
{
  g_autofree char *dir = fresh_dir ("rec-parts");
  g_autofree char *path = g_build_filename (dir, "p.rec", NULL);
  g_autoptr (GPtrArray) all = make_payloads (300, 7);
  g_autoptr (GError) error = NULL;
  for (int pass = 0; pass < 2; pass++)
    {
      write_payloads (path, all, pass ? 64 : 0);
      g_autoptr (GBytes) file = read_all (path);
      int64_t size = g_bytes_get_size (file);
      if (pass)
        {
          /* Multi-part records really exist: more headers than records,
           * and no part longer than 64 bytes. */
          const guint8 *f = g_bytes_get_data (file, NULL);
          int headers = 0;
          for (int64_t off = 0; off < size;)
            {
              guint32 lrec;
              memcpy (&lrec, f + off + 4, 4);
              g_assert_cmpuint (lrec & ((1u << 29) - 1), <=, 64);
              headers++;
              off += 8 + (((lrec & ((1u << 29) - 1)) + 3) & ~3u);
            }
          g_assert_cmpint (headers, >, 400);
        }
      /* The whole file, then N equal parts. */
      guint next = 0;
      read_range_into (path, 0, size, all, &next);
      g_assert_cmpuint (next, ==, all->len);
      for (int n = 1; n <= 5; n++)
        {
          next = 0;
          for (int k = 0; k < n; k++)
            {
              g_autoptr (NlRecordReader) r = nl_record_reader_open_part (path, k, n, &error);
              g_assert_no_error (error);
              const guint8 *data;
              size_t len;
              while (nl_record_reader_next (r, &data, &len, &error) == 1)
                {
                  gsize wl;
                  const void *want = g_bytes_get_data (all->pdata[next], &wl);
                  g_assert_cmpmem (data, len, want, wl);
                  next++;
                }
              g_assert_no_error (error);
            }
          g_assert_cmpuint (next, ==, all->len);
        }
      /* Arbitrary split points: unaligned, inside headers, inside
       * multi-part records, repeated, empty ranges. */
      GRand *rng = g_rand_new_with_seed (11 + pass);
      for (int trial = 0; trial < 60; trial++)
        {
          int n = 1 + trial % 5;
          int64_t cuts[6];
          cuts[0] = 0;
          cuts[n] = size;
          for (int k = 1; k < n; k++)
            cuts[k] = g_rand_int_range (rng, 0, (gint32) size + 1);
          for (int a = 1; a < n; a++) /* sort the inner cuts */
            for (int b = a + 1; b < n; b++)
              if (cuts[b] < cuts[a])
                {
                  int64_t t = cuts[a];
                  cuts[a] = cuts[b];
                  cuts[b] = t;
                }
          next = 0;
          for (int k = 0; k < n; k++)
            read_range_into (path, cuts[k], cuts[k + 1], all, &next);
          g_assert_cmpuint (next, ==, all->len);
        }
      /* Every single cut point, two readers. */
      for (int64_t cut = 0; cut <= size; cut += pass ? 3 : 5)
        {
          next = 0;
          read_range_into (path, 0, cut, all, &next);
          read_range_into (path, cut, size, all, &next);
          g_assert_cmpuint (next, ==, all->len);
        }
      g_rand_free (rng);
    }
}

/* Read the whole file; the number of records, or -1 with error. */
static int
read_count (const char *path, int64_t begin, int64_t end, GError **error)
{
  g_autoptr (NlRecordReader) r = nl_record_reader_open_range (path, begin, end, error);
  if (!r)
    return -1;
  const guint8 *data;
  size_t len;
  int n = 0, rc;
  while ((rc = nl_record_reader_next (r, &data, &len, error)) == 1)
    n++;
  return rc < 0 ? -1 : n;
}

static void
test_record_corrupt (void)
{
  g_autofree char *dir = fresh_dir ("rec-bad");
  g_autofree char *good = g_build_filename (dir, "good.rec", NULL);
  g_autofree char *path = g_build_filename (dir, "bad.rec", NULL);
  g_autoptr (GPtrArray) all = make_payloads (40, 3);
  write_payloads (good, all, 32);
  g_autoptr (GBytes) file = read_all (good);
  gsize size;
  const guint8 *f = g_bytes_get_data (file, &size);
  /* Record starts, by walking the headers. */
  g_autoptr (GArray) starts = g_array_new (FALSE, FALSE, sizeof (gsize));
  for (gsize off = 0; off < size;)
    {
      guint32 lrec;
      memcpy (&lrec, f + off + 4, 4);
      guint32 cflag = (lrec >> 29) & 3;
      if (cflag == 0 || cflag == 1)
        g_array_append_val (starts, off);
      off += 8 + (((lrec & ((1u << 29) - 1)) + 3) & ~3u);
    }
  g_assert_cmpuint (starts->len, ==, all->len);

  /* Every truncation: a clean shorter file at record boundaries, else an
   * error naming the record being cut. */
  g_autoptr (GError) error = NULL;
  guint whole = 0;
  for (gsize cut = 0; cut < size; cut++)
    {
      while (whole < starts->len && g_array_index (starts, gsize, whole) < cut)
        whole++;
      gboolean boundary = whole < starts->len && g_array_index (starts, gsize, whole) == cut;
      write_bytes (path, f, cut);
      int n = read_count (path, 0, G_MAXINT64, &error);
      if (boundary)
        {
          g_assert_no_error (error);
          g_assert_cmpint (n, ==, whole);
        }
      else
        {
          g_assert_cmpint (n, ==, -1);
          g_autofree char *want = g_strdup_printf ("%s: record %u at byte %" G_GSIZE_FORMAT " is ", path, whole - 1,
                                                   g_array_index (starts, gsize, whole - 1));
          assert_error_has (error, NL_DATA_ERROR_CORRUPT, want);
          g_clear_error (&error);
        }
    }

  /* Bad magic at record 12. */
  g_autofree guint8 *bad = g_memdup2 (f, size);
  gsize at12 = g_array_index (starts, gsize, 12);
  bad[at12] ^= 0x40;
  write_bytes (path, bad, size);
  g_assert_cmpint (read_count (path, 0, G_MAXINT64, &error), ==, -1);
  g_autofree char *want = g_strdup_printf ("%s: record 12 at byte %" G_GSIZE_FORMAT " is corrupt (bad magic 0x", path, at12);
  assert_error_has (error, NL_DATA_ERROR_CORRUPT, want);
  g_clear_error (&error);
  /* Part readers together find it too, whatever the split. */
  for (int n = 2; n <= 5; n++)
    {
      gboolean failed = FALSE;
      for (int k = 0; k < n; k++)
        {
          g_autoptr (NlRecordReader) r = nl_record_reader_open_part (path, k, n, &error);
          const guint8 *data;
          size_t len;
          int rc;
          while ((rc = nl_record_reader_next (r, &data, &len, &error)) == 1)
            ;
          if (rc < 0)
            {
              assert_error_has (error, NL_DATA_ERROR_CORRUPT, "bad magic");
              failed = TRUE;
            }
          g_clear_error (&error);
        }
      g_assert_true (failed);
    }
  /* A continuation part where a record should start. */
  memcpy (bad, f, size);
  bad[at12 + 7] |= 0x40;
  write_bytes (path, bad, size);
  g_assert_cmpint (read_count (path, 0, G_MAXINT64, &error), ==, -1);
  assert_error_has (error, NL_DATA_ERROR_CORRUPT, "is corrupt (a continuation part where a record should start)");
  g_clear_error (&error);
  /* A length beyond the end. */
  memcpy (bad, f, size);
  bad[at12 + 6] = 0x1f;
  write_bytes (path, bad, size);
  g_assert_cmpint (read_count (path, 0, G_MAXINT64, &error), ==, -1);
  assert_error_has (error, NL_DATA_ERROR_CORRUPT, "record 12");
  g_clear_error (&error);
  /* Random damage: an error or a read, never a crash or a hang. */
  GRand *rng = g_rand_new_with_seed (5);
  for (int trial = 0; trial < 200; trial++)
    {
      memcpy (bad, f, size);
      for (int k = 0; k < 3; k++)
        bad[g_rand_int_range (rng, 0, (gint32) size)] = (guint8) g_rand_int (rng);
      write_bytes (path, bad, size);
      int64_t cut = g_rand_int_range (rng, 0, (gint32) size);
      for (int part = 0; part < 2; part++)
        {
          int n = read_count (path, part ? cut : 0, part ? G_MAXINT64 : cut, &error);
          g_assert_true ((n >= 0) == (error == NULL));
          g_clear_error (&error);
        }
    }
  g_rand_free (rng);
  /* Missing file. */
  g_autofree char *missing = g_build_filename (dir, "none.rec", NULL);
  g_assert_null (nl_record_reader_open (missing, &error));
  assert_error_has (error, NL_DATA_ERROR_NOT_FOUND, missing);
}

/* ---- packed datasets ---- */

static void
put_be32 (guint8 *p, guint32 v)
{
  p[0] = v >> 24;
  p[1] = v >> 16;
  p[2] = v >> 8;
  p[3] = v;
}

/* An IDX pair of n images of rows x cols with a formula, opened with
 * 4 named classes. */
static NlDataset *
make_idx (const char *dir, int n, int rows, int cols)
{
  g_autofree char *ip = g_build_filename (dir, "images-idx3-ubyte", NULL);
  g_autofree char *lp = g_build_filename (dir, "labels-idx1-ubyte", NULL);
  gsize numel = (gsize) rows * cols;
  g_autofree guint8 *img = g_malloc (16 + n * numel);
  g_autofree guint8 *lab = g_malloc (8 + n);
  put_be32 (img, 0x803);
  put_be32 (img + 4, n);
  put_be32 (img + 8, rows);
  put_be32 (img + 12, cols);
  put_be32 (lab, 0x801);
  put_be32 (lab + 4, n);
  for (int i = 0; i < n; i++)
    {
      for (gsize k = 0; k < numel; k++)
        img[16 + i * numel + k] = (guint8) ((i * 13 + k * 5 + k * k) % 256);
      /* Plant the record magic in the pixels: the packer must escape it. */
      if (numel >= 12)
        memcpy (img + 16 + i * numel + 8 - ((16 + 5 + 4 * 3 + 1) % 4), (guint8[]) { 0x0a, 0x23, 0xd7, 0xce }, 4);
      lab[8 + i] = (guint8) (i % 4);
    }
  write_bytes (ip, img, 16 + n * numel);
  write_bytes (lp, lab, 8 + n);
  static const char *const names[] = { "zero", "one", "two", "three" };
  g_autoptr (GError) error = NULL;
  NlDataset *ds = nl_idx_dataset_open_full (ip, lp, 4, names, &error);
  g_assert_no_error (error);
  return ds;
}

/* packed:path against the original: same metadata, bit-identical samples. */
static NlDataset *
check_packed (NlDataset *orig, const char *path)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *spec = g_strdup_printf ("packed:%s", path);
  NlDataset *p = nl_dataset_open (spec, TRUE, &error);
  g_assert_no_error (error);
  g_assert_cmpint (p->length, ==, orig->length);
  g_assert_true (nl_shape_equal (&p->sample_shape, &orig->sample_shape));
  g_assert_cmpint (p->n_classes, ==, orig->n_classes);
  if (orig->class_names)
    g_assert_true (g_strv_equal ((const char *const *) p->class_names, (const char *const *) orig->class_names));
  else
    g_assert_null (p->class_names);
  g_assert_true ((p->klass->read_u8 != NULL) == (orig->klass->get_u8 || orig->klass->read_u8));
  g_assert_nonnull (strstr (p->description, orig->description));
  int64_t numel = nl_shape_numel (&p->sample_shape);
  for (int64_t i = 0; i < p->length; i++)
    {
      float la, lb;
      g_autofree float *a = get_sample (orig, i, &la);
      g_autofree float *b = get_sample (p, i, &lb);
      g_assert_cmpmem (a, numel * sizeof (float), b, numel * sizeof (float));
      g_assert_cmpmem (&la, 4, &lb, 4);
    }
  return p;
}

static void
test_packed_roundtrip (void)
{
  g_autofree char *dir = fresh_dir ("packed");
  g_autofree char *src = fresh_dir ("packed-src");
  g_autoptr (GError) error = NULL;
  g_autofree char *path = g_build_filename (dir, "idx.rec", NULL);

  /* IDX (uint8), whole records and split into 16-byte parts. */
  g_autoptr (NlDataset) idx = make_idx (src, 9, 5, 7);
  g_assert_true (nl_record_pack_dataset (idx, path, NULL, &error));
  g_assert_no_error (error);
  NlDataset *p1 = check_packed (idx, path);
  nl_dataset_free (p1);
  g_assert_true (nl_record_pack_dataset_full (idx, path, 16, NULL, &error));
  g_assert_no_error (error);
  p1 = check_packed (idx, path);
  nl_dataset_free (p1);

  /* CSV (float32, regression labels). */
  g_autofree char *csv = g_build_filename (src, "r.csv", NULL);
  write_text (csv, "a,b,c,y\n0.1,-2,3e-7,0.25\n1,2,3,-4.5\n1e30,-0,7,1\n");
  NlDatasetOptions reg = { .regression = TRUE };
  g_autoptr (NlDataset) cd = nl_csv_dataset_open (csv, TRUE, &reg, &error);
  g_assert_no_error (error);
  g_autofree char *cpath = g_build_filename (dir, "csv.rec", NULL);
  g_assert_true (nl_record_pack_dataset (cd, cpath, NULL, &error));
  NlDataset *p2 = check_packed (cd, cpath);
  g_assert_null (p2->klass->read_u8);
  g_assert_cmpint (p2->n_classes, ==, 0);
  nl_dataset_free (p2);
  g_assert_true (nl_record_pack_dataset_full (cd, cpath, 4, NULL, &error));
  nl_dataset_free (check_packed (cd, cpath));

  /* CIFAR-10 (get_u8) and an image folder (read_u8). */
  g_autofree char *cdir = fresh_dir ("packed-cifar");
  write_cifar_dir (cdir);
  g_autoptr (NlDataset) cif = nl_cifar_dataset_open (cdir, TRUE, &error);
  g_assert_no_error (error);
  g_autofree char *cifpath = g_build_filename (dir, "cifar.rec", NULL);
  g_assert_true (nl_record_pack_dataset (cif, cifpath, NULL, &error));
  NlDataset *p3 = check_packed (cif, cifpath);
  check_cifar (p3, 12, 0);
  nl_dataset_free (p3);
  g_autofree char *fdir = make_folder ("packed-folder");
  g_autoptr (NlDataset) fol = nl_folder_dataset_open (fdir, TRUE, NULL, &error);
  g_assert_no_error (error);
  g_autofree char *fpath = g_build_filename (dir, "folder.rec", NULL);
  g_assert_true (nl_record_pack_dataset_full (fol, fpath, 100, NULL, &error));
  nl_dataset_free (check_packed (fol, fpath));

  /* A packed file packs again to the same bytes. */
  g_autoptr (NlDataset) again = nl_packed_dataset_open (path, &error);
  g_autofree char *path2 = g_build_filename (src, "again.rec", NULL);
  g_assert_true (nl_record_pack_dataset_full (again, path2, 16, NULL, &error));
  g_autoptr (GBytes) b1 = read_all (path);
  g_autoptr (GBytes) b2 = read_all (path2);
  /* Only the description differs (it names the packed file). */
  g_assert_cmpuint (g_bytes_get_size (b2), >, g_bytes_get_size (b1) - 64);
  nl_dataset_free (check_packed (idx, path2));

  /* Cancelled: an error, and no file at all. */
  g_autofree char *before = dir_listing (dir);
  g_autoptr (GCancellable) cancel = g_cancellable_new ();
  g_cancellable_cancel (cancel);
  g_autofree char *cpath2 = g_build_filename (dir, "cancelled.rec", NULL);
  g_assert_false (nl_record_pack_dataset (idx, cpath2, cancel, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_clear_error (&error);
  g_autofree char *after = dir_listing (dir);
  g_assert_cmpstr (before, ==, after);
  /* A sample that fails to load fails the pack the same way. */
  g_autofree char *c1 = g_build_filename (fdir, "cat", "c1.png", NULL);
  write_text (c1, "broken");
  g_assert_false (nl_record_pack_dataset (fol, cpath2, NULL, &error));
  assert_error_has (error, NL_DATA_ERROR_CORRUPT, c1);
  g_clear_error (&error);
  g_autofree char *after2 = dir_listing (dir);
  g_assert_cmpstr (before, ==, after2);
}

static void
test_packed_corrupt (void)
{
  g_autofree char *dir = fresh_dir ("packed-bad");
  g_autoptr (GError) error = NULL;
  g_autoptr (NlDataset) idx = make_idx (dir, 9, 5, 7);
  g_autofree char *good = g_build_filename (dir, "good.rec", NULL);
  g_autofree char *path = g_build_filename (dir, "bad.rec", NULL);
  g_assert_true (nl_record_pack_dataset_full (idx, good, 32, NULL, &error));
  g_autoptr (GBytes) file = read_all (good);
  gsize size;
  const guint8 *f = g_bytes_get_data (file, &size);

  /* Every truncation fails at open: mid-record by the framing, at a record
   * boundary by the sample count in the metadata. */
  for (gsize cut = 0; cut < size; cut++)
    {
      write_bytes (path, f, cut);
      g_assert_null (nl_packed_dataset_open (path, &error));
      assert_error_has (error, NL_DATA_ERROR_CORRUPT, path);
      g_clear_error (&error);
    }
  write_bytes (path, "", 0);
  g_assert_null (nl_packed_dataset_open (path, &error));
  assert_error_has (error, NL_DATA_ERROR_CORRUPT, "is empty");
  g_clear_error (&error);

  /* Find sample 4 (record 5) by reading. */
  g_autoptr (NlRecordReader) r = nl_record_reader_open (good, &error);
  const guint8 *data;
  size_t len;
  for (int k = 0; k <= 5; k++)
    g_assert_cmpint (nl_record_reader_next (r, &data, &len, &error), ==, 1);
  int64_t at5 = nl_record_reader_offset (r);
  g_autofree guint8 *bad = g_memdup2 (f, size);
  bad[at5 + 1] = 0;
  write_bytes (path, bad, size);
  g_assert_null (nl_packed_dataset_open (path, &error));
  g_autofree char *want = g_strdup_printf ("%s: record 5 at byte %" G_GINT64_FORMAT " is corrupt (bad magic", path, at5);
  assert_error_has (error, NL_DATA_ERROR_CORRUPT, want);
  g_clear_error (&error);

  /* Damage inside a sample, in its header (the dims of record 5 start at
   * payload byte 5) or its pixels (byte 20, in the first part): open works (the framing is fine), get
   * names the record by its checksum. */
  float x[35], label;
  g_autofree char *want2 = g_strdup_printf ("%s: record 5 at byte %" G_GINT64_FORMAT " is damaged: checksum mismatch",
                                            path, at5);
  for (int where = 5; where <= 20; where += 15)
    {
      memcpy (bad, f, size);
      bad[at5 + 8 + where] ^= 1;
      write_bytes (path, bad, size);
      g_autoptr (NlDataset) pd = nl_packed_dataset_open (path, &error);
      g_assert_no_error (error);
      g_assert_cmpint (nl_packed_dataset_version (pd), ==, 2);
      g_assert_false (nl_dataset_get (pd, 4, x, &label, &error));
      assert_error_has (error, NL_DATA_ERROR_CORRUPT, want2);
      g_clear_error (&error);
      g_assert_true (nl_dataset_get (pd, 3, x, &label, &error));
    }
  /* Damage in the metadata's JSON: its checksum too. */
  memcpy (bad, f, size);
  bad[8 + 6 + 3] ^= 1;
  write_bytes (path, bad, size);
  g_assert_null (nl_packed_dataset_open (path, &error));
  assert_error_has (error, NL_DATA_ERROR_CORRUPT, "record 0 at byte 0 has bad metadata: checksum mismatch");
  g_clear_error (&error);
  memcpy (bad, f, size);
  bad[at5 + 8 + 5] ^= 1;
  write_bytes (path, bad, size);
  g_autoptr (NlDataset) p = nl_packed_dataset_open (path, &error);
  g_assert_no_error (error);
  /* The file shrinking under an open dataset: get errors, no crash. */
  g_assert_cmpint (truncate (path, at5 + 12), ==, 0);
  g_assert_false (nl_dataset_get (p, 8, x, &label, &error));
  assert_error_has (error, NL_DATA_ERROR_CORRUPT, "record 9");
  g_clear_error (&error);

  /* Not a netloom file, bad JSON, an extra record. */
  NlRecordWriter *w = nl_record_writer_open (path, &error);
  nl_record_writer_append (w, "hello world", 11, &error);
  g_assert_true (nl_record_writer_close (w, &error));
  g_assert_null (nl_packed_dataset_open (path, &error));
  assert_error_has (error, NL_DATA_ERROR_CORRUPT, "record 0 at byte 0 is not netloom metadata");
  g_clear_error (&error);
  static const char *const metas[] = {
    "{\"format\": \"netloom-packed\", \"version\": 1",
    "{\"format\": \"other\", \"version\": 1, \"length\": 0, \"sample_shape\": [2], \"dtype\": \"u8\", \"n_classes\": 0}",
    "{\"format\": \"netloom-packed\", \"version\": 3, \"length\": 0, \"sample_shape\": [2], \"dtype\": \"u8\", \"n_classes\": 0}",
    /* version 2 with no checksum of its JSON where the label was */
    "{\"format\": \"netloom-packed\", \"version\": 2, \"length\": 0, \"sample_shape\": [2], \"dtype\": \"u8\", \"n_classes\": 0}",
    "{\"format\": \"netloom-packed\", \"version\": 1, \"length\": -1, \"sample_shape\": [2], \"dtype\": \"u8\", \"n_classes\": 0}",
    "{\"format\": \"netloom-packed\", \"version\": 1, \"length\": 0, \"sample_shape\": [0], \"dtype\": \"u8\", \"n_classes\": 0}",
    "{\"format\": \"netloom-packed\", \"version\": 1, \"length\": 0, \"sample_shape\": [1,1,1,1,1,1,1], \"dtype\": \"u8\", \"n_classes\": 0}",
    "{\"format\": \"netloom-packed\", \"version\": 1, \"length\": 0, \"sample_shape\": [2], \"dtype\": \"f64\", \"n_classes\": 0}",
    "{\"format\": \"netloom-packed\", \"version\": 1, \"length\": 0, \"sample_shape\": [2], \"dtype\": \"u8\", \"n_classes\": 2, \"class_names\": [\"a\"]}",
    "[1, 2]",
    /* wrong-typed members: an error, not a json-glib critical */
    "{\"format\": [\"netloom-packed\"], \"version\": 1, \"length\": 0, \"sample_shape\": [2], \"dtype\": \"u8\", \"n_classes\": 0}",
    "{\"format\": \"netloom-packed\", \"version\": 1, \"length\": 0, \"sample_shape\": [2], \"dtype\": {}, \"n_classes\": 0}",
    "{\"format\": \"netloom-packed\", \"version\": 1, \"length\": 0, \"sample_shape\": [2], \"dtype\": \"u8\", \"n_classes\": 0, \"description\": [1]}",
    "",
    "  ",
  };
  for (gsize k = 0; k < G_N_ELEMENTS (metas); k++)
    {
      w = nl_record_writer_open (path, &error);
      g_autofree guint8 *m = g_malloc (6 + strlen (metas[k]));
      memset (m, 0, 6);
      m[5] = 0xff;
      memcpy (m + 6, metas[k], strlen (metas[k]));
      nl_record_writer_append (w, m, 6 + strlen (metas[k]), &error);
      g_assert_true (nl_record_writer_close (w, &error));
      g_assert_null (nl_packed_dataset_open (path, &error));
      assert_error_has (error, NL_DATA_ERROR_CORRUPT, "record 0 at byte 0 has bad metadata");
      g_clear_error (&error);
    }
  /* One record more than declared. */
  {
    g_autoptr (NlRecordReader) rr = nl_record_reader_open (good, &error);
    w = nl_record_writer_open (path, &error);
    while (nl_record_reader_next (rr, &data, &len, &error) == 1)
      nl_record_writer_append (w, data, len, &error);
    nl_record_writer_append (w, data, len, &error);
    g_assert_true (nl_record_writer_close (w, &error));
    g_assert_null (nl_packed_dataset_open (path, &error));
    assert_error_has (error, NL_DATA_ERROR_CORRUPT, "record 10 at byte");
    assert_error_has (error, NL_DATA_ERROR_CORRUPT, "one more than the 9 samples");
    g_clear_error (&error);
  }

  /* Random damage: errors or data, never a crash or a hang. */
  GRand *rng = g_rand_new_with_seed (9);
  for (int trial = 0; trial < 300; trial++)
    {
      memcpy (bad, f, size);
      for (int k = 0; k < 2; k++)
        bad[g_rand_int_range (rng, 0, (gint32) size)] = (guint8) g_rand_int (rng);
      write_bytes (path, bad, size);
      NlDataset *d = nl_packed_dataset_open (path, &error);
      if (!d)
        {
          g_assert_nonnull (error);
          g_clear_error (&error);
          continue;
        }
      g_assert_cmpint (d->length, ==, 9);
      for (int64_t i = 0; i < d->length; i++)
        {
          float label;
          g_autofree float *buf = g_new (float, nl_shape_numel (&d->sample_shape));
          if (!nl_dataset_get (d, i, buf, &label, &error))
            {
              g_assert_nonnull (error);
              g_clear_error (&error);
            }
        }
      nl_dataset_free (d);
    }
  g_rand_free (rng);
}

/* A copy of the packed file good with sample 2's record (record 3)
 * replaced by payload (len bytes, possibly none). */
static void
write_with_sample2 (const char *good, const char *path, const void *payload, size_t len)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (NlRecordReader) r = nl_record_reader_open (good, &error);
  NlRecordWriter *w = nl_record_writer_open (path, &error);
  const guint8 *data;
  size_t n;
  for (int k = 0; nl_record_reader_next (r, &data, &n, &error) == 1; k++)
    g_assert_true (k == 3 ? nl_record_writer_append (w, payload, len, &error)
                          : nl_record_writer_append (w, data, n, &error));
  g_assert_no_error (error);
  g_assert_true (nl_record_writer_close (w, &error));
}

/* Labels outside the class range (NaN, negative, too large, not whole)
 * were handed to the loss; an empty record applied an offset to NULL;
 * metadata nested 100,000 deep overflowed json-glib's parser. */
static void
test_packed_bad_records (void)
{
  g_autofree char *dir = fresh_dir ("packed-labels");
  g_autoptr (GError) error = NULL;
  g_autoptr (NlDataset) idx = make_idx (dir, 9, 5, 7);
  g_autofree char *good = g_build_filename (dir, "good.rec", NULL);
  g_autofree char *path = g_build_filename (dir, "bad.rec", NULL);
  const float labels[] = { NAN, -1.0f, (float) idx->n_classes, 2.5f, INFINITY };
  const guint8 *data;
  size_t len;
  float x[35], label;

  g_assert_cmpint (idx->n_classes, >, 2);
  g_assert_true (nl_record_pack_dataset (idx, good, NULL, &error));
  g_assert_no_error (error);
  for (gsize k = 0; k < G_N_ELEMENTS (labels); k++)
    {
      g_autoptr (NlRecordReader) r = nl_record_reader_open (good, &error);
      g_autofree guint8 *rec = NULL;
      g_autoptr (NlDataset) p = NULL;
      g_autofree char *want = NULL;
      for (int i = 0; i <= 3; i++)
        g_assert_cmpint (nl_record_reader_next (r, &data, &len, &error), ==, 1);
      rec = g_memdup2 (data, len);
      memcpy (rec, &labels[k], 4);
      /* a label written so, not damage: its checksum fits */
      guint32 crc = (guint32) crc32 (0, rec, len - 4);
      for (int b = 0; b < 4; b++)
        rec[len - 4 + b] = (guint8) (crc >> (8 * b));
      write_with_sample2 (good, path, rec, len);
      p = nl_packed_dataset_open (path, &error);
      g_assert_no_error (error);
      g_assert_true (nl_dataset_get (p, 1, x, &label, &error));
      g_assert_false (nl_dataset_get (p, 2, x, &label, &error));
      want = g_strdup_printf ("%s: record 3 at byte %" G_GINT64_FORMAT " has label %g, not a class index from 0 to %d",
                              path, nl_record_reader_offset (r), (double) labels[k], idx->n_classes - 1);
      assert_error_has (error, NL_DATA_ERROR_CORRUPT, want);
      g_clear_error (&error);
    }

  /* an empty record: read back as one of no bytes, refused as a sample */
  write_with_sample2 (good, path, NULL, 0);
  {
    g_autoptr (NlRecordReader) r = nl_record_reader_open (path, &error);
    g_autoptr (NlDataset) p = NULL;
    for (int i = 0; i <= 3; i++)
      g_assert_cmpint (nl_record_reader_next (r, &data, &len, &error), ==, 1);
    g_assert_cmpuint (len, ==, 0);
    g_assert_cmpint (nl_record_reader_next (r, &data, &len, &error), ==, 1);
    g_assert_cmpuint (len, >, 35);
    p = nl_packed_dataset_open (path, &error);
    g_assert_no_error (error);
    g_assert_false (nl_dataset_get (p, 2, x, &label, &error));
    assert_error_has (error, NL_DATA_ERROR_CORRUPT, "(0 bytes)");
    g_clear_error (&error);
    g_assert_true (nl_dataset_get (p, 3, x, &label, &error));
  }

  /* metadata nested deeper than any reader goes */
  {
    g_autoptr (GByteArray) meta = g_byte_array_new ();
    NlRecordWriter *w = nl_record_writer_open (path, &error);
    static const guint8 head[6] = { 0, 0, 0, 0, 0, 0xff };
    g_byte_array_append (meta, head, 6);
    for (int i = 0; i < 100000; i++)
      g_byte_array_append (meta, (const guint8 *) "[", 1);
    g_assert_true (nl_record_writer_append (w, meta->data, meta->len, &error));
    g_assert_true (nl_record_writer_close (w, &error));
    g_assert_null (nl_packed_dataset_open (path, &error));
    g_autofree char *want = g_strdup_printf ("%s: record 0 at byte 0 has bad metadata: the JSON: JSON nested more than "
                                             "256 levels deep (at byte 256)", path);
    assert_error_has (error, NL_DATA_ERROR_CORRUPT, want);
  }
}

/* NlAtomicFile, which every writer of a user's file goes through: the old
 * file or the new one, never a part, and no temporary file left over. */
static void
test_atomic_file (void)
{
  g_autofree char *dir = fresh_dir ("atomic");
  g_autofree char *path = g_build_filename (dir, "out.bin", NULL);
  g_autofree char *sub = g_build_filename (dir, "sub", NULL);
  g_autofree char *inside = g_build_filename (sub, "x", NULL);
  g_autoptr (GError) error = NULL;

  g_assert_true (nl_atomic_file_set_contents (path, "first", 5, &error));
  g_assert_true (nl_atomic_file_set_contents (path, "second", 6, &error));
  g_assert_no_error (error);
  g_autoptr (GBytes) b = read_all (path);
  g_assert_cmpmem (g_bytes_get_data (b, NULL), g_bytes_get_size (b), "second", 6);
  g_autofree char *l1 = dir_listing (dir);
  g_assert_cmpstr (l1, ==, "out.bin");

  /* written, then given up: the old file stays, the temporary one goes */
  NlAtomicFile *f = nl_atomic_file_open (path, &error);
  g_assert_nonnull (f);
  g_assert_true (nl_atomic_file_write (f, "partial", 7, &error));
  g_autofree char *l2 = dir_listing (dir);
  g_assert_cmpstr (l2, !=, "out.bin");
  nl_atomic_file_abort (f);
  g_autoptr (GBytes) b2 = read_all (path);
  g_assert_cmpmem (g_bytes_get_data (b2, NULL), g_bytes_get_size (b2), "second", 6);
  g_autofree char *l3 = dir_listing (dir);
  g_assert_cmpstr (l3, ==, "out.bin");

  /* the rename fails (a non-empty directory of that name): an error naming
   * the path, the directory as it was, nothing left over */
  g_assert_cmpint (g_mkdir (sub, 0700), ==, 0);
  write_text (inside, "keep");
  g_assert_false (nl_atomic_file_set_contents (sub, "new", 3, &error));
  g_assert_true (error && error->domain == G_FILE_ERROR && strstr (error->message, sub));
  g_clear_error (&error);
  g_autofree char *l4 = dir_listing (dir);
  g_assert_cmpstr (l4, ==, "out.bin sub");
  g_autofree char *l5 = dir_listing (sub);
  g_assert_cmpstr (l5, ==, "x");

  /* no directory to create it in */
  g_autofree char *nowhere = g_build_filename (dir, "missing", "out.bin", NULL);
  g_assert_false (nl_atomic_file_set_contents (nowhere, "x", 1, &error));
  g_assert_error (error, G_FILE_ERROR, G_FILE_ERROR_NOENT);
  g_assert_nonnull (strstr (error->message, "cannot create"));
}

static void
count_damaged (gpointer user, const GError *e)
{
  g_assert_true (g_error_matches (e, NL_DATA_ERROR, NL_DATA_ERROR_CORRUPT));
  g_ptr_array_add (user, g_strdup (e->message));
}

/* Files packed before checksums (format version 1, kept as a fixture from
 * that code) still read; verify checks every record of either version. */
static void
test_packed_versions (void)
{
  g_autofree char *v1 = nl_test_source_path ("tests/fixtures/packed-v1.rec");
  g_autofree char *dir = fresh_dir ("packed-verify");
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) damaged = g_ptr_array_new_with_free_func (g_free);
  NlPackedVerify v;
  float x[28 * 28], label;

  g_autoptr (NlDataset) old = nl_packed_dataset_open (v1, &error);
  g_assert_no_error (error);
  g_assert_cmpint (nl_packed_dataset_version (old), ==, 1);
  g_assert_cmpint (old->length, ==, 16);
  for (int64_t i = 0; i < old->length; i++)
    {
      g_assert_true (nl_dataset_get (old, i, x, &label, &error));
      /* make_mnist's labels */
      g_assert_cmpfloat (label, ==, (float) ((i * 7 + 3) % 10));
    }
  g_assert_true (nl_packed_dataset_verify (v1, count_damaged, damaged, &v, &error));
  g_assert_cmpint (v.version, ==, 1);
  g_assert_cmpint (v.n_records, ==, 16);
  g_assert_cmpint (v.n_damaged, ==, 0);

  /* packed again: version 2, the same samples */
  g_autofree char *v2 = g_build_filename (dir, "v2.rec", NULL);
  g_assert_true (nl_record_pack_dataset (old, v2, NULL, &error));
  g_assert_true (nl_packed_dataset_verify (v2, count_damaged, damaged, &v, &error));
  g_assert_cmpint (v.version, ==, 2);
  g_assert_cmpint (v.n_records, ==, 16);
  g_assert_cmpint (v.n_damaged, ==, 0);
  g_assert_cmpuint (damaged->len, ==, 0);

  /* two damaged records: both named, the rest read */
  g_autoptr (GBytes) file = read_all (v2);
  gsize size;
  g_autofree guint8 *bad = g_memdup2 (g_bytes_get_data (file, &size), g_bytes_get_size (file));
  g_autoptr (NlRecordReader) r = nl_record_reader_open (v2, &error);
  const guint8 *data;
  size_t len;
  int64_t at[17];
  for (int k = 0; k <= 16; k++)
    {
      g_assert_cmpint (nl_record_reader_next (r, &data, &len, &error), ==, 1);
      at[k] = nl_record_reader_offset (r);
    }
  bad[at[3] + 400] ^= 0x40;
  bad[at[12] + 100] = (guint8) ~bad[at[12] + 100];
  g_autofree char *path = g_build_filename (dir, "bad.rec", NULL);
  write_bytes (path, bad, size);
  g_assert_true (nl_packed_dataset_verify (path, count_damaged, damaged, &v, &error));
  g_assert_no_error (error);
  g_assert_cmpint (v.n_records, ==, 16);
  g_assert_cmpint (v.n_damaged, ==, 2);
  g_assert_cmpuint (damaged->len, ==, 2);
  for (int k = 0; k < 2; k++)
    {
      int rec = k ? 12 : 3;
      g_autofree char *want = g_strdup_printf ("%s: record %d at byte %" G_GINT64_FORMAT " is damaged: checksum "
                                               "mismatch", path, rec, at[rec]);
      g_assert_true (g_str_has_prefix (damaged->pdata[k], want));
    }
  /* broken framing: an error, nothing after it can be found */
  bad[at[7]] ^= 1;
  write_bytes (path, bad, size);
  g_assert_false (nl_packed_dataset_verify (path, count_damaged, damaged, &v, &error));
  assert_error_has (error, NL_DATA_ERROR_CORRUPT, "record 7 at byte");
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_autoptr (GError) error = NULL;
  tmp_dir = g_dir_make_tmp ("netloom-formats-XXXXXX", &error);
  g_assert_no_error (error);

  g_test_add_func ("/formats/specs", test_specs);
  g_test_add_func ("/formats/split", test_split);
  g_test_add_func ("/formats/cifar", test_cifar);
  g_test_add_func ("/formats/csv/basic", test_csv_basic);
  g_test_add_func ("/formats/csv/errors", test_csv_errors);
  g_test_add_func ("/formats/csv/split", test_csv_split);
  g_test_add_func ("/formats/folder/decode", test_folder);
  g_test_add_func ("/formats/folder/resize", test_folder_resize);
  g_test_add_func ("/formats/folder/errors", test_folder_errors);
  g_test_add_func ("/formats/folder/split", test_folder_split);
  g_test_add_func ("/formats/record/bytes", test_record_bytes);
  g_test_add_func ("/formats/record/parts", test_record_parts);
  g_test_add_func ("/formats/record/corrupt", test_record_corrupt);
  g_test_add_func ("/formats/packed/roundtrip", test_packed_roundtrip);
  g_test_add_func ("/formats/packed/corrupt", test_packed_corrupt);
  g_test_add_func ("/formats/packed/bad-records", test_packed_bad_records);
  g_test_add_func ("/formats/packed/versions", test_packed_versions);
  g_test_add_func ("/formats/atomic-file", test_atomic_file);
  int rc = g_test_run ();
  nl_test_remove_tree (tmp_dir);
  g_free (tmp_dir);
  return rc;
}
