/* bench-gui-training.c — training from the Training page with the window
 * shown: how smooth the GUI stays (main-loop frame work and the gaps
 * between frames) and how fast it trains, compared with netloom-cli on the
 * same network, data and settings.
 *
 *   xvfb-run -a -s "-screen 0 1920x1200x24" env GSK_RENDERER=cairo \
 *     GSETTINGS_BACKEND=memory build/bench/bench-gui-training \
 *     --network mlp --epochs 1 --cli build/app/netloom-cli
 *
 * Run from the source tree (the CLI reads data/networks/NAME.json). Prints
 * one JSON line per side and one with the ratio. Frame work is the time
 * from a frame's "before-paint" to its "after-paint" (layout, snapshot,
 * render); an interval is the time between two frames' ticks, which the
 * frame clock paces at 60 Hz: the time beyond 16.7 ms is stall time (the
 * main loop was busy or waited for a core), and an interval over 33.3 ms
 * is a missed frame. */
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "ui/training/nl-training-page.h"

typedef struct {
  GArray *work, *cpu, *intervals;   /* ms */
  gint64 paint_start, last_tick;
  double cpu_start;
  gboolean measuring;
} Frames;

/* CPU time of the calling (main) thread, in ms: with wall time it tells
 * work from waiting for a core the training threads hold. */
static double
thread_cpu_ms (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void
before_paint (GdkFrameClock *clock, Frames *f)
{
  f->paint_start = g_get_monotonic_time ();
  f->cpu_start = thread_cpu_ms ();
}

static void
after_paint (GdkFrameClock *clock, Frames *f)
{
  if (f->measuring && f->paint_start)
    {
      double ms = (g_get_monotonic_time () - f->paint_start) / 1000.0, cpu = thread_cpu_ms () - f->cpu_start;
      g_array_append_val (f->work, ms);
      g_array_append_val (f->cpu, cpu);
    }
}

static gboolean
tick (GtkWidget *widget, GdkFrameClock *clock, gpointer data)
{
  Frames *f = data;
  gint64 now = g_get_monotonic_time ();
  if (f->measuring && f->last_tick)
    {
      double ms = (now - f->last_tick) / 1000.0;
      g_array_append_val (f->intervals, ms);
    }
  f->last_tick = f->measuring ? now : 0;
  return G_SOURCE_CONTINUE;
}

/* Every thread but the caller's at nice N (an experiment: what the GUI
 * gains when the training threads yield to it). */
static void
renice_others (int n)
{
  pid_t self = (pid_t) syscall (SYS_gettid);
  g_autoptr (GDir) dir = g_dir_open ("/proc/self/task", 0, NULL);
  const char *name;
  while (dir && (name = g_dir_read_name (dir)))
    {
      pid_t tid = (pid_t) atoi (name);
      if (tid != self)
        setpriority (PRIO_PROCESS, (id_t) tid, n);
    }
}

static int
cmp_double (gconstpointer a, gconstpointer b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return x < y ? -1 : x > y;
}

static double
percentile (GArray *a, double p)
{
  if (a->len == 0)
    return NAN;
  g_array_sort (a, cmp_double);
  return g_array_index (a, double, MIN (a->len - 1, (guint) floor (p * (a->len - 1) + 0.5)));
}

static void
pump (void)
{
  while (g_main_context_pending (NULL))
    g_main_context_iteration (NULL, FALSE);
  g_main_context_iteration (NULL, TRUE);
}

static void
select_item (NlTrainingPage *page, const char *field, const char *item)
{
  AdwComboRow *row = ADW_COMBO_ROW (nl_training_page_get_form_widget (page, field));
  GListModel *m = adw_combo_row_get_model (row);
  for (guint i = 0; i < g_list_model_get_n_items (m); i++)
    {
      g_autoptr (GtkStringObject) o = g_list_model_get_item (m, i);
      if (!strcmp (gtk_string_object_get_string (o), item))
        {
          adw_combo_row_set_selected (row, i);
          return;
        }
    }
  g_error ("%s has no item '%s'", field, item);
}

/* The last epoch's images/s of the CLI's --json output. The CLI stores its
 * run in the same project, as the GUI does (metrics, checkpoints): the same
 * run, with and without the window. */
static double
cli_images_per_s (const char *cli, const char *project, const char *network, int epochs, int threads)
{
  g_autofree char *ep = g_strdup_printf ("%d", epochs), *th = g_strdup_printf ("%d", threads);
  /* the sample project's fashion-mnist pipeline and the form's defaults */
  const char *argv[] = { cli, "train", "--project", project, "--network", network, "--dataset", "fashion-mnist",
                         "--epochs", ep,
                         "--batch-size", "128", "--workers", "2", "--augment", "normalize:0.2860:0.3530",
                         "--optimizer", "sgd", "--lr", "0.1", "--threads", th, "--json", NULL };
  g_autofree char *out = NULL;
  g_autoptr (GError) error = NULL;
  g_auto (GStrv) lines = NULL;
  int status = 0;
  double ips = NAN;

  if (!g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL, &out, NULL, &status, &error)
      || !g_spawn_check_wait_status (status, &error))
    {
      fprintf (stderr, "bench-gui-training: %s: %s\n", cli, error->message);
      return NAN;
    }
  lines = g_strsplit (out, "\n", -1);
  for (guint i = 0; lines[i]; i++)
    {
      g_autoptr (JsonParser) parser = json_parser_new ();
      if (lines[i][0] == '{' && json_parser_load_from_data (parser, lines[i], -1, NULL))
        ips = json_object_get_double_member_with_default (json_node_get_object (json_parser_get_root (parser)),
                                                          "images_per_s", ips);
    }
  return ips;
}

int
main (int argc, char **argv)
{
  g_autofree char *network = g_strdup ("mlp"), *cli = NULL;
  int epochs = 1, threads = 0, nice_workers = 0;
  gboolean reniced = FALSE, hidden = FALSE;
  GOptionEntry entries[] = {
    { "network", 'n', 0, G_OPTION_ARG_STRING, &network, "A network of the sample project (default mlp)", "NAME" },
    { "epochs", 'e', 0, G_OPTION_ARG_INT, &epochs, "Epochs (default 1)", "N" },
    { "threads", 't', 0, G_OPTION_ARG_INT, &threads, "Threads (default 0: all cores)", "T" },
    { "cli", 0, 0, G_OPTION_ARG_FILENAME, &cli, "netloom-cli to compare with", "PATH" },
    { "hidden", 0, 0, G_OPTION_ARG_NONE, &hidden, "Experiment: never show the window (nothing is drawn; the "
      "page still drains the session's events)", NULL },
    { "nice-workers", 0, 0, G_OPTION_ARG_INT, &nice_workers, "Experiment: once training runs, put every other "
      "thread at this nice value (0: leave them)", "N" },
    { NULL }
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new ("- GUI smoothness and throughput while training");
  g_autoptr (GError) error = NULL;
  g_autofree char *dir = NULL, *path = NULL;
  g_autoptr (NlWorkspace) ws = NULL;
  g_autoptr (GArray) rows = NULL;
  NlTrainingPage *page;
  GtkWindow *win;
  GdkFrameClock *clock;
  Frames f = { 0 };
  gint64 t0, run;
  double gui_ips = NAN, cli_ips = NAN, seconds, stalls = 0, stall_ms = 0;

  g_option_context_add_main_entries (ctx, entries, NULL);
  if (!g_option_context_parse (ctx, &argc, &argv, &error))
    {
      fprintf (stderr, "bench-gui-training: %s\n", error->message);
      return 2;
    }
  if (!gtk_init_check ())
    {
      fprintf (stderr, "bench-gui-training: no display (run under xvfb-run -a)\n");
      return 77;
    }
  adw_init ();

  dir = g_dir_make_tmp ("netloom-bench-XXXXXX", &error);
  path = g_build_filename (dir, "bench.netloom", NULL);
  if (!dir || !nl_project_create_sample (path, &error))
    g_error ("%s", error->message);
  {
    NlProject *p = nl_project_open (path, FALSE, &error);
    if (!p)
      g_error ("%s", error->message);
    ws = nl_workspace_new (p);
  }
  page = g_object_new (NL_TYPE_TRAINING_PAGE, NULL);
  win = GTK_WINDOW (gtk_window_new ());
  gtk_window_set_default_size (win, 1400, 900);
  gtk_window_set_child (win, GTK_WIDGET (page));
  if (!hidden)
    gtk_window_present (win);
  nl_training_page_set_workspace (page, ws);
  while (nl_training_page_is_loading (page) || nl_workspace_is_busy (ws)
         || (!hidden && !gtk_widget_get_mapped (GTK_WIDGET (page))))
    pump ();
  select_item (page, "network", network);
  select_item (page, "pipeline", "fashion-mnist");
  gtk_spin_button_set_value (GTK_SPIN_BUTTON (nl_training_page_get_form_widget (page, "epochs")), epochs);
  gtk_spin_button_set_value (GTK_SPIN_BUTTON (nl_training_page_get_form_widget (page, "threads")), threads);
  while (nl_workspace_is_busy (ws))
    pump ();

  f.work = g_array_new (FALSE, FALSE, sizeof (double));
  f.cpu = g_array_new (FALSE, FALSE, sizeof (double));
  f.intervals = g_array_new (FALSE, FALSE, sizeof (double));
  if (!hidden)
    {
      clock = gtk_widget_get_frame_clock (GTK_WIDGET (win));
      g_signal_connect (clock, "before-paint", G_CALLBACK (before_paint), &f);
      g_signal_connect (clock, "after-paint", G_CALLBACK (after_paint), &f);
      gtk_widget_add_tick_callback (GTK_WIDGET (win), tick, &f, NULL);
    }

  t0 = g_get_monotonic_time ();
  if (!gtk_widget_activate_action (GTK_WIDGET (page), "training.start", NULL))
    g_error ("training.start is missing");
  f.measuring = TRUE;
  for (;;)
    {
      NlTrainingState s = nl_training_page_get_state (page);
      if (s == NL_TRAINING_FINISHED || s == NL_TRAINING_FAILED || s == NL_TRAINING_STOPPED)
        break;
      /* the loader and OpenMP threads exist once the first points are in */
      if (nice_workers && !reniced
          && nl_plot_series_get_length (nl_plot_get_series (nl_training_page_get_plot (page, "loss"), 0)) > 0)
        {
          renice_others (nice_workers);
          reniced = TRUE;
        }
      g_main_context_iteration (NULL, TRUE);
    }
  f.measuring = FALSE;
  seconds = (g_get_monotonic_time () - t0) / 1e6;
  if (nl_training_page_get_state (page) != NL_TRAINING_FINISHED)
    g_error ("the run did not finish: %s", nl_training_page_get_error (page));
  run = nl_training_page_get_run (page);
  rows = nl_project_get_metrics (nl_workspace_get_project (ws), run, "images_per_s", 0, NULL, &error);
  if (rows && rows->len)
    gui_ips = g_array_index (rows, NlMetricRow, rows->len - 1).value;
  for (guint i = 0; i < f.intervals->len; i++)
    {
      double ms = g_array_index (f.intervals, double, i);
      if (ms > 1000.0 / 60)
        stall_ms += ms - 1000.0 / 60;
      if (ms > 2 * 1000.0 / 60)
        stalls++;  /* at least one frame missed */
    }
  printf ("{\"bench\":\"gui-training\",\"network\":\"%s\",\"nice_workers\":%d,\"epochs\":%d,\"seconds\":%.2f,\"images_per_s\":%.1f,"
          "\"frames\":%u,\"frame_work_p50_ms\":%.2f,\"frame_work_p99_ms\":%.2f,\"frame_work_max_ms\":%.2f,"
          "\"frame_cpu_p50_ms\":%.2f,\"frame_cpu_p99_ms\":%.2f,"
          "\"interval_p50_ms\":%.2f,\"interval_p99_ms\":%.2f,\"interval_max_ms\":%.2f,\"missed_frames\":%.0f,"
          "\"stall_excess_ms\":%.1f}\n",
          network, nice_workers, epochs, seconds, gui_ips, f.work->len, percentile (f.work, 0.5), percentile (f.work, 0.99),
          percentile (f.work, 1), percentile (f.cpu, 0.5), percentile (f.cpu, 0.99), percentile (f.intervals, 0.5), percentile (f.intervals, 0.99),
          percentile (f.intervals, 1), stalls, stall_ms);
  fflush (stdout);
  gtk_window_destroy (win);
  while (g_main_context_pending (NULL))
    g_main_context_iteration (NULL, FALSE);

  if (cli)
    {
      cli_ips = cli_images_per_s (cli, path, network, epochs, threads);
      printf ("{\"bench\":\"cli-training\",\"network\":\"%s\",\"epochs\":%d,\"images_per_s\":%.1f}\n", network, epochs,
              cli_ips);
      printf ("{\"bench\":\"gui-vs-cli\",\"throughput_ratio\":%.3f}\n", gui_ips / cli_ips);
    }
  g_array_unref (f.work);
  g_array_unref (f.cpu);
  g_array_unref (f.intervals);
  g_clear_object (&ws);
  g_unlink (path);
  {
    g_autofree char *wal = g_strconcat (path, "-wal", NULL), *shm = g_strconcat (path, "-shm", NULL);
    g_unlink (wal);
    g_unlink (shm);
  }
  g_rmdir (dir);
  return 0;
}
