/* bench-canvas.c — how fast the network canvas pans over 500- and
 * 5000-layer networks (a chain of residual blocks: branches of one to three
 * layers merging through Add), after auto-layout, in a 1280x800 window.
 * Needs a display:  GSK_RENDERER=cairo xvfb-run -a -s "-screen 0 1600x1200x24" build/bench/bench-canvas [--png DIR]
 * Prints JSON lines:
 *   {"bench":"canvas-setup", nodes, layout_ms, analysis_ms}
 *   {"bench":"canvas-pan", nodes, view ("zoom1" | "fit"), zoom, frames,
 *    median_ms, p95_ms, p99_ms, max_ms, snapshot_median_ms,
 *    cpu_median_ms, cpu_p95_ms, cpu_p99_ms}   (wall and thread CPU time)
 *   (nodes 0 first: an empty canvas, the cost of any frame)
 * A frame is what GTK does to redraw the canvas: the widget's snapshot
 * (culling, level of detail, wires) plus rendering the nodes into pixels
 * with the window's renderer, timed over 120 frames that each move the view
 * a few pixels (after 10 warm-up frames). */
#include "engine/session/nl-analysis.h"
#include "ui/network/nl-graph-canvas.h"
#include "ui/network/nl-network-doc.h"

#include <adwaita.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define FRAMES 120
#define WARMUP 10
#define WIN_W 1280
#define WIN_H 800

static int
cmp_double (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return (x > y) - (x < y);
}

static double
pct (const double *sorted, int n, double p)
{
  int i = (int) ceil (p * n) - 1;
  return sorted[CLAMP (i, 0, n - 1)];
}

static double
now_ms (void)
{
  return g_get_monotonic_time () / 1000.0;
}

/* CPU time of this thread: on a shared, loaded machine the wall time also
 * counts waiting for a core */
static double
cpu_ms (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int
add (NlNetwork *net, const char *op, int *counter, const char *param, const char *value)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *id = g_strdup_printf ("%c%d", g_ascii_tolower (op[0]), (*counter)++);
  int i = nl_network_add_node (net, id, op, &error);
  if (i < 0 || (param && !nl_network_set_param (net, i, param, value, &error)))
    g_error ("%s", error->message);
  return i;
}

static void
wire (NlNetwork *net, int from, int to, int port)
{
  g_autoptr (GError) error = NULL;
  if (!nl_network_connect (net, from, 0, to, port, &error))
    g_error ("%s", error->message);
}

/* Residual blocks until n layers: the main path (one Dense) and one or two
 * branches of 1..3 layers, merged by Add. */
static NlNetwork *
make_network (int n)
{
  NlNetwork *net = nl_network_new ("bench");
  int counter = 0, prev = add (net, "Input", &counter, "shape", "64"), block = 0;
  while (nl_network_n_nodes (net) < n)
    {
      int merge, main = add (net, "Dense", &counter, "units", "64");
      int branches = 1 + block % 2, port = 1;
      wire (net, prev, main, 0);
      merge = add (net, "Add", &counter, NULL, NULL);
      wire (net, main, merge, 0);
      for (int b = 0; b < branches; b++)
        {
          int len = 1 + (block + b) % 3, last = prev;
          for (int k = 0; k < len; k++)
            {
              int d = k % 2 ? add (net, "Activation", &counter, NULL, NULL)
                            : add (net, "Dense", &counter, "units", "64");
              wire (net, last, d, 0);
              last = d;
            }
          wire (net, last, merge, port++);
        }
      prev = merge;
      block++;
    }
  return net;
}

static GtkWidget *canvas_widget;
static const char *png_dir;   /* --png DIR: keep each run's last frame */

static void
pump (void)
{
  while (g_main_context_iteration (NULL, FALSE))
    ;
}

static void
bench_pan (NlGraphCanvas *c, int nodes, const char *view)
{
  GtkWidget *w = GTK_WIDGET (c);
  GskRenderer *renderer = gtk_native_get_renderer (gtk_widget_get_native (w));
  double frame[FRAMES], snap[FRAMES], cpu[FRAMES], zoom, cx, cy;
  graphene_rect_t vp = GRAPHENE_RECT_INIT (0, 0, gtk_widget_get_width (w), gtk_widget_get_height (w));

  if (g_str_equal (view, "fit"))
    nl_graph_canvas_fit (c);
  else
    {
      graphene_rect_t b;
      nl_graph_canvas_get_bounds (c, &b);
      /* a third of the way down the diagram: cards all over the view */
      nl_graph_canvas_set_view (c, 1.0, b.origin.x + b.size.width / 2, b.origin.y + b.size.height / 3);
    }
  nl_graph_canvas_get_view (c, &zoom, &cx, &cy);
  for (int f = -WARMUP; f < FRAMES; f++)
    {
      GtkSnapshot *s;
      GskRenderNode *node;
      GdkTexture *tex;
      double t0, t1, t2, c0;
      /* a few pixels a frame, diagonally */
      nl_graph_canvas_set_view (c, zoom, cx + (f + WARMUP) * 4 / zoom, cy + (f + WARMUP) * 3 / zoom);
      pump ();
      c0 = cpu_ms ();
      t0 = now_ms ();
      s = gtk_snapshot_new ();
      GTK_WIDGET_GET_CLASS (w)->snapshot (w, s);
      node = gtk_snapshot_free_to_node (s);
      t1 = now_ms ();
      tex = gsk_renderer_render_texture (renderer, node, &vp);
      t2 = now_ms ();
      if (png_dir && f == FRAMES - 1)
        {
          g_autofree char *name = g_strdup_printf ("canvas-%d-%s.png", nodes, view);
          g_autofree char *path = g_build_filename (png_dir, name, NULL);
          gdk_texture_save_to_png (tex, path);
        }
      g_object_unref (tex);
      gsk_render_node_unref (node);
      if (f >= 0)
        {
          frame[f] = t2 - t0;
          snap[f] = t1 - t0;
          cpu[f] = cpu_ms () - c0;
        }
    }
  qsort (frame, FRAMES, sizeof (double), cmp_double);
  qsort (snap, FRAMES, sizeof (double), cmp_double);
  qsort (cpu, FRAMES, sizeof (double), cmp_double);
  printf ("{\"bench\":\"canvas-pan\",\"nodes\":%d,\"view\":\"%s\",\"zoom\":%.4f,\"frames\":%d,"
          "\"median_ms\":%.3f,\"p95_ms\":%.3f,\"p99_ms\":%.3f,\"max_ms\":%.3f,\"snapshot_median_ms\":%.3f,"
          "\"cpu_median_ms\":%.3f,\"cpu_p95_ms\":%.3f,\"cpu_p99_ms\":%.3f}\n",
          nodes, view, zoom, FRAMES, pct (frame, FRAMES, 0.5), pct (frame, FRAMES, 0.95),
          pct (frame, FRAMES, 0.99), frame[FRAMES - 1], pct (snap, FRAMES, 0.5),
          pct (cpu, FRAMES, 0.5), pct (cpu, FRAMES, 0.95), pct (cpu, FRAMES, 0.99));
  fflush (stdout);
}

int
main (int argc, char **argv)
{
  static const int sizes[] = { 500, 5000 };
  GtkWindow *win;
  NlGraphCanvas *c;

  if (argc == 3 && g_str_equal (argv[1], "--png"))
    png_dir = argv[2];
  if (!gtk_init_check ())
    {
      fprintf (stderr, "bench-canvas: no display (run under xvfb-run -a)\n");
      return 77;
    }
  adw_init ();
  canvas_widget = nl_graph_canvas_new ();
  c = NL_GRAPH_CANVAS (canvas_widget);
  win = GTK_WINDOW (gtk_window_new ());
  gtk_window_set_default_size (win, WIN_W, WIN_H);
  gtk_window_set_child (win, canvas_widget);
  gtk_window_present (win);
  for (int i = 0; i < 500 && gtk_widget_get_width (canvas_widget) == 0; i++)
    {
      g_usleep (2000);
      pump ();
    }

  {
    /* the fixed cost: background, dot grid and rasterising the whole view */
    g_autoptr (NlNetworkDoc) empty = nl_network_doc_new (NULL);
    nl_graph_canvas_set_document (c, empty);
    bench_pan (c, 0, "zoom1");
  }
  for (guint k = 0; k < G_N_ELEMENTS (sizes); k++)
    {
      NlNetwork *net = make_network (sizes[k]);
      int n = nl_network_n_nodes (net);
      g_autoptr (NlNetworkDoc) doc = nl_network_doc_new (net);
      g_autoptr (NlAnalysis) a = NULL;
      double t0 = now_ms (), t_layout, t_analysis;
      nl_network_doc_auto_layout (doc, NULL, 0);
      t_layout = now_ms () - t0;
      t0 = now_ms ();
      a = nl_analysis_new (nl_network_doc_get_network (doc), 1, 0);
      t_analysis = now_ms () - t0;
      nl_graph_canvas_set_document (c, doc);
      nl_graph_canvas_set_analysis (c, a);
      printf ("{\"bench\":\"canvas-setup\",\"nodes\":%d,\"edges\":%u,\"layout_ms\":%.1f,\"analysis_ms\":%.1f,"
              "\"analysis_errors\":%d}\n",
              n, nl_network_doc_get_network (doc)->edges->len, t_layout, t_analysis, a->n_errors);
      fflush (stdout);
      bench_pan (c, n, "zoom1");
      bench_pan (c, n, "fit");
      nl_graph_canvas_set_document (c, NULL);
    }
  gtk_window_destroy (win);
  return 0;
}
