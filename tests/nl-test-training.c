/* nl-test-training.c — the Training page's tests' fixture and helpers. */
#include "tests/nl-test-training.h"
#include "tests/nl-test-gui.h"
#include "tests/nl-test-util.h"

#include <glib/gstdio.h>
#include <stdio.h>
#include <string.h>

/* IDX files as tests/cli-lib.sh's make_mnist writes them: label
 * (i * 7 + 3) % 10, a bright band of rows 2 * label .. 2 * label + 1. */
static void
write_idx (const char *dir, const char *prefix, int n)
{
  g_autofree char *ip = g_strdup_printf ("%s/%s-images-idx3-ubyte", dir, prefix);
  g_autofree char *lp = g_strdup_printf ("%s/%s-labels-idx1-ubyte", dir, prefix);
  g_autoptr (GRand) rand = g_rand_new_with_seed (1);
  FILE *fi = fopen (ip, "wb"), *fl = fopen (lp, "wb");
  guint8 hi[16] = { 0, 0, 8, 3 }, hl[8] = { 0, 0, 8, 1 };
  g_assert_nonnull (fi);
  g_assert_nonnull (fl);
  for (int k = 0; k < 4; k++)
    hi[4 + k] = hl[4 + k] = (guint8) (n >> (24 - 8 * k));
  hi[11] = hi[15] = 28;
  fwrite (hi, 1, 16, fi);
  fwrite (hl, 1, 8, fl);
  for (int i = 0; i < n; i++)
    {
      guint8 label = (guint8) ((i * 7 + 3) % 10), px[28 * 28];
      for (int y = 0; y < 28; y++)
        for (int x = 0; x < 28; x++)
          px[y * 28 + x] = (guint8) MIN (255, g_rand_int_range (rand, 0, 60) + (y / 2 == label ? 150 : 0));
      fwrite (px, 1, sizeof px, fi);
      fwrite (&label, 1, 1, fl);
    }
  fclose (fi);
  fclose (fl);
}

static void
save_pipeline (NlProject *p, const char *name, const char *spec, int batch)
{
  NlPipelineInfo pl = { .name = (char *) name, .dataset_spec = (char *) spec, .batch_size = batch, .workers = 1 };
  g_assert_cmpint (nl_project_save_pipeline (p, &pl, NULL), >, 0);
}

static void
on_changed (NlWorkspace *ws, guint what, NlTrainingFixture *f)
{
  f->changed |= what;
}

gboolean
nl_test_training_ready (gpointer data)
{
  NlTrainingFixture *f = data;
  return !nl_training_page_is_loading (f->page) && !nl_workspace_is_busy (f->ws);
}

void
nl_test_training_setup (NlTrainingFixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *spec = NULL, *missing = NULL;
  NlProject *p;

  f->dir = g_dir_make_tmp ("netloom-training-XXXXXX", &error);
  g_assert_no_error (error);
  f->path = g_build_filename (f->dir, "t.netloom", NULL);
  f->data = g_build_filename (f->dir, "tiny", NULL);
  g_assert_true (nl_project_create_sample (f->path, &error));
  g_mkdir (f->data, 0755);
  write_idx (f->data, "train", 512);
  write_idx (f->data, "t10k", 128);
  p = nl_project_open (f->path, FALSE, &error);
  g_assert_no_error (error);
  spec = g_strdup_printf ("mnist:%s", f->data);
  missing = g_strdup_printf ("mnist:%s/nowhere", f->dir);
  save_pipeline (p, "tiny", spec, 64);
  save_pipeline (p, "tiny16", spec, 16);
  save_pipeline (p, "missing", missing, 64);
  f->ws = nl_workspace_new (p);
  f->p = p;
  g_signal_connect (f->ws, "changed", G_CALLBACK (on_changed), f);
  f->page = g_object_new (NL_TYPE_TRAINING_PAGE, NULL);
  f->win = nl_test_show_in_window (GTK_WIDGET (f->page), 1400, 900);
  nl_training_page_set_workspace (f->page, f->ws);
  g_assert_true (nl_test_wait_until (nl_test_training_ready, f, 20000));
}

void
nl_test_training_teardown (NlTrainingFixture *f, gconstpointer data)
{
  gtk_window_destroy (f->win);
  nl_test_pump (20);
  g_object_unref (f->ws);
  nl_test_remove_tree (f->dir);
  g_free (f->dir);
  g_free (f->path);
  g_free (f->data);
}

/* ---- driving the form ---- */

void
nl_test_training_select (NlTrainingFixture *f, const char *field, const char *item)
{
  AdwComboRow *row = ADW_COMBO_ROW (nl_training_page_get_form_widget (f->page, field));
  GListModel *m = adw_combo_row_get_model (row);
  for (guint i = 0; i < g_list_model_get_n_items (m); i++)
    {
      g_autoptr (GtkStringObject) o = g_list_model_get_item (m, i);
      if (!strcmp (gtk_string_object_get_string (o), item))
        {
          adw_combo_row_set_selected (row, i);
          return;
        }
    }
  g_error ("%s has no item '%s'", field, item);
}

GtkSpinButton *
nl_test_training_spin (NlTrainingFixture *f, const char *field)
{
  return GTK_SPIN_BUTTON (nl_training_page_get_form_widget (f->page, field));
}

void
nl_test_training_setup_run (NlTrainingFixture *f, const char *pipeline, int epochs)
{
  nl_test_training_select (f, "network", "mlp");
  nl_test_training_select (f, "pipeline", pipeline);
  gtk_spin_button_set_value (nl_test_training_spin (f, "epochs"), epochs);
  nl_test_pump (10);
}

/* The button bound to ACTION (its sensitivity is the action's state). */
static GtkWidget *
action_button (GtkWidget *w, const char *action)
{
  if (GTK_IS_BUTTON (w) && !g_strcmp0 (gtk_actionable_get_action_name (GTK_ACTIONABLE (w)), action))
    return w;
  for (GtkWidget *c = gtk_widget_get_first_child (w); c; c = gtk_widget_get_next_sibling (c))
    {
      GtkWidget *b = action_button (c, action);
      if (b)
        return b;
    }
  return NULL;
}

gboolean
nl_test_training_action_enabled (NlTrainingFixture *f, const char *action)
{
  GtkWidget *b = action_button (GTK_WIDGET (f->page), action);
  g_assert_nonnull (b);
  return gtk_widget_get_sensitive (b);
}

void
nl_test_training_activate (NlTrainingFixture *f, const char *action)
{
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (f->page), action, NULL));
}

static gboolean
run_ended (gpointer data)
{
  NlTrainingState s = nl_training_page_get_state (((NlTrainingFixture *) data)->page);
  return s == NL_TRAINING_FINISHED || s == NL_TRAINING_FAILED || s == NL_TRAINING_STOPPED;
}

void
nl_test_training_wait_end (NlTrainingFixture *f)
{
  g_assert_true (nl_test_wait_until (run_ended, f, 120000));
  /* the session is freed once its last event is drained */
  nl_test_pump (30);
}

gsize
nl_test_training_n_points (NlTrainingFixture *f, const char *plot, guint series)
{
  return nl_plot_series_get_length (nl_plot_get_series (nl_training_page_get_plot (f->page, plot), series));
}

guint
nl_test_training_count_metrics (NlTrainingFixture *f, gint64 run, const char *name)
{
  g_autoptr (GArray) rows = nl_project_get_metrics (f->p, run, name, 0, NULL, NULL);
  g_assert_nonnull (rows);
  return rows->len;
}

gboolean
nl_test_training_banner_shown (NlTrainingFixture *f)
{
  GtkWidget *box = gtk_widget_get_first_child (GTK_WIDGET (f->page));
  GtkWidget *revealer = gtk_widget_get_first_child (box);
  g_assert_true (GTK_IS_REVEALER (revealer));
  return gtk_revealer_get_reveal_child (GTK_REVEALER (revealer));
}

