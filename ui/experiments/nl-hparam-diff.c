/* nl-hparam-diff.c — settings of several runs side by side (see nl-hparam-diff.h). */
#include "ui/experiments/nl-hparam-diff.h"
#include <glib/gi18n.h>
#include "core/nl-json-guard.h"

#include <json-glib/json-glib.h>

#define ABSENT "—"

typedef struct {
  char *key;
  GPtrArray *values;   /* char *, one per run */
  gboolean differs;
} DiffRow;

static void
diff_row_free (DiffRow *r)
{
  g_free (r->key);
  g_ptr_array_unref (r->values);
  g_free (r);
}

struct _NlHparamDiff {
  GtkWidget parent_instance;
  GtkWidget *grid;
  GPtrArray *names;    /* run names, the column headers */
  GPtrArray *rows;     /* DiffRow */
  gboolean only_differences;
  guint n_shown;
};

G_DEFINE_FINAL_TYPE (NlHparamDiff, nl_hparam_diff, GTK_TYPE_WIDGET)

static void
nl_hparam_diff_dispose (GObject *object)
{
  NlHparamDiff *d = NL_HPARAM_DIFF (object);
  g_clear_pointer (&d->grid, gtk_widget_unparent);
  G_OBJECT_CLASS (nl_hparam_diff_parent_class)->dispose (object);
}

static void
nl_hparam_diff_finalize (GObject *object)
{
  NlHparamDiff *d = NL_HPARAM_DIFF (object);
  g_ptr_array_unref (d->names);
  g_ptr_array_unref (d->rows);
  G_OBJECT_CLASS (nl_hparam_diff_parent_class)->finalize (object);
}

static void
nl_hparam_diff_class_init (NlHparamDiffClass *klass)
{
  G_OBJECT_CLASS (klass)->dispose = nl_hparam_diff_dispose;
  G_OBJECT_CLASS (klass)->finalize = nl_hparam_diff_finalize;
  gtk_widget_class_set_layout_manager_type (GTK_WIDGET_CLASS (klass), GTK_TYPE_BIN_LAYOUT);
  gtk_widget_class_set_css_name (GTK_WIDGET_CLASS (klass), "nl-hparam-diff");
}

static void
nl_hparam_diff_init (NlHparamDiff *d)
{
  d->names = g_ptr_array_new_with_free_func (g_free);
  d->rows = g_ptr_array_new_with_free_func ((GDestroyNotify) diff_row_free);
  d->grid = gtk_grid_new ();
  gtk_grid_set_column_spacing (GTK_GRID (d->grid), 18);
  gtk_grid_set_row_spacing (GTK_GRID (d->grid), 4);
  gtk_widget_set_margin_start (d->grid, 12);
  gtk_widget_set_margin_end (d->grid, 12);
  gtk_widget_set_margin_top (d->grid, 6);
  gtk_widget_set_margin_bottom (d->grid, 6);
  gtk_widget_set_parent (d->grid, GTK_WIDGET (d));
}

GtkWidget *
nl_hparam_diff_new (void)
{
  return g_object_new (NL_TYPE_HPARAM_DIFF, NULL);
}

/* How a JSON value reads in the table: numbers as %g (a float lr of 0.1
 * stored as a double shows 0.1), strings bare, null as absent. */
static char *
node_text (JsonNode *n)
{
  if (!n || JSON_NODE_HOLDS_NULL (n))
    return g_strdup (ABSENT);
  if (JSON_NODE_HOLDS_VALUE (n))
    {
      GType t = json_node_get_value_type (n);
      if (t == G_TYPE_STRING)
        return g_strdup (json_node_get_string (n));
      if (t == G_TYPE_BOOLEAN)
        return g_strdup (json_node_get_boolean (n) ? "true" : "false");
      if (t == G_TYPE_INT64)
        return g_strdup_printf ("%" G_GINT64_FORMAT, json_node_get_int (n));
      return g_strdup_printf ("%g", json_node_get_double (n));
    }
  return json_to_string (n, FALSE);
}

static DiffRow *
find_or_add_row (NlHparamDiff *d, const char *key, guint n_runs)
{
  DiffRow *r;
  for (guint i = 0; i < d->rows->len; i++)
    if (g_strcmp0 (((DiffRow *) g_ptr_array_index (d->rows, i))->key, key) == 0)
      return g_ptr_array_index (d->rows, i);
  r = g_new0 (DiffRow, 1);
  r->key = g_strdup (key);
  r->values = g_ptr_array_new_with_free_func (g_free);
  for (guint i = 0; i < n_runs; i++)
    g_ptr_array_add (r->values, g_strdup (ABSENT));
  g_ptr_array_add (d->rows, r);
  return r;
}

static void
set_value (NlHparamDiff *d, const char *key, guint n_runs, guint run, char *text)
{
  DiffRow *r = find_or_add_row (d, key, n_runs);
  g_free (g_ptr_array_index (r->values, run));
  g_ptr_array_index (r->values, run) = text;
}

static GtkWidget *
cell (const char *text, gboolean key, gboolean differs)
{
  GtkWidget *l = gtk_label_new (text);
  gtk_label_set_xalign (GTK_LABEL (l), 0);
  gtk_label_set_selectable (GTK_LABEL (l), !key);
  /* short values whole (the pane scrolls sideways), long ones cut */
  if (g_utf8_strlen (text, -1) > 28)
    {
      gtk_label_set_ellipsize (GTK_LABEL (l), PANGO_ELLIPSIZE_END);
      gtk_label_set_width_chars (GTK_LABEL (l), 28);
      gtk_label_set_max_width_chars (GTK_LABEL (l), 28);
      gtk_widget_set_tooltip_text (l, text);
    }
  if (key && !differs)
    gtk_widget_add_css_class (l, "dim-label");
  if (differs)
    {
      gtk_widget_add_css_class (l, "nl-differs");
      gtk_widget_add_css_class (l, "accent");
      gtk_widget_add_css_class (l, "heading");
    }
  return l;
}

static void
rebuild_grid (NlHparamDiff *d)
{
  GtkGrid *grid = GTK_GRID (d->grid);
  GtkWidget *child;
  int y = 1;

  while ((child = gtk_widget_get_first_child (d->grid)))
    gtk_grid_remove (grid, child);
  d->n_shown = 0;
  if (d->names->len == 0)
    return;
  for (guint c = 0; c < d->names->len; c++)
    {
      GtkWidget *h = cell (g_ptr_array_index (d->names, c), FALSE, FALSE);
      gtk_widget_add_css_class (h, "heading");
      gtk_grid_attach (grid, h, (int) c + 1, 0, 1, 1);
    }
  for (guint i = 0; i < d->rows->len; i++)
    {
      DiffRow *r = g_ptr_array_index (d->rows, i);
      if (d->only_differences && !r->differs)
        continue;
      gtk_grid_attach (grid, cell (r->key, TRUE, r->differs), 0, y, 1, 1);
      for (guint c = 0; c < r->values->len; c++)
        gtk_grid_attach (grid, cell (g_ptr_array_index (r->values, c), FALSE, r->differs), (int) c + 1, y, 1, 1);
      y++;
      d->n_shown++;
    }
  if (d->n_shown == 0)
    {
      GtkWidget *none = gtk_label_new (d->only_differences ? _("The runs' settings are all the same")
                                                             : _("No settings"));
      gtk_widget_add_css_class (none, "dim-label");
      gtk_grid_attach (grid, none, 0, 1, (int) d->names->len + 1, 1);
    }
}

void
nl_hparam_diff_set_runs (NlHparamDiff *d, GPtrArray *runs)
{
  guint n;
  g_return_if_fail (NL_IS_HPARAM_DIFF (d));

  g_ptr_array_set_size (d->names, 0);
  g_ptr_array_set_size (d->rows, 0);
  n = runs ? runs->len : 0;
  for (guint i = 0; i < n; i++)
    {
      const NlRunInfo *r = g_ptr_array_index (runs, i);
      g_autoptr (JsonParser) parser = json_parser_new ();
      g_ptr_array_add (d->names, g_strdup (r->name ? r->name : ""));
      set_value (d, "network", n, i, g_strdup (r->network_name ? r->network_name : ABSENT));
      set_value (d, "seed", n, i, g_strdup_printf ("%" G_GINT64_FORMAT, r->seed));
      set_value (d, "device", n, i, g_strdup (r->device ? r->device : ABSENT));
      if (r->hparams_json && nl_json_check_depth (r->hparams_json, -1, "the run's settings", NULL)
          && json_parser_load_from_data (parser, r->hparams_json, -1, NULL)
          && JSON_NODE_HOLDS_OBJECT (json_parser_get_root (parser)))
        {
          JsonObject *o = json_node_get_object (json_parser_get_root (parser));
          g_autoptr (GList) members = json_object_get_members (o);
          for (GList *m = members; m; m = m->next)
            {
              /* the run's own seed column already shows it */
              if (g_strcmp0 (m->data, "seed") == 0)
                continue;
              set_value (d, m->data, n, i, node_text (json_object_get_member (o, m->data)));
            }
        }
    }
  for (guint i = 0; i < d->rows->len; i++)
    {
      DiffRow *r = g_ptr_array_index (d->rows, i);
      for (guint c = 1; c < r->values->len && !r->differs; c++)
        r->differs = g_strcmp0 (g_ptr_array_index (r->values, 0), g_ptr_array_index (r->values, c)) != 0;
    }
  rebuild_grid (d);
}

void
nl_hparam_diff_set_only_differences (NlHparamDiff *d, gboolean only)
{
  g_return_if_fail (NL_IS_HPARAM_DIFF (d));
  if (d->only_differences == !!only)
    return;
  d->only_differences = !!only;
  rebuild_grid (d);
}

gboolean
nl_hparam_diff_get_only_differences (NlHparamDiff *d)
{
  g_return_val_if_fail (NL_IS_HPARAM_DIFF (d), FALSE);
  return d->only_differences;
}

static char **
dup_keys (NlHparamDiff *d, gboolean only_differing)
{
  GStrvBuilder *b = g_strv_builder_new ();
  char **keys;
  for (guint i = 0; i < d->rows->len; i++)
    {
      DiffRow *r = g_ptr_array_index (d->rows, i);
      if (!only_differing || r->differs)
        g_strv_builder_add (b, r->key);
    }
  keys = g_strv_builder_end (b);
  g_strv_builder_unref (b);
  return keys;
}

char **
nl_hparam_diff_dup_keys (NlHparamDiff *d)
{
  g_return_val_if_fail (NL_IS_HPARAM_DIFF (d), NULL);
  return dup_keys (d, FALSE);
}

char **
nl_hparam_diff_dup_differing (NlHparamDiff *d)
{
  g_return_val_if_fail (NL_IS_HPARAM_DIFF (d), NULL);
  return dup_keys (d, TRUE);
}

const char *
nl_hparam_diff_get_value (NlHparamDiff *d, const char *key, guint run_index)
{
  g_return_val_if_fail (NL_IS_HPARAM_DIFF (d), NULL);
  for (guint i = 0; i < d->rows->len; i++)
    {
      DiffRow *r = g_ptr_array_index (d->rows, i);
      if (g_strcmp0 (r->key, key) == 0)
        return run_index < r->values->len ? g_ptr_array_index (r->values, run_index) : NULL;
    }
  return NULL;
}

guint
nl_hparam_diff_get_n_shown (NlHparamDiff *d)
{
  g_return_val_if_fail (NL_IS_HPARAM_DIFF (d), 0);
  return d->n_shown;
}
