/* test-kinds.c — the two extension tables walked row by row, so that a new
 * row without its parts fails here: every dataset kind (nl-dataset-kind.h)
 * has a title, opens a small fixture of its own, previews (its histogram
 * by the kind's fast path agrees with reading every label), gives a run
 * its normalisation and is listed by netloom-cli's help; every sweep
 * strategy (nl-sweep-strategy.h) samples reproducibly, sizes a sweep as
 * its row says, is listed by `netloom-cli sweep --help` and by the error
 * for an unknown name. The dialogs' lists are in test-data-page and
 * test-sweep-view. */
#include <glib/gstdio.h>
#include <png.h>
#include <string.h>

#include "engine/data/nl-dataset-kind.h"
#include "engine/data/nl-packed-dataset.h"
#include "engine/session/nl-data-preview.h"
#include "engine/session/nl-sweep.h"
#include "engine/train/nl-run-config.h"
#include "nl-test-util.h"

static char *tmp_dir;

/* ---- a fixture per dataset kind, by name ---- */

static char *
fixture_path (const char *name)
{
  return g_build_filename (tmp_dir, name, NULL);
}

static char *
write_idx (const char *name)
{
  char *dir = fixture_path (name);
  g_assert_cmpint (g_mkdir_with_parents (dir, 0755), ==, 0);
  nl_test_write_idx_dataset (dir, 20, 10);
  return dir;
}

static char *
write_cifar (const char *name)
{
  char *dir = fixture_path (name);
  const char *files[] = { "data_batch_1.bin", "data_batch_2.bin", "data_batch_3.bin", "data_batch_4.bin",
                          "data_batch_5.bin", "test_batch.bin" };
  g_assert_cmpint (g_mkdir_with_parents (dir, 0755), ==, 0);
  for (guint f = 0; f < G_N_ELEMENTS (files); f++)
    {
      g_autofree guint8 *data = g_new0 (guint8, 2 * 3073);
      g_autofree char *path = g_build_filename (dir, files[f], NULL);
      for (int r = 0; r < 2; r++)
        {
          data[r * 3073] = (guint8) ((f + r) % 10);
          memset (data + r * 3073 + 1, 20 * (int) f + r, 3072);
        }
      g_assert_true (g_file_set_contents (path, (const char *) data, 2 * 3073, NULL));
    }
  return dir;
}

static char *
write_csv (const char *name)
{
  char *path = fixture_path (name);
  g_autoptr (GString) s = g_string_new ("a,b,label\n");
  for (int i = 0; i < 12; i++)
    g_string_append_printf (s, "%d,%g,%d\n", i, i * 0.25, i % 3);
  g_assert_true (g_file_set_contents (path, s->str, -1, NULL));
  return path;
}

static void
write_png (const char *path, int shade)
{
  guint8 px[5 * 4 * 3];
  png_image pi;
  memset (&pi, 0, sizeof pi);
  pi.version = PNG_IMAGE_VERSION;
  pi.width = 5;
  pi.height = 4;
  pi.format = PNG_FORMAT_RGB;
  memset (px, shade, sizeof px);
  g_assert_true (png_image_write_to_file (&pi, path, 0, px, 0, NULL));
}

static char *
write_folder (const char *name)
{
  char *root = fixture_path (name);
  const char *classes[] = { "bird", "fish" };
  for (guint c = 0; c < G_N_ELEMENTS (classes); c++)
    {
      g_autofree char *dir = g_build_filename (root, classes[c], NULL);
      g_assert_cmpint (g_mkdir_with_parents (dir, 0755), ==, 0);
      for (guint k = 0; k < 3 + c; k++)
        {
          g_autofree char *file = g_strdup_printf ("%u.png", k);
          g_autofree char *path = g_build_filename (dir, file, NULL);
          write_png (path, 50 * (int) c + (int) k);
        }
    }
  return root;
}

static char *
write_packed (const char *name)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *csv = write_csv ("for-packing.csv");
  g_autofree char *spec = g_strdup_printf ("csv:%s", csv);
  g_autoptr (NlDataset) ds = nl_dataset_open (spec, TRUE, &error);
  char *path = fixture_path (name);
  g_assert_no_error (error);
  g_assert_true (nl_record_pack_dataset (ds, path, NULL, &error));
  g_assert_no_error (error);
  return path;
}

/* a text table: 12 rows of two classes */
static char *
write_text (const char *name)
{
  g_autofree char *file = g_strconcat (name, ".csv", NULL);
  char *path = fixture_path (file);
  GString *s = g_string_new ("text,label\n");
  for (int i = 0; i < 12; i++)
    g_string_append_printf (s, "\"word%d, and more\",%s\n", i, i % 3 ? "spam" : "ham");
  g_assert_true (g_file_set_contents (path, s->str, s->len, NULL));
  g_string_free (s, TRUE);
  return path;
}

/* a text of 600 words: 4 windows of the default 128 tokens */
static char *
write_text_lm (const char *name)
{
  g_autofree char *file = g_strconcat (name, ".txt", NULL);
  char *path = fixture_path (file);
  GString *s = g_string_new (NULL);
  for (int i = 0; i < 600; i++)
    g_string_append_printf (s, "w%d%s", i % 17, i % 10 == 9 ? ".\n" : " ");
  g_assert_true (g_file_set_contents (path, s->str, s->len, NULL));
  g_string_free (s, TRUE);
  return path;
}

/* 60 rows of two columns: windows of the default 32 rows */
static char *
write_series (const char *name)
{
  g_autofree char *file = g_strconcat (name, ".csv", NULL);
  char *path = fixture_path (file);
  GString *s = g_string_new ("t,value\n");
  for (int i = 0; i < 60; i++)
    g_string_append_printf (s, "%d,%g\n", i, (double) ((i * 7) % 11));
  g_assert_true (g_file_set_contents (path, s->str, s->len, NULL));
  g_string_free (s, TRUE);
  return path;
}

/* A new kind adds its writer here: the table walk fails without one. */
static const struct {
  const char *kind;
  char *(*write) (const char *name);
} fixtures[] = {
  { "fashion-mnist", write_idx }, { "mnist", write_idx },  { "cifar10", write_cifar },
  { "csv", write_csv },           { "folder", write_folder }, { "packed", write_packed },
  { "text", write_text },         { "text-lm", write_text_lm }, { "series", write_series },
};

static char *
write_fixture (const NlDatasetKind *kind)
{
  for (guint i = 0; i < G_N_ELEMENTS (fixtures); i++)
    if (nl_dataset_kind_lookup (fixtures[i].kind, NULL) == kind)
      {
        g_autofree char *name = g_strdup_printf ("kind-%s", kind->name);
        return fixtures[i].write (name);
      }
  g_error ("the dataset kind '%s' has no fixture in test-kinds.c: add a writer for it", kind->name);
  return NULL;
}

/* ---- dataset kinds ---- */

static void
test_kind_rows (void)
{
  int n;
  const NlDatasetKind *kinds = nl_dataset_kinds (&n);
  g_autoptr (GHashTable) names = g_hash_table_new (g_str_hash, g_str_equal);

  g_assert_cmpint (n, >, 0);
  for (int i = 0; i < n; i++)
    {
      const NlDatasetKind *k = &kinds[i];
      g_autofree char *upper = g_ascii_strup (k->name, -1);
      g_autofree char *spec = g_strconcat (upper, ":/x", NULL);
      g_autofree char *path = NULL;
      g_assert_true (k->name && *k->name && !strchr (k->name, ':'));
      g_assert_true (g_hash_table_add (names, (char *) k->name));
      g_assert_true (k->title && *k->title);
      g_assert_nonnull (k->open);
      g_assert_cmpfloat (k->std, >, 0);
      g_assert_true (!k->filter_name || (k->filter_patterns && k->filter_patterns[0]));
      g_assert_true (nl_dataset_kind_lookup (k->name, NULL) == k);
      g_assert_true (nl_dataset_kind_lookup (spec, &path) == k);
      g_assert_cmpstr (path, ==, "/x");
      g_assert_cmpint (nl_dataset_kind_index (k), ==, i);
    }
  g_assert_null (nl_dataset_kind_lookup ("no-such-kind:/x", NULL));
  g_assert_cmpint (nl_dataset_kind_index (NULL), ==, -1);
}

/* The histogram as the preview would count it without the fast path
 * (none for regression or per-step labels). */
static void
read_counts (NlDataset *ds, int64_t *counts)
{
  g_autofree float *buf = g_new (float, nl_shape_numel (&ds->sample_shape));
  g_autofree float *label = g_new (float, MAX (nl_shape_numel (&ds->label_shape), 1));
  for (int64_t i = 0; i < ds->length; i++)
    {
      g_assert_true (nl_dataset_get (ds, i, buf, label, NULL));
      if (ds->n_classes > 0 && ds->label_shape.ndim == 0)
        counts[(int) label[0]]++;
    }
}

static void
check_kind_opens (const NlDatasetKind *k, const char *spec)
{
  g_autoptr (GError) error = NULL;
  NlDatasetOptions opts = { .val_fraction = k->uses & NL_DATASET_USES_SPLIT ? 0.25 : 0 };
  NlPipelineInfo pl = { .name = (char *) "t", .dataset_spec = (char *) spec, .split = opts.val_fraction,
                        .batch_size = 4, .workers = 1 };
  g_autoptr (NlDataset) ds = nl_dataset_open_full (spec, TRUE, &opts, &error);
  g_autoptr (NlDataPreview) p = NULL;
  g_autofree int64_t *counts = NULL;
  g_auto (NlRunConfig) rc = { 0 };

  g_assert_no_error (error);
  g_assert_cmpint (ds->length, >, 0);
  g_assert_true (ds->description && *ds->description);
  /* the preview opens it as training does, and knows whether it splits */
  p = nl_data_preview_load (&pl, 8, 1, NULL, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpint (p->length, ==, ds->length);
  g_assert_cmpint (p->has_test_set, ==, !(k->uses & NL_DATASET_USES_SPLIT));
  g_assert_cmpint (p->n_samples, ==, MIN (ds->length, 8));
  /* the text and series kinds bring their own parts of the preview */
  g_assert_true ((p->text != NULL) == ((k->uses & NL_DATASET_USES_TEXT) != 0));
  g_assert_true ((p->series != NULL) == ((k->uses & NL_DATASET_USES_SERIES) != 0));
  counts = g_new0 (int64_t, MAX (ds->n_classes, 1));
  read_counts (ds, counts);
  for (int c = 0; c < p->n_classes; c++)
    g_assert_cmpint (p->class_counts[c], ==, counts[c]);
  if (k->count_labels)
    {
      g_autofree char *path = NULL;
      g_autofree int64_t *fast = g_new0 (int64_t, ds->n_classes);
      nl_dataset_kind_lookup (spec, &path);
      g_assert_true (k->count_labels (path, opts.val_fraction, ds->n_classes, ds->length, fast));
      g_assert_cmpmem (fast, sizeof (int64_t) * ds->n_classes, counts, sizeof (int64_t) * ds->n_classes);
      g_assert_false (k->count_labels (path, opts.val_fraction, ds->n_classes + 1, ds->length, fast));
    }
  /* a run on it starts from the row's normalisation */
  nl_run_config_init (&rc);
  nl_run_config_set_dataset (&rc, spec);
  g_assert_cmpfloat (rc.mean, ==, k->mean);
  g_assert_cmpfloat (rc.std, ==, k->std);
}

static void
test_kind_opens (void)
{
  int n;
  const NlDatasetKind *kinds = nl_dataset_kinds (&n);
  for (int i = 0; i < n; i++)
    {
      g_autofree char *path = write_fixture (&kinds[i]);
      g_autofree char *spec = nl_dataset_kind_spec (&kinds[i], path);
      g_autofree char *bare = nl_dataset_kind_spec (&kinds[i], NULL);
      g_autoptr (GError) error = NULL;
      g_autoptr (NlDataset) none = NULL;
      g_test_message ("kind %s: %s", kinds[i].name, spec);
      check_kind_opens (&kinds[i], spec);
      /* without a path: the default place, or an error asking for one */
      if (!kinds[i].default_path)
        {
          none = nl_dataset_open (bare, TRUE, &error);
          g_assert_null (none);
          g_assert_error (error, NL_DATA_ERROR, NL_DATA_ERROR_SPEC);
          g_assert_nonnull (strstr (error->message, kinds[i].path_is_folder ? ":DIR" : ":FILE"));
        }
    }
}

/* The unknown-kind error and the CLI's help name every kind. */
static char *
cli_help (const char *command)
{
  const char *build = g_getenv ("NETLOOM_BUILD_DIR");
  g_autofree char *cli = build ? g_build_filename (build, "app", "netloom-cli", NULL) : NULL;
  g_autofree char *err = NULL;
  char *out = NULL;
  int status = 0;
  const char *argv[] = { cli, command, "--help", NULL };

  if (!cli || !g_file_test (cli, G_FILE_TEST_IS_EXECUTABLE))
    return NULL;
  g_assert_true (g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, &err, &status, NULL));
  g_assert_true (g_spawn_check_wait_status (status, NULL));
  return out;
}

static void
test_kind_listed (void)
{
  int n;
  const NlDatasetKind *kinds = nl_dataset_kinds (&n);
  g_autoptr (GError) error = NULL;
  g_autoptr (NlDataset) ds = nl_dataset_open ("no-such-kind:/x", TRUE, &error);
  g_autofree char *train = cli_help ("train"), *pack = cli_help ("pack"), *sweep = cli_help ("sweep");

  g_assert_error (error, NL_DATA_ERROR, NL_DATA_ERROR_SPEC);
  if (!train)
    {
      g_test_skip ("netloom-cli is not built (NETLOOM_BUILD_DIR/app/netloom-cli)");
      return;
    }
  for (int i = 0; i < n; i++)
    {
      const NlDatasetKind *k = &kinds[i];
      const char *what = k->path_is_folder ? "DIR" : "FILE";
      g_autofree char *written = g_strdup_printf (k->default_path ? "%s[:%s]" : "%s:%s", k->name, what);
      g_assert_nonnull (strstr (error->message, k->name));
      g_assert_nonnull (strstr (train, written));
      g_assert_nonnull (strstr (pack, written));
      g_assert_nonnull (strstr (sweep, written));
    }
  /* the options a kind reads name it */
  g_assert_nonnull (strstr (train, "csv: the label column"));
  g_autofree char *split = nl_dataset_kind_list (NL_DATASET_USES_SPLIT, FALSE, ", ");
  g_autofree char *held_out = g_strconcat (split, ": share held out", NULL);
  g_assert_nonnull (strstr (train, held_out));
  g_assert_nonnull (strstr (train, "default 0.13 for fashion-mnist and mnist, 0.47 for cifar10, else 0"));
}

/* ---- sweep strategies ---- */

static void
check_strategy_samples (const NlSweepStrategy *st, const NlSweepSpace *space)
{
  double a[2], b[2], values[6], points[12];
  for (int t = 0; t < 6; t++)
    {
      NlSweepHistory h = { points, values, t, TRUE };
      st->sample (space, 9, t, st->needs_history ? &h : NULL, a);
      st->sample (space, 9, t, st->needs_history ? &h : NULL, b);
      g_assert_cmpmem (a, sizeof a, b, sizeof b);
      g_assert_true (a[0] >= 1e-3 * (1 - 1e-9) && a[0] <= 1e-1 * (1 + 1e-9)); /* exp (log) rounds */
      g_assert_true (a[1] == 0 || a[1] == 1);
      memcpy (points + 2 * t, a, sizeof a);
      values[t] = -a[0];
    }
}

static void
test_strategy_rows (void)
{
  int n;
  const NlSweepStrategy *strategies = nl_sweep_strategies (&n);
  g_autoptr (GError) error = NULL;
  g_autoptr (NlSweepSpace) space = nl_sweep_space_parse ("lr=log:1e-3:1e-1:3,optimizer=sgd|adam", &error);
  g_autoptr (GHashTable) names = g_hash_table_new (g_str_hash, g_str_equal);

  g_assert_no_error (error);
  g_assert_cmpint (n, >, 0);
  for (int i = 0; i < n; i++)
    {
      const NlSweepStrategy *st = &strategies[i];
      int trials = 0;
      g_assert_true (st->name && *st->name && g_hash_table_add (names, (char *) st->name));
      g_assert_true (st->title && *st->title);
      g_assert_nonnull (st->sample);
      g_assert_true (nl_sweep_strategy_lookup (st->name, NULL) == st);
      check_strategy_samples (st, space);
      /* only a strategy of fixed size may leave the trials out */
      if (st->fixed_size)
        {
          g_assert_true (nl_sweep_check ("lr=log:1e-3:1e-1:3", st->name, "test_accuracy", NULL, NULL, &trials, NULL));
          g_assert_cmpint (trials, ==, 3);
          trials = 100;
          g_assert_true (nl_sweep_check ("lr=log:1e-3:1e-1:3", st->name, "test_accuracy", NULL, NULL, &trials, NULL));
          g_assert_cmpint (trials, ==, 3);
        }
      else
        g_assert_false (nl_sweep_check ("lr=log:1e-3:1e-1:3", st->name, "test_accuracy", NULL, NULL, &trials, NULL));
    }
  /* an unknown name: an error that lists every row */
  g_assert_null (nl_sweep_strategy_lookup ("annealing", &error));
  g_assert_error (error, NL_TRAIN_ERROR, NL_TRAIN_ERROR_CONFIG);
  g_assert_nonnull (strstr (error->message, "'annealing'"));
  for (int i = 0; i < n; i++)
    g_assert_nonnull (strstr (error->message, strategies[i].name));
}

static void
test_strategy_listed (void)
{
  int n;
  const NlSweepStrategy *strategies = nl_sweep_strategies (&n);
  g_autofree char *help = cli_help ("sweep");
  g_autofree char *line = NULL;

  if (!help)
    {
      g_test_skip ("netloom-cli is not built (NETLOOM_BUILD_DIR/app/netloom-cli)");
      return;
    }
  line = g_strdup (strstr (help, "--strategy=NAME"));
  g_assert_nonnull (line);
  *strchr (line, '\n') = '\0';
  for (int i = 0; i < n; i++)
    g_assert_nonnull (strstr (line, strategies[i].name));
  {
    g_autofree char *first = g_strdup_printf ("(default %s)", strategies[0].name);
    g_assert_nonnull (strstr (line, first));
  }
}

int
main (int argc, char **argv)
{
  int status;
  g_test_init (&argc, &argv, NULL);
  tmp_dir = g_dir_make_tmp ("netloom-kinds-XXXXXX", NULL);
  g_test_add_func ("/kinds/dataset/rows", test_kind_rows);
  g_test_add_func ("/kinds/dataset/opens-and-previews", test_kind_opens);
  g_test_add_func ("/kinds/dataset/listed", test_kind_listed);
  g_test_add_func ("/kinds/strategy/rows", test_strategy_rows);
  g_test_add_func ("/kinds/strategy/listed", test_strategy_listed);
  status = g_test_run ();
  nl_test_remove_tree (tmp_dir);
  g_free (tmp_dir);
  return status;
}
