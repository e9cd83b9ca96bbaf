/* nl-early-stop-group.c — the Training form's early stopping group. */
#include "ui/training/nl-early-stop-group.h"
#include <glib/gi18n.h>
#include "ui/training/nl-checkpoint-group.h"
#include "ui/widgets/nl-form-rows.h"

struct _NlEarlyStopGroup {
  AdwPreferencesGroup parent_instance;
  NlFormRows rows;
  AdwExpanderRow *early_row;   /* its switch turns early stopping on */
  AdwComboRow *metric_row;
  GtkSpinButton *patience, *min_delta;
};

G_DEFINE_FINAL_TYPE (NlEarlyStopGroup, nl_early_stop_group, ADW_TYPE_PREFERENCES_GROUP)

void
nl_early_stop_group_get (NlEarlyStopGroup *self, NlRunConfig *rc)
{
  g_return_if_fail (NL_IS_EARLY_STOP_GROUP (self));
  nl_run_config_set_text (&rc->early_stop_metric,
                          adw_expander_row_get_enable_expansion (self->early_row)
                            ? nl_checkpoint_metric_name (adw_combo_row_get_selected (self->metric_row)) : NULL);
  rc->patience = gtk_spin_button_get_value_as_int (self->patience);
  rc->min_delta = gtk_spin_button_get_value (self->min_delta);
}

GtkWidget *
nl_early_stop_group_get_control (NlEarlyStopGroup *self, const char *name)
{
  g_return_val_if_fail (NL_IS_EARLY_STOP_GROUP (self), NULL);
  return self->rows.fields && name ? g_hash_table_lookup (self->rows.fields, name) : NULL;
}

/* nothing here changes what else the form shows */
static void
changed (NlEarlyStopGroup *self)
{
}

static void
nl_early_stop_group_dispose (GObject *object)
{
  NlEarlyStopGroup *self = NL_EARLY_STOP_GROUP (object);
  g_clear_pointer (&self->rows.fields, g_hash_table_unref);
  gtk_widget_dispose_template (GTK_WIDGET (self), NL_TYPE_EARLY_STOP_GROUP);
  G_OBJECT_CLASS (nl_early_stop_group_parent_class)->dispose (object);
}

static void
nl_early_stop_group_class_init (NlEarlyStopGroupClass *klass)
{
  G_OBJECT_CLASS (klass)->dispose = nl_early_stop_group_dispose;
  gtk_widget_class_set_template_from_resource (GTK_WIDGET_CLASS (klass),
                                               "/io/github/netloom/Netloom/ui/nl-early-stop-group.ui");
}

static void
nl_early_stop_group_init (NlEarlyStopGroup *self)
{
  NlFormRows *r = &self->rows;
  GtkWidget *row;
  g_autoptr (GListModel) metrics = nl_form_titles (nl_checkpoint_metric_titles);

  gtk_widget_init_template (GTK_WIDGET (self));
  self->rows = (NlFormRows) { g_hash_table_new (g_str_hash, g_str_equal), G_CALLBACK (changed), G_OBJECT (self) };
  self->early_row = ADW_EXPANDER_ROW (adw_expander_row_new ());
  row = GTK_WIDGET (self->early_row);
  adw_preferences_row_set_title (ADW_PREFERENCES_ROW (row), _("Stop when it stops improving"));
  adw_expander_row_set_subtitle (self->early_row, _("Ends the run as finished"));
  adw_expander_row_set_show_enable_switch (self->early_row, TRUE);
  adw_expander_row_set_enable_expansion (self->early_row, FALSE);
  nl_form_rows_add (GTK_WIDGET (self), row);
  g_hash_table_insert (r->fields, (gpointer) "early-stopping", row);
  self->metric_row = nl_form_rows_combo (r, row, "early-metric", _("Metric"), NULL, metrics);
  self->patience = nl_form_rows_setting (r, row, "patience", "patience", _("Patience"),
                                         _("Epochs in a row without improvement"), 1, 0);
  self->min_delta = nl_form_rows_setting (r, row, "min-delta", "min_delta", _("Minimum improvement"), NULL, 0.001, -1);
}
