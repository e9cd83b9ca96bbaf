/* nl-data-page.c — the Data page: the project's pipelines in a form on
 * the left (source, split, batches, transforms; see -transforms.c), the
 * preview on the right (see -preview.c). Unsaved edits of a pipeline are
 * kept as a draft while another one is shown. */
#include "ui/data/nl-data-page-private.h"
#include <glib/gi18n.h>
#include "ui/widgets/nl-file-chooser.h"
#include "engine/session/nl-run-pipeline.h"

#include <math.h>
#include <string.h>

G_DEFINE_FINAL_TYPE (NlDataPage, nl_data_page, ADW_TYPE_BIN)

static void show_pipeline (NlDataPage *page, const char *name);

static int
n_kinds (void)
{
  int n;
  nl_dataset_kinds (&n);
  return n;
}

const NlDatasetKind *
_nl_data_page_selected_kind (NlDataPage *page, int *index)
{
  int n;
  const NlDatasetKind *kinds = nl_dataset_kinds (&n);
  int i = (int) adw_combo_row_get_selected (page->source_row);
  i = CLAMP (i, 0, n - 1);
  if (index)
    *index = i;
  return &kinds[i];
}

static NlProject *
project (NlDataPage *page)
{
  return page->ws ? nl_workspace_get_project (page->ws) : NULL;
}

static void
update_actions (NlDataPage *page)
{
  gboolean writable = page->ws && !nl_project_is_read_only (project (page));
  GtkWidget *w = GTK_WIDGET (page);
  gtk_widget_action_set_enabled (w, "data.new", writable);
  gtk_widget_action_set_enabled (w, "data.save", writable && page->current);
  gtk_widget_action_set_enabled (w, "data.delete", writable && page->current);
  gtk_widget_action_set_enabled (w, "data.choose-source", page->current != NULL);
  gtk_widget_action_set_enabled (w, "data.shuffle-preview", page->current != NULL);
  gtk_widget_action_set_enabled (w, "data.add-transform", page->current != NULL);
  gtk_widget_set_sensitive (page->source_group, page->current != NULL);
  gtk_widget_set_sensitive (page->batch_group, page->current != NULL);
  gtk_widget_set_sensitive (page->transform_group, page->current != NULL);
  gtk_widget_set_sensitive (GTK_WIDGET (page->name_row), page->current != NULL);
  if (page->dirty)
    gtk_widget_add_css_class (page->save_button, "suggested-action");
  else
    gtk_widget_remove_css_class (page->save_button, "suggested-action");
}

void
_nl_data_page_set_dirty (NlDataPage *page)
{
  if (page->filling || page->dirty)
    return;
  page->dirty = TRUE;
  update_actions (page);
}

/* the source-dependent parts of the form */
static void
update_source_rows (NlDataPage *page)
{
  int k;
  const NlDatasetKind *kind = _nl_data_page_selected_kind (page, &k);
  const char *path = page->paths[k];
  g_autofree char *sub = NULL;

  adw_preferences_row_set_title (ADW_PREFERENCES_ROW (page->path_row), kind->path_is_folder ? _("Folder") : _("File"));
  if (path && *path)
    sub = g_markup_escape_text (path, -1);
  else if (kind->default_path)
    sub = g_markup_printf_escaped (_("Default: %s"), kind->default_path);
  else
    sub = g_strdup (kind->path_is_folder ? _("No folder chosen") : _("No file chosen"));
  adw_action_row_set_subtitle (page->path_row, sub);
  gtk_widget_set_visible (GTK_WIDGET (page->label_column_row),
                          (kind->uses & (NL_DATASET_USES_LABEL_COLUMN | NL_DATASET_USES_TEXT_COLUMN)) != 0);
  _nl_data_page_sequence_update_rows (page, kind);
  gtk_widget_set_sensitive (GTK_WIDGET (page->split_spin), (kind->uses & NL_DATASET_USES_SPLIT) != 0);
  adw_action_row_set_subtitle (page->split_row, kind->uses & NL_DATASET_USES_SPLIT
                                                  ? _("Share of the samples held out for validation")
                                                  : _("Not used: the dataset has its own test set"));
}

/* ---- the form and pipelines ---- */

static char *
form_spec (NlDataPage *page)
{
  const NlDatasetKind *kind = _nl_data_page_selected_kind (page, NULL);
  int k = nl_dataset_kind_index (kind);
  return page->raw_spec ? g_strdup (page->raw_spec) : nl_dataset_kind_spec (kind, page->paths[k]);
}

NlPipelineInfo *
nl_data_page_dup_pipeline (NlDataPage *page)
{
  NlPipelineInfo *pl;
  NlPipelineExtra x;
  const char *label_column;

  g_return_val_if_fail (NL_IS_DATA_PAGE (page), NULL);
  if (!page->current)
    return NULL;
  pl = g_new0 (NlPipelineInfo, 1);
  pl->name = g_strdup (page->current);
  pl->dataset_spec = form_spec (page);
  pl->transforms = page->raw_transforms ? g_strdup (page->raw_transforms)
                   : page->steps->len ? nl_transform_steps_to_spec (page->steps) : NULL;
  pl->split = round (gtk_spin_button_get_value (page->split_spin) * 1000) / 1000;
  pl->batch_size = gtk_spin_button_get_value_as_int (page->batch_spin);
  pl->workers = gtk_spin_button_get_value_as_int (page->workers_spin);
  /* a bad extra_json of the project is replaced by the form's options */
  if (!nl_pipeline_extra_parse (page->loaded_extra, &x, NULL))
    nl_pipeline_extra_parse (NULL, &x, NULL);
  x.shuffle = gtk_switch_get_active (page->shuffle_switch);
  label_column = gtk_editable_get_text (GTK_EDITABLE (page->label_column_row));
  g_free (x.label_column);
  x.label_column = *label_column ? g_strstrip (g_strdup (label_column)) : NULL;
  _nl_data_page_sequence_read (page, &x);
  pl->extra_json = nl_pipeline_extra_to_json (&x, page->loaded_extra);
  nl_pipeline_extra_clear (&x);
  return pl;
}

static void
fill_form (NlDataPage *page, const NlPipelineInfo *pl)
{
  g_autofree char *path = NULL;
  g_autoptr (GPtrArray) steps = NULL;
  NlPipelineExtra x;
  int k = nl_dataset_kind_index (nl_dataset_kind_lookup (pl->dataset_spec, &path));

  page->filling++;
  g_clear_pointer (&page->raw_spec, g_free);
  g_clear_pointer (&page->raw_transforms, g_free);
  g_free (page->loaded_extra);
  page->loaded_extra = g_strdup (pl->extra_json);
  gtk_editable_set_text (GTK_EDITABLE (page->name_row), pl->name);
  if (k < 0)
    page->raw_spec = g_strdup (pl->dataset_spec);
  else
    {
      g_free (page->paths[k]);
      page->paths[k] = g_steal_pointer (&path);
    }
  adw_combo_row_set_selected (page->source_row, MAX (k, 0));
  gtk_spin_button_set_value (page->split_spin, pl->split);
  gtk_spin_button_set_value (page->batch_spin, pl->batch_size);
  gtk_spin_button_set_value (page->workers_spin, pl->workers);
  if (!nl_pipeline_extra_parse (pl->extra_json, &x, NULL))
    nl_pipeline_extra_parse (NULL, &x, NULL);
  gtk_switch_set_active (page->shuffle_switch, x.shuffle);
  gtk_editable_set_text (GTK_EDITABLE (page->label_column_row), x.label_column ? x.label_column : "");
  _nl_data_page_sequence_fill (page, &x);
  nl_pipeline_extra_clear (&x);
  if (!(steps = nl_transform_steps_parse (pl->transforms, NULL)))
    {
      page->raw_transforms = g_strdup (pl->transforms);
      steps = g_ptr_array_new_with_free_func ((GDestroyNotify) nl_transform_step_free);
    }
  g_ptr_array_unref (page->steps);
  page->steps = g_steal_pointer (&steps);
  page->expand_step = -1;
  _nl_data_page_rebuild_transforms (page);
  update_source_rows (page);
  page->filling--;
}

static void
clear_form (NlDataPage *page)
{
  page->filling++;
  g_clear_pointer (&page->current, g_free);
  g_clear_pointer (&page->loaded_extra, g_free);
  g_clear_pointer (&page->raw_spec, g_free);
  g_clear_pointer (&page->raw_transforms, g_free);
  gtk_editable_set_text (GTK_EDITABLE (page->name_row), "");
  g_ptr_array_set_size (page->steps, 0);
  _nl_data_page_rebuild_transforms (page);
  page->dirty = FALSE;
  page->filling--;
}

/* Whether the form shows DB: compared as the form would write DB back, so
 * the file watcher's notifications (every second during a CLI run) do not
 * refill an unchanged form. */
static gboolean
form_shows (const NlPipelineInfo *form, const NlPipelineInfo *db)
{
  g_autofree char *path = NULL, *spec = NULL, *transforms = NULL, *extra = NULL;
  g_autoptr (GPtrArray) steps = nl_transform_steps_parse (db->transforms, NULL);
  const NlDatasetKind *kind = nl_dataset_kind_lookup (db->dataset_spec, &path);
  NlPipelineExtra x;

  if (!form)
    return FALSE;
  spec = kind ? nl_dataset_kind_spec (kind, path) : g_strdup (db->dataset_spec);
  transforms = steps ? nl_transform_steps_to_spec (steps) : g_strdup (db->transforms ? db->transforms : "");
  if (!nl_pipeline_extra_parse (db->extra_json, &x, NULL))
    nl_pipeline_extra_parse (NULL, &x, NULL);
  extra = nl_pipeline_extra_to_json (&x, db->extra_json);
  nl_pipeline_extra_clear (&x);
  return g_strcmp0 (form->dataset_spec, spec) == 0 && strcmp (form->transforms ? form->transforms : "", transforms) == 0
         && fabs (form->split - db->split) < 1e-3 && form->batch_size == db->batch_size
         && form->workers == db->workers && g_strcmp0 (form->extra_json, extra) == 0;
}

static gboolean
has_pipeline (NlDataPage *page, const char *name)
{
  for (guint i = 0; i < g_list_model_get_n_items (G_LIST_MODEL (page->pipeline_names)); i++)
    if (strcmp (gtk_string_list_get_string (page->pipeline_names, i), name) == 0)
      return TRUE;
  return FALSE;
}

/* unsaved edits are kept for when the pipeline is shown again */
static void
stash_draft (NlDataPage *page)
{
  NlPipelineInfo *draft;
  if (!page->dirty || !page->current)
    return;
  draft = nl_data_page_dup_pipeline (page);
  g_free (draft->name);  /* the Name row's text, maybe a rename in progress */
  draft->name = g_strdup (gtk_editable_get_text (GTK_EDITABLE (page->name_row)));
  g_hash_table_replace (page->drafts, g_strdup (page->current), draft);
}

/* the project's pipelines into the selector, keeping the shown one */
static void
reload_pipelines (NlDataPage *page)
{
  g_autoptr (GPtrArray) list = NULL;
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) names = g_ptr_array_new ();
  guint n = g_list_model_get_n_items (G_LIST_MODEL (page->pipeline_names)), keep = GTK_INVALID_LIST_POSITION;
  gboolean same;

  if (page->ws && !(list = nl_project_list_pipelines (project (page), &error)))
    nl_workspace_toast (page->ws, _("Cannot read the pipelines: %s"), error->message);
  for (guint i = 0; list && i < list->len; i++)
    {
      const char *name = ((NlPipelineInfo *) list->pdata[i])->name;
      g_ptr_array_add (names, (char *) name);
      if (g_strcmp0 (name, page->current) == 0)
        keep = i;
    }
  g_ptr_array_add (names, NULL);
  same = n == names->len - 1;
  for (guint i = 0; same && i < n; i++)
    same = strcmp (gtk_string_list_get_string (page->pipeline_names, i), names->pdata[i]) == 0;
  page->filling++;
  if (!same)
    gtk_string_list_splice (page->pipeline_names, 0, n, (const char *const *) names->pdata);
  if (keep != GTK_INVALID_LIST_POSITION)
    adw_combo_row_set_selected (page->pipeline_row, keep);
  page->filling--;
  if (keep != GTK_INVALID_LIST_POSITION)
    {
      /* another writer may have changed it; edits in progress win */
      g_autoptr (NlPipelineInfo) form = nl_data_page_dup_pipeline (page);
      if (!page->dirty && !form_shows (form, list->pdata[keep]))
        show_pipeline (page, page->current);
    }
  else
    show_pipeline (page, names->len > 1 ? names->pdata[0] : NULL);
}

/* shows NAME (NULL: none): its unsaved draft, else the project's row */
static void
show_pipeline (NlDataPage *page, const char *name)
{
  g_autoptr (NlPipelineInfo) pl = NULL;
  g_autoptr (GError) error = NULL;
  NlPipelineInfo *draft = name ? g_hash_table_lookup (page->drafts, name) : NULL;

  if (!name || (!draft && !(pl = nl_project_load_pipeline (project (page), name, &error))))
    {
      if (error)
        nl_workspace_toast (page->ws, _("Cannot read pipeline “%s”: %s"), name, error->message);
      clear_form (page);
      update_actions (page);
      _nl_data_page_schedule_reload (page, FALSE);
      return;
    }
  if (g_strcmp0 (page->current, name) != 0)
    {
      g_free (page->current);
      page->current = g_strdup (name);
    }
  fill_form (page, draft ? draft : pl);
  page->dirty = draft != NULL;
  page->filling++;
  for (guint i = 0; i < g_list_model_get_n_items (G_LIST_MODEL (page->pipeline_names)); i++)
    if (strcmp (gtk_string_list_get_string (page->pipeline_names, i), name) == 0)
      adw_combo_row_set_selected (page->pipeline_row, i);
  page->filling--;
  update_actions (page);
  _nl_data_page_schedule_reload (page, FALSE);
}

static void
on_pipeline_selected (NlDataPage *page)
{
  guint i = adw_combo_row_get_selected (page->pipeline_row);
  const char *name = i == GTK_INVALID_LIST_POSITION ? NULL : gtk_string_list_get_string (page->pipeline_names, i);
  if (page->filling || !name || g_strcmp0 (name, page->current) == 0)
    return;
  stash_draft (page);
  show_pipeline (page, name);
}

gboolean
nl_data_page_select_pipeline (NlDataPage *page, const char *name)
{
  g_return_val_if_fail (NL_IS_DATA_PAGE (page), FALSE);
  for (guint i = 0; name && i < g_list_model_get_n_items (G_LIST_MODEL (page->pipeline_names)); i++)
    if (strcmp (gtk_string_list_get_string (page->pipeline_names, i), name) == 0)
      {
        adw_combo_row_set_selected (page->pipeline_row, i);
        return TRUE;
      }
  return FALSE;
}

const char *
nl_data_page_get_pipeline (NlDataPage *page)
{
  g_return_val_if_fail (NL_IS_DATA_PAGE (page), NULL);
  return page->current;
}

gboolean
nl_data_page_save (NlDataPage *page, GError **error)
{
  g_autoptr (NlPipelineInfo) pl = NULL;
  g_autofree char *name = NULL, *problem = NULL;
  g_autoptr (NlPipelineInfo) other = NULL;

  g_return_val_if_fail (NL_IS_DATA_PAGE (page), FALSE);
  if (!page->ws || !page->current)
    {
      g_set_error (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_NOT_FOUND, _("no pipeline is shown"));
      return FALSE;
    }
  name = g_strstrip (g_strdup (gtk_editable_get_text (GTK_EDITABLE (page->name_row))));
  pl = nl_data_page_dup_pipeline (page);
  if (!*name)
    {
      g_set_error (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_INVALID, _("the pipeline needs a name"));
      return FALSE;
    }
  if ((problem = nl_transform_spec_problem (pl->transforms)))
    {
      g_set_error (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_INVALID, _("not saved: %s"), problem);
      return FALSE;
    }
  if (strcmp (name, page->current) != 0 && (other = nl_project_load_pipeline (project (page), name, NULL)))
    {
      g_set_error (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_EXISTS, _("a pipeline named “%s” already exists"),
                   name);
      return FALSE;
    }
  g_free (pl->name);
  pl->name = g_strdup (name);
  if (!nl_project_save_pipeline (project (page), pl, error))
    return FALSE;
  if (strcmp (name, page->current) != 0)  /* a rename: runs keep their own snapshots */
    {
      g_autoptr (GError) del = NULL;
      if (!nl_project_delete_pipeline (project (page), page->current, &del))
        nl_workspace_toast (page->ws, _("Saved as “%s”, but “%s” stays: %s"), name, page->current,
                            del->message);
      g_hash_table_remove (page->drafts, page->current);
    }
  g_hash_table_remove (page->drafts, name);
  g_free (page->current);
  page->current = g_steal_pointer (&name);
  g_free (page->loaded_extra);
  page->loaded_extra = g_strdup (pl->extra_json);
  page->dirty = FALSE;
  update_actions (page);
  nl_workspace_notify (page->ws, NL_WORKSPACE_PIPELINES);
  return TRUE;
}

/* ---- source and form edits ---- */

void
nl_data_page_set_source_file (NlDataPage *page, GFile *file)
{
  int k;
  g_return_if_fail (NL_IS_DATA_PAGE (page));
  g_return_if_fail (G_IS_FILE (file));
  _nl_data_page_selected_kind (page, &k);
  g_free (page->paths[k]);
  page->paths[k] = g_file_get_path (file);
  g_clear_pointer (&page->raw_spec, g_free);
  update_source_rows (page);
  _nl_data_page_set_dirty (page);
  /* the file may have changed since it was last read */
  page->reopen = TRUE;
  _nl_data_page_schedule_reload (page, TRUE);
}

static void
source_chosen (GtkWidget *page, const char *path, gpointer user)
{
  g_autoptr (GFile) file = g_file_new_for_path (path);
  nl_data_page_set_source_file (NL_DATA_PAGE (page), file);
}

static void
choose_source_action (GtkWidget *widget, const char *action, GVariant *param)
{
  NlDataPage *page = NL_DATA_PAGE (widget);
  g_assert (NL_IS_DATA_PAGE (widget));
  int k;
  const NlDatasetKind *kind = _nl_data_page_selected_kind (page, &k);
  g_autofree char *title = g_strdup_printf (_("Choose the %s"), _(kind->title));
  const char *path = page->paths[k] ? page->paths[k] : kind->default_path;
  GtkFileChooserAction mode = kind->path_is_folder ? GTK_FILE_CHOOSER_ACTION_SELECT_FOLDER
                                                   : GTK_FILE_CHOOSER_ACTION_OPEN;
  g_autoptr (GtkFileFilter) filter = NULL;

  if (page->chooser)
    nl_file_chooser_close (page->chooser);
  if (kind->filter_name)
    {
      filter = gtk_file_filter_new ();
      gtk_file_filter_set_name (filter, _(kind->filter_name));
      for (int i = 0; kind->filter_patterns[i]; i++)
        gtk_file_filter_add_pattern (filter, kind->filter_patterns[i]);
    }
  g_set_weak_pointer (&page->chooser,
                      nl_choose_file (widget, mode, title, _("_Choose"), path, filter, source_chosen, NULL, NULL));
}

static void
on_source_changed (NlDataPage *page)
{
  update_source_rows (page);
  if (page->filling)
    return;
  g_clear_pointer (&page->raw_spec, g_free);
  _nl_data_page_set_dirty (page);
  _nl_data_page_schedule_reload (page, FALSE);
}

/* split and label column: they change which samples there are */
static void
on_data_option_changed (NlDataPage *page)
{
  _nl_data_page_set_dirty (page);
  if (!page->filling)
    _nl_data_page_schedule_reload (page, FALSE);
}

/* ---- pipeline actions ---- */

static void
new_action (GtkWidget *widget, const char *action, GVariant *param)
{
  NlDataPage *page = NL_DATA_PAGE (widget);
  g_assert (NL_IS_DATA_PAGE (widget));
  g_autoptr (GError) error = NULL;
  g_autofree char *name = g_strdup ("pipeline");
  g_autofree char *extra = NULL;
  NlPipelineExtra x;
  /* a new pipeline reads the first kind from its default place */
  g_autofree char *spec = nl_dataset_kind_spec (&nl_dataset_kinds (NULL)[0], NULL);
  NlPipelineInfo pl = { .dataset_spec = spec, .split = 0.1, .batch_size = 128, .workers = 2 };

  for (int i = 2; has_pipeline (page, name); i++)
    {
      g_free (name);
      name = g_strdup_printf ("pipeline-%d", i);
    }
  nl_pipeline_extra_parse (NULL, &x, NULL);
  pl.name = name;
  pl.extra_json = extra = nl_pipeline_extra_to_json (&x, NULL);
  if (!nl_project_save_pipeline (project (page), &pl, &error))
    {
      nl_workspace_toast (page->ws, _("Cannot create a pipeline: %s"), error->message);
      return;
    }
  nl_workspace_notify (page->ws, NL_WORKSPACE_PIPELINES);
  nl_data_page_select_pipeline (page, name);  /* the shown one's edits become a draft */
}

static void
save_action (GtkWidget *widget, const char *action, GVariant *param)
{
  NlDataPage *page = NL_DATA_PAGE (widget);
  g_assert (NL_IS_DATA_PAGE (widget));
  g_autoptr (GError) error = NULL;
  if (!nl_data_page_save (page, &error))
    nl_workspace_toast (page->ws, _("Cannot save the pipeline: %s"), error->message);
  else
    nl_workspace_toast (page->ws, _("Saved pipeline “%s”"), page->current);
}

static void
delete_response (AdwMessageDialog *dialog, const char *response, NlDataPage *page)
{
  g_autoptr (GError) error = NULL;
  const char *name = g_object_get_data (G_OBJECT (dialog), "pipeline");
  if (strcmp (response, "delete") != 0 || !page->ws)
    return;
  if (!nl_project_delete_pipeline (project (page), name, &error))
    {
      nl_workspace_toast (page->ws, _("Cannot delete “%s”: %s"), name, error->message);
      return;
    }
  g_hash_table_remove (page->drafts, name);
  if (g_strcmp0 (name, page->current) == 0)
    {
      g_clear_pointer (&page->current, g_free);
      page->dirty = FALSE;
    }
  nl_workspace_notify (page->ws, NL_WORKSPACE_PIPELINES);
}

static void
delete_action (GtkWidget *widget, const char *action, GVariant *param)
{
  NlDataPage *page = NL_DATA_PAGE (widget);
  g_assert (NL_IS_DATA_PAGE (widget));
  GtkRoot *root = gtk_widget_get_root (widget);
  g_autofree char *heading = g_strdup_printf (_("Delete pipeline “%s”?"), page->current);
  GtkWidget *dlg = adw_message_dialog_new (GTK_IS_WINDOW (root) ? GTK_WINDOW (root) : NULL, heading,
                                           _("Runs that used it keep their own copy of its settings."));
  adw_message_dialog_add_responses (ADW_MESSAGE_DIALOG (dlg), "cancel", _("_Cancel"), "delete", _("_Delete"), NULL);
  adw_message_dialog_set_response_appearance (ADW_MESSAGE_DIALOG (dlg), "delete", ADW_RESPONSE_DESTRUCTIVE);
  g_object_set_data_full (G_OBJECT (dlg), "pipeline", g_strdup (page->current), g_free);
  g_signal_connect_object (dlg, "response", G_CALLBACK (delete_response), page, 0);
  gtk_window_present (GTK_WINDOW (dlg));
}

static void
shuffle_preview_action (GtkWidget *widget, const char *action, GVariant *param)
{
  NlDataPage *page = NL_DATA_PAGE (widget);
  g_assert (NL_IS_DATA_PAGE (widget));
  page->seed++;
  _nl_data_page_schedule_reload (page, TRUE);
}

/* ---- workspace ---- */

static void
on_workspace_changed (NlWorkspace *ws, guint what, NlDataPage *page)
{
  if (what & NL_WORKSPACE_PIPELINES)
    reload_pipelines (page);
}

void
nl_data_page_set_workspace (NlDataPage *page, NlWorkspace *ws)
{
  g_return_if_fail (NL_IS_DATA_PAGE (page));
  g_return_if_fail (ws == NULL || NL_IS_WORKSPACE (ws));
  if (page->ws == ws)
    return;
  if (page->ws)
    g_signal_handlers_disconnect_by_data (page->ws, page);
  _nl_data_page_stop_loading (page);
  g_set_object (&page->ws, ws);
  g_hash_table_remove_all (page->drafts);
  g_clear_pointer (&page->requested_key, g_free);
  clear_form (page);
  _nl_data_page_clear_preview (page);
  page->seed = 0;
  if (ws)
    g_signal_connect_object (ws, "changed", G_CALLBACK (on_workspace_changed), page, 0);
  reload_pipelines (page);
  update_actions (page);
}

/* ---- GObject ---- */

static void
nl_data_page_dispose (GObject *object)
{
  NlDataPage *page = NL_DATA_PAGE (object);
  if (page->ws)
    nl_data_page_set_workspace (page, NULL);
  _nl_data_page_stop_loading (page);
  if (page->chooser)
    nl_file_chooser_close (page->chooser);
  g_clear_weak_pointer (&page->chooser);
  g_clear_pointer (&page->preview, nl_data_preview_unref);
  gtk_widget_dispose_template (GTK_WIDGET (page), NL_TYPE_DATA_PAGE);
  G_OBJECT_CLASS (nl_data_page_parent_class)->dispose (object);
}

static void
nl_data_page_finalize (GObject *object)
{
  NlDataPage *page = NL_DATA_PAGE (object);
  g_free (page->current);
  g_free (page->loaded_extra);
  g_free (page->raw_spec);
  g_free (page->raw_transforms);
  g_free (page->requested_key);
  g_free (page->error);
  g_strfreev (page->paths);
  g_ptr_array_unref (page->steps);
  g_hash_table_unref (page->drafts);
  g_clear_object (&page->pipeline_names);
  G_OBJECT_CLASS (nl_data_page_parent_class)->finalize (object);
}

static void
nl_data_page_class_init (NlDataPageClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = nl_data_page_dispose;
  object_class->finalize = nl_data_page_finalize;

  g_type_ensure (NL_TYPE_CLASS_HISTOGRAM);
  gtk_widget_class_set_template_from_resource (widget_class, "/io/github/netloom/Netloom/ui/nl-data-page.ui");
#define BIND(name) gtk_widget_class_bind_template_child (widget_class, NlDataPage, name)
  BIND (pipeline_row);
  BIND (source_row);
  BIND (name_row);
  BIND (label_column_row);
  BIND (path_row);
  BIND (split_row);
  BIND (split_spin);
  BIND (batch_spin);
  BIND (workers_spin);
  BIND (shuffle_switch);
  BIND (form_box);
  BIND (source_group);
  BIND (batch_group);
  BIND (transform_group);
  BIND (save_button);
  BIND (error_box);
  BIND (details_box);
  BIND (histogram_group);
  BIND (add_transform_button);
  BIND (transform_list);
  BIND (spinner);
  BIND (preview_info);
  BIND (error_label);
  BIND (hint_label);
  BIND (samples_label);
  BIND (shape_label);
  BIND (out_shape_label);
  BIND (classes_label);
  BIND (preview_grid);
  BIND (summary_group);
  BIND (histogram);
  BIND (text_group);
  BIND (series_group);
  BIND (sequence_box);
  BIND (text_column_row);
  BIND (target_row);
  BIND (tokenizer_row);
  BIND (vocab_size_spin);
  BIND (min_count_spin);
  BIND (max_length_spin);
  BIND (window_spin);
  BIND (horizon_spin);
#undef BIND

  gtk_widget_class_install_action (widget_class, "data.new", NULL, new_action);
  gtk_widget_class_install_action (widget_class, "data.save", NULL, save_action);
  gtk_widget_class_install_action (widget_class, "data.delete", NULL, delete_action);
  gtk_widget_class_install_action (widget_class, "data.choose-source", NULL, choose_source_action);
  gtk_widget_class_install_action (widget_class, "data.shuffle-preview", NULL, shuffle_preview_action);
  _nl_data_page_install_transform_actions (widget_class);
}

static void
nl_data_page_init (NlDataPage *page)
{
  int n;
  const NlDatasetKind *kinds = nl_dataset_kinds (&n);
  const NlTransformSpecInfo *transforms = nl_data_transforms (&n);
  g_autoptr (GtkStringList) sources = gtk_string_list_new (NULL);
  g_autoptr (GMenu) menu = g_menu_new ();

  gtk_widget_init_template (GTK_WIDGET (page));
  page->paths = g_new0 (char *, n_kinds () + 1);
  page->steps = g_ptr_array_new_with_free_func ((GDestroyNotify) nl_transform_step_free);
  page->drafts = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, (GDestroyNotify) nl_pipeline_info_free);
  page->expand_step = -1;

  page->filling++;
  page->pipeline_names = gtk_string_list_new (NULL);
  adw_combo_row_set_model (page->pipeline_row, G_LIST_MODEL (page->pipeline_names));
  for (int i = 0; i < n_kinds (); i++)
    gtk_string_list_append (sources, _(kinds[i].title));
  adw_combo_row_set_model (page->source_row, G_LIST_MODEL (sources));
  page->filling--;
  for (int i = 0; i < n; i++)
    {
      g_autofree char *detailed = g_strdup_printf ("data.add-transform::%s", transforms[i].name);
      g_menu_append (menu, _(transforms[i].title), detailed);
    }
  gtk_menu_button_set_menu_model (page->add_transform_button, G_MENU_MODEL (menu));

  /* the loader's limit, as the run settings take it */
  gtk_adjustment_set_upper (gtk_spin_button_get_adjustment (page->workers_spin),
                            nl_run_config_find_field ("workers")->max);
  g_signal_connect_swapped (page->pipeline_row, "notify::selected", G_CALLBACK (on_pipeline_selected), page);
  g_signal_connect_swapped (page->source_row, "notify::selected", G_CALLBACK (on_source_changed), page);
  g_signal_connect_swapped (page->split_spin, "value-changed", G_CALLBACK (on_data_option_changed), page);
  g_signal_connect_swapped (page->label_column_row, "changed", G_CALLBACK (on_data_option_changed), page);
  g_signal_connect_swapped (page->batch_spin, "value-changed", G_CALLBACK (_nl_data_page_set_dirty), page);
  g_signal_connect_swapped (page->workers_spin, "value-changed", G_CALLBACK (_nl_data_page_set_dirty), page);
  g_signal_connect_swapped (page->shuffle_switch, "notify::active", G_CALLBACK (_nl_data_page_set_dirty), page);
  g_signal_connect_swapped (page->name_row, "changed", G_CALLBACK (_nl_data_page_set_dirty), page);
  _nl_data_page_sequence_init (page);
  update_source_rows (page);
  _nl_data_page_clear_preview (page);
  update_actions (page);
}
