/* bench-plot.c — how long the metric plot takes to draw two series of
 * 10^4, 10^5 and 10^6 points at 1000x400, and its reduction alone.
 * Needs a display:  GSK_RENDERER=cairo xvfb-run -a build/bench/bench-plot
 * Prints one JSON line per size: medians of 20 runs in ms, wall clock
 * (name_ms) and this thread's CPU time (name_cpu_ms):
 *   reduce_ms          full reduction of one series (new key each time)
 *   render_ms          snapshot + render of the widget, nothing changed
 *   render_new_view_ms the same after a pan (every reduction recomputed)
 *   append_render_ms   following: 100 new points per series, then a frame
 *   smoothed_render_ms smoothing 0.9 on (raw faint + smoothed), unchanged
 *   smoothing_change_ms render right after the smoothing value changed */
#include "ui/plot/nl-plot.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define RUNS 20
#define W 1000
#define H 400

static int
cmp_double (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return (x > y) - (x < y);
}

static double
median (double *v, int n)
{
  qsort (v, n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static double
now_ms (void)
{
  return g_get_monotonic_time () / 1000.0;
}

static double
cpu_ms (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void
pump (void)
{
  while (g_main_context_iteration (NULL, FALSE))
    ;
}

static gboolean
set_flag (gpointer data)
{
  *(gboolean *) data = TRUE;
  return G_SOURCE_REMOVE;
}

/* Runs the main loop for ms (the window's first frames). */
static void
wait_ms (guint ms)
{
  gboolean done = FALSE;
  g_timeout_add (ms, set_flag, &done);
  while (!done)
    g_main_context_iteration (NULL, TRUE);
}

/* Snapshot + render of the plot, the work of one frame. The widget's
 * snapshot vfunc is called directly: nl_widget_render_texture () goes
 * through a GtkWidgetPaintable, which has nothing to show between a
 * queue_draw and the next frame-clock tick. */
static void
render_frame (GtkWidget *plot)
{
  int w = gtk_widget_get_width (plot), h = gtk_widget_get_height (plot);
  GskRenderer *renderer = gtk_native_get_renderer (gtk_widget_get_native (plot));
  GtkSnapshot *snapshot = gtk_snapshot_new ();
  GskRenderNode *node;
  GdkTexture *tex;

  GTK_WIDGET_GET_CLASS (plot)->snapshot (plot, snapshot);
  node = gtk_snapshot_free_to_node (snapshot);
  if (!node)
    {
      fprintf (stderr, "bench-plot: the plot drew nothing\n");
      exit (1);
    }
  tex = gsk_renderer_render_texture (renderer, node, &GRAPHENE_RECT_INIT (0, 0, w, h));
  gsk_render_node_unref (node);
  g_object_unref (tex);
}

static void
fill (NlPlotSeries *s, GRand *rng, gsize n, double start, double level)
{
  double *x = g_new (double, n), *y = g_new (double, n);
  for (gsize i = 0; i < n; i++)
    {
      double step = start + (double) i;
      x[i] = step;
      y[i] = level * (0.2 + 2.0 / sqrt (1 + step / 1000.0)) + g_rand_double_range (rng, -0.1, 0.1);
    }
  nl_plot_series_append_many (s, x, y, n);
  g_free (x);
  g_free (y);
}

/* Wall and this thread's CPU time (the machine may be shared: CPU time is
 * the steadier figure). */
typedef struct {
  double wall[RUNS], cpu[RUNS];
  double wall0, cpu0;
} Timer;

static void
timer_start (Timer *t)
{
  t->wall0 = now_ms ();
  t->cpu0 = cpu_ms ();
}

static void
timer_stop (Timer *t, int r)
{
  t->wall[r] = now_ms () - t->wall0;
  t->cpu[r] = cpu_ms () - t->cpu0;
}

static void
print_timer (const char *name, Timer *t, gboolean last)
{
  printf ("\"%s_ms\":%.3f,\"%s_cpu_ms\":%.3f%s", name, median (t->wall, RUNS), name,
          median (t->cpu, RUNS), last ? "" : ",");
}

static void
bench_size (gsize n)
{
  g_autoptr (GRand) rng = g_rand_new_with_seed (1);
  GtkWidget *plot = nl_plot_new ();
  GtkWidget *win = gtk_window_new ();
  NlPlotSeries *series[2];
  Timer reduce, render, new_view, append, smoothed, smoothing_change;
  double x0, x1;

  for (int k = 0; k < 2; k++)
    {
      series[k] = nl_plot_series_new (k ? "validation" : "train");
      fill (series[k], rng, n, 0, k ? 1.1 : 1.0);
      nl_plot_add_series (NL_PLOT (plot), series[k]);
    }
  nl_plot_series_set_dashed (series[1], TRUE);
  nl_plot_set_title (NL_PLOT (plot), "loss");
  nl_plot_set_x_label (NL_PLOT (plot), "step");
  gtk_window_set_default_size (GTK_WINDOW (win), W, H);
  gtk_window_set_child (GTK_WINDOW (win), plot);
  gtk_window_present (GTK_WINDOW (win));
  for (int i = 0; i < 500 && (!gtk_widget_get_mapped (plot) || gtk_widget_get_width (plot) < W / 2); i++)
    {
      g_usleep (2000);
      pump ();
    }
  wait_ms (100);

  /* the reduction alone, all points in view: a new key each run, so
   * nothing is cached */
  for (int r = 0; r < RUNS; r++)
    {
      timer_start (&reduce);
      nl_plot_series_reduce (series[0], -0.5, n + r * 1e-3, 940, 0, FALSE);
      timer_stop (&reduce, r);
    }

  render_frame (plot); /* warm up: fonts, the first reductions */
  for (int r = 0; r < RUNS; r++)
    {
      timer_start (&render);
      render_frame (plot);
      timer_stop (&render, r);
    }

  /* a pan: both series reduced again over all their points */
  nl_plot_get_x_range (NL_PLOT (plot), &x0, &x1);
  for (int r = 0; r < RUNS; r++)
    {
      timer_start (&new_view);
      nl_plot_set_x_range (NL_PLOT (plot), x0 - (r + 1), x1 - (r + 1));
      render_frame (plot);
      timer_stop (&new_view, r);
    }

  /* a live run: following, 100 new points per series, then the frame */
  nl_plot_reset_view (NL_PLOT (plot));
  render_frame (plot);
  for (int r = 0; r < RUNS; r++)
    {
      timer_start (&append);
      for (int k = 0; k < 2; k++)
        fill (series[k], rng, 100, (double) nl_plot_series_get_length (series[k]), k ? 1.1 : 1.0);
      render_frame (plot);
      timer_stop (&append, r);
      pump (); /* ::changed, and the window's own frame, outside the timing */
    }

  nl_plot_set_smoothing (NL_PLOT (plot), 0.9);
  render_frame (plot);
  for (int r = 0; r < RUNS; r++)
    {
      timer_start (&smoothed);
      render_frame (plot);
      timer_stop (&smoothed, r);
    }

  /* the slider moved: EMA over all points, then the smoothed reductions */
  for (int r = 0; r < RUNS; r++)
    {
      timer_start (&smoothing_change);
      nl_plot_set_smoothing (NL_PLOT (plot), r % 2 ? 0.9 : 0.95);
      render_frame (plot);
      timer_stop (&smoothing_change, r);
    }

  printf ("{\"bench\":\"plot\",\"points_per_series\":%zu,\"series\":2,\"width\":%d,\"height\":%d,"
          "\"renderer\":\"%s\",\"runs\":%d,",
          n, gtk_widget_get_width (plot), gtk_widget_get_height (plot),
          G_OBJECT_TYPE_NAME (gtk_native_get_renderer (gtk_widget_get_native (plot))), RUNS);
  print_timer ("reduce", &reduce, FALSE);
  print_timer ("render", &render, FALSE);
  print_timer ("render_new_view", &new_view, FALSE);
  print_timer ("append_render", &append, FALSE);
  print_timer ("smoothed_render", &smoothed, FALSE);
  print_timer ("smoothing_change", &smoothing_change, TRUE);
  printf ("}\n");
  fflush (stdout);

  gtk_window_destroy (GTK_WINDOW (win));
  pump ();
  for (int k = 0; k < 2; k++)
    g_object_unref (series[k]);
}

int
main (int argc, char **argv)
{
  g_setenv ("GSK_RENDERER", "cairo", FALSE);
  g_setenv ("GSETTINGS_BACKEND", "memory", FALSE);
  if (!gtk_init_check ())
    {
      fprintf (stderr, "bench-plot: no display (run it under xvfb-run -a)\n");
      return 77;
    }
  for (gsize n = 10000; n <= 1000000; n *= 10)
    bench_size (n);
  return 0;
}
