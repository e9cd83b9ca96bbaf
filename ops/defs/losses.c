/* losses.c — the definitions of Gluon's loss blocks as ops:
 * SoftmaxCrossEntropy, SigmoidBinaryCrossEntropy, L2Loss, L1Loss,
 * HuberLoss. Inputs are {pred, label}; the output is one loss per sample,
 * shape (N) (kernels: ops/cpu/losses.c, ops/cuda/losses.cu; the formulas:
 * ops/nl-loss-elementwise.h). */
#include "ops/nl-losses.h"

static const char *const inputs[] = { "pred", "label" };

static char *
fmt_shape (const NlShape *s, char *buf)
{
  return nl_shape_format (s, buf, 96);
}

/* Two inputs, pred with a batch dim, label with the same number of samples. */
static gboolean
check_pair (const char *op, NlInferCtx *c, GError **error)
{
  const NlShape *pred = &c->in[0], *label = &c->in[1];

  if (pred->ndim < 1 || label->ndim < 1)
    return nl_op_shape_error (error, "%s: pred and label need a batch dimension", op);
  if (nl_shape_numel (pred) == 0)
    return nl_op_shape_error (error, "%s: pred is empty", op);
  if (label->d[0] != pred->d[0])
    return nl_op_shape_error (error, "%s: label has %" G_GINT64_FORMAT " samples but pred has %" G_GINT64_FORMAT,
                              op, label->d[0], pred->d[0]);
  return TRUE;
}

static void
set_loss_out (NlInferCtx *c)
{
  c->out[0] = nl_shape_of (1, c->in[0].d[0]);
}

/* ---- SoftmaxCrossEntropy ---------------------------------------------- */

static const NlParamSpec sce_params[SCE_N] = {
  [SCE_AXIS] = { "axis", NL_PARAM_INT, -1, -NL_MAX_DIMS, NL_MAX_DIMS - 1, NULL, FALSE,
                 "Class axis; only the last axis (-1) is supported" },
  [SCE_SPARSE_LABEL] = { "sparse_label", NL_PARAM_BOOL, 1, 1, 0, NULL, FALSE,
                         "Labels are class indices (true) or per-class probabilities shaped like pred (false)" },
  [SCE_FROM_LOGITS] = { "from_logits", NL_PARAM_BOOL, 0, 1, 0, NULL, FALSE,
                        "pred already holds log-probabilities (no softmax applied inside)" },
};

static void
sce_resolve (const NlParamValue *p, void *args)
{
  NlSceArgs *a = args;
  a->axis = NL_P_INT (p, SCE_AXIS);
  a->sparse_label = NL_P_BOOL (p, SCE_SPARSE_LABEL);
  a->from_logits = NL_P_BOOL (p, SCE_FROM_LOGITS);
}

static gboolean
sce_infer (NlInferCtx *c, GError **error)
{
  const char *op = "SoftmaxCrossEntropy";
  const NlShape *pred, *label;
  int64_t axis = NL_P_INT (c->p, SCE_AXIS);
  char a[96], b[96];

  if (!check_pair (op, c, error))
    return FALSE;
  pred = &c->in[0];
  label = &c->in[1];
  if (pred->ndim < 2)
    return nl_op_shape_error (error, "%s: pred must be (N, C) scores, got %s", op, fmt_shape (pred, a));
  if (axis != -1 && axis != pred->ndim - 1)
    {
      g_set_error (error, NL_OP_ERROR, NL_OP_ERROR_PARAM,
                   "%s supports only the last axis (axis=-1 or %d) as the class axis, not axis=%" G_GINT64_FORMAT,
                   op, pred->ndim - 1, axis);
      return FALSE;
    }
  if (NL_P_BOOL (c->p, SCE_SPARSE_LABEL))
    {
      /* pred's shape without the class dim, optionally with a trailing 1 */
      gboolean ok = label->ndim == pred->ndim - 1
                    || (label->ndim == pred->ndim && label->d[label->ndim - 1] == 1);
      for (int i = 0; ok && i < pred->ndim - 1; i++)
        ok = label->d[i] == pred->d[i];
      if (!ok)
        {
          NlShape want = *pred;
          want.ndim--;
          return nl_op_shape_error (error, "%s: with sparse_label the label holds one class index per row, "
                                    "shape %s (or with a trailing 1), but it is %s", op,
                                    fmt_shape (&want, a), fmt_shape (label, b));
        }
    }
  else if (!nl_shape_equal (label, pred))
    return nl_op_shape_error (error, "%s: with sparse_label=false the label holds class probabilities "
                              "shaped like pred %s, but it is %s", op, fmt_shape (pred, a), fmt_shape (label, b));
  set_loss_out (c);
  /* softmax probabilities for backward; allocated in predict mode too so one
   * plan serves both modes */
  c->saved[0] = NL_P_BOOL (c->p, SCE_FROM_LOGITS) ? NL_SHAPE_ABSENT : *pred;
  return TRUE;
}

const NlOpDef nl_op_softmax_cross_entropy = {
  .name = "SoftmaxCrossEntropy",
  .category = "Loss",
  .doc = "Softmax cross-entropy of class scores against class labels, per sample",
  .params = sce_params,
  .n_params = SCE_N,
  .inputs = inputs,
  .n_inputs = 2,
  .n_saved = 1,
  .n_outputs = 1,
  .needs = NL_NEEDS_INPUTS,
  .is_loss = TRUE,
  .args_size = sizeof (NlSceArgs),
  .resolve_args = sce_resolve,
  .infer_shape = sce_infer,
};

/* ---- elementwise losses ------------------------------------------------- */

/* Same shape, or both a vector of N values: (N) against (N, 1). */
static gboolean
el_infer (const char *op, NlInferCtx *c, GError **error)
{
  const NlShape *pred, *label;
  char a[96], b[96];

  if (!check_pair (op, c, error))
    return FALSE;
  pred = &c->in[0];
  label = &c->in[1];
  if (!nl_shape_equal (pred, label)
      && !(nl_shape_numel (pred) == pred->d[0] && nl_shape_numel (label) == label->d[0]))
    return nl_op_shape_error (error, "%s: label has shape %s but pred has %s; they must match",
                              op, fmt_shape (label, a), fmt_shape (pred, b));
  set_loss_out (c);
  return TRUE;
}

/* SigmoidBinaryCrossEntropy */

static const NlParamSpec sbce_params[SBCE_N] = {
  [SBCE_FROM_SIGMOID] = { "from_sigmoid", NL_PARAM_BOOL, 0, 1, 0, NULL, FALSE,
                          "pred already holds probabilities (no sigmoid applied inside)" },
};

static gboolean
sbce_infer (NlInferCtx *c, GError **error)
{
  return el_infer ("SigmoidBinaryCrossEntropy", c, error);
}

static void
sbce_resolve (const NlParamValue *p, void *args)
{
  NlSbceArgs *a = args;
  a->kind = NL_P_BOOL (p, SBCE_FROM_SIGMOID) ? EL_SBCE_SIGMOID : EL_SBCE_LOGITS;
}

const NlOpDef nl_op_sigmoid_binary_cross_entropy = {
  .name = "SigmoidBinaryCrossEntropy",
  .category = "Loss",
  .doc = "Binary cross-entropy of logits (or probabilities) against 0/1 labels, per sample",
  .params = sbce_params,
  .n_params = SBCE_N,
  .inputs = inputs,
  .n_inputs = 2,
  .n_outputs = 1,
  .needs = NL_NEEDS_INPUTS,
  .is_loss = TRUE,
  .args_size = sizeof (NlSbceArgs),
  .resolve_args = sbce_resolve,
  .infer_shape = sbce_infer,
};

/* L2Loss */

static gboolean
l2_infer (NlInferCtx *c, GError **error)
{
  return el_infer ("L2Loss", c, error);
}

const NlOpDef nl_op_l2_loss = {
  .name = "L2Loss",
  .category = "Loss",
  .doc = "Half squared error 0.5 (pred - label)^2, averaged per sample",
  .inputs = inputs,
  .n_inputs = 2,
  .n_outputs = 1,
  .needs = NL_NEEDS_INPUTS,
  .is_loss = TRUE,
  .infer_shape = l2_infer,
};

/* L1Loss */

static gboolean
l1_infer (NlInferCtx *c, GError **error)
{
  return el_infer ("L1Loss", c, error);
}

const NlOpDef nl_op_l1_loss = {
  .name = "L1Loss",
  .category = "Loss",
  .doc = "Absolute error |pred - label|, averaged per sample",
  .inputs = inputs,
  .n_inputs = 2,
  .n_outputs = 1,
  .needs = NL_NEEDS_INPUTS,
  .is_loss = TRUE,
  .infer_shape = l1_infer,
};

/* HuberLoss */

static const NlParamSpec huber_params[HUBER_N] = {
  /* rho must be > 0; the inclusive range needs a positive floor */
  [HUBER_RHO] = { "rho", NL_PARAM_FLOAT, 1, 1e-6, 1e18, NULL, FALSE,
                  "Error size where the loss turns from quadratic to linear" },
};

static void
huber_resolve (const NlParamValue *p, void *args)
{
  NlHuberArgs *a = args;
  a->rho = NL_P_FLOAT (p, HUBER_RHO);
}

static gboolean
huber_infer (NlInferCtx *c, GError **error)
{
  return el_infer ("HuberLoss", c, error);
}

const NlOpDef nl_op_huber_loss = {
  .name = "HuberLoss",
  .category = "Loss",
  .doc = "Smooth L1: quadratic below rho, linear above, averaged per sample",
  .params = huber_params,
  .n_params = HUBER_N,
  .inputs = inputs,
  .n_inputs = 2,
  .n_outputs = 1,
  .needs = NL_NEEDS_INPUTS,
  .is_loss = TRUE,
  .args_size = sizeof (NlHuberArgs),
  .resolve_args = huber_resolve,
  .infer_shape = huber_infer,
};
