/* nl-onnx-export-acts.c — Activation's act_types after softrelu, Clip,
 * PReLU and Shrink as ONNX (nl-onnx-export.c writes the first four act_types). Each is ONNX's own op where
 * opsets 13 to 17 have one, else the chain PyTorch 1.13 writes for it,
 * which the importer fuses back (nl-onnx-import-acts.c): silu as Sigmoid
 * and Mul, mish as Softplus, Tanh and Mul (Mish is opset 18's), hardswish
 * as HardSigmoid and Mul before opset 14, tanhshrink as Tanh and Sub.
 * logsigmoid is -softplus(-x) (Neg, Softplus, Neg) rather than PyTorch's
 * Log(Sigmoid(x)), which gives -inf once sigmoid underflows. */
#include "engine/formats/onnx/nl-onnx-export-private.h"

#include "engine/graph/nl-graph.h"
#include "ops/nl-activation.h"

static Onnx__NodeProto *
node1 (NlOnnxCtx *c, const char *op, const char *name, const char *in, const char *out)
{
  return nl_onnx_builder_node (c->b, op, name, &in, 1, out);
}

static Onnx__NodeProto *
node2 (NlOnnxCtx *c, const char *op, const char *name, const char *a, const char *b, const char *out)
{
  const char *in[2] = { a, b };
  return nl_onnx_builder_node (c->b, op, name, in, 2, out);
}

/* op1(x) -> t, then x op2 t -> the output (silu, hardswish, tanhshrink) */
static void
with_x (NlOnnxCtx *c, const NlOnnxNode *n, const char *op1, const char *op2, gboolean hard)
{
  const char *t = nl_onnx_export_temp (c, n, "t");
  Onnx__NodeProto *first = node1 (c, op1, t, n->in[0], t);
  if (hard)
    nl_onnx_attr_float (c->b, first, "alpha", 1.0f / 6.0f);
  node2 (c, op2, n->gn->id, n->in[0], t, n->out);
}

/* Clip(x, lo, hi), bounds as inputs (opset 11 on) */
static void
clip (NlOnnxCtx *c, const NlOnnxNode *n, float lo, float hi)
{
  const char *in[3] = { n->in[0], nl_onnx_builder_scalar (c->b, nl_onnx_export_temp (c, n, "min"), lo),
                        nl_onnx_builder_scalar (c->b, nl_onnx_export_temp (c, n, "max"), hi) };
  nl_onnx_builder_node (c->b, "Clip", n->gn->id, in, 3, n->out);
}

gboolean
nl_onnx_export_activation_more (NlOnnxCtx *c, const NlOnnxNode *n, int t, GError **error)
{
  const char *a, *b;
  switch (t)
    {
    case ACT_ELU:
      nl_onnx_attr_float (c->b, node1 (c, "Elu", n->gn->id, n->in[0], n->out), "alpha", 1.0f);
      return TRUE;
    case ACT_SELU:
      node1 (c, "Selu", n->gn->id, n->in[0], n->out);
      return TRUE;
    case ACT_SILU:
      with_x (c, n, "Sigmoid", "Mul", FALSE);
      return TRUE;
    case ACT_MISH:
      a = nl_onnx_export_temp (c, n, "softplus");
      b = nl_onnx_export_temp (c, n, "t");
      node1 (c, "Softplus", a, n->in[0], a);
      node1 (c, "Tanh", b, a, b);
      node2 (c, "Mul", n->gn->id, n->in[0], b, n->out);
      return TRUE;
    case ACT_SOFTSIGN:
      node1 (c, "Softsign", n->gn->id, n->in[0], n->out);
      return TRUE;
    case ACT_HARDSIGMOID:
      nl_onnx_attr_float (c->b, node1 (c, "HardSigmoid", n->gn->id, n->in[0], n->out), "alpha", 1.0f / 6.0f);
      return TRUE;
    case ACT_HARDSWISH:
      if (c->opset >= 14)
        node1 (c, "HardSwish", n->gn->id, n->in[0], n->out);
      else
        with_x (c, n, "HardSigmoid", "Mul", TRUE);
      return TRUE;
    case ACT_RELU6:
      clip (c, n, 0.0f, 6.0f);
      return TRUE;
    case ACT_HARDTANH:
      clip (c, n, -1.0f, 1.0f);
      return TRUE;
    case ACT_LOGSIGMOID:
      a = nl_onnx_export_temp (c, n, "neg");
      b = nl_onnx_export_temp (c, n, "softplus");
      node1 (c, "Neg", a, n->in[0], a);
      node1 (c, "Softplus", b, a, b);
      node1 (c, "Neg", n->gn->id, b, n->out);
      return TRUE;
    case ACT_TANHSHRINK:
      with_x (c, n, "Tanh", "Sub", FALSE);
      return TRUE;
    default:
      g_set_error (error, NL_ONNX_ERROR, NL_ONNX_ERROR_UNSUPPORTED, "node '%s' (Activation): act_type %d has no ONNX form",
                   n->gn->id, t);
      return FALSE;
    }
}

gboolean
nl_onnx_export_clip (NlOnnxCtx *c, const NlOnnxNode *n, GError **error)
{
  clip (c, n, NL_P_FLOAT (n->gn->params, P_CLIP_MIN), NL_P_FLOAT (n->gn->params, P_CLIP_MAX));
  return TRUE;
}

/* PReLU as PRelu, its slopes shaped (C, 1, ...) to broadcast over axis 1
 * of the input (ONNX aligns a slope to the input's last axes) */
gboolean
nl_onnx_export_prelu (NlOnnxCtx *c, const NlOnnxNode *n, GError **error)
{
  const NlTensor *t = c->m->weights[NL_MODEL_SLOT (n->gn->net_index, 0)];
  const NlShape *in = &nl_graph_value (c->g, n->gn->in[0])->shape;
  g_autofree char *name = nl_model_weight_name (c->m, n->gn->net_index, 0);
  int64_t dims[NL_MAX_DIMS] = { t->shape[0] };
  const char *ins[2] = { n->in[0], NULL };
  for (int k = 1; k < in->ndim - 1; k++)
    dims[k] = 1;
  ins[1] = nl_onnx_builder_floats (c->b, name, dims, MAX (in->ndim - 1, 1), nl_tensor_f32 (t));
  nl_onnx_builder_node (c->b, "PRelu", n->gn->id, ins, 2, n->out);
  return TRUE;
}

gboolean
nl_onnx_export_shrink (NlOnnxCtx *c, const NlOnnxNode *n, GError **error)
{
  Onnx__NodeProto *node = node1 (c, "Shrink", n->gn->id, n->in[0], n->out);
  nl_onnx_attr_float (c->b, node, "lambd", NL_P_FLOAT (n->gn->params, P_SHRINK_LAMBD));
  nl_onnx_attr_float (c->b, node, "bias", NL_P_FLOAT (n->gn->params, P_SHRINK_BIAS));
  return TRUE;
}
