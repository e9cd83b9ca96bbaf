/* nl-network-page-onnx.c — ONNX on the Network page: a model imported as a
 * network with its weights (File > Import ONNX Model, on a worker thread;
 * the network opens on the canvas laid out) and the network exported with
 * the weights of its newest run (editor.export-onnx). */
#include "engine/session/nl-run-onnx.h"
#include <glib/gi18n.h>
#include <inttypes.h>
#include "ui/network/nl-network-page-private.h"
#include "ui/widgets/nl-onnx-export-dialog.h"

#include <string.h>

/* ---- import ---- */

typedef struct {
  NlWorkspace *ws;
  char *path;
  char *name;      /* the network made */
  gint64 run;      /* the run holding its weights */
} ImportJob;

static void
import_job_free (ImportJob *j)
{
  g_clear_object (&j->ws);
  g_free (j->path);
  g_free (j->name);
  g_free (j);
}

/* The file's name without .onnx, with _2, _3 ... while the project has it. */
static char *
free_name (NlProject *p, const char *path, GError **error)
{
  g_autoptr (GPtrArray) nets = nl_project_list_networks (p, error);
  g_autofree char *base = g_path_get_basename (path);
  char *name;
  if (!nets)
    return NULL;
  if (g_str_has_suffix (base, ".onnx"))
    base[strlen (base) - 5] = '\0';
  name = g_strdup (base);
  for (int k = 2;; k++)
    {
      gboolean taken = FALSE;
      for (guint i = 0; i < nets->len && !taken; i++)
        taken = g_strcmp0 (((NlNetworkInfo *) g_ptr_array_index (nets, i))->name, name) == 0;
      if (!taken)
        return name;
      g_free (name);
      name = g_strdup_printf ("%s_%d", base, k);
    }
}

static void
import_thread (GTask *task, gpointer source, gpointer data, GCancellable *cancellable)
{
  ImportJob *j = data;
  NlProject *p = nl_workspace_get_project (j->ws);
  GError *error = NULL;
  g_autofree char *name = free_name (p, j->path, &error);
  if (name)
    j->run = nl_run_import_onnx_arranged (p, j->path, name, _nl_network_page_arrange, NULL, &j->name, &error);
  if (j->run <= 0)
    g_task_return_error (task, error);
  else
    g_task_return_boolean (task, TRUE);
}

static void
show_import_error (NlNetworkPage *page, const char *path, const char *message)
{
  GtkRoot *root = gtk_widget_get_root (GTK_WIDGET (page));
  g_autofree char *base = g_path_get_basename (path);
  g_autofree char *heading = g_strdup_printf (_("Could not import “%s”"), base);
  g_autofree char *prefix = g_strconcat (path, ": ", NULL);
  AdwMessageDialog *dlg;
  /* the heading names the file already */
  if (g_str_has_prefix (message, prefix) && message[strlen (prefix)])
    message += strlen (prefix);
  dlg = ADW_MESSAGE_DIALOG (adw_message_dialog_new (GTK_IS_WINDOW (root) ? GTK_WINDOW (root) : NULL, heading, message));
  adw_message_dialog_add_response (dlg, "close", _("_Close"));
  gtk_window_present (GTK_WINDOW (dlg));
}

static void
import_done (GObject *source, GAsyncResult *res, gpointer data)
{
  NlNetworkPage *page = NL_NETWORK_PAGE (source);
  ImportJob *j = g_task_get_task_data (G_TASK (res));
  g_autoptr (GError) error = NULL;
  g_autofree char *base = g_path_get_basename (j->path);

  nl_workspace_busy_pop (j->ws);
  if (!g_task_propagate_boolean (G_TASK (res), &error))
    {
      show_import_error (page, j->path, error->message);
      return;
    }
  nl_workspace_notify (j->ws, NL_WORKSPACE_NETWORKS | NL_WORKSPACE_RUNS);
  nl_workspace_toast (j->ws, _("Imported “%s” as “%s” with its weights (run %" PRId64 ")"), base, j->name,
                      j->run);
  if (page->ws == j->ws)
    nl_network_page_open_network (page, j->name, 0);
}

void
nl_network_page_import_onnx (NlNetworkPage *page, const char *path)
{
  g_autoptr (GTask) task = NULL;
  ImportJob *j;
  g_return_if_fail (NL_IS_NETWORK_PAGE (page));
  g_return_if_fail (path != NULL);
  if (!page->ws)
    return;
  j = g_new0 (ImportJob, 1);
  j->ws = g_object_ref (page->ws);
  j->path = g_strdup (path);
  task = g_task_new (page, NULL, import_done, NULL);
  g_task_set_task_data (task, j, (GDestroyNotify) import_job_free);
  nl_workspace_busy_push (page->ws);
  g_task_run_in_thread (task, import_thread);
}

/* ---- export ---- */

static void
action_export_onnx (GtkWidget *widget, const char *action, GVariant *param)
{
  NlNetworkPage *page = NL_NETWORK_PAGE (widget);
  g_assert (NL_IS_NETWORK_PAGE (widget));
  const char *name = nl_network_doc_get_name (page->doc);
  if (!page->ws || page->version <= 0)
    return;
  gtk_window_present (GTK_WINDOW (nl_onnx_export_dialog_new (widget, page->ws, 0, name, name)));
}

void
_nl_network_page_install_onnx_actions (GtkWidgetClass *wc)
{
  gtk_widget_class_install_action (wc, "editor.export-onnx", NULL, action_export_onnx);
}
