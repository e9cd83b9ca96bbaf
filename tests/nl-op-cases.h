/* nl-op-cases.h — the one table of op test cases, run in every mode.
 *
 * Like ggml's test-backend-ops: each case names an op, its parameters, its
 * data input shapes and how to draw the inputs; each mode iterates the same
 * table. Gradient mode (test-gradcheck) checks backward against finite
 * differences of forward on the CPU; compare mode (test-cuda) runs forward
 * and backward on the CPU and on another backend and compares. A case runs
 * in every mode unless .only names one (with the reason beside it). The
 * table's coverage (every op and every choice of an enum parameter has a
 * case in each mode) is checked once, by test-op-cases. */
#pragma once

#include <glib.h>

#include "ops/nl-op-instance.h"

#define NL_OP_CASE_MAX_DATA 4

typedef enum {
  NL_OP_CASE_GRAD = 1 << 0,    /* finite differences on the CPU */
  NL_OP_CASE_COMPARE = 1 << 1, /* the CPU against another backend */
  NL_OP_CASE_ALL_MODES = NL_OP_CASE_GRAD | NL_OP_CASE_COMPARE,
} NlOpCaseMode;

/* How a data input is drawn. */
typedef enum {
  NL_GEN_UNIFORM,  /* U(-1, 1) */
  NL_GEN_AWAY0,    /* U(-1, 1) with |x| >= 0.1: clear of a kink at 0 */
  NL_GEN_DISTINCT, /* distinct values 0.1 apart, shuffled: a max has one winner */
  NL_GEN_INT,      /* integers 0 .. k - 1 (class labels, Embedding indices) */
  NL_GEN_BINARY,   /* 0 or 1 */
  NL_GEN_PROB,     /* U(0.05, 0.95) */
  NL_GEN_DIST,     /* rows along the last axis that sum to 1 (dense labels) */
  NL_GEN_WIDE,     /* U(-100, 100): the overflow-safe paths of exp and log */
} NlOpCaseGen;

/* Runs after the inputs are drawn, to tie one input to another (a
 * prediction clear of a loss's kink around its label). */
typedef void (*NlOpCasePrep) (NlTensor **in, const NlParamValue *p, const NlOpDef *def, GRand *r);

typedef struct {
  const char *op, *what;           /* (op, what) is unique and seeds the case */
  const char *params[16];          /* name, value, ..., NULL */
  const char *in[NL_OP_CASE_MAX_DATA]; /* data input shapes, "2x3x5x5" */
  NlOpCaseGen gen[NL_OP_CASE_MAX_DATA];
  int k;                           /* range of NL_GEN_INT */
  unsigned nograd;                 /* bit i: data input i takes no gradient */
  gboolean predict;                /* inference mode (default: training) */
  const char *lengths;             /* uses_lengths ops: each sample's length, "3,1" (one per
                                      sample of data input 0); NULL: full length */
  NlOpCasePrep prep;
  unsigned only;                   /* NlOpCaseMode bits; 0: every mode */
  /* hints for gradient mode */
  double h;                        /* step; 0: the mode's default */
  int samples;                     /* elements checked per tensor; 0: the mode's default */
  /* hints for compare mode */
  NlPrecision precision;           /* autocast of Dense and Conv2D */
  double tol;                      /* 0: the mode's float32 tolerance */
} NlOpCase;

/* The table, grouped by op. */
extern const NlOpCase nl_op_cases[];
extern const guint nl_op_n_cases;

/* Whether case c runs in mode. */
gboolean nl_op_case_runs_in (const NlOpCase *c, NlOpCaseMode mode);
/* The case's random stream, seeded by its op and name. */
GRand *nl_op_case_rand (const NlOpCase *c);
/* An instance of def (c->op, or a test's own op) with c's parameters,
 * shapes and mode; NULL with error set when the op refuses them. */
NlOpInstance *nl_op_case_instance (const NlOpDef *def, const NlOpCase *c, GError **error);
/* Draws inst's data inputs by c->gen, its weights from U(-1, 1), its aux
 * states from U(0.5, 1.5) (running variances stay positive), then runs
 * c->prep. */
void nl_op_case_fill (const NlOpCase *c, NlOpInstance *inst, GRand *r);
/* Fills t with U(lo, hi) from r. */
void nl_op_case_uniform (NlTensor *t, GRand *r, double lo, double hi);
