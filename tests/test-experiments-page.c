/* test-experiments-page.c — the Experiments page on a real project: table
 * contents, sorting, filtering, editing through the dialogs, comparison of
 * selected runs, runs written by another connection, and exports. */
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#include "engine/formats/nl-checkpoint.h"
#include "engine/graph/nl-network.h"
#include "engine/session/nl-run.h"
#include "tests/nl-test-gui.h"
#include "tests/nl-test-util.h"
#include "ui/experiments/nl-experiments-page.h"
#include "ui/experiments/nl-hparam-diff.h"
#include "ui/experiments/nl-run-row.h"
#include "ui/plot/nl-plot.h"

#define WALL0 1700000000.0
/* generous: the machine may be busy, or this may run under valgrind */
#define WAIT_MS 30000

typedef struct {
  const char *name, *optimizer, *status, *tag;
  double lr;
  int batch, epochs, epochs_done, steps_per_epoch;
  double test_acc[3];
} RunSpec;

/* alpha and beta differ in optimizer, lr and batch size only */
static const RunSpec specs[] = {
  { "alpha", "sgd", "finished", "baseline", 0.1, 64, 3, 3, 10, { 0.80, 0.85, 0.84 } },
  { "beta", "adam", "finished", "adam", 0.001, 128, 3, 3, 5, { 0.82, 0.88, 0.89 } },
  { "gamma", "sgd", "stopped", NULL, 1e-05, 64, 5, 2, 10, { 0.70, 0.75, NAN } },
};

typedef struct {
  char *dir, *path;
  gint64 ids[3];
  NlWorkspace *ws;
  NlExperimentsPage *page;
  GtkWindow *win;
} Fixture;

static char *
load_mlp (void)
{
  g_autofree char *path = nl_test_source_path ("data/networks/mlp.json");
  char *text = NULL;
  g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
  return text;
}

static char *
hparams (const RunSpec *s)
{
  g_auto (NlRunConfig) rc = { 0 };
  nl_run_config_init (&rc);
  nl_run_config_set_text (&rc.dataset, "fashion-mnist");
  nl_run_config_set_text (&rc.loss, "softmax_ce");
  rc.seed = 7;
  rc.epochs = s->epochs;
  rc.batch_size = s->batch;
  /* same optimizer defaults for all: only the kind's name differs */
  g_assert_true (nl_optim_kind_parse (s->optimizer, &rc.optim.kind, NULL));
  rc.optim.lr = (float) s->lr;
  return nl_run_config_to_json (&rc);
}

/* The points of run i: per step a batch loss, per epoch test accuracy,
 * train loss and accuracy. */
static GArray *
points_of (const RunSpec *s, gint64 run)
{
  GArray *pts = g_array_new (FALSE, FALSE, sizeof (NlMetricPoint));
  for (int e = 1; e <= s->epochs_done; e++)
    {
      for (int b = 1; b <= s->steps_per_epoch; b++)
        {
          gint64 step = (gint64) (e - 1) * s->steps_per_epoch + b;
          NlMetricPoint p = { run, step, e, "train", "batch_loss", 2.0 / (double) step, WALL0 + step };
          g_array_append_val (pts, p);
        }
      gint64 step = (gint64) e * s->steps_per_epoch;
      NlMetricPoint acc = { run, step, e, "test", "accuracy", s->test_acc[e - 1], WALL0 + step + 0.25 };
      NlMetricPoint loss = { run, step, e, "train", "loss", 1.0 / e, WALL0 + step + 0.5 };
      NlMetricPoint tacc = { run, step, e, "train", "accuracy", s->test_acc[e - 1] + 0.01, WALL0 + step + 0.75 };
      g_array_append_val (pts, acc);
      g_array_append_val (pts, loss);
      g_array_append_val (pts, tacc);
    }
  return pts;
}

static gint64
add_run (NlProject *p, const RunSpec *s, const char *net_json)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *hp = hparams (s);
  NlRunInfo info = { .name = (char *) s->name, .network_name = (char *) "mlp", .network_json = (char *) net_json,
                     .hparams_json = hp, .seed = 7, .device = (char *) "cpu", .status = (char *) "running" };
  gint64 id = nl_project_create_run (p, &info, &error);
  g_autoptr (GArray) pts = NULL;
  g_assert_no_error (error);
  pts = points_of (s, id);
  g_assert_true (nl_project_add_metrics (p, (NlMetricPoint *) pts->data, (int) pts->len, &error));
  g_assert_true (nl_project_set_run_epochs (p, id, s->epochs_done, &error));
  g_assert_true (nl_project_set_run_status (p, id, s->status, NULL, &error));
  if (s->tag)
    g_assert_true (nl_project_add_tag (p, id, s->tag, &error));
  g_assert_no_error (error);
  return id;
}

/* A real checkpoint of the mlp for the weights export. */
static void
add_checkpoint (NlProject *p, gint64 run, const char *net_json)
{
  NlShape sample = nl_shape_of (3, (int64_t) 1, (int64_t) 28, (int64_t) 28);
  nl_test_add_checkpoint (p, run, net_json, &sample, 1, 3, 0.85);
}

static gboolean
page_loaded (gpointer data)
{
  return !nl_experiments_page_is_loading (data);
}

static void
wait_loaded (Fixture *f)
{
  nl_test_pump (20);
  g_assert_true (nl_test_wait_until (page_loaded, f->page, WAIT_MS));
}

static void
fixture_setup (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *net = load_mlp ();
  NlProject *p;


  f->dir = g_dir_make_tmp ("nl-exp-XXXXXX", &error);
  g_assert_no_error (error);
  f->path = g_build_filename (f->dir, "p.netloom", NULL);
  p = nl_project_open (f->path, TRUE, &error);
  g_assert_no_error (error);
  g_assert_cmpint (nl_project_save_network (p, "mlp", net, &error), >, 0);
  for (guint i = 0; i < G_N_ELEMENTS (specs); i++)
    f->ids[i] = add_run (p, &specs[i], net);
  add_checkpoint (p, f->ids[0], net);
  f->ws = nl_workspace_new (p);
  f->page = g_object_new (NL_TYPE_EXPERIMENTS_PAGE, NULL);
  f->win = nl_test_show_in_window (GTK_WIDGET (f->page), 1400, 900);
  nl_experiments_page_set_workspace (f->page, f->ws);
  wait_loaded (f);
}

static void
fixture_teardown (Fixture *f, gconstpointer data)
{
  nl_experiments_page_set_workspace (f->page, NULL);
  gtk_window_destroy (f->win);
  nl_test_pump (20);
  g_clear_object (&f->ws);
  nl_test_remove_tree (f->dir);
  g_free (f->dir);
  g_free (f->path);
}

static NlRunRow *
row_at (Fixture *f, guint i)
{
  GListModel *m = G_LIST_MODEL (nl_experiments_page_get_model (f->page));
  NlRunRow *row = g_list_model_get_item (m, i);
  g_object_unref (row);  /* the model keeps it */
  return row;
}

static char *
names (Fixture *f)
{
  GListModel *m = G_LIST_MODEL (nl_experiments_page_get_model (f->page));
  GString *s = g_string_new (NULL);
  for (guint i = 0; i < g_list_model_get_n_items (m); i++)
    g_string_append_printf (s, "%s%s", i ? " " : "", nl_run_row_get_name (row_at (f, i)));
  return g_string_free (s, FALSE);
}

/* The text of the cell of column ID in the row of run NAME, as displayed. */
static char *
cell_text (GtkWidget *w, const char *id, const char *name)
{
  const char *col = g_object_get_data (G_OBJECT (w), "nl-column-id");
  NlRunRow *row = g_object_get_data (G_OBJECT (w), "nl-run-row");
  if (col && row && strcmp (col, id) == 0 && strcmp (nl_run_row_get_name (row), name) == 0)
    {
      GtkWidget *label = GTK_IS_LABEL (w) ? w : gtk_widget_get_last_child (w);
      return g_strdup (gtk_label_get_label (GTK_LABEL (label)));
    }
  for (GtkWidget *c = gtk_widget_get_first_child (w); c; c = gtk_widget_get_next_sibling (c))
    {
      char *t = cell_text (c, id, name);
      if (t)
        return t;
    }
  return NULL;
}

static GtkColumnViewColumn *
column_titled (Fixture *f, const char *title)
{
  GListModel *cols = gtk_column_view_get_columns (nl_experiments_page_get_column_view (f->page));
  for (guint i = 0; i < g_list_model_get_n_items (cols); i++)
    {
      g_autoptr (GtkColumnViewColumn) c = g_list_model_get_item (cols, i);
      if (g_strcmp0 (gtk_column_view_column_get_title (c), title) == 0)
        return c;
    }
  g_assert_not_reached ();
}

static void
test_table (Fixture *f, gconstpointer data)
{
  g_autofree char *order = names (f);
  g_autofree char *name_cell = NULL, *best_cell = NULL, *epochs_cell = NULL, *status_cell = NULL, *lr_cell = NULL;
  NlRunRow *alpha;

  /* newest first */
  g_assert_cmpstr (order, ==, "gamma beta alpha");
  alpha = row_at (f, 2);
  g_assert_cmpint (nl_run_row_get_id (alpha), ==, f->ids[0]);
  g_assert_cmpfloat_with_epsilon (nl_run_row_get_best (alpha, "test", "accuracy"), 0.85, 1e-12);
  g_assert_cmpfloat_with_epsilon (nl_run_row_get_last (alpha, "test", "accuracy"), 0.84, 1e-12);
  g_assert_cmpfloat_with_epsilon (nl_run_row_get_best (alpha, "train", "loss"), 1.0 / 3, 1e-12);
  g_assert_cmpfloat_with_epsilon (nl_run_row_get_best (row_at (f, 1), "test", "accuracy"), 0.89, 1e-12);
  g_assert_cmpint (nl_run_row_get_epochs_total (row_at (f, 0)), ==, 5);
  g_assert_cmpstr (nl_run_row_get_optimizer (row_at (f, 1)), ==, "adam");
  g_assert_cmpint (nl_run_row_get_n_checkpoints (alpha), ==, 1);

  /* what the cells show */
  nl_test_pump (50);
  name_cell = cell_text (GTK_WIDGET (f->page), "name", "alpha");
  best_cell = cell_text (GTK_WIDGET (f->page), "test/accuracy/best", "alpha");
  epochs_cell = cell_text (GTK_WIDGET (f->page), "epochs", "gamma");
  status_cell = cell_text (GTK_WIDGET (f->page), "status", "gamma");
  lr_cell = cell_text (GTK_WIDGET (f->page), "lr", "gamma");
  g_assert_cmpstr (name_cell, ==, "alpha");
  g_assert_cmpstr (best_cell, ==, "0.8500");
  g_assert_cmpstr (epochs_cell, ==, "2/5");
  g_assert_cmpstr (status_cell, ==, "stopped");
  g_assert_cmpstr (lr_cell, ==, "1e-05");
  /* every metric present has columns, the usual ones best and last */
  column_titled (f, "Test acc best");
  column_titled (f, "Train loss last");
  column_titled (f, "Train acc best");
  column_titled (f, "Train batch loss best");
}

static void
test_sort (Fixture *f, gconstpointer data)
{
  GtkColumnView *cv = nl_experiments_page_get_column_view (f->page);
  struct {
    const char *title;
    GtkSortType dir;
    const char *order;
  } cases[] = {
    { "Test acc best", GTK_SORT_DESCENDING, "beta alpha gamma" },
    { "Test acc best", GTK_SORT_ASCENDING, "gamma alpha beta" },
    /* numeric, not text: 1e-05 < 0.001 < 0.1 and 64 < 128 */
    { "LR", GTK_SORT_ASCENDING, "gamma beta alpha" },
    { "Batch", GTK_SORT_ASCENDING, "alpha gamma beta" },
    { "Name", GTK_SORT_DESCENDING, "gamma beta alpha" },
    { "Train loss best", GTK_SORT_ASCENDING, "alpha beta gamma" },
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *order = NULL;
      gtk_column_view_sort_by_column (cv, column_titled (f, cases[i].title), cases[i].dir);
      nl_test_pump (20);
      order = names (f);
      g_assert_cmpstr (order, ==, cases[i].order);
    }
}

static void
test_filter (Fixture *f, gconstpointer data)
{
  struct {
    const char *text, *order;
  } cases[] = {
    { "adam", "beta" },        /* a tag */
    { "BASE", "alpha" },       /* a tag, any case */
    { "stopped", "gamma" },    /* the status */
    { "mlp", "gamma beta alpha" },
    { "zzz", "" },
    { "", "gamma beta alpha" },
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *order = NULL;
      nl_experiments_page_set_filter (f->page, cases[i].text);
      nl_test_pump (20);
      order = names (f);
      g_assert_cmpstr (order, ==, cases[i].order);
    }
}

typedef struct {
  Fixture *f;
  guint n;
  const char *name;
} Expect;

static gboolean
has_n_rows (gpointer data)
{
  Expect *e = data;
  return g_list_model_get_n_items (G_LIST_MODEL (nl_experiments_page_get_model (e->f->page))) == e->n
         && !nl_experiments_page_is_loading (e->f->page);
}

static gboolean
row_named (gpointer data)
{
  Expect *e = data;
  GListModel *m = G_LIST_MODEL (nl_experiments_page_get_model (e->f->page));
  for (guint i = 0; i < g_list_model_get_n_items (m); i++)
    if (strcmp (nl_run_row_get_name (row_at (e->f, i)), e->name) == 0)
      return TRUE;
  return FALSE;
}

static void
test_edit (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (NlProject) other = nl_project_open (f->path, FALSE, &error);
  g_autoptr (NlRunInfo) info = NULL;
  g_autoptr (GPtrArray) notes = NULL, runs = NULL;
  g_auto (GStrv) tags = NULL;
  AdwMessageDialog *dlg;
  Expect e = { f, 0, "alpha renamed" };
  gint64 both[] = { f->ids[0], f->ids[1] };
  g_autofree char *order = NULL;

  /* rename through the dialog the action opens */
  nl_experiments_page_select_runs (f->page, &f->ids[0], 1);
  nl_test_pump (20);
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (f->page), "exp.rename", NULL));
  g_assert_nonnull (dlg = nl_test_find_message_dialog (0));
  g_assert_cmpstr (gtk_editable_get_text (GTK_EDITABLE (adw_message_dialog_get_extra_child (dlg))), ==, "alpha");
  gtk_editable_set_text (GTK_EDITABLE (adw_message_dialog_get_extra_child (dlg)), "  alpha renamed ");
  adw_message_dialog_response (dlg, "rename");
  gtk_window_destroy (GTK_WINDOW (dlg));
  g_assert_true (nl_test_wait_until (row_named, &e, WAIT_MS));
  info = nl_project_get_run (other, f->ids[0], &error);
  g_assert_cmpstr (info->name, ==, "alpha renamed");
  /* an empty name is refused with a message, nothing changes */
  g_assert_false (nl_experiments_page_rename_run (f->page, f->ids[0], "  ", &error));
  g_assert_error (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_INVALID);
  g_clear_error (&error);

  /* tags on two runs, then off one */
  g_assert_true (nl_experiments_page_add_tag (f->page, both, 2, "cmp", &error));
  g_assert_true (nl_experiments_page_remove_tag (f->page, &f->ids[1], 1, "adam", &error));
  tags = nl_project_list_tags (other, f->ids[1], &error);
  g_assert_cmpuint (g_strv_length (tags), ==, 1);
  g_assert_cmpstr (tags[0], ==, "cmp");
  wait_loaded (f);
  nl_experiments_page_set_filter (f->page, "cmp");
  order = names (f);
  g_assert_cmpstr (order, ==, "beta alpha renamed");
  nl_experiments_page_set_filter (f->page, "");

  /* a note */
  g_assert_true (nl_experiments_page_add_note (f->page, f->ids[2], "lr too small", &error));
  notes = nl_project_list_notes (other, f->ids[2], &error);
  g_assert_cmpuint (notes->len, ==, 1);
  g_assert_cmpstr (((NlNote *) g_ptr_array_index (notes, 0))->text, ==, "lr too small");
  wait_loaded (f);
  g_assert_cmpint (nl_run_row_get_n_notes (row_at (f, 0)), ==, 1);

  /* delete through the confirmation dialog */
  nl_experiments_page_select_runs (f->page, &f->ids[2], 1);
  nl_test_pump (20);
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (f->page), "exp.delete", NULL));
  g_assert_nonnull (dlg = nl_test_find_message_dialog (0));
  adw_message_dialog_response (dlg, "cancel");
  gtk_window_destroy (GTK_WINDOW (dlg));
  nl_test_pump (100);
  wait_loaded (f);
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (nl_experiments_page_get_model (f->page))), ==, 3);
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (f->page), "exp.delete", NULL));
  g_assert_nonnull (dlg = nl_test_find_message_dialog (0));
  adw_message_dialog_response (dlg, "delete");
  gtk_window_destroy (GTK_WINDOW (dlg));
  e.n = 2;
  g_assert_true (nl_test_wait_until (has_n_rows, &e, WAIT_MS));
  runs = nl_project_list_runs (other, &error);
  g_assert_cmpuint (runs->len, ==, 2);
  g_assert_null (nl_project_get_run (other, f->ids[2], &error));
  g_assert_error (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_NOT_FOUND);
}

static guint
count_class (GtkWidget *w, const char *klass)
{
  guint n = gtk_widget_has_css_class (w, klass);
  for (GtkWidget *c = gtk_widget_get_first_child (w); c; c = gtk_widget_get_next_sibling (c))
    n += count_class (c, klass);
  return n;
}

static void
test_compare (Fixture *f, gconstpointer data)
{
  gint64 two[] = { f->ids[0], f->ids[1] };
  NlPlot *plot = NL_PLOT (nl_experiments_page_get_plot (f->page));
  NlHparamDiff *diff = NL_HPARAM_DIFF (nl_experiments_page_get_diff (f->page));
  g_auto (GStrv) differing = NULL;
  const char *expected[] = { "batch_size", "optimizer", "lr", NULL };

  nl_experiments_page_select_runs (f->page, two, 2);
  wait_loaded (f);
  /* test accuracy by epoch, one series per run in table order (beta is newer) */
  g_assert_cmpuint (nl_plot_get_n_series (plot), ==, 2);
  g_assert_cmpstr (nl_plot_series_get_label (nl_plot_get_series (plot, 0)), ==, "beta");
  g_assert_cmpstr (nl_plot_series_get_label (nl_plot_get_series (plot, 1)), ==, "alpha");
  g_assert_cmpuint (nl_plot_series_get_length (nl_plot_get_series (plot, 0)), ==, 3);
  g_assert_cmpuint (nl_plot_series_get_length (nl_plot_get_series (plot, 1)), ==, 3);
  {
    double x, y;
    g_assert_true (nl_plot_series_get_point (nl_plot_get_series (plot, 0), 2, &x, &y));
    g_assert_cmpfloat (x, ==, 3);
    g_assert_cmpfloat_with_epsilon (y, 0.89, 1e-12);
  }
  /* per-batch loss by step: 3 epochs of 5 and of 10 steps */
  g_assert_true (nl_experiments_page_set_plot_metric (f->page, "train", "batch_loss"));
  wait_loaded (f);
  g_assert_cmpuint (nl_plot_get_n_series (plot), ==, 2);
  g_assert_cmpuint (nl_plot_series_get_length (nl_plot_get_series (plot, 0)), ==, 15);
  g_assert_cmpuint (nl_plot_series_get_length (nl_plot_get_series (plot, 1)), ==, 30);
  g_assert_false (nl_experiments_page_set_plot_metric (f->page, "val", "nothing"));

  /* the diff marks exactly what differs */
  differing = nl_hparam_diff_dup_differing (diff);
  g_assert_cmpuint (g_strv_length (differing), ==, 3);
  for (guint i = 0; expected[i]; i++)
    g_assert_true (g_strv_contains ((const char *const *) differing, expected[i]));
  g_assert_cmpstr (nl_hparam_diff_get_value (diff, "optimizer", 0), ==, "adam");
  g_assert_cmpstr (nl_hparam_diff_get_value (diff, "lr", 1), ==, "0.1");
  g_assert_cmpstr (nl_hparam_diff_get_value (diff, "network", 1), ==, "mlp");
  /* key and two values per differing row carry the mark */
  g_assert_cmpuint (count_class (GTK_WIDGET (diff), "nl-differs"), ==, 3 * 3);
  g_assert_cmpuint (nl_hparam_diff_get_n_shown (diff), >, 10);
  nl_hparam_diff_set_only_differences (diff, TRUE);
  g_assert_cmpuint (nl_hparam_diff_get_n_shown (diff), ==, 3);
  g_assert_cmpuint (count_class (GTK_WIDGET (diff), "dim-label"), ==, 0);

  /* one run: one series; none: every run shown, in table order */
  nl_experiments_page_select_runs (f->page, &f->ids[2], 1);
  wait_loaded (f);
  g_assert_cmpuint (nl_plot_get_n_series (plot), ==, 1);
  nl_experiments_page_select_runs (f->page, NULL, 0);
  wait_loaded (f);
  g_assert_cmpuint (nl_plot_get_n_series (plot), ==, 3);
  g_assert_cmpstr (nl_plot_series_get_label (nl_plot_get_series (plot, 0)), ==, "gamma");
  g_assert_cmpuint (nl_plot_series_get_length (nl_plot_get_series (plot, 0)), ==, 20);
  nl_experiments_page_set_filter (f->page, "adam");
  wait_loaded (f);
  g_assert_cmpuint (nl_plot_get_n_series (plot), ==, 1);
  g_assert_cmpstr (nl_plot_series_get_label (nl_plot_get_series (plot, 0)), ==, "beta");
}

static void
test_other_process (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (NlProject) other = nl_project_open (f->path, FALSE, &error);
  g_autofree char *net = load_mlp ();
  RunSpec delta = { "delta", "sgd", "running", NULL, 0.01, 32, 3, 1, 4, { 0.5, 0.6, 0.7 } };
  Expect e = { f, 4, NULL };
  gint64 beta = f->ids[1], id;
  NlRunRow *row;
  GtkBitset *sel;
  NlPlot *plot = NL_PLOT (nl_experiments_page_get_plot (f->page));

  /* sorted by best accuracy, beta (the best) selected */
  gtk_column_view_sort_by_column (nl_experiments_page_get_column_view (f->page), column_titled (f, "Test acc best"),
                                  GTK_SORT_DESCENDING);
  nl_experiments_page_select_runs (f->page, &beta, 1);
  wait_loaded (f);
  nl_workspace_watch (f->ws, 50);
  id = add_run (other, &delta, net);
  g_assert_true (nl_project_set_run_status (other, id, "running", NULL, &error));
  g_assert_true (nl_test_wait_until (has_n_rows, &e, WAIT_MS));
  {
    g_autofree char *order = names (f);
    g_assert_cmpstr (order, ==, "beta alpha gamma delta");
  }
  row = row_at (f, 3);
  g_assert_cmpint (nl_run_row_get_id (row), ==, id);
  g_assert_cmpstr (nl_run_row_get_status (row), ==, "running");
  g_assert_cmpfloat_with_epsilon (nl_run_row_get_best (row, "test", "accuracy"), 0.5, 1e-12);
  /* the selection stayed on beta */
  sel = gtk_selection_model_get_selection (nl_experiments_page_get_model (f->page));
  g_assert_cmpuint (gtk_bitset_get_size (sel), ==, 1);
  g_assert_cmpint (nl_run_row_get_id (row_at (f, gtk_bitset_get_nth (sel, 0))), ==, beta);
  gtk_bitset_unref (sel);

  /* the running run's next epoch updates its row in place and its curve */
  nl_experiments_page_select_runs (f->page, &id, 1);
  wait_loaded (f);
  g_assert_cmpuint (nl_plot_series_get_length (nl_plot_get_series (plot, 0)), ==, 1);
  {
    NlMetricPoint p = { id, 8, 2, "test", "accuracy", 0.6, WALL0 };
    g_assert_true (nl_project_add_metrics (other, &p, 1, &error));
  }
  for (int i = 0; i < WAIT_MS / 10 && (nl_run_row_get_best (row, "test", "accuracy") < 0.55
                              || nl_plot_series_get_length (nl_plot_get_series (plot, 0)) < 2);
       i++)
    nl_test_pump (10);
  g_assert_true (row == row_at (f, 3));
  g_assert_cmpfloat_with_epsilon (nl_run_row_get_best (row, "test", "accuracy"), 0.6, 1e-12);
  sel = gtk_selection_model_get_selection (nl_experiments_page_get_model (f->page));
  g_assert_cmpuint (gtk_bitset_get_size (sel), ==, 1);
  g_assert_true (row_at (f, gtk_bitset_get_nth (sel, 0)) == row);
  gtk_bitset_unref (sel);
  g_assert_cmpuint (nl_plot_series_get_length (nl_plot_get_series (plot, 0)), ==, 2);
  nl_workspace_watch (f->ws, 0);
}

typedef struct {
  char *message;
  GError *error;
  gboolean done;
} Result;

static void
export_cb (GObject *source, GAsyncResult *res, gpointer data)
{
  Result *r = data;
  r->message = nl_experiments_page_export_finish (NL_EXPERIMENTS_PAGE (source), res, &r->error);
  r->done = TRUE;
}

static gboolean
result_done (gpointer data)
{
  return ((Result *) data)->done;
}

static void
on_toast (NlWorkspace *ws, const char *message, char **last)
{
  g_free (*last);
  *last = g_strdup (message);
}

static gboolean
has_toast (gpointer last)
{
  return *(char **) last != NULL;
}

static void
test_export (Fixture *f, gconstpointer data)
{
  g_autofree char *csv = g_build_filename (f->dir, "m.csv", NULL);
  g_autofree char *st = g_build_filename (f->dir, "w.safetensors", NULL);
  g_autofree char *text = NULL, *header = NULL;
  g_autofree char *toast = NULL, *name = NULL, *chosen = NULL, *again = NULL;
  g_autoptr (GFile) chosen_file = NULL;
  GtkFileChooser *chooser;
  g_autoptr (GArray) pts = points_of (&specs[1], f->ids[1]);
  GString *expected = g_string_new ("run,step,epoch,split,name,value,wall\n");
  Result r = { 0 };
  gsize len;
  guint64 hlen;

  /* the points in the order written */
  for (guint i = 0; i < pts->len; i++)
    {
      NlMetricPoint *p = &g_array_index (pts, NlMetricPoint, i);
      char v[G_ASCII_DTOSTR_BUF_SIZE];
      g_string_append_printf (expected, "beta,%" G_GINT64_FORMAT ",%d,%s,%s,%s,%.3f\n", p->step, p->epoch, p->split,
                              p->name, g_ascii_dtostr (v, sizeof v, p->value), p->wall);
    }
  nl_experiments_page_export_metrics_async (f->page, &f->ids[1], 1, csv, export_cb, &r);
  g_assert_true (nl_test_wait_until (result_done, &r, WAIT_MS));
  g_assert_no_error (r.error);
  g_assert_true (g_str_has_prefix (r.message, "Exported 24 metric points"));
  g_assert_true (g_file_get_contents (csv, &text, NULL, NULL));
  g_assert_cmpstr (text, ==, expected->str);
  g_string_free (expected, TRUE);
  g_free (r.message);

  /* weights: a safetensors file without optimizer state */
  memset (&r, 0, sizeof r);
  nl_experiments_page_export_weights_async (f->page, f->ids[0], st, export_cb, &r);
  g_assert_true (nl_test_wait_until (result_done, &r, WAIT_MS));
  g_assert_no_error (r.error);
  g_assert_true (g_str_has_prefix (r.message, "Exported the weights of epoch 3"));
  g_free (r.message);
  g_clear_pointer (&text, g_free);
  g_assert_true (g_file_get_contents (st, &text, &len, NULL));
  g_assert_cmpuint (len, >, 8);
  memcpy (&hlen, text, 8);
  g_assert_cmpuint (hlen + 8, <=, len);
  header = g_strndup (text + 8, hlen);
  g_assert_nonnull (strstr (header, "\"fc1.weight\""));
  g_assert_null (strstr (header, "optimizer/"));

  /* a run without checkpoints: a clear error, no file */
  memset (&r, 0, sizeof r);
  g_autofree char *none = g_build_filename (f->dir, "none.safetensors", NULL);
  nl_experiments_page_export_weights_async (f->page, f->ids[2], none, export_cb, &r);
  g_assert_true (nl_test_wait_until (result_done, &r, WAIT_MS));
  g_assert_error (r.error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_NOT_FOUND);
  g_clear_error (&r.error);
  g_assert_false (g_file_test (none, G_FILE_TEST_EXISTS));

  /* through the chooser: the selected run's metrics under the name it
   * suggests, in the folder chosen; a toast says so */
  nl_experiments_page_select_runs (f->page, &f->ids[1], 1);
  wait_loaded (f);
  g_signal_connect (f->ws, "toast", G_CALLBACK (on_toast), &toast);
  gtk_widget_activate_action (GTK_WIDGET (f->page), "exp.export-metrics", NULL);
  chooser = nl_test_wait_chooser ("Export Metrics", WAIT_MS);
  g_assert_cmpint (gtk_file_chooser_get_action (chooser), ==, GTK_FILE_CHOOSER_ACTION_SAVE);
  name = gtk_file_chooser_get_current_name (chooser);
  g_assert_cmpstr (name, ==, "beta-metrics.csv");
  chosen = g_build_filename (f->dir, name, NULL);
  chosen_file = g_file_new_for_path (chosen);
  nl_test_choose_file (chooser, chosen_file);
  g_assert_true (nl_test_wait_until (has_toast, &toast, WAIT_MS));
  g_assert_true (g_str_has_prefix (toast, "Exported 24 metric points"));
  g_clear_pointer (&text, g_free);
  g_assert_true (g_file_get_contents (csv, &text, NULL, NULL));
  g_assert_true (g_file_get_contents (chosen, &again, NULL, NULL));
  g_assert_cmpstr (again, ==, text);
  g_signal_handlers_disconnect_by_func (f->ws, on_toast, &toast);
}

typedef struct {
  char *name;
  int version;
} Opened;

static void
on_open_network (NlWorkspace *ws, const char *name, int version, Opened *o)
{
  g_free (o->name);
  o->name = g_strdup (name);
  o->version = version;
}

static gboolean
opened (gpointer data)
{
  return ((Opened *) data)->name != NULL;
}

static void
test_open_network (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (NlProject) other = nl_project_open (f->path, FALSE, &error);
  g_autofree char *saved = NULL;
  Opened o = { 0 };
  gint64 id;

  g_signal_connect (f->ws, "open-network", G_CALLBACK (on_open_network), &o);
  /* the run's snapshot is version 1 of mlp */
  nl_experiments_page_select_runs (f->page, &f->ids[0], 1);
  nl_test_pump (20);
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (f->page), "exp.open-network", NULL));
  g_assert_true (nl_test_wait_until (opened, &o, WAIT_MS));
  g_assert_cmpstr (o.name, ==, "mlp");
  g_assert_cmpint (o.version, ==, 1);
  g_clear_pointer (&o.name, g_free);

  /* a snapshot no saved version matches is saved as its own network first */
  {
    NlRunInfo info = { .name = (char *) "odd", .network_name = (char *) "mlp",
                       .network_json = (char *) "{\"format\":\"netloom.network\",\"name\":\"mlp\",\"nodes\":[]}",
                       .hparams_json = (char *) "{}", .status = (char *) "failed" };
    id = nl_project_create_run (other, &info, &error);
    g_assert_no_error (error);
  }
  nl_experiments_page_open_network (f->page, id);
  g_assert_true (nl_test_wait_until (opened, &o, WAIT_MS));
  g_assert_cmpstr (o.name, ==, "odd network");
  g_assert_cmpint (o.version, ==, 1);
  saved = nl_project_load_network (other, "odd network", 1, &error);
  g_assert_no_error (error);
  g_assert_nonnull (strstr (saved, "\"odd network\""));
  /* asking again reuses it */
  g_clear_pointer (&o.name, g_free);
  nl_experiments_page_open_network (f->page, id);
  g_assert_true (nl_test_wait_until (opened, &o, WAIT_MS));
  g_assert_cmpint (o.version, ==, 1);
  g_clear_pointer (&o.name, g_free);
  g_signal_handlers_disconnect_by_func (f->ws, on_open_network, &o);
}

static void
on_resume (NlExperimentsPage *page, gint64 run, gpointer data)
{
  GArray *calls = data;
  g_array_append_val (calls, run);
}

static void
on_fork (NlWorkspace *ws, gint64 run, GArray *calls)
{
  g_array_append_val (calls, run);
}

static void
test_actions (Fixture *f, gconstpointer data)
{
  GtkWidget *w = GTK_WIDGET (f->page);
  gint64 two[] = { f->ids[0], f->ids[1] };
  g_autoptr (GArray) resumed = g_array_new (FALSE, FALSE, sizeof (gint64));
  g_autoptr (GArray) forked = g_array_new (FALSE, FALSE, sizeof (gint64));

  g_signal_connect (f->ws, "fork-run", G_CALLBACK (on_fork), forked);
  /* nothing selected: nothing happens */
  gtk_widget_activate_action (w, "exp.rename", NULL);
  gtk_widget_activate_action (w, "exp.fork", NULL);
  nl_test_pump (20);
  g_assert_null (nl_test_find_message_dialog (0));
  g_assert_cmpuint (forked->len, ==, 0);

  /* alpha (finished, a checkpoint): resume goes to the handler the window sets */
  nl_experiments_page_select_runs (f->page, &f->ids[0], 1);
  wait_loaded (f);
  gtk_widget_activate_action (w, "exp.resume", NULL);
  g_assert_cmpuint (resumed->len, ==, 0);
  nl_experiments_page_set_resume_handler (f->page, on_resume, g_array_ref (resumed), (GDestroyNotify) g_array_unref);
  gtk_widget_activate_action (w, "exp.resume", NULL);
  gtk_widget_activate_action (w, "exp.fork", NULL);
  g_assert_cmpuint (resumed->len, ==, 1);
  g_assert_cmpint (g_array_index (resumed, gint64, 0), ==, f->ids[0]);
  g_assert_cmpuint (forked->len, ==, 1);
  g_assert_cmpint (g_array_index (forked, gint64, 0), ==, f->ids[0]);

  /* gamma has no checkpoint: no resume */
  nl_experiments_page_select_runs (f->page, &f->ids[2], 1);
  wait_loaded (f);
  gtk_widget_activate_action (w, "exp.resume", NULL);
  g_assert_cmpuint (resumed->len, ==, 1);

  /* two runs: rename and fork are for one */
  nl_experiments_page_select_runs (f->page, two, 2);
  wait_loaded (f);
  gtk_widget_activate_action (w, "exp.rename", NULL);
  gtk_widget_activate_action (w, "exp.fork", NULL);
  nl_test_pump (20);
  g_assert_null (nl_test_find_message_dialog (0));
  g_assert_cmpuint (forked->len, ==, 1);
  g_signal_handlers_disconnect_by_func (f->ws, on_fork, forked);
}

/* A metric not measured yet (a run stopped before its first epoch) reads
 * "–" in the table, never "nan" or a blank that looks like a bug. */
static void
test_metric_text (void)
{
  g_autofree char *none = nl_format_metric (NAN), *some = nl_format_metric (0.8765);
  g_assert_cmpstr (none, ==, "–");
  g_assert_null (strstr (some, "nan"));
  g_assert_nonnull (strstr (some, "0.87"));
}

int
main (int argc, char **argv)
{
  nl_test_gui_init (&argc, &argv);
  g_test_add_func ("/experiments/metric-text", test_metric_text);
#define ADD(path, fn) g_test_add (path, Fixture, NULL, fixture_setup, fn, fixture_teardown)
  ADD ("/experiments/table", test_table);
  ADD ("/experiments/sort", test_sort);
  ADD ("/experiments/filter", test_filter);
  ADD ("/experiments/edit", test_edit);
  ADD ("/experiments/compare", test_compare);
  ADD ("/experiments/other-process", test_other_process);
  ADD ("/experiments/export", test_export);
  ADD ("/experiments/open-network", test_open_network);
  ADD ("/experiments/actions", test_actions);
  return g_test_run ();
}
