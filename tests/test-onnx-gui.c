/* test-onnx-gui.c — ONNX in the workbench through its real widgets, on a
 * project with LeNet trained on a (tiny, written here) CIFAR-10: Export
 * ONNX from the Experiments page and from the Network page (dialog, save
 * chooser, toast, the file re-imported), File > Import ONNX Model (the
 * network opens laid out, its weights in a run; a malformed file is one
 * dialog and adds nothing), and the Network page's shapes for the pipeline
 * chosen in its status bar. Runs under Xvfb. */
#include "engine/formats/nl-checkpoint.h"
#include "engine/formats/onnx/nl-onnx-export.h"
#include "engine/formats/onnx/nl-onnx-import.h"
#include "engine/session/nl-run-model.h"
#include "engine/session/nl-run-onnx.h"
#include "tests/nl-test-gui.h"
#include "tests/nl-test-util.h"
#include "ui/network/nl-network-doc.h"
#include "ui/network/nl-network-page.h"
#include "ui/experiments/nl-experiments-page.h"
#include "ui/widgets/nl-onnx-export-dialog.h"
#include "ui/nl-screenshot.h"
#include "ui/nl-window.h"

#include <math.h>
#include <string.h>

/* generous: the machine may be busy */
#define WAIT_MS 30000
/* an ONNX node test whose one node (Det) netloom has no op for */
#define DET_MODEL "/usr/share/libonnx-testdata/data/node/test_det_2d/model.onnx"

typedef struct {
  char *dir, *path, *cifar, *onnx;
  gint64 trained, empty;
  NlWorkspace *ws;
  GPtrArray *toasts;
} Fixture;

/* A CIFAR-10 binary set of 4 images per file, 3x32x32. */
static void
write_cifar (const char *dir)
{
  guint8 rec[3073];
  g_assert_cmpint (g_mkdir_with_parents (dir, 0755), ==, 0);
  for (int f = 0; f <= 5; f++)
    {
      g_autofree char *name = f < 5 ? g_strdup_printf ("data_batch_%d.bin", f + 1) : g_strdup ("test_batch.bin");
      g_autofree char *path = g_build_filename (dir, name, NULL);
      GString *s = g_string_new (NULL);
      for (int i = 0; i < 4; i++)
        {
          rec[0] = (guint8) ((f + i) % 10);
          for (int k = 1; k < 3073; k++)
            rec[k] = (guint8) (k * 7 + i * 13 + f);
          g_string_append_len (s, (const char *) rec, sizeof rec);
        }
      g_assert_true (g_file_set_contents (path, s->str, (gssize) s->len, NULL));
      g_string_free (s, TRUE);
    }
}

static char *
source_text (const char *rel)
{
  g_autofree char *path = nl_test_source_path (rel);
  char *text = NULL;
  g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
  return text;
}

static gint64
add_run (NlProject *p, const char *name, const char *net_json, const char *dataset)
{
  g_autoptr (GError) error = NULL;
  g_auto (NlRunConfig) rc = { 0 };
  g_autofree char *hp = NULL;
  gint64 id;
  nl_run_config_init (&rc);
  nl_run_config_set_text (&rc.dataset, dataset);
  rc.epochs = 1;
  hp = nl_run_config_to_json (&rc);
  NlRunInfo info = { .name = (char *) name, .network_name = (char *) "lenet", .network_json = (char *) net_json,
                     .hparams_json = hp, .seed = 3, .device = (char *) "cpu", .status = (char *) "finished" };
  id = nl_project_create_run (p, &info, &error);
  g_assert_no_error (error);
  return id;
}

/* LeNet's weights for 3x32x32 samples as the run's one checkpoint. */
static void
add_checkpoint (NlProject *p, gint64 run, const char *net_json)
{
  NlShape sample = nl_shape_of (3, (int64_t) 3, (int64_t) 32, (int64_t) 32);
  nl_test_add_checkpoint (p, run, net_json, &sample, 11, 1, 0.5);
}

static void
add_pipeline (NlProject *p, const char *name, const char *spec)
{
  g_autoptr (GError) error = NULL;
  NlPipelineInfo pl = { .name = (char *) name, .dataset_spec = (char *) spec, .batch_size = 32 };
  g_assert_cmpint (nl_project_save_pipeline (p, &pl, &error), >, 0);
  g_assert_no_error (error);
}

static void
on_toast (NlWorkspace *ws, const char *msg, Fixture *f)
{
  g_ptr_array_add (f->toasts, g_strdup (msg));
}

static void
fixture_setup (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *lenet = source_text ("data/networks/lenet.json"), *mlp = source_text ("data/networks/mlp.json");
  g_autofree char *spec = NULL;
  NlProject *p;

  f->dir = g_dir_make_tmp ("netloom-onnx-gui-XXXXXX", &error);
  g_assert_no_error (error);
  f->cifar = g_build_filename (f->dir, "cifar", NULL);
  write_cifar (f->cifar);
  spec = g_strconcat ("cifar10:", f->cifar, NULL);
  f->path = g_build_filename (f->dir, "p.netloom", NULL);
  p = nl_project_open (f->path, TRUE, &error);
  g_assert_no_error (error);
  g_assert_cmpint (nl_project_save_network (p, "lenet", lenet, &error), >, 0);
  g_assert_cmpint (nl_project_save_network (p, "mlp", mlp, &error), >, 0);
  add_pipeline (p, "cifar", spec);
  add_pipeline (p, "gone", "cifar10:/nonexistent/netloom-cifar");
  f->trained = add_run (p, "trained", lenet, spec);
  add_checkpoint (p, f->trained, lenet);
  f->empty = add_run (p, "empty", lenet, spec);
  f->onnx = g_build_filename (f->dir, "lenet-export.onnx", NULL);
  if (nl_onnx_available ())
    g_assert_true (nl_run_export_onnx (p, f->trained, "last", f->onnx, 0, TRUE, NULL, &error));
  g_assert_no_error (error);
  f->ws = nl_workspace_new (p);
  f->toasts = g_ptr_array_new_with_free_func (g_free);
  g_signal_connect (f->ws, "toast", G_CALLBACK (on_toast), f);
}

static void
fixture_teardown (Fixture *f, gconstpointer data)
{
  g_signal_handlers_disconnect_by_data (f->ws, f);
  nl_test_pump (20);
  g_clear_object (&f->ws);
  g_ptr_array_unref (f->toasts);
  nl_test_remove_tree (f->dir);
  g_free (f->dir);
  g_free (f->path);
  g_free (f->cifar);
  g_free (f->onnx);
}

static gboolean
has_toast (gpointer data)
{
  return ((Fixture *) data)->toasts->len > 0;
}

static const char *
last_toast (Fixture *f)
{
  g_assert_true (nl_test_wait_until (has_toast, f, WAIT_MS));
  return g_ptr_array_index (f->toasts, f->toasts->len - 1);
}

static gboolean
not_busy (gpointer data)
{
  return !nl_workspace_is_busy (data);
}

/* Saves the window as OUT.png under $NL_TEST_SCREENSHOT_DIR, when set: how
 * the GUI looked, for a person to check. */
static void
maybe_screenshot (GtkWidget *widget, const char *name)
{
  const char *dir = g_getenv ("NL_TEST_SCREENSHOT_DIR");
  g_autofree char *path = dir ? g_strdup_printf ("%s/%s.png", dir, name) : NULL;
  g_autoptr (GError) error = NULL;
  for (int i = 0; path && i < 200 && gtk_widget_get_width (widget) == 0; i++)
    nl_test_pump (10);
  nl_test_pump (path ? 100 : 0);
  if (path && !nl_widget_save_png (widget, path, &error))
    g_test_message ("screenshot %s: %s", path, error->message);
}

/* A file an export wrote reads back as ONNX: the importer takes it, and
 * onnx.checker where Python has the onnx package. */
static NlOnnxImport *
check_onnx (const char *path, int opset)
{
  g_autoptr (GError) error = NULL;
  NlOnnxImport *imp = nl_onnx_import_file (path, &error);
  g_autofree char *script = NULL, *out = NULL, *err = NULL;
  int status = 0;
  g_assert_no_error (error);
  g_assert_nonnull (imp);
  script = g_strdup_printf ("import sys, onnx\n"
                            "m = onnx.load(sys.argv[1])\n"
                            "onnx.checker.check_model(m, full_check=True)\n"
                            "assert [o.version for o in m.opset_import if o.domain in ('', 'ai.onnx')] == [%d]\n",
                            opset);
  /* python3 in PATH, else Debian's (python3-onnx is /usr/bin/python3's) */
  const char *python = NULL;
  for (guint i = 0; i < 2 && !python; i++)
    {
      const char *candidate = i == 0 ? "python3" : "/usr/bin/python3";
      if (g_spawn_sync (NULL, (char *[]) { (char *) candidate, (char *) "-c", (char *) "import onnx", NULL }, NULL,
                        G_SPAWN_SEARCH_PATH | G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL, NULL, NULL, &status, NULL)
          && g_spawn_check_wait_status (status, NULL))
        python = candidate;
    }
  if (!python)
    {
      g_test_message ("onnx.checker not run: no Python with the onnx package (Debian python3-onnx)");
      return imp;
    }
  g_assert_true (g_spawn_sync (NULL, (char *[]) { (char *) python, (char *) "-c", script, (char *) path, NULL },
                               NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, &out, &err, &status, &error));
  if (!g_spawn_check_wait_status (status, NULL))
    g_error ("onnx.checker refused %s: %s", path, err);
  return imp;
}

/* The Export ONNX dialog of an action: options set, then the chooser
 * answered with the file NAME in the fixture's folder. */
static char *
export_through_dialog (Fixture *f, GtkWidget *owner, const char *action, const char *suggested, const char *name,
                       int opset)
{
  NlOnnxExportDialog *dlg;
  GtkFileChooser *chooser;
  g_autofree char *current = NULL;
  char *path = g_build_filename (f->dir, name, NULL);
  g_autoptr (GFile) file = g_file_new_for_path (path);

  g_assert_true (gtk_widget_activate_action (owner, action, NULL));
  dlg = NL_ONNX_EXPORT_DIALOG (nl_test_wait_window (NL_TYPE_ONNX_EXPORT_DIALOG, WAIT_MS));
  g_assert_nonnull (dlg);
  /* the defaults: the best checkpoint, the newest opset, probabilities out */
  g_assert_cmpstr (nl_onnx_export_dialog_get_checkpoint (dlg), ==, "best");
  g_assert_cmpint (nl_onnx_export_dialog_get_opset (dlg), ==, NL_ONNX_OPSET_MAX);
  g_assert_true (nl_onnx_export_dialog_get_softmax (dlg));
  nl_onnx_export_dialog_set_opset (dlg, opset);
  g_assert_cmpint (nl_onnx_export_dialog_get_opset (dlg), ==, opset);
  maybe_screenshot (GTK_WIDGET (dlg), "onnx-export-dialog");
  adw_message_dialog_response (ADW_MESSAGE_DIALOG (dlg), "export");
  gtk_window_close (GTK_WINDOW (dlg));
  chooser = nl_test_wait_chooser ("Export ONNX", WAIT_MS);
  g_assert_cmpint (gtk_file_chooser_get_action (chooser), ==, GTK_FILE_CHOOSER_ACTION_SAVE);
  current = gtk_file_chooser_get_current_name (chooser);
  g_assert_cmpstr (current, ==, suggested);
  /* the dialog picks its start folder a moment after it shows: let it,
   * before the folder is set */
  nl_test_pump (200);
  nl_test_choose_file (chooser, file);
  return path;
}

static gboolean
experiments_loaded (gpointer page)
{
  return !nl_experiments_page_is_loading (page);
}

static void
test_experiments_export (Fixture *f, gconstpointer data)
{
  NlExperimentsPage *page = g_object_new (NL_TYPE_EXPERIMENTS_PAGE, NULL);
  GtkWindow *win = nl_test_show_in_window (GTK_WIDGET (page), 1280, 800);
  g_autoptr (NlOnnxImport) imp = NULL;
  g_autofree char *path = NULL, *run_s = g_strdup_printf ("%" G_GINT64_FORMAT, f->trained);
  NlShape s;

  if (!nl_onnx_available ())
    {
      g_test_skip ("built without ONNX (protobuf-c, libonnx-dev)");
      gtk_window_destroy (win);
      return;
    }
  nl_experiments_page_set_workspace (page, f->ws);
  nl_test_pump (20);
  g_assert_true (nl_test_wait_until (experiments_loaded, page, WAIT_MS));
  /* a run without a checkpoint has nothing to export */
  nl_experiments_page_select_runs (page, &f->empty, 1);
  nl_test_pump (50);
  gtk_widget_activate_action (GTK_WIDGET (page), "exp.export-onnx", NULL);
  nl_test_pump (50);
  g_assert_null (nl_test_find_window (NL_TYPE_ONNX_EXPORT_DIALOG));

  nl_experiments_page_select_runs (page, &f->trained, 1);
  nl_test_pump (50);
  path = export_through_dialog (f, GTK_WIDGET (page), "exp.export-onnx", "trained.onnx", "trained.onnx", 13);
  g_assert_true (g_str_has_prefix (last_toast (f), "Exported checkpoint"));
  g_assert_nonnull (strstr (last_toast (f), "“trained.onnx”"));
  imp = check_onnx (path, 13);
  g_assert_cmpstr (nl_onnx_import_get_metadata (imp, "netloom_run"), ==, run_s);
  s = nl_onnx_import_get_sample_shape (imp);
  g_assert_cmpint (s.ndim, ==, 3);
  g_assert_cmpint (s.d[0], ==, 3);
  g_assert_cmpint (s.d[2], ==, 32);
  maybe_screenshot (GTK_WIDGET (win), "onnx-experiments-page");

  nl_experiments_page_set_workspace (page, NULL);
  gtk_window_destroy (win);
}

static gboolean
doc_named (gpointer data)
{
  void **d = data;
  return g_strcmp0 (nl_network_doc_get_name (d[0]), d[1]) == 0
         && nl_network_n_nodes (nl_network_doc_get_network (d[0])) > 0;
}

static void
wait_network (NlNetworkDoc *doc, NlWorkspace *ws, const char *name)
{
  void *d[] = { doc, (void *) name };
  g_assert_true (nl_test_wait_until (doc_named, d, WAIT_MS));
  g_assert_true (nl_test_wait_until (not_busy, ws, WAIT_MS));
  nl_test_pump (30);
}

static NlNetworkPage *
network_page (Fixture *f, GtkWindow **win)
{
  NlNetworkPage *page = g_object_new (NL_TYPE_NETWORK_PAGE, NULL);
  *win = nl_test_show_in_window (GTK_WIDGET (page), 1280, 800);
  nl_network_page_set_workspace (page, f->ws);
  wait_network (nl_network_page_get_document (page), f->ws, "lenet");
  return page;
}

static void
test_network_export (Fixture *f, gconstpointer data)
{
  GtkWindow *win;
  NlNetworkPage *page = network_page (f, &win);
  g_autoptr (NlOnnxImport) imp = NULL;
  g_autofree char *path = NULL, *none = NULL;

  if (!nl_onnx_available ())
    {
      g_test_skip ("built without ONNX (protobuf-c, libonnx-dev)");
      gtk_window_destroy (win);
      return;
    }
  /* lenet with the weights of its newest run that has them */
  path = export_through_dialog (f, GTK_WIDGET (page), "editor.export-onnx", "lenet.onnx", "lenet.onnx", 17);
  g_assert_cmpstr (last_toast (f), ==, "Exported “lenet” with the weights of run “trained” to “lenet.onnx”");
  imp = check_onnx (path, 17);
  g_assert_cmpint (nl_network_n_nodes (nl_onnx_import_get_network (imp)), >=, 8);

  /* mlp was never trained: the toast says so, no file */
  nl_network_page_open_network (page, "mlp", 0);
  wait_network (nl_network_page_get_document (page), f->ws, "mlp");
  g_ptr_array_set_size (f->toasts, 0);
  none = export_through_dialog (f, GTK_WIDGET (page), "editor.export-onnx", "mlp.onnx", "mlp.onnx", 17);
  g_assert_true (g_str_has_prefix (last_toast (f), "Could not export ONNX: "));
  g_assert_nonnull (strstr (last_toast (f), "mlp"));
  g_assert_false (g_file_test (none, G_FILE_TEST_EXISTS));

  nl_network_page_set_workspace (page, NULL);
  gtk_window_destroy (win);
}

static gboolean
window_loaded (gpointer data)
{
  return nl_window_get_workspace (data) != NULL && !nl_window_is_busy (data);
}

/* The run model of the newest run of NETWORK with weights. */
static void
load_run_model (NlProject *p, const char *network, gint64 run, NlRunModel *l)
{
  g_autoptr (GError) error = NULL;
  if (run <= 0)
    run = nl_run_find_for_network (p, network, &error);
  g_assert_no_error (error);
  g_assert_true (nl_run_model_load (l, p, run, NULL, NULL, FALSE, &error));
  g_assert_no_error (error);
}

static double
weight_sum (const NlModel *m)
{
  double sum = 0;
  for (int i = 0; i < m->n_nodes * NL_GRAPH_MAX_SLOTS; i++)
    if (m->weights[i])
      for (int64_t k = 0; k < nl_tensor_numel (m->weights[i]); k++)
        sum += fabs (nl_tensor_f32 (m->weights[i])[k]);
  return sum;
}

static GPtrArray *
network_names (NlProject *p)
{
  g_autoptr (GError) error = NULL;
  GPtrArray *list = nl_project_list_networks (p, &error);
  g_assert_no_error (error);
  return list;
}

static void
import_chosen (NlWindow *win, const char *path)
{
  g_autoptr (GFile) file = g_file_new_for_path (path);
  GtkFileChooser *chooser;
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (win), "win.import-onnx", NULL));
  chooser = nl_test_wait_chooser ("Import ONNX Model", WAIT_MS);
  g_assert_cmpint (gtk_file_chooser_get_action (chooser), ==, GTK_FILE_CHOOSER_ACTION_OPEN);
  nl_test_pump (200);
  nl_test_choose_file (chooser, file);
}

/* How far the cards reach from top to bottom; every card placed. */
static double
spread_y (const NlNetwork *net)
{
  double min_y = INFINITY, max_y = -INFINITY;
  for (int i = 0; i < nl_network_n_nodes (net); i++)
    {
      NlNode *n = nl_network_node (net, i);
      g_assert_true (n->has_position);
      min_y = MIN (min_y, n->y);
      max_y = MAX (max_y, n->y);
    }
  return max_y - min_y;
}

static void
test_import (Fixture *f, gconstpointer data)
{
  NlWindow *win;
  NlNetworkPage *page;
  NlNetworkDoc *doc;
  const NlNetwork *net;
  NlProject *p = nl_workspace_get_project (f->ws);
  g_auto (NlRunModel) orig = { 0 };
  g_auto (NlRunModel) got = { 0 };
  g_autoptr (GPtrArray) before = NULL, after = NULL;
  g_autofree char *bad = g_build_filename (f->dir, "bad.onnx", NULL);
  AdwMessageDialog *dlg;

  if (!nl_onnx_available ())
    {
      g_test_skip ("built without ONNX (protobuf-c, libonnx-dev)");
      return;
    }
  win = nl_window_new (NULL);
  gtk_window_set_default_size (GTK_WINDOW (win), 1280, 800);
  gtk_window_present (GTK_WINDOW (win));
  nl_window_open_project (win, f->path, NL_OPEN_EXISTING);
  g_assert_true (nl_test_wait_until (window_loaded, win, WAIT_MS));
  nl_window_show_page (win, "experiments");
  page = NL_NETWORK_PAGE (nl_window_get_page (win, "network"));
  doc = nl_network_page_get_document (page);

  /* File > Import ONNX Model: the network page shows it, laid out */
  import_chosen (win, f->onnx);
  wait_network (doc, nl_window_get_workspace (win), "lenet-export");
  g_assert_cmpstr (nl_window_get_page_name (win), ==, "network");
  net = nl_network_doc_get_network (doc);
  g_assert_cmpint (nl_network_n_nodes (net), >=, 8);
  g_assert_false (nl_network_doc_is_modified (doc));
  /* a chain top to bottom, a layer per card */
  g_assert_cmpfloat (spread_y (net), >=, (nl_network_n_nodes (net) - 1) * NL_CARD_HEIGHT);
  g_assert_cmpfloat (nl_test_drawn_fraction (nl_network_page_get_part (page, "canvas")), >, 0.02);
  maybe_screenshot (GTK_WIDGET (win), "onnx-imported-network");

  /* with its weights: a run whose model holds the exported checkpoint's */
  load_run_model (p, "lenet", f->trained, &orig);
  load_run_model (p, "lenet-export", 0, &got);
  g_assert_cmpint (got.model->n_params, ==, orig.model->n_params);
  g_assert_cmpfloat (fabs (weight_sum (got.model) - weight_sum (orig.model)), <=, 1e-4 * weight_sum (orig.model));

  /* again: a name of its own */
  import_chosen (win, f->onnx);
  wait_network (doc, nl_window_get_workspace (win), "lenet-export_2");

  /* a malformed file: one dialog naming it, nothing added */
  before = network_names (p);
  g_assert_true (g_file_set_contents (bad, "\x0a\xff\xff\xff\x0f not a model", -1, NULL));
  nl_network_page_import_onnx (page, bad);
  dlg = nl_test_find_message_dialog (WAIT_MS);
  g_assert_nonnull (dlg);
  g_assert_nonnull (strstr (adw_message_dialog_get_heading (dlg), "“bad.onnx”"));
  g_assert_cmpstr (adw_message_dialog_get_body (dlg), !=, "");
  g_assert_true (nl_test_wait_until (not_busy, nl_window_get_workspace (win), WAIT_MS));
  after = network_names (p);
  g_assert_cmpuint (after->len, ==, before->len);
  g_assert_cmpstr (nl_network_doc_get_name (doc), ==, "lenet-export_2");
  gtk_window_destroy (GTK_WINDOW (dlg));

  /* a node netloom has no op for: the dialog lists it, nothing added */
  if (g_file_test (DET_MODEL, G_FILE_TEST_IS_REGULAR))
    {
      nl_network_page_import_onnx (page, DET_MODEL);
      dlg = nl_test_find_message_dialog (WAIT_MS);
      g_assert_nonnull (dlg);
      g_assert_nonnull (strstr (adw_message_dialog_get_heading (dlg), "“model.onnx”"));
      g_assert_nonnull (strstr (adw_message_dialog_get_body (dlg), "Det"));
      maybe_screenshot (GTK_WIDGET (dlg), "onnx-import-error");
      g_assert_true (nl_test_wait_until (not_busy, nl_window_get_workspace (win), WAIT_MS));
      g_clear_pointer (&after, g_ptr_array_unref);
      after = network_names (p);
      g_assert_cmpuint (after->len, ==, before->len);
      gtk_window_destroy (GTK_WINDOW (dlg));
    }
  else
    g_test_message ("unsupported-node import not checked: no %s (Debian libonnx-testdata)", DET_MODEL);

  /* netloom-cli import-onnx leaves the cards unplaced: they open laid out */
  g_assert_cmpint (nl_run_import_onnx (p, f->onnx, "from-cli", NULL, NULL), >, 0);
  nl_workspace_notify (nl_window_get_workspace (win), NL_WORKSPACE_NETWORKS);
  nl_network_page_open_network (page, "from-cli", 0);
  wait_network (doc, nl_window_get_workspace (win), "from-cli");
  net = nl_network_doc_get_network (doc);
  g_assert_false (nl_network_doc_is_modified (doc));
  g_assert_cmpfloat (spread_y (net), >=, (nl_network_n_nodes (net) - 1) * NL_CARD_HEIGHT);

  gtk_window_destroy (GTK_WINDOW (win));
  nl_test_pump (20);
}

static const char *
status_text (NlNetworkPage *page)
{
  return gtk_label_get_label (GTK_LABEL (nl_network_page_get_part (page, "status")));
}

typedef struct {
  NlNetworkPage *page;
  const char *want;
} StatusWait;

static gboolean
status_has (gpointer data)
{
  StatusWait *w = data;
  return strstr (status_text (w->page), w->want) != NULL;
}

static void
wait_status (NlNetworkPage *page, const char *want)
{
  StatusWait w = { page, want };
  if (!nl_test_wait_until (status_has, &w, WAIT_MS))
    g_error ("the status bar reads “%s”, not “%s”", status_text (page), want);
}

static guint
pipeline_index (GtkDropDown *dd, const char *name)
{
  GListModel *m = gtk_drop_down_get_model (dd);
  for (guint i = 0; i < g_list_model_get_n_items (m); i++)
    if (g_strcmp0 (gtk_string_list_get_string (GTK_STRING_LIST (m), i), name) == 0)
      return i;
  g_error ("no pipeline %s in the status bar", name);
}

static void
test_shapes (Fixture *f, gconstpointer data)
{
  GtkWindow *win;
  NlNetworkPage *page = network_page (f, &win);
  NlNetworkDoc *doc = nl_network_page_get_document (page);
  GtkDropDown *dd = GTK_DROP_DOWN (nl_network_page_get_part (page, "pipelines"));
  int input = nl_network_find (nl_network_doc_get_network (doc), "data");
  g_autoptr (GError) error = NULL;
  guint n_toasts;

  /* no pipeline: MNIST's 1x28x28 (431,080 parameters) */
  g_assert_cmpuint (gtk_drop_down_get_selected (dd), ==, 0);
  wait_status (page, "input 1×28×28 (default)");
  wait_status (page, "431k parameters");

  /* the CIFAR-10 pipeline: 3x32x32 (conv1 1,520, conv2 25,050, fc1 625,500, fc2 5,010) */
  gtk_drop_down_set_selected (dd, pipeline_index (dd, "cifar"));
  wait_status (page, "input 3×32×32 from “cifar”");
  wait_status (page, "657k parameters");
  wait_status (page, "no problems");
  maybe_screenshot (GTK_WIDGET (win), "onnx-network-shapes");

  /* a shape the user fixes wins over the data's; undo gives the data's back */
  g_assert_cmpint (input, >=, 0);
  g_assert_true (nl_network_doc_set_param (doc, input, "shape", "1,28,28", &error));
  g_assert_no_error (error);
  wait_status (page, "input 1×28×28 (fixed)");
  wait_status (page, "431k parameters");
  nl_network_doc_undo (doc);
  wait_status (page, "input 3×32×32 from “cifar”");

  /* a pipeline whose data is not on this machine: the default, and why */
  g_ptr_array_set_size (f->toasts, 0);
  gtk_drop_down_set_selected (dd, pipeline_index (dd, "gone"));
  wait_status (page, "input 1×28×28 (default; pipeline “gone”: ");
  g_assert_nonnull (strstr (last_toast (f), "gone"));

  /* a new pipeline shows up in the list; the choice stays, its data is
   * not opened again (no second toast) */
  add_pipeline (nl_workspace_get_project (f->ws), "another", "cifar10:/nonexistent");
  n_toasts = f->toasts->len;
  nl_workspace_notify (f->ws, NL_WORKSPACE_PIPELINES);
  g_assert_cmpuint (pipeline_index (dd, "another"), >, 0);
  g_assert_cmpuint (gtk_drop_down_get_selected (dd), ==, pipeline_index (dd, "gone"));
  g_assert_true (nl_test_wait_until (not_busy, f->ws, WAIT_MS));
  nl_test_pump (100);
  g_assert_cmpuint (f->toasts->len, ==, n_toasts);
  /* the chosen pipeline edited: its shape again */
  add_pipeline (nl_workspace_get_project (f->ws), "gone", "cifar10:/nonexistent/elsewhere");
  nl_workspace_notify (f->ws, NL_WORKSPACE_PIPELINES);
  g_assert_true (nl_test_wait_until (not_busy, f->ws, WAIT_MS));
  nl_test_pump (100);
  g_assert_cmpuint (f->toasts->len, ==, n_toasts + 1);
  g_assert_nonnull (strstr (last_toast (f), "elsewhere"));

  gtk_drop_down_set_selected (dd, 0);
  wait_status (page, "input 1×28×28 (default)  ·  11 layers");
  g_assert_true (nl_test_wait_until (not_busy, f->ws, WAIT_MS));

  nl_network_page_set_workspace (page, NULL);
  gtk_window_destroy (win);
}

int
main (int argc, char **argv)
{
  nl_test_gui_init (&argc, &argv);
#define ADD(path, fn) g_test_add (path, Fixture, NULL, fixture_setup, fn, fixture_teardown)
  ADD ("/onnx-gui/experiments-export", test_experiments_export);
  ADD ("/onnx-gui/network-export", test_network_export);
  ADD ("/onnx-gui/import", test_import);
  ADD ("/onnx-gui/shapes", test_shapes);
  return g_test_run ();
}
