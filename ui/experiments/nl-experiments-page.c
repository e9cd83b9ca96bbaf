/* nl-experiments-page.c — the runs table: columns, sorting, filtering,
 * selection, and its refresh from the project (off the main loop, rows
 * updated in place). Actions live in nl-experiments-page-actions.c, the
 * comparison pane in nl-experiments-page-compare.c. */
#include "ui/experiments/nl-experiments-page-private.h"
#include <glib/gi18n.h>
#include <inttypes.h>

#include <string.h>

G_DEFINE_FINAL_TYPE (NlExperimentsPage, nl_experiments_page, ADW_TYPE_BIN)

/* ---- filter, selection ---- */

static gboolean
filter_match (gpointer item, gpointer data)
{
  NlExperimentsPage *page = data;
  return nl_run_row_matches (NL_RUN_ROW (item), gtk_editable_get_text (GTK_EDITABLE (page->search)));
}

static void
search_changed (NlExperimentsPage *page)
{
  gtk_filter_changed (GTK_FILTER (page->filter), GTK_FILTER_CHANGE_DIFFERENT);
}

GPtrArray *
_nl_experiments_page_selected_rows (NlExperimentsPage *page)
{
  GPtrArray *rows = g_ptr_array_new_with_free_func (g_object_unref);
  g_autoptr (GtkBitset) set = gtk_selection_model_get_selection (GTK_SELECTION_MODEL (page->selection));
  GtkBitsetIter iter;
  guint pos;
  for (gboolean ok = gtk_bitset_iter_init_first (&iter, set, &pos); ok; ok = gtk_bitset_iter_next (&iter, &pos))
    g_ptr_array_add (rows, g_list_model_get_item (G_LIST_MODEL (page->selection), pos));
  return rows;
}

GArray *
_nl_experiments_page_selected_ids (NlExperimentsPage *page)
{
  g_autoptr (GPtrArray) rows = _nl_experiments_page_selected_rows (page);
  GArray *ids = g_array_new (FALSE, FALSE, sizeof (gint64));
  for (guint i = 0; i < rows->len; i++)
    {
      gint64 id = nl_run_row_get_id (g_ptr_array_index (rows, i));
      g_array_append_val (ids, id);
    }
  return ids;
}

NlRunRow *
_nl_experiments_page_find_row (NlExperimentsPage *page, gint64 run)
{
  guint n = g_list_model_get_n_items (G_LIST_MODEL (page->store));
  for (guint i = 0; i < n; i++)
    {
      g_autoptr (NlRunRow) row = g_list_model_get_item (G_LIST_MODEL (page->store), i);
      if (nl_run_row_get_id (row) == run)
        return row;  /* the store keeps it alive */
    }
  return NULL;
}

static void
update_count (NlExperimentsPage *page)
{
  guint all = g_list_model_get_n_items (G_LIST_MODEL (page->store));
  guint shown = g_list_model_get_n_items (G_LIST_MODEL (page->filtered));
  g_autoptr (GtkBitset) set = gtk_selection_model_get_selection (GTK_SELECTION_MODEL (page->selection));
  guint64 sel = gtk_bitset_get_size (set);
  GString *s = g_string_new (NULL);
  if (shown < all)
    g_string_append_printf (s, ngettext ("%u of %u run", "%u of %u runs", all), shown, all);
  else
    g_string_append_printf (s, ngettext ("%u run", "%u runs", all), all);
  if (sel > 0)
    g_string_append_printf (s, _(", %" PRIu64 " selected"), sel);
  gtk_label_set_label (page->count_label, s->str);
  g_string_free (s, TRUE);
}

static gboolean
selection_idle (gpointer data)
{
  NlExperimentsPage *page = data;
  page->selection_idle = 0;
  update_count (page);
  _nl_experiments_page_update_actions (page);
  _nl_experiments_page_update_popups (page);
  _nl_experiments_page_compare_update (page);
  return G_SOURCE_REMOVE;
}

/* Selection and filtering both change what is selected; coalesce. */
static void
schedule_selection_update (NlExperimentsPage *page)
{
  if (!page->selection_idle)
    page->selection_idle = g_idle_add (selection_idle, page);
}

void
nl_experiments_page_select_runs (NlExperimentsPage *page, const gint64 *runs, guint n_runs)
{
  g_autoptr (GtkBitset) set = gtk_bitset_new_empty ();
  g_autoptr (GtkBitset) mask = NULL;
  guint n;
  g_return_if_fail (NL_IS_EXPERIMENTS_PAGE (page));
  n = g_list_model_get_n_items (G_LIST_MODEL (page->selection));
  for (guint i = 0; i < n; i++)
    {
      g_autoptr (NlRunRow) row = g_list_model_get_item (G_LIST_MODEL (page->selection), i);
      for (guint j = 0; j < n_runs; j++)
        if (runs[j] == nl_run_row_get_id (row))
          gtk_bitset_add (set, i);
    }
  mask = gtk_bitset_new_range (0, n);
  gtk_selection_model_set_selection (GTK_SELECTION_MODEL (page->selection), set, mask);
  /* callers act on the selection next: actions and pane follow it now */
  g_clear_handle_id (&page->selection_idle, g_source_remove);
  selection_idle (page);
}

/* ---- refresh: read the runs on a worker thread, merge into the store ---- */

static void
refresh_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  NlProject *p = nl_workspace_get_project (task_data);
  g_autoptr (GPtrArray) snaps = g_ptr_array_new_with_free_func ((GDestroyNotify) nl_run_snapshot_free);
  GError *error = NULL;
  GPtrArray *runs = nl_project_list_runs (p, &error);
  if (!runs)
    {
      g_task_return_error (task, error);
      return;
    }
  g_ptr_array_set_free_func (runs, NULL); /* the snapshots take the infos */
  for (guint i = 0; i < runs->len; i++)
    {
      g_autoptr (GError) e = NULL;
      NlRunSnapshot *s = nl_run_snapshot_load (p, g_ptr_array_index (runs, i), &e);
      if (s)
        g_ptr_array_add (snaps, s);
      else
        g_warning ("run %" G_GINT64_FORMAT ": %s", ((NlRunInfo *) g_ptr_array_index (runs, i))->id, e->message);
    }
  g_ptr_array_unref (runs);
  g_task_return_pointer (task, g_steal_pointer (&snaps), (GDestroyNotify) g_ptr_array_unref);
}

static int
newest_first (gconstpointer a, gconstpointer b, gpointer data)
{
  gint64 x = nl_run_row_get_id ((NlRunRow *) a), y = nl_run_row_get_id ((NlRunRow *) b);
  return x > y ? -1 : x < y;
}

static int
newest_first_ptr (gconstpointer a, gconstpointer b, gpointer data)
{
  return newest_first (*(NlRunRow **) a, *(NlRunRow **) b, data);
}

static gboolean
tick (gpointer data)
{
  NlExperimentsPage *page = data;
  guint n = g_list_model_get_n_items (G_LIST_MODEL (page->store)), active = 0;
  for (guint i = 0; i < n; i++)
    {
      g_autoptr (NlRunRow) row = g_list_model_get_item (G_LIST_MODEL (page->store), i);
      if (nl_run_row_is_active (row))
        {
          nl_run_row_emit_changed (row);
          active++;
        }
    }
  if (active == 0)
    page->tick_id = 0;
  return active ? G_SOURCE_CONTINUE : G_SOURCE_REMOVE;
}

/* New rows into the store, newest first. New runs are nearly always newer
 * than all others: one splice at the top, so that the models and the view
 * update once, not once per row (row by row, a first load of hundreds of
 * runs took seconds). */
static void
insert_rows (NlExperimentsPage *page, GPtrArray *rows)
{
  GListModel *store = G_LIST_MODEL (page->store);
  g_autoptr (NlRunRow) top = g_list_model_get_item (store, 0);
  if (rows->len == 0)
    return;
  g_ptr_array_sort_with_data (rows, (GCompareDataFunc) newest_first_ptr, NULL);
  if (!top || nl_run_row_get_id (g_ptr_array_index (rows, rows->len - 1)) > nl_run_row_get_id (top))
    g_list_store_splice (page->store, 0, 0, rows->pdata, rows->len);
  else
    for (guint i = 0; i < rows->len; i++)
      g_list_store_insert_sorted (page->store, g_ptr_array_index (rows, i), newest_first, NULL);
}

/* A re-sort rebinds every row the view keeps (up to 200 in GTK 4.8):
 * while a run trains, its new figures seldom move it, so check first. */
static gboolean
out_of_order (NlExperimentsPage *page, GtkSorter *sorter)
{
  GListModel *m = G_LIST_MODEL (page->sorted);
  guint n = g_list_model_get_n_items (m);
  g_autoptr (GObject) prev = n ? g_list_model_get_item (m, 0) : NULL;
  for (guint i = 1; i < n; i++)
    {
      g_autoptr (GObject) cur = g_list_model_get_item (m, i);
      if (gtk_sorter_compare (sorter, prev, cur) == GTK_ORDERING_LARGER)
        return TRUE;
      g_set_object (&prev, cur);
    }
  return FALSE;
}

static int
compare_ids (gconstpointer a, gconstpointer b)
{
  gint64 x = *(const gint64 *) a, y = *(const gint64 *) b;
  return x < y ? -1 : x > y;
}

/* The same runs, in any order (sorts both). */
static gboolean
same_ids (GArray *a, GArray *b)
{
  g_array_sort (a, compare_ids);
  g_array_sort (b, compare_ids);
  /* empty arrays may have no data at all (memcmp must not see NULL) */
  return a->len == b->len && (a->len == 0 || memcmp (a->data, b->data, a->len * sizeof (gint64)) == 0);
}

/* Rows update in place and the filter and sort re-run over them: the
 * selection (kept by GtkMultiSelection per item) and the scroll position
 * survive a refresh. */
static void
merge (NlExperimentsPage *page, GPtrArray *snaps)
{
  g_autoptr (GHashTable) fresh = g_hash_table_new (g_int64_hash, g_int64_equal);
  g_autoptr (GArray) before = _nl_experiments_page_selected_ids (page), after = NULL;
  g_autoptr (GPtrArray) added = g_ptr_array_new_with_free_func (g_object_unref);
  GListModel *store = G_LIST_MODEL (page->store);
  gboolean changed = FALSE, active = FALSE;

  for (guint i = 0; i < snaps->len; i++)
    {
      NlRunSnapshot *s = g_ptr_array_index (snaps, i);
      g_hash_table_insert (fresh, &s->info->id, s);
    }
  for (guint i = g_list_model_get_n_items (store); i-- > 0;)
    {
      g_autoptr (NlRunRow) row = g_list_model_get_item (store, i);
      gint64 id = nl_run_row_get_id (row);
      NlRunSnapshot *s = g_hash_table_lookup (fresh, &id);
      if (!s)
        {
          g_list_store_remove (page->store, i);
          continue;
        }
      g_hash_table_remove (fresh, &id);
      changed |= nl_run_row_update (row, s);
      active |= nl_run_row_is_active (row);
    }
  /* the snapshots still in fresh are new runs; the others now belong to rows */
  for (guint i = 0; i < snaps->len; i++)
    {
      NlRunSnapshot *s = g_ptr_array_index (snaps, i);
      if (g_hash_table_contains (fresh, &s->info->id))
        {
          NlRunRow *row = nl_run_row_new (s);
          active |= nl_run_row_is_active (row);
          g_ptr_array_add (added, row);
        }
      g_ptr_array_index (snaps, i) = NULL;
    }
  /* the table shown first: hidden, it would make rows for every item */
  if (added->len)
    gtk_stack_set_visible_child_name (page->stack, "runs");
  insert_rows (page, added);
  if (changed)
    {
      GtkSorter *sorter = gtk_column_view_get_sorter (page->view);
      if (*gtk_editable_get_text (GTK_EDITABLE (page->search)))
        gtk_filter_changed (GTK_FILTER (page->filter), GTK_FILTER_CHANGE_DIFFERENT);
      if (sorter && gtk_sorter_get_order (sorter) != GTK_SORTER_ORDER_NONE && out_of_order (page, sorter))
        gtk_sorter_changed (sorter, GTK_SORTER_CHANGE_DIFFERENT);
    }
  /* a re-sort keeps the selection by item; should it not, restore it by
   * run (runs deleted meanwhile simply drop out) */
  after = _nl_experiments_page_selected_ids (page);
  if (!same_ids (before, after))
    nl_experiments_page_select_runs (page, (const gint64 *) before->data, before->len);
  _nl_experiments_page_add_new_metric_columns (page);
  if (active && !page->tick_id)
    page->tick_id = g_timeout_add_seconds (1, tick, page);
  gtk_stack_set_visible_child_name (page->stack, g_list_model_get_n_items (store) ? "runs" : "empty");
  schedule_selection_update (page);
}

static void start_refresh (NlExperimentsPage *page);

static void
refresh_done (GObject *source, GAsyncResult *res, gpointer data)
{
  NlExperimentsPage *page = NL_EXPERIMENTS_PAGE (source);
  NlWorkspace *ws = g_task_get_task_data (G_TASK (res));
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) snaps = g_task_propagate_pointer (G_TASK (res), &error);

  nl_workspace_busy_pop (ws);
  if (ws != page->ws)
    return;  /* another project by now; its own refresh is under way */
  page->refreshing = FALSE;
  if (!snaps)
    nl_workspace_toast (ws, _("Could not read the runs: %s"), error->message);
  else
    {
      merge (page, snaps);
      page->loaded = TRUE;
    }
  if (page->refresh_again)
    start_refresh (page);
}

static void
start_refresh (NlExperimentsPage *page)
{
  g_autoptr (GTask) task = NULL;
  page->refresh_again = FALSE;
  page->refreshing = TRUE;
  task = g_task_new (page, NULL, refresh_done, NULL);
  g_task_set_task_data (task, g_object_ref (page->ws), g_object_unref);
  nl_workspace_busy_push (page->ws);
  g_task_run_in_thread (task, refresh_thread);
}

void
_nl_experiments_page_refresh (NlExperimentsPage *page)
{
  if (!page->ws)
    return;
  if (page->refreshing)
    page->refresh_again = TRUE;
  else
    start_refresh (page);
}

static void
workspace_changed (NlWorkspace *ws, guint what, NlExperimentsPage *page)
{
  if (what & (NL_WORKSPACE_RUNS | NL_WORKSPACE_METRICS))
    _nl_experiments_page_refresh (page);
  if (what & NL_WORKSPACE_METRICS)
    _nl_experiments_page_compare_poll (page);
}

void
nl_experiments_page_set_workspace (NlExperimentsPage *page, NlWorkspace *ws)
{
  g_return_if_fail (NL_IS_EXPERIMENTS_PAGE (page));
  g_return_if_fail (ws == NULL || NL_IS_WORKSPACE (ws));
  if (page->ws == ws)
    return;
  if (page->ws)
    g_signal_handlers_disconnect_by_func (page->ws, workspace_changed, page);
  g_set_object (&page->ws, ws);
  nl_sweep_view_set_workspace (page->sweep_view, ws);
  page->refreshing = page->refresh_again = page->loaded = FALSE;
  g_list_store_remove_all (page->store);
  gtk_editable_set_text (GTK_EDITABLE (page->search), "");
  gtk_stack_set_visible_child_name (page->stack, "empty");
  _nl_experiments_page_compare_update (page);
  if (ws)
    {
      g_signal_connect_object (ws, "changed", G_CALLBACK (workspace_changed), page, 0);
      start_refresh (page);
    }
  _nl_experiments_page_update_actions (page);
}

/* ---- context menu on the table: acts on the row under the pointer ---- */

static void
table_pressed (GtkGestureClick *gesture, int n_press, double x, double y, NlExperimentsPage *page)
{
  GtkWidget *w = gtk_widget_pick (GTK_WIDGET (page->view), x, y, GTK_PICK_DEFAULT);
  GdkRectangle rect = { (int) x, (int) y, 1, 1 };
  for (; w && w != GTK_WIDGET (page->view); w = gtk_widget_get_parent (w))
    {
      GtkListItem *item = g_object_get_data (G_OBJECT (w), "nl-list-item");
      if (item && g_object_get_data (G_OBJECT (w), "nl-run-row"))
        {
          guint pos = gtk_list_item_get_position (item);
          if (!gtk_selection_model_is_selected (GTK_SELECTION_MODEL (page->selection), pos))
            gtk_selection_model_select_item (GTK_SELECTION_MODEL (page->selection), pos, TRUE);
          break;
        }
    }
  /* the actions' enabled state must match the (maybe new) selection now */
  g_clear_handle_id (&page->selection_idle, g_source_remove);
  selection_idle (page);
  gtk_popover_set_pointing_to (GTK_POPOVER (page->row_popover), &rect);
  gtk_popover_popup (GTK_POPOVER (page->row_popover));
}

/* ---- GObject ---- */

static void
nl_experiments_page_dispose (GObject *object)
{
  NlExperimentsPage *page = NL_EXPERIMENTS_PAGE (object);
  g_clear_object (&page->ws);
  g_clear_handle_id (&page->tick_id, g_source_remove);
  g_clear_handle_id (&page->selection_idle, g_source_remove);
  _nl_experiments_page_compare_dispose (page);
  g_clear_pointer (&page->row_popover, gtk_widget_unparent);
  if (page->resume_destroy)
    page->resume_destroy (page->resume_data);
  page->resume_destroy = NULL;
  page->resume_func = NULL;
  if (page->view)
    gtk_column_view_set_model (page->view, NULL);
  g_clear_object (&page->selection);
  g_clear_object (&page->sorted);
  g_clear_object (&page->filtered);
  g_clear_object (&page->filter);
  g_clear_object (&page->store);
  /* AdwBin would unparent the template's child after the template freed it */
  adw_bin_set_child (ADW_BIN (page), NULL);
  gtk_widget_dispose_template (GTK_WIDGET (page), NL_TYPE_EXPERIMENTS_PAGE);
  G_OBJECT_CLASS (nl_experiments_page_parent_class)->dispose (object);
}

static void
nl_experiments_page_finalize (GObject *object)
{
  NlExperimentsPage *page = NL_EXPERIMENTS_PAGE (object);
  g_clear_pointer (&page->metric_keys, g_ptr_array_unref);
  G_OBJECT_CLASS (nl_experiments_page_parent_class)->finalize (object);
}

static void
nl_experiments_page_class_init (NlExperimentsPageClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = nl_experiments_page_dispose;
  object_class->finalize = nl_experiments_page_finalize;

  g_type_ensure (NL_TYPE_HPARAM_DIFF);
  gtk_widget_class_set_template_from_resource (widget_class, "/io/github/netloom/Netloom/ui/nl-experiments-page.ui");
  gtk_widget_class_bind_template_child (widget_class, NlExperimentsPage, stack);
  gtk_widget_class_bind_template_child (widget_class, NlExperimentsPage, search);
  gtk_widget_class_bind_template_child (widget_class, NlExperimentsPage, count_label);
  gtk_widget_class_bind_template_child (widget_class, NlExperimentsPage, tags_button);
  gtk_widget_class_bind_template_child (widget_class, NlExperimentsPage, notes_button);
  gtk_widget_class_bind_template_child (widget_class, NlExperimentsPage, table_scroller);
  gtk_widget_class_bind_template_child (widget_class, NlExperimentsPage, view);
  gtk_widget_class_bind_template_child (widget_class, NlExperimentsPage, compare_stack);
  gtk_widget_class_bind_template_child (widget_class, NlExperimentsPage, compare_label);
  gtk_widget_class_bind_template_child (widget_class, NlExperimentsPage, metric_dropdown);
  gtk_widget_class_bind_template_child (widget_class, NlExperimentsPage, plot_box);
  gtk_widget_class_bind_template_child (widget_class, NlExperimentsPage, diff);
  gtk_widget_class_bind_template_child (widget_class, NlExperimentsPage, only_diff);
  gtk_widget_class_bind_template_child (widget_class, NlExperimentsPage, row_menu);

  _nl_experiments_page_install_actions (klass);
}

/* The template's runs (table and comparison) become one of two modes,
 * beside the sweep view, switched at the top. */
static void
setup_modes (NlExperimentsPage *page)
{
  GtkWidget *runs = g_object_ref (GTK_WIDGET (page->stack));
  GtkWidget *box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 0), *switcher = gtk_stack_switcher_new ();

  adw_bin_set_child (ADW_BIN (page), NULL);
  page->modes = GTK_STACK (gtk_stack_new ());
  page->sweep_view = NL_SWEEP_VIEW (nl_sweep_view_new ());
  gtk_stack_add_titled (page->modes, runs, "runs", _("Runs"));
  gtk_stack_add_titled (page->modes, GTK_WIDGET (page->sweep_view), "sweeps", _("Sweeps"));
  gtk_widget_set_vexpand (GTK_WIDGET (page->modes), TRUE);
  gtk_stack_switcher_set_stack (GTK_STACK_SWITCHER (switcher), page->modes);
  gtk_widget_set_halign (switcher, GTK_ALIGN_CENTER);
  gtk_widget_set_margin_top (switcher, 6);
  gtk_box_append (GTK_BOX (box), switcher);
  gtk_box_append (GTK_BOX (box), GTK_WIDGET (page->modes));
  adw_bin_set_child (ADW_BIN (page), box);
  g_object_unref (runs);
}

NlSweepView *
nl_experiments_page_get_sweep_view (NlExperimentsPage *page)
{
  g_return_val_if_fail (NL_IS_EXPERIMENTS_PAGE (page), NULL);
  return page->sweep_view;
}

void
nl_experiments_page_run_sweep (NlExperimentsPage *page, gint64 sweep)
{
  g_autoptr (GError) error = NULL;
  g_return_if_fail (NL_IS_EXPERIMENTS_PAGE (page));
  gtk_stack_set_visible_child_name (page->modes, "sweeps");
  nl_sweep_view_show_sweep (page->sweep_view, sweep);
  if (!nl_sweep_view_continue (page->sweep_view, &error) && page->ws)
    nl_workspace_toast (page->ws, _("Cannot run sweep %" PRId64 ": %s"), sweep, error->message);
}

static void
nl_experiments_page_init (NlExperimentsPage *page)
{
  GtkGesture *click;

  gtk_widget_init_template (GTK_WIDGET (page));
  page->metric_keys = g_ptr_array_new_with_free_func (g_free);
  page->store = g_list_store_new (NL_TYPE_RUN_ROW);
  page->filter = gtk_custom_filter_new (filter_match, page, NULL);
  page->filtered = gtk_filter_list_model_new (G_LIST_MODEL (g_object_ref (page->store)),
                                              GTK_FILTER (g_object_ref (page->filter)));
  page->sorted = gtk_sort_list_model_new (G_LIST_MODEL (g_object_ref (page->filtered)),
                                          g_object_ref (gtk_column_view_get_sorter (page->view)));
  page->selection = gtk_multi_selection_new (G_LIST_MODEL (g_object_ref (page->sorted)));
  gtk_column_view_set_model (page->view, GTK_SELECTION_MODEL (page->selection));
  g_signal_connect_swapped (page->selection, "selection-changed", G_CALLBACK (schedule_selection_update), page);
  g_signal_connect_swapped (page->selection, "items-changed", G_CALLBACK (schedule_selection_update), page);
  g_signal_connect_swapped (page->search, "search-changed", G_CALLBACK (search_changed), page);
  _nl_experiments_page_setup_columns (page);

  page->row_popover = gtk_popover_menu_new_from_model (page->row_menu);
  gtk_popover_set_has_arrow (GTK_POPOVER (page->row_popover), FALSE);
  gtk_widget_set_halign (page->row_popover, GTK_ALIGN_START);
  gtk_widget_set_parent (page->row_popover, GTK_WIDGET (page->view));
  click = gtk_gesture_click_new ();
  gtk_gesture_single_set_button (GTK_GESTURE_SINGLE (click), GDK_BUTTON_SECONDARY);
  g_signal_connect (click, "pressed", G_CALLBACK (table_pressed), page);
  gtk_widget_add_controller (GTK_WIDGET (page->view), GTK_EVENT_CONTROLLER (click));

  _nl_experiments_page_setup_popups (page);
  _nl_experiments_page_compare_init (page);
  _nl_experiments_page_update_actions (page);
  setup_modes (page);
}

/* ---- public accessors ---- */

void
nl_experiments_page_set_resume_handler (NlExperimentsPage *page, NlExperimentsRunFunc func, gpointer user_data,
                                        GDestroyNotify destroy)
{
  g_return_if_fail (NL_IS_EXPERIMENTS_PAGE (page));
  if (page->resume_destroy)
    page->resume_destroy (page->resume_data);
  page->resume_func = func;
  page->resume_data = user_data;
  page->resume_destroy = destroy;
  _nl_experiments_page_update_actions (page);
}

GtkSelectionModel *
nl_experiments_page_get_model (NlExperimentsPage *page)
{
  g_return_val_if_fail (NL_IS_EXPERIMENTS_PAGE (page), NULL);
  return GTK_SELECTION_MODEL (page->selection);
}

GtkColumnView *
nl_experiments_page_get_column_view (NlExperimentsPage *page)
{
  g_return_val_if_fail (NL_IS_EXPERIMENTS_PAGE (page), NULL);
  return page->view;
}

GtkWidget *
nl_experiments_page_get_plot (NlExperimentsPage *page)
{
  g_return_val_if_fail (NL_IS_EXPERIMENTS_PAGE (page), NULL);
  return GTK_WIDGET (page->plot);
}

GtkWidget *
nl_experiments_page_get_diff (NlExperimentsPage *page)
{
  g_return_val_if_fail (NL_IS_EXPERIMENTS_PAGE (page), NULL);
  return GTK_WIDGET (page->diff);
}

gboolean
nl_experiments_page_is_loading (NlExperimentsPage *page)
{
  g_return_val_if_fail (NL_IS_EXPERIMENTS_PAGE (page), FALSE);
  return page->refreshing || page->plot_loading || page->selection_idle != 0 || (page->ws && !page->loaded);
}

void
nl_experiments_page_set_filter (NlExperimentsPage *page, const char *text)
{
  g_return_if_fail (NL_IS_EXPERIMENTS_PAGE (page));
  gtk_editable_set_text (GTK_EDITABLE (page->search), text ? text : "");
  /* the entry reports after a delay; the filter should not wait */
  search_changed (page);
}
