/* test-evaluation-view.c — NlEvaluationView on a run trained here (a tiny
 * network on a generated 20x20 10-class IDX dataset): loading in the
 * background with the workspace busy, the confusion matrix (counts, hover),
 * the per-class table, the gallery of mistakes, classifying a PNG dropped
 * on the view (as a GFile and as a GdkFileList) or chosen in the image
 * chooser, errors shown in place, and a rendering that draws something.
 *
 * NL_EVAL_SCREENSHOT=PATH saves the loaded view to PATH; NL_EVAL_DATASET
 * (e.g. fashion-mnist) trains on that dataset instead, for a screenshot
 * that looks like real use. */
#include <glib/gstdio.h>
#include <string.h>

#include "engine/session/nl-evaluate.h"
#include "tests/nl-test-gui.h"
#include "tests/nl-test-util.h"
#include "ui/experiments/nl-confusion-matrix.h"
#include "ui/experiments/nl-evaluation-view.h"
#include "ui/nl-screenshot.h"

static char *data_dir, *work_dir;
static NlWorkspace *workspace;
static gint64 run_id;

static const char *net_json =
  "{\"format\":\"netloom.network\",\"version\":1,\"name\":\"tiny\",\"nodes\":["
  "{\"id\":\"data\",\"op\":\"Input\"},{\"id\":\"flat\",\"op\":\"Flatten\"},"
  "{\"id\":\"fc1\",\"op\":\"Dense\",\"params\":{\"units\":32}},"
  "{\"id\":\"act\",\"op\":\"Activation\"},{\"id\":\"fc2\",\"op\":\"Dense\",\"params\":{\"units\":10}}],"
  "\"edges\":[\"data -> flat\",\"flat -> fc1\",\"fc1 -> act\",\"act -> fc2\"]}";

static void
train_run (NlProject *p)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (NlNetwork) net = nl_network_load_data (net_json, -1, &error);
  g_autofree char *spec = g_strdup_printf ("mnist:%s", data_dir);
  const char *other = g_getenv ("NL_EVAL_DATASET");
  g_auto (NlRunConfig) cfg = { 0 };

  g_assert_no_error (error);
  nl_test_tiny_train_config (&cfg, other ? other : spec);
  cfg.epochs = other ? 1 : 3;
  g_assert_true (nl_run_train (p, "tiny", net, &cfg, NULL, &run_id, &error));
  g_assert_no_error (error);
}

/* ---- helpers ---- */

static gboolean
view_idle (gpointer data)
{
  NlEvaluationView *v = data;
  return !nl_evaluation_view_is_loading (v) && !nl_evaluation_view_is_predicting (v)
         && !nl_workspace_is_busy (workspace);
}

static void
wait_idle (NlEvaluationView *v)
{
  g_assert_true (nl_test_wait_until (view_idle, v, 60000));
  nl_test_pump (50);
}

static gboolean
laid_out (gpointer widget)
{
  return gtk_widget_get_width (widget) > 0;
}

static guint
n_children (GtkWidget *w)
{
  guint n = 0;
  for (GtkWidget *c = gtk_widget_get_first_child (w); c; c = gtk_widget_get_next_sibling (c))
    n++;
  return n;
}

static const char *
grid_text (GtkWidget *grid, int col, int row)
{
  GtkWidget *w = gtk_grid_get_child_at (GTK_GRID (grid), col, row);
  g_assert_true (GTK_IS_LABEL (w));
  return gtk_label_get_text (GTK_LABEL (w));
}

static GtkEventController *
find_controller (GtkWidget *w, GType type)
{
  g_autoptr (GListModel) list = gtk_widget_observe_controllers (w);
  for (guint i = 0; i < g_list_model_get_n_items (list); i++)
    {
      g_autoptr (GObject) c = g_list_model_get_item (list, i);
      if (G_TYPE_CHECK_INSTANCE_TYPE (c, type))
        return GTK_EVENT_CONTROLLER (c);
    }
  return NULL;
}

/* The button under w labelled label, or NULL. */
static GtkWidget *
find_button (GtkWidget *w, const char *label)
{
  if (GTK_IS_BUTTON (w) && g_strcmp0 (gtk_button_get_label (GTK_BUTTON (w)), label) == 0)
    return w;
  for (GtkWidget *c = gtk_widget_get_first_child (w); c; c = gtk_widget_get_next_sibling (c))
    {
      GtkWidget *found = find_button (c, label);
      if (found)
        return found;
    }
  return NULL;
}

/* Sample i of the evaluated split as a PNG, through a GdkTexture. */
static char *
sample_png (const NlEvaluation *ev, int64_t i)
{
  g_autoptr (GError) error = NULL;
  int64_t n = nl_shape_numel (&ev->sample_shape), plane = ev->sample_shape.d[1] * ev->sample_shape.d[2];
  int w = (int) ev->sample_shape.d[2], h = (int) ev->sample_shape.d[1];
  g_autofree float *x = g_new (float, n);
  guint8 *rgb = g_malloc ((gsize) plane * 3);
  g_autoptr (GBytes) bytes = NULL;
  g_autoptr (GdkTexture) tex = NULL;
  g_autofree char *name = g_strdup_printf ("sample-%" G_GINT64_FORMAT ".png", i);
  char *path = g_build_filename (work_dir, name, NULL);

  g_assert_true (nl_evaluation_get_sample ((NlEvaluation *) ev, i, x, NULL, &error));
  for (int64_t k = 0; k < plane; k++)
    for (int c = 0; c < 3; c++)
      rgb[k * 3 + c] = (guint8) (x[(ev->sample_shape.d[0] == 3 ? c : 0) * plane + k] * 255.0f + 0.5f);
  bytes = g_bytes_new_take (rgb, (gsize) plane * 3);
  tex = gdk_memory_texture_new (w, h, GDK_MEMORY_R8G8B8, bytes, (gsize) w * 3);
  g_assert_true (gdk_texture_save_to_png (tex, path));
  return path;
}

/* ---- the test ---- */

static void
test_view (void)
{
  GtkWidget *view = nl_evaluation_view_new ();
  NlEvaluationView *v = NL_EVALUATION_VIEW (view);
  GtkWindow *win = nl_test_show_in_window (view, 1100, 1400);
  GtkWidget *matrix = nl_evaluation_view_get_matrix (v);
  GtkWidget *table = nl_evaluation_view_get_table (v);
  GtkWidget *gallery = nl_evaluation_view_get_gallery (v);
  GtkWidget *probs = nl_evaluation_view_get_probabilities (v);
  const NlEvaluation *ev;
  int n;

  g_assert_null (nl_evaluation_view_get_evaluation (v));
  /* no model yet: a file cannot be classified */
  g_assert_false (nl_evaluation_view_predict_file (v, "/nonexistent.png"));

  /* a load superseded by another one leaves only the second's result */
  nl_evaluation_view_load (v, workspace, 999, "best");
  nl_evaluation_view_load (v, workspace, run_id, "best");
  g_assert_true (nl_evaluation_view_is_loading (v));
  g_assert_true (nl_workspace_is_busy (workspace));
  wait_idle (v);
  g_assert_null (nl_evaluation_view_get_error (v));
  ev = nl_evaluation_view_get_evaluation (v);
  g_assert_nonnull (ev);
  g_assert_cmpint (ev->run, ==, run_id);
  n = ev->n_classes;
  g_assert_cmpint (n, ==, 10);

  /* the matrix shows the evaluation's counts */
  g_assert_cmpint (nl_confusion_matrix_get_n_classes (NL_CONFUSION_MATRIX (matrix)), ==, n);
  for (int r = 0; r < n; r++)
    for (int c = 0; c < n; c++)
      g_assert_cmpint (nl_confusion_matrix_get_count (NL_CONFUSION_MATRIX (matrix), r, c), ==,
                       ev->confusion[r * n + c]);
  /* the result page is laid out on a later frame */
  g_assert_true (nl_test_wait_until (laid_out, matrix, 10000));
  g_assert_cmpint (gtk_widget_get_width (matrix), >, 200);
  {
    /* the page scrolls: the matrix gets its natural height for its width
     * (not its minimum), which is no taller than its square grid and labels */
    int min, nat, w = gtk_widget_get_width (matrix);
    gtk_widget_measure (matrix, GTK_ORIENTATION_VERTICAL, w, &min, &nat, NULL, NULL);
    g_assert_cmpint (nat, >, min);
    g_assert_cmpint (gtk_widget_get_height (matrix), >=, nat);
    g_assert_cmpint (nat, <, gtk_widget_get_width (matrix) + 60);
  }
  /* hovering a cell: find its spot, move the pointer there through the real controller */
  {
    GtkEventController *motion = find_controller (matrix, GTK_TYPE_EVENT_CONTROLLER_MOTION);
    int w = gtk_widget_get_width (matrix), h = gtk_widget_get_height (matrix), row = -1, col = -1, hr, hc;
    double hx = -1, hy = -1;
    g_autofree char *tip = NULL, *want = NULL;
    g_assert_nonnull (motion);
    for (int y = 0; y < h && hx < 0; y += 2)
      for (int x = 0; x < w && hx < 0; x += 2)
        if (nl_confusion_matrix_cell_at (NL_CONFUSION_MATRIX (matrix), x, y, &row, &col) && row == 2 && col == 3)
          hx = x + 4, hy = y + 4;
    g_assert_cmpfloat (hx, >=, 0);
    g_assert_false (nl_confusion_matrix_cell_at (NL_CONFUSION_MATRIX (matrix), 1, 1, NULL, NULL));
    g_signal_emit_by_name (motion, "motion", hx, hy);
    g_assert_true (nl_confusion_matrix_get_hover (NL_CONFUSION_MATRIX (matrix), &hr, &hc));
    g_assert_cmpint (hr, ==, 2);
    g_assert_cmpint (hc, ==, 3);
    tip = nl_confusion_matrix_describe_cell (NL_CONFUSION_MATRIX (matrix), hr, hc);
    want = g_strdup_printf ("True %s, predicted %s: %" G_GINT64_FORMAT " (", ev->class_names[2],
                            ev->class_names[3], ev->confusion[2 * n + 3]);
    g_assert_true (g_str_has_prefix (tip, want));
    g_signal_emit_by_name (motion, "leave");
    g_assert_false (nl_confusion_matrix_get_hover (NL_CONFUSION_MATRIX (matrix), NULL, NULL));
  }

  /* the table: a header, a row per class, the averages */
  g_assert_cmpstr (grid_text (table, 0, 0), ==, "Class");
  for (int c = 0; c < n; c++)
    {
      char buf[32];
      g_assert_cmpstr (grid_text (table, 0, c + 1), ==, ev->class_names[c]);
      g_snprintf (buf, sizeof buf, "%.3f", ev->recall[c]);
      g_assert_cmpstr (grid_text (table, 2, c + 1), ==, buf);
      g_snprintf (buf, sizeof buf, "%" G_GINT64_FORMAT, ev->support[c]);
      g_assert_cmpstr (grid_text (table, 4, c + 1), ==, buf);
    }
  g_assert_cmpstr (grid_text (table, 0, n + 2), ==, "Macro average");
  {
    char buf[32];
    g_snprintf (buf, sizeof buf, "%.3f", ev->macro_f1);
    g_assert_cmpstr (grid_text (table, 3, n + 2), ==, buf);
  }
  g_assert_cmpstr (grid_text (table, 0, n + 3), ==, "Weighted average");
  g_assert_null (gtk_grid_get_child_at (GTK_GRID (table), 0, n + 4));

  /* the gallery: one child per kept mistake, each naming its sample */
  g_assert_cmpint (ev->n_misclassified, >, 0);
  g_assert_cmpuint (n_children (gallery), ==, (guint) ev->n_misclassified);
  {
    GtkWidget *first = gtk_flow_box_child_get_child (gtk_flow_box_get_child_at_index (GTK_FLOW_BOX (gallery), 0));
    g_autofree char *want = g_strdup_printf ("Sample %" G_GINT64_FORMAT ":", ev->misclassified[0].index);
    g_assert_true (g_str_has_prefix (gtk_widget_get_tooltip_text (first), want));
    g_assert_true (GTK_IS_IMAGE (gtk_widget_get_first_child (first)));
    g_assert_nonnull (gtk_image_get_paintable (GTK_IMAGE (gtk_widget_get_first_child (first))));
  }

  /* dropping a PNG of a sample: the sorted probabilities, the top one the model's answer */
  {
    GtkEventController *drop = find_controller (view, GTK_TYPE_DROP_TARGET);
    g_autofree char *png = sample_png (ev, ev->misclassified[0].index);
    g_autoptr (GFile) file = g_file_new_for_path (png);
    g_autofree double *p = NULL;
    GValue value = G_VALUE_INIT;
    gboolean handled = FALSE;
    double last = 2;
    int best = 0;
    g_autoptr (GError) error = NULL;

    g_assert_nonnull (drop);
    g_assert_true (nl_evaluation_predict_image_file ((NlEvaluation *) ev, png, &p, NULL, &error));
    for (int c = 1; c < n; c++)
      best = p[c] > p[best] ? c : best;
    g_assert_cmpint (best, ==, ev->misclassified[0].predicted);
    g_value_init (&value, G_TYPE_FILE);
    g_value_set_object (&value, file);
    g_signal_emit_by_name (drop, "drop", &value, 10.0, 10.0, &handled);
    g_value_unset (&value);
    g_assert_true (handled);
    wait_idle (v);
    g_assert_cmpuint (n_children (probs), ==, (guint) n);
    for (GtkWidget *row = gtk_widget_get_first_child (probs); row; row = gtk_widget_get_next_sibling (row))
      {
        GtkWidget *bar = gtk_widget_get_next_sibling (gtk_widget_get_first_child (row));
        double f = gtk_progress_bar_get_fraction (GTK_PROGRESS_BAR (bar));
        g_assert_cmpfloat (f, <=, last);
        last = f;
      }
    g_assert_cmpstr (gtk_label_get_text (GTK_LABEL (gtk_widget_get_first_child (gtk_widget_get_first_child (probs)))),
                     ==, ev->class_names[best]);

    /* a missing file: the message names it, the old bars go */
    g_autofree char *missing = g_build_filename (work_dir, "gone.png", NULL);
    g_autoptr (GFile) gone = g_file_new_for_path (missing);
    GSList *list = g_slist_append (NULL, gone);
    GdkFileList *files = gdk_file_list_new_from_list (list);
    g_slist_free (list);
    g_value_init (&value, GDK_TYPE_FILE_LIST);
    g_value_take_boxed (&value, files);
    g_signal_emit_by_name (drop, "drop", &value, 10.0, 10.0, &handled);
    g_value_unset (&value);
    wait_idle (v);
    g_assert_cmpuint (n_children (probs), ==, 0);
    {
      GtkWidget *msg = gtk_widget_get_prev_sibling (probs);
      g_assert_true (gtk_widget_get_visible (msg));
      g_assert_nonnull (strstr (gtk_label_get_text (GTK_LABEL (msg)), missing));
      g_assert_true (gtk_widget_has_css_class (msg, "error"));
    }
    /* and the good one again, chosen in the image chooser's dialog */
    {
      GtkWidget *button = find_button (view, "_Choose Image…");
      GtkFileChooser *chooser;
      g_assert_nonnull (button);
      g_signal_emit_by_name (button, "clicked");
      chooser = nl_test_wait_chooser ("Choose an Image", 10000);
      g_assert_cmpint (gtk_file_chooser_get_action (chooser), ==, GTK_FILE_CHOOSER_ACTION_OPEN);
      g_assert_cmpstr (gtk_file_filter_get_name (gtk_file_chooser_get_filter (chooser)), ==, "PNG and JPEG images");
      nl_test_choose_file (chooser, file);
      wait_idle (v);
      g_assert_null (nl_test_find_window (GTK_TYPE_FILE_CHOOSER_DIALOG));
      g_assert_false (gtk_widget_get_visible (gtk_widget_get_prev_sibling (probs)));
      g_assert_cmpuint (n_children (probs), ==, (guint) n);
    }
  }

  g_assert_cmpfloat (nl_test_drawn_fraction (view), >, 0.05);
  if (g_getenv ("NL_EVAL_SCREENSHOT"))
    {
      g_autoptr (GError) error = NULL;
      const char *shot = g_getenv ("NL_EVAL_SCREENSHOT");
      g_autofree char *bottom = g_strconcat (shot, "-bottom.png", NULL);
      GtkAdjustment *adj = gtk_scrolled_window_get_vadjustment (
        GTK_SCROLLED_WINDOW (gtk_widget_get_ancestor (probs, GTK_TYPE_SCROLLED_WINDOW)));
      g_assert_true (nl_widget_save_png (GTK_WIDGET (win), shot, &error));
      gtk_adjustment_set_value (adj, gtk_adjustment_get_upper (adj));
      nl_test_pump (300);
      g_assert_true (nl_widget_save_png (GTK_WIDGET (win), bottom, &error));
    }

  /* an error is shown in place of the results */
  nl_evaluation_view_load (v, workspace, 999, "best");
  wait_idle (v);
  g_assert_nonnull (nl_evaluation_view_get_error (v));
  g_assert_nonnull (strstr (nl_evaluation_view_get_error (v), "no run 999"));
  g_assert_cmpfloat (nl_test_drawn_fraction (view), >, 0.001);
  gtk_window_destroy (win);
}

int
main (int argc, char **argv)
{
  NlProject *project;
  int status;

  nl_test_gui_init (&argc, &argv);
  project = nl_test_scratch_project ("evalview", 1000, 250, &data_dir, &work_dir);
  train_run (project);
  workspace = nl_workspace_new (project);

  g_test_add_func ("/evaluation-view/load-show-predict", test_view);
  status = g_test_run ();

  g_clear_object (&workspace);
  nl_test_scratch_remove (data_dir, work_dir);
  return status;
}
