/* nl-op.h — what an operator is: one NlOpDef per op, in one registry table.
 *
 * An op's definition (NlOpDef, ops/defs/<op>.c) is device-neutral: typed
 * parameters (the GUI inspector and the JSON reader are generated from
 * them), its data inputs, learnable weights and auxiliary states, shape
 * inference and its cost. Its kernels are apart, one NlOpKernels per
 * device: ops/cpu/<op>.c and ops/cuda/<op>.cu. Adding an op touches its
 * header ops/nl-<op>.h (parameter and slot indices, the typed arguments its
 * kernels read, shared formulas), its definition in ops/defs/, its kernels
 * in ops/cpu/ (and ops/cuda/), one line in ops/nl-op-list.h, its ONNX
 * export or not-exportable mark, and its tests.
 * ops/ knows nothing of graphs or projects.
 *
 * Conventions every kernel relies on:
 *  - All tensors a kernel sees are contiguous float32 on the CPU (labels and
 *    Embedding indices are stored as floats holding integers, as in MXNet).
 *  - ctx->in[] holds the data inputs first, then the weights in the order of
 *    def->weights; an absent weight (use_bias=false) is NULL.
 *  - backward() overwrites every non-NULL ctx->in_grad[i] (grad req "write");
 *    the graph inserts gradient-sum nodes where a value has several
 *    consumers, so kernels never accumulate.
 *  - ctx->saved[] are per-node tensors the op asked for at shape inference
 *    (dropout mask, batch-norm batch mean and inverse std ...): forward in
 *    training mode fills them, backward reads them.
 *  - ctx->aux[] are non-learnable states that persist across steps (running
 *    mean/var); forward updates them in training mode only.
 *  - Kernels may cache per-shape resources (oneDNN primitives, scratch) in
 *    *ctx->state; their free_state releases them.
 *  - Sequences are batch-first: (batch, T, features...), time on axis 1.
 *    Ops with uses_lengths read ctx->lengths: each sample's number of valid
 *    steps along axis 1 of data input 0 (float32 (batch), on the op's
 *    device; host_lengths the same numbers on the CPU), or NULL when every
 *    sample fills all T steps. Steps at t >= length are padding: such an op
 *    never lets them reach a valid output, writes zeros at padded output
 *    steps that keep the time axis, and gives padding no gradient.
 *  - Kernels return FALSE with a GError only for data-dependent failures
 *    (an Embedding index out of range, an allocation failure); shape errors
 *    belong in infer_shape. */
#pragma once

#include <glib.h>

#include "core/nl-backend.h"
#include "core/nl-tensor.h"
#include "core/nl-threads.h"

G_BEGIN_DECLS

#define NL_OP_ERROR (nl_op_error_quark ())
GQuark nl_op_error_quark (void);

typedef enum {
  NL_OP_ERROR_PARAM,   /* unknown, missing, wrong type or out-of-range parameter */
  NL_OP_ERROR_SHAPE,   /* inputs do not fit */
  NL_OP_ERROR_RUNTIME, /* data-dependent failure during execution */
  NL_OP_ERROR_NOMEM,
} NlOpErrorCode;

typedef enum {
  NL_PARAM_INT,   /* value.i */
  NL_PARAM_FLOAT, /* value.f */
  NL_PARAM_BOOL,  /* value.i (0 or 1) */
  NL_PARAM_ENUM,  /* value.i = index into spec.enum_values */
  NL_PARAM_INT2,  /* value.v[0], value.v[1] (e.g. kernel (h, w)); JSON: 5 or [5, 5] */
  NL_PARAM_SHAPE, /* value.v[0 .. n-1], n <= NL_MAX_DIMS; JSON: [1, 28, 28] */
} NlParamType;

typedef struct {
  const char *name;   /* snake_case, Gluon's name where one exists */
  NlParamType type;
  double def;         /* default (INT2: both; ENUM: index; SHAPE: none) */
  double min, max;    /* inclusive range, checked per element; min > max: no range */
  const char *const *enum_values; /* NULL-terminated, ENUM only */
  gboolean required;  /* no default: the network must set it */
  const char *doc;    /* one line, shown as tooltip */
} NlParamSpec;

typedef struct {
  int64_t i;
  double f;
  int64_t v[NL_MAX_DIMS];
  int n;          /* SHAPE: number of entries set; 0 = unset */
  gboolean set;   /* given by the network (not defaulted) */
} NlParamValue;

/* Typed access by the op's own parameter index (an enum in ops/nl-<op>.h). */
#define NL_P_INT(p, k) ((p)[k].i)
#define NL_P_FLOAT(p, k) ((float) (p)[k].f)
#define NL_P_BOOL(p, k) ((p)[k].i != 0)
#define NL_P_ENUM(p, k) ((int) (p)[k].i)
#define NL_P_V(p, k, j) ((p)[k].v[j])

/* A per-element formula an op's header (ops/nl-<op>.h) gives both its CPU
 * and its CUDA kernels, so the two devices compute the same expression. */
#ifdef __CUDACC__
#define NL_OP_FN __host__ __device__ static inline
#else
#define NL_OP_FN static inline
#endif

typedef enum {
  NL_INIT_DEFAULT,  /* Xavier uniform for weights, zeros for biases */
  NL_INIT_ZEROS,
  NL_INIT_ONES,
  NL_INIT_XAVIER,   /* Xavier uniform, avg fan */
  NL_INIT_NORMAL,   /* Normal(0.01) */
} NlInitHint;

/* What backward reads, so the planner can free the rest early. */
typedef enum {
  NL_NEEDS_NOTHING = 0,
  NL_NEEDS_INPUTS = 1 << 0,  /* data inputs */
  NL_NEEDS_WEIGHTS = 1 << 1,
  NL_NEEDS_OUTPUTS = 1 << 2,
} NlBackwardNeeds;

#define NL_MAX_PORTS 16 /* most data inputs of a variadic op */

typedef struct {
  const NlParamValue *p;
  gboolean training;
  int n_data;             /* number of data inputs connected */
  const NlShape *in;      /* [n_data] */
  NlShape *weights;       /* [def->n_weights]  op fills; NL_SHAPE_ABSENT if unused */
  NlShape *aux;           /* [def->n_aux]      op fills */
  NlShape *saved;         /* [def->n_saved]    op fills; NL_SHAPE_ABSENT if unused */
  NlShape *out;           /* [def->n_outputs]  op fills */
} NlInferCtx;

typedef struct NlOpDef NlOpDef;

/* Autocast for the matrix and convolution ops (Dense, Conv2D): their
 * inputs and weights are rounded to the half type and multiplied with
 * float32 accumulation; every tensor in memory stays float32 (the master
 * weights too). Other ops ignore it. On the CPU the rounding is emulated
 * (the same numbers, no speed-up); on CUDA the half types feed tensor cores. */
typedef enum {
  NL_PRECISION_F32,
  NL_PRECISION_BF16,
  NL_PRECISION_F16,
  NL_PRECISION_COUNT
} NlPrecision;

/* "fp32", "bf16", "fp16": what --precision takes and runs store. */
const char *nl_precision_name (NlPrecision precision);
gboolean nl_precision_parse (const char *text, NlPrecision *precision);

typedef struct {
  const NlOpDef *def;
  const NlParamValue *p;
  const void *args;           /* the op's typed arguments (def->resolve_args); NULL if it has none */
  int n_data;                 /* data inputs; in[] has n_data + def->n_weights */
  NlTensor *const *in;
  NlTensor *const *out;       /* [def->n_outputs] */
  NlTensor *const *aux;       /* [def->n_aux] */
  NlTensor *const *saved;     /* [def->n_saved] */
  NlTensor *const *out_grad;  /* backward: [def->n_outputs] */
  NlTensor *const *in_grad;   /* backward: [n_data + n_weights], NULL = not needed */
  gboolean training;
  guint64 seed;               /* for random ops: with step, a counter-based stream */
  guint64 step;
  void **state;               /* per-node kernel cache, freed by the kernels' free_state */
  NlBackend *backend;         /* the device's (core/nl-backend.h); on CUDA its context is the NlCudaCtx */
  NlPrecision precision;
  gboolean autotune;          /* CUDA convolutions: time cuDNN's algorithms (NlCompileOptions) */
  gboolean deterministic;     /* CUDA convolutions: deterministic algorithms only */
  /* uses_lengths ops only (see the conventions above); NULL: full length */
  const NlTensor *lengths;    /* float32 (batch) on the op's device */
  const float *host_lengths;  /* the same on the CPU */
} NlOpCtx;

/* One op's kernels on one device. ops/cpu/<op>.c defines `nl_op_cpu_<c_name>`
 * and ops/cuda/<op>.cu `nl_op_cuda_<c_name>` for each op of
 * ops/nl-op-list.h it implements; each device's table of them
 * (ops/cpu/nl-cpu-ops.c, ops/cuda/nl-cuda-module.c) is handed to its
 * backend, nl_op_kernels() asks the backend, and an op without kernels on a
 * device is reported by the program, not crashed on. Device tensors are
 * float32 and contiguous like the CPU's; their data pointers are device
 * pointers. */
typedef struct {
  gboolean (*forward) (NlOpCtx *ctx, GError **error);
  gboolean (*backward) (NlOpCtx *ctx, GError **error);
  void (*free_state) (void *state);
} NlOpKernels;

struct NlOpDef {
  const char *name;      /* "Conv2D" */
  const char *category;  /* palette group: Input, Core, Convolution, Pooling,
                            Normalization, Activation, Sequence, Structure, Loss */
  const char *doc;       /* one line */
  const NlParamSpec *params;
  int n_params;
  const char *const *inputs;  /* data input names, e.g. {"data"}; losses {"pred", "label"} */
  int n_inputs;
  gboolean variadic;          /* Concat, Add: 1 .. max_inputs inputs all named inputs[0] */
  int max_inputs;             /* variadic: most data inputs, 0 = NL_MAX_PORTS; others take
                                 exactly n_inputs. nl_op_infer_shape checks it first. */
  int min_inputs;             /* not variadic: the trailing inputs from min_inputs on are
                                 optional (LSTM's initial state, attention's memory);
                                 0 = all n_inputs are required */
  const char *const *weights; /* {"weight", "bias"} */
  const NlInitHint *weight_init; /* [n_weights] */
  int n_weights;
  const char *const *aux;     /* {"running_mean", "running_var"} */
  int n_aux;
  int n_saved;
  int n_outputs;              /* 1 for every op so far */
  NlBackwardNeeds needs;
  /* When set, what backward needs for these parameters instead of `needs`
   * (Activation: silu's gradient needs its input, relu's only its output,
   * which then may overwrite the input) */
  NlBackwardNeeds (*needs_for) (const NlParamValue *p);
  gboolean inplace;           /* hint: output 0 may overwrite data input 0 */
  gboolean backward_inplace;  /* hint: in_grad[0] may overwrite out_grad[0] (elementwise backward) */
  gboolean is_loss;           /* output is a per-sample loss of shape (N) */
  gboolean no_grad_inputs;    /* data inputs take no gradient (Embedding indices, labels);
                                 losses: the label input (index 1) never takes one */
  gboolean no_backward;       /* nothing flows back through it (Input): no backward kernel */
  gboolean uses_lengths;      /* reads ctx->lengths: a sequence op that masks padding */

  /* The typed arguments the kernels read (ctx->args), an NlDenseArgs ...
   * declared in the op's header (ops/nl-<op>.h) for the CPU and CUDA
   * kernels alike: filled from the validated parameters once, when a
   * program or an NlOpInstance is built, so that no kernel looks a
   * parameter up per call. args_size 0: the op has none. */
  size_t args_size;
  void (*resolve_args) (const NlParamValue *p, void *args);

  /* Called through nl_op_infer_shape, which has checked the number of
   * data inputs. */
  gboolean (*infer_shape) (NlInferCtx *ctx, GError **error);
  /* aux initial values (running_var = 1 ...); NULL = zeros */
  void (*init_aux) (NlTensor *const *aux, const NlParamValue *p);
  /* Adjusts the weights once their init hints have filled them (Embedding
   * zeroes its padding row); absent weights are NULL. NULL: nothing to do. */
  void (*init_weights) (NlTensor *const *weights, const NlParamValue *p);
  /* Multiply-adds of one forward pass for the analysis (out: output 0,
   * weights as infer_shape gave them); NULL = one per output element. */
  int64_t (*macs) (const NlShape *out, const NlShape *weights);
};

/* The macs of an op whose every output element reads one row of weight 0
 * (Dense's weight row, Conv2D's filter). */
int64_t nl_op_macs_per_weight_row (const NlShape *out, const NlShape *weights);

/* Set an error about shapes: nl_op_shape_error (error, "expected 4 dims, got %d", n) */
gboolean nl_op_shape_error (GError **error, const char *fmt, ...) G_GNUC_PRINTF (2, 3);

G_END_DECLS
