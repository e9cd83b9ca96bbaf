/* nl-threads.c — the process-wide OpenMP thread count (nl-threads.h). */
#include "core/nl-threads.h"

#include <omp.h>

static int n_threads = 0;

int
nl_threads_get (void)
{
  if (n_threads <= 0)
    n_threads = g_get_num_processors ();
  return n_threads;
}

void
nl_threads_set (int n)
{
  if (n <= 0)
    n = g_get_num_processors ();
  n_threads = n;
  omp_set_num_threads (n);
}
