/* test-project.c — the SQLite project store: schema and pragmas, every
 * table's round trip, status transitions, metrics, checkpoint retention,
 * cascades, the sample project, refusing files it must not touch, stale
 * runs, migration from schema 0 and a read-only file. */
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <math.h>
#include <sqlite3.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "projects/nl-project.h"

/* ---- helpers ---- */

static char *
make_tmp_dir (void)
{
  g_autoptr (GError) error = NULL;
  char *dir = g_dir_make_tmp ("nl-project-XXXXXX", &error);
  g_assert_no_error (error);
  return dir;
}

static void
rm_rf (const char *dir)
{
  GDir *d = g_dir_open (dir, 0, NULL);
  if (!d)
    return;
  const char *name;
  while ((name = g_dir_read_name (d)))
    {
      g_autofree char *f = g_build_filename (dir, name, NULL);
      g_unlink (f);
    }
  g_dir_close (d);
  g_rmdir (dir);
}

static char *
file_sha256 (const char *path)
{
  g_autofree char *data = NULL;
  gsize len = 0;
  g_autoptr (GError) error = NULL;
  g_file_get_contents (path, &data, &len, &error);
  g_assert_no_error (error);
  return g_compute_checksum_for_data (G_CHECKSUM_SHA256, (const guint8 *) data, len);
}

/* A separate raw connection, to look at what the API wrote. */
static sqlite3 *
raw_open (const char *path)
{
  sqlite3 *db = NULL;
  g_assert_cmpint (sqlite3_open_v2 (path, &db, SQLITE_OPEN_READWRITE, NULL), ==, SQLITE_OK);
  sqlite3_busy_timeout (db, 5000);
  return db;
}

static gint64
raw_int (sqlite3 *db, const char *sql)
{
  sqlite3_stmt *st = NULL;
  g_assert_cmpint (sqlite3_prepare_v2 (db, sql, -1, &st, NULL), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_step (st), ==, SQLITE_ROW);
  gint64 v = sqlite3_column_int64 (st, 0);
  sqlite3_finalize (st);
  return v;
}

/* raw_int on a connection of its own */
static gint64
file_int (const char *path, const char *sql)
{
  sqlite3 *db = raw_open (path);
  gint64 n = raw_int (db, sql);
  sqlite3_close (db);
  return n;
}

static char *
raw_text (sqlite3 *db, const char *sql)
{
  sqlite3_stmt *st = NULL;
  g_assert_cmpint (sqlite3_prepare_v2 (db, sql, -1, &st, NULL), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_step (st), ==, SQLITE_ROW);
  char *v = g_strdup ((const char *) sqlite3_column_text (st, 0));
  sqlite3_finalize (st);
  return v;
}

static void
raw_exec (sqlite3 *db, const char *sql)
{
  char *msg = NULL;
  int rc = sqlite3_exec (db, sql, NULL, NULL, &msg);
  if (rc != SQLITE_OK)
    g_error ("%s: %s", sql, msg);
}

typedef struct {
  char *dir, *path;
  NlProject *p;
} Fixture;

static void
fixture_setup (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  f->dir = make_tmp_dir ();
  f->path = g_build_filename (f->dir, "test.netloom", NULL);
  f->p = nl_project_open (f->path, TRUE, &error);
  g_assert_no_error (error);
  g_assert_nonnull (f->p);
}

static void
fixture_teardown (Fixture *f, gconstpointer data)
{
  nl_project_close (f->p);
  rm_rf (f->dir);
  g_free (f->dir);
  g_free (f->path);
}

static const char net_json[] = "{\"format\":\"netloom.network\",\"version\":1,\"name\":\"n\",\"nodes\":[]}";

static gint64
new_run (NlProject *p, const char *name)
{
  g_autoptr (GError) error = NULL;
  NlRunInfo info = { .name = (char *) name, .network_json = (char *) net_json };
  gint64 id = nl_project_create_run (p, &info, &error);
  g_assert_no_error (error);
  g_assert_cmpint (id, >, 0);
  return id;
}

/* ---- schema ---- */

static void
test_schema (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  g_assert_cmpint (nl_project_schema_version (f->p), ==, NL_PROJECT_SCHEMA_VERSION);
  g_assert_cmpstr (nl_project_path (f->p), ==, f->path);
  g_assert_false (nl_project_is_read_only (f->p));
  g_assert_true (nl_project_check (f->p, &error));
  g_assert_no_error (error);

  sqlite3 *db = raw_open (f->path);
  g_assert_cmpint (raw_int (db, "PRAGMA application_id"), ==, 0x4E4C4F4D);
  g_assert_cmpint (raw_int (db, "PRAGMA user_version"), ==, NL_PROJECT_SCHEMA_VERSION);
  g_autofree char *mode = raw_text (db, "PRAGMA journal_mode");
  g_assert_cmpstr (mode, ==, "wal");
  const char *tables[] = { "networks", "pipelines", "runs", "metrics", "checkpoints", "tags", "notes", "sweeps" };
  for (guint i = 0; i < G_N_ELEMENTS (tables); i++)
    {
      g_autofree char *sql = g_strdup_printf ("SELECT count (*) FROM sqlite_master WHERE type = 'table'"
                                              " AND name = '%s'", tables[i]);
      g_assert_cmpint (raw_int (db, sql), ==, 1);
    }
  /* The metrics index is on (run, name, step), in that order. */
  sqlite3_stmt *st = NULL;
  g_assert_cmpint (sqlite3_prepare_v2 (db, "SELECT name FROM pragma_index_info ('metrics_run_name_step')"
                                       " ORDER BY seqno", -1, &st, NULL), ==, SQLITE_OK);
  const char *cols[] = { "run", "name", "step" };
  for (guint i = 0; i < 3; i++)
    {
      g_assert_cmpint (sqlite3_step (st), ==, SQLITE_ROW);
      g_assert_cmpstr ((const char *) sqlite3_column_text (st, 0), ==, cols[i]);
    }
  g_assert_cmpint (sqlite3_step (st), ==, SQLITE_DONE);
  sqlite3_finalize (st);
  sqlite3_close (db);

  /* Foreign keys are on in the project's connection: a metric of a run that
   * does not exist is refused. */
  NlMetricPoint pt = { .run = 99, .step = 1, .split = "train", .name = "loss", .value = 1 };
  g_assert_false (nl_project_add_metrics (f->p, &pt, 1, &error));
  g_assert_error (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_NOT_FOUND);
  g_clear_error (&error);

  /* Reopening works and does not need create; a missing file without
   * create is an error and is not created. */
  nl_project_close (f->p);
  f->p = nl_project_open (f->path, FALSE, &error);
  g_assert_no_error (error);
  g_assert_cmpint (nl_project_schema_version (f->p), ==, NL_PROJECT_SCHEMA_VERSION);
  g_autofree char *missing = g_build_filename (f->dir, "missing.netloom", NULL);
  g_assert_null (nl_project_open (missing, FALSE, &error));
  g_assert_error (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_NOT_FOUND);
  g_assert_false (g_file_test (missing, G_FILE_TEST_EXISTS));
}

/* ---- sweeps ---- */

static void
test_sweeps (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  NlSweepInfo info = { .name = (char *) "search", .network_name = (char *) "tiny", .network_json = (char *) net_json,
                       .hparams_json = (char *) "{\"epochs\":4}", .space = (char *) "lr=log:1e-4:1e-1",
                       .strategy = (char *) "tpe", .metric = (char *) "test_accuracy", .maximize = TRUE,
                       .prune = (char *) "asha:eta=3", .trials = 24, .parallel = 2, .seed = 7 };
  gint64 id = nl_project_create_sweep (f->p, &info, &error);
  g_assert_no_error (error);
  g_assert_cmpint (id, >, 0);

  g_autoptr (NlSweepInfo) s = nl_project_get_sweep (f->p, id, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (s->name, ==, "search");
  g_assert_cmpstr (s->hparams_json, ==, "{\"epochs\":4}");
  g_assert_cmpstr (s->strategy, ==, "tpe");
  g_assert_cmpstr (s->prune, ==, "asha:eta=3");
  g_assert_cmpstr (s->status, ==, "running");
  g_assert_true (s->maximize);
  g_assert_cmpint (s->trials, ==, 24);
  g_assert_cmpint (s->parallel, ==, 2);
  g_assert_cmpint (s->seed, ==, 7);
  g_assert_cmpfloat (s->finished, ==, 0);
  g_assert_true (nl_project_set_sweep_status (f->p, id, "finished", &error));
  g_autoptr (GPtrArray) all = nl_project_list_sweeps (f->p, &error);
  g_assert_cmpuint (all->len, ==, 1);
  g_assert_cmpstr (((NlSweepInfo *) all->pdata[0])->status, ==, "finished");
  g_assert_cmpfloat (((NlSweepInfo *) all->pdata[0])->finished, >, 0);
  g_assert_false (nl_project_set_sweep_status (f->p, id, "paused", &error));
  g_assert_error (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_INVALID);
  g_clear_error (&error);
  g_assert_null (nl_project_get_sweep (f->p, 99, &error));
  g_assert_error (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_NOT_FOUND);
  g_clear_error (&error);

  /* trials are runs linked to the sweep; a trial number is taken once */
  NlRunInfo plain = { .network_json = (char *) net_json };
  NlRunInfo t0 = { .network_json = (char *) net_json, .sweep = id, .sweep_trial = 0,
                   .sweep_params = (char *) "{\"lr\":0.01}" };
  NlRunInfo t1 = { .network_json = (char *) net_json, .sweep = id, .sweep_trial = 1 };
  gint64 r_plain = nl_project_create_run (f->p, &plain, &error);
  gint64 r0 = nl_project_create_run (f->p, &t0, &error);
  gint64 r1 = nl_project_create_run (f->p, &t1, &error);
  g_assert_no_error (error);
  g_assert_cmpint (nl_project_create_run (f->p, &t0, &error), ==, 0);
  g_assert_nonnull (error);
  g_clear_error (&error);
  g_autoptr (GPtrArray) trials = nl_project_list_sweep_runs (f->p, id, &error);
  g_assert_cmpuint (trials->len, ==, 2);
  NlRunInfo *a = trials->pdata[0], *b = trials->pdata[1];
  g_assert_cmpint (a->id, ==, r0);
  g_assert_cmpint (a->sweep, ==, id);
  g_assert_cmpint (a->sweep_trial, ==, 0);
  g_assert_cmpstr (a->sweep_params, ==, "{\"lr\":0.01}");
  g_assert_cmpint (b->id, ==, r1);
  g_assert_cmpint (b->sweep_trial, ==, 1);
  g_autoptr (NlRunInfo) p = nl_project_get_run (f->p, r_plain, &error);
  g_assert_cmpint (p->sweep, ==, 0);
  g_assert_null (p->sweep_params);

  /* pruned is a final status */
  g_assert_true (nl_project_set_run_status (f->p, r1, "pruned", "pruned at epoch 1", &error));
  g_autoptr (NlRunInfo) pr = nl_project_get_run (f->p, r1, &error);
  g_assert_cmpstr (pr->status, ==, "pruned");
  g_assert_cmpstr (pr->error, ==, "pruned at epoch 1");
  g_assert_cmpfloat (pr->finished, >, 0);
}

/* ---- networks and pipelines ---- */

static void
test_networks (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  const char *v1 = "{\"format\":\"netloom.network\",\"name\":\"a\",\"v\":1}";
  const char *v2 = "{\"format\":\"netloom.network\",\"name\":\"a\",\"v\":2}";
  gint64 id1 = nl_project_save_network (f->p, "a", v1, &error);
  g_assert_no_error (error);
  gint64 id2 = nl_project_save_network (f->p, "a", v2, &error);
  g_assert_no_error (error);
  gint64 id3 = nl_project_save_network (f->p, "b", v1, &error);
  g_assert_no_error (error);
  g_assert_cmpint (id1, >, 0);
  g_assert_cmpint (id2, >, id1);
  g_assert_cmpint (id3, >, id2);

  g_autofree char *latest = nl_project_load_network (f->p, "a", 0, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (latest, ==, v2);
  g_autofree char *first = nl_project_load_network (f->p, "a", 1, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (first, ==, v1);
  g_assert_null (nl_project_load_network (f->p, "a", 3, &error));
  g_assert_error (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_NOT_FOUND);
  g_clear_error (&error);
  g_assert_null (nl_project_load_network (f->p, "zzz", 0, &error));
  g_assert_error (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_NOT_FOUND);
  g_clear_error (&error);

  g_autoptr (GPtrArray) list = nl_project_list_networks (f->p, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (list->len, ==, 2);
  NlNetworkInfo *a = list->pdata[0], *b = list->pdata[1];
  g_assert_cmpstr (a->name, ==, "a");
  g_assert_cmpint (a->version, ==, 2);
  g_assert_cmpint (a->n_versions, ==, 2);
  g_assert_cmpint (a->id, ==, id2);
  g_assert_cmpstr (b->name, ==, "b");
  g_assert_cmpint (b->version, ==, 1);
  g_assert_cmpint (b->n_versions, ==, 1);
  g_assert_cmpfloat (fabs (a->created - g_get_real_time () / 1e6), <, 60);

  g_autoptr (GPtrArray) versions = nl_project_list_network_versions (f->p, "a", &error);
  g_assert_no_error (error);
  g_assert_cmpuint (versions->len, ==, 2);
  g_assert_cmpint (((NlNetworkInfo *) versions->pdata[0])->version, ==, 1);
  g_assert_cmpint (((NlNetworkInfo *) versions->pdata[1])->version, ==, 2);

  /* Not JSON, and JSON that is not an object. */
  g_assert_cmpint (nl_project_save_network (f->p, "c", "{broken", &error), ==, 0);
  g_assert_error (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_INVALID);
  g_clear_error (&error);
  g_assert_cmpint (nl_project_save_network (f->p, "c", "[1, 2]", &error), ==, 0);
  g_assert_error (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_INVALID);
  g_clear_error (&error);
  /* 80,000 levels overflowed json-glib's recursive parser: refused first */
  {
    g_autofree char *deep = g_strnfill (80000, '[');
    g_assert_cmpint (nl_project_save_network (f->p, "c", deep, &error), ==, 0);
    g_assert_error (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_INVALID);
    g_assert_cmpstr (error->message, ==,
                     "the network is not valid JSON: the network: JSON nested more than 256 levels deep (at byte 256)");
    g_clear_error (&error);
  }

  g_assert_true (nl_project_delete_network (f->p, "a", &error));
  g_assert_no_error (error);
  g_assert_false (nl_project_delete_network (f->p, "a", &error));
  g_assert_error (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_NOT_FOUND);
  g_clear_error (&error);
  g_autoptr (GPtrArray) after = nl_project_list_networks (f->p, &error);
  g_assert_cmpuint (after->len, ==, 1);
  /* Numbering continues from the versions that remain, per name. */
  nl_project_save_network (f->p, "b", v2, &error);
  g_autoptr (GPtrArray) bv = nl_project_list_network_versions (f->p, "b", &error);
  g_assert_cmpuint (bv->len, ==, 2);
  g_assert_cmpint (((NlNetworkInfo *) bv->pdata[1])->version, ==, 2);
}

static void
test_pipelines (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  NlPipelineInfo in = {
    .name = (char *) "cifar", .dataset_spec = (char *) "cifar10:/data", .transforms = (char *) "flip",
    .split = 0.25, .batch_size = 64, .workers = 3, .extra_json = (char *) "{\"shuffle\":true}",
  };
  gint64 id = nl_project_save_pipeline (f->p, &in, &error);
  g_assert_no_error (error);
  g_assert_cmpint (id, >, 0);
  g_autoptr (NlPipelineInfo) out = nl_project_load_pipeline (f->p, "cifar", &error);
  g_assert_no_error (error);
  g_assert_cmpint (out->id, ==, id);
  g_assert_cmpstr (out->dataset_spec, ==, "cifar10:/data");
  g_assert_cmpstr (out->transforms, ==, "flip");
  g_assert_cmpfloat (out->split, ==, 0.25);
  g_assert_cmpint (out->batch_size, ==, 64);
  g_assert_cmpint (out->workers, ==, 3);
  g_assert_cmpstr (out->extra_json, ==, "{\"shuffle\":true}");
  g_assert_cmpfloat (out->created, >, 1.6e9);

  /* Saving the same name updates the row in place. */
  in.batch_size = 128;
  in.transforms = NULL;
  g_assert_cmpint (nl_project_save_pipeline (f->p, &in, &error), ==, id);
  g_autoptr (NlPipelineInfo) upd = nl_project_load_pipeline (f->p, "cifar", &error);
  g_assert_cmpint (upd->batch_size, ==, 128);
  g_assert_null (upd->transforms);
  g_assert_cmpfloat (upd->created, ==, out->created);

  NlPipelineInfo other = { .name = (char *) "another", .dataset_spec = (char *) "mnist" };
  nl_project_save_pipeline (f->p, &other, &error);
  g_assert_no_error (error);
  g_autoptr (GPtrArray) list = nl_project_list_pipelines (f->p, &error);
  g_assert_cmpuint (list->len, ==, 2);
  g_assert_cmpstr (((NlPipelineInfo *) list->pdata[0])->name, ==, "another");

  /* The JSON snapshot used for runs. */
  in.transforms = (char *) "random-crop:32:4,flip";
  g_autofree char *json = nl_pipeline_info_to_json (&in);
  g_autoptr (NlPipelineInfo) back = nl_pipeline_info_from_json (json, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (back->name, ==, "cifar");
  g_assert_cmpstr (back->dataset_spec, ==, "cifar10:/data");
  g_assert_cmpstr (back->transforms, ==, "random-crop:32:4,flip");
  g_assert_cmpfloat (back->split, ==, 0.25);
  g_assert_cmpint (back->batch_size, ==, 128);
  g_assert_cmpint (back->workers, ==, 3);
  g_assert_cmpstr (back->extra_json, ==, "{\"shuffle\":true}");
  g_assert_null (nl_pipeline_info_from_json ("nope", &error));
  g_assert_error (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_INVALID);
  g_clear_error (&error);
  {
    g_autofree char *deep = g_strnfill (80000, '{');
    g_assert_null (nl_pipeline_info_from_json (deep, &error));
    g_assert_error (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_INVALID);
    g_assert_nonnull (strstr (error->message, "the pipeline: JSON nested more than 256 levels deep"));
    g_clear_error (&error);
    /* nor saved as a pipeline's extra settings */
    in.extra_json = deep;
    g_assert_cmpint (nl_project_save_pipeline (f->p, &in, &error), ==, 0);
    g_assert_error (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_INVALID);
    g_assert_nonnull (strstr (error->message, "nested more than 256 levels"));
    g_clear_error (&error);
    in.extra_json = NULL;
  }

  g_assert_true (nl_project_delete_pipeline (f->p, "cifar", &error));
  g_assert_null (nl_project_load_pipeline (f->p, "cifar", &error));
  g_assert_error (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_NOT_FOUND);
}

/* ---- runs, tags, notes ---- */

static void
test_runs (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  double t0 = g_get_real_time () / 1e6;
  NlRunInfo in = {
    .name = (char *) "first", .network_name = (char *) "lenet", .network_json = (char *) net_json,
    .pipeline_json = (char *) "{\"dataset\":\"mnist\"}", .hparams_json = (char *) "{\"lr\":0.1}",
    .seed = 1234567890123LL, .device = (char *) "cpu",
  };
  gint64 run = nl_project_create_run (f->p, &in, &error);
  g_assert_no_error (error);
  g_autoptr (NlRunInfo) r = nl_project_get_run (f->p, run, &error);
  g_assert_no_error (error);
  g_assert_cmpint (r->id, ==, run);
  g_assert_cmpstr (r->name, ==, "first");
  g_assert_cmpstr (r->network_name, ==, "lenet");
  g_assert_cmpstr (r->network_json, ==, net_json);
  g_assert_cmpstr (r->pipeline_json, ==, "{\"dataset\":\"mnist\"}");
  g_assert_cmpstr (r->hparams_json, ==, "{\"lr\":0.1}");
  g_assert_cmpint (r->seed, ==, 1234567890123LL);
  g_assert_cmpstr (r->device, ==, "cpu");
  g_assert_cmpstr (r->status, ==, "queued");
  g_assert_null (r->error);
  g_assert_null (r->host);
  g_assert_cmpint (r->pid, ==, 0);
  g_assert_cmpint (r->parent_run, ==, 0);
  g_assert_cmpfloat (r->created, >=, t0 - 1);
  g_assert_cmpfloat (r->started, ==, 0);
  g_assert_cmpfloat (r->finished, ==, 0);
  g_assert_cmpint (r->epochs_done, ==, 0);

  /* queued -> running: start time, host and pid. */
  g_assert_true (nl_project_set_run_status (f->p, run, "running", NULL, &error));
  g_assert_no_error (error);
  double t1 = g_get_real_time () / 1e6;
  g_autoptr (NlRunInfo) r1 = nl_project_get_run (f->p, run, &error);
  g_assert_cmpstr (r1->status, ==, "running");
  g_assert_cmpfloat (r1->started, >=, t0 - 0.01);
  g_assert_cmpfloat (r1->started, <=, t1 + 0.01);
  g_assert_cmpstr (r1->host, ==, g_get_host_name ());
  g_assert_cmpint (r1->pid, ==, getpid ());
  g_assert_cmpfloat (r1->finished, ==, 0);

  /* paused and running again keep the first start time. */
  g_usleep (20000);
  g_assert_true (nl_project_set_run_status (f->p, run, "paused", NULL, &error));
  g_assert_true (nl_project_set_run_status (f->p, run, "running", NULL, &error));
  g_autoptr (NlRunInfo) r2 = nl_project_get_run (f->p, run, &error);
  g_assert_cmpstr (r2->status, ==, "running");
  g_assert_cmpfloat (r2->started, ==, r1->started);

  /* failed: finish time and message. */
  g_assert_true (nl_project_set_run_status (f->p, run, "failed", "loss is NaN", &error));
  g_autoptr (NlRunInfo) r3 = nl_project_get_run (f->p, run, &error);
  g_assert_cmpstr (r3->status, ==, "failed");
  g_assert_cmpstr (r3->error, ==, "loss is NaN");
  g_assert_cmpfloat (r3->finished, >=, r2->started);
  g_assert_cmpstr (r3->host, ==, g_get_host_name ());

  /* resumed: finish time and error cleared; finished at last. */
  g_assert_true (nl_project_set_run_status (f->p, run, "running", NULL, &error));
  g_autoptr (NlRunInfo) r4 = nl_project_get_run (f->p, run, &error);
  g_assert_cmpfloat (r4->finished, ==, 0);
  g_assert_null (r4->error);
  g_assert_true (nl_project_set_run_status (f->p, run, "finished", NULL, &error));
  g_assert_true (nl_project_set_run_epochs (f->p, run, 7, &error));
  g_assert_no_error (error);
  g_autoptr (NlRunInfo) r5 = nl_project_get_run (f->p, run, &error);
  g_assert_cmpstr (r5->status, ==, "finished");
  g_assert_cmpfloat (r5->finished, >=, r4->started);
  g_assert_cmpint (r5->epochs_done, ==, 7);

  /* queued again forgets the previous attempt. */
  g_assert_true (nl_project_set_run_status (f->p, run, "queued", NULL, &error));
  g_autoptr (NlRunInfo) r6 = nl_project_get_run (f->p, run, &error);
  g_assert_cmpfloat (r6->started, ==, 0);
  g_assert_cmpfloat (r6->finished, ==, 0);
  g_assert_null (r6->host);

  /* Bad status names, missing runs, missing snapshot. */
  g_assert_false (nl_project_set_run_status (f->p, run, "done", NULL, &error));
  g_assert_error (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_INVALID);
  g_clear_error (&error);
  g_assert_false (nl_project_set_run_status (f->p, 999, "running", NULL, &error));
  g_assert_error (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_NOT_FOUND);
  g_clear_error (&error);
  g_assert_null (nl_project_get_run (f->p, 999, &error));
  g_assert_error (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_NOT_FOUND);
  g_clear_error (&error);
  NlRunInfo bad = { .name = (char *) "x" };
  g_assert_cmpint (nl_project_create_run (f->p, &bad, &error), ==, 0);
  g_assert_error (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_INVALID);
  g_clear_error (&error);
  NlRunInfo bad_status = { .network_json = (char *) net_json, .status = (char *) "done" };
  g_assert_cmpint (nl_project_create_run (f->p, &bad_status, &error), ==, 0);
  g_assert_error (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_INVALID);
  g_clear_error (&error);

  /* A fork names its parent run and checkpoint; a run created running
   * gets this process's host and pid. */
  guint8 blob[4] = { 1, 2, 3, 4 };
  gint64 ck = nl_project_add_checkpoint (f->p, run, 1, 10, blob, 4, NULL, 0, TRUE, 0, &error);
  g_assert_no_error (error);
  NlRunInfo fork = { .name = (char *) "fork", .network_json = (char *) net_json, .parent_run = run,
                     .parent_checkpoint = ck, .status = (char *) "running" };
  gint64 child = nl_project_create_run (f->p, &fork, &error);
  g_assert_no_error (error);
  g_autoptr (NlRunInfo) c = nl_project_get_run (f->p, child, &error);
  g_assert_cmpint (c->parent_run, ==, run);
  g_assert_cmpint (c->parent_checkpoint, ==, ck);
  g_assert_cmpstr (c->status, ==, "running");
  g_assert_cmpint (c->pid, ==, getpid ());
  g_assert_cmpfloat (c->started, >, 0);
  fork.parent_run = 12345;
  g_assert_cmpint (nl_project_create_run (f->p, &fork, &error), ==, 0);
  g_assert_error (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_NOT_FOUND);
  g_clear_error (&error);

  g_assert_true (nl_project_rename_run (f->p, child, "renamed", &error));
  g_assert_false (nl_project_rename_run (f->p, 999, "x", &error));
  g_assert_error (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_NOT_FOUND);
  g_clear_error (&error);
  g_autoptr (GPtrArray) runs = nl_project_list_runs (f->p, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (runs->len, ==, 2);
  g_assert_cmpint (((NlRunInfo *) runs->pdata[0])->id, ==, run);
  g_assert_cmpstr (((NlRunInfo *) runs->pdata[1])->name, ==, "renamed");

  /* Tags: sets per run, sorted; run 0 lists every tag. */
  g_assert_true (nl_project_add_tag (f->p, run, "zeta", &error));
  g_assert_true (nl_project_add_tag (f->p, run, "alpha", &error));
  g_assert_true (nl_project_add_tag (f->p, run, "alpha", &error));
  g_assert_true (nl_project_add_tag (f->p, child, "beta", &error));
  g_assert_no_error (error);
  g_assert_false (nl_project_add_tag (f->p, 999, "x", &error));
  g_assert_error (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_NOT_FOUND);
  g_clear_error (&error);
  g_assert_false (nl_project_add_tag (f->p, run, "", &error));
  g_assert_error (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_INVALID);
  g_clear_error (&error);
  g_auto (GStrv) tags = nl_project_list_tags (f->p, run, &error);
  g_assert_cmpuint (g_strv_length (tags), ==, 2);
  g_assert_cmpstr (tags[0], ==, "alpha");
  g_assert_cmpstr (tags[1], ==, "zeta");
  g_auto (GStrv) all = nl_project_list_tags (f->p, 0, &error);
  g_assert_cmpuint (g_strv_length (all), ==, 3);
  g_assert_cmpstr (all[1], ==, "beta");
  g_assert_true (nl_project_remove_tag (f->p, run, "zeta", &error));
  g_auto (GStrv) tags2 = nl_project_list_tags (f->p, run, &error);
  g_assert_cmpuint (g_strv_length (tags2), ==, 1);

  /* Notes. */
  gint64 n1 = nl_project_add_note (f->p, run, "lr too high", &error);
  gint64 n2 = nl_project_add_note (f->p, run, "try warmup", &error);
  g_assert_no_error (error);
  g_assert_cmpint (nl_project_add_note (f->p, 999, "x", &error), ==, 0);
  g_assert_error (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_NOT_FOUND);
  g_clear_error (&error);
  g_autoptr (GPtrArray) notes = nl_project_list_notes (f->p, run, &error);
  g_assert_cmpuint (notes->len, ==, 2);
  g_assert_cmpint (((NlNote *) notes->pdata[0])->id, ==, n1);
  g_assert_cmpstr (((NlNote *) notes->pdata[1])->text, ==, "try warmup");
  g_assert_true (nl_project_delete_note (f->p, n2, &error));
  g_assert_false (nl_project_delete_note (f->p, n2, &error));
  g_assert_error (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_NOT_FOUND);
  g_clear_error (&error);
}

/* ---- metrics ---- */

static void
test_metrics (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  gint64 r1 = new_run (f->p, "a"), r2 = new_run (f->p, "b");
  /* Reference data: a loss curve and an accuracy per epoch for r1, noise in r2. */
  enum { N = 200 };
  NlMetricPoint pts[N + 20];
  int n = 0;
  double ref_val[N];
  for (int i = 0; i < N; i++)
    {
      ref_val[i] = 2.0 / (1 + i) + 0.05 * sin (i * 0.7);
      pts[n++] = (NlMetricPoint) { .run = r1, .step = i + 1, .epoch = i / 50 + 1, .split = "train",
                                   .name = "loss", .value = ref_val[i], .wall = 1700000000.0 + i };
    }
  for (int e = 1; e <= 4; e++)
    pts[n++] = (NlMetricPoint) { .run = r1, .step = e * 50, .epoch = e, .split = "val",
                                 .name = "accuracy", .value = 0.5 + 0.1 * e - (e == 4 ? 0.15 : 0) };
  for (int i = 0; i < 10; i++)
    pts[n++] = (NlMetricPoint) { .run = r2, .step = i, .split = "train", .name = "loss", .value = 9 - i };
  g_assert_true (nl_project_add_metrics (f->p, pts, n, &error));
  g_assert_no_error (error);

  gint64 last = -1;
  g_autoptr (GArray) all1 = nl_project_get_metrics (f->p, r1, NULL, 0, &last, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (all1->len, ==, N + 4);
  g_autoptr (GArray) loss1 = nl_project_get_metrics (f->p, r1, "loss", 0, NULL, &error);
  g_assert_cmpuint (loss1->len, ==, N);
  for (int i = 0; i < N; i++)
    {
      NlMetricRow *row = &g_array_index (loss1, NlMetricRow, i);
      g_assert_cmpint (row->run, ==, r1);
      g_assert_cmpint (row->step, ==, i + 1);
      g_assert_cmpint (row->epoch, ==, i / 50 + 1);
      g_assert_cmpfloat (row->value, ==, ref_val[i]);
      g_assert_cmpfloat (row->wall, ==, 1700000000.0 + i);
      g_assert_true (row->name == g_intern_string ("loss"));
      g_assert_true (row->split == g_intern_string ("train"));
      if (i)
        g_assert_cmpint (row->rowid, >, g_array_index (loss1, NlMetricRow, i - 1).rowid);
    }
  g_assert_cmpint (last, ==, g_array_index (all1, NlMetricRow, all1->len - 1).rowid);
  /* wall 0 means "now". */
  NlMetricRow *r2row = NULL;
  g_autoptr (GArray) all = nl_project_get_metrics (f->p, 0, NULL, 0, NULL, &error);
  g_assert_cmpuint (all->len, ==, (guint) n);
  r2row = &g_array_index (all, NlMetricRow, n - 1);
  g_assert_cmpint (r2row->run, ==, r2);
  g_assert_cmpfloat (fabs (r2row->wall - g_get_real_time () / 1e6), <, 60);

  /* Polling: nothing new, then exactly the new rows. */
  gint64 last2 = 0;
  g_autoptr (GArray) none = nl_project_get_metrics (f->p, r1, "loss", last, &last2, &error);
  g_assert_cmpuint (none->len, ==, 0);
  g_assert_cmpint (last2, ==, last);
  NlMetricPoint more[3] = {
    { .run = r1, .step = N + 1, .epoch = 5, .split = "train", .name = "loss", .value = NAN },
    { .run = r2, .step = 11, .split = "train", .name = "loss", .value = INFINITY },
    { .run = r1, .step = N + 2, .epoch = 5, .split = "test", .name = "loss", .value = -1 },
  };
  g_assert_true (nl_project_add_metrics (f->p, more, 3, &error));
  gint64 last_all = g_array_index (all, NlMetricRow, all->len - 1).rowid;
  g_autoptr (GArray) tail = nl_project_get_metrics (f->p, r1, "loss", last_all, &last2, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (tail->len, ==, 2);
  g_assert_true (isnan (g_array_index (tail, NlMetricRow, 0).value));
  g_assert_cmpfloat (g_array_index (tail, NlMetricRow, 1).value, ==, -1);
  g_assert_cmpstr (g_array_index (tail, NlMetricRow, 1).split, ==, "test");
  g_assert_cmpint (last2, ==, g_array_index (tail, NlMetricRow, 1).rowid);
  g_autoptr (GArray) tail2 = nl_project_get_metrics (f->p, r2, NULL, last_all, NULL, &error);
  g_assert_cmpuint (tail2->len, ==, 1);
  g_assert_cmpfloat (g_array_index (tail2, NlMetricRow, 0).value, ==, INFINITY);

  /* Summary against the reference: the NaN is ignored by min and max, and
   * the value at the last step (N + 2, split test) is -1. */
  double mn, mx, la;
  double ref_min = INFINITY, ref_max = -INFINITY;
  for (int i = 0; i < N; i++)
    ref_min = MIN (ref_min, ref_val[i]), ref_max = MAX (ref_max, ref_val[i]);
  g_assert_true (nl_project_metric_summary (f->p, r1, "loss", "train", &mn, &mx, &la, &error));
  g_assert_no_error (error);
  g_assert_cmpfloat (mn, ==, ref_min);
  g_assert_cmpfloat (mx, ==, ref_max);
  g_assert_true (isnan (la));   /* the train loss at step N + 1 is NaN */
  g_assert_true (nl_project_metric_summary (f->p, r1, "loss", NULL, &mn, &mx, &la, &error));
  g_assert_cmpfloat (mn, ==, -1);
  g_assert_cmpfloat (la, ==, -1);
  g_assert_true (nl_project_metric_summary (f->p, r1, "accuracy", "val", &mn, &mx, &la, &error));
  g_assert_cmpfloat_with_epsilon (mn, 0.6, 1e-12);
  g_assert_cmpfloat_with_epsilon (mx, 0.8, 1e-12);
  g_assert_cmpfloat_with_epsilon (la, 0.75, 1e-12);
  g_assert_true (nl_project_metric_summary (f->p, r1, "nothing", NULL, &mn, &mx, &la, &error));
  g_assert_true (isnan (mn) && isnan (mx) && isnan (la));

  /* A batch is all or nothing: a bad split, or a missing run in the last
   * point, stores none of it. */
  guint before = all->len + 3;
  NlMetricPoint bad[2] = {
    { .run = r1, .step = 1000, .split = "train", .name = "loss", .value = 1 },
    { .run = r1, .step = 1001, .split = "training", .name = "loss", .value = 1 },
  };
  g_assert_false (nl_project_add_metrics (f->p, bad, 2, &error));
  g_assert_error (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_INVALID);
  g_clear_error (&error);
  bad[1].split = "val";
  bad[1].run = 4242;
  g_assert_false (nl_project_add_metrics (f->p, bad, 2, &error));
  g_assert_error (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_NOT_FOUND);
  g_clear_error (&error);
  g_autoptr (GArray) after = nl_project_get_metrics (f->p, 0, NULL, 0, NULL, &error);
  g_assert_cmpuint (after->len, ==, before);

  /* Rowids are never reused, even after the newest rows are deleted. */
  gint64 max_rowid = g_array_index (after, NlMetricRow, after->len - 1).rowid;
  g_assert_true (nl_project_delete_run (f->p, r2, &error));
  gint64 r3 = new_run (f->p, "c");
  NlMetricPoint p3 = { .run = r3, .step = 1, .split = "train", .name = "loss", .value = 3 };
  g_assert_true (nl_project_add_metrics (f->p, &p3, 1, &error));
  g_autoptr (GArray) fresh = nl_project_get_metrics (f->p, 0, NULL, max_rowid, NULL, &error);
  g_assert_cmpuint (fresh->len, ==, 1);
  g_assert_cmpint (g_array_index (fresh, NlMetricRow, 0).run, ==, r3);
}

/* The stored summaries against a brute-force pass over every point, with
 * steps out of order, repeated steps, NaNs and several batches. */
static void
test_metric_summary (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  gint64 runs[2] = { new_run (f->p, "a"), new_run (f->p, "b") };
  const char *names[] = { "loss", "acc", "lr" };
  const char *splits[] = { "train", "val", "test" };
  enum { N = 3000 };
  static NlMetricPoint pts[N];
  GRand *rand = g_rand_new_with_seed (11);
  for (int i = 0; i < N; i++)
    {
      double v = g_rand_double_range (rand, -5, 5);
      pts[i] = (NlMetricPoint) {
        .run = runs[g_rand_int_range (rand, 0, 2)],
        .step = g_rand_int_range (rand, 0, 400),       /* repeats and goes back */
        .split = splits[g_rand_int_range (rand, 0, 3)],
        .name = names[g_rand_int_range (rand, 0, 3)],
        .value = g_rand_int_range (rand, 0, 10) == 0 ? NAN : v,
      };
    }
  for (int i = 0; i < N;)
    {
      int n = MIN (N - i, g_rand_int_range (rand, 1, 300));
      g_assert_true (nl_project_add_metrics (f->p, pts + i, n, &error));
      g_assert_no_error (error);
      i += n;
    }
  g_rand_free (rand);

  for (int r = 0; r < 2; r++)
    {
      g_autoptr (GArray) list = nl_project_list_metric_summaries (f->p, runs[r], &error);
      g_assert_no_error (error);
      guint listed = 0;
      for (guint k = 0; k < G_N_ELEMENTS (names); k++)
        for (int sp = -1; sp < 3; sp++)
          {
            double mn = INFINITY, mx = -INFINITY, last = NAN;
            gint64 last_step = G_MININT64, count = 0;
            for (int i = 0; i < N; i++)
              {
                const NlMetricPoint *pt = &pts[i];
                if (pt->run != runs[r] || strcmp (pt->name, names[k]) != 0
                    || (sp >= 0 && strcmp (pt->split, splits[sp]) != 0))
                  continue;
                count++;
                if (!isnan (pt->value))
                  mn = MIN (mn, pt->value), mx = MAX (mx, pt->value);
                if (pt->step >= last_step)   /* later points win ties */
                  last_step = pt->step, last = pt->value;
              }
            double got_min, got_max, got_last;
            g_assert_true (nl_project_metric_summary (f->p, runs[r], names[k], sp >= 0 ? splits[sp] : NULL,
                                                      &got_min, &got_max, &got_last, &error));
            g_assert_no_error (error);
            g_assert_cmpint (count, >, 0);
            g_assert_cmpfloat (got_min, ==, mn);
            g_assert_cmpfloat (got_max, ==, mx);
            if (isnan (last))
              g_assert_true (isnan (got_last));
            else
              g_assert_cmpfloat (got_last, ==, last);
            if (sp < 0)
              continue;
            gboolean found = FALSE;
            for (guint j = 0; j < list->len; j++)
              {
                NlMetricSummary *m = &g_array_index (list, NlMetricSummary, j);
                if (m->name == g_intern_string (names[k]) && m->split == g_intern_string (splits[sp]))
                  {
                    g_assert_cmpint (m->count, ==, count);
                    g_assert_cmpint (m->last_step, ==, last_step);
                    g_assert_cmpfloat (m->min, ==, mn);
                    found = TRUE;
                  }
              }
            g_assert_true (found);
            listed++;
          }
      g_assert_cmpuint (list->len, ==, listed);
    }
  /* A run's summaries go with it. */
  g_assert_true (nl_project_delete_run (f->p, runs[0], &error));
  g_autoptr (GArray) gone = nl_project_list_metric_summaries (f->p, runs[0], &error);
  g_assert_cmpuint (gone->len, ==, 0);
}

/* ---- checkpoints ---- */

typedef struct {
  gint64 id;
  double value;
} RefCkpt;

/* The retention rule, written independently: keep the keep_last newest,
 * the best (earliest on ties) and nothing else. Returns the best id. */
static gint64
ref_retain (GArray *ref, gboolean higher, int keep_last)
{
  gint64 best = 0;
  double bv = 0;
  for (guint i = 0; i < ref->len; i++)
    {
      RefCkpt *c = &g_array_index (ref, RefCkpt, i);
      if (isnan (c->value))
        continue;
      if (!best || (higher ? c->value > bv : c->value < bv))
        best = c->id, bv = c->value;
    }
  for (guint i = ref->len; i-- > 0;)
    {
      RefCkpt *c = &g_array_index (ref, RefCkpt, i);
      if (keep_last > 0 && ref->len - i > (guint) keep_last && c->id != best)
        g_array_remove_index (ref, i);
    }
  return best;
}

static void
check_against_ref (NlProject *p, gint64 run, GArray *ref, gint64 best)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GArray) list = nl_project_list_checkpoints (p, run, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (list->len, ==, ref->len);
  for (guint i = 0; i < ref->len; i++)
    {
      NlCheckpointInfo *c = &g_array_index (list, NlCheckpointInfo, i);
      g_assert_cmpint (c->id, ==, g_array_index (ref, RefCkpt, i).id);
      g_assert_cmpint (c->is_best, ==, c->id == best);
    }
}

static void
run_retention (NlProject *p, const double *values, int n, gboolean higher, int keep_last)
{
  g_autoptr (GError) error = NULL;
  gint64 run = new_run (p, "ckpt");
  g_autoptr (GArray) ref = g_array_new (FALSE, FALSE, sizeof (RefCkpt));
  for (int i = 0; i < n; i++)
    {
      guint8 blob[64];
      memset (blob, i, sizeof blob);
      gint64 id = nl_project_add_checkpoint (p, run, i + 1, (i + 1) * 100, blob, sizeof blob, "m", values[i],
                                             higher, keep_last, &error);
      g_assert_no_error (error);
      RefCkpt c = { id, values[i] };
      g_array_append_val (ref, c);
      gint64 best = ref_retain (ref, higher, keep_last);
      check_against_ref (p, run, ref, best);
    }
}

static void
test_checkpoints (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  const double acc[] = { 0.5, 0.7, 0.6, 0.65, 0.55, 0.7, 0.72, 0.1 };
  run_retention (f->p, acc, G_N_ELEMENTS (acc), TRUE, 2);
  const double loss[] = { 3, 2, 2, 2.5, NAN, 1, 1, 4, 5 };
  run_retention (f->p, loss, G_N_ELEMENTS (loss), FALSE, 3);
  run_retention (f->p, loss, G_N_ELEMENTS (loss), FALSE, 0);
  run_retention (f->p, loss, G_N_ELEMENTS (loss), TRUE, 1);

  /* Blob round trip, find, and a fork's checkpoint surviving pruning. */
  gint64 run = new_run (f->p, "blobs");
  gsize size = 3 * 1024 * 1024 + 17;
  g_autofree guint8 *blob = g_malloc (size);
  for (gsize i = 0; i < size; i++)
    blob[i] = (guint8) (i * 2654435761u >> 13);
  gint64 c1 = nl_project_add_checkpoint (f->p, run, 1, 100, blob, size, "acc", 0.9, TRUE, 1, &error);
  g_assert_no_error (error);
  gint64 run_back = 0, step = 0;
  int epoch = 0;
  g_autoptr (GBytes) got = nl_project_load_checkpoint (f->p, c1, &run_back, &epoch, &step, &error);
  g_assert_no_error (error);
  g_assert_cmpmem (g_bytes_get_data (got, NULL), g_bytes_get_size (got), blob, size);
  g_assert_cmpint (run_back, ==, run);
  g_assert_cmpint (epoch, ==, 1);
  g_assert_cmpint (step, ==, 100);

  gint64 c2 = nl_project_add_checkpoint (f->p, run, 2, 200, blob, 10, "acc", 0.5, TRUE, 1, &error);
  NlRunInfo fork = { .network_json = (char *) net_json, .parent_run = run, .parent_checkpoint = c2 };
  nl_project_create_run (f->p, &fork, &error);
  g_assert_no_error (error);
  gint64 c3 = nl_project_add_checkpoint (f->p, run, 3, 300, blob, 0, "acc", 0.4, TRUE, 1, &error);
  g_assert_no_error (error);
  gint64 c4 = nl_project_add_checkpoint (f->p, run, 3, 350, blob, 5, NULL, 0, TRUE, 1, &error);
  g_assert_no_error (error);
  /* c1 best, c2 forked from, c4 newest; c3 pruned; metric NULL kept c1 best. */
  g_autoptr (GArray) list = nl_project_list_checkpoints (f->p, run, &error);
  g_assert_cmpuint (list->len, ==, 3);
  g_assert_cmpint (g_array_index (list, NlCheckpointInfo, 0).id, ==, c1);
  g_assert_true (g_array_index (list, NlCheckpointInfo, 0).is_best);
  g_assert_cmpint (g_array_index (list, NlCheckpointInfo, 0).size, ==, (gint64) size);
  g_assert_cmpstr (g_array_index (list, NlCheckpointInfo, 0).metric_name, ==, "acc");
  g_assert_cmpfloat (g_array_index (list, NlCheckpointInfo, 0).metric_value, ==, 0.9);
  g_assert_cmpint (g_array_index (list, NlCheckpointInfo, 1).id, ==, c2);
  g_assert_cmpint (g_array_index (list, NlCheckpointInfo, 2).id, ==, c4);
  g_assert_null (g_array_index (list, NlCheckpointInfo, 2).metric_name);
  g_assert_true (isnan (g_array_index (list, NlCheckpointInfo, 2).metric_value));
  g_assert_null (nl_project_load_checkpoint (f->p, c3, NULL, NULL, NULL, &error));
  g_assert_error (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_NOT_FOUND);
  g_clear_error (&error);

  g_assert_cmpint (nl_project_find_checkpoint (f->p, run, "best", &error), ==, c1);
  g_assert_cmpint (nl_project_find_checkpoint (f->p, run, "last", &error), ==, c4);
  g_assert_cmpint (nl_project_find_checkpoint (f->p, run, "2", &error), ==, c2);
  g_assert_cmpint (nl_project_find_checkpoint (f->p, run, "3", &error), ==, c4);
  g_assert_no_error (error);
  g_assert_cmpint (nl_project_find_checkpoint (f->p, run, "9", &error), ==, 0);
  g_assert_error (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_NOT_FOUND);
  g_clear_error (&error);
  g_assert_cmpint (nl_project_find_checkpoint (f->p, run, "newest", &error), ==, 0);
  g_assert_error (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_INVALID);
  g_clear_error (&error);
  gint64 empty_run = new_run (f->p, "empty");
  g_assert_cmpint (nl_project_find_checkpoint (f->p, empty_run, "best", &error), ==, 0);
  g_assert_error (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_NOT_FOUND);
  g_clear_error (&error);
  g_assert_cmpint (nl_project_add_checkpoint (f->p, 999, 1, 1, blob, 4, NULL, 0, TRUE, 0, &error), ==, 0);
  g_assert_error (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_NOT_FOUND);
  g_clear_error (&error);

  /* An empty blob is a valid (0-byte) checkpoint. */
  gint64 c5 = nl_project_add_checkpoint (f->p, empty_run, 1, 1, NULL, 0, NULL, 0, TRUE, 0, &error);
  g_assert_no_error (error);
  g_autoptr (GBytes) empty = nl_project_load_checkpoint (f->p, c5, NULL, NULL, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (g_bytes_get_size (empty), ==, 0);

  /* the run's epoch count comes with its checkpoint (never lowered) */
  g_autoptr (NlRunInfo) counted = nl_project_get_run (f->p, run, &error);
  g_assert_cmpint (counted->epochs_done, ==, 3);
  g_assert_cmpint (nl_project_add_checkpoint (f->p, empty_run, 2, 2, NULL, 0, NULL, 0, TRUE, 0, &error), >, 0);
  g_assert_cmpint (nl_project_add_checkpoint (f->p, empty_run, 1, 3, NULL, 0, NULL, 0, TRUE, 0, &error), >, 0);
  g_autoptr (NlRunInfo) counted2 = nl_project_get_run (f->p, empty_run, &error);
  g_assert_no_error (error);
  g_assert_cmpint (counted2->epochs_done, ==, 2);

  g_assert_true (nl_project_delete_checkpoint (f->p, c2, &error));
  g_autoptr (NlRunInfo) forked = nl_project_get_run (f->p, run + 1, &error);
  g_assert_cmpint (forked->parent_checkpoint, ==, 0);
  g_assert_true (nl_project_check (f->p, &error));
  g_assert_no_error (error);
}

/* ---- cascade ---- */

static gint64
count_rows (const char *path, const char *table, gint64 run)
{
  g_autofree char *sql = g_strdup_printf ("SELECT count (*) FROM %s WHERE run = %" G_GINT64_FORMAT, table, run);
  return file_int (path, sql);
}

static void
test_cascade (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  const char *tables[] = { "metrics", "checkpoints", "tags", "notes" };
  gint64 runs[2];
  gint64 ck = 0;
  for (int k = 0; k < 2; k++)
    {
      runs[k] = new_run (f->p, k ? "keep" : "delete");
      NlMetricPoint pts[5];
      for (int i = 0; i < 5; i++)
        pts[i] = (NlMetricPoint) { .run = runs[k], .step = i, .split = "train", .name = "loss", .value = i };
      g_assert_true (nl_project_add_metrics (f->p, pts, 5, &error));
      ck = nl_project_add_checkpoint (f->p, runs[k], 1, 5, "abc", 3, "loss", 1, FALSE, 0, &error);
      g_assert_true (nl_project_add_tag (f->p, runs[k], "t", &error));
      g_assert_cmpint (nl_project_add_note (f->p, runs[k], "n", &error), >, 0);
      g_assert_no_error (error);
      if (k == 0)
        {
          /* The second run is forked from the first's checkpoint. */
          for (guint t = 0; t < G_N_ELEMENTS (tables); t++)
            g_assert_cmpint (count_rows (f->path, tables[t], runs[0]), >, 0);
          NlRunInfo fork = { .network_json = (char *) net_json, .parent_run = runs[0], .parent_checkpoint = ck };
          g_assert_cmpint (nl_project_create_run (f->p, &fork, &error), >, 0);
        }
    }
  g_assert_true (nl_project_delete_run (f->p, runs[0], &error));
  g_assert_no_error (error);
  for (guint t = 0; t < G_N_ELEMENTS (tables); t++)
    {
      g_assert_cmpint (count_rows (f->path, tables[t], runs[0]), ==, 0);
      g_assert_cmpint (count_rows (f->path, tables[t], runs[1]), >, 0);
    }
  g_autoptr (NlRunInfo) fork = nl_project_get_run (f->p, runs[0] + 1, &error);
  g_assert_no_error (error);
  g_assert_cmpint (fork->parent_run, ==, 0);
  g_assert_cmpint (fork->parent_checkpoint, ==, 0);
  g_assert_cmpstr (fork->network_json, ==, net_json);
  g_assert_false (nl_project_delete_run (f->p, runs[0], &error));
  g_assert_error (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_NOT_FOUND);
  g_clear_error (&error);
  g_assert_true (nl_project_check (f->p, &error));
}

/* ---- sample project ---- */

static void
test_sample (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *dir = make_tmp_dir ();
  g_autofree char *path = g_build_filename (dir, "sample.netloom", NULL);
  g_assert_true (nl_project_create_sample (path, &error));
  g_assert_no_error (error);
  g_autoptr (NlProject) p = nl_project_open (path, FALSE, &error);
  g_assert_no_error (error);
  g_autoptr (GPtrArray) nets = nl_project_list_networks (p, &error);
  g_assert_cmpuint (nets->len, ==, 3);
  const char *names[] = { "lenet", "mlp", "resnet-small" };
  for (guint i = 0; i < 3; i++)
    {
      NlNetworkInfo *n = nets->pdata[i];
      g_assert_cmpstr (n->name, ==, names[i]);
      g_autofree char *json = nl_project_load_network (p, n->name, 0, &error);
      g_assert_no_error (error);
      g_autoptr (JsonParser) parser = json_parser_new ();
      g_assert_true (json_parser_load_from_data (parser, json, -1, &error));
      g_assert_no_error (error);
      JsonObject *o = json_node_get_object (json_parser_get_root (parser));
      g_assert_cmpstr (json_object_get_string_member (o, "format"), ==, "netloom.network");
      g_assert_cmpstr (json_object_get_string_member (o, "name"), ==, names[i]);
      g_assert_cmpuint (json_array_get_length (json_object_get_array_member (o, "nodes")), >, 2);
    }
  g_autoptr (NlPipelineInfo) pl = nl_project_load_pipeline (p, "fashion-mnist", &error);
  g_assert_no_error (error);
  g_assert_cmpstr (pl->dataset_spec, ==, "fashion-mnist");
  g_assert_cmpint (pl->batch_size, >, 0);
  g_assert_true (nl_project_check (p, &error));
  g_clear_pointer (&p, nl_project_close);

  /* Never overwrites. */
  g_autofree char *sum = file_sha256 (path);
  g_assert_false (nl_project_create_sample (path, &error));
  g_assert_error (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_EXISTS);
  g_autofree char *sum2 = file_sha256 (path);
  g_assert_cmpstr (sum, ==, sum2);
  rm_rf (dir);
}

/* ---- refusing files ---- */

/* Opening PATH fails with CODE and MESSAGE, with and without create, and
 * leaves the file byte-identical. */
static void
assert_refused (const char *path, int code, const char *message)
{
  g_autofree char *before = file_sha256 (path);
  for (int create = 0; create < 2; create++)
    {
      g_autoptr (GError) error = NULL;
      g_assert_null (nl_project_open (path, create, &error));
      g_assert_error (error, NL_PROJECT_ERROR, code);
      if (!strstr (error->message, message))
        g_error ("“%s” does not contain “%s”", error->message, message);
    }
  g_autofree char *after = file_sha256 (path);
  g_assert_cmpstr (before, ==, after);
}

static void
test_refuse (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *dir = make_tmp_dir ();

  /* A project from a future netloom. */
  g_autofree char *newer = g_build_filename (dir, "newer.netloom", NULL);
  NlProject *p = nl_project_open (newer, TRUE, &error);
  g_assert_no_error (error);
  nl_project_save_network (p, "x", net_json, &error);
  nl_project_close (p);
  sqlite3 *db = raw_open (newer);
  raw_exec (db, "PRAGMA user_version = 7; CREATE TABLE future (x)");
  sqlite3_close (db);
  G_STATIC_ASSERT (NL_PROJECT_SCHEMA_VERSION == 6);
  g_autofree char *expect = g_strdup_printf ("%s was written by a newer netloom (schema 7, this one reads up to 6)",
                                             newer);
  assert_refused (newer, NL_PROJECT_ERROR_NEWER, expect);

  /* A negative schema version (found by fuzz-project: it indexed the
     migrations before the first one). */
  for (int v = -1; v >= -33022; v -= 33021)
    {
      db = raw_open (newer);
      g_autofree char *pragma = g_strdup_printf ("PRAGMA user_version = %d", v);
      raw_exec (db, pragma);
      sqlite3_close (db);
      g_autofree char *damaged = g_strdup_printf ("%s is damaged: its schema version is %d", newer, v);
      assert_refused (newer, NL_PROJECT_ERROR_CORRUPT, damaged);
    }

  /* Another program's SQLite file, in rollback and in WAL mode. */
  for (int wal = 0; wal < 2; wal++)
    {
      g_autofree char *foreign = g_build_filename (dir, wal ? "foreign-wal.db" : "foreign.db", NULL);
      g_assert_cmpint (sqlite3_open (foreign, &db), ==, SQLITE_OK);
      raw_exec (db, wal ? "PRAGMA journal_mode = WAL; PRAGMA application_id = 42;"
                          " CREATE TABLE runs (id); INSERT INTO runs VALUES (1)"
                        : "CREATE TABLE notes (a, b); INSERT INTO notes VALUES (1, 2)");
      sqlite3_close (db);
      g_autofree char *msg = g_strdup_printf ("%s is not a netloom project", foreign);
      assert_refused (foreign, NL_PROJECT_ERROR_NOT_PROJECT, msg);
    }

  /* Not SQLite at all: text, and binary noise longer than a header. */
  g_autofree char *text = g_build_filename (dir, "notes.txt", NULL);
  g_assert_true (g_file_set_contents (text, "this is not a database, just some text\n", -1, &error));
  g_autofree char *msg = g_strdup_printf ("%s is not a netloom project", text);
  assert_refused (text, NL_PROJECT_ERROR_NOT_PROJECT, msg);
  g_autofree char *noise = g_build_filename (dir, "noise.bin", NULL);
  guint8 bytes[8192];
  GRand *rand = g_rand_new_with_seed (7);
  for (guint i = 0; i < sizeof bytes; i++)
    bytes[i] = (guint8) g_rand_int (rand);
  g_rand_free (rand);
  g_assert_true (g_file_set_contents (noise, (const char *) bytes, sizeof bytes, &error));
  assert_refused (noise, NL_PROJECT_ERROR_NOT_PROJECT, "is not a netloom project");

  /* An empty file is a new project only when asked to create one. */
  g_autofree char *empty = g_build_filename (dir, "empty.netloom", NULL);
  g_assert_true (g_file_set_contents (empty, "", 0, &error));
  g_assert_null (nl_project_open (empty, FALSE, &error));
  g_assert_error (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_NOT_PROJECT);
  g_clear_error (&error);
  p = nl_project_open (empty, TRUE, &error);
  g_assert_no_error (error);
  g_assert_cmpint (nl_project_schema_version (p), ==, NL_PROJECT_SCHEMA_VERSION);
  nl_project_close (p);
  rm_rf (dir);
}

/* ---- stale runs ---- */

static gint64
dead_pid (void)
{
  pid_t pid = fork ();
  if (pid == 0)
    _exit (0);
  g_assert_cmpint (pid, >, 0);
  int status;
  g_assert_cmpint (waitpid (pid, &status, 0), ==, pid);
  return pid;
}

static void
test_stale_runs (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  gint64 dead = dead_pid ();
  NlRunInfo here = { .network_json = (char *) net_json, .status = (char *) "running", .pid = dead };
  NlRunInfo paused = { .network_json = (char *) net_json, .status = (char *) "paused", .pid = dead };
  NlRunInfo other = { .network_json = (char *) net_json, .status = (char *) "running", .pid = dead,
                      .host = (char *) "some-other-host.example" };
  NlRunInfo alive = { .network_json = (char *) net_json, .status = (char *) "running" };
  NlRunInfo done = { .network_json = (char *) net_json, .status = (char *) "finished", .pid = dead };
  /* the heartbeat decides for any host: silent for longer than
   * NL_PROJECT_STALE_BEATS intervals is gone, a fresh one is alive */
  double now = g_get_real_time () / 1e6, limit = NL_PROJECT_STALE_BEATS * nl_project_heartbeat_interval ();
  NlRunInfo silent = { .network_json = (char *) net_json, .status = (char *) "running", .pid = 1,
                       .host = (char *) "some-other-host.example", .heartbeat = now - limit - 2 };
  NlRunInfo beating = { .network_json = (char *) net_json, .status = (char *) "paused", .pid = 1,
                        .host = (char *) "some-other-host.example", .heartbeat = now - limit / 2 };
  gint64 r_silent = nl_project_create_run (f->p, &silent, &error);
  gint64 r_beating = nl_project_create_run (f->p, &beating, &error);
  gint64 r_here = nl_project_create_run (f->p, &here, &error);
  gint64 r_paused = nl_project_create_run (f->p, &paused, &error);
  gint64 r_other = nl_project_create_run (f->p, &other, &error);
  gint64 r_alive = nl_project_create_run (f->p, &alive, &error);
  gint64 r_done = nl_project_create_run (f->p, &done, &error);
  g_assert_no_error (error);
  g_autoptr (NlRunInfo) before = nl_project_get_run (f->p, r_done, &error);
  nl_project_close (f->p);

  double t0 = g_get_real_time () / 1e6;
  f->p = nl_project_open (f->path, FALSE, &error);
  g_assert_no_error (error);
  struct { gint64 id; const char *status; } expect[] = {
    { r_here, "interrupted" }, { r_paused, "interrupted" }, { r_other, "running" },
    { r_alive, "running" }, { r_done, "finished" },
  };
  for (guint i = 0; i < G_N_ELEMENTS (expect); i++)
    {
      g_autoptr (NlRunInfo) r = nl_project_get_run (f->p, expect[i].id, &error);
      g_assert_no_error (error);
      g_assert_cmpstr (r->status, ==, expect[i].status);
      if (i < 2)
        {
          g_assert_cmpfloat (r->finished, >=, t0 - 0.01);
          g_assert_nonnull (strstr (r->error, "ended while the run was"));
        }
    }
  g_autoptr (NlRunInfo) r_s = nl_project_get_run (f->p, r_silent, &error);
  g_autoptr (NlRunInfo) r_b = nl_project_get_run (f->p, r_beating, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (r_s->status, ==, "interrupted");
  g_assert_nonnull (strstr (r_s->error, "the trainer ended while the run was running (no heartbeat for "));
  g_assert_cmpstr (r_b->status, ==, "paused");
  /* a beat keeps it alive; 'running' beats too */
  g_assert_true (nl_project_heartbeat (f->p, r_beating, &error));
  g_autoptr (NlRunInfo) r_b2 = nl_project_get_run (f->p, r_beating, &error);
  g_assert_cmpfloat (r_b2->heartbeat, >, r_b->heartbeat);
  g_assert_false (nl_project_heartbeat (f->p, 9999, &error));
  g_assert_error (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_NOT_FOUND);
  g_clear_error (&error);
  g_autoptr (NlRunInfo) after = nl_project_get_run (f->p, r_done, &error);
  g_assert_cmpfloat (after->finished, ==, before->finished);
}

/* ---- checkpoints by time ---- */

/* A run has at most one interval checkpoint: the newest replaces the one
 * before in its transaction, an epoch checkpoint ends it, keep_last and
 * "best" and epoch numbers never count it, "last" finds it; one forked
 * from survives. */
static void
test_interval_checkpoints (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  gint64 run = new_run (f->p, "by time"), other = new_run (f->p, "other");
  const char blob[] = "weights";
  gint64 e1 = nl_project_add_checkpoint (f->p, run, 1, 10, blob, sizeof blob, "acc", 0.9, TRUE, 1, &error);
  gint64 i1 = nl_project_add_interval_checkpoint (f->p, run, 1, 13, blob, sizeof blob, &error);
  gint64 o1 = nl_project_add_interval_checkpoint (f->p, other, 0, 3, blob, sizeof blob, &error);
  gint64 i2 = nl_project_add_interval_checkpoint (f->p, run, 1, 17, blob, sizeof blob, &error);
  g_assert_no_error (error);
  g_assert_cmpint (i2, >, i1);
  g_autoptr (GArray) list = nl_project_list_checkpoints (f->p, run, &error);
  g_assert_cmpuint (list->len, ==, 2);
  g_assert_cmpint (g_array_index (list, NlCheckpointInfo, 0).id, ==, e1);
  g_assert_false (g_array_index (list, NlCheckpointInfo, 0).is_interval);
  g_assert_cmpint (g_array_index (list, NlCheckpointInfo, 1).id, ==, i2);
  g_assert_true (g_array_index (list, NlCheckpointInfo, 1).is_interval);
  g_assert_false (g_array_index (list, NlCheckpointInfo, 1).is_best);
  g_assert_cmpint (nl_project_find_checkpoint (f->p, run, "last", &error), ==, i2);
  g_assert_cmpint (nl_project_find_checkpoint (f->p, run, "1", &error), ==, e1);
  g_assert_cmpint (nl_project_find_checkpoint (f->p, run, "best", &error), ==, e1);
  g_assert_no_error (error);
  /* the other run's is its own */
  g_assert_cmpint (nl_project_find_checkpoint (f->p, other, "last", &error), ==, o1);

  /* keep_last 1 keeps the newest epoch checkpoint, not the interval one */
  gint64 i3 = nl_project_add_interval_checkpoint (f->p, run, 1, 19, blob, sizeof blob, &error);
  NlRunInfo fork = { .network_json = (char *) net_json, .parent_run = run, .parent_checkpoint = i3 };
  nl_project_create_run (f->p, &fork, &error);
  gint64 e2 = nl_project_add_checkpoint (f->p, run, 2, 20, blob, sizeof blob, "acc", 0.5, TRUE, 1, &error);
  g_assert_no_error (error);
  g_autoptr (GArray) after = nl_project_list_checkpoints (f->p, run, &error);
  /* e1 best, i3 forked from (now an ordinary one), e2 newest */
  g_assert_cmpuint (after->len, ==, 3);
  g_assert_cmpint (g_array_index (after, NlCheckpointInfo, 1).id, ==, i3);
  g_assert_false (g_array_index (after, NlCheckpointInfo, 1).is_interval);
  g_assert_cmpint (g_array_index (after, NlCheckpointInfo, 2).id, ==, e2);
  g_assert_cmpint (file_int (f->path, "SELECT count (interval_checkpoint) FROM runs"), ==, 1);  /* other's */
  gint64 i4 = nl_project_add_interval_checkpoint (f->p, run, 2, 23, blob, sizeof blob, &error);
  gint64 e3 = nl_project_add_checkpoint (f->p, run, 3, 30, blob, sizeof blob, "acc", 0.6, TRUE, 1, &error);
  g_assert_no_error (error);
  g_autoptr (GArray) last = nl_project_list_checkpoints (f->p, run, &error);
  for (guint i = 0; i < last->len; i++)
    g_assert_cmpint (g_array_index (last, NlCheckpointInfo, i).id, !=, i4);
  g_assert_cmpint (g_array_index (last, NlCheckpointInfo, last->len - 1).id, ==, e3);
  g_assert_true (nl_project_check (f->p, &error));

  /* a failed insert (no such run) leaves the old one */
  g_assert_cmpint (nl_project_add_interval_checkpoint (f->p, 9999, 0, 1, blob, sizeof blob, &error), ==, 0);
  g_assert_error (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_NOT_FOUND);
  g_clear_error (&error);
  g_assert_cmpint (nl_project_find_checkpoint (f->p, other, "last", &error), ==, o1);
}

/* A resume drops the points it trains again; the summaries follow. */
static void
test_truncate_metrics (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  gint64 run = new_run (f->p, "resumed"), other = new_run (f->p, "other");
  NlMetricPoint pts[] = {
    { run, 1, 1, "train", "loss", 3 }, { run, 2, 1, "train", "loss", 1 }, { run, 3, 1, "train", "loss", 2 },
    { run, 4, 1, "train", "loss", 0.5 }, { other, 4, 1, "train", "loss", 7 },
  };
  double mn, mx, la;
  g_assert_true (nl_project_add_metrics (f->p, pts, G_N_ELEMENTS (pts), &error));
  g_assert_true (nl_project_truncate_metrics (f->p, run, 2, &error));
  g_assert_no_error (error);
  g_autoptr (GArray) rows = nl_project_get_metrics (f->p, run, NULL, 0, NULL, &error);
  g_assert_cmpuint (rows->len, ==, 2);
  g_assert_true (nl_project_metric_summary (f->p, run, "loss", "train", &mn, &mx, &la, &error));
  g_assert_cmpfloat (mn, ==, 1);
  g_assert_cmpfloat (mx, ==, 3);
  g_assert_cmpfloat (la, ==, 1);
  g_assert_true (nl_project_metric_summary (f->p, other, "loss", "train", &mn, NULL, &la, &error));
  g_assert_cmpfloat (la, ==, 7);
  g_assert_true (nl_project_truncate_metrics (f->p, run, 0, &error));
  g_autoptr (GArray) sums = nl_project_list_metric_summaries (f->p, run, &error);
  g_assert_cmpuint (sums->len, ==, 0);
  g_assert_no_error (error);
}

/* The metric writer's thread beats a run's heartbeat, with no points to
 * write and while training waits. */
static void
test_writer_heartbeat (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  NlRunInfo info = { .network_json = (char *) net_json, .status = (char *) "running" };
  gint64 run = nl_project_create_run (f->p, &info, &error);
  g_autoptr (NlRunInfo) before = nl_project_get_run (f->p, run, &error);
  g_assert_no_error (error);
  g_assert_cmpfloat (before->heartbeat, >, 0);
  g_setenv ("NETLOOM_HEARTBEAT_INTERVAL", "0.05", TRUE);
  NlMetricWriter *w = nl_metric_writer_new (f->p, 1000, 0);
  nl_metric_writer_set_heartbeat (w, run);
  /* until the thread has beaten (every 0.05 s; the bound of 60 s only
   * keeps a broken writer from hanging the test, however loaded the machine) */
  NlRunInfo *during = NULL;
  for (int i = 0; i < 6000; i++)
    {
      g_clear_pointer (&during, nl_run_info_free);
      during = nl_project_get_run (f->p, run, &error);
      g_assert_no_error (error);
      if (during->heartbeat > before->heartbeat)
        break;
      g_usleep (10000);
    }
  g_assert_cmpfloat (during->heartbeat, >, before->heartbeat);
  nl_run_info_free (during);
  nl_metric_writer_set_heartbeat (w, 0);
  g_assert_true (nl_metric_writer_free (w, &error));
  g_unsetenv ("NETLOOM_HEARTBEAT_INTERVAL");
  g_assert_cmpfloat (nl_project_heartbeat_interval (), ==, 5);
}

/* ---- migration from schema 2 ---- */

static char *schema_summary (const char *path);
static char *dump_db (const char *path);

/* A schema-2 project (runs without heartbeat and interval_checkpoint,
 * which schema 3 appends) migrates after a backup: rows kept, the new
 * columns empty, the schema that of a new project; its run of a process
 * gone is interrupted by host and pid as before, and a running run of
 * another host stays running (it has no heartbeat to age). */
static void
test_migrate_v2 (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *dir = make_tmp_dir ();
  g_autofree char *path = g_build_filename (dir, "v2.netloom", NULL);
  g_autofree char *fresh_path = g_build_filename (dir, "fresh.netloom", NULL);
  NlProject *p = nl_project_open (path, TRUE, &error);
  g_assert_no_error (error);
  NlRunInfo gone = { .name = (char *) "gone", .network_json = (char *) net_json, .status = (char *) "running",
                     .pid = dead_pid () };
  NlRunInfo away = { .name = (char *) "away", .network_json = (char *) net_json, .status = (char *) "running",
                     .pid = 1, .host = (char *) "some-other-host.example" };
  gint64 r_gone = nl_project_create_run (p, &gone, &error), r_away = nl_project_create_run (p, &away, &error);
  g_assert_cmpint (nl_project_add_checkpoint (p, r_gone, 1, 10, "abc", 3, "acc", 0.5, TRUE, 3, &error), >, 0);
  g_assert_no_error (error);
  nl_project_close (p);
  sqlite3 *db = raw_open (path);
  raw_exec (db, "DROP TABLE run_vocabs; DROP TABLE layer_histograms; DROP TABLE int8_models;" /* 6, 5, 4's */
                " ALTER TABLE runs DROP COLUMN interval_checkpoint; ALTER TABLE runs DROP COLUMN heartbeat;"
                " PRAGMA user_version = 2");
  sqlite3_close (db);
  g_autofree char *before = dump_db (path);

  p = nl_project_open (path, FALSE, &error);
  g_assert_no_error (error);
  g_assert_cmpint (nl_project_schema_version (p), ==, NL_PROJECT_SCHEMA_VERSION);
  g_assert_true (nl_project_check (p, &error));
  g_autoptr (NlRunInfo) rg = nl_project_get_run (p, r_gone, &error);
  g_autoptr (NlRunInfo) ra = nl_project_get_run (p, r_away, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (rg->status, ==, "interrupted");
  g_assert_nonnull (strstr (rg->error, "ended while the run was running"));
  g_assert_cmpstr (ra->status, ==, "running");
  g_assert_cmpfloat (ra->heartbeat, ==, 0);
  g_assert_cmpint (nl_project_find_checkpoint (p, r_gone, "last", &error), >, 0);
  /* schema 3 works on it */
  g_assert_cmpint (nl_project_add_interval_checkpoint (p, r_gone, 1, 12, "abcd", 4, &error), >, 0);
  g_assert_true (nl_project_heartbeat (p, r_away, &error));
  g_assert_no_error (error);
  nl_project_close (p);

  p = nl_project_open (fresh_path, TRUE, &error);
  g_assert_no_error (error);
  nl_project_close (p);
  g_autofree char *s_migrated = schema_summary (path);
  g_autofree char *s_fresh = schema_summary (fresh_path);
  g_assert_cmpstr (s_migrated, ==, s_fresh);
  g_autofree char *bak = g_strdup_printf ("%s.bak-v2", path);
  g_autofree char *bak_dump = dump_db (bak);
  g_assert_cmpstr (bak_dump, ==, before);
  rm_rf (dir);
}

/* ---- migration from schema 0 ---- */

static int
compare_strings (gconstpointer a, gconstpointer b)
{
  return strcmp (*(char *const *) a, *(char *const *) b);
}

/* "table.column type notnull default pk" lines and "index: columns" lines, sorted. */
static char *
schema_summary (const char *path)
{
  sqlite3 *db = raw_open (path);
  g_autoptr (GPtrArray) lines = g_ptr_array_new_with_free_func (g_free);
  sqlite3_stmt *st = NULL;
  g_assert_cmpint (sqlite3_prepare_v2 (db,
    "SELECT m.name, c.name, c.type, c.\"notnull\", coalesce (c.dflt_value, '-'), c.pk"
    " FROM sqlite_master m, pragma_table_info (m.name) c WHERE m.type = 'table'"
    " UNION ALL SELECT m.name, group_concat (i.name), 'index', m.tbl_name, '', ''"
    " FROM sqlite_master m, pragma_index_info (m.name) i WHERE m.type = 'index' GROUP BY m.name",
    -1, &st, NULL), ==, SQLITE_OK);
  while (sqlite3_step (st) == SQLITE_ROW)
    g_ptr_array_add (lines, g_strdup_printf ("%s.%s %s %s %s %s", sqlite3_column_text (st, 0),
                                             sqlite3_column_text (st, 1), sqlite3_column_text (st, 2),
                                             sqlite3_column_text (st, 3), sqlite3_column_text (st, 4),
                                             sqlite3_column_text (st, 5)));
  sqlite3_finalize (st);
  sqlite3_close (db);
  g_ptr_array_sort (lines, compare_strings);
  g_ptr_array_add (lines, NULL);
  return g_strjoinv ("\n", (char **) lines->pdata);
}

/* Every object's SQL and every row, as text. */
static char *
dump_db (const char *path)
{
  sqlite3 *db = raw_open (path);
  GString *out = g_string_new (NULL);
  sqlite3_stmt *tables = NULL;
  g_assert_cmpint (sqlite3_prepare_v2 (db, "SELECT type, name, sql FROM sqlite_master ORDER BY name",
                                       -1, &tables, NULL), ==, SQLITE_OK);
  while (sqlite3_step (tables) == SQLITE_ROW)
    {
      const char *type = (const char *) sqlite3_column_text (tables, 0);
      const char *name = (const char *) sqlite3_column_text (tables, 1);
      g_string_append_printf (out, "%s\n", sqlite3_column_text (tables, 2));
      if (strcmp (type, "table") != 0)
        continue;
      g_autofree char *sql = g_strdup_printf ("SELECT * FROM \"%s\" ORDER BY rowid", name);
      /* WITHOUT ROWID tables (metric_summaries) by their key */
      g_autofree char *by_key = g_strdup_printf ("SELECT * FROM \"%s\" ORDER BY 1, 2, 3", name);
      sqlite3_stmt *st = NULL;
      if (sqlite3_prepare_v2 (db, sql, -1, &st, NULL) != SQLITE_OK)
        g_assert_cmpint (sqlite3_prepare_v2 (db, by_key, -1, &st, NULL), ==, SQLITE_OK);
      while (sqlite3_step (st) == SQLITE_ROW)
        {
          for (int c = 0; c < sqlite3_column_count (st); c++)
            {
              if (sqlite3_column_type (st, c) == SQLITE_BLOB)
                for (int i = 0; i < sqlite3_column_bytes (st, c); i++)
                  g_string_append_printf (out, "%02x", ((const guint8 *) sqlite3_column_blob (st, c))[i]);
              else
                g_string_append (out, sqlite3_column_text (st, c) ? (const char *) sqlite3_column_text (st, c)
                                                                  : "NULL");
              g_string_append_c (out, '|');
            }
          g_string_append_c (out, '\n');
        }
      sqlite3_finalize (st);
    }
  sqlite3_finalize (tables);
  g_string_append_printf (out, "version %" G_GINT64_FORMAT " app %" G_GINT64_FORMAT "\n",
                          raw_int (db, "PRAGMA user_version"), raw_int (db, "PRAGMA application_id"));
  sqlite3_close (db);
  return g_string_free (out, FALSE);
}

static void
test_migrate (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *dir = make_tmp_dir ();
  g_autofree char *path = g_build_filename (dir, "old.netloom", NULL);
  g_autofree char *sql = NULL;
  g_assert_true (g_file_get_contents (NL_TEST_FIXTURES_DIR "/project-v0.sql", &sql, NULL, &error));
  sqlite3 *db = NULL;
  g_assert_cmpint (sqlite3_open (path, &db), ==, SQLITE_OK);
  raw_exec (db, sql);
  sqlite3_close (db);
  g_autofree char *before = dump_db (path);

  NlProject *p = nl_project_open (path, FALSE, &error);
  g_assert_no_error (error);
  g_assert_cmpint (nl_project_schema_version (p), ==, NL_PROJECT_SCHEMA_VERSION);
  nl_project_check (p, &error);
  g_assert_no_error (error);

  /* The rows survived, and the new columns have their defaults. */
  g_autoptr (GPtrArray) nets = nl_project_list_network_versions (p, "tiny", &error);
  g_assert_cmpuint (nets->len, ==, 2);
  g_autoptr (NlPipelineInfo) pl = nl_project_load_pipeline (p, "digits", &error);
  g_assert_no_error (error);
  g_assert_cmpint (pl->batch_size, ==, 64);
  g_autoptr (NlRunInfo) r = nl_project_get_run (p, 1, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (r->name, ==, "old run");
  g_assert_cmpstr (r->status, ==, "finished");
  g_assert_cmpint (r->seed, ==, 42);
  g_assert_null (r->device);
  g_assert_cmpint (r->epochs_done, ==, 0);
  g_autoptr (GArray) m = nl_project_get_metrics (p, 1, NULL, 0, NULL, &error);
  g_assert_cmpuint (m->len, ==, 3);
  g_assert_cmpfloat (g_array_index (m, NlMetricRow, 1).value, ==, 1.5);
  g_autoptr (GArray) cks = nl_project_list_checkpoints (p, 1, &error);
  g_assert_cmpuint (cks->len, ==, 1);
  g_assert_cmpint (g_array_index (cks, NlCheckpointInfo, 0).size, ==, 10);
  g_assert_true (g_array_index (cks, NlCheckpointInfo, 0).is_best);
  g_autoptr (GBytes) blob = nl_project_load_checkpoint (p, 1, NULL, NULL, NULL, &error);
  g_assert_cmpmem (g_bytes_get_data (blob, NULL), 10, "\x00\x11\x22\x33\x44\x55\x66\x77\x88\x99", 10);
  g_auto (GStrv) tags = nl_project_list_tags (p, 1, &error);
  g_assert_cmpstr (tags[0], ==, "baseline");
  /* Summaries were built from the old metrics. */
  double mn, mx, la;
  g_assert_true (nl_project_metric_summary (p, 1, "loss", "train", &mn, &mx, &la, &error));
  g_assert_cmpfloat (mn, ==, 1.5);
  g_assert_cmpfloat (mx, ==, 2.5);
  g_assert_cmpfloat (la, ==, 1.5);
  g_autoptr (GArray) sums = nl_project_list_metric_summaries (p, 1, &error);
  g_assert_cmpuint (sums->len, ==, 2);
  g_assert_cmpstr (g_array_index (sums, NlMetricSummary, 0).name, ==, "accuracy");
  g_assert_cmpint (g_array_index (sums, NlMetricSummary, 1).count, ==, 2);
  /* The new schema works: notes and devices. */
  g_assert_cmpint (nl_project_add_note (p, 1, "migrated", &error), >, 0);
  NlRunInfo info = { .network_json = (char *) net_json, .device = (char *) "cuda:0" };
  gint64 run2 = nl_project_create_run (p, &info, &error);
  g_assert_no_error (error);
  g_assert_true (nl_project_set_run_epochs (p, run2, 3, &error));
  /* and schema 2's: a run may be pruned, and be a sweep's trial */
  g_assert_true (nl_project_set_run_status (p, run2, "pruned", "pruned at epoch 1", &error));
  g_assert_no_error (error);
  NlSweepInfo sw = { .network_json = (char *) net_json, .hparams_json = (char *) "{}", .space = (char *) "lr=0.1",
                     .strategy = (char *) "random", .metric = (char *) "test_accuracy", .trials = 2 };
  gint64 sweep = nl_project_create_sweep (p, &sw, &error);
  g_assert_no_error (error);
  NlRunInfo trial = { .network_json = (char *) net_json, .sweep = sweep, .sweep_trial = 1 };
  g_assert_cmpint (nl_project_create_run (p, &trial, &error), >, 0);
  g_assert_no_error (error);
  nl_project_check (p, &error);
  g_assert_no_error (error);
  nl_project_close (p);

  /* The migrated schema is the one new projects get. */
  g_autofree char *fresh_path = g_build_filename (dir, "fresh.netloom", NULL);
  p = nl_project_open (fresh_path, TRUE, &error);
  g_assert_no_error (error);
  nl_project_close (p);
  g_autofree char *s_migrated = schema_summary (path);
  g_autofree char *s_fresh = schema_summary (fresh_path);
  g_assert_cmpstr (s_migrated, ==, s_fresh);

  /* The backup is the untouched version-0 file. */
  g_autofree char *bak = g_strdup_printf ("%s.bak-v0", path);
  g_assert_true (g_file_test (bak, G_FILE_TEST_IS_REGULAR));
  db = raw_open (bak);
  g_assert_cmpint (raw_int (db, "PRAGMA user_version"), ==, 0);
  g_assert_cmpint (raw_int (db, "PRAGMA application_id"), ==, 0x4E4C4F4D);
  g_assert_cmpint (raw_int (db, "SELECT count (*) FROM sqlite_master WHERE name = 'notes'"), ==, 0);
  g_assert_cmpint (raw_int (db, "SELECT count (*) FROM metrics"), ==, 3);
  g_assert_cmpint (raw_int (db, "SELECT count (*) FROM runs"), ==, 1);
  sqlite3_close (db);
  g_autofree char *bak_dump = dump_db (bak);
  g_assert_cmpstr (bak_dump, ==, before);

  /* Opening the migrated file again does not migrate (or back up) again. */
  g_unlink (bak);
  p = nl_project_open (path, FALSE, &error);
  g_assert_no_error (error);
  nl_project_close (p);
  g_assert_false (g_file_test (bak, G_FILE_TEST_EXISTS));
  rm_rf (dir);
}

/* ---- read-only file ---- */

/* Runs in a subprocess without root's right to write anything. */
static void
read_only_child (void)
{
  if (geteuid () == 0 && (setgid (65534) != 0 || setuid (65534) != 0))
    {
      g_test_skip ("cannot drop root privileges, so chmod cannot make a file read-only");
      return;
    }
  g_autoptr (GError) error = NULL;
  const char *path = g_getenv ("NL_TEST_READ_ONLY_PROJECT");
  g_assert_nonnull (path);
  g_assert_cmpint (access (path, W_OK), !=, 0);   /* really read-only for us */
  g_autoptr (NlProject) p = nl_project_open (path, FALSE, &error);
  g_assert_no_error (error);
  g_assert_true (nl_project_is_read_only (p));
  g_autofree char *json = nl_project_load_network (p, "kept", 0, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (json, ==, net_json);
  g_assert_true (nl_project_check (p, &error));

  g_assert_cmpint (nl_project_save_network (p, "new", net_json, &error), ==, 0);
  g_assert_error (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_READ_ONLY);
  g_assert_nonnull (strstr (error->message, "read-only"));
  g_assert_nonnull (strstr (error->message, path));
  g_clear_error (&error);
  g_assert_false (nl_project_set_run_status (p, 1, "running", NULL, &error));
  g_assert_error (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_READ_ONLY);
  g_clear_error (&error);

  /* The metric writer keeps the error and reports it once, then again for
   * later failures. */
  NlMetricWriter *w = nl_metric_writer_new (p, 10, 4);
  NlMetricPoint pt = { .run = 1, .step = 1, .split = "train", .name = "loss", .value = 1 };
  for (int i = 0; i < 3; i++)
    nl_metric_writer_add (w, &pt);
  g_assert_false (nl_metric_writer_flush (w, &error));
  g_assert_error (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_READ_ONLY);
  g_assert_nonnull (strstr (error->message, "3 metric rows were not written"));
  g_clear_error (&error);
  g_assert_true (nl_metric_writer_flush (w, &error));
  nl_metric_writer_add (w, &pt);
  g_assert_false (nl_metric_writer_free (w, &error));
  g_assert_error (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_READ_ONLY);
  g_clear_error (&error);

  /* In a directory we cannot write either, SQLite cannot make the WAL
   * index; a cleanly closed project still opens, read-only. */
  g_autofree char *dir = g_path_get_dirname (path);
  g_autofree char *sealed = g_build_filename (dir, "sealed", "ro.netloom", NULL);
  g_autoptr (NlProject) p2 = nl_project_open (sealed, FALSE, &error);
  g_assert_no_error (error);
  g_assert_true (nl_project_is_read_only (p2));
  g_autofree char *json2 = nl_project_load_network (p2, "kept", 0, &error);
  g_assert_cmpstr (json2, ==, net_json);
  g_assert_cmpint (nl_project_save_network (p2, "new", net_json, &error), ==, 0);
  g_assert_error (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_READ_ONLY);
}

static void
test_read_only (void)
{
  if (g_test_subprocess ())
    {
      read_only_child ();
      return;
    }
  g_autoptr (GError) error = NULL;
  const char *path = g_getenv ("NL_TEST_READ_ONLY_PROJECT");
  g_autofree char *dir = g_path_get_dirname (path);
  g_assert_cmpint (g_mkdir (dir, 0700), ==, 0);
  NlProject *p = nl_project_open (path, TRUE, &error);
  g_assert_no_error (error);
  nl_project_save_network (p, "kept", net_json, &error);
  new_run (p, "r");
  g_assert_no_error (error);
  nl_project_close (p);
  g_autofree char *before = file_sha256 (path);
  g_autofree char *sealed_dir = g_build_filename (dir, "sealed", NULL);
  g_autofree char *sealed = g_build_filename (sealed_dir, "ro.netloom", NULL);
  g_assert_cmpint (g_mkdir (sealed_dir, 0755), ==, 0);
  p = nl_project_open (sealed, TRUE, &error);
  g_assert_no_error (error);
  nl_project_save_network (p, "kept", net_json, &error);
  nl_project_close (p);
  g_assert_cmpint (g_chmod (sealed, 0444), ==, 0);
  g_assert_cmpint (g_chmod (sealed_dir, 0555), ==, 0);
  g_autofree char *sealed_before = file_sha256 (sealed);

  /* The file read-only; the directory open to everyone so the unprivileged
   * child can reach it (and make its WAL index). */
  g_assert_cmpint (g_chmod (path, 0444), ==, 0);
  g_assert_cmpint (g_chmod (dir, 0777), ==, 0);
  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_INHERIT_STDERR);
  g_test_trap_assert_passed ();

  g_autofree char *after = file_sha256 (path);
  g_assert_cmpstr (before, ==, after);
  g_autofree char *sealed_after = file_sha256 (sealed);
  g_assert_cmpstr (sealed_before, ==, sealed_after);
  g_chmod (sealed_dir, 0755);
  rm_rf (sealed_dir);
  /* Writable again, it opens read-write and is intact. */
  g_assert_cmpint (g_chmod (path, 0644), ==, 0);
  p = nl_project_open (path, FALSE, &error);
  g_assert_no_error (error);
  g_assert_false (nl_project_is_read_only (p));
  g_assert_true (nl_project_check (p, &error));
  g_assert_cmpint (nl_project_save_network (p, "new", net_json, &error), >, 0);
  g_autoptr (GArray) m = nl_project_get_metrics (p, 0, NULL, 0, NULL, &error);
  g_assert_cmpuint (m->len, ==, 0);
  nl_project_close (p);
  rm_rf (dir);
}

/* ---- threads sharing one project ---- */

typedef struct {
  NlProject *p;
  gint64 run;
  int id;
} ThreadArg;

static gpointer
thread_worker (gpointer data)
{
  ThreadArg *a = data;
  g_autoptr (GError) error = NULL;
  for (int b = 0; b < 50; b++)
    {
      NlMetricPoint pts[20];
      for (int i = 0; i < 20; i++)
        pts[i] = (NlMetricPoint) { .run = a->run, .step = b * 20 + i, .split = "train",
                                   .name = a->id % 2 ? "odd" : "even", .value = a->id };
      g_assert_true (nl_project_add_metrics (a->p, pts, 20, &error));
      g_autoptr (GArray) rows = nl_project_get_metrics (a->p, a->run, NULL, 0, NULL, &error);
      g_assert_no_error (error);
      g_assert_cmpuint (rows->len, >=, (guint) (b + 1) * 20);
      if (b % 10 == 0)
        g_assert_cmpint (nl_project_add_checkpoint (a->p, a->run, b, b, "xyz", 3, "m", b, TRUE, 2, &error), >, 0);
    }
  return NULL;
}

static void
test_threads (Fixture *f, gconstpointer data)
{
  enum { T = 4 };
  gint64 run = new_run (f->p, "threads");
  ThreadArg args[T];
  GThread *threads[T];
  for (int i = 0; i < T; i++)
    {
      args[i] = (ThreadArg) { f->p, run, i };
      threads[i] = g_thread_new ("worker", thread_worker, &args[i]);
    }
  for (int i = 0; i < T; i++)
    g_thread_join (threads[i]);
  g_autoptr (GError) error = NULL;
  g_autoptr (GArray) rows = nl_project_get_metrics (f->p, run, "odd", 0, NULL, &error);
  g_assert_cmpuint (rows->len, ==, 2 * 50 * 20);
  for (guint i = 0; i < rows->len; i++)
    g_assert_cmpfloat (fmod (g_array_index (rows, NlMetricRow, i).value, 2), ==, 1);
  g_autoptr (GArray) cks = nl_project_list_checkpoints (f->p, run, &error);
  g_assert_cmpuint (cks->len, <=, 3);
  g_assert_true (nl_project_check (f->p, &error));
}

/* ---- metric writer ---- */

static void
test_metric_writer (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  gint64 run = new_run (f->p, "writer");
  /* Small batches and a long timer: rows arrive by batch size. */
  NlMetricWriter *w = nl_metric_writer_new (f->p, 60000, 100);
  char name[16];
  for (int i = 0; i < 1000; i++)
    {
      g_snprintf (name, sizeof name, "m%d", i % 3);   /* the writer must copy it */
      NlMetricPoint pt = { .run = run, .step = i, .epoch = i / 100, .split = "train", .name = name, .value = i };
      nl_metric_writer_add (w, &pt);
    }
  memset (name, 0, sizeof name);
  /* The thread writes whenever max_rows are waiting, without a flush or
   * the timer: at most max_rows - 1 can be left over. */
  gint64 t_end = g_get_monotonic_time () + 5 * G_USEC_PER_SEC;
  guint seen = 0;
  while (seen <= 900 && g_get_monotonic_time () < t_end)
    {
      g_autoptr (GArray) rows = nl_project_get_metrics (f->p, run, NULL, 0, NULL, &error);
      seen = rows->len;
      g_usleep (5000);
    }
  g_assert_cmpuint (seen, >, 900);
  g_assert_true (nl_metric_writer_flush (w, &error));
  g_assert_true (nl_metric_writer_free (w, &error));
  g_assert_no_error (error);

  /* A partial batch waits for the timer or a flush. */
  w = nl_metric_writer_new (f->p, 60000, 100);
  for (int i = 1000; i < 1010; i++)
    {
      NlMetricPoint pt = { .run = run, .step = i, .split = "val", .name = "acc", .value = i };
      nl_metric_writer_add (w, &pt);
    }
  g_usleep (100000);
  g_autoptr (GArray) rows = nl_project_get_metrics (f->p, run, "acc", 0, NULL, &error);
  g_assert_cmpuint (rows->len, ==, 0);
  g_assert_true (nl_metric_writer_flush (w, &error));
  g_assert_no_error (error);
  g_autoptr (GArray) rows2 = nl_project_get_metrics (f->p, run, NULL, 0, NULL, &error);
  g_assert_cmpuint (rows2->len, ==, 1010);
  for (guint i = 0; i < 1010; i++)
    {
      NlMetricRow *r = &g_array_index (rows2, NlMetricRow, i);
      g_assert_cmpint (r->step, ==, i);
      g_assert_cmpfloat (r->value, ==, i);
      if (i < 1000)
        {
          g_snprintf (name, sizeof name, "m%d", i % 3);
          g_assert_cmpstr (r->name, ==, name);
        }
    }
  g_assert_true (nl_metric_writer_free (w, &error));

  /* A bad point is dropped and reported; the good ones around it are
   * written. */
  w = nl_metric_writer_new (f->p, 60000, 100);
  NlMetricPoint good = { .run = run, .step = 7000, .split = "val", .name = "mixed", .value = 1 };
  NlMetricPoint bad = good;
  bad.split = "validation";
  nl_metric_writer_add (w, &good);
  nl_metric_writer_add (w, &bad);
  good.step++;
  nl_metric_writer_add (w, &good);
  g_assert_false (nl_metric_writer_flush (w, &error));
  g_assert_error (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_INVALID);
  g_assert_nonnull (strstr (error->message, "1 metric rows were not written"));
  g_assert_nonnull (strstr (error->message, "validation"));
  g_clear_error (&error);
  g_autoptr (GArray) mixed = nl_project_get_metrics (f->p, run, "mixed", 0, NULL, &error);
  g_assert_cmpuint (mixed->len, ==, 2);
  g_assert_true (nl_metric_writer_free (w, &error));

  /* The timer flushes without help; a bad point is reported by free. */
  w = nl_metric_writer_new (f->p, 20, 0);
  NlMetricPoint pt = { .run = run, .step = 5000, .split = "test", .name = "timer", .value = 1 };
  nl_metric_writer_add (w, &pt);
  /* no flush asked: the 20 ms timer writes it (polled; 60 s only bounds a hang) */
  GArray *timer = NULL;
  for (int i = 0; i < 6000; i++)
    {
      g_clear_pointer (&timer, g_array_unref);
      timer = nl_project_get_metrics (f->p, run, "timer", 0, NULL, &error);
      g_assert_no_error (error);
      if (timer->len > 0)
        break;
      g_usleep (10000);
    }
  g_assert_cmpuint (timer->len, ==, 1);
  g_array_unref (timer);
  pt.run = 9999;
  nl_metric_writer_add (w, &pt);
  g_assert_false (nl_metric_writer_free (w, &error));
  g_assert_error (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_NOT_FOUND);
}

/* Another connection holds the write lock: adding never waits for it, the
 * rows land once it is released, and a lock held past the busy timeout is
 * reported by the next flush. */
static void
test_metric_writer_locked (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  gint64 run = new_run (f->p, "locked");
  sqlite3 *other = raw_open (f->path);
  raw_exec (other, "BEGIN IMMEDIATE");
  NlMetricWriter *w = nl_metric_writer_new (f->p, 10, 16);
  gint64 t0 = g_get_monotonic_time ();
  for (int i = 0; i < 2000; i++)
    {
      NlMetricPoint pt = { .run = run, .step = i, .split = "train", .name = "loss", .value = i };
      nl_metric_writer_add (w, &pt);
      if (i % 100 == 0)
        g_usleep (1000);   /* let the thread start its (blocked) write */
    }
  gint64 add_us = g_get_monotonic_time () - t0;
  g_test_message ("2000 adds while the file was locked: %.1f ms", add_us / 1e3);
  /* Not asserted on time (a shared machine): an add that waited on SQLite
   * would wait here, in the thread holding the lock, past the busy timeout,
   * and its rows would be lost, which the count below catches. */
  g_usleep (200000);
  raw_exec (other, "COMMIT");
  g_assert_true (nl_metric_writer_flush (w, &error));
  g_assert_no_error (error);
  g_autoptr (GArray) rows = nl_project_get_metrics (f->p, run, NULL, 0, NULL, &error);
  g_assert_cmpuint (rows->len, ==, 2000);

  raw_exec (other, "BEGIN IMMEDIATE");
  NlMetricPoint pt = { .run = run, .step = 5000, .split = "train", .name = "loss", .value = 1 };
  nl_metric_writer_add (w, &pt);
  t0 = g_get_monotonic_time ();
  g_assert_false (nl_metric_writer_flush (w, &error));
  double waited = (g_get_monotonic_time () - t0) / 1e6;
  g_assert_error (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_BUSY);
  g_assert_nonnull (strstr (error->message, "locked"));
  g_assert_cmpfloat (waited, >, 4.5);   /* the 5 s busy timeout */
  g_clear_error (&error);
  raw_exec (other, "COMMIT");
  sqlite3_close (other);
  g_assert_true (nl_metric_writer_free (w, &error));
  g_assert_true (nl_project_check (f->p, &error));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  /* The read-only test's subprocess finds its file through the
   * environment, set here before any thread exists (setenv is not
   * thread-safe). */
  if (!g_getenv ("NL_TEST_READ_ONLY_PROJECT"))
    {
      g_autofree char *tmp = make_tmp_dir ();
      g_rmdir (tmp);
      g_autofree char *ro = g_build_filename (tmp, "ro.netloom", NULL);
      g_setenv ("NL_TEST_READ_ONLY_PROJECT", ro, TRUE);
    }
#define ADD_F(path, fn) g_test_add (path, Fixture, NULL, fixture_setup, fn, fixture_teardown)
  ADD_F ("/project/schema", test_schema);
  ADD_F ("/project/networks", test_networks);
  ADD_F ("/project/pipelines", test_pipelines);
  ADD_F ("/project/runs", test_runs);
  ADD_F ("/project/sweeps", test_sweeps);
  ADD_F ("/project/metrics", test_metrics);
  ADD_F ("/project/metric-summary", test_metric_summary);
  ADD_F ("/project/checkpoints", test_checkpoints);
  ADD_F ("/project/cascade", test_cascade);
  ADD_F ("/project/stale-runs", test_stale_runs);
  ADD_F ("/project/interval-checkpoints", test_interval_checkpoints);
  ADD_F ("/project/truncate-metrics", test_truncate_metrics);
  ADD_F ("/project/writer-heartbeat", test_writer_heartbeat);
  ADD_F ("/project/threads", test_threads);
  ADD_F ("/project/metric-writer", test_metric_writer);
  ADD_F ("/project/metric-writer-locked", test_metric_writer_locked);
  g_test_add_func ("/project/sample", test_sample);
  g_test_add_func ("/project/refuse", test_refuse);
  g_test_add_func ("/project/migrate", test_migrate);
  g_test_add_func ("/project/migrate-v2", test_migrate_v2);
  g_test_add_func ("/project/read-only", test_read_only);
  return g_test_run ();
}
