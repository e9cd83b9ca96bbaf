/* pool2d.c — the definitions of MaxPool2D, AvgPool2D and GlobalAvgPool2D
 * over NCHW input. Output sizes follow PyTorch: floor/ceil((H + 2p - k) / s)
 * + 1, and in ceil_mode a window that would start in the right padding is
 * dropped (kernels: ops/cpu/pool2d.c, ops/cuda/pool2d.cu). */
#include "ops/nl-pool2d.h"

typedef NlPool2dGeom Geom;

#define POOL_PARAMS                                                                        \
  [POOL_SIZE] = { "pool_size", NL_PARAM_INT2, 2, 1, 1e18, NULL, FALSE,                     \
                  "Window size (h, w)" },                                                  \
  [POOL_STRIDES] = { "strides", NL_PARAM_INT2, 0, 0, 1e18, NULL, FALSE,                    \
                     "Step between windows (h, w); 0 means the pool size" },               \
  [POOL_PADDING] = { "padding", NL_PARAM_INT2, 0, 0, 1e18, NULL, FALSE,                    \
                     "Implicit padding on each side (h, w), at most half the pool size" }, \
  [POOL_CEIL_MODE] = { "ceil_mode", NL_PARAM_BOOL, 0, 0, 1, NULL, FALSE,                   \
                       "Round the output size up, so a partial last window is kept" }

static const NlParamSpec max_params[POOL_COUNT_INCLUDE_PAD] = { POOL_PARAMS };

static const NlParamSpec avg_params[POOL_N] = {
  POOL_PARAMS,
  [POOL_COUNT_INCLUDE_PAD] = { "count_include_pad", NL_PARAM_BOOL, 1, 0, 1, NULL, FALSE,
                               "Divide by the full window size, padding included" },
};

static int64_t
out_size (int64_t in, int64_t k, int64_t s, int64_t p, gboolean ceil_mode)
{
  int64_t span = in + 2 * p - k;
  int64_t o = (ceil_mode ? (span + s - 1) / s : span / s) + 1;
  /* the last window must start inside the input or the left padding */
  if (ceil_mode && (o - 1) * s >= in + p)
    o--;
  return o;
}

static void
max_resolve (const NlParamValue *p, void *args)
{
  NlPool2dArgs *a = args;
  for (int i = 0; i < 2; i++)
    {
      a->pool_size[i] = NL_P_V (p, POOL_SIZE, i);
      a->strides[i] = NL_P_V (p, POOL_STRIDES, i) > 0 ? NL_P_V (p, POOL_STRIDES, i) : a->pool_size[i];
      a->padding[i] = NL_P_V (p, POOL_PADDING, i);
    }
  a->ceil_mode = NL_P_BOOL (p, POOL_CEIL_MODE);
  a->count_include_pad = FALSE;
}

static void
avg_resolve (const NlParamValue *p, void *args)
{
  NlPool2dArgs *a = args;
  max_resolve (p, a);
  a->count_include_pad = NL_P_BOOL (p, POOL_COUNT_INCLUDE_PAD);
}

static gboolean
check_4d (const char *op, const NlShape *s, GError **error)
{
  char buf[96];
  if (s->ndim != 4)
    return nl_op_shape_error (error, "%s needs a 4-D input (N, C, H, W) but got %s", op,
                              nl_shape_format (s, buf, sizeof buf));
  return TRUE;
}

static gboolean
infer_pool (NlInferCtx *c, gboolean is_avg, GError **error)
{
  const char *op = is_avg ? "AvgPool2D" : "MaxPool2D";
  const NlShape *in = &c->in[0];
  NlPool2dArgs a;
  Geom g;
  char buf[96];

  (is_avg ? avg_resolve : max_resolve) (c->p, &a);
  g = nl_pool2d_geom (&a);

  if (!check_4d (op, in, error))
    return FALSE;
  if (g.ph > g.kh / 2 || g.pw > g.kw / 2)
    return nl_op_shape_error (error, "%s padding (%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT
                              ") must be at most half the pool size (%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT ")",
                              op, g.ph, g.pw, g.kh, g.kw);
  if (in->d[2] + 2 * g.ph < g.kh || in->d[3] + 2 * g.pw < g.kw)
    return nl_op_shape_error (error, "%s window %" G_GINT64_FORMAT "x%" G_GINT64_FORMAT
                              " does not fit in the input %s with padding (%" G_GINT64_FORMAT
                              ", %" G_GINT64_FORMAT ")",
                              op, g.kh, g.kw, nl_shape_format (in, buf, sizeof buf), g.ph, g.pw);
  if (!is_avg && in->d[2] * in->d[3] > (1 << 24))
    return nl_op_shape_error (error, "MaxPool2D supports at most 2^24 elements per H x W plane, got %s",
                              nl_shape_format (in, buf, sizeof buf));
  c->out[0] = *in;
  c->out[0].d[2] = out_size (in->d[2], g.kh, g.sh, g.ph, g.ceil_mode);
  c->out[0].d[3] = out_size (in->d[3], g.kw, g.sw, g.pw, g.ceil_mode);
  if (!is_avg)
    c->saved[0] = c->training ? c->out[0] : NL_SHAPE_ABSENT;
  return TRUE;
}

static gboolean
infer_max (NlInferCtx *c, GError **error)
{
  return infer_pool (c, FALSE, error);
}

static gboolean
infer_avg (NlInferCtx *c, GError **error)
{
  return infer_pool (c, TRUE, error);
}

static gboolean
infer_global (NlInferCtx *c, GError **error)
{
  if (!check_4d ("GlobalAvgPool2D", &c->in[0], error))
    return FALSE;
  if (c->in[0].d[2] < 1 || c->in[0].d[3] < 1)
    return nl_op_shape_error (error, "GlobalAvgPool2D needs a non-empty H x W plane");
  c->out[0] = c->in[0];
  c->out[0].d[2] = c->out[0].d[3] = 1;
  return TRUE;
}

static const char *const inputs[] = { "data" };

const NlOpDef nl_op_max_pool2d = {
  .name = "MaxPool2D",
  .category = "Pooling",
  .doc = "Maximum over sliding windows of each channel (NCHW)",
  .params = max_params,
  .n_params = G_N_ELEMENTS (max_params),
  .inputs = inputs,
  .n_inputs = 1,
  .n_saved = 1, /* argmax, training only */
  .n_outputs = 1,
  .needs = NL_NEEDS_NOTHING,
  .args_size = sizeof (NlPool2dArgs),
  .resolve_args = max_resolve,
  .infer_shape = infer_max,
};

const NlOpDef nl_op_avg_pool2d = {
  .name = "AvgPool2D",
  .category = "Pooling",
  .doc = "Mean over sliding windows of each channel (NCHW)",
  .params = avg_params,
  .n_params = POOL_N,
  .inputs = inputs,
  .n_inputs = 1,
  .n_outputs = 1,
  .needs = NL_NEEDS_NOTHING,
  .args_size = sizeof (NlPool2dArgs),
  .resolve_args = avg_resolve,
  .infer_shape = infer_avg,
};

const NlOpDef nl_op_global_avg_pool2d = {
  .name = "GlobalAvgPool2D",
  .category = "Pooling",
  .doc = "Mean of each channel over its whole H x W plane, giving (N, C, 1, 1)",
  .inputs = inputs,
  .n_inputs = 1,
  .n_outputs = 1,
  .needs = NL_NEEDS_NOTHING,
  .infer_shape = infer_global,
};
