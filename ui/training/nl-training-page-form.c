/* nl-training-page-form.c — the Training page's form: the run group's rows
 * (network, pipeline, name, fork), the project's networks and pipelines
 * (read off the main loop), the steps per epoch and the schedule preview.
 * The other groups are widgets of their own (nl-optimizer-group,
 * nl-schedule-group, nl-training-group, nl-checkpoint-group,
 * nl-early-stop-group). */
#include "ui/training/nl-training-page-private.h"
#include <glib/gi18n.h>
#include "ui/widgets/nl-form-rows.h"
#include "engine/session/nl-data-preview.h"

#include <math.h>
#include <string.h>



static void
update_preview (NlTrainingPage *page)
{
  nl_schedule_group_preview (page->schedule, nl_optimizer_group_get_lr (page->optimizer),
                             nl_training_group_get_epochs (page->training), page->steps_per_epoch);
}

/* ---- visibility, defaults, reactions ---- */

const NlPipelineInfo *
_nl_training_page_form_pipeline (NlTrainingPage *page)
{
  guint i = adw_combo_row_get_selected (page->pipeline_row);
  return page->pipeline_infos && i < page->pipeline_infos->len ? g_ptr_array_index (page->pipeline_infos, i) : NULL;
}

static void count_steps (NlTrainingPage *page);

void
_nl_training_page_form_changed (NlTrainingPage *page)
{
  if (!page->rows.fields || !page->name_row)
    return;  /* still building the rows */
  if (page->filling)
    return;
  _nl_training_page_form_update_subtitle (page);
  count_steps (page);
  update_preview (page);
  _nl_training_page_update_actions (page);
}

/* ---- steps per epoch: the pipeline's training samples, counted off the main loop ---- */

static void
count_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  GError *error = NULL;
  NlDataPreview *p = nl_data_preview_load (task_data, 0, 0, NULL, cancellable, &error);
  if (!p)
    {
      g_task_return_error (task, error);
      return;
    }
  g_task_return_int (task, p->length);
  nl_data_preview_unref (p);
}

static void
count_done (GObject *source, GAsyncResult *res, gpointer data)
{
  NlTrainingPage *page = NL_TRAINING_PAGE (source);
  NlWorkspace *ws = data;
  g_autoptr (GError) error = NULL;
  gssize length = g_task_propagate_int (G_TASK (res), &error);
  const NlPipelineInfo *pl;

  nl_workspace_busy_pop (ws);
  g_object_unref (ws);
  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    return;
  pl = _nl_training_page_form_pipeline (page);
  if (length > 0 && pl)
    page->steps_per_epoch = (length + MAX (pl->batch_size, 1) - 1) / MAX (pl->batch_size, 1);
  /* the run's true length may make the schedule valid or not (cosine needs
   * more steps than its warm-up) */
  update_preview (page);
  _nl_training_page_update_actions (page);
}

static void
count_steps (NlTrainingPage *page)
{
  const NlPipelineInfo *pl = _nl_training_page_form_pipeline (page);
  g_autofree char *key = NULL;
  g_autoptr (GTask) task = NULL;

  if (!pl || !page->ws)
    return;
  key = g_strdup_printf ("%s|%d|%g|%s", pl->dataset_spec, pl->batch_size, pl->split,
                         pl->extra_json ? pl->extra_json : "");
  if (g_strcmp0 (key, page->steps_key) == 0)
    return;
  g_free (page->steps_key);
  page->steps_key = g_steal_pointer (&key);
  page->steps_per_epoch = 0;
  g_cancellable_cancel (page->size_cancel);
  g_clear_object (&page->size_cancel);
  page->size_cancel = g_cancellable_new ();
  task = g_task_new (page, page->size_cancel, count_done, g_object_ref (page->ws));
  {
    NlPipelineInfo *copy = g_new0 (NlPipelineInfo, 1);
    copy->name = g_strdup (pl->name);
    copy->dataset_spec = g_strdup (pl->dataset_spec);
    copy->split = pl->split;
    copy->batch_size = pl->batch_size;
    copy->extra_json = g_strdup (pl->extra_json);
    g_task_set_task_data (task, copy, (GDestroyNotify) nl_pipeline_info_free);
  }
  nl_workspace_busy_push (page->ws);
  g_task_run_in_thread (task, count_thread);
}

/* ---- the project's networks and pipelines, read off the main loop ---- */

typedef struct {
  GPtrArray *networks;    /* NlNetworkInfo* */
  GPtrArray *pipelines;   /* NlPipelineInfo* */
  char *newest_network;   /* the network of the newest run, or NULL */
} Lists;

static void
lists_free (Lists *l)
{
  g_clear_pointer (&l->networks, g_ptr_array_unref);
  g_clear_pointer (&l->pipelines, g_ptr_array_unref);
  g_free (l->newest_network);
  g_free (l);
}

static void
lists_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  NlProject *p = nl_workspace_get_project (task_data);
  Lists *l = g_new0 (Lists, 1);
  g_autoptr (GPtrArray) runs = NULL;
  GError *error = NULL;

  if (!(l->networks = nl_project_list_networks (p, &error)) || !(l->pipelines = nl_project_list_pipelines (p, &error)))
    {
      lists_free (l);
      g_task_return_error (task, error);
      return;
    }
  runs = nl_project_list_runs (p, NULL);
  if (runs && runs->len > 0)
    l->newest_network = g_strdup (((NlRunInfo *) g_ptr_array_index (runs, runs->len - 1))->network_name);
  g_task_return_pointer (task, l, (GDestroyNotify) lists_free);
}

guint
_nl_training_page_form_find (GtkStringList *list, const char *s)
{
  guint n = g_list_model_get_n_items (G_LIST_MODEL (list));
  for (guint i = 0; s && i < n; i++)
    if (!g_strcmp0 (gtk_string_list_get_string (list, i), s))
      return i;
  return GTK_INVALID_LIST_POSITION;
}

const char *
_nl_training_page_form_selected (AdwComboRow *row)
{
  GtkStringObject *o = adw_combo_row_get_selected_item (row);
  return o ? gtk_string_object_get_string (o) : NULL;
}

/* Replaces the items of a string list; selects KEEP, else PREFER, else
 * FALLBACK, else the first. */
static void
set_items (AdwComboRow *row, GtkStringList *list, const char *const *items, const char *keep, const char *prefer,
           const char *fallback)
{
  const char *const order[] = { keep, prefer, fallback };
  guint pos = GTK_INVALID_LIST_POSITION;
  gtk_string_list_splice (list, 0, g_list_model_get_n_items (G_LIST_MODEL (list)), items);
  for (guint i = 0; i < G_N_ELEMENTS (order) && pos == GTK_INVALID_LIST_POSITION; i++)
    pos = _nl_training_page_form_find (list, order[i]);
  if (pos == GTK_INVALID_LIST_POSITION && g_list_model_get_n_items (G_LIST_MODEL (list)) > 0)
    pos = 0;
  adw_combo_row_set_selected (row, pos);
}

void
_nl_training_page_form_update_subtitle (NlTrainingPage *page)
{
  const NlPipelineInfo *pl = _nl_training_page_form_pipeline (page);
  g_autofree char *text = NULL;
  if (!pl)
    text = g_strdup (page->pipelines && g_list_model_get_n_items (G_LIST_MODEL (page->pipelines)) == 0
                       ? _("No pipelines: make one on the Data page") : "");
  else
    text = g_strdup_printf (_("%s · batch %d%s%s"), pl->dataset_spec, pl->batch_size,
                            pl->transforms && *pl->transforms ? " · " : "", pl->transforms ? pl->transforms : "");
  adw_action_row_set_subtitle (ADW_ACTION_ROW (page->pipeline_row), text);
}

static void
lists_done (GObject *source, GAsyncResult *res, gpointer data)
{
  NlTrainingPage *page = NL_TRAINING_PAGE (source);
  NlWorkspace *ws = g_task_get_task_data (G_TASK (res));
  g_autoptr (GError) error = NULL;
  Lists *l = g_task_propagate_pointer (G_TASK (res), &error);
  g_autofree char *keep_net = NULL, *keep_pl = NULL;
  g_autoptr (GPtrArray) names = g_ptr_array_new ();

  nl_workspace_busy_pop (ws);
  if (ws != page->ws)
    {
      g_clear_pointer (&l, lists_free);
      return;
    }
  page->lists_loading--;
  if (!l)
    {
      nl_workspace_toast (ws, _("Could not read the networks and pipelines: %s"), error->message);
      _nl_training_page_update_actions (page);
      return;
    }
  keep_net = g_strdup (_nl_training_page_form_selected (page->network_row));
  keep_pl = g_strdup (_nl_training_page_form_selected (page->pipeline_row));
  page->filling = TRUE;
  for (guint i = 0; i < l->networks->len; i++)
    g_ptr_array_add (names, ((NlNetworkInfo *) g_ptr_array_index (l->networks, i))->name);
  g_ptr_array_add (names, NULL);
  /* the newest run's network, else the quickest sample network to try */
  set_items (page->network_row, page->networks, (const char *const *) names->pdata, keep_net, l->newest_network,
             "mlp");
  g_ptr_array_set_size (names, 0);
  g_clear_pointer (&page->pipeline_infos, g_ptr_array_unref);
  page->pipeline_infos = g_steal_pointer (&l->pipelines);
  for (guint i = 0; i < page->pipeline_infos->len; i++)
    g_ptr_array_add (names, ((NlPipelineInfo *) g_ptr_array_index (page->pipeline_infos, i))->name);
  g_ptr_array_add (names, NULL);
  set_items (page->pipeline_row, page->pipelines, (const char *const *) names->pdata, keep_pl, NULL, NULL);
  page->filling = FALSE;
  adw_action_row_set_subtitle (ADW_ACTION_ROW (page->network_row),
                               l->networks->len ? "" : _("No networks: draw one on the Network page"));
  _nl_training_page_form_update_subtitle (page);
  lists_free (l);
  _nl_training_page_form_changed (page);
}

void
_nl_training_page_form_reload (NlTrainingPage *page)
{
  g_autoptr (GTask) task = NULL;
  if (!page->ws)
    return;
  page->lists_loading++;
  task = g_task_new (page, page->form_cancel, lists_done, NULL);
  g_task_set_task_data (task, g_object_ref (page->ws), g_object_unref);
  nl_workspace_busy_push (page->ws);
  g_task_run_in_thread (task, lists_thread);
}

/* ---- building the rows ---- */


static void
add_fork_row (NlTrainingPage *page, GtkWidget *group)
{
  GtkWidget *row = adw_action_row_new ();
  GtkWidget *cancel = gtk_button_new_with_mnemonic (_("_New Run Instead"));
  adw_action_row_add_prefix (ADW_ACTION_ROW (row), gtk_image_new_from_icon_name ("media-playlist-consecutive-symbolic"));
  gtk_widget_set_valign (cancel, GTK_ALIGN_CENTER);
  gtk_actionable_set_action_name (GTK_ACTIONABLE (cancel), "training.cancel-fork");
  adw_action_row_add_suffix (ADW_ACTION_ROW (row), cancel);
  adw_action_row_set_subtitle_lines (ADW_ACTION_ROW (row), 3);
  gtk_widget_add_css_class (row, "accent");
  gtk_widget_set_visible (row, FALSE);
  nl_form_rows_add (group, row);
  page->fork_row = ADW_ACTION_ROW (row);
}

void
_nl_training_page_form_init (NlTrainingPage *page)
{
  GtkWidget *run = GTK_WIDGET (page->run_group);
  g_autofree char *threads_sub = g_strdup_printf (_("0 uses all %u cores"), g_get_num_processors ());

  page->rows = (NlFormRows) { g_hash_table_new (g_str_hash, g_str_equal), G_CALLBACK (_nl_training_page_form_changed),
                              G_OBJECT (page) };
  page->networks = gtk_string_list_new (NULL);
  page->pipelines = gtk_string_list_new (NULL);
  g_signal_connect_object (page->optimizer, "changed", G_CALLBACK (_nl_training_page_form_changed), page,
                           G_CONNECT_SWAPPED);
  g_signal_connect_object (page->schedule, "changed", G_CALLBACK (_nl_training_page_form_changed), page,
                           G_CONNECT_SWAPPED);
  g_signal_connect_object (page->training, "changed", G_CALLBACK (_nl_training_page_form_changed), page,
                           G_CONNECT_SWAPPED);

  add_fork_row (page, run);
  page->network_row = nl_form_rows_combo (&page->rows, run, "network", _("Network"), NULL,
                                          G_LIST_MODEL (page->networks));
  page->pipeline_row = nl_form_rows_combo (&page->rows, run, "pipeline", _("Pipeline"), NULL,
                                           G_LIST_MODEL (page->pipelines));
  adw_action_row_set_subtitle_lines (ADW_ACTION_ROW (page->pipeline_row), 1);
  page->name_row = ADW_ENTRY_ROW (adw_entry_row_new ());
  adw_preferences_row_set_title (ADW_PREFERENCES_ROW (page->name_row), _("Run name (optional)"));
  nl_form_rows_add (run, GTK_WIDGET (page->name_row));
  g_hash_table_insert (page->rows.fields, (gpointer) "name", page->name_row);




  update_preview (page);
}

void
_nl_training_page_form_dispose (NlTrainingPage *page)
{
  g_cancellable_cancel (page->form_cancel);
  g_clear_object (&page->form_cancel);
  g_cancellable_cancel (page->size_cancel);
  g_clear_object (&page->size_cancel);
  g_clear_pointer (&page->rows.fields, g_hash_table_unref);
  g_clear_object (&page->networks);
  g_clear_object (&page->pipelines);
  g_clear_pointer (&page->pipeline_infos, g_ptr_array_unref);
  g_clear_pointer (&page->preferred_network, g_free);
  g_clear_pointer (&page->steps_key, g_free);
  g_clear_pointer (&page->fork_parent_json, g_free);
}

void
_nl_training_page_form_set_sensitive (NlTrainingPage *page, gboolean sensitive)
{
  GtkWidget *groups[] = { GTK_WIDGET (page->run_group), GTK_WIDGET (page->optimizer),
                          GTK_WIDGET (page->schedule), GTK_WIDGET (page->training),
                          GTK_WIDGET (page->checkpoint), GTK_WIDGET (page->early_stop) };
  for (guint i = 0; i < G_N_ELEMENTS (groups); i++)
    gtk_widget_set_sensitive (groups[i], sensitive);
  /* a fork trains the parent's network on the parent's data and device */
  gtk_widget_set_sensitive (GTK_WIDGET (page->network_row), page->fork_run == 0);
  gtk_widget_set_sensitive (GTK_WIDGET (page->pipeline_row), page->fork_run == 0);
  gtk_widget_set_sensitive (nl_training_group_get_control (page->training, "device"), page->fork_run == 0);
}

