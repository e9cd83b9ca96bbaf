/* test-mixed-train.c — training end to end in bf16 and fp16 autocast on the
 * CPU: every precision learns, its rounding really reaches the weights (one
 * step checked against a reference that rounds as the precision does),
 * fp16's dynamic loss scale backs off from overflow and skips those steps
 * without touching weights or optimizer state, the scale's value leaves the
 * results (global-norm clipping included) as they are unscaled, and bf16
 * never scales. */
#include <math.h>
#include <string.h>

#include "engine/formats/nl-checkpoint.h"
#include "engine/train/nl-trainer.h"
#include "nl-test-util.h"

/* 20x20 images (every class's pair of rows fits): 10 batches of 32 per
 * epoch, and a one-batch set on which an epoch is exactly one step. */
#define SIDE NL_TEST_IDX_SIDE
#define N_TRAIN 320
#define N_TEST 200
#define N_ONE 32
#define UNITS 10

static char *data_dir, *one_dir;
static char *data_spec, *one_spec;

#define NET_HEAD "{\"format\":\"netloom.network\",\"version\":1,\"nodes\":[{\"id\":\"data\",\"op\":\"Input\"},"
#define RELU(id) "{\"id\":\"" id "\",\"op\":\"Activation\",\"params\":{\"act_type\":\"relu\"}},"

/* A convolution whose 3x20 kernel spans whole rows (the classes' signal)
 * feeding a Dense: both autocast ops, learning the classes in 3 short
 * epochs (a LeNet's 3x3 kernels and pooling barely start in that time). */
static const char *conv_json =
  NET_HEAD "{\"id\":\"conv\",\"op\":\"Conv2D\",\"params\":{\"channels\":8,\"kernel\":[3,20]}}," RELU ("relu")
  "{\"id\":\"flat\",\"op\":\"Flatten\"},{\"id\":\"fc\",\"op\":\"Dense\",\"params\":{\"units\":10}}],"
  "\"edges\":[\"data -> conv\",\"conv -> relu\",\"relu -> flat\",\"flat -> fc\"]}";

static const char *mlp_json =
  NET_HEAD "{\"id\":\"flat\",\"op\":\"Flatten\"},{\"id\":\"fc1\",\"op\":\"Dense\",\"params\":{\"units\":32}},"
  RELU ("relu") "{\"id\":\"fc2\",\"op\":\"Dense\",\"params\":{\"units\":10}}],"
  "\"edges\":[\"data -> flat\",\"flat -> fc1\",\"fc1 -> relu\",\"relu -> fc2\"]}";

/* Softmax regression: one Dense, whose step the reference recomputes. */
static const char *linear_json =
  NET_HEAD "{\"id\":\"flat\",\"op\":\"Flatten\"},{\"id\":\"fc\",\"op\":\"Dense\",\"params\":{\"units\":10}}],"
  "\"edges\":[\"data -> flat\",\"flat -> fc\"]}";

static const char *const prec_names[] = { "fp32", "bf16", "fp16" };

/* Every weight (or, with state, every optimizer state tensor) of the
 * model, copied out in slot order. */
static GArray *
collect (NlTrainer *t, gboolean state)
{
  NlModel *m = nl_trainer_get_model (t);
  GArray *a = g_array_new (FALSE, FALSE, sizeof (float));
  int n = m->n_nodes * NL_GRAPH_MAX_SLOTS * (state ? 4 : 1);
  for (int i = 0; i < n; i++)
    {
      NlTensor *w = state ? m->opt_state[i] : m->weights[i];
      if (w)
        g_array_append_vals (a, nl_tensor_f32 (w), nl_tensor_numel (w));
    }
  return a;
}

static GArray *
weights_of (NlTrainer *t)
{
  return collect (t, FALSE);
}

typedef struct {
  double first_loss;   /* the first batch's mean loss: before any update */
  NlEpochReport last;
  int64_t batches;
  gboolean keep_epoch1;
  GArray *epoch1;      /* the weights after the first epoch, if kept */
} Run;

static gboolean
on_batch (gpointer user, int epoch, int64_t batch, int64_t n, double loss, double elapsed)
{
  Run *r = user;
  if (r->batches++ == 0)
    r->first_loss = loss;
  return TRUE;
}

static void
on_epoch (gpointer user, const NlEpochReport *e)
{
  ((Run *) user)->last = *e;
}

static gboolean
on_epoch_done (gpointer user, NlTrainer *t, const NlEpochReport *e, GError **error)
{
  Run *r = user;
  if (e->epoch == 1 && r->keep_epoch1)
    r->epoch1 = weights_of (t);
  return TRUE;
}

static void
config (NlRunConfig *cfg, const char *spec, NlPrecision precision, float loss_scale)
{
  nl_test_tiny_train_config (cfg, spec);
  /* momentum: the faint rows are learnt in 3 short epochs */
  cfg->optim.lr = 0.02f;
  cfg->optim.momentum = 0.9f;
  cfg->precision = precision;
  cfg->loss_scale = loss_scale;
}

static NlTrainer *
new_trainer (const char *json, const NlRunConfig *cfg)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (NlNetwork) net = nl_network_load_data (json, -1, &error);
  NlTrainer *t;
  g_assert_no_error (error);
  t = nl_trainer_new (net, cfg, &error);
  g_assert_no_error (error);
  g_assert_nonnull (t);
  return t;
}

static void
run (NlTrainer *t, Run *r)
{
  NlTrainCallbacks cb = { on_batch, on_epoch, r, on_epoch_done };
  g_autoptr (GError) error = NULL;
  gboolean ok = nl_trainer_run (t, &cb, &error);
  g_assert_no_error (error);
  g_assert_true (ok);
}

/* ||a - b|| / ||b||; NaN when either holds a NaN, so comparisons fail. */
static double
rel_dist (const GArray *a, const GArray *b)
{
  double d = 0, n = 0;
  g_assert_cmpuint (a->len, ==, b->len);
  for (guint i = 0; i < a->len; i++)
    {
      double x = g_array_index (a, float, i), y = g_array_index (b, float, i);
      d += (x - y) * (x - y);
      n += y * y;
    }
  return sqrt (d / n);
}

static gboolean
bytes_equal (const GArray *a, const GArray *b)
{
  return a->len == b->len && memcmp (a->data, b->data, a->len * sizeof (float)) == 0;
}

static gboolean
all_finite (const GArray *a)
{
  for (guint i = 0; i < a->len; i++)
    if (!isfinite (g_array_index (a, float, i)))
      return FALSE;
  return TRUE;
}

static void
assert_power_of_two (float x)
{
  int e;
  g_assert_cmpfloat (frexpf (x, &e), ==, 0.5f);
}

/* 1. The same run in each precision, for a conv net and an MLP: all learn,
 * the half types' weights move away from fp32's (the rounding is applied
 * all along the run, bf16's 8-bit mantissa more than fp16's 11), yet they
 * classify about as well. */
static void
test_precisions_train (void)
{
  const char *const nets[2] = { conv_json, mlp_json }, *const net_names[2] = { "conv", "mlp" };
  for (int k = 0; k < 2; k++)
    {
      Run r[NL_PRECISION_COUNT] = { 0 };
      GArray *w[NL_PRECISION_COUNT];
      double d_bf16, d_fp16;

      for (int p = 0; p < NL_PRECISION_COUNT; p++)
        {
          g_auto (NlRunConfig) cfg = { 0 };
          g_autoptr (NlTrainer) t = NULL;
          config (&cfg, data_spec, p, 0);
          t = new_trainer (nets[k], &cfg);
          run (t, &r[p]);
          w[p] = weights_of (t);
          g_test_message ("%s %s: first loss %.4f, last epoch loss %.4f, test acc %.3f", net_names[k], prec_names[p],
                          r[p].first_loss, r[p].last.train_loss, r[p].last.test_acc);
          g_assert_cmpint (r[p].batches, ==, 3 * N_TRAIN / 32);
          g_assert_true (all_finite (w[p]));
          /* the first loss is about ln 10 = 2.30 */
          g_assert_cmpfloat (r[p].first_loss, >, 2.0);
          g_assert_cmpfloat (r[p].last.train_loss, <, 0.5 * r[p].first_loss);
        }
      g_assert_cmpfloat (r[NL_PRECISION_F32].last.test_acc, >, 0.6);
      d_bf16 = rel_dist (w[NL_PRECISION_BF16], w[NL_PRECISION_F32]);
      d_fp16 = rel_dist (w[NL_PRECISION_F16], w[NL_PRECISION_F32]);
      g_test_message ("%s: relative weight distance to fp32: bf16 %.3g, fp16 %.3g", net_names[k], d_bf16, d_fp16);
      g_assert_cmpfloat (d_fp16, >, 1e-5);
      g_assert_cmpfloat (d_bf16, >, 2 * d_fp16);
      for (int p = NL_PRECISION_BF16; p < NL_PRECISION_COUNT; p++)
        g_assert_cmpfloat (fabs (r[p].last.test_acc - r[NL_PRECISION_F32].last.test_acc), <=, 0.05);
      for (int p = 0; p < NL_PRECISION_COUNT; p++)
        g_array_unref (w[p]);
    }
}

/* The reference rounding, independent of the engine's bit manipulation:
 * the nearest multiple of the format's quantum, ties to even (nearbyint in
 * the default rounding mode). bf16 keeps 8 significant bits; fp16 11, with
 * 2^-24 steps below 2^-14 and everything past 65504 infinite. */
static double
ref_round (double x, NlPrecision p)
{
  int e, bits = p == NL_PRECISION_BF16 ? 8 : 11;
  double q;
  if (p == NL_PRECISION_F32 || x == 0 || !isfinite (x))
    return x;
  frexp (x, &e);   /* |x| in [2^(e-1), 2^e) */
  if (p == NL_PRECISION_F16 && e < -13)
    e = -13;
  q = ldexp (nearbyint (ldexp (x, bits - e)), e - bits);
  return p == NL_PRECISION_F16 && fabs (q) > 65504 ? copysign (INFINITY, x) : q;
}

static guint8 *
read_file (const char *dir, const char *name, gsize header, gsize want)
{
  g_autofree char *path = g_build_filename (dir, name, NULL);
  g_autoptr (GError) error = NULL;
  char *bytes = NULL;
  gsize len = 0;
  g_file_get_contents (path, &bytes, &len, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (len, ==, header + want);
  memmove (bytes, bytes + header, want);
  return (guint8 *) bytes;
}

/* The first SGD step of the linear net (momentum's buffer starts at 0, so
 * it is plain SGD) on the whole one-batch set, in double, rounding inputs,
 * weights and the scaled logit gradient as precision p does: the change of
 * W. The batch's order does not matter to its sum. */
static void
ref_step (const float *w, const float *b, const NlRunConfig *cfg, NlPrecision p, float scale, double *dw)
{
  const int k = SIDE * SIDE;
  g_autofree guint8 *px = read_file (one_dir, "train-images-idx3-ubyte", 16, (gsize) N_ONE * k);
  g_autofree guint8 *lab = read_file (one_dir, "train-labels-idx1-ubyte", 8, N_ONE);
  g_autofree double *x = g_new (double, (gsize) N_ONE * k);
  g_autofree double *wr = g_new (double, (gsize) UNITS * k);

  for (int i = 0; i < N_ONE * k; i++)
    x[i] = ref_round (((float) px[i] / 255.0f - cfg->mean) / cfg->std, p);   /* the loader's float steps */
  for (int i = 0; i < UNITS * k; i++)
    {
      wr[i] = ref_round (w[i], p);
      dw[i] = 0;
    }
  for (int n = 0; n < N_ONE; n++)
    {
      double z[UNITS], zmax = -INFINITY, sum = 0;
      for (int c = 0; c < UNITS; c++)
        {
          z[c] = b[c];
          for (int j = 0; j < k; j++)
            z[c] += x[n * k + j] * wr[c * k + j];
          zmax = MAX (zmax, z[c]);
        }
      for (int c = 0; c < UNITS; c++)
        sum += exp (z[c] - zmax);
      for (int c = 0; c < UNITS; c++)
        {
          double g = (exp (z[c] - zmax) / sum - (c == lab[n])) / N_ONE;
          double gr = ref_round (g * scale, p);
          for (int j = 0; j < k; j++)
            dw[c * k + j] -= cfg->optim.lr * gr * x[n * k + j] / scale;
        }
    }
}

/* 2. One step in each precision against the reference of every precision:
 * closest to its own by a wide margin (bf16 rounds to ~2^-9, fp16 to
 * ~2^-12, the float32 kernels' own error is ~1e-6). */
static void
test_one_step_reference (void)
{
  const int k = SIDE * SIDE;
  g_autoptr (GError) error = NULL;
  g_autoptr (NlNetwork) net = nl_network_load_data (linear_json, -1, &error);
  int fc;
  g_assert_no_error (error);
  fc = nl_network_find (net, "fc");
  g_assert_cmpint (fc, >=, 0);

  for (int p = 0; p < NL_PRECISION_COUNT; p++)
    {
      g_auto (NlRunConfig) cfg = { 0 };
      g_autoptr (NlTrainer) t = NULL;
      g_autofree float *w0 = NULL;
      g_autofree double *ref = g_new (double, (gsize) UNITS * k);
      float b0[UNITS], scale = 0;
      guint64 skipped = 1;
      NlModel *m;
      double dist[NL_PRECISION_COUNT];
      Run r = { 0 };

      config (&cfg, one_spec, p, 0);
      cfg.epochs = 1;
      cfg.optim.lr = 0.5f;   /* a large step: the change of W stands well above float32's error in W */
      t = new_trainer (linear_json, &cfg);
      m = nl_trainer_get_model (t);
      w0 = g_memdup2 (nl_tensor_f32 (m->weights[NL_MODEL_SLOT (fc, 0)]), sizeof (float) * UNITS * k);
      memcpy (b0, nl_tensor_f32 (m->weights[NL_MODEL_SLOT (fc, 1)]), sizeof b0);
      g_assert_cmpint (nl_tensor_numel (m->weights[NL_MODEL_SLOT (fc, 0)]), ==, UNITS * k);
      run (t, &r);
      g_assert_cmpint (r.batches, ==, 1);
      nl_trainer_get_loss_scale (t, &scale, &skipped);
      g_assert_cmpuint (skipped, ==, 0);
      g_assert_cmpfloat (scale, ==, p == NL_PRECISION_F16 ? 65536.0f : 1.0f);

      for (int q = 0; q < NL_PRECISION_COUNT; q++)
        {
          const float *w1 = nl_tensor_f32 (m->weights[NL_MODEL_SLOT (fc, 0)]);
          double d = 0, n = 0;
          /* each reference with the scale its precision uses (fp16: the default) */
          ref_step (w0, b0, &cfg, q, q == NL_PRECISION_F16 ? 65536.0f : 1.0f, ref);
          for (int i = 0; i < UNITS * k; i++)
            {
              double e = ((double) w1[i] - w0[i]) - ref[i];
              d += e * e;
              n += ref[i] * ref[i];
            }
          dist[q] = sqrt (d / n);
        }
      g_test_message ("%s step: relative distance to the fp32 / bf16 / fp16 references %.3g / %.3g / %.3g",
                      prec_names[p], dist[0], dist[1], dist[2]);
      g_assert_cmpfloat (dist[p], <, 1e-5);
      for (int q = 0; q < NL_PRECISION_COUNT; q++)
        if (q != p)
          g_assert_cmpfloat (dist[q], >, 100 * dist[p]);
    }
}

/* 3. A huge first scale: the last layer's scaled logit gradient
 * S / 32 * (p - 1) is past fp16's 65504 for every S >= 2^22 while the true
 * class's probability is below 1/2 (at the start, about 1/10), so at least
 * the first three steps (2^24, 2^23, 2^22) overflow and are skipped; each
 * halves the scale, and 30 steps are far from the 2000 that would grow it. */
static void
test_fp16_overflow_backs_off (void)
{
  g_auto (NlRunConfig) cfg = { 0 };
  g_autoptr (NlTrainer) t = NULL;
  g_autoptr (GArray) w = NULL;
  float scale = 0;
  guint64 skipped = 0;
  Run r = { 0 };

  config (&cfg, data_spec, NL_PRECISION_F16, 16777216.0f);
  t = new_trainer (mlp_json, &cfg);
  run (t, &r);
  nl_trainer_get_loss_scale (t, &scale, &skipped);
  g_test_message ("fp16 from 2^24: %" G_GUINT64_FORMAT " skipped, scale now %g; loss %.4f -> %.4f, test acc %.3f",
                  skipped, scale, r.first_loss, r.last.train_loss, r.last.test_acc);
  g_assert_cmpuint (skipped, >=, 3);
  g_assert_cmpuint (skipped, <, 10);
  g_assert_cmpfloat (scale, <=, 2097152.0f);
  assert_power_of_two (scale);
  g_assert_cmpfloat (scale, ==, ldexpf (16777216.0f, -(int) skipped));
  w = weights_of (t);
  g_assert_true (all_finite (w));
  /* three updates fewer than an unscaled run (which ends near 0.84 and
   * 73 %), where the loss falls fastest: behind it, but learning */
  g_assert_cmpfloat (r.last.train_loss, <, 0.6 * r.first_loss);
  g_assert_cmpfloat (r.last.test_acc, >, 0.4);
}

/* A skipped step leaves weights and optimizer state (momentum here) as they
 * were; the same single step at scale 1 changes both. */
static void
test_fp16_skipped_step_untouched (void)
{
  const float scales[2] = { 16777216.0f, 1.0f };
  for (int s = 0; s < 2; s++)
    {
      g_auto (NlRunConfig) cfg = { 0 };
      g_autoptr (NlTrainer) t = NULL;
      g_autoptr (GArray) w0 = NULL, st0 = NULL, w1 = NULL, st1 = NULL;
      float scale = 0;
      guint64 skipped = 0;
      Run r = { 0 };

      config (&cfg, one_spec, NL_PRECISION_F16, scales[s]);
      cfg.epochs = 1;
      cfg.optim.momentum = 0.9f;
      t = new_trainer (mlp_json, &cfg);
      w0 = weights_of (t);
      st0 = collect (t, TRUE);
      g_assert_cmpuint (st0->len, ==, w0->len);   /* one momentum buffer per weight */
      run (t, &r);
      g_assert_cmpint (r.batches, ==, 1);
      nl_trainer_get_loss_scale (t, &scale, &skipped);
      w1 = weights_of (t);
      st1 = collect (t, TRUE);
      g_test_message ("one step at scale %g: skipped %" G_GUINT64_FORMAT ", scale now %g", scales[s], skipped, scale);
      if (s == 0)
        {
          g_assert_cmpuint (skipped, ==, 1);
          g_assert_cmpfloat (scale, ==, 8388608.0f);
          g_assert_true (bytes_equal (w1, w0));
          g_assert_true (bytes_equal (st1, st0));
        }
      else
        {
          g_assert_cmpuint (skipped, ==, 0);
          g_assert_cmpfloat (scale, ==, 1.0f);
          g_assert_false (bytes_equal (w1, w0));
          g_assert_false (bytes_equal (st1, st0));
          g_assert_true (all_finite (w1));
        }
    }
}

/* 4. Scales 1, 1024 and the default (65536) on a well-behaved net:
 * nothing overflows. Multiplying by a power of two is exact in float32 and
 * fp16 alike, so the scaled runs take bit-identical steps as long as no
 * scaled gradient is subnormal in fp16 (true gradients above 2^-24 at
 * 1024), while scale 1 differs only where its gradients underflow (below
 * 2^-14): after the first epoch, far less than fp16 differs from fp32.
 * (Later the run's chaos, a ReLU turning on, can blow any difference up to
 * the size of fp16's own, so the weights are compared there.) */
static void
test_fp16_scale_choices (void)
{
  const float initial[3] = { 1.0f, 1024.0f, 0.0f };
  Run r[3] = { 0 }, r32 = { 0 };
  double d_scale, d_fp32;

  for (int s = 0; s < 3; s++)
    {
      g_auto (NlRunConfig) cfg = { 0 };
      g_autoptr (NlTrainer) t = NULL;
      g_autoptr (GArray) w = NULL;
      float scale = 0;
      guint64 skipped = 0;
      config (&cfg, data_spec, NL_PRECISION_F16, initial[s]);
      t = new_trainer (mlp_json, &cfg);
      r[s].keep_epoch1 = TRUE;
      run (t, &r[s]);
      w = weights_of (t);
      nl_trainer_get_loss_scale (t, &scale, &skipped);
      g_test_message ("fp16 initial scale %g: %" G_GUINT64_FORMAT " skipped, scale now %g, loss %.4f, test acc %.3f",
                      initial[s], skipped, scale, r[s].last.train_loss, r[s].last.test_acc);
      g_assert_cmpuint (skipped, ==, 0);
      g_assert_cmpfloat (scale, ==, s < 2 ? initial[s] : 65536.0f);
      g_assert_true (all_finite (w));
      g_assert_nonnull (r[s].epoch1);
    }
  {
    g_auto (NlRunConfig) cfg = { 0 };
    g_autoptr (NlTrainer) t = NULL;
    config (&cfg, data_spec, NL_PRECISION_F32, 0);
    t = new_trainer (mlp_json, &cfg);
    r32.keep_epoch1 = TRUE;
    run (t, &r32);
  }
  d_scale = rel_dist (r[0].epoch1, r[1].epoch1);
  d_fp32 = rel_dist (r[1].epoch1, r32.epoch1);
  g_test_message ("after one epoch, relative weight distance: scale 1 vs 1024 %.3g, fp16 vs fp32 %.3g", d_scale,
                  d_fp32);
  g_assert_true (bytes_equal (r[2].epoch1, r[1].epoch1));
  g_assert_cmpfloat (d_scale, <, 0.05 * d_fp32);
  g_assert_cmpfloat (d_fp32, >, 1e-6);   /* fp16 is in force */
  /* and the runs end alike */
  g_assert_cmpfloat (fabs (r[0].last.test_acc - r[1].last.test_acc), <=, 0.02);
  g_assert_cmpfloat (fabs (r[0].last.train_loss - r[1].last.train_loss), <, 0.01 * r[1].last.train_loss);
  for (int s = 0; s < 3; s++)
    g_array_unref (r[s].epoch1);
  g_array_unref (r32.epoch1);
}

/* 5. bf16 (and fp32) have float32's range: the scale is 1 whatever
 * loss_scale says, never moves, nothing is skipped, and the run is
 * bit-identical to one with loss_scale unset. */
static void
test_bf16_never_scales (void)
{
  const NlPrecision precs[2] = { NL_PRECISION_BF16, NL_PRECISION_F32 };
  for (int p = 0; p < 2; p++)
    {
      const float initial[2] = { 0.0f, 1024.0f };
      GArray *w[2];
      Run r[2] = { 0 };
      for (int s = 0; s < 2; s++)
        {
          g_auto (NlRunConfig) cfg = { 0 };
          g_autoptr (NlTrainer) t = NULL;
          float scale = 0;
          guint64 skipped = 1;
          config (&cfg, data_spec, precs[p], initial[s]);
          t = new_trainer (mlp_json, &cfg);
          nl_trainer_get_loss_scale (t, &scale, &skipped);
          g_assert_cmpfloat (scale, ==, 1.0f);
          g_assert_cmpuint (skipped, ==, 0);
          run (t, &r[s]);
          nl_trainer_get_loss_scale (t, &scale, &skipped);
          g_assert_cmpfloat (scale, ==, 1.0f);
          g_assert_cmpuint (skipped, ==, 0);
          w[s] = weights_of (t);
        }
      g_assert_true (bytes_equal (w[0], w[1]));
      g_assert_cmpfloat (r[0].last.train_loss, ==, r[1].last.train_loss);
      g_assert_cmpfloat (r[0].last.train_loss, <, 0.5 * r[0].first_loss);
      for (int s = 0; s < 2; s++)
        g_array_unref (w[s]);
    }
}

/* 6. Clipping sees the true gradients: the global norm is taken of the
 * unscaled gradients and the per-element clip applies after unscaling, so
 * fp16 at scale 256 takes the same steps as at scale 1. Unclipped runs
 * show the clipping is in force (a norm taken of the scaled gradients
 * would shrink every step 256 times). */
static void
test_fp16_clipping_unscaled (void)
{
  for (int mode = 0; mode < 2; mode++)
    {
      const float scales[2] = { 1.0f, 256.0f };
      GArray *w[2], *free_w = NULL;
      double d, d_free;
      for (int s = 0; s < 3; s++)
        {
          g_auto (NlRunConfig) cfg = { 0 };
          g_autoptr (NlTrainer) t = NULL;
          Run r = { 0 };
          config (&cfg, data_spec, NL_PRECISION_F16, scales[s % 2]);
          cfg.epochs = 1;
          if (s < 2 && mode == 0)
            cfg.optim.clip_global_norm = 0.05f;
          else if (s < 2)
            cfg.optim.clip_gradient = 0.001f;
          t = new_trainer (mlp_json, &cfg);
          run (t, &r);
          if (s < 2)
            w[s] = weights_of (t);
          else
            free_w = weights_of (t);
        }
      d = rel_dist (w[1], w[0]);
      d_free = rel_dist (free_w, w[0]);
      g_test_message ("%s: scale 256 vs 1 %.3g, unclipped vs clipped %.3g",
                      mode == 0 ? "global norm 0.05" : "element clip 0.001", d, d_free);
      g_assert_cmpfloat (d, <, 1e-4);
      g_assert_cmpfloat (d_free, >, 100 * d);
      g_array_unref (w[0]);
      g_array_unref (w[1]);
      g_array_unref (free_w);
    }
}

/* A resumed fp16 run goes on bit for bit as if never stopped: the
 * checkpoint keeps the loss scale and the skipped steps (which Adam's bias
 * correction does not count), and a resume that forgot them would start
 * over at 2^24, skip again, and end elsewhere. */
static void
test_fp16_resume_bit_exact (void)
{
  g_auto (NlRunConfig) cfg = { 0 };
  g_auto (NlRunConfig) first = { 0 };
  g_autoptr (NlTrainer) whole = NULL, part = NULL, resumed = NULL, forgetful = NULL;
  g_autoptr (GArray) w_whole = NULL, s_whole = NULL, w_resumed = NULL, s_resumed = NULL, w_forgot = NULL;
  g_autoptr (GBytes) blob = NULL;
  g_autoptr (GError) error = NULL;
  NlTrainPosition pos = { 0 }, loaded = { 0 };
  int64_t updates;
  float scale;
  guint64 skipped;
  Run r = { 0 };

  config (&cfg, data_spec, NL_PRECISION_F16, 16777216.0f);
  nl_optim_config_init (&cfg.optim, NL_OPTIM_ADAM);
  cfg.optim.lr = 0.01f;
  cfg.epochs = 2;
  whole = new_trainer (mlp_json, &cfg);
  run (whole, &r);
  w_whole = weights_of (whole);
  s_whole = collect (whole, TRUE);

  nl_run_config_copy (&first, &cfg);
  first.epochs = 1;
  part = new_trainer (mlp_json, &first);
  run (part, &r);
  nl_trainer_get_position (part, &pos.epoch, &updates);
  pos.updates = updates;
  nl_trainer_get_loss_scale (part, &scale, &skipped);
  g_assert_cmpuint (skipped, >=, 3);
  pos.loss_scale = scale;
  pos.skipped = (gint64) skipped;
  blob = nl_checkpoint_save (nl_trainer_get_model (part), &pos, &error);
  g_assert_no_error (error);

  for (int forget = 0; forget < 2; forget++)
    {
      NlTrainer *t = new_trainer (mlp_json, &cfg);
      g_assert_true (nl_checkpoint_load (nl_trainer_get_model (t), blob, FALSE, &loaded, &error));
      g_assert_no_error (error);
      g_assert_cmpfloat (loaded.loss_scale, ==, scale);
      g_assert_cmpint (loaded.skipped, ==, (gint64) skipped);
      nl_trainer_set_position (t, loaded.epoch, loaded.updates);
      if (!forget)
        nl_trainer_set_loss_scale (t, (float) loaded.loss_scale, (guint64) loaded.skipped);
      nl_train_position_clear (&loaded);
      run (t, &r);
      if (forget)
        forgetful = t;
      else
        resumed = t;
    }
  w_resumed = weights_of (resumed);
  s_resumed = collect (resumed, TRUE);
  g_assert_true (bytes_equal (w_resumed, w_whole));
  g_assert_true (bytes_equal (s_resumed, s_whole));
  w_forgot = weights_of (forgetful);
  g_assert_false (bytes_equal (w_forgot, w_whole));
}

int
main (int argc, char **argv)
{
  int rc;
  g_test_init (&argc, &argv, NULL);
  data_dir = g_dir_make_tmp ("nl-mixed-train-XXXXXX", NULL);
  one_dir = g_dir_make_tmp ("nl-mixed-one-XXXXXX", NULL);
  g_assert_nonnull (data_dir);
  g_assert_nonnull (one_dir);
  nl_test_write_idx_dataset (data_dir, N_TRAIN, N_TEST);
  nl_test_write_idx_dataset (one_dir, N_ONE, 10);
  data_spec = g_strdup_printf ("mnist:%s", data_dir);
  one_spec = g_strdup_printf ("mnist:%s", one_dir);

  g_test_add_func ("/mixed-train/precisions-train", test_precisions_train);
  g_test_add_func ("/mixed-train/one-step-reference", test_one_step_reference);
  g_test_add_func ("/mixed-train/fp16-resume-bit-exact", test_fp16_resume_bit_exact);
  g_test_add_func ("/mixed-train/fp16-overflow-backs-off", test_fp16_overflow_backs_off);
  g_test_add_func ("/mixed-train/fp16-skipped-step-untouched", test_fp16_skipped_step_untouched);
  g_test_add_func ("/mixed-train/fp16-scale-choices", test_fp16_scale_choices);
  g_test_add_func ("/mixed-train/bf16-never-scales", test_bf16_never_scales);
  g_test_add_func ("/mixed-train/fp16-clipping-unscaled", test_fp16_clipping_unscaled);
  rc = g_test_run ();

  nl_test_remove_tree (data_dir);
  nl_test_remove_tree (one_dir);
  g_free (data_spec);
  g_free (one_spec);
  g_free (data_dir);
  g_free (one_dir);
  return rc;
}
