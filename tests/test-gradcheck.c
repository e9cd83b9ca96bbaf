/* test-gradcheck.c — every operator's backward against finite differences
 * of its own forward.
 *
 * For each case: inputs and weights from fixed seeds, a random projection R
 * of each output, the analytic gradient of L = sum (out * R) from backward
 * (with out_grad = R) and the numeric one from L (summed in double) at
 * x +- h and x +- 2h. Inputs are drawn clear of kinks (ReLU at 0, ties in a
 * max, |pred - label| = 0 for L1) by more than 2h, so the differences of a
 * piecewise-smooth op see one smooth piece. The last test fails when an op,
 * or a choice of an enum parameter, has no case here, so nothing new can
 * skip this check. */
#include <math.h>
#include <string.h>

#include "nl-test-util.h"
#include "ops/nl-op-instance.h"
#include "ops/nl-op-registry.h"

#define MAX_DATA 4
#define MAX_SAMPLES 200 /* elements checked per tensor */
#define DEFAULT_H 2e-2
/* |analytic - numeric| <= TOL * max (FLOOR, |analytic|, |numeric|). The
 * worst seen over every case is about 4e-4 (float32 rounding in forward,
 * amplified by 1 / h where one value moves many outputs, as in Conv2D or a
 * large BatchNorm); a 1 % error in a backward fails. */
#define TOL 3e-3
#define FLOOR 0.1

typedef enum {
  G_UNIFORM,  /* U(-1, 1) */
  G_AWAY0,    /* U(-1, 1) with |x| >= 0.1: clear of a kink at 0 */
  G_DISTINCT, /* distinct values 0.1 apart, shuffled: no max changes hands */
  G_INT,      /* integers 0 .. k - 1 (class labels, Embedding indices) */
  G_BINARY,   /* 0 or 1 */
  G_PROB,     /* U(0.05, 0.95) */
  G_DIST,     /* rows along the last axis that sum to 1 (dense labels) */
} Gen;

typedef struct GradCase GradCase;
/* Runs after the inputs are drawn, to tie one input to another. */
typedef void (*Prep) (NlTensor **in, const NlParamValue *p, const NlOpDef *def, GRand *r);

struct GradCase {
  const char *op;
  const char *what;
  const char *params[16]; /* name, value, ..., NULL */
  const char *in[MAX_DATA]; /* data input shapes, "2x3x5x5" */
  Gen gen[MAX_DATA];
  int k;            /* range of G_INT */
  unsigned nograd;  /* bit i: data input i takes no gradient */
  gboolean predict; /* run in inference mode (default: training) */
  double h;         /* step; 0 = DEFAULT_H */
  int samples;      /* elements checked per tensor; 0 = MAX_SAMPLES */
  Prep prep;
};

/* pred = label + d with d clear of L1's kink at 0 */
static void
prep_l1 (NlTensor **in, const NlParamValue *p, const NlOpDef *def, GRand *r)
{
  float *x = nl_tensor_f32 (in[0]);
  const float *z = nl_tensor_f32 (in[1]);
  for (int64_t i = 0; i < nl_tensor_numel (in[0]); i++)
    {
      float d = (float) g_rand_double_range (r, 0.1, 1.5);
      x[i] = z[i] + (g_rand_boolean (r) ? d : -d);
    }
}

/* pred = label + d, |d| on both sides of rho, clear of it and of 0 */
static void
prep_huber (NlTensor **in, const NlParamValue *p, const NlOpDef *def, GRand *r)
{
  int k = nl_op_param_index (def, "rho");
  double rho = k >= 0 ? p[k].f : 1.0;
  float *x = nl_tensor_f32 (in[0]);
  const float *z = nl_tensor_f32 (in[1]);
  for (int64_t i = 0; i < nl_tensor_numel (in[0]); i++)
    {
      float d = i % 2 ? (float) g_rand_double_range (r, 0.2, 0.8) * rho
                      : (float) g_rand_double_range (r, 1.2 * rho, 1.2 * rho + 1.5);
      x[i] = z[i] + (g_rand_boolean (r) ? d : -d);
    }
}

#define P(...) { __VA_ARGS__, NULL }

static const GradCase cases[] = {
  /* ---- Input: no gradient, only the NULL in_grad is checked ---- */
  { "Input", "plain", .in = { "2x3x4" }, .nograd = 1 },

  /* ---- Dense ---- */
  { "Dense", "2d", P ("units", "4"), { "3x5" } },
  { "Dense", "odd sizes", P ("units", "1"), { "1x7" } },
  { "Dense", "no bias", P ("units", "3", "use_bias", "false"), { "4x6" } },
  { "Dense", "flatten 4d", P ("units", "5"), { "2x3x2x2" } },
  { "Dense", "flatten false 3d", P ("units", "4", "flatten", "false"), { "2x3x5" } },
  { "Dense", "in_units given", P ("units", "3", "in_units", "6"), { "2x2x3" } },
  { "Dense", "flatten false no bias", P ("units", "2", "flatten", "false", "use_bias", "false"), { "3x2x3" } },

  /* ---- Conv2D ---- */
  { "Conv2D", "3x3", P ("channels", "4", "kernel", "3"), { "2x3x6x6" } },
  { "Conv2D", "stride 2 pad 1", P ("channels", "3", "kernel", "3", "stride", "2", "padding", "1"),
    { "1x2x7x5" } },
  { "Conv2D", "pad 2 5x5", P ("channels", "2", "kernel", "5", "padding", "2"), { "2x2x5x6" } },
  { "Conv2D", "dilation 2", P ("channels", "3", "kernel", "3", "dilation", "2", "padding", "2"),
    { "1x2x9x8" } },
  { "Conv2D", "groups 2", P ("channels", "6", "kernel", "3", "groups", "2", "padding", "1"),
    { "2x4x5x5" } },
  { "Conv2D", "depthwise", P ("channels", "3", "kernel", "3", "groups", "3", "padding", "1"),
    { "1x3x6x6" } },
  { "Conv2D", "no bias", P ("channels", "2", "kernel", "3", "use_bias", "false"), { "2x2x5x5" } },
  { "Conv2D", "kernel 3x2", P ("channels", "3", "kernel", "3,2", "stride", "1,2", "padding", "1,0"),
    { "2x2x6x7" } },
  { "Conv2D", "1x1 stride 2 odd", P ("channels", "2", "kernel", "1", "stride", "2"), { "3x5x7x7" } },
  { "Conv2D", "1x1 stride 1 (no im2col)", P ("channels", "3", "kernel", "1"), { "2x4x3x5" } },
  { "Conv2D", "in_channels given", P ("channels", "2", "kernel", "2", "in_channels", "3"), { "2x3x4x4" } },
  { "Conv2D", "kernel 1x3 dilation 2x1",
    P ("channels", "4", "kernel", "1,3", "dilation", "2,1", "groups", "2", "use_bias", "false"),
    { "1x2x5x7" } },

  /* ---- MaxPool2D (distinct inputs: the argmax never flips) ---- */
  { "MaxPool2D", "2x2", P ("pool_size", "2"), { "2x3x6x6" }, { G_DISTINCT } },
  { "MaxPool2D", "3 stride 2", P ("pool_size", "3", "strides", "2"), { "1x2x7x7" }, { G_DISTINCT } },
  { "MaxPool2D", "3 stride 1 pad 1", P ("pool_size", "3", "strides", "1", "padding", "1"), { "1x2x5x5" },
    { G_DISTINCT } },
  { "MaxPool2D", "ceil mode", P ("pool_size", "2", "ceil_mode", "true"), { "1x2x5x5" }, { G_DISTINCT } },
  { "MaxPool2D", "ceil pad 3 stride 2",
    P ("pool_size", "3", "strides", "2", "padding", "1", "ceil_mode", "true"), { "2x1x6x7" }, { G_DISTINCT } },
  { "MaxPool2D", "2x3 stride 1x2", P ("pool_size", "2,3", "strides", "1,2"), { "1x3x5x7" }, { G_DISTINCT } },
  { "MaxPool2D", "large", P ("pool_size", "3", "strides", "2", "padding", "1"), { "2x4x64x64" },
    { G_DISTINCT }, .samples = 8 },

  /* ---- AvgPool2D ---- */
  { "AvgPool2D", "2x2", P ("pool_size", "2"), { "2x3x6x6" } },
  { "AvgPool2D", "3 stride 2", P ("pool_size", "3", "strides", "2"), { "1x2x7x7" } },
  { "AvgPool2D", "pad 1 include pad", P ("pool_size", "3", "strides", "1", "padding", "1"), { "1x2x5x5" } },
  { "AvgPool2D", "pad 1 exclude pad",
    P ("pool_size", "3", "strides", "2", "padding", "1", "count_include_pad", "false"), { "2x2x5x6" } },
  { "AvgPool2D", "ceil mode exclude pad",
    P ("pool_size", "3", "strides", "2", "padding", "1", "ceil_mode", "true", "count_include_pad", "false"),
    { "1x2x6x6" } },
  { "AvgPool2D", "ceil mode", P ("pool_size", "2", "ceil_mode", "true"), { "1x2x5x5" } },
  { "AvgPool2D", "2x3 stride 1x2", P ("pool_size", "2,3", "strides", "1,2"), { "1x3x5x7" } },
  { "AvgPool2D", "large", P ("pool_size", "3", "strides", "2", "padding", "1", "count_include_pad", "false"),
    { "2x4x64x64" }, .samples = 8 },

  /* ---- GlobalAvgPool2D ---- */
  { "GlobalAvgPool2D", "4x5", .in = { "2x3x4x5" } },
  { "GlobalAvgPool2D", "1x1 plane", .in = { "3x2x1x1" } },
  { "GlobalAvgPool2D", "odd", .in = { "1x1x3x3" } },
  { "GlobalAvgPool2D", "large", .in = { "2x4x65x64" }, .samples = 8 },

  /* ---- BatchNorm ---- */
  { "BatchNorm", "training nchw", .in = { "2x3x4x4" } },
  { "BatchNorm", "training 2d", .in = { "5x4" } },
  { "BatchNorm", "training odd", .in = { "3x1x3x5" } },
  { "BatchNorm", "training no center", P ("center", "false"), { "4x3x2x3" } },
  { "BatchNorm", "training no scale", P ("scale", "false"), { "2x2x3x3" } },
  { "BatchNorm", "training neither", P ("center", "false", "scale", "false"), { "6x3" } },
  { "BatchNorm", "training global stats", P ("use_global_stats", "true"), { "2x3x3x3" } },
  { "BatchNorm", "training large", .in = { "2x64x16x17" }, .samples = 8 },
  { "BatchNorm", "predict nchw", .in = { "2x3x4x4" }, .predict = TRUE },
  { "BatchNorm", "predict 2d", .in = { "3x5" }, .predict = TRUE },

  /* ---- LayerNorm ---- */
  { "LayerNorm", "2d", .in = { "3x5" } },
  { "LayerNorm", "3d", .in = { "2x3x4" } },
  { "LayerNorm", "odd", .in = { "1x7" } },
  { "LayerNorm", "predict", .in = { "4x6" }, .predict = TRUE },
  { "LayerNorm", "no center", P ("center", "false"), { "3x4" } },
  { "LayerNorm", "no scale", P ("scale", "false"), { "2x5" } },
  { "LayerNorm", "neither", P ("center", "false", "scale", "false"), { "2x3x3" } },
  { "LayerNorm", "large", .in = { "65x512" }, .samples = 8 },

  /* ---- Dropout (mask fixed by seed and step) ---- */
  { "Dropout", "training 0.5", P ("rate", "0.5"), { "2x3x4x4" } },
  { "Dropout", "training 0.2 odd", P ("rate", "0.2"), { "3x7" } },
  { "Dropout", "predict", P ("rate", "0.5"), { "3x5" }, .predict = TRUE },
  { "Dropout", "training large", P ("rate", "0.3"), { "2x20001" }, .samples = 8 },

  /* ---- Activation ---- */
  { "Activation", "relu", P ("act_type", "relu"), { "3x7" }, { G_AWAY0 } },
  { "Activation", "sigmoid", P ("act_type", "sigmoid"), { "2x3x4" } },
  { "Activation", "tanh", P ("act_type", "tanh"), { "2x3x4" } },
  { "Activation", "softrelu", P ("act_type", "softrelu"), { "5x3" } },
  /* large enough for the OpenMP paths */
  { "Activation", "relu large", P ("act_type", "relu"), { "4x9001" }, { G_AWAY0 }, .samples = 8 },
  { "Activation", "sigmoid large", P ("act_type", "sigmoid"), { "3x3001" }, .samples = 8 },

  /* ---- LeakyReLU ---- */
  { "LeakyReLU", "default alpha", .in = { "3x7" }, .gen = { G_AWAY0 } },
  { "LeakyReLU", "alpha 0.3", P ("alpha", "0.3"), { "2x3x2x2" }, { G_AWAY0 } },
  { "LeakyReLU", "alpha 0 large", P ("alpha", "0"), { "2x20000" }, { G_AWAY0 }, .samples = 8 },

  /* ---- GELU ---- */
  { "GELU", "erf", P ("approximation", "erf"), { "3x7" } },
  { "GELU", "tanh", P ("approximation", "tanh"), { "2x3x4" } },
  { "GELU", "erf large", P ("approximation", "erf"), { "2x3x40x40" }, .samples = 8 },

  /* ---- Structure ---- */
  { "Flatten", "4d", .in = { "2x3x4x5" } },
  { "Flatten", "2d", .in = { "3x7" } },
  { "Flatten", "large", .in = { "2x3x80x80" }, .samples = 8 },
  { "Reshape", "keep and infer", P ("shape", "[0, -1]"), { "2x3x4" } },
  { "Reshape", "explicit", P ("shape", "[3, 2, 2, 1]"), { "2x6" } },
  { "Reshape", "large", P ("shape", "[-1, 100]"), { "4x10000" }, .samples = 8 },
  { "Concat", "3 inputs dim 1", P ("dim", "1"), { "2x3x4", "2x2x4", "2x1x4" } },
  { "Concat", "3 inputs dim 2", P ("dim", "2"), { "2x3x1", "2x3x4", "2x3x2" } },
  { "Concat", "2 inputs dim -1", P ("dim", "-1"), { "3x2", "3x5" } },
  { "Concat", "dim 0", P ("dim", "0"), { "1x3", "2x3" } },
  { "Concat", "large", P ("dim", "1"), { "4x5000", "4x5001" }, .samples = 8 },
  { "Add", "3 inputs", .in = { "2x3x4", "2x3x4", "2x3x4" } },
  { "Add", "2 inputs", .in = { "5x3", "5x3" } },
  { "Add", "3 inputs large", .in = { "33000", "33000", "33000" }, .samples = 8 },

  /* ---- Softmax / LogSoftmax ---- */
  { "Softmax", "axis -1", P ("axis", "-1"), { "3x5" } },
  { "Softmax", "axis 0", P ("axis", "0"), { "3x5" } },
  { "Softmax", "axis 1 of 3d", P ("axis", "1"), { "2x3x4" } },
  { "Softmax", "axis -1 of 3d", .in = { "2x3x4" } },
  { "Softmax", "large", .in = { "40x111" }, .samples = 8 },
  { "Softmax", "large axis 0", P ("axis", "0"), { "111x40" }, .samples = 8 },
  { "LogSoftmax", "axis -1", P ("axis", "-1"), { "3x5" } },
  { "LogSoftmax", "axis 0", P ("axis", "0"), { "3x5" } },
  { "LogSoftmax", "axis 1 of 3d", P ("axis", "1"), { "2x3x4" } },
  { "LogSoftmax", "large", .in = { "40x111" }, .samples = 8 },

  /* ---- Embedding (indices take no gradient; repeats scatter-add) ---- */
  { "Embedding", "2d indices", P ("input_dim", "5", "output_dim", "4"), { "2x4" }, { G_INT }, .k = 5,
    .nograd = 1 },
  { "Embedding", "1d indices", P ("input_dim", "7", "output_dim", "3"), { "6" }, { G_INT }, .k = 7,
    .nograd = 1 },
  { "Embedding", "large", P ("input_dim", "50", "output_dim", "400"), { "101" }, { G_INT }, .k = 50,
    .nograd = 1, .samples = 8 },

  /* ---- Losses (the label takes no gradient) ---- */
  { "SoftmaxCrossEntropy", "sparse", .in = { "4x5", "4" }, .gen = { G_UNIFORM, G_INT }, .k = 5, .nograd = 2 },
  { "SoftmaxCrossEntropy", "sparse trailing 1", .in = { "3x7", "3x1" }, .gen = { G_UNIFORM, G_INT }, .k = 7,
    .nograd = 2 },
  { "SoftmaxCrossEntropy", "sparse 3d", .in = { "2x3x4", "2x3" }, .gen = { G_UNIFORM, G_INT }, .k = 4,
    .nograd = 2 },
  { "SoftmaxCrossEntropy", "dense", P ("sparse_label", "false"), { "4x5", "4x5" }, { G_UNIFORM, G_DIST },
    .nograd = 2 },
  { "SoftmaxCrossEntropy", "from logits sparse", P ("from_logits", "true"), { "3x4", "3" },
    { G_UNIFORM, G_INT }, .k = 4, .nograd = 2 },
  { "SoftmaxCrossEntropy", "from logits dense", P ("from_logits", "true", "sparse_label", "false"),
    { "3x4", "3x4" }, { G_UNIFORM, G_DIST }, .nograd = 2 },
  { "SoftmaxCrossEntropy", "large", .in = { "64x130", "64" }, .gen = { G_UNIFORM, G_INT }, .k = 130,
    .nograd = 2, .samples = 8 },
  { "SigmoidBinaryCrossEntropy", "0/1 labels", .in = { "4x3", "4x3" }, .gen = { G_UNIFORM, G_BINARY },
    .nograd = 2 },
  { "SigmoidBinaryCrossEntropy", "soft labels", .in = { "3x5", "3x5" }, .gen = { G_UNIFORM, G_PROB },
    .nograd = 2 },
  { "SigmoidBinaryCrossEntropy", "from sigmoid", P ("from_sigmoid", "true"), { "4x3", "4x3" },
    { G_PROB, G_BINARY }, .nograd = 2, .h = 1e-3 },
  { "SigmoidBinaryCrossEntropy", "1d", .in = { "5", "5" }, .gen = { G_UNIFORM, G_BINARY }, .nograd = 2 },
  { "SigmoidBinaryCrossEntropy", "large", .in = { "8x1100", "8x1100" }, .gen = { G_UNIFORM, G_BINARY },
    .nograd = 2, .samples = 8 },
  { "L2Loss", "2d", .in = { "4x3", "4x3" }, .nograd = 2 },
  { "L2Loss", "4d", .in = { "2x3x2x2", "2x3x2x2" }, .nograd = 2 },
  { "L2Loss", "large", .in = { "8x1100", "8x1100" }, .nograd = 2, .samples = 8 },
  { "L1Loss", "2d", .in = { "4x3", "4x3" }, .nograd = 2, .prep = prep_l1 },
  { "L1Loss", "1d", .in = { "5", "5" }, .nograd = 2, .prep = prep_l1 },
  { "L1Loss", "large", .in = { "8x1100", "8x1100" }, .nograd = 2, .prep = prep_l1, .samples = 8 },
  { "HuberLoss", "rho 1", .in = { "4x6", "4x6" }, .nograd = 2, .prep = prep_huber },
  { "HuberLoss", "rho 0.5", P ("rho", "0.5"), { "3x4", "3x4" }, .nograd = 2, .prep = prep_huber },
  { "HuberLoss", "large", .in = { "8x1100", "8x1100" }, .nograd = 2, .prep = prep_huber, .samples = 8 },
};

/* ---- the checker ---- */

typedef struct {
  int checked;     /* elements compared */
  int mismatches;
  double worst;    /* largest |a - n| / max (FLOOR, |a|, |n|) */
  char worst_at[160];
} Report;

static void
fill_uniform (NlTensor *t, GRand *r, double lo, double hi)
{
  float *p = nl_tensor_f32 (t);
  for (int64_t i = 0; i < nl_tensor_numel (t); i++)
    p[i] = (float) g_rand_double_range (r, lo, hi);
}

static void
generate (NlTensor *t, Gen gen, int k, GRand *r)
{
  float *p = nl_tensor_f32 (t);
  int64_t n = nl_tensor_numel (t);

  switch (gen)
    {
    case G_UNIFORM:
      fill_uniform (t, r, -1, 1);
      break;
    case G_AWAY0:
      for (int64_t i = 0; i < n; i++)
        {
          float m = (float) g_rand_double_range (r, 0.1, 1);
          p[i] = g_rand_boolean (r) ? m : -m;
        }
      break;
    case G_DISTINCT:
      for (int64_t i = 0; i < n; i++)
        p[i] = (float) ((double) i - n / 2) * 0.1f;
      for (int64_t i = n - 1; i > 0; i--)
        {
          int64_t j = g_rand_int_range (r, 0, (gint32) i + 1);
          float tmp = p[i];
          p[i] = p[j];
          p[j] = tmp;
        }
      break;
    case G_INT:
      g_assert_cmpint (k, >, 0);
      for (int64_t i = 0; i < n; i++)
        p[i] = (float) g_rand_int_range (r, 0, k);
      break;
    case G_BINARY:
      for (int64_t i = 0; i < n; i++)
        p[i] = g_rand_boolean (r) ? 1.0f : 0.0f;
      break;
    case G_PROB:
      fill_uniform (t, r, 0.05, 0.95);
      break;
    case G_DIST:
      {
        int64_t c = t->shape[t->ndim - 1];
        fill_uniform (t, r, 0.05, 1);
        for (int64_t row = 0; row < n / c; row++)
          {
            double s = 0;
            for (int64_t j = 0; j < c; j++)
              s += p[row * c + j];
            for (int64_t j = 0; j < c; j++)
              p[row * c + j] = (float) (p[row * c + j] / s);
          }
      }
      break;
    }
}

/* L = sum over outputs of out * R, in double. */
static double
objective (NlOpInstance *inst, NlTensor **R)
{
  GError *error = NULL;
  double s = 0;

  nl_test_ok_or_die (nl_op_instance_forward (inst, &error), error, "forward");
  for (int o = 0; o < inst->def->n_outputs; o++)
    {
      const float *y = nl_tensor_f32 (inst->out[o]), *r = nl_tensor_f32 (R[o]);
      for (int64_t i = 0; i < nl_tensor_numel (R[o]); i++)
        s += (double) y[i] * r[i];
    }
  return s;
}

/* dL/dx[j] by the five-point stencil (8 (L(x+h) - L(x-h)) - (L(x+2h) -
 * L(x-2h))) / 12h: its truncation error is O(h^4), so h can stay large
 * enough that float32 rounding in forward is not amplified much. Each
 * difference is divided by the step the floats actually took. */
static double
numeric_grad (NlOpInstance *inst, NlTensor **R, float *x, int64_t j, double h)
{
  float x0 = x[j];
  double d[2];

  for (int k = 0; k < 2; k++)
    {
      float xp = (float) (x0 + (k + 1) * h), xm = (float) (x0 - (k + 1) * h);
      double lp, lm;
      x[j] = xp;
      lp = objective (inst, R);
      x[j] = xm;
      lm = objective (inst, R);
      d[k] = (lp - lm) / ((double) xp - (double) xm); /* central difference with step (k + 1) h */
    }
  x[j] = x0;
  return (4 * d[0] - d[1]) / 3;
}

static void
run_backward (NlOpInstance *inst, NlTensor **R)
{
  GError *error = NULL;

  nl_test_ok_or_die (nl_op_instance_forward (inst, &error), error, "forward");
  for (int o = 0; o < inst->def->n_outputs; o++)
    memcpy (nl_tensor_f32 (inst->out_grad[o]), nl_tensor_f32 (R[o]), nl_tensor_numel (R[o]) * sizeof (float));
  /* NaN everywhere first: backward must overwrite every element (grad req "write"). */
  for (int i = 0; i < inst->n_in; i++)
    if (inst->in_grad[i])
      nl_tensor_fill (inst->in_grad[i], NAN);
  nl_test_ok_or_die (nl_op_instance_backward (inst, &error), error, "backward");
}

static char *
tensor_name (const NlOpInstance *inst, int i)
{
  const NlOpDef *def = inst->def;
  if (i >= inst->n_data)
    return g_strdup (def->weights[i - inst->n_data]);
  if (def->variadic)
    return g_strdup_printf ("%s%d", def->inputs[0], i);
  return g_strdup (i < def->n_inputs ? def->inputs[i] : "?");
}

/* Compares backward with differences of forward for one op and case;
 * prints each mismatch (at most a few per tensor) and counts them. */
static Report
check_case (const NlOpDef *def, const GradCase *gc)
{
  g_autoptr (GError) error = NULL;
  NlShape shapes[MAX_DATA];
  int n_data = 0;
  NlOpInstance *inst;
  NlTensor *R[4] = { 0 };
  NlTensor **analytic;
  GRand *r = g_rand_new_with_seed (g_str_hash (gc->op) ^ (g_str_hash (gc->what) * 31u));
  double h0 = gc->h > 0 ? gc->h : DEFAULT_H;
  int64_t max_samples = gc->samples > 0 ? gc->samples : MAX_SAMPLES;
  Report rep = { 0 };

  while (n_data < MAX_DATA && gc->in[n_data])
    {
      shapes[n_data] = nl_test_parse_shape (gc->in[n_data]);
      n_data++;
    }
  inst = nl_op_instance_new (def, gc->params, n_data, shapes, !gc->predict, &error);
  if (!inst)
    {
      g_printerr ("GRADCHECK %s / %s: cannot make the op: %s\n", gc->op, gc->what, error->message);
      g_rand_free (r);
      rep.mismatches = 1;
      return rep;
    }

  for (int i = 0; i < n_data; i++)
    generate (inst->in[i], gc->gen[i], gc->k, r);
  for (int i = n_data; i < inst->n_in; i++)
    if (inst->in[i])
      fill_uniform (inst->in[i], r, -1, 1);
  /* Running statistics are used in predict mode (and by a frozen
   * BatchNorm): make them non-trivial, variances positive. */
  for (int i = 0; i < def->n_aux; i++)
    if (inst->aux[i])
      fill_uniform (inst->aux[i], r, 0.5, 1.5);
  if (gc->prep)
    gc->prep (inst->in, inst->p, def, r);

  /* Which inputs take a gradient is part of the op's contract. */
  for (int i = 0; i < n_data; i++)
    {
      gboolean want = !(gc->nograd & (1u << i));
      if ((inst->in_grad[i] != NULL) != want)
        {
          g_printerr ("GRADCHECK %s / %s: data input %d should %stake a gradient\n", gc->op, gc->what, i,
                      want ? "" : "not ");
          rep.mismatches++;
        }
    }
  for (int i = n_data; i < inst->n_in; i++)
    g_assert_true ((inst->in_grad[i] != NULL) == (inst->in[i] != NULL));

  if (!def->backward)
    {
      /* Input: nothing flows back; forward still runs. */
      for (int i = 0; i < inst->n_in; i++)
        g_assert_null (inst->in_grad[i]);
      g_assert_cmpint (inst->n_in, ==, n_data);
      nl_test_ok_or_die (nl_op_instance_forward (inst, &error), error, "forward");
      nl_op_instance_free (inst);
      g_rand_free (r);
      return rep;
    }

  for (int o = 0; o < def->n_outputs; o++)
    {
      NlShape s = nl_tensor_get_shape (inst->out[o]);
      R[o] = nl_tensor_new_shape (NL_DTYPE_F32, &s);
      fill_uniform (R[o], r, -1, 1);
    }

  run_backward (inst, R);
  analytic = g_new0 (NlTensor *, inst->n_in);
  for (int i = 0; i < inst->n_in; i++)
    if (inst->in_grad[i])
      analytic[i] = nl_tensor_copy (inst->in_grad[i]);
  /* A second pass gives the same numbers: no hidden accumulation in state. */
  run_backward (inst, R);
  for (int i = 0; i < inst->n_in; i++)
    if (analytic[i])
      {
        g_autofree char *name = tensor_name (inst, i);
        const float *a = nl_tensor_f32 (analytic[i]), *b = nl_tensor_f32 (inst->in_grad[i]);
        for (int64_t j = 0; j < nl_tensor_numel (analytic[i]); j++)
          {
            if (!isfinite (a[j]))
              {
                g_printerr ("GRADCHECK %s / %s: d%s[%" G_GINT64_FORMAT "] = %g: backward left it unwritten "
                            "or not finite\n", gc->op, gc->what, name, j, a[j]);
                rep.mismatches++;
                break;
              }
            if (!(fabsf (a[j] - b[j]) <= 1e-6f * MAX (1.0f, fabsf (a[j]))))
              {
                g_printerr ("GRADCHECK %s / %s: d%s[%" G_GINT64_FORMAT "] is %.9g on one backward and %.9g on "
                            "the next\n", gc->op, gc->what, name, j, a[j], b[j]);
                rep.mismatches++;
                break;
              }
          }
      }

  for (int i = 0; i < inst->n_in; i++)
    {
      g_autofree char *name = NULL;
      float *x;
      int64_t n, n_samples;
      int printed = 0;

      if (!analytic[i])
        continue;
      name = tensor_name (inst, i);
      x = nl_tensor_f32 (inst->in[i]);
      n = nl_tensor_numel (inst->in[i]);
      n_samples = MIN (n, max_samples);
      for (int64_t s = 0; s < n_samples; s++)
        {
          /* all elements of a small tensor; else first, last and a seeded sample */
          int64_t j = n <= max_samples ? s : s == 0 ? 0 : s == 1 ? n - 1 : g_rand_int_range (r, 0, (gint32) n);
          float x0 = x[j];
          double num, ana, err;

          num = numeric_grad (inst, R, x, j, h0);
          x[j] = x0;
          ana = nl_tensor_f32 (analytic[i])[j];
          err = fabs (ana - num) / MAX (FLOOR, MAX (fabs (ana), fabs (num)));
          rep.checked++;
          if (!(err <= rep.worst))
            {
              rep.worst = isnan (err) ? INFINITY : err;
              g_snprintf (rep.worst_at, sizeof rep.worst_at, "d%s[%" G_GINT64_FORMAT "] analytic %.7g numeric %.7g",
                          name, j, ana, num);
            }
          if (!(err <= TOL))
            {
              rep.mismatches++;
              if (printed++ < 5)
                g_printerr ("GRADCHECK %s / %s: d%s[%" G_GINT64_FORMAT "] analytic %.7g numeric %.7g\n", gc->op,
                            gc->what, name, j, ana, num);
            }
        }
      if (printed > 5)
        g_printerr ("GRADCHECK %s / %s: d%s: %d mismatches in all\n", gc->op, gc->what, name, printed);
    }

  for (int i = 0; i < inst->n_in; i++)
    if (analytic[i])
      nl_tensor_unref (analytic[i]);
  g_free (analytic);
  for (int o = 0; o < def->n_outputs; o++)
    nl_tensor_unref (R[o]);
  nl_op_instance_free (inst);
  g_rand_free (r);
  return rep;
}

/* ---- one test per op ---- */

static void
test_op (gconstpointer data)
{
  const char *op = data;
  const NlOpDef *def = nl_op_lookup (op);
  gint64 t0 = g_get_monotonic_time ();
  int n_cases = 0, checked = 0, mismatches = 0;
  double worst = 0;

  if (!def)
    {
      g_test_fail_printf ("%s is not registered", op);
      return;
    }
  for (guint c = 0; c < G_N_ELEMENTS (cases); c++)
    {
      Report rep;
      if (strcmp (cases[c].op, op) != 0)
        continue;
      rep = check_case (def, &cases[c]);
      g_test_message ("  %s / %s: %d elements, worst %.2g at %s", op, cases[c].what, rep.checked, rep.worst,
                      rep.worst_at);
      n_cases++;
      checked += rep.checked;
      worst = MAX (worst, rep.worst);
      if (rep.mismatches)
        {
          g_test_fail_printf ("%s / %s: %d of %d gradient elements wrong", op, cases[c].what, rep.mismatches,
                              rep.checked);
          mismatches += rep.mismatches;
        }
    }
  g_test_message ("%s: %d cases, %d elements, worst relative error %.2g, %.0f ms", op, n_cases, checked, worst,
                  (g_get_monotonic_time () - t0) / 1000.0);
}

/* Whether some case of the op runs with param = the enum's choice j
 * (a case that leaves the parameter out runs its default). */
static gboolean
enum_choice_covered (const NlOpDef *def, const NlParamSpec *s, int j)
{
  for (guint c = 0; c < G_N_ELEMENTS (cases); c++)
    if (strcmp (cases[c].op, def->name) == 0 && nl_test_params_choose (cases[c].params, s, j))
      return TRUE;
  return FALSE;
}

/* Every op has a case, every op with a backward a numeric check, and every
 * choice of an enum parameter (each activation type) a case; every case
 * names a real op. */
static void
test_coverage (void)
{
  for (guint c = 0; c < G_N_ELEMENTS (cases); c++)
    if (!nl_op_lookup (cases[c].op))
      g_test_fail_printf ("case '%s / %s' names no registered op", cases[c].op, cases[c].what);
  for (int id = 0; id < NL_OP_COUNT; id++)
    {
      const NlOpDef *def = nl_op_get ((NlOpId) id);
      gboolean found = FALSE;

      if (!def)
        {
          g_test_fail_printf ("op #%d of ops/nl-op-list.h is not linked in, so it has no gradient check", id);
          continue;
        }
      for (guint c = 0; c < G_N_ELEMENTS (cases); c++)
        found = found || strcmp (cases[c].op, def->name) == 0;
      if (!found)
        g_test_fail_printf ("%s has no gradient check case in tests/test-gradcheck.c", def->name);
      if (!def->backward && strcmp (def->name, "Input") != 0)
        g_test_fail_printf ("%s has no backward", def->name);
      for (int i = 0; i < def->n_params; i++)
        if (def->params[i].type == NL_PARAM_ENUM)
          for (int j = 0; def->params[i].enum_values[j]; j++)
            if (!enum_choice_covered (def, &def->params[i], j))
              g_test_fail_printf ("%s: no gradient check case with %s = %s", def->name, def->params[i].name,
                                  def->params[i].enum_values[j]);
    }
}

/* ---- the checker can fail: a made-up op with planted bugs ---- */

typedef enum { CUBE_RIGHT, CUBE_WRONG, CUBE_ACCUMULATES, CUBE_SKIPS } CubeMode;
static CubeMode cube_mode;

static gboolean
cube_infer (NlInferCtx *c, GError **error)
{
  c->out[0] = c->in[0];
  return TRUE;
}

static gboolean
cube_forward (NlOpCtx *c, GError **error)
{
  const float *x = nl_tensor_f32 (c->in[0]);
  float *y = nl_tensor_f32 (c->out[0]);
  for (int64_t i = 0; i < nl_tensor_numel (c->in[0]); i++)
    y[i] = x[i] * x[i] * x[i];
  return TRUE;
}

static gboolean
cube_backward (NlOpCtx *c, GError **error)
{
  const float *x = nl_tensor_f32 (c->in[0]), *dy = nl_tensor_f32 (c->out_grad[0]);
  float *dx = nl_tensor_f32 (c->in_grad[0]);
  int64_t n = nl_tensor_numel (c->in[0]);
  for (int64_t i = 0; i < n; i++)
    switch (cube_mode)
      {
      case CUBE_RIGHT:
        dx[i] = 3 * x[i] * x[i] * dy[i];
        break;
      case CUBE_WRONG: /* off by 1 % */
        dx[i] = 3.03f * x[i] * x[i] * dy[i];
        break;
      case CUBE_ACCUMULATES:
        dx[i] += 3 * x[i] * x[i] * dy[i];
        break;
      case CUBE_SKIPS:
        if (i != n - 1)
          dx[i] = 3 * x[i] * x[i] * dy[i];
        break;
      }
  return TRUE;
}

static const char *const cube_inputs[] = { "data" };
static const NlOpDef cube_def = {
  .name = "Cube", .category = "Activation", .doc = "x^3, for testing the checker",
  .inputs = cube_inputs, .n_inputs = 1, .n_outputs = 1,
  .infer_shape = cube_infer, .forward = cube_forward, .backward = cube_backward,
};

static void
test_self (void)
{
  /* 300 elements: more than MAX_SAMPLES, so sampling is exercised and the
   * last element (which CUBE_SKIPS leaves) must be among them. */
  const GradCase gc = { "Cube", "self-test", .in = { "3x100" }, .gen = { G_UNIFORM } };
  Report rep;

  cube_mode = CUBE_RIGHT;
  rep = check_case (&cube_def, &gc);
  g_assert_cmpint (rep.mismatches, ==, 0);
  g_assert_cmpint (rep.checked, ==, MAX_SAMPLES);
  g_assert_cmpfloat (rep.worst, <=, TOL);

  g_printerr ("(the mismatches printed next are planted)\n");
  cube_mode = CUBE_WRONG;
  rep = check_case (&cube_def, &gc);
  g_assert_cmpint (rep.mismatches, >, 0);
  cube_mode = CUBE_ACCUMULATES;
  rep = check_case (&cube_def, &gc);
  g_assert_cmpint (rep.mismatches, >, 0);
  cube_mode = CUBE_SKIPS;
  rep = check_case (&cube_def, &gc);
  g_assert_cmpint (rep.mismatches, >, 0);
}

int
main (int argc, char **argv)
{
  g_autoptr (GPtrArray) ops = g_ptr_array_new ();

  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/gradcheck/self-test", test_self);
  for (guint c = 0; c < G_N_ELEMENTS (cases); c++)
    if (!g_ptr_array_find_with_equal_func (ops, cases[c].op, g_str_equal, NULL))
      {
        g_autofree char *path = g_strdup_printf ("/gradcheck/%s", cases[c].op);
        g_ptr_array_add (ops, (gpointer) cases[c].op);
        g_test_add_data_func (path, cases[c].op, test_op);
      }
  g_test_add_func ("/gradcheck/coverage", test_coverage);
  return g_test_run ();
}
