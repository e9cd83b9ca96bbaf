/* nl-device-timer.h — each op's time on a device with its own clock (a
 * GPU), for the profiler: the host only queues a kernel, so the span the
 * host measures is the launch; the device's own is read from marks (CUDA
 * events) recorded on its queue around the kernel, once the step is done.
 * The spans are placed on the host's clock from the first mark of the
 * step, taken as recorded when it was queued (the device may start later:
 * the spans' lengths are exact, their start is the queue's). Ops on such
 * backends run in push order on one thread (the backend is in_order), which
 * alone touches the timer. */
#pragma once

#include "core/nl-backend.h"
#include "core/nl-trace.h"
#include "engine/graph/nl-graph.h"

G_BEGIN_DECLS

typedef struct NlDeviceTimer NlDeviceTimer;

/* NULL where the backend has no marks (the CPU: the host's spans are the ops'). */
NlDeviceTimer *nl_device_timer_new (NlBackend *b);
void nl_device_timer_free (NlDeviceTimer *t);
/* A mark before an op's kernel (NULL when it could not be had: the op goes untimed). */
void *nl_device_timer_begin (NlDeviceTimer *t);
/* ...and after it: the op's pair, kept until the flush. node and op interned or static. */
void nl_device_timer_end (NlDeviceTimer *t, void *begin, const char *node, const char *op, NlTracePass pass,
                          gint64 step);
/* An op whose kernel call began at t0 (monotonic µs) is done: its host
 * span into trace and, where mark is not NULL, its device pair kept. */
void nl_device_timer_op_done (NlDeviceTimer *t, NlTrace *trace, void *mark, const NlGraphNode *node,
                              gboolean forward, gint64 step, gint64 t0);
/* Once the device has passed every kept mark (after the step's sync):
 * their spans into trace (NULL: dropped), the marks freed. t NULL: nothing. */
void nl_device_timer_flush (NlDeviceTimer *t, NlTrace *trace);

G_END_DECLS
