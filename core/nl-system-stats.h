/* nl-system-stats.h — what the machine does while training: this
 * process's CPU time and resident memory (Linux's /proc/self), and a GPU's
 * utilisation and memory through NVML, which is opened at run time
 * (libnvidia-ml.so.1, as the CUDA module is), so a build or a machine
 * without it simply has no GPU figures. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* CPU time used by the process (user + system, in clock ticks) at a
 * moment (monotonic µs). */
typedef struct {
  guint64 ticks;
  gint64 wall_us;
} NlCpuSample;

/* The ticks from a /proc/<pid>/stat line (utime and stime, the 14th and
 * 15th fields; the command name in parentheses may hold spaces and ')'). */
gboolean nl_cpu_sample_parse (const char *stat_line, NlCpuSample *out);
/* This process, now. FALSE where /proc/self/stat cannot be read. */
gboolean nl_cpu_sample_now (NlCpuSample *out);
/* CPU percent between two samples, 100 per busy core (top's convention:
 * 0 to 100 x cores); ticks_per_s is sysconf (_SC_CLK_TCK). 0 when no time passed. */
double nl_cpu_percent (const NlCpuSample *a, const NlCpuSample *b, long ticks_per_s);
/* Resident memory of this process in MiB (/proc/self/statm); -1 unknown. */
double nl_rss_mb (void);

/* GPU index's utilisation (percent of the last sample period a kernel
 * ran) and memory in use on the device (MiB, every process's). FALSE
 * where NVML is not there, fails, or has no such GPU. */
gboolean nl_gpu_stats (int index, double *util_percent, double *mem_mb);

G_END_DECLS
