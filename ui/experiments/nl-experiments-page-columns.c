/* nl-experiments-page-columns.c — the runs table's columns: what each
 * cell shows, how each column sorts (numbers as numbers), and columns for
 * metrics as runs report them. */
#include "ui/experiments/nl-experiments-page-private.h"
#include <glib/gi18n.h>
#include <inttypes.h>

#include <math.h>
#include <string.h>

typedef enum {
  COL_STATUS, COL_NAME, COL_NETWORK, COL_OPTIMIZER, COL_LR, COL_BATCH, COL_EPOCHS,
  COL_BEST, COL_LAST, COL_INT8, COL_DURATION, COL_TAGS,
} ColumnKind;

typedef struct {
  ColumnKind kind;
  const char *split, *name;   /* interned; metric columns only */
  char *id;                   /* "status", "name", "test/accuracy/best" ... */
} ColumnSpec;

static void
column_spec_free (ColumnSpec *c)
{
  g_free (c->id);
  g_free (c);
}

static const char *
status_icon (const char *status)
{
  static const char *const icons[][2] = {
    { "running", "media-playback-start-symbolic" }, { "paused", "media-playback-pause-symbolic" },
    { "queued", "content-loading-symbolic" },       { "finished", "emblem-ok-symbolic" },
    { "failed", "dialog-error-symbolic" },          { "stopped", "media-playback-stop-symbolic" },
    { "interrupted", "dialog-warning-symbolic" },   { "pruned", "edit-cut-symbolic" },
  };
  for (guint i = 0; i < G_N_ELEMENTS (icons); i++)
    if (g_strcmp0 (status, icons[i][0]) == 0)
      return icons[i][1];
  return "dialog-question-symbolic";
}

static char *
column_text (const ColumnSpec *c, NlRunRow *r)
{
  switch (c->kind)
    {
    case COL_STATUS:
      return g_strdup (nl_run_row_get_status (r));
    case COL_NAME:
      return g_strdup (nl_run_row_get_name (r));
    case COL_NETWORK:
      return g_strdup (nl_run_row_get_network (r));
    case COL_OPTIMIZER:
      return g_strdup (nl_run_row_get_optimizer (r));
    case COL_LR:
      return isnan (nl_run_row_get_lr (r)) ? g_strdup ("") : g_strdup_printf ("%g", nl_run_row_get_lr (r));
    case COL_BATCH:
      return nl_run_row_get_batch_size (r) > 0 ? g_strdup_printf ("%d", nl_run_row_get_batch_size (r)) : g_strdup ("");
    case COL_EPOCHS:
      return g_strdup_printf ("%d/%d", nl_run_row_get_epochs_done (r), nl_run_row_get_epochs_total (r));
    case COL_BEST:
      return nl_format_metric (nl_run_row_get_best (r, c->split, c->name));
    case COL_LAST:
      return nl_format_metric (nl_run_row_get_last (r, c->split, c->name));
    case COL_INT8:
      return nl_format_metric (nl_run_row_get_int8_accuracy (r));
    case COL_DURATION:
      return nl_format_duration (nl_run_row_get_duration (r));
    case COL_TAGS:
      return g_strjoinv (", ", (char **) nl_run_row_get_tags (r));
    default:
      g_return_val_if_reached (NULL);
    }
}

/* The sort key of numeric columns; NaN (no value) sorts below everything. */
static double
column_number (const ColumnSpec *c, NlRunRow *r)
{
  switch (c->kind)
    {
    case COL_LR:
      return nl_run_row_get_lr (r);
    case COL_BATCH:
      return nl_run_row_get_batch_size (r);
    case COL_EPOCHS:
      return nl_run_row_get_epochs_done (r) * 1e6 + nl_run_row_get_epochs_total (r);
    case COL_BEST:
      return nl_run_row_get_best (r, c->split, c->name);
    case COL_LAST:
      return nl_run_row_get_last (r, c->split, c->name);
    case COL_INT8:
      return nl_run_row_get_int8_accuracy (r);
    case COL_DURATION:
      return nl_run_row_get_duration (r);
    default:
      return NAN;
    }
}

static gboolean
column_is_numeric (const ColumnSpec *c)
{
  return c->kind >= COL_LR && c->kind <= COL_DURATION;
}

static int
column_compare (gconstpointer a, gconstpointer b, gpointer data)
{
  const ColumnSpec *c = data;
  NlRunRow *x = (NlRunRow *) a, *y = (NlRunRow *) b;
  int r = 0;
  if (column_is_numeric (c))
    {
      double u = column_number (c, x), v = column_number (c, y);
      if (isnan (u) || isnan (v))
        r = isnan (u) - isnan (v) ? (isnan (u) ? -1 : 1) : 0;
      else
        r = u < v ? -1 : u > v;
    }
  else
    {
      g_autofree char *s = column_text (c, x), *t = column_text (c, y);
      r = g_utf8_collate (s, t);
    }
  if (r == 0) /* stable: ties by run id */
    r = nl_run_row_get_id (x) < nl_run_row_get_id (y) ? -1 : nl_run_row_get_id (x) > nl_run_row_get_id (y);
  return r < 0 ? GTK_ORDERING_SMALLER : r > 0 ? GTK_ORDERING_LARGER : GTK_ORDERING_EQUAL;
}

static void
update_cell (GtkWidget *cell, NlRunRow *row)
{
  const ColumnSpec *c = g_object_get_data (G_OBJECT (cell), "nl-column-spec");
  g_autofree char *text = column_text (c, row);
  GtkWidget *label = cell;
  if (c->kind == COL_STATUS)
    {
      const NlRunInfo *info = nl_run_row_get_info (row);
      gtk_image_set_from_icon_name (GTK_IMAGE (gtk_widget_get_first_child (cell)),
                                    status_icon (nl_run_row_get_status (row)));
      label = gtk_widget_get_last_child (cell);
      gtk_widget_set_tooltip_text (cell, info->error);
    }
  else if (c->kind == COL_NAME)
    {
      int notes = nl_run_row_get_n_notes (row);
      g_autofree char *tip = notes ? g_strdup_printf (ngettext ("run %" PRId64 ", %d note",
                                                                 "run %" PRId64 ", %d notes", notes),
                                                       nl_run_row_get_id (row), notes)
                                   : g_strdup_printf (_("run %" PRId64), nl_run_row_get_id (row));
      gtk_widget_set_tooltip_text (cell, tip);
    }
  gtk_label_set_label (GTK_LABEL (label), text);
}

static void
row_changed (NlRunRow *row, GtkWidget *cell)
{
  update_cell (cell, row);
}

static void
cell_setup (GtkSignalListItemFactory *f, GtkListItem *item, ColumnSpec *c)
{
  /* room for typical values; longer names ellipsize (the tooltip and the
   * diff show them whole) */
  static const int width_chars[] = { [COL_STATUS] = 10, [COL_NAME] = 16, [COL_NETWORK] = 10, [COL_OPTIMIZER] = 7,
                                     [COL_TAGS] = 12 };
  GtkWidget *cell, *label = gtk_label_new (NULL);
  gtk_label_set_ellipsize (GTK_LABEL (label), PANGO_ELLIPSIZE_END);
  if (c->kind < G_N_ELEMENTS (width_chars) && width_chars[c->kind])
    gtk_label_set_width_chars (GTK_LABEL (label), width_chars[c->kind]);
  gtk_label_set_xalign (GTK_LABEL (label), column_is_numeric (c) ? 1 : 0);
  if (column_is_numeric (c))
    gtk_widget_add_css_class (label, "nl-numeric");
  cell = label;
  if (c->kind == COL_STATUS)
    {
      cell = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 6);
      gtk_box_append (GTK_BOX (cell), gtk_image_new ());
      gtk_box_append (GTK_BOX (cell), label);
    }
  g_object_set_data (G_OBJECT (cell), "nl-column-spec", c);
  g_object_set_data (G_OBJECT (cell), "nl-column-id", c->id);  /* tests read cells by it */
  g_object_set_data (G_OBJECT (cell), "nl-list-item", item);
  gtk_list_item_set_child (item, cell);
}

static void
cell_bind (GtkSignalListItemFactory *f, GtkListItem *item, ColumnSpec *c)
{
  GtkWidget *cell = gtk_list_item_get_child (item);
  NlRunRow *row = gtk_list_item_get_item (item);
  g_object_set_data (G_OBJECT (cell), "nl-run-row", row);
  update_cell (cell, row);
  g_signal_connect (row, "changed", G_CALLBACK (row_changed), cell);
}

static void
cell_unbind (GtkSignalListItemFactory *f, GtkListItem *item, ColumnSpec *c)
{
  GtkWidget *cell = gtk_list_item_get_child (item);
  NlRunRow *row = gtk_list_item_get_item (item);
  g_signal_handlers_disconnect_by_func (row, row_changed, cell);
  g_object_set_data (G_OBJECT (cell), "nl-run-row", NULL);
}

static void
add_column (NlExperimentsPage *page, ColumnKind kind, const char *title, const char *split, const char *name,
            const char *suffix)
{
  ColumnSpec *c = g_new0 (ColumnSpec, 1);
  GtkListItemFactory *f = gtk_signal_list_item_factory_new ();
  g_autoptr (GtkColumnViewColumn) col = NULL;
  g_autoptr (GtkSorter) sorter = NULL;
  static const char *const ids[] = { "status", "name", "network", "optimizer", "lr", "batch", "epochs",
                                     "best", "last", "int8", "duration", "tags" };

  c->kind = kind;
  c->split = g_intern_string (split);
  c->name = g_intern_string (name);
  c->id = name ? g_strdup_printf ("%s/%s/%s", split, name, suffix) : g_strdup (ids[kind]);
  g_signal_connect (f, "setup", G_CALLBACK (cell_setup), c);
  g_signal_connect (f, "bind", G_CALLBACK (cell_bind), c);
  g_signal_connect (f, "unbind", G_CALLBACK (cell_unbind), c);
  col = gtk_column_view_column_new (title, f);
  sorter = GTK_SORTER (gtk_custom_sorter_new (column_compare, c, NULL));
  gtk_column_view_column_set_sorter (col, sorter);
  gtk_column_view_column_set_resizable (col, TRUE);
  gtk_column_view_column_set_expand (col, kind == COL_NAME);
  g_object_set_data_full (G_OBJECT (col), "nl-column-spec", c, (GDestroyNotify) column_spec_free);
  gtk_column_view_append_column (page->view, col);
}

/* Columns for a metric: best and last, or only last when "best" means
 * nothing for it (lr, throughput). */
static void
add_metric_columns (NlExperimentsPage *page, const char *split, const char *name)
{
  g_autofree char *pretty = nl_metric_pretty_name (split, name);
  g_autofree char *best = g_strdup_printf (_("%s best"), pretty), *last = g_strdup_printf (_("%s last"), pretty);
  g_ptr_array_add (page->metric_keys, g_strdup_printf ("%s/%s", split, name));
  if (nl_metric_goal (name) != 0)
    add_column (page, COL_BEST, best, split, name, "best");
  add_column (page, COL_LAST, nl_metric_goal (name) != 0 ? last : pretty, split, name, "last");
}

void
_nl_experiments_page_setup_columns (NlExperimentsPage *page)
{
  add_column (page, COL_STATUS, _("Status"), NULL, NULL, NULL);
  add_column (page, COL_NAME, _("Name"), NULL, NULL, NULL);
  add_column (page, COL_NETWORK, _("Network"), NULL, NULL, NULL);
  add_column (page, COL_OPTIMIZER, _("Optimizer"), NULL, NULL, NULL);
  add_column (page, COL_LR, _("LR"), NULL, NULL, NULL);
  add_column (page, COL_BATCH, _("Batch"), NULL, NULL, NULL);
  add_column (page, COL_EPOCHS, _("Epochs"), NULL, NULL, NULL);
  add_metric_columns (page, "test", "accuracy");
  /* the run's INT8 models (Quantize…): the best one's test accuracy */
  add_column (page, COL_INT8, _("INT8 test acc"), NULL, NULL, NULL);
  add_metric_columns (page, "train", "loss");
  add_metric_columns (page, "train", "accuracy");
  add_column (page, COL_DURATION, _("Duration"), NULL, NULL, NULL);
  add_column (page, COL_TAGS, _("Tags"), NULL, NULL, NULL);
}

/* Metrics beyond the usual three get columns at the end as they appear. */
void
_nl_experiments_page_add_new_metric_columns (NlExperimentsPage *page)
{
  guint n = g_list_model_get_n_items (G_LIST_MODEL (page->store));
  for (guint i = 0; i < n; i++)
    {
      g_autoptr (NlRunRow) row = g_list_model_get_item (G_LIST_MODEL (page->store), i);
      GArray *sums = nl_run_row_get_summaries (row);
      for (guint j = 0; j < sums->len; j++)
        {
          const NlMetricSummary *m = &g_array_index (sums, NlMetricSummary, j);
          g_autofree char *key = g_strdup_printf ("%s/%s", m->split, m->name);
          if (!g_ptr_array_find_with_equal_func (page->metric_keys, key, g_str_equal, NULL))
            add_metric_columns (page, m->split, m->name);
        }
    }
}

