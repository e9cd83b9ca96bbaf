/* test-network-page.c — the Network page driven through its real widgets
 * on the sample project: palette, inspector, canvas, problems, status bar,
 * undo/redo, save, templates, import/export. Runs under Xvfb. */
#include "engine/session/nl-analysis.h"
#include "tests/nl-test-gui.h"
#include "tests/nl-test-util.h"
#include "ui/network/nl-graph-canvas.h"
#include "ui/network/nl-inspector.h"
#include "ui/network/nl-network-doc.h"
#include "ui/network/nl-network-page-private.h"
#include "ui/network/nl-palette.h"

#include <glib/gstdio.h>
#include <string.h>

typedef struct {
  char *dir;
  NlWorkspace *ws;
  NlNetworkPage *page;
  GtkWindow *win;
  NlNetworkDoc *doc;
  GPtrArray *toasts;
} Fixture;

static gboolean
not_busy (gpointer data)
{
  return !nl_workspace_is_busy (data);
}

static gboolean
file_exists (gpointer path)
{
  return g_file_test (path, G_FILE_TEST_EXISTS);
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
  g_autofree char *path = NULL;
  NlProject *p;
  f->dir = g_dir_make_tmp ("netloom-page-XXXXXX", &error);
  g_assert_no_error (error);
  path = g_build_filename (f->dir, "sample.netloom", NULL);
  g_assert_true (nl_project_create_sample (path, &error));
  p = nl_project_open (path, FALSE, &error);
  g_assert_no_error (error);
  f->ws = nl_workspace_new (p);
  f->toasts = g_ptr_array_new_with_free_func (g_free);
  g_signal_connect (f->ws, "toast", G_CALLBACK (on_toast), f);
  f->page = g_object_new (NL_TYPE_NETWORK_PAGE, NULL);
  f->win = nl_test_show_in_window (GTK_WIDGET (f->page), 1280, 800);
  nl_network_page_set_workspace (f->page, f->ws);
  g_assert_true (nl_test_wait_until (not_busy, f->ws, 10000));
  nl_test_pump (50);
  f->doc = nl_network_page_get_document (f->page);
}

static void
fixture_teardown (Fixture *f, gconstpointer data)
{
  nl_network_page_set_workspace (f->page, NULL);
  gtk_window_destroy (f->win);
  g_object_unref (f->ws);
  g_ptr_array_unref (f->toasts);
  nl_test_remove_tree (f->dir);
  g_free (f->dir);
}

static const char *
status_text (Fixture *f)
{
  return gtk_label_get_label (GTK_LABEL (nl_network_page_get_part (f->page, "status")));
}

static int
node_index (Fixture *f, const char *id)
{
  return nl_network_find (nl_network_doc_get_network (f->doc), id);
}

static void
select_node (Fixture *f, const char *id)
{
  int i = node_index (f, id);
  g_assert_cmpint (i, >=, 0);
  nl_network_doc_select (f->doc, &i, 1);
  nl_test_pump (20);
}

static void
test_opens_lenet (Fixture *f, gconstpointer data)
{
  const NlNetwork *net = nl_network_doc_get_network (f->doc);
  GtkWidget *canvas = nl_network_page_get_part (f->page, "canvas");
  g_assert_cmpstr (net->name, ==, "lenet");
  g_assert_cmpint (nl_network_n_nodes (net), ==, 11);
  /* 431,080 parameters, shown as 431k; no problems */
  g_assert_nonnull (strstr (status_text (f), "11 layers"));
  g_assert_nonnull (strstr (status_text (f), "431k parameters"));
  g_assert_nonnull (strstr (status_text (f), "no problems"));
  g_assert_false (nl_network_doc_is_modified (f->doc));
  /* fitted: every card centre hits its card */
  for (int i = 0; i < nl_network_n_nodes (net); i++)
    {
      NlNode *n = nl_network_node (net, i);
      double wx, wy;
      nl_graph_canvas_canvas_to_widget (NL_GRAPH_CANVAS (canvas), n->x + NL_CARD_WIDTH / 2, n->y + NL_CARD_HEIGHT / 2,
                                        &wx, &wy);
      g_assert_cmpint (nl_graph_canvas_node_at (NL_GRAPH_CANVAS (canvas), wx, wy), ==, i);
    }
  g_assert_cmpfloat (nl_test_drawn_fraction (canvas), >, 0.02);

  /* the memory estimate follows the batch size the user picks */
  {
    g_autoptr (NlAnalysis) a8 = nl_analysis_new (net, 8, 1);
    g_autofree char *mem = nl_format_bytes (a8->train_bytes);
    g_autofree char *want = g_strdup_printf ("batch 8: %s", mem);
    gtk_spin_button_set_value (GTK_SPIN_BUTTON (nl_network_page_get_part (f->page, "batch")), 8);
    g_assert_nonnull (strstr (status_text (f), want));
  }
}

static void
test_inspector_edit_undo_redo (Fixture *f, gconstpointer data)
{
  NlInspector *insp = NL_INSPECTOR (nl_network_page_get_part (f->page, "inspector"));
  GtkWidget *channels;
  int conv1 = node_index (f, "conv1");

  select_node (f, "conv1");
  g_assert_cmpint (nl_inspector_get_node (insp), ==, conv1);
  channels = nl_inspector_get_field (insp, "channels");
  g_assert_true (GTK_IS_SPIN_BUTTON (channels));
  g_assert_cmpfloat (gtk_spin_button_get_value (GTK_SPIN_BUTTON (channels)), ==, 20);
  /* the user types 32: conv1 832 and conv2 40,050 parameters -> 446,392 */
  gtk_spin_button_set_value (GTK_SPIN_BUTTON (channels), 32);
  nl_test_pump (20);
  g_assert_cmpint (nl_network_node (nl_network_doc_get_network (f->doc), conv1)->params[0].i, ==, 32);
  g_assert_nonnull (strstr (status_text (f), "446k parameters"));
  g_assert_true (nl_network_doc_is_modified (f->doc));

  gtk_widget_activate_action (GTK_WIDGET (f->page), "editor.undo", NULL);
  nl_test_pump (20);
  g_assert_nonnull (strstr (status_text (f), "431k parameters"));
  g_assert_cmpfloat (gtk_spin_button_get_value (GTK_SPIN_BUTTON (nl_inspector_get_field (insp, "channels"))), ==, 20);
  g_assert_false (nl_network_doc_is_modified (f->doc));
  gtk_widget_activate_action (GTK_WIDGET (f->page), "editor.redo", NULL);
  nl_test_pump (20);
  g_assert_nonnull (strstr (status_text (f), "446k parameters"));
  g_assert_cmpfloat (gtk_spin_button_get_value (GTK_SPIN_BUTTON (nl_inspector_get_field (insp, "channels"))), ==, 32);
}

static void
test_shape_error_listed (Fixture *f, gconstpointer data)
{
  NlInspector *insp = NL_INSPECTOR (nl_network_page_get_part (f->page, "inspector"));
  GtkListBox *problems = GTK_LIST_BOX (nl_network_page_get_part (f->page, "problems"));
  GtkWidget *kernel;
  GtkListBoxRow *row;
  int n;
  const int *sel;
  GtkWidget *canvas = nl_network_page_get_part (f->page, "canvas");

  select_node (f, "conv2");
  kernel = nl_inspector_get_field (insp, "kernel");
  g_assert_true (GTK_IS_ENTRY (kernel));
  gtk_editable_set_text (GTK_EDITABLE (kernel), "30x30");
  g_signal_emit_by_name (kernel, "activate");
  nl_test_pump (20);
  g_assert_nonnull (strstr (status_text (f), "1 problem"));
  row = gtk_list_box_get_row_at_index (problems, 0);
  g_assert_nonnull (row);
  g_assert_cmpstr (adw_preferences_row_get_title (ADW_PREFERENCES_ROW (row)), ==, "conv2");
  /* clicking the problem focuses the node */
  nl_network_doc_select (f->doc, NULL, 0);
  g_signal_emit_by_name (problems, "row-activated", row);
  sel = nl_network_doc_get_selection (f->doc, &n);
  g_assert_cmpint (n, ==, 1);
  g_assert_cmpint (sel[0], ==, node_index (f, "conv2"));
  nl_test_pump (50);
  g_assert_cmpfloat (nl_test_drawn_fraction (canvas), >, 0.02);

  /* a value the op refuses: nothing changes, the user is told */
  kernel = nl_inspector_get_field (insp, "kernel");
  gtk_editable_set_text (GTK_EDITABLE (kernel), "banana");
  g_signal_emit_by_name (kernel, "activate");
  nl_test_pump (20);
  g_assert_cmpuint (f->toasts->len, >=, 1);
  g_assert_cmpint (nl_network_node (nl_network_doc_get_network (f->doc), node_index (f, "conv2"))->params[1].v[0], ==,
                   30);
}

static void
test_palette_adds_after_selection (Fixture *f, gconstpointer data)
{
  NlPalette *palette = NL_PALETTE (nl_network_page_get_part (f->page, "palette"));
  g_auto (GStrv) visible = NULL;
  const NlNetwork *net;
  int dense, fc2 = node_index (f, "fc2");
  gboolean connected = FALSE;

  nl_palette_set_filter (palette, "pool");
  visible = nl_palette_dup_visible_ops (palette);
  g_assert_cmpuint (g_strv_length (visible), ==, 4); /* with SequencePool */
  g_assert_true (g_strv_contains ((const char *const *) visible, "MaxPool2D"));
  nl_palette_set_filter (palette, NULL);

  select_node (f, "fc2");
  g_assert_true (nl_palette_activate_op (palette, "Softmax"));
  nl_test_pump (20);
  net = nl_network_doc_get_network (f->doc);
  dense = node_index (f, "softmax");
  g_assert_cmpint (dense, >=, 0);
  for (guint k = 0; k < net->edges->len; k++)
    {
      NlEdge *e = &g_array_index (net->edges, NlEdge, k);
      connected = connected || (e->from == fc2 && e->to == dense);
    }
  g_assert_true (connected);
  g_assert_nonnull (strstr (status_text (f), "12 layers"));
  g_assert_nonnull (strstr (status_text (f), "no problems"));
  /* one undo removes the node and its wire */
  gtk_widget_activate_action (GTK_WIDGET (f->page), "editor.undo", NULL);
  nl_test_pump (20);
  g_assert_cmpint (nl_network_n_nodes (nl_network_doc_get_network (f->doc)), ==, 11);
}

static void
test_save_new_version (Fixture *f, gconstpointer data)
{
  g_autoptr (GPtrArray) versions = NULL;
  g_autofree char *json = NULL;
  g_autoptr (NlNetwork) saved = NULL;

  select_node (f, "fc1");
  g_assert_true (nl_network_doc_set_param (f->doc, node_index (f, "fc1"), "units", "256", NULL));
  gtk_widget_activate_action (GTK_WIDGET (f->page), "editor.save", NULL);
  g_assert_true (nl_test_wait_until (not_busy, f->ws, 10000));
  nl_test_pump (20);
  versions = nl_project_list_network_versions (nl_workspace_get_project (f->ws), "lenet", NULL);
  g_assert_cmpuint (versions->len, ==, 2);
  json = nl_project_load_network (nl_workspace_get_project (f->ws), "lenet", 0, NULL);
  saved = nl_network_load_data (json, -1, NULL);
  g_assert_cmpint (nl_network_node (saved, nl_network_find (saved, "fc1"))->params[0].i, ==, 256);
  g_assert_false (nl_network_doc_is_modified (f->doc));

  /* the older version opens from the project */
  nl_network_page_open_network (f->page, "lenet", 1);
  g_assert_true (nl_test_wait_until (not_busy, f->ws, 10000));
  nl_test_pump (20);
  g_assert_cmpint (nl_network_node (nl_network_doc_get_network (f->doc), node_index (f, "fc1"))->params[0].i, ==,
                   500);
}

static void
test_templates_and_files (Fixture *f, gconstpointer data)
{
  g_autofree char *json_path = g_build_filename (f->dir, "net.json", NULL);
  g_autofree char *png_path = g_build_filename (f->dir, "net.png", NULL);
  g_autofree char *svg_path = g_build_filename (f->dir, "net.svg", NULL);
  g_autoptr (NlNetwork) back = NULL;
  g_autoptr (GError) error = NULL;
  g_autoptr (GdkTexture) png = NULL;
  g_autofree char *svg = NULL;
  g_autofree char *doc_json = NULL, *back_json = NULL;

  gtk_widget_activate_action (GTK_WIDGET (f->page), "editor.new", "s", "resnet-small");
  nl_test_pump (20);
  g_assert_cmpstr (nl_network_doc_get_name (f->doc), ==, "resnet-small_2");
  g_assert_nonnull (strstr (status_text (f), "no problems"));

  _nl_network_page_export_file (f->page, json_path, "json");
  _nl_network_page_export_file (f->page, png_path, "png");
  _nl_network_page_export_file (f->page, svg_path, "svg");
  g_assert_true (nl_test_wait_until (file_exists, json_path, 5000));
  back = nl_network_load_file (json_path, &error);
  g_assert_no_error (error);
  doc_json = nl_network_to_json (nl_network_doc_get_network (f->doc));
  back_json = nl_network_to_json (back);
  g_assert_cmpstr (doc_json, ==, back_json);
  png = gdk_texture_new_from_filename (png_path, &error);
  g_assert_no_error (error);
  g_assert_cmpint (gdk_texture_get_height (png), >, gdk_texture_get_width (png)); /* a tall diagram */
  g_assert_true (g_file_get_contents (svg_path, &svg, NULL, NULL));
  g_assert_nonnull (strstr (svg, "<svg"));

  /* import: the file's network under a fresh name */
  gtk_widget_activate_action (GTK_WIDGET (f->page), "editor.new", "s", "empty");
  nl_test_pump (20);
  g_assert_cmpint (nl_network_n_nodes (nl_network_doc_get_network (f->doc)), ==, 0);
  g_assert_nonnull (strstr (status_text (f), "problem"));
  _nl_network_page_import_file (f->page, json_path, "json");
  for (int i = 0; i < 200 && nl_network_n_nodes (nl_network_doc_get_network (f->doc)) == 0; i++)
    nl_test_pump (10);
  g_assert_cmpint (nl_network_n_nodes (nl_network_doc_get_network (f->doc)), ==, nl_network_n_nodes (back));
}

static void
test_broken_file_refused (Fixture *f, gconstpointer data)
{
  g_autofree char *bad = g_build_filename (f->dir, "broken.json", NULL);
  int before = nl_network_n_nodes (nl_network_doc_get_network (f->doc));
  g_assert_true (g_file_set_contents (bad, "{\"format\": \"netloom.network\", \"nodes\": [", -1, NULL));
  _nl_network_page_import_file (f->page, bad, "json");
  for (int i = 0; i < 200 && f->toasts->len == 0; i++)
    nl_test_pump (10);
  g_assert_cmpuint (f->toasts->len, ==, 1);
  g_assert_cmpint (nl_network_n_nodes (nl_network_doc_get_network (f->doc)), ==, before);
}

int
main (int argc, char **argv)
{
  nl_test_gui_init (&argc, &argv);
#define ADD(path, fn) g_test_add ("/network-page/" path, Fixture, NULL, fixture_setup, fn, fixture_teardown)
  ADD ("opens-lenet", test_opens_lenet);
  ADD ("inspector-edit-undo-redo", test_inspector_edit_undo_redo);
  ADD ("shape-error-listed", test_shape_error_listed);
  ADD ("palette-adds-after-selection", test_palette_adds_after_selection);
  ADD ("save-new-version", test_save_new_version);
  ADD ("templates-and-files", test_templates_and_files);
  ADD ("broken-file-refused", test_broken_file_refused);
  return g_test_run ();
}
