/* test-project-int8.c — a run's INT8 models in the project store: the
 * round trip of every column and the blob, listing and finding by run and
 * source checkpoint, deleting, the cascades from the run and from the
 * source checkpoint (the schema's foreign keys), refusals, and a schema-0
 * file migrated to hold them. */
#include <glib/gstdio.h>
#include <math.h>
#include <sqlite3.h>
#include <string.h>

#include "projects/nl-project.h"

static const char *net_json = "{\"format\":\"netloom.network\",\"version\":1,\"name\":\"n\"}";

typedef struct {
  char *dir, *path;
  NlProject *p;
} Fixture;

static void
fixture_set_up (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  f->dir = g_dir_make_tmp ("nl-project-int8-XXXXXX", &error);
  g_assert_no_error (error);
  f->path = g_build_filename (f->dir, "p.netloom", NULL);
  f->p = nl_project_open (f->path, TRUE, &error);
  g_assert_no_error (error);
}

static void
fixture_tear_down (Fixture *f, gconstpointer data)
{
  g_autofree char *cmd = NULL;
  nl_project_close (f->p);
  GDir *d = g_dir_open (f->dir, 0, NULL);
  const char *name;
  while (d && (name = g_dir_read_name (d)))
    {
      g_autofree char *file = g_build_filename (f->dir, name, NULL);
      g_unlink (file);
    }
  if (d)
    g_dir_close (d);
  g_rmdir (f->dir);
  g_free (f->path);
  g_free (f->dir);
}

/* rows of int8_models, through a connection of its own */
static gint64
count_rows (const char *path)
{
  sqlite3 *db = NULL;
  sqlite3_stmt *st = NULL;
  g_assert_cmpint (sqlite3_open_v2 (path, &db, SQLITE_OPEN_READONLY, NULL), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_prepare_v2 (db, "SELECT count (*) FROM int8_models", -1, &st, NULL), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_step (st), ==, SQLITE_ROW);
  gint64 n = sqlite3_column_int64 (st, 0);
  sqlite3_finalize (st);
  sqlite3_close (db);
  return n;
}

static gint64
new_run (NlProject *p)
{
  g_autoptr (GError) error = NULL;
  NlRunInfo info = { .name = (char *) "r", .network_json = (char *) net_json, .status = (char *) "finished" };
  gint64 run = nl_project_create_run (p, &info, &error);
  g_assert_no_error (error);
  return run;
}

static gint64
add_ckpt (NlProject *p, gint64 run, int epoch, double acc)
{
  g_autoptr (GError) error = NULL;
  gint64 id = nl_project_add_checkpoint (p, run, epoch, epoch * 10, "ck", 2, "accuracy", acc, TRUE, 0, &error);
  g_assert_no_error (error);
  return id;
}

static gint64
add_int8 (NlProject *p, gint64 run, gint64 ckpt, int epoch, const char *method, const char *blob)
{
  g_autoptr (GError) error = NULL;
  NlInt8ModelInfo info = { .run = run, .checkpoint = ckpt, .epoch = epoch, .method = method,
                           .calibration_samples = 256, .fp32_test_acc = 0.91, .int8_test_acc = 0.905,
                           .fp32_images_per_s = 1234.5, .int8_images_per_s = NAN, .id = 77, .size = 5 };
  gint64 id = nl_project_add_int8_model (p, &info, blob, strlen (blob), &error);
  g_assert_no_error (error);
  g_assert_cmpint (id, >, 0);
  return id;
}

static void
test_round_trip (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  gint64 run = new_run (f->p), other = new_run (f->p);
  gint64 c1 = add_ckpt (f->p, run, 1, 0.5), c2 = add_ckpt (f->p, run, 2, 0.9), c3 = add_ckpt (f->p, run, 3, 0.7);
  gint64 a = add_int8 (f->p, run, c2, 2, "entropy", "blob-a");
  gint64 b = add_int8 (f->p, run, c3, 3, "naive", "blob-bb");
  (void) c1;

  g_autoptr (GArray) list = nl_project_list_int8_models (f->p, run, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (list->len, ==, 2);
  const NlInt8ModelInfo *m = &g_array_index (list, NlInt8ModelInfo, 0);
  g_assert_cmpint (m->id, ==, a);
  g_assert_cmpint (m->run, ==, run);
  g_assert_cmpint (m->checkpoint, ==, c2);
  g_assert_cmpint (m->epoch, ==, 2);
  g_assert_true (m->method == g_intern_static_string ("entropy"));
  g_assert_cmpint (m->calibration_samples, ==, 256);
  g_assert_cmpfloat (m->fp32_test_acc, ==, 0.91);
  g_assert_cmpfloat (m->int8_test_acc, ==, 0.905);
  g_assert_cmpfloat (m->fp32_images_per_s, ==, 1234.5);
  g_assert_true (isnan (m->int8_images_per_s));
  g_assert_cmpint (m->size, ==, 6); /* the blob's, not the info's */
  g_assert_cmpfloat (fabs (m->created - g_get_real_time () / 1e6), <, 60);
  g_assert_cmpint (g_array_index (list, NlInt8ModelInfo, 1).id, ==, b);
  g_assert_cmpint (g_array_index (list, NlInt8ModelInfo, 1).size, ==, 7);
  g_autoptr (GArray) none = nl_project_list_int8_models (f->p, other, &error);
  g_assert_cmpuint (none->len, ==, 0);

  gint64 owner = 0;
  g_autoptr (GBytes) blob = nl_project_load_int8_model (f->p, b, &owner, &error);
  g_assert_no_error (error);
  g_assert_cmpint (owner, ==, run);
  g_assert_cmpmem (g_bytes_get_data (blob, NULL), g_bytes_get_size (blob), "blob-bb", 7);

  /* found: the newest of the run, or the newest of a checkpoint */
  g_assert_cmpint (nl_project_find_int8_model (f->p, run, NULL, &error), ==, b);
  g_assert_cmpint (nl_project_find_int8_model (f->p, run, "best", &error), ==, a);
  g_assert_cmpint (nl_project_find_int8_model (f->p, run, "last", &error), ==, b);
  g_assert_cmpint (nl_project_find_int8_model (f->p, run, "2", &error), ==, a);
  g_assert_no_error (error);
  gint64 a2 = add_int8 (f->p, run, c2, 2, "naive", "blob-c");
  g_assert_cmpint (nl_project_find_int8_model (f->p, run, "best", &error), ==, a2);
  g_assert_cmpint (nl_project_find_int8_model (f->p, run, "1", &error), ==, 0);
  g_assert_error (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_NOT_FOUND);
  g_assert_cmpstr (strstr (error->message, "run"), !=, NULL);
  g_assert_nonnull (strstr (error->message, "quantize --checkpoint 1"));
  g_clear_error (&error);
  g_assert_cmpint (nl_project_find_int8_model (f->p, other, NULL, &error), ==, 0);
  g_autofree char *expect = g_strdup_printf ("run %" G_GINT64_FORMAT " has no INT8 model: run netloom-cli quantize"
                                             " first", other);
  g_assert_cmpstr (error->message, ==, expect);
  g_clear_error (&error);

  /* delete one; a second delete is not found */
  g_assert_true (nl_project_delete_int8_model (f->p, a2, &error));
  g_assert_no_error (error);
  g_assert_false (nl_project_delete_int8_model (f->p, a2, &error));
  g_assert_error (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_NOT_FOUND);
  g_clear_error (&error);
  g_assert_null (nl_project_load_int8_model (f->p, a2, NULL, &error));
  g_assert_error (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_NOT_FOUND);
  g_clear_error (&error);
  g_assert_cmpint (count_rows (f->path), ==, 2);
  g_assert_true (nl_project_check (f->p, &error));
  g_assert_no_error (error);
}

/* The run's deletion and the source checkpoint's take them along. */
static void
test_cascades (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  gint64 run = new_run (f->p), keep = new_run (f->p);
  gint64 c1 = add_ckpt (f->p, run, 1, 0.5), c2 = add_ckpt (f->p, run, 2, 0.9);
  gint64 k1 = add_ckpt (f->p, keep, 1, 0.5);
  add_int8 (f->p, run, c1, 1, "naive", "x");
  gint64 from_c2 = add_int8 (f->p, run, c2, 2, "entropy", "y");
  gint64 kept = add_int8 (f->p, keep, k1, 1, "entropy", "z");
  g_assert_cmpint (count_rows (f->path), ==, 3);

  g_assert_true (nl_project_delete_checkpoint (f->p, c1, &error));
  g_assert_no_error (error);
  g_autoptr (GArray) left = nl_project_list_int8_models (f->p, run, &error);
  g_assert_cmpuint (left->len, ==, 1);
  g_assert_cmpint (g_array_index (left, NlInt8ModelInfo, 0).id, ==, from_c2);

  g_assert_true (nl_project_delete_run (f->p, run, &error));
  g_assert_no_error (error);
  g_assert_cmpint (count_rows (f->path), ==, 1);
  g_assert_cmpint (nl_project_find_int8_model (f->p, keep, NULL, &error), ==, kept);
  g_assert_true (nl_project_check (f->p, &error));
  g_assert_no_error (error);
}

/* Nothing is stored for a checkpoint of another run, one that does not
 * exist, or an unknown method. */
static void
test_refused (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  gint64 run = new_run (f->p), other = new_run (f->p);
  gint64 c = add_ckpt (f->p, run, 1, 0.5);
  NlInt8ModelInfo info = { .run = other, .checkpoint = c, .epoch = 1, .method = "naive" };
  g_assert_cmpint (nl_project_add_int8_model (f->p, &info, "b", 1, &error), ==, 0);
  g_assert_error (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_NOT_FOUND);
  g_assert_nonnull (strstr (error->message, "has no checkpoint"));
  g_clear_error (&error);
  info.run = run;
  info.checkpoint = c + 100;
  g_assert_cmpint (nl_project_add_int8_model (f->p, &info, "b", 1, &error), ==, 0);
  g_assert_error (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_NOT_FOUND);
  g_clear_error (&error);
  info.checkpoint = c;
  info.method = "minmax";
  g_assert_cmpint (nl_project_add_int8_model (f->p, &info, "b", 1, &error), ==, 0);
  g_assert_error (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_INVALID);
  g_assert_nonnull (strstr (error->message, "minmax"));
  g_clear_error (&error);
  g_assert_cmpint (count_rows (f->path), ==, 0);
}

/* A schema-0 file migrates (after its backup) to one that holds INT8
 * models of its old runs, with their cascades. */
static void
test_migrated (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("nl-project-int8-XXXXXX", &error);
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
  gint64 id = add_int8 (p, 1, 1, 1, "entropy", "old");
  g_assert_cmpint (nl_project_find_int8_model (p, 1, "best", &error), ==, id);
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
  g_test_add ("/project-int8/round-trip", Fixture, NULL, fixture_set_up, test_round_trip, fixture_tear_down);
  g_test_add ("/project-int8/cascades", Fixture, NULL, fixture_set_up, test_cascades, fixture_tear_down);
  g_test_add ("/project-int8/refused", Fixture, NULL, fixture_set_up, test_refused, fixture_tear_down);
  g_test_add_func ("/project-int8/migrated", test_migrated);
  return g_test_run ();
}
