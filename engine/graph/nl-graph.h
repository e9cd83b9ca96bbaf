/* nl-graph.h — a network compiled for one input shape.
 *
 *   NlNetwork --nl_graph_compile--> NlGraph   (topological order, inferred
 *                                              shapes, explicit backward steps
 *                                              with gradient-sum nodes)
 *   NlGraph --nl_memory_plan_new--> NlMemoryPlan (nl-memory-plan.h)
 *   NlGraph + NlModel --nl_program_new--> NlProgram (nl-model.h, nl-program.h) */
#pragma once

#include <glib.h>

#include "engine/graph/nl-network.h"
#include "ops/nl-op.h"

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
  NL_VALUE_LENGTHS,     /* each sample's valid steps (float32 (batch)), from the input batch
                           when the Input node's `lengths` is "nonzero"; read by uses_lengths ops */
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
  NlShape label_shape;   /* one sample's label, without the batch: ndim 0 (the default) is one
                            value per sample; (T) per-step classes of a language model, (H) a
                            series' horizon */
  /* CUDA execution (nl-run-config.h); the CPU ignores them */
  gboolean autotune;      /* cuDNN's algorithms timed once per shape (core/nl-algo-cache.h) */
  gboolean deterministic; /* deterministic algorithms only */
  gboolean device_graphs; /* replay a training step captured by the backend (graph_begin ...) */
  gboolean explain;      /* not training (ops in inference mode, no loss): a backward from the
                            prediction, whose head gradient (pred's shape) the caller fills, down
                            to the Input node's output, so gradients of a class score can be read
                            at the input and at every node (nl-explain.h) */
} NlCompileOptions;

typedef struct {
  NlNetwork *net;        /* borrowed: must outlive the graph */
  NlCompileOptions opts;
  GArray *nodes;         /* NlGraphNode, in execution order */
  GArray *values;        /* NlValue */
  GArray *steps;         /* NlStep: forward steps, then backward */
  int n_forward_steps;
  int input_value, label_value, pred_value, loss_value, head_grad_value;
  int lengths_value;     /* NL_VALUE_LENGTHS, or -1 when the Input has no lengths */
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

G_END_DECLS
