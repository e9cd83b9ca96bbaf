/* conv2d.c — Conv2D's definition (kernels: ops/cpu/conv2d.c,
 * ops/cuda/conv2d.cu; the geometry: ops/nl-conv2d.h). */
#include "ops/nl-conv2d.h"

static const NlParamSpec params[CONV_N] = {
  [CONV_CHANNELS] = { "channels", NL_PARAM_INT, 0, 1, 1e18, NULL, TRUE,
                      "Number of output channels (filters)" },
  [CONV_KERNEL] = { "kernel", NL_PARAM_INT2, 0, 1, 1e18, NULL, TRUE,
                    "Kernel size (h, w)" },
  [CONV_STRIDE] = { "stride", NL_PARAM_INT2, 1, 1, 1e18, NULL, FALSE,
                    "Step between kernel positions (h, w)" },
  [CONV_PADDING] = { "padding", NL_PARAM_INT2, 0, 0, 1e18, NULL, FALSE,
                     "Zero padding on each side (h, w)" },
  [CONV_DILATION] = { "dilation", NL_PARAM_INT2, 1, 1, 1e18, NULL, FALSE,
                      "Spacing between kernel taps (h, w)" },
  [CONV_GROUPS] = { "groups", NL_PARAM_INT, 1, 1, 1e18, NULL, FALSE,
                    "Split channels into this many independent groups" },
  [CONV_USE_BIAS] = { "use_bias", NL_PARAM_BOOL, 1, 0, 1, NULL, FALSE,
                      "Add a learnable bias to each output channel" },
  [CONV_IN_CHANNELS] = { "in_channels", NL_PARAM_INT, 0, 0, 1e18, NULL, FALSE,
                         "Number of input channels; 0 infers it from the data" },
};

typedef NlConv2dGeom Geom;

static void
resolve (const NlParamValue *p, void *args)
{
  NlConv2dArgs *a = args;
  a->channels = NL_P_INT (p, CONV_CHANNELS);
  for (int i = 0; i < 2; i++)
    {
      a->kernel[i] = NL_P_V (p, CONV_KERNEL, i);
      a->stride[i] = NL_P_V (p, CONV_STRIDE, i);
      a->padding[i] = NL_P_V (p, CONV_PADDING, i);
      a->dilation[i] = NL_P_V (p, CONV_DILATION, i);
    }
  a->groups = NL_P_INT (p, CONV_GROUPS);
  a->in_channels = NL_P_INT (p, CONV_IN_CHANNELS);
  a->use_bias = NL_P_BOOL (p, CONV_USE_BIAS);
}

static gboolean
infer (NlInferCtx *c, GError **error)
{
  const NlShape *in = &c->in[0];
  NlConv2dArgs a;
  int64_t groups, channels, want;
  char buf[96];
  Geom g;

  resolve (c->p, &a);
  groups = a.groups;
  channels = a.channels;
  want = a.in_channels;

  if (in->ndim != 4)
    return nl_op_shape_error (error, "Conv2D needs a 4-D input (N, C, H, W) but got %s, which has %d axes",
                              nl_shape_format (in, buf, sizeof buf), in->ndim);
  if (want > 0 && want != in->d[1])
    return nl_op_shape_error (error,
                              "Conv2D expects in_channels %" G_GINT64_FORMAT " from its input %s"
                              " but in_channels is set to %" G_GINT64_FORMAT,
                              in->d[1], nl_shape_format (in, buf, sizeof buf), want);
  if (in->d[1] % groups != 0)
    return nl_op_shape_error (error,
                              "Conv2D has %" G_GINT64_FORMAT " input channels, which cannot be split"
                              " into %" G_GINT64_FORMAT " groups",
                              in->d[1], groups);
  if (channels % groups != 0)
    {
      /* a parameter conflict, not the input's fault */
      g_set_error (error, NL_OP_ERROR, NL_OP_ERROR_PARAM,
                   "Conv2D channels %" G_GINT64_FORMAT " cannot be split into %" G_GINT64_FORMAT " groups",
                   channels, groups);
      return FALSE;
    }
  for (int i = 0; i < 2; i++)
    {
      int64_t size = in->d[2 + i], k = a.kernel[i], pad = a.padding[i], d = a.dilation[i];
      if (nl_conv2d_out_span (size, k, a.stride[i], pad, d) < 0)
        return nl_op_shape_error (error,
                                  "Conv2D kernel %s %" G_GINT64_FORMAT " (dilation %" G_GINT64_FORMAT
                                  ", covering %" G_GINT64_FORMAT ") is larger than the input %s %"
                                  G_GINT64_FORMAT " plus padding 2*%" G_GINT64_FORMAT,
                                  i == 0 ? "height" : "width", k, d, d * (k - 1) + 1,
                                  i == 0 ? "height" : "width", size, pad);
    }
  nl_conv2d_geom_init (&g, &a, in->d[0], in->d[1], in->d[2], in->d[3]);
  c->weights[0] = nl_shape_of (4, g.o, g.cg, g.kh, g.kw);
  c->weights[1] = a.use_bias ? nl_shape_of (1, g.o) : NL_SHAPE_ABSENT;
  c->out[0] = nl_shape_of (4, g.n, g.o, g.oh, g.ow);
  return TRUE;
}

static const char *const inputs[] = { "data" };
static const char *const weights[] = { "weight", "bias" };
static const NlInitHint weight_init[] = { NL_INIT_XAVIER, NL_INIT_ZEROS };

const NlOpDef nl_op_conv2d = {
  .name = "Conv2D",
  .category = "Convolution",
  .doc = "2-D convolution over NCHW data",
  .params = params,
  .n_params = CONV_N,
  .inputs = inputs,
  .n_inputs = 1,
  .weights = weights,
  .weight_init = weight_init,
  .n_weights = 2,
  .n_outputs = 1,
  .needs = NL_NEEDS_INPUTS | NL_NEEDS_WEIGHTS,
  .args_size = sizeof (NlConv2dArgs),
  .resolve_args = resolve,
  .infer_shape = infer,
  .macs = nl_op_macs_per_weight_row,
};
