/* nl-form-rows.c — the rows of settings forms, one line per setting. */
#include "ui/widgets/nl-form-rows.h"
#include <glib/gi18n.h>
#include "engine/session/nl-run-pipeline.h"

#include <math.h>

void
nl_form_rows_add (GtkWidget *parent, GtkWidget *row)
{
  if (ADW_IS_EXPANDER_ROW (parent))
    adw_expander_row_add_row (ADW_EXPANDER_ROW (parent), row);
  else
    adw_preferences_group_add (ADW_PREFERENCES_GROUP (parent), row);
}

/* Rates and small constants read as "1e-08" rather than in fixed decimals. */
static gboolean
spin_output_g (GtkSpinButton *spin, gpointer data)
{
  char buf[G_ASCII_DTOSTR_BUF_SIZE];
  g_ascii_formatd (buf, sizeof buf, "%g", gtk_adjustment_get_value (gtk_spin_button_get_adjustment (spin)));
  if (g_strcmp0 (buf, gtk_editable_get_text (GTK_EDITABLE (spin))) != 0)
    gtk_editable_set_text (GTK_EDITABLE (spin), buf);
  return TRUE;
}

static int
spin_input_g (GtkSpinButton *spin, double *value, gpointer data)
{
  g_autofree char *text = g_strstrip (g_strdup (gtk_editable_get_text (GTK_EDITABLE (spin))));
  char *end = NULL;
  double v = g_ascii_strtod (text, &end);
  if (!*text || !end || *end || !isfinite (v))
    return GTK_INPUT_ERROR;
  *value = v;
  return TRUE;
}

GtkSpinButton *
nl_form_rows_spin (NlFormRows *r, GtkWidget *parent, const char *key, const char *title, const char *subtitle,
                   double lower, double upper, double step, int digits, double value)
{
  GtkAdjustment *adj = gtk_adjustment_new (value, lower, upper, step, step * 10, 0);
  GtkWidget *spin = gtk_spin_button_new (adj, step, MAX (digits, 0));
  GtkWidget *row = adw_action_row_new ();

  adw_preferences_row_set_title (ADW_PREFERENCES_ROW (row), title);
  if (subtitle)
    adw_action_row_set_subtitle (ADW_ACTION_ROW (row), subtitle);
  gtk_widget_set_valign (spin, GTK_ALIGN_CENTER);
  if (digits < 0)
    {
      /* digits < 0: general format, any magnitude */
      gtk_spin_button_set_digits (GTK_SPIN_BUTTON (spin), 12);
      gtk_editable_set_width_chars (GTK_EDITABLE (spin), 7);
      g_signal_connect (spin, "output", G_CALLBACK (spin_output_g), NULL);
      g_signal_connect (spin, "input", G_CALLBACK (spin_input_g), NULL);
      spin_output_g (GTK_SPIN_BUTTON (spin), NULL);
    }
  else
    gtk_spin_button_set_numeric (GTK_SPIN_BUTTON (spin), TRUE);
  adw_action_row_add_suffix (ADW_ACTION_ROW (row), spin);
  adw_action_row_set_activatable_widget (ADW_ACTION_ROW (row), spin);
  nl_form_rows_add (parent, row);
  g_hash_table_insert (r->fields, (gpointer) key, spin);
  g_signal_connect_object (spin, "value-changed", r->changed, r->owner, G_CONNECT_SWAPPED);
  return GTK_SPIN_BUTTON (spin);
}

/* A spin row for the run setting FIELD, its range and default the run
 * settings' own (nl-run-config.c's table). A spin button has no open
 * bound: those move in by a hair; an endless one stops at 1e9, a seed at
 * 2^53 - 1 (what a double holds exactly). */
GtkSpinButton *
nl_form_rows_setting (NlFormRows *r, GtkWidget *parent, const char *key, const char *field, const char *title,
                      const char *subtitle, double step, int digits)
{
  const NlRunField *f = nl_run_config_find_field (field);
  g_auto (NlRunConfig) defaults = { 0 };
  double lo, hi;

  g_assert (f != NULL);
  nl_run_config_init (&defaults);
  lo = isinf (f->min) ? -1e9 : f->min;
  hi = isinf (f->max) ? 1e9 : f->max;
  if (f->flags & NL_RUN_FIELD_MIN_OPEN)
    lo = lo == 0 ? 1e-12 : lo + fabs (lo) * 1e-6;
  if (f->flags & NL_RUN_FIELD_MAX_OPEN)
    hi = hi == 1 ? 0.99999 : hi - fabs (hi) * 1e-6;
  if (f->type == NL_RUN_FIELD_SEED)
    hi = MIN (hi, 9007199254740991.0);
  return nl_form_rows_spin (r, parent, key, title, subtitle, lo, hi, step, digits,
                            nl_run_field_get_number (f, &defaults));
}

GtkSwitch *
nl_form_rows_switch (NlFormRows *r, GtkWidget *parent, const char *key, const char *title, const char *subtitle)
{
  GtkWidget *sw = gtk_switch_new ();
  GtkWidget *row = adw_action_row_new ();
  adw_preferences_row_set_title (ADW_PREFERENCES_ROW (row), title);
  if (subtitle)
    adw_action_row_set_subtitle (ADW_ACTION_ROW (row), subtitle);
  gtk_widget_set_valign (sw, GTK_ALIGN_CENTER);
  adw_action_row_add_suffix (ADW_ACTION_ROW (row), sw);
  adw_action_row_set_activatable_widget (ADW_ACTION_ROW (row), sw);
  nl_form_rows_add (parent, row);
  g_hash_table_insert (r->fields, (gpointer) key, sw);
  g_signal_connect_object (sw, "notify::active", r->changed, r->owner, G_CONNECT_SWAPPED);
  return GTK_SWITCH (sw);
}

AdwComboRow *
nl_form_rows_combo (NlFormRows *r, GtkWidget *parent, const char *key, const char *title, const char *subtitle,
                    GListModel *model)
{
  GtkWidget *row = adw_combo_row_new ();
  adw_preferences_row_set_title (ADW_PREFERENCES_ROW (row), title);
  if (subtitle)
    adw_action_row_set_subtitle (ADW_ACTION_ROW (row), subtitle);
  adw_combo_row_set_model (ADW_COMBO_ROW (row), model);
  nl_form_rows_add (parent, row);
  g_hash_table_insert (r->fields, (gpointer) key, row);
  g_signal_connect_object (row, "notify::selected", r->changed, r->owner, G_CONNECT_SWAPPED);
  return ADW_COMBO_ROW (row);
}

GListModel *
nl_form_strings (const char *const *items)
{
  return G_LIST_MODEL (gtk_string_list_new (items));
}

GListModel *
nl_form_titles (const char *const *items)
{
  GtkStringList *list = gtk_string_list_new (NULL);
  for (; *items; items++)
    gtk_string_list_append (list, _(*items));
  return G_LIST_MODEL (list);
}

void
nl_form_set_row_visible (GtkWidget *control, gboolean visible)
{
  GtkWidget *row = gtk_widget_get_ancestor (control, ADW_TYPE_PREFERENCES_ROW);
  gtk_widget_set_visible (row ? row : control, visible);
}
