/* batch_norm.c — BatchNorm over the channel axis 1 of (N, C, ...) input,
 * as Gluon's BatchNorm.
 *
 * Training (ctx->training and not use_global_stats) normalises with the
 * batch's own mean and biased variance and moves the running statistics
 * towards them; otherwise the running statistics are used and the op is a
 * fixed per-channel affine map. Sums run in double per channel, so large
 * batches keep full float precision. */
#include "ops/cpu/nl-cpu-util.h"

enum { P_AXIS, P_MOMENTUM, P_EPSILON, P_CENTER, P_SCALE, P_USE_GLOBAL_STATS, P_N };

static const NlParamSpec params[P_N] = {
  [P_AXIS] = { "axis", NL_PARAM_INT, 1, -NL_MAX_DIMS, NL_MAX_DIMS - 1, NULL, FALSE,
               "Channel axis; only 1 (NCHW and (N, C)) is supported" },
  [P_MOMENTUM] = { "momentum", NL_PARAM_FLOAT, 0.9, 0, 1, NULL, FALSE,
                   "Running stats keep this share of their old value each training step" },
  [P_EPSILON] = { "epsilon", NL_PARAM_FLOAT, 1e-5, 1e-30, 1e18, NULL, FALSE,
                  "Added to the variance before the square root" },
  [P_CENTER] = { "center", NL_PARAM_BOOL, 1, 0, 1, NULL, FALSE, "Learn an offset beta" },
  [P_SCALE] = { "scale", NL_PARAM_BOOL, 1, 0, 1, NULL, FALSE, "Learn a factor gamma" },
  [P_USE_GLOBAL_STATS] = { "use_global_stats", NL_PARAM_BOOL, 0, 0, 1, NULL, FALSE,
                           "Normalise with the running stats in training too (frozen BatchNorm)" },
};

enum { W_GAMMA, W_BETA };
enum { A_MEAN, A_VAR };
enum { S_MEAN, S_INVSTD };

static gboolean
infer (NlInferCtx *c, GError **error)
{
  const NlShape *in = &c->in[0];
  int64_t axis = NL_P_INT (c->p, P_AXIS);
  NlShape ch = { .ndim = 1 };
  char buf[96];

  if (c->n_data != 1)
    return nl_op_shape_error (error, "BatchNorm takes exactly one input");
  if (in->ndim < 2)
    return nl_op_shape_error (error, "BatchNorm needs an input of at least 2 dims (N, C, ...) but got %s",
                              nl_shape_format (in, buf, sizeof buf));
  if (axis < 0)
    axis += in->ndim;
  if (axis != 1)
    return nl_op_shape_error (error, "BatchNorm supports only the channel axis 1, but axis is %" G_GINT64_FORMAT
                              " for input %s", NL_P_INT (c->p, P_AXIS), nl_shape_format (in, buf, sizeof buf));
  ch.d[0] = in->d[1];
  c->weights[W_GAMMA] = NL_P_BOOL (c->p, P_SCALE) ? ch : NL_SHAPE_ABSENT;
  c->weights[W_BETA] = NL_P_BOOL (c->p, P_CENTER) ? ch : NL_SHAPE_ABSENT;
  c->aux[A_MEAN] = c->aux[A_VAR] = ch;
  c->saved[S_MEAN] = c->saved[S_INVSTD] = ch;
  c->out[0] = *in;
  return TRUE;
}

static void
init_aux (NlTensor *const *aux, const NlParamValue *p)
{
  nl_tensor_fill (aux[A_MEAN], 0.0f);
  nl_tensor_fill (aux[A_VAR], 1.0f);
}

typedef struct {
  int64_t n, c, s; /* batch, channels, spatial size per channel */
} Dims;

static Dims
dims_of (const NlTensor *x)
{
  Dims d = { x->shape[0], x->shape[1], 1 };
  for (int i = 2; i < x->ndim; i++)
    d.s *= x->shape[i];
  return d;
}

static inline float
sum_f (const float *p, int64_t n)
{
  float s = 0;
#pragma omp simd reduction (+ : s)
  for (int64_t i = 0; i < n; i++)
    s += p[i];
  return s;
}

static inline float
sum_sq_dev (const float *p, int64_t n, float mean)
{
  float s = 0;
#pragma omp simd reduction (+ : s)
  for (int64_t i = 0; i < n; i++)
    s += (p[i] - mean) * (p[i] - mean);
  return s;
}

static int
threads_for (int64_t work)
{
  return work >= NL_PAR_MIN ? nl_threads_get () : 1;
}

static gboolean
forward (NlOpCtx *c, GError **error)
{
  const NlTensor *xt = c->in[0];
  const Dims d = dims_of (xt);
  const float *x = nl_tensor_f32 (xt);
  float *y = nl_tensor_f32 (c->out[0]);
  const float *gamma = c->in[1 + W_GAMMA] ? nl_tensor_f32 (c->in[1 + W_GAMMA]) : NULL;
  const float *beta = c->in[1 + W_BETA] ? nl_tensor_f32 (c->in[1 + W_BETA]) : NULL;
  float *rmean = nl_tensor_f32 (c->aux[A_MEAN]), *rvar = nl_tensor_f32 (c->aux[A_VAR]);
  float *smean = c->saved[S_MEAN] ? nl_tensor_f32 (c->saved[S_MEAN]) : NULL;
  float *sinv = c->saved[S_INVSTD] ? nl_tensor_f32 (c->saved[S_INVSTD]) : NULL;
  const float eps = NL_P_FLOAT (c->p, P_EPSILON), mom = NL_P_FLOAT (c->p, P_MOMENTUM);
  const gboolean batch_stats = c->training && !NL_P_BOOL (c->p, P_USE_GLOBAL_STATS);
  const int64_t count = d.n * d.s;

#pragma omp parallel for num_threads (threads_for (d.n * d.c * d.s)) schedule (static)
  for (int64_t ch = 0; ch < d.c; ch++)
    {
      float mean, var;
      if (batch_stats)
        {
          double s = 0, ss = 0;
          for (int64_t n = 0; n < d.n; n++)
            s += sum_f (x + (n * d.c + ch) * d.s, d.s);
          mean = (float) (s / (double) count);
          /* second pass about the mean: no cancellation for large offsets */
          for (int64_t n = 0; n < d.n; n++)
            ss += sum_sq_dev (x + (n * d.c + ch) * d.s, d.s, mean);
          var = (float) (ss / (double) count); /* biased: what normalises the batch */
          /* The running variance takes the UNBIASED batch variance
           * (count / (count - 1)), as PyTorch does; MXNet uses the biased one.
           * A single value per channel has no spread estimate: keep 0. */
          float unbiased = count > 1 ? (float) (ss / (double) (count - 1)) : var;
          rmean[ch] = mom * rmean[ch] + (1 - mom) * mean;
          rvar[ch] = mom * rvar[ch] + (1 - mom) * unbiased;
        }
      else
        {
          mean = rmean[ch];
          var = rvar[ch];
        }
      const float inv = 1.0f / sqrtf (var + eps);
      /* saved: what backward differentiates through, whichever stats were used */
      if (smean)
        smean[ch] = mean;
      if (sinv)
        sinv[ch] = inv;
      const float a = (gamma ? gamma[ch] : 1.0f) * inv;
      const float b = (beta ? beta[ch] : 0.0f) - mean * a;
      for (int64_t n = 0; n < d.n; n++)
        {
          const float *xp = x + (n * d.c + ch) * d.s;
          float *yp = y + (n * d.c + ch) * d.s;
#pragma omp simd
          for (int64_t i = 0; i < d.s; i++)
            yp[i] = xp[i] * a + b;
        }
    }
  return TRUE;
}

static gboolean
backward (NlOpCtx *c, GError **error)
{
  const NlTensor *xt = c->in[0];
  const Dims d = dims_of (xt);
  const float *x = nl_tensor_f32 (xt);
  const float *dy = nl_tensor_f32 (c->out_grad[0]);
  float *dx = c->in_grad[0] ? nl_tensor_f32 (c->in_grad[0]) : NULL;
  const float *gamma = c->in[1 + W_GAMMA] ? nl_tensor_f32 (c->in[1 + W_GAMMA]) : NULL;
  float *dgamma = c->in_grad[1 + W_GAMMA] ? nl_tensor_f32 (c->in_grad[1 + W_GAMMA]) : NULL;
  float *dbeta = c->in_grad[1 + W_BETA] ? nl_tensor_f32 (c->in_grad[1 + W_BETA]) : NULL;
  const float *smean = nl_tensor_f32 (c->saved[S_MEAN]), *sinv = nl_tensor_f32 (c->saved[S_INVSTD]);
  const gboolean batch_stats = c->training && !NL_P_BOOL (c->p, P_USE_GLOBAL_STATS);
  const int64_t count = d.n * d.s;

#pragma omp parallel for num_threads (threads_for (d.n * d.c * d.s)) schedule (static)
  for (int64_t ch = 0; ch < d.c; ch++)
    {
      const float mean = smean[ch], inv = sinv[ch];
      double sg = 0, sgx = 0; /* sum dy, sum dy * xhat */
      for (int64_t n = 0; n < d.n; n++)
        {
          const float *xp = x + (n * d.c + ch) * d.s, *gp = dy + (n * d.c + ch) * d.s;
          float a = 0, b = 0;
#pragma omp simd reduction (+ : a, b)
          for (int64_t i = 0; i < d.s; i++)
            {
              a += gp[i];
              b += gp[i] * (xp[i] - mean);
            }
          sg += a;
          sgx += b;
        }
      sgx *= inv;
      if (dgamma)
        dgamma[ch] = (float) sgx;
      if (dbeta)
        dbeta[ch] = (float) sg;
      if (!dx)
        continue;
      const float k = (gamma ? gamma[ch] : 1.0f) * inv;
      /* batch stats: dx = k * (dy - mean(dy) - xhat * mean(dy * xhat));
       * fixed stats: dx = k * dy */
      const float mg = batch_stats ? (float) (sg / (double) count) : 0.0f;
      const float mgx = batch_stats ? (float) (sgx / (double) count) : 0.0f;
      for (int64_t n = 0; n < d.n; n++)
        {
          const float *xp = x + (n * d.c + ch) * d.s, *gp = dy + (n * d.c + ch) * d.s;
          float *dp = dx + (n * d.c + ch) * d.s;
#pragma omp simd
          for (int64_t i = 0; i < d.s; i++)
            dp[i] = k * (gp[i] - mg - (xp[i] - mean) * inv * mgx);
        }
    }
  return TRUE;
}

static const char *const inputs[] = { "data" };
static const char *const weights[] = { "gamma", "beta" };
static const NlInitHint weight_init[] = { NL_INIT_ONES, NL_INIT_ZEROS };
static const char *const aux[] = { "running_mean", "running_var" };

const NlOpDef nl_op_batch_norm = {
  .name = "BatchNorm",
  .category = "Normalization",
  .doc = "Normalise each channel over the batch, then scale by gamma and shift by beta",
  .params = params,
  .n_params = P_N,
  .inputs = inputs,
  .n_inputs = 1,
  .weights = weights,
  .weight_init = weight_init,
  .n_weights = 2,
  .aux = aux,
  .n_aux = 2,
  .n_saved = 2, /* batch mean, inverse std */
  .n_outputs = 1,
  .needs = NL_NEEDS_INPUTS | NL_NEEDS_WEIGHTS,
  .infer_shape = infer,
  .forward = forward,
  .backward = backward,
  .init_aux = init_aux,
};
