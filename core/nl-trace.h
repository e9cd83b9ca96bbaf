/* nl-trace.h — a profile of training as timed spans (MXNet's profiler):
 * each op's forward and backward on the thread that ran it, the loader's
 * batches, the wait for them, the all-reduce buckets and, on a GPU, each
 * op's device time. Written as a Chrome trace-event file ("X" complete
 * events plus thread names), which Perfetto and chrome://tracing open and
 * `netloom-cli profile` sums up (nl-trace-table.h).
 *
 * Adding is thread-safe (one mutex: a trace is only on while profiling,
 * and its spans are tens of µs apart at the least). Reading the events and
 * writing the file must wait until nothing adds any more. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef enum {
  NL_TRACE_PASS_NONE,
  NL_TRACE_PASS_FORWARD,
  NL_TRACE_PASS_BACKWARD,
} NlTracePass;

/* The categories the engine writes ("cat" in the file). */
#define NL_TRACE_CAT_OP "op"               /* an op on the host: its kernel call (enqueue time on a GPU) */
#define NL_TRACE_CAT_DEVICE "device"       /* an op's time on the device, from its events */
#define NL_TRACE_CAT_LOADER "loader"       /* a loader thread filling a batch */
#define NL_TRACE_CAT_INPUT "input"         /* the training loop waiting for the next batch */
#define NL_TRACE_CAT_STEP "step"           /* one training step: forward, backward, update */
#define NL_TRACE_CAT_UPDATE "update"       /* the optimizer's update of one weight tensor */
#define NL_TRACE_CAT_ALLREDUCE "allreduce" /* one gradient bucket summed over the group */

typedef struct {
  const char *name, *cat;  /* interned */
  const char *node, *op;   /* op and device events: the node's id and op type (interned); else NULL */
  NlTracePass pass;
  const char *arg_key;     /* "step", "batch", "bucket" (static), or NULL */
  gint64 arg;
  gint64 ts, dur;          /* µs; ts from the trace's start */
  int tid;                 /* the thread's number in this trace; device events: their own track */
} NlTraceEvent;

typedef struct NlTrace NlTrace;

NlTrace *nl_trace_new (void);
void nl_trace_free (NlTrace *t);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (NlTrace, nl_trace_free)

/* A span [t0, t1] (g_get_monotonic_time µs) on the calling thread. name
 * and cat are interned; arg_key static or NULL. */
void nl_trace_add (NlTrace *t, const char *cat, const char *name, const char *arg_key, gint64 arg, gint64 t0,
                   gint64 t1);
/* An op's forward or backward at step `step`: on the calling thread, or
 * (device) on the device's track. */
void nl_trace_add_op (NlTrace *t, const char *node, const char *op, NlTracePass pass, gboolean device, gint64 step,
                      gint64 t0, gint64 t1);

/* The events so far, in the order they were added. */
const NlTraceEvent *nl_trace_events (NlTrace *t, guint *n);
/* Events not kept because the trace was full (NL_TRACE_MAX_EVENTS). */
guint64 nl_trace_dropped (NlTrace *t);
/* about 80 MB kept and 170 MB of JSON: some 80 epochs of LeNet on MNIST */
#define NL_TRACE_MAX_EVENTS (1u << 20)

/* The Chrome trace-event JSON; then the same written atomically to path. */
char *nl_trace_to_json (NlTrace *t, gsize *length);
gboolean nl_trace_write (NlTrace *t, const char *path, GError **error);

G_END_DECLS
