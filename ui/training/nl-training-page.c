/* nl-training-page.c — the Training page: its actions and the life of the
 * run it starts. The session trains on its own thread; its events are
 * drained on the main loop when it wakes it (nl_session_set_wakeup), so the
 * GUI never waits for training. The form lives in
 * nl-training-page-form.c and -settings.c, the dashboard is its own widget
 * (nl-training-dashboard.c). */
#include "ui/training/nl-training-page-private.h"
#include <glib/gi18n.h>
#include <inttypes.h>
#include "ui/training/nl-sweep-dialog.h"

#include <string.h>

G_DEFINE_FINAL_TYPE (NlTrainingPage, nl_training_page, ADW_TYPE_BIN)

#define METRICS_NOTIFY_US G_USEC_PER_SEC

/* A run of the page's is being prepared or going: in this process, or as
 * a job of processes under mpirun. */
static gboolean
session_active (NlTrainingPage *page)
{
  return page->session != NULL || page->job != NULL || page->state == NL_TRAINING_STARTING;
}

/* The one place that decides what can be done now. */
void
_nl_training_page_update_actions (NlTrainingPage *page)
{
  GtkWidget *w = GTK_WIDGET (page);
  gboolean going = page->session != NULL || page->job != NULL;
  const char *why = NULL;
  gboolean ready = !session_active (page) && _nl_training_page_form_ready (page, &why);

  gtk_widget_action_set_enabled (w, "training.start", ready);
  gtk_widget_action_set_enabled (w, "training.sweep", ready && page->fork_run == 0);
  gtk_widget_action_set_enabled (w, "training.pause", going && page->state == NL_TRAINING_RUNNING
                                                        && !page->stop_requested);
  gtk_widget_action_set_enabled (w, "training.resume", going && page->state == NL_TRAINING_PAUSED
                                                         && !page->stop_requested);
  gtk_widget_action_set_enabled (w, "training.stop", going && !page->stop_requested);
  gtk_widget_action_set_enabled (w, "training.cancel-fork", page->fork_run != 0 && !session_active (page));
  _nl_training_page_form_set_sensitive (page, !session_active (page));
  /* a job's run is followed in the project like any other process's */
  nl_training_dashboard_set_follow_blocked (page->dashboard, session_active (page) && !page->job);
  nl_layers_panel_set_can_profile (nl_training_dashboard_get_layers_panel (page->dashboard),
                                   page->session && page->state == NL_TRAINING_RUNNING && !page->stop_requested);
  if (page->state == NL_TRAINING_IDLE && !nl_training_dashboard_get_followed_run (page->dashboard) && page->ws)
    nl_training_dashboard_set_status (page->dashboard, why ? why : _("Ready to start"));
}

void
_nl_training_page_show_error (NlTrainingPage *page, const char *message)
{
  g_free (page->error);
  page->error = g_strdup (message);
  gtk_label_set_label (page->error_label, message);
  gtk_revealer_set_reveal_child (page->error_revealer, TRUE);
}

static void
hide_error (NlTrainingPage *page)
{
  g_clear_pointer (&page->error, g_free);
  gtk_revealer_set_reveal_child (page->error_revealer, FALSE);
}

static void
set_status (NlTrainingPage *page, const char *what)
{
  g_autofree char *text = page->run > 0 ? g_strdup_printf (_("Run %" PRId64 " · %s"), page->run, what)
                                        : g_strdup (what);
  nl_training_dashboard_set_status (page->dashboard, text);
}

/* ---- a session left behind by a project switch: stopped, drained, freed ---- */

typedef struct {
  NlSession *session;
  NlWorkspace *ws;
  gboolean done;
} Orphan;

static void
orphan_event (NlSession *s, const NlSessionEvent *e, gpointer data)
{
  if (e->kind == NL_SESSION_EVENT_FINISHED)
    ((Orphan *) data)->done = TRUE;
}

/* Stopped sessions whose worker has not ended yet: the process must not
 * exit under them (nl_training_page_end_abandoned). Main thread only. */
static GList *orphans;

static void
orphan_free (Orphan *o)
{
  orphans = g_list_remove (orphans, o);
  nl_session_free (o->session);  /* stop was asked: one batch at most */
  nl_workspace_notify (o->ws, NL_WORKSPACE_RUNS | NL_WORKSPACE_METRICS);
  g_object_unref (o->ws);
  g_free (o);
}

static gboolean
orphan_wake (gpointer data)
{
  Orphan *o = data;
  nl_session_drain (o->session, orphan_event, o);
  if (o->done)
    orphan_free (o);
  return G_SOURCE_REMOVE;
}

void
nl_training_page_end_abandoned (void)
{
  while (orphans)
    {
      Orphan *o = orphans->data;
      nl_session_set_wakeup (o->session, NULL, NULL, NULL);
      orphan_free (o);
    }
}

static void
abandon_session (NlTrainingPage *page)
{
  Orphan *o;
  if (!page->session)
    return;
  o = g_new0 (Orphan, 1);
  o->session = g_steal_pointer (&page->session);
  o->ws = g_steal_pointer (&page->session_ws);
  orphans = g_list_prepend (orphans, o);
  nl_session_stop (o->session);
  if (page->session_done)
    {
      o->done = TRUE;
      orphan_wake (o);
    }
  else
    nl_session_set_wakeup (o->session, NULL, orphan_wake, o);
  page->session_done = FALSE;
}

/* ---- the session's events ---- */

static void
notify (NlTrainingPage *page, NlWorkspaceChange what)
{
  if (page->session_ws)
    nl_workspace_notify (page->session_ws, what);
  if (what & NL_WORKSPACE_METRICS)
    page->last_metrics_notify = g_get_monotonic_time ();
}

static void
on_event (NlSession *s, const NlSessionEvent *e, gpointer data)
{
  NlTrainingPage *page = data;

  nl_training_dashboard_event (page->dashboard, e);
  switch (e->kind)
    {
    case NL_SESSION_EVENT_STARTED:
      {
        g_autofree char *line = g_strdup_printf ("run %" G_GINT64_FORMAT " started", e->run);
        page->run = e->run;
        nl_training_dashboard_log (page->dashboard, "STATUS", line);
        set_status (page, page->state == NL_TRAINING_PAUSED ? "pausing…" : "running");
        notify (page, NL_WORKSPACE_RUNS);
        break;
      }
    case NL_SESSION_EVENT_BATCH:
    case NL_SESSION_EVENT_EPOCH:
    case NL_SESSION_EVENT_CHECKPOINT:
      /* other pages poll the store: at most once a second */
      if (g_get_monotonic_time () - page->last_metrics_notify >= METRICS_NOTIFY_US)
        notify (page, NL_WORKSPACE_METRICS);
      break;
    case NL_SESSION_EVENT_STATUS:
      nl_training_dashboard_log (page->dashboard, "STATUS", e->status);
      if (!page->stop_requested)
        {
          page->state = !g_strcmp0 (e->status, "paused") ? NL_TRAINING_PAUSED : NL_TRAINING_RUNNING;
          set_status (page, e->status);
        }
      notify (page, NL_WORKSPACE_RUNS | NL_WORKSPACE_METRICS);
      break;
    case NL_SESSION_EVENT_ERROR:
      _nl_training_page_show_error (page, e->message);
      break;
    case NL_SESSION_EVENT_FINISHED:
      {
        /* an error's message was logged with it already */
        gboolean said = e->message && !g_strcmp0 (e->message, page->error);
        g_autofree char *line = e->message && !said ? g_strdup_printf ("%s: %s", e->status, e->message)
                                                    : g_strdup (e->status);
        if (e->run > 0)
          page->run = e->run;
        page->state = !g_strcmp0 (e->status, "finished") ? NL_TRAINING_FINISHED
                      : !g_strcmp0 (e->status, "stopped") ? NL_TRAINING_STOPPED : NL_TRAINING_FAILED;
        if (page->state == NL_TRAINING_FAILED && !page->error && e->message)
          _nl_training_page_show_error (page, e->message);
        nl_training_dashboard_log (page->dashboard, page->state == NL_TRAINING_FAILED ? "ERROR" : "STATUS", line);
        set_status (page, line);
        page->session_done = TRUE;
        notify (page, NL_WORKSPACE_RUNS | NL_WORKSPACE_METRICS);
        break;
      }
    case NL_SESSION_EVENT_LOG:
      break;
    }
}

static gboolean
session_wake (gpointer data)
{
  NlTrainingPage *page = data;
  NlTrainingState before = page->state;
  if (!page->session)
    return G_SOURCE_REMOVE;
  nl_session_drain (page->session, on_event, page);
  if (!page->session_done && page->state == before)
    return G_SOURCE_REMOVE;  /* only points: nothing to enable or disable */
  if (page->session_done)
    {
      /* FINISHED is the worker's last act: freeing joins a thread that has ended */
      g_clear_pointer (&page->session, nl_session_free);
      g_clear_object (&page->session_ws);
      page->session_done = FALSE;
      page->stop_requested = FALSE;
    }
  _nl_training_page_update_actions (page);
  return G_SOURCE_REMOVE;
}

/* ---- starting: the session is made in a worker thread (its constructors
 * read the project), then started here ---- */

static gboolean
prepare (StartRequest *r, GError **error)
{
  NlProject *p = nl_workspace_get_project (r->ws);

  switch (r->kind)
    {
    case START_TRAIN:
      {
        g_autoptr (NlPipelineInfo) pl = nl_project_load_pipeline (p, r->pipeline, error);
        g_autofree char *json = NULL;
        g_autoptr (NlNetwork) net = NULL;
        if (!pl || !nl_run_config_apply_pipeline (&r->rc, pl, error))
          return FALSE;
        if (!(json = nl_project_load_network (p, r->network, 0, error)))
          return FALSE;
        if (!(net = nl_network_load_data (json, -1, error)))
          return FALSE;
        r->batch_size = r->rc.batch_size;
        r->session = nl_session_new_train (p, r->name, net, &r->rc, error);
        break;
      }
    case START_RESUME:
      {
        g_autoptr (NlRunInfo) info = nl_project_get_run (p, r->run, error);
        g_auto (NlRunConfig) stored = { 0 };   /* r->rc holds the form's policy */
        nl_run_config_init (&stored);
        if (!info || !nl_run_config_from_json (&stored, info->hparams_json, error))
          return FALSE;
        r->epochs = stored.epochs;
        r->batch_size = stored.batch_size;
        r->lr = stored.optim.lr;
        r->lr_schedule = g_strdup (stored.lr_schedule);
        if (!(r->history = nl_project_get_metrics (p, r->run, NULL, 0, NULL, error)))
          return FALSE;
        /* the points of a partial epoch are trained again: keep the done ones */
        for (guint i = r->history->len; i-- > 0;)
          if (g_array_index (r->history, NlMetricRow, i).epoch > info->epochs_done)
            g_array_remove_index (r->history, i);
        r->session = nl_session_new_resume (p, r->run, 0, &r->rc, error);
        break;
      }
    case START_FORK:
      {
        g_autoptr (GError) local = NULL;
        r->session = nl_session_new_fork (p, r->run, "best", r->name, r->overrides, &r->rc, &local);
        /* a run whose checkpoints compete on nothing has no best: its last then */
        if (!r->session && g_error_matches (local, NL_PROJECT_ERROR, NL_PROJECT_ERROR_NOT_FOUND))
          {
            g_clear_error (&local);
            r->session = nl_session_new_fork (p, r->run, "last", r->name, r->overrides, &r->rc, &local);
          }
        if (!r->session)
          g_propagate_error (error, g_steal_pointer (&local));
        break;
      }
    }
  return r->session != NULL;
}

static void
start_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  GError *error = NULL;
  if (prepare (task_data, &error))
    g_task_return_boolean (task, TRUE);
  else
    g_task_return_error (task, error);
}

static void
start_failed (NlTrainingPage *page, const char *message)
{
  page->state = NL_TRAINING_FAILED;
  _nl_training_page_show_error (page, message);
  nl_training_dashboard_log (page->dashboard, "ERROR", message);
  set_status (page, _("could not start"));
}

static void
start_done (GObject *source, GAsyncResult *res, gpointer data)
{
  NlTrainingPage *page = NL_TRAINING_PAGE (source);
  StartRequest *r = g_task_get_task_data (G_TASK (res));
  g_autoptr (GError) error = NULL;
  gboolean ok = g_task_propagate_boolean (G_TASK (res), &error);

  nl_workspace_busy_pop (r->ws);
  if (r->ws != page->ws)
    return;  /* another project by now: the unstarted session goes with the request */
  nl_training_dashboard_reset (page->dashboard, r->title, r->epochs, r->batch_size, r->lr, r->lr_schedule);
  if (!ok)
    {
      start_failed (page, error->message);
      _nl_training_page_update_actions (page);
      return;
    }
  page->session = g_steal_pointer (&r->session);
  page->session_ws = g_object_ref (r->ws);
  page->run = r->kind == START_RESUME ? r->run : 0;
  for (guint i = 0; r->history && i < r->history->len; i++)
    nl_training_dashboard_add_row (page->dashboard, &g_array_index (r->history, NlMetricRow, i));
  nl_session_set_wakeup (page->session, NULL, session_wake, page);
  if (!nl_session_start (page->session, &error))
    {
      g_clear_pointer (&page->session, nl_session_free);
      g_clear_object (&page->session_ws);
      start_failed (page, error->message);
    }
  else
    {
      page->state = NL_TRAINING_RUNNING;
      page->last_metrics_notify = g_get_monotonic_time ();
      set_status (page, "starting…");
    }
  _nl_training_page_update_actions (page);
}

static void
start_request (NlTrainingPage *page, StartRequest *r)
{
  g_autoptr (GTask) task = g_task_new (page, NULL, start_done, NULL);
  page->state = NL_TRAINING_STARTING;
  page->stop_requested = FALSE;
  page->run = 0;
  nl_training_dashboard_stop_following (page->dashboard);  /* the dashboard is this run's now */
  hide_error (page);
  set_status (page, _("Preparing…"));
  nl_workspace_busy_push (r->ws);
  g_task_set_task_data (task, r, (GDestroyNotify) _start_request_free);
  g_task_run_in_thread (task, start_thread);
  _nl_training_page_update_actions (page);
}

/* ---- actions ---- */

static void
action_start (GtkWidget *widget, const char *name, GVariant *param)
{
  NlTrainingPage *page = NL_TRAINING_PAGE (widget);
  g_assert (NL_IS_TRAINING_PAGE (widget));
  g_autoptr (GError) error = NULL;
  StartRequest *r;
  if (session_active (page))
    return;
  if (_nl_training_page_mpi_wanted (page))
    {
      hide_error (page);
      if (!_nl_training_page_mpi_start (page, &error))
        {
          _nl_training_page_show_error (page, error->message);
          nl_training_dashboard_log (page->dashboard, "ERROR", error->message);
        }
      _nl_training_page_update_actions (page);
      return;
    }
  if (!(r = _nl_training_page_form_request (page, &error)))
    {
      _nl_training_page_show_error (page, error->message);
      return;
    }
  start_request (page, r);
}

/* Sweep…: the form's settings are the sweep's base. */
static void
action_sweep (GtkWidget *widget, const char *name, GVariant *param)
{
  NlTrainingPage *page = NL_TRAINING_PAGE (widget);
  g_assert (NL_IS_TRAINING_PAGE (widget));
  g_autoptr (GError) error = NULL;
  StartRequest *r;
  NlSweepDialog *dialog;
  GtkRoot *root = gtk_widget_get_root (widget);

  if (session_active (page) || page->fork_run)
    return;
  if (!(r = _nl_training_page_form_request (page, &error)))
    {
      _nl_training_page_show_error (page, error->message);
      return;
    }
  dialog = nl_sweep_dialog_new (page->ws, r->network, r->pipeline, &r->rc);
  if (GTK_IS_WINDOW (root))
    gtk_window_set_transient_for (GTK_WINDOW (dialog), GTK_WINDOW (root));
  gtk_window_set_modal (GTK_WINDOW (dialog), TRUE);
  gtk_window_present (GTK_WINDOW (dialog));
  _start_request_free (r);
}

static void
action_pause (GtkWidget *widget, const char *name, GVariant *param)
{
  NlTrainingPage *page = NL_TRAINING_PAGE (widget);
  g_assert (NL_IS_TRAINING_PAGE (widget));
  if (page->job)
    {
      if (page->state == NL_TRAINING_RUNNING)
        _nl_training_page_mpi_pause (page);
      _nl_training_page_update_actions (page);
      return;
    }
  if (!page->session || page->state != NL_TRAINING_RUNNING)
    return;
  nl_session_pause (page->session);
  page->state = NL_TRAINING_PAUSED;
  set_status (page, "pausing…");
  _nl_training_page_update_actions (page);
}

static void
action_resume (GtkWidget *widget, const char *name, GVariant *param)
{
  NlTrainingPage *page = NL_TRAINING_PAGE (widget);
  g_assert (NL_IS_TRAINING_PAGE (widget));
  if (page->job)
    {
      if (page->state == NL_TRAINING_PAUSED)
        _nl_training_page_mpi_resume (page);
      _nl_training_page_update_actions (page);
      return;
    }
  if (!page->session || page->state != NL_TRAINING_PAUSED)
    return;
  nl_session_resume (page->session);
  page->state = NL_TRAINING_RUNNING;
  set_status (page, "running");
  _nl_training_page_update_actions (page);
}

static void
action_stop (GtkWidget *widget, const char *name, GVariant *param)
{
  NlTrainingPage *page = NL_TRAINING_PAGE (widget);
  g_assert (NL_IS_TRAINING_PAGE (widget));
  if (page->job)
    {
      _nl_training_page_mpi_stop (page);
      _nl_training_page_update_actions (page);
      return;
    }
  if (!page->session)
    return;
  nl_session_stop (page->session);
  page->stop_requested = TRUE;
  set_status (page, "stopping…");
  _nl_training_page_update_actions (page);
}

static void
action_cancel_fork (GtkWidget *widget, const char *name, GVariant *param)
{
  g_assert (NL_IS_TRAINING_PAGE (widget));
  _nl_training_page_form_set_fork (NL_TRAINING_PAGE (widget), 0, NULL);
}

static void
action_dismiss_error (GtkWidget *widget, const char *name, GVariant *param)
{
  g_assert (NL_IS_TRAINING_PAGE (widget));
  hide_error (NL_TRAINING_PAGE (widget));
}

static void
action_export (GtkWidget *widget, const char *name, GVariant *param)
{
  g_assert (NL_IS_TRAINING_PAGE (widget));
  g_assert (g_variant_is_of_type (param, G_VARIANT_TYPE_STRING));
  nl_training_dashboard_export (NL_TRAINING_PAGE (widget)->dashboard, g_variant_get_string (param, NULL));
}

/* ---- the project ---- */

static void
workspace_changed (NlWorkspace *ws, guint what, NlTrainingPage *page)
{
  if (what & (NL_WORKSPACE_NETWORKS | NL_WORKSPACE_PIPELINES))
    _nl_training_page_form_reload (page);
  if (what & (NL_WORKSPACE_RUNS | NL_WORKSPACE_METRICS))
    nl_training_dashboard_follow_poll (page->dashboard);
}

void
nl_training_page_set_workspace (NlTrainingPage *page, NlWorkspace *ws)
{
  g_return_if_fail (NL_IS_TRAINING_PAGE (page));
  g_return_if_fail (ws == NULL || NL_IS_WORKSPACE (ws));
  if (page->ws == ws)
    return;
  if (page->ws)
    g_signal_handlers_disconnect_by_func (page->ws, workspace_changed, page);
  abandon_session (page);
  _nl_training_page_mpi_abandon (page);
  g_cancellable_cancel (page->form_cancel);
  g_clear_object (&page->form_cancel);
  g_cancellable_cancel (page->size_cancel);
  g_clear_pointer (&page->steps_key, g_free);
  page->steps_per_epoch = 0;
  page->form_cancel = g_cancellable_new ();
  g_set_object (&page->ws, ws);
  page->state = NL_TRAINING_IDLE;
  page->run = 0;
  nl_training_dashboard_set_workspace (page->dashboard, ws);
  nl_training_dashboard_set_follow_blocked (page->dashboard, FALSE);  /* no session now */
  page->lists_loading = page->prefill_loading = 0;
  page->stop_requested = FALSE;
  hide_error (page);
  _nl_training_page_form_set_fork (page, 0, NULL);
  nl_training_dashboard_reset (page->dashboard, _("No Run Yet"), 0, 0, 0, NULL);
  if (ws)
    {
      g_signal_connect_object (ws, "changed", G_CALLBACK (workspace_changed), page, 0);
      _nl_training_page_form_reload (page);
      nl_training_dashboard_follow_poll (page->dashboard);
    }
  nl_training_group_set_workspace (page->training, ws);
  _nl_training_page_update_actions (page);
}

/* ---- GObject ---- */

static void
nl_training_page_dispose (GObject *object)
{
  NlTrainingPage *page = NL_TRAINING_PAGE (object);
  /* before the session stops, not at the end of dispose (where the handler
   * would go by itself): its end reports to the workspace */
  if (page->ws)
    g_signal_handlers_disconnect_by_func (page->ws, workspace_changed, page);
  _nl_training_page_mpi_abandon (page);
  if (page->session)
    {
      /* the one place the GUI waits for the worker: stop is honoured
       * between batches, so this is one batch at most */
      nl_session_set_wakeup (page->session, NULL, NULL, NULL);
      g_clear_pointer (&page->session, nl_session_free);
    }
  g_clear_object (&page->session_ws);
  _nl_training_page_form_dispose (page);
  g_clear_object (&page->ws);
  gtk_widget_dispose_template (GTK_WIDGET (page), NL_TYPE_TRAINING_PAGE);
  G_OBJECT_CLASS (nl_training_page_parent_class)->dispose (object);
}

static void
nl_training_page_finalize (GObject *object)
{
  NlTrainingPage *page = NL_TRAINING_PAGE (object);
  g_free (page->error);
  G_OBJECT_CLASS (nl_training_page_parent_class)->finalize (object);
}

static void
nl_training_page_class_init (NlTrainingPageClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = nl_training_page_dispose;
  object_class->finalize = nl_training_page_finalize;

  g_type_ensure (NL_TYPE_TRAINING_DASHBOARD);
  g_type_ensure (NL_TYPE_OPTIMIZER_GROUP);
  g_type_ensure (NL_TYPE_SCHEDULE_GROUP);
  g_type_ensure (NL_TYPE_CHECKPOINT_GROUP);
  g_type_ensure (NL_TYPE_EARLY_STOP_GROUP);
  g_type_ensure (NL_TYPE_TRAINING_GROUP);
  gtk_widget_class_set_template_from_resource (widget_class, "/io/github/netloom/Netloom/ui/nl-training-page.ui");
  gtk_widget_class_bind_template_child (widget_class, NlTrainingPage, error_revealer);
  gtk_widget_class_bind_template_child (widget_class, NlTrainingPage, error_label);
  gtk_widget_class_bind_template_child (widget_class, NlTrainingPage, run_group);
  gtk_widget_class_bind_template_child (widget_class, NlTrainingPage, optimizer);
  gtk_widget_class_bind_template_child (widget_class, NlTrainingPage, schedule);
  gtk_widget_class_bind_template_child (widget_class, NlTrainingPage, training);
  gtk_widget_class_bind_template_child (widget_class, NlTrainingPage, checkpoint);
  gtk_widget_class_bind_template_child (widget_class, NlTrainingPage, early_stop);
  gtk_widget_class_bind_template_child (widget_class, NlTrainingPage, dashboard);

  gtk_widget_class_install_action (widget_class, "training.start", NULL, action_start);
  gtk_widget_class_install_action (widget_class, "training.sweep", NULL, action_sweep);
  gtk_widget_class_install_action (widget_class, "training.pause", NULL, action_pause);
  gtk_widget_class_install_action (widget_class, "training.resume", NULL, action_resume);
  gtk_widget_class_install_action (widget_class, "training.stop", NULL, action_stop);
  gtk_widget_class_install_action (widget_class, "training.cancel-fork", NULL, action_cancel_fork);
  gtk_widget_class_install_action (widget_class, "training.dismiss-error", NULL, action_dismiss_error);
  gtk_widget_class_install_action (widget_class, "training.export", "s", action_export);
}

/* The Layers panel's Profile button: the session times the next steps and
 * writes profile/<node>/ms when they are done. */
static void
profile_requested (NlTrainingPage *page, int n_steps)
{
  g_autofree char *line = NULL;
  if (!page->session)
    return;
  nl_session_profile_steps (page->session, n_steps, NULL);
  line = g_strdup_printf (_("profiling the next %d steps"), n_steps);
  nl_training_dashboard_log (page->dashboard, "LOG", line);
}

static void
nl_training_page_init (NlTrainingPage *page)
{
  gtk_widget_init_template (GTK_WIDGET (page));
  page->form_cancel = g_cancellable_new ();
  g_signal_connect_object (nl_training_dashboard_get_layers_panel (page->dashboard), "profile-requested",
                           G_CALLBACK (profile_requested), page, G_CONNECT_SWAPPED);
  _nl_training_page_form_init (page);
  nl_training_dashboard_reset (page->dashboard, _("No Run Yet"), 0, 0, 0, NULL);
  nl_training_dashboard_set_status (page->dashboard, _("Open a project to train"));
  _nl_training_page_update_actions (page);
}

/* ---- public API ---- */

void
nl_training_page_prefill_from_run (NlTrainingPage *page, gint64 run)
{
  g_return_if_fail (NL_IS_TRAINING_PAGE (page));
  g_return_if_fail (run > 0);
  if (!page->ws)
    return;
  if (session_active (page))
    {
      nl_workspace_toast (page->ws, _("A run is going: stop it before forking another"));
      return;
    }
  _nl_training_page_form_prefill (page, run);
}

void
nl_training_page_resume_run (NlTrainingPage *page, gint64 run)
{
  g_return_if_fail (NL_IS_TRAINING_PAGE (page));
  g_return_if_fail (run > 0);
  if (!page->ws)
    return;
  if (session_active (page))
    {
      nl_workspace_toast (page->ws, _("A run is going: stop it before resuming another"));
      return;
    }
  start_request (page, _nl_training_page_form_resume_request (page, run));
}

NlTrainingState
nl_training_page_get_state (NlTrainingPage *page)
{
  g_return_val_if_fail (NL_IS_TRAINING_PAGE (page), NL_TRAINING_IDLE);
  return page->state;
}

gint64
nl_training_page_get_run (NlTrainingPage *page)
{
  g_return_val_if_fail (NL_IS_TRAINING_PAGE (page), 0);
  return page->run;
}

gint64
nl_training_page_get_followed_run (NlTrainingPage *page)
{
  g_return_val_if_fail (NL_IS_TRAINING_PAGE (page), 0);
  return nl_training_dashboard_get_followed_run (page->dashboard);
}

gint64
nl_training_page_get_fork_parent (NlTrainingPage *page)
{
  g_return_val_if_fail (NL_IS_TRAINING_PAGE (page), 0);
  return page->fork_run;
}

gboolean
nl_training_page_is_loading (NlTrainingPage *page)
{
  g_return_val_if_fail (NL_IS_TRAINING_PAGE (page), FALSE);
  return page->lists_loading > 0 || page->prefill_loading > 0
         || nl_training_group_is_loading (page->training);
}

const char *
nl_training_page_get_error (NlTrainingPage *page)
{
  g_return_val_if_fail (NL_IS_TRAINING_PAGE (page), NULL);
  return page->error;
}

NlTrainingDashboard *
nl_training_page_get_dashboard (NlTrainingPage *page)
{
  g_return_val_if_fail (NL_IS_TRAINING_PAGE (page), NULL);
  return page->dashboard;
}

NlPlot *
nl_training_page_get_plot (NlTrainingPage *page, const char *name)
{
  g_return_val_if_fail (NL_IS_TRAINING_PAGE (page), NULL);
  g_return_val_if_fail (name != NULL, NULL);
  return nl_training_dashboard_get_plot (page->dashboard, name);
}

GtkWidget *
nl_training_page_get_form_widget (NlTrainingPage *page, const char *name)
{
  GtkWidget *w;
  g_return_val_if_fail (NL_IS_TRAINING_PAGE (page), NULL);
  g_return_val_if_fail (name != NULL, NULL);
  w = page->rows.fields ? g_hash_table_lookup (page->rows.fields, name) : NULL;
  if (!w)
    w = nl_optimizer_group_get_control (page->optimizer, name);
  if (!w)
    w = nl_schedule_group_get_control (page->schedule, name);
  if (!w)
    w = nl_checkpoint_group_get_control (page->checkpoint, name);
  if (!w)
    w = nl_training_group_get_control (page->training, name);
  return w ? w : nl_early_stop_group_get_control (page->early_stop, name);
}
