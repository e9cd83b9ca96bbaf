/* nl-run-monitor.h — what a stored run records besides its curves, on the
 * training thread between steps:
 * - system metrics every few seconds (and after the first step and at the
 *   end, so that every run has some): system/cpu_percent (this process,
 *   100 per busy core), system/rss_mb, system/input_wait_ms (the loop's
 *   mean wait for a batch over the interval) and, on a GPU with NVML,
 *   system/gpu_util_percent and system/gpu_mem_mb (the device's memory in
 *   use, every process's);
 * - profile windows asked of its NlProfiler: the steps are traced
 *   (nl-trace.h) and, when the window ends, profile/<node>/ms (mean
 *   forward + backward ms per step, device time on a GPU) is written and
 *   the trace file too where one was asked for.
 * Every row is split "train" at the run's update count. */
#pragma once

#include "engine/session/nl-profiler.h"
#include "engine/train/nl-trainer.h"
#include "projects/nl-project.h"

G_BEGIN_DECLS

typedef struct NlRunMonitor NlRunMonitor;

/* Seconds between system samples unless $NETLOOM_SYSTEM_STATS_SECONDS says. */
#define NL_RUN_MONITOR_SECONDS 2.0

/* profiler may be NULL (no profiling), w too (no metrics: a trace only); log (may be NULL) gets a line when a
 * trace was written or could not be. All borrowed. */
NlRunMonitor *nl_run_monitor_new (NlTrainer *t, NlMetricWriter *w, gint64 run, NlProfiler *profiler,
                                  void (*log) (gpointer user, const char *line), gpointer user);
/* Before the first step (step: updates done so far) and after each step.
 * FALSE with the error of an op that failed while a window was closed. */
gboolean nl_run_monitor_step (NlRunMonitor *m, gint64 step, int epoch, GError **error);
/* The run's end (whatever way): the last sample and an open window closed. */
gboolean nl_run_monitor_finish (NlRunMonitor *m, gint64 step, int epoch, GError **error);
void nl_run_monitor_free (NlRunMonitor *m);

/* profile/<node>/ms of a trace's op events over n_steps steps: nodes[i]
 * (interned) and ms[i], in the order nodes first appear; device events
 * stand in for the host's where there are any. Returns the count. */
int nl_run_monitor_node_ms (NlTrace *trace, gint64 n_steps, const char ***nodes, double **ms);

G_END_DECLS
