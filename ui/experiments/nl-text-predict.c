/* nl-text-predict.c — typed text through a text run's model (see
 * nl-text-predict.h). */
#include "ui/experiments/nl-text-predict.h"
#include <glib/gi18n.h>

#include "engine/session/nl-evaluate.h"
#include "ui/widgets/nl-prob-row.h"

#define SCORE_ROWS 10

/* The run's model, shared with the worker that may outlive a new run. */
typedef struct {
  NlWorkspace *ws;
  gint64 run;
  char *which;
  NlEvaluation *ev;  /* opened by the first worker; one worker at a time */
} Model;

static void
model_clear (gpointer data)
{
  Model *m = data;
  g_clear_object (&m->ws);
  g_free (m->which);
  g_clear_pointer (&m->ev, nl_evaluation_free);
}

static void
model_release (gpointer m)
{
  g_atomic_rc_box_release_full (m, model_clear);
}

struct _NlTextPredict {
  AdwBin parent_instance;
  Model *model;
  GtkWidget *entry, *classify, *scores, *message;
  gboolean busy, disposed;
  char *queued;  /* the text to classify when the worker is done */
};

G_DEFINE_FINAL_TYPE (NlTextPredict, nl_text_predict, ADW_TYPE_BIN)

typedef struct {
  Model *model;
  char *text;
  double *probs;
} Job;

static void
job_free (gpointer data)
{
  Job *j = data;
  model_release (j->model);
  g_free (j->text);
  g_free (j->probs);
  g_free (j);
}

static void
classify_thread (GTask *task, gpointer source, gpointer data, GCancellable *cancellable)
{
  Job *j = data;
  Model *m = j->model;
  GError *error = NULL;
  if (!m->ev)
    m->ev = nl_evaluation_open (nl_workspace_get_project (m->ws), m->run, m->which, NULL, FALSE, &error);
  if (m->ev && nl_evaluation_predict_text (m->ev, j->text, &j->probs, &error))
    g_task_return_boolean (task, TRUE);
  else
    g_task_return_error (task, error);
}

static int
by_prob (gconstpointer a, gconstpointer b, gpointer probs)
{
  double pa = ((const double *) probs)[*(const int *) a], pb = ((const double *) probs)[*(const int *) b];
  return pa > pb ? -1 : pa < pb ? 1 : *(const int *) a - *(const int *) b;
}

static void
show_message (NlTextPredict *tp, const char *text)
{
  gtk_label_set_text (GTK_LABEL (tp->message), text ? text : "");
  gtk_widget_set_visible (tp->message, text != NULL);
}

static void
show_scores (NlTextPredict *tp, const NlEvaluation *ev, const double *probs)
{
  GtkWidget *child;
  g_autofree int *order = g_new (int, MAX (ev->n_classes, 1));
  while ((child = gtk_widget_get_first_child (tp->scores)))
    gtk_box_remove (GTK_BOX (tp->scores), child);
  for (int c = 0; c < ev->n_classes; c++)
    order[c] = c;
  g_qsort_with_data (order, ev->n_classes, sizeof (int), by_prob, (gpointer) probs);
  for (int k = 0; k < MIN (ev->n_classes, SCORE_ROWS); k++)
    gtk_box_append (GTK_BOX (tp->scores), nl_prob_row_new (ev->class_names[order[k]], probs[order[k]], k == 0));
  if (ev->n_classes > SCORE_ROWS)
    {
      g_autofree char *more = g_strdup_printf (_("and %d less likely classes"), ev->n_classes - SCORE_ROWS);
      GtkWidget *l = gtk_label_new (more);
      gtk_label_set_xalign (GTK_LABEL (l), 0);
      gtk_widget_add_css_class (l, "dim-label");
      gtk_box_append (GTK_BOX (tp->scores), l);
    }
}

static void start (NlTextPredict *tp, const char *text);

static void
classify_done (GObject *source, GAsyncResult *res, gpointer user)
{
  NlTextPredict *tp = NL_TEXT_PREDICT (source);
  Job *j = g_task_get_task_data (G_TASK (res));
  g_autoptr (GError) error = NULL;
  g_autofree char *next = NULL;

  nl_workspace_busy_pop (j->model->ws);
  tp->busy = FALSE;
  if (tp->disposed)
    return;
  if (j->model == tp->model)  /* not a result for a run set since */
    {
      if (g_task_propagate_boolean (G_TASK (res), &error))
        {
          show_message (tp, NULL);
          show_scores (tp, j->model->ev, j->probs);
        }
      else
        show_message (tp, error->message);
    }
  gtk_widget_set_sensitive (tp->classify, TRUE);
  if ((next = g_steal_pointer (&tp->queued)))
    start (tp, next);
}

static void
start (NlTextPredict *tp, const char *text)
{
  g_autoptr (GTask) task = NULL;
  Job *j;
  if (tp->busy)
    {
      g_free (tp->queued);
      tp->queued = g_strdup (text);
      return;
    }
  j = g_new0 (Job, 1);
  j->model = g_atomic_rc_box_acquire (tp->model);
  j->text = g_strdup (text);
  tp->busy = TRUE;
  gtk_widget_set_sensitive (tp->classify, FALSE);
  nl_workspace_busy_push (j->model->ws);
  task = g_task_new (tp, NULL, classify_done, NULL);
  g_task_set_task_data (task, j, job_free);
  g_task_run_in_thread (task, classify_thread);
}

gboolean
nl_text_predict_classify (NlTextPredict *tp, const char *text)
{
  g_return_val_if_fail (NL_IS_TEXT_PREDICT (tp), FALSE);
  if (!tp->model)
    return FALSE;
  /* the entry shows what the scores are of */
  if (text && g_strcmp0 (text, gtk_editable_get_text (GTK_EDITABLE (tp->entry))) != 0)
    gtk_editable_set_text (GTK_EDITABLE (tp->entry), text);
  start (tp, gtk_editable_get_text (GTK_EDITABLE (tp->entry)));
  return TRUE;
}

void
nl_text_predict_set_run (NlTextPredict *tp, NlWorkspace *ws, gint64 run, const char *which)
{
  Model *m;
  g_return_if_fail (NL_IS_TEXT_PREDICT (tp));
  g_clear_pointer (&tp->model, model_release);
  g_clear_pointer (&tp->queued, g_free);
  if (!ws)
    return;
  m = g_atomic_rc_box_new0 (Model);
  m->ws = g_object_ref (ws);
  m->run = run;
  m->which = g_strdup (which ? which : "best");
  tp->model = m;
}

gboolean
nl_text_predict_is_busy (NlTextPredict *tp)
{
  g_return_val_if_fail (NL_IS_TEXT_PREDICT (tp), FALSE);
  return tp->busy || tp->queued;
}

GtkWidget *
nl_text_predict_get_part (NlTextPredict *tp, const char *part)
{
  g_return_val_if_fail (NL_IS_TEXT_PREDICT (tp), NULL);
  return g_str_equal (part, "entry") ? tp->entry
         : g_str_equal (part, "classify") ? tp->classify
         : g_str_equal (part, "scores") ? tp->scores
         : g_str_equal (part, "message") ? tp->message : NULL;
}

static void
on_classify (NlTextPredict *tp)
{
  nl_text_predict_classify (tp, NULL);
}

static void
nl_text_predict_init (NlTextPredict *tp)
{
  GtkWidget *box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 8), *line = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 8);

  tp->entry = gtk_entry_new ();
  gtk_entry_set_placeholder_text (GTK_ENTRY (tp->entry), _("Type a text to classify"));
  gtk_widget_set_hexpand (tp->entry, TRUE);
  gtk_accessible_update_property (GTK_ACCESSIBLE (tp->entry), GTK_ACCESSIBLE_PROPERTY_LABEL, _("Text to classify"),
                                  -1);
  tp->classify = gtk_button_new_with_mnemonic (_("C_lassify"));
  gtk_box_append (GTK_BOX (line), tp->entry);
  gtk_box_append (GTK_BOX (line), tp->classify);
  gtk_box_append (GTK_BOX (box), line);
  tp->message = gtk_label_new (NULL);
  gtk_label_set_wrap (GTK_LABEL (tp->message), TRUE);
  gtk_label_set_xalign (GTK_LABEL (tp->message), 0);
  gtk_widget_add_css_class (tp->message, "error");
  gtk_widget_set_visible (tp->message, FALSE);
  gtk_box_append (GTK_BOX (box), tp->message);
  tp->scores = gtk_box_new (GTK_ORIENTATION_VERTICAL, 6);
  gtk_box_append (GTK_BOX (box), tp->scores);
  gtk_widget_set_margin_start (box, 12);
  gtk_widget_set_margin_end (box, 12);
  gtk_widget_set_margin_top (box, 12);
  gtk_widget_set_margin_bottom (box, 12);
  gtk_widget_add_css_class (GTK_WIDGET (tp), "card");
  adw_bin_set_child (ADW_BIN (tp), box);
  g_signal_connect_swapped (tp->entry, "activate", G_CALLBACK (on_classify), tp);
  g_signal_connect_swapped (tp->classify, "clicked", G_CALLBACK (on_classify), tp);
}

static void
nl_text_predict_dispose (GObject *object)
{
  NlTextPredict *tp = NL_TEXT_PREDICT (object);
  tp->disposed = TRUE;
  g_clear_pointer (&tp->model, model_release);
  g_clear_pointer (&tp->queued, g_free);
  G_OBJECT_CLASS (nl_text_predict_parent_class)->dispose (object);
}

static void
nl_text_predict_class_init (NlTextPredictClass *klass)
{
  G_OBJECT_CLASS (klass)->dispose = nl_text_predict_dispose;
}

GtkWidget *
nl_text_predict_new (void)
{
  return g_object_new (NL_TYPE_TEXT_PREDICT, NULL);
}
