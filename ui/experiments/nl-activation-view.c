/* nl-activation-view.c — feature maps of one sample and a projection of
 * the test set (see nl-activation-view.h). */
#include "ui/experiments/nl-activation-view.h"
#include <glib/gi18n.h>
#include <inttypes.h>

#include "ui/widgets/nl-heatmap-view.h"
#include "ui/widgets/nl-scatter-plot.h"

#define CELL_SIZE 64   /* a feature map's cell, pixels on its longer side */

struct _NlActivationView {
  AdwBin parent_instance;
  NlExplainSource *src;
  char **spatial, **all, **names;   /* layer ids; class names */
  int n_classes;
  int64_t n_samples, shown_sample;
  char *shown_layer, *error;
  int pending;                      /* tasks running */
  guint maps_serial, proj_serial;   /* the newest request of each kind */
  gboolean filling, disposed;

  GtkWidget *sample, *layer, *sample_image, *sample_label, *grid_status, *grid;
  GtkWidget *proj_layer, *proj_count, *project_button, *proj_status, *scatter;
};

enum { PROP_0, PROP_BUSY, N_PROPS };
static GParamSpec *props[N_PROPS];

G_DEFINE_FINAL_TYPE (NlActivationView, nl_activation_view, ADW_TYPE_BIN)

static void start_maps (NlActivationView *v);

static void
task_begin (NlActivationView *v)
{
  if (v->pending++ == 0)
    g_object_notify_by_pspec (G_OBJECT (v), props[PROP_BUSY]);
}

/* FALSE when the view is gone and the result is to be dropped */
static gboolean
task_end (NlActivationView *v)
{
  if (--v->pending == 0 && !v->disposed)
    g_object_notify_by_pspec (G_OBJECT (v), props[PROP_BUSY]);
  return !v->disposed;
}

static void
set_message (GtkWidget *label, const char *text, gboolean is_error)
{
  gtk_label_set_text (GTK_LABEL (label), text);
  if (is_error)
    {
      gtk_widget_remove_css_class (label, "dim-label");
      gtk_widget_add_css_class (label, "error");
    }
  else
    {
      gtk_widget_remove_css_class (label, "error");
      gtk_widget_add_css_class (label, "dim-label");
    }
}

static void
set_error (NlActivationView *v, GtkWidget *label, const GError *error)
{
  g_free (v->error);
  v->error = g_strdup (error->message);
  set_message (label, error->message, TRUE);
}

static const char *
class_name (NlActivationView *v, int c)
{
  return c >= 0 && c < v->n_classes ? v->names[c] : "?";
}

static const char *
selected_id (GtkWidget *dd, char **ids)
{
  guint i = gtk_drop_down_get_selected (GTK_DROP_DOWN (dd));
  return ids && i < g_strv_length (ids) ? ids[i] : NULL;
}

/* ---- opening: the layers, the number of samples, the class names ---- */

typedef struct {
  char **spatial, **all, **names;
  int n_classes;
  int64_t n_samples;
} OpenResult;

static void
open_result_free (gpointer data)
{
  OpenResult *r = data;
  g_strfreev (r->spatial);
  g_strfreev (r->all);
  g_strfreev (r->names);
  g_free (r);
}

static void
open_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *unused)
{
  NlExplainSource *src = task_data;
  NlEvaluation *ev = NULL;
  GError *error = NULL;
  OpenResult *r = g_new0 (OpenResult, 1);

  if (!nl_explain_source_lock (src, &ev, &error))
    {
      open_result_free (r);
      g_task_return_error (task, error);
      return;
    }
  r->n_samples = nl_evaluation_n_samples (ev);
  r->n_classes = ev->n_classes;
  r->names = g_strdupv (ev->class_names);
  nl_explain_source_unlock (src);
  if (!nl_explain_source_list_layers (src, &r->spatial, &r->all, &error))
    {
      open_result_free (r);
      g_task_return_error (task, error);
      return;
    }
  g_task_return_pointer (task, r, open_result_free);
}

static void
fill_layers (GtkWidget *dd, char **ids, guint selected)
{
  GtkStringList *list = gtk_string_list_new ((const char *const *) ids);
  gtk_drop_down_set_model (GTK_DROP_DOWN (dd), G_LIST_MODEL (list));
  g_object_unref (list);
  gtk_drop_down_set_selected (GTK_DROP_DOWN (dd), selected);
}

static void
open_done (GObject *source, GAsyncResult *res, gpointer user)
{
  NlActivationView *v = NL_ACTIVATION_VIEW (source);
  NlExplainSource *src = g_task_get_task_data (G_TASK (res));
  g_autoptr (GError) error = NULL;
  OpenResult *r = g_task_propagate_pointer (G_TASK (res), &error);
  guint n_all;

  if (!task_end (v) || src != v->src)
    {
      g_clear_pointer (&r, open_result_free);
      return;
    }
  if (!r)
    {
      set_error (v, v->grid_status, error);
      set_message (v->proj_status, error->message, TRUE);
      return;
    }
  g_clear_pointer (&v->error, g_free);
  v->spatial = g_steal_pointer (&r->spatial);
  v->all = g_steal_pointer (&r->all);
  g_strfreev (v->names);
  v->names = g_steal_pointer (&r->names);
  v->n_classes = r->n_classes;
  v->n_samples = r->n_samples;
  open_result_free (r);
  n_all = g_strv_length (v->all);
  v->filling = TRUE;
  gtk_spin_button_set_range (GTK_SPIN_BUTTON (v->sample), 0, MAX (v->n_samples - 1, 0));
  gtk_spin_button_set_range (GTK_SPIN_BUTTON (v->proj_count), MIN (2, MAX (v->n_samples, 1)),
                             MAX (v->n_samples, 1));
  fill_layers (v->layer, v->spatial, 0);
  /* the layer before the classifier's last tends to separate the classes best */
  fill_layers (v->proj_layer, v->all, n_all >= 2 ? n_all - 2 : 0);
  v->filling = FALSE;
  gtk_widget_set_sensitive (v->project_button, n_all > 0 && v->n_samples > 1);
  if (v->n_samples <= 0)
    {
      GError e = { G_IO_ERROR, G_IO_ERROR_NOT_FOUND, (char *) _("The run’s test data is not on this computer: "
                                                                  "there are no samples to show.") };
      set_error (v, v->grid_status, &e);
      return;
    }
  start_maps (v);
}

void
nl_activation_view_set_source (NlActivationView *v, NlExplainSource *src)
{
  g_autoptr (GTask) task = NULL;

  g_return_if_fail (NL_IS_ACTIVATION_VIEW (v));
  g_return_if_fail (src != NULL);
  nl_explain_source_ref (src);
  g_clear_pointer (&v->src, nl_explain_source_unref);
  v->src = src;
  g_clear_pointer (&v->spatial, g_strfreev);
  g_clear_pointer (&v->all, g_strfreev);
  v->maps_serial++;
  v->proj_serial++;
  set_message (v->grid_status, _("Opening the model…"), FALSE);
  task_begin (v);
  task = g_task_new (v, NULL, open_done, NULL);
  g_task_set_source_tag (task, nl_activation_view_set_source);
  g_task_set_task_data (task, nl_explain_source_ref (src), (GDestroyNotify) nl_explain_source_unref);
  g_task_run_in_thread (task, open_thread);
}

/* ---- one sample: its picture, class, prediction and feature maps ---- */

typedef struct {
  NlExplainSource *src;
  int64_t index;
  char *layer;          /* NULL: no spatial layer, only the sample */
  guint serial;
} MapsData;

typedef struct {
  float *pixels, *maps;
  NlShape shape;
  int label, predicted, c, h, w;
  double confidence;
  GError *maps_error;   /* the sample is shown even when its maps fail */
} MapsResult;

static void
maps_data_free (gpointer data)
{
  MapsData *d = data;
  nl_explain_source_unref (d->src);
  g_free (d->layer);
  g_free (d);
}

static void
maps_result_free (gpointer data)
{
  MapsResult *r = data;
  g_free (r->pixels);
  g_free (r->maps);
  g_clear_error (&r->maps_error);
  g_free (r);
}

static void
maps_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *unused)
{
  MapsData *d = task_data;
  NlEvaluation *ev = NULL;
  GError *error = NULL;
  NlExplainer *ex = nl_explain_source_lock (d->src, &ev, &error);
  g_autofree float *input = NULL;
  g_autofree double *probs = NULL;
  MapsResult *r;

  if (!ex)
    {
      g_task_return_error (task, error);
      return;
    }
  r = g_new0 (MapsResult, 1);
  r->shape = ev->sample_shape;
  if (!nl_explain_source_sample (ev, d->index, &r->pixels, &input, &error)
      || !nl_evaluation_predict_sample (ev, d->index, &probs, &r->label, &error))
    {
      nl_explain_source_unlock (d->src);
      maps_result_free (r);
      g_task_return_error (task, error);
      return;
    }
  r->predicted = 0;
  for (int c = 1; c < ev->n_classes; c++)
    if (probs[c] > probs[r->predicted])
      r->predicted = c;
  r->confidence = probs[r->predicted];
  if (d->layer)
    r->maps = nl_explainer_activations (ex, input, d->layer, &r->c, &r->h, &r->w, &r->maps_error);
  nl_explain_source_unlock (d->src);
  g_task_return_pointer (task, r, maps_result_free);
}

static void
draw_cell (GtkDrawingArea *area, cairo_t *cr, int width, int height, gpointer surface)
{
  int sw = cairo_image_surface_get_width (surface), sh = cairo_image_surface_get_height (surface);
  double scale = MIN ((double) width / sw, (double) height / sh);
  cairo_translate (cr, (width - sw * scale) / 2, (height - sh * scale) / 2);
  cairo_scale (cr, scale, scale);
  cairo_set_source_surface (cr, surface, 0, 0);
  /* nearest: a 5 x 5 map stays 25 squares, not a blur */
  cairo_pattern_set_filter (cairo_get_source (cr), CAIRO_FILTER_NEAREST);
  cairo_paint (cr);
}

static GtkWidget *
map_cell (const float *map, int k, int h, int w)
{
  GtkWidget *area = gtk_drawing_area_new ();
  cairo_surface_t *s = nl_heatmap_surface (map, h, w);
  float lo = map[0], hi = map[0];
  g_autofree char *tip = NULL;
  double scale = (double) CELL_SIZE / MAX (h, w);

  for (int i = 1; i < h * w; i++)
    lo = MIN (lo, map[i]), hi = MAX (hi, map[i]);
  tip = g_strdup_printf (_("Channel %d: %.3g to %.3g"), k, lo, hi);
  gtk_widget_set_tooltip_text (area, tip);
  gtk_drawing_area_set_content_width (GTK_DRAWING_AREA (area), MAX (1, (int) (w * scale)));
  gtk_drawing_area_set_content_height (GTK_DRAWING_AREA (area), MAX (1, (int) (h * scale)));
  gtk_drawing_area_set_draw_func (GTK_DRAWING_AREA (area), draw_cell, s, (GDestroyNotify) cairo_surface_destroy);
  return area;
}

static void
show_maps (NlActivationView *v, MapsData *d, MapsResult *r)
{
  g_autofree char *text = NULL;
  GtkWidget *child;

  nl_heatmap_view_set_sample (NL_HEATMAP_VIEW (v->sample_image), r->pixels, &r->shape);
  text = g_strdup_printf (_("Sample %" PRId64 ": a %s, predicted %s (%.1f %%)"), d->index, class_name (v, r->label),
                          class_name (v, r->predicted), 100 * r->confidence);
  gtk_label_set_text (GTK_LABEL (v->sample_label), text);
  g_clear_pointer (&text, g_free);
  while ((child = gtk_widget_get_first_child (v->grid)))
    gtk_flow_box_remove (GTK_FLOW_BOX (v->grid), child);
  v->shown_sample = d->index;
  /* the sample's point, when projected, is marked as a click on it would be */
  nl_scatter_plot_select (NL_SCATTER_PLOT (v->scatter),
                          d->index < nl_scatter_plot_get_n_points (NL_SCATTER_PLOT (v->scatter)) ? (int) d->index : -1);
  g_free (v->shown_layer);
  v->shown_layer = r->maps ? g_strdup (d->layer) : NULL;
  if (!d->layer)
    {
      set_message (v->grid_status, _("This network has no layer with spatial outputs."), FALSE);
      return;
    }
  if (!r->maps)
    {
      set_error (v, v->grid_status, r->maps_error);
      return;
    }
  for (int k = 0; k < r->c; k++)
    gtk_flow_box_append (GTK_FLOW_BOX (v->grid), map_cell (r->maps + (size_t) k * r->h * r->w, k, r->h, r->w));
  text = g_strdup_printf (ngettext ("%s: %d channel of %d × %d, each scaled to its own range",
                                    "%s: %d channels of %d × %d, each scaled to its own range", r->c),
                          d->layer, r->c, r->h, r->w);
  set_message (v->grid_status, text, FALSE);
}

static void
maps_done (GObject *source, GAsyncResult *res, gpointer user)
{
  NlActivationView *v = NL_ACTIVATION_VIEW (source);
  MapsData *d = g_task_get_task_data (G_TASK (res));
  g_autoptr (GError) error = NULL;
  MapsResult *r = g_task_propagate_pointer (G_TASK (res), &error);

  if (!task_end (v) || d->serial != v->maps_serial)
    {
      g_clear_pointer (&r, maps_result_free);
      return;
    }
  if (!r)
    {
      set_error (v, v->grid_status, error);
      return;
    }
  g_clear_pointer (&v->error, g_free);
  show_maps (v, d, r);
  maps_result_free (r);
}

static void
start_maps (NlActivationView *v)
{
  g_autoptr (GTask) task = NULL;
  MapsData *d;

  if (!v->src || !v->all || v->n_samples <= 0)
    return;
  d = g_new0 (MapsData, 1);
  d->src = nl_explain_source_ref (v->src);
  d->index = (int64_t) gtk_spin_button_get_value (GTK_SPIN_BUTTON (v->sample));
  d->layer = g_strdup (selected_id (v->layer, v->spatial));
  d->serial = ++v->maps_serial;
  task_begin (v);
  task = g_task_new (v, NULL, maps_done, NULL);
  g_task_set_source_tag (task, start_maps);
  g_task_set_task_data (task, d, maps_data_free);
  g_task_run_in_thread (task, maps_thread);
}

static void
on_sample_changed (GtkSpinButton *spin, NlActivationView *v)
{
  if (!v->filling)
    start_maps (v);
}

static void
on_layer_changed (GObject *dd, GParamSpec *pspec, NlActivationView *v)
{
  if (!v->filling)
    start_maps (v);
}

void
nl_activation_view_set_sample (NlActivationView *v, int64_t index)
{
  g_return_if_fail (NL_IS_ACTIVATION_VIEW (v));
  if ((int64_t) gtk_spin_button_get_value (GTK_SPIN_BUTTON (v->sample)) == index)
    start_maps (v);
  else
    gtk_spin_button_set_value (GTK_SPIN_BUTTON (v->sample), (double) index);
}

gboolean
nl_activation_view_set_layer (NlActivationView *v, const char *id, gboolean for_projection)
{
  char **ids = for_projection ? v->all : v->spatial;
  GtkWidget *dd = for_projection ? v->proj_layer : v->layer;
  g_return_val_if_fail (NL_IS_ACTIVATION_VIEW (v), FALSE);
  for (guint i = 0; ids && ids[i]; i++)
    if (!g_strcmp0 (ids[i], id))
      {
        if (gtk_drop_down_get_selected (GTK_DROP_DOWN (dd)) == i && !for_projection)
          start_maps (v);
        gtk_drop_down_set_selected (GTK_DROP_DOWN (dd), i);
        return TRUE;
      }
  return FALSE;
}

/* ---- the projection ---- */

typedef struct {
  NlExplainSource *src;
  char *layer;
  int n;
  guint serial;
} ProjData;

typedef struct {
  float *xy;
  int *labels;
  int n;
} ProjResult;

static void
proj_data_free (gpointer data)
{
  ProjData *d = data;
  nl_explain_source_unref (d->src);
  g_free (d->layer);
  g_free (d);
}

static void
proj_result_free (gpointer data)
{
  ProjResult *r = data;
  g_free (r->xy);
  g_free (r->labels);
  g_free (r);
}

static void
proj_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *unused)
{
  ProjData *d = task_data;
  GError *error = NULL;
  NlExplainer *ex = nl_explain_source_lock (d->src, NULL, &error);
  ProjResult *r;
  gboolean ok;

  if (!ex)
    {
      g_task_return_error (task, error);
      return;
    }
  r = g_new0 (ProjResult, 1);
  r->n = d->n;
  ok = nl_explainer_project (ex, d->layer, d->n, &r->xy, &r->labels, &error);
  nl_explain_source_unlock (d->src);
  if (!ok)
    {
      proj_result_free (r);
      g_task_return_error (task, error);
      return;
    }
  g_task_return_pointer (task, r, proj_result_free);
}

static void
proj_done (GObject *source, GAsyncResult *res, gpointer user)
{
  NlActivationView *v = NL_ACTIVATION_VIEW (source);
  ProjData *d = g_task_get_task_data (G_TASK (res));
  g_autoptr (GError) error = NULL;
  ProjResult *r = g_task_propagate_pointer (G_TASK (res), &error);
  g_autofree char *text = NULL;

  if (!task_end (v) || d->serial != v->proj_serial)
    {
      g_clear_pointer (&r, proj_result_free);
      return;
    }
  gtk_widget_set_sensitive (v->project_button, TRUE);
  if (!r)
    {
      set_error (v, v->proj_status, error);
      return;
    }
  g_clear_pointer (&v->error, g_free);
  nl_scatter_plot_set_points (NL_SCATTER_PLOT (v->scatter), r->xy, r->labels, r->n, (const char *const *) v->names,
                              v->n_classes);
  text = g_strdup_printf (ngettext ("%s over the first %d test sample, on its first two principal components. "
                                    "Click a point to show its sample above.",
                                    "%s over the first %d test samples, on their first two principal components. "
                                    "Click a point to show its sample above.", r->n),
                          d->layer, r->n);
  set_message (v->proj_status, text, FALSE);
  proj_result_free (r);
}

void
nl_activation_view_project (NlActivationView *v, int n)
{
  g_autoptr (GTask) task = NULL;
  const char *layer;
  ProjData *d;

  g_return_if_fail (NL_IS_ACTIVATION_VIEW (v));
  layer = selected_id (v->proj_layer, v->all);
  if (!v->src || !layer)
    {
      set_message (v->proj_status, _("Wait for the model to open: it lists the layers to project."), TRUE);
      return;
    }
  d = g_new0 (ProjData, 1);
  d->src = nl_explain_source_ref (v->src);
  d->layer = g_strdup (layer);
  d->n = (int) CLAMP (n, 1, MAX (v->n_samples, 1));
  d->serial = ++v->proj_serial;
  gtk_spin_button_set_value (GTK_SPIN_BUTTON (v->proj_count), d->n);
  set_message (v->proj_status, _("Projecting…"), FALSE);
  gtk_widget_set_sensitive (v->project_button, FALSE);
  task_begin (v);
  task = g_task_new (v, NULL, proj_done, NULL);
  g_task_set_source_tag (task, nl_activation_view_project);
  g_task_set_task_data (task, d, proj_data_free);
  g_task_run_in_thread (task, proj_thread);
}

static void
on_project_clicked (GtkButton *button, NlActivationView *v)
{
  nl_activation_view_project (v, gtk_spin_button_get_value_as_int (GTK_SPIN_BUTTON (v->proj_count)));
}

static void
on_point_activated (NlScatterPlot *plot, int i, NlActivationView *v)
{
  /* point i is test sample i: the projection takes the first n in order */
  nl_activation_view_set_sample (v, i);
}

/* ---- the object ---- */

static void
nl_activation_view_dispose (GObject *object)
{
  NlActivationView *v = NL_ACTIVATION_VIEW (object);
  v->disposed = TRUE;
  g_clear_pointer (&v->src, nl_explain_source_unref);
  G_OBJECT_CLASS (nl_activation_view_parent_class)->dispose (object);
}

static void
nl_activation_view_finalize (GObject *object)
{
  NlActivationView *v = NL_ACTIVATION_VIEW (object);
  g_strfreev (v->spatial);
  g_strfreev (v->all);
  g_strfreev (v->names);
  g_free (v->shown_layer);
  g_free (v->error);
  G_OBJECT_CLASS (nl_activation_view_parent_class)->finalize (object);
}

static void
nl_activation_view_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  if (prop_id == PROP_BUSY)
    g_value_set_boolean (value, NL_ACTIVATION_VIEW (object)->pending > 0);
  else
    G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
}

static void
nl_activation_view_class_init (NlActivationViewClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = nl_activation_view_dispose;
  object_class->finalize = nl_activation_view_finalize;
  object_class->get_property = nl_activation_view_get_property;
  props[PROP_BUSY] = g_param_spec_boolean ("busy", NULL, NULL, FALSE, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, props);
  g_type_ensure (NL_TYPE_HEATMAP_VIEW);
  g_type_ensure (NL_TYPE_SCATTER_PLOT);
  gtk_widget_class_set_template_from_resource (widget_class, "/io/github/netloom/Netloom/ui/nl-activation-view.ui");
#define BIND(name) gtk_widget_class_bind_template_child (widget_class, NlActivationView, name)
  BIND (sample);
  BIND (layer);
  BIND (sample_image);
  BIND (sample_label);
  BIND (grid_status);
  BIND (grid);
  BIND (proj_layer);
  BIND (proj_count);
  BIND (project_button);
  BIND (proj_status);
  BIND (scatter);
#undef BIND
  gtk_widget_class_bind_template_callback (widget_class, on_project_clicked);
}

static void
nl_activation_view_init (NlActivationView *v)
{
  gtk_widget_init_template (GTK_WIDGET (v));
  v->shown_sample = -1;
  v->names = g_new0 (char *, 1);
  gtk_widget_set_sensitive (v->project_button, FALSE);
  g_signal_connect (v->sample, "value-changed", G_CALLBACK (on_sample_changed), v);
  g_signal_connect (v->layer, "notify::selected", G_CALLBACK (on_layer_changed), v);
  g_signal_connect (v->scatter, "point-activated", G_CALLBACK (on_point_activated), v);
}

GtkWidget *
nl_activation_view_new (void)
{
  return g_object_new (NL_TYPE_ACTIVATION_VIEW, NULL);
}

gboolean
nl_activation_view_is_busy (NlActivationView *v)
{
  g_return_val_if_fail (NL_IS_ACTIVATION_VIEW (v), FALSE);
  return v->pending > 0;
}

const char *
nl_activation_view_get_error (NlActivationView *v)
{
  g_return_val_if_fail (NL_IS_ACTIVATION_VIEW (v), NULL);
  return v->error;
}

int64_t
nl_activation_view_get_sample (NlActivationView *v)
{
  g_return_val_if_fail (NL_IS_ACTIVATION_VIEW (v), -1);
  return v->shown_sample;
}

const char *
nl_activation_view_get_layer (NlActivationView *v)
{
  g_return_val_if_fail (NL_IS_ACTIVATION_VIEW (v), NULL);
  return v->shown_layer;
}

GtkWidget *
nl_activation_view_get_layer_dropdown (NlActivationView *v, gboolean for_projection)
{
  g_return_val_if_fail (NL_IS_ACTIVATION_VIEW (v), NULL);
  return for_projection ? v->proj_layer : v->layer;
}

#define PART_GETTER(part, field)                                    \
  GtkWidget *nl_activation_view_get_##part (NlActivationView *v)    \
  {                                                                 \
    g_return_val_if_fail (NL_IS_ACTIVATION_VIEW (v), NULL);         \
    return v->field;                                                \
  }
PART_GETTER (grid, grid)
PART_GETTER (scatter, scatter)
PART_GETTER (sample_label, sample_label)
