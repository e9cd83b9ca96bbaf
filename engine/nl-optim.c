/* nl-optim.c — optimizer updates.
 *
 * Each update walks the weight in blocks of BLOCK elements; blocks are
 * independent, so OpenMP splits them and the result is the same for any
 * thread count. Within a block the loops are plain element-wise code the
 * compiler vectorises. Kinds that need a square root do it in a separate
 * short loop over a block-sized buffer (vsqrt): with errno-setting sqrtf
 * (the build does not pass -fno-math-errno) GCC will not vectorise a loop
 * that calls it, and the extra loop stays in L1, so memory is still read and
 * written once per update. */
#include "engine/nl-optim.h"

#include <math.h>
#include <string.h>

#include "ops/cpu/nl-cpu-util.h"

#if defined(__SSE__)
#include <immintrin.h>
#elif defined(__aarch64__) && defined(__ARM_NEON)
#include <arm_neon.h>
#endif

#define BLOCK 1024

G_DEFINE_QUARK (nl-optim-error-quark, nl_optim_error)

static const char *const kind_names[NL_OPTIM_COUNT] = {
  [NL_OPTIM_SGD] = "sgd",
  [NL_OPTIM_NAG] = "nag",
  [NL_OPTIM_ADAM] = "adam",
  [NL_OPTIM_ADAMW] = "adamw",
  [NL_OPTIM_RMSPROP] = "rmsprop",
  [NL_OPTIM_ADAGRAD] = "adagrad",
};

void
nl_optim_config_init (NlOptimConfig *c, NlOptimKind kind)
{
  memset (c, 0, sizeof *c);
  c->kind = kind;
  c->lr = 0.01f;
  c->beta1 = 0.9f;
  c->beta2 = 0.999f;
  c->epsilon = 1e-8f;
  c->rho = 0.9f;
  switch (kind)
    {
    case NL_OPTIM_SGD:
      break;
    case NL_OPTIM_NAG:
      c->momentum = 0.9f;
      c->nesterov = TRUE;
      break;
    case NL_OPTIM_ADAMW:
      c->wd = 0.01f;
      /* fall through */
    case NL_OPTIM_ADAM:
      c->lr = 0.001f;
      break;
    case NL_OPTIM_RMSPROP:
      c->lr = 0.001f;
      c->momentum = 0.9f;
      c->epsilon = 1e-7f;
      break;
    case NL_OPTIM_ADAGRAD:
      c->lr = 0.1f;
      c->epsilon = 1e-7f;
      break;
    case NL_OPTIM_COUNT:
    default:
      g_return_if_reached ();
    }
}

gboolean
nl_optim_kind_parse (const char *name, NlOptimKind *kind, GError **error)
{
  for (int i = 0; i < NL_OPTIM_COUNT; i++)
    if (name && g_ascii_strcasecmp (name, kind_names[i]) == 0)
      {
        *kind = (NlOptimKind) i;
        return TRUE;
      }
  g_autofree char *valid = g_strjoinv (", ", (char **) kind_names);
  g_set_error (error, NL_OPTIM_ERROR, NL_OPTIM_ERROR_INVALID,
               "unknown optimizer '%s' (valid: %s)", name ? name : "(null)", valid);
  return FALSE;
}

const char *
nl_optim_kind_name (NlOptimKind kind)
{
  g_return_val_if_fail ((unsigned) kind < NL_OPTIM_COUNT, "?");
  return kind_names[kind];
}

int
nl_optim_n_states (const NlOptimConfig *c)
{
  switch (c->kind)
    {
    case NL_OPTIM_SGD:
    case NL_OPTIM_NAG:
      return c->momentum != 0;
    case NL_OPTIM_ADAM:
    case NL_OPTIM_ADAMW:
      return 2;
    case NL_OPTIM_RMSPROP:
      return 1 + (c->centered != 0) + (c->momentum != 0);
    case NL_OPTIM_ADAGRAD:
      return 1;
    case NL_OPTIM_COUNT:
    default:
      g_return_val_if_reached (0);
    }
}

/* Everything one block needs, precomputed once per update. */
typedef struct {
  float *w;
  const float *g;
  float *s[3];
  float gs, clip, wd; /* gradient preprocessing; wd is 0 for AdamW */
  float lr, mu, b1, b2, eps, rho;
  float step, inv_sqrt_bc2, decay; /* Adam */
  gboolean nesterov, centered;
} Job;

typedef void (*Kernel) (const Job *j, int64_t lo, int64_t len);

/* Shared preprocessing: rescale, clip (a compare-select, so NaN passes
 * through to be noticed by the trainer; clip is +inf when off), L2 decay. */
static inline float
prep (float g, float w, float gs, float clip, float wd)
{
  g *= gs;
  g = g > clip ? clip : g;
  g = g < -clip ? -clip : g;
  return g + wd * w;
}

/* In-place square root of a block, vectorised by hand (see the top). */
static inline void
vsqrt (float *x, int64_t n)
{
  int64_t i = 0;
#if defined(__AVX__)
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps (x + i, _mm256_sqrt_ps (_mm256_loadu_ps (x + i)));
#endif
#if defined(__SSE__)
  for (; i + 4 <= n; i += 4)
    _mm_storeu_ps (x + i, _mm_sqrt_ps (_mm_loadu_ps (x + i)));
#elif defined(__aarch64__) && defined(__ARM_NEON)
  for (; i + 4 <= n; i += 4)
    vst1q_f32 (x + i, vsqrtq_f32 (vld1q_f32 (x + i)));
#endif
  for (; i < n; i++)
    x[i] = sqrtf (x[i]);
}

/* SGD (PyTorch, dampening 0):
 *   b = mu * b + g                   (b starts at 0, so the first b is g)
 *   d = nesterov ? g + mu * b : b    (d = g without momentum)
 *   w -= lr * d */
static void
k_sgd (const Job *j, int64_t lo, int64_t len)
{
  float *restrict w = j->w + lo;
  const float *restrict g = j->g + lo;
  float *restrict b = j->s[0] ? j->s[0] + lo : NULL;
  const float gs = j->gs, clip = j->clip, wd = j->wd, lr = j->lr, mu = j->mu;

  if (b == NULL)
    for (int64_t i = 0; i < len; i++)
      w[i] -= lr * prep (g[i], w[i], gs, clip, wd);
  else if (j->nesterov)
    for (int64_t i = 0; i < len; i++)
      {
        float gi = prep (g[i], w[i], gs, clip, wd);
        float bi = mu * b[i] + gi;
        b[i] = bi;
        w[i] -= lr * (gi + mu * bi);
      }
  else
    for (int64_t i = 0; i < len; i++)
      {
        float bi = mu * b[i] + prep (g[i], w[i], gs, clip, wd);
        b[i] = bi;
        w[i] -= lr * bi;
      }
}

/* Adam / AdamW (PyTorch):
 *   m = b1 * m + (1 - b1) * g;  v = b2 * v + (1 - b2) * g^2
 *   AdamW first: w *= 1 - lr * wd   (Adam instead has wd * w inside g)
 *   w -= lr / (1 - b1^t) * m / (sqrt (v) / sqrt (1 - b2^t) + eps) */
static void
k_adam (const Job *j, int64_t lo, int64_t len)
{
  float *restrict w = j->w + lo;
  const float *restrict g = j->g + lo;
  float *restrict m = j->s[0] + lo;
  float *restrict v = j->s[1] + lo;
  const float gs = j->gs, clip = j->clip, wd = j->wd, b1 = j->b1, b2 = j->b2;
  const float step = j->step, isbc2 = j->inv_sqrt_bc2, eps = j->eps, decay = j->decay;
  float den[BLOCK];

  for (int64_t i = 0; i < len; i++)
    {
      float gi = prep (g[i], w[i], gs, clip, wd);
      m[i] = b1 * m[i] + (1.0f - b1) * gi;
      den[i] = v[i] = b2 * v[i] + (1.0f - b2) * gi * gi;
    }
  vsqrt (den, len);
  for (int64_t i = 0; i < len; i++)
    w[i] = w[i] * decay - step * m[i] / (den[i] * isbc2 + eps);
}

/* RMSProp (PyTorch, alpha = rho):
 *   s = rho * s + (1 - rho) * g^2
 *   centered: a = rho * a + (1 - rho) * g;  d = sqrt (s - a^2) + eps
 *   else d = sqrt (s) + eps
 *   momentum: b = mu * b + g / d;  w -= lr * b
 *   else w -= lr * g / d */
static void
k_rmsprop (const Job *j, int64_t lo, int64_t len)
{
  float *restrict w = j->w + lo;
  const float *restrict g = j->g + lo;
  float *restrict s = j->s[0] + lo;
  float *restrict a = j->centered ? j->s[1] + lo : NULL;
  float *restrict b = j->mu != 0 ? j->s[j->centered ? 2 : 1] + lo : NULL;
  const float gs = j->gs, clip = j->clip, wd = j->wd, rho = j->rho, eps = j->eps, lr = j->lr, mu = j->mu;
  float den[BLOCK], gp[BLOCK];

  if (a)
    for (int64_t i = 0; i < len; i++)
      {
        float gi = prep (g[i], w[i], gs, clip, wd);
        float si = rho * s[i] + (1.0f - rho) * gi * gi;
        float ai = rho * a[i] + (1.0f - rho) * gi;
        s[i] = si;
        a[i] = ai;
        den[i] = si - ai * ai;
        gp[i] = gi;
      }
  else
    for (int64_t i = 0; i < len; i++)
      {
        float gi = prep (g[i], w[i], gs, clip, wd);
        den[i] = s[i] = rho * s[i] + (1.0f - rho) * gi * gi;
        gp[i] = gi;
      }
  vsqrt (den, len);
  if (b)
    for (int64_t i = 0; i < len; i++)
      {
        float bi = mu * b[i] + gp[i] / (den[i] + eps);
        b[i] = bi;
        w[i] -= lr * bi;
      }
  else
    for (int64_t i = 0; i < len; i++)
      w[i] -= lr * gp[i] / (den[i] + eps);
}

/* AdaGrad (PyTorch, no lr decay, initial accumulator 0):
 *   s += g^2;  w -= lr * g / (sqrt (s) + eps) */
static void
k_adagrad (const Job *j, int64_t lo, int64_t len)
{
  float *restrict w = j->w + lo;
  const float *restrict g = j->g + lo;
  float *restrict s = j->s[0] + lo;
  const float gs = j->gs, clip = j->clip, wd = j->wd, eps = j->eps, lr = j->lr;
  float den[BLOCK], gp[BLOCK];

  for (int64_t i = 0; i < len; i++)
    {
      float gi = prep (g[i], w[i], gs, clip, wd);
      den[i] = s[i] = s[i] + gi * gi;
      gp[i] = gi;
    }
  vsqrt (den, len);
  for (int64_t i = 0; i < len; i++)
    w[i] -= lr * gp[i] / (den[i] + eps);
}

static gboolean
usable (const NlTensor *t, int64_t n)
{
  return t && t->dtype == NL_DTYPE_F32 && t->storage->device.type == NL_DEVICE_CPU
         && nl_tensor_is_contiguous (t) && nl_tensor_numel (t) == n;
}

void
nl_optim_update (const NlOptimConfig *c, float lr, int64_t t, float grad_scale,
                 NlTensor *weight, const NlTensor *grad, NlTensor *const *state)
{
  int64_t n, n_blocks;
  int n_states;
  Kernel kernel;
  Job j = { 0 };

  g_return_if_fail (c != NULL && weight != NULL);
  n = nl_tensor_numel (weight);
  g_return_if_fail (usable (weight, n) && usable (grad, n));
  g_return_if_fail (t >= 1);
  n_states = nl_optim_n_states (c);
  g_return_if_fail (n_states == 0 || state != NULL);
  for (int i = 0; i < n_states; i++)
    {
      g_return_if_fail (usable (state[i], n));
      j.s[i] = nl_tensor_f32 (state[i]);
    }

  j.w = nl_tensor_f32 (weight);
  j.g = nl_tensor_f32 (grad);
  j.gs = grad_scale;
  j.clip = c->clip_gradient > 0 ? c->clip_gradient : INFINITY;
  j.wd = c->kind == NL_OPTIM_ADAMW ? 0.0f : c->wd;
  j.lr = lr;
  j.mu = c->momentum;
  j.eps = c->epsilon;
  switch (c->kind)
    {
    case NL_OPTIM_SGD:
    case NL_OPTIM_NAG:
      j.nesterov = c->nesterov || c->kind == NL_OPTIM_NAG;
      kernel = k_sgd;
      break;
    case NL_OPTIM_ADAM:
    case NL_OPTIM_ADAMW:
      {
        double bc1 = 1.0 - pow (c->beta1, (double) t);
        double bc2 = 1.0 - pow (c->beta2, (double) t);
        j.b1 = c->beta1;
        j.b2 = c->beta2;
        j.step = (float) (lr / bc1);
        j.inv_sqrt_bc2 = (float) (1.0 / sqrt (bc2));
        j.decay = c->kind == NL_OPTIM_ADAMW ? 1.0f - lr * c->wd : 1.0f;
        kernel = k_adam;
      }
      break;
    case NL_OPTIM_RMSPROP:
      j.rho = c->rho;
      j.centered = c->centered;
      kernel = k_rmsprop;
      break;
    case NL_OPTIM_ADAGRAD:
      kernel = k_adagrad;
      break;
    case NL_OPTIM_COUNT:
    default:
      g_return_if_reached ();
    }

  n_blocks = (n + BLOCK - 1) / BLOCK;
#pragma omp parallel for if (n > NL_PAR_MIN) schedule (static)
  for (int64_t b = 0; b < n_blocks; b++)
    kernel (&j, b * BLOCK, MIN ((int64_t) BLOCK, n - b * BLOCK));
}

#define NORM_BLOCK 16384

static double
sum_squares (const float *restrict x, int64_t n)
{
  double s = 0;
  /* simd reduction: a fixed, vector-wide order, so still deterministic */
#pragma omp simd reduction (+ : s)
  for (int64_t i = 0; i < n; i++)
    s += (double) x[i] * x[i];
  return s;
}

double
nl_optim_global_norm (NlTensor *const *grads, int n)
{
  double total = 0;

  for (int k = 0; k < n; k++)
    {
      const NlTensor *t = grads[k];
      int64_t len, n_blocks;
      const float *x;

      if (t == NULL)
        continue;
      len = nl_tensor_numel (t);
      g_return_val_if_fail (usable (t, len), NAN);
      x = nl_tensor_f32 (t);
      n_blocks = (len + NORM_BLOCK - 1) / NORM_BLOCK;
      if (n_blocks <= 1)
        {
          total += sum_squares (x, len);
          continue;
        }
      /* Per-block partial sums added in block order: the same bits for
       * any thread count (an OpenMP reduction would combine in thread
       * finishing order). */
      g_autofree double *part = g_new (double, n_blocks);
#pragma omp parallel for if (len > NL_PAR_MIN) schedule (static)
      for (int64_t b = 0; b < n_blocks; b++)
        part[b] = sum_squares (x + b * NORM_BLOCK, MIN ((int64_t) NORM_BLOCK, len - b * NORM_BLOCK));
      for (int64_t b = 0; b < n_blocks; b++)
        total += part[b];
    }
  return sqrt (total);
}
