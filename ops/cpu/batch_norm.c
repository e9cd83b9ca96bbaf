/* batch_norm.c — the CPU kernels of BatchNorm (definition:
 * ops/defs/batch_norm.c) over the channel axis 1 of (N, C, ...) input, as
 * Gluon's BatchNorm.
 *
 * Training (ctx->training and not use_global_stats) normalises with the
 * batch's own mean and biased variance and moves the running statistics
 * towards them; otherwise the running statistics are used and the op is a
 * fixed per-channel affine map. Sums run in double per channel, so large
 * batches keep full float precision. */
#include "ops/cpu/nl-cpu-util.h"
#include "ops/nl-batch-norm.h"

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

/* What one forward pass needs, shared by both loop shapes. */
typedef struct {
  const float *gamma, *beta;
  float *rmean, *rvar, *smean, *sinv;
  float eps, mom;
  gboolean batch_stats;
  int64_t count; /* values per channel: N * spatial */
} FwdArgs;

/* From a channel's sum and sum of squared deviations (batch stats) or the
 * running stats, the affine map y = x * a + b; updates the running stats. */
static inline void
finish_channel (const FwdArgs *f, int64_t ch, double sum, double ssd, float *a, float *b)
{
  float mean, var;
  if (f->batch_stats)
    {
      mean = (float) (sum / (double) f->count);
      var = (float) (ssd / (double) f->count); /* biased: what normalises the batch */
      /* The running variance takes the UNBIASED batch variance
       * (count / (count - 1)), as PyTorch does; MXNet uses the biased one.
       * A single value per channel has no spread estimate: keep the biased 0. */
      float unbiased = f->count > 1 ? (float) (ssd / (double) (f->count - 1)) : var;
      f->rmean[ch] = f->mom * f->rmean[ch] + (1 - f->mom) * mean;
      f->rvar[ch] = f->mom * f->rvar[ch] + (1 - f->mom) * unbiased;
    }
  else
    {
      mean = f->rmean[ch];
      var = f->rvar[ch];
    }
  const float inv = 1.0f / sqrtf (var + f->eps);
  /* saved: what backward differentiates through, whichever stats were used */
  if (f->smean)
    f->smean[ch] = mean;
  if (f->sinv)
    f->sinv[ch] = inv;
  *a = (f->gamma ? f->gamma[ch] : 1.0f) * inv;
  *b = (f->beta ? f->beta[ch] : 0.0f) - mean * *a;
}

/* (N, C) input, as after a Dense layer: a channel's values are C apart,
 * so walk rows and work on blocks of CBLK channels at a time. */
#define CBLK 64

static void
forward_2d (const FwdArgs *f, Dims d, const float *x, float *y)
{
  const int64_t nblk = (d.c + CBLK - 1) / CBLK;
#pragma omp parallel for num_threads (threads_for (d.n * d.c)) schedule (static)
  for (int64_t blk = 0; blk < nblk; blk++)
    {
      const int64_t c0 = blk * CBLK, nc = MIN (CBLK, d.c - c0);
      double sum[CBLK] = { 0 }, ssd[CBLK] = { 0 };
      float mean[CBLK], a[CBLK], b[CBLK];
      if (f->batch_stats)
        {
          for (int64_t n = 0; n < d.n; n++)
            for (int64_t j = 0; j < nc; j++)
              sum[j] += x[n * d.c + c0 + j];
          for (int64_t j = 0; j < nc; j++)
            mean[j] = (float) (sum[j] / (double) f->count);
          for (int64_t n = 0; n < d.n; n++)
            for (int64_t j = 0; j < nc; j++)
              {
                float dev = x[n * d.c + c0 + j] - mean[j];
                ssd[j] += dev * dev;
              }
        }
      for (int64_t j = 0; j < nc; j++)
        finish_channel (f, c0 + j, sum[j], ssd[j], &a[j], &b[j]);
      for (int64_t n = 0; n < d.n; n++)
        for (int64_t j = 0; j < nc; j++)
          y[n * d.c + c0 + j] = x[n * d.c + c0 + j] * a[j] + b[j];
    }
}

static void
forward_nd (const FwdArgs *f, Dims d, const float *x, float *y)
{
#pragma omp parallel for num_threads (threads_for (d.n * d.c * d.s)) schedule (static)
  for (int64_t ch = 0; ch < d.c; ch++)
    {
      double sum = 0, ssd = 0;
      float a, b;
      if (f->batch_stats)
        {
          for (int64_t n = 0; n < d.n; n++)
            sum += sum_f (x + (n * d.c + ch) * d.s, d.s);
          /* second pass about the mean: no cancellation for large offsets */
          const float mean = (float) (sum / (double) f->count);
          for (int64_t n = 0; n < d.n; n++)
            ssd += sum_sq_dev (x + (n * d.c + ch) * d.s, d.s, mean);
        }
      finish_channel (f, ch, sum, ssd, &a, &b);
      for (int64_t n = 0; n < d.n; n++)
        {
          const float *xp = x + (n * d.c + ch) * d.s;
          float *yp = y + (n * d.c + ch) * d.s;
#pragma omp simd
          for (int64_t i = 0; i < d.s; i++)
            yp[i] = xp[i] * a + b;
        }
    }
}

static gboolean
forward (NlOpCtx *c, GError **error)
{
  const NlBatchNormArgs *a = c->args;
  const Dims d = dims_of (c->in[0]);
  FwdArgs f = {
    .gamma = c->in[1 + BN_GAMMA] ? nl_tensor_f32 (c->in[1 + BN_GAMMA]) : NULL,
    .beta = c->in[1 + BN_BETA] ? nl_tensor_f32 (c->in[1 + BN_BETA]) : NULL,
    .rmean = nl_tensor_f32 (c->aux[BN_RUNNING_MEAN]),
    .rvar = nl_tensor_f32 (c->aux[BN_RUNNING_VAR]),
    .smean = c->saved[BN_SAVED_MEAN] ? nl_tensor_f32 (c->saved[BN_SAVED_MEAN]) : NULL,
    .sinv = c->saved[BN_SAVED_INVSTD] ? nl_tensor_f32 (c->saved[BN_SAVED_INVSTD]) : NULL,
    .eps = a->epsilon,
    .mom = a->momentum,
    .batch_stats = c->training && !a->use_global_stats,
    .count = d.n * d.s,
  };
  if (d.s == 1)
    forward_2d (&f, d, nl_tensor_f32 (c->in[0]), nl_tensor_f32 (c->out[0]));
  else
    forward_nd (&f, d, nl_tensor_f32 (c->in[0]), nl_tensor_f32 (c->out[0]));
  return TRUE;
}

/* Backward, per channel, from sum(dy) and sum(dy * xhat):
 *   batch stats: dx = k * (dy - mean(dy) - xhat * mean(dy * xhat)), k = gamma * inv
 *   fixed stats: dx = k * dy */
typedef struct {
  const float *gamma, *smean, *sinv;
  float *dx, *dgamma, *dbeta;
  gboolean batch_stats;
  int64_t count;
} BwdArgs;

/* Sets the weight gradients; returns the dx map dx = k * (dy - mg - xhat * mgx). */
static inline void
channel_grads (const BwdArgs *b, int64_t ch, double sg, double sgx, float *k, float *mg, float *mgx)
{
  if (b->dgamma)
    b->dgamma[ch] = (float) sgx;
  if (b->dbeta)
    b->dbeta[ch] = (float) sg;
  *k = (b->gamma ? b->gamma[ch] : 1.0f) * b->sinv[ch];
  *mg = b->batch_stats ? (float) (sg / (double) b->count) : 0.0f;
  *mgx = b->batch_stats ? (float) (sgx / (double) b->count) : 0.0f;
}

static void
backward_2d (const BwdArgs *b, Dims d, const float *x, const float *dy)
{
  const int64_t nblk = (d.c + CBLK - 1) / CBLK;
#pragma omp parallel for num_threads (threads_for (d.n * d.c)) schedule (static)
  for (int64_t blk = 0; blk < nblk; blk++)
    {
      const int64_t c0 = blk * CBLK, nc = MIN (CBLK, d.c - c0);
      double sg[CBLK] = { 0 }, sgx[CBLK] = { 0 };
      float k[CBLK], mg[CBLK], mgx[CBLK];
      const float *mean = b->smean + c0, *inv = b->sinv + c0;
      for (int64_t n = 0; n < d.n; n++)
        for (int64_t j = 0; j < nc; j++)
          {
            float g = dy[n * d.c + c0 + j];
            sg[j] += g;
            sgx[j] += g * (x[n * d.c + c0 + j] - mean[j]) * inv[j];
          }
      for (int64_t j = 0; j < nc; j++)
        channel_grads (b, c0 + j, sg[j], sgx[j], &k[j], &mg[j], &mgx[j]);
      if (!b->dx)
        continue;
      for (int64_t n = 0; n < d.n; n++)
        for (int64_t j = 0; j < nc; j++)
          {
            int64_t at = n * d.c + c0 + j;
            b->dx[at] = k[j] * (dy[at] - mg[j] - (x[at] - mean[j]) * inv[j] * mgx[j]);
          }
    }
}

static void
backward_nd (const BwdArgs *b, Dims d, const float *x, const float *dy)
{
#pragma omp parallel for num_threads (threads_for (d.n * d.c * d.s)) schedule (static)
  for (int64_t ch = 0; ch < d.c; ch++)
    {
      const float mean = b->smean[ch], inv = b->sinv[ch];
      double sg = 0, sgx = 0;
      float k, mg, mgx;
      for (int64_t n = 0; n < d.n; n++)
        {
          const float *xp = x + (n * d.c + ch) * d.s, *gp = dy + (n * d.c + ch) * d.s;
          float s0 = 0, s1 = 0;
#pragma omp simd reduction (+ : s0, s1)
          for (int64_t i = 0; i < d.s; i++)
            {
              s0 += gp[i];
              s1 += gp[i] * (xp[i] - mean);
            }
          sg += s0;
          sgx += s1;
        }
      channel_grads (b, ch, sg, sgx * inv, &k, &mg, &mgx);
      if (!b->dx)
        continue;
      for (int64_t n = 0; n < d.n; n++)
        {
          const float *xp = x + (n * d.c + ch) * d.s, *gp = dy + (n * d.c + ch) * d.s;
          float *dp = b->dx + (n * d.c + ch) * d.s;
#pragma omp simd
          for (int64_t i = 0; i < d.s; i++)
            dp[i] = k * (gp[i] - mg - (xp[i] - mean) * inv * mgx);
        }
    }
}

static gboolean
backward (NlOpCtx *c, GError **error)
{
  const NlBatchNormArgs *a = c->args;
  const Dims d = dims_of (c->in[0]);
  BwdArgs b = {
    .gamma = c->in[1 + BN_GAMMA] ? nl_tensor_f32 (c->in[1 + BN_GAMMA]) : NULL,
    .smean = nl_tensor_f32 (c->saved[BN_SAVED_MEAN]),
    .sinv = nl_tensor_f32 (c->saved[BN_SAVED_INVSTD]),
    .dx = c->in_grad[0] ? nl_tensor_f32 (c->in_grad[0]) : NULL,
    .dgamma = c->in_grad[1 + BN_GAMMA] ? nl_tensor_f32 (c->in_grad[1 + BN_GAMMA]) : NULL,
    .dbeta = c->in_grad[1 + BN_BETA] ? nl_tensor_f32 (c->in_grad[1 + BN_BETA]) : NULL,
    .batch_stats = c->training && !a->use_global_stats,
    .count = d.n * d.s,
  };
  if (d.s == 1)
    backward_2d (&b, d, nl_tensor_f32 (c->in[0]), nl_tensor_f32 (c->out_grad[0]));
  else
    backward_nd (&b, d, nl_tensor_f32 (c->in[0]), nl_tensor_f32 (c->out_grad[0]));
  return TRUE;
}

const NlOpKernels nl_op_cpu_batch_norm = { .forward = forward, .backward = backward };
