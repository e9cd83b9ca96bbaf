/* nl-schedule-group.c — the Training form's learning-rate schedule group. */
#include "ui/training/nl-schedule-group.h"
#include <glib/gi18n.h>
#include <inttypes.h>
#include "ui/widgets/nl-form-rows.h"

#include <string.h>

struct _NlScheduleGroup {
  AdwPreferencesGroup parent_instance;
  NlFormRows rows;
  AdwComboRow *kind_row;
  GtkSpinButton *step, *factor, *power, *final_lr, *warmup, *warmup_lr;
  AdwEntryRow *milestones_row;
  NlLrPreview *preview;
  GtkLabel *caption;         /* under the preview: steps and epochs */
};

G_DEFINE_FINAL_TYPE (NlScheduleGroup, nl_schedule_group, ADW_TYPE_PREFERENCES_GROUP)

enum { CHANGED, N_SIGNALS };
static guint signals[N_SIGNALS];

enum { SCHED_CONSTANT, SCHED_FACTOR, SCHED_MULTIFACTOR, SCHED_COSINE, SCHED_POLY };
static const char *const schedule_titles[] = { N_("Constant"), N_("Step decay"), N_("Multi-step decay"), N_("Cosine"),
                                               N_("Polynomial"), NULL };
static const char *const schedule_names[] = { "constant", "factor", "multifactor", "cosine", "poly" };

static double
spin (GtkSpinButton *s)
{
  return gtk_spin_button_get_value (s);
}

/* ---- the spec ---- */

char *
nl_schedule_group_get_spec (NlScheduleGroup *self)
{
  GString *s = g_string_new (NULL);
  char a[G_ASCII_DTOSTR_BUF_SIZE], b[G_ASCII_DTOSTR_BUF_SIZE];
  guint kind = adw_combo_row_get_selected (self->kind_row);
  switch (kind)
    {
    case SCHED_FACTOR:
      g_string_append_printf (s, "factor:%.0f:%s", spin (self->step),
                              g_ascii_formatd (a, sizeof a, "%g", spin (self->factor)));
      break;
    case SCHED_MULTIFACTOR:
      {
        g_autofree char *m = g_strdup (gtk_editable_get_text (GTK_EDITABLE (self->milestones_row)));
        g_strdelimit (g_strstrip (m), " ;", ',');
        g_string_append_printf (s, "multifactor:%s:%s", m, g_ascii_formatd (a, sizeof a, "%g", spin (self->factor)));
        break;
      }
    case SCHED_COSINE:
      g_string_append (s, "cosine");
      if (spin (self->final_lr) > 0)
        g_string_append_printf (s, ":%s", g_ascii_formatd (a, sizeof a, "%g", spin (self->final_lr)));
      break;
    case SCHED_POLY:
      g_string_append_printf (s, "poly:%s:%s", g_ascii_formatd (a, sizeof a, "%g", spin (self->power)),
                              g_ascii_formatd (b, sizeof b, "%g", spin (self->final_lr)));
      break;
    default:
      g_string_append (s, "constant");
    }
  if (spin (self->warmup) >= 1)
    {
      g_string_append_printf (s, "+warmup:%.0f", spin (self->warmup));
      if (spin (self->warmup_lr) > 0)
        g_string_append_printf (s, ":%s", g_ascii_formatd (a, sizeof a, "%g", spin (self->warmup_lr)));
    }
  return g_string_free (s, FALSE);
}

/* The form from a spec; unknown parts keep their rows' values. */
void
nl_schedule_group_set_spec (NlScheduleGroup *self, const char *spec)
{
  g_autofree char *lower = g_ascii_strdown (spec ? spec : "constant", -1);
  char *warm = strstr (lower, "+warmup:");
  g_auto (GStrv) parts = NULL;
  guint kind = SCHED_CONSTANT;

  gtk_spin_button_set_value (self->warmup, 0);
  gtk_spin_button_set_value (self->warmup_lr, 0);
  if (warm)
    {
      g_auto (GStrv) w = g_strsplit (warm + strlen ("+warmup:"), ":", 2);
      *warm = '\0';
      gtk_spin_button_set_value (self->warmup, g_ascii_strtod (w[0], NULL));
      if (w[0] && w[1])
        gtk_spin_button_set_value (self->warmup_lr, g_ascii_strtod (w[1], NULL));
    }
  parts = g_strsplit (g_strstrip (lower), ":", -1);
  for (guint i = 0; i < G_N_ELEMENTS (schedule_names); i++)
    if (parts[0] && !strcmp (parts[0], schedule_names[i]))
      kind = i;
  adw_combo_row_set_selected (self->kind_row, kind);
  if (kind == SCHED_FACTOR && parts[1])
    {
      gtk_spin_button_set_value (self->step, g_ascii_strtod (parts[1], NULL));
      if (parts[2])
        gtk_spin_button_set_value (self->factor, g_ascii_strtod (parts[2], NULL));
    }
  else if (kind == SCHED_MULTIFACTOR && parts[1])
    {
      gtk_editable_set_text (GTK_EDITABLE (self->milestones_row), parts[1]);
      if (parts[2])
        gtk_spin_button_set_value (self->factor, g_ascii_strtod (parts[2], NULL));
    }
  else if (kind == SCHED_COSINE)
    gtk_spin_button_set_value (self->final_lr, parts[1] ? g_ascii_strtod (parts[1], NULL) : 0);
  else if (kind == SCHED_POLY)
    {
      gtk_spin_button_set_value (self->power, parts[1] ? g_ascii_strtod (parts[1], NULL) : 2);
      gtk_spin_button_set_value (self->final_lr, parts[1] && parts[2] ? g_ascii_strtod (parts[2], NULL) : 0);
    }
}

static void
add_preview_row (NlScheduleGroup *self, GtkWidget *group)
{
  GtkWidget *row = adw_preferences_row_new ();
  GtkWidget *box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 4);
  GtkWidget *preview = nl_lr_preview_new ();
  GtkWidget *caption = gtk_label_new (NULL);

  gtk_list_box_row_set_activatable (GTK_LIST_BOX_ROW (row), FALSE);
  adw_preferences_row_set_title (ADW_PREFERENCES_ROW (row), _("Rate over the run"));
  gtk_widget_set_margin_start (box, 12);
  gtk_widget_set_margin_end (box, 12);
  gtk_widget_set_margin_top (box, 10);
  gtk_widget_set_margin_bottom (box, 8);
  gtk_widget_set_size_request (preview, -1, 88);
  gtk_widget_set_tooltip_text (preview,
                               _("The learning rate at every step of the run, as the trainer will compute it"));
  gtk_label_set_xalign (GTK_LABEL (caption), 0);
  gtk_widget_add_css_class (caption, "caption");
  gtk_widget_add_css_class (caption, "dim-label");
  gtk_box_append (GTK_BOX (box), preview);
  gtk_box_append (GTK_BOX (box), caption);
  gtk_list_box_row_set_child (GTK_LIST_BOX_ROW (row), box);
  nl_form_rows_add (group, row);
    self->preview = NL_LR_PREVIEW (preview);
  self->caption = GTK_LABEL (caption);
  g_hash_table_insert (self->rows.fields, (gpointer) "lr-preview", preview);
}

/* ---- reactions ---- */

static void
update_visibility (NlScheduleGroup *self)
{
  guint sched = adw_combo_row_get_selected (self->kind_row);

  nl_form_set_row_visible (GTK_WIDGET (self->step), sched == SCHED_FACTOR);
  nl_form_set_row_visible (GTK_WIDGET (self->factor), sched == SCHED_FACTOR || sched == SCHED_MULTIFACTOR);
  gtk_widget_set_visible (GTK_WIDGET (self->milestones_row), sched == SCHED_MULTIFACTOR);
  nl_form_set_row_visible (GTK_WIDGET (self->final_lr), sched == SCHED_COSINE || sched == SCHED_POLY);
  nl_form_set_row_visible (GTK_WIDGET (self->power), sched == SCHED_POLY);
  nl_form_set_row_visible (GTK_WIDGET (self->warmup_lr), spin (self->warmup) >= 1);
}

static void
changed (NlScheduleGroup *self)
{
  if (!self->preview)
    return;  /* still building the rows */
  update_visibility (self);
  g_signal_emit (self, signals[CHANGED], 0);
}

void
nl_schedule_group_preview (NlScheduleGroup *self, double lr, gint64 epochs, gint64 steps_per_epoch)
{
  g_autofree char *spec = NULL;
  gint64 spe = steps_per_epoch > 0 ? steps_per_epoch : 100;
  g_autofree char *caption = NULL;

  g_return_if_fail (NL_IS_SCHEDULE_GROUP (self));
  spec = nl_schedule_group_get_spec (self);
  if (nl_lr_preview_set_schedule (self->preview, spec, lr, epochs * spe, spe, NULL))
    caption = steps_per_epoch > 0
                ? g_strdup_printf (_("%" PRId64 " steps: %" PRId64 " epochs × %" PRId64),
                                   epochs * spe, epochs, spe)
                : g_strdup_printf (_("%" PRId64 " epochs (steps per epoch not known yet)"), epochs);
  gtk_label_set_label (self->caption, caption ? caption : "");
  gtk_widget_set_visible (GTK_WIDGET (self->caption), caption != NULL);
}

const char *
nl_schedule_group_get_error (NlScheduleGroup *self)
{
  g_return_val_if_fail (NL_IS_SCHEDULE_GROUP (self), NULL);
  return nl_lr_preview_get_error (self->preview);
}

GtkWidget *
nl_schedule_group_get_control (NlScheduleGroup *self, const char *name)
{
  g_return_val_if_fail (NL_IS_SCHEDULE_GROUP (self), NULL);
  return self->rows.fields && name ? g_hash_table_lookup (self->rows.fields, name) : NULL;
}

/* ---- GObject ---- */

static void
nl_schedule_group_dispose (GObject *object)
{
  NlScheduleGroup *self = NL_SCHEDULE_GROUP (object);
  g_clear_pointer (&self->rows.fields, g_hash_table_unref);
  gtk_widget_dispose_template (GTK_WIDGET (self), NL_TYPE_SCHEDULE_GROUP);
  G_OBJECT_CLASS (nl_schedule_group_parent_class)->dispose (object);
}

static void
nl_schedule_group_class_init (NlScheduleGroupClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = nl_schedule_group_dispose;
  gtk_widget_class_set_template_from_resource (widget_class, "/io/github/netloom/Netloom/ui/nl-schedule-group.ui");
  signals[CHANGED] = g_signal_new ("changed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                                   G_TYPE_NONE, 0);
}

static void
nl_schedule_group_init (NlScheduleGroup *self)
{
  GtkWidget *g = GTK_WIDGET (self);
  NlFormRows *r = &self->rows;
  g_autoptr (GListModel) kinds = nl_form_titles (schedule_titles);

  gtk_widget_init_template (g);
  self->rows = (NlFormRows) { g_hash_table_new (g_str_hash, g_str_equal), G_CALLBACK (changed), G_OBJECT (self) };
  self->kind_row = nl_form_rows_combo (r, g, "schedule", _("Schedule"), NULL, kinds);
  self->step = nl_form_rows_spin (r, g, "step", _("Every"), _("Steps between decays"), 1, 1e9, 100, 0, 1000);
  self->milestones_row = ADW_ENTRY_ROW (adw_entry_row_new ());
  adw_preferences_row_set_title (ADW_PREFERENCES_ROW (self->milestones_row), _("Milestones (steps, e.g. 1000,2000)"));
  nl_form_rows_add (g, GTK_WIDGET (self->milestones_row));
  g_hash_table_insert (r->fields, (gpointer) "milestones", self->milestones_row);
  g_signal_connect_object (self->milestones_row, "changed", G_CALLBACK (changed), self, G_CONNECT_SWAPPED);
  self->factor = nl_form_rows_spin (r, g, "factor", _("Factor"), _("Multiplies the rate at each decay"), 0.001, 1,
                                    0.05, -1,
                                    0.5);
  self->power = nl_form_rows_spin (r, g, "power", _("Power"), NULL, 0.1, 10, 0.5, -1, 2);
  self->final_lr = nl_form_rows_spin (r, g, "final-lr", _("Final rate"), NULL, 0, 10, 0.0001, -1, 0);
  self->warmup = nl_form_rows_spin (r, g, "warmup", _("Warm-up"), _("Steps of linear ramp; 0 is off"), 0, 1e9, 100, 0,
                                    0);
  self->warmup_lr = nl_form_rows_spin (r, g, "warmup-lr", _("Warm-up start rate"), NULL, 0, 10, 0.001, -1, 0);
  add_preview_row (self, g);
  update_visibility (self);
}
