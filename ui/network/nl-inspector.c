/* nl-inspector.c — a form generated from NlParamSpec. */
#include "ui/network/nl-inspector.h"
#include <glib/gi18n.h>

#include <adwaita.h>
#include <math.h>

struct _NlInspector {
  GtkWidget parent_instance;
  GtkWidget *scrolled;
  GtkWidget *content;       /* rebuilt per node */
  NlNetworkDoc *doc;
  int node;
  const NlOpDef *def;       /* of the node shown */
  GHashTable *fields;       /* param name -> widget */
  gboolean updating;        /* writing document values into widgets */
};

G_DEFINE_FINAL_TYPE (NlInspector, nl_inspector, GTK_TYPE_WIDGET)

enum { PROBLEM, N_SIGNALS };
static guint signals[N_SIGNALS];

static void rebuild (NlInspector *self);

static const NlNode *
shown_node (NlInspector *self)
{
  const NlNetwork *net = nl_network_doc_get_network (self->doc);
  return self->node >= 0 && self->node < nl_network_n_nodes (net) ? nl_network_node (net, self->node) : NULL;
}

static void
apply (NlInspector *self, const char *param, const char *text)
{
  g_autoptr (GError) error = NULL;
  gboolean ok;
  if (self->updating || self->node < 0)
    return;
  if (g_strcmp0 (param, "id") == 0)
    ok = nl_network_doc_rename_node (self->doc, self->node, text, &error);
  else
    ok = nl_network_doc_set_param (self->doc, self->node, param, text, &error);
  if (!ok)
    {
      g_signal_emit (self, signals[PROBLEM], 0, error->message);
      rebuild (self); /* show the document's value again */
    }
}

static const char *
field_param (GtkWidget *w)
{
  return g_object_get_data (G_OBJECT (w), "nl-param");
}

static void
spin_changed (GtkSpinButton *spin, NlInspector *self)
{
  char buf[G_ASCII_DTOSTR_BUF_SIZE];
  double v = gtk_spin_button_get_value (spin);
  if (gtk_spin_button_get_digits (spin) == 0)
    g_snprintf (buf, sizeof buf, "%.0f", v);
  else
    g_ascii_formatd (buf, sizeof buf, "%.9g", v);
  apply (self, field_param (GTK_WIDGET (spin)), buf);
}

static void
switch_changed (GtkSwitch *sw, GParamSpec *pspec, NlInspector *self)
{
  apply (self, field_param (GTK_WIDGET (sw)), gtk_switch_get_active (sw) ? "true" : "false");
}

static void
dropdown_changed (GtkDropDown *dd, GParamSpec *pspec, NlInspector *self)
{
  GtkStringObject *item = gtk_drop_down_get_selected_item (dd);
  if (item)
    apply (self, field_param (GTK_WIDGET (dd)), gtk_string_object_get_string (item));
}

static void
entry_activate (GtkEntry *entry, NlInspector *self)
{
  const char *text = gtk_editable_get_text (GTK_EDITABLE (entry));
  const char *old = g_object_get_data (G_OBJECT (entry), "nl-value");
  if (g_strcmp0 (text, old) != 0)
    apply (self, field_param (GTK_WIDGET (entry)), text);
}

static void
entry_focus_leave (GtkEventControllerFocus *focus, NlInspector *self)
{
  entry_activate (GTK_ENTRY (gtk_event_controller_get_widget (GTK_EVENT_CONTROLLER (focus))), self);
}

static GtkWidget *
make_entry (NlInspector *self, const char *param, const char *value)
{
  GtkWidget *entry = gtk_entry_new ();
  GtkEventController *focus = gtk_event_controller_focus_new ();
  gtk_editable_set_text (GTK_EDITABLE (entry), value);
  g_object_set_data_full (G_OBJECT (entry), "nl-value", g_strdup (value), g_free);
  gtk_editable_set_width_chars (GTK_EDITABLE (entry), 10);
  g_signal_connect (entry, "activate", G_CALLBACK (entry_activate), self);
  g_signal_connect (focus, "leave", G_CALLBACK (entry_focus_leave), self);
  gtk_widget_add_controller (entry, focus);
  return entry;
}

static GtkWidget *
make_field (NlInspector *self, const NlParamSpec *spec, const NlParamValue *v)
{
  GtkWidget *w;
  gboolean ranged = spec->min <= spec->max;
  switch (spec->type)
    {
    case NL_PARAM_INT:
    case NL_PARAM_FLOAT:
      {
        gboolean is_int = spec->type == NL_PARAM_INT;
        double lo = ranged ? spec->min : -1e12, hi = ranged ? MIN (spec->max, 1e12) : 1e12;
        w = gtk_spin_button_new_with_range (lo, hi, is_int ? 1 : 0.01);
        gtk_spin_button_set_digits (GTK_SPIN_BUTTON (w), is_int ? 0 : 4);
        gtk_spin_button_set_value (GTK_SPIN_BUTTON (w), is_int ? (double) v->i : v->f);
        g_signal_connect (w, "value-changed", G_CALLBACK (spin_changed), self);
        break;
      }
    case NL_PARAM_BOOL:
      w = gtk_switch_new ();
      gtk_switch_set_active (GTK_SWITCH (w), v->i != 0);
      g_signal_connect (w, "notify::active", G_CALLBACK (switch_changed), self);
      break;
    case NL_PARAM_ENUM:
      w = gtk_drop_down_new_from_strings (spec->enum_values);
      gtk_drop_down_set_selected (GTK_DROP_DOWN (w), (guint) v->i);
      g_signal_connect (w, "notify::selected", G_CALLBACK (dropdown_changed), self);
      break;
    default:
      {
        g_autofree char *text = nl_catalog_format_param (spec, v);
        w = make_entry (self, spec->name, text);
        gtk_entry_set_placeholder_text (GTK_ENTRY (w), spec->type == NL_PARAM_INT2 ? "5x5" : "1x28x28");
      }
    }
  gtk_widget_set_valign (w, GTK_ALIGN_CENTER);
  g_object_set_data_full (G_OBJECT (w), "nl-param", g_strdup (spec->name), g_free);
  gtk_accessible_update_property (GTK_ACCESSIBLE (w), GTK_ACCESSIBLE_PROPERTY_LABEL, spec->name, -1);
  return w;
}

static GtkWidget *
make_row (const char *title, const char *subtitle, GtkWidget *field)
{
  GtkWidget *row = adw_action_row_new ();
  adw_preferences_row_set_title (ADW_PREFERENCES_ROW (row), title);
  if (subtitle)
    {
      adw_action_row_set_subtitle (ADW_ACTION_ROW (row), subtitle);
      gtk_widget_set_tooltip_text (row, subtitle);
    }
  adw_action_row_add_suffix (ADW_ACTION_ROW (row), field);
  return row;
}

static void
rebuild (NlInspector *self)
{
  const NlNode *node;
  GtkWidget *group, *box;
  g_autofree char *heading = NULL;

  g_hash_table_remove_all (self->fields);
  self->def = NULL;
  node = self->doc ? shown_node (self) : NULL;
  if (!node)
    {
      int n = 0;
      if (self->doc)
        nl_network_doc_get_selection (self->doc, &n);
      self->content = adw_status_page_new ();
      adw_status_page_set_title (ADW_STATUS_PAGE (self->content), n > 1 ? _("Several Layers") : _("No Layer Selected"));
      adw_status_page_set_description (ADW_STATUS_PAGE (self->content),
                                       n > 1 ? _("Select one layer to see its properties")
                                             : _("Select a layer on the canvas to edit its properties"));
      gtk_widget_add_css_class (self->content, "compact");
      gtk_scrolled_window_set_child (GTK_SCROLLED_WINDOW (self->scrolled), self->content);
      return;
    }
  self->updating = TRUE;
  self->def = node->def;
  box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 12);
  gtk_widget_set_margin_start (box, 12);
  gtk_widget_set_margin_end (box, 12);
  gtk_widget_set_margin_top (box, 12);
  gtk_widget_set_margin_bottom (box, 12);

  group = adw_preferences_group_new ();
  heading = g_strdup_printf ("%s", node->def->name);
  adw_preferences_group_set_title (ADW_PREFERENCES_GROUP (group), heading);
  adw_preferences_group_set_description (ADW_PREFERENCES_GROUP (group), node->def->doc);
  {
    GtkWidget *id = make_entry (self, "id", node->id);
    gtk_widget_set_valign (id, GTK_ALIGN_CENTER);
    g_object_set_data_full (G_OBJECT (id), "nl-param", g_strdup ("id"), g_free);
    gtk_accessible_update_property (GTK_ACCESSIBLE (id), GTK_ACCESSIBLE_PROPERTY_LABEL, _("Layer name"), -1);
    g_hash_table_insert (self->fields, g_strdup ("id"), id);
    adw_preferences_group_add (ADW_PREFERENCES_GROUP (group), make_row (_("Name"), NULL, id));
  }
  gtk_box_append (GTK_BOX (box), group);

  if (node->def->n_params > 0)
    {
      group = adw_preferences_group_new ();
      adw_preferences_group_set_title (ADW_PREFERENCES_GROUP (group), _("Parameters"));
      for (int k = 0; k < node->def->n_params; k++)
        {
          const NlParamSpec *spec = &node->def->params[k];
          GtkWidget *field = make_field (self, spec, &node->params[k]);
          g_autofree char *title = spec->required ? g_strdup_printf ("%s *", spec->name) : g_strdup (spec->name);
          g_hash_table_insert (self->fields, g_strdup (spec->name), field);
          adw_preferences_group_add (ADW_PREFERENCES_GROUP (group), make_row (title, spec->doc, field));
        }
      gtk_box_append (GTK_BOX (box), group);
    }
  self->content = box;
  gtk_scrolled_window_set_child (GTK_SCROLLED_WINDOW (self->scrolled), box);
  self->updating = FALSE;
}

/* Values changed (undo, another field): write them into the widgets. */
static void
refresh_values (NlInspector *self)
{
  const NlNode *node = shown_node (self);
  if (!node || node->def != self->def)
    {
      rebuild (self);
      return;
    }
  self->updating = TRUE;
  {
    GtkWidget *id = g_hash_table_lookup (self->fields, "id");
    if (id && g_strcmp0 (gtk_editable_get_text (GTK_EDITABLE (id)), node->id) != 0)
      gtk_editable_set_text (GTK_EDITABLE (id), node->id);
    if (id)
      g_object_set_data_full (G_OBJECT (id), "nl-value", g_strdup (node->id), g_free);
  }
  for (int k = 0; k < node->def->n_params; k++)
    {
      const NlParamSpec *spec = &node->def->params[k];
      const NlParamValue *v = &node->params[k];
      GtkWidget *w = g_hash_table_lookup (self->fields, spec->name);
      if (GTK_IS_SPIN_BUTTON (w))
        gtk_spin_button_set_value (GTK_SPIN_BUTTON (w), spec->type == NL_PARAM_INT ? (double) v->i : v->f);
      else if (GTK_IS_SWITCH (w))
        gtk_switch_set_active (GTK_SWITCH (w), v->i != 0);
      else if (GTK_IS_DROP_DOWN (w))
        gtk_drop_down_set_selected (GTK_DROP_DOWN (w), (guint) v->i);
      else if (GTK_IS_ENTRY (w))
        {
          g_autofree char *text = nl_catalog_format_param (spec, v);
          gtk_editable_set_text (GTK_EDITABLE (w), text);
          g_object_set_data_full (G_OBJECT (w), "nl-value", g_steal_pointer (&text), g_free);
        }
    }
  self->updating = FALSE;
}

static void
selection_changed (NlInspector *self)
{
  int n;
  const int *sel = nl_network_doc_get_selection (self->doc, &n);
  int node = n == 1 ? sel[0] : -1;
  if (node != self->node || !self->def)
    {
      self->node = node;
      rebuild (self);
    }
}

static void
doc_changed (NlInspector *self)
{
  int n;
  const int *sel = nl_network_doc_get_selection (self->doc, &n);
  int node = n == 1 ? sel[0] : -1;
  if (node != self->node)
    {
      self->node = node;
      rebuild (self);
    }
  else if (node >= 0)
    refresh_values (self);
}

static void
nl_inspector_dispose (GObject *object)
{
  NlInspector *self = NL_INSPECTOR (object);
  nl_inspector_set_document (self, NULL);
  g_clear_pointer (&self->scrolled, gtk_widget_unparent);
  g_clear_pointer (&self->fields, g_hash_table_unref);
  G_OBJECT_CLASS (nl_inspector_parent_class)->dispose (object);
}

static void
nl_inspector_class_init (NlInspectorClass *klass)
{
  G_OBJECT_CLASS (klass)->dispose = nl_inspector_dispose;
  gtk_widget_class_set_layout_manager_type (GTK_WIDGET_CLASS (klass), GTK_TYPE_BIN_LAYOUT);
  gtk_widget_class_set_css_name (GTK_WIDGET_CLASS (klass), "nlinspector");
  signals[PROBLEM] = g_signal_new ("problem", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                                   G_TYPE_NONE, 1, G_TYPE_STRING);
}

static void
nl_inspector_init (NlInspector *self)
{
  self->node = -1;
  self->fields = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  self->scrolled = gtk_scrolled_window_new ();
  gtk_scrolled_window_set_policy (GTK_SCROLLED_WINDOW (self->scrolled), GTK_POLICY_NEVER, GTK_POLICY_AUTOMATIC);
  gtk_widget_set_parent (self->scrolled, GTK_WIDGET (self));
  rebuild (self);
}

GtkWidget *
nl_inspector_new (void)
{
  return g_object_new (NL_TYPE_INSPECTOR, NULL);
}

void
nl_inspector_set_document (NlInspector *self, NlNetworkDoc *doc)
{
  g_return_if_fail (NL_IS_INSPECTOR (self));
  if (self->doc == doc)
    return;
  if (self->doc)
    g_signal_handlers_disconnect_by_data (self->doc, self);
  g_set_object (&self->doc, doc);
  self->node = -1;
  if (doc)
    {
      g_signal_connect_object (doc, "changed", G_CALLBACK (doc_changed), self, G_CONNECT_SWAPPED);
      g_signal_connect_object (doc, "selection-changed", G_CALLBACK (selection_changed), self, G_CONNECT_SWAPPED);
      selection_changed (self);
    }
  else if (self->scrolled)
    rebuild (self);
}

int
nl_inspector_get_node (NlInspector *self)
{
  g_return_val_if_fail (NL_IS_INSPECTOR (self), -1);
  return self->def ? self->node : -1;
}

GtkWidget *
nl_inspector_get_field (NlInspector *self, const char *param)
{
  g_return_val_if_fail (NL_IS_INSPECTOR (self), NULL);
  return g_hash_table_lookup (self->fields, param);
}
