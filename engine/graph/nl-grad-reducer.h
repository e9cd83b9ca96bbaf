/* nl-grad-reducer.h — data parallelism's gradient exchange, as Horovod
 * and PyTorch DDP do it: the weight gradients, in the order backward
 * finishes them, are fused into buckets of a few MB; each bucket is one
 * asynchronous scheduler op that writes its gradients, so it starts as
 * soon as backward has written them and overlaps the rest of backward.
 * The op hands its bucket to one communication thread, which all-reduces
 * the buckets in bucket order (every rank calls the collectives in the
 * same order, whatever order its ops became ready in). Afterwards every
 * rank holds the sum of every rank's gradients. */
#pragma once

#include <glib.h>
#include <stdint.h>

#include "core/nl-backend.h"
#include "core/nl-comm.h"
#include "core/nl-tensor.h"
#include "core/nl-trace.h"
#include "engine/graph/nl-scheduler.h"

G_BEGIN_DECLS

/* Bucket size unless $NETLOOM_BUCKET_MB says otherwise (Horovod's
 * fusion threshold and DDP's bucket_cap_mb are of this order). */
#define NL_GRAD_BUCKET_BYTES (4u << 20)

/* Cuts n gradients of numel[i] floats (in order) into buckets of at most
 * limit_bytes; a gradient larger than the limit is a bucket of its own,
 * an empty one is in none (bucket_of[i] = -1). Returns the bucket count. */
int nl_grad_buckets_plan (const int64_t *numel, int n, size_t limit_bytes, int *bucket_of);

/* What reduces a buffer in place (the backend's all-reduce, or a test's). */
typedef gboolean (*NlGradReduceFn) (gpointer user, float *x, int64_t n, GError **error);

/* One bucket: its n gradients are copied into fusion (on backend b),
 * reduced with one call of fn, and copied back; a bucket of one gradient
 * is reduced in place. */
gboolean nl_grad_bucket_reduce (NlBackend *b, float *fusion, float *const *grads, const int64_t *numel, int n,
                                NlGradReduceFn fn, gpointer user, GError **error);

typedef struct NlGradReducer NlGradReducer;

/* grads[i] (on backend b) in the order backward finishes them; vars[i]
 * the scheduler var that guards each. */
NlGradReducer *nl_grad_reducer_new (NlBackend *b, NlComm *comm, NlTensor *const *grads, NlVar *const *vars, int n,
                                    size_t bucket_bytes, GError **error);
void nl_grad_reducer_free (NlGradReducer *r);
int nl_grad_reducer_n_buckets (const NlGradReducer *r);
/* The bucket gradient i went into (-1: none, it is empty). */
int nl_grad_reducer_bucket_of (const NlGradReducer *r, int i);
/* Pushes bucket k's op on s, right after the backward step that writes
 * the last of its gradients: with an inline scheduler that step has run,
 * and the bucket is reduced while backward goes on. A bucket whose op is
 * skipped (an op writing one of its gradients failed) misses its
 * collective: from then on this reducer makes none, and every later
 * bucket's op fails saying so. */
void nl_grad_reducer_push (NlGradReducer *r, NlScheduler *s, int k);
/* Monotonic µs at which the last bucket of the last push was reduced. */
gint64 nl_grad_reducer_last_done (const NlGradReducer *r);
/* Seconds spent all-reducing (copies included), summed over every push. */
double nl_grad_reducer_busy_seconds (const NlGradReducer *r);
/* Each bucket reduced from now on is a span in trace (NULL: off; r NULL:
 * nothing). Once this returns, the old trace is no longer touched. */
void nl_grad_reducer_set_trace (NlGradReducer *r, NlTrace *trace);

G_END_DECLS
