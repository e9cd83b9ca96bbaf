/* test-plot.c — the metric plot: its reduction and smoothing against
 * brute force, the coalesced ::changed, and the widget under Xvfb (drawing,
 * log y, x view, hover, light and dark styles, exports). */
#include "tests/nl-test-gui.h"
#include "tests/nl-test-util.h"
#include "ui/plot/nl-plot.h"

#include <math.h>
#include <string.h>

/* --- random series --- */

static void
random_series (GRand *rng, gsize n, double *x, double *y)
{
  double at = g_rand_double_range (rng, -50, 50);
  for (gsize i = 0; i < n; i++)
    {
      double r = g_rand_double (rng);
      /* repeated x, small and large steps */
      at += r < 0.2 ? 0 : r < 0.5 ? 0.5 : g_rand_double_range (rng, 0, 3);
      x[i] = at;
      r = g_rand_double (rng);
      y[i] = r < 0.05 ? NAN : r < 0.07 ? INFINITY : g_rand_double_range (rng, -10, 10);
    }
}

/* --- brute force reduction: per column, the list of its points --- */

typedef struct {
  double min, max, first, last;
  guint n;
  gboolean gap_before, gap_after;
} Col;

static void
brute_reduce (const double *x, const double *y, gsize n, double x0, double x1, guint w,
              gboolean positive_only, Col *cols, gsize *begin, gsize *end)
{
  GArray **members = g_new0 (GArray *, w);
  *begin = 0;
  *end = 0;
  for (gsize i = 0; i < n; i++)
    {
      guint c;
      if (x[i] < x0)
        (*begin)++;
      if (x[i] <= x1)
        (*end)++;
      if (!(x[i] >= x0 && x[i] <= x1))
        continue;
      c = (guint) floor ((x[i] - x0) * ((double) w / (x1 - x0)));
      if (c >= w)
        c = w - 1;
      if (!members[c])
        members[c] = g_array_new (FALSE, FALSE, sizeof (gsize));
      g_array_append_val (members[c], i);
    }
  for (guint c = 0; c < w; c++)
    {
      Col *col = &cols[c];
      gssize first_i = -1, last_i = -1;
      memset (col, 0, sizeof *col);
      if (!members[c])
        continue;
      for (guint k = 0; k < members[c]->len; k++)
        {
          gsize i = g_array_index (members[c], gsize, k);
          if (!isfinite (y[i]) || (positive_only && y[i] <= 0))
            continue;
          if (first_i < 0)
            {
              first_i = (gssize) i;
              col->min = col->max = y[i];
            }
          last_i = (gssize) i;
          col->min = fmin (col->min, y[i]);
          col->max = fmax (col->max, y[i]);
          col->n++;
        }
      if (col->n > 0)
        {
          col->first = y[first_i];
          col->last = y[last_i];
        }
      for (guint k = 0; k < members[c]->len; k++)
        {
          gsize i = g_array_index (members[c], gsize, k);
          if (isfinite (y[i]))
            continue;
          if (col->n == 0 || (gssize) i < first_i)
            col->gap_before = TRUE;
          if (col->n == 0 || (gssize) i > last_i)
            col->gap_after = TRUE;
        }
      g_array_unref (members[c]);
    }
  g_free (members);
}

static void
assert_reduction_equal (const NlPlotReduction *r, const double *x, const double *y, gsize n,
                        double x0, double x1, guint w, gboolean positive_only)
{
  Col *cols = g_new (Col, w);
  gsize begin, end;
  g_assert_nonnull (r);
  brute_reduce (x, y, n, x0, x1, w, positive_only, cols, &begin, &end);
  g_assert_cmpuint (r->width, ==, w);
  g_assert_cmpuint (r->begin, ==, begin);
  g_assert_cmpuint (r->end, ==, end);
  for (guint c = 0; c < w; c++)
    {
      const NlPlotColumn *a = &r->columns[c];
      const Col *b = &cols[c];
      g_assert_cmpuint (a->n, ==, b->n);
      g_assert_cmpint (!!a->gap_before, ==, b->gap_before);
      g_assert_cmpint (!!a->gap_after, ==, b->gap_after);
      if (b->n == 0)
        continue;
      /* exact: the reduction only copies values */
      g_assert_true (a->min == b->min);
      g_assert_true (a->max == b->max);
      g_assert_true (a->first == b->first);
      g_assert_true (a->last == b->last);
    }
  g_free (cols);
}

static void
test_reduce_brute_force (void)
{
  g_autoptr (GRand) rng = g_rand_new_with_seed (42);
  const gsize n = 20000;
  double *x = g_new (double, n), *y = g_new (double, n);
  g_autoptr (NlPlotSeries) s = nl_plot_series_new ("loss");
  static const guint widths[] = { 1, 2, 7, 100, 640, 997, 5000 };
  double lo, hi;

  random_series (rng, n, x, y);
  nl_plot_series_append_many (s, x, y, n);
  g_assert_cmpuint (nl_plot_series_get_length (s), ==, n);
  g_assert_true (nl_plot_series_get_bounds (s, &lo, &hi, NULL, NULL));
  for (guint wi = 0; wi < G_N_ELEMENTS (widths); wi++)
    {
      /* whole range, sub-ranges, on repeated x, before and after the data */
      double ranges[][2] = {
        { lo, hi }, { lo - 5, hi + 5 }, { x[n / 3], x[n / 2] }, { x[100], x[100] + 0.25 },
        { lo - 100, lo - 10 }, { hi + 1, hi + 100 }, { x[777], x[778] + 1e-9 },
      };
      for (guint ri = 0; ri < G_N_ELEMENTS (ranges); ri++)
        for (int pos = 0; pos < 2; pos++)
          {
            double x0 = ranges[ri][0], x1 = ranges[ri][1];
            const NlPlotReduction *r;
            if (!(x1 > x0))
              x1 = x0 + 1;
            r = nl_plot_series_reduce (s, x0, x1, widths[wi], 0, pos);
            assert_reduction_equal (r, x, y, n, x0, x1, widths[wi], pos);
          }
    }
  g_free (x);
  g_free (y);
}

/* After appends the reduction is extended, not recomputed: the result must
 * still equal brute force over everything, and the cost only the new
 * points. */
static void
test_reduce_incremental (void)
{
  g_autoptr (GRand) rng = g_rand_new_with_seed (7);
  const gsize n = 30000, chunk = 100;
  double *x = g_new (double, n), *y = g_new (double, n);
  g_autoptr (NlPlotSeries) s = nl_plot_series_new ("acc");
  double x0, x1;
  guint64 folded;

  random_series (rng, n, x, y);
  x0 = x[0] - 1;
  x1 = x[n - 1] + 1;
  for (gsize at = 0; at < n; at += chunk)
    {
      const NlPlotReduction *raw, *sm;
      folded = nl_plot_series_get_n_folded (s);
      nl_plot_series_append_many (s, x + at, y + at, chunk);
      raw = nl_plot_series_reduce (s, x0, x1, 500, 0, FALSE);
      sm = nl_plot_series_reduce (s, x0, x1, 500, 0.9, FALSE);
      if (at > 0)
        /* two reductions (raw, smoothed), each folding the chunk only */
        g_assert_cmpuint (nl_plot_series_get_n_folded (s) - folded, ==, 2 * chunk);
      if (at % (50 * chunk) == 0 || at + chunk == n)
        {
          assert_reduction_equal (raw, x, y, at + chunk, x0, x1, 500, FALSE);
          assert_reduction_equal (sm, x, nl_plot_series_get_smoothed (s, 0.9), at + chunk, x0, x1, 500, FALSE);
        }
    }
  /* no change: free */
  folded = nl_plot_series_get_n_folded (s);
  g_assert_nonnull (nl_plot_series_reduce (s, x0, x1, 500, 0, FALSE));
  g_assert_nonnull (nl_plot_series_reduce (s, x0, x1, 500, 0.9, FALSE));
  g_assert_cmpuint (nl_plot_series_get_n_folded (s), ==, folded);

  /* a range ending inside the data: appends past it cost nothing */
  g_assert_nonnull (nl_plot_series_reduce (s, x0, x[n / 2], 300, 0, FALSE));
  folded = nl_plot_series_get_n_folded (s);
  nl_plot_series_append (s, x[n - 1] + 1, 1);
  assert_reduction_equal (nl_plot_series_reduce (s, x0, x[n / 2], 300, 0, FALSE), x, y, n, x0, x[n / 2], 300, FALSE);
  g_assert_cmpuint (nl_plot_series_get_n_folded (s), ==, folded);

  /* clear voids the cache */
  nl_plot_series_clear (s);
  g_assert_cmpuint (nl_plot_series_reduce (s, x0, x1, 500, 0, FALSE)->end, ==, 0);
  g_free (x);
  g_free (y);
}

static void
test_smoothing (void)
{
  static const double ys[] = { 1.0, 0.5, 2.0, NAN, 3.0, -1.0, 0.25, 0.0, 10.0, 4.0, INFINITY, 2.5 };
  const gsize n = G_N_ELEMENTS (ys);
  static const double weights[] = { 0.3, 0.6, 0.9, 0.99, 0.999 };
  g_autoptr (NlPlotSeries) s = nl_plot_series_new ("loss");
  const double *sm;

  for (gsize i = 0; i < n; i++)
    nl_plot_series_append (s, (double) i, ys[i]);
  for (guint k = 0; k < G_N_ELEMENTS (weights); k++)
    {
      double w = weights[k], last = 0;
      int t = 0;
      sm = nl_plot_series_get_smoothed (s, w);
      for (gsize i = 0; i < n; i++)
        {
          double expect;
          if (!isfinite (ys[i]))
            {
              g_assert_true (isnan (sm[i]));
              continue;
            }
          last = last * w + (1 - w) * ys[i];
          t++;
          expect = last / (1 - pow (w, t));
          g_assert_cmpfloat_with_epsilon (sm[i], expect, 1e-12);
        }
    }
  /* the first value is the first point itself (debiased) */
  g_assert_cmpfloat_with_epsilon (nl_plot_series_get_smoothed (s, 0.9)[0], 1.0, 1e-15);
  /* smoothing 0 is the identity */
  sm = nl_plot_series_get_smoothed (s, 0);
  for (gsize i = 0; i < n; i++)
    g_assert_true (sm[i] == ys[i] || (isnan (sm[i]) && isnan (ys[i])));

  /* extended on append = computed from scratch */
  nl_plot_series_get_smoothed (s, 0.8);
  nl_plot_series_append (s, 20, 7.0);
  {
    g_autoptr (NlPlotSeries) fresh = nl_plot_series_new ("same");
    for (gsize i = 0; i < n; i++)
      nl_plot_series_append (fresh, (double) i, ys[i]);
    nl_plot_series_append (fresh, 20, 7.0);
    g_assert_true (nl_plot_series_get_smoothed (s, 0.8)[n] == nl_plot_series_get_smoothed (fresh, 0.8)[n]);
  }
}

static void
count_signal (NlPlotSeries *s, guint *count)
{
  (*count)++;
}

static void
test_changed_coalesced (void)
{
  g_autoptr (NlPlotSeries) s = nl_plot_series_new ("x");
  guint count = 0;
  double xs[50], ys[50];

  g_signal_connect (s, "changed", G_CALLBACK (count_signal), &count);
  for (int i = 0; i < 50; i++)
    xs[i] = ys[i] = i;
  while (g_main_context_iteration (NULL, FALSE))
    ;
  for (guint round = 1; round <= 5; round++)
    {
      for (int i = 0; i < 1000; i++)
        nl_plot_series_append (s, round * 10000.0 + i, i);
      nl_plot_series_append_many (s, xs, ys, 50);
      g_assert_cmpuint (count, ==, round - 1);    /* nothing synchronous */
      g_assert_true (g_main_context_iteration (NULL, FALSE));
      g_assert_cmpuint (count, ==, round);        /* one per iteration */
      while (g_main_context_iteration (NULL, FALSE))
        ;
      g_assert_cmpuint (count, ==, round);
    }
  /* x never decreases: the 50 points with small x were clamped */
  {
    double x;
    g_assert_true (nl_plot_series_get_point (s, 1000, &x, NULL));
    g_assert_cmpfloat (x, ==, 10999.0);
  }
  nl_plot_series_clear (s);
  g_assert_cmpuint (nl_plot_series_get_length (s), ==, 0);
  while (g_main_context_iteration (NULL, FALSE))
    ;
  g_assert_cmpuint (count, ==, 6);
}

static void
test_nearest (void)
{
  g_autoptr (GRand) rng = g_rand_new_with_seed (3);
  const gsize n = 3000;
  double *x = g_new (double, n), *y = g_new (double, n);
  g_autoptr (NlPlotSeries) s = nl_plot_series_new ("n");
  gsize k;

  g_assert_false (nl_plot_series_find_nearest (s, 1, &k));
  random_series (rng, n, x, y);
  nl_plot_series_append_many (s, x, y, n);
  for (int q = 0; q < 2000; q++)
    {
      double at = q < 1000 ? g_rand_double_range (rng, x[0] - 10, x[n - 1] + 10)
                           : x[g_rand_int_range (rng, 0, (gint32) n)] + (q % 3) * 0.25;
      gsize best = 0;
      for (gsize i = 1; i < n; i++)
        if (fabs (x[i] - at) < fabs (x[best] - at))
          best = i;
      g_assert_true (nl_plot_series_find_nearest (s, at, &k));
      g_assert_cmpuint (k, ==, best);
    }
  g_free (x);
  g_free (y);
}

/* --- the widget --- */

static NlPlotSeries *
make_series (const char *label, gsize n, double scale, double phase)
{
  NlPlotSeries *s = nl_plot_series_new (label);
  for (gsize i = 0; i < n; i++)
    nl_plot_series_append (s, (double) i, scale * exp (-(double) i / 300.0) * (1.2 + sin (i * 0.05 + phase)));
  return s;
}

static gboolean
range_reaches (gpointer data)
{
  double x0, x1;
  nl_plot_get_x_range (data, &x0, &x1);
  return x1 >= 5000;
}

typedef struct {
  NlPlotSeries *s;
  guint64 before;
} FoldWait;

static gboolean
folded_more (gpointer data)
{
  FoldWait *w = data;
  return nl_plot_series_get_n_folded (w->s) > w->before;
}

static void
test_widget (void)
{
  GtkWidget *plot = nl_plot_new ();
  GtkWindow *win;
  g_autoptr (NlPlotSeries) train = make_series ("train", 2000, 2.0, 0);
  g_autoptr (NlPlotSeries) val = make_series ("validation", 2000, 1.5, 1);
  double empty, drawn, x0, x1;

  g_object_ref_sink (plot);
  nl_plot_set_title (NL_PLOT (plot), "Loss");
  nl_plot_set_x_label (NL_PLOT (plot), "step");
  nl_plot_set_y_label (NL_PLOT (plot), "loss");
  win = nl_test_show_in_window (plot, 800, 400);
  empty = nl_test_drawn_fraction (plot);

  nl_plot_series_set_dashed (val, TRUE);
  nl_plot_add_series (NL_PLOT (plot), train);
  nl_plot_add_series (NL_PLOT (plot), val);
  g_assert_cmpuint (nl_plot_get_n_series (NL_PLOT (plot)), ==, 2);
  g_assert_true (nl_plot_get_series (NL_PLOT (plot), 1) == val);
  nl_test_pump (50);
  drawn = nl_test_drawn_fraction (plot);
  g_test_message ("drawn fraction: empty %.4f, two series %.4f", empty, drawn);
  g_assert_cmpfloat (drawn, >, 0.02);
  g_assert_cmpfloat (drawn, >, empty + 0.01);

  /* following: everything is in view */
  g_assert_true (nl_plot_get_following (NL_PLOT (plot)));
  nl_plot_get_x_range (NL_PLOT (plot), &x0, &x1);
  g_assert_cmpfloat (x0, <=, 0);
  g_assert_cmpfloat (x1, >=, 1999);

  nl_plot_set_log_y (NL_PLOT (plot), TRUE);
  g_assert_true (nl_plot_get_log_y (NL_PLOT (plot)));
  nl_test_pump (30);
  g_assert_cmpfloat (nl_test_drawn_fraction (plot), >, 0.02);
  nl_plot_set_log_y (NL_PLOT (plot), FALSE);

  nl_plot_set_smoothing (NL_PLOT (plot), 0.9);
  g_assert_cmpfloat (nl_plot_get_smoothing (NL_PLOT (plot)), ==, 0.9);
  nl_test_pump (30);
  g_assert_cmpfloat (nl_test_drawn_fraction (plot), >, 0.02);

  nl_plot_set_x_range (NL_PLOT (plot), 100.5, 750.25);
  nl_plot_get_x_range (NL_PLOT (plot), &x0, &x1);
  g_assert_cmpfloat (x0, ==, 100.5);
  g_assert_cmpfloat (x1, ==, 750.25);
  g_assert_false (nl_plot_get_following (NL_PLOT (plot)));
  nl_test_pump (30);
  g_assert_cmpfloat (nl_test_drawn_fraction (plot), >, 0.02);

  /* not following: new points leave the view alone */
  nl_plot_series_append (train, 3000, 1);
  nl_test_pump (30);
  nl_plot_get_x_range (NL_PLOT (plot), &x0, &x1);
  g_assert_cmpfloat (x1, ==, 750.25);

  /* zoom in around the middle, pan right by 100 px */
  {
    double wx, mid, y0, y1;
    g_assert_true (nl_plot_x_at (NL_PLOT (plot), 0, &mid));
    nl_plot_get_x_range (NL_PLOT (plot), &x0, &x1);
    for (wx = 0; wx < 800 && nl_plot_x_at (NL_PLOT (plot), wx, &mid) && mid < (x0 + x1) / 2; wx++)
      ;
    nl_plot_zoom_at (NL_PLOT (plot), wx, 0.5);
    nl_plot_get_x_range (NL_PLOT (plot), &y0, &y1);
    g_assert_cmpfloat_with_epsilon (y1 - y0, (x1 - x0) * 0.5, 1e-9);
    g_assert_cmpfloat (y0, >, x0);
    g_assert_cmpfloat (y1, <, x1);
    nl_test_pump (30);
    nl_plot_pan (NL_PLOT (plot), 100);
    nl_plot_get_x_range (NL_PLOT (plot), &x0, &x1);
    g_assert_cmpfloat (x0, <, y0);  /* content follows the pointer: the view moves left */
    g_assert_cmpfloat_with_epsilon (x1 - x0, y1 - y0, 1e-9);
  }

  /* reset follows new data again */
  nl_plot_set_smoothing (NL_PLOT (plot), 0);
  nl_plot_reset_view (NL_PLOT (plot));
  g_assert_true (nl_plot_get_following (NL_PLOT (plot)));
  nl_test_pump (50);

  /* a live run: the frames after appends fold in only the new points
   * (y inside the current range, x inside the followed range's headroom) */
  for (int frame = 0; frame < 3; frame++)
    {
      guint64 before = nl_plot_series_get_n_folded (train);
      gsize len = nl_plot_series_get_length (train);
      for (int i = 0; i < 40; i++)
        nl_plot_series_append (train, 3001 + frame * 40 + i, 1.0);
      g_assert_true (nl_test_wait_until (folded_more, &(FoldWait) { train, before }, 2000));
      nl_test_pump (50);
      g_assert_cmpuint (nl_plot_series_get_n_folded (train) - before, ==, 40);
      g_assert_cmpuint (nl_plot_series_get_length (train), ==, len + 40);
    }
  nl_plot_series_append (val, 5000, 0.5);
  g_assert_true (nl_test_wait_until (range_reaches, plot, 2000));
  nl_plot_get_x_range (NL_PLOT (plot), &x0, &x1);
  g_assert_cmpfloat (x0, <=, 0);

  nl_plot_remove_series (NL_PLOT (plot), train);
  g_assert_cmpuint (nl_plot_get_n_series (NL_PLOT (plot)), ==, 1);
  nl_plot_clear (NL_PLOT (plot));
  g_assert_cmpuint (nl_plot_get_n_series (NL_PLOT (plot)), ==, 0);
  gtk_window_destroy (win);
  g_object_unref (plot);
}

static void
test_hover (void)
{
  GtkWidget *plot = nl_plot_new ();
  g_autoptr (NlPlotSeries) a = nl_plot_series_new ("a");
  g_autoptr (NlPlotSeries) b = nl_plot_series_new ("b");
  GtkWindow *win;
  gsize k;

  g_object_ref_sink (plot);
  for (int i = 0; i < 500; i++)
    {
      nl_plot_series_append (a, i * 0.37, sin (i * 0.1) + 0.1 * i);
      nl_plot_series_append (b, i * 3.1, 1.0 / (i + 1));
    }
  nl_plot_add_series (NL_PLOT (plot), a);
  nl_plot_add_series (NL_PLOT (plot), b);
  nl_plot_set_smoothing (NL_PLOT (plot), 0.5);
  win = nl_test_show_in_window (plot, 700, 400);
  nl_test_pump (30);

  g_assert_false (nl_plot_get_hover_index (NL_PLOT (plot), 0, &k));
  for (double wx = 120; wx < 650; wx += 37)
    {
      double at;
      g_autofree char *text = NULL;
      nl_plot_hover (NL_PLOT (plot), wx, 200);
      g_assert_true (nl_plot_x_at (NL_PLOT (plot), wx, &at));
      for (guint i = 0; i < 2; i++)
        {
          NlPlotSeries *s = i == 0 ? a : b;
          gsize best = 0, n = nl_plot_series_get_length (s);
          double bx, px, py;
          for (gsize j = 1; j < n; j++)
            {
              nl_plot_series_get_point (s, j, &px, NULL);
              nl_plot_series_get_point (s, best, &bx, NULL);
              if (fabs (px - at) < fabs (bx - at))
                best = j;
            }
          g_assert_true (nl_plot_get_hover_index (NL_PLOT (plot), i, &k));
          g_assert_cmpuint (k, ==, best);
          /* the read-out names the exact y */
          nl_plot_series_get_point (s, k, NULL, &py);
          text = (g_free (text), nl_plot_get_hover_text (NL_PLOT (plot)));
          g_assert_nonnull (text);
          {
            char *line = strstr (text, i == 0 ? "\na: " : "\nb: ");
            char *ypos;
            g_assert_nonnull (line);
            ypos = strstr (line, "y = ");
            g_assert_nonnull (ypos);
            g_assert_true (g_strtod (ypos + 4, NULL) == py);
            g_assert_nonnull (strstr (line, "smoothed"));
          }
        }
    }
  nl_test_pump (30);
  g_assert_cmpfloat (nl_test_drawn_fraction (plot), >, 0.02);
  nl_plot_hover_end (NL_PLOT (plot));
  g_assert_false (nl_plot_get_hover_index (NL_PLOT (plot), 0, &k));
  g_assert_null (nl_plot_get_hover_text (NL_PLOT (plot)));
  gtk_window_destroy (win);
  g_object_unref (plot);
}

static guint32
png_pixel (const char *path, int px, int py)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GdkTexture) tex = gdk_texture_new_from_filename (path, &error);
  int w;
  guint32 *buf, v;
  g_assert_no_error (error);
  w = gdk_texture_get_width (tex);
  buf = g_new (guint32, (gsize) w * gdk_texture_get_height (tex));
  gdk_texture_download (tex, (guchar *) buf, (gsize) w * 4);
  v = buf[py * w + px];
  g_free (buf);
  return v;
}

static double
brightness (guint32 argb)
{
  return (((argb >> 16) & 0xff) + ((argb >> 8) & 0xff) + (argb & 0xff)) / (3.0 * 255);
}

static void
test_exports (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("nl-plot-XXXXXX", &error);
  g_autofree char *png = g_build_filename (dir, "plot.png", NULL);
  g_autofree char *svg = g_build_filename (dir, "plot.svg", NULL);
  g_autofree char *csv = g_build_filename (dir, "points.csv", NULL);
  g_autofree char *bad = g_build_filename (dir, "missing", "plot.png", NULL);
  GtkWidget *plot = nl_plot_new ();
  g_autoptr (NlPlotSeries) a = nl_plot_series_new ("train");
  g_autoptr (NlPlotSeries) b = nl_plot_series_new ("val, \"top-1\"");
  g_autofree char *contents = NULL;
  g_auto (GStrv) lines = NULL;
  const double ax[] = { 0, 1, 2, 3.5 }, ay[] = { 0.1, 1.0 / 3.0, NAN, 1e-300 };
  const double bx[] = { 10, 20 }, by[] = { -2.5e10, 0.7 };

  g_assert_no_error (error);
  g_object_ref_sink (plot);
  nl_plot_series_append_many (a, ax, ay, 4);
  nl_plot_series_append_many (b, bx, by, 2);
  nl_plot_add_series (NL_PLOT (plot), a);
  nl_plot_add_series (NL_PLOT (plot), b);
  nl_plot_set_title (NL_PLOT (plot), "Export");

  g_assert_true (nl_plot_export_png (NL_PLOT (plot), png, 640, 360, &error));
  g_assert_no_error (error);
  {
    g_autoptr (GdkTexture) tex = gdk_texture_new_from_filename (png, &error);
    g_assert_no_error (error);
    g_assert_cmpint (gdk_texture_get_width (tex), ==, 640);
    g_assert_cmpint (gdk_texture_get_height (tex), ==, 360);
  }
  g_assert_false (nl_plot_export_png (NL_PLOT (plot), bad, 100, 100, &error));
  g_assert_nonnull (error);
  g_assert_nonnull (strstr (error->message, bad));
  g_clear_error (&error);
  g_assert_false (nl_plot_export_png (NL_PLOT (plot), png, 0, 100, &error));
  g_clear_error (&error);

  g_assert_true (nl_plot_export_svg (NL_PLOT (plot), svg, 500, 300, &error));
  g_assert_no_error (error);
  g_assert_true (g_file_get_contents (svg, &contents, NULL, NULL));
  g_assert_true (g_str_has_prefix (contents, "<?xml"));
  g_assert_nonnull (strstr (contents, "<svg"));
  g_assert_nonnull (strstr (contents, "500"));
  g_clear_pointer (&contents, g_free);

  g_assert_true (nl_plot_export_csv (NL_PLOT (plot), csv, &error));
  g_assert_no_error (error);
  g_assert_true (g_file_get_contents (csv, &contents, NULL, NULL));
  g_assert_true (g_str_has_suffix (contents, "\n"));
  lines = g_strsplit (contents, "\n", -1);
  g_assert_cmpuint (g_strv_length (lines), ==, 1 + 6 + 1); /* header, 6 points, "" after the last \n */
  g_assert_cmpstr (lines[0], ==, "series,x,y");
  for (int i = 0; i < 6; i++)
    {
      const char *line = lines[1 + i];
      const char *label = i < 4 ? "train," : "\"val, \"\"top-1\"\"\",";
      double x = i < 4 ? ax[i] : bx[i - 4], y = i < 4 ? ay[i] : by[i - 4];
      char *end;
      double rx, ry;
      g_assert_true (g_str_has_prefix (line, label));
      rx = g_ascii_strtod (line + strlen (label), &end);
      g_assert_true (*end == ',');
      ry = g_ascii_strtod (end + 1, &end);
      g_assert_true (*end == '\0');
      g_assert_true (rx == x);
      g_assert_true (ry == y || (isnan (ry) && isnan (y)));
    }

  /* light and dark: the export takes its colours from the widget's style */
  {
    AdwStyleManager *sm = adw_style_manager_get_default ();
    GtkWindow *win = nl_test_show_in_window (plot, 400, 300);
    adw_style_manager_set_color_scheme (sm, ADW_COLOR_SCHEME_FORCE_LIGHT);
    nl_test_pump (50);
    g_assert_true (nl_plot_export_png (NL_PLOT (plot), png, 300, 200, &error));
    g_assert_cmpfloat (brightness (png_pixel (png, 1, 1)), >, 0.8);
    adw_style_manager_set_color_scheme (sm, ADW_COLOR_SCHEME_FORCE_DARK);
    nl_test_pump (50);
    g_assert_true (nl_plot_export_png (NL_PLOT (plot), png, 300, 200, &error));
    g_assert_cmpfloat (brightness (png_pixel (png, 1, 1)), <, 0.3);
    g_assert_cmpfloat (nl_test_drawn_fraction (plot), >, 0.01);
    adw_style_manager_set_color_scheme (sm, ADW_COLOR_SCHEME_DEFAULT);
    gtk_window_destroy (win);
  }
  g_object_unref (plot);
  nl_test_remove_tree (dir);
}

int
main (int argc, char **argv)
{
  nl_test_gui_init (&argc, &argv);
  g_test_add_func ("/plot/reduce/brute-force", test_reduce_brute_force);
  g_test_add_func ("/plot/reduce/incremental", test_reduce_incremental);
  g_test_add_func ("/plot/smoothing", test_smoothing);
  g_test_add_func ("/plot/changed-coalesced", test_changed_coalesced);
  g_test_add_func ("/plot/nearest", test_nearest);
  g_test_add_func ("/plot/widget", test_widget);
  g_test_add_func ("/plot/hover", test_hover);
  g_test_add_func ("/plot/exports", test_exports);
  return g_test_run ();
}
