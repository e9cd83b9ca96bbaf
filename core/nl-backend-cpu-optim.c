/* nl-backend-cpu-optim.c — the CPU backend's fused optimizer update and
 * sum of squares.
 *
 * Each update walks the weight in blocks of BLOCK elements; blocks are
 * independent, so OpenMP splits them and the result is the same for any
 * thread count. Within a block the loops are plain element-wise code the
 * compiler vectorises, computing core/nl-optim-rule.h's expressions (the
 * CUDA kernel computes the same). Kinds that need a square root take it in
 * a separate short loop over a block-sized buffer (vsqrt): with
 * errno-setting sqrtf (the build does not pass -fno-math-errno) GCC will
 * not vectorise a loop that calls it, and the extra loop stays in L1, so
 * memory is still read and written once per update. */
#include "core/nl-backend-cpu.h"
#include "core/nl-threads.h"

#include <math.h>
#include <string.h>

#if defined(__SSE__)
#include <immintrin.h>
#elif defined(__aarch64__) && defined(__ARM_NEON)
#include <arm_neon.h>
#endif

#define BLOCK 1024

/* Everything one block needs. */
typedef struct {
  float *w;
  const float *g;
  float *s[3];
  NlOptimStep st;
} Job;

typedef void (*Kernel) (const Job *j, int64_t lo, int64_t len);

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

static void
k_sgd (const Job *j, int64_t lo, int64_t len)
{
  float *restrict w = j->w + lo;
  const float *restrict g = j->g + lo;
  float *restrict b = j->s[0] ? j->s[0] + lo : NULL;
  const float gs = j->st.gs, clip = j->st.clip, wd = j->st.wd, lr = j->st.lr, mu = j->st.mu;

  switch (j->st.rule)
    {
    case NL_OPTIM_RULE_SGD_NESTEROV:
      for (int64_t i = 0; i < len; i++)
        {
          float gi = nl_optim_prep (g[i], w[i], gs, clip, wd);
          float bi = nl_optim_sgd_buffer (b[i], gi, mu);
          b[i] = bi;
          w[i] = nl_optim_sgd_weight (w[i], lr, nl_optim_nesterov_direction (gi, mu, bi));
        }
      break;
    case NL_OPTIM_RULE_SGD_MOMENTUM:
      for (int64_t i = 0; i < len; i++)
        {
          float bi = nl_optim_sgd_buffer (b[i], nl_optim_prep (g[i], w[i], gs, clip, wd), mu);
          b[i] = bi;
          w[i] = nl_optim_sgd_weight (w[i], lr, bi);
        }
      break;
    default:
      for (int64_t i = 0; i < len; i++)
        w[i] = nl_optim_sgd_weight (w[i], lr, nl_optim_prep (g[i], w[i], gs, clip, wd));
      break;
    }
}

static void
k_adam (const Job *j, int64_t lo, int64_t len)
{
  float *restrict w = j->w + lo;
  const float *restrict g = j->g + lo;
  float *restrict m = j->s[0] + lo;
  float *restrict v = j->s[1] + lo;
  const NlOptimStep st = j->st;
  float den[BLOCK];

  for (int64_t i = 0; i < len; i++)
    {
      float gi = nl_optim_prep (g[i], w[i], st.gs, st.clip, st.wd);
      m[i] = nl_optim_adam_m (m[i], gi, &st);
      den[i] = v[i] = nl_optim_adam_v (v[i], gi, &st);
    }
  vsqrt (den, len);
  for (int64_t i = 0; i < len; i++)
    w[i] = nl_optim_adam_weight (w[i], m[i], den[i], &st);
}

static void
k_rmsprop (const Job *j, int64_t lo, int64_t len)
{
  float *restrict w = j->w + lo;
  const float *restrict g = j->g + lo;
  float *restrict s = j->s[0] + lo;
  float *restrict a = j->st.centered ? j->s[1] + lo : NULL;
  float *restrict b = j->st.momentum ? j->s[j->st.centered ? 2 : 1] + lo : NULL;
  const NlOptimStep st = j->st;
  float den[BLOCK], gp[BLOCK];

  if (a)
    for (int64_t i = 0; i < len; i++)
      {
        float gi = nl_optim_prep (g[i], w[i], st.gs, st.clip, st.wd);
        float si = nl_optim_rmsprop_square (s[i], gi, &st);
        float ai = nl_optim_rmsprop_average (a[i], gi, &st);
        s[i] = si;
        a[i] = ai;
        den[i] = nl_optim_rmsprop_centered (si, ai);
        gp[i] = gi;
      }
  else
    for (int64_t i = 0; i < len; i++)
      {
        float gi = nl_optim_prep (g[i], w[i], st.gs, st.clip, st.wd);
        den[i] = s[i] = nl_optim_rmsprop_square (s[i], gi, &st);
        gp[i] = gi;
      }
  vsqrt (den, len);
  if (b)
    for (int64_t i = 0; i < len; i++)
      {
        float bi = nl_optim_rmsprop_buffer (b[i], gp[i], den[i], &st);
        b[i] = bi;
        w[i] = nl_optim_sgd_weight (w[i], st.lr, bi);
      }
  else
    for (int64_t i = 0; i < len; i++)
      w[i] = nl_optim_scaled_step (w[i], gp[i], den[i], &st);
}

static void
k_adagrad (const Job *j, int64_t lo, int64_t len)
{
  float *restrict w = j->w + lo;
  const float *restrict g = j->g + lo;
  float *restrict s = j->s[0] + lo;
  const NlOptimStep st = j->st;
  float den[BLOCK], gp[BLOCK];

  for (int64_t i = 0; i < len; i++)
    {
      float gi = nl_optim_prep (g[i], w[i], st.gs, st.clip, st.wd);
      den[i] = s[i] = nl_optim_adagrad_sum (s[i], gi);
      gp[i] = gi;
    }
  vsqrt (den, len);
  for (int64_t i = 0; i < len; i++)
    w[i] = nl_optim_scaled_step (w[i], gp[i], den[i], &st);
}

gboolean
nl_backend_cpu_optim_update (NlBackend *b, const NlOptimConfig *c, float lr, int64_t t, float grad_scale, float *w,
                             const float *g, float *const *state, int64_t n, GError **error)
{
  int n_states = nl_optim_n_states (c);
  int64_t n_blocks;
  Kernel kernel;
  Job j = { 0 };

  g_return_val_if_fail (c != NULL && w != NULL && g != NULL && t >= 1, FALSE);
  g_return_val_if_fail ((unsigned) c->kind < NL_OPTIM_COUNT, FALSE);
  g_return_val_if_fail (n_states == 0 || state != NULL, FALSE);
  for (int i = 0; i < n_states; i++)
    {
      g_return_val_if_fail (state[i] != NULL, FALSE);
      j.s[i] = state[i];
    }
  j.w = w;
  j.g = g;
  j.st = nl_optim_step_make (c, lr, t, grad_scale);
  switch (j.st.rule)
    {
    case NL_OPTIM_RULE_ADAM:
      kernel = k_adam;
      break;
    case NL_OPTIM_RULE_RMSPROP:
      kernel = k_rmsprop;
      break;
    case NL_OPTIM_RULE_ADAGRAD:
      kernel = k_adagrad;
      break;
    default:
      kernel = k_sgd;
      break;
    }
  n_blocks = (n + BLOCK - 1) / BLOCK;
#pragma omp parallel for if (n > NL_PAR_MIN) schedule (static)
  for (int64_t k = 0; k < n_blocks; k++)
    kernel (&j, k * BLOCK, MIN ((int64_t) BLOCK, n - k * BLOCK));
  return TRUE;
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

gboolean
nl_backend_cpu_sum_squares (NlBackend *b, const float *const *xs, const int64_t *lens, int n, double *out,
                            GError **error)
{
  double total = 0;

  for (int k = 0; k < n; k++)
    {
      const float *x = xs[k];
      int64_t len = lens[k], n_blocks;

      if (x == NULL)
        continue;
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
      for (int64_t i = 0; i < n_blocks; i++)
        part[i] = sum_squares (x + i * NORM_BLOCK, MIN ((int64_t) NORM_BLOCK, len - i * NORM_BLOCK));
      for (int64_t i = 0; i < n_blocks; i++)
        total += part[i];
    }
  *out = total;
  return TRUE;
}
