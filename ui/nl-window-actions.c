/* nl-window-actions.c — the window's actions (win.*): project menu, pages;
 * one place (_nl_window_update_actions) decides what is enabled. */
#include "ui/nl-window-private.h"
#include <glib/gi18n.h>
#include "ui/widgets/nl-file-chooser.h"
#include "ui/nl-settings.h"

/* The project file choosers: *.netloom files. */
static void
choose_project (NlWindow *win, GtkFileChooserAction action, const char *title, const char *accept,
                const char *suggested_name, NlFileChosen done)
{
  g_autoptr (GtkFileFilter) filter = gtk_file_filter_new ();
  gtk_file_filter_set_name (filter, _("netloom projects"));
  gtk_file_filter_add_pattern (filter, "*.netloom");
  nl_choose_file (GTK_WIDGET (win), action, title, accept, suggested_name, filter, done, NULL, NULL);
}

static char *
with_extension (const char *path)
{
  return g_str_has_suffix (path, ".netloom") ? g_strdup (path) : g_strconcat (path, ".netloom", NULL);
}

static void
new_chosen (GtkWidget *win, const char *path, gpointer user)
{
  g_autofree char *p = with_extension (path);
  nl_window_open_project (NL_WINDOW (win), p, NL_OPEN_CREATE);
}

static void
open_chosen (GtkWidget *win, const char *path, gpointer user)
{
  nl_window_open_project (NL_WINDOW (win), path, NL_OPEN_EXISTING);
}

/* Save As: SQLite's VACUUM INTO in a worker thread, then open the copy. */
static void
save_as_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  NlWorkspace *ws = nl_window_get_workspace (NL_WINDOW (source));
  GError *error = NULL;
  if (!ws || !nl_project_save_copy (nl_workspace_get_project (ws), task_data, &error))
    g_task_return_error (task, error ? error : g_error_new_literal (NL_PROJECT_ERROR, NL_PROJECT_ERROR_FAILED,
                                                                      _("no project is open")));
  else
    g_task_return_boolean (task, TRUE);
}

static void
save_as_done (GObject *source, GAsyncResult *res, gpointer data)
{
  NlWindow *win = NL_WINDOW (source);
  g_autoptr (GError) error = NULL;
  const char *path = g_task_get_task_data (G_TASK (res));
  if (!g_task_propagate_boolean (G_TASK (res), &error))
    {
      g_autofree char *msg = g_strdup_printf (_("Could not save “%s”: %s"), path, error->message);
      nl_window_toast (win, msg);
      return;
    }
  nl_window_open_project (win, path, NL_OPEN_EXISTING);
}

static void
save_as_chosen (GtkWidget *win, const char *path, gpointer user)
{
  g_autoptr (GTask) task = g_task_new (win, NULL, save_as_done, NULL);
  g_task_set_task_data (task, with_extension (path), g_free);
  g_task_run_in_thread (task, save_as_thread);
}

static void
action_new_project (GtkWidget *widget, const char *name, GVariant *param)
{
  g_assert (NL_IS_WINDOW (widget));
  choose_project (NL_WINDOW (widget), GTK_FILE_CHOOSER_ACTION_SAVE, _("New Project"), _("_Create"),
                  _("Untitled.netloom"),
                  new_chosen);
}

static void
action_open_project (GtkWidget *widget, const char *name, GVariant *param)
{
  g_assert (NL_IS_WINDOW (widget));
  choose_project (NL_WINDOW (widget), GTK_FILE_CHOOSER_ACTION_OPEN, _("Open Project"), _("_Open"), NULL, open_chosen);
}

static void
action_open_recent (GtkWidget *widget, const char *name, GVariant *param)
{
  g_assert (NL_IS_WINDOW (widget));
  g_assert (g_variant_is_of_type (param, G_VARIANT_TYPE_STRING));
  nl_window_open_project (NL_WINDOW (widget), g_variant_get_string (param, NULL), NL_OPEN_EXISTING);
}

static void
action_open_sample (GtkWidget *widget, const char *name, GVariant *param)
{
  g_assert (NL_IS_WINDOW (widget));
  g_autofree char *path = g_build_filename (g_get_user_data_dir (), "netloom", "sample.netloom", NULL);
  nl_window_open_project (NL_WINDOW (widget), path, NL_OPEN_SAMPLE);
}

static void
action_save_as (GtkWidget *widget, const char *name, GVariant *param)
{
  NlWindow *win = NL_WINDOW (widget);
  g_assert (NL_IS_WINDOW (widget));
  g_autofree char *title = win->ws ? nl_workspace_dup_title (win->ws) : NULL;
  g_autofree char *suggested = /* TRANSLATORS: the file name Save As suggests */
  g_strdup_printf (_("%s copy.netloom"), title ? title : _("Untitled"));
  choose_project (win, GTK_FILE_CHOOSER_ACTION_SAVE, _("Save Project As"), _("_Save"), suggested, save_as_chosen);
}

static void
import_onnx_chosen (GtkWidget *widget, const char *path, gpointer user)
{
  NlWindow *win = NL_WINDOW (widget);
  if (!win->ws)
    return;
  nl_window_show_page (win, "network");
  nl_network_page_import_onnx (win->network_page, path);
}

static void
action_import_onnx (GtkWidget *widget, const char *name, GVariant *param)
{
  g_assert (NL_IS_WINDOW (widget));
  g_autoptr (GtkFileFilter) filter = gtk_file_filter_new ();
  gtk_file_filter_set_name (filter, _("ONNX models"));
  gtk_file_filter_add_pattern (filter, "*.onnx");
  nl_choose_file (widget, GTK_FILE_CHOOSER_ACTION_OPEN, _("Import ONNX Model"), _("_Import"), NULL, filter,
                  import_onnx_chosen, NULL, NULL);
}

static void
action_close_project (GtkWidget *widget, const char *name, GVariant *param)
{
  g_assert (NL_IS_WINDOW (widget));
  nl_window_close_project (NL_WINDOW (widget));
}

static void
action_show_page (GtkWidget *widget, const char *name, GVariant *param)
{
  g_assert (NL_IS_WINDOW (widget));
  g_assert (g_variant_is_of_type (param, G_VARIANT_TYPE_STRING));
  nl_window_show_page (NL_WINDOW (widget), g_variant_get_string (param, NULL));
}

void
_nl_window_install_actions (NlWindowClass *klass)
{
  GtkWidgetClass *wc = GTK_WIDGET_CLASS (klass);
  static const char *const pages[] = { "network", "data", "training", "experiments" };

  gtk_widget_class_install_action (wc, "win.new-project", NULL, action_new_project);
  gtk_widget_class_install_action (wc, "win.open-project", NULL, action_open_project);
  gtk_widget_class_install_action (wc, "win.open-recent", "s", action_open_recent);
  gtk_widget_class_install_action (wc, "win.open-sample", NULL, action_open_sample);
  gtk_widget_class_install_action (wc, "win.save-project-as", NULL, action_save_as);
  gtk_widget_class_install_action (wc, "win.close-project", NULL, action_close_project);
  gtk_widget_class_install_action (wc, "win.import-onnx", NULL, action_import_onnx);
  gtk_widget_class_install_action (wc, "win.show-page", "s", action_show_page);

  gtk_widget_class_add_binding_action (wc, GDK_KEY_n, GDK_CONTROL_MASK, "win.new-project", NULL);
  gtk_widget_class_add_binding_action (wc, GDK_KEY_o, GDK_CONTROL_MASK, "win.open-project", NULL);
  gtk_widget_class_add_binding_action (wc, GDK_KEY_s, GDK_CONTROL_MASK | GDK_SHIFT_MASK, "win.save-project-as", NULL);
  gtk_widget_class_add_binding_action (wc, GDK_KEY_w, GDK_CONTROL_MASK, "win.close-project", NULL);
  for (guint i = 0; i < G_N_ELEMENTS (pages); i++)
    gtk_widget_class_add_binding_action (wc, GDK_KEY_1 + i, GDK_ALT_MASK, "win.show-page", "s", pages[i]);
}

void
_nl_window_update_actions (NlWindow *win)
{
  gboolean open = win->ws != NULL;
  gtk_widget_action_set_enabled (GTK_WIDGET (win), "win.save-project-as", open);
  gtk_widget_action_set_enabled (GTK_WIDGET (win), "win.close-project", open);
  gtk_widget_action_set_enabled (GTK_WIDGET (win), "win.import-onnx", open);
  gtk_widget_action_set_enabled (GTK_WIDGET (win), "win.show-page", open);
}

void
_nl_window_update_recent_menu (NlWindow *win)
{
  GMenuModel *model = gtk_menu_button_get_menu_model (win->project_button);
  g_auto (GStrv) recent = g_settings_get_strv (win->settings, "recent-projects");
  GMenuModel *section = NULL;

  /* the "Open Recent" submenu's section, found by its id attribute */
  for (int i = 0; !section && i < g_menu_model_get_n_items (model); i++)
    {
      g_autoptr (GMenuModel) sub = g_menu_model_get_item_link (model, i, G_MENU_LINK_SECTION);
      for (int j = 0; sub && !section && j < g_menu_model_get_n_items (sub); j++)
        {
          g_autoptr (GMenuModel) submenu = g_menu_model_get_item_link (sub, j, G_MENU_LINK_SUBMENU);
          if (submenu && g_menu_model_get_n_items (submenu) > 0)
            section = g_menu_model_get_item_link (submenu, 0, G_MENU_LINK_SECTION);
        }
    }
  if (!section)
    return;
  g_menu_remove_all (G_MENU (section));
  for (int i = 0; recent[i]; i++)
    {
      g_autofree char *base = g_path_get_basename (recent[i]);
      g_autoptr (GMenuItem) item = g_menu_item_new (base, NULL);
      g_menu_item_set_action_and_target (item, "win.open-recent", "s", recent[i]);
      g_menu_append_item (G_MENU (section), item);
    }
  g_object_unref (section);
}
