/* test-cuda-runtime.c — the CUDA context, the engine's device math and the
 * device memory allocator (test-cuda compares the op kernels).
 *
 * Device results are compared with CPU references: nl_cuda_optim_update
 * with nl_optim_update for every optimizer kind (1e-6), nl_cuda_sumsq with
 * a double loop, nl_cuda_round_half bit for bit with a round-to-nearest-even
 * written here with bit operations, nl_cuda_fill and nl_cuda_sum_n with
 * plain loops. Without a device: the reason given, the failure of every
 * call that needs one, and the rounding reference against the CPU's
 * helpers (ops/cpu/nl-cpu-util.h, checked exhaustively by test-amp). */
#include <math.h>
#include <string.h>

#include "engine/train/nl-optim.h"
#include "nl-test-util.h"
#include "ops/cpu/nl-cpu-util.h"
#include "core/cuda/nl-cuda.h"

static NlCudaCtx *cuda; /* NULL: no device here */
static char *cuda_reason;

static gboolean
need_device (void)
{
  return nl_test_need_cuda (cuda, cuda_reason);
}

static void *
dev_new (size_t nbytes)
{
  g_autoptr (GError) error = NULL;
  void *p = nl_cuda_alloc (cuda, nbytes, "test-cuda-runtime", &error);
  nl_test_ok_or_die (p != NULL, error, "nl_cuda_alloc");
  return p;
}

/* Copies and waits: the host side may be freed or read right after. */
static void
copy (void *dst, const void *src, size_t nbytes, NlCopyKind kind)
{
  g_autoptr (GError) error = NULL;
  nl_test_ok_or_die (nl_cuda_copy (cuda, dst, src, nbytes, kind, &error), error, "nl_cuda_copy");
  nl_test_ok_or_die (nl_cuda_sync (cuda, &error), error, "nl_cuda_sync");
}

static void
sync_or_die (gboolean ok, GError *error, const char *what)
{
  nl_test_ok_or_die (ok, error, what);
  nl_test_ok_or_die (nl_cuda_sync (cuda, &error), error, "nl_cuda_sync");
}

static void
fill_uniform (float *p, int64_t n, GRand *r, double lo, double hi)
{
  for (int64_t i = 0; i < n; i++)
    p[i] = (float) g_rand_double_range (r, lo, hi);
}

/* ---- the context ---- */

static void
test_device (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *reason = NULL;
  int count = nl_cuda_device_count (&reason);
  NlCudaDeviceInfo info;
  void *host;

  if (count == 0)
    {
      g_test_message ("no CUDA device: %s", reason);
      g_assert_nonnull (reason);
      g_assert_cmpstr (reason, !=, "");
      /* the reason is the true one: built without CUDA, or no driver / device */
      g_assert_true ((strstr (reason, "built without CUDA") != NULL) == !nl_cuda_compiled ());
      g_assert_null (nl_cuda_ctx (0, &error));
      g_assert_error (error, NL_CUDA_ERROR, NL_CUDA_ERROR_UNAVAILABLE);
      g_assert_nonnull (strstr (error->message, reason));
      g_clear_error (&error);
      g_assert_false (nl_cuda_device_info (0, &info, &error));
      g_assert_error (error, NL_CUDA_ERROR, NL_CUDA_ERROR_UNAVAILABLE);
      /* pinned memory may be NULL without a device; if not, it is memory */
      host = nl_cuda_host_alloc (4096);
      if (host)
        memset (host, 0x5a, 4096);
      nl_cuda_host_free (host);
      return;
    }
  g_assert_true (nl_cuda_compiled ());
  if (!cuda)
    g_test_fail_printf ("%s", cuda_reason); /* main could not make the context */
  g_assert_nonnull (cuda);
  g_assert_true (nl_cuda_device_info (0, &info, &error));
  g_test_message ("cuda:0 is %s, compute capability %d.%d, %d SMs, %.1f of %.1f GiB free", info.name,
                  info.cc_major, info.cc_minor, info.multiprocessors, info.free_bytes / 1073741824.0,
                  info.total_bytes / 1073741824.0);
  g_assert_cmpstr (info.name, !=, "");
  g_assert_cmpuint (info.free_bytes, >, 0);
  g_assert_cmpuint (info.free_bytes, <=, info.total_bytes);
  g_assert_cmpint (info.multiprocessors, >, 0);
  g_assert_cmpint (info.cc_major, >=, 5);
  g_assert_true (nl_cuda_ctx (0, &error) == cuda); /* one context per device */
  g_assert_cmpint (nl_cuda_ctx_index (cuda), ==, 0);
  g_assert_nonnull (nl_cuda_ctx_stream (cuda));
  g_assert_nonnull (nl_cuda_ctx_cublas (cuda));
  g_assert_nonnull (nl_cuda_ctx_cudnn (cuda));
  g_assert_null (nl_cuda_ctx (count, &error));
  g_assert_error (error, NL_CUDA_ERROR, NL_CUDA_ERROR_UNAVAILABLE);
  g_clear_error (&error);
  g_assert_false (nl_cuda_device_info (count, &info, &error));
  g_assert_error (error, NL_CUDA_ERROR, NL_CUDA_ERROR_UNAVAILABLE);
  /* with a device, pinned memory is there */
  host = nl_cuda_host_alloc (1 << 20);
  g_assert_nonnull (host);
  nl_cuda_host_free (host);
}

/* ---- rounding to bf16 / fp16 ---- */

static uint32_t
f2u (float f)
{
  uint32_t u;
  memcpy (&u, &f, sizeof u);
  return u;
}

static float
u2f (uint32_t u)
{
  float f;
  memcpy (&f, &u, sizeof f);
  return f;
}

/* Round to nearest even on the bits: keep the top bits of the significand
 * and round on what is dropped. bf16 drops 16 bits of the float as is
 * (same exponent range; past the largest value the carry reaches Inf).
 * fp16 keeps 11 significant bits down to 2^-14, then fewer (subnormals,
 * step 2^-24), and overflows to Inf past 65504. NaN and Inf stay. */
static float
ref_round_half (float x, gboolean fp16)
{
  uint32_t u = f2u (x), sign = u & 0x80000000u, e = (u >> 23) & 0xff;
  uint64_t m, q, rem, half;
  int exp, drop;
  float v;

  if (e == 0xff)
    return x;
  if (!fp16)
    return u2f ((u + 0x7fffu + ((u >> 16) & 1)) & 0xffff0000u);
  if (e == 0) /* a float subnormal is far below half of fp16's smallest step */
    return u2f (sign);
  exp = (int) e - 127;
  drop = exp >= -14 ? 13 : 13 + (-14 - exp);
  if (drop > 24) /* below 2^-25: rounds to zero */
    return u2f (sign);
  m = (u & 0x7fffffu) | 0x800000u;
  q = m >> drop;
  rem = m & ((UINT64_C (1) << drop) - 1);
  half = UINT64_C (1) << (drop - 1);
  if (rem > half || (rem == half && (q & 1)))
    q++;
  v = ldexpf ((float) q, exp - 23 + drop); /* q < 2^12: exact */
  return u2f (sign | (v > 65504.0f ? 0x7f800000u : f2u (v)));
}

/* Values that exercise rounding: special values, exact ties of both types,
 * random bit patterns of every exponent (NaNs included), values around
 * fp16's range. */
static void
round_samples (float *x, int64_t n)
{
  static const float special[] = { 0.0f, -0.0f, 1.0f, 0.1f, -2.5f, 65504.0f, 65519.99f, 65520.0f, 0x1p-24f,
                                   0x1p-25f, 0x1.8p-25f, 0x3p-25f, 0x1.002p0f, 0x1.006p0f, 0x1.01p0f, 0x1.03p0f,
                                   3.4028235e38f, 1e-40f, INFINITY, -INFINITY, NAN };
  GRand *r = g_rand_new_with_seed (11);

  for (int64_t i = 0; i < n; i++)
    switch (i < (int64_t) G_N_ELEMENTS (special) ? -1 : (int) (i % 4))
      {
      case -1:
        x[i] = special[i];
        break;
      case 0:
        x[i] = u2f (g_rand_int (r));
        break;
      case 1: /* a bf16 tie */
        x[i] = u2f ((g_rand_int (r) & 0xffff0000u) | 0x8000u);
        break;
      case 2: /* an fp16 tie, normal or subnormal */
        x[i] = ldexpf ((float) (2 * g_rand_int_range (r, 1, 2048) + 1), g_rand_int_range (r, -26, 5));
        break;
      default:
        x[i] = ldexpf ((float) g_rand_double_range (r, -2, 2), g_rand_int_range (r, -30, 18));
      }
  g_rand_free (r);
}

static gboolean
same_float (float a, float b)
{
  return (isnan (a) && isnan (b)) || f2u (a) == f2u (b);
}

/* The reference agrees with the CPU's helpers, and with hand-worked values. */
static void
test_round_reference (void)
{
  const int64_t n = 1 << 18;
  g_autofree float *x = g_new (float, n);

  round_samples (x, n);
  for (int64_t i = 0; i < n; i++)
    if (!same_float (ref_round_half (x[i], FALSE), nl_round_bf16 (x[i]))
        || !same_float (ref_round_half (x[i], TRUE), nl_round_fp16 (x[i])))
      g_error ("rounding %a (0x%08x): bf16 %a / %a, fp16 %a / %a (reference / nl_round_*)", x[i], f2u (x[i]),
               ref_round_half (x[i], FALSE), nl_round_bf16 (x[i]), ref_round_half (x[i], TRUE),
               nl_round_fp16 (x[i]));
  g_assert_cmpfloat (ref_round_half (0x1.01p0f, FALSE), ==, 1.0f);      /* tie, to even */
  g_assert_cmpfloat (ref_round_half (0x1.03p0f, FALSE), ==, 0x1.04p0f); /* tie, to even upwards */
  g_assert_true (isinf (ref_round_half (3.4028235e38f, FALSE)));
  g_assert_cmpfloat (ref_round_half (0x1.002p0f, TRUE), ==, 1.0f);
  g_assert_cmpfloat (ref_round_half (0x1.006p0f, TRUE), ==, 0x1.008p0f);
  g_assert_cmpfloat (ref_round_half (65519.99f, TRUE), ==, 65504.0f);
  g_assert_true (isinf (ref_round_half (65520.0f, TRUE)));
  g_assert_cmpfloat (ref_round_half (0x1p-25f, TRUE), ==, 0.0f);
  g_assert_cmpfloat (ref_round_half (0x1.8p-25f, TRUE), ==, 0x1p-24f);
  g_assert_cmpfloat (ref_round_half (0x3p-25f, TRUE), ==, 0x1p-23f);
  g_assert_cmpfloat (ref_round_half (0.1f, TRUE), ==, 0.0999755859375f);
  g_assert_true (signbit (ref_round_half (-1e-30f, TRUE)));
}

static void
test_round_half (void)
{
  const int64_t n = (1 << 20) + 3;
  g_autofree float *x = g_new (float, n), *y = g_new (float, n);
  g_autoptr (GError) error = NULL;
  float *d;

  if (!need_device ())
    return;
  round_samples (x, n);
  d = dev_new (n * sizeof (float));
  for (int fp16 = 0; fp16 < 2; fp16++)
    {
      int64_t bad = 0;
      copy (d, x, n * sizeof (float), NL_COPY_HOST_TO_DEVICE);
      sync_or_die (nl_cuda_round_half (cuda, d, n, fp16, &error), error, "nl_cuda_round_half");
      copy (y, d, n * sizeof (float), NL_COPY_DEVICE_TO_HOST);
      for (int64_t i = 0; i < n; i++)
        if (!same_float (y[i], ref_round_half (x[i], fp16)) && bad++ < 5)
          g_printerr ("%s of %a (0x%08x): device %a, reference %a\n", fp16 ? "fp16" : "bf16", x[i], f2u (x[i]), y[i],
                      ref_round_half (x[i], fp16));
      if (bad)
        g_test_fail_printf ("%s: %" G_GINT64_FORMAT " of %" G_GINT64_FORMAT " values rounded wrongly",
                            fp16 ? "fp16" : "bf16", bad, n);
    }
  nl_cuda_release (cuda, d);
}

/* ---- fill, copies, sums ---- */

static void
test_fill_copy (void)
{
  const int64_t n = 300007, total = n + 200;
  g_autofree float *h = g_new (float, total);
  g_autoptr (GError) error = NULL;
  float *a, *b, *pinned;

  if (!need_device ())
    return;
  a = dev_new (total * sizeof (float));
  b = dev_new (total * sizeof (float));
  sync_or_die (nl_cuda_memset0 (cuda, a, total * sizeof (float), &error), error, "nl_cuda_memset0");
  sync_or_die (nl_cuda_fill (cuda, a, n, 3.25f, &error), error, "nl_cuda_fill");
  copy (h, a, total * sizeof (float), NL_COPY_DEVICE_TO_HOST);
  for (int64_t i = 0; i < total; i++)
    if (h[i] != (i < n ? 3.25f : 0.0f))
      g_error ("after fill, element %" G_GINT64_FORMAT " is %g", i, h[i]);
  sync_or_die (nl_cuda_fill (cuda, a + 7, 0, -1.0f, &error), error, "nl_cuda_fill of nothing");
  /* device to device, then into pinned memory asynchronously */
  copy (b, a, total * sizeof (float), NL_COPY_DEVICE_TO_DEVICE);
  pinned = nl_cuda_host_alloc (total * sizeof (float));
  g_assert_nonnull (pinned);
  nl_test_ok_or_die (nl_cuda_copy (cuda, pinned, b, total * sizeof (float), NL_COPY_DEVICE_TO_HOST, &error), error, "copy to pinned");
  nl_test_ok_or_die (nl_cuda_sync (cuda, &error), error, "nl_cuda_sync");
  g_assert_cmpmem (pinned, total * sizeof (float), h, total * sizeof (float));
  nl_cuda_host_free (pinned);
  nl_cuda_release (cuda, a);
  nl_cuda_release (cuda, b);
}

static void
test_sum_n (void)
{
  enum { K = 5 };
  const int64_t n = 100003;
  g_autofree float *h = g_new (float, K * n), *want = g_new (float, n), *got = g_new (float, n);
  g_autoptr (GError) error = NULL;
  static const int counts[] = { 1, 2, 3, 5 };
  const float *src[K];
  float *d, *dst;
  GRand *r;

  if (!need_device ())
    return;
  r = g_rand_new_with_seed (3);
  d = dev_new (K * n * sizeof (float));
  dst = dev_new (n * sizeof (float));
  fill_uniform (h, K * n, r, -1, 1);
  copy (d, h, K * n * sizeof (float), NL_COPY_HOST_TO_DEVICE);
  for (int k = 0; k < K; k++)
    src[k] = d + k * n;
  for (guint c = 0; c < G_N_ELEMENTS (counts) * 2; c++)
    {
      int n_src = counts[c % G_N_ELEMENTS (counts)];
      gboolean in_place = c >= G_N_ELEMENTS (counts); /* dst = src[0] */
      float *out = in_place ? d : dst;

      for (int64_t i = 0; i < n; i++)
        {
          want[i] = h[i];
          for (int k = 1; k < n_src; k++)
            want[i] += h[k * n + i];
        }
      sync_or_die (nl_cuda_sum_n (cuda, out, src, n_src, n, &error), error, "nl_cuda_sum_n");
      copy (got, out, n * sizeof (float), NL_COPY_DEVICE_TO_HOST);
      g_test_message ("sum of %d%s", n_src, in_place ? " in place" : "");
      nl_test_assert_close (got, want, n, 1e-6, 1e-6);
      if (in_place) /* src[0] changed: restore it */
        copy (d, h, n * sizeof (float), NL_COPY_HOST_TO_DEVICE);
    }
  nl_cuda_release (cuda, d);
  nl_cuda_release (cuda, dst);
  g_rand_free (r);
}

static void
test_sumsq (void)
{
  const int64_t n = (1 << 20) + 7;
  g_autofree float *h = g_new (float, n);
  g_autoptr (GError) error = NULL;
  GRand *r;
  double acc, want = 0.25;
  float *d;
  double *dacc;

  if (!need_device ())
    return;
  r = g_rand_new_with_seed (5);
  fill_uniform (h, n, r, -2, 2);
  for (int64_t i = 0; i < n; i++)
    want += (double) h[i] * h[i];
  d = dev_new (n * sizeof (float));
  dacc = dev_new (sizeof (double));
  copy (d, h, n * sizeof (float), NL_COPY_HOST_TO_DEVICE);
  acc = 0.25; /* it adds to what is there */
  copy (dacc, &acc, sizeof acc, NL_COPY_HOST_TO_DEVICE);
  sync_or_die (nl_cuda_sumsq (cuda, d, n, dacc, &error), error, "nl_cuda_sumsq");
  sync_or_die (nl_cuda_sumsq (cuda, d, 0, dacc, &error), error, "nl_cuda_sumsq of nothing");
  copy (&acc, dacc, sizeof acc, NL_COPY_DEVICE_TO_HOST);
  g_test_message ("sum of squares %.17g, reference %.17g", acc, want);
  g_assert_cmpfloat_with_epsilon (acc, want, 1e-6 * want);
  /* a NaN or an Inf anywhere shows in the sum (an overflowed gradient) */
  for (int k = 0; k < 2; k++)
    {
      float bad = k ? INFINITY : NAN;
      copy (d + n / 3, &bad, sizeof bad, NL_COPY_HOST_TO_DEVICE);
      acc = 0;
      copy (dacc, &acc, sizeof acc, NL_COPY_HOST_TO_DEVICE);
      sync_or_die (nl_cuda_sumsq (cuda, d, n, dacc, &error), error, "nl_cuda_sumsq");
      copy (&acc, dacc, sizeof acc, NL_COPY_DEVICE_TO_HOST);
      g_assert_true (k ? isinf (acc) && acc > 0 : isnan (acc));
    }
  nl_cuda_release (cuda, d);
  nl_cuda_release (cuda, dacc);
  g_rand_free (r);
}

/* ---- optimizer updates ---- */

typedef struct {
  const char *what;
  NlOptimKind kind;
  float momentum, wd; /* < 0: the kind's default */
  float clip;
  gboolean centered, nesterov;
  gboolean scale_dev; /* half of the gradient scale comes from a device float */
} OptCase;

static const OptCase opt_cases[] = {
  { "sgd", NL_OPTIM_SGD, -1, -1 },
  { "sgd momentum wd clip", NL_OPTIM_SGD, 0.9f, 1e-3f, 0.3f },
  { "sgd nesterov", NL_OPTIM_SGD, 0.9f, -1, 0, FALSE, TRUE },
  { "nag device scale", NL_OPTIM_NAG, -1, -1, 0, FALSE, FALSE, TRUE },
  { "adam", NL_OPTIM_ADAM, -1, -1 },
  { "adam wd clip device scale", NL_OPTIM_ADAM, -1, 1e-2f, 0.5f, FALSE, FALSE, TRUE },
  { "adamw", NL_OPTIM_ADAMW, -1, -1 },
  { "rmsprop", NL_OPTIM_RMSPROP, -1, -1 },
  { "rmsprop no momentum wd", NL_OPTIM_RMSPROP, 0, 1e-3f },
  { "rmsprop centered", NL_OPTIM_RMSPROP, -1, -1, 0, TRUE },
  { "rmsprop centered no momentum clip", NL_OPTIM_RMSPROP, 0, -1, 0.4f, TRUE },
  { "adagrad", NL_OPTIM_ADAGRAD, -1, -1 },
  { "adagrad wd clip device scale", NL_OPTIM_ADAGRAD, -1, 1e-2f, 0.2f, FALSE, FALSE, TRUE },
};

static void
run_optim_case (const OptCase *oc)
{
  const int64_t n = 5003;
  const NlShape shape = { 1, { n } };
  g_autoptr (GError) error = NULL;
  g_autoptr (NlTensor) w = nl_tensor_new_shape (NL_DTYPE_F32, &shape);
  g_autoptr (NlTensor) g = nl_tensor_new_shape (NL_DTYPE_F32, &shape);
  g_autofree float *got = g_new (float, n);
  NlTensor *st[3] = { 0 };
  float *dw, *dg, *dst[3] = { 0 }, *dscale = NULL, quarter = 0.25f;
  GRand *r = g_rand_new_with_seed (g_str_hash (oc->what));
  NlOptimConfig cfg;
  int ns;

  nl_optim_config_init (&cfg, oc->kind);
  if (oc->momentum >= 0)
    cfg.momentum = oc->momentum;
  if (oc->wd >= 0)
    cfg.wd = oc->wd;
  cfg.clip_gradient = oc->clip;
  cfg.centered = oc->centered;
  cfg.nesterov = cfg.nesterov || oc->nesterov;
  ns = nl_optim_n_states (&cfg);
  g_assert_cmpint (ns, <=, 3);

  fill_uniform (nl_tensor_f32 (w), n, r, -1, 1);
  dw = dev_new (n * sizeof (float));
  dg = dev_new (n * sizeof (float));
  copy (dw, nl_tensor_f32 (w), n * sizeof (float), NL_COPY_HOST_TO_DEVICE);
  for (int i = 0; i < ns; i++)
    {
      st[i] = nl_tensor_zeros (NL_DTYPE_F32, &shape);
      dst[i] = dev_new (n * sizeof (float));
      nl_test_ok_or_die (nl_cuda_memset0 (cuda, dst[i], n * sizeof (float), &error), error, "nl_cuda_memset0");
    }
  if (oc->scale_dev)
    {
      dscale = dev_new (sizeof (float));
      copy (dscale, &quarter, sizeof quarter, NL_COPY_HOST_TO_DEVICE);
    }
  /* a larger rate than the defaults, so the update is not lost in w */
  for (int64_t t = 1; t <= 3; t++)
    {
      float lr = 0.05f * (float) t;
      fill_uniform (nl_tensor_f32 (g), n, r, -1, 1);
      copy (dg, nl_tensor_f32 (g), n * sizeof (float), NL_COPY_HOST_TO_DEVICE);
      nl_optim_update (&cfg, lr, t, 0.5f, w, g, st);
      /* with a device scale: 2 * 0.25, the same 0.5 */
      sync_or_die (nl_cuda_optim_update (cuda, &cfg, lr, t, oc->scale_dev ? 2.0f : 0.5f, dscale, dw, dg, dst, n, &error),
                   error, "nl_cuda_optim_update");
    }
  g_test_message ("%s (%d states)", oc->what, ns);
  copy (got, dw, n * sizeof (float), NL_COPY_DEVICE_TO_HOST);
  /* an ulp or two apart (FMA contraction on the device): 1e-6 relative, and
   * 1e-7 absolute for values near 0 after a larger update */
  nl_test_assert_close (got, nl_tensor_f32 (w), n, 1e-7, 1e-6);
  for (int i = 0; i < ns; i++)
    {
      copy (got, dst[i], n * sizeof (float), NL_COPY_DEVICE_TO_HOST);
      nl_test_assert_close (got, nl_tensor_f32 (st[i]), n, 1e-7, 1e-6);
      nl_tensor_unref (st[i]);
      nl_cuda_release (cuda, dst[i]);
    }
  nl_cuda_release (cuda, dw);
  nl_cuda_release (cuda, dg);
  nl_cuda_release (cuda, dscale);
  g_rand_free (r);
}

static void
test_optim (void)
{
  for (int k = 0; k < NL_OPTIM_COUNT; k++)
    {
      gboolean found = FALSE;
      for (guint c = 0; c < G_N_ELEMENTS (opt_cases); c++)
        found = found || opt_cases[c].kind == (NlOptimKind) k;
      if (!found)
        g_test_fail_printf ("optimizer %s has no case here", nl_optim_kind_name ((NlOptimKind) k));
    }
  if (!need_device ())
    return;
  for (guint c = 0; c < G_N_ELEMENTS (opt_cases); c++)
    run_optim_case (&opt_cases[c]);
}

/* ---- the allocator on the device ---- */

/* A training step asks for the same sizes every time: after the first, the
 * allocator serves them from its cache, without cudaMalloc. */
static void
test_pool (void)
{
  static const size_t sizes[] = { 1, 1000, 4096, 1 << 20, (3 << 20) + 5, 512, 77777, 0 };
  g_autoptr (GError) error = NULL;
  void *p[G_N_ELEMENTS (sizes)];
  NlDeviceAllocatorStats before, first = { 0 }, s;
  NlDeviceAllocator *allocator;

  if (!need_device ())
    return;
  allocator = nl_cuda_ctx_allocator (cuda);
  g_assert_nonnull (allocator);
  nl_device_allocator_get_stats (allocator, &before);
  for (int step = 0; step < 100; step++)
    {
      for (guint i = 0; i < G_N_ELEMENTS (sizes); i++)
        {
          p[i] = nl_cuda_alloc (cuda, sizes[i], "test-cuda-runtime step", &error);
          nl_test_ok_or_die (p[i] != NULL, error, "nl_cuda_alloc");
          for (guint j = 0; j < i; j++)
            g_assert_true (p[j] != p[i]);
        }
      /* the memory is usable */
      nl_test_ok_or_die (nl_cuda_memset0 (cuda, p[4], sizes[4], &error), error, "nl_cuda_memset0");
      for (guint i = 0; i < G_N_ELEMENTS (sizes); i++)
        nl_cuda_release (cuda, p[G_N_ELEMENTS (sizes) - 1 - i]);
      nl_device_allocator_get_stats (allocator, &s);
      if (step == 0)
        first = s;
      g_assert_cmpuint (s.backend_allocs, ==, first.backend_allocs);
      g_assert_cmpuint (s.in_use, ==, before.in_use);
    }
  nl_test_ok_or_die (nl_cuda_sync (cuda, &error), error, "nl_cuda_sync");
  g_test_message ("%" G_GUINT64_FORMAT " backend allocations for the first step, none after; %zu bytes reserved",
                  first.backend_allocs - before.backend_allocs, s.reserved);
}

static void
test_oom (void)
{
  g_autoptr (GError) error = NULL;
  NlDeviceAllocatorStats before, after;
  void *p;

  if (!need_device ())
    return;
  nl_device_allocator_get_stats (nl_cuda_ctx_allocator (cuda), &before);
  p = nl_cuda_alloc (cuda, (size_t) 1 << 50, "the 1 PiB tensor", &error);
  g_assert_null (p);
  g_assert_error (error, NL_BACKEND_ERROR, NL_BACKEND_ERROR_NOMEM);
  g_test_message ("%s", error->message);
  g_assert_nonnull (strstr (error->message, "the 1 PiB tensor"));
  g_assert_nonnull (strstr (error->message, "cuda:0"));
  nl_device_allocator_get_stats (nl_cuda_ctx_allocator (cuda), &after);
  g_assert_cmpuint (after.in_use, ==, before.in_use);
  /* the allocator still serves */
  p = dev_new (1 << 20);
  nl_cuda_release (cuda, p);
}

/* NCCL as the data-parallel backend uses it, on a job of one GPU (a job
 * of two needs two GPUs: NCCL refuses two ranks on one device): the id,
 * the communicator, an all-reduce and a broadcast in place that leave a
 * lone rank's buffer as it was, queued on the context's stream. */
static void
test_nccl (void)
{
  const int64_t n = 100003;
  g_autofree float *x = g_new (float, n), *back = g_new (float, n);
  g_autoptr (GError) error = NULL;
  char id[NL_NCCL_ID_BYTES] = { 0 };
  float *dev;
  void *comm;

  if (!need_device ())
    return;
  if (!nl_nccl_unique_id (id, &error))
    {
      g_test_skip (error->message);
      return;
    }
  comm = nl_nccl_comm_new (cuda, 1, 0, id, &error);
  nl_test_ok_or_die (comm != NULL, error, "nl_nccl_comm_new");
  for (int64_t i = 0; i < n; i++)
    x[i] = (float) i * 0.25f - 7;
  dev = dev_new (n * sizeof (float));
  copy (dev, x, n * sizeof (float), NL_COPY_HOST_TO_DEVICE);
  sync_or_die (nl_nccl_allreduce_sum (cuda, comm, dev, n, &error), error, "nl_nccl_allreduce_sum");
  sync_or_die (nl_nccl_broadcast (cuda, comm, dev, n * sizeof (float), 0, &error), error, "nl_nccl_broadcast");
  copy (back, dev, n * sizeof (float), NL_COPY_DEVICE_TO_HOST);
  g_assert_cmpmem (back, n * sizeof (float), x, n * sizeof (float));
  nl_cuda_release (cuda, dev);
  nl_nccl_comm_free (comm);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  cuda = nl_test_cuda_open (&cuda_reason);
  g_test_add_func ("/cuda-runtime/device", test_device);
  g_test_add_func ("/cuda-runtime/round-reference", test_round_reference);
  g_test_add_func ("/cuda-runtime/round-half", test_round_half);
  g_test_add_func ("/cuda-runtime/fill-copy", test_fill_copy);
  g_test_add_func ("/cuda-runtime/sum-n", test_sum_n);
  g_test_add_func ("/cuda-runtime/sumsq", test_sumsq);
  g_test_add_func ("/cuda-runtime/optim", test_optim);
  g_test_add_func ("/cuda-runtime/allocator", test_pool);
  g_test_add_func ("/cuda-runtime/oom", test_oom);
  g_test_add_func ("/cuda-runtime/nccl", test_nccl);
  return g_test_run ();
}
