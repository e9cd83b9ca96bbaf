/* test-window.c — the main window: opening the sample project off the main
 * loop, pages, closing, a damaged or foreign file refused with the file
 * left untouched, and the project file choosers. Runs under Xvfb. */
#include "tests/nl-test-gui.h"
#include "tests/nl-test-util.h"
#include "ui/experiments/nl-experiments-page.h"
#include "ui/training/nl-training-page.h"
#include "ui/nl-window.h"
#include "ui/experiments/nl-run-row.h"
#include "ui/training/nl-sweep-dialog.h"
#include "ui/experiments/nl-sweep-view.h"

#include <string.h>

static gboolean
loaded (gpointer data)
{
  NlWindow *win = data;
  return nl_window_get_workspace (win) != NULL && !nl_window_is_busy (win);
}

static gboolean
idle_window (gpointer data)
{
  return !nl_window_is_busy (data);
}

static void
test_sample_project (void)
{
  g_autofree char *dir = g_dir_make_tmp ("netloom-win-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "sub", "sample.netloom", NULL);
  NlWindow *win = nl_window_new (NULL);
  static const char *const pages[] = { "network", "data", "training", "experiments" };

  gtk_window_set_default_size (GTK_WINDOW (win), 1280, 800);
  gtk_window_present (GTK_WINDOW (win));
  /* first start: the sample is created where asked, then opened */
  nl_window_open_project (win, path, NL_OPEN_SAMPLE);
  g_assert_true (nl_window_is_busy (win));
  g_assert_true (nl_test_wait_until (loaded, win, 20000));
  g_assert_true (g_file_test (path, G_FILE_TEST_IS_REGULAR));
  g_assert_cmpstr (nl_workspace_get_path (nl_window_get_workspace (win)), ==, path);
  g_assert_cmpstr (gtk_window_get_title (GTK_WINDOW (win)), ==, "sample");
  for (guint i = 0; i < G_N_ELEMENTS (pages); i++)
    {
      nl_window_show_page (win, pages[i]);
      nl_test_pump (30);
      g_assert_cmpstr (nl_window_get_page_name (win), ==, pages[i]);
      g_assert_nonnull (nl_window_get_page (win, pages[i]));
      g_assert_true (gtk_widget_get_mapped (nl_window_get_page (win, pages[i])));
    }
  g_assert_true (nl_test_wait_until (idle_window, win, 20000));
  /* the window draws something on every page */
  g_assert_cmpfloat (nl_test_drawn_fraction (GTK_WIDGET (win)), >, 0.01);

  gtk_widget_activate_action (GTK_WIDGET (win), "win.close-project", NULL);
  g_assert_null (nl_window_get_workspace (win));
  g_assert_cmpstr (gtk_window_get_title (GTK_WINDOW (win)), ==, "netloom");
  gtk_window_destroy (GTK_WINDOW (win));
  nl_test_remove_tree (dir);
}

static void
test_damaged_file_refused (void)
{
  g_autofree char *dir = g_dir_make_tmp ("netloom-win-XXXXXX", NULL);
  g_autofree char *bad = g_build_filename (dir, "notes.netloom", NULL);
  static const char garbage[] = "this is a text file, not a project\n";
  g_autofree char *after = NULL;
  gsize len;
  AdwMessageDialog *dlg = NULL;
  NlWindow *win = nl_window_new (NULL);

  g_assert_true (g_file_set_contents (bad, garbage, -1, NULL));
  gtk_window_present (GTK_WINDOW (win));
  nl_window_open_project (win, bad, NL_OPEN_EXISTING);
  g_assert_nonnull (dlg = nl_test_find_message_dialog (10000));
  /* one message naming the file */
  g_assert_nonnull (strstr (adw_message_dialog_get_heading (dlg), "notes.netloom"));
  g_assert_null (nl_window_get_workspace (win));
  g_assert_false (nl_window_is_busy (win));
  /* nothing written */
  g_assert_true (g_file_get_contents (bad, &after, &len, NULL));
  g_assert_cmpstr (after, ==, garbage);
  gtk_window_destroy (GTK_WINDOW (dlg));
  gtk_window_destroy (GTK_WINDOW (win));
  nl_test_remove_tree (dir);
}

/* Waits for the window's file chooser dialog; checks its kind. */
static GtkFileChooser *
wait_chooser (GtkFileChooserAction action, const char *title)
{
  GtkFileChooser *chooser = nl_test_wait_chooser (title, 10000);
  g_assert_cmpint (gtk_file_chooser_get_action (chooser), ==, action);
  return chooser;
}

/* The project choosers, answered through their dialogs: a new project
 * made where the user says, opened again, a cancel that opens nothing,
 * and a chooser that goes with its window. */
static void
test_project_choosers (void)
{
  g_autofree char *dir = g_dir_make_tmp ("netloom-win-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "made.netloom", NULL);
  g_autofree char *name = NULL;
  g_autoptr (GFile) folder = g_file_new_for_path (dir);
  g_autoptr (GFile) file = g_file_new_for_path (path);
  g_autoptr (GFile) made = g_file_get_child (folder, "made");
  NlWindow *win = nl_window_new (NULL);
  GtkFileChooser *chooser;

  gtk_window_present (GTK_WINDOW (win));
  /* New Project: the extension is added to the name given */
  gtk_widget_activate_action (GTK_WIDGET (win), "win.new-project", NULL);
  chooser = wait_chooser (GTK_FILE_CHOOSER_ACTION_SAVE, "New Project");
  name = gtk_file_chooser_get_current_name (chooser);
  g_assert_cmpstr (name, ==, "Untitled.netloom");
  nl_test_choose_file (chooser, made);
  g_assert_true (nl_test_wait_until (loaded, win, 20000));
  g_assert_cmpstr (nl_workspace_get_path (nl_window_get_workspace (win)), ==, path);
  g_assert_true (g_file_test (path, G_FILE_TEST_IS_REGULAR));
  g_assert_null (nl_test_find_window (GTK_TYPE_FILE_CHOOSER_DIALOG));
  gtk_widget_activate_action (GTK_WIDGET (win), "win.close-project", NULL);
  g_assert_null (nl_window_get_workspace (win));

  /* Open Project: that file */
  gtk_widget_activate_action (GTK_WIDGET (win), "win.open-project", NULL);
  chooser = wait_chooser (GTK_FILE_CHOOSER_ACTION_OPEN, "Open Project");
  nl_test_choose_file (chooser, file);
  g_assert_true (nl_test_wait_until (loaded, win, 20000));
  g_assert_cmpstr (nl_workspace_get_path (nl_window_get_workspace (win)), ==, path);
  gtk_widget_activate_action (GTK_WIDGET (win), "win.close-project", NULL);

  /* cancelled: nothing opens */
  gtk_widget_activate_action (GTK_WIDGET (win), "win.open-project", NULL);
  chooser = wait_chooser (GTK_FILE_CHOOSER_ACTION_OPEN, "Open Project");
  gtk_dialog_response (GTK_DIALOG (chooser), GTK_RESPONSE_CANCEL);
  nl_test_pump (100);
  g_assert_null (nl_test_find_window (GTK_TYPE_FILE_CHOOSER_DIALOG));
  g_assert_null (nl_window_get_workspace (win));
  g_assert_false (nl_window_is_busy (win));

  /* the window goes: so does its chooser */
  gtk_widget_activate_action (GTK_WIDGET (win), "win.open-project", NULL);
  wait_chooser (GTK_FILE_CHOOSER_ACTION_OPEN, "Open Project");
  gtk_window_destroy (GTK_WINDOW (win));
  nl_test_pump (100);
  g_assert_null (nl_test_find_window (GTK_TYPE_FILE_CHOOSER_DIALOG));
  nl_test_remove_tree (dir);
}


static gboolean
training_ended (gpointer data)
{
  NlTrainingState s = nl_training_page_get_state (data);
  return s == NL_TRAINING_FINISHED || s == NL_TRAINING_FAILED || s == NL_TRAINING_STOPPED;
}

typedef struct {
  NlExperimentsPage *page;
  gint64 run;
} RowWait;

static gboolean
table_shows_finished_run (gpointer data)
{
  RowWait *w = data;
  GListModel *m = G_LIST_MODEL (nl_experiments_page_get_model (w->page));
  for (guint i = 0; i < g_list_model_get_n_items (m); i++)
    {
      g_autoptr (NlRunRow) row = g_list_model_get_item (m, i);
      if (nl_run_row_get_id (row) == w->run && g_strcmp0 (nl_run_row_get_status (row), "finished") == 0)
        return TRUE;
    }
  return FALSE;
}

static void
select_combo (NlTrainingPage *page, const char *field, const char *item)
{
  AdwComboRow *row = ADW_COMBO_ROW (nl_training_page_get_form_widget (page, field));
  GListModel *m = adw_combo_row_get_model (row);
  for (guint i = 0; i < g_list_model_get_n_items (m); i++)
    {
      g_autoptr (GtkStringObject) o = g_list_model_get_item (m, i);
      if (g_strcmp0 (gtk_string_object_get_string (o), item) == 0)
        {
          adw_combo_row_set_selected (row, i);
          return;
        }
    }
  g_error ("%s has no item '%s'", field, item);
}

static gboolean
training_page_ready (gpointer data)
{
  return !nl_training_page_is_loading (data);
}

/* A window on a sample project with a "tiny" pipeline of 256 synthetic
 * images in DIR, on the Training page with mlp, the pipeline and EPOCHS
 * chosen. */
static NlWindow *
open_training_window (const char *dir, int workers, int epochs, NlTrainingPage **training)
{
  g_autofree char *path = g_build_filename (dir, "p.netloom", NULL);
  g_autofree char *data_dir = g_build_filename (dir, "idx", NULL);
  g_autofree char *spec = g_strdup_printf ("mnist:%s", data_dir);
  NlPipelineInfo pl = { .name = "tiny", .dataset_spec = spec, .batch_size = 32, .workers = workers };
  NlWindow *win = nl_window_new (NULL);

  g_assert_cmpint (g_mkdir_with_parents (data_dir, 0755), ==, 0);
  nl_test_write_idx_dataset_sized (data_dir, 28, 256, 64);
  {
    g_autoptr (NlProject) p = NULL;
    g_assert_true (nl_project_create_sample (path, NULL));
    p = nl_project_open (path, FALSE, NULL);
    g_assert_cmpint (nl_project_save_pipeline (p, &pl, NULL), >, 0);
  }
  gtk_window_set_default_size (GTK_WINDOW (win), 1280, 800);
  gtk_window_present (GTK_WINDOW (win));
  nl_window_open_project (win, path, NL_OPEN_EXISTING);
  g_assert_true (nl_test_wait_until (loaded, win, 20000));
  nl_window_show_page (win, "training");
  *training = NL_TRAINING_PAGE (nl_window_get_page (win, "training"));
  g_assert_true (nl_test_wait_until (training_page_ready, *training, 20000));
  select_combo (*training, "network", "mlp");
  select_combo (*training, "pipeline", "tiny");
  gtk_spin_button_set_value (GTK_SPIN_BUTTON (nl_training_page_get_form_widget (*training, "epochs")), epochs);
  nl_test_pump (20);
  return win;
}

/* The whole loop in one window: a run started on the Training page is
 * stored and shows up, finished, in the Experiments table. */
static void
test_train_then_compare (void)
{
  g_autofree char *dir = g_dir_make_tmp ("netloom-win-XXXXXX", NULL);
  NlTrainingPage *training;
  NlWindow *win = open_training_window (dir, 1, 2, &training);
  RowWait wait = { 0 };
  g_autoptr (NlRunInfo) info = NULL;

  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (training), "training.start", NULL));
  g_assert_true (nl_test_wait_until (training_ended, training, 120000));
  g_assert_cmpint (nl_training_page_get_state (training), ==, NL_TRAINING_FINISHED);
  wait.run = nl_training_page_get_run (training);
  g_assert_cmpint (wait.run, >, 0);
  info = nl_project_get_run (nl_workspace_get_project (nl_window_get_workspace (win)), wait.run, NULL);
  g_assert_cmpstr (info->status, ==, "finished");
  g_assert_cmpint (info->epochs_done, ==, 2);

  nl_window_show_page (win, "experiments");
  wait.page = NL_EXPERIMENTS_PAGE (nl_window_get_page (win, "experiments"));
  g_assert_true (nl_test_wait_until (table_shows_finished_run, &wait, 20000));
  gtk_window_destroy (GTK_WINDOW (win));
  nl_test_remove_tree (dir);
}

static gboolean
sweep_view_done (gpointer data)
{
  NlSweepView *view = data;
  return !nl_sweep_view_is_running (view) && nl_sweep_plot_get_n_drawn (nl_sweep_view_get_parallel (view)) == 3;
}

/* Sweep… on the training page: the dialog stores a 3-trial sweep of the
 * form's settings, the window shows the Experiments page's sweep view,
 * which runs it and fills its parallel coordinates. */
static void
test_sweep_from_training_page (void)
{
  g_autofree char *dir = g_dir_make_tmp ("netloom-win-XXXXXX", NULL);
  NlTrainingPage *training;
  NlWindow *win = open_training_window (dir, 0, 1, &training);
  NlSweepDialog *dialog;
  NlSweepView *view;
  g_autoptr (NlSweepInfo) info = NULL;
  g_autoptr (GError) error = NULL;
  gint64 sweep;

  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (training), "training.sweep", NULL));
  dialog = NL_SWEEP_DIALOG (nl_test_wait_window (NL_TYPE_SWEEP_DIALOG, 5000));
  g_assert_nonnull (dialog);
  g_assert_true (nl_sweep_dialog_set_vary (dialog, "lr", TRUE, "log:1e-3:1e-1"));
  nl_sweep_dialog_set_network_params (dialog, "fc1.units=int:8:32");
  nl_sweep_dialog_set_trials (dialog, 3);
  sweep = nl_sweep_dialog_start (dialog, &error);
  g_assert_no_error (error);
  g_assert_cmpint (sweep, >, 0);

  g_assert_cmpstr (nl_window_get_page_name (win), ==, "experiments");
  view = nl_experiments_page_get_sweep_view (NL_EXPERIMENTS_PAGE (nl_window_get_page (win, "experiments")));
  g_assert_cmpint (nl_sweep_view_get_sweep (view), ==, sweep);
  g_assert_true (nl_test_wait_until (sweep_view_done, view, 120000));
  info = nl_project_get_sweep (nl_workspace_get_project (nl_window_get_workspace (win)), sweep, NULL);
  g_assert_cmpstr (info->status, ==, "finished");
  g_assert_true (gtk_widget_get_mapped (GTK_WIDGET (nl_sweep_view_get_parallel (view))));
  g_assert_cmpfloat (nl_test_drawn_fraction (GTK_WIDGET (nl_sweep_view_get_parallel (view))), >, 0.005);
  gtk_window_destroy (GTK_WINDOW (win));
  nl_test_remove_tree (dir);
}

int
main (int argc, char **argv)
{
  nl_test_gui_init (&argc, &argv);
  g_test_add_func ("/window/sample-project", test_sample_project);
  g_test_add_func ("/window/damaged-file-refused", test_damaged_file_refused);
  g_test_add_func ("/window/train-then-compare", test_train_then_compare);
  g_test_add_func ("/window/sweep-from-training-page", test_sweep_from_training_page);
  g_test_add_func ("/window/project-choosers", test_project_choosers);
  return g_test_run ();
}
