/* test-training-mpi.c — the Training page's runs of several processes
 * under a real mpirun: Start to a run of two processes in the project,
 * followed by the dashboard; Pause, Continue and Stop reaching every
 * rank; a failure's message; the host file. Skipped, saying why, without
 * mpirun. */
#include <json-glib/json-glib.h>
#include <string.h>

#include "engine/session/nl-run.h"
#include "tests/nl-test-gui.h"
#include "tests/nl-test-training.h"
#include "ui/training/nl-training-dashboard.h"
#include "ui/training/nl-training-page.h"

typedef NlTrainingFixture Fixture;

/* FALSE (the test skipped, saying why) without mpirun or netloom-cli;
 * else the page will find netloom-cli, and sees the project's changes
 * as the window's watcher shows them. */
static gboolean
mpi_ready (Fixture *f)
{
  g_autofree char *mpirun = g_find_program_in_path ("mpirun");
  const char *build = g_getenv ("NETLOOM_BUILD_DIR");
  g_autofree char *cli = build ? g_build_filename (build, "app", "netloom-cli", NULL) : NULL;
  GtkWidget *row = gtk_widget_get_ancestor (GTK_WIDGET (nl_test_training_spin (f, "processes")),
                                            ADW_TYPE_PREFERENCES_ROW);

  g_assert_nonnull (row);
  if (!mpirun)
    {
      /* without Open MPI the row stays at one process and says why */
      g_assert_false (gtk_widget_get_sensitive (row));
      g_test_skip ("mpirun is not in PATH (Open MPI is not installed)");
      return FALSE;
    }
  g_assert_true (gtk_widget_get_sensitive (row));
#ifndef NL_TEST_HAVE_MPI
  /* mpirun is there, but the netloom-cli it would start cannot join a group */
  g_test_skip ("this netloom was built without MPI (-Dmpi=disabled or no Open MPI headers)");
  return FALSE;
#endif
  if (!cli || !g_file_test (cli, G_FILE_TEST_IS_EXECUTABLE))
    {
      g_test_skip ("netloom-cli is not built (NETLOOM_BUILD_DIR/app/netloom-cli)");
      return FALSE;
    }
  g_assert_cmpstr (g_getenv ("NETLOOM_CLI"), ==, cli);  /* set by main, before any thread */
  nl_workspace_watch (f->ws, 200);
  return TRUE;
}

static void
set_processes (Fixture *f, int n)
{
  GtkWidget *hostfile = nl_training_page_get_form_widget (f->page, "hostfile");
  gtk_spin_button_set_value (nl_test_training_spin (f, "threads"), 1);
  gtk_spin_button_set_value (nl_test_training_spin (f, "processes"), n);
  nl_test_pump (10);
  /* the host file is asked for only where there are several processes */
  g_assert_true (gtk_widget_get_visible (hostfile) == (n > 1));
}

static gboolean
job_run_followed (gpointer data)
{
  Fixture *f = data;
  gint64 run = nl_training_page_get_followed_run (f->page);
  return run > 0 && nl_test_training_n_points (f, "loss", 0) > 0;
}

static void
test_mpi_train (Fixture *f, gconstpointer data)
{
  g_autoptr (NlRunInfo) info = NULL;
  g_autoptr (GError) error = NULL;
  g_autoptr (JsonNode) hp = NULL;
  g_autofree char *out = NULL, *err = NULL;
  char *argv[] = { NULL, (char *) "runs", (char *) "--project", f->path,
                   (char *) "--json", NULL };
  int status = 0;
  gint64 run;

  if (!mpi_ready (f))
    return;
  argv[0] = (char *) g_getenv ("NETLOOM_CLI");
  nl_test_training_setup_run (f, "tiny", 1);
  set_processes (f, 2);
  nl_test_training_activate (f, "training.start");
  /* mpirun is a child process: the page goes on at once */
  g_assert_cmpint (nl_training_page_get_state (f->page), ==, NL_TRAINING_RUNNING);
  g_assert_false (nl_test_training_action_enabled (f, "training.start"));
  g_assert_true (nl_test_training_action_enabled (f, "training.stop"));
  g_assert_true (nl_test_training_action_enabled (f, "training.pause"));
  nl_test_training_wait_end (f);
  if (nl_training_page_get_error (f->page))
    g_test_message ("error: %s", nl_training_page_get_error (f->page));
  g_assert_cmpint (nl_training_page_get_state (f->page), ==, NL_TRAINING_FINISHED);
  g_assert_null (nl_training_page_get_error (f->page));
  run = nl_training_page_get_run (f->page);
  g_assert_cmpint (run, >, 0);
  g_assert_true (nl_test_training_action_enabled (f, "training.start"));
  g_assert_false (nl_test_training_action_enabled (f, "training.stop"));

  /* rank 0 stored the run: the form's network and settings, two processes */
  info = nl_project_get_run (f->p, run, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (info->status, ==, "finished");
  g_assert_cmpint (info->epochs_done, ==, 1);
  g_assert_cmpstr (info->network_name, ==, "mlp");
  hp = json_from_string (info->hparams_json, &error);
  g_assert_no_error (error);
  g_assert_cmpint (json_object_get_int_member (json_node_get_object (hp), "processes"), ==, 2);
  g_assert_cmpint (json_object_get_int_member (json_node_get_object (hp), "batch_size"), ==, 64);
  g_assert_cmpint (json_object_get_int_member (json_node_get_object (hp), "threads"), ==, 1);
  g_assert_cmpuint (nl_test_training_count_metrics (f, run, "batch_loss"), ==, 8);  /* 512 / 64 global batches */
  g_assert_true (g_spawn_sync (NULL, argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, &err, &status, &error));
  g_assert_true (g_spawn_check_wait_status (status, NULL));
  g_assert_nonnull (strstr (out, "\"processes\":2"));

  /* the dashboard shows the run, as it shows any netloom-cli run */
  g_assert_true (nl_test_wait_until (job_run_followed, f, 20000));
  g_assert_cmpint (nl_training_page_get_followed_run (f->page), ==, run);
  g_assert_cmpuint (nl_test_training_n_points (f, "loss", 0), ==, 8);
  nl_workspace_watch (f->ws, 0);
}

typedef struct {
  Fixture *f;
  gint64 run;
  guint n;
} BatchWait;

static gboolean
has_batches_after (gpointer data)
{
  BatchWait *w = data;
  return nl_test_training_count_metrics (w->f, w->run, "batch_loss") > w->n;
}

static gboolean
has_batches (gpointer data)
{
  Fixture *f = data;
  gint64 run = nl_training_page_get_followed_run (f->page);
  return run > 0 && nl_test_training_count_metrics (f, run, "batch_loss") >= 3;
}

/* Pause stops every rank (no point is written while paused), Continue
 * lets them go on, Stop ends them all and rank 0 marks the run stopped. */
static void
test_mpi_pause_stop (Fixture *f, gconstpointer data)
{
  g_autoptr (NlRunInfo) info = NULL;
  guint before;
  gint64 run;

  if (!mpi_ready (f))
    return;
  nl_test_training_setup_run (f, "tiny16", 500);
  set_processes (f, 2);
  nl_test_training_activate (f, "training.start");
  g_assert_true (nl_test_wait_until (has_batches, f, 60000));
  run = nl_training_page_get_followed_run (f->page);

  nl_test_training_activate (f, "training.pause");
  g_assert_cmpint (nl_training_page_get_state (f->page), ==, NL_TRAINING_PAUSED);
  g_assert_true (nl_test_training_action_enabled (f, "training.resume"));
  nl_test_pump (500);  /* a batch under way when the signal came */
  before = nl_test_training_count_metrics (f, run, "batch_loss");
  nl_test_pump (1500);
  g_assert_cmpuint (nl_test_training_count_metrics (f, run, "batch_loss"), ==, before);

  nl_test_training_activate (f, "training.resume");
  g_assert_cmpint (nl_training_page_get_state (f->page), ==, NL_TRAINING_RUNNING);
  g_assert_true (nl_test_wait_until (has_batches_after, &(BatchWait) { f, run, before }, 60000));

  nl_test_training_activate (f, "training.stop");
  g_assert_false (nl_test_training_action_enabled (f, "training.stop"));
  nl_test_training_wait_end (f);
  g_assert_cmpint (nl_training_page_get_state (f->page), ==, NL_TRAINING_STOPPED);
  g_assert_null (nl_training_page_get_error (f->page));
  g_assert_cmpint (nl_training_page_get_run (f->page), ==, run);
  info = nl_project_get_run (f->p, run, NULL);
  g_assert_nonnull (info);
  g_assert_cmpstr (info->status, ==, "stopped");
  g_assert_cmpint (info->epochs_done, <, 500);
  nl_workspace_watch (f->ws, 0);
}

/* The host file is chosen in a file chooser and handed to mpirun, which
 * starts the two ranks where it says (here: this machine, two slots). */
static void
test_mpi_hostfile (Fixture *f, gconstpointer data)
{
  AdwActionRow *row = ADW_ACTION_ROW (nl_training_page_get_form_widget (f->page, "hostfile"));
  g_autofree char *path = g_build_filename (f->dir, "hosts", NULL);
  g_autoptr (GFile) file = g_file_new_for_path (path);
  g_autoptr (NlRunInfo) info = NULL;
  g_autoptr (JsonNode) hp = NULL;
  g_autoptr (GError) error = NULL;
  JsonObject *o;

  if (!mpi_ready (f))
    return;
  /* one slot for two processes: mpirun refuses, and says so */
  g_assert_true (g_file_set_contents (path, "localhost slots=1\n", -1, &error));
  nl_test_training_setup_run (f, "tiny", 1);
  set_processes (f, 2);
  adw_action_row_activate (row);
  nl_test_choose_file (nl_test_wait_chooser ("Choose a Host File", 10000), file);
  nl_test_pump (50);
  g_assert_true (g_str_has_prefix (adw_action_row_get_subtitle (row), "hosts:"));
  nl_test_training_activate (f, "training.start");
  nl_test_training_wait_end (f);
  g_assert_cmpint (nl_training_page_get_state (f->page), ==, NL_TRAINING_FAILED);
  g_test_message ("error: %s", nl_training_page_get_error (f->page));
  g_assert_true (g_str_has_prefix (nl_training_page_get_error (f->page), "mpirun: There are not enough slots"));

  g_assert_true (g_file_set_contents (path, "localhost slots=2\n", -1, &error));
  nl_test_training_activate (f, "training.start");
  nl_test_training_wait_end (f);
  g_assert_cmpint (nl_training_page_get_state (f->page), ==, NL_TRAINING_FINISHED);
  info = nl_project_get_run (f->p, nl_training_page_get_run (f->page), &error);
  g_assert_no_error (error);
  hp = json_from_string (info->hparams_json, &error);
  g_assert_no_error (error);
  o = json_node_get_object (hp);
  g_assert_cmpint (json_object_get_int_member (o, "processes"), ==, 2);
  g_assert_true (g_str_has_suffix (json_object_get_string_member (o, "hosts"), " x2"));
  nl_workspace_watch (f->ws, 0);
}

static gboolean
shows_text (GtkWidget *w, const char *text)
{
  if (GTK_IS_LABEL (w) && strstr (gtk_label_get_text (GTK_LABEL (w)), text))
    return TRUE;
  for (GtkWidget *c = gtk_widget_get_first_child (w); c; c = gtk_widget_get_next_sibling (c))
    if (shows_text (c, text))
      return TRUE;
  return FALSE;
}

/* A job that fails says netloom-cli's own message (not mpirun's rulers)
 * in the banner and the event log. */
static void
test_mpi_failure (Fixture *f, gconstpointer data)
{
  GtkWidget *dashboard = GTK_WIDGET (gtk_widget_get_template_child (GTK_WIDGET (f->page), NL_TYPE_TRAINING_PAGE,
                                                                    "dashboard"));
  GtkWidget *log = GTK_WIDGET (gtk_widget_get_template_child (dashboard, NL_TYPE_TRAINING_DASHBOARD, "event_log"));
  const char *error;

  if (!mpi_ready (f))
    return;
  nl_test_training_setup_run (f, "missing", 1);
  set_processes (f, 2);
  nl_test_training_activate (f, "training.start");
  nl_test_training_wait_end (f);
  g_assert_cmpint (nl_training_page_get_state (f->page), ==, NL_TRAINING_FAILED);
  error = nl_training_page_get_error (f->page);
  g_assert_nonnull (error);
  g_test_message ("error: %s", error);
  g_assert_true (g_str_has_prefix (error, "netloom-cli:") || g_str_has_prefix (error, "netloom:"));
  g_assert_nonnull (strstr (error, "nowhere"));
  g_assert_true (nl_test_training_banner_shown (f));
  nl_test_pump (50);
  g_assert_true (shows_text (log, error));
  g_assert_true (nl_test_training_action_enabled (f, "training.start"));
  nl_workspace_watch (f->ws, 0);
}

int
main (int argc, char **argv)
{
  /* the netloom-cli the page runs under mpirun: the one built here */
  if (g_getenv ("NETLOOM_BUILD_DIR"))
    {
      g_autofree char *cli = g_build_filename (g_getenv ("NETLOOM_BUILD_DIR"), "app", "netloom-cli", NULL);
      g_setenv ("NETLOOM_CLI", cli, TRUE);
    }
  nl_test_gui_init (&argc, &argv);
#define ADD(name, fn) g_test_add ("/training-mpi/" name, Fixture, NULL, nl_test_training_setup, fn, \
                                  nl_test_training_teardown)
  ADD ("train", test_mpi_train);
  ADD ("pause-stop", test_mpi_pause_stop);
  ADD ("failure", test_mpi_failure);
  ADD ("hostfile", test_mpi_hostfile);
#undef ADD
  return g_test_run ();
}
