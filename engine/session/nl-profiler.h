/* nl-profiler.h — requests to profile a run's next steps (the GUI's
 * Profile toggle, `netloom-cli train --profile`), taken from any thread;
 * the run's monitor (nl-run-monitor.h) opens the window at the next step
 * on the training thread and, when it ends, writes profile/<node>/ms and
 * the trace file. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct NlProfiler NlProfiler;

NlProfiler *nl_profiler_new (void);
void nl_profiler_free (NlProfiler *p);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (NlProfiler, nl_profiler_free)

/* Profile the next n_steps steps (<= 0: every step to the run's end);
 * the trace goes to path when not NULL. Replaces a request not begun yet;
 * one made while a window is open begins when it ends. Any thread. */
void nl_profiler_request (NlProfiler *p, int n_steps, const char *path);
/* The pending request, taken (training thread): FALSE when none. *path
 * is a new string or NULL. */
gboolean nl_profiler_take (NlProfiler *p, int *n_steps, char **path);

G_END_DECLS
