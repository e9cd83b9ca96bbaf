/* nl-model.h — what outlives one batch shape: a network's weights,
 * auxiliary states (running statistics) and optimizer state, by node, on
 * the device the model trains on. Several programs (the training batch, a
 * smaller last batch, evaluation) share one model. */
#pragma once

#include <glib.h>

#include "core/nl-backend.h"
#include "engine/graph/nl-graph.h"
#include "core/nl-optim-rule.h"
#include "engine/graph/nl-scheduler.h"

G_BEGIN_DECLS

typedef struct {
  NlNetwork *net;                 /* owned copy */
  NlShape sample_shape;
  int n_nodes;                    /* = network nodes; indexed by network node index */
  NlTensor **weights;             /* [n_nodes * NL_GRAPH_MAX_SLOTS], NULL when absent */
  NlTensor **aux;                 /* [n_nodes * NL_GRAPH_MAX_SLOTS] */
  NlTensor **opt_state;           /* [n_nodes * NL_GRAPH_MAX_SLOTS * 4] */
  int64_t n_params;               /* learnable scalars */
  guint64 seed;
  /* The dependency scheduler every program of this model pushes to: weights
   * and running statistics are its variables, so an update of a weight is
   * ordered before the next read of it by any program, and nothing else
   * synchronises. */
  NlScheduler *scheduler;
  NlVar **weight_var;             /* [n_nodes * NL_GRAPH_MAX_SLOTS] (also covers optimizer state) */
  NlVar **aux_var;
  /* Where the programs run (NlModelOptions.device; the CPU's by default), and
   * the tensors they read and update there: per slot, weights, then aux,
   * then the 4 optimizer states, as in the arrays above. On a host-visible
   * backend they are the CPU tensors themselves; elsewhere device copies,
   * and the CPU tensors stay the model's face to checkpoints and exports:
   * nl_model_sync brings them up to date, and nl_model_host_changed marks
   * them as newer (a checkpoint was loaded into them) so the next step
   * uploads them. */
  NlBackend *backend;
  NlTensor **on_device;           /* [n_nodes * NL_GRAPH_MAX_SLOTS * 6] */
  gboolean host_newer, device_newer;
} NlModel;

#define NL_MODEL_SLOT(node, k) ((node) * NL_GRAPH_MAX_SLOTS + (k))

/* How a model is built; all zeros (or NULL options) is a model for
 * evaluation on the CPU with seed 0. */
typedef struct {
  guint64 seed;            /* weights initialised from it (Xavier uniform, or the op's hints) */
  /* Scheduler workers: 0 runs ops inline in push order; N > 0 lets
   * independent branches run at once on N threads (a device that runs its
   * work in order on one queue takes 0). */
  int scheduler_workers;
  /* Where the programs run (zeros: the CPU). An unavailable device or too
   * little memory is an error naming it. */
  NlDevice device;
  const NlOptimConfig *optim; /* optimizer state for every weight (zeros); NULL: none */
} NlModelOptions;

/* Infers weight shapes and builds the model in one go, so no half-built
 * model is seen: weights, scheduler, device, then optimizer state. */
NlModel *nl_model_new_full (const NlNetwork *net, const NlShape *sample_shape, const NlModelOptions *opts,
                            GError **error);
void nl_model_free (NlModel *m);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (NlModel, nl_model_free)
/* "conv1.weight" for slot k of node i; NULL when absent. */
char *nl_model_weight_name (const NlModel *m, int node, int k);
/* Wait for every pushed op (updates included); the first failure, once.
 * Then copies what the device changed back into the CPU tensors (nothing
 * to copy on a host-visible backend). */
gboolean nl_model_sync (NlModel *m, GError **error);
/* The CPU tensors were written (checkpoint, import): upload before the next step. */
void nl_model_host_changed (NlModel *m);
/* Uploads the CPU tensors when they are newer (nothing to copy on a
 * host-visible backend). */
gboolean nl_model_upload (NlModel *m, GError **error);
/* The tensor programs use for slot (weights, aux) or state s of slot. */
NlTensor *nl_model_weight_for_device (NlModel *m, int slot);
NlTensor *nl_model_aux_for_device (NlModel *m, int slot);
NlTensor *nl_model_state_for_device (NlModel *m, int slot, int s);

G_END_DECLS
