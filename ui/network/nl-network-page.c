/* nl-network-page.c — the Network page: loads networks from the project off
 * the main loop, keeps the analysis, the problems list and the status bar
 * in step with every edit. Actions live in nl-network-page-actions.c. */
#include "ui/network/nl-network-page-private.h"
#include <glib/gi18n.h>
#include "ui/nl-settings.h"

G_DEFINE_FINAL_TYPE (NlNetworkPage, nl_network_page, ADW_TYPE_BIN)

void
_nl_network_page_problem (NlNetworkPage *page, const char *message)
{
  if (page->ws)
    nl_workspace_toast (page->ws, "%s", message);
}

/* ---- analysis ---- */

static void
show_analysis (NlNetworkPage *page, const NlAnalysis *a)
{
  const NlNetwork *net = nl_network_doc_get_network (page->doc);
  GtkWidget *child;
  g_autofree char *params = nl_format_count (a->total_params), *macs = nl_format_count (a->total_macs);
  g_autofree char *mem = a->train_bytes >= 0 ? nl_format_bytes (a->train_bytes) : g_strdup ("—");
  g_autofree char *status = NULL, *title = NULL, *problems = NULL, *tooltip = NULL, *att = NULL;
  g_autofree char *input = _nl_network_page_input_text (page, a);

  nl_graph_canvas_set_analysis (page->canvas, a);
  while ((child = gtk_widget_get_first_child (GTK_WIDGET (page->problems_list))))
    gtk_list_box_remove (page->problems_list, child);
  if (a->network_error)
    {
      GtkWidget *row = adw_action_row_new ();
      adw_preferences_row_set_title (ADW_PREFERENCES_ROW (row), _("Network"));
      adw_action_row_set_subtitle (ADW_ACTION_ROW (row), a->network_error);
      gtk_widget_add_css_class (row, "error");
      gtk_list_box_append (page->problems_list, row);
    }
  for (int i = 0; i < a->n_nodes && i < nl_network_n_nodes (net); i++)
    if (a->nodes[i].error)
      {
        GtkWidget *row = adw_action_row_new ();
        adw_preferences_row_set_title (ADW_PREFERENCES_ROW (row), nl_network_node (net, i)->id);
        adw_action_row_set_subtitle (ADW_ACTION_ROW (row), a->nodes[i].error);
        gtk_list_box_row_set_activatable (GTK_LIST_BOX_ROW (row), TRUE);
        g_object_set_data (G_OBJECT (row), "nl-node", GINT_TO_POINTER (i + 1));
        gtk_widget_add_css_class (row, "error");
        gtk_list_box_append (page->problems_list, row);
      }
  if (a->n_errors == 0)
    {
      GtkWidget *label = gtk_label_new (_("No problems"));
      gtk_widget_add_css_class (label, "dim-label");
      gtk_widget_set_margin_top (label, 6);
      gtk_widget_set_margin_bottom (label, 6);
      gtk_list_box_append (page->problems_list, label);
    }
  title = a->n_errors ? g_strdup_printf (_("Problems (%d)"), a->n_errors) : g_strdup (_("Problems"));
  gtk_label_set_label (page->problems_title, title);
  problems = a->n_errors == 0 ? g_strdup (_("no problems"))
             : a->n_errors == 1 ? g_strdup (_("1 problem"))
                                : g_strdup_printf (ngettext ("%d problem", "%d problems", a->n_errors), a->n_errors);
  if (a->attention_bytes > 0 && a->train_bytes >= 0)
    {
      /* the O(T²) part, said apart: it grows fastest with the text's length */
      g_autofree char *total = g_steal_pointer (&mem);
      att = nl_format_bytes (a->attention_bytes);
      mem = g_strdup_printf (_("%s (attention %s)"), total, att);
    }
  status = g_strdup_printf (_("%s%s%d layers  ·  %s parameters  ·  %s multiply-adds per batch  ·  training memory "
                              "at batch %d: %s  ·  %s"),
                            input ? input : "", input ? "  ·  " : "", a->n_nodes, params, macs, a->batch, mem,
                            problems);
  if (att)
    tooltip = g_strdup_printf (_("%s\n\nAttention keeps its probabilities for the backward pass: batch × heads × "
                                 "steps × steps floats per layer, %s of the training memory at batch %d."),
                               status, att, a->batch);
  gtk_label_set_label (page->status_label, status);
  gtk_widget_set_tooltip_text (GTK_WIDGET (page->status_label), tooltip ? tooltip : status);
}

static void
analysis_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  NlNetwork *net = task_data;
  const NlShape *sample = g_object_get_data (G_OBJECT (task), "sample");
  int batch = GPOINTER_TO_INT (g_object_get_data (G_OBJECT (task), "batch"));
  g_task_return_pointer (task, nl_analysis_new_for_sample (net, sample, batch, 1), (GDestroyNotify) nl_analysis_free);
}

static void
analysis_done (GObject *source, GAsyncResult *res, gpointer data)
{
  NlNetworkPage *page = NL_NETWORK_PAGE (source);
  guint serial = GPOINTER_TO_UINT (data);
  g_autoptr (NlAnalysis) a = g_task_propagate_pointer (G_TASK (res), NULL);
  page->analysis_running = FALSE;
  if (page->ws)
    nl_workspace_busy_pop (page->ws);
  if (a && serial == page->analysis_serial)
    show_analysis (page, a);
  if (page->analysis_dirty)
    _nl_network_page_analyze (page);
}

void
_nl_network_page_analyze (NlNetworkPage *page)
{
  const NlNetwork *net = nl_network_doc_get_network (page->doc);
  page->analysis_serial++;
  if (nl_network_n_nodes (net) <= NL_ANALYSIS_SYNC_NODES)
    {
      g_autoptr (NlAnalysis) a = nl_analysis_new_for_sample (net, _nl_network_page_sample_shape (page),
                                                             page->batch_size, 1);
      page->analysis_dirty = FALSE;
      show_analysis (page, a);
      return;
    }
  /* one worker at a time; edits meanwhile mark it dirty and it runs again */
  if (page->analysis_running)
    {
      page->analysis_dirty = TRUE;
      return;
    }
  {
    g_autoptr (GTask) task = g_task_new (page, NULL, analysis_done, GUINT_TO_POINTER (page->analysis_serial));
    g_object_set_data (G_OBJECT (task), "batch", GINT_TO_POINTER (page->batch_size));
    if (_nl_network_page_sample_shape (page))
      g_object_set_data_full (G_OBJECT (task), "sample", g_memdup2 (&page->sample, sizeof (NlShape)), g_free);
    g_task_set_task_data (task, nl_network_copy (net), (GDestroyNotify) nl_network_free);
    page->analysis_running = TRUE;
    page->analysis_dirty = FALSE;
    if (page->ws)
      nl_workspace_busy_push (page->ws);
    g_task_run_in_thread (task, analysis_thread);
  }
}

static void
doc_changed (NlNetworkPage *page)
{
  _nl_network_page_analyze (page);
  _nl_network_page_update_actions (page);
}

static void
problem_activated (GtkListBox *list, GtkListBoxRow *row, NlNetworkPage *page)
{
  int node = GPOINTER_TO_INT (g_object_get_data (G_OBJECT (row), "nl-node")) - 1;
  if (node >= 0)
    nl_graph_canvas_focus_node (page->canvas, node);
}

int
_nl_network_page_latest_version (NlProject *p, const char *name)
{
  g_autoptr (GPtrArray) v = nl_project_list_network_versions (p, name, NULL);
  return v && v->len ? ((NlNetworkInfo *) g_ptr_array_index (v, v->len - 1))->version : 0;
}

NlNetworkDoc *
nl_network_page_get_document (NlNetworkPage *page)
{
  g_return_val_if_fail (NL_IS_NETWORK_PAGE (page), NULL);
  return page->doc;
}

GtkWidget *
nl_network_page_get_part (NlNetworkPage *page, const char *part)
{
  g_return_val_if_fail (NL_IS_NETWORK_PAGE (page), NULL);
  if (g_str_equal (part, "canvas"))
    return GTK_WIDGET (page->canvas);
  if (g_str_equal (part, "palette"))
    return GTK_WIDGET (page->palette);
  if (g_str_equal (part, "inspector"))
    return GTK_WIDGET (page->inspector);
  if (g_str_equal (part, "problems"))
    return GTK_WIDGET (page->problems_list);
  if (g_str_equal (part, "status"))
    return GTK_WIDGET (page->status_label);
  if (g_str_equal (part, "batch"))
    return GTK_WIDGET (page->batch_spin);
  if (g_str_equal (part, "networks"))
    return GTK_WIDGET (page->network_dropdown);
  if (g_str_equal (part, "pipelines"))
    return GTK_WIDGET (page->pipeline_dropdown);
  return NULL;
}

/* ---- networks of the project ---- */

static void
fill_versions (NlNetworkPage *page, const char *name)
{
  g_autoptr (GPtrArray) versions = NULL;
  guint selected = GTK_INVALID_LIST_POSITION;
  page->syncing = TRUE;
  gtk_string_list_splice (page->versions, 0, g_list_model_get_n_items (G_LIST_MODEL (page->versions)), NULL);
  g_array_set_size (page->version_numbers, 0);
  if (page->ws && name)
    versions = nl_project_list_network_versions (nl_workspace_get_project (page->ws), name, NULL);
  for (int i = versions ? (int) versions->len - 1 : -1; i >= 0; i--)
    {
      NlNetworkInfo *info = g_ptr_array_index (versions, i);
      g_autoptr (GDateTime) when = g_date_time_new_from_unix_local ((gint64) info->created);
      g_autofree char *date = when ? g_date_time_format (when, "%Y-%m-%d %H:%M") : g_strdup ("");
      /* TRANSLATORS: a saved network's version and date */
      g_autofree char *label = g_strdup_printf (_("v%d  %s"), info->version, date);
      if (info->version == page->version)
        selected = page->version_numbers->len;
      gtk_string_list_append (page->versions, label);
      g_array_append_val (page->version_numbers, info->version);
    }
  if (page->version == 0)
    {
      gtk_string_list_splice (page->versions, 0, 0, (const char *const[]) { "unsaved", NULL });
      g_array_prepend_val (page->version_numbers, page->version);
      selected = 0;
    }
  gtk_drop_down_set_selected (page->version_dropdown, selected);
  page->syncing = FALSE;
}

void
_nl_network_page_reload_names (NlNetworkPage *page)
{
  g_autoptr (GPtrArray) list = page->ws ? nl_project_list_networks (nl_workspace_get_project (page->ws), NULL) : NULL;
  const char *current = nl_network_doc_get_name (page->doc);
  guint selected = GTK_INVALID_LIST_POSITION;
  gboolean found = FALSE;

  page->syncing = TRUE;
  gtk_string_list_splice (page->names, 0, g_list_model_get_n_items (G_LIST_MODEL (page->names)), NULL);
  for (guint i = 0; list && i < list->len; i++)
    {
      NlNetworkInfo *info = g_ptr_array_index (list, i);
      if (g_strcmp0 (info->name, current) == 0)
        {
          selected = i;
          found = TRUE;
        }
      gtk_string_list_append (page->names, info->name);
    }
  if (!found && current && nl_network_n_nodes (nl_network_doc_get_network (page->doc)) > 0)
    {
      /* a new, unsaved network shows under its own name */
      gtk_string_list_append (page->names, current);
      selected = g_list_model_get_n_items (G_LIST_MODEL (page->names)) - 1;
    }
  gtk_drop_down_set_selected (page->network_dropdown, selected);
  page->syncing = FALSE;
  fill_versions (page, current);
}

void
_nl_network_page_arrange (NlNetwork *net, gpointer unused)
{
  int n = nl_network_n_nodes (net);
  g_autofree double *xy = g_new (double, 2 * (gsize) MAX (n, 1));
  nl_network_layout_compute (net, NULL, 0, xy);
  for (int i = 0; i < n; i++)
    {
      NlNode *node = nl_network_node (net, i);
      node->x = xy[2 * i];
      node->y = xy[2 * i + 1];
      node->has_position = TRUE;
    }
}

void
_nl_network_page_show_network (NlNetworkPage *page, NlNetwork *net, int version)
{
  gboolean placed = FALSE;
  /* a network no one arranged (netloom-cli import-onnx, a tool's JSON)
   * opens laid out rather than as one pile of cards */
  for (int i = 0; i < nl_network_n_nodes (net) && !placed; i++)
    placed = nl_network_node (net, i)->has_position;
  if (!placed && nl_network_n_nodes (net) > 0)
    _nl_network_page_arrange (net, NULL);
  page->version = version;
  nl_network_doc_set_network (page->doc, net);
  _nl_network_page_reload_names (page);
  nl_graph_canvas_fit (page->canvas);
}

typedef struct {
  char *name;
  int version;
} LoadRequest;

static void
load_request_free (LoadRequest *r)
{
  g_free (r->name);
  g_free (r);
}

static void
load_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  LoadRequest *r = task_data;
  NlProject *p = g_object_get_data (G_OBJECT (task), "project");
  GError *error = NULL;
  g_autofree char *json = nl_project_load_network (p, r->name, r->version, &error);
  NlNetwork *net = json ? nl_network_load_data (json, -1, &error) : NULL;
  /* "latest" (0): its number, for the version list */
  if (net && r->version == 0)
    r->version = _nl_network_page_latest_version (p, r->name);
  if (!net)
    g_task_return_error (task, error);
  else
    g_task_return_pointer (task, net, (GDestroyNotify) nl_network_free);
}

static void
load_done (GObject *source, GAsyncResult *res, gpointer data)
{
  NlNetworkPage *page = NL_NETWORK_PAGE (source);
  LoadRequest *r = g_task_get_task_data (G_TASK (res));
  g_autoptr (GError) error = NULL;
  NlNetwork *net = g_task_propagate_pointer (G_TASK (res), &error);
  NlWorkspace *ws = g_object_get_data (G_OBJECT (res), "workspace");
  gboolean current = page->ws == ws && !g_cancellable_is_cancelled (g_task_get_cancellable (G_TASK (res)));

  if (current)
    g_clear_object (&page->loading);
  if (current && !net)
    _nl_network_page_problem (page, error->message);
  else if (current)
    {
      g_free (net->name);
      net->name = g_strdup (r->name);
      _nl_network_page_show_network (page, g_steal_pointer (&net), r->version);
    }
  g_clear_pointer (&net, nl_network_free);
  nl_workspace_busy_pop (ws);
  g_object_unref (ws);
}

void
nl_network_page_open_network (NlNetworkPage *page, const char *name, int version)
{
  g_autoptr (GTask) task = NULL;
  LoadRequest *r;
  g_return_if_fail (NL_IS_NETWORK_PAGE (page));
  if (!page->ws || !name)
    return;
  if (page->loading)
    g_cancellable_cancel (page->loading);
  g_clear_object (&page->loading);
  page->loading = g_cancellable_new ();
  r = g_new0 (LoadRequest, 1);
  r->name = g_strdup (name);
  r->version = version;
  task = g_task_new (page, page->loading, load_done, NULL);
  g_task_set_task_data (task, r, (GDestroyNotify) load_request_free);
  g_object_set_data (G_OBJECT (task), "project", nl_workspace_get_project (page->ws));
  g_object_set_data (G_OBJECT (task), "workspace", g_object_ref (page->ws));
  nl_workspace_busy_push (page->ws);
  g_task_run_in_thread (task, load_thread);
}

static void
network_selected (GtkDropDown *dd, GParamSpec *pspec, NlNetworkPage *page)
{
  guint i = gtk_drop_down_get_selected (dd);
  const char *name;
  if (page->syncing || i == GTK_INVALID_LIST_POSITION)
    return;
  name = gtk_string_list_get_string (page->names, i);
  if (g_strcmp0 (name, nl_network_doc_get_name (page->doc)) != 0)
    nl_network_page_open_network (page, name, 0);
}

static void
version_selected (GtkDropDown *dd, GParamSpec *pspec, NlNetworkPage *page)
{
  guint i = gtk_drop_down_get_selected (dd);
  int version;
  if (page->syncing || i == GTK_INVALID_LIST_POSITION || i >= page->version_numbers->len)
    return;
  version = g_array_index (page->version_numbers, int, i);
  if (version > 0 && version != page->version)
    nl_network_page_open_network (page, nl_network_doc_get_name (page->doc), version);
}

static void
workspace_changed (NlWorkspace *ws, guint what, NlNetworkPage *page)
{
  if (what & NL_WORKSPACE_NETWORKS)
    _nl_network_page_reload_names (page);
  if (what & NL_WORKSPACE_PIPELINES)
    _nl_network_page_reload_pipelines (page);
}

/* The network shown when a project opens: LeNet in the sample project,
 * else the first one. */
void
_nl_network_page_open_default (NlNetworkPage *page)
{
  g_autoptr (GPtrArray) list = nl_project_list_networks (nl_workspace_get_project (page->ws), NULL);
  const char *name = NULL;
  for (guint i = 0; list && i < list->len; i++)
    {
      NlNetworkInfo *info = g_ptr_array_index (list, i);
      if (!name || g_strcmp0 (info->name, "lenet") == 0)
        name = info->name;
    }
  if (name)
    nl_network_page_open_network (page, name, 0);
  else
    _nl_network_page_show_network (page, nl_network_new ("network"), 0);
}

void
nl_network_page_set_workspace (NlNetworkPage *page, NlWorkspace *ws)
{
  g_return_if_fail (NL_IS_NETWORK_PAGE (page));
  if (page->ws == ws)
    return;
  if (page->loading)
    g_cancellable_cancel (page->loading);
  g_clear_object (&page->loading);
  if (page->ws)
    g_signal_handlers_disconnect_by_data (page->ws, page);
  g_set_object (&page->ws, ws);
  page->version = 0;
  nl_network_doc_set_network (page->doc, nl_network_new ("network"));
  if (ws)
    {
      g_signal_connect_object (ws, "changed", G_CALLBACK (workspace_changed), page, 0);
      _nl_network_page_open_default (page);
    }
  _nl_network_page_reload_names (page);
  _nl_network_page_reload_pipelines (page);
  _nl_network_page_update_actions (page);
}

/* ---- panels ---- */

static void
on_problem (GObject *sender, const char *message, NlNetworkPage *page)
{
  _nl_network_page_problem (page, message);
}

static void
palette_activated (NlPalette *palette, const char *op, NlNetworkPage *page)
{
  const NlNetwork *net = nl_network_doc_get_network (page->doc);
  int n, added;
  const int *sel = nl_network_doc_get_selection (page->doc, &n);
  int after = n > 0 ? sel[n - 1] : -1;
  double x = 0, y = 0;
  g_autoptr (GError) error = NULL;
  g_autofree char *label = g_strdup_printf (_("Add %s"), op);

  if (after >= 0)
    {
      NlNode *prev = nl_network_node (net, after);
      x = prev->x;
      y = prev->y + NL_CARD_HEIGHT + 48;
    }
  else
    {
      int w = gtk_widget_get_width (GTK_WIDGET (page->canvas)), h = gtk_widget_get_height (GTK_WIDGET (page->canvas));
      nl_graph_canvas_widget_to_canvas (page->canvas, w / 2.0, h / 2.0, &x, &y);
      x -= NL_CARD_WIDTH / 2;
      y -= NL_CARD_HEIGHT / 2;
    }
  nl_network_doc_begin_group (page->doc, label);
  added = nl_network_doc_add_node (page->doc, op, x, y, &error);
  if (added >= 0 && after >= 0 && nl_network_doc_can_connect (page->doc, after, 0, added, 0, NULL))
    nl_network_doc_connect (page->doc, after, 0, added, 0, NULL);
  nl_network_doc_end_group (page->doc);
  if (added < 0)
    {
      _nl_network_page_problem (page, error->message);
      return;
    }
  nl_network_doc_select (page->doc, &added, 1);
}

static void
batch_changed (GtkSpinButton *spin, NlNetworkPage *page)
{
  g_autoptr (GSettings) settings = nl_settings_get ();
  page->batch_size = gtk_spin_button_get_value_as_int (spin);
  g_settings_set_int (settings, "analysis-batch-size", page->batch_size);
  _nl_network_page_analyze (page);
}

static void
nl_network_page_dispose (GObject *object)
{
  NlNetworkPage *page = NL_NETWORK_PAGE (object);
  nl_network_page_set_workspace (page, NULL);
  _nl_network_page_shapes_dispose (page);
  g_clear_object (&page->doc);
  g_clear_object (&page->names);
  g_clear_object (&page->versions);
  g_clear_pointer (&page->version_numbers, g_array_unref);
  gtk_widget_dispose_template (GTK_WIDGET (page), NL_TYPE_NETWORK_PAGE);
  G_OBJECT_CLASS (nl_network_page_parent_class)->dispose (object);
}

static void
nl_network_page_class_init (NlNetworkPageClass *klass)
{
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);
  G_OBJECT_CLASS (klass)->dispose = nl_network_page_dispose;

  g_type_ensure (NL_TYPE_PALETTE);
  g_type_ensure (NL_TYPE_GRAPH_CANVAS);
  g_type_ensure (NL_TYPE_INSPECTOR);
  gtk_widget_class_set_template_from_resource (widget_class, "/io/github/netloom/Netloom/ui/nl-network-page.ui");
  gtk_widget_class_bind_template_child (widget_class, NlNetworkPage, network_dropdown);
  gtk_widget_class_bind_template_child (widget_class, NlNetworkPage, version_dropdown);
  gtk_widget_class_bind_template_child (widget_class, NlNetworkPage, save_button);
  gtk_widget_class_bind_template_child (widget_class, NlNetworkPage, batch_spin);
  gtk_widget_class_bind_template_child (widget_class, NlNetworkPage, palette);
  gtk_widget_class_bind_template_child (widget_class, NlNetworkPage, canvas);
  gtk_widget_class_bind_template_child (widget_class, NlNetworkPage, inspector);
  gtk_widget_class_bind_template_child (widget_class, NlNetworkPage, problems_title);
  gtk_widget_class_bind_template_child (widget_class, NlNetworkPage, problems_list);
  gtk_widget_class_bind_template_child (widget_class, NlNetworkPage, status_label);
  gtk_widget_class_bind_template_child (widget_class, NlNetworkPage, pipeline_dropdown);
  _nl_network_page_install_actions (widget_class);
}

static void
nl_network_page_init (NlNetworkPage *page)
{
  g_autoptr (GSettings) settings = nl_settings_get ();
  gtk_widget_init_template (GTK_WIDGET (page));
  page->batch_size = g_settings_get_int (settings, "analysis-batch-size");
  gtk_spin_button_set_value (page->batch_spin, page->batch_size);
  g_signal_connect (page->batch_spin, "value-changed", G_CALLBACK (batch_changed), page);
  page->names = gtk_string_list_new (NULL);
  page->versions = gtk_string_list_new (NULL);
  page->version_numbers = g_array_new (FALSE, FALSE, sizeof (int));
  gtk_drop_down_set_model (page->network_dropdown, G_LIST_MODEL (page->names));
  gtk_drop_down_set_model (page->version_dropdown, G_LIST_MODEL (page->versions));
  g_signal_connect (page->network_dropdown, "notify::selected", G_CALLBACK (network_selected), page);
  g_signal_connect (page->version_dropdown, "notify::selected", G_CALLBACK (version_selected), page);

  _nl_network_page_shapes_init (page);
  page->doc = nl_network_doc_new (NULL);
  g_signal_connect_object (page->doc, "changed", G_CALLBACK (doc_changed), page, G_CONNECT_SWAPPED);
  nl_graph_canvas_set_document (page->canvas, page->doc);
  nl_inspector_set_document (page->inspector, page->doc);
  g_signal_connect (page->canvas, "problem", G_CALLBACK (on_problem), page);
  g_signal_connect (page->inspector, "problem", G_CALLBACK (on_problem), page);
  g_signal_connect (page->palette, "op-activated", G_CALLBACK (palette_activated), page);
  g_signal_connect (page->problems_list, "row-activated", G_CALLBACK (problem_activated), page);
  _nl_network_page_analyze (page);
  _nl_network_page_update_actions (page);
}
