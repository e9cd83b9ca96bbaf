/* nl-checkpoint-group.c — the Training form's checkpoint policy group. */
#include "ui/training/nl-checkpoint-group.h"
#include <glib/gi18n.h>
#include "ui/widgets/nl-form-rows.h"

struct _NlCheckpointGroup {
  AdwPreferencesGroup parent_instance;
  NlFormRows rows;
  GtkSpinButton *keep;
  GtkSpinButton *interval;
  AdwComboRow *monitor_row;
  GtkSwitch *restore_best;
};

G_DEFINE_FINAL_TYPE (NlCheckpointGroup, nl_checkpoint_group, ADW_TYPE_PREFERENCES_GROUP)

const char *const nl_checkpoint_metric_titles[] = { N_("Test accuracy"), N_("Train accuracy"), N_("Train loss"), NULL };
static const char *const metric_names[] = { "test_accuracy", "train_accuracy", "train_loss" };

const char *
nl_checkpoint_metric_name (guint i)
{
  return metric_names[MIN (i, G_N_ELEMENTS (metric_names) - 1)];
}

void
nl_checkpoint_group_get (NlCheckpointGroup *self, NlRunConfig *rc)
{
  g_return_if_fail (NL_IS_CHECKPOINT_GROUP (self));
  nl_run_config_set_text (&rc->monitor, nl_checkpoint_metric_name (adw_combo_row_get_selected (self->monitor_row)));
  rc->keep_last = gtk_spin_button_get_value_as_int (self->keep);
  rc->checkpoint_interval = gtk_spin_button_get_value (self->interval);
  rc->restore_best = gtk_switch_get_active (self->restore_best);
}

GtkWidget *
nl_checkpoint_group_get_control (NlCheckpointGroup *self, const char *name)
{
  g_return_val_if_fail (NL_IS_CHECKPOINT_GROUP (self), NULL);
  return self->rows.fields && name ? g_hash_table_lookup (self->rows.fields, name) : NULL;
}

/* nothing here changes what else the form shows */
static void
changed (NlCheckpointGroup *self)
{
}

static void
nl_checkpoint_group_dispose (GObject *object)
{
  NlCheckpointGroup *self = NL_CHECKPOINT_GROUP (object);
  g_clear_pointer (&self->rows.fields, g_hash_table_unref);
  gtk_widget_dispose_template (GTK_WIDGET (self), NL_TYPE_CHECKPOINT_GROUP);
  G_OBJECT_CLASS (nl_checkpoint_group_parent_class)->dispose (object);
}

static void
nl_checkpoint_group_class_init (NlCheckpointGroupClass *klass)
{
  G_OBJECT_CLASS (klass)->dispose = nl_checkpoint_group_dispose;
  gtk_widget_class_set_template_from_resource (GTK_WIDGET_CLASS (klass),
                                               "/io/github/netloom/Netloom/ui/nl-checkpoint-group.ui");
}

static void
nl_checkpoint_group_init (NlCheckpointGroup *self)
{
  GtkWidget *g = GTK_WIDGET (self);
  NlFormRows *r = &self->rows;
  g_autoptr (GListModel) metrics = nl_form_titles (nl_checkpoint_metric_titles);

  gtk_widget_init_template (g);
  self->rows = (NlFormRows) { g_hash_table_new (g_str_hash, g_str_equal), G_CALLBACK (changed), G_OBJECT (self) };
  self->keep = nl_form_rows_setting (r, g, "keep", "keep_last", _("Keep last"),
                                     _("Checkpoints kept besides the best"), 1, 0);
  self->interval = nl_form_rows_setting (r, g, "checkpoint-interval", "checkpoint_interval", _("Every (seconds)"),
                                         _("Also checkpoint inside an epoch this often (0: at epoch ends only); "
                                           "only the newest such checkpoint is kept"), 60, 0);
  self->monitor_row = nl_form_rows_combo (r, g, "monitor", _("Best by"), _("What the best checkpoint is best at"),
                                          metrics);
  self->restore_best = nl_form_rows_switch (r, g, "restore-best", _("Restore best"),
                                            _("End with the best epoch's weights as the newest checkpoint"));
}
