/* nl-network-page-actions.c — the editor.* actions, their shortcuts, and
 * the one place that decides which are enabled. Saving and file I/O run in
 * worker threads. */
#include "ui/network/nl-network-page-private.h"
#include <glib/gi18n.h>
#include "core/nl-atomic-file.h"
#include "ui/widgets/nl-file-chooser.h"

/* ---- save: to the project as a new version ---- */

typedef struct {
  char *name, *json;
} SaveJob;

static void
save_job_free (SaveJob *j)
{
  g_free (j->name);
  g_free (j->json);
  g_free (j);
}

static void
save_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  SaveJob *j = task_data;
  NlProject *p = g_object_get_data (G_OBJECT (task), "project");
  GError *error = NULL;
  if (!nl_project_save_network (p, j->name, j->json, &error))
    {
      g_task_return_error (task, error);
      return;
    }
  g_task_return_int (task, MAX (_nl_network_page_latest_version (p, j->name), 1));
}

static void
save_done (GObject *source, GAsyncResult *res, gpointer data)
{
  NlNetworkPage *page = NL_NETWORK_PAGE (source);
  NlWorkspace *ws = g_object_get_data (G_OBJECT (res), "workspace");
  SaveJob *j = g_task_get_task_data (G_TASK (res));
  g_autoptr (GError) error = NULL;
  gssize version = g_task_propagate_int (G_TASK (res), &error);

  if (version <= 0)
    nl_workspace_toast (ws, _("Could not save “%s”: %s"), j->name, error->message);
  else if (page->ws == ws)
    {
      /* the document may have changed while saving: it is then still modified */
      if (g_strcmp0 (nl_network_doc_get_name (page->doc), j->name) == 0)
        {
          g_autofree char *now = nl_network_to_json (nl_network_doc_get_network (page->doc));
          if (g_strcmp0 (now, j->json) == 0)
            nl_network_doc_mark_saved (page->doc);
          page->version = (int) version;
        }
      nl_workspace_notify (ws, NL_WORKSPACE_NETWORKS);
      nl_workspace_toast (ws, _("Saved “%s” as version %d"), j->name, (int) version);
      _nl_network_page_update_actions (page);
    }
  nl_workspace_busy_pop (ws);
  g_object_unref (ws);
}

void
_nl_network_page_save (NlNetworkPage *page)
{
  g_autoptr (GTask) task = NULL;
  SaveJob *j;
  if (!page->ws)
    return;
  j = g_new0 (SaveJob, 1);
  j->name = g_strdup (nl_network_doc_get_name (page->doc));
  j->json = nl_network_to_json (nl_network_doc_get_network (page->doc));
  task = g_task_new (page, NULL, save_done, NULL);
  g_task_set_task_data (task, j, (GDestroyNotify) save_job_free);
  g_object_set_data (G_OBJECT (task), "project", nl_workspace_get_project (page->ws));
  g_object_set_data (G_OBJECT (task), "workspace", g_object_ref (page->ws));
  nl_workspace_busy_push (page->ws);
  g_task_run_in_thread (task, save_thread);
}

/* ---- new network from a template ---- */

static char *
unique_name (NlNetworkPage *page, const char *base)
{
  GListModel *names = G_LIST_MODEL (page->names);
  char *name = g_strdup (base);
  for (int k = 2;; k++)
    {
      gboolean taken = FALSE;
      for (guint i = 0; i < g_list_model_get_n_items (names); i++)
        taken = taken || g_strcmp0 (gtk_string_list_get_string (page->names, i), name) == 0;
      if (!taken)
        return name;
      g_free (name);
      name = g_strdup_printf ("%s_%d", base, k);
    }
}

static void
action_new (GtkWidget *widget, const char *action, GVariant *param)
{
  NlNetworkPage *page = NL_NETWORK_PAGE (widget);
  g_assert (NL_IS_NETWORK_PAGE (widget));
  g_assert (g_variant_is_of_type (param, G_VARIANT_TYPE_STRING));
  const char *template = g_variant_get_string (param, NULL);
  g_autoptr (GError) error = NULL;
  NlNetwork *net;

  if (g_str_equal (template, "empty"))
    net = nl_network_new ("network");
  else
    {
      g_autofree char *path = g_strdup_printf ("/org/netloom/data/networks/%s.json", template);
      g_autoptr (GBytes) bytes = g_resources_lookup_data (path, G_RESOURCE_LOOKUP_FLAGS_NONE, &error);
      net = bytes ? nl_network_load_data (g_bytes_get_data (bytes, NULL), (gssize) g_bytes_get_size (bytes), &error)
                  : NULL;
      if (!net)
        {
          _nl_network_page_problem (page, error->message);
          return;
        }
    }
  g_free (net->name);
  net->name = unique_name (page, g_str_equal (template, "empty") ? "network" : template);
  _nl_network_page_show_network (page, net, 0);
  nl_network_doc_auto_layout (page->doc, NULL, 0);
  nl_graph_canvas_fit (page->canvas);
}

/* ---- import / export through files ---- */

static void
import_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  GError *error = NULL;
  NlNetwork *net = nl_network_load_file (task_data, &error);
  if (net)
    g_task_return_pointer (task, net, (GDestroyNotify) nl_network_free);
  else
    g_task_return_error (task, error);
}

static void
import_done (GObject *source, GAsyncResult *res, gpointer data)
{
  NlNetworkPage *page = NL_NETWORK_PAGE (source);
  g_autoptr (GError) error = NULL;
  NlNetwork *net = g_task_propagate_pointer (G_TASK (res), &error);
  if (!net)
    {
      _nl_network_page_problem (page, error->message);
      return;
    }
  {
    g_autofree char *name = unique_name (page, net->name && net->name[0] ? net->name : "imported");
    g_free (net->name);
    net->name = g_steal_pointer (&name);
  }
  _nl_network_page_show_network (page, net, 0);
}

/* Used by the file chooser and by tests. */
void
_nl_network_page_import_file (NlNetworkPage *page, const char *path, const char *kind)
{
  g_autoptr (GTask) task = g_task_new (page, NULL, import_done, NULL);
  g_task_set_task_data (task, g_strdup (path), g_free);
  g_task_run_in_thread (task, import_thread);
}

static void
export_json_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  GError *error = NULL;
  const char *path = g_object_get_data (G_OBJECT (task), "path");
  if (nl_atomic_file_set_contents (path, task_data, strlen (task_data), &error))
    g_task_return_boolean (task, TRUE);
  else
    g_task_return_error (task, error);
}

static void
export_done (GObject *source, GAsyncResult *res, gpointer data)
{
  NlNetworkPage *page = NL_NETWORK_PAGE (source);
  g_autoptr (GError) error = NULL;
  if (!g_task_propagate_boolean (G_TASK (res), &error))
    _nl_network_page_problem (page, error->message);
  else if (page->ws)
    nl_workspace_toast (page->ws, _("Exported %s"), (const char *) g_object_get_data (G_OBJECT (res), "path"));
}

/* Used by the file chooser and by tests. Diagrams are drawn on the main
 * loop (they use the widget's style) — a few ms; JSON is written in a thread. */
void
_nl_network_page_export_file (NlNetworkPage *page, const char *path, const char *kind)
{
  g_autoptr (GError) error = NULL;
  if (g_str_equal (kind, "json"))
    {
      g_autoptr (GTask) task = g_task_new (page, NULL, export_done, NULL);
      g_task_set_task_data (task, nl_network_to_json (nl_network_doc_get_network (page->doc)), g_free);
      g_object_set_data_full (G_OBJECT (task), "path", g_strdup (path), g_free);
      g_task_run_in_thread (task, export_json_thread);
      return;
    }
  if (!(g_str_equal (kind, "png") ? nl_graph_canvas_export_png (page->canvas, path, &error)
                                  : nl_graph_canvas_export_svg (page->canvas, path, &error)))
    _nl_network_page_problem (page, error->message);
  else if (page->ws)
    nl_workspace_toast (page->ws, _("Exported %s"), path);
}

static void
import_chosen (GtkWidget *page, const char *path, gpointer kind)
{
  _nl_network_page_import_file (NL_NETWORK_PAGE (page), path, kind);
}

static void
export_chosen (GtkWidget *page, const char *path, gpointer kind)
{
  _nl_network_page_export_file (NL_NETWORK_PAGE (page), path, kind);
}

static void
action_import (GtkWidget *widget, const char *action, GVariant *param)
{
  g_assert (NL_IS_NETWORK_PAGE (widget));
  nl_choose_file (widget, GTK_FILE_CHOOSER_ACTION_OPEN, _("Import Network"), _("_Import"), NULL, NULL, import_chosen,
                  (gpointer) "json", NULL);
}

static void
action_export (GtkWidget *widget, const char *action, GVariant *param)
{
  NlNetworkPage *page = NL_NETWORK_PAGE (widget);
  g_assert (NL_IS_NETWORK_PAGE (widget));
  g_assert (g_variant_is_of_type (param, G_VARIANT_TYPE_STRING));
  const char *kind = g_variant_get_string (param, NULL);
  g_autofree char *suggested = g_strdup_printf ("%s.%s", nl_network_doc_get_name (page->doc), kind);
  nl_choose_file (widget, GTK_FILE_CHOOSER_ACTION_SAVE, _("Export Network"), _("_Export"), suggested, NULL,
                  export_chosen,
                  g_strdup (kind), g_free);
}

static void
delete_response (AdwMessageDialog *dlg, const char *response, NlNetworkPage *page)
{
  g_autoptr (GError) error = NULL;
  if (!g_str_equal (response, "delete") || !page->ws)
    return;
  if (!nl_project_delete_network (nl_workspace_get_project (page->ws), nl_network_doc_get_name (page->doc), &error))
    {
      _nl_network_page_problem (page, error->message);
      return;
    }
  nl_workspace_notify (page->ws, NL_WORKSPACE_NETWORKS);
  _nl_network_page_open_default (page);
}

static void
action_delete_network (GtkWidget *widget, const char *action, GVariant *param)
{
  NlNetworkPage *page = NL_NETWORK_PAGE (widget);
  g_assert (NL_IS_NETWORK_PAGE (widget));
  GtkRoot *root = gtk_widget_get_root (widget);
  g_autofree char *heading = g_strdup_printf (_("Delete “%s”?"), nl_network_doc_get_name (page->doc));
  AdwMessageDialog *dlg = ADW_MESSAGE_DIALOG (adw_message_dialog_new (
    GTK_IS_WINDOW (root) ? GTK_WINDOW (root) : NULL, heading,
    _("Every saved version of this network is deleted. Runs keep their own copy of the network.")));
  adw_message_dialog_add_responses (dlg, "cancel", _("_Cancel"), "delete", _("_Delete"), NULL);
  adw_message_dialog_set_response_appearance (dlg, "delete", ADW_RESPONSE_DESTRUCTIVE);
  g_signal_connect (dlg, "response", G_CALLBACK (delete_response), page);
  gtk_window_present (GTK_WINDOW (dlg));
}

/* ---- editing ---- */

static void
action_save (GtkWidget *widget, const char *action, GVariant *param)
{
  g_assert (NL_IS_NETWORK_PAGE (widget));
  _nl_network_page_save (NL_NETWORK_PAGE (widget));
}

static void
action_undo (GtkWidget *widget, const char *action, GVariant *param)
{
  g_assert (NL_IS_NETWORK_PAGE (widget));
  nl_network_doc_undo (NL_NETWORK_PAGE (widget)->doc);
}

static void
action_redo (GtkWidget *widget, const char *action, GVariant *param)
{
  g_assert (NL_IS_NETWORK_PAGE (widget));
  nl_network_doc_redo (NL_NETWORK_PAGE (widget)->doc);
}

static void
action_copy (GtkWidget *widget, const char *action, GVariant *param)
{
  NlNetworkPage *page = NL_NETWORK_PAGE (widget);
  g_assert (NL_IS_NETWORK_PAGE (widget));
  int n;
  const int *sel = nl_network_doc_get_selection (page->doc, &n);
  g_autofree char *json = NULL;
  if (n == 0)
    return;
  json = nl_network_doc_copy_json (page->doc, sel, n);
  gdk_clipboard_set_text (gtk_widget_get_clipboard (widget), json);
}

static void
paste_done (GObject *source, GAsyncResult *res, gpointer data)
{
  NlNetworkPage *page = data;
  g_autoptr (GError) error = NULL;
  g_autofree char *text = gdk_clipboard_read_text_finish (GDK_CLIPBOARD (source), res, &error);
  if (text && !nl_network_doc_paste_json (page->doc, text, 40, 40, &error))
    _nl_network_page_problem (page, error->message);
  g_object_unref (page);
}

static void
action_paste (GtkWidget *widget, const char *action, GVariant *param)
{
  g_assert (NL_IS_NETWORK_PAGE (widget));
  gdk_clipboard_read_text_async (gtk_widget_get_clipboard (widget), NULL, paste_done, g_object_ref (widget));
}

static void
action_duplicate (GtkWidget *widget, const char *action, GVariant *param)
{
  NlNetworkPage *page = NL_NETWORK_PAGE (widget);
  g_assert (NL_IS_NETWORK_PAGE (widget));
  g_autoptr (GError) error = NULL;
  if (!nl_network_doc_duplicate_selection (page->doc, &error) && error)
    _nl_network_page_problem (page, error->message);
}

static void
action_delete (GtkWidget *widget, const char *action, GVariant *param)
{
  g_assert (NL_IS_NETWORK_PAGE (widget));
  nl_graph_canvas_delete_selection (NL_NETWORK_PAGE (widget)->canvas);
}

static void
action_select_all (GtkWidget *widget, const char *action, GVariant *param)
{
  g_assert (NL_IS_NETWORK_PAGE (widget));
  nl_network_doc_select_all (NL_NETWORK_PAGE (widget)->doc);
}

static void
action_layout (GtkWidget *widget, const char *action, GVariant *param)
{
  NlNetworkPage *page = NL_NETWORK_PAGE (widget);
  g_assert (NL_IS_NETWORK_PAGE (widget));
  int n;
  const int *sel = nl_network_doc_get_selection (page->doc, &n);
  /* one card selected means nothing to arrange: do the whole graph */
  nl_network_doc_auto_layout (page->doc, n > 1 ? sel : NULL, n > 1 ? n : 0);
  if (n <= 1)
    nl_graph_canvas_fit (page->canvas);
}

static void
action_fit (GtkWidget *widget, const char *action, GVariant *param)
{
  g_assert (NL_IS_NETWORK_PAGE (widget));
  nl_graph_canvas_fit (NL_NETWORK_PAGE (widget)->canvas);
}

static void
action_zoom_in (GtkWidget *widget, const char *action, GVariant *param)
{
  g_assert (NL_IS_NETWORK_PAGE (widget));
  nl_graph_canvas_zoom_in (NL_NETWORK_PAGE (widget)->canvas);
}

static void
action_zoom_out (GtkWidget *widget, const char *action, GVariant *param)
{
  g_assert (NL_IS_NETWORK_PAGE (widget));
  nl_graph_canvas_zoom_out (NL_NETWORK_PAGE (widget)->canvas);
}

static void
action_search (GtkWidget *widget, const char *action, GVariant *param)
{
  g_assert (NL_IS_NETWORK_PAGE (widget));
  nl_palette_focus_search (NL_NETWORK_PAGE (widget)->palette);
}

void
_nl_network_page_install_actions (GtkWidgetClass *wc)
{
  gtk_widget_class_install_action (wc, "editor.new", "s", action_new);
  gtk_widget_class_install_action (wc, "editor.save", NULL, action_save);
  gtk_widget_class_install_action (wc, "editor.import", NULL, action_import);
  gtk_widget_class_install_action (wc, "editor.export", "s", action_export);
  gtk_widget_class_install_action (wc, "editor.delete-network", NULL, action_delete_network);
  gtk_widget_class_install_action (wc, "editor.undo", NULL, action_undo);
  gtk_widget_class_install_action (wc, "editor.redo", NULL, action_redo);
  gtk_widget_class_install_action (wc, "editor.copy", NULL, action_copy);
  gtk_widget_class_install_action (wc, "editor.paste", NULL, action_paste);
  gtk_widget_class_install_action (wc, "editor.duplicate", NULL, action_duplicate);
  gtk_widget_class_install_action (wc, "editor.delete", NULL, action_delete);
  gtk_widget_class_install_action (wc, "editor.select-all", NULL, action_select_all);
  gtk_widget_class_install_action (wc, "editor.layout", NULL, action_layout);
  gtk_widget_class_install_action (wc, "editor.fit", NULL, action_fit);
  gtk_widget_class_install_action (wc, "editor.zoom-in", NULL, action_zoom_in);
  gtk_widget_class_install_action (wc, "editor.zoom-out", NULL, action_zoom_out);
  gtk_widget_class_install_action (wc, "editor.search", NULL, action_search);
  _nl_network_page_install_onnx_actions (wc);

  /* bubble phase: a focused entry (the inspector) gets its keys first */
  gtk_widget_class_add_binding_action (wc, GDK_KEY_s, GDK_CONTROL_MASK, "editor.save", NULL);
  gtk_widget_class_add_binding_action (wc, GDK_KEY_z, GDK_CONTROL_MASK, "editor.undo", NULL);
  gtk_widget_class_add_binding_action (wc, GDK_KEY_z, GDK_CONTROL_MASK | GDK_SHIFT_MASK, "editor.redo", NULL);
  gtk_widget_class_add_binding_action (wc, GDK_KEY_Z, GDK_CONTROL_MASK | GDK_SHIFT_MASK, "editor.redo", NULL);
  gtk_widget_class_add_binding_action (wc, GDK_KEY_c, GDK_CONTROL_MASK, "editor.copy", NULL);
  gtk_widget_class_add_binding_action (wc, GDK_KEY_v, GDK_CONTROL_MASK, "editor.paste", NULL);
  gtk_widget_class_add_binding_action (wc, GDK_KEY_d, GDK_CONTROL_MASK, "editor.duplicate", NULL);
  gtk_widget_class_add_binding_action (wc, GDK_KEY_a, GDK_CONTROL_MASK, "editor.select-all", NULL);
  gtk_widget_class_add_binding_action (wc, GDK_KEY_Delete, 0, "editor.delete", NULL);
  gtk_widget_class_add_binding_action (wc, GDK_KEY_l, GDK_CONTROL_MASK, "editor.layout", NULL);
  gtk_widget_class_add_binding_action (wc, GDK_KEY_0, GDK_CONTROL_MASK, "editor.fit", NULL);
  gtk_widget_class_add_binding_action (wc, GDK_KEY_f, GDK_CONTROL_MASK, "editor.search", NULL);
}

void
_nl_network_page_update_actions (NlNetworkPage *page)
{
  GtkWidget *w = GTK_WIDGET (page);
  gboolean open = page->ws != NULL;
  gtk_widget_action_set_enabled (w, "editor.undo", nl_network_doc_can_undo (page->doc));
  gtk_widget_action_set_enabled (w, "editor.redo", nl_network_doc_can_redo (page->doc));
  gtk_widget_action_set_enabled (w, "editor.save", open && !nl_project_is_read_only (nl_workspace_get_project (page->ws)));
  gtk_widget_action_set_enabled (w, "editor.delete-network", open && page->version > 0);
  gtk_widget_action_set_enabled (w, "editor.new", open);
  gtk_widget_action_set_enabled (w, "editor.import", open);
  /* the weights are a saved network's runs' */
  gtk_widget_action_set_enabled (w, "editor.export-onnx", open && page->version > 0);
  if (page->save_button)
    {
      /* a dot marks unsaved changes, as GNOME Text Editor's title does */
      gtk_button_set_label (page->save_button, nl_network_doc_is_modified (page->doc) || page->version == 0
                                                 ? _("• _Save") : _("_Save"));
    }
}
