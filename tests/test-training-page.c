/* test-training-page.c — the Training page on a real project and a tiny
 * MNIST-format dataset written here: a run from the form to the store with
 * live plots, pause / resume, stop and resume, failures shown in the
 * banner, forking a stored run, the schedule preview, following a run
 * written by another connection, and the device and precision rows (runs
 * of several processes: test-training-mpi.c). */
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/nl-device.h"
#include "engine/session/nl-run.h"
#include "tests/nl-test-gui.h"
#include "tests/nl-test-training.h"
#include "tests/nl-test-util.h"
#include "ui/training/nl-checkpoint-group.h"
#include "ui/training/nl-event-log.h"
#include "ui/training/nl-lr-preview.h"
#include "ui/training/nl-training-dashboard.h"
#include "ui/training/nl-training-page.h"

typedef NlTrainingFixture Fixture;

static const char *
selected_item (Fixture *f, const char *field)
{
  GtkStringObject *o = adw_combo_row_get_selected_item (ADW_COMBO_ROW (nl_training_page_get_form_widget (f->page, field)));
  return o ? gtk_string_object_get_string (o) : NULL;
}

static gboolean
has_points (gpointer data)
{
  return nl_test_training_n_points (data, "loss", 0) > 0;
}

static gboolean
has_epoch (gpointer data)
{
  return nl_test_training_n_points (data, "accuracy", 1) > 0;
}

static char *
run_status (Fixture *f, gint64 run)
{
  g_autoptr (NlRunInfo) info = nl_project_get_run (f->p, run, NULL);
  return info ? g_strdup (info->status) : NULL;
}

typedef struct {
  Fixture *f;
  const char *status;
} StatusWait;

static gboolean
status_is (gpointer data)
{
  StatusWait *w = data;
  gint64 run = nl_training_page_get_run (w->f->page);
  g_autofree char *s = run > 0 ? run_status (w->f, run) : NULL;
  return !g_strcmp0 (s, w->status);
}

/* ---- tests ---- */

static void
test_train (Fixture *f, gconstpointer data)
{
  gint64 run;
  g_autoptr (NlRunInfo) info = NULL;
  g_autoptr (GError) error = NULL;

  nl_test_training_setup_run (f, "tiny", 2);
  g_assert_true (nl_test_training_action_enabled (f, "training.start"));
  g_assert_false (nl_test_training_action_enabled (f, "training.pause"));
  f->changed = 0;
  nl_test_training_activate (f, "training.start");
  g_assert_cmpint (nl_training_page_get_state (f->page), ==, NL_TRAINING_STARTING);
  g_assert_false (nl_test_training_action_enabled (f, "training.start"));
  nl_test_training_wait_end (f);
  g_assert_cmpint (nl_training_page_get_state (f->page), ==, NL_TRAINING_FINISHED);
  g_assert_null (nl_training_page_get_error (f->page));
  g_assert_false (nl_test_training_banner_shown (f));
  run = nl_training_page_get_run (f->page);
  g_assert_cmpint (run, >, 0);

  /* the plots received the run */
  g_assert_cmpuint (nl_test_training_n_points (f, "loss", 0), >, 0);       /* batch loss */
  g_assert_cmpuint (nl_test_training_n_points (f, "loss", 1), ==, 2);      /* epoch loss */
  g_assert_cmpuint (nl_test_training_n_points (f, "accuracy", 0), ==, 2);  /* train */
  g_assert_cmpuint (nl_test_training_n_points (f, "accuracy", 1), ==, 2);  /* test */
  g_assert_cmpuint (nl_test_training_n_points (f, "lr", 0), >, 0);
  g_assert_cmpuint (nl_test_training_n_points (f, "throughput", 0), >, 0);
  g_assert_true (nl_plot_series_get_dashed (nl_plot_get_series (nl_training_page_get_plot (f->page, "accuracy"), 1)));
  {
    double x, y;
    NlPlotSeries *s = nl_plot_get_series (nl_training_page_get_plot (f->page, "loss"), 0);
    g_assert_true (nl_plot_series_get_point (s, nl_plot_series_get_length (s) - 1, &x, &y));
    g_assert_cmpfloat (x, ==, 16);  /* 2 epochs of 512 / 64 batches */
    s = nl_plot_get_series (nl_training_page_get_plot (f->page, "lr"), 0);
    g_assert_true (nl_plot_series_get_point (s, 0, &x, &y));
    g_assert_cmpfloat_with_epsilon (y, 0.1, 1e-6);  /* SGD's default rate, constant */
  }

  /* stored: finished, with its metrics; the other pages were told */
  info = nl_project_get_run (f->p, run, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (info->status, ==, "finished");
  g_assert_cmpint (info->epochs_done, ==, 2);
  g_assert_cmpstr (info->network_name, ==, "mlp");
  g_assert_cmpuint (nl_test_training_count_metrics (f, run, "batch_loss"), ==, 16);
  g_assert_cmpuint (nl_test_training_count_metrics (f, run, "accuracy"), ==, 4);
  g_assert_true (f->changed & NL_WORKSPACE_RUNS);
  g_assert_true (f->changed & NL_WORKSPACE_METRICS);
  /* Start is available again; Stop is not */
  g_assert_true (nl_test_training_action_enabled (f, "training.start"));
  g_assert_false (nl_test_training_action_enabled (f, "training.stop"));
  g_assert_true (nl_project_check (f->p, &error));
}

static void
test_pause_resume (Fixture *f, gconstpointer data)
{
  StatusWait paused = { f, "paused" };
  gsize before[3];
  gint64 run;

  nl_test_training_setup_run (f, "tiny16", 6);
  nl_test_training_activate (f, "training.start");
  g_assert_true (nl_test_wait_until (has_points, f, 60000));
  g_assert_true (nl_test_training_action_enabled (f, "training.pause"));
  g_assert_false (nl_test_training_action_enabled (f, "training.resume"));
  nl_test_training_activate (f, "training.pause");
  g_assert_cmpint (nl_training_page_get_state (f->page), ==, NL_TRAINING_PAUSED);
  g_assert_true (nl_test_wait_until (status_is, &paused, 20000));
  g_assert_false (nl_test_training_action_enabled (f, "training.pause"));
  g_assert_true (nl_test_training_action_enabled (f, "training.resume"));
  run = nl_training_page_get_run (f->page);
  /* what was on its way has landed (the store's writer flushes every 250 ms) */
  nl_test_pump (400);
  before[0] = nl_test_training_n_points (f, "loss", 0);
  before[1] = nl_test_training_n_points (f, "throughput", 0);
  before[2] = nl_test_training_count_metrics (f, run, "batch_loss");
  nl_test_pump (300);
  g_assert_cmpuint (nl_test_training_n_points (f, "loss", 0), ==, before[0]);
  g_assert_cmpuint (nl_test_training_n_points (f, "throughput", 0), ==, before[1]);
  g_assert_cmpuint (nl_test_training_count_metrics (f, run, "batch_loss"), ==, before[2]);
  g_assert_cmpint (nl_training_page_get_state (f->page), ==, NL_TRAINING_PAUSED);

  nl_test_training_activate (f, "training.resume");
  g_assert_cmpint (nl_training_page_get_state (f->page), ==, NL_TRAINING_RUNNING);
  nl_test_training_wait_end (f);
  g_assert_cmpint (nl_training_page_get_state (f->page), ==, NL_TRAINING_FINISHED);
  g_assert_cmpuint (nl_test_training_n_points (f, "loss", 0), >, before[0]);
  g_assert_cmpuint (nl_test_training_n_points (f, "accuracy", 1), ==, 6);
  {
    g_autofree char *s = run_status (f, run);
    g_assert_cmpstr (s, ==, "finished");
  }
}

static void
test_stop_and_resume (Fixture *f, gconstpointer data)
{
  StatusWait paused = { f, "paused" };
  gint64 run;
  g_autoptr (NlRunInfo) info = NULL;

  nl_test_training_setup_run (f, "tiny16", 4);
  nl_test_training_activate (f, "training.start");
  /* pause after the first epoch, so the stop lands inside the second */
  g_assert_true (nl_test_wait_until (has_epoch, f, 60000));
  nl_test_training_activate (f, "training.pause");
  g_assert_true (nl_test_wait_until (status_is, &paused, 20000));
  nl_test_training_activate (f, "training.stop");
  g_assert_false (nl_test_training_action_enabled (f, "training.stop"));
  nl_test_training_wait_end (f);
  g_assert_cmpint (nl_training_page_get_state (f->page), ==, NL_TRAINING_STOPPED);
  g_assert_null (nl_training_page_get_error (f->page));
  run = nl_training_page_get_run (f->page);
  {
    g_autofree char *s = run_status (f, run);
    g_assert_cmpstr (s, ==, "stopped");
  }

  /* resume: the earlier epoch is shown, then the run goes on to its end */
  f->changed = 0;
  nl_training_page_resume_run (f->page, run);
  nl_test_training_wait_end (f);
  g_assert_cmpint (nl_training_page_get_state (f->page), ==, NL_TRAINING_FINISHED);
  g_assert_cmpint (nl_training_page_get_run (f->page), ==, run);
  g_assert_cmpuint (nl_test_training_n_points (f, "accuracy", 1), ==, 4);
  info = nl_project_get_run (f->p, run, NULL);
  g_assert_cmpstr (info->status, ==, "finished");
  g_assert_cmpint (info->epochs_done, ==, 4);
  g_assert_true (f->changed & NL_WORKSPACE_RUNS);
  {
    /* x never went back: the partial epoch's points were left out */
    NlPlotSeries *s = nl_plot_get_series (nl_training_page_get_plot (f->page, "loss"), 0);
    double prev = -1, x, y;
    for (gsize i = 0; i < nl_plot_series_get_length (s); i++)
      {
        g_assert_true (nl_plot_series_get_point (s, i, &x, &y));
        g_assert_cmpfloat (x, >, prev);
        prev = x;
      }
  }
}

static void
test_failure (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) nets = NULL;
  g_autofree char *status = NULL;
  gint64 run;

  nl_test_training_setup_run (f, "missing", 2);
  nl_test_training_activate (f, "training.start");
  nl_test_training_wait_end (f);
  g_assert_cmpint (nl_training_page_get_state (f->page), ==, NL_TRAINING_FAILED);
  g_assert_nonnull (nl_training_page_get_error (f->page));
  g_assert_nonnull (strstr (nl_training_page_get_error (f->page), "nowhere"));
  g_assert_true (nl_test_training_banner_shown (f));
  run = nl_training_page_get_run (f->page);
  g_assert_cmpint (run, >, 0);
  status = run_status (f, run);
  g_assert_cmpstr (status, ==, "failed");
  g_assert_true (nl_project_check (f->p, &error));
  g_assert_no_error (error);
  nets = nl_project_list_networks (f->p, NULL);
  g_assert_cmpuint (nets->len, ==, 3);
  g_assert_true (nl_test_training_action_enabled (f, "training.start"));

  /* a diverging run (the loss becomes NaN in epoch 4 on this data) fails
   * the same way; the banner is dismissed first */
  nl_test_training_activate (f, "training.dismiss-error");
  g_assert_false (nl_test_training_banner_shown (f));
  nl_test_training_setup_run (f, "tiny", 8);
  gtk_spin_button_set_value (nl_test_training_spin (f, "lr"), 10);
  gtk_spin_button_set_value (nl_test_training_spin (f, "momentum"), 0.99);
  nl_test_training_activate (f, "training.start");
  nl_test_training_wait_end (f);
  g_assert_cmpint (nl_training_page_get_state (f->page), ==, NL_TRAINING_FAILED);
  g_assert_true (nl_test_training_banner_shown (f));
  /* the node that made the first NaN or Inf, by name (nl-layer-stats.h) */
  g_assert_true (g_regex_match_simple ("node '.+' made the first (NaN|Inf) in", nl_training_page_get_error (f->page), 0,
                                       0));
  g_clear_pointer (&status, g_free);
  status = run_status (f, nl_training_page_get_run (f->page));
  g_assert_cmpstr (status, ==, "failed");
  g_assert_cmpuint (nl_test_training_n_points (f, "accuracy", 1), ==, 3);  /* the epochs before it stay */
  g_assert_true (nl_project_check (f->p, &error));
}

static void
test_fork (Fixture *f, gconstpointer data)
{
  gint64 parent, child;
  g_autoptr (NlRunInfo) info = NULL;
  g_auto (NlRunConfig) rc = { 0 };

  nl_test_training_setup_run (f, "tiny", 2);
  nl_test_training_select (f, "optimizer", "Adam");
  gtk_spin_button_set_value (nl_test_training_spin (f, "lr"), 0.002);
  nl_test_training_activate (f, "training.start");
  nl_test_training_wait_end (f);
  g_assert_cmpint (nl_training_page_get_state (f->page), ==, NL_TRAINING_FINISHED);
  parent = nl_training_page_get_run (f->page);

  /* another form first, so that the prefill visibly changes it */
  nl_test_training_select (f, "optimizer", "SGD");
  gtk_spin_button_set_value (nl_test_training_spin (f, "epochs"), 9);
  nl_training_page_prefill_from_run (f->page, parent);
  g_assert_true (nl_test_wait_until (nl_test_training_ready, f, 20000));
  g_assert_cmpint (nl_training_page_get_fork_parent (f->page), ==, parent);
  g_assert_cmpstr (selected_item (f, "optimizer"), ==, "Adam");
  g_assert_cmpstr (selected_item (f, "network"), ==, "mlp");
  g_assert_cmpstr (selected_item (f, "pipeline"), ==, "tiny");
  g_assert_cmpfloat (gtk_spin_button_get_value (nl_test_training_spin (f, "epochs")), ==, 2);
  g_assert_cmpfloat_with_epsilon (gtk_spin_button_get_value (nl_test_training_spin (f, "lr")), 0.002, 1e-7);
  g_assert_false (gtk_widget_get_sensitive (nl_training_page_get_form_widget (f->page, "network")));

  /* change two settings; the fork starts from the parent's best checkpoint */
  gtk_spin_button_set_value (nl_test_training_spin (f, "lr"), 0.0005);
  gtk_spin_button_set_value (nl_test_training_spin (f, "epochs"), 3);
  nl_test_training_activate (f, "training.start");
  nl_test_training_wait_end (f);
  g_assert_cmpint (nl_training_page_get_state (f->page), ==, NL_TRAINING_FINISHED);
  child = nl_training_page_get_run (f->page);
  g_assert_cmpint (child, !=, parent);
  info = nl_project_get_run (f->p, child, NULL);
  g_assert_cmpint (info->parent_run, ==, parent);
  g_assert_cmpint (info->parent_checkpoint, >, 0);
  nl_run_config_init (&rc);
  g_assert_true (nl_run_config_from_json (&rc, info->hparams_json, NULL));
  g_assert_cmpint (rc.optim.kind, ==, NL_OPTIM_ADAM);
  g_assert_cmpfloat_with_epsilon (rc.optim.lr, 0.0005, 1e-7);
  g_assert_cmpint (rc.epochs, ==, 3);
  g_assert_cmpint (rc.batch_size, ==, 64);
  g_assert_cmpint (info->epochs_done, ==, 3);

  /* leaving fork mode: Start makes new runs again */
  nl_test_training_activate (f, "training.cancel-fork");
  g_assert_cmpint (nl_training_page_get_fork_parent (f->page), ==, 0);
  g_assert_true (gtk_widget_get_sensitive (nl_training_page_get_form_widget (f->page, "network")));
}

static void
test_schedule_preview (Fixture *f, gconstpointer data)
{
  NlLrPreview *preview = NL_LR_PREVIEW (nl_training_page_get_form_widget (f->page, "lr-preview"));
  guint n;
  double step, lr, peak = 0;

  nl_test_training_setup_run (f, "tiny", 10);
  gtk_spin_button_set_value (nl_test_training_spin (f, "lr"), 0.1);
  nl_test_training_select (f, "schedule", "Cosine");
  gtk_spin_button_set_value (nl_test_training_spin (f, "warmup"), 20);
  nl_test_pump (50);
  g_assert_null (nl_lr_preview_get_error (preview));
  n = nl_lr_preview_get_n_points (preview);
  g_assert_cmpuint (n, >, 10);
  g_assert_true (nl_lr_preview_get_point (preview, 0, &step, &lr));
  g_assert_cmpfloat (lr, ==, 0);  /* the warm-up starts at 0 */
  for (guint i = 0; i < n; i++)
    {
      g_assert_true (nl_lr_preview_get_point (preview, i, &step, &lr));
      peak = MAX (peak, lr);
    }
  g_assert_cmpfloat_with_epsilon (peak, 0.1, 0.005);
  g_assert_true (nl_lr_preview_get_point (preview, n - 1, &step, &lr));
  g_assert_cmpfloat (lr, <, 0.01);  /* cosine ends near 0 */
  /* the run's length is the pipeline's: 512 / 64 = 8 steps an epoch */
  g_assert_true (nl_test_wait_until (nl_test_training_ready, f, 20000));
  nl_test_pump (20);
  g_assert_true (nl_lr_preview_get_point (preview, n - 1, &step, &lr));
  g_assert_cmpfloat (step, ==, 79);
  g_assert_cmpfloat (nl_test_drawn_fraction (GTK_WIDGET (preview)), >, 0.02);

  /* a bad schedule: the preview says why and Start is off */
  nl_test_training_select (f, "schedule", "Multi-step decay");
  gtk_editable_set_text (GTK_EDITABLE (nl_training_page_get_form_widget (f->page, "milestones")), "30,10");
  nl_test_pump (20);
  g_assert_nonnull (nl_lr_preview_get_error (preview));
  g_assert_false (nl_test_training_action_enabled (f, "training.start"));
  gtk_editable_set_text (GTK_EDITABLE (nl_training_page_get_form_widget (f->page, "milestones")), "10,30");
  nl_test_pump (20);
  g_assert_null (nl_lr_preview_get_error (preview));
  g_assert_true (nl_test_training_action_enabled (f, "training.start"));
}

/* A run written by another connection (as netloom-cli would) is followed. */
static gboolean
following (gpointer data)
{
  Fixture *f = data;
  return nl_training_page_get_followed_run (f->page) > 0 && nl_test_training_n_points (f, "loss", 0) >= 10;
}

static gboolean
twenty_points (gpointer data)
{
  return nl_test_training_n_points (data, "loss", 0) >= 20 && nl_test_training_n_points (data, "accuracy", 1) >= 1;
}

static void
add_points (NlProject *q, gint64 run, int from, int to)
{
  for (int s = from; s <= to; s++)
    {
      NlMetricPoint pt = { .run = run, .step = s, .epoch = 1 + (s - 1) / 10, .split = "train", .name = "batch_loss",
                           .value = 2.0 / s };
      g_assert_true (nl_project_add_metrics (q, &pt, 1, NULL));
    }
}

static void
test_follow (Fixture *f, gconstpointer data)
{
  g_autoptr (NlProject) q = nl_project_open (f->path, FALSE, NULL);
  g_autofree char *net = NULL;
  g_auto (NlRunConfig) rc = { 0 };
  g_autofree char *hp = NULL;
  NlRunInfo info = { 0 };
  gint64 run;

  g_assert_nonnull (q);
  net = nl_project_load_network (q, "mlp", 0, NULL);
  nl_run_config_init (&rc);
  rc.epochs = 2;
  hp = nl_run_config_to_json (&rc);
  info.name = (char *) "cli run";
  info.network_name = (char *) "mlp";
  info.network_json = net;
  info.hparams_json = hp;
  info.status = (char *) "running";
  run = nl_project_create_run (q, &info, NULL);
  g_assert_cmpint (run, >, 0);
  add_points (q, run, 1, 10);
  /* the window's watcher reports changes by other connections like this */
  nl_workspace_notify (f->ws, NL_WORKSPACE_ALL);
  g_assert_true (nl_test_wait_until (following, f, 20000));
  g_assert_cmpint (nl_training_page_get_followed_run (f->page), ==, run);
  g_assert_cmpuint (nl_test_training_n_points (f, "loss", 0), ==, 10);

  add_points (q, run, 11, 20);
  {
    NlMetricPoint acc = { .run = run, .step = 20, .epoch = 1, .split = "test", .name = "accuracy", .value = 0.5 };
    g_assert_true (nl_project_add_metrics (q, &acc, 1, NULL));
  }
  nl_workspace_notify (f->ws, NL_WORKSPACE_METRICS);
  g_assert_true (nl_test_wait_until (twenty_points, f, 20000));
  g_assert_cmpuint (nl_test_training_n_points (f, "loss", 0), ==, 20);  /* nothing twice */
  g_assert_cmpint (nl_training_page_get_state (f->page), ==, NL_TRAINING_IDLE);
  g_assert_true (nl_project_set_run_status (q, run, "finished", NULL, NULL));
  nl_workspace_notify (f->ws, NL_WORKSPACE_RUNS);
  nl_test_pump (200);
  g_assert_cmpuint (nl_test_training_n_points (f, "loss", 0), ==, 20);
}

/* The device row lists nl_device_list() (the CPU first, a reason when no
 * GPU); the chosen precision and device reach the stored run. */
static void
test_device (Fixture *f, gconstpointer data)
{
  g_autofree char *reason = NULL, *cpu_title = NULL;
  g_autoptr (GPtrArray) devices = nl_device_list (&reason);
  AdwComboRow *row = ADW_COMBO_ROW (nl_training_page_get_form_widget (f->page, "device"));
  GListModel *m = adw_combo_row_get_model (row);
  const NlDeviceInfo *cpu = g_ptr_array_index (devices, 0);
  g_autoptr (NlRunInfo) info = NULL;
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_auto (NlRunConfig) rc = { 0 };
  g_autoptr (GError) error = NULL;
  gint64 run;

  g_assert_cmpuint (g_list_model_get_n_items (m), ==, devices->len);
  g_assert_cmpint (adw_combo_row_get_selected (row), ==, 0);
  cpu_title = g_strdup_printf ("CPU — %s", cpu->name);
  g_assert_cmpstr (selected_item (f, "device"), ==, cpu_title);
  for (guint i = 1; i < devices->len; i++)
    {
      g_autoptr (GtkStringObject) o = g_list_model_get_item (m, i);
      const NlDeviceInfo *d = g_ptr_array_index (devices, i);
      g_assert_true (g_str_has_prefix (gtk_string_object_get_string (o), d->id));
    }
  if (devices->len == 1)
    {
      /* no GPU: the row says why */
      g_assert_nonnull (reason);
      g_assert_nonnull (strstr (adw_action_row_get_subtitle (ADW_ACTION_ROW (row)), reason));
    }
  else
    g_assert_null (reason);

  nl_test_training_setup_run (f, "tiny", 1);
  g_assert_cmpstr (selected_item (f, "precision"), ==, "fp32");
  nl_test_training_select (f, "precision", "bf16");
  g_assert_nonnull (strstr (adw_action_row_get_subtitle (ADW_ACTION_ROW (nl_training_page_get_form_widget (
                      f->page, "precision"))), "CPU"));
  nl_test_training_activate (f, "training.start");
  nl_test_training_wait_end (f);
  g_assert_cmpint (nl_training_page_get_state (f->page), ==, NL_TRAINING_FINISHED);
  run = nl_training_page_get_run (f->page);
  info = nl_project_get_run (f->p, run, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (info->device, ==, "cpu");
  g_assert_true (json_parser_load_from_data (parser, info->hparams_json, -1, &error));
  g_assert_no_error (error);
  g_assert_cmpstr (json_object_get_string_member (json_node_get_object (json_parser_get_root (parser)), "precision"),
                   ==, "bf16");
  nl_run_config_init (&rc);
  g_assert_true (nl_run_config_from_json (&rc, info->hparams_json, NULL));
  g_assert_cmpint (rc.precision, ==, NL_PRECISION_BF16);

  /* a fork shows its parent's precision and device, and keeps the device */
  nl_test_training_select (f, "precision", "fp16");
  nl_training_page_prefill_from_run (f->page, run);
  g_assert_true (nl_test_wait_until (nl_test_training_ready, f, 20000));
  g_assert_cmpstr (selected_item (f, "precision"), ==, "bf16");
  g_assert_cmpstr (selected_item (f, "device"), ==, cpu_title);
  g_assert_false (gtk_widget_get_sensitive (GTK_WIDGET (row)));
  nl_test_training_activate (f, "training.cancel-fork");
  g_assert_true (gtk_widget_get_sensitive (GTK_WIDGET (row)));
}

/* A new optimizer starts from its own defaults and shows only the rows it
 * uses; a stored run's settings shown in the form keep theirs. */
static void
test_optimizer_rows (Fixture *f, gconstpointer data)
{
  GtkWidget *beta1_row;

  g_assert_cmpfloat (gtk_spin_button_get_value (nl_test_training_spin (f, "lr")), ==, 0.1f);   /* SGD's, as the CLI's */
  gtk_spin_button_set_value (nl_test_training_spin (f, "clip-norm"), 2);
  nl_test_training_select (f, "optimizer", "RMSProp");
  nl_test_pump (10);
  g_assert_cmpfloat_with_epsilon (gtk_spin_button_get_value (nl_test_training_spin (f, "lr")), 0.001, 1e-9);
  g_assert_cmpfloat_with_epsilon (gtk_spin_button_get_value (nl_test_training_spin (f, "momentum")), 0.9, 1e-7);
  g_assert_cmpfloat_with_epsilon (gtk_spin_button_get_value (nl_test_training_spin (f, "epsilon")), 1e-7, 1e-12);
  /* not an optimizer default */
  g_assert_cmpfloat (gtk_spin_button_get_value (nl_test_training_spin (f, "clip-norm")), ==, 2);
  beta1_row = gtk_widget_get_ancestor (GTK_WIDGET (nl_test_training_spin (f, "beta1")), ADW_TYPE_PREFERENCES_ROW);
  g_assert_false (gtk_widget_get_visible (beta1_row));
  g_assert_true (gtk_widget_get_visible (gtk_widget_get_ancestor (GTK_WIDGET (nl_test_training_spin (f, "rho")),
                                                                  ADW_TYPE_PREFERENCES_ROW)));
  nl_test_training_select (f, "optimizer", "Adam");
  nl_test_pump (10);
  g_assert_true (gtk_widget_get_visible (beta1_row));
  g_assert_cmpfloat_with_epsilon (gtk_spin_button_get_value (nl_test_training_spin (f, "beta2")), 0.999, 1e-7);
  /* the ranges are the run settings' */
  {
    double lo, hi;
    gtk_spin_button_get_range (nl_test_training_spin (f, "epochs"), &lo, &hi);
    g_assert_cmpfloat (lo, ==, nl_run_config_find_field ("epochs")->min);
    g_assert_cmpfloat (hi, ==, nl_run_config_find_field ("epochs")->max);
    gtk_spin_button_get_range (nl_test_training_spin (f, "keep"), &lo, &hi);
    g_assert_cmpfloat (lo, ==, nl_run_config_find_field ("keep_last")->min);
    /* checkpoints by time: the setting's default and range, read into the policy */
    GtkSpinButton *interval = nl_test_training_spin (f, "checkpoint-interval");
    g_auto (NlRunConfig) policy = { 0 };
    gtk_spin_button_get_range (interval, &lo, &hi);
    g_assert_cmpfloat (lo, ==, 0);
    g_assert_cmpfloat (hi, ==, nl_run_config_find_field ("checkpoint_interval")->max);
    g_assert_cmpfloat (gtk_spin_button_get_value (interval), ==, 600);
    gtk_spin_button_set_value (interval, 30);
    nl_run_config_init (&policy);
    nl_checkpoint_group_get (NL_CHECKPOINT_GROUP (gtk_widget_get_ancestor (GTK_WIDGET (interval),
                                                                           NL_TYPE_CHECKPOINT_GROUP)), &policy);
    g_assert_cmpfloat (policy.checkpoint_interval, ==, 30);
  }
}

/* At 1280x800 the dashboard's right-most parts lie inside the window
 * (the form gives way); they were cut off at the right edge before. */
static void
test_fits_1280 (Fixture *f, gconstpointer data)
{
  NlTrainingPage *page = g_object_new (NL_TYPE_TRAINING_PAGE, NULL);
  GtkWindow *win = nl_test_show_in_window (GTK_WIDGET (page), 1280, 800);
  const char *ids[] = { "log_button", "eta_label", "event_log", "progress" };
  GtkWidget *parts[G_N_ELEMENTS (ids) + 1];
  graphene_rect_t r;

  nl_training_page_set_workspace (page, f->ws);
  for (int i = 0; i < 100 && nl_training_page_is_loading (page); i++)
    nl_test_pump (20);
  nl_test_pump (100);
  /* the window stayed 1280 wide: nothing forced it wider */
  g_assert_cmpint (gtk_widget_get_width (GTK_WIDGET (win)), ==, 1280);
  g_assert_cmpint (gtk_widget_get_height (GTK_WIDGET (win)), ==, 800);
  GtkWidget *dashboard = GTK_WIDGET (gtk_widget_get_template_child (GTK_WIDGET (page), NL_TYPE_TRAINING_PAGE,
                                                                  "dashboard"));
  g_assert_true (NL_IS_TRAINING_DASHBOARD (dashboard));
  for (gsize i = 0; i < G_N_ELEMENTS (ids); i++)
    parts[i] = GTK_WIDGET (gtk_widget_get_template_child (dashboard, NL_TYPE_TRAINING_DASHBOARD, ids[i]));
  parts[G_N_ELEMENTS (ids)] = GTK_WIDGET (nl_training_page_get_plot (page, "loss"));
  for (gsize i = 0; i < G_N_ELEMENTS (parts); i++)
    {
      g_assert_nonnull (parts[i]);
      g_assert_true (gtk_widget_get_mapped (parts[i]));
      g_assert_true (gtk_widget_compute_bounds (parts[i], GTK_WIDGET (win), &r));
      g_test_message ("%s: x %.0f .. %.0f, y %.0f .. %.0f", i < G_N_ELEMENTS (ids) ? ids[i] : "plot",
                      r.origin.x, r.origin.x + r.size.width, r.origin.y, r.origin.y + r.size.height);
      g_assert_cmpfloat (r.size.width, >, 0);
      g_assert_cmpfloat (r.origin.x, >=, 0);
      g_assert_cmpfloat (r.origin.x + r.size.width, <=, 1280);
      g_assert_cmpfloat (r.origin.y + r.size.height, <=, 800);
    }
  nl_training_page_set_workspace (page, NULL);
  gtk_window_destroy (win);
  nl_test_pump (20);
}

/* Closing the project while a run goes on stops it in the background;
 * at application shutdown nl_training_page_end_abandoned waits for that
 * run's worker, so the process never exits under it (it crashed in
 * oneDNN's exit handlers before): the run is then "stopped", not still
 * "running", and the project is whole. */
static void
test_abandoned_run_ends (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *status = NULL;
  gint64 run;

  nl_test_training_setup_run (f, "tiny16", 200);
  nl_test_training_activate (f, "training.start");
  g_assert_true (nl_test_wait_until (has_points, f, 60000));
  run = nl_training_page_get_run (f->page);
  g_assert_cmpint (run, >, 0);
  nl_training_page_set_workspace (f->page, NULL);
  nl_training_page_end_abandoned ();
  status = run_status (f, run);
  g_assert_cmpstr (status, ==, "stopped");
  g_assert_true (nl_project_check (f->p, &error));
  g_assert_no_error (error);
  nl_training_page_end_abandoned (); /* none left: returns at once */
}

/* The event log keeps the newest 1,000 rows, and a new run clears it. */
static void
test_event_log (void)
{
  NlEventLog *log = g_object_ref_sink (g_object_new (NL_TYPE_EVENT_LOG, NULL));
  GtkWidget *first;
  for (int i = 0; i < 1005; i++)
    {
      g_autofree char *m = g_strdup_printf ("event %d", i);
      nl_event_log_append (log, i == 1004 ? "ERROR" : "STATUS", m);
    }
  g_assert_cmpuint (nl_event_log_get_n_rows (log), ==, 1000);
  /* the oldest five went: the first row is event 5 */
  first = gtk_widget_get_first_child (GTK_WIDGET (gtk_widget_get_first_child (
    gtk_widget_get_first_child (gtk_widget_get_first_child (gtk_widget_get_first_child (GTK_WIDGET (log)))))));
  g_assert_nonnull (first);
  g_assert_nonnull (strstr (gtk_label_get_text (GTK_LABEL (gtk_list_box_row_get_child (GTK_LIST_BOX_ROW (first)))),
                            "event 5"));
  nl_event_log_clear (log);
  g_assert_cmpuint (nl_event_log_get_n_rows (log), ==, 0);
  g_object_unref (log);
}

int
main (int argc, char **argv)
{
  nl_test_gui_init (&argc, &argv);
#define ADD(name, fn) g_test_add ("/training-page/" name, Fixture, NULL, nl_test_training_setup, fn, \
                                  nl_test_training_teardown)
  ADD ("train", test_train);
  ADD ("pause-resume", test_pause_resume);
  ADD ("stop-and-resume", test_stop_and_resume);
  ADD ("failure", test_failure);
  ADD ("fork", test_fork);
  ADD ("schedule-preview", test_schedule_preview);
  ADD ("follow", test_follow);
  ADD ("device", test_device);
  ADD ("fits-1280x800", test_fits_1280);
  ADD ("optimizer-rows", test_optimizer_rows);
  ADD ("abandoned-run-ends", test_abandoned_run_ends);
#undef ADD
  g_test_add_func ("/event-log/rows", test_event_log);
  return g_test_run ();
}
