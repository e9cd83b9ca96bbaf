/* nl-graph.h — a network compiled for one input shape.
 *
 *   NlNetwork --nl_graph_compile--> NlGraph   (topological order, inferred
 *                                              shapes, explicit backward steps
 *                                              with gradient-sum nodes)
 *   NlGraph + NlModel --nl_program_new--> NlProgram (tensors bound; runs)
 *
 * NlModel holds what outlives one batch shape: weights, auxiliary states
 * (running statistics) and optimizer state, by node. Several programs (the
 * training batch, a smaller last batch, evaluation) share one model. */
#pragma once

#include <glib.h>

#include "engine/nl-engine.h"
#include "engine/nl-network.h"
#include "engine/nl-optim.h"

G_BEGIN_DECLS

#define NL_GRAPH_MAX_SLOTS 8 /* weights, aux or saved tensors of one op */

typedef enum {
  NL_VALUE_INPUT,       /* the data batch */
  NL_VALUE_LABEL,       /* labels bound to a loss */
  NL_VALUE_ACTIVATION,  /* a node's output */
  NL_VALUE_GRAD,        /* the gradient of an activation */
  NL_VALUE_PARTIAL,     /* one consumer's share of a gradient, summed by a GRAD_SUM step */
  NL_VALUE_HEAD_GRAD,   /* d(mean loss)/d(per-sample loss) = 1/N */
  NL_VALUE_SAVED,       /* what a forward keeps for its backward (dropout mask ...) */
  NL_VALUE_WEIGHT_GRAD, /* a weight's gradient, read by the optimizer update */
} NlValueKind;

typedef struct {
  NlValueKind kind;
  NlShape shape;
  int node;             /* producer node (activations), or the node whose output it is the gradient of */
} NlValue;

typedef struct {
  const NlOpDef *def;
  const NlParamValue *params;   /* points into the network (or the appended loss) */
  const char *id;
  int net_index;                /* index in the network, -1 for an appended loss */
  int n_data;
  int in[NL_MAX_PORTS];         /* value ids of the data inputs */
  int out;                      /* value id of the output */
  NlShape weights[NL_GRAPH_MAX_SLOTS];
  NlShape aux[NL_GRAPH_MAX_SLOTS];
  NlShape saved[NL_GRAPH_MAX_SLOTS];
  int saved_v[NL_GRAPH_MAX_SLOTS];    /* value ids of saved tensors, -1 if absent */
  /* backward (training graphs only) */
  gboolean run_backward;
  int out_grad;                 /* value id or -1 */
  int in_grad[NL_MAX_PORTS];    /* value id (GRAD or PARTIAL) or -1 */
  int wgrad_v[NL_GRAPH_MAX_SLOTS];    /* value ids of weight gradients, -1 if none */
  int64_t macs;                 /* multiply-adds of the forward pass (estimate) */
} NlGraphNode;

typedef enum {
  NL_STEP_FORWARD,
  NL_STEP_BACKWARD,
  NL_STEP_GRAD_SUM,
} NlStepKind;

typedef struct {
  NlStepKind kind;
  int node;          /* FORWARD, BACKWARD */
  int dst;           /* GRAD_SUM: the GRAD value */
  int n_src;         /* GRAD_SUM: PARTIAL values summed */
  int src[NL_MAX_PORTS * 2];
} NlStep;

typedef struct {
  int batch;
  gboolean training;     /* build the backward graph; ops run in training mode */
  const char *loss;      /* op name of the loss to append when the network has
                            none (e.g. "SoftmaxCrossEntropy"); NULL: no loss */
  gboolean naive_memory; /* every value in its own buffer (no planner) */
  NlDevice device;       /* where the program's arena lives and its ops run (the model's device) */
  NlPrecision precision; /* autocast of Dense and Conv2D (see ops/nl-op.h) */
  float loss_scale;      /* training: the loss gradient is multiplied by this (dynamic loss
                            scaling, nl-loss-scale.h); 0 means 1 */
} NlCompileOptions;

typedef struct {
  NlNetwork *net;        /* borrowed: must outlive the graph */
  NlCompileOptions opts;
  GArray *nodes;         /* NlGraphNode, in execution order */
  GArray *values;        /* NlValue */
  GArray *steps;         /* NlStep: forward steps, then backward */
  int n_forward_steps;
  int input_value, label_value, pred_value, loss_value, head_grad_value;
  int loss_node;         /* -1 without a loss */
  NlParamValue *loss_params; /* for an appended loss */
} NlGraph;

/* sample_shape excludes the batch dimension. Errors name the node. */
NlGraph *nl_graph_compile (NlNetwork *net, const NlShape *sample_shape,
                           const NlCompileOptions *opts, GError **error);
void nl_graph_free (NlGraph *g);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (NlGraph, nl_graph_free)

static inline NlGraphNode *
nl_graph_node (const NlGraph *g, int i)
{
  return &g_array_index (g->nodes, NlGraphNode, i);
}

static inline NlValue *
nl_graph_value (const NlGraph *g, int i)
{
  return &g_array_index (g->values, NlValue, i);
}

/* Forward multiply-adds of one node (Dense and Conv2D: output elements
 * times the weights each reads; other ops: output elements). */
int64_t nl_graph_estimate_macs (const NlOpDef *def, const NlShape *out, const NlShape *weights);

/* Appends a value; returns its id. */
int nl_graph_add_value (NlGraph *g, NlValueKind kind, const NlShape *shape, int node);

/* Adds backward steps (called by nl_graph_compile for training graphs). */
gboolean nl_graph_build_backward (NlGraph *g, GError **error);

/* The values step s reads and writes (what the memory planner and the
 * scheduler go by). Arrays must hold NL_GRAPH_MAX_ACCESS entries. */
#define NL_GRAPH_MAX_ACCESS (3 * NL_MAX_PORTS + 3 * NL_GRAPH_MAX_SLOTS + 4)
void nl_graph_step_access (const NlGraph *g, int s, int *reads, int *n_reads, int *writes, int *n_writes);
/* Values read after the step by the caller (prediction, loss, labels) or
 * that must keep their contents across steps (head gradient, weight
 * gradients read by the update): the planner never reuses their memory. */
gboolean nl_graph_value_is_persistent (const NlGraph *g, int v);

/* ---- static memory plan ---- */

typedef struct {
  int n_values;
  int64_t *offset;        /* per value: bytes into the arena */
  int *block;             /* per value: the block it lives in */
  int *first, *last;      /* per value: steps of its first write and last read (lifetime) */
  int n_blocks;
  int64_t *block_offset, *block_size;
  int64_t planned_bytes;  /* the arena */
  int64_t naive_bytes;    /* every value in its own buffer */
  int n_inplace;          /* outputs written over their input */
} NlMemoryPlan;

/* Simulates allocation over the step order: reference counts from the
 * steps' reads, in-place reuse where the op allows it and the input has no
 * later reader, blocks returned to a pool at their last read and reused
 * best-fit. Nothing is allocated. naive: one block per value. */
NlMemoryPlan *nl_memory_plan_new (const NlGraph *g, gboolean naive);
void nl_memory_plan_free (NlMemoryPlan *plan);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (NlMemoryPlan, nl_memory_plan_free)

/* ---- parameters ---- */

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
  NlEngine *engine;
  NlVar **weight_var;             /* [n_nodes * NL_GRAPH_MAX_SLOTS] (also covers optimizer state) */
  NlVar **aux_var;
  /* On a GPU (nl_model_set_device): device copies of weights, aux and
   * optimizer state, which the programs read and update. The CPU tensors
   * above stay the model's face to checkpoints and exports: nl_model_sync
   * brings them up to date, and nl_model_host_changed marks them as newer
   * (a checkpoint was loaded into them) so the next step uploads them. */
  NlDevice device;
  struct NlCudaCtx *cuda;
  NlTensor **dev_weights, **dev_aux, **dev_opt_state;
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
 * On a GPU it then copies what the device changed back into the CPU tensors. */
gboolean nl_model_sync (NlModel *m, GError **error);
/* Moves the model to device (before any program exists): makes the device
 * copies (optimizer state too, once prepared) and uploads them. An
 * unavailable device or too little memory is an error naming it. */
gboolean nl_model_set_device (NlModel *m, NlDevice device, GError **error);
/* The CPU tensors were written (checkpoint, import): upload before the next step. */
void nl_model_host_changed (NlModel *m);
/* Uploads the CPU tensors when they are newer; TRUE on the CPU. */
gboolean nl_model_upload (NlModel *m, GError **error);
/* The tensor programs use for slot (weights, aux) or state s of slot. */
NlTensor *nl_model_weight_for_device (NlModel *m, int slot);
NlTensor *nl_model_aux_for_device (NlModel *m, int slot);
NlTensor *nl_model_state_for_device (NlModel *m, int slot, int s);

/* ---- executable programs ---- */

typedef struct NlProgram NlProgram;

NlProgram *nl_program_new (NlModel *model, const NlCompileOptions *opts, GError **error);
void nl_program_free (NlProgram *p);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (NlProgram, nl_program_free)

const NlGraph *nl_program_get_graph (NlProgram *p);
/* On a GPU these four are CPU mirrors of the device values: input and
 * label are copied up by forward, pred and loss down by backward (or by an
 * inference forward). */
NlTensor *nl_program_input (NlProgram *p);   /* (batch, sample_shape...) fill before forward */
NlTensor *nl_program_label (NlProgram *p);   /* (batch) */
NlTensor *nl_program_pred (NlProgram *p);    /* the network's output */
NlTensor *nl_program_loss (NlProgram *p);    /* (batch) per-sample loss, NULL without loss */
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
/* Bytes of activations, gradients and saved tensors this program holds. */
size_t nl_program_bytes (NlProgram *p);
const NlMemoryPlan *nl_program_get_plan (NlProgram *p);

G_END_DECLS
