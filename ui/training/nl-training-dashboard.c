/* nl-training-dashboard.c — the run's dashboard: progress and counters,
 * the live plots (loss, accuracy, learning rate, throughput), the event
 * log, plot export, and "follow": the newest run another process trains
 * on the project, read from the store while the page runs none. */
#include "ui/training/nl-training-dashboard-private.h"
#include <glib/gi18n.h>
#include <inttypes.h>
#include "engine/session/nl-data-preview.h"
#include "engine/session/nl-run.h"
#include "ui/plot/nl-plot.h"

#include <math.h>
#include <string.h>

G_DEFINE_FINAL_TYPE (NlTrainingDashboard, nl_training_dashboard, ADW_TYPE_BIN)

/* ---- plots ---- */

static NlPlot *
add_plot (NlTrainingDashboard *self, const char *name, const char *title, const char *x_label, const char *y_label)
{
  NlPlot *plot = NL_PLOT (nl_plot_new ());
  /* the axis labels come marked N_(): shown translated, compared as they are */
  nl_plot_set_x_label (plot, _(x_label));
  nl_plot_set_x_integer (plot, g_strcmp0 (x_label, "epoch") == 0);
  nl_plot_set_y_label (plot, _(y_label));
  gtk_widget_set_vexpand (GTK_WIDGET (plot), TRUE);
  gtk_stack_add_titled (self->plot_stack, GTK_WIDGET (plot), name, title);
  return plot;
}

/* Five buttons as wide as "Learning Rate" (the theme's minimum, then the
 * widest) would not fit 1280 pixels: each as wide as its own title. */
static void
compact_switcher (NlTrainingDashboard *self)
{
  static GtkCssProvider *css;
  if (!css)
    {
      css = gtk_css_provider_new ();
      gtk_css_provider_load_from_data (css, "button { min-width: 0; }", -1);
    }
  gtk_box_layout_set_homogeneous (GTK_BOX_LAYOUT (gtk_widget_get_layout_manager (GTK_WIDGET (self->plot_switcher))),
                                  FALSE);
  G_GNUC_BEGIN_IGNORE_DEPRECATIONS
  for (GtkWidget *b = gtk_widget_get_first_child (GTK_WIDGET (self->plot_switcher)); b;
       b = gtk_widget_get_next_sibling (b))
    gtk_style_context_add_provider (gtk_widget_get_style_context (b), GTK_STYLE_PROVIDER (css),
                                    GTK_STYLE_PROVIDER_PRIORITY_APPLICATION);
  G_GNUC_END_IGNORE_DEPRECATIONS
}

static NlPlotSeries *
add_series (NlPlot *plot, const char *label, gboolean dashed)
{
  g_autoptr (NlPlotSeries) s = nl_plot_series_new (label);
  nl_plot_series_set_dashed (s, dashed);
  nl_plot_add_series (plot, s);
  return s;  /* the plot keeps it */
}

/* NULL while the Layers panel is in view */
static NlPlot *
visible_plot (NlTrainingDashboard *self)
{
  GtkWidget *child = gtk_stack_get_visible_child (self->plot_stack);
  return !child ? self->loss_plot : NL_IS_PLOT (child) ? NL_PLOT (child) : NULL;
}

static void
smoothing_changed (GtkRange *range, NlTrainingDashboard *self)
{
  nl_plot_set_smoothing (self->loss_plot, gtk_range_get_value (range));
}

static void
log_y_toggled (GtkToggleButton *button, NlTrainingDashboard *self)
{
  if (visible_plot (self))
    nl_plot_set_log_y (visible_plot (self), gtk_toggle_button_get_active (button));
}

/* The toggle shows the state of the plot in view. */
static void
plot_switched (NlTrainingDashboard *self)
{
  NlPlot *plot = visible_plot (self);
  g_signal_handlers_block_by_func (self->log_button, log_y_toggled, self);
  gtk_toggle_button_set_active (self->log_button, plot && nl_plot_get_log_y (plot));
  g_signal_handlers_unblock_by_func (self->log_button, log_y_toggled, self);
  gtk_widget_set_sensitive (GTK_WIDGET (self->log_button), plot != NULL);
}

void
nl_training_dashboard_log (NlTrainingDashboard *self, const char *kind, const char *message)
{
  nl_event_log_append (self->event_log, kind, message);
}

/* ---- counters ---- */

static char *
format_duration (double s)
{
  int t = (int) ceil (MAX (s, 0));
  if (t < 60)
    return g_strdup_printf (_("%d s"), t);
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

/* "5,037": grouped digits, as the data self's counts */
static void
show_speed (NlTrainingDashboard *self, double images_per_s)
{
  g_autofree char *text = nl_data_format_count ((int64_t) llround (images_per_s));
  gtk_label_set_label (self->speed_label, text);
}

void
_nl_training_dashboard_set_progress (NlTrainingDashboard *self, double fraction)
{
  g_autofree char *text = g_strdup_printf ("%.0f %%", 100 * CLAMP (fraction, 0, 1));
  gtk_progress_bar_set_fraction (self->progress, CLAMP (fraction, 0, 1));
  gtk_progress_bar_set_text (self->progress, text);
}

static void
show_batch (NlTrainingDashboard *self, const NlSessionEvent *e)
{
  int epochs = MAX (self->run_epochs, e->epoch);
  double done = (e->epoch - 1) + (double) e->batch / MAX (e->n_batches, 1);
  set_label_printf (self->epoch_label, "%d / %d", e->epoch, epochs);
  set_label_printf (self->batch_label, "%" G_GINT64_FORMAT " / %" G_GINT64_FORMAT, (gint64) e->batch,
                    (gint64) e->n_batches);
  if (e->images_per_s > 0)
    show_speed (self, e->images_per_s);
  if (e->batch > 0 && e->elapsed > 0)
    {
      /* this epoch's pace over what is left (evaluation not counted) */
      double per_batch = e->elapsed / e->batch;
      gint64 left = (gint64) (epochs - e->epoch) * e->n_batches + (e->n_batches - e->batch);
      g_autofree char *eta = format_duration (per_batch * left);
      gtk_label_set_label (self->eta_label, eta);
    }
  _nl_training_dashboard_set_progress (self, done / MAX (epochs, 1));
}

/* ---- points ---- */

static double
rate_at (NlTrainingDashboard *self, gint64 step)
{
  if (!self->run_schedule && self->n_batches > 0)
    self->run_schedule = nl_lr_schedule_new (self->run_lr_schedule ? self->run_lr_schedule : "constant",
                                             (float) self->run_lr, MAX (1, self->run_epochs * self->n_batches), NULL);
  /* the update of step k (from 1) used the rate of num_update k - 1 */
  return self->run_schedule ? nl_lr_schedule_get (self->run_schedule, MAX (step - 1, 0)) : NAN;
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
flush_batches (NlTrainingDashboard *self)
{
  GArray *p = self->pending;
  guint n = p->len;
  g_autofree double *x = NULL, *y = NULL;
  guint k;

  g_clear_handle_id (&self->flush_id, g_source_remove);
  if (n == 0)
    return;
  x = g_new (double, n);
  y = g_new (double, n);
  for (guint i = 0; i < n; i++)
    {
      x[i] = g_array_index (p, PendingBatch, i).x;
      y[i] = g_array_index (p, PendingBatch, i).loss;
    }
  nl_plot_series_append_many (self->batch_loss, x, y, n);
  k = 0;
  for (guint i = 0; i < n; i++)
    if (!isnan (g_array_index (p, PendingBatch, i).lr))
      {
        x[k] = g_array_index (p, PendingBatch, i).x;
        y[k++] = g_array_index (p, PendingBatch, i).lr;
      }
  nl_plot_series_append_many (self->lr_series, x, y, k);
  k = 0;
  for (guint i = 0; i < n; i++)
    if (g_array_index (p, PendingBatch, i).ips > 0)
      {
        x[k] = g_array_index (p, PendingBatch, i).x;
        y[k++] = g_array_index (p, PendingBatch, i).ips;
      }
  nl_plot_series_append_many (self->speed_series, x, y, k);
  g_array_set_size (p, 0);
  show_batch (self, &self->last_batch);
}

static gboolean
flush_timeout (gpointer data)
{
  NlTrainingDashboard *self = data;
  self->flush_id = 0;
  flush_batches (self);
  return G_SOURCE_REMOVE;
}

void
nl_training_dashboard_event (NlTrainingDashboard *self, const NlSessionEvent *e)
{
  if (e->kind != NL_SESSION_EVENT_BATCH)
    flush_batches (self);
  switch (e->kind)
    {
    case NL_SESSION_EVENT_BATCH:
      {
        gint64 step = (gint64) (e->epoch - 1) * e->n_batches + e->batch;
        PendingBatch b = { step, e->loss, NAN, e->images_per_s };
        self->n_batches = e->n_batches;
        self->last_step = step;
        b.lr = rate_at (self, step);
        g_array_append_val (self->pending, b);
        self->last_batch = *e;
        self->last_batch.message = NULL;
        if (!self->flush_id)
          self->flush_id = g_timeout_add (FLUSH_MS, flush_timeout, self);
        break;
      }
    case NL_SESSION_EVENT_EPOCH:
      {
        const NlEpochReport *r = &e->report;
        gint64 step = self->n_batches > 0 ? (gint64) r->epoch * self->n_batches : self->last_step;
        g_autofree char *line = g_strdup_printf (_("epoch %d: train loss %.4f, train accuracy %.4f, test accuracy "
                                                   "%.4f, %.1f s, %.0f images/s"),
                                                 r->epoch, r->train_loss, r->train_acc, r->test_acc, r->seconds,
                                                 r->images_per_s);
        nl_plot_series_append (self->epoch_loss, step, r->train_loss);
        nl_plot_series_append (self->train_acc, r->epoch, r->train_acc);
        nl_plot_series_append (self->test_acc, r->epoch, r->test_acc);
        _nl_training_dashboard_set_progress (self, (double) r->epoch / MAX (self->run_epochs, r->epoch));
        nl_training_dashboard_log (self, "EPOCH", line);
        break;
      }
    case NL_SESSION_EVENT_CHECKPOINT:
      {
        g_autofree char *line = g_strdup_printf (_("checkpoint of epoch %d saved"), e->epoch);
        nl_training_dashboard_log (self, "LOG", line);
        break;
      }
    case NL_SESSION_EVENT_LOG:
      nl_training_dashboard_log (self, "LOG", e->message);
      break;
    case NL_SESSION_EVENT_ERROR:
      nl_training_dashboard_log (self, "ERROR", e->message);
      break;
    case NL_SESSION_EVENT_STARTED:
      /* its layer and system points are read from the project */
      self->own_run = e->run;
      self->own_rowid = 0;
      nl_layers_panel_set_run (self->layers, self->ws, e->run);
      break;
    case NL_SESSION_EVENT_FINISHED:
      nl_training_dashboard_follow_poll (self);  /* the run's last layer and system points */
      gtk_label_set_label (self->eta_label, "–");
      if (!g_strcmp0 (e->status, "finished"))
        _nl_training_dashboard_set_progress (self, 1);
      break;
    case NL_SESSION_EVENT_STATUS:
      break;  /* the self's state machine reports these */
    }
}

gboolean
_nl_training_dashboard_add_extra (NlTrainingDashboard *self, const NlMetricRow *row)
{
  return nl_system_strip_add_row (self->system_strip, row) || nl_layers_panel_add_row (self->layers, row);
}

void
nl_training_dashboard_add_row (NlTrainingDashboard *self, const NlMetricRow *row)
{
  gboolean train = !strcmp (row->split, "train");
  if (_nl_training_dashboard_add_extra (self, row))
    return;
  if (train && !strcmp (row->name, "batch_loss"))
    {
      nl_plot_series_append (self->batch_loss, row->step, row->value);
      self->last_step = MAX (self->last_step, row->step);
    }
  else if (train && !strcmp (row->name, "loss"))
    nl_plot_series_append (self->epoch_loss, row->step, row->value);
  else if (!strcmp (row->name, "accuracy"))
    nl_plot_series_append (train ? self->train_acc : self->test_acc, row->epoch, row->value);
  else if (train && !strcmp (row->name, "lr"))
    nl_plot_series_append (self->lr_series, row->step, row->value);
  else if (train && !strcmp (row->name, "images_per_s"))
    {
      nl_plot_series_append (self->speed_series, row->step, row->value);
      show_speed (self, row->value);
    }
}

void
nl_training_dashboard_set_status (NlTrainingDashboard *self, const char *text)
{
  gtk_label_set_label (self->status_label, text);
}

void
nl_training_dashboard_reset (NlTrainingDashboard *self, const char *title, int epochs, int batch_size, double lr,
                                  const char *lr_schedule)
{
  NlPlotSeries *all[] = { self->batch_loss, self->epoch_loss, self->train_acc, self->test_acc, self->lr_series,
                          self->speed_series };
  NlPlot *plots[] = { self->loss_plot, self->acc_plot, self->lr_plot, self->speed_plot };

  g_clear_handle_id (&self->flush_id, g_source_remove);
  g_array_set_size (self->pending, 0);
  for (guint i = 0; i < G_N_ELEMENTS (all); i++)
    nl_plot_series_clear (all[i]);
  for (guint i = 0; i < G_N_ELEMENTS (plots); i++)
    nl_plot_reset_view (plots[i]);
  self->run_epochs = epochs;
  self->run_batch_size = batch_size;
  self->run_lr = lr;
  g_free (self->run_lr_schedule);
  self->run_lr_schedule = g_strdup (lr_schedule);
  g_clear_pointer (&self->run_schedule, nl_lr_schedule_free);
  self->n_batches = 0;
  self->last_step = 0;
  self->own_run = self->own_rowid = 0;
  nl_layers_panel_clear (self->layers);
  nl_layers_panel_set_run (self->layers, NULL, 0);
  nl_system_strip_clear (self->system_strip);
  gtk_label_set_label (self->title_label, title);
  if (epochs > 0)
    set_label_printf (self->epoch_label, "0 / %d", epochs);
  else
    gtk_label_set_label (self->epoch_label, "–");
  gtk_label_set_label (self->batch_label, "–");
  gtk_label_set_label (self->speed_label, "–");
  gtk_label_set_label (self->eta_label, "–");
  gtk_progress_bar_set_fraction (self->progress, 0);
  gtk_progress_bar_set_text (self->progress, epochs > 0 ? "0 %" : "");
  nl_event_log_clear (self->event_log);
}

/* ---- export of the plot in view ---- */

static void
export_response (GtkNativeDialog *dialog, int response, NlTrainingDashboard *self)
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
  if (self->ws)
    {
      g_autofree char *base = g_path_get_basename (path);
      if (ok)
        nl_workspace_toast (self->ws, _("Saved %s"), base);
      else
        nl_workspace_toast (self->ws, _("Could not save %s: %s"), base, error->message);
    }
out:
  g_object_unref (dialog);
}

void
nl_training_dashboard_export (NlTrainingDashboard *self, const char *format)
{
  GtkRoot *root = gtk_widget_get_root (GTK_WIDGET (self));
  GtkFileChooserNative *dialog;
  const char *name = gtk_stack_get_visible_child_name (self->plot_stack);
  g_autofree char *file = g_strdup_printf ("%s.%s", name ? name : "plot", format);

  if (!visible_plot (self))
    {
      if (self->ws)
        nl_workspace_toast (self->ws, _("Choose a plot to export: the Layers view is not one"));
      return;
    }
  dialog = gtk_file_chooser_native_new (_("Export Plot"), GTK_IS_WINDOW (root) ? GTK_WINDOW (root) : NULL,
                                        GTK_FILE_CHOOSER_ACTION_SAVE, _("_Export"), _("_Cancel"));
  gtk_file_chooser_set_current_name (GTK_FILE_CHOOSER (dialog), file);
  g_object_set_data_full (G_OBJECT (dialog), "nl-format", g_strdup (format), g_free);
  g_object_set_data_full (G_OBJECT (dialog), "nl-plot", g_object_ref (visible_plot (self)), g_object_unref);
  gtk_native_dialog_set_modal (GTK_NATIVE_DIALOG (dialog), TRUE);
  g_signal_connect_object (dialog, "response", G_CALLBACK (export_response), self, 0);
  gtk_native_dialog_show (GTK_NATIVE_DIALOG (dialog));
}

/* ---- GObject ---- */

static void
nl_training_dashboard_dispose (GObject *object)
{
  NlTrainingDashboard *self = NL_TRAINING_DASHBOARD (object);
  g_cancellable_cancel (self->follow_cancel);
  g_clear_object (&self->follow_cancel);
  g_clear_handle_id (&self->flush_id, g_source_remove);
  g_clear_pointer (&self->pending, g_array_unref);
  g_clear_pointer (&self->run_schedule, nl_lr_schedule_free);
  g_clear_pointer (&self->run_lr_schedule, g_free);
  g_clear_object (&self->ws);
  gtk_widget_dispose_template (GTK_WIDGET (self), NL_TYPE_TRAINING_DASHBOARD);
  G_OBJECT_CLASS (nl_training_dashboard_parent_class)->dispose (object);
}

static void
nl_training_dashboard_class_init (NlTrainingDashboardClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = nl_training_dashboard_dispose;
  g_type_ensure (NL_TYPE_PLOT);
  g_type_ensure (NL_TYPE_EVENT_LOG);
  g_type_ensure (NL_TYPE_SYSTEM_STRIP);
  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/io/github/netloom/Netloom/ui/nl-training-dashboard.ui");
  gtk_widget_class_bind_template_child (widget_class, NlTrainingDashboard, title_label);
  gtk_widget_class_bind_template_child (widget_class, NlTrainingDashboard, status_label);
  gtk_widget_class_bind_template_child (widget_class, NlTrainingDashboard, progress);
  gtk_widget_class_bind_template_child (widget_class, NlTrainingDashboard, epoch_label);
  gtk_widget_class_bind_template_child (widget_class, NlTrainingDashboard, batch_label);
  gtk_widget_class_bind_template_child (widget_class, NlTrainingDashboard, speed_label);
  gtk_widget_class_bind_template_child (widget_class, NlTrainingDashboard, eta_label);
  gtk_widget_class_bind_template_child (widget_class, NlTrainingDashboard, plot_stack);
  gtk_widget_class_bind_template_child (widget_class, NlTrainingDashboard, plot_switcher);
  gtk_widget_class_bind_template_child (widget_class, NlTrainingDashboard, smoothing_scale);
  gtk_widget_class_bind_template_child (widget_class, NlTrainingDashboard, log_button);
  gtk_widget_class_bind_template_child (widget_class, NlTrainingDashboard, follow_button);
  gtk_widget_class_bind_template_child (widget_class, NlTrainingDashboard, event_log);
  gtk_widget_class_bind_template_child (widget_class, NlTrainingDashboard, system_strip);
}

static void
nl_training_dashboard_init (NlTrainingDashboard *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
  self->pending = g_array_new (FALSE, FALSE, sizeof (PendingBatch));
  self->loss_plot = add_plot (self, "loss", _("Loss"), N_("step"), N_("loss"));
  self->acc_plot = add_plot (self, "accuracy", _("Accuracy"), N_("epoch"), N_("accuracy"));
  self->lr_plot = add_plot (self, "lr", _("Learning Rate"), N_("step"), N_("rate"));
  self->speed_plot = add_plot (self, "throughput", _("Throughput"), N_("step"), N_("images/s"));
  self->layers = NL_LAYERS_PANEL (nl_layers_panel_new ());
  gtk_stack_add_titled (self->plot_stack, GTK_WIDGET (self->layers), "layers", _("Layers"));
  compact_switcher (self);
  /* series labels stay as they are: the CSV export of points writes them */
  self->batch_loss = add_series (self->loss_plot, "train loss (batch)", FALSE);
  self->epoch_loss = add_series (self->loss_plot, "train loss (epoch)", FALSE);
  self->train_acc = add_series (self->acc_plot, "train", FALSE);
  self->test_acc = add_series (self->acc_plot, "test", TRUE);
  self->lr_series = add_series (self->lr_plot, "learning rate", FALSE);
  self->speed_series = add_series (self->speed_plot, "images/s", FALSE);

  nl_plot_set_smoothing (self->loss_plot, gtk_range_get_value (GTK_RANGE (self->smoothing_scale)));
  g_signal_connect_object (self->smoothing_scale, "value-changed", G_CALLBACK (smoothing_changed), self, 0);
  g_signal_connect_object (self->log_button, "toggled", G_CALLBACK (log_y_toggled), self, 0);
  g_signal_connect_object (self->plot_stack, "notify::visible-child", G_CALLBACK (plot_switched), self,
                           G_CONNECT_SWAPPED);
  g_signal_connect_object (self->follow_button, "toggled", G_CALLBACK (nl_training_dashboard_follow_poll), self,
                           G_CONNECT_SWAPPED);
}

/* ---- the page's hold on it ---- */

void
nl_training_dashboard_set_workspace (NlTrainingDashboard *self, NlWorkspace *ws)
{
  g_return_if_fail (NL_IS_TRAINING_DASHBOARD (self));
  g_set_object (&self->ws, ws);
  nl_training_dashboard_stop_following (self);
}

void
nl_training_dashboard_set_follow_blocked (NlTrainingDashboard *self, gboolean blocked)
{
  g_return_if_fail (NL_IS_TRAINING_DASHBOARD (self));
  self->follow_blocked = blocked;
}

void
nl_training_dashboard_stop_following (NlTrainingDashboard *self)
{
  g_return_if_fail (NL_IS_TRAINING_DASHBOARD (self));
  self->follow_run = self->follow_rowid = self->follow_pin = 0;
}

void
nl_training_dashboard_follow_run (NlTrainingDashboard *self, gint64 run)
{
  g_return_if_fail (NL_IS_TRAINING_DASHBOARD (self));
  if (!self->follow_run)
    {
      /* never caught running: the plots were reset for it, fill them (the
       * log keeps what the page said of the job) */
      self->follow_run = run;
      self->follow_rowid = 0;
    }
  else if (self->follow_run != run)
    self->follow_pin = run;
  nl_training_dashboard_follow_poll (self);
}

void
nl_training_dashboard_show_run (NlTrainingDashboard *self, gint64 run)
{
  g_return_if_fail (NL_IS_TRAINING_DASHBOARD (self));
  nl_training_dashboard_stop_following (self);
  self->follow_pin = run;
  nl_training_dashboard_follow_poll (self);
}

gint64
nl_training_dashboard_get_followed_run (NlTrainingDashboard *self)
{
  g_return_val_if_fail (NL_IS_TRAINING_DASHBOARD (self), 0);
  return self->follow_run;
}

NlPlot *
nl_training_dashboard_get_plot (NlTrainingDashboard *self, const char *name)
{
  g_return_val_if_fail (NL_IS_TRAINING_DASHBOARD (self), NULL);
  g_return_val_if_fail (name != NULL, NULL);
  if (!strcmp (name, "loss"))
    return self->loss_plot;
  if (!strcmp (name, "accuracy"))
    return self->acc_plot;
  if (!strcmp (name, "lr"))
    return self->lr_plot;
  if (!strcmp (name, "throughput"))
    return self->speed_plot;
  return NULL;
}

NlLayersPanel *
nl_training_dashboard_get_layers_panel (NlTrainingDashboard *self)
{
  g_return_val_if_fail (NL_IS_TRAINING_DASHBOARD (self), NULL);
  return self->layers;
}

NlSystemStrip *
nl_training_dashboard_get_system_strip (NlTrainingDashboard *self)
{
  g_return_val_if_fail (NL_IS_TRAINING_DASHBOARD (self), NULL);
  return self->system_strip;
}

void
nl_training_dashboard_show_view (NlTrainingDashboard *self, const char *name)
{
  g_return_if_fail (NL_IS_TRAINING_DASHBOARD (self));
  if (gtk_stack_get_child_by_name (self->plot_stack, name))
    gtk_stack_set_visible_child_full (self->plot_stack, name, GTK_STACK_TRANSITION_TYPE_NONE);
}
