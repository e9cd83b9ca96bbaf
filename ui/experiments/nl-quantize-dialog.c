/* nl-quantize-dialog.c — INT8 quantization of a run from the workbench:
 * options, the job on a GTask thread with its progress marshalled to the
 * main loop, and the result (see nl-quantize-dialog.h). */
#include "ui/experiments/nl-quantize-dialog.h"
#include <glib/gi18n.h>
#include <math.h>
#include <string.h>

#include "engine/session/nl-evaluate.h"
#include "engine/formats/onnx/nl-onnx-export.h"
#include "ui/experiments/nl-confusion-matrix.h"
#include "ui/experiments/nl-evaluation-window.h"
#include "ui/widgets/nl-file-chooser.h"
#include "ui/widgets/nl-onnx-export-dialog.h"
#include "ui/widgets/nl-range-plot.h"

struct _NlQuantizeDialog {
  AdwWindow parent_instance;

  /* template children */
  AdwWindowTitle *window_title;
  GtkButton *cancel_button, *start_button;
  GtkLabel *error_label;
  GtkStack *stack;
  GtkSpinButton *samples_spin;
  AdwComboRow *method_row, *checkpoint_row;
  GtkListBox *models_list;
  GtkLabel *phase_label;
  GtkProgressBar *progress_bar;
  GtkLabel *result_title, *fp32_acc, *int8_acc, *acc_delta, *fp32_speed, *int8_speed, *speed_ratio;
  NlRangePlot *range_plot;
  NlConfusionMatrix *fp32_matrix, *int8_matrix;

  NlWorkspace *ws;
  gint64 run;
  char *run_name;
  GCancellable *cancel;       /* the running job's; NULL when idle */
  NlQuantizeResult result;
  gboolean has_result;
};

G_DEFINE_FINAL_TYPE (NlQuantizeDialog, nl_quantize_dialog, ADW_TYPE_WINDOW)

static const char *const checkpoints[] = { "best", "last" };

/* ---- the job ---- */

/* The latest progress, shared by the worker and the main loop: the worker
 * overwrites it and queues one idle at a time, so a fast engine never
 * floods the main loop. */
typedef struct {
  GMutex lock;
  char *phase;
  double fraction;
  gboolean queued;
  GWeakRef dialog;
  GCancellable *cancel;       /* the job it belongs to: a later job's dialog ignores it */
} Progress;

static void
progress_clear (gpointer data)
{
  Progress *p = data;
  g_mutex_clear (&p->lock);
  g_free (p->phase);
  g_weak_ref_clear (&p->dialog);
  g_clear_object (&p->cancel);
}

typedef struct {
  NlWorkspace *ws;
  gint64 run;
  char *which;
  NlQuantizeOptions opts;
  Progress *progress;
  NlQuantizeResult result;
  char **class_names;
} Job;

static void
job_free (Job *j)
{
  g_clear_object (&j->ws);
  g_free (j->which);
  g_atomic_rc_box_release_full (j->progress, progress_clear);
  nl_quantize_result_clear (&j->result);
  g_strfreev (j->class_names);
  g_free (j);
}

static void show_progress (NlQuantizeDialog *self, const char *phase, double fraction);

static gboolean
progress_idle (gpointer data)
{
  Progress *p = data;
  g_autoptr (NlQuantizeDialog) self = g_weak_ref_get (&p->dialog);
  g_autofree char *phase = NULL;
  double fraction;
  g_mutex_lock (&p->lock);
  phase = g_strdup (p->phase);
  fraction = p->fraction;
  p->queued = FALSE;
  g_mutex_unlock (&p->lock);
  if (self && self->cancel == p->cancel)
    show_progress (self, phase, fraction);
  return G_SOURCE_REMOVE;
}

static void
progress_release (gpointer data)
{
  g_atomic_rc_box_release_full (data, progress_clear);
}

/* NlQuantizeProgress, on the worker thread. */
static void
on_progress (const char *phase, double fraction, gpointer data)
{
  Progress *p = data;
  gboolean queue;
  g_mutex_lock (&p->lock);
  if (g_strcmp0 (p->phase, phase) != 0)
    {
      g_free (p->phase);
      p->phase = g_strdup (phase);
    }
  p->fraction = fraction;
  queue = !p->queued;
  p->queued = TRUE;
  g_mutex_unlock (&p->lock);
  if (queue)
    g_idle_add_full (G_PRIORITY_DEFAULT_IDLE, progress_idle, g_atomic_rc_box_acquire (p), progress_release);
}

static void
quantize_thread (GTask *task, gpointer source, gpointer data, GCancellable *cancellable)
{
  Job *j = data;
  NlProject *p = nl_workspace_get_project (j->ws);
  GError *error = NULL;
  g_autofree char *epoch = NULL;
  g_autoptr (NlEvaluation) ev = NULL;

  if (!nl_run_quantize (p, j->run, &j->opts, on_progress, j->progress, &j->result, cancellable, &error))
    {
      g_task_return_error (task, error);
      return;
    }
  /* the class names for the matrices' axes; numbers will do without them */
  epoch = g_strdup_printf ("%d", j->result.epoch);
  if ((ev = nl_evaluation_open (p, j->run, epoch, NULL, FALSE, NULL)) && ev->n_classes == j->result.n_classes)
    j->class_names = g_strdupv (ev->class_names);
  g_task_return_boolean (task, TRUE);
}

/* ---- what the dialog shows ---- */

static void
set_running (NlQuantizeDialog *self, gboolean running)
{
  gtk_widget_set_sensitive (GTK_WIDGET (self->start_button), !running);
  gtk_stack_set_visible_child_name (self->stack, running ? "running" : "form");
}

/* The engine's phases (nl_run_quantize's progress), as the user reads them. */
static const char *
phase_text (const char *phase)
{
  static const char *const phases[][2] = {
    { "starting", N_("Starting…") },
    { "loading", N_("Loading the checkpoint and the data…") },
    { "calibrating", N_("Calibrating…") },
    { "evaluating fp32", N_("Evaluating fp32…") },
    { "evaluating int8", N_("Evaluating INT8…") },
    { "timing fp32", N_("Timing fp32…") },
    { "timing int8", N_("Timing INT8…") },
    { "saving", N_("Saving the INT8 model…") },
  };
  for (guint i = 0; i < G_N_ELEMENTS (phases); i++)
    if (g_strcmp0 (phase, phases[i][0]) == 0)
      return _(phases[i][1]);
  return phase; /* a phase added later: the engine's words */
}

static void
show_progress (NlQuantizeDialog *self, const char *phase, double fraction)
{
  g_autofree char *pct = g_strdup_printf ("%.0f %%", CLAMP (fraction, 0, 1) * 100);
  if (phase && *phase)
    gtk_label_set_text (self->phase_label, phase_text (phase));
  gtk_progress_bar_set_fraction (self->progress_bar, CLAMP (fraction, 0, 1));
  gtk_progress_bar_set_text (self->progress_bar, pct);
}

/* A message above the pages: an error (red), or a note (an export's). */
static void
show_message (NlQuantizeDialog *self, const char *message, gboolean is_error)
{
  gtk_label_set_text (self->error_label, message ? message : "");
  gtk_widget_set_visible (GTK_WIDGET (self->error_label), message != NULL);
  if (is_error)
    gtk_widget_add_css_class (GTK_WIDGET (self->error_label), "error");
  else
    gtk_widget_remove_css_class (GTK_WIDGET (self->error_label), "error");
}

static void
show_error (NlQuantizeDialog *self, const char *message)
{
  show_message (self, message, TRUE);
}

static char *
format_acc (double acc)
{
  return isfinite (acc) ? g_strdup_printf ("%.2f %%", acc * 100) : g_strdup ("—");
}

static char *
format_speed (double ips)
{
  return isfinite (ips) ? g_strdup_printf (_("%.0f images/s"), ips) : g_strdup ("—");
}

static void
set_label_take (GtkLabel *label, char *text)
{
  gtk_label_set_text (label, text);
  g_free (text);
}

static void
show_result (NlQuantizeDialog *self, char **class_names)
{
  const NlQuantizeResult *r = &self->result;
  const char *method = r->table ? nl_quant_method_name (r->table->method) : "?";
  double ratio = r->fp32_images_per_s > 0 ? r->int8_images_per_s / r->fp32_images_per_s : NAN;
  int n = r->n_classes;

  set_label_take (self->result_title,
                  g_strdup_printf (_("INT8 model %" G_GINT64_FORMAT " of epoch %d · %s · %d calibration samples"),
                                   r->int8_id, r->epoch, method, r->table ? r->table->calibration_samples : 0));
  set_label_take (self->fp32_acc, format_acc (r->fp32_test_acc));
  set_label_take (self->int8_acc, format_acc (r->int8_test_acc));
  /* TRANSLATORS: the change of accuracy in percentage points */
  set_label_take (self->acc_delta, g_strdup_printf (_("%+.2f points"), (r->int8_test_acc - r->fp32_test_acc) * 100));
  set_label_take (self->fp32_speed, format_speed (r->fp32_images_per_s));
  set_label_take (self->int8_speed, format_speed (r->int8_images_per_s));
  /* TRANSLATORS: INT8 images/s over fp32 images/s, e.g. "2.41× as fast" */
  set_label_take (self->speed_ratio, isfinite (ratio) ? g_strdup_printf (_("%.2f× as fast"), ratio) : g_strdup ("—"));
  nl_range_plot_set_table (self->range_plot, r->table);
  nl_confusion_matrix_set_data (self->fp32_matrix, r->fp32_confusion ? n : 0, r->fp32_confusion,
                                (const char *const *) class_names);
  nl_confusion_matrix_set_data (self->int8_matrix, r->int8_confusion ? n : 0, r->int8_confusion,
                                (const char *const *) class_names);
  gtk_stack_set_visible_child_name (self->stack, "result");
  gtk_widget_set_visible (GTK_WIDGET (self->start_button), FALSE);
  gtk_button_set_label (self->cancel_button, _("_Close"));
}

static void
quantize_done (GObject *source, GAsyncResult *res, gpointer data)
{
  NlQuantizeDialog *self = NL_QUANTIZE_DIALOG (source);
  Job *j = g_task_get_task_data (G_TASK (res));
  g_autoptr (GError) error = NULL;
  gboolean ok = g_task_propagate_boolean (G_TASK (res), &error);

  nl_workspace_busy_pop (j->ws);
  if (ok)
    nl_workspace_notify (j->ws, NL_WORKSPACE_RUNS);
  /* a job that was cancelled and replaced, or a closed dialog, shows nothing */
  if (!self->cancel || g_task_get_cancellable (G_TASK (res)) != self->cancel)
    return;
  g_clear_object (&self->cancel);
  set_running (self, FALSE);
  if (!ok)
    {
      if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        show_message (self, _("Cancelled: nothing was stored."), FALSE);
      else
        show_error (self, error->message);
      return;
    }
  nl_quantize_result_clear (&self->result);
  self->result = j->result;
  memset (&j->result, 0, sizeof j->result);
  self->has_result = TRUE;
  show_result (self, j->class_names);
  nl_quantize_dialog_refresh_models (self);
}

void
nl_quantize_dialog_start (NlQuantizeDialog *self)
{
  g_autoptr (GTask) task = NULL;
  Job *j;
  g_return_if_fail (NL_IS_QUANTIZE_DIALOG (self));
  if (self->cancel || !self->ws)
    return;
  gtk_spin_button_update (self->samples_spin);
  self->cancel = g_cancellable_new ();
  j = g_new0 (Job, 1);
  j->ws = g_object_ref (self->ws);
  j->run = self->run;
  j->which = g_strdup (nl_quantize_dialog_get_checkpoint (self));
  /* NULL: the best, or the last of a run that measured nothing (an import) */
  j->opts.which = g_str_equal (j->which, "best") ? NULL : j->which;
  j->opts.calibration_samples = nl_quantize_dialog_get_calibration_samples (self);
  j->opts.method = nl_quantize_dialog_get_method (self);
  j->progress = g_atomic_rc_box_new0 (Progress);
  g_mutex_init (&j->progress->lock);
  g_weak_ref_init (&j->progress->dialog, self);
  j->progress->cancel = g_object_ref (self->cancel);

  show_error (self, NULL);
  show_progress (self, "starting", 0);
  set_running (self, TRUE);
  task = g_task_new (self, self->cancel, quantize_done, NULL);
  g_task_set_source_tag (task, nl_quantize_dialog_start);
  g_task_set_task_data (task, j, (GDestroyNotify) job_free);
  nl_workspace_busy_push (self->ws);
  g_task_run_in_thread (task, quantize_thread);
}

void
nl_quantize_dialog_cancel (NlQuantizeDialog *self)
{
  g_return_if_fail (NL_IS_QUANTIZE_DIALOG (self));
  if (self->cancel)
    g_cancellable_cancel (self->cancel);
}

gboolean
nl_quantize_dialog_is_running (NlQuantizeDialog *self)
{
  g_return_val_if_fail (NL_IS_QUANTIZE_DIALOG (self), FALSE);
  return self->cancel != NULL;
}

static void
on_cancel_clicked (NlQuantizeDialog *self)
{
  if (self->cancel)
    nl_quantize_dialog_cancel (self);
  else
    gtk_window_close (GTK_WINDOW (self));
}

/* Closing while it runs stops the job: nothing half-done is kept. */
static gboolean
nl_quantize_dialog_close_request (GtkWindow *window)
{
  NlQuantizeDialog *self = NL_QUANTIZE_DIALOG (window);
  if (self->cancel)
    {
      g_cancellable_cancel (self->cancel);
      g_clear_object (&self->cancel);
    }
  return GTK_WINDOW_CLASS (nl_quantize_dialog_parent_class)->close_request
             ? GTK_WINDOW_CLASS (nl_quantize_dialog_parent_class)->close_request (window)
             : FALSE;
}

/* ---- the run's INT8 models ---- */

static void
delete_clicked (GtkButton *button, NlQuantizeDialog *self)
{
  gint64 id = *(gint64 *) g_object_get_data (G_OBJECT (button), "nl-int8-id");
  g_autoptr (GError) error = NULL;
  if (!self->ws)
    return;
  if (!nl_project_delete_int8_model (nl_workspace_get_project (self->ws), id, &error))
    show_error (self, error->message);
  nl_workspace_notify (self->ws, NL_WORKSPACE_RUNS);
  nl_quantize_dialog_refresh_models (self);
}

/* An export under way: the dialog to tell, the workspace it keeps busy. */
typedef struct {
  NlQuantizeDialog *self;
  NlWorkspace *ws;
} Export;

static void
export_done (GObject *source, GAsyncResult *res, gpointer data)
{
  Export *e = data;
  g_autoptr (NlQuantizeDialog) self = e->self;
  g_autoptr (GError) error = NULL;
  g_autofree char *msg = nl_onnx_export_finish (res, &error);
  nl_workspace_busy_pop (e->ws);
  g_object_unref (e->ws);
  g_free (e);
  if (msg)
    show_message (self, msg, FALSE);
  else
    show_error (self, error->message);
}

static void
export_chosen (GtkWidget *owner, const char *path, gpointer data)
{
  NlQuantizeDialog *self = NL_QUANTIZE_DIALOG (owner);
  g_autofree char *full = g_str_has_suffix (path, ".onnx") ? g_strdup (path) : g_strconcat (path, ".onnx", NULL);
  Export *e;
  if (!self->ws)
    return;
  e = g_new0 (Export, 1);
  e->self = g_object_ref (self);
  e->ws = g_object_ref (self->ws);
  nl_workspace_busy_push (e->ws);
  /* the newest INT8 model made from the checkpoint of that epoch: this row's */
  nl_onnx_export_async (e->ws, self->run, NULL, data, NL_ONNX_OPSET_MAX, TRUE, TRUE, full, export_done, e);
}

static void
export_clicked (GtkButton *button, NlQuantizeDialog *self)
{
  const char *epoch = g_object_get_data (G_OBJECT (button), "nl-epoch");
  g_autoptr (GtkFileFilter) filter = gtk_file_filter_new ();
  g_autofree char *name = g_strdup_printf ("%s-int8-epoch%s.onnx", self->run_name ? self->run_name : "run", epoch);
  g_strdelimit (name, "/\\", '-');
  gtk_file_filter_set_name (filter, _("ONNX models"));
  gtk_file_filter_add_pattern (filter, "*.onnx");
  nl_choose_file (GTK_WIDGET (self), GTK_FILE_CHOOSER_ACTION_SAVE, _("Export INT8 ONNX"), _("_Export"), name, filter,
                  export_chosen, g_strdup (epoch), g_free);
}

static void
evaluate_clicked (GtkButton *button, NlQuantizeDialog *self)
{
  if (self->ws)
    nl_evaluation_window_new (GTK_WINDOW (self), self->ws, self->run, g_object_get_data (G_OBJECT (button), "nl-epoch"),
                              TRUE);
}

/* A button of a model row: the model is found by its checkpoint's epoch. */
static GtkWidget *
row_button (NlQuantizeDialog *self, const char *icon, const char *label, const char *tooltip, int epoch,
            GCallback clicked)
{
  GtkWidget *b = label ? gtk_button_new_with_mnemonic (label) : gtk_button_new_from_icon_name (icon);
  gtk_widget_set_valign (b, GTK_ALIGN_CENTER);
  gtk_widget_add_css_class (b, "flat");
  gtk_widget_set_tooltip_text (b, tooltip);
  g_object_set_data_full (G_OBJECT (b), "nl-epoch", g_strdup_printf ("%d", epoch), g_free);
  g_signal_connect_object (b, "clicked", clicked, self, 0);
  return b;
}

static GtkWidget *
model_row (NlQuantizeDialog *self, const NlInt8ModelInfo *m, gboolean newest_of_checkpoint)
{
  GtkWidget *row = adw_action_row_new (), *del = gtk_button_new_from_icon_name ("user-trash-symbolic");
  g_autofree char *fp32 = format_acc (m->fp32_test_acc), *int8 = format_acc (m->int8_test_acc);
  g_autofree char *size = g_format_size ((guint64) MAX (m->size, 0));
  g_autofree char *title = g_strdup_printf (_("Model %" G_GINT64_FORMAT " · epoch %d · %s · %d samples"), m->id,
                                            m->epoch, m->method ? m->method : "?", m->calibration_samples);
  g_autofree char *ratio = isfinite (m->int8_images_per_s) && m->fp32_images_per_s > 0
                               ? g_strdup_printf (_("%.2f× as fast"), m->int8_images_per_s / m->fp32_images_per_s)
                               : g_strdup ("—");
  /* TRANSLATORS: fp32 accuracy → INT8 accuracy · speed ratio · blob size */
  g_autofree char *subtitle = g_strdup_printf (_("Test accuracy %s → %s · %s · %s"), fp32, int8, ratio, size);
  adw_preferences_row_set_title (ADW_PREFERENCES_ROW (row), title);
  adw_action_row_set_subtitle (ADW_ACTION_ROW (row), subtitle);
  gtk_widget_set_valign (del, GTK_ALIGN_CENTER);
  gtk_widget_add_css_class (del, "flat");
  gtk_widget_set_tooltip_text (del, _("Delete this INT8 model"));
  g_object_set_data_full (G_OBJECT (del), "nl-int8-id", g_memdup2 (&m->id, sizeof m->id), g_free);
  g_signal_connect_object (del, "clicked", G_CALLBACK (delete_clicked), self, 0);
  /* evaluation and ONNX export find a model by its checkpoint: the newest of each */
  if (newest_of_checkpoint)
    adw_action_row_add_suffix (ADW_ACTION_ROW (row),
                               row_button (self, NULL, _("_Evaluate"), _("Evaluate this INT8 model in its own window"),
                                           m->epoch, G_CALLBACK (evaluate_clicked)));
  if (newest_of_checkpoint && nl_onnx_available ())
    adw_action_row_add_suffix (ADW_ACTION_ROW (row),
                               row_button (self, "document-save-as-symbolic", NULL,
                                           _("Export this INT8 model as ONNX (QDQ form)…"), m->epoch,
                                           G_CALLBACK (export_clicked)));
  adw_action_row_add_suffix (ADW_ACTION_ROW (row), del);
  return row;
}

void
nl_quantize_dialog_refresh_models (NlQuantizeDialog *self)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GArray) models = NULL;
  GtkWidget *child;
  g_return_if_fail (NL_IS_QUANTIZE_DIALOG (self));
  while ((child = gtk_widget_get_first_child (GTK_WIDGET (self->models_list))))
    gtk_list_box_remove (self->models_list, child);
  if (!self->ws)
    return;
  /* a run has a handful: read them here */
  models = nl_project_list_int8_models (nl_workspace_get_project (self->ws), self->run, &error);
  for (guint i = 0; models && i < models->len; i++)
    {
      const NlInt8ModelInfo *m = &g_array_index (models, NlInt8ModelInfo, i);
      gboolean newest = TRUE;
      for (guint k = i + 1; k < models->len; k++)
        newest &= g_array_index (models, NlInt8ModelInfo, k).epoch != m->epoch;
      gtk_list_box_append (self->models_list, model_row (self, m, newest));
    }
  if (!models || models->len == 0)
    {
      GtkWidget *row = adw_action_row_new ();
      adw_preferences_row_set_title (ADW_PREFERENCES_ROW (row),
                                     models ? _("None yet") : error->message);
      gtk_list_box_append (self->models_list, row);
    }
}

/* ---- the options ---- */

int
nl_quantize_dialog_get_calibration_samples (NlQuantizeDialog *self)
{
  g_return_val_if_fail (NL_IS_QUANTIZE_DIALOG (self), 0);
  return gtk_spin_button_get_value_as_int (self->samples_spin);
}

void
nl_quantize_dialog_set_calibration_samples (NlQuantizeDialog *self, int samples)
{
  g_return_if_fail (NL_IS_QUANTIZE_DIALOG (self));
  gtk_spin_button_set_value (self->samples_spin, samples);
}

NlQuantMethod
nl_quantize_dialog_get_method (NlQuantizeDialog *self)
{
  g_return_val_if_fail (NL_IS_QUANTIZE_DIALOG (self), NL_QUANT_NAIVE);
  return (NlQuantMethod) MIN (adw_combo_row_get_selected (self->method_row), NL_QUANT_METHOD_COUNT - 1);
}

void
nl_quantize_dialog_set_method (NlQuantizeDialog *self, NlQuantMethod method)
{
  g_return_if_fail (NL_IS_QUANTIZE_DIALOG (self));
  g_return_if_fail (method >= 0 && method < NL_QUANT_METHOD_COUNT);
  adw_combo_row_set_selected (self->method_row, (guint) method);
}

const char *
nl_quantize_dialog_get_checkpoint (NlQuantizeDialog *self)
{
  g_return_val_if_fail (NL_IS_QUANTIZE_DIALOG (self), NULL);
  return checkpoints[MIN (adw_combo_row_get_selected (self->checkpoint_row), G_N_ELEMENTS (checkpoints) - 1)];
}

void
nl_quantize_dialog_set_checkpoint (NlQuantizeDialog *self, const char *which)
{
  g_return_if_fail (NL_IS_QUANTIZE_DIALOG (self));
  adw_combo_row_set_selected (self->checkpoint_row, g_strcmp0 (which, "last") == 0);
}

/* ---- for tests ---- */

const NlQuantizeResult *
nl_quantize_dialog_get_result (NlQuantizeDialog *self)
{
  g_return_val_if_fail (NL_IS_QUANTIZE_DIALOG (self), NULL);
  return self->has_result ? &self->result : NULL;
}

const char *
nl_quantize_dialog_get_error (NlQuantizeDialog *self)
{
  g_return_val_if_fail (NL_IS_QUANTIZE_DIALOG (self), NULL);
  return gtk_widget_has_css_class (GTK_WIDGET (self->error_label), "error") ? nl_quantize_dialog_get_message (self)
                                                                             : NULL;
}

const char *
nl_quantize_dialog_get_message (NlQuantizeDialog *self)
{
  g_return_val_if_fail (NL_IS_QUANTIZE_DIALOG (self), NULL);
  return gtk_widget_get_visible (GTK_WIDGET (self->error_label)) ? gtk_label_get_text (self->error_label) : NULL;
}

GtkWidget *
nl_quantize_dialog_get_range_plot (NlQuantizeDialog *self)
{
  g_return_val_if_fail (NL_IS_QUANTIZE_DIALOG (self), NULL);
  return GTK_WIDGET (self->range_plot);
}

GtkWidget *
nl_quantize_dialog_get_matrix (NlQuantizeDialog *self, gboolean int8)
{
  g_return_val_if_fail (NL_IS_QUANTIZE_DIALOG (self), NULL);
  return GTK_WIDGET (int8 ? self->int8_matrix : self->fp32_matrix);
}

const char *
nl_quantize_dialog_get_accuracy_text (NlQuantizeDialog *self, gboolean int8)
{
  g_return_val_if_fail (NL_IS_QUANTIZE_DIALOG (self), NULL);
  return gtk_label_get_text (int8 ? self->int8_acc : self->fp32_acc);
}

GtkWidget *
nl_quantize_dialog_get_models_list (NlQuantizeDialog *self)
{
  g_return_val_if_fail (NL_IS_QUANTIZE_DIALOG (self), NULL);
  return GTK_WIDGET (self->models_list);
}

/* ---- GObject ---- */

NlQuantizeDialog *
nl_quantize_dialog_new (GtkWidget *owner, NlWorkspace *ws, gint64 run, const char *run_name)
{
  GtkRoot *root;
  NlQuantizeDialog *self;
  g_return_val_if_fail (GTK_IS_WIDGET (owner) && NL_IS_WORKSPACE (ws) && run > 0, NULL);
  root = gtk_widget_get_root (owner);
  self = g_object_new (NL_TYPE_QUANTIZE_DIALOG, "transient-for", GTK_IS_WINDOW (root) ? GTK_WINDOW (root) : NULL,
                       NULL);
  self->ws = g_object_ref (ws);
  self->run = run;
  self->run_name = g_strdup (run_name);
  adw_window_title_set_subtitle (self->window_title, run_name ? run_name : "");
  nl_quantize_dialog_refresh_models (self);
  return self;
}

static void
nl_quantize_dialog_dispose (GObject *object)
{
  NlQuantizeDialog *self = NL_QUANTIZE_DIALOG (object);
  if (self->cancel)
    g_cancellable_cancel (self->cancel);
  g_clear_object (&self->cancel);
  g_clear_object (&self->ws);
  G_OBJECT_CLASS (nl_quantize_dialog_parent_class)->dispose (object);
}

static void
nl_quantize_dialog_finalize (GObject *object)
{
  nl_quantize_result_clear (&NL_QUANTIZE_DIALOG (object)->result);
  g_free (NL_QUANTIZE_DIALOG (object)->run_name);
  G_OBJECT_CLASS (nl_quantize_dialog_parent_class)->finalize (object);
}

static void
nl_quantize_dialog_class_init (NlQuantizeDialogClass *klass)
{
  GObjectClass *oc = G_OBJECT_CLASS (klass);
  GtkWidgetClass *wc = GTK_WIDGET_CLASS (klass);

  oc->dispose = nl_quantize_dialog_dispose;
  oc->finalize = nl_quantize_dialog_finalize;
  GTK_WINDOW_CLASS (klass)->close_request = nl_quantize_dialog_close_request;
  g_type_ensure (NL_TYPE_RANGE_PLOT);
  g_type_ensure (NL_TYPE_CONFUSION_MATRIX);
  gtk_widget_class_set_template_from_resource (wc, "/io/github/netloom/Netloom/ui/nl-quantize-dialog.ui");
#define BIND(name) gtk_widget_class_bind_template_child (wc, NlQuantizeDialog, name)
  BIND (window_title);
  BIND (cancel_button);
  BIND (start_button);
  BIND (error_label);
  BIND (stack);
  BIND (samples_spin);
  BIND (method_row);
  BIND (checkpoint_row);
  BIND (models_list);
  BIND (phase_label);
  BIND (progress_bar);
  BIND (result_title);
  BIND (fp32_acc);
  BIND (int8_acc);
  BIND (acc_delta);
  BIND (fp32_speed);
  BIND (int8_speed);
  BIND (speed_ratio);
  BIND (range_plot);
  BIND (fp32_matrix);
  BIND (int8_matrix);
#undef BIND
  gtk_widget_class_bind_template_callback (wc, on_cancel_clicked);
  gtk_widget_class_bind_template_callback (wc, nl_quantize_dialog_start);
  gtk_widget_class_add_binding_action (wc, GDK_KEY_Escape, 0, "window.close", NULL);
}

static void
nl_quantize_dialog_init (NlQuantizeDialog *self)
{
  g_autoptr (GtkStringList) methods = gtk_string_list_new (NULL);
  gtk_widget_init_template (GTK_WIDGET (self));
  /* one row per method the calibrator has, in its enum's order */
  for (int m = 0; m < NL_QUANT_METHOD_COUNT; m++)
    gtk_string_list_append (methods, nl_quant_method_name ((NlQuantMethod) m));
  adw_combo_row_set_model (self->method_row, G_LIST_MODEL (methods));
  adw_combo_row_set_selected (self->method_row, NL_QUANT_ENTROPY);
}
