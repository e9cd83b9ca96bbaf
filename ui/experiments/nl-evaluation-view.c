/* nl-evaluation-view.c — a checkpoint's evaluation: states (empty,
 * loading, error, results), the result widgets, and the background tasks
 * that evaluate and classify dropped images. */
#include "ui/experiments/nl-evaluation-view.h"
#include <glib/gi18n.h>
#include <inttypes.h>
#include "ui/experiments/nl-class-report.h"
#include "ui/experiments/nl-confusion-matrix.h"
#include "ui/experiments/nl-explain-panel.h"
#include "ui/widgets/nl-file-chooser.h"
#include "ui/experiments/nl-text-predict.h"
#include "ui/widgets/nl-prob-row.h"
#include "ui/widgets/nl-sample-image.h"
#include "engine/session/nl-run-vocab.h"

#include <math.h>

#define GALLERY_MAX 48       /* mistakes shown */
#define THUMB_SIZE 84        /* gallery images are scaled up to about this */
#define PREDICT_SIZE 140
#define PROB_ROWS 10         /* classes listed in the prediction panel */

/* The loaded evaluation, shared with prediction threads that outlive a reload. */
typedef struct {
  NlEvaluation *ev;
} Holder;

static void
holder_clear (gpointer data)
{
  g_clear_pointer (&((Holder *) data)->ev, nl_evaluation_free);
}

static void
holder_release (Holder *h)
{
  g_atomic_rc_box_release_full (h, holder_clear);
}

struct _NlEvaluationView {
  AdwBin parent_instance;
  NlWorkspace *ws;
  GCancellable *cancel;        /* of the current load */
  gint *progress;              /* per mille, written by the load thread (rc box) */
  guint progress_id;
  Holder *holder;              /* NULL until loaded */
  char *error;
  gboolean loading, disposed;
  int predicting;
  GtkFileChooserNative *chooser; /* weak: the open image chooser */

  GtkWidget *stack, *error_page;
  GtkWidget *progress_bar, *progress_label;
  GtkWidget *title, *subtitle, *stat_acc, *stat_macro, *stat_weighted, *stat_samples;
  GtkWidget *matrix, *table, *gallery, *gallery_caption;
  GtkWidget *pred_picture, *pred_placeholder, *pred_file, *pred_probs, *pred_message;
  GtkWidget *explain, *explain_button;
  GtkWidget *image_header, *image_card, *text_header, *text_predict, *explain_header;
  gboolean text_run;           /* token ids: no image to explain */
  float *pred_seen;            /* the classified image as the model saw it, for Explain */
  char *pred_name;
};

enum { PROP_0, PROP_LOADING, N_PROPS };
static GParamSpec *props[N_PROPS];

G_DEFINE_FINAL_TYPE (NlEvaluationView, nl_evaluation_view, ADW_TYPE_BIN)

/* ---- loading ---- */

typedef struct {
  NlWorkspace *ws;           /* keeps project open */
  NlProject *project;        /* thread-safe (nl-project.h) */
  GCancellable *cancel;
  gint *progress;
  gint64 run;
  char *which;
  gboolean int8;
} LoadData;

typedef struct {
  Holder *holder;
  GArray *thumbs;   /* NlSampleImage per shown mistake */
  GPtrArray *texts; /* a text run's: each shown mistake's text, from its token ids; else NULL */
} LoadResult;

static void
load_data_free (gpointer data)
{
  LoadData *d = data;
  g_object_unref (d->ws);
  g_object_unref (d->cancel);
  g_atomic_rc_box_release (d->progress);
  g_free (d->which);
  g_free (d);
}

static void
load_result_free (gpointer data)
{
  LoadResult *r = data;
  if (r->holder)
    holder_release (r->holder);
  g_array_unref (r->thumbs);
  if (r->texts)
    g_ptr_array_unref (r->texts);
  g_free (r);
}

static void
on_progress (gpointer user, double fraction)
{
  g_atomic_int_set ((gint *) user, (gint) (fraction * 1000));
}

static void
load_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *unused)
{
  LoadData *d = task_data;
  GError *error = NULL;
  NlEvaluation *ev = nl_evaluate_run_full (d->project, d->run, d->which, NULL, d->int8, GALLERY_MAX, d->cancel,
                                           on_progress, d->progress, &error);
  LoadResult *r;
  g_autofree float *x = NULL;
  g_autoptr (NlVocab) vocab = NULL;

  if (!ev)
    {
      g_task_return_error (task, error);
      return;
    }
  r = g_new0 (LoadResult, 1);
  r->holder = g_atomic_rc_box_new0 (Holder);
  r->holder->ev = ev;
  r->thumbs = g_array_new (FALSE, TRUE, sizeof (NlSampleImage));
  g_array_set_clear_func (r->thumbs, (GDestroyNotify) nl_sample_image_clear);
  /* decoding samples may take a while (image folders): here, not on the main loop */
  x = g_new (float, nl_shape_numel (&ev->sample_shape));
  /* a text run's samples are token ids: its vocabulary reads them back */
  vocab = nl_run_vocab_load (d->project, d->run, NULL);
  r->texts = vocab ? g_ptr_array_new_with_free_func (g_free) : NULL;
  for (int i = 0; i < ev->n_misclassified; i++)
    {
      NlSampleImage im = { 0 };
      gboolean ok = nl_evaluation_get_sample (ev, ev->misclassified[i].index, x, NULL, NULL);
      if (ok && vocab)
        g_ptr_array_add (r->texts, nl_vocab_decode (vocab, x, (int) nl_shape_numel (&ev->sample_shape)));
      else if (vocab)
        g_ptr_array_add (r->texts, g_strdup ("?"));
      else if (ok)
        nl_sample_image_from_sample (x, &ev->sample_shape, THUMB_SIZE, &im);
      g_array_append_val (r->thumbs, im);
    }
  g_task_return_pointer (task, r, load_result_free);
}

static void
set_loading (NlEvaluationView *v, gboolean loading)
{
  if (v->loading == loading)
    return;
  v->loading = loading;
  if (!loading)
    g_clear_handle_id (&v->progress_id, g_source_remove);
  g_object_notify_by_pspec (G_OBJECT (v), props[PROP_LOADING]);
}

static gboolean
update_progress (gpointer data)
{
  NlEvaluationView *v = data;
  double f = v->progress ? g_atomic_int_get (v->progress) / 1000.0 : 0;
  g_autofree char *text = g_strdup_printf ("%.0f %%", 100 * f);
  gtk_progress_bar_set_fraction (GTK_PROGRESS_BAR (v->progress_bar), f);
  gtk_progress_bar_set_text (GTK_PROGRESS_BAR (v->progress_bar), text);
  return G_SOURCE_CONTINUE;
}

static void
clear_children (GtkWidget *w)
{
  GtkWidget *child;
  while ((child = gtk_widget_get_first_child (w)))
    {
      if (GTK_IS_FLOW_BOX (w))
        gtk_flow_box_remove (GTK_FLOW_BOX (w), child);
      else if (GTK_IS_GRID (w))
        gtk_grid_remove (GTK_GRID (w), child);
      else
        gtk_box_remove (GTK_BOX (w), child);
    }
}

static GtkWidget *
mistake_child (const NlEvaluation *ev, const NlMisclassified *m, const NlSampleImage *im, const char *text)
{
  GtkWidget *box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 4);
  g_autofree char *what = g_strdup_printf ("%s → %s", ev->class_names[m->truth], ev->class_names[m->predicted]);
  g_autofree char *conf = g_strdup_printf ("%.1f %%", 100 * m->confidence);
  g_autofree char *tip = g_strdup_printf (_("Sample %" PRId64 ": a %s taken for a %s (%.1f %% sure)"),
                                          m->index, ev->class_names[m->truth], ev->class_names[m->predicted],
                                          100 * m->confidence);
  g_autoptr (GdkTexture) tex = nl_sample_image_texture (im);
  GtkWidget *l;

  if (text)
    {
      l = nl_class_report_cell (text, 0, "nl-mistake-text");
      gtk_label_set_wrap (GTK_LABEL (l), TRUE);
      gtk_label_set_wrap_mode (GTK_LABEL (l), PANGO_WRAP_WORD_CHAR);
      gtk_label_set_lines (GTK_LABEL (l), 4);
      gtk_label_set_ellipsize (GTK_LABEL (l), PANGO_ELLIPSIZE_END);
      gtk_label_set_max_width_chars (GTK_LABEL (l), 32);
      gtk_label_set_width_chars (GTK_LABEL (l), 24);
      gtk_box_append (GTK_BOX (box), l);
    }
  else if (tex)
    {
      /* a GtkImage stays at its pixel size (a GtkPicture would grow, blurred, with the child) */
      GtkWidget *pic = gtk_image_new_from_paintable (GDK_PAINTABLE (tex));
      gtk_image_set_pixel_size (GTK_IMAGE (pic), MIN (MAX (im->width, im->height), THUMB_SIZE * 2));
      gtk_box_append (GTK_BOX (box), pic);
    }
  l = nl_class_report_cell (what, 0.5, "caption");
  gtk_label_set_ellipsize (GTK_LABEL (l), PANGO_ELLIPSIZE_END);
  gtk_label_set_max_width_chars (GTK_LABEL (l), 16);
  gtk_box_append (GTK_BOX (box), l);
  l = nl_class_report_cell (conf, 0.5, "caption");
  gtk_widget_add_css_class (l, "dim-label");
  gtk_box_append (GTK_BOX (box), l);
  gtk_widget_set_tooltip_text (box, tip);
  return box;
}

static void
show_result (NlEvaluationView *v, LoadResult *r, const char *which)
{
  const NlEvaluation *ev = r->holder->ev;
  g_autofree char *title = ev->int8_model > 0
    ? g_strdup_printf (_("Run %" PRId64 " · INT8 model %" PRId64 " (epoch %d)"), ev->run, ev->int8_model, ev->epoch)
    : g_ascii_isdigit (*which) ? g_strdup_printf (_("Run %" PRId64 " · epoch %d"), ev->run, ev->epoch)
    : g_strdup_printf (_("Run %" PRId64 " · %s checkpoint (epoch %d)"), ev->run, which, ev->epoch);
  g_autofree char *sub = g_strdup_printf ("Checkpoint %" G_GINT64_FORMAT " on %s · %" G_GINT64_FORMAT
                                          " samples in %.2f s", ev->checkpoint, ev->dataset ? ev->dataset : "?",
                                          ev->n_samples, ev->seconds);
  g_autofree char *caption = NULL;
  int64_t wrong = ev->n_samples - ev->n_correct;
  char buf[64];

  g_clear_pointer (&v->holder, holder_release);
  v->holder = g_atomic_rc_box_acquire (r->holder);
  gtk_label_set_text (GTK_LABEL (v->title), title);
  gtk_label_set_text (GTK_LABEL (v->subtitle), sub);
  g_snprintf (buf, sizeof buf, "%.2f %%", 100 * ev->accuracy);
  gtk_label_set_text (GTK_LABEL (v->stat_acc), buf);
  g_snprintf (buf, sizeof buf, "%.4f", ev->macro_f1);
  gtk_label_set_text (GTK_LABEL (v->stat_macro), buf);
  g_snprintf (buf, sizeof buf, "%.4f", ev->weighted_f1);
  gtk_label_set_text (GTK_LABEL (v->stat_weighted), buf);
  g_snprintf (buf, sizeof buf, "%" G_GINT64_FORMAT, ev->n_samples);
  gtk_label_set_text (GTK_LABEL (v->stat_samples), buf);
  nl_confusion_matrix_set_data (NL_CONFUSION_MATRIX (v->matrix), ev->n_classes, ev->confusion,
                                (const char *const *) ev->class_names);
  clear_children (v->table);
  nl_class_report_fill (GTK_GRID (v->table), ev);
  {
    /* Explain uses the checkpoint's fp32 weights, also beside an INT8 evaluation */
    g_autoptr (NlExplainSource) src = nl_explain_source_new (v->ws, ev->run, which);
    nl_explain_panel_set_source (NL_EXPLAIN_PANEL (v->explain), src, (const char *const *) ev->class_names,
                                 ev->n_classes);
  }
  clear_children (v->gallery);
  for (int i = 0; i < ev->n_misclassified; i++)
    gtk_flow_box_append (GTK_FLOW_BOX (v->gallery),
                         mistake_child (ev, &ev->misclassified[i], &g_array_index (r->thumbs, NlSampleImage, i),
                                        r->texts ? g_ptr_array_index (r->texts, i) : NULL));
  /* text runs classify typed text, image runs image files */
  gtk_widget_set_visible (v->image_header, r->texts == NULL);
  gtk_widget_set_visible (v->image_card, r->texts == NULL);
  gtk_widget_set_visible (v->text_header, r->texts != NULL);
  gtk_widget_set_visible (v->text_predict, r->texts != NULL);
  v->text_run = r->texts != NULL;
  gtk_widget_set_visible (v->explain_header, !v->text_run);
  gtk_widget_set_visible (v->explain, !v->text_run);
  nl_text_predict_set_run (NL_TEXT_PREDICT (v->text_predict), r->texts ? v->ws : NULL, ev->run, which);
  caption = wrong == 0 ? g_strdup (_("No sample was misclassified."))
            : g_strdup_printf ("The %d most confident of %" G_GINT64_FORMAT " misclassified samples, "
                               "true → predicted (confidence)", ev->n_misclassified, wrong);
  gtk_label_set_text (GTK_LABEL (v->gallery_caption), caption);
  gtk_stack_set_visible_child_name (GTK_STACK (v->stack), "result");
}

static void
load_done (GObject *source, GAsyncResult *res, gpointer user)
{
  NlEvaluationView *v = NL_EVALUATION_VIEW (source);
  GTask *task = G_TASK (res);
  LoadData *d = g_task_get_task_data (task);
  g_autoptr (GError) error = NULL;
  LoadResult *r = g_task_propagate_pointer (task, &error);

  nl_workspace_busy_pop (d->ws);
  if (d->cancel != v->cancel)
    {
      /* superseded by a newer load */
      g_clear_pointer (&r, load_result_free);
      return;
    }
  set_loading (v, FALSE);
  if (!r)
    {
      g_autofree char *markup = g_markup_escape_text (error->message, -1);
      g_free (v->error);
      v->error = g_strdup (error->message);
      adw_status_page_set_description (ADW_STATUS_PAGE (v->error_page), markup);
      gtk_stack_set_visible_child_name (GTK_STACK (v->stack), "error");
      return;
    }
  g_clear_pointer (&v->error, g_free);
  show_result (v, r, d->which);
  load_result_free (r);
}

void
nl_evaluation_view_load (NlEvaluationView *v, NlWorkspace *ws, gint64 run, const char *which)
{
  nl_evaluation_view_load_full (v, ws, run, which, FALSE);
}

void
nl_evaluation_view_load_full (NlEvaluationView *v, NlWorkspace *ws, gint64 run, const char *which, gboolean int8)
{
  g_autoptr (GTask) task = NULL;
  g_autofree char *label = NULL;
  LoadData *d;

  g_return_if_fail (NL_IS_EVALUATION_VIEW (v));
  g_return_if_fail (NL_IS_WORKSPACE (ws));
  if (v->cancel)
    g_cancellable_cancel (v->cancel);
  g_clear_object (&v->cancel);
  g_clear_pointer (&v->progress, g_atomic_rc_box_release);
  g_set_object (&v->ws, ws);
  v->cancel = g_cancellable_new ();
  v->progress = g_atomic_rc_box_new0 (gint);

  d = g_new0 (LoadData, 1);
  d->ws = g_object_ref (ws);
  d->project = nl_workspace_get_project (ws);
  d->cancel = g_object_ref (v->cancel);
  d->progress = g_atomic_rc_box_acquire (v->progress);
  d->run = run;
  d->which = g_strdup (which ? which : "best");
  d->int8 = int8;
  label = int8 ? g_strdup_printf (_("Evaluating the INT8 model of run %" PRId64 "…"), run)
               : g_strdup_printf (_("Evaluating the %s checkpoint of run %" PRId64 "…"), d->which, run);
  gtk_label_set_text (GTK_LABEL (v->progress_label), label);
  gtk_progress_bar_set_fraction (GTK_PROGRESS_BAR (v->progress_bar), 0);
  gtk_stack_set_visible_child_name (GTK_STACK (v->stack), "loading");
  nl_workspace_busy_push (ws);
  set_loading (v, TRUE);
  if (!v->progress_id)
    v->progress_id = g_timeout_add (100, update_progress, v);

  task = g_task_new (v, NULL, load_done, NULL);
  g_task_set_source_tag (task, nl_evaluation_view_load_full);
  g_task_set_task_data (task, d, load_data_free);
  g_task_run_in_thread (task, load_thread);
}

/* ---- predicting an image file ---- */

typedef struct {
  Holder *holder;
  NlWorkspace *ws;
  char *path;
} PredictData;

typedef struct {
  double *probs;
  float *pixels;     /* as the model saw it, in [0, 1] */
  NlSampleImage seen;
} PredictResult;

static void
predict_data_free (gpointer data)
{
  PredictData *d = data;
  holder_release (d->holder);
  g_clear_object (&d->ws);
  g_free (d->path);
  g_free (d);
}

static void
predict_result_free (gpointer data)
{
  PredictResult *r = data;
  g_free (r->probs);
  g_free (r->pixels);
  nl_sample_image_clear (&r->seen);
  g_free (r);
}

static void
predict_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *unused)
{
  PredictData *d = task_data;
  NlEvaluation *ev = d->holder->ev;
  g_autofree float *seen = NULL;
  GError *error = NULL;
  PredictResult *r = g_new0 (PredictResult, 1);

  if (!nl_evaluation_predict_image_file (ev, d->path, &r->probs, &seen, &error))
    {
      predict_result_free (r);
      g_task_return_error (task, error);
      return;
    }
  nl_sample_image_from_sample (seen, &ev->sample_shape, PREDICT_SIZE, &r->seen);
  r->pixels = g_steal_pointer (&seen);
  g_task_return_pointer (task, r, predict_result_free);
}

static int
by_prob (gconstpointer a, gconstpointer b, gpointer probs)
{
  double pa = ((const double *) probs)[*(const int *) a], pb = ((const double *) probs)[*(const int *) b];
  return pa > pb ? -1 : pa < pb ? 1 : *(const int *) a - *(const int *) b;
}

static void
set_pred_message (NlEvaluationView *v, const char *text, gboolean is_error)
{
  gtk_label_set_text (GTK_LABEL (v->pred_message), text ? text : "");
  gtk_widget_set_visible (v->pred_message, text != NULL);
  if (is_error)
    {
      gtk_widget_remove_css_class (v->pred_message, "dim-label");
      gtk_widget_add_css_class (v->pred_message, "error");
    }
  else
    gtk_widget_remove_css_class (v->pred_message, "error");
}

static void
predict_done (GObject *source, GAsyncResult *res, gpointer user)
{
  NlEvaluationView *v = NL_EVALUATION_VIEW (source);
  PredictData *d = g_task_get_task_data (G_TASK (res));
  const NlEvaluation *ev = d->holder->ev;
  g_autoptr (GError) error = NULL;
  PredictResult *r = g_task_propagate_pointer (G_TASK (res), &error);
  g_autofree int *order = NULL;
  g_autoptr (GdkTexture) tex = NULL;
  g_autofree char *base = g_path_get_basename (d->path);

  v->predicting--;
  if (d->ws)
    nl_workspace_busy_pop (d->ws);
  if (v->disposed)
    {
      g_clear_pointer (&r, predict_result_free);
      return;
    }
  gtk_label_set_text (GTK_LABEL (v->pred_file), base);
  clear_children (v->pred_probs);
  if (!r)
    {
      set_pred_message (v, error->message, TRUE);
      return;
    }
  set_pred_message (v, NULL, FALSE);
  g_free (v->pred_seen);
  v->pred_seen = g_steal_pointer (&r->pixels);
  g_free (v->pred_name);
  v->pred_name = g_strdup (base);
  gtk_widget_set_sensitive (v->explain_button, v->pred_seen != NULL);
  tex = nl_sample_image_texture (&r->seen);
  gtk_image_set_from_paintable (GTK_IMAGE (v->pred_picture), GDK_PAINTABLE (tex));
  if (tex)
    gtk_image_set_pixel_size (GTK_IMAGE (v->pred_picture), MIN (MAX (r->seen.width, r->seen.height), PREDICT_SIZE));
  gtk_widget_set_visible (v->pred_picture, tex != NULL);
  gtk_widget_set_visible (v->pred_placeholder, tex == NULL);
  order = g_new (int, ev->n_classes);
  for (int c = 0; c < ev->n_classes; c++)
    order[c] = c;
  g_qsort_with_data (order, ev->n_classes, sizeof (int), by_prob, r->probs);
  for (int k = 0; k < MIN (ev->n_classes, PROB_ROWS); k++)
    gtk_box_append (GTK_BOX (v->pred_probs), nl_prob_row_new (ev->class_names[order[k]], r->probs[order[k]], k == 0));
  if (ev->n_classes > PROB_ROWS)
    {
      g_autofree char *more = g_strdup_printf (_("and %d less likely classes"), ev->n_classes - PROB_ROWS);
      gtk_box_append (GTK_BOX (v->pred_probs), nl_class_report_cell (more, 0, "dim-label"));
    }
  predict_result_free (r);
}

gboolean
nl_evaluation_view_predict_file (NlEvaluationView *v, const char *path)
{
  g_autoptr (GTask) task = NULL;
  PredictData *d;

  g_return_val_if_fail (NL_IS_EVALUATION_VIEW (v), FALSE);
  g_return_val_if_fail (path != NULL, FALSE);
  if (!v->holder)
    {
      set_pred_message (v, _("Evaluate a checkpoint first: its model classifies the image."), TRUE);
      return FALSE;
    }
  d = g_new0 (PredictData, 1);
  d->holder = g_atomic_rc_box_acquire (v->holder);
  d->ws = v->ws ? g_object_ref (v->ws) : NULL;
  d->path = g_strdup (path);
  v->predicting++;
  if (d->ws)
    nl_workspace_busy_push (d->ws);
  task = g_task_new (v, NULL, predict_done, NULL);
  g_task_set_source_tag (task, nl_evaluation_view_predict_file);
  g_task_set_task_data (task, d, predict_data_free);
  g_task_run_in_thread (task, predict_thread);
  return TRUE;
}

static gboolean
on_drop (GtkDropTarget *target, const GValue *value, double x, double y, NlEvaluationView *v)
{
  GFile *file = NULL;
  g_autofree char *path = NULL;
  if (G_VALUE_HOLDS (value, GDK_TYPE_FILE_LIST))
    {
      GSList *files = gdk_file_list_get_files (g_value_get_boxed (value));
      file = files ? files->data : NULL;
      g_slist_free (files);
    }
  else if (G_VALUE_HOLDS (value, G_TYPE_FILE))
    file = g_value_get_object (value);
  if (!file)
    return FALSE;
  path = g_file_get_path (file);
  if (!path)
    {
      set_pred_message (v, _("Only files on this computer can be classified."), TRUE);
      return FALSE;
    }
  return nl_evaluation_view_predict_file (v, path);
}

static void
image_chosen (GtkWidget *view, const char *path, gpointer user)
{
  nl_evaluation_view_predict_file (NL_EVALUATION_VIEW (view), path);
}

static void
on_choose_clicked (GtkButton *button, NlEvaluationView *v)
{
  g_autoptr (GtkFileFilter) filter = NULL;
  if (v->chooser)
    return;
  filter = gtk_file_filter_new ();
  gtk_file_filter_set_name (filter, _("PNG and JPEG images"));
  gtk_file_filter_add_mime_type (filter, "image/png");
  gtk_file_filter_add_mime_type (filter, "image/jpeg");
  gtk_file_filter_add_suffix (filter, "png");
  gtk_file_filter_add_suffix (filter, "jpg");
  gtk_file_filter_add_suffix (filter, "jpeg");
  g_set_weak_pointer (&v->chooser, nl_choose_file (GTK_WIDGET (v), GTK_FILE_CHOOSER_ACTION_OPEN, _("Choose an Image"),
                                                   _("_Open"), NULL, filter, image_chosen, NULL, NULL));
}

/* ---- explaining ---- */

gboolean
nl_evaluation_view_explain_mistake (NlEvaluationView *v, int i)
{
  NlEvaluation *ev = v->holder ? v->holder->ev : NULL;
  g_return_val_if_fail (NL_IS_EVALUATION_VIEW (v), FALSE);
  if (!ev || i < 0 || i >= ev->n_misclassified || v->text_run)
    return FALSE;
  /* the selection marks the mistake being explained */
  gtk_flow_box_select_child (GTK_FLOW_BOX (v->gallery),
                             gtk_flow_box_get_child_at_index (GTK_FLOW_BOX (v->gallery), i));
  return nl_explain_panel_show_mistake (NL_EXPLAIN_PANEL (v->explain), ev, &ev->misclassified[i]);
}

static void
on_mistake_activated (GtkFlowBox *box, GtkFlowBoxChild *child, NlEvaluationView *v)
{
  nl_evaluation_view_explain_mistake (v, gtk_flow_box_child_get_index (child));
}

static void
on_explain_clicked (GtkButton *button, NlEvaluationView *v)
{
  if (v->pred_seen && v->holder)
    nl_explain_panel_show_sample (NL_EXPLAIN_PANEL (v->explain), v->pred_seen, &v->holder->ev->sample_shape, -1,
                                  v->pred_name);
}

static void
nl_evaluation_view_dispose (GObject *object)
{
  NlEvaluationView *v = NL_EVALUATION_VIEW (object);
  v->disposed = TRUE;
  if (v->cancel)
    g_cancellable_cancel (v->cancel);
  g_clear_object (&v->cancel);
  g_clear_handle_id (&v->progress_id, g_source_remove);
  g_clear_pointer (&v->progress, g_atomic_rc_box_release);
  if (v->chooser)
    nl_file_chooser_close (v->chooser);
  g_clear_weak_pointer (&v->chooser);
  g_clear_pointer (&v->holder, holder_release);
  g_clear_object (&v->ws);
  G_OBJECT_CLASS (nl_evaluation_view_parent_class)->dispose (object);
}

static void
nl_evaluation_view_finalize (GObject *object)
{
  g_free (NL_EVALUATION_VIEW (object)->error);
  g_free (NL_EVALUATION_VIEW (object)->pred_seen);
  g_free (NL_EVALUATION_VIEW (object)->pred_name);
  G_OBJECT_CLASS (nl_evaluation_view_parent_class)->finalize (object);
}

static void
nl_evaluation_view_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  switch (prop_id)
    {
    case PROP_LOADING:
      g_value_set_boolean (value, NL_EVALUATION_VIEW (object)->loading);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
nl_evaluation_view_class_init (NlEvaluationViewClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = nl_evaluation_view_dispose;
  object_class->finalize = nl_evaluation_view_finalize;
  object_class->get_property = nl_evaluation_view_get_property;
  props[PROP_LOADING] = g_param_spec_boolean ("loading", NULL, NULL, FALSE,
                                              G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, props);

  g_type_ensure (NL_TYPE_CONFUSION_MATRIX);
  g_type_ensure (NL_TYPE_EXPLAIN_PANEL);
  g_type_ensure (NL_TYPE_TEXT_PREDICT);
  gtk_widget_class_set_template_from_resource (widget_class, "/io/github/netloom/Netloom/ui/nl-evaluation-view.ui");
#define BIND(name) gtk_widget_class_bind_template_child (widget_class, NlEvaluationView, name)
  BIND (stack);
  BIND (error_page);
  BIND (progress_bar);
  BIND (progress_label);
  BIND (title);
  BIND (subtitle);
  BIND (stat_acc);
  BIND (stat_macro);
  BIND (stat_weighted);
  BIND (stat_samples);
  BIND (matrix);
  BIND (table);
  BIND (gallery);
  BIND (gallery_caption);
  BIND (pred_picture);
  BIND (pred_placeholder);
  BIND (pred_file);
  BIND (pred_message);
  BIND (pred_probs);
  BIND (explain);
  BIND (explain_button);
  BIND (image_header);
  BIND (image_card);
  BIND (text_header);
  BIND (text_predict);
  BIND (explain_header);
#undef BIND
  gtk_widget_class_bind_template_callback (widget_class, on_choose_clicked);
  gtk_widget_class_bind_template_callback (widget_class, on_mistake_activated);
  gtk_widget_class_bind_template_callback (widget_class, on_explain_clicked);
}

static void
nl_evaluation_view_init (NlEvaluationView *v)
{
  GtkDropTarget *drop = gtk_drop_target_new (G_TYPE_INVALID, GDK_ACTION_COPY);
  GType types[] = { GDK_TYPE_FILE_LIST, G_TYPE_FILE };

  gtk_widget_init_template (GTK_WIDGET (v));
  gtk_drop_target_set_gtypes (drop, types, G_N_ELEMENTS (types));
  g_signal_connect (drop, "drop", G_CALLBACK (on_drop), v);
  gtk_widget_add_controller (GTK_WIDGET (v), GTK_EVENT_CONTROLLER (drop));
}

GtkWidget *
nl_evaluation_view_new (void)
{
  return g_object_new (NL_TYPE_EVALUATION_VIEW, NULL);
}

gboolean
nl_evaluation_view_is_loading (NlEvaluationView *v)
{
  g_return_val_if_fail (NL_IS_EVALUATION_VIEW (v), FALSE);
  return v->loading;
}

gboolean
nl_evaluation_view_is_predicting (NlEvaluationView *v)
{
  g_return_val_if_fail (NL_IS_EVALUATION_VIEW (v), FALSE);
  return v->predicting > 0;
}

const NlEvaluation *
nl_evaluation_view_get_evaluation (NlEvaluationView *v)
{
  g_return_val_if_fail (NL_IS_EVALUATION_VIEW (v), NULL);
  return v->holder ? v->holder->ev : NULL;
}

const char *
nl_evaluation_view_get_error (NlEvaluationView *v)
{
  g_return_val_if_fail (NL_IS_EVALUATION_VIEW (v), NULL);
  return v->error;
}

/* the parts tests and the embedding page look at */
#define PART_GETTER(part, field)                                  \
  GtkWidget *nl_evaluation_view_get_##part (NlEvaluationView *v)  \
  {                                                               \
    g_return_val_if_fail (NL_IS_EVALUATION_VIEW (v), NULL);       \
    return v->field;                                              \
  }
PART_GETTER (matrix, matrix)
PART_GETTER (table, table)
PART_GETTER (gallery, gallery)
PART_GETTER (probabilities, pred_probs)
PART_GETTER (explain_panel, explain)
PART_GETTER (text_predict, text_predict)
