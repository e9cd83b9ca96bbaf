/* nl-program.h — a compiled graph bound to a model's tensors and to an
 * arena planned once (nl-memory-plan.h): one executable step. */
#pragma once

#include <glib.h>

#include "engine/graph/nl-memory-plan.h"
#include "engine/graph/nl-model.h"
#include "core/nl-comm.h"
#include "core/nl-trace.h"

G_BEGIN_DECLS

typedef struct NlProgram NlProgram;

NlProgram *nl_program_new (NlModel *model, const NlCompileOptions *opts, GError **error);
void nl_program_free (NlProgram *p);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (NlProgram, nl_program_free)

const NlGraph *nl_program_get_graph (NlProgram *p);
/* On a GPU these four are CPU mirrors of the device values: input and
 * label are copied up by forward, pred and loss down by backward (or by an
 * inference forward). */
NlTensor *nl_program_input (NlProgram *p);   /* (batch, sample_shape...) fill before forward */
NlTensor *nl_program_label (NlProgram *p);   /* (batch, label_shape...) */
NlTensor *nl_program_pred (NlProgram *p);    /* the network's output */
NlTensor *nl_program_loss (NlProgram *p);    /* (batch) per-sample loss, NULL without loss */
/* Each sample's length (batch), computed by forward from the input when the
 * Input's `lengths` is "nonzero" (nl-seq-lengths.h); NULL without lengths.
 * A CPU tensor (the mirror on a GPU). */
NlTensor *nl_program_lengths (NlProgram *p);
/* Each phase pushes its steps to the model's scheduler. forward waits for
 * its results only in inference programs (training goes on to backward);
 * backward waits for the loss and every gradient; update does not wait.
 * step feeds random ops (Dropout) together with the model seed. */
gboolean nl_program_forward (NlProgram *p, guint64 step, GError **error);
gboolean nl_program_backward (NlProgram *p, GError **error);
/* One optimizer update of every weight: lr this step's rate, t counts updates from 1.
 * cfg must stay valid until the updates ran (nl_model_sync). */
gboolean nl_program_update (NlProgram *p, const NlOptimConfig *cfg, float lr, int64_t t, GError **error);
/* Dynamic loss scaling: the loss gradient becomes scale / batch (the
 * per-sample losses themselves are unscaled) and updates divide it out. */
gboolean nl_program_set_loss_scale (NlProgram *p, float scale, GError **error);
/* After backward: whether every weight gradient is finite (waits). */
gboolean nl_program_grads_finite (NlProgram *p, gboolean *finite, GError **error);
/* Gradient of weight slot k of network node i in this program (after
 * backward); a device tensor on a GPU. */
NlTensor *nl_program_weight_grad (NlProgram *p, int node, int k);
/* Data parallelism: after backward every weight gradient holds the sum
 * over comm's processes (fused buckets all-reduced as backward writes
 * them; nl-grad-reducer.h). A training program; a group of one changes
 * nothing. */
gboolean nl_program_set_comm (NlProgram *p, NlComm *comm, GError **error);
/* The head gradient averages over this many samples (0: the program's
 * batch). Under data parallelism: the global batch, so that the summed
 * gradients are the global batch's mean, whatever each rank's share. */
gboolean nl_program_set_grad_batch (NlProgram *p, int samples, GError **error);
/* Seconds spent all-reducing in total, and those backward waited for
 * after its own work was done (the part not hidden behind it). */
void nl_program_comm_seconds (NlProgram *p, double *busy, double *exposed);
/* Profiling: every forward and backward step pushed from now on, and the
 * all-reduce buckets, go into trace (borrowed; NULL: off). The caller
 * keeps it alive until the ops pushed with it are done. */
void nl_program_set_trace (NlProgram *p, NlTrace *trace);
/* Value v of the graph (nl_program_get_graph): a view into the arena, a
 * device tensor on a GPU. What it holds after a step depends on the memory
 * plan: only a naive plan (naive_memory) keeps every value. Explain
 * programs write their head gradient here (g->head_grad_value). */
NlTensor *nl_program_value (NlProgram *p, int v);
/* Bytes of activations, gradients and saved tensors this program holds. */
size_t nl_program_bytes (NlProgram *p);
/* Called right after each step's op ran, on the thread that ran it, while
 * what it wrote is still in its planned memory (the next writer of that
 * memory waits for the op): forward, the node's output; backward, the
 * gradients it wrote (its inputs', then its weights'; NULL where none).
 * Device tensors on a GPU. NULL (the default): no call, no cost. Layer
 * statistics and the search for the first NaN read them (nl-layer-stats.h). */
typedef void (*NlProgramStepHook) (gpointer user, int node, gboolean forward, NlTensor *const *written, int n);
void nl_program_set_step_hook (NlProgram *p, NlProgramStepHook hook, gpointer user);
const NlMemoryPlan *nl_program_get_plan (NlProgram *p);

G_END_DECLS
