/* nl-data-page-transforms.c — the Data page's transform list editor: one
 * row per transform with its parameters (spin buttons or entries from the
 * catalogue in nl-data-preview.h), add / remove / move actions. */
#include "ui/data/nl-data-page-private.h"
#include <glib/gi18n.h>

#include <math.h>
#include <string.h>

static void
on_param_changed (GtkWidget *editor, NlDataPage *page)
{
  guint s = GPOINTER_TO_UINT (g_object_get_data (G_OBJECT (editor), "step"));
  int k = GPOINTER_TO_INT (g_object_get_data (G_OBJECT (editor), "param"));
  NlTransformStep *step;
  g_autofree char *text = NULL, *item = NULL, *problem = NULL;

  if (page->filling || s >= page->steps->len)
    return;
  step = page->steps->pdata[s];
  if (GTK_IS_SPIN_BUTTON (editor))
    {
      char buf[G_ASCII_DTOSTR_BUF_SIZE];
      double v = gtk_spin_button_get_value (GTK_SPIN_BUTTON (editor));
      int digits = (int) gtk_spin_button_get_digits (GTK_SPIN_BUTTON (editor));
      v = round (v * pow (10, digits)) / pow (10, digits);
      text = g_strdup (g_ascii_formatd (buf, sizeof buf, "%g", v));
    }
  else
    text = g_strstrip (g_strdup (gtk_editable_get_text (GTK_EDITABLE (editor))));
  g_free (step->values[k]);
  step->values[k] = g_steal_pointer (&text);
  item = nl_transform_step_to_string (step);
  /* a half-typed value is marked, not applied */
  if ((problem = nl_transform_spec_problem (item)))
    {
      gtk_widget_add_css_class (editor, "error");
      gtk_widget_set_tooltip_text (editor, problem);
      return;
    }
  gtk_widget_remove_css_class (editor, "error");
  gtk_widget_set_tooltip_text (editor, _(step->info->params[k].doc));
  adw_expander_row_set_subtitle (g_object_get_data (G_OBJECT (editor), "row"), item);
  g_clear_pointer (&page->raw_transforms, g_free);
  _nl_data_page_set_dirty (page);
  _nl_data_page_schedule_reload (page, FALSE);
}

static GtkWidget *
param_editor (const NlTransformParamInfo *pi, const char *value)
{
  GtkWidget *w;
  if (pi->type == NL_TRANSFORM_PARAM_INT || pi->type == NL_TRANSFORM_PARAM_DOUBLE)
    {
      w = gtk_spin_button_new_with_range (pi->min, pi->max, pi->step);
      gtk_spin_button_set_digits (GTK_SPIN_BUTTON (w), pi->type == NL_TRANSFORM_PARAM_INT ? 0 : pi->digits);
      gtk_spin_button_set_value (GTK_SPIN_BUTTON (w), value && *value ? g_ascii_strtod (value, NULL) : 0);
    }
  else
    {
      w = gtk_entry_new ();
      gtk_editable_set_width_chars (GTK_EDITABLE (w), 9);
      gtk_editable_set_text (GTK_EDITABLE (w), value ? value : "");
    }
  gtk_widget_set_valign (w, GTK_ALIGN_CENTER);
  gtk_widget_set_tooltip_text (w, _(pi->doc));
  return w;
}

/* the row's own controls: remove, and a menu to move it */
static void
add_row_controls (GtkWidget *row, gboolean expander, guint index, guint n)
{
  g_autoptr (GMenu) menu = g_menu_new ();
  GtkWidget *remove = gtk_button_new_from_icon_name ("list-remove-symbolic");
  GtkWidget *more = gtk_menu_button_new ();
  const char *labels[] = { "Move _Up", "Move _Down" }, *actions[] = { "data.transform-up", "data.transform-down" };
  gboolean allowed[] = { index > 0, index + 1 < n };

  for (int i = 0; i < 2; i++)
    if (allowed[i])
      {
        g_autoptr (GMenuItem) item = g_menu_item_new (labels[i], NULL);
        g_menu_item_set_action_and_target_value (item, actions[i], g_variant_new_int32 ((gint32) index));
        g_menu_append_item (menu, item);
      }
  gtk_menu_button_set_icon_name (GTK_MENU_BUTTON (more), "view-more-symbolic");
  gtk_menu_button_set_menu_model (GTK_MENU_BUTTON (more), G_MENU_MODEL (menu));
  gtk_widget_set_tooltip_text (more, _("Move"));
  gtk_widget_set_sensitive (more, n > 1);
  gtk_widget_set_tooltip_text (remove, _("Remove"));
  gtk_actionable_set_action_name (GTK_ACTIONABLE (remove), "data.transform-remove");
  gtk_actionable_set_action_target_value (GTK_ACTIONABLE (remove), g_variant_new_int32 ((gint32) index));
  for (int i = 0; i < 2; i++)
    {
      GtkWidget *w = i ? more : remove;
      gtk_widget_set_valign (w, GTK_ALIGN_CENTER);
      gtk_widget_add_css_class (w, "flat");
    }
  if (expander)  /* expander actions are packed from the end */
    {
      adw_expander_row_add_action (ADW_EXPANDER_ROW (row), more);
      adw_expander_row_add_action (ADW_EXPANDER_ROW (row), remove);
    }
  else
    {
      /* an invisible arrow keeps the buttons in line with expander rows' */
      GtkWidget *arrow = gtk_image_new_from_icon_name ("adw-expander-arrow-symbolic");
      gtk_widget_add_css_class (arrow, "expander-row-arrow");
      gtk_widget_set_opacity (arrow, 0);
      gtk_widget_set_can_target (arrow, FALSE);
      gtk_widget_set_margin_start (arrow, 6);
      GtkWidget *box = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 12);  /* as the expander's actions */
      gtk_box_append (GTK_BOX (box), remove);
      gtk_box_append (GTK_BOX (box), more);
      adw_action_row_add_suffix (ADW_ACTION_ROW (row), box);
      adw_action_row_add_suffix (ADW_ACTION_ROW (row), arrow);
    }
}

static GtkWidget *
transform_row (NlDataPage *page, guint index)
{
  NlTransformStep *step = page->steps->pdata[index];
  g_autofree char *item = nl_transform_step_to_string (step);
  gboolean expander = step->info->n_params > 0;
  GtkWidget *row = expander ? adw_expander_row_new () : adw_action_row_new ();

  adw_preferences_row_set_title (ADW_PREFERENCES_ROW (row), _(step->info->title));
  gtk_widget_set_tooltip_text (row, _(step->info->doc));
  add_row_controls (row, expander, index, page->steps->len);
  if (!expander)
    {
      adw_action_row_set_subtitle (ADW_ACTION_ROW (row), item);
      return row;
    }
  adw_expander_row_set_subtitle (ADW_EXPANDER_ROW (row), item);
  adw_expander_row_set_expanded (ADW_EXPANDER_ROW (row), (int) index == page->expand_step);
  for (int k = 0; k < step->info->n_params; k++)
    {
      const NlTransformParamInfo *pi = &step->info->params[k];
      GtkWidget *prow = adw_action_row_new ();
      GtkWidget *editor = param_editor (pi, step->values[k]);
      adw_preferences_row_set_title (ADW_PREFERENCES_ROW (prow), _(pi->title));
      adw_action_row_set_subtitle (ADW_ACTION_ROW (prow), _(pi->doc));
      adw_action_row_add_suffix (ADW_ACTION_ROW (prow), editor);
      g_object_set_data (G_OBJECT (editor), "step", GUINT_TO_POINTER (index));
      g_object_set_data (G_OBJECT (editor), "param", GINT_TO_POINTER (k));
      g_object_set_data (G_OBJECT (editor), "row", row);
      g_signal_connect (editor, GTK_IS_SPIN_BUTTON (editor) ? "value-changed" : "changed",
                        G_CALLBACK (on_param_changed), page);
      adw_expander_row_add_row (ADW_EXPANDER_ROW (row), prow);
    }
  return row;
}

void
_nl_data_page_rebuild_transforms (NlDataPage *page)
{
  GtkWidget *child;
  page->filling++;
  while ((child = gtk_widget_get_first_child (GTK_WIDGET (page->transform_list))))
    gtk_list_box_remove (page->transform_list, child);
  for (guint i = 0; i < page->steps->len; i++)
    gtk_list_box_append (page->transform_list, transform_row (page, i));
  page->filling--;
}

/* a structural edit of the list (add, remove, move) */
static void
transforms_edited (NlDataPage *page, int expand)
{
  g_clear_pointer (&page->raw_transforms, g_free);
  page->expand_step = expand;
  _nl_data_page_rebuild_transforms (page);
  _nl_data_page_set_dirty (page);
  _nl_data_page_schedule_reload (page, FALSE);
}

static void
add_transform_action (GtkWidget *widget, const char *action, GVariant *param)
{
  NlDataPage *page = NL_DATA_PAGE (widget);
  g_assert (NL_IS_DATA_PAGE (widget));
  g_assert (g_variant_is_of_type (param, G_VARIANT_TYPE_STRING));
  const NlTransformSpecInfo *info = nl_data_transform_lookup (g_variant_get_string (param, NULL));
  if (!info || !page->current)
    return;
  g_ptr_array_add (page->steps,
                   nl_transform_step_new (info, page->preview ? &page->preview->sample_shape : NULL));
  transforms_edited (page, (int) page->steps->len - 1);
}

static void
edit_transform_action (GtkWidget *widget, const char *action, GVariant *param)
{
  NlDataPage *page = NL_DATA_PAGE (widget);
  g_assert (NL_IS_DATA_PAGE (widget));
  g_assert (g_variant_is_of_type (param, G_VARIANT_TYPE_INT32));
  int i = g_variant_get_int32 (param), j = i;
  if (i < 0 || i >= (int) page->steps->len)
    return;
  if (strcmp (action, "data.transform-remove") == 0)
    {
      g_ptr_array_remove_index (page->steps, i);
      transforms_edited (page, -1);
      return;
    }
  j = strcmp (action, "data.transform-up") == 0 ? i - 1 : i + 1;
  if (j < 0 || j >= (int) page->steps->len)
    return;
  {
    gpointer t = page->steps->pdata[i];
    page->steps->pdata[i] = page->steps->pdata[j];
    page->steps->pdata[j] = t;
  }
  transforms_edited (page, page->expand_step == i ? j : -1);
}

void
_nl_data_page_install_transform_actions (GtkWidgetClass *klass)
{
  gtk_widget_class_install_action (klass, "data.add-transform", "s", add_transform_action);
  gtk_widget_class_install_action (klass, "data.transform-remove", "i", edit_transform_action);
  gtk_widget_class_install_action (klass, "data.transform-up", "i", edit_transform_action);
  gtk_widget_class_install_action (klass, "data.transform-down", "i", edit_transform_action);
}
