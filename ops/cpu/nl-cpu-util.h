/* nl-cpu-util.h — small helpers shared by CPU kernels. */
#pragma once

#include <dnnl.h>
#include <math.h>
#include <string.h>

#include "ops/nl-op.h"

G_BEGIN_DECLS

/* One oneDNN CPU engine for the process; one stream per calling thread
 * (the scheduler may run kernels on several threads). */
dnnl_engine_t nl_dnnl_engine (void);
dnnl_stream_t nl_dnnl_stream (void);
/* Turn a oneDNN status into a GError naming what failed; TRUE on success. */
gboolean nl_dnnl_check (dnnl_status_t st, const char *what, GError **error);

/* Counter-based random numbers: the same (seed, stream, index) always gives
 * the same value, whatever the thread count. Uniform in [0, 1). */
float nl_rand_uniform (guint64 seed, guint64 stream, guint64 index);
/* splitmix64's finaliser: a bijective, well-mixed hash of 64 bits. */
guint64 nl_mix64 (guint64 z);

/* Scratch memory cached on a node: grows, never shrinks; freed with g_free. */
void *nl_scratch (void **slot, size_t *capacity, size_t nbytes);

static inline int64_t
nl_numel (const NlTensor *t)
{
  return nl_tensor_numel (t);
}

/* Grain of work below which OpenMP is not worth waking. */
#define NL_PAR_MIN 32768

G_END_DECLS
