/* nl-optimizer-group.c — the Training form's optimizer group. */
#include "ui/training/nl-optimizer-group.h"
#include <glib/gi18n.h>
#include "ui/widgets/nl-form-rows.h"

struct _NlOptimizerGroup {
  AdwPreferencesGroup parent_instance;
  NlFormRows rows;
  AdwComboRow *kind_row;
  GtkSpinButton *lr, *momentum, *wd, *beta1, *beta2, *epsilon, *rho, *clip_norm;
  GtkSwitch *nesterov, *centered;
  int shown_kind;            /* the kind whose rows and defaults are shown */
  gboolean filling;          /* set from settings: no reactions */
};

G_DEFINE_FINAL_TYPE (NlOptimizerGroup, nl_optimizer_group, ADW_TYPE_PREFERENCES_GROUP)

enum { CHANGED, N_SIGNALS };
static guint signals[N_SIGNALS];

/* the drop-down lists NlOptimKind in order */
G_STATIC_ASSERT (NL_OPTIM_SGD == 0 && NL_OPTIM_NAG == 1 && NL_OPTIM_ADAM == 2 && NL_OPTIM_ADAMW == 3
                 && NL_OPTIM_RMSPROP == 4 && NL_OPTIM_ADAGRAD == 5 && NL_OPTIM_COUNT == 6);
static const char *const kind_titles[] = { N_("SGD"), N_("Nesterov (NAG)"), N_("Adam"), N_("AdamW"), N_("RMSProp"),
                                           N_("AdaGrad"), NULL };

static double
spin (GtkSpinButton *s)
{
  return gtk_spin_button_get_value (s);
}

static NlOptimKind
selected_kind (NlOptimizerGroup *self)
{
  return MIN (adw_combo_row_get_selected (self->kind_row), NL_OPTIM_COUNT - 1);
}

static void
update_visibility (NlOptimizerGroup *self)
{
  NlOptimKind kind = selected_kind (self);
  gboolean adam = kind == NL_OPTIM_ADAM || kind == NL_OPTIM_ADAMW, rms = kind == NL_OPTIM_RMSPROP;

  nl_form_set_row_visible (GTK_WIDGET (self->momentum), kind == NL_OPTIM_SGD || kind == NL_OPTIM_NAG || rms);
  nl_form_set_row_visible (GTK_WIDGET (self->nesterov), kind == NL_OPTIM_SGD);
  nl_form_set_row_visible (GTK_WIDGET (self->beta1), adam);
  nl_form_set_row_visible (GTK_WIDGET (self->beta2), adam);
  nl_form_set_row_visible (GTK_WIDGET (self->epsilon), adam || rms || kind == NL_OPTIM_ADAGRAD);
  nl_form_set_row_visible (GTK_WIDGET (self->rho), rms);
  nl_form_set_row_visible (GTK_WIDGET (self->centered), rms);
}

static void
show (NlOptimizerGroup *self, const NlOptimConfig *o)
{
  gboolean was = self->filling;
  self->filling = TRUE;
  adw_combo_row_set_selected (self->kind_row, o->kind);
  self->shown_kind = o->kind;
  gtk_spin_button_set_value (self->lr, o->lr);
  gtk_spin_button_set_value (self->momentum, o->momentum);
  gtk_switch_set_active (self->nesterov, o->nesterov);
  gtk_spin_button_set_value (self->wd, o->wd);
  gtk_spin_button_set_value (self->beta1, o->beta1);
  gtk_spin_button_set_value (self->beta2, o->beta2);
  gtk_spin_button_set_value (self->epsilon, o->epsilon);
  gtk_spin_button_set_value (self->rho, o->rho);
  gtk_switch_set_active (self->centered, o->centered);
  self->filling = was;
}

/* Any row changed; a new kind starts from its own defaults (the run
 * settings'). */
static void
changed (NlOptimizerGroup *self)
{
  NlOptimKind kind;
  if (!self->rows.fields || !self->clip_norm || self->filling)
    return;  /* still building the rows, or being set */
  kind = selected_kind (self);
  if ((int) kind != self->shown_kind)
    {
      g_auto (NlRunConfig) rc = { 0 };
      nl_run_config_init (&rc);
      nl_run_config_set_optimizer (&rc, kind);
      show (self, &rc.optim);
    }
  update_visibility (self);
  g_signal_emit (self, signals[CHANGED], 0);
}

void
nl_optimizer_group_get (NlOptimizerGroup *self, NlOptimConfig *o)
{
  NlOptimKind kind;
  g_return_if_fail (NL_IS_OPTIMIZER_GROUP (self));
  kind = selected_kind (self);
  nl_optim_config_init (o, kind);
  o->lr = (float) spin (self->lr);
  o->wd = (float) spin (self->wd);
  o->clip_global_norm = (float) spin (self->clip_norm);
  switch (kind)
    {
    case NL_OPTIM_SGD:
      o->momentum = (float) spin (self->momentum);
      o->nesterov = gtk_switch_get_active (self->nesterov);
      break;
    case NL_OPTIM_NAG:
      o->momentum = (float) spin (self->momentum);
      break;
    case NL_OPTIM_ADAM:
    case NL_OPTIM_ADAMW:
      o->beta1 = (float) spin (self->beta1);
      o->beta2 = (float) spin (self->beta2);
      o->epsilon = (float) spin (self->epsilon);
      break;
    case NL_OPTIM_RMSPROP:
      o->rho = (float) spin (self->rho);
      o->momentum = (float) spin (self->momentum);
      o->epsilon = (float) spin (self->epsilon);
      o->centered = gtk_switch_get_active (self->centered);
      break;
    default:
      o->epsilon = (float) spin (self->epsilon);
    }
}

void
nl_optimizer_group_set (NlOptimizerGroup *self, const NlOptimConfig *o)
{
  g_return_if_fail (NL_IS_OPTIMIZER_GROUP (self));
  show (self, o);
  self->filling = TRUE;
  gtk_spin_button_set_value (self->clip_norm, o->clip_global_norm);
  self->filling = FALSE;
  update_visibility (self);
}

double
nl_optimizer_group_get_lr (NlOptimizerGroup *self)
{
  g_return_val_if_fail (NL_IS_OPTIMIZER_GROUP (self), 0);
  return spin (self->lr);
}

GtkWidget *
nl_optimizer_group_get_control (NlOptimizerGroup *self, const char *name)
{
  g_return_val_if_fail (NL_IS_OPTIMIZER_GROUP (self), NULL);
  return self->rows.fields && name ? g_hash_table_lookup (self->rows.fields, name) : NULL;
}

static void
nl_optimizer_group_dispose (GObject *object)
{
  NlOptimizerGroup *self = NL_OPTIMIZER_GROUP (object);
  g_clear_pointer (&self->rows.fields, g_hash_table_unref);
  gtk_widget_dispose_template (GTK_WIDGET (self), NL_TYPE_OPTIMIZER_GROUP);
  G_OBJECT_CLASS (nl_optimizer_group_parent_class)->dispose (object);
}

static void
nl_optimizer_group_class_init (NlOptimizerGroupClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = nl_optimizer_group_dispose;
  gtk_widget_class_set_template_from_resource (widget_class, "/io/github/netloom/Netloom/ui/nl-optimizer-group.ui");
  signals[CHANGED] = g_signal_new ("changed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                                   G_TYPE_NONE, 0);
}

static void
nl_optimizer_group_init (NlOptimizerGroup *self)
{
  GtkWidget *g = GTK_WIDGET (self);
  NlFormRows *r = &self->rows;
  g_autoptr (GListModel) kinds = nl_form_titles (kind_titles);

  gtk_widget_init_template (g);
  self->rows = (NlFormRows) { g_hash_table_new (g_str_hash, g_str_equal), G_CALLBACK (changed), G_OBJECT (self) };
  self->shown_kind = NL_OPTIM_SGD;
  self->kind_row = nl_form_rows_combo (r, g, "optimizer", _("Optimizer"), NULL, kinds);
  self->lr = nl_form_rows_setting (r, g, "lr", "lr", _("Learning rate"), _("The base rate; the schedule scales it"),
                                   0.001,
                                   -1);
  self->momentum = nl_form_rows_setting (r, g, "momentum", "momentum", _("Momentum"), NULL, 0.01, -1);
  self->nesterov = nl_form_rows_switch (r, g, "nesterov", _("Nesterov momentum"), NULL);
  self->beta1 = nl_form_rows_setting (r, g, "beta1", "beta1", _("β₁"), _("Decay of the mean of gradients"), 0.01,
                                      -1);
  self->beta2 = nl_form_rows_setting (r, g, "beta2", "beta2", _("β₂"), _("Decay of the mean of squared gradients"),
                                      0.001,
                                      -1);
  self->rho = nl_form_rows_setting (r, g, "rho", "rho", _("ρ"), _("Decay of the mean of squared gradients"), 0.01, -1);
  self->epsilon = nl_form_rows_setting (r, g, "epsilon", "epsilon", "ε", NULL, 1e-8, -1);
  self->centered = nl_form_rows_switch (r, g, "centered", _("Centered"), _("Normalise by the variance of gradients"));
  self->wd = nl_form_rows_setting (r, g, "wd", "wd", _("Weight decay"), NULL, 1e-4, -1);
  self->clip_norm = nl_form_rows_setting (r, g, "clip-norm", "clip_global_norm", _("Clip gradient norm"),
                                          _("Global L2 norm; 0 is off"), 0.1, -1);
  update_visibility (self);
}
