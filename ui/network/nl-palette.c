/* nl-palette.c — a GtkListBox of ops with category headers and a filter. */
#include "ui/network/nl-palette.h"
#include <glib/gi18n.h>
#include "engine/session/nl-catalog.h"

#include <string.h>

struct _NlPalette {
  GtkWidget parent_instance;
  GtkWidget *box;        /* vertical: search entry, scrolled list */
  GtkSearchEntry *search;
  GtkListBox *list;
  char *filter;          /* lower case, NULL: everything */
};

G_DEFINE_FINAL_TYPE (NlPalette, nl_palette, GTK_TYPE_WIDGET)

enum { OP_ACTIVATED, N_SIGNALS };
static guint signals[N_SIGNALS];

static const NlOpDef *
row_op (GtkListBoxRow *row)
{
  return g_object_get_data (G_OBJECT (row), "nl-op");
}

static gboolean
filter_func (GtkListBoxRow *row, gpointer data)
{
  NlPalette *self = data;
  const NlOpDef *def = row_op (row);
  g_autofree char *name = NULL, *cat = NULL, *doc = NULL;
  if (!self->filter || !self->filter[0])
    return TRUE;
  name = g_ascii_strdown (def->name, -1);
  cat = g_ascii_strdown (def->category, -1);
  doc = g_ascii_strdown (def->doc ? def->doc : "", -1);
  return strstr (name, self->filter) || strstr (cat, self->filter) || strstr (doc, self->filter);
}

/* The registry's categories (ops/nl-op.h), listed for xgettext: the
 * headers show them translated, the registry keeps them as keys */
static const char *const category_titles[] G_GNUC_UNUSED = {
  N_("Input"), N_("Core"), N_("Convolution"), N_("Pooling"), N_("Normalization"), N_("Activation"),
  N_("Sequence"), N_("Structure"), N_("Loss"),
};

static void
header_func (GtkListBoxRow *row, GtkListBoxRow *before, gpointer data)
{
  const NlOpDef *def = row_op (row);
  GtkWidget *label;
  if (before && strcmp (row_op (before)->category, def->category) == 0)
    {
      gtk_list_box_row_set_header (row, NULL);
      return;
    }
  label = gtk_label_new (_(def->category));
  gtk_label_set_xalign (GTK_LABEL (label), 0);
  gtk_widget_add_css_class (label, "heading");
  gtk_widget_add_css_class (label, "dim-label");
  gtk_widget_set_margin_start (label, 8);
  gtk_widget_set_margin_top (label, 10);
  gtk_widget_set_margin_bottom (label, 2);
  gtk_list_box_row_set_header (row, label);
}

static GdkContentProvider *
drag_prepare (GtkDragSource *source, double x, double y, gpointer data)
{
  GtkWidget *row = gtk_event_controller_get_widget (GTK_EVENT_CONTROLLER (source));
  g_autofree char *text = g_strconcat (NL_PALETTE_DND_PREFIX, row_op (GTK_LIST_BOX_ROW (row))->name, NULL);
  return gdk_content_provider_new_typed (G_TYPE_STRING, text);
}

static GtkWidget *
make_row (const NlOpDef *def)
{
  GtkWidget *row = gtk_list_box_row_new ();
  GtkWidget *box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 0);
  GtkWidget *name = gtk_label_new (def->name);
  GtkDragSource *drag = gtk_drag_source_new ();

  gtk_label_set_xalign (GTK_LABEL (name), 0);
  gtk_box_append (GTK_BOX (box), name);
  gtk_widget_add_css_class (box, "nl-palette-item");
  gtk_list_box_row_set_child (GTK_LIST_BOX_ROW (row), box);
  gtk_widget_set_tooltip_text (row, def->doc);
  g_object_set_data (G_OBJECT (row), "nl-op", (gpointer) def);
  gtk_accessible_update_property (GTK_ACCESSIBLE (row), GTK_ACCESSIBLE_PROPERTY_LABEL, def->name,
                                  GTK_ACCESSIBLE_PROPERTY_DESCRIPTION, def->doc, -1);
  gtk_drag_source_set_actions (drag, GDK_ACTION_COPY);
  g_signal_connect (drag, "prepare", G_CALLBACK (drag_prepare), NULL);
  gtk_widget_add_controller (row, GTK_EVENT_CONTROLLER (drag));
  return row;
}

static void
row_activated (GtkListBox *list, GtkListBoxRow *row, NlPalette *self)
{
  g_signal_emit (self, signals[OP_ACTIVATED], 0, row_op (row)->name);
}

static void
search_changed (GtkSearchEntry *entry, NlPalette *self)
{
  nl_palette_set_filter (self, gtk_editable_get_text (GTK_EDITABLE (entry)));
}

static void
nl_palette_dispose (GObject *object)
{
  NlPalette *self = NL_PALETTE (object);
  g_clear_pointer (&self->box, gtk_widget_unparent);
  g_clear_pointer (&self->filter, g_free);
  G_OBJECT_CLASS (nl_palette_parent_class)->dispose (object);
}

static void
nl_palette_class_init (NlPaletteClass *klass)
{
  G_OBJECT_CLASS (klass)->dispose = nl_palette_dispose;
  gtk_widget_class_set_layout_manager_type (GTK_WIDGET_CLASS (klass), GTK_TYPE_BIN_LAYOUT);
  gtk_widget_class_set_css_name (GTK_WIDGET_CLASS (klass), "nlpalette");
  signals[OP_ACTIVATED] = g_signal_new ("op-activated", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL,
                                        NULL, NULL, G_TYPE_NONE, 1, G_TYPE_STRING);
}

static void
nl_palette_init (NlPalette *self)
{
  const char *const *cats = nl_catalog_categories ();
  GtkWidget *scrolled;
  int n;
  const NlOpDef *const *ops = nl_catalog_ops (&n);

  self->box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 6);
  gtk_widget_set_parent (self->box, GTK_WIDGET (self));
  self->search = GTK_SEARCH_ENTRY (gtk_search_entry_new ());
  g_object_set (self->search, "placeholder-text", _("Search layers"), NULL);
  gtk_accessible_update_property (GTK_ACCESSIBLE (self->search), GTK_ACCESSIBLE_PROPERTY_LABEL, _("Search layers"),
                                  -1);
  gtk_widget_set_margin_start (GTK_WIDGET (self->search), 6);
  gtk_widget_set_margin_end (GTK_WIDGET (self->search), 6);
  gtk_widget_set_margin_top (GTK_WIDGET (self->search), 6);
  g_signal_connect (self->search, "search-changed", G_CALLBACK (search_changed), self);
  gtk_box_append (GTK_BOX (self->box), GTK_WIDGET (self->search));

  self->list = GTK_LIST_BOX (gtk_list_box_new ());
  gtk_list_box_set_selection_mode (self->list, GTK_SELECTION_SINGLE);
  gtk_list_box_set_activate_on_single_click (self->list, FALSE);
  gtk_widget_add_css_class (GTK_WIDGET (self->list), "navigation-sidebar");
  gtk_accessible_update_property (GTK_ACCESSIBLE (self->list), GTK_ACCESSIBLE_PROPERTY_LABEL, _("Layers"), -1);
  /* rows in palette order: category by category, registry order inside */
  for (int c = 0; cats[c]; c++)
    for (int i = 0; i < n; i++)
      if (strcmp (ops[i]->category, cats[c]) == 0)
        gtk_list_box_append (self->list, make_row (ops[i]));
  gtk_list_box_set_filter_func (self->list, filter_func, self, NULL);
  gtk_list_box_set_header_func (self->list, header_func, NULL, NULL);
  g_signal_connect (self->list, "row-activated", G_CALLBACK (row_activated), self);
  scrolled = gtk_scrolled_window_new ();
  gtk_scrolled_window_set_policy (GTK_SCROLLED_WINDOW (scrolled), GTK_POLICY_NEVER, GTK_POLICY_AUTOMATIC);
  gtk_scrolled_window_set_child (GTK_SCROLLED_WINDOW (scrolled), GTK_WIDGET (self->list));
  gtk_widget_set_vexpand (scrolled, TRUE);
  gtk_box_append (GTK_BOX (self->box), scrolled);
}

GtkWidget *
nl_palette_new (void)
{
  return g_object_new (NL_TYPE_PALETTE, NULL);
}

void
nl_palette_set_filter (NlPalette *self, const char *text)
{
  g_return_if_fail (NL_IS_PALETTE (self));
  g_free (self->filter);
  self->filter = text ? g_ascii_strdown (g_strstrip (g_strdup (text)), -1) : NULL;
  if (g_strcmp0 (gtk_editable_get_text (GTK_EDITABLE (self->search)), text ? text : "") != 0)
    gtk_editable_set_text (GTK_EDITABLE (self->search), text ? text : "");
  gtk_list_box_invalidate_filter (self->list);
  gtk_list_box_invalidate_headers (self->list);
}

char **
nl_palette_dup_visible_ops (NlPalette *self)
{
  GStrvBuilder *b = g_strv_builder_new ();
  char **out;
  g_return_val_if_fail (NL_IS_PALETTE (self), NULL);
  for (GtkWidget *row = gtk_widget_get_first_child (GTK_WIDGET (self->list)); row;
       row = gtk_widget_get_next_sibling (row))
    if (GTK_IS_LIST_BOX_ROW (row) && filter_func (GTK_LIST_BOX_ROW (row), self))
      g_strv_builder_add (b, row_op (GTK_LIST_BOX_ROW (row))->name);
  out = g_strv_builder_end (b);
  g_strv_builder_unref (b);
  return out;
}

void
nl_palette_focus_search (NlPalette *self)
{
  g_return_if_fail (NL_IS_PALETTE (self));
  gtk_widget_grab_focus (GTK_WIDGET (self->search));
}

gboolean
nl_palette_activate_op (NlPalette *self, const char *op)
{
  g_return_val_if_fail (NL_IS_PALETTE (self), FALSE);
  for (GtkWidget *row = gtk_widget_get_first_child (GTK_WIDGET (self->list)); row;
       row = gtk_widget_get_next_sibling (row))
    if (GTK_IS_LIST_BOX_ROW (row) && strcmp (row_op (GTK_LIST_BOX_ROW (row))->name, op) == 0)
      {
        g_signal_emit_by_name (self->list, "row-activated", row);
        return TRUE;
      }
  return FALSE;
}
