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
  /* Where the programs run (nl_model_set_device; the CPU's by default), and
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

/* Infers weight shapes and allocates weights initialised from seed
 * (Xavier uniform for weights, the op's hints for the rest). */
NlModel *nl_model_new (const NlNetwork *net, const NlShape *sample_shape, guint64 seed, GError **error);
void nl_model_free (NlModel *m);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (NlModel, nl_model_free)
/* Allocates optimizer state for every weight (zeros). */
gboolean nl_model_prepare_optimizer (NlModel *m, const NlOptimConfig *cfg, GError **error);
/* "conv1.weight" for slot k of node i; NULL when absent. */
char *nl_model_weight_name (const NlModel *m, int node, int k);
/* Scheduler workers: 0 (default) runs ops inline in push order; N > 0 lets
 * independent branches run at once on N threads. Before any program exists. */
void nl_model_set_scheduler_workers (NlModel *m, int n_workers);
/* Wait for every pushed op (updates included); the first failure, once.
 * Then copies what the device changed back into the CPU tensors (nothing
 * to copy on a host-visible backend). */
gboolean nl_model_sync (NlModel *m, GError **error);
/* Moves the model from the CPU to device, once, before any program exists:
 * makes the device copies (optimizer state too, once prepared) and uploads
 * them. An unavailable device or too little memory is an error naming it,
 * and the model stays on the CPU. */
gboolean nl_model_set_device (NlModel *m, NlDevice device, GError **error);
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
