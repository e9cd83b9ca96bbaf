/* test-series-data.c — series:FILE.csv: windows and labels, the z-score
 * from the training rows against numbers computed by hand, the
 * chronological split and the bad-input messages. */
#include <glib.h>
#include <math.h>
#include <string.h>

#include "engine/data/nl-dataset.h"
#include "engine/data/nl-series-dataset.h"
#include "nl-test-util.h"

static char *tmp_dir;

static char *
write_file (const char *name, const char *contents)
{
  char *path = g_build_filename (tmp_dir, name, NULL);
  g_assert_true (g_file_set_contents (path, contents, -1, NULL));
  return path;
}

static NlDataset *
open_series (const char *path, gboolean train, const NlDatasetOptions *opts, GError **error)
{
  g_autofree char *spec = g_strconcat ("series:", path, NULL);
  return nl_dataset_open_full (spec, train, opts, error);
}

/* date (text, left out), a = t, b = 2t + 1 (the default target: the last numeric column) */
static char *
write_ramp (int n)
{
  GString *s = g_string_new ("date,a,b\n");
  for (int t = 0; t < n; t++)
    g_string_append_printf (s, "2024-01-%02d,%d,%d\n", t + 1, t, 2 * t + 1);
  char *path = write_file ("ramp.csv", s->str);
  g_string_free (s, TRUE);
  return path;
}

/* mean and population std of v(t) = k t + c over t in [0, n) */
static void
ramp_stats (int n, double k, double c, double *mean, double *std)
{
  double sum = 0, sq = 0;
  for (int t = 0; t < n; t++)
    sum += k * t + c;
  *mean = sum / n;
  for (int t = 0; t < n; t++)
    sq += (k * t + c - *mean) * (k * t + c - *mean);
  *std = sqrt (sq / n);
}

static void
check_windows (NlDataset *ds, int first, int W, int H, int train_rows)
{
  double ma, sa, mb, sb;
  ramp_stats (train_rows, 1, 0, &ma, &sa);
  ramp_stats (train_rows, 2, 1, &mb, &sb);
  g_autofree float *s = g_new (float, W * 2);
  g_autofree float *l = g_new (float, H);
  for (int64_t j = 0; j < ds->length; j++)
    {
      g_assert_true (nl_dataset_get (ds, j, s, l, NULL));
      for (int r = 0; r < W; r++)
        {
          int t = first + (int) j + r;
          g_assert_cmpfloat_with_epsilon (s[r * 2], (t - ma) / sa, 1e-5);
          g_assert_cmpfloat_with_epsilon (s[r * 2 + 1], (2 * t + 1 - mb) / sb, 1e-5);
        }
      for (int h = 0; h < H; h++)
        {
          int t = first + (int) j + W + h;
          g_assert_cmpfloat_with_epsilon (l[h], (2 * t + 1 - mb) / sb, 1e-5);
        }
    }
}

static void
test_series_windows (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *path = write_ramp (10);
  NlDatasetOptions opts = { .window = 3, .horizon = 2 };
  g_autoptr (NlDataset) all = open_series (path, TRUE, &opts, &error);
  g_assert_no_error (error);
  /* 10 - 3 - 2 + 1 windows of (3, 2), labels (2) */
  g_assert_cmpint (all->length, ==, 6);
  g_assert_cmpint (all->sample_shape.ndim, ==, 2);
  g_assert_cmpint (all->sample_shape.d[0], ==, 3);
  g_assert_cmpint (all->sample_shape.d[1], ==, 2);
  g_assert_cmpint (all->label_shape.ndim, ==, 1);
  g_assert_cmpint (all->label_shape.d[0], ==, 2);
  g_assert_cmpint (all->n_classes, ==, 0);
  g_assert_null (all->vocab);
  check_windows (all, 0, 3, 2, 10);
  /* a = 0..9: mean 4.5, std sqrt(8.25), by hand */
  g_autofree float *s = g_new (float, 6);
  float l[2];
  g_assert_true (nl_dataset_get (all, 0, s, l, NULL));
  g_assert_cmpfloat_with_epsilon (s[0], -4.5 / sqrt (8.25), 1e-6);
  g_assert_cmpfloat_with_epsilon (l[0], (7 - 10) / (2 * sqrt (8.25)), 1e-6);

  NlSeriesInfo info;
  g_assert_true (nl_series_dataset_info (all, &info));
  g_assert_cmpstr (info.target, ==, "b");
  g_assert_cmpint (info.n_columns, ==, 2);
  g_assert_cmpstr (info.columns[0], ==, "a");
  g_assert_cmpint (info.n_rows, ==, 10);
  g_assert_cmpfloat (info.values[9], ==, 19);
  g_assert_cmpint (info.val_start_row, ==, 10);

  /* the last half of the 6 windows is validation; both sides use the 7 rows
   * the training windows cover (0..6: a mean 3, std 2; b mean 7, std 4) */
  opts.val_fraction = 0.5;
  g_autoptr (NlDataset) train = open_series (path, TRUE, &opts, &error);
  g_autoptr (NlDataset) val = open_series (path, FALSE, &opts, &error);
  g_assert_no_error (error);
  g_assert_cmpint (train->length, ==, 3);
  g_assert_cmpint (val->length, ==, 3);
  check_windows (train, 0, 3, 2, 7);
  check_windows (val, 3, 3, 2, 7);
  g_assert_true (nl_dataset_get (val, 0, s, l, NULL));
  g_assert_cmpfloat_with_epsilon (s[0], 0.0, 1e-6);          /* a = 3 */
  g_assert_cmpfloat_with_epsilon (l[1], (15 - 7) / 4.0, 1e-6); /* b at t = 7 */
  g_assert_true (nl_series_dataset_info (val, &info));
  g_assert_cmpint (info.val_start_row, ==, 7);
  g_assert_cmpfloat_with_epsilon (info.target_mean, 7, 1e-6);
  g_assert_cmpfloat_with_epsilon (info.target_std, 4, 1e-6);
}

static void
test_series_target_and_constant (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *path = write_file ("const.csv", "x;y;k\n1;5;3\n2;4;3\n3;3;3\n4;2;3\n");
  NlDatasetOptions opts = { .window = 2, .horizon = 1, .target_column = "x" };
  g_autoptr (NlDataset) ds = open_series (path, TRUE, &opts, &error);
  g_assert_no_error (error);
  g_assert_cmpint (ds->length, ==, 2);
  float s[6], l;
  g_assert_true (nl_dataset_get (ds, 1, s, &l, NULL));
  /* x = 1..4: mean 2.5, std sqrt(1.25); the constant k becomes 0 (std 1) */
  g_assert_cmpfloat_with_epsilon (l, (4 - 2.5) / sqrt (1.25), 1e-6);
  g_assert_cmpfloat_with_epsilon (s[2], 0, 1e-6);
  g_assert_cmpfloat_with_epsilon (s[3], (3 - 2.5) / sqrt (1.25), 1e-6); /* x at row 2 */
  g_assert_cmpfloat_with_epsilon (s[4], (3 - 3.5) / sqrt (1.25), 1e-6); /* y at row 2 */
  g_assert_cmpfloat_with_epsilon (s[5], 0, 1e-6);
}

static void
assert_refused (const char *path, const NlDatasetOptions *opts, const char *const *has)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (NlDataset) ds = open_series (path, TRUE, opts, &error);
  g_assert_null (ds);
  g_assert_nonnull (error);
  g_test_message ("%s", error->message);
  for (int i = 0; has[i]; i++)
    if (!strstr (error->message, has[i]))
      g_error ("'%s' lacks '%s'", error->message, has[i]);
}

static void
test_series_bad_input (void)
{
  NlDatasetOptions opts = { .window = 2, .horizon = 1 };
  g_autofree char *cell = write_file ("cell.csv", "a,b\n1,2\n3,4\n5,x\n7,8\n");
  assert_refused (cell, &opts, (const char *[]) { cell, ":4:", "column 1 ('b')", "not a number: 'x'", NULL });
  g_autofree char *blank = write_file ("blank.csv", "a,b\n1,2\n3,\n");
  assert_refused (blank, &opts, (const char *[]) { blank, ":3:", "column 1 ('b')", NULL });
  g_autofree char *few = write_file ("few.csv", "a,b\n1,2\n3,4\n");
  assert_refused (few, &opts, (const char *[]) { few, "2 rows are too few", "window of 2", "horizon of 1", NULL });
  NlDatasetOptions missing = { .target_column = "price" };
  g_autofree char *ok = write_file ("ok.csv", "date,a,b\nmon,1,2\ntue,3,4\n");
  assert_refused (ok, &missing, (const char *[]) { ok, ":1:", "'price'", "'date', 'a', 'b'", NULL });
  NlDatasetOptions text_target = { .target_column = "date", .window = 1 };
  assert_refused (ok, &text_target, (const char *[]) { ok, ":2:", "column 0 ('date')", "'mon'", NULL });
  g_autofree char *none = write_file ("none.csv", "a,b\nx,y\n");
  assert_refused (none, &opts, (const char *[]) { none, ":2:", "not a number", NULL });
  g_autofree char *ragged = write_file ("ragged.csv", "a,b\n1,2\n3\n");
  assert_refused (ragged, &opts, (const char *[]) { ragged, ":3:", "1 columns, expected 2", NULL });
  g_autofree char *big = write_file ("big.csv", "a,b\n1,2\n1e39,4\n");
  assert_refused (big, &opts, (const char *[]) { big, ":3:", "column 0 ('a')", NULL });
  g_autofree char *header = write_file ("header.csv", "a,b\n");
  assert_refused (header, &opts, (const char *[]) { header, "no data rows", NULL });
  g_autofree char *empty = write_file ("empty.csv", "");
  assert_refused (empty, &opts, (const char *[]) { empty, "empty", NULL });
  NlDatasetOptions neg = { .window = -1 };
  assert_refused (ok, &neg, (const char *[]) { ok, "window", NULL });
}

int
main (int argc, char **argv)
{
  g_autoptr (GError) error = NULL;
  g_test_init (&argc, &argv, NULL);
  tmp_dir = g_dir_make_tmp ("netloom-test-series-XXXXXX", &error);
  g_assert_no_error (error);
  g_test_add_func ("/series/windows-and-zscore", test_series_windows);
  g_test_add_func ("/series/target-and-constant", test_series_target_and_constant);
  g_test_add_func ("/series/bad-input", test_series_bad_input);
  int rc = g_test_run ();
  nl_test_remove_tree (tmp_dir);
  g_free (tmp_dir);
  return rc;
}
