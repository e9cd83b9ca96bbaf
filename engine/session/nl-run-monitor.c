/* nl-run-monitor.c — see nl-run-monitor.h. */
#include "engine/session/nl-run-monitor.h"
#include "core/nl-system-stats.h"

#include <unistd.h>

struct NlRunMonitor {
  NlTrainer *trainer;
  NlMetricWriter *writer;
  gint64 run;
  NlProfiler *profiler;
  void (*log) (gpointer user, const char *line);
  gpointer user;
  /* system metrics: the last sample */
  double interval_s;
  NlCpuSample cpu;
  gboolean have_cpu;
  double wait_s;
  int64_t wait_batches;
  gint64 sampled_step;
  gboolean sampled;        /* once at least */
  int gpu;                 /* the run's GPU, -1: none */
  /* the open profile window */
  NlTrace *trace;
  char *trace_path;
  int window_steps;        /* <= 0: to the end */
  gint64 window_start;     /* updates done when it opened */
};

static void
add (NlRunMonitor *m, gint64 step, int epoch, const char *name, double value)
{
  if (!m->writer)
    return;
  NlMetricPoint pt = { .run = m->run, .step = step, .epoch = epoch, .split = "train", .name = name,
                       .value = value };
  nl_metric_writer_add (m->writer, &pt);
}

NlRunMonitor *
nl_run_monitor_new (NlTrainer *t, NlMetricWriter *w, gint64 run, NlProfiler *profiler,
                    void (*log) (gpointer user, const char *line), gpointer user)
{
  NlRunMonitor *m = g_new0 (NlRunMonitor, 1);
  const char *env = g_getenv ("NETLOOM_SYSTEM_STATS_SECONDS");
  const NlRunConfig *cfg = nl_trainer_get_config (t);
  int epochs;
  m->trainer = t;
  m->writer = w;
  m->run = run;
  m->profiler = profiler;
  m->log = log;
  m->user = user;
  m->interval_s = env && g_ascii_strtod (env, NULL) > 0 ? g_ascii_strtod (env, NULL) : NL_RUN_MONITOR_SECONDS;
  m->have_cpu = nl_cpu_sample_now (&m->cpu);
  nl_trainer_input_wait (t, &m->wait_s, &m->wait_batches);
  nl_trainer_get_position (t, &epochs, &m->sampled_step);
  m->gpu = cfg->device.type == NL_DEVICE_CUDA ? cfg->device.index : -1;
  return m;
}

/* One sample of every system metric over the time since the last. */
static void
sample (NlRunMonitor *m, gint64 step, int epoch)
{
  NlCpuSample now;
  double wait_s, util, mem, rss = nl_rss_mb ();
  int64_t batches;
  if (m->have_cpu && nl_cpu_sample_now (&now))
    {
      add (m, step, epoch, "system/cpu_percent", nl_cpu_percent (&m->cpu, &now, sysconf (_SC_CLK_TCK)));
      m->cpu = now;
    }
  if (rss >= 0)
    add (m, step, epoch, "system/rss_mb", rss);
  nl_trainer_input_wait (m->trainer, &wait_s, &batches);
  if (batches > m->wait_batches)
    add (m, step, epoch, "system/input_wait_ms", 1e3 * (wait_s - m->wait_s) / (double) (batches - m->wait_batches));
  m->wait_s = wait_s;
  m->wait_batches = batches;
  if (m->gpu >= 0 && nl_gpu_stats (m->gpu, &util, &mem))
    {
      add (m, step, epoch, "system/gpu_util_percent", util);
      add (m, step, epoch, "system/gpu_mem_mb", mem);
    }
  m->sampled_step = step;
  m->sampled = TRUE;
}

int
nl_run_monitor_node_ms (NlTrace *trace, gint64 n_steps, const char ***nodes_out, double **ms_out)
{
  guint n;
  const NlTraceEvent *ev = nl_trace_events (trace, &n);
  g_autoptr (GHashTable) index = g_hash_table_new (NULL, NULL);
  GPtrArray *nodes = g_ptr_array_new ();
  GArray *ms = g_array_new (FALSE, TRUE, sizeof (double));
  const char *device = g_intern_static_string (NL_TRACE_CAT_DEVICE);
  const char *cat = g_intern_static_string (NL_TRACE_CAT_OP);
  int count;
  for (guint i = 0; i < n; i++)
    if (ev[i].cat == device)
      cat = device;
  for (guint i = 0; i < n; i++)
    {
      gpointer at;
      if (ev[i].cat != cat)
        continue;
      if (!g_hash_table_lookup_extended (index, ev[i].node, NULL, &at))
        {
          at = GUINT_TO_POINTER (nodes->len);
          g_hash_table_insert (index, (gpointer) ev[i].node, at);
          g_ptr_array_add (nodes, (gpointer) ev[i].node);
          g_array_set_size (ms, nodes->len);
        }
      g_array_index (ms, double, GPOINTER_TO_UINT (at)) += ev[i].dur / 1e3 / MAX (n_steps, 1);
    }
  count = (int) nodes->len;
  *nodes_out = (const char **) g_ptr_array_free (nodes, FALSE);
  *ms_out = (double *) (gpointer) g_array_free (ms, FALSE);
  return count;
}

/* Ends the open window: the ops stop adding, the means go to the metrics
 * and the trace to its file (a file that cannot be written is said, not
 * fatal). */
static gboolean
close_window (NlRunMonitor *m, gint64 step, int epoch, GError **error)
{
  g_autoptr (NlTrace) trace = g_steal_pointer (&m->trace);
  g_autofree char *path = g_steal_pointer (&m->trace_path);
  g_autofree const char **nodes = NULL;
  g_autofree double *ms = NULL;
  g_autoptr (GError) local = NULL;
  int n;
  if (!nl_trainer_set_trace (m->trainer, NULL, error))
    return FALSE;
  n = nl_run_monitor_node_ms (trace, step - m->window_start, &nodes, &ms);
  for (int i = 0; i < n; i++)
    {
      g_autofree char *name = g_strdup_printf ("profile/%s/ms", nodes[i]);
      add (m, step, epoch, g_intern_string (name), ms[i]);
    }
  if (path && m->log)
    {
      g_autofree char *line = nl_trace_write (trace, path, &local)
        ? g_strdup_printf ("profile: steps %" G_GINT64_FORMAT " to %" G_GINT64_FORMAT " traced to %s%s",
                           m->window_start + 1, step, path,
                           nl_trace_dropped (trace) ? " (it was full: the later spans are not in it)" : "")
        : g_strdup_printf ("profile: the trace was not written: %s", local->message);
      m->log (m->user, line);
    }
  return TRUE;
}

gboolean
nl_run_monitor_step (NlRunMonitor *m, gint64 step, int epoch, GError **error)
{
  int n_steps;
  char *path;
  if ((!m->sampled && step > m->sampled_step) || (m->have_cpu && (g_get_monotonic_time () - m->cpu.wall_us) / 1e6 >= m->interval_s))
    sample (m, step, epoch);
  if (m->trace && m->window_steps > 0 && step - m->window_start >= m->window_steps
      && !close_window (m, step, epoch, error))
    return FALSE;
  if (!m->trace && m->profiler && nl_profiler_take (m->profiler, &n_steps, &path))
    {
      m->trace = nl_trace_new ();
      m->trace_path = path;
      m->window_steps = n_steps;
      m->window_start = step;
      return nl_trainer_set_trace (m->trainer, m->trace, error);
    }
  return TRUE;
}

gboolean
nl_run_monitor_finish (NlRunMonitor *m, gint64 step, int epoch, GError **error)
{
  if (step > m->sampled_step)
    sample (m, step, epoch);
  return !m->trace || close_window (m, step, epoch, error);
}

void
nl_run_monitor_free (NlRunMonitor *m)
{
  if (!m)
    return;
  if (m->trace)
    nl_trainer_set_trace (m->trainer, NULL, NULL);
  nl_trace_free (m->trace);
  g_free (m->trace_path);
  g_free (m);
}
