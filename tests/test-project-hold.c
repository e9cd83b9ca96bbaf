/* test-project-hold.c — a trainer's hold on its run (nl_project_hold_run):
 * marked 'interrupted' for its silence, the run is taken back at the
 * trainer's next write; taken over (resumed) or deleted meanwhile, every
 * write of the old trainer fails and leaves the row as it is. The other
 * process is a second NlProject on the same file: same host and pid, so
 * only the heartbeat tells the two trainers apart. */
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#include "projects/nl-project.h"

static const char net_json[] = "{\"format\":\"netloom.network\",\"version\":1,\"name\":\"n\",\"nodes\":[]}";

typedef struct {
  char *dir, *path;
  NlProject *p;   /* the trainer's */
  gint64 run;
} Fixture;

static void
setup (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  NlRunInfo info = { .network_json = (char *) net_json };
  (void) data;
  f->dir = g_dir_make_tmp ("nl-hold-XXXXXX", &error);
  g_assert_no_error (error);
  f->path = g_build_filename (f->dir, "p.netloom", NULL);
  f->p = nl_project_open (f->path, TRUE, &error);
  g_assert_no_error (error);
  f->run = nl_project_create_run (f->p, &info, &error);
  g_assert_no_error (error);
  g_assert_true (nl_project_hold_run (f->p, f->run, &error));
  g_assert_no_error (error);
}

static void
teardown (Fixture *f, gconstpointer data)
{
  const char *suffixes[] = { "", "-wal", "-shm" };
  (void) data;
  nl_project_close (f->p);
  for (guint i = 0; i < G_N_ELEMENTS (suffixes); i++)
    {
      g_autofree char *f_path = g_strconcat (f->path, suffixes[i], NULL);
      g_unlink (f_path);
    }
  g_rmdir (f->dir);
  g_free (f->path);
  g_free (f->dir);
}

/* The trainer stops beating (SIGSTOP) and another process opens the
 * project: the run is marked interrupted. Returns that other process's
 * project. */
static NlProject *
silence_and_open (Fixture *f)
{
  g_autoptr (GError) error = NULL;
  g_usleep (300000);
  NlProject *other = nl_project_open (f->path, FALSE, &error);
  g_assert_no_error (error);
  g_autoptr (NlRunInfo) r = nl_project_get_run (other, f->run, &error);
  g_assert_cmpstr (r->status, ==, "interrupted");
  g_assert_nonnull (strstr (r->error, "no heartbeat for"));
  return other;
}

static NlMetricPoint
point (gint64 run)
{
  return (NlMetricPoint) { .run = run, .step = 1, .epoch = 1, .split = "train", .name = "loss", .value = 0.5 };
}

static int
n_notes (NlProject *p, gint64 run)
{
  g_autoptr (GPtrArray) notes = nl_project_list_notes (p, run, NULL);
  return notes ? (int) notes->len : -1;
}

/* Nobody touched the run: the next beat takes it back, once, with a note. */
static void
test_take_back (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  NlProject *other = silence_and_open (f);
  double reclaimed = -1;
  (void) data;

  g_assert_false (nl_project_run_taken (f->p, f->run, &reclaimed, &error));
  g_assert_cmpfloat (reclaimed, ==, 0);
  g_assert_true (nl_project_heartbeat (f->p, f->run, &error));
  g_assert_no_error (error);
  g_autoptr (NlRunInfo) r = nl_project_get_run (other, f->run, &error);
  g_assert_cmpstr (r->status, ==, "running");
  g_assert_null (r->error);
  g_assert_cmpfloat (r->finished, ==, 0);
  g_autoptr (GPtrArray) notes = nl_project_list_notes (other, f->run, &error);
  g_assert_cmpuint (notes->len, ==, 1);
  g_assert_true (g_str_has_prefix (((NlNote *) notes->pdata[0])->text, "run 1 was stopped for "));
  g_assert_false (nl_project_run_taken (f->p, f->run, &reclaimed, &error));
  g_assert_cmpfloat (reclaimed, >=, 0.25);
  g_assert_false (nl_project_run_taken (f->p, f->run, &reclaimed, &error));
  g_assert_cmpfloat (reclaimed, ==, 0);

  /* beats go on as before, and after a pause (status 'running' beats too) */
  g_assert_true (nl_project_heartbeat (f->p, f->run, &error));
  g_assert_true (nl_project_set_run_status (f->p, f->run, "paused", NULL, &error));
  g_assert_true (nl_project_heartbeat (f->p, f->run, &error));
  g_assert_true (nl_project_set_run_status (f->p, f->run, "running", NULL, &error));
  g_assert_true (nl_project_heartbeat (f->p, f->run, &error));
  g_assert_no_error (error);
  /* again silent: a checkpoint (not a beat) takes it back */
  nl_project_close (silence_and_open (f));
  g_assert_cmpint (nl_project_add_checkpoint (f->p, f->run, 1, 10, "w", 1, NULL, NAN, TRUE, 3, &error), >, 0);
  g_assert_no_error (error);
  g_autoptr (NlRunInfo) r2 = nl_project_get_run (other, f->run, &error);
  g_assert_cmpstr (r2->status, ==, "running");
  g_assert_cmpint (r2->epochs_done, ==, 1);
  g_assert_cmpint (n_notes (other, f->run), ==, 2);
  NlMetricPoint pt = point (f->run);
  g_assert_true (nl_project_add_metrics (f->p, &pt, 1, &error));
  g_assert_true (nl_project_set_run_status (f->p, f->run, "finished", NULL, &error));
  nl_project_release_run (f->p, f->run);
  nl_project_close (other);
}

/* Another process resumed the interrupted run: nothing of the old trainer
 * reaches it any more, whatever the write. */
static void
test_taken_over (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  NlProject *other = silence_and_open (f);
  (void) data;

  g_assert_true (nl_project_set_run_status (other, f->run, "running", NULL, &error));
  g_autoptr (NlRunInfo) before = nl_project_get_run (other, f->run, &error);

  g_assert_false (nl_project_heartbeat (f->p, f->run, &error));
  g_assert_error (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_TAKEN);
  g_assert_nonnull (strstr (error->message, "run 1 was taken over while this process was silent for "));
  g_clear_error (&error);
  NlMetricPoint pt = point (f->run);
  g_assert_false (nl_project_add_metrics (f->p, &pt, 1, &error));
  g_assert_error (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_TAKEN);
  g_clear_error (&error);
  g_assert_cmpint (nl_project_add_checkpoint (f->p, f->run, 1, 10, "w", 1, NULL, NAN, TRUE, 3, &error), ==, 0);
  g_assert_error (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_TAKEN);
  g_clear_error (&error);
  g_assert_cmpint (nl_project_add_interval_checkpoint (f->p, f->run, 0, 5, "w", 1, &error), ==, 0);
  g_clear_error (&error);
  g_assert_false (nl_project_set_run_epochs (f->p, f->run, 3, &error));
  g_clear_error (&error);
  g_assert_false (nl_project_set_run_status (f->p, f->run, "stopped", "training was stopped", &error));
  g_assert_error (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_TAKEN);
  g_clear_error (&error);
  /* the metric writer keeps beating quietly; its points fail the flush */
  NlMetricWriter *w = nl_metric_writer_new (f->p, 10, 0);
  nl_metric_writer_set_heartbeat (w, f->run);
  nl_metric_writer_add (w, &pt);
  g_usleep (100000);
  g_assert_false (nl_metric_writer_flush (w, &error));
  g_assert_error (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_TAKEN);
  g_clear_error (&error);
  g_assert_true (nl_metric_writer_free (w, &error));
  /* asked without SQLite, for good */
  g_assert_true (nl_project_run_taken (f->p, f->run, NULL, &error));
  g_assert_error (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_TAKEN);
  g_clear_error (&error);

  g_autoptr (NlRunInfo) after = nl_project_get_run (other, f->run, &error);
  g_assert_cmpstr (after->status, ==, "running");
  g_assert_cmpfloat (after->heartbeat, ==, before->heartbeat);
  g_assert_cmpint (after->epochs_done, ==, 0);
  g_autoptr (GArray) ckpts = nl_project_list_checkpoints (other, f->run, &error);
  g_assert_cmpuint (ckpts->len, ==, 0);
  g_autoptr (GArray) pts = nl_project_get_metrics (other, f->run, NULL, 0, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (pts->len, ==, 0);
  g_assert_cmpint (n_notes (other, f->run), ==, 0);
  /* the new trainer's writes are its own */
  g_assert_true (nl_project_set_run_status (other, f->run, "finished", NULL, &error));
  nl_project_release_run (f->p, f->run);
  nl_project_close (other);
}

/* A run deleted (or stopped) by another process is lost as well. */
static void
test_deleted (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  NlProject *other = nl_project_open (f->path, FALSE, &error);
  (void) data;
  g_assert_true (nl_project_delete_run (other, f->run, &error));
  g_assert_false (nl_project_heartbeat (f->p, f->run, &error));
  g_assert_error (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_TAKEN);
  g_assert_nonnull (strstr (error->message, "run 1 was deleted while this process trained it"));
  g_clear_error (&error);
  nl_project_release_run (f->p, f->run);

  /* a run the trainer does not hold beats as before, interrupted or not */
  NlRunInfo info = { .network_json = (char *) net_json, .status = (char *) "interrupted" };
  gint64 run = nl_project_create_run (f->p, &info, &error);
  g_assert_true (nl_project_heartbeat (f->p, run, &error));
  g_autoptr (NlRunInfo) r = nl_project_get_run (f->p, run, &error);
  g_assert_cmpstr (r->status, ==, "interrupted");
  g_assert_cmpfloat (r->heartbeat, >, 0);

  g_assert_true (nl_project_hold_run (f->p, run, &error));
  g_assert_true (nl_project_set_run_status (other, run, "stopped", NULL, &error));
  g_assert_false (nl_project_set_run_epochs (f->p, run, 1, &error));
  g_assert_error (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_TAKEN);
  g_assert_nonnull (strstr (error->message, "was marked stopped by another process"));
  nl_project_close (other);
}

int
main (int argc, char **argv)
{
  /* silent for 3 x 0.05 s: taken for dead (set before any thread starts) */
  g_setenv ("NETLOOM_HEARTBEAT_INTERVAL", "0.05", TRUE);
  g_test_init (&argc, &argv, NULL);
  g_test_add ("/project-hold/take-back", Fixture, NULL, setup, test_take_back, teardown);
  g_test_add ("/project-hold/taken-over", Fixture, NULL, setup, test_taken_over, teardown);
  g_test_add ("/project-hold/deleted", Fixture, NULL, setup, test_deleted, teardown);
  return g_test_run ();
}
