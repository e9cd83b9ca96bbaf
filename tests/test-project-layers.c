/* test-project-layers.c — a run's layer histograms in the project store
 * (schema 5): the round trip of every field, oldest step first, by tensor
 * and kind; refusals of bad histograms with nothing written; a resume's
 * truncation dropping those after its step and keeping the rest; deletion
 * with the run; and a schema-0 file migrated to hold them. */
#include <glib/gstdio.h>
#include <sqlite3.h>
#include <string.h>

#include "projects/nl-project-layers.h"

static const char *net_json = "{\"format\":\"netloom.network\",\"version\":1,\"name\":\"n\"}";

static gint64
count_rows (const char *path)
{
  sqlite3 *db = NULL;
  sqlite3_stmt *st = NULL;
  g_assert_cmpint (sqlite3_open_v2 (path, &db, SQLITE_OPEN_READONLY, NULL), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_prepare_v2 (db, "SELECT count (*) FROM layer_histograms", -1, &st, NULL), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_step (st), ==, SQLITE_ROW);
  gint64 n = sqlite3_column_int64 (st, 0);
  sqlite3_finalize (st);
  sqlite3_close (db);
  return n;
}

/* steps 10, 20, 30 of fc1.weight and fc2.bias, weights and gradients:
 * counts[b] = step + b + (is_grad ? 1000 : 0) + (fc2 ? 500 : 0) */
static void
add_steps (NlProject *p, gint64 run)
{
  g_autoptr (GError) error = NULL;
  guint32 counts[4][NL_LAYER_HIST_BINS];
  for (int step = 10; step <= 30; step += 10)
    {
      NlLayerHistogram h[4];
      for (int i = 0; i < 4; i++)
        {
          gboolean grad = i % 2, fc2 = i / 2;
          for (int b = 0; b < NL_LAYER_HIST_BINS; b++)
            counts[i][b] = (guint32) (step + b + (grad ? 1000 : 0) + (fc2 ? 500 : 0));
          h[i] = (NlLayerHistogram) { .step = step, .tensor = fc2 ? "fc2.bias" : "fc1.weight", .is_grad = grad,
                                      .lo = -0.5f * step, .hi = 0.25f * step, .n_bins = NL_LAYER_HIST_BINS,
                                      .counts = counts[i] };
        }
      g_assert_true (nl_project_add_layer_histograms (p, run, h, 4, &error));
      g_assert_no_error (error);
    }
}

static void
assert_steps (NlProject *p, gint64 run, const char *tensor, gboolean grad, int last_step)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GArray) a = nl_project_list_layer_histograms (p, run, tensor, grad, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (a->len, ==, (guint) (last_step / 10) * (tensor ? 1 : 2));
  for (guint i = 0; i < a->len; i++)
    {
      const NlLayerHistogram *h = &g_array_index (a, NlLayerHistogram, i);
      gboolean fc2 = !strcmp (h->tensor, "fc2.bias");
      g_assert_true (h->tensor == g_intern_string (h->tensor));
      if (tensor)
        g_assert_cmpstr (h->tensor, ==, tensor);
      g_assert_cmpint (h->step, ==, tensor ? 10 * (i + 1) : 10 * (i / 2 + 1));
      g_assert_cmpint (h->is_grad, ==, grad);
      g_assert_cmpfloat (h->lo, ==, -0.5f * h->step);
      g_assert_cmpfloat (h->hi, ==, 0.25f * h->step);
      g_assert_cmpint (h->n_bins, ==, NL_LAYER_HIST_BINS);
      for (int b = 0; b < NL_LAYER_HIST_BINS; b++)
        g_assert_cmpuint (h->counts[b], ==, (guint32) (h->step + b + (grad ? 1000 : 0) + (fc2 ? 500 : 0)));
    }
}

static gint64
new_run (NlProject *p)
{
  g_autoptr (GError) error = NULL;
  NlRunInfo info = { .name = (char *) "r", .network_json = (char *) net_json, .status = (char *) "running" };
  gint64 run = nl_project_create_run (p, &info, &error);
  g_assert_no_error (error);
  return run;
}

static void
test_round_trip (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("nl-project-layers-XXXXXX", &error);
  g_autofree char *path = g_build_filename (dir, "p.netloom", NULL);
  NlProject *p = nl_project_open (path, TRUE, &error);
  guint32 counts[2] = { 1, 2 };
  gint64 run, other;

  g_assert_no_error (error);
  run = new_run (p);
  other = new_run (p);
  add_steps (p, run);
  add_steps (p, other);
  assert_steps (p, run, "fc1.weight", FALSE, 30);
  assert_steps (p, run, "fc2.bias", TRUE, 30);
  assert_steps (p, run, NULL, TRUE, 30);
  {
    g_autoptr (GArray) none = nl_project_list_layer_histograms (p, run, "fc3.weight", FALSE, &error);
    g_assert_no_error (error);
    g_assert_cmpuint (none->len, ==, 0);
  }

  /* refusals: nothing of the batch is written */
  {
    NlLayerHistogram bad[2] = {
      { .step = 40, .tensor = "fc1.weight", .lo = 0, .hi = 1, .n_bins = 2, .counts = counts },
      { .step = 40, .tensor = "fc1.weight", .lo = 1, .hi = 0, .n_bins = 2, .counts = counts },
    };
    g_assert_false (nl_project_add_layer_histograms (p, run, bad, 2, &error));
    g_assert_error (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_INVALID);
    g_assert_nonnull (strstr (error->message, "layer histogram 1: a histogram's range needs lo <= hi"));
    g_clear_error (&error);
    bad[1] = (NlLayerHistogram) { .step = 40, .tensor = "", .n_bins = 2, .counts = counts };
    g_assert_false (nl_project_add_layer_histograms (p, run, bad, 2, &error));
    g_assert_nonnull (strstr (error->message, "a histogram needs a tensor name"));
    g_clear_error (&error);
    g_assert_false (nl_project_add_layer_histograms (p, 99, bad, 1, &error));
    g_assert_error (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_NOT_FOUND);
    g_clear_error (&error);
    g_assert_cmpint (count_rows (path), ==, 24);
  }

  /* a resume from step 20: step 30 goes, the rest stays; the other run keeps all */
  g_assert_true (nl_project_truncate_metrics (p, run, 20, &error));
  assert_steps (p, run, "fc1.weight", FALSE, 20);
  assert_steps (p, run, NULL, TRUE, 20);
  assert_steps (p, other, "fc1.weight", FALSE, 30);

  /* deleted with the run */
  g_assert_true (nl_project_delete_run (p, run, &error));
  g_assert_no_error (error);
  assert_steps (p, run, NULL, FALSE, 0);
  g_assert_true (nl_project_check (p, &error));
  nl_project_close (p);
  g_assert_cmpint (count_rows (path), ==, 12);
  g_unlink (path);
  g_rmdir (dir);
}

/* A schema-0 file migrates (after its backup) to one that holds layer
 * histograms of its old runs, with the cascade. */
static void
test_migrated (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("nl-project-layers-XXXXXX", &error);
  g_autofree char *path = g_build_filename (dir, "old.netloom", NULL);
  g_autofree char *bak = g_strdup_printf ("%s.bak-v0", path);
  g_autofree char *sql = NULL;
  sqlite3 *db = NULL;
  g_assert_true (g_file_get_contents (NL_TEST_FIXTURES_DIR "/project-v0.sql", &sql, NULL, &error));
  g_assert_cmpint (sqlite3_open (path, &db), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_exec (db, sql, NULL, NULL, NULL), ==, SQLITE_OK);
  sqlite3_close (db);

  NlProject *p = nl_project_open (path, FALSE, &error);
  g_assert_no_error (error);
  g_assert_cmpint (nl_project_schema_version (p), ==, NL_PROJECT_SCHEMA_VERSION);
  add_steps (p, 1);
  assert_steps (p, 1, NULL, FALSE, 30);
  g_assert_true (nl_project_check (p, &error));
  g_assert_true (nl_project_delete_run (p, 1, &error));
  g_assert_no_error (error);
  nl_project_close (p);
  g_assert_cmpint (count_rows (path), ==, 0);
  g_assert_true (g_file_test (bak, G_FILE_TEST_EXISTS));
  g_unlink (bak);
  g_unlink (path);
  g_rmdir (dir);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/project-layers/round-trip", test_round_trip);
  g_test_add_func ("/project-layers/migrated", test_migrated);
  return g_test_run ();
}
