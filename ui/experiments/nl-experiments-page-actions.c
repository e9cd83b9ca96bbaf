/* nl-experiments-page-actions.c — what the page does to runs: the exp.*
 * actions, their dialogs and popovers, and the project changes they make
 * (exports, deletion and saving a network on worker threads). */
#include "ui/experiments/nl-experiments-page-private.h"
#include <glib/gi18n.h>
#include <inttypes.h>
#include "core/nl-json-guard.h"
#include "ui/experiments/nl-quantize-dialog.h"
#include "ui/widgets/nl-file-chooser.h"
#include "ui/widgets/nl-onnx-export-dialog.h"

#include <json-glib/json-glib.h>
#include <string.h>

#include "engine/session/nl-run-export.h"

/* The one selected row, or NULL (not referenced: the store holds it). */
static NlRunRow *
single_row (NlExperimentsPage *page)
{
  g_autoptr (GPtrArray) rows = _nl_experiments_page_selected_rows (page);
  return rows->len == 1 ? _nl_experiments_page_find_row (page, nl_run_row_get_id (g_ptr_array_index (rows, 0))) : NULL;
}

static GtkWindow *
page_window (NlExperimentsPage *page)
{
  GtkRoot *root = gtk_widget_get_root (GTK_WIDGET (page));
  return GTK_IS_WINDOW (root) ? GTK_WINDOW (root) : NULL;
}

void
_nl_experiments_page_update_actions (NlExperimentsPage *page)
{
  g_autoptr (GPtrArray) rows = page->selection ? _nl_experiments_page_selected_rows (page)
                                               : g_ptr_array_new ();
  NlRunRow *one = rows->len == 1 ? g_ptr_array_index (rows, 0) : NULL;
  GtkWidget *w = GTK_WIDGET (page);
  gboolean any = page->ws && rows->len > 0, running = FALSE;
  gboolean ckpt = one && nl_run_row_get_n_checkpoints (one) > 0;

  for (guint i = 0; i < rows->len; i++)
    {
      const char *s = nl_run_row_get_status (g_ptr_array_index (rows, i));
      running |= strcmp (s, "running") == 0 || strcmp (s, "paused") == 0;
    }
  one = page->ws ? one : NULL;
  gtk_widget_action_set_enabled (w, "exp.rename", one != NULL);
  gtk_widget_action_set_enabled (w, "exp.tags", any);
  gtk_widget_action_set_enabled (w, "exp.notes", one != NULL);
  /* a run training right now keeps writing to its rows */
  gtk_widget_action_set_enabled (w, "exp.delete", any && !running);
  gtk_widget_action_set_enabled (w, "exp.resume", ckpt && page->resume_func && !nl_run_row_is_active (one));
  gtk_widget_action_set_enabled (w, "exp.fork", one != NULL);
  gtk_widget_action_set_enabled (w, "exp.evaluate", ckpt);
  gtk_widget_action_set_enabled (w, "exp.quantize", ckpt && page->ws);
  gtk_widget_action_set_enabled (w, "exp.open-network", one != NULL);
  gtk_widget_action_set_enabled (w, "exp.export-weights", ckpt);
  gtk_widget_action_set_enabled (w, "exp.export-onnx", ckpt);
  gtk_widget_action_set_enabled (w, "exp.export-metrics", any);
  gtk_widget_set_sensitive (GTK_WIDGET (page->tags_button), any);
  gtk_widget_set_sensitive (GTK_WIDGET (page->notes_button), one != NULL);
}

static void
report (NlExperimentsPage *page, GError *error)
{
  if (page->ws)
    nl_workspace_toast (page->ws, "%s", error->message);
  else
    g_warning ("%s", error->message);
}

/* ---- the changes, as the dialogs' responses make them ---- */

gboolean
nl_experiments_page_rename_run (NlExperimentsPage *page, gint64 run, const char *name, GError **error)
{
  g_autofree char *clean = NULL;
  g_return_val_if_fail (NL_IS_EXPERIMENTS_PAGE (page) && page->ws, FALSE);
  g_return_val_if_fail (name != NULL, FALSE);
  clean = g_strstrip (g_strdup (name));
  if (!*clean)
    {
      g_set_error (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_INVALID, _("A run needs a name"));
      return FALSE;
    }
  if (!nl_project_rename_run (nl_workspace_get_project (page->ws), run, clean, error))
    return FALSE;
  nl_workspace_notify (page->ws, NL_WORKSPACE_RUNS);
  return TRUE;
}

static gboolean
change_tag (NlExperimentsPage *page, const gint64 *runs, guint n, const char *tag, gboolean add, GError **error)
{
  NlProject *p = nl_workspace_get_project (page->ws);
  g_autofree char *clean = g_strstrip (g_strdup (tag));
  gboolean ok = TRUE;
  if (!*clean)
    {
      g_set_error (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_INVALID, _("A tag cannot be empty"));
      return FALSE;
    }
  for (guint i = 0; i < n && ok; i++)
    ok = add ? nl_project_add_tag (p, runs[i], clean, error) : nl_project_remove_tag (p, runs[i], clean, error);
  nl_workspace_notify (page->ws, NL_WORKSPACE_RUNS);
  return ok;
}

gboolean
nl_experiments_page_add_tag (NlExperimentsPage *page, const gint64 *runs, guint n_runs, const char *tag,
                             GError **error)
{
  g_return_val_if_fail (NL_IS_EXPERIMENTS_PAGE (page) && page->ws, FALSE);
  g_return_val_if_fail (tag != NULL && (runs || !n_runs), FALSE);
  return change_tag (page, runs, n_runs, tag, TRUE, error);
}

gboolean
nl_experiments_page_remove_tag (NlExperimentsPage *page, const gint64 *runs, guint n_runs, const char *tag,
                                GError **error)
{
  g_return_val_if_fail (NL_IS_EXPERIMENTS_PAGE (page) && page->ws, FALSE);
  g_return_val_if_fail (tag != NULL && (runs || !n_runs), FALSE);
  return change_tag (page, runs, n_runs, tag, FALSE, error);
}

gboolean
nl_experiments_page_add_note (NlExperimentsPage *page, gint64 run, const char *text, GError **error)
{
  g_autofree char *clean = NULL;
  g_return_val_if_fail (NL_IS_EXPERIMENTS_PAGE (page) && page->ws, FALSE);
  g_return_val_if_fail (text != NULL, FALSE);
  clean = g_strstrip (g_strdup (text));
  if (!*clean)
    {
      g_set_error (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_INVALID, _("A note cannot be empty"));
      return FALSE;
    }
  if (nl_project_add_note (nl_workspace_get_project (page->ws), run, clean, error) <= 0)
    return FALSE;
  nl_workspace_notify (page->ws, NL_WORKSPACE_RUNS);
  return TRUE;
}

/* Work on a worker thread with the workspace (and so the project) kept
 * alive until it is done. */
typedef struct {
  NlWorkspace *ws;
  GArray *runs;
  char *path;
} Job;

static void
job_free (Job *j)
{
  g_clear_object (&j->ws);
  g_clear_pointer (&j->runs, g_array_unref);
  g_free (j->path);
  g_free (j);
}

static GTask *
job_new (NlExperimentsPage *page, const gint64 *runs, guint n, const char *path, GAsyncReadyCallback cb,
         gpointer data)
{
  GTask *task = g_task_new (page, NULL, cb, data);
  Job *j = g_new0 (Job, 1);
  j->ws = g_object_ref (page->ws);
  j->runs = g_array_new (FALSE, FALSE, sizeof (gint64));
  g_array_append_vals (j->runs, runs, n);
  j->path = g_strdup (path);
  g_task_set_task_data (task, j, (GDestroyNotify) job_free);
  return task;
}

static void
delete_thread (GTask *task, gpointer source, gpointer data, GCancellable *cancellable)
{
  Job *j = data;
  GError *error = NULL;
  for (guint i = 0; i < j->runs->len; i++)
    if (!nl_project_delete_run (nl_workspace_get_project (j->ws), g_array_index (j->runs, gint64, i), &error))
      {
        g_task_return_error (task, error);
        return;
      }
  g_task_return_boolean (task, TRUE);
}

static void
delete_done (GObject *source, GAsyncResult *res, gpointer data)
{
  NlExperimentsPage *page = NL_EXPERIMENTS_PAGE (source);
  Job *j = g_task_get_task_data (G_TASK (res));
  g_autoptr (GError) error = NULL;
  nl_workspace_busy_pop (j->ws);
  if (!g_task_propagate_boolean (G_TASK (res), &error))
    nl_workspace_toast (j->ws, _("Could not delete: %s"), error->message);
  else if (j->runs->len > 1)
    nl_workspace_toast (j->ws, ngettext ("Deleted %u run", "Deleted %u runs", j->runs->len), j->runs->len);
  else
    nl_workspace_toast (j->ws, _("Deleted the run"));
  nl_workspace_notify (j->ws, NL_WORKSPACE_RUNS | NL_WORKSPACE_METRICS);
  (void) page;
}

void
nl_experiments_page_delete_runs (NlExperimentsPage *page, const gint64 *runs, guint n_runs)
{
  g_autoptr (GTask) task = NULL;
  g_return_if_fail (NL_IS_EXPERIMENTS_PAGE (page) && page->ws);
  g_return_if_fail (runs || !n_runs);
  task = job_new (page, runs, n_runs, NULL, delete_done, NULL);
  nl_workspace_busy_push (page->ws);
  g_task_run_in_thread (task, delete_thread);
}

/* ---- open the run's network: the saved version equal to its snapshot ---- */

typedef struct {
  char *name;
  int version;
  gboolean saved;
} NetworkRef;

static void
network_ref_free (NetworkRef *r)
{
  g_free (r->name);
  g_free (r);
}

static JsonNode *
parse_json (const char *text)
{
  g_autoptr (JsonParser) parser = json_parser_new ();
  if (!text || !nl_json_check_depth (text, -1, "JSON", NULL) || !json_parser_load_from_data (parser, text, -1, NULL))
    return NULL;
  return json_node_copy (json_parser_get_root (parser));
}

/* The same network whatever the document is called (checkpoints see it so too). */
static gboolean
same_network (JsonNode *a, JsonNode *b)
{
  g_autoptr (JsonNode) x = json_node_copy (a), y = json_node_copy (b);
  if (!JSON_NODE_HOLDS_OBJECT (x) || !JSON_NODE_HOLDS_OBJECT (y))
    return FALSE;
  json_object_remove_member (json_node_get_object (x), "name");
  json_object_remove_member (json_node_get_object (y), "name");
  return json_node_equal (x, y);
}

/* The version of NAME whose JSON equals SNAPSHOT, newest first; 0: none. */
static int
find_version (NlProject *p, const char *name, JsonNode *snapshot)
{
  g_autoptr (GPtrArray) versions = name ? nl_project_list_network_versions (p, name, NULL) : NULL;
  for (guint i = versions ? versions->len : 0; i-- > 0;)
    {
      NlNetworkInfo *n = g_ptr_array_index (versions, i);
      g_autofree char *json = nl_project_load_network (p, name, n->version, NULL);
      g_autoptr (JsonNode) node = parse_json (json);
      if (node && same_network (node, snapshot))
        return n->version;
    }
  return 0;
}

static void
open_network_thread (GTask *task, gpointer source, gpointer data, GCancellable *cancellable)
{
  Job *j = data;
  NlProject *p = nl_workspace_get_project (j->ws);
  GError *error = NULL;
  g_autoptr (NlRunInfo) info = nl_project_get_run (p, g_array_index (j->runs, gint64, 0), &error);
  g_autoptr (JsonNode) snapshot = NULL;
  NetworkRef *r;
  int v;

  if (!info)
    {
      g_task_return_error (task, error);
      return;
    }
  if (!(snapshot = parse_json (info->network_json)) || !JSON_NODE_HOLDS_OBJECT (snapshot))
    {
      g_task_return_new_error (task, NL_PROJECT_ERROR, NL_PROJECT_ERROR_INVALID,
                               _("The network of run “%s” is not valid JSON"), info->name);
      return;
    }
  r = g_new0 (NetworkRef, 1);
  if ((v = find_version (p, info->network_name, snapshot)) > 0)
    r->name = g_strdup (info->network_name);
  else
    {
      /* the run trained a network no saved version matches: keep it as its own */
      g_autofree char *json = NULL;
      g_autoptr (JsonGenerator) gen = json_generator_new ();
      gint64 id;
      r->name = g_strdup_printf (_("%s network"), info->name);
      if ((v = find_version (p, r->name, snapshot)) == 0)
        {
          g_autoptr (GPtrArray) versions = NULL;
          json_object_set_string_member (json_node_get_object (snapshot), "name", r->name);
          json_generator_set_root (gen, snapshot);
          json_generator_set_pretty (gen, TRUE);
          json = nl_json_fix_numbers (json_generator_to_data (gen, NULL));
          if ((id = nl_project_save_network (p, r->name, json, &error)) <= 0
              || !(versions = nl_project_list_network_versions (p, r->name, &error)))
            {
              network_ref_free (r);
              g_task_return_error (task, error);
              return;
            }
          for (guint i = 0; i < versions->len; i++)
            if (((NlNetworkInfo *) g_ptr_array_index (versions, i))->id == id)
              v = ((NlNetworkInfo *) g_ptr_array_index (versions, i))->version;
          r->saved = TRUE;
        }
    }
  r->version = v;
  g_task_return_pointer (task, r, (GDestroyNotify) network_ref_free);
}

static void
open_network_done (GObject *source, GAsyncResult *res, gpointer data)
{
  Job *j = g_task_get_task_data (G_TASK (res));
  g_autoptr (GError) error = NULL;
  NetworkRef *r = g_task_propagate_pointer (G_TASK (res), &error);
  if (!r)
    {
      nl_workspace_toast (j->ws, _("Could not open the network: %s"), error->message);
      return;
    }
  if (r->saved)
    {
      nl_workspace_notify (j->ws, NL_WORKSPACE_NETWORKS);
      nl_workspace_toast (j->ws, _("Saved the run's network as “%s”"), r->name);
    }
  nl_workspace_request_open_network (j->ws, r->name, r->version);
  network_ref_free (r);
}

void
nl_experiments_page_open_network (NlExperimentsPage *page, gint64 run)
{
  g_autoptr (GTask) task = NULL;
  g_return_if_fail (NL_IS_EXPERIMENTS_PAGE (page) && page->ws);
  task = job_new (page, &run, 1, NULL, open_network_done, NULL);
  g_task_run_in_thread (task, open_network_thread);
}

/* ---- exports ---- */

static void
export_weights_thread (GTask *task, gpointer source, gpointer data, GCancellable *cancellable)
{
  Job *j = data;
  GError *error = NULL;
  gint64 ckpt = 0;
  int epoch = 0;
  if (!nl_run_export_weights (nl_workspace_get_project (j->ws), g_array_index (j->runs, gint64, 0), NULL, j->path,
                              &ckpt, &epoch, &error))
    g_task_return_error (task, error);
  else
    {
      g_autofree char *base = g_path_get_basename (j->path);
      g_task_return_pointer (task, g_strdup_printf (_("Exported the weights of epoch %d to “%s”"), epoch, base),
                             g_free);
    }
}

static void
export_metrics_thread (GTask *task, gpointer source, gpointer data, GCancellable *cancellable)
{
  Job *j = data;
  GError *error = NULL;
  gint64 n = 0;
  if (!nl_run_export_metrics_csv (nl_workspace_get_project (j->ws), (const gint64 *) j->runs->data, j->runs->len,
                                  j->path, &n, &error))
    g_task_return_error (task, error);
  else
    {
      g_autofree char *base = g_path_get_basename (j->path);
      g_task_return_pointer (task,
                             g_strdup_printf (ngettext ("Exported %" PRId64 " metric point to “%s”",
                                                        "Exported %" PRId64 " metric points to “%s”", n), n, base),
                             g_free);
    }
}

void
nl_experiments_page_export_weights_async (NlExperimentsPage *page, gint64 run, const char *path,
                                          GAsyncReadyCallback callback, gpointer user_data)
{
  g_autoptr (GTask) task = NULL;
  g_return_if_fail (NL_IS_EXPERIMENTS_PAGE (page) && page->ws && path);
  task = job_new (page, &run, 1, path, callback, user_data);
  g_task_set_source_tag (task, nl_experiments_page_export_weights_async);
  g_task_run_in_thread (task, export_weights_thread);
}

void
nl_experiments_page_export_metrics_async (NlExperimentsPage *page, const gint64 *runs, guint n_runs,
                                          const char *path, GAsyncReadyCallback callback, gpointer user_data)
{
  g_autoptr (GTask) task = NULL;
  g_return_if_fail (NL_IS_EXPERIMENTS_PAGE (page) && page->ws && path && (runs || !n_runs));
  task = job_new (page, runs, n_runs, path, callback, user_data);
  g_task_set_source_tag (task, nl_experiments_page_export_metrics_async);
  g_task_run_in_thread (task, export_metrics_thread);
}

char *
nl_experiments_page_export_finish (NlExperimentsPage *page, GAsyncResult *result, GError **error)
{
  g_return_val_if_fail (g_task_is_valid (result, page), NULL);
  return g_task_propagate_pointer (G_TASK (result), error);
}

static void
export_done (GObject *source, GAsyncResult *res, gpointer data)
{
  NlExperimentsPage *page = NL_EXPERIMENTS_PAGE (source);
  Job *j = g_task_get_task_data (G_TASK (res));
  g_autoptr (GError) error = NULL;
  g_autofree char *msg = nl_experiments_page_export_finish (page, res, &error);
  nl_workspace_toast (j->ws, "%s", msg ? msg : error->message);
}

static void
weights_chosen (GtkWidget *widget, const char *path, gpointer data)
{
  NlExperimentsPage *page = NL_EXPERIMENTS_PAGE (widget);
  GArray *ids = data;
  if (page->ws)
    nl_experiments_page_export_weights_async (page, g_array_index (ids, gint64, 0), path, export_done, NULL);
}

static void
metrics_chosen (GtkWidget *widget, const char *path, gpointer data)
{
  NlExperimentsPage *page = NL_EXPERIMENTS_PAGE (widget);
  GArray *ids = data;
  if (page->ws)
    nl_experiments_page_export_metrics_async (page, (const gint64 *) ids->data, ids->len, path, export_done, NULL);
}

static void
choose_export_file (NlExperimentsPage *page, gboolean weights)
{
  g_autoptr (GArray) ids = _nl_experiments_page_selected_ids (page);
  g_autoptr (GPtrArray) rows = _nl_experiments_page_selected_rows (page);
  g_autofree char *name = NULL;

  if (ids->len == 0)
    return;
  if (ids->len == 1)
    name = g_strdup_printf ("%s%s", nl_run_row_get_name (g_ptr_array_index (rows, 0)),
                            weights ? ".safetensors" : "-metrics.csv");
  else
    name = g_strdup ("runs-metrics.csv");
  g_strdelimit (name, "/\\", '-');
  nl_choose_file (GTK_WIDGET (page), GTK_FILE_CHOOSER_ACTION_SAVE, weights ? _("Export Weights") : _("Export Metrics"),
                  _("_Export"), name, NULL, weights ? weights_chosen : metrics_chosen, g_steal_pointer (&ids),
                  (GDestroyNotify) g_array_unref);
}

/* ---- dialogs ---- */

static void
rename_response (AdwMessageDialog *dlg, const char *response, NlExperimentsPage *page)
{
  GtkEditable *entry = g_object_get_data (G_OBJECT (dlg), "nl-entry");
  gint64 run = *(gint64 *) g_object_get_data (G_OBJECT (dlg), "nl-run");
  g_autoptr (GError) error = NULL;
  if (strcmp (response, "rename") == 0 && page->ws
      && !nl_experiments_page_rename_run (page, run, gtk_editable_get_text (entry), &error))
    report (page, error);
}

static void
rename_activate (GtkEntry *entry, AdwMessageDialog *dlg)
{
  adw_message_dialog_response (dlg, "rename");
  gtk_window_close (GTK_WINDOW (dlg));
}

static void
action_rename (GtkWidget *widget, const char *name, GVariant *param)
{
  NlExperimentsPage *page = NL_EXPERIMENTS_PAGE (widget);
  g_assert (NL_IS_EXPERIMENTS_PAGE (widget));
  NlRunRow *row = single_row (page);
  AdwMessageDialog *dlg;
  GtkWidget *entry;
  if (!row)
    return;
  dlg = ADW_MESSAGE_DIALOG (adw_message_dialog_new (page_window (page), _("Rename Run"), NULL));
  adw_message_dialog_add_responses (dlg, "cancel", _("_Cancel"), "rename", _("_Rename"), NULL);
  adw_message_dialog_set_response_appearance (dlg, "rename", ADW_RESPONSE_SUGGESTED);
  adw_message_dialog_set_default_response (dlg, "rename");
  adw_message_dialog_set_close_response (dlg, "cancel");
  entry = gtk_entry_new ();
  gtk_editable_set_text (GTK_EDITABLE (entry), nl_run_row_get_name (row));
  g_signal_connect (entry, "activate", G_CALLBACK (rename_activate), dlg);
  adw_message_dialog_set_extra_child (dlg, entry);
  g_object_set_data (G_OBJECT (dlg), "nl-entry", entry);
  g_object_set_data_full (G_OBJECT (dlg), "nl-run", g_memdup2 (&(gint64) { nl_run_row_get_id (row) }, sizeof (gint64)),
                          g_free);
  g_signal_connect_object (dlg, "response", G_CALLBACK (rename_response), page, 0);
  gtk_window_present (GTK_WINDOW (dlg));
  gtk_widget_grab_focus (entry);
}

static void
delete_response (AdwMessageDialog *dlg, const char *response, NlExperimentsPage *page)
{
  GArray *ids = g_object_get_data (G_OBJECT (dlg), "nl-runs");
  if (strcmp (response, "delete") == 0 && page->ws)
    nl_experiments_page_delete_runs (page, (const gint64 *) ids->data, ids->len);
}

static void
action_delete (GtkWidget *widget, const char *name, GVariant *param)
{
  NlExperimentsPage *page = NL_EXPERIMENTS_PAGE (widget);
  g_assert (NL_IS_EXPERIMENTS_PAGE (widget));
  g_autoptr (GArray) ids = _nl_experiments_page_selected_ids (page);
  g_autoptr (GPtrArray) rows = _nl_experiments_page_selected_rows (page);
  g_autofree char *heading = NULL;
  AdwMessageDialog *dlg;
  if (ids->len == 0)
    return;
  heading = ids->len == 1 ? g_strdup_printf (_("Delete “%s”?"), nl_run_row_get_name (g_ptr_array_index (rows, 0)))
                          : g_strdup_printf (ngettext ("Delete %u Run?", "Delete %u Runs?", ids->len), ids->len);
  dlg = ADW_MESSAGE_DIALOG (adw_message_dialog_new (
      page_window (page), heading,
      _("Their metrics, checkpoints, tags and notes are deleted too. Runs forked from them keep their own data.")));
  adw_message_dialog_add_responses (dlg, "cancel", _("_Cancel"), "delete", _("_Delete"), NULL);
  adw_message_dialog_set_response_appearance (dlg, "delete", ADW_RESPONSE_DESTRUCTIVE);
  adw_message_dialog_set_close_response (dlg, "cancel");
  g_object_set_data_full (G_OBJECT (dlg), "nl-runs", g_steal_pointer (&ids), (GDestroyNotify) g_array_unref);
  g_signal_connect_object (dlg, "response", G_CALLBACK (delete_response), page, 0);
  gtk_window_present (GTK_WINDOW (dlg));
}

static void
action_simple (GtkWidget *widget, const char *name, GVariant *param)
{
  NlExperimentsPage *page = NL_EXPERIMENTS_PAGE (widget);
  g_assert (NL_IS_EXPERIMENTS_PAGE (widget));
  NlRunRow *row = single_row (page);
  g_autoptr (GArray) ids = _nl_experiments_page_selected_ids (page);
  if (strcmp (name, "exp.tags") == 0)
    gtk_menu_button_popup (page->tags_button);
  else if (strcmp (name, "exp.notes") == 0)
    gtk_menu_button_popup (page->notes_button);
  else if (strcmp (name, "exp.export-metrics") == 0)
    choose_export_file (page, FALSE);
  else if (!row || !page->ws)
    return;
  else if (strcmp (name, "exp.resume") == 0 && page->resume_func)
    page->resume_func (page, nl_run_row_get_id (row), page->resume_data);
  else if (strcmp (name, "exp.fork") == 0)
    nl_workspace_request_fork_run (page->ws, nl_run_row_get_id (row));
  else if (strcmp (name, "exp.evaluate") == 0)
    nl_workspace_request_evaluate_run (page->ws, nl_run_row_get_id (row));
  else if (strcmp (name, "exp.quantize") == 0)
    gtk_window_present (GTK_WINDOW (nl_quantize_dialog_new (widget, page->ws, nl_run_row_get_id (row),
                                                            nl_run_row_get_name (row))));
  else if (strcmp (name, "exp.open-network") == 0)
    nl_experiments_page_open_network (page, nl_run_row_get_id (row));
  else if (strcmp (name, "exp.export-weights") == 0)
    choose_export_file (page, TRUE);
  else if (strcmp (name, "exp.export-onnx") == 0)
    gtk_window_present (GTK_WINDOW (nl_onnx_export_dialog_new (widget, page->ws, nl_run_row_get_id (row), NULL,
                                                               nl_run_row_get_name (row))));
}

void
_nl_experiments_page_install_actions (NlExperimentsPageClass *klass)
{
  GtkWidgetClass *wc = GTK_WIDGET_CLASS (klass);
  static const char *const simple[] = { "exp.tags", "exp.notes", "exp.resume", "exp.fork", "exp.evaluate", "exp.quantize",
                                        "exp.open-network", "exp.export-weights", "exp.export-onnx",
                                        "exp.export-metrics" };
  gtk_widget_class_install_action (wc, "exp.rename", NULL, action_rename);
  gtk_widget_class_install_action (wc, "exp.delete", NULL, action_delete);
  for (guint i = 0; i < G_N_ELEMENTS (simple); i++)
    gtk_widget_class_install_action (wc, simple[i], NULL, action_simple);
  gtk_widget_class_add_binding_action (wc, GDK_KEY_F2, 0, "exp.rename", NULL);
  gtk_widget_class_add_binding_action (wc, GDK_KEY_Delete, 0, "exp.delete", NULL);
}

/* ---- the Tags and Notes popovers ---- */

static void
clear_box (GtkWidget *box)
{
  GtkWidget *child;
  while ((child = gtk_widget_get_first_child (box)))
    gtk_box_remove (GTK_BOX (box), child);
}

static void
remove_tag_clicked (GtkButton *button, NlExperimentsPage *page)
{
  g_autoptr (GArray) ids = _nl_experiments_page_selected_ids (page);
  g_autoptr (GError) error = NULL;
  const char *tag = g_object_get_data (G_OBJECT (button), "nl-tag");
  if (!nl_experiments_page_remove_tag (page, (const gint64 *) ids->data, ids->len, tag, &error))
    report (page, error);
}

static void
rebuild_tags (NlExperimentsPage *page)
{
  g_autoptr (GPtrArray) rows = _nl_experiments_page_selected_rows (page);
  g_autoptr (GHashTable) counts = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr (GPtrArray) tags = g_ptr_array_new ();

  clear_box (page->tags_list);
  for (guint i = 0; i < rows->len; i++)
    for (const char *const *t = nl_run_row_get_tags (g_ptr_array_index (rows, i)); t && *t; t++)
      {
        guint n = GPOINTER_TO_UINT (g_hash_table_lookup (counts, *t));
        if (n == 0)
          g_ptr_array_add (tags, (gpointer) *t);
        g_hash_table_insert (counts, (gpointer) *t, GUINT_TO_POINTER (n + 1));
      }
  g_ptr_array_sort (tags, (GCompareFunc) g_strcmp0);
  for (guint i = 0; i < tags->len; i++)
    {
      const char *tag = *(const char **) &g_ptr_array_index (tags, i);
      guint n = GPOINTER_TO_UINT (g_hash_table_lookup (counts, tag));
      GtkWidget *line = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 6);
      GtkWidget *label = gtk_label_new (tag), *remove = gtk_button_new_from_icon_name ("window-close-symbolic");
      gtk_widget_set_hexpand (label, TRUE);
      gtk_label_set_xalign (GTK_LABEL (label), 0);
      gtk_box_append (GTK_BOX (line), label);
      if (n < rows->len)
        {
          g_autofree char *of = g_strdup_printf (_("%u of %u"), n, rows->len);
          GtkWidget *l = gtk_label_new (of);
          gtk_widget_add_css_class (l, "dim-label");
          gtk_box_append (GTK_BOX (line), l);
        }
      gtk_widget_add_css_class (remove, "flat");
      gtk_widget_set_tooltip_text (remove, _("Remove from the selected runs"));
      g_object_set_data_full (G_OBJECT (remove), "nl-tag", g_strdup (tag), g_free);
      g_signal_connect (remove, "clicked", G_CALLBACK (remove_tag_clicked), page);
      gtk_box_append (GTK_BOX (line), remove);
      gtk_box_append (GTK_BOX (page->tags_list), line);
    }
  if (tags->len == 0)
    {
      GtkWidget *none = gtk_label_new (_("No tags yet"));
      gtk_widget_add_css_class (none, "dim-label");
      gtk_box_append (GTK_BOX (page->tags_list), none);
    }
}

static void
tag_entry_activate (GtkEntry *entry, NlExperimentsPage *page)
{
  g_autoptr (GArray) ids = _nl_experiments_page_selected_ids (page);
  g_autoptr (GError) error = NULL;
  if (!nl_experiments_page_add_tag (page, (const gint64 *) ids->data, ids->len,
                                    gtk_editable_get_text (GTK_EDITABLE (entry)), &error))
    report (page, error);
  else
    gtk_editable_set_text (GTK_EDITABLE (entry), "");
}

static void
rebuild_notes (NlExperimentsPage *page)
{
  NlRunRow *row = single_row (page);
  g_autoptr (GPtrArray) notes = NULL;
  g_autoptr (GError) error = NULL;

  clear_box (page->notes_list);
  if (!row || !page->ws)
    return;
  /* a run's notes are a handful of rows: read them here */
  if (!(notes = nl_project_list_notes (nl_workspace_get_project (page->ws), nl_run_row_get_id (row), &error)))
    {
      report (page, error);
      return;
    }
  for (guint i = 0; i < notes->len; i++)
    {
      NlNote *n = g_ptr_array_index (notes, i);
      g_autoptr (GDateTime) t = g_date_time_new_from_unix_local ((gint64) n->created);
      g_autofree char *when = t ? g_date_time_format (t, "%Y-%m-%d %H:%M") : g_strdup ("");
      GtkWidget *date = gtk_label_new (when), *text = gtk_label_new (n->text);
      gtk_label_set_xalign (GTK_LABEL (date), 0);
      gtk_widget_add_css_class (date, "dim-label");
      gtk_widget_add_css_class (date, "caption");
      gtk_label_set_xalign (GTK_LABEL (text), 0);
      gtk_label_set_wrap (GTK_LABEL (text), TRUE);
      gtk_label_set_selectable (GTK_LABEL (text), TRUE);
      gtk_label_set_max_width_chars (GTK_LABEL (text), 40);
      gtk_box_append (GTK_BOX (page->notes_list), date);
      gtk_box_append (GTK_BOX (page->notes_list), text);
    }
  if (notes->len == 0)
    {
      GtkWidget *none = gtk_label_new (_("No notes yet"));
      gtk_widget_add_css_class (none, "dim-label");
      gtk_box_append (GTK_BOX (page->notes_list), none);
    }
}

static void
note_entry_activate (GtkEntry *entry, NlExperimentsPage *page)
{
  NlRunRow *row = single_row (page);
  g_autoptr (GError) error = NULL;
  if (!row)
    return;
  if (!nl_experiments_page_add_note (page, nl_run_row_get_id (row), gtk_editable_get_text (GTK_EDITABLE (entry)),
                                     &error))
    report (page, error);
  else
    gtk_editable_set_text (GTK_EDITABLE (entry), "");
}

/* A popover: an entry over a list. */
static GtkWidget *
make_popover (GtkMenuButton *button, const char *placeholder, GtkWidget **list, GtkWidget **entry)
{
  GtkWidget *pop = gtk_popover_new (), *box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 6);
  GtkWidget *scroller = gtk_scrolled_window_new ();
  *entry = gtk_entry_new ();
  *list = gtk_box_new (GTK_ORIENTATION_VERTICAL, 4);
  gtk_entry_set_placeholder_text (GTK_ENTRY (*entry), placeholder);
  gtk_scrolled_window_set_policy (GTK_SCROLLED_WINDOW (scroller), GTK_POLICY_NEVER, GTK_POLICY_AUTOMATIC);
  gtk_scrolled_window_set_propagate_natural_height (GTK_SCROLLED_WINDOW (scroller), TRUE);
  gtk_scrolled_window_set_max_content_height (GTK_SCROLLED_WINDOW (scroller), 320);
  gtk_scrolled_window_set_child (GTK_SCROLLED_WINDOW (scroller), *list);
  gtk_widget_set_size_request (box, 280, -1);
  gtk_box_append (GTK_BOX (box), *entry);
  gtk_box_append (GTK_BOX (box), scroller);
  gtk_popover_set_child (GTK_POPOVER (pop), box);
  gtk_menu_button_set_popover (button, pop);
  return pop;
}

static void
popover_show (GtkWidget *pop, NlExperimentsPage *page)
{
  if (pop == page->tags_popover)
    rebuild_tags (page);
  else
    rebuild_notes (page);
}

void
_nl_experiments_page_setup_popups (NlExperimentsPage *page)
{
  page->tags_popover = make_popover (page->tags_button, _("Add a tag to the selected runs"), &page->tags_list,
                                     &page->tags_entry);
  page->notes_popover = make_popover (page->notes_button, _("Add a note"), &page->notes_list, &page->notes_entry);
  g_signal_connect (page->tags_entry, "activate", G_CALLBACK (tag_entry_activate), page);
  g_signal_connect (page->notes_entry, "activate", G_CALLBACK (note_entry_activate), page);
  g_signal_connect (page->tags_popover, "show", G_CALLBACK (popover_show), page);
  g_signal_connect (page->notes_popover, "show", G_CALLBACK (popover_show), page);
}

/* After a refresh: what an open popover lists may have changed. */
void
_nl_experiments_page_update_popups (NlExperimentsPage *page)
{
  if (page->tags_popover && gtk_widget_get_visible (page->tags_popover))
    rebuild_tags (page);
  if (page->notes_popover && gtk_widget_get_visible (page->notes_popover))
    rebuild_notes (page);
}
