/* test-cuda.c — every op on CUDA against the CPU.
 *
 * Each case of the table runs forward and backward on the CPU (the
 * reference) and on the device from the same inputs; outputs, saved
 * tensors, aux states and input gradients must agree within |cuda - cpu| <=
 * tol * (|cpu| + 0.1 * max (1, max |cpu| of the tensor)): the floor grows
 * with the magnitude, as long sums (weight gradients) are rounded in another
 * order. tol: 1e-4 in float32, 1e-2 with bf16 / fp16 autocast; Dropout masks
 * are bit-identical. Device outputs and gradients start as NaN, so one left
 * unwritten or accumulated into shows. Without a device: the build's claim
 * about CUDA, the table's coverage, and the harness with the CPU standing in
 * for the device, where planted bugs must show. test-cuda-runtime covers the
 * context, the device math and the pool. */
#include <math.h>
#include <string.h>

#include "nl-test-util.h"
#include "ops/cuda/nl-cuda.h"
#include "ops/nl-op-instance.h"
#include "ops/nl-op-registry.h"

#define MAX_DATA 4
#define F32_TOL 1e-4
#define HALF_TOL 1e-2

static NlCudaCtx *cuda; /* NULL: no device here */
static char *cuda_reason;

static gboolean
need_device (void)
{
  return nl_test_need_cuda (cuda, cuda_reason);
}

/* ---- the cases ---- */

typedef enum {
  G_UNIFORM,  /* U(-1, 1) */
  G_WIDE,     /* U(-100, 100): the overflow-safe paths of exp and log */
  G_DISTINCT, /* distinct values 0.1 apart, scrambled: a max has one winner */
  G_INT,      /* integers 0 .. k - 1 (class labels, Embedding indices) */
  G_BINARY,   /* 0 or 1 */
  G_PROB,     /* U(0.05, 0.95) */
  G_DIST,     /* rows along the last axis that sum to 1 (dense labels) */
} Gen;

typedef struct {
  const char *op, *what;
  const char *params[16]; /* name, value, ..., NULL */
  const char *in[MAX_DATA];
  Gen gen[MAX_DATA];
  int k;                  /* range of G_INT */
  gboolean predict;       /* inference mode (default: training) */
  NlPrecision precision;
  double tol;             /* 0: F32_TOL */
} Case;

#define P(...) { __VA_ARGS__, NULL }
#define LBL(k_) .gen = { G_UNIFORM, G_INT }, .k = (k_)
#define BF16 .precision = NL_PRECISION_BF16, .tol = HALF_TOL
#define FP16 .precision = NL_PRECISION_F16, .tol = HALF_TOL

static const Case cases[] = {
  { "Input", "plain", .in = { "2x3x4" } },
  { "Dense", "2d", P ("units", "4"), { "3x5" } },
  { "Dense", "no bias", P ("units", "3", "use_bias", "false"), { "4x6" } },
  { "Dense", "flatten 4d", P ("units", "5"), { "2x3x2x2" } },
  { "Dense", "flatten false 3d", P ("units", "4", "flatten", "false"), { "2x3x5" } },
  { "Dense", "flatten false no bias", P ("units", "2", "flatten", "false", "use_bias", "false"), { "3x2x3" } },
  { "Dense", "large", P ("units", "130"), { "64x300" } },
  { "Dense", "bf16", P ("units", "33"), { "16x70" }, BF16 },
  { "Dense", "fp16 no bias", P ("units", "17", "use_bias", "false"), { "8x2x20" }, FP16 },

  { "Conv2D", "3x3", P ("channels", "4", "kernel", "3"), { "2x3x6x6" } },
  { "Conv2D", "stride 2 pad 1", P ("channels", "3", "kernel", "3", "stride", "2", "padding", "1"), { "1x2x7x5" } },
  { "Conv2D", "pad 2 5x5", P ("channels", "2", "kernel", "5", "padding", "2"), { "2x2x5x6" } },
  { "Conv2D", "dilation 2", P ("channels", "3", "kernel", "3", "dilation", "2", "padding", "2"), { "1x2x9x8" } },
  { "Conv2D", "groups 2", P ("channels", "6", "kernel", "3", "groups", "2", "padding", "1"), { "2x4x5x5" } },
  { "Conv2D", "depthwise", P ("channels", "3", "kernel", "3", "groups", "3", "padding", "1"), { "1x3x6x6" } },
  { "Conv2D", "no bias", P ("channels", "2", "kernel", "3", "use_bias", "false"), { "2x2x5x5" } },
  { "Conv2D", "kernel 3x2", P ("channels", "3", "kernel", "3,2", "stride", "1,2", "padding", "1,0"), { "2x2x6x7" } },
  { "Conv2D", "1x1 stride 2", P ("channels", "2", "kernel", "1", "stride", "2"), { "3x5x7x7" } },
  { "Conv2D", "large", P ("channels", "32", "kernel", "3", "padding", "1"), { "8x16x32x32" } },
  { "Conv2D", "bf16", P ("channels", "8", "kernel", "3", "padding", "1"), { "2x4x9x9" }, BF16 },
  { "Conv2D", "fp16 stride 2 no bias", P ("channels", "8", "kernel", "3", "stride", "2", "use_bias", "false"),
    { "2x8x11x11" }, FP16 },

  { "MaxPool2D", "2x2", P ("pool_size", "2"), { "2x3x6x6" }, { G_DISTINCT } },
  { "MaxPool2D", "3 stride 2", P ("pool_size", "3", "strides", "2"), { "1x2x7x7" }, { G_DISTINCT } },
  { "MaxPool2D", "3 stride 1 pad 1", P ("pool_size", "3", "strides", "1", "padding", "1"), { "1x2x5x5" },
    { G_DISTINCT } },
  { "MaxPool2D", "ceil pad 3 stride 2", P ("pool_size", "3", "strides", "2", "padding", "1", "ceil_mode", "true"),
    { "2x1x6x7" }, { G_DISTINCT } },
  { "MaxPool2D", "2x3 stride 1x2", P ("pool_size", "2,3", "strides", "1,2"), { "1x3x5x7" }, { G_DISTINCT } },
  { "MaxPool2D", "large", P ("pool_size", "3", "strides", "2", "padding", "1"), { "2x4x64x64" }, { G_DISTINCT } },

  { "AvgPool2D", "2x2", P ("pool_size", "2"), { "2x3x6x6" } },
  { "AvgPool2D", "pad 1 include pad", P ("pool_size", "3", "strides", "1", "padding", "1"), { "1x2x5x5" } },
  { "AvgPool2D", "pad 1 exclude pad", P ("pool_size", "3", "strides", "2", "padding", "1", "count_include_pad", "false"),
    { "2x2x5x6" } },
  { "AvgPool2D", "ceil exclude pad",
    P ("pool_size", "3", "strides", "2", "padding", "1", "ceil_mode", "true", "count_include_pad", "false"),
    { "1x2x6x6" } },
  { "AvgPool2D", "ceil include pad", P ("pool_size", "3", "strides", "2", "padding", "1", "ceil_mode", "true"),
    { "1x2x6x6" } },
  { "AvgPool2D", "2x3 stride 1x2", P ("pool_size", "2,3", "strides", "1,2"), { "1x3x5x7" } },

  { "GlobalAvgPool2D", "4x5", .in = { "2x3x4x5" } },
  { "GlobalAvgPool2D", "1x1 plane", .in = { "3x2x1x1" } },
  { "GlobalAvgPool2D", "large", .in = { "2x4x65x64" } },

  { "BatchNorm", "training nchw", .in = { "2x3x4x4" } },
  { "BatchNorm", "training 2d", .in = { "5x4" } },
  { "BatchNorm", "training one sample", .in = { "1x3" } }, /* count 1: the biased variance goes to running_var */
  { "BatchNorm", "training no center", P ("center", "false", "momentum", "0.7"), { "4x3x2x3" } },
  { "BatchNorm", "training no scale", P ("scale", "false", "epsilon", "0.01"), { "2x2x3x3" } },
  { "BatchNorm", "training neither", P ("center", "false", "scale", "false"), { "6x3" } },
  { "BatchNorm", "training global stats", P ("use_global_stats", "true"), { "2x3x3x3" } },
  { "BatchNorm", "training large", .in = { "16x64x16x17" } },
  { "BatchNorm", "predict nchw", .in = { "2x3x4x4" }, .predict = TRUE },
  { "BatchNorm", "predict 2d", .in = { "3x5" }, .predict = TRUE },

  { "LayerNorm", "2d", .in = { "3x5" } },
  { "LayerNorm", "3d", .in = { "2x3x4" } },
  { "LayerNorm", "predict", .in = { "4x6" }, .predict = TRUE },
  { "LayerNorm", "no center", P ("center", "false"), { "3x4" } },
  { "LayerNorm", "neither", P ("center", "false", "scale", "false", "epsilon", "0.001"), { "2x3x3" } },
  { "LayerNorm", "large", .in = { "65x1024" } },

  { "Dropout", "training 0.5", P ("rate", "0.5"), { "2x3x4x4" } },
  { "Dropout", "training 0.2 odd", P ("rate", "0.2"), { "3x7" } },
  { "Dropout", "training rate 0", P ("rate", "0"), { "5x5" } },
  { "Dropout", "training large", P ("rate", "0.3"), { "4x100003" } },
  { "Dropout", "predict", P ("rate", "0.5"), { "3x5" }, .predict = TRUE },

  { "Activation", "relu", P ("act_type", "relu"), { "3x7" } },
  { "Activation", "sigmoid", P ("act_type", "sigmoid"), { "2x3x4" } },
  { "Activation", "tanh", P ("act_type", "tanh"), { "2x3x4" } },
  { "Activation", "softrelu", P ("act_type", "softrelu"), { "5x3" } },
  { "Activation", "sigmoid wide", P ("act_type", "sigmoid"), { "4x999" }, { G_WIDE } },
  { "Activation", "softrelu wide", P ("act_type", "softrelu"), { "4x999" }, { G_WIDE } },
  { "Activation", "relu large", P ("act_type", "relu"), { "4x90001" } },

  { "LeakyReLU", "default alpha", .in = { "3x7" } },
  { "LeakyReLU", "alpha 0.3", P ("alpha", "0.3"), { "2x3x2x2" } },
  { "LeakyReLU", "alpha 0 large", P ("alpha", "0"), { "2x20000" } },

  { "GELU", "erf", P ("approximation", "erf"), { "3x7" } },
  { "GELU", "tanh", P ("approximation", "tanh"), { "2x3x4" } },
  { "GELU", "erf wide", P ("approximation", "erf"), { "2x3x40x40" }, { G_WIDE } },
  { "GELU", "tanh wide", P ("approximation", "tanh"), { "3x1000" }, { G_WIDE } },

  { "Flatten", "4d", .in = { "2x3x4x5" } },
  { "Flatten", "large", .in = { "2x3x80x80" } },
  { "Reshape", "keep and infer", P ("shape", "[0, -1]"), { "2x3x4" } },
  { "Reshape", "explicit", P ("shape", "[3, 2, 2, 1]"), { "2x6" } },
  { "Concat", "3 inputs dim 1", P ("dim", "1"), { "2x3x4", "2x2x4", "2x1x4" } },
  { "Concat", "3 inputs dim 2", P ("dim", "2"), { "2x3x1", "2x3x4", "2x3x2" } },
  { "Concat", "2 inputs dim -1", P ("dim", "-1"), { "3x2", "3x5" } },
  { "Concat", "dim 0", P ("dim", "0"), { "1x3", "2x3" } },
  { "Concat", "4 inputs large", P ("dim", "1"), { "4x5000", "4x5001", "4x3", "4x7000" } },
  { "Add", "3 inputs", .in = { "2x3x4", "2x3x4", "2x3x4" } },
  { "Add", "2 inputs", .in = { "5x3", "5x3" } },
  { "Add", "4 inputs large", .in = { "33000", "33000", "33000", "33000" } },

  { "Softmax", "axis -1", P ("axis", "-1"), { "3x5" } },
  { "Softmax", "axis 0", P ("axis", "0"), { "3x5" } },
  { "Softmax", "axis 1 of 3d", P ("axis", "1"), { "2x3x4" } },
  { "Softmax", "wide", .in = { "40x111" }, .gen = { G_WIDE } },
  { "Softmax", "large axis 0", P ("axis", "0"), { "1111x40" } },
  { "LogSoftmax", "axis -1", P ("axis", "-1"), { "3x5" } },
  { "LogSoftmax", "axis 0", P ("axis", "0"), { "3x5" } },
  { "LogSoftmax", "axis 1 of 3d", P ("axis", "1"), { "2x3x4" } },
  { "LogSoftmax", "wide", .in = { "40x1111" }, .gen = { G_WIDE } },

  { "Embedding", "2d indices", P ("input_dim", "5", "output_dim", "4"), { "2x4" }, { G_INT }, .k = 5 },
  { "Embedding", "1d indices", P ("input_dim", "7", "output_dim", "3"), { "6" }, { G_INT }, .k = 7 },
  /* many repeats of few rows: the scatter-add of the gradient collides */
  { "Embedding", "large repeats", P ("input_dim", "50", "output_dim", "400"), { "64x33" }, { G_INT }, .k = 50 },

  { "SoftmaxCrossEntropy", "sparse", .in = { "4x5", "4" }, LBL (5) },
  { "SoftmaxCrossEntropy", "sparse trailing 1", .in = { "3x7", "3x1" }, LBL (7) },
  { "SoftmaxCrossEntropy", "sparse 3d", .in = { "2x3x4", "2x3" }, LBL (4) },
  { "SoftmaxCrossEntropy", "dense", P ("sparse_label", "false"), { "4x5", "4x5" }, { G_UNIFORM, G_DIST } },
  { "SoftmaxCrossEntropy", "from logits sparse", P ("from_logits", "true"), { "3x4", "3" }, LBL (4) },
  { "SoftmaxCrossEntropy", "from logits dense", P ("from_logits", "true", "sparse_label", "false"), { "3x4", "3x4" },
    { G_UNIFORM, G_DIST } },
  { "SoftmaxCrossEntropy", "wide large", .in = { "256x1000", "256" }, .gen = { G_WIDE, G_INT }, .k = 1000 },
  { "SigmoidBinaryCrossEntropy", "0/1 labels", .in = { "4x3", "4x3" }, .gen = { G_UNIFORM, G_BINARY } },
  { "SigmoidBinaryCrossEntropy", "soft labels", .in = { "3x5", "3x5" }, .gen = { G_UNIFORM, G_PROB } },
  { "SigmoidBinaryCrossEntropy", "from sigmoid", P ("from_sigmoid", "true"), { "4x3", "4x3" }, { G_PROB, G_BINARY } },
  { "SigmoidBinaryCrossEntropy", "1d", .in = { "5", "5" }, .gen = { G_UNIFORM, G_BINARY } },
  { "SigmoidBinaryCrossEntropy", "wide", .in = { "8x1100", "8x1100" }, .gen = { G_WIDE, G_BINARY } },
  { "L2Loss", "2d", .in = { "4x3", "4x3" } },
  { "L2Loss", "4d large", .in = { "8x3x30x30", "8x3x30x30" } },
  { "L1Loss", "2d", .in = { "4x3", "4x3" } },
  { "L1Loss", "large", .in = { "8x1100", "8x1100" } },
  { "HuberLoss", "rho 1", .in = { "4x6", "4x6" } },
  { "HuberLoss", "rho 0.5", P ("rho", "0.5"), { "3x4", "3x4" } },
  { "HuberLoss", "rho 0.3 large", P ("rho", "0.3"), { "8x1100", "8x1100" } },
};

static void
fill_uniform (float *p, int64_t n, GRand *r, double lo, double hi)
{
  for (int64_t i = 0; i < n; i++)
    p[i] = (float) g_rand_double_range (r, lo, hi);
}

static void
generate (NlTensor *t, Gen gen, int k, GRand *r)
{
  static const double range[][2] = { [G_UNIFORM] = { -1, 1 }, [G_WIDE] = { -100, 100 }, [G_PROB] = { 0.05, 0.95 } };
  float *p = nl_tensor_f32 (t);
  int64_t n = nl_tensor_numel (t), c;

  switch (gen)
    {
    case G_UNIFORM:
    case G_WIDE:
    case G_PROB:
      fill_uniform (p, n, r, range[gen][0], range[gen][1]);
      break;
    case G_DISTINCT: /* i -> 7919 i mod n permutes 0 .. n - 1 (7919 is prime) */
      g_assert_true (n % 7919 != 0);
      for (int64_t i = 0; i < n; i++)
        p[i] = (float) ((i * 7919) % n - n / 2) * 0.1f;
      break;
    case G_BINARY:
      k = 2;
      /* fall through */
    case G_INT:
      g_assert_cmpint (k, >, 0);
      for (int64_t i = 0; i < n; i++)
        p[i] = (float) g_rand_int_range (r, 0, k);
      break;
    case G_DIST:
      c = t->shape[t->ndim - 1];
      fill_uniform (p, n, r, 0.05, 1);
      for (int64_t row = 0; row < n / c; row++)
        {
          double s = 0;
          for (int64_t j = 0; j < c; j++)
            s += p[row * c + j];
          for (int64_t j = 0; j < c; j++)
            p[row * c + j] = (float) (p[row * c + j] / s);
        }
      break;
    }
}

/* ---- the device side of a case ---- */

typedef struct {
  NlCudaCtx *cuda;             /* NULL: the CPU stands in for the device (self-tests) */
  const NlOpKernels *kernels;  /* NULL: nl_op_kernels (def, the device) */
} Dev;

typedef struct {
  NlTensor **in, **out, **aux, **saved, **out_grad, **in_grad;
  void *state;
} Side;

/* Sets the device tensor t to h's values, or to NaN. */
static void
dev_write (Dev *d, NlTensor *t, const NlTensor *h, gboolean nan)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (NlTensor) src = nl_tensor_copy (h);
  size_t nb = (size_t) nl_tensor_numel (h) * sizeof (float);

  if (nan)
    nl_tensor_fill (src, NAN);
  if (!d->cuda)
    {
      memcpy (nl_tensor_f32 (t), nl_tensor_f32 (src), nb);
      return;
    }
  nl_test_ok_or_die (nl_cuda_copy (d->cuda, nl_tensor_f32 (t), nl_tensor_f32 (src), nb, NL_CUDA_H2D, &error), error, "upload");
  /* src is pageable and freed on return */
  nl_test_ok_or_die (nl_cuda_sync (d->cuda, &error), error, "sync after upload");
}

/* A copy of h on the device (NaN-filled when nan), from the pool. */
static NlTensor *
dev_upload (Dev *d, const NlTensor *h, gboolean nan)
{
  g_autoptr (GError) error = NULL;
  NlShape s;
  NlStorage *st;
  NlTensor *t;

  if (!h)
    return NULL;
  s = nl_tensor_get_shape (h);
  if (!d->cuda)
    t = nl_tensor_new_shape (NL_DTYPE_F32, &s);
  else
    {
      st = nl_storage_new_device ((size_t) nl_tensor_numel (h) * sizeof (float),
                                  (NlDevice) { NL_DEVICE_CUDA, nl_cuda_ctx_index (d->cuda) }, "test-cuda tensor", &error);
      nl_test_ok_or_die (st != NULL, error, "nl_storage_new_device");
      t = nl_tensor_new_on (st, 0, NL_DTYPE_F32, &s);
      nl_storage_unref (st); /* the tensor holds it */
    }
  dev_write (d, t, h, nan);
  return t;
}

static void
dev_write_all (Dev *d, NlTensor **t, NlTensor **h, int n, gboolean nan)
{
  for (int i = 0; i < n; i++)
    if (t[i])
      dev_write (d, t[i], h[i], nan);
}

static NlTensor **
dev_upload_all (Dev *d, NlTensor **h, int n, gboolean nan)
{
  NlTensor **t = g_new0 (NlTensor *, MAX (n, 1));
  for (int i = 0; i < n; i++)
    t[i] = dev_upload (d, h[i], nan);
  return t;
}

static void
unref_all (NlTensor **a, int n)
{
  for (int i = 0; i < n; i++)
    if (a[i])
      nl_tensor_unref (a[i]);
  g_free (a);
}

static void
side_free (Side *s, const NlOpInstance *inst, const NlOpKernels *k)
{
  unref_all (s->in, inst->n_in);
  unref_all (s->in_grad, inst->n_in);
  unref_all (s->out, inst->def->n_outputs);
  unref_all (s->out_grad, inst->def->n_outputs);
  unref_all (s->aux, inst->def->n_aux);
  unref_all (s->saved, inst->def->n_saved);
  if (s->state && k->free_state)
    k->free_state (s->state);
}

static NlOpCtx
make_ctx (const NlOpInstance *inst, Side *s, const Case *c, void *device)
{
  return (NlOpCtx) { .def = inst->def, .p = inst->p, .args = inst->args, .n_data = inst->n_data, .in = s->in,
                     .out = s->out, .aux = s->aux, .saved = s->saved, .out_grad = s->out_grad, .in_grad = s->in_grad,
                     .training = inst->training, .seed = inst->seed, .step = inst->step, .state = &s->state,
                     .device = device, .precision = c->precision };
}

/* ---- comparing ---- */

typedef struct {
  int64_t compared;
  int mismatches;
  double worst;     /* largest |cuda - cpu| / allowed */
  char worst_at[200];
} Report;

/* one mismatch or failure of a case, printed */
#define FAIL_CASE(rep, c, fmt, ...) \
  (g_printerr ("CUDA %s / %s: " fmt "\n", (c)->op, (c)->what, __VA_ARGS__), (rep)->mismatches++)

/* exact: bit-identical values (Dropout's mask). A NaN or Inf matches only
 * the same value on the CPU. */
static void
compare (Report *rep, const Case *c, const char *name, const NlTensor *dev, const NlTensor *cpu, double tol,
         gboolean exact)
{
  const float *a = nl_tensor_f32 (dev), *b = nl_tensor_f32 (cpu);
  int64_t n = nl_tensor_numel (cpu);
  double scale = 1;
  int bad = 0;

  for (int64_t i = 0; i < n; i++)
    if (isfinite (b[i]))
      scale = MAX (scale, fabs (b[i]));
  for (int64_t i = 0; i < n; i++)
    {
      double allowed = exact ? 0 : tol * (fabs (b[i]) + 0.1 * scale);
      double diff = fabs ((double) a[i] - (double) b[i]), ratio;

      if (a[i] == b[i] || (isnan (a[i]) && isnan (b[i])))
        ratio = 0;
      else
        ratio = isnan (diff) || allowed == 0 ? INFINITY : diff / allowed;
      rep->compared++;
      if (ratio > rep->worst)
        {
          rep->worst = ratio;
          g_snprintf (rep->worst_at, sizeof rep->worst_at, "%s / %s %s[%" G_GINT64_FORMAT "]: cuda %.9g cpu %.9g",
                      c->op, c->what, name, i, a[i], b[i]);
        }
      if (ratio > 1 && bad++ < 3)
        FAIL_CASE (rep, c, "%s[%" G_GINT64_FORMAT "] is %.9g on the device, %.9g on the CPU", name, i, a[i], b[i]);
      else if (ratio > 1)
        rep->mismatches++;
    }
}

static void
compare_dev (Report *rep, const Case *c, Dev *d, const char *name, NlTensor *dev, NlTensor *cpu, double tol,
             gboolean exact)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (NlTensor) h = NULL;
  NlShape s;

  if (!cpu || !dev)
    {
      if (cpu || dev)
        FAIL_CASE (rep, c, "%s exists on one side only", name);
      return;
    }
  s = nl_tensor_get_shape (dev);
  h = d->cuda ? nl_tensor_new_shape (NL_DTYPE_F32, &s) : nl_tensor_ref (dev);
  if (d->cuda)
    nl_test_ok_or_die (nl_cuda_copy (d->cuda, nl_tensor_f32 (h), nl_tensor_f32 (dev),
                             (size_t) nl_tensor_numel (dev) * sizeof (float), NL_CUDA_D2H, &error), error, "download");
  compare (rep, c, name, h, cpu, tol, exact);
}

/* One case: forward (and backward where the op has one) on the CPU and on
 * the device, everything compared. */
static Report
run_case (const NlOpDef *def, const Case *c, Dev *d)
{
  g_autoptr (GError) error = NULL;
  NlShape shapes[MAX_DATA];
  int n_data = 0;
  NlOpInstance *inst;
  Side hs = { 0 }, ds = { 0 };
  NlOpKernels hk = nl_op_kernels (def, NL_DEVICE_CPU);
  NlOpKernels dk = d->kernels ? *d->kernels : nl_op_kernels (def, d->cuda ? NL_DEVICE_CUDA : NL_DEVICE_CPU);
  GRand *r = g_rand_new_with_seed (g_str_hash (c->op) ^ (g_str_hash (c->what) * 31u));
  double tol = c->tol > 0 ? c->tol : F32_TOL;
  Report rep = { 0 };
  Dev host = { 0 };
  NlTensor **aux0; /* the aux states before forward */
  gboolean ran = TRUE;
  NlOpCtx hc, dc;

  while (n_data < MAX_DATA && c->in[n_data])
    {
      shapes[n_data] = nl_test_parse_shape (c->in[n_data]);
      n_data++;
    }
  inst = nl_op_instance_new (def, c->params, n_data, shapes, !c->predict, &error);
  g_assert_no_error (error);
  inst->step = 3;
  for (int i = 0; i < n_data; i++)
    generate (inst->in[i], c->gen[i], c->k, r);
  for (int i = n_data; i < inst->n_in; i++)
    if (inst->in[i])
      generate (inst->in[i], G_UNIFORM, 0, r);
  /* running stats: used in predict mode, variances positive */
  for (int i = 0; i < def->n_aux; i++)
    if (inst->aux[i])
      fill_uniform (nl_tensor_f32 (inst->aux[i]), nl_tensor_numel (inst->aux[i]), r, 0.5, 1.5);
  for (int i = 0; i < def->n_outputs; i++)
    generate (inst->out_grad[i], G_UNIFORM, 0, r);

  /* the CPU's tensors are the instance's; the device's are copies, its
   * outputs and gradients NaN; saved start as zeros on both sides, so a
   * mode that leaves them alone agrees */
  hs = (Side) { inst->in, inst->out, inst->aux, inst->saved, inst->out_grad, inst->in_grad, NULL };
  ds = (Side) { dev_upload_all (d, inst->in, inst->n_in, FALSE), dev_upload_all (d, inst->out, def->n_outputs, TRUE),
                dev_upload_all (d, inst->aux, def->n_aux, FALSE), dev_upload_all (d, inst->saved, def->n_saved, FALSE),
                dev_upload_all (d, inst->out_grad, def->n_outputs, FALSE),
                dev_upload_all (d, inst->in_grad, inst->n_in, TRUE), NULL };

  aux0 = dev_upload_all (&host, inst->aux, def->n_aux, FALSE);
  hc = make_ctx (inst, &hs, c, NULL);
  dc = make_ctx (inst, &ds, c, d->cuda);
  nl_test_ok_or_die (hk.forward (&hc, &error), error, "CPU forward");
  for (int i = 0; i < inst->n_in; i++)
    if (inst->in_grad[i])
      nl_tensor_fill (inst->in_grad[i], NAN);
  if (hk.backward)
    nl_test_ok_or_die (hk.backward (&hc, &error), error, "CPU backward");

  /* Twice: the second pass runs on what the kernels cached in *state in
   * the first (descriptors, algorithms), from the same aux and NaN. */
  for (int pass = 0; pass < 2 && ran; pass++)
    {
      if (pass)
        {
          dev_write_all (d, ds.aux, aux0, def->n_aux, FALSE);
          dev_write_all (d, ds.out, inst->out, def->n_outputs, TRUE);
          dev_write_all (d, ds.in_grad, inst->in_grad, inst->n_in, TRUE);
        }
      if (!dk.forward || (hk.backward && !dk.backward))
        FAIL_CASE (&rep, c, "no %s kernel on the device", dk.forward ? "backward" : "forward");
      else if (!dk.forward (&dc, &error) || (d->cuda && !nl_cuda_sync (d->cuda, &error)))
        FAIL_CASE (&rep, c, "forward failed: %s", error ? error->message : "(no error set)");
      else if (hk.backward && (!dk.backward (&dc, &error) || (d->cuda && !nl_cuda_sync (d->cuda, &error))))
        FAIL_CASE (&rep, c, "backward failed: %s", error ? error->message : "(no error set)");
      else
        continue;
      ran = FALSE;
    }
  if (ran)
    {
      char name[96];
      for (int i = 0; i < def->n_outputs; i++)
        compare_dev (&rep, c, d, "out", ds.out[i], inst->out[i], tol, FALSE);
      for (int i = 0; i < def->n_saved; i++)
        {
          g_snprintf (name, sizeof name, "saved%d", i);
          compare_dev (&rep, c, d, name, ds.saved[i], inst->saved[i], tol, strcmp (def->name, "Dropout") == 0);
        }
      for (int i = 0; i < def->n_aux; i++)
        compare_dev (&rep, c, d, def->aux[i], ds.aux[i], inst->aux[i], tol, FALSE);
      for (int i = 0; hk.backward && i < inst->n_in; i++)
        {
          g_snprintf (name, sizeof name, "d%s%d",
                      i >= n_data ? def->weights[i - n_data] : def->inputs[def->variadic ? 0 : MIN (i, def->n_inputs - 1)],
                      i);
          compare_dev (&rep, c, d, name, ds.in_grad[i], inst->in_grad[i], tol, FALSE);
        }
    }
  side_free (&ds, inst, &dk);
  unref_all (aux0, def->n_aux);
  if (hs.state && hk.free_state)
    hk.free_state (hs.state);
  nl_op_instance_free (inst);
  g_rand_free (r);
  return rep;
}

/* ---- the harness on the CPU: the case table runs, and planted bugs show ---- */

/* The CPU against itself through the whole harness: every case runs, and
 * the harness finds no difference where there is none. */
static void
test_mirror (void)
{
  Dev d = { 0 };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    if (nl_op_lookup (cases[i].op)) /* else test_coverage fails */
      {
        Report rep = run_case (nl_op_lookup (cases[i].op), &cases[i], &d);
        g_assert_cmpint (rep.mismatches, ==, 0);
        g_assert_cmpint (rep.compared, >, 0);
      }
}

typedef enum { PL_RIGHT, PL_OFF, PL_SKIP_OUT, PL_SAVED, PL_AUX, PL_ACCUM, PL_SKIP_GRAD, PL_FAIL, PL_COUNT } Plant;
static Plant plant;

/* y = 2x, saved = x, aux[0] counts training steps; the device's version
 * carries the planted bug */
static gboolean
twice_fwd_as (NlOpCtx *c, Plant m, GError **error)
{
  const float *x = nl_tensor_f32 (c->in[0]);
  float *y = nl_tensor_f32 (c->out[0]), *s = nl_tensor_f32 (c->saved[0]);
  int64_t n = nl_tensor_numel (c->in[0]);

  if (m == PL_FAIL)
    {
      g_set_error_literal (error, NL_OP_ERROR, NL_OP_ERROR_RUNTIME, "planted failure");
      return FALSE;
    }
  for (int64_t i = 0; i < n; i++)
    {
      if (!(m == PL_SKIP_OUT && i == n - 1))
        y[i] = 2 * x[i] * (m == PL_OFF && i == 7 ? 1.001f : 1.0f);
      s[i] = m == PL_SAVED && i == 0 ? x[i] + 0.01f : x[i];
    }
  if (c->training && m != PL_AUX)
    nl_tensor_f32 (c->aux[0])[0] += 1;
  return TRUE;
}

static gboolean
twice_bwd_as (NlOpCtx *c, Plant m, GError **error)
{
  const float *dy = nl_tensor_f32 (c->out_grad[0]);
  float *dx = nl_tensor_f32 (c->in_grad[0]);

  for (int64_t i = 0; i < nl_tensor_numel (c->out_grad[0]); i++)
    if (m == PL_ACCUM)
      dx[i] += 2 * dy[i];
    else if (!(m == PL_SKIP_GRAD && i == 5))
      dx[i] = 2 * dy[i];
  return TRUE;
}

static gboolean twice_fwd (NlOpCtx *c, GError **e) { return twice_fwd_as (c, PL_RIGHT, e); }
static gboolean twice_bwd (NlOpCtx *c, GError **e) { return twice_bwd_as (c, PL_RIGHT, e); }
static gboolean planted_fwd (NlOpCtx *c, GError **e) { return twice_fwd_as (c, plant, e); }
static gboolean planted_bwd (NlOpCtx *c, GError **e) { return twice_bwd_as (c, plant, e); }

static gboolean
twice_infer (NlInferCtx *c, GError **error)
{
  c->out[0] = c->saved[0] = c->in[0];
  c->aux[0] = (NlShape) { .ndim = 1, .d = { 1 } };
  return TRUE;
}

static void
test_planted (void)
{
  static const char *const inputs[] = { "data" }, *const aux[] = { "steps" };
  static const NlOpDef def = { .name = "Twice", .inputs = inputs, .n_inputs = 1, .aux = aux, .n_aux = 1,
                               .n_saved = 1, .n_outputs = 1, .infer_shape = twice_infer, .forward = twice_fwd,
                               .backward = twice_bwd };
  static const NlOpKernels planted = { planted_fwd, planted_bwd, NULL };
  const Case c = { "Twice", "planted", .in = { "3x50" } };
  Dev d = { .kernels = &planted };

  for (plant = PL_RIGHT; plant < PL_COUNT; plant++)
    {
      Report rep;
      if (plant == PL_OFF)
        g_printerr ("(the mismatches printed next are planted)\n");
      rep = run_case (&def, &c, &d);
      if (plant == PL_RIGHT)
        {
          g_assert_cmpint (rep.mismatches, ==, 0);
          g_assert_cmpint (rep.compared, ==, 150 + 150 + 1 + 150); /* out, saved, aux, ddata */
          g_assert_cmpfloat (rep.worst, ==, 0);
        }
      else
        g_assert_cmpint (rep.mismatches, >, 0);
    }
}

/* Whether some case of the op runs with param = the enum's choice j. */
static gboolean
enum_choice_covered (const NlOpDef *def, const NlParamSpec *s, int j)
{
  for (guint c = 0; c < G_N_ELEMENTS (cases); c++)
    if (strcmp (cases[c].op, def->name) == 0 && nl_test_params_choose (cases[c].params, s, j))
      return TRUE;
  return FALSE;
}

/* The build says whether it has CUDA (the cuda dependency of ops/meson.build
 * defines NL_HAVE_CUDA), a CUDA build has kernels for every op, and the
 * table has a case for every op and every choice of an enum parameter. */
static void
test_coverage (void)
{
  g_autoptr (GString) missing = g_string_new (NULL);

  g_test_message ("CUDA: %s", cuda ? "cuda:0" : cuda_reason);
#ifdef NL_HAVE_CUDA
  g_assert_true (nl_cuda_compiled ());
#else
  g_assert_false (nl_cuda_compiled ());
#endif
  for (guint c = 0; c < G_N_ELEMENTS (cases); c++)
    for (guint e = 0; e + 1 < c; e++) /* grouped by op: main makes one test per group */
      if (strcmp (cases[e].op, cases[c].op) == 0 && strcmp (cases[c - 1].op, cases[c].op) != 0)
        g_test_fail_printf ("the cases of %s are not together", cases[c].op);
  for (int id = 0; id < NL_OP_COUNT; id++)
    {
      const NlOpDef *def = nl_op_get ((NlOpId) id);
      NlOpKernels k = nl_op_kernels (def, NL_DEVICE_CUDA);
      gboolean found = FALSE;

      if (nl_cuda_compiled () && (!k.forward || (def->backward && !k.backward)))
        g_string_append_printf (missing, " %s%s%s", def->name, k.forward ? "" : " (no forward)",
                                def->backward && !k.backward ? " (no backward)" : "");
      for (guint c = 0; c < G_N_ELEMENTS (cases); c++)
        found = found || strcmp (cases[c].op, def->name) == 0;
      if (!found)
        g_test_fail_printf ("%s has no case in tests/test-cuda.c", def->name);
      for (int i = 0; i < def->n_params; i++)
        if (def->params[i].type == NL_PARAM_ENUM)
          for (int j = 0; def->params[i].enum_values[j]; j++)
            if (!enum_choice_covered (def, &def->params[i], j))
              g_test_fail_printf ("%s: no case with %s = %s", def->name, def->params[i].name,
                                  def->params[i].enum_values[j]);
    }
  if (missing->len)
    g_test_fail_printf ("ops without CUDA kernels:%s", missing->str);
  g_assert_cmpint (nl_op_count_on (NL_DEVICE_CPU), ==, NL_OP_COUNT);
  if (!missing->len)
    g_assert_cmpint (nl_op_count_on (NL_DEVICE_CUDA), ==, nl_cuda_compiled () ? NL_OP_COUNT : 0);
}

/* ---- with a device: one test per op ---- */

static void
test_op (gconstpointer data)
{
  const char *op = data;
  const NlOpDef *def = nl_op_lookup (op);
  Dev d = { .cuda = cuda };
  Report all = { 0 };
  int n_cases = 0;

  if (!need_device ())
    return;
  g_assert_nonnull (def);
  for (guint c = 0; c < G_N_ELEMENTS (cases); c++)
    {
      Report rep;
      if (strcmp (cases[c].op, op) != 0)
        continue;
      rep = run_case (def, &cases[c], &d);
      g_test_message ("  %s / %s: %" G_GINT64_FORMAT " values, worst %.3g of allowed%s%s", op, cases[c].what,
                      rep.compared, rep.worst, rep.worst > 0 ? " at " : "", rep.worst_at);
      n_cases++;
      all.compared += rep.compared;
      all.mismatches += rep.mismatches;
      if (rep.worst > all.worst)
        {
          all.worst = rep.worst;
          g_strlcpy (all.worst_at, rep.worst_at, sizeof all.worst_at);
        }
    }
  g_test_message ("%s: %d cases, %" G_GINT64_FORMAT " values, worst %.3g of allowed (%s)", op, n_cases, all.compared,
                  all.worst, all.worst_at);
  if (all.mismatches)
    g_test_fail_printf ("%s: %d values differ from the CPU beyond tolerance (worst %.3g: %s)", op, all.mismatches,
                        all.worst, all.worst_at);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  cuda = nl_test_cuda_open (&cuda_reason);

  g_test_add_func ("/cuda/coverage", test_coverage);
  g_test_add_func ("/cuda/harness/mirror", test_mirror);
  g_test_add_func ("/cuda/harness/planted", test_planted);
  for (guint c = 0; c < G_N_ELEMENTS (cases); c++)
    if (c == 0 || strcmp (cases[c].op, cases[c - 1].op) != 0) /* the table is grouped by op */
      {
        g_autofree char *path = g_strdup_printf ("/cuda/op/%s", cases[c].op);
        g_test_add_data_func (path, cases[c].op, test_op);
      }
  return g_test_run ();
}
