/* nl-training-dashboard-follow.c — the dashboard reads the project: the
 * newest run another process is training (the whole run: plots, counters,
 * status), and, while the page trains its own run, that run's points no
 * session event carries (layer statistics, profile times, system metrics).
 * Both read on a worker thread after the last rowid seen, whenever the
 * page says the project's metrics changed. */
#include "ui/training/nl-training-dashboard-private.h"
#include <glib/gi18n.h>
#include <inttypes.h>
#include "core/nl-json-doc.h"
#include "engine/session/nl-run.h"

typedef struct {
  NlWorkspace *ws;
  gint64 run, after;      /* in: what is shown already */
  gint64 pin;             /* in: the run to show when none is active */
  gint64 target, last;    /* out: the run to show and its last rowid */
  gboolean reset;         /* out: another run than before: start afresh */
  gboolean own;           /* in: the page's own run's extra points only */
  NlRunInfo *info;
  GArray *rows;
} Follow;

static void
follow_free (Follow *f)
{
  g_clear_object (&f->ws);
  g_clear_pointer (&f->info, nl_run_info_free);
  g_clear_pointer (&f->rows, g_array_unref);
  g_free (f);
}

static gboolean
is_active (const char *status)
{
  return !g_strcmp0 (status, "running") || !g_strcmp0 (status, "paused");
}

static void
follow_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  Follow *f = task_data;
  NlProject *p = nl_workspace_get_project (f->ws);
  g_autoptr (GPtrArray) runs = NULL;
  GError *error = NULL;

  if (f->own)
    {
      /* the first read also takes the network, for the order of its layers */
      if ((f->after == 0 && !(f->info = nl_project_get_run (p, f->run, &error)))
          || !(f->rows = nl_project_get_metrics (p, f->run, NULL, f->after, &f->last, &error)))
        g_task_return_error (task, error);
      else
        g_task_return_boolean (task, TRUE);
      return;
    }
  if (!(runs = nl_project_list_runs (p, &error)))
    {
      g_task_return_error (task, error);
      return;
    }
  for (guint i = runs->len; i-- > 0 && !f->target;)
    {
      const NlRunInfo *r = g_ptr_array_index (runs, i);
      if (is_active (r->status))
        f->target = r->id;
    }
  if (!f->target)
    f->target = f->pin ? f->pin : f->run;  /* the followed run ended: its last points and status */
  if (f->target)
    {
      f->reset = f->target != f->run;
      if (!(f->info = nl_project_get_run (p, f->target, &error))
          || !(f->rows = nl_project_get_metrics (p, f->target, NULL, f->reset ? 0 : f->after, &f->last, &error)))
        {
          g_task_return_error (task, error);
          return;
        }
    }
  g_task_return_boolean (task, TRUE);
}

static gboolean
may_follow (NlTrainingDashboard *self)
{
  return self->ws && !self->follow_blocked && gtk_toggle_button_get_active (self->follow_button);
}

/* The Layers view lists the network's nodes in its order. */
static void
set_node_order (NlTrainingDashboard *self, const char *network_json)
{
  g_autoptr (NlJsonDoc) doc = network_json ? nl_json_doc_parse (network_json, -1, NULL) : NULL;
  const NlJsonValue *nodes = doc ? nl_json_member (nl_json_doc_root (doc), "nodes") : NULL;
  g_autoptr (GPtrArray) ids = g_ptr_array_new ();
  if (nodes && nodes->type == NL_JSON_ARRAY)
    for (const NlJsonValue *n = nl_json_first (nodes); n; n = nl_json_next (nodes, n))
      {
        const NlJsonValue *id = n->type == NL_JSON_OBJECT ? nl_json_member (n, "id") : NULL;
        if (id && id->type == NL_JSON_STRING)
          g_ptr_array_add (ids, (gpointer) id->s);
      }
  g_ptr_array_add (ids, NULL);
  nl_layers_panel_set_node_order (self->layers, (const char *const *) ids->pdata);
}

/* The page's own run: the points its events do not carry. */
static void
own_done (NlTrainingDashboard *self, Follow *f, GTask *task)
{
  g_autoptr (GError) error = NULL;
  gboolean any = FALSE;
  if (!g_task_propagate_boolean (task, &error) || f->ws != self->ws || f->run != self->own_run)
    {
      if (error && !g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED) && f->ws == self->ws)
        g_warning ("follow: %s", error->message);
      return;
    }
  if (f->info)
    set_node_order (self, f->info->network_json);
  self->own_rowid = f->last;
  for (guint i = 0; i < f->rows->len; i++)
    any |= _nl_training_dashboard_add_extra (self, &g_array_index (f->rows, NlMetricRow, i));
  if (any)
    nl_layers_panel_refresh (self->layers);
}

static void
follow_done (GObject *source, GAsyncResult *res, gpointer data)
{
  NlTrainingDashboard *self = NL_TRAINING_DASHBOARD (source);
  Follow *f = g_task_get_task_data (G_TASK (res));
  g_autoptr (GError) error = NULL;
  g_autofree char *status = NULL, *epochs = NULL;

  self->follow_busy = FALSE;
  if (!self->pending)
    return;  /* disposed meanwhile */
  if (f->own)
    {
      own_done (self, f, G_TASK (res));
      goto again;
    }
  if (!g_task_propagate_boolean (G_TASK (res), &error) || f->ws != self->ws || !may_follow (self) || !f->target)
    {
      if (error && !g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED) && f->ws == self->ws)
        g_warning ("follow: %s", error->message);
      goto again;
    }
  if (f->reset)
    {
      g_auto (NlRunConfig) rc = { 0 };
      g_autofree char *title = g_strdup_printf ("%s (run %" G_GINT64_FORMAT ")", f->info->name, f->info->id);
      nl_run_config_init (&rc);
      if (!nl_run_config_from_json (&rc, f->info->hparams_json, NULL))
        {
          nl_run_config_clear (&rc);
          nl_run_config_init (&rc);
        }
      nl_training_dashboard_reset (self, title, rc.epochs, rc.batch_size, rc.optim.lr,
                                        rc.lr_schedule);
      self->follow_run = f->target;
      nl_layers_panel_set_run (self->layers, self->ws, f->target);
      set_node_order (self, f->info->network_json);
      nl_training_dashboard_log (self, "STATUS", _("following a run of another process"));
    }
  if (self->follow_pin == f->target)
    self->follow_pin = 0;
  self->follow_rowid = f->last;
  for (guint i = 0; i < f->rows->len; i++)
    nl_training_dashboard_add_row (self, &g_array_index (f->rows, NlMetricRow, i));
  if (f->rows->len)
    nl_layers_panel_refresh (self->layers);  /* new histograms come with new points */
  epochs = g_strdup_printf ("%d / %d", f->info->epochs_done, self->run_epochs);
  gtk_label_set_label (self->epoch_label, epochs);
  _nl_training_dashboard_set_progress (self, (double) f->info->epochs_done / MAX (self->run_epochs, 1));
  status = g_strdup_printf (_("Run %" PRId64 " · %s · %s (process %" PRId64 " on %s)"), f->info->id,
                            f->info->network_name ? f->info->network_name : "?", f->info->status, f->info->pid,
                            f->info->host ? f->info->host : "?");
  nl_training_dashboard_set_status (self, status);
  if (!is_active (f->info->status))
    {
      gtk_label_set_label (self->eta_label, "–");
      if (!f->reset && f->rows->len == 0)
        goto again;
      {
        g_autofree char *line = g_strdup_printf ("run %" G_GINT64_FORMAT " %s%s%s", f->info->id, f->info->status,
                                                 f->info->error ? ": " : "", f->info->error ? f->info->error : "");
        nl_training_dashboard_log (self, "STATUS", line);
      }
    }
again:
  if (self->follow_again)
    nl_training_dashboard_follow_poll (self);
}

void
nl_training_dashboard_follow_poll (NlTrainingDashboard *self)
{
  g_autoptr (GTask) task = NULL;
  Follow *f;
  gboolean own;

  self->follow_again = FALSE;
  own = !may_follow (self) && self->ws && self->follow_blocked && self->own_run > 0;
  if (!may_follow (self) && !own)
    return;
  if (self->follow_busy)
    {
      self->follow_again = TRUE;
      return;
    }
  self->follow_busy = TRUE;
  f = g_new0 (Follow, 1);
  f->ws = g_object_ref (self->ws);
  f->own = own;
  f->run = own ? self->own_run : self->follow_run;
  f->pin = self->follow_pin;
  f->after = own ? self->own_rowid : self->follow_rowid;
  if (!self->follow_cancel)
    self->follow_cancel = g_cancellable_new ();
  task = g_task_new (self, self->follow_cancel, follow_done, NULL);
  g_task_set_task_data (task, f, (GDestroyNotify) follow_free);
  g_task_run_in_thread (task, follow_thread);
}

gboolean
nl_training_dashboard_is_reading (NlTrainingDashboard *self)
{
  g_return_val_if_fail (NL_IS_TRAINING_DASHBOARD (self), FALSE);
  return self->follow_busy || self->follow_again;
}
