/* nl-profiler.c — see nl-profiler.h. */
#include "engine/session/nl-profiler.h"

struct NlProfiler {
  GMutex lock;
  gboolean pending;
  int n_steps;
  char *path;
};

NlProfiler *
nl_profiler_new (void)
{
  NlProfiler *p = g_new0 (NlProfiler, 1);
  g_mutex_init (&p->lock);
  return p;
}

void
nl_profiler_free (NlProfiler *p)
{
  if (!p)
    return;
  g_free (p->path);
  g_mutex_clear (&p->lock);
  g_free (p);
}

void
nl_profiler_request (NlProfiler *p, int n_steps, const char *path)
{
  g_mutex_lock (&p->lock);
  p->pending = TRUE;
  p->n_steps = n_steps;
  g_free (p->path);
  p->path = g_strdup (path);
  g_mutex_unlock (&p->lock);
}

gboolean
nl_profiler_take (NlProfiler *p, int *n_steps, char **path)
{
  gboolean pending;
  g_mutex_lock (&p->lock);
  pending = p->pending;
  *n_steps = p->n_steps;
  *path = pending ? g_steal_pointer (&p->path) : NULL;
  p->pending = FALSE;
  g_mutex_unlock (&p->lock);
  return pending;
}
