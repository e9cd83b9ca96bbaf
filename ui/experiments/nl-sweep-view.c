/* nl-sweep-view.c — a project's sweeps: plots, trial table, stop and continue. */
#include "ui/experiments/nl-sweep-view.h"
#include <glib/gi18n.h>
#include <inttypes.h>

#include <math.h>

struct _NlSweepView {
  GtkBox parent_instance;
  NlWorkspace *ws;
  GtkDropDown *sweeps;
  GtkStringList *sweep_labels;
  GArray *sweep_ids;         /* gint64, in the dropdown's order */
  gboolean updating;
  GtkLabel *status;
  GtkButton *stop_button, *continue_button;
  NlSweepPlot *parallel, *scatter;
  GtkDropDown *scatter_param;
  GtkStringList *param_labels;
  char *param_space;         /* the space param_labels were made for */
  GtkListBox *table;
  GPtrArray *trials;         /* NlSweepTrial*, the shown sweep's */
  NlSweepInfo *info;         /* the shown sweep */
  guint n_listed, poll_id;
  volatile gint *stop_flag;  /* the running sweep's, owned by its task */
};

G_DEFINE_FINAL_TYPE (NlSweepView, nl_sweep_view, GTK_TYPE_BOX)

typedef struct {
  NlWorkspace *ws;
  gint64 sweep;
  volatile gint stop;
} RunData;

static void
run_data_free (RunData *d)
{
  g_object_unref (d->ws);
  g_free (d);
}

static void update_table (NlSweepView *self);

static void
update_buttons (NlSweepView *self)
{
  gboolean running = self->stop_flag != NULL;
  gtk_widget_set_sensitive (GTK_WIDGET (self->stop_button), running);
  gtk_widget_set_sensitive (GTK_WIDGET (self->continue_button),
                            !running && self->info && g_strcmp0 (self->info->status, "finished") != 0);
}

static void
update_status (NlSweepView *self)
{
  const NlSweepTrial *best = self->trials && self->info ? nl_sweep_best_trial (self->trials, self->info->maximize)
                                                        : NULL;
  int done = 0;
  g_autofree char *text = NULL;

  if (!self->info)
    {
      gtk_label_set_text (self->status, _("No sweeps yet: start one with “netloom-cli sweep --project …”."));
      return;
    }
  for (guint i = 0; self->trials && i < self->trials->len; i++)
    {
      const char *s = ((NlSweepTrial *) g_ptr_array_index (self->trials, i))->status;
      done += !g_strcmp0 (s, "finished") || !g_strcmp0 (s, "pruned") || !g_strcmp0 (s, "failed");
    }
  if (best)
    text = g_strdup_printf (_("%d/%d trials · %s · %s, best %s %.4f (trial %d)"), done, self->info->trials,
                            self->stop_flag ? _("running here") : self->info->status, self->info->strategy,
                            self->info->metric, best->value, best->trial);
  else
    text = g_strdup_printf (_("%d/%d trials · %s · %s"), done, self->info->trials,
                            self->stop_flag ? _("running here") : self->info->status, self->info->strategy);
  gtk_label_set_text (self->status, text);
}

static void
load_trials (NlSweepView *self)
{
  NlProject *p = self->ws ? nl_workspace_get_project (self->ws) : NULL;
  gint64 id = nl_sweep_view_get_sweep (self);
  g_autoptr (NlSweepSpace) space = NULL;
  int keep = gtk_drop_down_get_selected (self->scatter_param);

  g_clear_pointer (&self->info, nl_sweep_info_free);
  g_clear_pointer (&self->trials, g_ptr_array_unref);
  if (p && id > 0)
    {
      self->info = nl_project_get_sweep (p, id, NULL);
      self->trials = self->info ? nl_sweep_list_trials (p, id, NULL) : NULL;
    }
  nl_sweep_plot_set_trials (self->parallel, self->info ? self->info->space : NULL, self->trials,
                            self->info ? self->info->metric : NULL, self->info && self->info->maximize);
  nl_sweep_plot_set_trials (self->scatter, self->info ? self->info->space : NULL, self->trials,
                            self->info ? self->info->metric : NULL, self->info && self->info->maximize);
  /* the scatter's choice of setting, made again only for another space
   * (live updates must not reset an open list) */
  if (g_strcmp0 (self->param_space, self->info ? self->info->space : NULL) != 0)
    {
      space = self->info ? nl_sweep_space_parse (self->info->space, NULL) : NULL;
      g_free (self->param_space);
      self->param_space = g_strdup (self->info ? self->info->space : NULL);
      self->updating = TRUE;
      gtk_string_list_splice (self->param_labels, 0, g_list_model_get_n_items (G_LIST_MODEL (self->param_labels)),
                              NULL);
      for (int i = 0; space && i < nl_sweep_space_dim (space); i++)
        gtk_string_list_append (self->param_labels, nl_sweep_space_param (space, i)->key);
      if (keep >= 0 && (guint) keep < g_list_model_get_n_items (G_LIST_MODEL (self->param_labels)))
        gtk_drop_down_set_selected (self->scatter_param, keep);
      self->updating = FALSE;
      nl_sweep_plot_set_scatter_param (self->scatter, MAX ((int) gtk_drop_down_get_selected (self->scatter_param), 0));
    }
  update_table (self);
  update_status (self);
  update_buttons (self);
}

void
nl_sweep_view_refresh (NlSweepView *self)
{
  NlProject *p;
  g_autoptr (GPtrArray) list = NULL;
  gint64 shown;

  g_return_if_fail (NL_IS_SWEEP_VIEW (self));
  p = self->ws ? nl_workspace_get_project (self->ws) : NULL;
  shown = nl_sweep_view_get_sweep (self);
  list = p ? nl_project_list_sweeps (p, NULL) : NULL;
  self->updating = TRUE;
  g_array_set_size (self->sweep_ids, 0);
  gtk_string_list_splice (self->sweep_labels, 0, g_list_model_get_n_items (G_LIST_MODEL (self->sweep_labels)), NULL);
  for (guint i = 0; list && i < list->len; i++)
    {
      NlSweepInfo *s = g_ptr_array_index (list, i);
      g_autofree char *label = g_strdup_printf (_("Sweep %" PRId64 ": %s (%s)"), s->id, s->name, s->status);
      g_array_append_val (self->sweep_ids, s->id);
      gtk_string_list_append (self->sweep_labels, label);
    }
  /* the sweep shown before, else the newest */
  for (guint i = 0; i < self->sweep_ids->len; i++)
    if (g_array_index (self->sweep_ids, gint64, i) == shown || (shown <= 0 && i + 1 == self->sweep_ids->len))
      gtk_drop_down_set_selected (self->sweeps, i);
  self->updating = FALSE;
  load_trials (self);
}

gint64
nl_sweep_view_get_sweep (NlSweepView *self)
{
  guint i = gtk_drop_down_get_selected (self->sweeps);
  return i < self->sweep_ids->len ? g_array_index (self->sweep_ids, gint64, i) : 0;
}

void
nl_sweep_view_show_sweep (NlSweepView *self, gint64 sweep)
{
  nl_sweep_view_refresh (self);
  for (guint i = 0; i < self->sweep_ids->len; i++)
    if (g_array_index (self->sweep_ids, gint64, i) == sweep)
      gtk_drop_down_set_selected (self->sweeps, i);
  load_trials (self);
}

/* ---- the trial table, filtered by the brushes ---- */

static void
update_table (NlSweepView *self)
{
  int best = nl_sweep_plot_get_best (self->parallel);
  g_autoptr (NlSweepSpace) space = self->info ? nl_sweep_space_parse (self->info->space, NULL) : NULL;
  g_autofree double *point = space ? g_new0 (double, nl_sweep_space_dim (space)) : NULL;
  GtkWidget *child;

  while ((child = gtk_widget_get_first_child (GTK_WIDGET (self->table))))
    gtk_list_box_remove (self->table, child);
  self->n_listed = 0;
  for (guint i = 0; self->trials && i < self->trials->len; i++)
    {
      const NlSweepTrial *t = g_ptr_array_index (self->trials, i);
      g_autofree char *text = NULL, *values = NULL;
      char value[32] = "–";
      GtkWidget *label;
      if (!nl_sweep_plot_trial_selected (self->parallel, i))
        continue;
      if (!isnan (t->value))
        g_snprintf (value, sizeof value, "%.4f", t->value);
      if (space && t->params_json && nl_sweep_space_point_from_json (space, t->params_json, point, NULL))
        values = nl_sweep_space_point_describe (space, point);
      text = g_strdup_printf ("%s trial %d · run %" G_GINT64_FORMAT " · %s · %d epochs · %s %s · %s",
                              (int) i == best ? "★" : " ", t->trial, t->run, t->status, t->epochs, self->info->metric,
                              value, values ? values : "");
      label = gtk_label_new (text);
      gtk_label_set_xalign (GTK_LABEL (label), 0);
      gtk_label_set_ellipsize (GTK_LABEL (label), PANGO_ELLIPSIZE_END);
      if (!g_strcmp0 (t->status, "pruned"))
        gtk_widget_add_css_class (label, "dim-label");
      gtk_list_box_append (self->table, label);
      self->n_listed++;
    }
}

guint
nl_sweep_view_get_n_listed (NlSweepView *self)
{
  return self->n_listed;
}

/* ---- running ---- */

static gboolean
keep_going (gpointer user)
{
  return !g_atomic_int_get (&((RunData *) user)->stop);
}

static void
run_thread (GTask *task, gpointer source, gpointer data, GCancellable *cancel)
{
  RunData *d = data;
  NlSweepCallbacks cb = { NULL, keep_going, d };
  GError *error = NULL;
  if (nl_sweep_run (nl_workspace_get_project (d->ws), d->sweep, 0, &cb, &error))
    g_task_return_boolean (task, TRUE);
  else
    g_task_return_error (task, error);
}

static void
run_done (GObject *source, GAsyncResult *res, gpointer data)
{
  NlSweepView *self = NL_SWEEP_VIEW (source);
  RunData *d = g_task_get_task_data (G_TASK (res));
  g_autoptr (GError) error = NULL;

  if (!g_task_propagate_boolean (G_TASK (res), &error) && !g_atomic_int_get (&d->stop))
    nl_workspace_toast (d->ws, _("Sweep %" PRId64 ": %s"), d->sweep, error->message);
  self->stop_flag = NULL;
  g_clear_handle_id (&self->poll_id, g_source_remove);
  nl_workspace_busy_pop (d->ws);
  nl_workspace_notify (d->ws, NL_WORKSPACE_RUNS);
  nl_sweep_view_refresh (self);
}

static gboolean
poll_running (gpointer data)
{
  load_trials (NL_SWEEP_VIEW (data));
  return G_SOURCE_CONTINUE;
}

gboolean
nl_sweep_view_continue (NlSweepView *self, GError **error)
{
  g_autoptr (GTask) task = NULL;
  RunData *d;

  g_return_val_if_fail (NL_IS_SWEEP_VIEW (self), FALSE);
  if (!self->ws || nl_sweep_view_get_sweep (self) <= 0 || self->stop_flag)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_BUSY, self->stop_flag ? _("the sweep is running") : _("no sweep"));
      return FALSE;
    }
  d = g_new0 (RunData, 1);
  d->ws = g_object_ref (self->ws);
  d->sweep = nl_sweep_view_get_sweep (self);
  task = g_task_new (self, NULL, run_done, NULL);
  g_task_set_task_data (task, d, (GDestroyNotify) run_data_free);
  self->stop_flag = &d->stop;
  nl_workspace_busy_push (self->ws);
  g_task_run_in_thread (task, run_thread);
  /* live: the trials as they end, and the running one's epochs */
  self->poll_id = g_timeout_add (500, poll_running, self);
  update_status (self);
  update_buttons (self);
  return TRUE;
}

void
nl_sweep_view_stop (NlSweepView *self)
{
  g_return_if_fail (NL_IS_SWEEP_VIEW (self));
  if (self->stop_flag)
    g_atomic_int_set (self->stop_flag, 1);
}

gboolean
nl_sweep_view_is_running (NlSweepView *self)
{
  return self->stop_flag != NULL;
}

NlSweepPlot *
nl_sweep_view_get_parallel (NlSweepView *self)
{
  return self->parallel;
}

NlSweepPlot *
nl_sweep_view_get_scatter (NlSweepView *self)
{
  return self->scatter;
}

/* ---- wiring ---- */

static void
workspace_changed (NlWorkspace *ws, guint what, NlSweepView *self)
{
  if (what & (NL_WORKSPACE_RUNS | NL_WORKSPACE_METRICS))
    nl_sweep_view_refresh (self);
}

void
nl_sweep_view_set_workspace (NlSweepView *self, NlWorkspace *ws)
{
  g_return_if_fail (NL_IS_SWEEP_VIEW (self));
  if (self->ws == ws)
    return;
  nl_sweep_view_stop (self);
  if (self->ws)
    g_signal_handlers_disconnect_by_func (self->ws, workspace_changed, self);
  g_set_object (&self->ws, ws);
  if (ws)
    g_signal_connect_object (ws, "changed", G_CALLBACK (workspace_changed), self, 0);
  nl_sweep_view_refresh (self);
}

static void
on_sweep_selected (NlSweepView *self)
{
  if (!self->updating)
    load_trials (self);
}

static void
on_param_selected (NlSweepView *self)
{
  guint i = gtk_drop_down_get_selected (self->scatter_param);
  if (!self->updating && i != GTK_INVALID_LIST_POSITION)
    nl_sweep_plot_set_scatter_param (self->scatter, (int) i);
}

static void
on_continue (NlSweepView *self)
{
  g_autoptr (GError) error = NULL;
  if (!nl_sweep_view_continue (self, &error) && self->ws)
    nl_workspace_toast (self->ws, _("Cannot continue the sweep: %s"), error->message);
}

static void
nl_sweep_view_dispose (GObject *object)
{
  NlSweepView *self = NL_SWEEP_VIEW (object);
  nl_sweep_view_stop (self);
  g_clear_handle_id (&self->poll_id, g_source_remove);
  g_clear_object (&self->ws);
  G_OBJECT_CLASS (nl_sweep_view_parent_class)->dispose (object);
}

static void
nl_sweep_view_finalize (GObject *object)
{
  NlSweepView *self = NL_SWEEP_VIEW (object);
  g_array_unref (self->sweep_ids);
  g_clear_pointer (&self->trials, g_ptr_array_unref);
  g_clear_pointer (&self->info, nl_sweep_info_free);
  g_free (self->param_space);
  G_OBJECT_CLASS (nl_sweep_view_parent_class)->finalize (object);
}

static void
nl_sweep_view_class_init (NlSweepViewClass *klass)
{
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  G_OBJECT_CLASS (klass)->dispose = nl_sweep_view_dispose;
  G_OBJECT_CLASS (klass)->finalize = nl_sweep_view_finalize;
  g_type_ensure (NL_TYPE_SWEEP_PLOT);
  gtk_widget_class_set_template_from_resource (widget_class, "/io/github/netloom/Netloom/ui/nl-sweep-view.ui");
#define BIND(name) gtk_widget_class_bind_template_child (widget_class, NlSweepView, name)
  BIND (sweeps);
  BIND (sweep_labels);
  BIND (status);
  BIND (stop_button);
  BIND (continue_button);
  BIND (parallel);
  BIND (scatter);
  BIND (scatter_param);
  BIND (param_labels);
  BIND (table);
#undef BIND
  gtk_widget_class_bind_template_callback (widget_class, on_sweep_selected);
  gtk_widget_class_bind_template_callback (widget_class, on_param_selected);
  gtk_widget_class_bind_template_callback (widget_class, update_table);
  gtk_widget_class_bind_template_callback (widget_class, nl_sweep_view_stop);
  gtk_widget_class_bind_template_callback (widget_class, on_continue);
}

static void
nl_sweep_view_init (NlSweepView *self)
{
  /* before the template: the handlers it connects read it */
  self->sweep_ids = g_array_new (FALSE, FALSE, sizeof (gint64));
  gtk_widget_init_template (GTK_WIDGET (self));
  update_status (self);
  update_buttons (self);
}

GtkWidget *
nl_sweep_view_new (void)
{
  return g_object_new (NL_TYPE_SWEEP_VIEW, NULL);
}
