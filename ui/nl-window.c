/* nl-window.c — the main window: pages, project opening, window state. */
#include "ui/nl-window-private.h"
#include <glib/gi18n.h>
#include "ui/experiments/nl-evaluation-window.h"
#include "ui/nl-settings.h"

G_DEFINE_FINAL_TYPE (NlWindow, nl_window, ADW_TYPE_APPLICATION_WINDOW)

enum { PROP_0, PROP_WORKSPACE, N_PROPS };
static GParamSpec *props[N_PROPS];
enum { OPEN_FAILED, N_SIGNALS };
static guint signals[N_SIGNALS];

static void connect_requests (NlWindow *win, NlWorkspace *ws);

static void
set_workspace (NlWindow *win, NlWorkspace *ws)
{
  g_autofree char *title = NULL;
  if (win->ws == ws)
    return;
  if (win->ws)
    {
      g_signal_handlers_disconnect_by_data (win->ws, win);
      nl_workspace_watch (win->ws, 0);
    }
  nl_network_page_set_workspace (win->network_page, ws);
  nl_data_page_set_workspace (win->data_page, ws);
  nl_training_page_set_workspace (win->training_page, ws);
  nl_experiments_page_set_workspace (win->experiments_page, ws);
  g_set_object (&win->ws, ws);
  if (ws)
    {
      title = nl_workspace_dup_title (ws);
      gtk_label_set_label (win->project_label, title);
      adw_view_switcher_title_set_subtitle (win->switcher_title, nl_workspace_get_path (ws));
      gtk_window_set_title (GTK_WINDOW (win), title);
      gtk_stack_set_visible_child_name (win->main_stack, "project");
      nl_workspace_watch (ws, 1000);
      connect_requests (win, ws);
    }
  else
    {
      gtk_label_set_label (win->project_label, _("No Project"));
      adw_view_switcher_title_set_subtitle (win->switcher_title, NULL);
      gtk_window_set_title (GTK_WINDOW (win), "netloom");
      gtk_stack_set_visible_child_name (win->main_stack, "welcome");
    }
  _nl_window_update_actions (win);
  g_object_notify_by_pspec (G_OBJECT (win), props[PROP_WORKSPACE]);
}

/* ---- opening a project off the main thread ---- */

typedef struct {
  char *path;
  NlOpenMode mode;
} OpenData;

static void
open_data_free (OpenData *d)
{
  g_free (d->path);
  g_free (d);
}

static void
open_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  OpenData *d = task_data;
  GError *error = NULL;
  NlProject *p;

  if (d->mode == NL_OPEN_SAMPLE && !g_file_test (d->path, G_FILE_TEST_EXISTS))
    {
      g_autofree char *dir = g_path_get_dirname (d->path);
      g_mkdir_with_parents (dir, 0755);
      if (!nl_project_create_sample (d->path, &error))
        {
          g_task_return_error (task, error);
          return;
        }
    }
  if (d->mode == NL_OPEN_CREATE && g_file_test (d->path, G_FILE_TEST_EXISTS))
    {
      g_task_return_new_error (task, NL_PROJECT_ERROR, NL_PROJECT_ERROR_EXISTS,
                               _("%s already exists; choose another name"), d->path);
      return;
    }
  p = nl_project_open (d->path, d->mode == NL_OPEN_CREATE, &error);
  if (!p)
    g_task_return_error (task, error);
  else
    g_task_return_pointer (task, p, (GDestroyNotify) nl_project_close);
}

static void
open_done (GObject *source, GAsyncResult *res, gpointer data)
{
  NlWindow *win = NL_WINDOW (source);
  g_autoptr (GError) error = NULL;
  NlProject *p = g_task_propagate_pointer (G_TASK (res), &error);
  OpenData *d = g_task_get_task_data (G_TASK (res));

  g_clear_object (&win->opening);
  gtk_spinner_stop (win->loading_spinner);
  if (!p)
    {
      AdwMessageDialog *dlg;
      g_autofree char *base = g_path_get_basename (d->path);
      g_autofree char *heading = g_strdup_printf (_("Could not open “%s”"), base);
      if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        return;
      gtk_stack_set_visible_child_name (win->main_stack, win->ws ? "project" : "welcome");
      dlg = ADW_MESSAGE_DIALOG (adw_message_dialog_new (GTK_WINDOW (win), heading, error->message));
      adw_message_dialog_add_response (dlg, "close", _("_Close"));
      gtk_window_present (GTK_WINDOW (dlg));
      g_signal_emit (win, signals[OPEN_FAILED], 0, d->path, error->message);
      return;
    }
  {
    g_autoptr (NlWorkspace) ws = nl_workspace_new (p);
    set_workspace (win, ws);
  }
  nl_settings_add_recent (nl_project_path (p));
  _nl_window_update_recent_menu (win);
  if (nl_project_is_read_only (p))
    nl_window_toast (win, _("The project is read-only: changes cannot be saved"));
}

void
nl_window_open_project (NlWindow *win, const char *path, NlOpenMode mode)
{
  g_autoptr (GTask) task = NULL;
  OpenData *d;

  g_return_if_fail (NL_IS_WINDOW (win));
  g_return_if_fail (path != NULL);
  if (win->opening)
    g_cancellable_cancel (win->opening);
  g_clear_object (&win->opening);
  win->opening = g_cancellable_new ();
  d = g_new0 (OpenData, 1);
  d->path = g_strdup (path);
  d->mode = mode;
  task = g_task_new (win, win->opening, open_done, NULL);
  g_task_set_task_data (task, d, (GDestroyNotify) open_data_free);
  gtk_stack_set_visible_child_name (win->main_stack, "loading");
  gtk_spinner_start (win->loading_spinner);
  g_task_run_in_thread (task, open_thread);
}

void
nl_window_close_project (NlWindow *win)
{
  g_return_if_fail (NL_IS_WINDOW (win));
  set_workspace (win, NULL);
}

NlWorkspace *
nl_window_get_workspace (NlWindow *win)
{
  g_return_val_if_fail (NL_IS_WINDOW (win), NULL);
  return win->ws;
}

gboolean
nl_window_is_busy (NlWindow *win)
{
  g_return_val_if_fail (NL_IS_WINDOW (win), FALSE);
  return win->opening != NULL || (win->ws && nl_workspace_is_busy (win->ws));
}

void
nl_window_show_page (NlWindow *win, const char *name)
{
  g_return_if_fail (NL_IS_WINDOW (win));
  if (name && adw_view_stack_get_child_by_name (win->view_stack, name))
    adw_view_stack_set_visible_child_name (win->view_stack, name);
}

const char *
nl_window_get_page_name (NlWindow *win)
{
  g_return_val_if_fail (NL_IS_WINDOW (win), NULL);
  return adw_view_stack_get_visible_child_name (win->view_stack);
}

GtkWidget *
nl_window_get_page (NlWindow *win, const char *name)
{
  g_return_val_if_fail (NL_IS_WINDOW (win), NULL);
  return adw_view_stack_get_child_by_name (win->view_stack, name);
}

void
nl_window_toast (NlWindow *win, const char *message)
{
  g_return_if_fail (NL_IS_WINDOW (win));
  adw_toast_overlay_add_toast (win->toast_overlay, adw_toast_new (message));
}

/* ---- requests from the pages ---- */

static void
on_toast (NlWorkspace *ws, const char *message, NlWindow *win)
{
  nl_window_toast (win, message);
}

static void
on_show_page (NlWorkspace *ws, const char *page, NlWindow *win)
{
  nl_window_show_page (win, page);
}

static void
on_open_network (NlWorkspace *ws, const char *name, int version, NlWindow *win)
{
  nl_network_page_open_network (win->network_page, name, version);
  nl_window_show_page (win, "network");
}

/* Evaluation gets a window of its own, so that several runs can be
 * looked at side by side while the workbench goes on. */
static void
on_evaluate_run (NlWorkspace *ws, gint64 run, NlWindow *win)
{
  nl_evaluation_window_new (GTK_WINDOW (win), ws, run, "best", FALSE);
}

static void
on_fork_run (NlWorkspace *ws, gint64 run, NlWindow *win)
{
  nl_training_page_prefill_from_run (win->training_page, run);
  nl_window_show_page (win, "training");
}

static void
on_resume_run (NlExperimentsPage *page, gint64 run, gpointer data)
{
  NlWindow *win = data;
  nl_training_page_resume_run (win->training_page, run);
  nl_window_show_page (win, "training");
}

static void
on_run_sweep (NlWorkspace *ws, gint64 sweep, NlWindow *win)
{
  nl_window_show_page (win, "experiments");
  nl_experiments_page_run_sweep (win->experiments_page, sweep);
}

static void
connect_requests (NlWindow *win, NlWorkspace *ws)
{
  g_signal_connect_object (ws, "run-sweep", G_CALLBACK (on_run_sweep), win, 0);
  g_signal_connect_object (ws, "fork-run", G_CALLBACK (on_fork_run), win, 0);
  g_signal_connect_object (ws, "evaluate-run", G_CALLBACK (on_evaluate_run), win, 0);
  g_signal_connect_object (ws, "toast", G_CALLBACK (on_toast), win, 0);
  g_signal_connect_object (ws, "show-page", G_CALLBACK (on_show_page), win, 0);
  g_signal_connect_object (ws, "open-network", G_CALLBACK (on_open_network), win, 0);
}

/* ---- GObject ---- */

static void
on_page_changed (NlWindow *win)
{
  const char *name = adw_view_stack_get_visible_child_name (win->view_stack);
  if (name)
    g_settings_set_string (win->settings, "last-page", name);
}

static gboolean
nl_window_close_request (GtkWindow *window)
{
  NlWindow *win = NL_WINDOW (window);
  int w, h;
  gtk_window_get_default_size (window, &w, &h);
  g_settings_set_int (win->settings, "window-width", w);
  g_settings_set_int (win->settings, "window-height", h);
  g_settings_set_boolean (win->settings, "window-maximized", gtk_window_is_maximized (window));
  return GTK_WINDOW_CLASS (nl_window_parent_class)->close_request (window);
}

static void
nl_window_dispose (GObject *object)
{
  NlWindow *win = NL_WINDOW (object);
  if (win->opening)
    g_cancellable_cancel (win->opening);
  g_clear_object (&win->opening);
  if (win->ws)
    set_workspace (win, NULL);
  g_clear_object (&win->recent_menu);
  g_clear_object (&win->settings);
  gtk_widget_dispose_template (GTK_WIDGET (win), NL_TYPE_WINDOW);
  G_OBJECT_CLASS (nl_window_parent_class)->dispose (object);
}

static void
nl_window_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  NlWindow *win = NL_WINDOW (object);
  switch (prop_id)
    {
    case PROP_WORKSPACE:
      g_value_set_object (value, win->ws);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
nl_window_class_init (NlWindowClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);
  GtkWindowClass *window_class = GTK_WINDOW_CLASS (klass);

  object_class->dispose = nl_window_dispose;
  object_class->get_property = nl_window_get_property;
  window_class->close_request = nl_window_close_request;

  props[PROP_WORKSPACE] = g_param_spec_object ("workspace", NULL, NULL, NL_TYPE_WORKSPACE,
                                               G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, props);
  /* ::open-failed (const char *path, const char *message), after the dialog is shown */
  signals[OPEN_FAILED] = g_signal_new ("open-failed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL,
                                       NULL, G_TYPE_NONE, 2, G_TYPE_STRING, G_TYPE_STRING);

  g_type_ensure (NL_TYPE_NETWORK_PAGE);
  g_type_ensure (NL_TYPE_DATA_PAGE);
  g_type_ensure (NL_TYPE_TRAINING_PAGE);
  g_type_ensure (NL_TYPE_EXPERIMENTS_PAGE);
  gtk_widget_class_set_template_from_resource (widget_class, "/io/github/netloom/Netloom/ui/nl-window.ui");
  gtk_widget_class_bind_template_child (widget_class, NlWindow, toast_overlay);
  gtk_widget_class_bind_template_child (widget_class, NlWindow, project_label);
  gtk_widget_class_bind_template_child (widget_class, NlWindow, project_button);
  gtk_widget_class_bind_template_child (widget_class, NlWindow, switcher_title);
  gtk_widget_class_bind_template_child (widget_class, NlWindow, main_stack);
  gtk_widget_class_bind_template_child (widget_class, NlWindow, loading_spinner);
  gtk_widget_class_bind_template_child (widget_class, NlWindow, view_stack);
  gtk_widget_class_bind_template_child (widget_class, NlWindow, network_page);
  gtk_widget_class_bind_template_child (widget_class, NlWindow, data_page);
  gtk_widget_class_bind_template_child (widget_class, NlWindow, training_page);
  gtk_widget_class_bind_template_child (widget_class, NlWindow, experiments_page);

  _nl_window_install_actions (klass);
}

static void
nl_window_init (NlWindow *win)
{
  g_autofree char *page = NULL;
  gtk_widget_init_template (GTK_WIDGET (win));
  win->settings = nl_settings_get ();
  gtk_window_set_default_size (GTK_WINDOW (win), g_settings_get_int (win->settings, "window-width"),
                               g_settings_get_int (win->settings, "window-height"));
  if (g_settings_get_boolean (win->settings, "window-maximized"))
    gtk_window_maximize (GTK_WINDOW (win));
  page = g_settings_get_string (win->settings, "last-page");
  nl_window_show_page (win, page);
  g_signal_connect_swapped (win->view_stack, "notify::visible-child-name", G_CALLBACK (on_page_changed), win);
  nl_experiments_page_set_resume_handler (win->experiments_page, on_resume_run, win, NULL);
  _nl_window_update_recent_menu (win);
  _nl_window_update_actions (win);
}

NlWindow *
nl_window_new (GtkApplication *app)
{
  return g_object_new (NL_TYPE_WINDOW, "application", app, NULL);
}
