/* test-sweep-view.c — the Experiments page's sweep view under Xvfb: a
 * 3-trial sweep of a tiny network started with Continue Sweep fills the
 * parallel coordinates (and the scatter and the trial table) live; a brush
 * on the metric's axis filters the table; Stop Sweep stops a sweep that
 * Continue Sweep then finishes. The plot alone: axes, best, pruned. */
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#include "engine/session/nl-sweep.h"
#include "tests/nl-test-gui.h"
#include "tests/nl-test-util.h"
#include "ui/experiments/nl-experiments-page.h"
#include "ui/training/nl-sweep-dialog.h"
#include "ui/experiments/nl-sweep-view.h"

#define WAIT_MS 120000

static NlNetwork *
tiny_network (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *path = g_build_filename (g_getenv ("NETLOOM_SOURCE_DIR"), "data", "networks", "mlp.json", NULL);
  NlNetwork *net = nl_network_load_file (path, &error);
  g_assert_no_error (error);
  return net;
}

static gboolean
not_running (gpointer data)
{
  return !nl_sweep_view_is_running (data);
}

typedef struct {
  NlSweepView *view;
  NlProject *p;
  gint64 sweep;
} Running;

/* The sweep runs and one of its trials has started training. */
static gboolean
trial_running (gpointer data)
{
  Running *r = data;
  g_autoptr (GPtrArray) runs = nl_project_list_sweep_runs (r->p, r->sweep, NULL);
  for (guint i = 0; runs && i < runs->len; i++)
    if (!g_strcmp0 (((NlRunInfo *) g_ptr_array_index (runs, i))->status, "running"))
      return nl_sweep_view_is_running (r->view);
  return FALSE;
}

static gint64
make_sweep (NlProject *p, const char *data_dir, int trials, int epochs)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (NlNetwork) net = tiny_network ();
  g_auto (NlRunConfig) cfg = { 0 };
  g_autofree char *dataset = g_strdup_printf ("mnist:%s", data_dir);
  gint64 id;

  nl_test_tiny_train_config (&cfg, dataset);
  cfg.epochs = epochs;
  cfg.threads = 2;
  id = nl_sweep_create (p, NULL, net, &cfg, "lr=log:1e-3:1e-1,fc1.units=int:8:32", "random", trials,
                        "test_accuracy", TRUE, NULL, 1, &error);
  g_assert_no_error (error);
  return id;
}

static void
test_view (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("netloom-sweep-view-XXXXXX", &error);
  g_autofree char *data_dir = g_build_filename (dir, "data", NULL);
  g_autofree char *path = g_build_filename (dir, "p.netloom", NULL);
  NlProject *p;
  NlWorkspace *ws;
  NlExperimentsPage *page;
  NlSweepView *view;
  NlSweepPlot *parallel;
  g_autoptr (NlSweepInfo) info = NULL;
  gint64 first, second;
  GtkWindow *win;
  int metric_axis;

  g_assert_no_error (error);
  g_mkdir_with_parents (data_dir, 0700);
  nl_test_write_idx_dataset_sized (data_dir, 28, 256, 64);   /* the mlp takes 28 x 28 */
  p = nl_project_open (path, TRUE, &error);
  g_assert_no_error (error);
  first = make_sweep (p, data_dir, 3, 2);
  ws = nl_workspace_new (p);

  /* the page shows its sweep view beside the runs */
  page = g_object_new (NL_TYPE_EXPERIMENTS_PAGE, NULL);
  win = nl_test_show_in_window (GTK_WIDGET (page), 1200, 900);
  nl_experiments_page_set_workspace (page, ws);
  view = nl_experiments_page_get_sweep_view (page);
  g_assert_nonnull (view);
  g_assert_cmpint (nl_sweep_view_get_sweep (view), ==, first);
  parallel = nl_sweep_view_get_parallel (view);
  g_assert_cmpint (nl_sweep_plot_get_n_axes (parallel), ==, 3);   /* lr, fc1.units, test_accuracy */
  g_assert_cmpint (nl_sweep_plot_get_n_drawn (parallel), ==, 0);
  gtk_window_destroy (win);

  /* the view itself, large: Continue Sweep runs the 3 trials */
  view = NL_SWEEP_VIEW (nl_sweep_view_new ());
  win = nl_test_show_in_window (GTK_WIDGET (view), 1200, 900);
  nl_sweep_view_set_workspace (view, ws);
  nl_sweep_view_show_sweep (view, first);
  parallel = nl_sweep_view_get_parallel (view);
  g_assert_true (nl_sweep_view_continue (view, &error));
  g_assert_no_error (error);
  g_assert_true (nl_sweep_view_is_running (view));
  g_assert_false (nl_sweep_view_continue (view, &error));   /* once at a time */
  g_clear_error (&error);
  g_assert_true (nl_test_wait_until (not_running, view, WAIT_MS));
  g_assert_cmpint (nl_sweep_plot_get_n_drawn (parallel), ==, 3);
  g_assert_cmpint (nl_sweep_plot_get_n_drawn (nl_sweep_view_get_scatter (view)), ==, 3);
  g_assert_cmpuint (nl_sweep_view_get_n_listed (view), ==, 3);
  g_assert_cmpint (nl_sweep_plot_get_best (parallel), >=, 0);
  info = nl_project_get_sweep (p, first, &error);
  g_assert_cmpstr (info->status, ==, "finished");
  nl_test_pump (100);
  g_assert_cmpfloat (nl_test_drawn_fraction (GTK_WIDGET (parallel)), >, 0.005);
  g_assert_cmpfloat (nl_test_drawn_fraction (GTK_WIDGET (nl_sweep_view_get_scatter (view))), >, 0.002);

  /* brushing the metric's top keeps the best trial and drops the worst */
  metric_axis = nl_sweep_plot_get_n_axes (parallel) - 1;
  for (guint i = 0; i < 3; i++)
    {
      double t = nl_sweep_plot_axis_fraction (parallel, i, metric_axis);
      g_assert_cmpfloat (t, >=, 0);
      g_assert_cmpfloat (t, <=, 1);
    }
  nl_sweep_plot_set_brush (parallel, metric_axis, 0.99, 1.0);
  g_assert_true (nl_sweep_plot_trial_selected (parallel, (guint) nl_sweep_plot_get_best (parallel)));
  g_assert_cmpuint (nl_sweep_view_get_n_listed (view), <, 3);
  g_assert_cmpuint (nl_sweep_view_get_n_listed (view), >=, 1);
  nl_sweep_plot_set_brush (parallel, metric_axis, 1, 0);
  g_assert_cmpuint (nl_sweep_view_get_n_listed (view), ==, 3);

  /* Stop Sweep, then Continue Sweep to the end */
  second = make_sweep (p, data_dir, 4, 3);
  nl_sweep_view_show_sweep (view, second);
  g_assert_cmpint (nl_sweep_view_get_sweep (view), ==, second);
  g_assert_true (nl_sweep_view_continue (view, &error));
  Running r = { view, p, second };
  g_assert_true (nl_test_wait_until (trial_running, &r, WAIT_MS));
  nl_sweep_view_stop (view);
  g_assert_true (nl_test_wait_until (not_running, view, WAIT_MS));
  g_clear_pointer (&info, nl_sweep_info_free);
  info = nl_project_get_sweep (p, second, &error);
  g_assert_cmpstr (info->status, ==, "stopped");
  g_assert_true (nl_sweep_view_continue (view, &error));
  g_assert_true (nl_test_wait_until (not_running, view, WAIT_MS));
  g_clear_pointer (&info, nl_sweep_info_free);
  info = nl_project_get_sweep (p, second, &error);
  g_assert_cmpstr (info->status, ==, "finished");
  g_assert_cmpint (nl_sweep_plot_get_n_drawn (parallel), ==, 4);

  gtk_window_destroy (win);
  g_object_unref (ws);
  nl_test_pump (20);
  nl_test_remove_tree (dir);
}

/* The plot from given trials: axes in their scales, best, pruned, brushes. */
static void
test_plot (void)
{
  GtkWidget *plot = nl_sweep_plot_new (NL_SWEEP_PLOT_PARALLEL);
  NlSweepPlot *sp = NL_SWEEP_PLOT (plot);
  g_autoptr (GPtrArray) trials = g_ptr_array_new_with_free_func ((GDestroyNotify) nl_sweep_trial_free);
  static const struct {
    const char *params, *status;
    double value;
  } rows[] = {
    { "{\"lr\":0.001,\"optimizer\":\"sgd\"}", "finished", 0.80 },
    { "{\"lr\":0.01,\"optimizer\":\"adam\"}", "finished", 0.90 },
    { "{\"lr\":0.1,\"optimizer\":\"adam\"}", "pruned", 0.70 },
    { "{\"lr\":0.1,\"optimizer\":\"sgd\"}", "running", NAN },
  };
  GtkWindow *win;

  for (gsize i = 0; i < G_N_ELEMENTS (rows); i++)
    {
      NlSweepTrial *t = g_new0 (NlSweepTrial, 1);
      *t = (NlSweepTrial) { .trial = (int) i, .run = (gint64) i + 1, .status = g_strdup (rows[i].status),
                            .params_json = g_strdup (rows[i].params), .value = rows[i].value, .epochs = 1 };
      g_ptr_array_add (trials, t);
    }
  win = nl_test_show_in_window (plot, 800, 400);
  nl_sweep_plot_set_trials (sp, "lr=log:1e-3:1e-1,optimizer=sgd|adam", trials, "test_accuracy", TRUE);
  g_assert_cmpint (nl_sweep_plot_get_n_axes (sp), ==, 3);
  g_assert_cmpint (nl_sweep_plot_get_n_drawn (sp), ==, 3);   /* the running one has no value yet */
  g_assert_cmpint (nl_sweep_plot_get_best (sp), ==, 1);
  /* log axis: 0.01 is half way; choices at the ends; the metric min..max */
  g_assert_cmpfloat_with_epsilon (nl_sweep_plot_axis_fraction (sp, 1, 0), 0.5, 1e-9);
  g_assert_cmpfloat (nl_sweep_plot_axis_fraction (sp, 1, 1), ==, 1);
  g_assert_cmpfloat_with_epsilon (nl_sweep_plot_axis_fraction (sp, 0, 2), 0.5, 1e-9);
  g_assert_true (isnan (nl_sweep_plot_axis_fraction (sp, 3, 2)));
  g_assert_cmpfloat (nl_test_drawn_fraction (plot), >, 0.005);
  /* a brush on optimizer = adam */
  nl_sweep_plot_set_brush (sp, 1, 0.9, 1);
  g_assert_false (nl_sweep_plot_trial_selected (sp, 0));
  g_assert_true (nl_sweep_plot_trial_selected (sp, 1));
  g_assert_true (nl_sweep_plot_trial_selected (sp, 2));
  /* the trials again (a live update): the brush stays */
  nl_sweep_plot_set_trials (sp, "lr=log:1e-3:1e-1,optimizer=sgd|adam", trials, "test_accuracy", TRUE);
  g_assert_false (nl_sweep_plot_trial_selected (sp, 0));
  gtk_window_destroy (win);
}

static void
on_run_sweep (NlWorkspace *ws, gint64 sweep, gint64 *out)
{
  *out = sweep;
}

/* Sweep…: the form's settings with vary toggles become a stored sweep,
 * handed to the window to run; bad ranges are one message, nothing stored. */
static void
test_dialog (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("netloom-sweep-dialog-XXXXXX", &error);
  g_autofree char *path = g_build_filename (dir, "p.netloom", NULL), *net_json = NULL, *space = NULL;
  g_autofree char *dataset = g_strdup_printf ("mnist:%s", dir);
  g_autoptr (NlNetwork) net = tiny_network ();
  g_autoptr (GPtrArray) sweeps = NULL;
  g_autoptr (NlSweepInfo) info = NULL;
  g_auto (NlRunConfig) base = { 0 };
  NlPipelineInfo pl = { .name = (char *) "digits", .dataset_spec = dataset, .batch_size = 32, .workers = 0 };
  NlSweepDialog *dialog;
  NlProject *p = nl_project_open (path, TRUE, &error);
  NlWorkspace *ws;
  gint64 requested = 0, id;

  g_assert_no_error (error);
  net_json = nl_network_to_json (net);
  g_assert_cmpint (nl_project_save_network (p, "mlp", net_json, &error), >, 0);
  g_assert_cmpint (nl_project_save_pipeline (p, &pl, &error), >, 0);
  ws = nl_workspace_new (p);
  g_signal_connect (ws, "run-sweep", G_CALLBACK (on_run_sweep), &requested);
  nl_test_tiny_train_config (&base, dataset);
  base.optim.lr = 0.01f;

  dialog = nl_sweep_dialog_new (ws, "mlp", "digits", &base);
  gtk_window_present (GTK_WINDOW (dialog));
  /* the strategy list is the strategy table, its first row chosen */
  {
    int n;
    const NlSweepStrategy *strategies = nl_sweep_strategies (&n);
    AdwComboRow *row = ADW_COMBO_ROW (gtk_widget_get_template_child (GTK_WIDGET (dialog), NL_TYPE_SWEEP_DIALOG,
                                                                     "strategy"));
    GListModel *model = adw_combo_row_get_model (row);
    g_assert_cmpuint (g_list_model_get_n_items (model), ==, n);
    for (int i = 0; i < n; i++)
      {
        g_autoptr (GtkStringObject) item = g_list_model_get_item (model, i);
        g_assert_cmpstr (gtk_string_object_get_string (item), ==, strategies[i].title);
      }
    g_assert_cmpuint (adw_combo_row_get_selected (row), ==, 0);
  }
  /* nothing varies yet */
  g_assert_cmpint (nl_sweep_dialog_start (dialog, &error), ==, 0);
  g_assert_cmpstr (error->message, ==, "turn on “vary” for at least one setting");
  g_clear_error (&error);
  /* the lr row starts from a decade either side of the form's rate */
  g_assert_true (nl_sweep_dialog_set_vary (dialog, "lr", TRUE, NULL));
  space = nl_sweep_dialog_get_space (dialog);
  g_assert_cmpstr (space, ==, "lr=log:0.001:0.1");
  g_assert_false (nl_sweep_dialog_set_vary (dialog, "dataset", TRUE, NULL));
  /* the schedule and the augmentation vary as choice lists of their
   * specs, from the form's own (none here) */
  g_assert_true (nl_sweep_dialog_set_vary (dialog, "lr_schedule", TRUE, NULL));
  g_assert_true (nl_sweep_dialog_set_vary (dialog, "augment", TRUE, NULL));
  g_free (space);
  space = nl_sweep_dialog_get_space (dialog);
  g_assert_cmpstr (space, ==, "lr=log:0.001:0.1,lr_schedule=constant|cosine|poly,augment=to-tensor|flip");
  /* a bad spec: one message naming the key, nothing stored */
  nl_sweep_dialog_set_vary (dialog, "augment", TRUE, "flip|twirl");
  g_assert_cmpint (nl_sweep_dialog_start (dialog, &error), ==, 0);
  g_assert_true (g_str_has_prefix (error->message, "--space: augment: "));
  g_clear_error (&error);
  nl_sweep_dialog_set_vary (dialog, "lr_schedule", FALSE, NULL);
  nl_sweep_dialog_set_vary (dialog, "augment", FALSE, NULL);
  /* a bad range: one message naming the key, nothing stored */
  nl_sweep_dialog_set_vary (dialog, "momentum", TRUE, "uniform:0.5:2");
  g_assert_cmpint (nl_sweep_dialog_start (dialog, &error), ==, 0);
  g_assert_true (g_str_has_prefix (error->message, "--space: momentum: momentum must be in [0, 1), not 2"));
  g_clear_error (&error);
  nl_sweep_dialog_set_vary (dialog, "momentum", FALSE, NULL);
  nl_sweep_dialog_set_network_params (dialog, "fc9.units=int:8:16");
  g_assert_cmpint (nl_sweep_dialog_start (dialog, &error), ==, 0);
  g_assert_true (g_str_has_prefix (error->message, "--space: fc9.units: the network mlp has no node 'fc9'"));
  g_clear_error (&error);
  sweeps = nl_project_list_sweeps (p, &error);
  g_assert_cmpuint (sweeps->len, ==, 0);
  g_assert_cmpint (requested, ==, 0);

  nl_sweep_dialog_set_network_params (dialog, "fc1.units=int:8:16");
  nl_sweep_dialog_set_trials (dialog, 3);
  nl_sweep_dialog_set_prune (dialog, TRUE);
  id = nl_sweep_dialog_start (dialog, &error);
  g_assert_no_error (error);
  g_assert_cmpint (id, >, 0);
  g_assert_cmpint (requested, ==, id);
  info = nl_project_get_sweep (p, id, &error);
  g_assert_cmpstr (info->space, ==, "lr=log:0.001:0.1,fc1.units=int:8:16");
  g_assert_cmpstr (info->strategy, ==, "random");
  g_assert_cmpstr (info->metric, ==, "test_accuracy");
  g_assert_true (info->maximize);
  g_assert_cmpstr (info->prune, ==, "asha:eta=3,min_epochs=1");
  g_assert_cmpint (info->trials, ==, 3);
  g_assert_cmpstr (info->network_name, ==, "mlp");
  /* the pipeline's batch size is in the base settings */
  g_assert_nonnull (strstr (info->hparams_json, "\"batch_size\":32"));
  nl_test_pump (20);
  g_object_unref (ws);
  nl_test_remove_tree (dir);
}

int
main (int argc, char **argv)
{
  nl_test_gui_init (&argc, &argv);
  g_test_add_func ("/sweep-view/plot", test_plot);
  g_test_add_func ("/sweep-view/view", test_view);
  g_test_add_func ("/sweep-view/dialog", test_dialog);
  return g_test_run ();
}
