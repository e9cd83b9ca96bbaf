/* test-project-vocab.c — a text run's vocabulary in the project store
 * (schema 6): the round trip, replacing, NULL without an error for a run
 * without one, refusals (no such run, empty text) with nothing written,
 * deletion with the run, and a schema-5 file migrated after its backup to
 * one that holds vocabularies, its old rows kept. */
#include <glib/gstdio.h>
#include <sqlite3.h>
#include <string.h>

#include "projects/nl-project.h"

static const char *net_json = "{\"format\":\"netloom.network\",\"version\":1,\"name\":\"n\"}";
static const char *vocab_a = "{\"format\":\"netloom.vocab\",\"version\":1,\"tokenizer\":\"word\","
                             "\"tokens\":[\"<pad>\",\"<unk>\",\"the\",\"caf\\u00e9\"]}";
static const char *vocab_b = "{\"format\":\"netloom.vocab\",\"version\":1,\"tokenizer\":\"char\","
                             "\"tokens\":[\"<pad>\",\"<unk>\",\"a\"]}";

static gint64
raw_count (const char *path, const char *sql)
{
  sqlite3 *db = NULL;
  sqlite3_stmt *st = NULL;
  g_assert_cmpint (sqlite3_open_v2 (path, &db, SQLITE_OPEN_READONLY, NULL), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_prepare_v2 (db, sql, -1, &st, NULL), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_step (st), ==, SQLITE_ROW);
  gint64 n = sqlite3_column_int64 (st, 0);
  sqlite3_finalize (st);
  sqlite3_close (db);
  return n;
}

static gint64
new_run (NlProject *p, const char *name)
{
  g_autoptr (GError) error = NULL;
  NlRunInfo info = { .name = (char *) name, .network_json = (char *) net_json, .status = (char *) "finished" };
  gint64 id = nl_project_create_run (p, &info, &error);
  g_assert_no_error (error);
  g_assert_cmpint (id, >, 0);
  return id;
}

static void
assert_vocab (NlProject *p, gint64 run, const char *want)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *got = nl_project_get_run_vocab (p, run, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (got, ==, want);
}

static void
test_round_trip (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("nl-project-vocab-XXXXXX", &error);
  g_autofree char *path = g_build_filename (dir, "p.netloom", NULL);
  NlProject *p = nl_project_open (path, TRUE, &error);
  g_assert_no_error (error);
  gint64 r1 = new_run (p, "text"), r2 = new_run (p, "images");

  assert_vocab (p, r1, NULL);
  g_assert_true (nl_project_set_run_vocab (p, r1, vocab_a, &error));
  g_assert_no_error (error);
  assert_vocab (p, r1, vocab_a);
  assert_vocab (p, r2, NULL);
  /* a second store replaces the first (one row per run) */
  g_assert_true (nl_project_set_run_vocab (p, r1, vocab_b, &error));
  g_assert_no_error (error);
  assert_vocab (p, r1, vocab_b);

  /* refusals write nothing */
  g_assert_false (nl_project_set_run_vocab (p, 999, vocab_a, &error));
  g_assert_error (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_NOT_FOUND);
  g_assert_nonnull (strstr (error->message, "no run 999"));
  g_clear_error (&error);
  g_assert_false (nl_project_set_run_vocab (p, r2, "", &error));
  g_assert_error (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_INVALID);
  g_clear_error (&error);
  assert_vocab (p, r2, NULL);
  g_assert_true (nl_project_check (p, &error));
  nl_project_close (p);
  g_assert_cmpint (raw_count (path, "SELECT count (*) FROM run_vocabs"), ==, 1);

  /* deleted with its run */
  p = nl_project_open (path, FALSE, &error);
  g_assert_no_error (error);
  g_assert_true (nl_project_delete_run (p, r1, &error));
  g_assert_no_error (error);
  assert_vocab (p, r1, NULL);
  nl_project_close (p);
  g_assert_cmpint (raw_count (path, "SELECT count (*) FROM run_vocabs"), ==, 0);
  g_unlink (path);
  g_rmdir (dir);
}

/* A schema-5 file (a fresh one less its run_vocabs table) migrates after a
 * backup at PATH.bak-v5: its run kept, vocabularies stored on it. */
static void
test_migrate_v5 (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("nl-project-vocab-XXXXXX", &error);
  g_autofree char *path = g_build_filename (dir, "v5.netloom", NULL);
  g_autofree char *bak = g_strdup_printf ("%s.bak-v5", path);
  NlProject *p = nl_project_open (path, TRUE, &error);
  g_assert_no_error (error);
  gint64 run = new_run (p, "old");
  nl_project_close (p);
  sqlite3 *db = NULL;
  g_assert_cmpint (sqlite3_open (path, &db), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_exec (db, "DROP TABLE run_vocabs; PRAGMA user_version = 5", NULL, NULL, NULL), ==,
                   SQLITE_OK);
  sqlite3_close (db);

  p = nl_project_open (path, FALSE, &error);
  g_assert_no_error (error);
  g_assert_cmpint (nl_project_schema_version (p), ==, 6);
  g_autoptr (NlRunInfo) info = nl_project_get_run (p, run, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (info->name, ==, "old");
  assert_vocab (p, run, NULL);
  g_assert_true (nl_project_set_run_vocab (p, run, vocab_a, &error));
  g_assert_no_error (error);
  assert_vocab (p, run, vocab_a);
  g_assert_true (nl_project_check (p, &error));
  g_assert_true (nl_project_delete_run (p, run, &error));
  nl_project_close (p);
  g_assert_cmpint (raw_count (path, "SELECT count (*) FROM run_vocabs"), ==, 0);
  g_assert_true (g_file_test (bak, G_FILE_TEST_EXISTS));
  g_assert_cmpint (raw_count (bak, "PRAGMA user_version"), ==, 5);
  g_assert_cmpint (raw_count (bak, "SELECT count (*) FROM runs"), ==, 1);
  g_unlink (bak);
  g_unlink (path);
  g_rmdir (dir);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/project-vocab/round-trip", test_round_trip);
  g_test_add_func ("/project-vocab/migrate-v5", test_migrate_v5);
  return g_test_run ();
}
