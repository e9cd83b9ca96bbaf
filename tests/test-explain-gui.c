/* test-explain-gui.c — the Explain overlay and the activation viewer
 * through their real widgets, on a run trained here (a small Conv2D +
 * Dense network on a generated 20x20 10-class IDX dataset):
 * - a misclassified sample clicked in the evaluation view's gallery is
 *   explained in the background (the call returns before the map exists);
 *   the map the overlay stores equals nl_explainer_explain's for the same
 *   sample, method and class (an explainer of the test's own, the sample
 *   normalised here from the evaluation's mean and std); switching the
 *   method, Grad-CAM's layer, choosing the true class and a class by name
 *   recompute it;
 *   the opacity slider changes the drawing; a classified image file is
 *   explained with Explain; a run that does not exist shows its error in
 *   the panel;
 * - the evaluation window's Activations tab lists the layers with spatial
 *   outputs, shows one grid cell per channel of the chosen layer (each
 *   cell's range is its channel's), and projects a layer over N test
 *   samples as N points equal to nl_explainer_project's; clicking a point
 *   shows that sample with its class.
 * Runs under Xvfb. */
#include <math.h>
#include <string.h>

#include "engine/session/nl-evaluate.h"
#include "engine/session/nl-explain.h"
#include "tests/nl-test-gui.h"
#include "tests/nl-test-util.h"
#include "ui/experiments/nl-activation-view.h"
#include "ui/experiments/nl-evaluation-view.h"
#include "ui/experiments/nl-evaluation-window.h"
#include "ui/experiments/nl-explain-panel.h"
#include "ui/widgets/nl-heatmap-view.h"
#include "ui/widgets/nl-scatter-plot.h"

/* generous: the machine may be busy */
#define WAIT_MS 120000

static char *data_dir, *work_dir;
static NlWorkspace *workspace;
static gint64 run_id;
static NlExplainer *reference;   /* the test's own explainer of the run's best checkpoint */

/* ---- helpers ---- */

static gboolean
view_idle (gpointer data)
{
  NlEvaluationView *v = data;
  return !nl_evaluation_view_is_loading (v) && !nl_evaluation_view_is_predicting (v);
}

static gboolean
panel_done (gpointer data)
{
  return !nl_explain_panel_is_computing (data);
}

static void
wait_panel (NlExplainPanel *p)
{
  g_assert_true (nl_test_wait_until (panel_done, p, WAIT_MS));
}

static gboolean
activations_idle (gpointer data)
{
  return !nl_activation_view_is_busy (data);
}

static void
wait_activations (NlActivationView *v)
{
  g_assert_true (nl_test_wait_until (activations_idle, v, WAIT_MS));
}

static guint
n_children (GtkWidget *w)
{
  guint n = 0;
  for (GtkWidget *c = gtk_widget_get_first_child (w); c; c = gtk_widget_get_next_sibling (c))
    n++;
  return n;
}

/* Sample `index` of the evaluation, normalised as the run's pipeline does:
 * (x - mean) / std, written out here rather than taken from the GUI. */
static float *
normalised_sample (NlEvaluation *ev, int64_t index)
{
  int64_t n = nl_shape_numel (&ev->sample_shape);
  float *x = g_new (float, n);
  g_assert_true (nl_evaluation_get_sample (ev, index, x, NULL, NULL));
  for (int64_t i = 0; i < n; i++)
    x[i] = (x[i] - ev->mean) / ev->std;
  return x;
}

static float *
normalise_copy (NlEvaluation *ev, const float *pixels)
{
  int64_t n = nl_shape_numel (&ev->sample_shape);
  float *x = g_new (float, n);
  for (int64_t i = 0; i < n; i++)
    x[i] = (pixels[i] - ev->mean) / ev->std;
  return x;
}

/* The panel's stored map equals the reference explainer's for input x. */
static void
assert_layer_map_is_reference (NlExplainPanel *p, const float *x, NlExplainMethod method, int target,
                               const char *layer)
{
  NlExplainOptions o = { .method = method, .target_class = target, .layer = layer };
  NlExplanation want = { 0 };
  g_autoptr (GError) error = NULL;
  const NlExplanation *got = nl_explain_panel_get_explanation (p);
  int h, w;
  const float *map = nl_heatmap_view_get_map (NL_HEATMAP_VIEW (nl_explain_panel_get_heatmap (p)), &h, &w);

  g_assert_null (nl_explain_panel_get_error (p));
  g_assert_nonnull (got);
  g_assert_true (nl_explainer_explain (reference, x, &o, &want, &error));
  g_assert_no_error (error);
  g_assert_nonnull (map);
  g_assert_cmpint (h, ==, want.height);
  g_assert_cmpint (w, ==, want.width);
  g_assert_cmpint (got->target, ==, want.target);
  g_assert_cmpint (got->predicted, ==, want.predicted);
  for (int i = 0; i < h * w; i++)
    g_assert_cmpfloat_with_epsilon (map[i], want.map[i], 1e-6);
  nl_explanation_clear (&want);
}

static void
assert_map_is_reference (NlExplainPanel *p, const float *x, NlExplainMethod method, int target)
{
  assert_layer_map_is_reference (p, x, method, target, NULL);
}

static double
drawn_difference (NlHeatmapView *hv, double opacity_a, double opacity_b)
{
  cairo_surface_t *s[2];
  double opac[2] = { opacity_a, opacity_b }, diff = 0;
  for (int k = 0; k < 2; k++)
    {
      cairo_t *cr;
      s[k] = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, 200, 160);
      cr = cairo_create (s[k]);
      nl_heatmap_view_set_opacity (hv, opac[k]);
      nl_heatmap_view_draw (hv, cr, 200, 160);
      cairo_destroy (cr);
      cairo_surface_flush (s[k]);
    }
  for (int y = 0; y < 160; y++)
    {
      const guint8 *a = cairo_image_surface_get_data (s[0]) + y * cairo_image_surface_get_stride (s[0]);
      const guint8 *b = cairo_image_surface_get_data (s[1]) + y * cairo_image_surface_get_stride (s[1]);
      for (int x = 0; x < 200 * 4; x++)
        diff += fabs ((double) a[x] - b[x]);
    }
  cairo_surface_destroy (s[0]);
  cairo_surface_destroy (s[1]);
  return diff;
}

/* ---- the Explain overlay ---- */

static void
test_overlay (void)
{
  GtkWidget *view = nl_evaluation_view_new ();
  NlEvaluationView *v = NL_EVALUATION_VIEW (view);
  GtkWindow *win = nl_test_show_in_window (view, 1100, 1400);
  NlExplainPanel *p = NL_EXPLAIN_PANEL (nl_evaluation_view_get_explain_panel (v));
  GtkWidget *method = nl_explain_panel_get_method_dropdown (p), *klass = nl_explain_panel_get_class_dropdown (p);
  NlHeatmapView *hv = NL_HEATMAP_VIEW (nl_explain_panel_get_heatmap (p));
  GListModel *methods = gtk_drop_down_get_model (GTK_DROP_DOWN (method));
  NlEvaluation *ev;
  const NlMisclassified *m;
  g_autofree float *x = NULL;
  g_autofree float *saliency = NULL;
  int other;

  /* the method switch is the engine's table, in its order */
  g_assert_cmpuint (g_list_model_get_n_items (methods), ==, NL_EXPLAIN_METHOD_COUNT);
  for (guint i = 0; i < NL_EXPLAIN_METHOD_COUNT; i++)
    g_assert_cmpstr (gtk_string_list_get_string (GTK_STRING_LIST (methods), i), ==,
                     nl_explain_method_name ((NlExplainMethod) i));

  nl_evaluation_view_load (v, workspace, run_id, "best");
  g_assert_true (nl_test_wait_until (view_idle, v, WAIT_MS));
  ev = (NlEvaluation *) nl_evaluation_view_get_evaluation (v);
  g_assert_nonnull (ev);
  g_assert_cmpint (ev->n_misclassified, >, 1);

  /* a click on the gallery's first mistake; the call returns before the map exists */
  m = &ev->misclassified[0];
  g_signal_emit_by_name (nl_evaluation_view_get_gallery (v), "child-activated",
                         gtk_flow_box_get_child_at_index (GTK_FLOW_BOX (nl_evaluation_view_get_gallery (v)), 0));
  g_assert_true (nl_explain_panel_is_computing (p));
  g_assert_null (nl_explain_panel_get_explanation (p));
  wait_panel (p);
  x = normalised_sample (ev, m->index);
  g_assert_cmpint (nl_explain_panel_get_method (p), ==, NL_EXPLAIN_SALIENCY);
  g_assert_cmpint (nl_explain_panel_get_target_class (p), ==, -1);
  assert_map_is_reference (p, x, NL_EXPLAIN_SALIENCY, -1);
  /* the predicted class is the evaluation's mistake */
  g_assert_cmpint (nl_explain_panel_get_explanation (p)->predicted, ==, m->predicted);
  g_assert_cmpint (nl_explain_panel_get_explanation (p)->target, ==, m->predicted);
  saliency = g_memdup2 (nl_heatmap_view_get_map (hv, NULL, NULL), sizeof (float) * 400);

  /* switching the method recomputes: Grad-CAM's map, not saliency's */
  gtk_drop_down_set_selected (GTK_DROP_DOWN (method), NL_EXPLAIN_GRADCAM);
  g_assert_true (nl_explain_panel_is_computing (p));
  wait_panel (p);
  assert_map_is_reference (p, x, NL_EXPLAIN_GRADCAM, -1);
  g_assert_true (memcmp (saliency, nl_heatmap_view_get_map (hv, NULL, NULL), sizeof (float) * 400) != 0);

  /* Grad-CAM's layer selector: the layers with feature maps, after the default */
  {
    GtkWidget *layer = nl_explain_panel_get_layer_dropdown (p);
    GListModel *ids = gtk_drop_down_get_model (GTK_DROP_DOWN (layer));
    static const char *const spatial[] = { "conv1", "relu1", "pool1" };
    g_autofree float *conv = g_memdup2 (nl_heatmap_view_get_map (hv, NULL, NULL), sizeof (float) * 400);
    g_assert_true (gtk_widget_get_visible (layer));
    g_assert_cmpuint (g_list_model_get_n_items (ids), ==, 1 + G_N_ELEMENTS (spatial));
    for (guint i = 0; i < G_N_ELEMENTS (spatial); i++)
      g_assert_cmpstr (gtk_string_list_get_string (GTK_STRING_LIST (ids), i + 1), ==, spatial[i]);
    g_assert_null (nl_explain_panel_get_layer (p));
    g_assert_true (nl_explain_panel_select_layer (p, "pool1"));
    g_assert_true (nl_explain_panel_is_computing (p));
    wait_panel (p);
    assert_layer_map_is_reference (p, x, NL_EXPLAIN_GRADCAM, -1, "pool1");
    g_assert_true (memcmp (conv, nl_heatmap_view_get_map (hv, NULL, NULL), sizeof (float) * 400) != 0);
    g_assert_false (nl_explain_panel_select_layer (p, "fc1"));
    g_assert_true (nl_explain_panel_select_layer (p, NULL));
    wait_panel (p);
    assert_map_is_reference (p, x, NL_EXPLAIN_GRADCAM, -1);
  }

  /* the class selector: entry 1 is the true class */
  gtk_drop_down_set_selected (GTK_DROP_DOWN (klass), 1);
  g_assert_cmpint (nl_explain_panel_get_target_class (p), ==, m->truth);
  wait_panel (p);
  assert_map_is_reference (p, x, NL_EXPLAIN_GRADCAM, m->truth);
  g_assert_cmpint (nl_explain_panel_get_explanation (p)->target, ==, m->truth);
  /* any class by name, with occlusion */
  other = (m->truth + 1) % ev->n_classes == m->predicted ? (m->truth + 2) % ev->n_classes
                                                          : (m->truth + 1) % ev->n_classes;
  gtk_drop_down_set_selected (GTK_DROP_DOWN (method), NL_EXPLAIN_OCCLUSION);
  g_assert_false (gtk_widget_get_visible (nl_explain_panel_get_layer_dropdown (p)));
  g_assert_true (nl_explain_panel_select_class (p, other));
  g_assert_cmpstr (gtk_string_list_get_string (GTK_STRING_LIST (gtk_drop_down_get_model (GTK_DROP_DOWN (klass))),
                                               gtk_drop_down_get_selected (GTK_DROP_DOWN (klass))),
                   ==, ev->class_names[other]);
  wait_panel (p);
  assert_map_is_reference (p, x, NL_EXPLAIN_OCCLUSION, other);

  /* the opacity slider drives the drawing: at 0 the map is invisible */
  gtk_range_set_value (GTK_RANGE (nl_explain_panel_get_opacity_scale (p)), 0.9);
  g_assert_cmpfloat (nl_heatmap_view_get_opacity (hv), ==, 0.9);
  g_assert_cmpfloat (drawn_difference (hv, 0.0, 0.9), >, 1000);
  g_assert_cmpfloat (drawn_difference (hv, 0.9, 0.9), ==, 0);
  {
    /* opacity 0 draws what the image alone draws */
    g_autofree float *keep = g_memdup2 (nl_heatmap_view_get_map (hv, NULL, NULL), sizeof (float) * 400);
    nl_heatmap_view_set_map (hv, NULL, 0, 0);
    cairo_surface_t *bare = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, 200, 160);
    cairo_surface_t *zero = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, 200, 160);
    cairo_t *cr = cairo_create (bare);
    nl_heatmap_view_draw (hv, cr, 200, 160);
    cairo_destroy (cr);
    nl_heatmap_view_set_map (hv, keep, 20, 20);
    nl_heatmap_view_set_opacity (hv, 0);
    cr = cairo_create (zero);
    nl_heatmap_view_draw (hv, cr, 200, 160);
    cairo_destroy (cr);
    /* the same image region; the colour bar beside it is the map's only */
    for (int y = 0; y < 160; y++)
      g_assert_true (memcmp (cairo_image_surface_get_data (bare) + y * cairo_image_surface_get_stride (bare),
                             cairo_image_surface_get_data (zero) + y * cairo_image_surface_get_stride (zero),
                             4 * 160) == 0);
    cairo_surface_destroy (bare);
    cairo_surface_destroy (zero);
  }

  /* another mistake: the selector is back on "predicted" */
  g_assert_true (nl_evaluation_view_explain_mistake (v, 1));
  g_assert_cmpint (nl_explain_panel_get_target_class (p), ==, -1);
  {
    /* the gallery marks the mistake explained */
    g_autoptr (GList) sel = gtk_flow_box_get_selected_children (GTK_FLOW_BOX (nl_evaluation_view_get_gallery (v)));
    g_assert_cmpuint (g_list_length (sel), ==, 1);
    g_assert_cmpint (gtk_flow_box_child_get_index (sel->data), ==, 1);
  }
  wait_panel (p);
  g_clear_pointer (&x, g_free);
  x = normalised_sample (ev, ev->misclassified[1].index);
  assert_map_is_reference (p, x, NL_EXPLAIN_OCCLUSION, -1);
  g_assert_false (nl_evaluation_view_explain_mistake (v, ev->n_misclassified));

  gtk_window_destroy (win);
}

/* Sample i of the evaluated split as a PNG (gray), through a GdkTexture. */
static char *
sample_png (NlEvaluation *ev, int64_t i)
{
  int w = (int) ev->sample_shape.d[2], h = (int) ev->sample_shape.d[1];
  g_autofree float *x = g_new (float, w * h);
  guint8 *rgb = g_malloc ((gsize) w * h * 3);
  g_autoptr (GBytes) bytes = NULL;
  g_autoptr (GdkTexture) tex = NULL;
  char *path = g_build_filename (work_dir, "sample.png", NULL);

  g_assert_true (nl_evaluation_get_sample (ev, i, x, NULL, NULL));
  for (int k = 0; k < w * h; k++)
    rgb[3 * k] = rgb[3 * k + 1] = rgb[3 * k + 2] = (guint8) (x[k] * 255.0f + 0.5f);
  bytes = g_bytes_new_take (rgb, (gsize) w * h * 3);
  tex = gdk_memory_texture_new (w, h, GDK_MEMORY_R8G8B8, bytes, (gsize) w * 3);
  g_assert_true (gdk_texture_save_to_png (tex, path));
  return path;
}

static GtkWidget *
find_button (GtkWidget *w, const char *label)
{
  if (GTK_IS_BUTTON (w) && g_strcmp0 (gtk_button_get_label (GTK_BUTTON (w)), label) == 0)
    return w;
  for (GtkWidget *c = gtk_widget_get_first_child (w); c; c = gtk_widget_get_next_sibling (c))
    {
      GtkWidget *found = find_button (c, label);
      if (found)
        return found;
    }
  return NULL;
}

/* A classified image file is explained with Explain; a run that does not
 * exist shows its error in the panel. */
static void
test_overlay_file_and_error (void)
{
  GtkWidget *view = nl_evaluation_view_new ();
  NlEvaluationView *v = NL_EVALUATION_VIEW (view);
  GtkWindow *win = nl_test_show_in_window (view, 1100, 1400);
  NlExplainPanel *p = NL_EXPLAIN_PANEL (nl_evaluation_view_get_explain_panel (v));
  GtkWidget *explain = find_button (view, "_Explain");
  g_autoptr (NlExplainSource) missing = nl_explain_source_new (workspace, 999, "best");
  g_autofree char *png = NULL;
  g_autofree double *probs = NULL;
  g_autofree float *seen = NULL, *x = NULL;
  NlEvaluation *ev;
  float one = 0.5f;
  NlShape shape = { .ndim = 3, .d = { 1, 1, 1 } };

  g_assert_nonnull (explain);
  g_assert_false (gtk_widget_get_sensitive (explain));
  nl_evaluation_view_load (v, workspace, run_id, "best");
  g_assert_true (nl_test_wait_until (view_idle, v, WAIT_MS));
  ev = (NlEvaluation *) nl_evaluation_view_get_evaluation (v);
  png = sample_png (ev, 3);
  g_assert_true (nl_evaluation_view_predict_file (v, png));
  g_assert_true (nl_test_wait_until (view_idle, v, WAIT_MS));
  g_assert_true (gtk_widget_get_sensitive (explain));
  g_signal_emit_by_name (explain, "clicked");
  g_assert_true (nl_explain_panel_is_computing (p));
  wait_panel (p);
  /* the reference: the image as the model saw it, normalised here */
  g_assert_true (nl_evaluation_predict_image_file (ev, png, &probs, &seen, NULL));
  x = normalise_copy (ev, seen);
  assert_map_is_reference (p, x, NL_EXPLAIN_SALIENCY, -1);
  /* an image file has no true class: the selector is predicted + the classes */
  g_assert_cmpuint (g_list_model_get_n_items (gtk_drop_down_get_model (
                      GTK_DROP_DOWN (nl_explain_panel_get_class_dropdown (p)))), ==, 1 + ev->n_classes);

  /* errors are shown in the panel, not raised */
  nl_explain_panel_set_source (p, missing, NULL, 0);
  nl_explain_panel_show_sample (p, &one, &shape, -1, "missing");
  wait_panel (p);
  g_assert_nonnull (nl_explain_panel_get_error (p));
  g_assert_true (strstr (nl_explain_panel_get_error (p), "999") != NULL);
  g_assert_null (nl_explain_panel_get_explanation (p));
  g_assert_null (nl_heatmap_view_get_map (NL_HEATMAP_VIEW (nl_explain_panel_get_heatmap (p)), NULL, NULL));
  gtk_window_destroy (win);
}

/* ---- the activation viewer ---- */

static gboolean
sample_shown (gpointer data)
{
  NlActivationView *v = data;
  return !nl_activation_view_is_busy (v) && nl_activation_view_get_sample (v) >= 0;
}

static void
assert_grid_is_reference (NlActivationView *v, NlEvaluation *ev, int64_t index, const char *layer)
{
  g_autofree float *x = normalised_sample (ev, index);
  g_autoptr (GError) error = NULL;
  int c, h, w;
  g_autofree float *acts = nl_explainer_activations (reference, x, layer, &c, &h, &w, &error);
  GtkWidget *grid = nl_activation_view_get_grid (v);
  int k = 0;

  g_assert_no_error (error);
  g_assert_cmpstr (nl_activation_view_get_layer (v), ==, layer);
  g_assert_cmpint (nl_activation_view_get_sample (v), ==, index);
  g_assert_cmpuint (n_children (grid), ==, c);
  /* cell k is channel k: its tooltip gives the channel's own range */
  for (GtkWidget *cell = gtk_widget_get_first_child (grid); cell; cell = gtk_widget_get_next_sibling (cell), k++)
    {
      float lo = acts[(size_t) k * h * w], hi = lo;
      g_autofree char *want = NULL;
      const char *tip;
      for (int i = 1; i < h * w; i++)
        lo = MIN (lo, acts[(size_t) k * h * w + i]), hi = MAX (hi, acts[(size_t) k * h * w + i]);
      want = g_strdup_printf ("Channel %d: %.3g to %.3g", k, lo, hi);
      tip = gtk_widget_get_tooltip_text (gtk_flow_box_child_get_child (GTK_FLOW_BOX_CHILD (cell)));
      g_assert_cmpstr (tip, ==, want);
    }
}

static void
test_activations (void)
{
  GtkWindow *win = nl_evaluation_window_new (NULL, workspace, run_id, "best", FALSE);
  NlActivationView *v = NL_ACTIVATION_VIEW (nl_evaluation_window_get_activations (win));
  GListModel *layers = NULL;
  NlScatterPlot *scatter = NL_SCATTER_PLOT (nl_activation_view_get_scatter (v));
  g_autoptr (NlEvaluation) ev = nl_evaluation_open (nl_workspace_get_project (workspace), run_id, "best", NULL, TRUE,
                                                    NULL);
  static const char *const spatial[] = { "conv1", "relu1", "pool1" };
  g_autofree float *xy = NULL;
  g_autofree int *labels = NULL;
  g_autoptr (GError) error = NULL;
  double px, py;
  int hit;
  GtkGesture *click = NULL;

  g_assert_nonnull (ev);
  /* nothing opens until the tab is shown */
  g_assert_false (nl_activation_view_is_busy (v));
  nl_evaluation_window_show_page (win, "activations");
  g_assert_true (nl_activation_view_is_busy (v));
  g_assert_true (nl_test_wait_until (sample_shown, v, WAIT_MS));
  g_assert_null (nl_activation_view_get_error (v));

  /* the layers with (C, H, W) outputs, in order; the first is shown */
  layers = gtk_drop_down_get_model (GTK_DROP_DOWN (nl_activation_view_get_layer_dropdown (v, FALSE)));
  g_assert_cmpuint (g_list_model_get_n_items (layers), ==, G_N_ELEMENTS (spatial));
  for (guint i = 0; i < G_N_ELEMENTS (spatial); i++)
    g_assert_cmpstr (gtk_string_list_get_string (GTK_STRING_LIST (layers), i), ==, spatial[i]);
  assert_grid_is_reference (v, ev, 0, "conv1");

  /* another layer and another sample */
  g_assert_true (nl_activation_view_set_layer (v, "pool1", FALSE));
  wait_activations (v);
  assert_grid_is_reference (v, ev, 0, "pool1");
  nl_activation_view_set_sample (v, 7);
  wait_activations (v);
  assert_grid_is_reference (v, ev, 7, "pool1");
  g_assert_false (nl_activation_view_set_layer (v, "fc2", FALSE));

  /* the projection of fc1 over 60 samples: 60 points, nl_explainer_project's */
  g_assert_true (nl_activation_view_set_layer (v, "fc1", TRUE));
  nl_activation_view_project (v, 60);
  wait_activations (v);
  g_assert_null (nl_activation_view_get_error (v));
  g_assert_cmpint (nl_scatter_plot_get_n_points (scatter), ==, 60);
  g_assert_true (nl_explainer_project (reference, "fc1", 60, &xy, &labels, &error));
  g_assert_no_error (error);
  {
    /* the plot's points and classes are the projection's */
    const int *shown_labels = NULL;
    const float *shown = nl_scatter_plot_get_points (scatter, &shown_labels);
    for (int i = 0; i < 60; i++)
      {
        g_assert_cmpfloat_with_epsilon (shown[2 * i], xy[2 * i], 1e-6);
        g_assert_cmpfloat_with_epsilon (shown[2 * i + 1], xy[2 * i + 1], 1e-6);
        g_assert_cmpint (shown_labels[i], ==, labels[i]);
      }
  }
  {
    /* points are where their coordinates say, relative to each other */
    double ax, ay, bx, by;
    g_assert_true (nl_scatter_plot_point_position (scatter, 0, &ax, &ay));
    g_assert_true (nl_scatter_plot_point_position (scatter, 1, &bx, &by));
    g_assert_cmpint (ax < bx, ==, xy[0] < xy[2]);
    g_assert_cmpint (ay > by, ==, xy[1] < xy[3]);   /* y grows upwards */
  }

  /* the sample shown is ringed in the projection */
  nl_activation_view_set_sample (v, 11);
  wait_activations (v);
  g_assert_cmpint (nl_scatter_plot_get_selected (scatter), ==, 11);

  /* a click on a point through the plot's gesture shows that sample */
  {
    g_autoptr (GListModel) ctl = gtk_widget_observe_controllers (GTK_WIDGET (scatter));
    for (guint i = 0; i < g_list_model_get_n_items (ctl) && !click; i++)
      {
        g_autoptr (GObject) c = g_list_model_get_item (ctl, i);
        if (GTK_IS_GESTURE_CLICK (c))
          click = GTK_GESTURE (c);
      }
  }
  g_assert_nonnull (click);
  g_assert_true (nl_scatter_plot_point_position (scatter, 42, &px, &py));
  hit = nl_scatter_plot_point_at (scatter, px, py);   /* 42, or one drawn on top of it */
  g_assert_cmpint (hit, >=, 0);
  g_signal_emit_by_name (click, "pressed", 1, px, py);
  g_assert_cmpint (nl_scatter_plot_get_selected (scatter), ==, hit);
  wait_activations (v);
  g_assert_cmpint (nl_activation_view_get_sample (v), ==, hit);
  assert_grid_is_reference (v, ev, hit, "pool1");
  {
    const char *text = gtk_label_get_text (GTK_LABEL (nl_activation_view_get_sample_label (v)));
    g_autofree char *want = g_strdup_printf (" a %s, predicted", ev->class_names[labels[hit]]);
    g_assert_true (strstr (text, want) != NULL);
  }
  /* a click on empty space selects nothing new */
  g_signal_emit_by_name (click, "pressed", 1, -50.0, -50.0);
  g_assert_cmpint (nl_scatter_plot_get_selected (scatter), ==, hit);
  gtk_window_destroy (win);
}

int
main (int argc, char **argv)
{
  g_autoptr (GError) error = NULL;
  NlProject *project;
  int status;

  nl_test_gui_init (&argc, &argv);
  project = nl_test_scratch_project ("explain", 300, 100, &data_dir, &work_dir);
  run_id = nl_test_train_small_conv (project, data_dir);
  workspace = nl_workspace_new (project);
  reference = nl_explainer_new (project, run_id, "best", &error);
  g_assert_no_error (error);

  g_test_add_func ("/explain-gui/overlay", test_overlay);
  g_test_add_func ("/explain-gui/overlay-file-error", test_overlay_file_and_error);
  g_test_add_func ("/explain-gui/activations", test_activations);
  status = g_test_run ();

  nl_explainer_free (reference);
  g_clear_object (&workspace);
  nl_test_scratch_remove (data_dir, work_dir);
  return status;
}
