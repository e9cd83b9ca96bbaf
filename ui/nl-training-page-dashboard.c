/* nl-training-page-dashboard.c — the run's dashboard: progress and
 * counters, the live plots (loss, accuracy, learning rate, throughput),
 * the event log, plot export, and "follow": the newest run another process
 * trains on the project, read from the store while this page runs none. */
#include "ui/nl-training-page-private.h"
#include "engine/session/nl-data-preview.h"
#include "engine/session/nl-run.h"

#include <math.h>
#include <string.h>

#define MAX_LOG_ROWS 1000

/* ---- plots ---- */

static NlPlot *
add_plot (NlTrainingPage *page, const char *name, const char *title, const char *x_label, const char *y_label)
{
  NlPlot *plot = NL_PLOT (nl_plot_new ());
  nl_plot_set_x_label (plot, x_label);
  nl_plot_set_x_integer (plot, g_strcmp0 (x_label, "epoch") == 0);
  nl_plot_set_y_label (plot, y_label);
  gtk_widget_set_vexpand (GTK_WIDGET (plot), TRUE);
  gtk_stack_add_titled (page->plot_stack, GTK_WIDGET (plot), name, title);
  return plot;
}

static NlPlotSeries *
add_series (NlPlot *plot, const char *label, gboolean dashed)
{
  g_autoptr (NlPlotSeries) s = nl_plot_series_new (label);
  nl_plot_series_set_dashed (s, dashed);
  nl_plot_add_series (plot, s);
  return s;  /* the plot keeps it */
}

static NlPlot *
visible_plot (NlTrainingPage *page)
{
  GtkWidget *child = gtk_stack_get_visible_child (page->plot_stack);
  return child ? NL_PLOT (child) : page->loss_plot;
}

static void
smoothing_changed (GtkRange *range, NlTrainingPage *page)
{
  nl_plot_set_smoothing (page->loss_plot, gtk_range_get_value (range));
}

static void
log_y_toggled (GtkToggleButton *button, NlTrainingPage *page)
{
  nl_plot_set_log_y (visible_plot (page), gtk_toggle_button_get_active (button));
}

/* The toggle shows the state of the plot in view. */
static void
plot_switched (NlTrainingPage *page)
{
  g_signal_handlers_block_by_func (page->log_button, log_y_toggled, page);
  gtk_toggle_button_set_active (page->log_button, nl_plot_get_log_y (visible_plot (page)));
  g_signal_handlers_unblock_by_func (page->log_button, log_y_toggled, page);
}

/* ---- the event log: newest at the bottom, kept there unless scrolled up ---- */

/* Rows appended in a frame are laid out after its tick: scroll to the end
 * on the next few ticks rather than when the adjustment changes (the
 * viewport reconfigures it more than once per layout). */
static gboolean
log_tick (GtkWidget *widget, GdkFrameClock *clock, gpointer data)
{
  NlTrainingPage *page = data;
  GtkAdjustment *adj = gtk_scrolled_window_get_vadjustment (page->log_scroller);
  gtk_adjustment_set_value (adj, gtk_adjustment_get_upper (adj) - gtk_adjustment_get_page_size (adj));
  if (++page->log_tick_frames < 3)
    return G_SOURCE_CONTINUE;
  page->log_tick_id = 0;
  return G_SOURCE_REMOVE;
}

static void
log_follow_end (NlTrainingPage *page)
{
  GtkAdjustment *adj = gtk_scrolled_window_get_vadjustment (page->log_scroller);
  gboolean at_end = gtk_adjustment_get_value (adj)
                    >= gtk_adjustment_get_upper (adj) - gtk_adjustment_get_page_size (adj) - 4;
  if (!page->log_tick_id && !at_end)
    return;  /* scrolled up to read: leave it there */
  page->log_tick_frames = 0;
  if (!page->log_tick_id)
    page->log_tick_id = gtk_widget_add_tick_callback (GTK_WIDGET (page->log_scroller), log_tick, page, NULL);
}

/* One wrapping label per row, time and kind in its markup: a wrapping
 * label beside other widgets in a GtkBox measures inconsistently in GTK
 * 4.8 (a critical, and rows that jump). */
void
nl_training_page_log (NlTrainingPage *page, const char *kind, const char *message)
{
  g_autoptr (GDateTime) now = g_date_time_new_now_local ();
  g_autofree char *time = g_date_time_format (now, "%H:%M:%S");
  g_autofree char *markup = g_markup_printf_escaped ("<span alpha=\"55%%\" font_features=\"tnum\">%s</span>   "
                                                     "<span weight=\"bold\" size=\"small\">%s</span>   %s", time, kind,
                                                     message ? message : "");
  GtkWidget *label = gtk_label_new (NULL);

  gtk_label_set_markup (GTK_LABEL (label), markup);
  gtk_label_set_xalign (GTK_LABEL (label), 0);
  gtk_label_set_wrap (GTK_LABEL (label), TRUE);
  gtk_label_set_wrap_mode (GTK_LABEL (label), PANGO_WRAP_WORD_CHAR);
  gtk_label_set_selectable (GTK_LABEL (label), TRUE);
  gtk_widget_set_margin_start (label, 8);
  gtk_widget_set_margin_end (label, 8);
  gtk_widget_set_margin_top (label, 2);
  gtk_widget_set_margin_bottom (label, 2);
  if (!strcmp (kind, "ERROR"))
    gtk_widget_add_css_class (label, "error");
  log_follow_end (page);
  gtk_list_box_append (page->log_list, label);
  if (++page->n_log > MAX_LOG_ROWS)
    {
      gtk_list_box_remove (page->log_list, gtk_widget_get_first_child (GTK_WIDGET (page->log_list)));
      page->n_log--;
    }
}

/* ---- counters ---- */

static char *
format_duration (double s)
{
  int t = (int) ceil (MAX (s, 0));
  if (t < 60)
    return g_strdup_printf ("%d s", t);
  if (t < 3600)
    return g_strdup_printf ("%d:%02d", t / 60, t % 60);
  return g_strdup_printf ("%d:%02d:%02d", t / 3600, t / 60 % 60, t % 60);
}

static void
set_label_printf (GtkLabel *label, const char *fmt, ...) G_GNUC_PRINTF (2, 3);

static void
set_label_printf (GtkLabel *label, const char *fmt, ...)
{
  va_list ap;
  g_autofree char *text = NULL;
  va_start (ap, fmt);
  text = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  gtk_label_set_label (label, text);
}

/* "5,037": grouped digits, as the data page's counts */
static void
show_speed (NlTrainingPage *page, double images_per_s)
{
  g_autofree char *text = nl_data_format_count ((int64_t) llround (images_per_s));
  gtk_label_set_label (page->speed_label, text);
}

static void
set_progress (NlTrainingPage *page, double fraction)
{
  g_autofree char *text = g_strdup_printf ("%.0f %%", 100 * CLAMP (fraction, 0, 1));
  gtk_progress_bar_set_fraction (page->progress, CLAMP (fraction, 0, 1));
  gtk_progress_bar_set_text (page->progress, text);
}

static void
show_batch (NlTrainingPage *page, const NlSessionEvent *e)
{
  int epochs = MAX (page->run_epochs, e->epoch);
  double done = (e->epoch - 1) + (double) e->batch / MAX (e->n_batches, 1);
  set_label_printf (page->epoch_label, "%d / %d", e->epoch, epochs);
  set_label_printf (page->batch_label, "%" G_GINT64_FORMAT " / %" G_GINT64_FORMAT, (gint64) e->batch,
                    (gint64) e->n_batches);
  if (e->images_per_s > 0)
    show_speed (page, e->images_per_s);
  if (e->batch > 0 && e->elapsed > 0)
    {
      /* this epoch's pace over what is left (evaluation not counted) */
      double per_batch = e->elapsed / e->batch;
      gint64 left = (gint64) (epochs - e->epoch) * e->n_batches + (e->n_batches - e->batch);
      g_autofree char *eta = format_duration (per_batch * left);
      gtk_label_set_label (page->eta_label, eta);
    }
  set_progress (page, done / MAX (epochs, 1));
}

/* ---- points ---- */

static double
rate_at (NlTrainingPage *page, gint64 step)
{
  if (!page->run_schedule && page->n_batches > 0)
    page->run_schedule = nl_lr_schedule_new (page->run_lr_schedule ? page->run_lr_schedule : "constant",
                                             (float) page->run_lr, MAX (1, page->run_epochs * page->n_batches), NULL);
  /* the update of step k (from 1) used the rate of num_update k - 1 */
  return page->run_schedule ? nl_lr_schedule_get (page->run_schedule, MAX (step - 1, 0)) : NAN;
}

/* Batches arrive at up to 60 a second; drawing them twice a second still
 * looks live and leaves the cores to training. With software rendering on
 * 2 cores (bench/bench-gui-training.c, lenet, GUI over CLI images/s with
 * the CLI storing the same run): 1.02-1.11 at 2 Hz. Against a CLI run that
 * stores nothing: 0.83 at 15 Hz, 0.82-1.05 at 5 Hz, median 0.91 at 2 Hz,
 * 0.95 with the window hidden. Anything else flushes them first, so
 * pauses and ends show exactly where training stands. */
typedef struct {
  double x, loss, lr, ips;
} PendingBatch;

#define FLUSH_MS 500

static void
flush_batches (NlTrainingPage *page)
{
  GArray *p = page->pending;
  guint n = p->len;
  g_autofree double *x = NULL, *y = NULL;
  guint k;

  g_clear_handle_id (&page->flush_id, g_source_remove);
  if (n == 0)
    return;
  x = g_new (double, n);
  y = g_new (double, n);
  for (guint i = 0; i < n; i++)
    {
      x[i] = g_array_index (p, PendingBatch, i).x;
      y[i] = g_array_index (p, PendingBatch, i).loss;
    }
  nl_plot_series_append_many (page->batch_loss, x, y, n);
  k = 0;
  for (guint i = 0; i < n; i++)
    if (!isnan (g_array_index (p, PendingBatch, i).lr))
      {
        x[k] = g_array_index (p, PendingBatch, i).x;
        y[k++] = g_array_index (p, PendingBatch, i).lr;
      }
  nl_plot_series_append_many (page->lr_series, x, y, k);
  k = 0;
  for (guint i = 0; i < n; i++)
    if (g_array_index (p, PendingBatch, i).ips > 0)
      {
        x[k] = g_array_index (p, PendingBatch, i).x;
        y[k++] = g_array_index (p, PendingBatch, i).ips;
      }
  nl_plot_series_append_many (page->speed_series, x, y, k);
  g_array_set_size (p, 0);
  show_batch (page, &page->last_batch);
}

static gboolean
flush_timeout (gpointer data)
{
  NlTrainingPage *page = data;
  page->flush_id = 0;
  flush_batches (page);
  return G_SOURCE_REMOVE;
}

void
nl_training_page_dashboard_event (NlTrainingPage *page, const NlSessionEvent *e)
{
  if (e->kind != NL_SESSION_EVENT_BATCH)
    flush_batches (page);
  switch (e->kind)
    {
    case NL_SESSION_EVENT_BATCH:
      {
        gint64 step = (gint64) (e->epoch - 1) * e->n_batches + e->batch;
        PendingBatch b = { step, e->loss, NAN, e->images_per_s };
        page->n_batches = e->n_batches;
        page->last_step = step;
        b.lr = rate_at (page, step);
        g_array_append_val (page->pending, b);
        page->last_batch = *e;
        page->last_batch.message = NULL;
        if (!page->flush_id)
          page->flush_id = g_timeout_add (FLUSH_MS, flush_timeout, page);
        break;
      }
    case NL_SESSION_EVENT_EPOCH:
      {
        const NlEpochReport *r = &e->report;
        gint64 step = page->n_batches > 0 ? (gint64) r->epoch * page->n_batches : page->last_step;
        g_autofree char *line = g_strdup_printf ("epoch %d: train loss %.4f, train accuracy %.4f, test accuracy "
                                                 "%.4f, %.1f s, %.0f images/s", r->epoch, r->train_loss, r->train_acc,
                                                 r->test_acc, r->seconds, r->images_per_s);
        nl_plot_series_append (page->epoch_loss, step, r->train_loss);
        nl_plot_series_append (page->train_acc, r->epoch, r->train_acc);
        nl_plot_series_append (page->test_acc, r->epoch, r->test_acc);
        set_progress (page, (double) r->epoch / MAX (page->run_epochs, r->epoch));
        nl_training_page_log (page, "EPOCH", line);
        break;
      }
    case NL_SESSION_EVENT_CHECKPOINT:
      {
        g_autofree char *line = g_strdup_printf ("checkpoint of epoch %d saved", e->epoch);
        nl_training_page_log (page, "LOG", line);
        break;
      }
    case NL_SESSION_EVENT_LOG:
      nl_training_page_log (page, "LOG", e->message);
      break;
    case NL_SESSION_EVENT_ERROR:
      nl_training_page_log (page, "ERROR", e->message);
      break;
    case NL_SESSION_EVENT_FINISHED:
      gtk_label_set_label (page->eta_label, "–");
      if (!g_strcmp0 (e->status, "finished"))
        set_progress (page, 1);
      break;
    case NL_SESSION_EVENT_STARTED:
    case NL_SESSION_EVENT_STATUS:
      break;  /* the page's state machine reports these */
    }
}

void
nl_training_page_dashboard_add_row (NlTrainingPage *page, const NlMetricRow *row)
{
  gboolean train = !strcmp (row->split, "train");
  if (train && !strcmp (row->name, "batch_loss"))
    {
      nl_plot_series_append (page->batch_loss, row->step, row->value);
      page->last_step = MAX (page->last_step, row->step);
    }
  else if (train && !strcmp (row->name, "loss"))
    nl_plot_series_append (page->epoch_loss, row->step, row->value);
  else if (!strcmp (row->name, "accuracy"))
    nl_plot_series_append (train ? page->train_acc : page->test_acc, row->epoch, row->value);
  else if (train && !strcmp (row->name, "lr"))
    nl_plot_series_append (page->lr_series, row->step, row->value);
  else if (train && !strcmp (row->name, "images_per_s"))
    {
      nl_plot_series_append (page->speed_series, row->step, row->value);
      show_speed (page, row->value);
    }
}

void
nl_training_page_dashboard_set_status (NlTrainingPage *page, const char *text)
{
  gtk_label_set_label (page->status_label, text);
}

void
nl_training_page_dashboard_reset (NlTrainingPage *page, const char *title, int epochs, int batch_size, double lr,
                                  const char *lr_schedule)
{
  NlPlotSeries *all[] = { page->batch_loss, page->epoch_loss, page->train_acc, page->test_acc, page->lr_series,
                          page->speed_series };
  NlPlot *plots[] = { page->loss_plot, page->acc_plot, page->lr_plot, page->speed_plot };
  GtkWidget *child;

  g_clear_handle_id (&page->flush_id, g_source_remove);
  g_array_set_size (page->pending, 0);
  for (guint i = 0; i < G_N_ELEMENTS (all); i++)
    nl_plot_series_clear (all[i]);
  for (guint i = 0; i < G_N_ELEMENTS (plots); i++)
    nl_plot_reset_view (plots[i]);
  page->run_epochs = epochs;
  page->run_batch_size = batch_size;
  page->run_lr = lr;
  g_free (page->run_lr_schedule);
  page->run_lr_schedule = g_strdup (lr_schedule);
  g_clear_pointer ((NlLrSchedule **) &page->run_schedule, nl_lr_schedule_free);
  page->n_batches = 0;
  page->last_step = 0;
  gtk_label_set_label (page->title_label, title);
  if (epochs > 0)
    set_label_printf (page->epoch_label, "0 / %d", epochs);
  else
    gtk_label_set_label (page->epoch_label, "–");
  gtk_label_set_label (page->batch_label, "–");
  gtk_label_set_label (page->speed_label, "–");
  gtk_label_set_label (page->eta_label, "–");
  gtk_progress_bar_set_fraction (page->progress, 0);
  gtk_progress_bar_set_text (page->progress, epochs > 0 ? "0 %" : "");
  while ((child = gtk_widget_get_first_child (GTK_WIDGET (page->log_list))))
    gtk_list_box_remove (page->log_list, child);
  page->n_log = 0;
}

/* ---- export of the plot in view ---- */

static void
export_response (GtkNativeDialog *dialog, int response, NlTrainingPage *page)
{
  const char *format = g_object_get_data (G_OBJECT (dialog), "nl-format");
  NlPlot *plot = g_object_get_data (G_OBJECT (dialog), "nl-plot");
  g_autoptr (GFile) file = NULL;
  g_autofree char *path = NULL;
  g_autoptr (GError) error = NULL;
  gboolean ok;

  if (response != GTK_RESPONSE_ACCEPT || !(file = gtk_file_chooser_get_file (GTK_FILE_CHOOSER (dialog)))
      || !(path = g_file_get_path (file)))
    goto out;
  if (!strcmp (format, "png"))
    ok = nl_plot_export_png (plot, path, 1200, 700, &error);
  else if (!strcmp (format, "svg"))
    ok = nl_plot_export_svg (plot, path, 1200, 700, &error);
  else
    ok = nl_plot_export_csv (plot, path, &error);
  if (page->ws)
    {
      g_autofree char *base = g_path_get_basename (path);
      if (ok)
        nl_workspace_toast (page->ws, "Saved %s", base);
      else
        nl_workspace_toast (page->ws, "Could not save %s: %s", base, error->message);
    }
out:
  g_object_unref (dialog);
}

void
nl_training_page_export (NlTrainingPage *page, const char *format)
{
  GtkRoot *root = gtk_widget_get_root (GTK_WIDGET (page));
  GtkFileChooserNative *dialog;
  const char *name = gtk_stack_get_visible_child_name (page->plot_stack);
  g_autofree char *file = g_strdup_printf ("%s.%s", name ? name : "plot", format);

  dialog = gtk_file_chooser_native_new ("Export Plot", GTK_IS_WINDOW (root) ? GTK_WINDOW (root) : NULL,
                                        GTK_FILE_CHOOSER_ACTION_SAVE, "_Export", "_Cancel");
  gtk_file_chooser_set_current_name (GTK_FILE_CHOOSER (dialog), file);
  g_object_set_data_full (G_OBJECT (dialog), "nl-format", g_strdup (format), g_free);
  g_object_set_data_full (G_OBJECT (dialog), "nl-plot", g_object_ref (visible_plot (page)), g_object_unref);
  gtk_native_dialog_set_modal (GTK_NATIVE_DIALOG (dialog), TRUE);
  g_signal_connect_object (dialog, "response", G_CALLBACK (export_response), page, 0);
  gtk_native_dialog_show (GTK_NATIVE_DIALOG (dialog));
}

/* ---- follow: the newest run another process is training ---- */

typedef struct {
  NlWorkspace *ws;
  gint64 run, after;      /* in: what is shown already */
  gint64 target, last;    /* out: the run to show and its last rowid */
  gboolean reset;         /* out: another run than before: start afresh */
  NlRunInfo *info;
  GArray *rows;
} Follow;

static void
follow_free (Follow *f)
{
  g_clear_object (&f->ws);
  g_clear_pointer (&f->info, nl_run_info_free);
  g_clear_pointer (&f->rows, g_array_unref);
  g_free (f);
}

static gboolean
is_active (const char *status)
{
  return !g_strcmp0 (status, "running") || !g_strcmp0 (status, "paused");
}

static void
follow_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  Follow *f = task_data;
  NlProject *p = nl_workspace_get_project (f->ws);
  g_autoptr (GPtrArray) runs = NULL;
  GError *error = NULL;

  if (!(runs = nl_project_list_runs (p, &error)))
    {
      g_task_return_error (task, error);
      return;
    }
  for (guint i = runs->len; i-- > 0 && !f->target;)
    {
      const NlRunInfo *r = g_ptr_array_index (runs, i);
      if (is_active (r->status))
        f->target = r->id;
    }
  if (!f->target)
    f->target = f->run;  /* the followed run ended: its last points and status */
  if (f->target)
    {
      f->reset = f->target != f->run;
      if (!(f->info = nl_project_get_run (p, f->target, &error))
          || !(f->rows = nl_project_get_metrics (p, f->target, NULL, f->reset ? 0 : f->after, &f->last, &error)))
        {
          g_task_return_error (task, error);
          return;
        }
    }
  g_task_return_boolean (task, TRUE);
}

static gboolean
may_follow (NlTrainingPage *page)
{
  return page->ws && !page->session && page->state != NL_TRAINING_STARTING
         && gtk_toggle_button_get_active (page->follow_button);
}

static void
follow_done (GObject *source, GAsyncResult *res, gpointer data)
{
  NlTrainingPage *page = NL_TRAINING_PAGE (source);
  Follow *f = g_task_get_task_data (G_TASK (res));
  g_autoptr (GError) error = NULL;
  g_autofree char *status = NULL;

  page->follow_busy = FALSE;
  if (!g_task_propagate_boolean (G_TASK (res), &error) || f->ws != page->ws || !may_follow (page) || !f->target)
    {
      if (error && !g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED) && f->ws == page->ws)
        g_warning ("follow: %s", error->message);
      goto again;
    }
  if (f->reset)
    {
      g_auto (NlRunConfig) rc = { 0 };
      g_autofree char *title = g_strdup_printf ("%s (run %" G_GINT64_FORMAT ")", f->info->name, f->info->id);
      nl_run_config_init (&rc);
      if (!nl_run_config_from_json (&rc, f->info->hparams_json, NULL))
        {
          nl_run_config_clear (&rc);
          nl_run_config_init (&rc);
        }
      nl_training_page_dashboard_reset (page, title, rc.epochs, rc.batch_size, rc.optim.lr,
                                        rc.lr_schedule);
      page->follow_run = f->target;
      nl_training_page_log (page, "STATUS", "following a run of another process");
    }
  page->follow_rowid = f->last;
  for (guint i = 0; i < f->rows->len; i++)
    nl_training_page_dashboard_add_row (page, &g_array_index (f->rows, NlMetricRow, i));
  set_label_printf (page->epoch_label, "%d / %d", f->info->epochs_done, page->run_epochs);
  set_progress (page, (double) f->info->epochs_done / MAX (page->run_epochs, 1));
  status = g_strdup_printf ("Run %" G_GINT64_FORMAT " · %s · %s (process %" G_GINT64_FORMAT " on %s)", f->info->id,
                            f->info->network_name ? f->info->network_name : "?", f->info->status, f->info->pid,
                            f->info->host ? f->info->host : "?");
  nl_training_page_dashboard_set_status (page, status);
  if (!is_active (f->info->status))
    {
      gtk_label_set_label (page->eta_label, "–");
      if (!f->reset && f->rows->len == 0)
        goto again;
      {
        g_autofree char *line = g_strdup_printf ("run %" G_GINT64_FORMAT " %s%s%s", f->info->id, f->info->status,
                                                 f->info->error ? ": " : "", f->info->error ? f->info->error : "");
        nl_training_page_log (page, "STATUS", line);
      }
    }
again:
  if (page->follow_again)
    nl_training_page_follow_poll (page);
}

void
nl_training_page_follow_poll (NlTrainingPage *page)
{
  g_autoptr (GTask) task = NULL;
  Follow *f;

  page->follow_again = FALSE;
  if (!may_follow (page))
    return;
  if (page->follow_busy)
    {
      page->follow_again = TRUE;
      return;
    }
  page->follow_busy = TRUE;
  f = g_new0 (Follow, 1);
  f->ws = g_object_ref (page->ws);
  f->run = page->follow_run;
  f->after = page->follow_rowid;
  if (!page->follow_cancel)
    page->follow_cancel = g_cancellable_new ();
  task = g_task_new (page, page->follow_cancel, follow_done, NULL);
  g_task_set_task_data (task, f, (GDestroyNotify) follow_free);
  g_task_run_in_thread (task, follow_thread);
}

/* ---- set-up ---- */

void
nl_training_page_dashboard_init (NlTrainingPage *page)
{
  page->pending = g_array_new (FALSE, FALSE, sizeof (PendingBatch));
  page->loss_plot = add_plot (page, "loss", "Loss", "step", "loss");
  page->acc_plot = add_plot (page, "accuracy", "Accuracy", "epoch", "accuracy");
  page->lr_plot = add_plot (page, "lr", "Learning Rate", "step", "rate");
  page->speed_plot = add_plot (page, "throughput", "Throughput", "step", "images/s");
  page->batch_loss = add_series (page->loss_plot, "train loss (batch)", FALSE);
  page->epoch_loss = add_series (page->loss_plot, "train loss (epoch)", FALSE);
  page->train_acc = add_series (page->acc_plot, "train", FALSE);
  page->test_acc = add_series (page->acc_plot, "test", TRUE);
  page->lr_series = add_series (page->lr_plot, "learning rate", FALSE);
  page->speed_series = add_series (page->speed_plot, "images/s", FALSE);

  nl_plot_set_smoothing (page->loss_plot, gtk_range_get_value (GTK_RANGE (page->smoothing_scale)));
  g_signal_connect (page->smoothing_scale, "value-changed", G_CALLBACK (smoothing_changed), page);
  g_signal_connect (page->log_button, "toggled", G_CALLBACK (log_y_toggled), page);
  g_signal_connect_swapped (page->plot_stack, "notify::visible-child", G_CALLBACK (plot_switched), page);
  g_signal_connect_swapped (page->follow_button, "toggled", G_CALLBACK (nl_training_page_follow_poll), page);
  {
    GtkWidget *placeholder = gtk_label_new ("What the run reports appears here: epochs, checkpoints, pauses, errors");
    gtk_widget_add_css_class (placeholder, "dim-label");
    gtk_widget_set_margin_top (placeholder, 12);
    gtk_widget_set_margin_bottom (placeholder, 12);
    gtk_label_set_wrap (GTK_LABEL (placeholder), TRUE);
    gtk_list_box_set_placeholder (page->log_list, placeholder);
  }
}

void
nl_training_page_dashboard_dispose (NlTrainingPage *page)
{
  g_cancellable_cancel (page->follow_cancel);
  g_clear_object (&page->follow_cancel);
  g_clear_handle_id (&page->flush_id, g_source_remove);
  g_clear_pointer (&page->pending, g_array_unref);
  if (page->log_tick_id)
    gtk_widget_remove_tick_callback (GTK_WIDGET (page->log_scroller), page->log_tick_id);
  page->log_tick_id = 0;
  g_clear_pointer ((NlLrSchedule **) &page->run_schedule, nl_lr_schedule_free);
  g_clear_pointer (&page->run_lr_schedule, g_free);
}
