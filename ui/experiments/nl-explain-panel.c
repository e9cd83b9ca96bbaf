/* nl-explain-panel.c — the Explain overlay (see nl-explain-panel.h). */
#include "ui/experiments/nl-explain-panel.h"
#include <glib/gi18n.h>
#include <inttypes.h>

#include "ui/widgets/nl-heatmap-view.h"
#include "ui/widgets/nl-scroll-into-view.h"

#define SCORE_ROWS 3   /* classes named under the map */

struct _NlExplainPanel {
  AdwBin parent_instance;
  NlExplainSource *src;
  char **names;
  int n_classes;
  float *pixels;               /* the sample shown, in [0, 1] */
  NlShape shape;
  int truth;
  int *entry_class;            /* the class selector's entries: -1 predicted, else a class */
  int n_entries;
  char **layers;               /* the Grad-CAM layer selector's entries after "last convolution"; NULL: not listed */
  gboolean running, again, disposed, filling;
  NlExplanation *shown;        /* the map on screen */
  char *error;

  GtkWidget *heatmap, *title, *method, *target, *opacity, *spinner, *status, *scores, *layer, *layer_label;
};

enum { PROP_0, PROP_COMPUTING, N_PROPS };
static GParamSpec *props[N_PROPS];

G_DEFINE_FINAL_TYPE (NlExplainPanel, nl_explain_panel, ADW_TYPE_BIN)

static void start_compute (NlExplainPanel *p);

/* ---- the computation ---- */

static void
fill_layers (NlExplainPanel *p, char **ids)
{
  g_autoptr (GtkStringList) list = gtk_string_list_new (NULL);
  g_strfreev (p->layers);
  p->layers = g_strdupv (ids);
  gtk_string_list_append (list, _("Last convolution"));
  for (int i = 0; ids && ids[i]; i++)
    gtk_string_list_append (list, ids[i]);
  p->filling = TRUE;
  gtk_drop_down_set_model (GTK_DROP_DOWN (p->layer), G_LIST_MODEL (list));
  gtk_drop_down_set_selected (GTK_DROP_DOWN (p->layer), 0);
  p->filling = FALSE;
}

typedef struct {
  NlExplainSource *src;
  float *pixels;
  NlExplainOptions opts;
  char *layer;
  char **layers;     /* out: the source's spatial layers */
} ComputeData;

static void
compute_data_free (gpointer data)
{
  ComputeData *d = data;
  nl_explain_source_unref (d->src);
  g_free (d->pixels);
  g_free (d->layer);
  g_strfreev (d->layers);
  g_free (d);
}

static void
explanation_free (gpointer x)
{
  nl_explanation_clear (x);
  g_free (x);
}

static void
compute_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *unused)
{
  ComputeData *d = task_data;
  NlEvaluation *ev = NULL;
  GError *error = NULL;
  NlExplainer *ex = nl_explain_source_lock (d->src, &ev, &error);
  g_autofree float *input = NULL;
  NlExplanation *x;
  gboolean ok;

  if (!ex)
    {
      g_task_return_error (task, error);
      return;
    }
  input = nl_explain_source_normalise (ev, d->pixels);
  d->layers = g_strdupv ((char **) nl_explain_source_spatial_layers (d->src));
  x = g_new0 (NlExplanation, 1);
  ok = nl_explainer_explain (ex, input, &d->opts, x, &error);
  nl_explain_source_unlock (d->src);
  if (!ok)
    {
      explanation_free (x);
      g_task_return_error (task, error);
      return;
    }
  g_task_return_pointer (task, x, explanation_free);
}

static void
set_running (NlExplainPanel *p, gboolean running)
{
  p->running = running;
  gtk_spinner_set_spinning (GTK_SPINNER (p->spinner), running);
  gtk_widget_set_visible (p->spinner, running);
  g_object_notify_by_pspec (G_OBJECT (p), props[PROP_COMPUTING]);
}

static void
set_status (NlExplainPanel *p, const char *text, gboolean is_error)
{
  gtk_label_set_text (GTK_LABEL (p->status), text);
  if (is_error)
    {
      gtk_widget_remove_css_class (p->status, "dim-label");
      gtk_widget_add_css_class (p->status, "error");
    }
  else
    {
      gtk_widget_remove_css_class (p->status, "error");
      gtk_widget_add_css_class (p->status, "dim-label");
    }
}

static const char *
class_name (NlExplainPanel *p, int c)
{
  return c >= 0 && c < p->n_classes ? p->names[c] : "?";
}

static void
show_scores (NlExplainPanel *p, const NlExplanation *x)
{
  g_autoptr (GString) s = g_string_new (NULL);
  int order[SCORE_ROWS], n = MIN (SCORE_ROWS, x->n_classes);
  g_autofree gboolean *used = g_new0 (gboolean, MAX (x->n_classes, 1));

  /* the few most likely classes, by a partial selection */
  for (int k = 0; k < n; k++)
    {
      order[k] = -1;
      for (int c = 0; c < x->n_classes; c++)
        if (!used[c] && (order[k] < 0 || x->scores[c] > x->scores[order[k]]))
          order[k] = c;
      used[order[k]] = TRUE;
    }
  g_string_printf (s, _("Explaining %s (%.1f %%)."), class_name (p, x->target),
                   x->target >= 0 && x->target < x->n_classes ? 100 * x->scores[x->target] : 0.0);
  g_string_append (s, " ");
  g_string_append (s, _("Most likely:"));
  for (int k = 0; k < n; k++)
    g_string_append_printf (s, "%s %s %.1f %%", k ? "," : "", class_name (p, order[k]), 100 * x->scores[order[k]]);
  gtk_label_set_text (GTK_LABEL (p->scores), s->str);
}

static void
compute_done (GObject *source, GAsyncResult *res, gpointer user)
{
  NlExplainPanel *p = NL_EXPLAIN_PANEL (source);
  g_autoptr (GError) error = NULL;
  NlExplanation *x = g_task_propagate_pointer (G_TASK (res), &error);
  ComputeData *d = g_task_get_task_data (G_TASK (res));

  if (p->disposed)
    {
      /* the template's widgets are gone */
      g_clear_pointer (&x, explanation_free);
      p->running = FALSE;
      return;
    }
  if (p->again)
    {
      /* the request changed while this one ran: its answer is stale */
      g_clear_pointer (&x, explanation_free);
      p->again = FALSE;
      p->running = FALSE;
      if (p->src && p->pixels)
        start_compute (p);
      else
        set_running (p, FALSE);
      return;
    }
  g_clear_pointer (&p->error, g_free);
  g_clear_pointer (&p->shown, explanation_free);
  if (!p->layers && d->layers)
    fill_layers (p, d->layers);
  if (!x)
    {
      p->error = g_strdup (error->message);
      nl_heatmap_view_set_map (NL_HEATMAP_VIEW (p->heatmap), NULL, 0, 0);
      gtk_label_set_text (GTK_LABEL (p->scores), "");
      set_status (p, error->message, TRUE);
    }
  else
    {
      g_autofree char *what = x->predicted == p->truth || p->truth < 0
        ? g_strdup_printf (_("Predicted %s."), class_name (p, x->predicted))
        : g_strdup_printf (_("Predicted %s; truly %s."), class_name (p, x->predicted), class_name (p, p->truth));
      p->shown = x;
      nl_heatmap_view_set_map (NL_HEATMAP_VIEW (p->heatmap), x->map, x->height, x->width);
      set_status (p, what, FALSE);
      show_scores (p, x);
    }
  set_running (p, FALSE);
}

static void
start_compute (NlExplainPanel *p)
{
  g_autoptr (GTask) task = NULL;
  ComputeData *d;

  if (!p->src || !p->pixels)
    return;
  if (p->running)
    {
      p->again = TRUE;
      return;
    }
  d = g_new0 (ComputeData, 1);
  d->src = nl_explain_source_ref (p->src);
  d->pixels = g_memdup2 (p->pixels, sizeof (float) * nl_shape_numel (&p->shape));
  d->opts.method = nl_explain_panel_get_method (p);
  d->opts.target_class = nl_explain_panel_get_target_class (p);
  d->layer = g_strdup (nl_explain_panel_get_layer (p));
  d->opts.layer = d->layer;
  set_running (p, TRUE);
  task = g_task_new (p, NULL, compute_done, NULL);
  g_task_set_source_tag (task, start_compute);
  g_task_set_task_data (task, d, compute_data_free);
  g_task_run_in_thread (task, compute_thread);
}

/* ---- the controls ---- */

static void
fill_classes (NlExplainPanel *p)
{
  g_autoptr (GtkStringList) list = gtk_string_list_new (NULL);
  int n = 0;

  g_free (p->entry_class);
  p->entry_class = g_new (int, p->n_classes + 2);
  gtk_string_list_append (list, _("Predicted class"));
  p->entry_class[n++] = -1;
  if (p->truth >= 0 && p->truth < p->n_classes)
    {
      g_autofree char *t = g_strdup_printf (_("True class (%s)"), p->names[p->truth]);
      gtk_string_list_append (list, t);
      p->entry_class[n++] = p->truth;
    }
  for (int c = 0; c < p->n_classes; c++)
    {
      gtk_string_list_append (list, p->names[c]);
      p->entry_class[n++] = c;
    }
  p->n_entries = n;
  /* setting the model selects entry 0: not a user's choice, no recompute */
  p->filling = TRUE;
  gtk_drop_down_set_model (GTK_DROP_DOWN (p->target), G_LIST_MODEL (list));
  gtk_drop_down_set_selected (GTK_DROP_DOWN (p->target), 0);
  p->filling = FALSE;
}

static void
on_choice_changed (GObject *dd, GParamSpec *pspec, NlExplainPanel *p)
{
  gboolean gradcam = nl_explain_panel_get_method (p) == NL_EXPLAIN_GRADCAM;
  gtk_widget_set_visible (p->layer, gradcam);
  gtk_widget_set_visible (p->layer_label, gradcam);
  /* the layer matters to Grad-CAM only */
  if (!p->filling && (gradcam || dd != G_OBJECT (p->layer)))
    start_compute (p);
}

static void
on_opacity_changed (GtkRange *range, NlExplainPanel *p)
{
  nl_heatmap_view_set_opacity (NL_HEATMAP_VIEW (p->heatmap), gtk_range_get_value (range));
}

void
nl_explain_panel_set_source (NlExplainPanel *p, NlExplainSource *src, const char *const *class_names, int n_classes)
{
  g_return_if_fail (NL_IS_EXPLAIN_PANEL (p));
  if (src)
    nl_explain_source_ref (src);
  g_clear_pointer (&p->src, nl_explain_source_unref);
  p->src = src;
  g_strfreev (p->names);
  p->names = g_new0 (char *, MAX (n_classes, 0) + 1);
  p->n_classes = MAX (n_classes, 0);
  for (int c = 0; c < p->n_classes; c++)
    p->names[c] = class_names && class_names[c] ? g_strdup (class_names[c]) : g_strdup_printf ("%d", c);
  g_clear_pointer (&p->pixels, g_free);
  g_clear_pointer (&p->shown, explanation_free);
  g_clear_pointer (&p->error, g_free);
  fill_layers (p, NULL);
  p->truth = -1;
  p->again = p->running;  /* whatever runs now is for the old source */
  fill_classes (p);
  nl_heatmap_view_set_sample (NL_HEATMAP_VIEW (p->heatmap), NULL, NULL);
  nl_heatmap_view_set_map (NL_HEATMAP_VIEW (p->heatmap), NULL, 0, 0);
  gtk_label_set_text (GTK_LABEL (p->scores), "");
  gtk_label_set_text (GTK_LABEL (p->title), _("Nothing to explain yet"));
  set_status (p, _("Click a misclassified sample, or classify an image and press Explain: the map shows where "
                   "the model looked."), FALSE);
}

void
nl_explain_panel_show_sample (NlExplainPanel *p, const float *pixels, const NlShape *shape, int truth,
                              const char *title)
{
  g_return_if_fail (NL_IS_EXPLAIN_PANEL (p));
  g_return_if_fail (pixels != NULL && shape != NULL);
  g_free (p->pixels);
  p->pixels = g_memdup2 (pixels, sizeof (float) * nl_shape_numel (shape));
  p->shape = *shape;
  p->truth = truth;
  fill_classes (p);
  gtk_label_set_text (GTK_LABEL (p->title), title ? title : "");
  nl_heatmap_view_set_sample (NL_HEATMAP_VIEW (p->heatmap), pixels, shape);
  nl_heatmap_view_set_map (NL_HEATMAP_VIEW (p->heatmap), NULL, 0, 0);
  g_clear_pointer (&p->shown, explanation_free);
  gtk_label_set_text (GTK_LABEL (p->scores), "");
  /* a mistake clicked high up in the gallery: its explanation comes into view */
  nl_widget_scroll_into_view (GTK_WIDGET (p));
  if (!p->src)
    {
      set_status (p, _("Evaluate a checkpoint first: its model is explained."), TRUE);
      return;
    }
  set_status (p, _("Computing where the model looked…"), FALSE);
  start_compute (p);
}

gboolean
nl_explain_panel_show_mistake (NlExplainPanel *p, NlEvaluation *ev, const NlMisclassified *m)
{
  g_autofree float *x = g_new (float, nl_shape_numel (&ev->sample_shape));
  g_autofree char *title = NULL;
  g_autoptr (GError) error = NULL;

  g_return_val_if_fail (NL_IS_EXPLAIN_PANEL (p), FALSE);
  if (!nl_evaluation_get_sample (ev, m->index, x, NULL, &error))
    {
      set_status (p, error->message, TRUE);
      return FALSE;
    }
  title = g_strdup_printf (_("Sample %" PRId64 ": a %s taken for a %s"), m->index, ev->class_names[m->truth],
                           ev->class_names[m->predicted]);
  nl_explain_panel_show_sample (p, x, &ev->sample_shape, m->truth, title);
  return TRUE;
}

gboolean
nl_explain_panel_select_class (NlExplainPanel *p, int c)
{
  g_return_val_if_fail (NL_IS_EXPLAIN_PANEL (p), FALSE);
  /* the named entry, not "true class", so the test of a class is its name's entry */
  for (int i = p->n_entries - 1; i >= 0; i--)
    if (p->entry_class[i] == c)
      {
        if (gtk_drop_down_get_selected (GTK_DROP_DOWN (p->target)) == (guint) i)
          start_compute (p);
        else
          gtk_drop_down_set_selected (GTK_DROP_DOWN (p->target), i);
        return TRUE;
      }
  return FALSE;
}

const char *
nl_explain_panel_get_layer (NlExplainPanel *p)
{
  guint i = gtk_drop_down_get_selected (GTK_DROP_DOWN (p->layer));
  return p->layers && i >= 1 && i <= g_strv_length (p->layers) ? p->layers[i - 1] : NULL;
}

gboolean
nl_explain_panel_select_layer (NlExplainPanel *p, const char *id)
{
  g_return_val_if_fail (NL_IS_EXPLAIN_PANEL (p), FALSE);
  for (guint i = 0; p->layers && p->layers[i]; i++)
    if (!g_strcmp0 (p->layers[i], id))
      {
        gtk_drop_down_set_selected (GTK_DROP_DOWN (p->layer), i + 1);
        return TRUE;
      }
  if (id)
    return FALSE;
  gtk_drop_down_set_selected (GTK_DROP_DOWN (p->layer), 0);
  return TRUE;
}

int
nl_explain_panel_get_target_class (NlExplainPanel *p)
{
  guint i = gtk_drop_down_get_selected (GTK_DROP_DOWN (p->target));
  return i < (guint) p->n_entries ? p->entry_class[i] : -1;
}

NlExplainMethod
nl_explain_panel_get_method (NlExplainPanel *p)
{
  guint i = gtk_drop_down_get_selected (GTK_DROP_DOWN (p->method));
  return i < NL_EXPLAIN_METHOD_COUNT ? (NlExplainMethod) i : NL_EXPLAIN_SALIENCY;
}

/* ---- the object ---- */

static void
nl_explain_panel_dispose (GObject *object)
{
  NlExplainPanel *p = NL_EXPLAIN_PANEL (object);
  p->disposed = TRUE;
  g_clear_pointer (&p->src, nl_explain_source_unref);
  G_OBJECT_CLASS (nl_explain_panel_parent_class)->dispose (object);
}

static void
nl_explain_panel_finalize (GObject *object)
{
  NlExplainPanel *p = NL_EXPLAIN_PANEL (object);
  g_strfreev (p->names);
  g_strfreev (p->layers);
  g_free (p->pixels);
  g_free (p->entry_class);
  g_clear_pointer (&p->shown, explanation_free);
  g_free (p->error);
  G_OBJECT_CLASS (nl_explain_panel_parent_class)->finalize (object);
}

static void
nl_explain_panel_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  if (prop_id == PROP_COMPUTING)
    g_value_set_boolean (value, NL_EXPLAIN_PANEL (object)->running);
  else
    G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
}

static void
nl_explain_panel_class_init (NlExplainPanelClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = nl_explain_panel_dispose;
  object_class->finalize = nl_explain_panel_finalize;
  object_class->get_property = nl_explain_panel_get_property;
  props[PROP_COMPUTING] = g_param_spec_boolean ("computing", NULL, NULL, FALSE,
                                                G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, props);
  g_type_ensure (NL_TYPE_HEATMAP_VIEW);
  gtk_widget_class_set_template_from_resource (widget_class, "/io/github/netloom/Netloom/ui/nl-explain-panel.ui");
#define BIND(name) gtk_widget_class_bind_template_child (widget_class, NlExplainPanel, name)
  BIND (heatmap);
  BIND (title);
  BIND (method);
  BIND (target);
  BIND (opacity);
  BIND (spinner);
  BIND (status);
  BIND (scores);
  BIND (layer);
  BIND (layer_label);
#undef BIND
}

static void
nl_explain_panel_init (NlExplainPanel *p)
{
  g_autoptr (GtkStringList) methods = gtk_string_list_new (NULL);

  gtk_widget_init_template (GTK_WIDGET (p));
  p->truth = -1;
  p->names = g_new0 (char *, 1);
  /* one table: the engine's method names, in its order */
  for (int m = 0; m < NL_EXPLAIN_METHOD_COUNT; m++)
    gtk_string_list_append (methods, nl_explain_method_name ((NlExplainMethod) m));
  gtk_drop_down_set_model (GTK_DROP_DOWN (p->method), G_LIST_MODEL (methods));
  fill_classes (p);
  nl_heatmap_view_set_opacity (NL_HEATMAP_VIEW (p->heatmap), gtk_range_get_value (GTK_RANGE (p->opacity)));
  g_signal_connect (p->method, "notify::selected", G_CALLBACK (on_choice_changed), p);
  g_signal_connect (p->target, "notify::selected", G_CALLBACK (on_choice_changed), p);
  g_signal_connect (p->layer, "notify::selected", G_CALLBACK (on_choice_changed), p);
  fill_layers (p, NULL);
  on_choice_changed (G_OBJECT (p->method), NULL, p);
  g_signal_connect (p->opacity, "value-changed", G_CALLBACK (on_opacity_changed), p);
}

GtkWidget *
nl_explain_panel_new (void)
{
  return g_object_new (NL_TYPE_EXPLAIN_PANEL, NULL);
}

gboolean
nl_explain_panel_is_computing (NlExplainPanel *p)
{
  g_return_val_if_fail (NL_IS_EXPLAIN_PANEL (p), FALSE);
  return p->running;
}

const char *
nl_explain_panel_get_error (NlExplainPanel *p)
{
  g_return_val_if_fail (NL_IS_EXPLAIN_PANEL (p), NULL);
  return p->error;
}

const NlExplanation *
nl_explain_panel_get_explanation (NlExplainPanel *p)
{
  g_return_val_if_fail (NL_IS_EXPLAIN_PANEL (p), NULL);
  return p->shown;
}

#define PART_GETTER(part, field)                                \
  GtkWidget *nl_explain_panel_get_##part (NlExplainPanel *p)    \
  {                                                             \
    g_return_val_if_fail (NL_IS_EXPLAIN_PANEL (p), NULL);       \
    return p->field;                                            \
  }
PART_GETTER (heatmap, heatmap)
PART_GETTER (method_dropdown, method)
PART_GETTER (class_dropdown, target)
PART_GETTER (opacity_scale, opacity)
PART_GETTER (layer_dropdown, layer)
