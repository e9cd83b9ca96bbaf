/* test-optim.c — optimizers against a double-precision scalar reference
 * written here from the published formulas, plus hand-computed literals;
 * learning-rate schedules at chosen steps. */
#include <math.h>
#include <omp.h>
#include <string.h>

#include "engine/train/nl-lr-schedule.h"
#include "engine/train/nl-optim.h"
#include "nl-test-util.h"

/* ---- reference ---------------------------------------------------------- */

typedef struct {
  double b;    /* SGD / RMSProp momentum buffer */
  double m, v; /* Adam moments */
  double s;    /* RMSProp square average, AdaGrad sum */
  double a;    /* RMSProp gradient average (centered) */
} Ref;

/* One update of one element, textbook form (Adam with explicit m-hat and
 * v-hat rather than PyTorch's folded step size). */
static double
ref_update (const NlOptimConfig *c, double lr, int64_t t, double gs, double w, double grad, Ref *r)
{
  double g = grad * gs;
  if (c->clip_gradient > 0)
    g = fmin (fmax (g, -c->clip_gradient), c->clip_gradient);
  if (c->kind != NL_OPTIM_ADAMW)
    g += c->wd * w;

  switch (c->kind)
    {
    case NL_OPTIM_SGD:
    case NL_OPTIM_NAG:
      if (c->momentum != 0)
        {
          gboolean nesterov = c->nesterov || c->kind == NL_OPTIM_NAG;
          r->b = c->momentum * r->b + g;
          g = nesterov ? g + c->momentum * r->b : r->b;
        }
      return w - lr * g;
    case NL_OPTIM_ADAM:
    case NL_OPTIM_ADAMW:
      {
        double mhat, vhat;
        if (c->kind == NL_OPTIM_ADAMW)
          w -= lr * c->wd * w;
        r->m = c->beta1 * r->m + (1 - (double) c->beta1) * g;
        r->v = c->beta2 * r->v + (1 - (double) c->beta2) * g * g;
        mhat = r->m / (1 - pow (c->beta1, (double) t));
        vhat = r->v / (1 - pow (c->beta2, (double) t));
        return w - lr * mhat / (sqrt (vhat) + c->epsilon);
      }
    case NL_OPTIM_RMSPROP:
      {
        double avg;
        r->s = c->rho * r->s + (1 - (double) c->rho) * g * g;
        if (c->centered)
          {
            r->a = c->rho * r->a + (1 - (double) c->rho) * g;
            avg = sqrt (r->s - r->a * r->a) + c->epsilon;
          }
        else
          avg = sqrt (r->s) + c->epsilon;
        if (c->momentum != 0)
          {
            r->b = c->momentum * r->b + g / avg;
            return w - lr * r->b;
          }
        return w - lr * g / avg;
      }
    case NL_OPTIM_ADAGRAD:
      r->s += g * g;
      return w - lr * g / (sqrt (r->s) + c->epsilon);
    default:
      g_assert_not_reached ();
    }
}

/* ---- helpers ------------------------------------------------------------ */

typedef struct {
  NlTensor *w, *g;
  NlTensor *state[3];
  int n_states;
} Slot;

static void
slot_init (Slot *s, const NlOptimConfig *c, int64_t n)
{
  NlShape shape = nl_shape_of (1, n);
  s->w = nl_tensor_new_shape (NL_DTYPE_F32, &shape);
  s->g = nl_tensor_new_shape (NL_DTYPE_F32, &shape);
  s->n_states = nl_optim_n_states (c);
  for (int i = 0; i < 3; i++)
    s->state[i] = i < s->n_states ? nl_tensor_zeros (NL_DTYPE_F32, &shape) : NULL;
}

static void
slot_clear (Slot *s)
{
  nl_tensor_unref (s->w);
  nl_tensor_unref (s->g);
  for (int i = 0; i < 3; i++)
    if (s->state[i])
      nl_tensor_unref (s->state[i]);
}

/* Three updates with varying rates and fresh gradients against the
 * reference; gradients span [-3, 3) so clipping at 1 bites. */
static void
check_against_reference (const NlOptimConfig *c, int64_t n, float gs)
{
  static const float lrs[3] = { 1.0f, 0.5f, 0.25f };
  Slot s;
  g_autofree double *w_ref = g_new (double, n);
  g_autofree Ref *r = g_new0 (Ref, n);
  g_autofree float *expect = g_new (float, n);

  slot_init (&s, c, n);
  nl_test_fill_uniform (s.w, -1, 1, 7);
  for (int64_t i = 0; i < n; i++)
    w_ref[i] = nl_tensor_f32 (s.w)[i];
  for (int t = 1; t <= 3; t++)
    {
      float lr = c->lr * lrs[t - 1];
      nl_test_fill_uniform (s.g, -3, 3, 100 + t);
      nl_optim_update (c, lr, t, gs, s.w, s.g, s.state);
      for (int64_t i = 0; i < n; i++)
        {
          w_ref[i] = ref_update (c, lr, t, gs, w_ref[i], nl_tensor_f32 (s.g)[i], &r[i]);
          expect[i] = (float) w_ref[i];
        }
      nl_test_assert_close (nl_tensor_f32 (s.w), expect, n, 2e-6, 2e-5);
    }
  slot_clear (&s);
}

typedef struct {
  const char *what;
  NlOptimKind kind;
  float momentum, wd, clip;
  gboolean nesterov, centered;
} Case;

static const Case cases[] = {
  { "sgd", NL_OPTIM_SGD, 0, 0, 0, FALSE, FALSE },
  { "sgd wd", NL_OPTIM_SGD, 0, 0.1f, 0, FALSE, FALSE },
  { "sgd momentum", NL_OPTIM_SGD, 0.9f, 0, 0, FALSE, FALSE },
  { "sgd momentum wd clip", NL_OPTIM_SGD, 0.8f, 0.05f, 1.0f, FALSE, FALSE },
  { "sgd nesterov", NL_OPTIM_SGD, 0.9f, 0.01f, 0, TRUE, FALSE },
  { "nag", NL_OPTIM_NAG, 0.9f, 0, 0, TRUE, FALSE },
  { "adam", NL_OPTIM_ADAM, 0, 0, 0, FALSE, FALSE },
  { "adam wd clip", NL_OPTIM_ADAM, 0, 0.1f, 1.0f, FALSE, FALSE },
  { "adamw", NL_OPTIM_ADAMW, 0, 0.01f, 0, FALSE, FALSE },
  { "adamw wd 0.3", NL_OPTIM_ADAMW, 0, 0.3f, 0, FALSE, FALSE },
  { "rmsprop momentum", NL_OPTIM_RMSPROP, 0.9f, 0, 0, FALSE, FALSE },
  { "rmsprop plain", NL_OPTIM_RMSPROP, 0, 0, 0, FALSE, FALSE },
  { "rmsprop centered", NL_OPTIM_RMSPROP, 0, 0, 0, FALSE, TRUE },
  { "rmsprop centered momentum wd", NL_OPTIM_RMSPROP, 0.5f, 0.1f, 0, FALSE, TRUE },
  { "adagrad", NL_OPTIM_ADAGRAD, 0, 0, 0, FALSE, FALSE },
  { "adagrad wd clip", NL_OPTIM_ADAGRAD, 0, 0.1f, 1.0f, FALSE, FALSE },
};

static void
case_config (const Case *k, NlOptimConfig *c)
{
  nl_optim_config_init (c, k->kind);
  c->momentum = k->momentum;
  c->wd = k->wd;
  c->clip_gradient = k->clip;
  c->nesterov = k->nesterov;
  c->centered = k->centered;
  if (k->kind == NL_OPTIM_SGD || k->kind == NL_OPTIM_NAG)
    c->lr = 0.1f;
  else if (k->kind != NL_OPTIM_ADAGRAD)
    c->lr = 0.01f;
}

static void
test_reference_small (void)
{
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      NlOptimConfig c;
      g_test_message ("%s", cases[i].what);
      case_config (&cases[i], &c);
      check_against_reference (&c, 37, 1.0f);
      check_against_reference (&c, 37, 0.6f);
    }
}

/* Several blocks and the OpenMP path. */
static void
test_reference_large (void)
{
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      NlOptimConfig c;
      g_test_message ("%s", cases[i].what);
      case_config (&cases[i], &c);
      check_against_reference (&c, 100003, 0.8f);
    }
}

/* ---- literal, hand-computed updates -------------------------------------- */

/* Three updates of a single weight starting at w0 with gradients g[0..2];
 * returns the weight after each. */
static void
run3 (const NlOptimConfig *c, float lr, float gs, float w0, const float g[3], float out[3])
{
  Slot s;
  slot_init (&s, c, 1);
  nl_tensor_f32 (s.w)[0] = w0;
  for (int t = 1; t <= 3; t++)
    {
      nl_tensor_f32 (s.g)[0] = g[t - 1];
      nl_optim_update (c, lr, t, gs, s.w, s.g, s.state);
      out[t - 1] = nl_tensor_f32 (s.w)[0];
    }
  slot_clear (&s);
}

#define ASSERT3(out, a, b, c_, tol)                 \
  do                                                \
    {                                               \
      g_assert_cmpfloat_with_epsilon ((out)[0], (a), (tol)); \
      g_assert_cmpfloat_with_epsilon ((out)[1], (b), (tol)); \
      g_assert_cmpfloat_with_epsilon ((out)[2], (c_), (tol)); \
    }                                               \
  while (0)

static void
test_literal_sgd (void)
{
  NlOptimConfig c;
  float out[3];
  const float g[3] = { 1.0f, 0.5f, -1.0f };

  /* plain: w = 1 - 0.1 * (1, 0.5, -1) cumulatively */
  nl_optim_config_init (&c, NL_OPTIM_SGD);
  run3 (&c, 0.1f, 1.0f, 1.0f, g, out);
  ASSERT3 (out, 0.9f, 0.85f, 0.95f, 1e-6);

  /* momentum 0.9: b = 1, 1.4, 0.26; w = 0.9, 0.76, 0.734 */
  c.momentum = 0.9f;
  g_assert_cmpint (nl_optim_n_states (&c), ==, 1);
  run3 (&c, 0.1f, 1.0f, 1.0f, g, out);
  ASSERT3 (out, 0.9f, 0.76f, 0.734f, 1e-6);

  /* nesterov: d = g + 0.9 b = 1.9, 1.76, -0.766; w = 0.81, 0.634, 0.7106 */
  c.nesterov = TRUE;
  run3 (&c, 0.1f, 1.0f, 1.0f, g, out);
  ASSERT3 (out, 0.81f, 0.634f, 0.7106f, 1e-6);

  /* NAG is SGD with nesterov momentum 0.9 by default */
  nl_optim_config_init (&c, NL_OPTIM_NAG);
  run3 (&c, 0.1f, 1.0f, 1.0f, g, out);
  ASSERT3 (out, 0.81f, 0.634f, 0.7106f, 1e-6);

  /* weight decay alone (zero gradient): w *= 1 - lr * wd each step */
  nl_optim_config_init (&c, NL_OPTIM_SGD);
  c.wd = 0.1f;
  run3 (&c, 0.1f, 1.0f, 1.0f, (const float[3]) { 0, 0, 0 }, out);
  ASSERT3 (out, 0.99f, 0.9801f, 0.970299f, 1e-6);
}

static void
test_literal_adaptive (void)
{
  NlOptimConfig c;
  float out[3];
  const float ones[3] = { 1, 1, 1 };
  const float zeros[3] = { 0, 0, 0 };

  /* Adam with a constant gradient: m-hat = g, v-hat = g^2, so each step
   * moves by lr whatever g is */
  nl_optim_config_init (&c, NL_OPTIM_ADAM);
  run3 (&c, 0.1f, 1.0f, 1.0f, ones, out);
  ASSERT3 (out, 0.9f, 0.8f, 0.7f, 1e-6);
  run3 (&c, 0.1f, 1.0f, 1.0f, (const float[3]) { -20, -20, -20 }, out);
  ASSERT3 (out, 1.1f, 1.2f, 1.3f, 1e-6);

  /* AdamW, wd 0.1: w = w * 0.99 - 0.1 -> 0.89, 0.7811, 0.673289 */
  nl_optim_config_init (&c, NL_OPTIM_ADAMW);
  c.wd = 0.1f;
  run3 (&c, 0.1f, 1.0f, 1.0f, ones, out);
  ASSERT3 (out, 0.89f, 0.7811f, 0.673289f, 1e-6);

  /* RMSProp rho 0.9, no momentum, lr 0.01, g = 1: s = 0.1, 0.19, 0.271;
   * w -= 0.01 / sqrt (s) */
  nl_optim_config_init (&c, NL_OPTIM_RMSPROP);
  c.momentum = 0;
  run3 (&c, 0.01f, 1.0f, 1.0f, ones, out);
  ASSERT3 (out, 0.9683772f, 0.9454357f, 0.9262262f, 1e-6);

  /* centered: a = 0.1, 0.19, 0.271 too, so s - a^2 = 0.09, 0.1539, 0.197559 */
  c.centered = TRUE;
  g_assert_cmpint (nl_optim_n_states (&c), ==, 2);
  run3 (&c, 0.01f, 1.0f, 1.0f, ones, out);
  ASSERT3 (out, 0.9666667f, 0.9411760f, 0.9186777f, 1e-6);

  /* AdaGrad lr 0.1, g = 1: s = 1, 2, 3; w -= 0.1 / sqrt (s) */
  nl_optim_config_init (&c, NL_OPTIM_ADAGRAD);
  run3 (&c, 0.1f, 1.0f, 1.0f, ones, out);
  ASSERT3 (out, 0.9f, 0.8292893f, 0.7715543f, 1e-6);

  /* Decoupled vs L2 decay, zero gradient, wd 0.5, lr 0.1, w0 = 2.
   * AdamW: m = v = 0, only the decay acts: 2 * 0.95^t. */
  nl_optim_config_init (&c, NL_OPTIM_ADAMW);
  c.wd = 0.5f;
  run3 (&c, 0.1f, 1.0f, 2.0f, zeros, out);
  ASSERT3 (out, 1.9f, 1.805f, 1.71475f, 1e-6);
  /* Adam: the decay is a gradient 0.5 w and gets normalised: the first
   * step moves by lr exactly; then 1.8001665, 1.7006234 (worked out by
   * hand from m-hat / sqrt (v-hat) = 0.185/0.19 / sqrt (0.0019015/0.001999)) */
  nl_optim_config_init (&c, NL_OPTIM_ADAM);
  c.wd = 0.5f;
  run3 (&c, 0.1f, 1.0f, 2.0f, zeros, out);
  ASSERT3 (out, 1.9f, 1.8001665f, 1.7006234f, 2e-6);
}

/* States after one update hold what the formulas say. */
static void
test_state_contents (void)
{
  NlOptimConfig c;
  Slot s;

  nl_optim_config_init (&c, NL_OPTIM_ADAM);
  slot_init (&s, &c, 1);
  nl_tensor_f32 (s.w)[0] = 1;
  nl_tensor_f32 (s.g)[0] = 2;
  nl_optim_update (&c, 0.001f, 1, 1.0f, s.w, s.g, s.state);
  g_assert_cmpfloat_with_epsilon (nl_tensor_f32 (s.state[0])[0], 0.2f, 1e-7);  /* (1 - b1) g */
  /* (1 - b2) g^2, with the float b2 (0.999f is 0.99900001) */
  g_assert_cmpfloat_with_epsilon (nl_tensor_f32 (s.state[1])[0], (1 - (double) c.beta2) * 4, 1e-9);
  g_assert_cmpfloat_with_epsilon (nl_tensor_f32 (s.state[1])[0], 0.004f, 1e-7);
  slot_clear (&s);

  nl_optim_config_init (&c, NL_OPTIM_RMSPROP);
  c.centered = TRUE; /* states: s, a, b */
  g_assert_cmpint (nl_optim_n_states (&c), ==, 3);
  slot_init (&s, &c, 1);
  nl_tensor_f32 (s.w)[0] = 1;
  nl_tensor_f32 (s.g)[0] = 2;
  nl_optim_update (&c, 0.001f, 1, 1.0f, s.w, s.g, s.state);
  g_assert_cmpfloat_with_epsilon (nl_tensor_f32 (s.state[0])[0], 0.4f, 1e-6);
  g_assert_cmpfloat_with_epsilon (nl_tensor_f32 (s.state[1])[0], 0.2f, 1e-6);
  /* b = g / (sqrt (0.4 - 0.04) + eps) = 2 / 0.6 */
  g_assert_cmpfloat_with_epsilon (nl_tensor_f32 (s.state[2])[0], 2.0f / 0.6f, 1e-5);
  slot_clear (&s);
}

/* grad_scale multiplies first, then the clip applies, then wd is added. */
static void
test_scale_and_clip (void)
{
  NlOptimConfig c;
  float out[3];

  nl_optim_config_init (&c, NL_OPTIM_SGD);
  run3 (&c, 1.0f, 0.25f, 0.0f, (const float[3]) { 4, 4, -8 }, out);
  ASSERT3 (out, -1.0f, -2.0f, 0.0f, 1e-6);

  /* 4 * 0.5 = 2, clipped to 1.5 (clipping before scaling would give 0.75) */
  c.clip_gradient = 1.5f;
  run3 (&c, 1.0f, 0.5f, 0.0f, (const float[3]) { 4, -4, 1 }, out);
  ASSERT3 (out, -1.5f, 0.0f, -0.5f, 1e-6);

  /* wd is added after the clip: w = 10, g = 100 -> 1.5 + 0.1 * 10 = 2.5 */
  c.wd = 0.1f;
  run3 (&c, 1.0f, 1.0f, 10.0f, (const float[3]) { 100, 0, 0 }, out);
  g_assert_cmpfloat_with_epsilon (out[0], 7.5f, 1e-6);

  /* a NaN gradient is not hidden by the clip */
  for (int k = 0; k < NL_OPTIM_COUNT; k++)
    {
      nl_optim_config_init (&c, (NlOptimKind) k);
      c.clip_gradient = 1.0f;
      run3 (&c, 0.1f, 1.0f, 1.0f, (const float[3]) { NAN, 0, 0 }, out);
      g_assert_true (isnan (out[0]));
    }
}

/* Same bits with one thread and with several. */
static void
test_thread_independence (void)
{
  const int64_t n = 300001;
  int saved = omp_get_max_threads ();
  for (int k = 0; k < NL_OPTIM_COUNT; k++)
    {
      NlOptimConfig c;
      Slot a, b;
      nl_optim_config_init (&c, (NlOptimKind) k);
      slot_init (&a, &c, n);
      slot_init (&b, &c, n);
      nl_test_fill_uniform (a.w, -1, 1, 1);
      nl_test_fill_uniform (b.w, -1, 1, 1);
      nl_test_fill_uniform (a.g, -1, 1, 2);
      nl_test_fill_uniform (b.g, -1, 1, 2);
      omp_set_num_threads (1);
      nl_optim_update (&c, c.lr, 1, 1.0f, a.w, a.g, a.state);
      omp_set_num_threads (MAX (saved, 2));
      nl_optim_update (&c, c.lr, 1, 1.0f, b.w, b.g, b.state);
      g_assert_cmpmem (nl_tensor_f32 (a.w), n * 4, nl_tensor_f32 (b.w), n * 4);
      slot_clear (&a);
      slot_clear (&b);
    }
  omp_set_num_threads (saved);
}

static void
test_global_norm (void)
{
  NlShape s2 = nl_shape_of (1, (int64_t) 2), s1 = nl_shape_of (1, (int64_t) 1);
  g_autoptr (NlTensor) a = nl_tensor_new_shape (NL_DTYPE_F32, &s2);
  g_autoptr (NlTensor) b = nl_tensor_new_shape (NL_DTYPE_F32, &s1);
  NlShape big_shape = nl_shape_of (2, (int64_t) 1000, (int64_t) 1001);
  NlShape mid_shape = nl_shape_of (1, (int64_t) 12345);
  g_autoptr (NlTensor) big = nl_tensor_new_shape (NL_DTYPE_F32, &big_shape);
  g_autoptr (NlTensor) mid = nl_tensor_new_shape (NL_DTYPE_F32, &mid_shape);
  double ref = 0, n1, n2;
  int saved = omp_get_max_threads ();

  nl_tensor_f32 (a)[0] = 3;
  nl_tensor_f32 (a)[1] = 4;
  nl_tensor_f32 (b)[0] = 12;
  g_assert_cmpfloat (nl_optim_global_norm ((NlTensor *[]) { a, NULL, b }, 3), ==, 13.0);
  g_assert_cmpfloat (nl_optim_global_norm ((NlTensor *[]) { a }, 1), ==, 5.0);
  g_assert_cmpfloat (nl_optim_global_norm (NULL, 0), ==, 0.0);

  nl_test_fill_uniform (big, -2, 2, 3);
  nl_test_fill_uniform (mid, -1, 1, 4);
  for (int64_t i = 0; i < nl_tensor_numel (big); i++)
    ref += (double) nl_tensor_f32 (big)[i] * nl_tensor_f32 (big)[i];
  for (int64_t i = 0; i < nl_tensor_numel (mid); i++)
    ref += (double) nl_tensor_f32 (mid)[i] * nl_tensor_f32 (mid)[i];
  ref = sqrt (ref + 25);
  omp_set_num_threads (1);
  n1 = nl_optim_global_norm ((NlTensor *[]) { big, mid, a }, 3);
  omp_set_num_threads (MAX (saved, 2));
  n2 = nl_optim_global_norm ((NlTensor *[]) { big, mid, a }, 3);
  omp_set_num_threads (saved);
  g_assert_cmpfloat_with_epsilon (n1, ref, ref * 1e-12);
  g_assert_cmpfloat (n1, ==, n2);
}

static void
test_config_and_names (void)
{
  NlOptimConfig c;
  NlOptimKind k;
  g_autoptr (GError) error = NULL;

  nl_optim_config_init (&c, NL_OPTIM_SGD);
  g_assert_cmpfloat (c.lr, ==, 0.01f);
  g_assert_cmpfloat (c.momentum, ==, 0);
  g_assert_cmpint (nl_optim_n_states (&c), ==, 0);
  nl_optim_config_init (&c, NL_OPTIM_NAG);
  g_assert_cmpfloat (c.momentum, ==, 0.9f);
  g_assert_true (c.nesterov);
  g_assert_cmpint (nl_optim_n_states (&c), ==, 1);
  nl_optim_config_init (&c, NL_OPTIM_ADAM);
  g_assert_cmpfloat (c.lr, ==, 0.001f);
  g_assert_cmpfloat (c.beta1, ==, 0.9f);
  g_assert_cmpfloat (c.beta2, ==, 0.999f);
  g_assert_cmpfloat (c.epsilon, ==, 1e-8f);
  g_assert_cmpfloat (c.wd, ==, 0);
  g_assert_cmpint (nl_optim_n_states (&c), ==, 2);
  nl_optim_config_init (&c, NL_OPTIM_ADAMW);
  g_assert_cmpfloat (c.wd, ==, 0.01f);
  g_assert_cmpint (nl_optim_n_states (&c), ==, 2);
  nl_optim_config_init (&c, NL_OPTIM_RMSPROP);
  g_assert_cmpfloat (c.lr, ==, 0.001f);
  g_assert_cmpfloat (c.rho, ==, 0.9f);
  g_assert_cmpfloat (c.momentum, ==, 0.9f);
  g_assert_cmpfloat (c.epsilon, ==, 1e-7f);
  g_assert_false (c.centered);
  g_assert_cmpint (nl_optim_n_states (&c), ==, 2);
  c.momentum = 0;
  g_assert_cmpint (nl_optim_n_states (&c), ==, 1);
  nl_optim_config_init (&c, NL_OPTIM_ADAGRAD);
  g_assert_cmpfloat (c.lr, ==, 0.1f);
  g_assert_cmpfloat (c.epsilon, ==, 1e-7f);
  g_assert_cmpint (nl_optim_n_states (&c), ==, 1);

  for (int i = 0; i < NL_OPTIM_COUNT; i++)
    {
      g_assert_true (nl_optim_kind_parse (nl_optim_kind_name ((NlOptimKind) i), &k, NULL));
      g_assert_cmpint (k, ==, i);
    }
  g_assert_true (nl_optim_kind_parse ("AdamW", &k, NULL));
  g_assert_cmpint (k, ==, NL_OPTIM_ADAMW);
  g_assert_false (nl_optim_kind_parse ("adam_w", &k, &error));
  g_assert_error (error, NL_OPTIM_ERROR, NL_OPTIM_ERROR_INVALID);
  g_assert_nonnull (strstr (error->message, "adam_w"));
  g_assert_nonnull (strstr (error->message, "rmsprop"));
  g_assert_nonnull (strstr (error->message, "adagrad"));
  g_clear_error (&error);
  g_assert_false (nl_optim_kind_parse ("", &k, &error));
  g_assert_error (error, NL_OPTIM_ERROR, NL_OPTIM_ERROR_INVALID);
}

/* ---- schedules ---------------------------------------------------------- */

static NlLrSchedule *
sched (const char *spec, float base, int64_t total)
{
  g_autoptr (GError) error = NULL;
  NlLrSchedule *s = nl_lr_schedule_new (spec, base, total, &error);
  g_assert_no_error (error);
  g_assert_nonnull (s);
  return s;
}

#define LR(s, n, v) g_assert_cmpfloat_with_epsilon (nl_lr_schedule_get ((s), (n)), (v), 1e-6)

static void
test_schedule_values (void)
{
  g_autoptr (NlLrSchedule) c = sched ("constant", 0.1f, 0);
  g_autoptr (NlLrSchedule) f = sched ("factor:10:0.5", 1.0f, 0);
  g_autoptr (NlLrSchedule) fs = sched ("factor:10:0.5:0.2", 1.0f, 0);
  g_autoptr (NlLrSchedule) mf = sched ("multifactor:5,8:0.1", 1.0f, 0);
  g_autoptr (NlLrSchedule) cos = sched ("cosine", 1.0f, 100);
  g_autoptr (NlLrSchedule) cosf = sched ("Cosine:0.1", 1.0f, 100);
  g_autoptr (NlLrSchedule) poly = sched ("poly", 1.0f, 100);
  g_autoptr (NlLrSchedule) poly1 = sched ("poly:1:0.1", 1.0f, 100);
  g_autoptr (NlLrSchedule) poly3 = sched ("poly:3", 2.0f, 10);

  LR (c, 0, 0.1f);
  LR (c, 100000, 0.1f);

  LR (f, 0, 1.0f);
  LR (f, 9, 1.0f);
  LR (f, 10, 0.5f);
  LR (f, 25, 0.25f);
  LR (f, 100, 0.0009765625f); /* 0.5^10 */
  LR (fs, 19, 0.5f);
  LR (fs, 20, 0.25f);
  LR (fs, 30, 0.2f); /* 0.125 held at STOP_LR */
  LR (fs, 1000, 0.2f);

  LR (mf, 4, 1.0f);
  LR (mf, 5, 0.1f);
  LR (mf, 7, 0.1f);
  LR (mf, 8, 0.01f);
  LR (mf, 1000, 0.01f);

  LR (cos, 0, 1.0f);
  LR (cos, 25, 0.8535534f); /* (1 + cos (pi / 4)) / 2 */
  LR (cos, 50, 0.5f);
  LR (cos, 75, 0.1464466f);
  LR (cos, 100, 0.0f);
  LR (cos, 150, 0.0f);
  LR (cosf, 50, 0.55f);
  LR (cosf, 100, 0.1f);

  LR (poly, 0, 1.0f);
  LR (poly, 50, 0.25f);
  LR (poly, 90, 0.01f);
  LR (poly, 100, 0.0f);
  LR (poly1, 50, 0.55f);
  LR (poly1, 99, 0.109f);
  LR (poly3, 5, 0.25f); /* 2 * 0.5^3 */

  g_assert_cmpstr (nl_lr_schedule_describe (c), ==, "constant");
  g_assert_cmpstr (nl_lr_schedule_describe (f), ==, "factor:10:0.5:1e-08");
  g_assert_cmpstr (nl_lr_schedule_describe (mf), ==, "multifactor:5,8:0.1");
  g_assert_cmpstr (nl_lr_schedule_describe (cosf), ==, "cosine:0.1");
  g_assert_cmpstr (nl_lr_schedule_describe (poly), ==, "poly:2:0");
}

static void
test_schedule_warmup (void)
{
  g_autoptr (NlLrSchedule) cw = sched ("cosine+warmup:10", 1.0f, 110);
  g_autoptr (NlLrSchedule) kw = sched ("constant + warmup:4:0.2", 1.0f, 0);
  g_autoptr (NlLrSchedule) fw = sched ("factor:5:0.5+warmup:10", 1.0f, 0);
  g_autoptr (NlLrSchedule) pw = sched ("poly:1+warmup:20:0.5", 2.0f, 120);
  g_autoptr (NlLrSchedule) w0 = sched ("cosine+warmup:0", 1.0f, 10);

  /* linear from 0 to the base, then cosine over the remaining 100 */
  LR (cw, 0, 0.0f);
  LR (cw, 5, 0.5f);
  LR (cw, 9, 0.9f);
  LR (cw, 10, 1.0f);
  LR (cw, 60, 0.5f);
  LR (cw, 110, 0.0f);
  g_assert_cmpstr (nl_lr_schedule_describe (cw), ==, "cosine:0+warmup:10:0");

  LR (kw, 0, 0.2f);
  LR (kw, 2, 0.6f);
  LR (kw, 4, 1.0f);
  LR (kw, 40, 1.0f);

  /* factor counts from the start of the run; the warm-up heads for its
   * value at the end of the warm-up (0.25) */
  LR (fw, 0, 0.0f);
  LR (fw, 5, 0.125f);
  LR (fw, 10, 0.25f);
  LR (fw, 15, 0.125f);

  LR (pw, 10, 1.25f);
  LR (pw, 20, 2.0f);
  LR (pw, 70, 1.0f);

  LR (w0, 0, 1.0f);
  LR (w0, 5, 0.5f);
  g_assert_cmpstr (nl_lr_schedule_describe (w0), ==, "cosine:0");
}

static void
test_schedule_errors (void)
{
  static const struct {
    const char *spec;
    int64_t total;
    const char *names; /* what the message must mention */
  } bad[] = {
    { "", 100, "empty" },
    { "bogus", 100, "bogus" },
    { "factor", 100, "STEP" },
    { "factor:0:0.5", 100, "'0'" },
    { "factor:ten:0.5", 100, "ten" },
    { "factor:10:abc", 100, "abc" },
    { "factor:10:1.5", 100, "1.5" },
    { "factor:10:0.5:-1", 100, "-1" },
    { "factor:10:0.5:0:9", 100, "'9'" },
    { "multifactor:5,3:0.1", 100, "3" },
    { "multifactor:5,x:0.1", 100, "'x'" },
    { "multifactor::0.1", 100, "no steps" },
    { "multifactor:5", 100, "FACTOR" },
    { "cosine", 0, "cosine" },
    { "cosine:x", 100, "'x'" },
    { "cosine:5", 100, "above the base" },
    { "poly:0", 100, "POWER '0'" },
    { "poly:2:0.1:extra", 100, "extra" },
    { "constant:3", 100, "'3'" },
    { "constant+warmup", 100, "warmup" },
    { "constant+warmup:abc", 100, "abc" },
    { "constant+warmup:-5", 100, "-5" },
    { "constant+warmup:10:-1", 100, "-1" },
    { "constant+cooldown:5", 100, "cooldown" },
    { "constant+warmup:2+warmup:3", 100, "twice" },
    { "cosine+warmup:200", 100, "warm-up" },
  };
  for (guint i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_autoptr (GError) error = NULL;
      NlLrSchedule *s = nl_lr_schedule_new (bad[i].spec, 0.1f, bad[i].total, &error);
      g_test_message ("spec \"%s\": %s", bad[i].spec, error ? error->message : "(accepted)");
      g_assert_null (s);
      g_assert_error (error, NL_LR_SCHEDULE_ERROR, NL_LR_SCHEDULE_ERROR_INVALID);
      g_assert_nonnull (strstr (error->message, bad[i].names));
    }
  {
    g_autoptr (GError) error = NULL;
    g_assert_null (nl_lr_schedule_new ("constant", -1.0f, 10, &error));
    g_assert_error (error, NL_LR_SCHEDULE_ERROR, NL_LR_SCHEDULE_ERROR_INVALID);
  }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/optim/config-and-names", test_config_and_names);
  g_test_add_func ("/optim/literal-sgd", test_literal_sgd);
  g_test_add_func ("/optim/literal-adaptive", test_literal_adaptive);
  g_test_add_func ("/optim/state-contents", test_state_contents);
  g_test_add_func ("/optim/scale-and-clip", test_scale_and_clip);
  g_test_add_func ("/optim/reference-small", test_reference_small);
  g_test_add_func ("/optim/reference-large", test_reference_large);
  g_test_add_func ("/optim/thread-independence", test_thread_independence);
  g_test_add_func ("/optim/global-norm", test_global_norm);
  g_test_add_func ("/lr-schedule/values", test_schedule_values);
  g_test_add_func ("/lr-schedule/warmup", test_schedule_warmup);
  g_test_add_func ("/lr-schedule/errors", test_schedule_errors);
  return g_test_run ();
}
