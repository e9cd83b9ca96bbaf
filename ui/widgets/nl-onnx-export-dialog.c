/* nl-onnx-export-dialog.c — the options of an ONNX export, the save
 * chooser after them, and the export on a worker thread (see
 * nl-onnx-export-dialog.h). */
#include "ui/widgets/nl-onnx-export-dialog.h"
#include <glib/gi18n.h>
#include <inttypes.h>
#include "engine/formats/onnx/nl-onnx-export.h"
#include "engine/session/nl-run-model.h"
#include "engine/session/nl-run-onnx.h"
#include "ui/widgets/nl-file-chooser.h"

struct _NlOnnxExportDialog {
  AdwMessageDialog parent_instance;

  GtkWidget *owner;
  NlWorkspace *ws;
  gint64 run;
  char *network, *suggested;
  AdwComboRow *checkpoint_row, *opset_row, *precision_row;
  GtkSwitch *softmax_switch;
};

G_DEFINE_FINAL_TYPE (NlOnnxExportDialog, nl_onnx_export_dialog, ADW_TYPE_MESSAGE_DIALOG)

static const char *const checkpoints[] = { "best", "last" };

/* ---- the export job ---- */

typedef struct {
  NlWorkspace *ws;
  gint64 run;
  char *network, *which, *path;
  int opset;
  gboolean softmax, int8;
} ExportJob;

static void
export_job_free (ExportJob *j)
{
  g_clear_object (&j->ws);
  g_free (j->network);
  g_free (j->which);
  g_free (j->path);
  g_free (j);
}

static ExportJob *
export_job_new (NlWorkspace *ws, gint64 run, const char *network, const char *which, int opset, gboolean softmax,
                gboolean int8, const char *path)
{
  ExportJob *j = g_new0 (ExportJob, 1);
  j->ws = g_object_ref (ws);
  j->run = run;
  j->network = g_strdup (network);
  j->which = g_strdup (which ? which : "best");
  j->opset = opset;
  j->softmax = softmax;
  j->int8 = int8 && run > 0;
  j->path = g_strdup (path);
  return j;
}

static void
export_thread (GTask *task, gpointer source, gpointer data, GCancellable *cancellable)
{
  ExportJob *j = data;
  NlProject *p = nl_workspace_get_project (j->ws);
  GError *error = NULL;
  gint64 run = j->run > 0 ? j->run : nl_run_find_for_network (p, j->network, &error);
  const char *which = j->which;
  g_autoptr (NlRunInfo) info = NULL;
  g_autofree char *base = g_path_get_basename (j->path);
  char *msg;
  gint64 ckpt = 0, int8 = 0;

  if (run <= 0)
    {
      g_task_return_error (task, error);
      return;
    }
  /* a run that measured nothing (an import) has no best: its last then */
  if (g_str_equal (which, "best") && nl_project_find_checkpoint (p, run, "best", NULL) <= 0)
    which = "last";
  if (j->int8 ? !nl_run_export_onnx_int8 (p, run, which, j->path, j->opset, j->softmax, &int8, &error)
              : !nl_run_export_onnx (p, run, which, j->path, j->opset, j->softmax, &ckpt, &error))
    {
      g_task_return_error (task, error);
      return;
    }
  info = nl_project_get_run (p, run, NULL);
  if (j->int8)
    msg = g_strdup_printf (_("Exported INT8 model %" PRId64 " of “%s” to “%s”"), int8,
                           info ? info->name : _("the run"), base);
  else if (j->run > 0)
    msg = g_strdup_printf (_("Exported checkpoint %" PRId64 " of “%s” to “%s”"), ckpt,
                           info ? info->name : _("the run"), base);
  else
    msg = g_strdup_printf (_("Exported “%s” with the weights of run “%s” to “%s”"), j->network,
                           info ? info->name : "?", base);
  g_task_return_pointer (task, msg, g_free);
}

void
nl_onnx_export_async (NlWorkspace *ws, gint64 run, const char *network, const char *which, int opset,
                      gboolean softmax, gboolean int8, const char *path, GAsyncReadyCallback callback,
                      gpointer user_data)
{
  g_autoptr (GTask) task = NULL;
  g_return_if_fail (NL_IS_WORKSPACE (ws) && path != NULL);
  g_return_if_fail (run > 0 || network != NULL);
  task = g_task_new (NULL, NULL, callback, user_data);
  g_task_set_source_tag (task, nl_onnx_export_async);
  g_task_set_task_data (task, export_job_new (ws, run, network, which, opset, softmax, int8, path),
                        (GDestroyNotify) export_job_free);
  g_task_run_in_thread (task, export_thread);
}

char *
nl_onnx_export_finish (GAsyncResult *result, GError **error)
{
  g_return_val_if_fail (g_task_is_valid (result, NULL), NULL);
  return g_task_propagate_pointer (G_TASK (result), error);
}

static void
export_done (GObject *source, GAsyncResult *res, gpointer data)
{
  ExportJob *j = g_task_get_task_data (G_TASK (res));
  g_autoptr (GError) error = NULL;
  g_autofree char *msg = nl_onnx_export_finish (res, &error);
  nl_workspace_busy_pop (j->ws);
  if (msg)
    nl_workspace_toast (j->ws, "%s", msg);
  else
    nl_workspace_toast (j->ws, _("Could not export ONNX: %s"), error->message);
}

/* ---- the dialog ---- */

static void
file_chosen (GtkWidget *owner, const char *path, gpointer data)
{
  ExportJob *j = data;
  g_autofree char *full = g_str_has_suffix (path, ".onnx") ? g_strdup (path) : g_strconcat (path, ".onnx", NULL);
  nl_workspace_busy_push (j->ws);
  nl_onnx_export_async (j->ws, j->run, j->network, j->which, j->opset, j->softmax, j->int8, full, export_done,
                        NULL);
}

static void
choose_file (NlOnnxExportDialog *self)
{
  g_autoptr (GtkFileFilter) filter = gtk_file_filter_new ();
  g_autofree char *name = g_str_has_suffix (self->suggested, ".onnx") ? g_strdup (self->suggested)
                                                                       : g_strconcat (self->suggested, ".onnx", NULL);
  ExportJob *j = export_job_new (self->ws, self->run, self->network, nl_onnx_export_dialog_get_checkpoint (self),
                                 nl_onnx_export_dialog_get_opset (self), nl_onnx_export_dialog_get_softmax (self),
                                 nl_onnx_export_dialog_get_int8 (self), NULL);
  gtk_file_filter_set_name (filter, "ONNX models");
  gtk_file_filter_add_pattern (filter, "*.onnx");
  g_strdelimit (name, "/\\", '-');
  nl_choose_file (self->owner, GTK_FILE_CHOOSER_ACTION_SAVE, _("Export ONNX"), _("_Export"), name, filter,
                  file_chosen, j,
                  (GDestroyNotify) export_job_free);
}

static void
nl_onnx_export_dialog_response (AdwMessageDialog *dialog, const char *response)
{
  NlOnnxExportDialog *self = NL_ONNX_EXPORT_DIALOG (dialog);
  if (g_str_equal (response, "export") && self->owner && self->ws)
    choose_file (self);
  /* libadwaita 1.2 has no default handler to chain up to */
  if (ADW_MESSAGE_DIALOG_CLASS (nl_onnx_export_dialog_parent_class)->response)
    ADW_MESSAGE_DIALOG_CLASS (nl_onnx_export_dialog_parent_class)->response (dialog, response);
}

const char *
nl_onnx_export_dialog_get_checkpoint (NlOnnxExportDialog *self)
{
  g_return_val_if_fail (NL_IS_ONNX_EXPORT_DIALOG (self), NULL);
  return checkpoints[MIN (adw_combo_row_get_selected (self->checkpoint_row), G_N_ELEMENTS (checkpoints) - 1)];
}

void
nl_onnx_export_dialog_set_checkpoint (NlOnnxExportDialog *self, const char *which)
{
  g_return_if_fail (NL_IS_ONNX_EXPORT_DIALOG (self));
  adw_combo_row_set_selected (self->checkpoint_row, g_strcmp0 (which, "last") == 0);
}

int
nl_onnx_export_dialog_get_opset (NlOnnxExportDialog *self)
{
  g_return_val_if_fail (NL_IS_ONNX_EXPORT_DIALOG (self), NL_ONNX_OPSET_MAX);
  return NL_ONNX_OPSET_MAX - (int) MIN (adw_combo_row_get_selected (self->opset_row),
                                        (guint) (NL_ONNX_OPSET_MAX - NL_ONNX_OPSET_MIN));
}

void
nl_onnx_export_dialog_set_opset (NlOnnxExportDialog *self, int opset)
{
  g_return_if_fail (NL_IS_ONNX_EXPORT_DIALOG (self));
  g_return_if_fail (opset >= NL_ONNX_OPSET_MIN && opset <= NL_ONNX_OPSET_MAX);
  adw_combo_row_set_selected (self->opset_row, (guint) (NL_ONNX_OPSET_MAX - opset));
}

gboolean
nl_onnx_export_dialog_get_softmax (NlOnnxExportDialog *self)
{
  g_return_val_if_fail (NL_IS_ONNX_EXPORT_DIALOG (self), FALSE);
  return gtk_switch_get_active (self->softmax_switch);
}

void
nl_onnx_export_dialog_set_softmax (NlOnnxExportDialog *self, gboolean softmax)
{
  g_return_if_fail (NL_IS_ONNX_EXPORT_DIALOG (self));
  gtk_switch_set_active (self->softmax_switch, softmax);
}

gboolean
nl_onnx_export_dialog_get_int8 (NlOnnxExportDialog *self)
{
  g_return_val_if_fail (NL_IS_ONNX_EXPORT_DIALOG (self), FALSE);
  return gtk_widget_get_visible (GTK_WIDGET (self->precision_row))
         && adw_combo_row_get_selected (self->precision_row) == 1;
}

void
nl_onnx_export_dialog_set_int8 (NlOnnxExportDialog *self, gboolean int8)
{
  g_return_if_fail (NL_IS_ONNX_EXPORT_DIALOG (self));
  adw_combo_row_set_selected (self->precision_row, int8 ? 1 : 0);
}

/* The precision row is there for a run with INT8 models only. */
static gboolean
has_int8_models (NlWorkspace *ws, gint64 run)
{
  g_autoptr (GArray) models = run > 0 ? nl_project_list_int8_models (nl_workspace_get_project (ws), run, NULL) : NULL;
  return models && models->len > 0;
}

NlOnnxExportDialog *
nl_onnx_export_dialog_new (GtkWidget *owner, NlWorkspace *ws, gint64 run, const char *network, const char *suggested)
{
  GtkRoot *root;
  NlOnnxExportDialog *self;

  g_return_val_if_fail (GTK_IS_WIDGET (owner) && NL_IS_WORKSPACE (ws), NULL);
  g_return_val_if_fail (run > 0 || network != NULL, NULL);
  root = gtk_widget_get_root (owner);
  self = g_object_new (NL_TYPE_ONNX_EXPORT_DIALOG, "transient-for", GTK_IS_WINDOW (root) ? GTK_WINDOW (root) : NULL,
                       "body",
                       run > 0 ? _("The run's inference graph with its weights, for onnxruntime, Netron or TensorRT.")
                               : _("The network with the weights of its newest run, trained or imported."),
                       NULL);
  self->owner = g_object_ref (owner);
  self->ws = g_object_ref (ws);
  self->run = run;
  self->network = g_strdup (network);
  self->suggested = g_strdup (suggested && *suggested ? suggested : "model.onnx");
  gtk_widget_set_visible (GTK_WIDGET (self->precision_row), has_int8_models (ws, run));
  return self;
}

static void
nl_onnx_export_dialog_dispose (GObject *object)
{
  NlOnnxExportDialog *self = NL_ONNX_EXPORT_DIALOG (object);
  g_clear_object (&self->owner);
  g_clear_object (&self->ws);
  G_OBJECT_CLASS (nl_onnx_export_dialog_parent_class)->dispose (object);
}

static void
nl_onnx_export_dialog_finalize (GObject *object)
{
  NlOnnxExportDialog *self = NL_ONNX_EXPORT_DIALOG (object);
  g_free (self->network);
  g_free (self->suggested);
  G_OBJECT_CLASS (nl_onnx_export_dialog_parent_class)->finalize (object);
}

static void
nl_onnx_export_dialog_class_init (NlOnnxExportDialogClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);
  AdwMessageDialogClass *dialog_class = ADW_MESSAGE_DIALOG_CLASS (klass);

  object_class->dispose = nl_onnx_export_dialog_dispose;
  object_class->finalize = nl_onnx_export_dialog_finalize;
  dialog_class->response = nl_onnx_export_dialog_response;

  gtk_widget_class_set_template_from_resource (widget_class, "/io/github/netloom/Netloom/ui/nl-onnx-export-dialog.ui");
  gtk_widget_class_bind_template_child (widget_class, NlOnnxExportDialog, checkpoint_row);
  gtk_widget_class_bind_template_child (widget_class, NlOnnxExportDialog, opset_row);
  gtk_widget_class_bind_template_child (widget_class, NlOnnxExportDialog, softmax_switch);
  gtk_widget_class_bind_template_child (widget_class, NlOnnxExportDialog, precision_row);
}

static void
nl_onnx_export_dialog_init (NlOnnxExportDialog *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
  /* the template lists the opsets: one row for each the exporter writes */
  g_assert (g_list_model_get_n_items (adw_combo_row_get_model (self->opset_row))
            == NL_ONNX_OPSET_MAX - NL_ONNX_OPSET_MIN + 1);
}
