/* nl-experiments-page-compare.c — the comparison pane: the selected runs'
 * curves of one metric overlaid in an NlPlot (read on a worker thread,
 * then extended as new points arrive) and their settings side by side. */
#include "ui/experiments/nl-experiments-page-private.h"
#include "ui/training/nl-system-strip.h"
#include <glib/gi18n.h>

#include <math.h>
#include <string.h>

/* Without a selection the pane compares the first runs shown, up to this. */
#define COMPARE_MAX_UNSELECTED 8

typedef struct {
  const char *split, *name;   /* interned */
  gboolean by_step;           /* per-batch metrics; the others by epoch */
  char *label;
} MetricOption;

static void
metric_option_free (MetricOption *o)
{
  g_free (o->label);
  g_free (o);
}

static MetricOption *
metric_option_new (const NlMetricSummary *m)
{
  MetricOption *o = g_new0 (MetricOption, 1);
  const char *unit = NULL, *title = nl_system_metric_title (m->name, &unit);
  o->split = m->split;
  o->name = m->name;
  /* system metrics are sampled by step, every few seconds */
  o->by_step = g_str_has_prefix (m->name, "batch_") || title;
  if (title)
    /* TRANSLATORS: a system metric in the comparison's list: "CPU (%) by step" */
    o->label = g_strdup_printf (_("%s (%s) by step"), title, unit);
  else
    {
      o->label = g_strdup_printf ("%s %s by %s", m->split, m->name, o->by_step ? _("step") : _("epoch"));
      o->label[0] = g_ascii_toupper (o->label[0]);
      g_strdelimit (o->label, "_", ' ');
    }
  return o;
}

/* The usual three first, then the system metrics, then by split and name. */
static int
option_rank (const MetricOption *o)
{
  if (strcmp (o->split, "test") == 0 && strcmp (o->name, "accuracy") == 0)
    return 0;
  if (strcmp (o->split, "train") == 0 && strcmp (o->name, "loss") == 0)
    return 1;
  if (strcmp (o->split, "train") == 0 && strcmp (o->name, "accuracy") == 0)
    return 2;
  if (g_str_has_prefix (o->name, "system/"))
    return 3;
  return 4;
}

static int
option_compare (gconstpointer a, gconstpointer b)
{
  const MetricOption *x = *(MetricOption **) a, *y = *(MetricOption **) b;
  int r = option_rank (x) - option_rank (y);
  if (r == 0)
    r = strcmp (x->split, y->split);
  return r ? r : strcmp (x->name, y->name);
}

static const MetricOption *
current_option (NlExperimentsPage *page)
{
  guint i = gtk_drop_down_get_selected (page->metric_dropdown);
  return i < page->options->len ? g_ptr_array_index (page->options, i) : NULL;
}

/* The metrics any selected run has; TRUE when the list changed. */
static gboolean
update_options (NlExperimentsPage *page, GPtrArray *rows)
{
  g_autoptr (GPtrArray) opts = g_ptr_array_new_with_free_func ((GDestroyNotify) metric_option_free);
  const MetricOption *cur = current_option (page);
  const char *keep_split = cur ? cur->split : "test", *keep_name = cur ? cur->name : "accuracy";
  guint keep = 0;
  gboolean same;

  for (guint i = 0; i < rows->len; i++)
    {
      GArray *sums = nl_run_row_get_summaries (g_ptr_array_index (rows, i));
      for (guint j = 0; j < sums->len; j++)
        {
          const NlMetricSummary *m = &g_array_index (sums, NlMetricSummary, j);
          guint k;
          for (k = 0; k < opts->len; k++)
            {
              MetricOption *e = g_ptr_array_index (opts, k);
              if (e->split == m->split && e->name == m->name)
                break;
            }
          /* per-layer statistics are hundreds of curves: the Layers view shows them */
          if (k < opts->len || g_str_has_prefix (m->name, "layer/") || g_str_has_prefix (m->name, "profile/"))
            continue;
          g_ptr_array_add (opts, metric_option_new (m));
        }
    }
  g_ptr_array_sort (opts, option_compare);
  same = opts->len == page->options->len;
  for (guint i = 0; i < opts->len && same; i++)
    same = ((MetricOption *) g_ptr_array_index (opts, i))->split
               == ((MetricOption *) g_ptr_array_index (page->options, i))->split
           && ((MetricOption *) g_ptr_array_index (opts, i))->name
                  == ((MetricOption *) g_ptr_array_index (page->options, i))->name;
  if (same)
    return FALSE;
  for (guint i = 0; i < opts->len; i++)
    {
      MetricOption *o = g_ptr_array_index (opts, i);
      if (o->split == g_intern_string (keep_split) && o->name == g_intern_string (keep_name))
        keep = i;
    }
  {
    g_autoptr (GPtrArray) labels = g_ptr_array_new ();
    for (guint i = 0; i < opts->len; i++)
      g_ptr_array_add (labels, ((MetricOption *) g_ptr_array_index (opts, i))->label);
    g_ptr_array_add (labels, NULL);
    page->options_updating = TRUE;
    g_ptr_array_unref (page->options);
    page->options = g_steal_pointer (&opts);
    gtk_string_list_splice (page->option_labels, 0, g_list_model_get_n_items (G_LIST_MODEL (page->option_labels)),
                            (const char *const *) labels->pdata);
    gtk_drop_down_set_selected (page->metric_dropdown, keep);
    page->options_updating = FALSE;
  }
  return TRUE;
}

/* ---- curves, read on a worker thread ---- */

typedef struct {
  NlWorkspace *ws;
  GArray *runs, *after;       /* gint64 each */
  const char *split, *name;
  gboolean by_step;
  guint generation;
} PlotJob;

typedef struct {
  GArray *x, *y;              /* double */
  gint64 last_rowid;
} Chunk;

static void
plot_job_free (PlotJob *j)
{
  g_object_unref (j->ws);
  g_array_unref (j->runs);
  g_array_unref (j->after);
  g_free (j);
}

static void
chunks_free (GPtrArray *chunks)
{
  for (guint i = 0; i < chunks->len; i++)
    {
      Chunk *c = g_ptr_array_index (chunks, i);
      g_array_unref (c->x);
      g_array_unref (c->y);
      g_free (c);
    }
  g_ptr_array_unref (chunks);
}

static void
plot_thread (GTask *task, gpointer source, gpointer data, GCancellable *cancellable)
{
  PlotJob *j = data;
  GPtrArray *chunks = g_ptr_array_new ();
  for (guint i = 0; i < j->runs->len; i++)
    {
      Chunk *c = g_new0 (Chunk, 1);
      g_autoptr (GArray) rows = NULL;
      g_autoptr (GError) error = NULL;
      c->x = g_array_new (FALSE, FALSE, sizeof (double));
      c->y = g_array_new (FALSE, FALSE, sizeof (double));
      c->last_rowid = g_array_index (j->after, gint64, i);
      rows = nl_project_get_metrics (nl_workspace_get_project (j->ws), g_array_index (j->runs, gint64, i), j->name,
                                     c->last_rowid, &c->last_rowid, &error);
      if (!rows)
        g_warning ("metrics of run %" G_GINT64_FORMAT ": %s", g_array_index (j->runs, gint64, i), error->message);
      for (guint k = 0; rows && k < rows->len; k++)
        {
          const NlMetricRow *m = &g_array_index (rows, NlMetricRow, k);
          double x = j->by_step ? (double) m->step : m->epoch;
          if (m->split != j->split)
            continue;
          g_array_append_val (c->x, x);
          g_array_append_val (c->y, m->value);
        }
      g_ptr_array_add (chunks, c);
    }
  g_task_return_pointer (task, chunks, (GDestroyNotify) chunks_free);
}

static void start_plot_job (NlExperimentsPage *page);

static void
plot_done (GObject *source, GAsyncResult *res, gpointer data)
{
  NlExperimentsPage *page = NL_EXPERIMENTS_PAGE (source);
  PlotJob *j = g_task_get_task_data (G_TASK (res));
  GPtrArray *chunks = g_task_propagate_pointer (G_TASK (res), NULL);

  nl_workspace_busy_pop (j->ws);
  if (j->generation != page->plot_generation || !page->plot)
    {
      chunks_free (chunks);
      return;  /* another selection or metric by now */
    }
  page->plot_loading = FALSE;
  for (guint i = 0; i < chunks->len && i < nl_plot_get_n_series (page->plot); i++)
    {
      Chunk *c = g_ptr_array_index (chunks, i);
      if (c->x->len)
        nl_plot_series_append_many (nl_plot_get_series (page->plot, i), (double *) c->x->data,
                                    (double *) c->y->data, c->x->len);
      g_array_index (page->plot_rowids, gint64, i) = c->last_rowid;
    }
  chunks_free (chunks);
  if (page->plot_again)
    start_plot_job (page);
}

static void
start_plot_job (NlExperimentsPage *page)
{
  const MetricOption *o = current_option (page);
  g_autoptr (GTask) task = NULL;
  PlotJob *j;

  page->plot_again = FALSE;
  if (!page->ws || !o || page->plot_runs->len == 0)
    return;
  j = g_new0 (PlotJob, 1);
  j->ws = g_object_ref (page->ws);
  j->runs = g_array_copy (page->plot_runs);
  j->after = g_array_copy (page->plot_rowids);
  j->split = o->split;
  j->name = o->name;
  j->by_step = o->by_step;
  j->generation = page->plot_generation;
  page->plot_loading = TRUE;
  task = g_task_new (page, NULL, plot_done, NULL);
  g_task_set_task_data (task, j, (GDestroyNotify) plot_job_free);
  nl_workspace_busy_push (page->ws);
  g_task_run_in_thread (task, plot_thread);
}

/* New series for ROWS under the current metric, then read their points. */
static void
reload_plot (NlExperimentsPage *page, GPtrArray *rows)
{
  const MetricOption *o = current_option (page);
  page->plot_generation++;
  page->plot_loading = FALSE;
  nl_plot_clear (page->plot);
  g_array_set_size (page->plot_runs, 0);
  g_array_set_size (page->plot_rowids, 0);
  if (!o)
    return;
  {
    g_autofree char *y = nl_metric_pretty_name (o->split, o->name);
    nl_plot_set_x_label (page->plot, o->by_step ? _("step") : _("epoch"));
    nl_plot_set_x_integer (page->plot, !o->by_step);
    nl_plot_set_y_label (page->plot, y);
  }
  for (guint i = 0; i < rows->len; i++)
    {
      NlRunRow *row = g_ptr_array_index (rows, i);
      g_autoptr (NlPlotSeries) s = nl_plot_series_new (nl_run_row_get_name (row));
      gint64 id = nl_run_row_get_id (row), zero = 0;
      nl_plot_add_series (page->plot, s);
      g_array_append_val (page->plot_runs, id);
      g_array_append_val (page->plot_rowids, zero);
    }
  start_plot_job (page);
}

/* What the curves depend on: the runs, their names and the metric. */
static char *
plot_signature (NlExperimentsPage *page, GPtrArray *rows)
{
  const MetricOption *o = current_option (page);
  GString *s = g_string_new (o ? o->label : "");
  for (guint i = 0; i < rows->len; i++)
    g_string_append_printf (s, "\n%" G_GINT64_FORMAT ":%s", nl_run_row_get_id (g_ptr_array_index (rows, i)),
                            nl_run_row_get_name (g_ptr_array_index (rows, i)));
  return g_string_free (s, FALSE);
}

void
_nl_experiments_page_compare_update (NlExperimentsPage *page)
{
  g_autoptr (GPtrArray) rows = NULL;
  g_autoptr (GPtrArray) infos = NULL;
  g_autofree char *sig = NULL;

  if (!page->plot)
    return;
  rows = page->ws ? _nl_experiments_page_selected_rows (page) : g_ptr_array_new ();
  if (rows->len > 0)
    {
      g_autofree char *what = g_strdup_printf (ngettext ("Curves of %u selected run", "Curves of %u selected runs",
                                                         rows->len), rows->len);
      gtk_label_set_label (page->compare_label, what);
    }
  else if (page->ws)
    {
      /* nothing selected: the runs shown, the newest (or first sorted) few */
      GListModel *shown = G_LIST_MODEL (page->selection);
      guint n = MIN (g_list_model_get_n_items (shown), COMPARE_MAX_UNSELECTED);
      g_autofree char *what = NULL;
      for (guint i = 0; i < n; i++)
        g_ptr_array_add (rows, g_list_model_get_item (shown, i));
      what = n < g_list_model_get_n_items (shown) ? g_strdup_printf (_("Curves of the first %u runs"), n)
                                                  : g_strdup_printf (_("Curves of all %u runs"), n);
      gtk_label_set_label (page->compare_label, what);
    }
  if (rows->len == 0)
    {
      gtk_stack_set_visible_child_name (page->compare_stack, "hint");
      if (page->plot_runs->len)
        reload_plot (page, rows);
      nl_hparam_diff_set_runs (page->diff, NULL);
      g_clear_pointer (&page->plot_signature, g_free);
      g_clear_pointer (&page->diff_signature, g_free);
      return;
    }
  gtk_stack_set_visible_child_name (page->compare_stack, "compare");
  infos = g_ptr_array_new ();
  for (guint i = 0; i < rows->len; i++)
    g_ptr_array_add (infos, (gpointer) nl_run_row_get_info (g_ptr_array_index (rows, i)));
  /* settings never change after a run starts; names may */
  sig = plot_signature (page, rows);
  if (g_strcmp0 (sig, page->diff_signature) != 0)
    {
      nl_hparam_diff_set_runs (page->diff, infos);
      g_free (page->diff_signature);
      page->diff_signature = g_strdup (sig);
    }
  update_options (page, rows);
  g_free (sig);
  sig = plot_signature (page, rows);
  if (g_strcmp0 (sig, page->plot_signature) != 0)
    {
      reload_plot (page, rows);
      g_free (page->plot_signature);
      page->plot_signature = g_steal_pointer (&sig);
    }
}

void
_nl_experiments_page_compare_poll (NlExperimentsPage *page)
{
  if (!page->plot || page->plot_runs->len == 0)
    return;
  if (page->plot_loading)
    page->plot_again = TRUE;
  else
    start_plot_job (page);
}

gboolean
nl_experiments_page_set_plot_metric (NlExperimentsPage *page, const char *split, const char *name)
{
  g_return_val_if_fail (NL_IS_EXPERIMENTS_PAGE (page), FALSE);
  for (guint i = 0; i < page->options->len; i++)
    {
      MetricOption *o = g_ptr_array_index (page->options, i);
      if (g_strcmp0 (o->split, split) == 0 && g_strcmp0 (o->name, name) == 0)
        {
          gtk_drop_down_set_selected (page->metric_dropdown, i);
          return TRUE;
        }
    }
  return FALSE;
}

static void
metric_selected (NlExperimentsPage *page)
{
  if (!page->options_updating)
    _nl_experiments_page_compare_update (page);
}

static void
only_diff_toggled (NlExperimentsPage *page)
{
  nl_hparam_diff_set_only_differences (page->diff, gtk_switch_get_active (page->only_diff));
}

void
_nl_experiments_page_compare_init (NlExperimentsPage *page)
{
  page->options = g_ptr_array_new_with_free_func ((GDestroyNotify) metric_option_free);
  page->option_labels = gtk_string_list_new (NULL);
  page->plot_runs = g_array_new (FALSE, FALSE, sizeof (gint64));
  page->plot_rowids = g_array_new (FALSE, FALSE, sizeof (gint64));
  gtk_drop_down_set_model (page->metric_dropdown, G_LIST_MODEL (page->option_labels));
  page->plot = NL_PLOT (nl_plot_new ());
  gtk_widget_set_hexpand (GTK_WIDGET (page->plot), TRUE);
  gtk_widget_set_vexpand (GTK_WIDGET (page->plot), TRUE);
  gtk_box_append (page->plot_box, GTK_WIDGET (page->plot));
  g_signal_connect_swapped (page->metric_dropdown, "notify::selected", G_CALLBACK (metric_selected), page);
  g_signal_connect_swapped (page->only_diff, "notify::active", G_CALLBACK (only_diff_toggled), page);
}

void
_nl_experiments_page_compare_dispose (NlExperimentsPage *page)
{
  page->plot = NULL;  /* the template's plot_box owns it */
  page->plot_generation++;
  g_clear_pointer (&page->options, g_ptr_array_unref);
  g_clear_object (&page->option_labels);
  g_clear_pointer (&page->plot_runs, g_array_unref);
  g_clear_pointer (&page->plot_rowids, g_array_unref);
  g_clear_pointer (&page->plot_signature, g_free);
  g_clear_pointer (&page->diff_signature, g_free);
}
