/* nl-training-page-settings.c — the Training page's form as run settings:
 * the start request (a new run, or a fork's overrides: the settings the form
 * changed), the pipeline's part (in the worker thread), and a stored run's
 * settings back into the form. */
#include "ui/training/nl-training-page-private.h"
#include <glib/gi18n.h>
#include <inttypes.h>
#include "core/nl-device.h"
#include "engine/session/nl-data-preview.h"
#include "engine/session/nl-run.h"

#include <json-glib/json-glib.h>
#include <math.h>
#include <string.h>


/* ---- form -> settings ---- */

/* The optimizer's fields that apply to its kind (the others keep the
 * kind's defaults, so a run's stored settings never show a momentum Adam
 * did not use), the schedule, epochs, seed and threads. */
static void
form_to_config (NlTrainingPage *page, NlRunConfig *rc)
{
  NlRunConfig *c = rc;
  g_autofree char *spec = nl_schedule_group_get_spec (page->schedule);

  nl_optimizer_group_get (page->optimizer, &c->optim);
  /* a constant rate is stored as no schedule, as the CLI stores it */
  nl_run_config_set_text (&c->lr_schedule, strcmp (spec, "constant") ? spec : NULL);
  nl_training_group_get (page->training, c);
}

/* The fork's overrides: the form's settings that differ from the parent's. */
static char *
fork_overrides (NlTrainingPage *page, GError **error)
{
  static const char *const keys[] = { "optimizer", "lr", "momentum", "nesterov", "wd", "beta1", "beta2", "epsilon",
                                      "rho", "centered", "clip_global_norm", "lr_schedule", "epochs", "seed",
                                      "threads", "precision", NULL };
  g_auto (NlRunConfig) parent = { 0 };
  g_auto (NlRunConfig) rc = { 0 };

  nl_run_config_init (&parent);
  if (!nl_run_config_from_json (&parent, page->fork_parent_json, error))
    return NULL;
  nl_run_config_copy (&rc, &parent);
  form_to_config (page, &rc);
  return nl_run_config_overrides_json (&parent, &rc, keys);
}

void
_start_request_free (StartRequest *r)
{
  if (!r)
    return;
  g_clear_object (&r->ws);
  g_free (r->network);
  g_free (r->pipeline);
  nl_run_config_clear (&r->rc);
  g_free (r->name);
  g_free (r->title);
  g_free (r->overrides);
  g_clear_pointer (&r->session, nl_session_free);
  g_free (r->lr_schedule);
  g_clear_pointer (&r->history, g_array_unref);
  g_free (r);
}

/* The checkpoint and early-stopping options of the form. */
static void
form_options (NlTrainingPage *page, NlRunConfig *rc)
{
  nl_checkpoint_group_get (page->checkpoint, rc);
  nl_early_stop_group_get (page->early_stop, rc);
}

gboolean
_nl_training_page_form_ready (NlTrainingPage *page, const char **why)
{
  const char *reason = NULL;
  if (!page->ws)
    reason = _("No project is open");
  else if (nl_project_is_read_only (nl_workspace_get_project (page->ws)))
    reason = _("The project is read-only");
  else if (page->lists_loading > 0 || page->prefill_loading > 0)
    reason = _("Reading the project…");
  else if (nl_training_group_is_loading (page->training))
    reason = _("Looking for GPUs…");
  else if (!page->fork_run && !_nl_training_page_form_selected (page->network_row))
    reason = _("The project has no network");
  else if (!page->fork_run && !_nl_training_page_form_pipeline (page))
    reason = _("The project has no pipeline");
  else if (page->fork_run && nl_training_group_get_processes (page->training) > 1)
    reason = _("A fork trains in this process: set Processes to 1");
  else if (nl_schedule_group_get_error (page->schedule))
    reason = _("The learning-rate schedule is invalid");
  if (why)
    *why = reason;
  return reason == NULL;
}

StartRequest *
_nl_training_page_form_request (NlTrainingPage *page, GError **error)
{
  StartRequest *r;
  const char *why = NULL;
  g_autofree char *name = NULL;

  if (nl_schedule_group_get_error (page->schedule))
    {
      g_set_error (error, NL_TRAIN_ERROR, NL_TRAIN_ERROR_CONFIG, _("learning-rate schedule: %s"),
                   nl_schedule_group_get_error (page->schedule));
      return NULL;
    }
  if (!_nl_training_page_form_ready (page, &why))
    {
      g_set_error (error, NL_TRAIN_ERROR, NL_TRAIN_ERROR_CONFIG, "%s", why);
      return NULL;
    }
  r = g_new0 (StartRequest, 1);
  nl_run_config_init (&r->rc);
  r->ws = g_object_ref (page->ws);
  name = g_strstrip (g_strdup (gtk_editable_get_text (GTK_EDITABLE (page->name_row))));
  r->name = *name ? g_steal_pointer (&name) : NULL;
  form_options (page, &r->rc);
  form_to_config (page, &r->rc);
  r->epochs = r->rc.epochs;
  r->lr = r->rc.optim.lr;
  r->lr_schedule = g_strdup (r->rc.lr_schedule);
  if (page->fork_run)
    {
      g_auto (NlRunConfig) parent = { 0 };
      r->kind = START_FORK;
      r->run = page->fork_run;
      nl_run_config_init (&parent);
      if (!nl_run_config_from_json (&parent, page->fork_parent_json, error)
          || !(r->overrides = fork_overrides (page, error)))
        {
          _start_request_free (r);
          return NULL;
        }
      r->batch_size = parent.batch_size;
      r->title = g_strdup_printf (_("%s (fork of run %" PRId64 ")"), r->name ? r->name : _("New run"), r->run);
    }
  else
    {
      r->kind = START_TRAIN;
      r->network = g_strdup (_nl_training_page_form_selected (page->network_row));
      r->pipeline = g_strdup (_nl_training_page_form_pipeline (page)->name);
      r->batch_size = _nl_training_page_form_pipeline (page)->batch_size;
      r->title = r->name ? g_strdup (r->name) : g_strdup_printf (_("%s on %s"), r->network, r->pipeline);
    }
  return r;
}

StartRequest *
_nl_training_page_form_resume_request (NlTrainingPage *page, gint64 run)
{
  StartRequest *r = g_new0 (StartRequest, 1);
  nl_run_config_init (&r->rc);
  r->kind = START_RESUME;
  r->ws = g_object_ref (page->ws);
  r->run = run;
  r->title = g_strdup_printf (_("Run %" PRId64 " (resumed)"), run);
  form_options (page, &r->rc);
  return r;
}

/* ---- stored run -> form (fork) ---- */

static void
prefill_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  NlProject *p = nl_workspace_get_project (task_data);
  GError *error = NULL;
  NlRunInfo *info = nl_project_get_run (p, GPOINTER_TO_SIZE (g_object_get_data (G_OBJECT (task), "nl-run")), &error);
  if (info)
    g_task_return_pointer (task, info, (GDestroyNotify) nl_run_info_free);
  else
    g_task_return_error (task, error);
}

static void
select_string (AdwComboRow *row, GtkStringList *list, const char *s)
{
  guint pos = _nl_training_page_form_find (list, s);
  if (pos != GTK_INVALID_LIST_POSITION)
    adw_combo_row_set_selected (row, pos);
}

/* The form shows rc's settings. */
static void
fill_from_config (NlTrainingPage *page, const NlRunConfig *c)
{
  page->filling = TRUE;
  nl_optimizer_group_set (page->optimizer, &c->optim);
  nl_schedule_group_set_spec (page->schedule, c->lr_schedule);
  nl_training_group_set (page->training, c);
  page->filling = FALSE;
}

static void
prefill_done (GObject *source, GAsyncResult *res, gpointer data)
{
  NlTrainingPage *page = NL_TRAINING_PAGE (source);
  NlWorkspace *ws = g_task_get_task_data (G_TASK (res));
  g_autoptr (GError) error = NULL;
  g_autoptr (NlRunInfo) info = g_task_propagate_pointer (G_TASK (res), &error);
  g_auto (NlRunConfig) rc = { 0 };
  g_autofree char *parent_json = NULL;

  nl_workspace_busy_pop (ws);
  if (ws != page->ws)
    return;
  page->prefill_loading--;
  nl_run_config_init (&rc);
  if (!info || !nl_run_config_from_json (&rc, info->hparams_json, &error))
    {
      g_autofree char *msg = g_strdup_printf (_("Could not read run %" PRId64 "'s settings: %s"),
                                              GPOINTER_TO_SIZE (g_object_get_data (G_OBJECT (res), "nl-run")),
                                              error->message);
      _nl_training_page_show_error (page, msg);
      _nl_training_page_update_actions (page);
      return;
    }
  fill_from_config (page, &rc);
  page->filling = TRUE;
  select_string (page->network_row, page->networks, info->network_name);
  /* shown, not chosen: a fork trains on its parent's device */
  nl_training_group_select_device (page->training, info->device ? info->device : "cpu");
  {
    g_autoptr (NlPipelineInfo) pl = nl_pipeline_info_from_json (info->pipeline_json, NULL);
    /* runs snapshot their pipeline's contents, not its name: find a match */
    for (guint i = 0; pl && page->pipeline_infos && i < page->pipeline_infos->len; i++)
      {
        const NlPipelineInfo *q = g_ptr_array_index (page->pipeline_infos, i);
        if (!g_strcmp0 (q->dataset_spec, pl->dataset_spec) && q->batch_size == pl->batch_size)
          {
            adw_combo_row_set_selected (page->pipeline_row, i);
            break;
          }
      }
  }
  page->filling = FALSE;
  parent_json = nl_run_config_to_json (&rc);
  _nl_training_page_form_set_fork (page, info->id, parent_json);
  {
    g_autofree char *sub = g_strdup_printf (_("From its best checkpoint, with %s on %s; settings changed here "
                                              "override the run's"),
                                            info->network_name ? info->network_name : _("its network"), rc.dataset);
    g_autofree char *title = g_strdup_printf (_("Fork of “%s” (run %" PRId64 ")"), info->name, info->id);
    adw_preferences_row_set_title (ADW_PREFERENCES_ROW (page->fork_row), title);
    adw_action_row_set_subtitle (page->fork_row, sub);
  }
  _nl_training_page_form_update_subtitle (page);
  _nl_training_page_form_changed (page);
}

void
_nl_training_page_form_prefill (NlTrainingPage *page, gint64 run)
{
  g_autoptr (GTask) task = NULL;
  if (!page->ws)
    return;
  page->prefill_loading++;
  task = g_task_new (page, page->form_cancel, prefill_done, NULL);
  g_task_set_task_data (task, g_object_ref (page->ws), g_object_unref);
  g_object_set_data (G_OBJECT (task), "nl-run", GSIZE_TO_POINTER ((gsize) run));
  nl_workspace_busy_push (page->ws);
  g_task_run_in_thread (task, prefill_thread);
  _nl_training_page_update_actions (page);
}

/* run 0 leaves fork mode: Start trains a new run again. */
void
_nl_training_page_form_set_fork (NlTrainingPage *page, gint64 run, const char *parent_json)
{
  page->fork_run = run;
  g_free (page->fork_parent_json);
  page->fork_parent_json = run ? g_strdup (parent_json) : NULL;
  gtk_widget_set_visible (GTK_WIDGET (page->fork_row), run != 0);
  _nl_training_page_form_set_sensitive (page, page->state != NL_TRAINING_STARTING && page->state != NL_TRAINING_RUNNING
                                               && page->state != NL_TRAINING_PAUSED);
  _nl_training_page_form_update_subtitle (page);
  _nl_training_page_update_actions (page);
}
