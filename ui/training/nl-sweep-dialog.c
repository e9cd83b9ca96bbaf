/* nl-sweep-dialog.c — the Sweep… dialog of the Training page. */
#include "ui/training/nl-sweep-dialog.h"
#include <glib/gi18n.h>
#include "engine/session/nl-run-pipeline.h"
#include "engine/session/nl-sweep.h"

#include <math.h>
#include <string.h>

/* The form's settings a sweep may vary, in the form's order. */
static const char *const keys[] = { "optimizer", "lr",   "momentum", "wd",     "batch_size",
                                    "epochs",    "seed", "precision", "lr_schedule", "augment" };

struct _NlSweepDialog {
  AdwWindow parent_instance;
  NlWorkspace *ws;
  char *network, *pipeline;
  NlRunConfig base;
  GtkSwitch *vary[G_N_ELEMENTS (keys)];
  GtkEntry *range[G_N_ELEMENTS (keys)];
  AdwPreferencesGroup *vary_group;
  AdwActionRow *net_params_row;
  GtkEntry *net_params;
  GtkSpinButton *trials, *eta, *min_epochs;
  AdwComboRow *strategy, *metric;
  GtkSwitch *prune;
  GtkLabel *error_label;
  GtkButton *start;
};

G_DEFINE_FINAL_TYPE (NlSweepDialog, nl_sweep_dialog, ADW_TYPE_WINDOW)

/* A range around the form's value to start from. */
static char *
default_range (const NlRunConfig *rc, const char *key)
{
  if (!strcmp (key, "optimizer"))
    return g_strdup ("sgd|adam");
  if (!strcmp (key, "lr"))
    return g_strdup_printf ("log:%.3g:%.3g", rc->optim.lr / 10, rc->optim.lr * 10);
  if (!strcmp (key, "momentum"))
    return g_strdup ("uniform:0.5:0.99");
  if (!strcmp (key, "wd"))
    return g_strdup ("log:1e-6:1e-2");
  if (!strcmp (key, "batch_size"))
    return g_strdup ("32|64|128|256");
  if (!strcmp (key, "epochs"))
    return g_strdup_printf ("int:%d:%d", MAX (rc->epochs / 2, 1), rc->epochs * 2);
  if (!strcmp (key, "seed"))
    return g_strdup ("int:0:9");
  if (!strcmp (key, "lr_schedule"))
    {
      /* the form's schedule against the common alternatives (choices of
       * specs; a spec's own commas and colons stay in it) */
      const char *own = rc->lr_schedule && *rc->lr_schedule ? rc->lr_schedule : "constant";
      return g_strcmp0 (own, "cosine") == 0 ? g_strdup ("cosine|constant|poly")
                                           : g_strdup_printf ("%s|cosine|poly", own);
    }
  if (!strcmp (key, "augment"))
    {
      /* the form's transforms against a flip more, or against none
       * (to-tensor alone changes nothing: a choice may not be empty) */
      if (!rc->augment || !*rc->augment)
        return g_strdup ("to-tensor|flip");
      if (!strstr (rc->augment, "flip"))
        return g_strdup_printf ("%s|%s,flip", rc->augment, rc->augment);
      return g_strdup_printf ("%s|to-tensor", rc->augment);
    }
  return g_strdup ("fp32|bf16");
}

static int
key_index (const char *key)
{
  for (guint i = 0; i < G_N_ELEMENTS (keys); i++)
    if (!strcmp (keys[i], key))
      return (int) i;
  return -1;
}

char *
nl_sweep_dialog_get_space (NlSweepDialog *self)
{
  GString *s = g_string_new (NULL);
  const char *net = gtk_editable_get_text (GTK_EDITABLE (self->net_params));
  for (guint i = 0; i < G_N_ELEMENTS (keys); i++)
    if (gtk_switch_get_active (self->vary[i]))
      g_string_append_printf (s, "%s%s=%s", s->len ? "," : "", keys[i],
                              gtk_editable_get_text (GTK_EDITABLE (self->range[i])));
  if (*net)
    g_string_append_printf (s, "%s%s", s->len ? "," : "", net);
  return g_string_free (s, FALSE);
}

gboolean
nl_sweep_dialog_set_vary (NlSweepDialog *self, const char *key, gboolean vary, const char *range)
{
  int i = key_index (key);
  if (i < 0)
    return FALSE;
  gtk_switch_set_active (self->vary[i], vary);
  if (range)
    gtk_editable_set_text (GTK_EDITABLE (self->range[i]), range);
  return TRUE;
}

void
nl_sweep_dialog_set_network_params (NlSweepDialog *self, const char *space)
{
  gtk_editable_set_text (GTK_EDITABLE (self->net_params), space ? space : "");
}

void
nl_sweep_dialog_set_trials (NlSweepDialog *self, int trials)
{
  gtk_spin_button_set_value (self->trials, trials);
}

void
nl_sweep_dialog_set_prune (NlSweepDialog *self, gboolean prune)
{
  gtk_switch_set_active (self->prune, prune);
}

/* the chosen item of a row whose model is a GtkStringList */
static const char *
combo_text (AdwComboRow *row)
{
  return gtk_string_object_get_string (GTK_STRING_OBJECT (adw_combo_row_get_selected_item (row)));
}

/* the strategy of the list's chosen row: the table's row of that index */
static const NlSweepStrategy *
selected_strategy (NlSweepDialog *self)
{
  int n;
  const NlSweepStrategy *strategies = nl_sweep_strategies (&n);
  guint i = adw_combo_row_get_selected (self->strategy);
  return &strategies[MIN (i, (guint) n - 1)];
}

static gint64
create (NlSweepDialog *self, GError **error)
{
  NlProject *p = nl_workspace_get_project (self->ws);
  g_autofree char *space = nl_sweep_dialog_get_space (self), *json = NULL, *prune = NULL;
  g_autoptr (NlPipelineInfo) pl = NULL;
  g_autoptr (NlNetwork) net = NULL;
  g_auto (NlRunConfig) rc = { 0 };
  const char *metric = combo_text (self->metric);

  if (!*space)
    {
      g_set_error (error, NL_TRAIN_ERROR, NL_TRAIN_ERROR_CONFIG, _("turn on “vary” for at least one setting"));
      return 0;
    }
  if (!(pl = nl_project_load_pipeline (p, self->pipeline, error))
      || !(json = nl_project_load_network (p, self->network, 0, error))
      || !(net = nl_network_load_data (json, -1, error)))
    return 0;
  nl_run_config_copy (&rc, &self->base);
  if (!nl_run_config_apply_pipeline (&rc, pl, error))
    return 0;
  if (gtk_switch_get_active (self->prune))
    prune = g_strdup_printf ("asha:eta=%d,min_epochs=%d", gtk_spin_button_get_value_as_int (self->eta),
                             gtk_spin_button_get_value_as_int (self->min_epochs));
  return nl_sweep_create (p, NULL, net, &rc, space, selected_strategy (self)->name,
                          gtk_spin_button_get_value_as_int (self->trials), metric, strcmp (metric, "train_loss") != 0,
                          prune, 1, error);
}

gint64
nl_sweep_dialog_start (NlSweepDialog *self, GError **error)
{
  g_autoptr (GError) local = NULL;
  gint64 id;

  g_return_val_if_fail (NL_IS_SWEEP_DIALOG (self), 0);
  id = create (self, &local);
  if (id <= 0)
    {
      /* the space's messages name the key after the CLI option's name */
      gtk_label_set_text (self->error_label, g_str_has_prefix (local->message, "--space: ") ? local->message + 9
                                                                                          : local->message);
      gtk_widget_set_visible (GTK_WIDGET (self->error_label), TRUE);
      g_propagate_error (error, g_steal_pointer (&local));
      return 0;
    }
  nl_workspace_notify (self->ws, NL_WORKSPACE_RUNS);
  nl_workspace_request_run_sweep (self->ws, id);
  gtk_window_close (GTK_WINDOW (self));
  return id;
}

static void
on_start (NlSweepDialog *self)
{
  nl_sweep_dialog_start (self, NULL);
}

static void
nl_sweep_dialog_finalize (GObject *object)
{
  NlSweepDialog *self = NL_SWEEP_DIALOG (object);
  g_clear_object (&self->ws);
  g_free (self->network);
  g_free (self->pipeline);
  nl_run_config_clear (&self->base);
  G_OBJECT_CLASS (nl_sweep_dialog_parent_class)->finalize (object);
}

static void
nl_sweep_dialog_class_init (NlSweepDialogClass *klass)
{
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  G_OBJECT_CLASS (klass)->finalize = nl_sweep_dialog_finalize;
  gtk_widget_class_set_template_from_resource (widget_class, "/io/github/netloom/Netloom/ui/nl-sweep-dialog.ui");
#define BIND(name) gtk_widget_class_bind_template_child (widget_class, NlSweepDialog, name)
  BIND (vary_group);
  BIND (net_params_row);
  BIND (net_params);
  BIND (trials);
  BIND (eta);
  BIND (min_epochs);
  BIND (strategy);
  BIND (metric);
  BIND (prune);
  BIND (error_label);
  BIND (start);
#undef BIND
  gtk_widget_class_bind_template_callback (widget_class, on_start);
  gtk_widget_class_bind_template_callback (widget_class, gtk_window_close);
}

static void
nl_sweep_dialog_init (NlSweepDialog *self)
{
  int n;
  const NlSweepStrategy *strategies = nl_sweep_strategies (&n);
  g_autoptr (GtkStringList) titles = gtk_string_list_new (NULL);

  gtk_widget_init_template (GTK_WIDGET (self));
  for (int i = 0; i < n; i++)
    gtk_string_list_append (titles, _(strategies[i].title));
  adw_combo_row_set_model (self->strategy, G_LIST_MODEL (titles));
}

/* A row for each setting a sweep may vary, its range from the form's
 * value, then the network parameters row (the template's). */
static void
add_setting_rows (NlSweepDialog *self)
{
  for (guint i = 0; i < G_N_ELEMENTS (keys); i++)
    {
      const NlRunField *f = nl_run_config_find_field (keys[i]);
      g_autofree char *range = default_range (&self->base, keys[i]);
      GtkWidget *row = adw_action_row_new ();
      adw_preferences_row_set_title (ADW_PREFERENCES_ROW (row), keys[i]);
      if (f)
        adw_action_row_set_subtitle (ADW_ACTION_ROW (row), f->doc);
      self->range[i] = GTK_ENTRY (gtk_entry_new ());
      gtk_editable_set_text (GTK_EDITABLE (self->range[i]), range);
      gtk_widget_set_valign (GTK_WIDGET (self->range[i]), GTK_ALIGN_CENTER);
      self->vary[i] = GTK_SWITCH (gtk_switch_new ());
      gtk_widget_set_valign (GTK_WIDGET (self->vary[i]), GTK_ALIGN_CENTER);
      gtk_widget_set_tooltip_text (GTK_WIDGET (self->vary[i]), _("Vary"));
      g_object_bind_property (self->vary[i], "active", self->range[i], "sensitive", G_BINDING_SYNC_CREATE);
      adw_action_row_add_suffix (ADW_ACTION_ROW (row), GTK_WIDGET (self->range[i]));
      adw_action_row_add_suffix (ADW_ACTION_ROW (row), GTK_WIDGET (self->vary[i]));
      adw_preferences_group_add (self->vary_group, row);
    }
  adw_preferences_group_add (self->vary_group, GTK_WIDGET (self->net_params_row));
}

NlSweepDialog *
nl_sweep_dialog_new (NlWorkspace *ws, const char *network, const char *pipeline, const NlRunConfig *base)
{
  NlSweepDialog *self = g_object_new (NL_TYPE_SWEEP_DIALOG, NULL);
  self->ws = g_object_ref (ws);
  self->network = g_strdup (network);
  self->pipeline = g_strdup (pipeline);
  nl_run_config_copy (&self->base, base);
  add_setting_rows (self);
  return self;
}
