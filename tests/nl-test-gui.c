/* nl-test-gui.c — GUI test helpers (see nl-test-gui.h). */
#include "tests/nl-test-gui.h"
#include "ui/nl-screenshot.h"
#include "engine/formats/nl-checkpoint.h"
#include "engine/graph/nl-network.h"
#include "engine/train/nl-optim.h"
#include "engine/session/nl-run.h"
#include "tests/nl-test-util.h"

#include <stdio.h>
#include <stdlib.h>

void
nl_test_gui_init (int *argc, char ***argv)
{
  /* isolated home, config and data dirs, but the system's XDG_DATA_DIRS:
   * libadwaita 1.2 looks up its GSettings schema there unconditionally */
  g_autofree char *data_dirs = g_strdup (g_getenv ("XDG_DATA_DIRS"));
  g_test_init (argc, argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);
  if (data_dirs)
    g_setenv ("XDG_DATA_DIRS", data_dirs, TRUE);
  else
    g_unsetenv ("XDG_DATA_DIRS");
  /* file chooser dialogs need the GSettings schema source, which reads the
   * system data dirs once: let it read the real ones now, before each test
   * isolates its own (libadwaita may not, where a settings portal answers) */
  g_settings_schema_source_get_default ();
  /* no accessibility bus or session bus under Xvfb: GTK warns about both;
   * warnings stay visible but only criticals fail a test */
  g_setenv ("GTK_A11Y", "none", TRUE);
  g_setenv ("NO_AT_BRIDGE", "1", TRUE);
  g_log_set_always_fatal (G_LOG_FATAL_MASK | G_LOG_LEVEL_CRITICAL);
  if (!gtk_init_check ())
    {
      printf ("1..0 # SKIP no display (run under xvfb-run -a)\n");
      exit (77);
    }
  adw_init ();
}

static gboolean
set_flag (gpointer data)
{
  *(gboolean *) data = TRUE;
  return G_SOURCE_REMOVE;
}

void
nl_test_pump (guint ms)
{
  gboolean done = FALSE;
  g_timeout_add (ms, set_flag, &done);
  while (!done)
    g_main_context_iteration (NULL, TRUE);
}

gboolean
nl_test_wait_until (gboolean (*cond) (gpointer data), gpointer data, guint timeout_ms)
{
  gint64 end = g_get_monotonic_time () + (gint64) timeout_ms * 1000;
  gboolean ok;
  while (!(ok = cond (data)) && g_get_monotonic_time () < end)
    nl_test_pump (10);
  return ok;
}

GtkWindow *
nl_test_find_window (GType type)
{
  GListModel *tops = gtk_window_get_toplevels ();
  for (guint i = 0; i < g_list_model_get_n_items (tops); i++)
    {
      g_autoptr (GtkWindow) w = g_list_model_get_item (tops, i);
      if (G_TYPE_CHECK_INSTANCE_TYPE (w, type) && gtk_widget_get_visible (GTK_WIDGET (w)))
        return w; /* the toplevel list holds it */
    }
  return NULL;
}

static gboolean
window_shown (gpointer type)
{
  return nl_test_find_window (GPOINTER_TO_SIZE (type)) != NULL;
}

GtkWindow *
nl_test_wait_window (GType type, guint timeout_ms)
{
  nl_test_wait_until (window_shown, GSIZE_TO_POINTER (type), timeout_ms);
  return nl_test_find_window (type);
}

AdwMessageDialog *
nl_test_find_message_dialog (guint timeout_ms)
{
  return ADW_MESSAGE_DIALOG (nl_test_wait_window (ADW_TYPE_MESSAGE_DIALOG, timeout_ms));
}

GtkFileChooser *
nl_test_wait_chooser (const char *title, guint timeout_ms)
{
  GtkWindow *dlg = nl_test_wait_window (GTK_TYPE_FILE_CHOOSER_DIALOG, timeout_ms);
  g_assert_nonnull (dlg);
  g_assert_true (gtk_window_get_modal (dlg));
  g_assert_cmpstr (gtk_window_get_title (dlg), ==, title);
  return GTK_FILE_CHOOSER (dlg);
}

typedef struct {
  GtkFileChooser *chooser;
  GFile *file;
} Choice;

static gboolean
chooser_has (gpointer data)
{
  Choice *c = data;
  g_autoptr (GFile) file = gtk_file_chooser_get_file (c->chooser);
  return file && g_file_equal (file, c->file);
}

void
nl_test_choose_file (GtkFileChooser *chooser, GFile *file)
{
  Choice c = { chooser, file };
  /* a dialog picks its start folder a moment after it shows, over what was
   * set before: set it until it holds */
  for (int i = 0; i < 50 && !chooser_has (&c); i++)
    {
      if (gtk_file_chooser_get_action (chooser) == GTK_FILE_CHOOSER_ACTION_SAVE)
        {
          g_autoptr (GFile) folder = g_file_get_parent (file);
          g_autofree char *name = g_file_get_basename (file);
          g_assert_true (gtk_file_chooser_set_current_folder (chooser, folder, NULL));
          gtk_file_chooser_set_current_name (chooser, name);
        }
      else
        g_assert_true (gtk_file_chooser_set_file (chooser, file, NULL));
      nl_test_wait_until (chooser_has, &c, 200);
    }
  g_assert_true (chooser_has (&c));
  gtk_dialog_response (GTK_DIALOG (chooser), GTK_RESPONSE_ACCEPT);
}

GtkWindow *
nl_test_show_in_window (GtkWidget *child, int w, int h)
{
  GtkWindow *win = GTK_WINDOW (gtk_window_new ());
  gtk_window_set_default_size (win, w, h);
  gtk_window_set_child (win, child);
  gtk_window_present (win);
  for (int i = 0; i < 200 && (!gtk_widget_get_mapped (child) || gtk_widget_get_width (child) == 0); i++)
    nl_test_pump (10);
  nl_test_pump (50);
  return win;
}

double
nl_test_drawn_fraction (GtkWidget *widget)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GdkTexture) tex = NULL;
  int w, h;
  guint32 *px;
  GHashTable *counts;
  guint best = 0;
  gsize n;
  /* a widget waiting for its next layout renders nothing; on a loaded
   * machine the frame clock may take a while to get there */
  for (int i = 0; i < 300 && !(tex = nl_widget_render_texture (widget, NULL)); i++)
    nl_test_pump (10);
  if (!tex)
    tex = nl_widget_render_texture (widget, &error);
  if (!tex)
    {
      g_test_message ("cannot render %s: %s", G_OBJECT_TYPE_NAME (widget), error->message);
      return 0;
    }
  w = gdk_texture_get_width (tex);
  h = gdk_texture_get_height (tex);
  n = (gsize) w * h;
  px = g_new (guint32, n);
  gdk_texture_download (tex, (guchar *) px, (gsize) w * 4);
  counts = g_hash_table_new (NULL, NULL);
  for (gsize i = 0; i < n; i++)
    {
      guint c = GPOINTER_TO_UINT (g_hash_table_lookup (counts, GUINT_TO_POINTER (px[i]))) + 1;
      g_hash_table_insert (counts, GUINT_TO_POINTER (px[i]), GUINT_TO_POINTER (c));
      best = MAX (best, c);
    }
  g_hash_table_unref (counts);
  g_free (px);
  return 1.0 - (double) best / n;
}

void
nl_test_add_checkpoint (NlProject *p, gint64 run, const char *net_json, const NlShape *sample, guint64 seed,
                        int epoch, double accuracy)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (NlNetwork) net = nl_network_load_data (net_json, -1, &error);
  g_autoptr (NlModel) model = NULL;
  g_autoptr (GBytes) blob = NULL;
  NlOptimConfig sgd;
  NlTrainPosition pos = { .epoch = epoch, .optimizer = (char *) "sgd" };

  g_assert_no_error (error);
  nl_optim_config_init (&sgd, NL_OPTIM_SGD);
  model = nl_model_new_full (net, sample, &(NlModelOptions) { .seed = seed, .optim = &sgd }, &error);
  g_assert_no_error (error);
  blob = nl_checkpoint_save (model, &pos, &error);
  g_assert_no_error (error);
  g_assert_cmpint (nl_project_add_checkpoint (p, run, epoch, 10 * epoch, g_bytes_get_data (blob, NULL),
                                              g_bytes_get_size (blob), "test_accuracy", accuracy, TRUE, epoch, &error),
                   >, 0);
}

gint64
nl_test_train_small_conv (NlProject *p, const char *dataset_dir)
{
  static const char *net_json =
    "{\"format\":\"netloom.network\",\"version\":1,\"name\":\"small\",\"nodes\":["
    "{\"id\":\"data\",\"op\":\"Input\"},"
    "{\"id\":\"conv1\",\"op\":\"Conv2D\",\"params\":{\"channels\":4,\"kernel\":[3,3]}},"
    "{\"id\":\"relu1\",\"op\":\"Activation\",\"params\":{\"act_type\":\"relu\"}},"
    "{\"id\":\"pool1\",\"op\":\"MaxPool2D\",\"params\":{\"pool_size\":[2,2]}},"
    "{\"id\":\"flat\",\"op\":\"Flatten\"},{\"id\":\"fc1\",\"op\":\"Dense\",\"params\":{\"units\":16}},"
    "{\"id\":\"act\",\"op\":\"Activation\"},{\"id\":\"fc2\",\"op\":\"Dense\",\"params\":{\"units\":10}}],"
    "\"edges\":[\"data -> conv1\",\"conv1 -> relu1\",\"relu1 -> pool1\",\"pool1 -> flat\",\"flat -> fc1\","
    "\"fc1 -> act\",\"act -> fc2\"]}";
  g_autoptr (GError) error = NULL;
  g_autoptr (NlNetwork) net = nl_network_load_data (net_json, -1, &error);
  g_autofree char *spec = g_strdup_printf ("mnist:%s", dataset_dir);
  g_auto (NlRunConfig) cfg = { 0 };
  gint64 run = 0;
  g_assert_no_error (error);
  nl_test_tiny_train_config (&cfg, spec);
  cfg.epochs = 2;
  g_assert_true (nl_run_train (p, "small", net, &cfg, NULL, &run, &error));
  g_assert_no_error (error);
  return run;
}

void
nl_test_save_shot (GtkWidget *widget, const char *name)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *path = NULL;
  if (!g_getenv ("NL_SHOT_DIR"))
    return;
  path = g_build_filename (g_getenv ("NL_SHOT_DIR"), name, NULL);
  nl_test_pump (300);
  g_assert_true (nl_widget_save_png (widget, path, &error));
}

NlProject *
nl_test_scratch_project (const char *tag, int n_train, int n_test, char **data_dir, char **work_dir)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *data_tmpl = g_strdup_printf ("netloom-%s-data-XXXXXX", tag);
  g_autofree char *work_tmpl = g_strdup_printf ("netloom-%s-XXXXXX", tag);
  g_autofree char *path = NULL;
  NlProject *project;

  *data_dir = g_dir_make_tmp (data_tmpl, NULL);
  *work_dir = g_dir_make_tmp (work_tmpl, NULL);
  g_assert_nonnull (*data_dir);
  g_assert_nonnull (*work_dir);
  nl_test_write_idx_dataset (*data_dir, n_train, n_test);
  path = g_build_filename (*work_dir, "p.netloom", NULL);
  project = nl_project_open (path, TRUE, &error);
  g_assert_no_error (error);
  return project;
}

void
nl_test_scratch_remove (char *data_dir, char *work_dir)
{
  nl_test_remove_tree (work_dir);
  nl_test_remove_tree (data_dir);
  g_free (work_dir);
  g_free (data_dir);
}
