/* nl-step-graph.h — a training step recorded once by the backend and
 * replayed (CUDA graphs; MXNet 2 did this for static graphs), so the host
 * launches forward, backward, the update and the loss read-back with one
 * call instead of one per kernel. The program's memory plan is static, so
 * every step of one batch size queues the same work on the same addresses.
 *
 * The caller hands each step as a function that queues it (fn) with the
 * step's sample count and a key of the host values baked into what it
 * queues (learning rate, update count, loss scale, random step: whatever
 * the kernels take as arguments, not from device memory). A step runs
 * plainly until `warmup` steps in a row had the same count and key (the
 * first use of a shape does its one-off work then: cuDNN's autotuning,
 * allocations); the next is recorded (graph_begin, fn, graph_end) and
 * launched; later steps with that count and key replay it without calling
 * fn. Any other count (the last partial batch) or key runs plainly; the
 * recorded graph is kept for when they return, and replaced only when
 * another pair completes its warm-up (steps in a row: a partial batch
 * between replays never does). Off (the setting), or with a backend
 * without graph_* members (the CPU): every step runs plainly.
 *
 * A recording that fails (something in fn that cannot be recorded) is
 * reported once as a warning, the step is run plainly, and the graph is
 * off from then on. fn must only queue work (no waits, no host reads of
 * its results) and be safe to call again after a failed recording. */
#pragma once

#include <glib.h>

#include "core/nl-backend.h"
#include "engine/graph/nl-program.h"

G_BEGIN_DECLS

typedef struct NlStepGraph NlStepGraph;

/* Queues one step; FALSE with the error when it cannot. */
typedef gboolean (*NlStepGraphFn) (gpointer user, GError **error);

/* Steps before one is recorded: one to settle shapes and one-off work,
 * one that runs as every later step will. */
#define NL_STEP_GRAPH_WARMUP 2

NlStepGraph *nl_step_graph_new (NlBackend *b, gboolean enabled, int warmup);
/* For a training program: on when its options ask for device graphs
 * (NlCompileOptions.device_graphs, the run's --cuda-graphs) and its
 * backend can record them. */
NlStepGraph *nl_step_graph_new_for_program (NlProgram *p);
void nl_step_graph_free (NlStepGraph *g);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (NlStepGraph, nl_step_graph_free)

/* One step of n samples whose baked host values hash to key. */
gboolean nl_step_graph_run (NlStepGraph *g, int n, guint64 key, NlStepGraphFn fn, gpointer user, GError **error);
/* Whether steps may be recorded at all (on, the backend can, no failure). */
gboolean nl_step_graph_active (const NlStepGraph *g);
/* Steps replayed so far (the recording's first launch included). */
guint64 nl_step_graph_replays (const NlStepGraph *g);

G_END_DECLS
