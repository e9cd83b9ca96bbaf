/* test-run-resume.c — how far nl_run_resume may be asked to train: never
 * to or before the epoch in progress (that would end the run at once with
 * weights from the middle of an epoch), never to the epochs a finished run
 * has done (nothing to train); a refused resume leaves the run as it was.
 * A run stopped at an epoch's end may end there (finished). Runs of a tiny
 * network on a generated dataset, stopped at a chosen batch. */
#include <glib/gstdio.h>
#include <string.h>

#include "engine/session/nl-run.h"
#include "tests/nl-test-util.h"

static char *work_dir;

static const char *net_json =
  "{\"format\":\"netloom.network\",\"version\":1,\"name\":\"tiny\",\"nodes\":["
  "{\"id\":\"data\",\"op\":\"Input\"},{\"id\":\"flat\",\"op\":\"Flatten\"},"
  "{\"id\":\"fc\",\"op\":\"Dense\",\"params\":{\"units\":10}}],"
  "\"edges\":[\"data -> flat\",\"flat -> fc\"]}";

/* Where a run is stopped: epoch (1-based) and batch. */
typedef struct {
  int epoch;
  int64_t batch;
} StopAt;

static gboolean
stop_at (gpointer user, int epoch, int64_t batch, int64_t n_batches, double loss, double elapsed)
{
  const StopAt *s = user;
  return !(epoch == s->epoch && batch == s->batch);
}

/* A new project with one run of `epochs` epochs, stopped at *stop (NULL:
 * trained to its end); interval: seconds between checkpoints by time. */
static NlProject *
project_with_run (const char *name, int epochs, const StopAt *stop, double interval)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *path = g_build_filename (work_dir, name, NULL);
  g_autofree char *spec = g_strdup_printf ("mnist:%s", work_dir);
  g_autoptr (NlNetwork) net = nl_network_load_data (net_json, -1, &error);
  g_auto (NlRunConfig) cfg = { 0 };
  NlRunCallbacks cb = { .chain = { .batch = stop ? stop_at : NULL, .user = (gpointer) stop } };
  NlProject *p = nl_project_open (path, TRUE, &error);
  gint64 run = 0;
  gboolean ok;

  g_assert_no_error (error);
  nl_test_tiny_train_config (&cfg, spec);
  cfg.epochs = epochs;
  cfg.threads = 1;
  cfg.checkpoint_interval = interval;
  ok = nl_run_train (p, NULL, net, &cfg, &cb, &run, &error);
  g_assert_cmpint (run, ==, 1);
  if (stop)
    {
      g_assert_false (ok);
      g_assert_error (error, NL_TRAIN_ERROR, NL_TRAIN_ERROR_CANCELLED);
    }
  else
    {
      g_assert_no_error (error);
      g_assert_true (ok);
    }
  return p;
}

/* What a refused resume must leave as it was. */
typedef struct {
  char *status;
  int epochs_done;
  guint n_metrics, n_checkpoints;
  gint64 last_checkpoint;
} RunState;

static void
run_state (NlProject *p, RunState *s)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (NlRunInfo) info = nl_project_get_run (p, 1, &error);
  g_autoptr (GArray) points = nl_project_get_metrics (p, 1, NULL, 0, NULL, &error);
  g_autoptr (GArray) ckpts = nl_project_list_checkpoints (p, 1, &error);
  g_assert_no_error (error);
  s->status = g_strdup (info->status);
  s->epochs_done = info->epochs_done;
  s->n_metrics = points->len;
  s->n_checkpoints = ckpts->len;
  s->last_checkpoint = ckpts->len ? g_array_index (ckpts, NlCheckpointInfo, ckpts->len - 1).id : 0;
}

static void
refused (NlProject *p, int epochs, const char *message)
{
  g_autoptr (GError) error = NULL;
  RunState before, after;
  run_state (p, &before);
  g_assert_false (nl_run_resume (p, 1, epochs, NULL, NULL, &error));
  g_assert_error (error, NL_TRAIN_ERROR, NL_TRAIN_ERROR_CONFIG);
  g_assert_cmpstr (error->message, ==, message);
  run_state (p, &after);
  g_assert_cmpstr (after.status, ==, before.status);
  g_assert_cmpint (after.epochs_done, ==, before.epochs_done);
  g_assert_cmpuint (after.n_metrics, ==, before.n_metrics);
  g_assert_cmpuint (after.n_checkpoints, ==, before.n_checkpoints);
  g_assert_cmpint (after.last_checkpoint, ==, before.last_checkpoint);
  g_free (before.status);
  g_free (after.status);
}

static void
resumed (NlProject *p, int epochs)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (NlRunInfo) info = NULL;
  g_assert_true (nl_run_resume (p, 1, epochs, NULL, NULL, &error));
  g_assert_no_error (error);
  info = nl_project_get_run (p, 1, &error);
  g_assert_cmpstr (info->status, ==, "finished");
  g_assert_cmpint (info->epochs_done, ==, epochs);
}

/* Stopped inside epoch 3 of 4 (a checkpoint by time after every step):
 * --epochs 2 or 1 would end it at once with epoch 3's weights half
 * trained; 3 finishes epoch 3. */
static void
test_inside_epoch (void)
{
  StopAt stop = { 3, 4 };
  NlProject *p = project_with_run ("inside.netloom", 4, &stop, 1e-6);
  g_autoptr (GError) error = NULL;
  g_autoptr (GArray) ckpts = nl_project_list_checkpoints (p, 1, &error);
  g_assert_no_error (error);
  g_assert_true (g_array_index (ckpts, NlCheckpointInfo, ckpts->len - 1).is_interval);
  refused (p, 2, "run 1 is in epoch 3 of 4; --epochs must be at least 3");
  refused (p, 1, "run 1 is in epoch 3 of 4; --epochs must be at least 3");
  resumed (p, 3);
  nl_project_close (p);
}

/* Stopped at the start of epoch 3 of 4 (checkpoints at epoch ends only):
 * it may end at the 2 epochs it has done, not before. */
static void
test_stopped_at_epoch_end (void)
{
  StopAt stop = { 3, 1 };
  NlProject *p = project_with_run ("stopped.netloom", 4, &stop, 0);
  refused (p, 1, "run 1 has done 2 of 4 epochs; --epochs must be at least 2");
  resumed (p, 2);
  nl_project_close (p);
}

/* A finished run of 3 epochs trains on only to 4 or more. */
static void
test_finished (void)
{
  NlProject *p = project_with_run ("finished.netloom", 3, NULL, 0);
  refused (p, 3, "run 1 finished after 3 epochs; --epochs must be at least 4 to train on");
  refused (p, 2, "run 1 finished after 3 epochs; --epochs must be at least 4 to train on");
  resumed (p, 4);
  nl_project_close (p);
}

int
main (int argc, char **argv)
{
  int status;
  g_test_init (&argc, &argv, NULL);
  work_dir = g_dir_make_tmp ("netloom-run-resume-XXXXXX", NULL);
  g_assert_nonnull (work_dir);
  nl_test_write_idx_dataset (work_dir, 192, 100);
  g_test_add_func ("/run-resume/inside-epoch", test_inside_epoch);
  g_test_add_func ("/run-resume/stopped-at-epoch-end", test_stopped_at_epoch_end);
  g_test_add_func ("/run-resume/finished", test_finished);
  status = g_test_run ();
  nl_test_remove_tree (work_dir);
  g_free (work_dir);
  return status;
}
