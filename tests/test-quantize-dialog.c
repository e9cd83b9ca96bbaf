/* test-quantize-dialog.c — "Quantize…" on the Experiments page through its
 * real widgets, on a run trained here (a small Conv2D + Dense network on a
 * generated 20x20 10-class IDX dataset): the dialog's options (the method
 * list is the calibrator's table), a quantization in the background until
 * its result shows (one range-plot row per calibration point of the
 * network's INT8 executor, the accuracies and confusion matrices of the
 * result, fp32 agreeing with an independent evaluation of the checkpoint,
 * the INT8 model stored and listed), and an error (more calibration
 * samples than the training split has) shown in the dialog with nothing
 * stored; the runs table's INT8 column; a stored model's export as QDQ
 * ONNX from its row, and its evaluation in the evaluation window (INT8 and
 * fp32). Runs under Xvfb.
 *
 * NL_TEST_SCREENSHOT_DIR=DIR saves the finished dialog, its list of INT8
 * models and the INT8 evaluation window as DIR/quantize-dialog.png,
 * quantize-dialog-models.png and evaluation-int8.png. */
#include <math.h>
#include <string.h>

#include "engine/formats/onnx/nl-onnx-export.h"
#include "engine/infer/nl-infer-net.h"
#include "engine/session/nl-evaluate.h"
#include "engine/session/nl-run-model.h"
#include "tests/nl-test-gui.h"
#include "tests/nl-test-util.h"
#include "ui/experiments/nl-confusion-matrix.h"
#include "ui/experiments/nl-evaluation-view.h"
#include "ui/experiments/nl-evaluation-window.h"
#include "ui/experiments/nl-experiments-page.h"
#include "ui/experiments/nl-quantize-dialog.h"
#include "ui/experiments/nl-run-row.h"
#include "ui/nl-screenshot.h"
#include "ui/widgets/nl-onnx-export-dialog.h"
#include "ui/widgets/nl-range-plot.h"

/* generous: the machine may be busy */
#define WAIT_MS 120000
#define N_TRAIN 300
#define N_TEST 100

static char *data_dir, *work_dir;
static NlWorkspace *workspace;
static gint64 run_id;

static guint
n_int8_models (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GArray) models = nl_project_list_int8_models (nl_workspace_get_project (workspace), run_id, &error);
  g_assert_no_error (error);
  return models->len;
}

static guint
n_list_rows (GtkWidget *list)
{
  guint n = 0;
  for (GtkWidget *c = gtk_widget_get_first_child (list); c; c = gtk_widget_get_next_sibling (c))
    n++;
  return n;
}

/* The calibration points of the run's network as the INT8 executor sees
 * them: an fp32 compile of the checkpoint's model. */
static GPtrArray *
executor_points (int epoch)
{
  g_autoptr (GError) error = NULL;
  g_auto (NlRunModel) m = { 0 };
  g_autofree char *which = g_strdup_printf ("%d", epoch);
  g_autoptr (NlInferNet) net = NULL;
  NlInferOptions opts = { .batch = 1, .mode = NL_INFER_FP32 };
  GPtrArray *points = g_ptr_array_new_with_free_func (g_free);
  g_assert_true (nl_run_model_load (&m, nl_workspace_get_project (workspace), run_id, which, NULL, FALSE, &error));
  g_assert_no_error (error);
  net = nl_infer_net_new (m.model, &opts, &error);
  g_assert_no_error (error);
  for (const char *const *p = nl_infer_net_points (net); *p; p++)
    g_ptr_array_add (points, g_strdup (*p));
  return points;
}

/* Opens the dialog the way a person does: select the run, Quantize…. */
static NlQuantizeDialog *
open_dialog (NlExperimentsPage *page)
{
  GtkWindow *dlg;
  nl_experiments_page_select_runs (page, &run_id, 1);
  nl_test_pump (20);
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (page), "exp.quantize", NULL));
  dlg = nl_test_wait_window (NL_TYPE_QUANTIZE_DIALOG, WAIT_MS);
  g_assert_nonnull (dlg);
  return NL_QUANTIZE_DIALOG (dlg);
}

static gboolean
finished (gpointer data)
{
  NlQuantizeDialog *dlg = data;
  return !nl_quantize_dialog_is_running (dlg) && !nl_workspace_is_busy (workspace);
}

static gboolean
loaded (gpointer data)
{
  return !nl_experiments_page_is_loading (data) && g_list_model_get_n_items (
                                                       G_LIST_MODEL (nl_experiments_page_get_model (data))) > 0;
}

static NlExperimentsPage *
show_page (GtkWindow **win)
{
  NlExperimentsPage *page = g_object_new (NL_TYPE_EXPERIMENTS_PAGE, NULL);
  *win = nl_test_show_in_window (GTK_WIDGET (page), 1200, 800);
  nl_experiments_page_set_workspace (page, workspace);
  g_assert_true (nl_test_wait_until (loaded, page, WAIT_MS));
  return page;
}

static void
close_page (NlExperimentsPage *page, GtkWindow *win)
{
  nl_experiments_page_set_workspace (page, NULL);
  gtk_window_destroy (win);
  nl_test_pump (20);
}

typedef struct {
  NlExperimentsPage *page;
  double want;
} RowWait;

/* The runs table's row shows the INT8 model (after the refresh its
 * notification started). */
static gboolean
row_shows_int8 (gpointer data)
{
  RowWait *w = data;
  g_autoptr (NlRunRow) row = g_list_model_get_item (G_LIST_MODEL (nl_experiments_page_get_model (w->page)), 0);
  return row && nl_run_row_get_int8_accuracy (row) == w->want;
}

static void
check_accuracy_label (NlQuantizeDialog *dlg, gboolean int8, double acc)
{
  g_autofree char *want = g_strdup_printf ("%.2f %%", acc * 100);
  g_assert_cmpstr (nl_quantize_dialog_get_accuracy_text (dlg, int8), ==, want);
}

/* The matrix shows the result's counts; they add up to the test split. */
static void
check_matrix (NlQuantizeDialog *dlg, gboolean int8, const NlQuantizeResult *r)
{
  NlConfusionMatrix *m = NL_CONFUSION_MATRIX (nl_quantize_dialog_get_matrix (dlg, int8));
  const gint64 *want = int8 ? r->int8_confusion : r->fp32_confusion;
  int64_t total = 0;
  g_assert_cmpint (nl_confusion_matrix_get_n_classes (m), ==, r->n_classes);
  for (int i = 0; i < r->n_classes; i++)
    for (int j = 0; j < r->n_classes; j++)
      {
        g_assert_cmpint (nl_confusion_matrix_get_count (m, i, j), ==, want[i * r->n_classes + j]);
        total += want[i * r->n_classes + j];
      }
  g_assert_cmpint (total, ==, N_TEST);
}

static void
maybe_screenshot (GtkWidget *w, const char *name)
{
  const char *dir = g_getenv ("NL_TEST_SCREENSHOT_DIR");
  g_autofree char *path = dir ? g_build_filename (dir, name, NULL) : NULL;
  g_autoptr (GError) error = NULL;
  if (!path)
    return;
  /* past the stacks' crossfades */
  nl_test_pump (600);
  if (!nl_widget_save_png (w, path, &error))
    g_test_message ("screenshot %s: %s", path, error->message);
}

static void
test_result (void)
{
  GtkWindow *win;
  NlExperimentsPage *page = show_page (&win);
  NlQuantizeDialog *dlg = open_dialog (page);
  GtkWidget *plot = nl_quantize_dialog_get_range_plot (dlg);
  guint before = n_int8_models ();
  const NlQuantizeResult *r;
  g_autoptr (GPtrArray) points = NULL;
  g_autoptr (NlEvaluation) ev = NULL;
  g_autoptr (GError) error = NULL;
  g_autoptr (GArray) models = NULL;
  g_autofree char *epoch = NULL;
  const NlInt8ModelInfo *stored;

  /* the options at first, and the method list is the calibrator's table */
  g_assert_cmpint (nl_quantize_dialog_get_calibration_samples (dlg), ==, 512);
  g_assert_cmpstr (nl_quantize_dialog_get_checkpoint (dlg), ==, "best");
  for (int m = 0; m < NL_QUANT_METHOD_COUNT; m++)
    {
      nl_quantize_dialog_set_method (dlg, (NlQuantMethod) m);
      g_assert_cmpint (nl_quantize_dialog_get_method (dlg), ==, m);
    }
  nl_quantize_dialog_set_calibration_samples (dlg, 64);
  nl_quantize_dialog_set_method (dlg, NL_QUANT_ENTROPY);
  nl_quantize_dialog_start (dlg);
  g_assert_true (nl_quantize_dialog_is_running (dlg));
  g_assert_true (nl_test_wait_until (finished, dlg, WAIT_MS));
  g_assert_null (nl_quantize_dialog_get_error (dlg));
  g_assert_nonnull (r = nl_quantize_dialog_get_result (dlg));
  g_assert_cmpint (r->table->calibration_samples, ==, 64);
  g_assert_cmpint (r->table->method, ==, NL_QUANT_ENTROPY);

  /* one plot row per calibration point, in the executor's order */
  points = executor_points (r->epoch);
  g_assert_cmpint (nl_range_plot_get_n_rows (NL_RANGE_PLOT (plot)), ==, (int) r->table->ranges->len);
  g_assert_cmpint (nl_range_plot_get_n_rows (NL_RANGE_PLOT (plot)), ==, (int) points->len);
  for (guint i = 0; i < points->len; i++)
    {
      const NlQuantRange *row = nl_range_plot_get_row (NL_RANGE_PLOT (plot), (int) i);
      g_assert_cmpstr (row->point, ==, g_ptr_array_index (points, i));
      g_assert_true (row->threshold > 0 && row->min <= row->max);
      g_assert_true (row->is_unsigned == (row->min >= 0));
      /* its tooltip says which kind of 8 bits */
      {
        g_autofree char *says = nl_range_plot_describe_row (NL_RANGE_PLOT (plot), (int) i);
        g_assert_nonnull (strstr (says, row->point));
        g_assert_nonnull (strstr (says, row->is_unsigned ? "(u8)" : "(s8)"));
      }
    }
  g_assert_cmpfloat (nl_test_drawn_fraction (plot), >, 0.01);

  /* the numbers shown are the result's; fp32 agrees with an evaluation */
  check_accuracy_label (dlg, FALSE, r->fp32_test_acc);
  check_accuracy_label (dlg, TRUE, r->int8_test_acc);
  check_matrix (dlg, FALSE, r);
  check_matrix (dlg, TRUE, r);
  epoch = g_strdup_printf ("%d", r->epoch);
  ev = nl_evaluate_run (nl_workspace_get_project (workspace), run_id, epoch, 0, NULL, NULL, NULL, &error);
  g_assert_no_error (error);
  /* the executor's fp32 sums may round one borderline sample the other way */
  g_assert_cmpfloat (fabs (ev->accuracy - r->fp32_test_acc), <=, 1.0 / N_TEST + 1e-9);

  /* stored, and listed in the dialog */
  g_assert_cmpuint (n_int8_models (), ==, before + 1);
  models = nl_project_list_int8_models (nl_workspace_get_project (workspace), run_id, &error);
  stored = &g_array_index (models, NlInt8ModelInfo, models->len - 1);
  g_assert_cmpint (stored->id, ==, r->int8_id);
  g_assert_cmpfloat (stored->int8_test_acc, ==, r->int8_test_acc);
  g_assert_cmpuint (n_list_rows (nl_quantize_dialog_get_models_list (dlg)), ==, before + 1);
  g_assert_true (nl_test_wait_until (row_shows_int8, &(RowWait) { page, r->int8_test_acc }, WAIT_MS));

  maybe_screenshot (GTK_WIDGET (dlg), "quantize-dialog.png");
  gtk_window_destroy (GTK_WINDOW (dlg));
  close_page (page, win);
}

static void
test_error (void)
{
  GtkWindow *win;
  NlExperimentsPage *page = show_page (&win);
  NlQuantizeDialog *dlg = open_dialog (page);
  guint before = n_int8_models ();
  g_autofree char *count = g_strdup_printf ("has %d", N_TRAIN);
  const char *msg;

  nl_quantize_dialog_set_calibration_samples (dlg, N_TRAIN + 1);
  nl_quantize_dialog_start (dlg);
  g_assert_true (nl_test_wait_until (finished, dlg, WAIT_MS));
  g_assert_nonnull (msg = nl_quantize_dialog_get_error (dlg));
  g_test_message ("error shown: %s", msg);
  /* the message names what the split has */
  g_assert_nonnull (strstr (msg, count));
  g_assert_null (nl_quantize_dialog_get_result (dlg));
  g_assert_cmpint (nl_range_plot_get_n_rows (NL_RANGE_PLOT (nl_quantize_dialog_get_range_plot (dlg))), ==, 0);
  g_assert_cmpuint (n_int8_models (), ==, before);
  /* the options stay, to be corrected */
  g_assert_cmpint (nl_quantize_dialog_get_calibration_samples (dlg), ==, N_TRAIN + 1);
  gtk_window_destroy (GTK_WINDOW (dlg));
  close_page (page, win);
}

/* The button under w with this tooltip, or NULL. */
static GtkWidget *
find_tooltip_button (GtkWidget *w, const char *tooltip)
{
  if (GTK_IS_BUTTON (w) && g_strcmp0 (gtk_widget_get_tooltip_text (w), tooltip) == 0)
    return w;
  for (GtkWidget *c = gtk_widget_get_first_child (w); c; c = gtk_widget_get_next_sibling (c))
    {
      GtkWidget *found = find_tooltip_button (c, tooltip);
      if (found)
        return found;
    }
  return NULL;
}

static gboolean
has_message (gpointer data)
{
  return nl_quantize_dialog_get_message (data) != NULL && !nl_workspace_is_busy (workspace);
}

/* Whether NEEDLE occurs in the LEN bytes at HAY (binary: NULs included). */
static gboolean
bytes_contain (const char *hay, gsize len, const char *needle)
{
  gsize n = strlen (needle);
  for (gsize i = 0; i + n <= len; i++)
    if (memcmp (hay + i, needle, n) == 0)
      return TRUE;
  return FALSE;
}

/* A QDQ ONNX file: the op types are strings in the protobuf. */
static void
check_qdq_file (const char *path)
{
  g_autofree char *bytes = NULL;
  gsize len = 0;
  g_assert_true (g_file_get_contents (path, &bytes, &len, NULL));
  g_assert_true (bytes_contain (bytes, len, "QuantizeLinear"));
  g_assert_true (bytes_contain (bytes, len, "DequantizeLinear"));
}

static void
on_toast (NlWorkspace *ws, const char *msg, char **last)
{
  g_free (*last);
  *last = g_strdup (msg);
}

static gboolean
is_set (gpointer data)
{
  return *(char **) data != NULL;
}

/* Export ONNX on the page offers INT8 for a run that has an INT8 model. */
static void
export_from_page (NlExperimentsPage *page)
{
  g_autofree char *path = g_build_filename (work_dir, "page-int8.onnx", NULL), *toast = NULL;
  g_autoptr (GFile) file = g_file_new_for_path (path);
  NlOnnxExportDialog *dlg;
  GtkFileChooser *chooser;
  gulong id = g_signal_connect (workspace, "toast", G_CALLBACK (on_toast), &toast);

  nl_experiments_page_select_runs (page, &run_id, 1);
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (page), "exp.export-onnx", NULL));
  g_assert_nonnull (dlg = NL_ONNX_EXPORT_DIALOG (nl_test_find_message_dialog (WAIT_MS)));
  g_assert_false (nl_onnx_export_dialog_get_int8 (dlg));
  nl_onnx_export_dialog_set_int8 (dlg, TRUE);
  g_assert_true (nl_onnx_export_dialog_get_int8 (dlg));
  adw_message_dialog_response (ADW_MESSAGE_DIALOG (dlg), "export");
  gtk_window_destroy (GTK_WINDOW (dlg));
  chooser = nl_test_wait_chooser ("Export ONNX", WAIT_MS);
  nl_test_pump (200);
  nl_test_choose_file (chooser, file);
  g_assert_true (nl_test_wait_until (is_set, &toast, WAIT_MS));
  g_test_message ("%s", toast);
  g_assert_true (g_str_has_prefix (toast, "Exported INT8 model"));
  check_qdq_file (path);
  g_signal_handler_disconnect (workspace, id);
}

/* The stored INT8 model's export from its row: a QDQ ONNX file. */
static void
test_export_onnx (void)
{
  GtkWindow *win;
  NlExperimentsPage *page;
  NlQuantizeDialog *dlg;
  GtkWidget *button;
  GtkFileChooser *chooser;
  g_autofree char *path = g_build_filename (work_dir, "int8.onnx", NULL);
  g_autoptr (GFile) file = g_file_new_for_path (path);

  if (!nl_onnx_available ())
    {
      g_test_skip ("built without ONNX support");
      return;
    }
  page = show_page (&win);
  dlg = open_dialog (page);
  g_assert_cmpuint (n_int8_models (), >, 0);
  button = find_tooltip_button (nl_quantize_dialog_get_models_list (dlg),
                                "Export this INT8 model as ONNX (QDQ form)…");
  g_assert_nonnull (button);
  g_signal_emit_by_name (button, "clicked");
  chooser = nl_test_wait_chooser ("Export INT8 ONNX", WAIT_MS);
  nl_test_pump (200);
  nl_test_choose_file (chooser, file);
  g_assert_true (nl_test_wait_until (has_message, dlg, WAIT_MS));
  g_test_message ("%s", nl_quantize_dialog_get_message (dlg));
  g_assert_null (nl_quantize_dialog_get_error (dlg));
  check_qdq_file (path);
  gtk_window_destroy (GTK_WINDOW (dlg));
  export_from_page (page);
  close_page (page, win);
}

/* The shown evaluation window, or NULL. */
static gpointer
find_evaluation_window (void)
{
  GListModel *tops = gtk_window_get_toplevels ();
  for (guint i = 0; i < g_list_model_get_n_items (tops); i++)
    {
      g_autoptr (GtkWindow) w = g_list_model_get_item (tops, i);
      const char *title = gtk_window_get_title (w);
      if (gtk_widget_get_visible (GTK_WIDGET (w)) && title && g_str_has_prefix (title, "Evaluation of"))
        return w;
    }
  return NULL;
}

static gboolean
evaluation_shown (gpointer data)
{
  *(GtkWindow **) data = find_evaluation_window ();
  return *(GtkWindow **) data != NULL;
}

static gboolean
evaluated (gpointer view)
{
  return !nl_evaluation_view_is_loading (view) && !nl_workspace_is_busy (workspace)
         && (nl_evaluation_view_get_evaluation (view) || nl_evaluation_view_get_error (view));
}

/* Evaluate on a model row: the INT8 model in the evaluation window, as
 * accurate as quantizing measured; its fp32 choice, the checkpoint. */
static void
test_evaluate_int8 (void)
{
  GtkWindow *win, *eval = NULL;
  NlExperimentsPage *page = show_page (&win);
  NlQuantizeDialog *dlg = open_dialog (page);
  g_autoptr (GArray) models = nl_project_list_int8_models (nl_workspace_get_project (workspace), run_id, NULL);
  const NlInt8ModelInfo *m = &g_array_index (models, NlInt8ModelInfo, models->len - 1);
  GtkWidget *button = find_tooltip_button (nl_quantize_dialog_get_models_list (dlg),
                                           "Evaluate this INT8 model in its own window");
  NlEvaluationView *view;
  const NlEvaluation *ev;

  g_assert_nonnull (button);
  maybe_screenshot (GTK_WIDGET (dlg), "quantize-dialog-models.png");
  g_signal_emit_by_name (button, "clicked");
  g_assert_true (nl_test_wait_until (evaluation_shown, &eval, WAIT_MS));
  view = NL_EVALUATION_VIEW (nl_evaluation_window_get_view (eval));
  g_assert_true (nl_test_wait_until (evaluated, view, WAIT_MS));
  g_assert_null (nl_evaluation_view_get_error (view));
  ev = nl_evaluation_view_get_evaluation (view);
  g_assert_cmpint (ev->int8_model, ==, m->id);
  g_assert_cmpint (ev->n_samples, ==, N_TEST);
  /* its own batches: one borderline sample may round the other way */
  g_assert_cmpfloat (fabs (ev->accuracy - m->int8_test_acc), <=, 1.0 / N_TEST + 1e-9);
  g_assert_true (gtk_widget_get_visible (nl_evaluation_window_get_precision (eval)));
  maybe_screenshot (GTK_WIDGET (eval), "evaluation-int8.png");
  gtk_drop_down_set_selected (GTK_DROP_DOWN (nl_evaluation_window_get_precision (eval)), 0);
  g_assert_true (nl_test_wait_until (evaluated, view, WAIT_MS));
  ev = nl_evaluation_view_get_evaluation (view);
  g_assert_cmpint (ev->int8_model, ==, 0);
  g_assert_cmpint (ev->epoch, ==, m->epoch);
  g_assert_cmpfloat (fabs (ev->accuracy - m->fp32_test_acc), <=, 1.0 / N_TEST + 1e-9);
  gtk_window_destroy (eval);
  gtk_window_destroy (GTK_WINDOW (dlg));
  close_page (page, win);
}

int
main (int argc, char **argv)
{
  NlProject *project;
  int status;

  nl_test_gui_init (&argc, &argv);
  project = nl_test_scratch_project ("quant", N_TRAIN, N_TEST, &data_dir, &work_dir);
  run_id = nl_test_train_small_conv (project, data_dir);
  workspace = nl_workspace_new (project);

  /* the error first: nothing is stored before the quantization that works */
  g_test_add_func ("/quantize-dialog/error-nothing-stored", test_error);
  g_test_add_func ("/quantize-dialog/result", test_result);
  g_test_add_func ("/quantize-dialog/export-onnx", test_export_onnx);
  g_test_add_func ("/quantize-dialog/evaluate-int8", test_evaluate_int8);
  status = g_test_run ();

  g_clear_object (&workspace);
  nl_test_scratch_remove (data_dir, work_dir);
  return status;
}
