/* test-training-layers.c — the dashboard's Layers view and system strip
 * on a run another connection writes (as netloom-cli would): one row per
 * layer with the newest values, values out of their usual range marked,
 * the first NaN's layer marked, time shares from profile/ points,
 * activating a row opens its histograms; the strip shows the system/
 * series; the run comparison plots them. And the ridge plot and sparkline
 * widgets on data built here. */
#include <math.h>
#include <string.h>

#include "engine/session/nl-run.h"
#include "projects/nl-project-layers.h"
#include "tests/nl-test-gui.h"
#include "tests/nl-test-training.h"
#include "ui/plot/nl-ridge-plot.h"
#include "ui/plot/nl-sparkline.h"
#include "ui/experiments/nl-experiments-page.h"
#include "ui/plot/nl-plot.h"
#include "ui/training/nl-layers-panel.h"
#include "ui/training/nl-system-strip.h"
#include "ui/training/nl-training-dashboard.h"
#include "ui/training/nl-training-page.h"

typedef NlTrainingFixture Fixture;

static void
add_point (NlProject *q, gint64 run, gint64 step, const char *name, double value)
{
  NlMetricPoint pt = { .run = run, .step = step, .epoch = 1, .split = "train", .name = name, .value = value };
  g_assert_true (nl_project_add_metrics (q, &pt, 1, NULL));
}

static gint64
add_running_run (Fixture *f, NlProject *q)
{
  g_autofree char *net = nl_project_load_network (q, "mlp", 0, NULL);
  g_auto (NlRunConfig) rc = { 0 };
  g_autofree char *hp = NULL;
  NlRunInfo info = { 0 };
  gint64 run;

  nl_run_config_init (&rc);
  rc.epochs = 2;
  hp = nl_run_config_to_json (&rc);
  info.name = (char *) "cli run";
  info.network_name = (char *) "mlp";
  info.network_json = net;
  info.hparams_json = hp;
  info.status = (char *) "running";
  run = nl_project_create_run (q, &info, NULL);
  g_assert_cmpint (run, >, 0);
  return run;
}

static NlLayersPanel *
panel_of (Fixture *f)
{
  return nl_training_dashboard_get_layers_panel (nl_training_page_get_dashboard (f->page));
}

static gboolean
four_layers (gpointer data)
{
  Fixture *f = data;
  NlSparkline *s = nl_layers_panel_get_sparkline (panel_of (f), "fc1", "grad_norm");
  return nl_layers_panel_get_n_layers (panel_of (f)) == 4 && s && nl_sparkline_get_n_points (s) == 3;
}

/* fc1.weight's histogram at STEP: a bump at bin STEP / 10 (weights) or
 * the mirror (gradients), so each ridge is told apart. */
static void
add_histogram (NlProject *q, gint64 run, gint64 step, gboolean is_grad)
{
  guint32 counts[NL_LAYER_HIST_BINS] = { 0 };
  NlLayerHistogram h = { step, "fc1.weight", is_grad, -0.5f, 0.5f, NL_LAYER_HIST_BINS, counts };
  int peak = (int) (step / 10) % NL_LAYER_HIST_BINS;
  counts[is_grad ? NL_LAYER_HIST_BINS - 1 - peak : peak] = 100;
  g_assert_true (nl_project_add_layer_histograms (q, run, &h, 1, NULL));
}

typedef struct {
  NlRidgePlot *ridge;
  guint n;
} RidgeWait;

static gboolean
ridges_are (gpointer data)
{
  RidgeWait *w = data;
  return nl_ridge_plot_get_n_ridges (w->ridge) == w->n;
}

/* fc1 and fc2 healthy at steps 10 and 20; at step 30 fc2's update ratio
 * jumps to 0.5 (> 1e-1) and fc2 made a NaN in backward, fc3's gradient
 * vanishes (1e-6 against a median of about 1: < median / 100), relu1's
 * units die (0.8 > 0.5). */
static void
write_layer_points (NlProject *q, gint64 run)
{
  for (int k = 1; k <= 3; k++)
    {
      gint64 step = 10 * k;
      add_point (q, run, step, "layer/fc1.weight/grad_norm", 1.0 + 0.1 * k);
      add_point (q, run, step, "layer/fc1.weight/update_ratio", 1e-3 * k);
      add_point (q, run, step, "layer/fc1.weight/weight_norm", 5.0);
      add_point (q, run, step, "layer/fc1.bias/grad_norm", 0.2);
      add_point (q, run, step, "layer/fc1/dead_fraction", 0.1);
      add_point (q, run, step, "layer/fc1/act_mean", 0.3);
      add_point (q, run, step, "layer/fc2.weight/grad_norm", 0.8);
      add_point (q, run, step, "layer/fc2.weight/update_ratio", k == 3 ? 0.5 : 2e-3);
      add_point (q, run, step, "layer/fc3.weight/grad_norm", k == 3 ? 1e-6 : 0.9);
      add_point (q, run, step, "layer/fc3.weight/update_ratio", 1e-3);
      add_point (q, run, step, "layer/relu1/dead_fraction", k == 3 ? 0.8 : 0.2);
      add_point (q, run, step, "system/cpu_percent", 80 + k);
      add_point (q, run, step, "system/rss_mb", 500 + k);
      add_point (q, run, step, "system/input_wait_ms", 0.5 * k);
    }
  for (int k = 1; k <= 3; k++)
    add_histogram (q, run, 10 * k, FALSE);
  add_histogram (q, run, 20, TRUE);
  add_histogram (q, run, 30, TRUE);
  add_point (q, run, 30, "layer/fc2/first_nonfinite", 2);
  add_point (q, run, 30, "profile/fc1/ms", 3.0);
  add_point (q, run, 30, "profile/fc2/ms", 1.0);
}

static void
count_profile (NlLayersPanel *panel, int n_steps, int *asked)
{
  *asked += n_steps;
}

static void
test_rows (Fixture *f, gconstpointer data)
{
  g_autoptr (NlProject) q = nl_project_open (f->path, FALSE, NULL);
  NlTrainingDashboard *dash = nl_training_page_get_dashboard (f->page);
  NlSystemStrip *strip = nl_training_dashboard_get_system_strip (dash);
  NlLayersPanel *panel = panel_of (f);
  NlSparkline *s;
  gint64 run;

  g_assert_nonnull (q);
  run = add_running_run (f, q);
  write_layer_points (q, run);
  nl_training_dashboard_show_view (dash, "layers");
  nl_workspace_notify (f->ws, NL_WORKSPACE_ALL);
  g_assert_true (nl_test_wait_until (four_layers, f, 20000));
  g_assert_cmpint (nl_training_page_get_followed_run (f->page), ==, run);

  /* newest values; the sparklines follow the weight, not the bias */
  s = nl_layers_panel_get_sparkline (panel, "fc1", "grad_norm");
  g_assert_cmpfloat (nl_sparkline_get_last (s), ==, 1.3);
  g_assert_cmpstr (nl_layers_panel_get_value_text (panel, "fc1", "grad_norm"), ==, "1.30e+00");
  g_assert_cmpstr (nl_layers_panel_get_value_text (panel, "fc1", "update_ratio"), ==, "3.00e-03");
  g_assert_cmpstr (nl_layers_panel_get_value_text (panel, "fc1", "dead_fraction"), ==, "10.0 %");
  g_assert_cmpstr (nl_layers_panel_get_value_text (panel, "relu1", "dead_fraction"), ==, "80.0 %");
  g_assert_cmpstr (nl_layers_panel_get_value_text (panel, "relu1", "grad_norm"), ==, "–");
  g_assert_null (nl_layers_panel_get_row (panel, "fc1.weight"));

  /* marks: each rule once, the healthy layer none */
  g_assert_false (nl_layers_panel_is_flagged (panel, "fc1"));
  g_assert_true (nl_layers_panel_is_flagged (panel, "fc2"));
  g_assert_true (nl_sparkline_last_out_of_range (nl_layers_panel_get_sparkline (panel, "fc2", "update_ratio")));
  g_assert_false (nl_sparkline_last_out_of_range (nl_layers_panel_get_sparkline (panel, "fc2", "grad_norm")));
  g_assert_true (nl_layers_panel_is_flagged (panel, "fc3"));
  g_assert_true (nl_sparkline_last_out_of_range (nl_layers_panel_get_sparkline (panel, "fc3", "grad_norm")));
  g_assert_false (nl_sparkline_last_out_of_range (nl_layers_panel_get_sparkline (panel, "fc3", "update_ratio")));
  g_assert_true (nl_layers_panel_is_flagged (panel, "relu1"));
  g_assert_cmpint (nl_layers_panel_get_nonfinite (panel, "fc2"), ==, 2);
  g_assert_cmpint (nl_layers_panel_get_nonfinite (panel, "fc1"), ==, 0);

  /* time shares of the profiled window: 3 ms and 1 ms */
  g_assert_cmpfloat_with_epsilon (nl_layers_panel_get_time_share (panel, "fc1"), 0.75, 1e-12);
  g_assert_cmpfloat_with_epsilon (nl_layers_panel_get_time_share (panel, "fc2"), 0.25, 1e-12);
  g_assert_true (isnan (nl_layers_panel_get_time_share (panel, "fc3")));

  /* the strip: the series that exist, none of the GPU's */
  g_assert_true (gtk_widget_get_visible (GTK_WIDGET (strip)));
  g_assert_cmpuint (nl_sparkline_get_n_points (nl_system_strip_get_sparkline (strip, "system/cpu_percent")), ==, 3);
  g_assert_cmpstr (nl_system_strip_get_value_text (strip, "system/cpu_percent"), ==, "83 %");
  g_assert_cmpstr (nl_system_strip_get_value_text (strip, "system/rss_mb"), ==, "503 MB");
  g_assert_cmpstr (nl_system_strip_get_value_text (strip, "system/input_wait_ms"), ==, "1.5 ms");
  g_assert_cmpstr (nl_system_strip_get_value_text (strip, "system/gpu_util_percent"), ==, "");
  g_assert_cmpfloat (nl_test_drawn_fraction (GTK_WIDGET (nl_system_strip_get_sparkline (strip, "system/rss_mb"))),
                     >, 0.01);

  /* a later point arrives live: the row follows, nothing twice */
  add_point (q, run, 40, "layer/fc1.weight/grad_norm", 2.0);
  nl_workspace_notify (f->ws, NL_WORKSPACE_METRICS);
  s = nl_layers_panel_get_sparkline (panel, "fc1", "grad_norm");
  for (int i = 0; i < 2000 && nl_sparkline_get_n_points (s) < 4; i++)
    nl_test_pump (10);
  g_assert_cmpuint (nl_sparkline_get_n_points (s), ==, 4);
  g_assert_cmpstr (nl_layers_panel_get_value_text (panel, "fc1", "grad_norm"), ==, "2.00e+00");

  /* activating a row opens its weight's histograms: one ridge per stored step */
  g_assert_null (nl_layers_panel_get_ridge_tensor (panel));
  gtk_widget_activate (GTK_WIDGET (nl_layers_panel_get_row (panel, "fc1")));
  g_assert_cmpstr (nl_layers_panel_get_ridge_tensor (panel), ==, "fc1.weight");
  {
    NlRidgePlot *ridge = nl_layers_panel_get_ridge_plot (panel);
    RidgeWait w = { ridge, 3 };
    g_assert_true (nl_test_wait_until (ridges_are, &w, 20000));
    for (guint i = 0; i < 3; i++)
      g_assert_cmpint (nl_ridge_plot_get_step (ridge, i), ==, 10 * (i + 1));
    g_assert_true (gtk_widget_is_visible (GTK_WIDGET (ridge)));
    g_assert_cmpfloat (nl_test_drawn_fraction (GTK_WIDGET (ridge)), >, 0.01);
    g_assert_cmpuint (nl_ridge_plot_get_n_drawn (ridge), ==, 3);

    /* gradients: the two steps stored */
    nl_layers_panel_set_ridge_gradients (panel, TRUE);
    w.n = 2;
    g_assert_true (nl_test_wait_until (ridges_are, &w, 20000));
    g_assert_cmpint (nl_ridge_plot_get_step (ridge, 0), ==, 20);

    /* live: a new step's histogram comes with its points */
    add_histogram (q, run, 40, TRUE);
    add_point (q, run, 40, "layer/fc1.weight/update_ratio", 1e-3);
    nl_workspace_notify (f->ws, NL_WORKSPACE_METRICS);
    w.n = 3;
    g_assert_true (nl_test_wait_until (ridges_are, &w, 20000));
    g_assert_cmpint (nl_ridge_plot_get_step (ridge, 2), ==, 40);

    /* a layer without parameters has nothing to draw */
    gtk_widget_activate (GTK_WIDGET (nl_layers_panel_get_row (panel, "relu1")));
    g_assert_null (nl_layers_panel_get_ridge_tensor (panel));
    g_assert_cmpuint (nl_ridge_plot_get_n_ridges (ridge), ==, 0);
  }

  /* another process's run cannot be profiled from here; the page's can */
  {
    GtkButton *button = nl_layers_panel_get_profile_button (panel);
    int asked = 0;
    g_signal_connect (panel, "profile-requested", G_CALLBACK (count_profile), &asked);
    g_assert_false (gtk_widget_get_sensitive (GTK_WIDGET (button)));
    nl_layers_panel_set_can_profile (panel, TRUE);
    gtk_widget_activate (GTK_WIDGET (button));  /* clicks once its press has shown */
    for (int i = 0; i < 2000 && asked == 0; i++)
      nl_test_pump (10);
    g_assert_cmpint (asked, ==, NL_LAYERS_PANEL_PROFILE_STEPS);
    g_signal_handlers_disconnect_by_func (panel, count_profile, &asked);
  }
  g_assert_true (nl_project_set_run_status (q, run, "finished", NULL, NULL));
}

/* The page's own run: the trainer records layer statistics every 100
 * steps (the default); 4 epochs of 32 batches reach step 100 once. The
 * panel shows what was stored, read back after the run's events. */
static gboolean
own_rows_read (gpointer data)
{
  Fixture *f = data;
  NlSparkline *s = nl_layers_panel_get_sparkline (panel_of (f), "fc1", "grad_norm");
  return s && nl_sparkline_get_n_points (s) > 0
         && !nl_training_dashboard_is_reading (nl_training_page_get_dashboard (f->page));
}

static void
test_own_run (Fixture *f, gconstpointer data)
{
  NlLayersPanel *panel = panel_of (f);
  g_autoptr (GArray) grad = NULL, hists = NULL;
  g_autofree char *text = NULL;
  gint64 run;

  nl_test_training_setup_run (f, "tiny16", 4);
  nl_test_training_activate (f, "training.start");
  nl_test_training_wait_end (f);
  g_assert_cmpint (nl_training_page_get_state (f->page), ==, NL_TRAINING_FINISHED);
  run = nl_training_page_get_run (f->page);
  g_assert_true (nl_test_wait_until (own_rows_read, f, 20000));

  /* the mlp's layers in its order, the newest stored value shown */
  g_assert_nonnull (nl_layers_panel_get_row (panel, "fc1"));
  g_assert_nonnull (nl_layers_panel_get_row (panel, "relu1"));
  g_assert_nonnull (nl_layers_panel_get_row (panel, "fc2"));
  g_assert_cmpint (gtk_list_box_row_get_index (nl_layers_panel_get_row (panel, "fc1")), <,
                   gtk_list_box_row_get_index (nl_layers_panel_get_row (panel, "fc2")));
  grad = nl_project_get_metrics (f->p, run, "layer/fc1.weight/grad_norm", 0, NULL, NULL);
  g_assert_nonnull (grad);
  g_assert_cmpuint (grad->len, >, 0);
  text = g_strdup_printf ("%.2e", g_array_index (grad, NlMetricRow, grad->len - 1).value);
  g_assert_cmpstr (nl_layers_panel_get_value_text (panel, "fc1", "grad_norm"), ==, text);
  g_assert_cmpuint (nl_sparkline_get_n_points (nl_layers_panel_get_sparkline (panel, "fc1", "grad_norm")), ==,
                    grad->len);

  /* its histograms: one ridge per stored step */
  hists = nl_project_list_layer_histograms (f->p, run, "fc1.weight", FALSE, NULL);
  g_assert_nonnull (hists);
  g_assert_cmpuint (hists->len, >, 0);
  g_assert_true (nl_layers_panel_open_layer (panel, "fc1"));
  {
    RidgeWait w = { nl_layers_panel_get_ridge_plot (panel), hists->len };
    g_assert_true (nl_test_wait_until (ridges_are, &w, 20000));
    g_assert_cmpint (nl_ridge_plot_get_step (w.ridge, 0), ==, g_array_index (hists, NlLayerHistogram, 0).step);
  }
}

/* The run comparison (Experiments page) plots system metrics by step;
 * per-layer statistics (hundreds of keys) stay out of its list. */
static gboolean
experiments_loaded (gpointer data)
{
  return !nl_experiments_page_is_loading (data);
}

static void
test_compare_system (Fixture *f, gconstpointer data)
{
  g_autoptr (NlProject) q = nl_project_open (f->path, FALSE, NULL);
  NlExperimentsPage *page = g_object_new (NL_TYPE_EXPERIMENTS_PAGE, NULL);
  GtkWindow *win = nl_test_show_in_window (GTK_WIDGET (page), 1400, 900);
  NlPlot *plot = NL_PLOT (nl_experiments_page_get_plot (page));
  gint64 runs[2];
  double x, y;

  for (int r = 0; r < 2; r++)
    {
      runs[r] = add_running_run (f, q);
      for (int k = 1; k <= 4; k++)
        {
          add_point (q, runs[r], 10 * k, "system/cpu_percent", 50.0 + 10 * r + k);
          add_point (q, runs[r], 10 * k, "layer/fc1.weight/grad_norm", 1.0);
          add_point (q, runs[r], 10 * k, "profile/fc1/ms", 2.0);
        }
      g_assert_true (nl_project_set_run_status (q, runs[r], "finished", NULL, NULL));
    }
  nl_experiments_page_set_workspace (page, f->ws);
  g_assert_true (nl_test_wait_until (experiments_loaded, page, 20000));
  nl_experiments_page_select_runs (page, runs, 2);
  nl_test_pump (20);
  g_assert_true (nl_test_wait_until (experiments_loaded, page, 20000));
  g_assert_true (nl_experiments_page_set_plot_metric (page, "train", "system/cpu_percent"));
  nl_test_pump (20);
  g_assert_true (nl_test_wait_until (experiments_loaded, page, 20000));
  g_assert_cmpuint (nl_plot_get_n_series (plot), ==, 2);
  for (guint i = 0; i < 2; i++)
    {
      g_assert_cmpuint (nl_plot_series_get_length (nl_plot_get_series (plot, i)), ==, 4);
      g_assert_true (nl_plot_series_get_point (nl_plot_get_series (plot, i), 3, &x, &y));
      g_assert_cmpfloat (x, ==, 40);  /* by step, not epoch */
      g_assert_true (y == 54 || y == 64);
    }
  g_assert_false (nl_experiments_page_set_plot_metric (page, "train", "layer/fc1.weight/grad_norm"));
  g_assert_false (nl_experiments_page_set_plot_metric (page, "train", "profile/fc1/ms"));
  nl_experiments_page_set_workspace (page, NULL);
  gtk_window_destroy (win);
  nl_test_pump (20);
}

/* ---- the widgets on their own ---- */

static void
fill_counts (guint32 *c, int n, int peak)
{
  for (int b = 0; b < n; b++)
    c[b] = (guint32) (100 * exp (-0.5 * (b - peak) * (b - peak) / 9.0));
}

static void
test_ridge_plot (void)
{
  NlRidgePlot *r = NL_RIDGE_PLOT (nl_ridge_plot_new ());
  GtkWindow *win;
  guint32 c[32];
  double empty;

  g_object_ref_sink (r);
  win = nl_test_show_in_window (GTK_WIDGET (r), 600, 400);
  empty = nl_test_drawn_fraction (GTK_WIDGET (r));
  for (int k = 0; k < 5; k++)
    {
      fill_counts (c, 32, 8 + 4 * k);
      g_assert_true (nl_ridge_plot_add (r, 100 * (k + 1), -1.0f - k, 1.0f + k, c, 32));
    }
  g_assert_cmpuint (nl_ridge_plot_get_n_ridges (r), ==, 5);
  for (guint i = 0; i < 5; i++)
    g_assert_cmpint (nl_ridge_plot_get_step (r, i), ==, 100 * (i + 1));
  /* refused: older step, no bins, reversed or non-finite range */
  g_assert_false (nl_ridge_plot_add (r, 50, 0, 1, c, 32));
  g_assert_false (nl_ridge_plot_add (r, 600, 0, 1, c, 0));
  g_assert_false (nl_ridge_plot_add (r, 600, 1, 0, c, 32));
  g_assert_false (nl_ridge_plot_add (r, 600, 0, INFINITY, c, 32));
  /* the same step again replaces it */
  g_assert_true (nl_ridge_plot_add (r, 500, -2, 2, c, 32));
  g_assert_cmpuint (nl_ridge_plot_get_n_ridges (r), ==, 5);
  nl_ridge_plot_set_title (r, "fc1.weight — weights <over time>");
  g_assert_cmpfloat (nl_test_drawn_fraction (GTK_WIDGET (r)), >, empty + 0.05);
  g_assert_cmpuint (nl_ridge_plot_get_n_drawn (r), ==, 5);

  /* many steps: at most NL_RIDGE_PLOT_MAX_SHOWN drawn */
  for (int k = 6; k <= 100; k++)
    {
      fill_counts (c, 32, k % 32);
      g_assert_true (nl_ridge_plot_add (r, 100 * k, -1, 1, c, 32));
    }
  g_assert_cmpuint (nl_ridge_plot_get_n_ridges (r), ==, 100);
  g_assert_cmpfloat (nl_test_drawn_fraction (GTK_WIDGET (r)), >, 0.05);
  g_assert_cmpuint (nl_ridge_plot_get_n_drawn (r), ==, NL_RIDGE_PLOT_MAX_SHOWN);
  nl_ridge_plot_clear (r);
  g_assert_cmpuint (nl_ridge_plot_get_n_ridges (r), ==, 0);
  gtk_window_destroy (win);
  g_object_unref (r);
}

static void
test_sparkline (void)
{
  NlSparkline *s = NL_SPARKLINE (nl_sparkline_new ());
  g_object_ref_sink (s);
  g_assert_true (isnan (nl_sparkline_get_last (s)));
  g_assert_false (nl_sparkline_last_out_of_range (s));
  nl_sparkline_set_range (s, 1e-4, 1e-1);
  g_assert_true (nl_sparkline_append (s, 1, 1e-3));
  g_assert_false (nl_sparkline_last_out_of_range (s));
  g_assert_true (nl_sparkline_append (s, 2, 0.2));
  g_assert_true (nl_sparkline_last_out_of_range (s));
  g_assert_true (nl_sparkline_append (s, 2, 0.05));  /* the same step: replaced */
  g_assert_false (nl_sparkline_last_out_of_range (s));
  g_assert_false (nl_sparkline_append (s, 1, 5));    /* older: left out */
  g_assert_cmpuint (nl_sparkline_get_n_points (s), ==, 2);
  g_assert_cmpfloat (nl_sparkline_get_last (s), ==, 0.05);
  g_assert_true (nl_sparkline_out_of_range (s, NAN));
  g_assert_true (nl_sparkline_out_of_range (s, INFINITY));
  g_assert_true (nl_sparkline_out_of_range (s, 1e-5));
  nl_sparkline_set_range (s, NAN, 0.5);
  g_assert_false (nl_sparkline_out_of_range (s, -3));
  g_assert_true (nl_sparkline_out_of_range (s, 0.51));
  g_object_unref (s);
}

int
main (int argc, char **argv)
{
  nl_test_gui_init (&argc, &argv);
  g_test_add ("/training-layers/rows", Fixture, NULL, nl_test_training_setup, test_rows,
              nl_test_training_teardown);
  g_test_add ("/training-layers/own-run", Fixture, NULL, nl_test_training_setup, test_own_run,
              nl_test_training_teardown);
  g_test_add ("/training-layers/compare-system", Fixture, NULL, nl_test_training_setup, test_compare_system,
              nl_test_training_teardown);
  g_test_add_func ("/ridge-plot/ridges", test_ridge_plot);
  g_test_add_func ("/sparkline/range", test_sparkline);
  return g_test_run ();
}
