/* nl-infer-priv.h — what the inference executor's two files share: its
 * values (a layout, a data type and a scale each), its steps and the
 * builders of the oneDNN steps (nl-infer-prims.c). Not a public header. */
#pragma once

#include <dnnl.h>

#include "engine/infer/nl-infer-net.h"
#include "ops/cpu/nl-cpu-util.h"

G_BEGIN_DECLS

/* One tensor of the compiled net. Views (Flatten, a sum done in place)
 * share their buffer. */
typedef struct {
  dnnl_memory_desc_t md; /* layout and data type */
  NlShape shape;         /* logical dims, batch first */
  float scale;           /* stored = real * scale (1 for f32) */
  float qscale;          /* the calibrated real->int scale of what it holds; 0: none */
  gboolean qunsigned;    /* ... and whether that range is unsigned */
  int buf;
  dnnl_memory_t mem;     /* bound to its buffer once memory is planned */
} IVal;

typedef struct {
  size_t bytes;
  int first, last;       /* steps that first write and last read it */
  int block;             /* the arena block it lives in; -1: external */
  NlStorage *ext;        /* the input's own memory (never reused) */
} IBuf;

typedef enum { STEP_PRIM, STEP_KERNEL } StepKind;

#define STEP_MAX_ARGS 8

typedef struct {
  StepKind kind;
  char *desc;
  /* a oneDNN primitive with its arguments: value ids or owned memory */
  dnnl_primitive_t prim;
  int n_args;
  int arg[STEP_MAX_ARGS];
  int arg_val[STEP_MAX_ARGS];        /* -1: arg_mem */
  dnnl_memory_t arg_mem[STEP_MAX_ARGS];
  dnnl_exec_arg_t exec[STEP_MAX_ARGS];
  /* an op's own CPU kernel on plain fp32 tensors */
  const NlGraphNode *node;
  NlOpKernels kernels;
  void *state, *args;
  int n_in, in_val[NL_MAX_PORTS], out_val;
  NlTensor *in[NL_MAX_PORTS + NL_GRAPH_MAX_SLOTS], *out[1], *aux[NL_GRAPH_MAX_SLOTS], *saved[NL_GRAPH_MAX_SLOTS];
} IStep;

struct NlInferNet {
  NlModel *model;
  NlInferOptions opts;
  NlGraph *graph;
  GArray *vals;          /* IVal */
  GArray *bufs;          /* IBuf */
  GPtrArray *steps;      /* IStep* */
  GArray *reorders;      /* int pairs: value, its reorder placed by want */
  int *gv;               /* graph value -> IVal id */
  NlTensor *input, *output;
  int input_val, output_val;
  GPtrArray *points;     /* char*, NULL-terminated */
  int *point_val;        /* per point: its IVal */
  IStep *obs;            /* per point: a reorder to plain f32 for observe (prim NULL: already plain) */
  GPtrArray *describe;
  NlStorage **blocks;
  int n_blocks;
  size_t bytes;
  gboolean *fp32_head;   /* per graph node: a Conv2D kept in fp32 in INT8 mode */
  gboolean profile;      /* NETLOOM_PROFILE=1: time every step, report at free */
  double *step_us;
  guint64 runs;
};

static inline IVal *
ival (NlInferNet *n, int v)
{
  return &g_array_index (n->vals, IVal, v);
}

static inline IBuf *
ibuf (NlInferNet *n, int b)
{
  return &g_array_index (n->bufs, IBuf, b);
}

/* Values and steps (nl-infer-net.c). */
int nl_infer_new_val (NlInferNet *n, const dnnl_memory_desc_t *md, const NlShape *shape, float scale, int buf);
IStep *nl_infer_add_step (NlInferNet *n, StepKind kind, char *desc);
/* Step arguments: reading marks the buffer's last reader. */
void nl_infer_step_read (NlInferNet *n, IStep *s, int arg, int v);
void nl_infer_step_write (NlInferNet *n, IStep *s, int arg, int v);
/* A step running pd (destroyed here, whatever happens) from value in,
 * as argument arg_in, to value out, as arg_out; desc as nl_infer_add_step.
 * FALSE when oneDNN cannot make the primitive (what names it). */
gboolean nl_infer_add_prim_step (NlInferNet *n, dnnl_primitive_desc_t pd, char *desc, int arg_in, int in, int arg_out,
                                 int out, const char *what, GError **error);
void nl_infer_step_mem (IStep *s, int arg, dnnl_memory_t mem);
int nl_infer_step_index (NlInferNet *n);

/* Buffers into arena blocks (after every step is placed). */
gboolean nl_infer_plan_memory (NlInferNet *n, GError **error);
NlStorage *nl_infer_buf_storage (NlInferNet *n, int buf);

/* Plain (row-major) layout of dims in dtype. */
void nl_infer_plain_md (dnnl_memory_desc_t *md, const NlShape *shape, dnnl_data_type_t dt);
gboolean nl_infer_is_plain (const dnnl_memory_desc_t *md);
const char *nl_infer_dt_name (dnnl_data_type_t dt);

/* Value v as md at real->stored scale `scale`: v itself, a view of it, or a
 * reorder placed now; -1 with error. */
int nl_infer_want (NlInferNet *n, int v, const dnnl_memory_desc_t *md, float scale, GError **error);
/* Always a reorder of v into a new value. */
int nl_infer_copy (NlInferNet *n, int v, const dnnl_memory_desc_t *md, float scale, GError **error);

/* What a fused Conv2D or Dense step is made of (nl-infer-prims.c). */
typedef struct {
  const NlGraphNode *head, *bn, *add, *relu;
  const NlGraphNode *last;   /* the last node fused: its id names the point */
  int other;                 /* graph value summed in (the residual branch), -1 none */
  gboolean int8;             /* run in INT8 */
  gboolean out_int8;         /* INT8 output (else f32, the output scale folded) */
  float out_scale;           /* INT8 output: real->int */
  gboolean out_unsigned;
  gboolean in_place;         /* the residual branch's buffer may be overwritten */
  const char *fp32_why;      /* INT8 mode, step kept fp32: why, for describe */
} FusedSpec;

int nl_infer_build_fused (NlInferNet *n, const FusedSpec *f, GError **error);
int nl_infer_build_pool (NlInferNet *n, const NlGraphNode *node, GError **error);
int nl_infer_build_eltwise (NlInferNet *n, const NlGraphNode *node, GError **error);
int nl_infer_build_kernel (NlInferNet *n, const NlGraphNode *node, GError **error);
/* Whether node runs as a oneDNN pooling (not for windows past the padding). */
gboolean nl_infer_pool_ok (const NlInferNet *n, const NlGraphNode *node);
gboolean nl_infer_prim_new (dnnl_primitive_t *prim, const_dnnl_primitive_desc_t pd, const char *what, GError **error);

G_END_DECLS
