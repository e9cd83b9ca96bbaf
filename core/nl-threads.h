/* nl-threads.h — one thread count for the process: every CPU kernel
 * threads with OpenMP (oneDNN's sgemm included), one pool. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Grain of work below which OpenMP is not worth waking. */
#define NL_PAR_MIN 32768

/* Number of threads plain-C kernels may use. */
int nl_threads_get (void);
void nl_threads_set (int n); /* OpenMP, which oneDNN's sgemm uses too; <= 0: all cores */

G_END_DECLS
