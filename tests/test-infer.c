/* test-infer.c — the inference executor (engine/infer/nl-infer-net.h)
 * against the training program's inference forward (fp32), against a
 * scalar emulation of the quantization written here (INT8), and the
 * quantization table (JSON, weight quantization). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/graph/nl-program.h"
#include "engine/infer/nl-infer-net.h"
#include "nl-test-util.h"
#include "ops/nl-op-registry.h"

/* Dense -> LayerNorm -> GELU -> Dense -> Softmax: every op but Dense
 * through its own CPU kernel */
static const char *fallback_json =
  "{\"format\":\"netloom.network\",\"version\":1,\"name\":\"fallback\",\"nodes\":["
  "{\"id\":\"data\",\"op\":\"Input\"},"
  "{\"id\":\"fc1\",\"op\":\"Dense\",\"params\":{\"units\":24}},"
  "{\"id\":\"ln\",\"op\":\"LayerNorm\"},"
  "{\"id\":\"gelu\",\"op\":\"GELU\"},"
  "{\"id\":\"fc2\",\"op\":\"Dense\",\"params\":{\"units\":7}},"
  "{\"id\":\"soft\",\"op\":\"Softmax\"}],"
  "\"edges\":[\"data -> fc1\",\"fc1 -> ln\",\"ln -> gelu\",\"gelu -> fc2\",\"fc2 -> soft\"]}";

/* conv -> bn -> tanh, read twice: by conv2 and by the Add after it (no
 * sum in place), then Flatten -> Dense */
static const char *residual_json =
  "{\"format\":\"netloom.network\",\"version\":1,\"name\":\"res\",\"nodes\":["
  "{\"id\":\"data\",\"op\":\"Input\"},"
  "{\"id\":\"conv1\",\"op\":\"Conv2D\",\"params\":{\"channels\":3,\"kernel\":3,\"padding\":1}},"
  "{\"id\":\"bn\",\"op\":\"BatchNorm\"},"
  "{\"id\":\"act\",\"op\":\"Activation\",\"params\":{\"act_type\":\"tanh\"}},"
  "{\"id\":\"conv2\",\"op\":\"Conv2D\",\"params\":{\"channels\":3,\"kernel\":3,\"padding\":1}},"
  "{\"id\":\"add\",\"op\":\"Add\"},"
  "{\"id\":\"flatten\",\"op\":\"Flatten\"},"
  "{\"id\":\"fc\",\"op\":\"Dense\",\"params\":{\"units\":4}}],"
  "\"edges\":[\"data -> conv1\",\"conv1 -> bn\",\"bn -> act\",\"act -> conv2\",\"conv2 -> add:0\","
  "\"act -> add:1\",\"add -> flatten\",\"flatten -> fc\"]}";

/* conv-bn-relu-pool-conv-add-relu-dense, for the INT8 emulation */
static const char *small_json =
  "{\"format\":\"netloom.network\",\"version\":1,\"name\":\"small\",\"nodes\":["
  "{\"id\":\"data\",\"op\":\"Input\"},"
  "{\"id\":\"c1\",\"op\":\"Conv2D\",\"params\":{\"channels\":8,\"kernel\":3,\"padding\":1}},"
  "{\"id\":\"bn1\",\"op\":\"BatchNorm\"},"
  "{\"id\":\"r1\",\"op\":\"Activation\",\"params\":{\"act_type\":\"relu\"}},"
  "{\"id\":\"pool\",\"op\":\"MaxPool2D\",\"params\":{\"pool_size\":2}},"
  "{\"id\":\"c2\",\"op\":\"Conv2D\",\"params\":{\"channels\":8,\"kernel\":3,\"padding\":1}},"
  "{\"id\":\"add\",\"op\":\"Add\"},"
  "{\"id\":\"r2\",\"op\":\"Activation\",\"params\":{\"act_type\":\"relu\"}},"
  "{\"id\":\"fc\",\"op\":\"Dense\",\"params\":{\"units\":5}}],"
  "\"edges\":[\"data -> c1\",\"c1 -> bn1\",\"bn1 -> r1\",\"r1 -> pool\",\"pool -> c2\",\"c2 -> add:0\","
  "\"pool -> add:1\",\"add -> r2\",\"r2 -> fc\"]}";

/* strided conv without bias, BatchNorm, sigmoid on a blocked layout, an
 * average pool with padding, Dropout, a grouped 1x1 conv, a ceil-mode max
 * pool, GlobalAvgPool2D, Dense with a BatchNorm folded, LogSoftmax */
static const char *misc_json =
  "{\"format\":\"netloom.network\",\"version\":1,\"name\":\"misc\",\"nodes\":["
  "{\"id\":\"data\",\"op\":\"Input\"},"
  "{\"id\":\"c1\",\"op\":\"Conv2D\",\"params\":{\"channels\":6,\"kernel\":3,\"stride\":2,\"padding\":1,"
  "\"use_bias\":false}},"
  "{\"id\":\"bn1\",\"op\":\"BatchNorm\"},"
  "{\"id\":\"sig\",\"op\":\"Activation\",\"params\":{\"act_type\":\"sigmoid\"}},"
  "{\"id\":\"ap\",\"op\":\"AvgPool2D\",\"params\":{\"pool_size\":3,\"strides\":2,\"padding\":1,"
  "\"ceil_mode\":true}},"
  "{\"id\":\"drop\",\"op\":\"Dropout\"},"
  "{\"id\":\"c2\",\"op\":\"Conv2D\",\"params\":{\"channels\":8,\"kernel\":1,\"groups\":2}},"
  "{\"id\":\"r\",\"op\":\"Activation\",\"params\":{\"act_type\":\"relu\"}},"
  "{\"id\":\"mp\",\"op\":\"MaxPool2D\",\"params\":{\"pool_size\":2,\"ceil_mode\":true}},"
  "{\"id\":\"gap\",\"op\":\"GlobalAvgPool2D\"},"
  "{\"id\":\"flat\",\"op\":\"Flatten\"},"
  "{\"id\":\"fc1\",\"op\":\"Dense\",\"params\":{\"units\":6}},"
  "{\"id\":\"bn2\",\"op\":\"BatchNorm\"},"
  "{\"id\":\"r2\",\"op\":\"Activation\",\"params\":{\"act_type\":\"relu\"}},"
  "{\"id\":\"fc2\",\"op\":\"Dense\",\"params\":{\"units\":3}},"
  "{\"id\":\"lsm\",\"op\":\"LogSoftmax\"}],"
  "\"edges\":[\"data -> c1\",\"c1 -> bn1\",\"bn1 -> sig\",\"sig -> ap\",\"ap -> drop\",\"drop -> c2\",\"c2 -> r\","
  "\"r -> mp\",\"mp -> gap\",\"gap -> flat\",\"flat -> fc1\",\"fc1 -> bn2\",\"bn2 -> r2\",\"r2 -> fc2\",\"fc2 -> lsm\"]}";

static NlNetwork *
load_net (const char *name)
{
  g_autoptr (GError) error = NULL;
  NlNetwork *net;
  const char *const names[] = { "fallback", "res", "small", "misc" };
  const char *const jsons[] = { fallback_json, residual_json, small_json, misc_json };
  for (guint i = 0; i < G_N_ELEMENTS (names); i++)
    if (strcmp (name, names[i]) == 0)
    {
      const char *json = jsons[i];
      net = nl_network_load_data (json, -1, &error);
      nl_test_ok_or_die (net != NULL, error, name);
      return net;
    }
  return nl_test_load_template (name);
}

static NlShape
sample_of (const char *name)
{
  if (strcmp (name, "fallback") == 0)
    return nl_shape_of (1, (int64_t) 12);
  if (strcmp (name, "res") == 0)
    return nl_shape_of (3, (int64_t) 1, (int64_t) 6, (int64_t) 6);
  if (strcmp (name, "small") == 0)
    return nl_shape_of (3, (int64_t) 3, (int64_t) 8, (int64_t) 8);
  if (strcmp (name, "misc") == 0)
    return nl_shape_of (3, (int64_t) 3, (int64_t) 9, (int64_t) 9);
  return nl_shape_of (3, (int64_t) 1, (int64_t) 28, (int64_t) 28);
}

/* A model whose BatchNorms have running statistics and affine weights
 * away from their defaults, so that folding them is seen. */
static NlModel *
make_model (NlNetwork *net, const NlShape *sample, guint64 seed)
{
  g_autoptr (GError) error = NULL;
  NlModel *m = nl_model_new_full (net, sample, &(NlModelOptions) { .seed = seed }, &error);
  nl_test_ok_or_die (m != NULL, error, "model");
  for (int i = 0; i < m->n_nodes; i++)
    {
      for (int k = 0; k < NL_GRAPH_MAX_SLOTS; k++)
        {
          NlTensor *w = m->weights[NL_MODEL_SLOT (i, k)], *a = m->aux[NL_MODEL_SLOT (i, k)];
          if (!w && !a)
            continue;
          if (strcmp (nl_network_node (net, i)->def->name, "BatchNorm") == 0)
            {
              if (w)
                nl_test_fill_uniform (w, k == 0 ? 0.5f : -0.3f, k == 0 ? 1.5f : 0.3f, seed + 17 * i + k);
              if (a)
                nl_test_fill_uniform (a, k == 0 ? -0.2f : 0.5f, k == 0 ? 0.2f : 2.0f, seed + 31 * i + k);
            }
          else if (w && k == 1)
            nl_test_fill_uniform (w, -0.2f, 0.2f, seed + 7 * i); /* biases, zero by default */
        }
    }
  return m;
}

static NlInferNet *
make_net (NlModel *m, int batch, NlInferMode mode, const NlQuantTable *t, NlInferObserve obs, gpointer data)
{
  g_autoptr (GError) error = NULL;
  NlInferOptions o = { .batch = batch, .mode = mode, .quant = t, .observe = obs, .observe_data = data };
  NlInferNet *n = nl_infer_net_new (m, &o, &error);
  nl_test_ok_or_die (n != NULL, error, "inference net");
  return n;
}

/* The program's prediction for the first rows of x. */
static float *
program_pred (NlModel *m, int batch, const float *x, int64_t per)
{
  g_autoptr (GError) error = NULL;
  NlCompileOptions co = { .batch = batch, .training = FALSE };
  g_autoptr (NlProgram) p = nl_program_new (m, &co, &error);
  nl_test_ok_or_die (p != NULL, error, "program");
  memcpy (nl_tensor_f32 (nl_program_input (p)), x, batch * per * sizeof (float));
  nl_test_ok_or_die (nl_program_forward (p, 0, &error), error, "program forward");
  return g_memdup2 (nl_tensor_f32 (nl_program_pred (p)), nl_tensor_numel (nl_program_pred (p)) * sizeof (float));
}

static float *
random_input (int64_t n, guint64 seed)
{
  g_autoptr (NlTensor) t = nl_tensor_new (NL_DTYPE_F32, 1, &n);
  nl_test_fill_uniform (t, -1.0f, 2.0f, seed);
  return g_memdup2 (nl_tensor_f32 (t), n * sizeof (float));
}

/* fp32: the executor's output for `rows` of `batch` equals the program's
 * (run at batch `rows`). */
static void
check_fp32 (const char *name, int batch, int rows)
{
  g_autoptr (NlNetwork) net = load_net (name);
  NlShape sample = sample_of (name);
  g_autoptr (NlModel) m = make_model (net, &sample, 3);
  int64_t per = nl_shape_numel (&sample);
  g_autofree float *x = random_input (batch * per, 11);
  g_autofree float *want = program_pred (m, rows, x, per);
  g_autoptr (NlInferNet) n = make_net (m, batch, NL_INFER_FP32, NULL, NULL, NULL);
  g_autoptr (GError) error = NULL;
  memcpy (nl_tensor_f32 (nl_infer_net_input (n)), x, batch * per * sizeof (float));
  /* twice: a second run must not see the first one's leftovers */
  for (int r = 0; r < 2; r++)
    nl_test_ok_or_die (nl_infer_net_run (n, rows, &error), error, "run");
  NlTensor *out = nl_infer_net_output (n);
  int64_t out_per = nl_tensor_numel (out) / batch;
  g_assert_cmpint (out->shape[0], ==, batch);
  nl_test_assert_close (nl_tensor_f32 (out), want, rows * out_per, 1e-4, 1e-4);
  g_assert_cmpuint (nl_infer_net_bytes (n), >, 0);
}

static void
test_fp32 (void)
{
  const char *nets[] = { "mlp", "lenet", "resnet-small", "fallback", "res", "misc" };
  for (guint i = 0; i < G_N_ELEMENTS (nets); i++)
    {
      check_fp32 (nets[i], 128, 128);
      check_fp32 (nets[i], 64, 37);
      check_fp32 (nets[i], 1, 1);
    }
}

static void
test_describe (void)
{
  g_autoptr (NlNetwork) net = load_net ("resnet-small");
  NlShape sample = sample_of ("resnet-small");
  g_autoptr (NlModel) m = make_model (net, &sample, 3);
  g_autoptr (NlInferNet) n = make_net (m, 4, NL_INFER_FP32, NULL, NULL, NULL);
  const char *const *d = nl_infer_net_describe (n);
  g_autofree char *all = g_strjoinv ("\n", (char **) d);
  g_assert_nonnull (strstr (all, "stem_conv+stem_bn+stem_relu fp32 conv f32->f32"));
  g_assert_nonnull (strstr (all, "block1_conv2+block1_bn2+block1_add+block1_relu fp32 conv"));
  g_assert_nonnull (strstr (all, "block2_conv2+block2_bn2+block2_add+block2_relu fp32 conv"));
  g_assert_nonnull (strstr (all, "pool fp32 pool"));
  /* no step of its own for a fused node or a view */
  g_assert_null (strstr (all, "\nblock1_bn1"));
  g_assert_null (strstr (all, "flatten"));
  g_assert_null (strstr (all, "fp32 BatchNorm"));
  g_assert_null (strstr (all, "fp32 Add"));
}

/* The part of net that `id` depends on, ending there. */
static NlNetwork *
truncate_at (const NlNetwork *net, const char *id)
{
  int nn = nl_network_n_nodes (net);
  g_autofree gboolean *keep = g_new0 (gboolean, nn);
  g_autofree int *map = g_new0 (int, nn);
  g_autoptr (GError) error = NULL;
  NlNetwork *t = nl_network_new ("cut");
  keep[nl_network_find (net, id)] = TRUE;
  for (gboolean changed = TRUE; changed;)
    {
      changed = FALSE;
      for (guint e = 0; e < net->edges->len; e++)
        {
          NlEdge *ed = &g_array_index (net->edges, NlEdge, e);
          if (keep[ed->to] && !keep[ed->from])
            keep[ed->from] = changed = TRUE;
        }
    }
  for (int i = 0; i < nn; i++)
    if (keep[i])
      {
        NlNode *node = nl_network_node (net, i);
        map[i] = nl_network_add_node (t, node->id, node->def->name, &error);
        nl_test_ok_or_die (map[i] >= 0, error, "truncate");
        memcpy (nl_network_node (t, map[i])->params, node->params, node->def->n_params * sizeof (NlParamValue));
      }
  for (guint e = 0; e < net->edges->len; e++)
    {
      NlEdge *ed = &g_array_index (net->edges, NlEdge, e);
      if (keep[ed->from] && keep[ed->to])
        nl_test_ok_or_die (nl_network_connect (t, map[ed->from], ed->from_port, map[ed->to], ed->to_port, &error),
                           error, "truncate");
    }
  return t;
}

/* m's weights and statistics copied into the same nodes of t */
static void
copy_weights (NlModel *from, NlModel *to)
{
  for (int i = 0; i < to->n_nodes; i++)
    {
      int j = nl_network_find (from->net, nl_network_node (to->net, i)->id);
      for (int k = 0; k < NL_GRAPH_MAX_SLOTS; k++)
        {
          NlTensor *a = from->weights[NL_MODEL_SLOT (j, k)], *b = to->weights[NL_MODEL_SLOT (i, k)];
          NlTensor *c = from->aux[NL_MODEL_SLOT (j, k)], *d = to->aux[NL_MODEL_SLOT (i, k)];
          if (a && b)
            memcpy (nl_tensor_f32 (b), nl_tensor_f32 (a), nl_tensor_numel (a) * sizeof (float));
          if (c && d)
            memcpy (nl_tensor_f32 (d), nl_tensor_f32 (c), nl_tensor_numel (c) * sizeof (float));
        }
    }
}

typedef struct {
  GHashTable *values; /* point -> GArray of float */
  GPtrArray *order;
} Seen;

static void
observe_store (const char *point, const float *values, int64_t n, gpointer data)
{
  Seen *s = data;
  GArray *a = g_array_sized_new (FALSE, FALSE, sizeof (float), (guint) n);
  g_array_append_vals (a, values, (guint) n);
  g_hash_table_insert (s->values, g_strdup (point), a);
  g_ptr_array_add (s->order, g_strdup (point));
}

static void
seen_clear (Seen *s)
{
  g_hash_table_unref (s->values);
  g_ptr_array_unref (s->order);
}

static Seen
seen_new (void)
{
  return (Seen) { g_hash_table_new_full (g_str_hash, g_str_equal, g_free, (GDestroyNotify) g_array_unref),
                  g_ptr_array_new_with_free_func (g_free) };
}

/* Each point observed after a run of `rows` equals the program's value of
 * that node (the network cut there), in step order and with rows' count. */
static void
check_observe (const char *name, const char *const *expect, int batch, int rows)
{
  g_autoptr (NlNetwork) net = load_net (name);
  NlShape sample = sample_of (name);
  g_autoptr (NlModel) m = make_model (net, &sample, 5);
  int64_t per = nl_shape_numel (&sample);
  g_autofree float *x = random_input (batch * per, 13);
  g_autoptr (GError) error = NULL;
  Seen seen = seen_new ();
  g_autoptr (NlInferNet) n = make_net (m, batch, NL_INFER_FP32, NULL, observe_store, &seen);
  const char *const *points = nl_infer_net_points (n);
  g_assert_cmpuint (g_strv_length ((char **) points), ==, g_strv_length ((char **) expect));
  for (int i = 0; expect[i]; i++)
    g_assert_cmpstr (points[i], ==, expect[i]);
  memcpy (nl_tensor_f32 (nl_infer_net_input (n)), x, batch * per * sizeof (float));
  nl_test_ok_or_die (nl_infer_net_run (n, rows, &error), error, "run");
  g_assert_cmpuint (seen.order->len, ==, g_strv_length ((char **) expect));
  for (int i = 0; expect[i]; i++)
    {
      GArray *got = g_hash_table_lookup (seen.values, expect[i]);
      g_assert_cmpstr (g_ptr_array_index (seen.order, i), ==, expect[i]);
      if (i == 0)
        {
          g_assert_cmpuint (got->len, ==, rows * per);
          nl_test_assert_close ((float *) got->data, x, rows * per, 0, 0);
          continue;
        }
      g_autoptr (NlNetwork) cut = truncate_at (net, expect[i]);
      g_autoptr (NlModel) cm = make_model (cut, &sample, 5);
      copy_weights (m, cm);
      g_autofree float *want = program_pred (cm, rows, x, per);
      NlCompileOptions co = { .batch = rows };
      g_autoptr (NlGraph) g = nl_graph_compile (cut, &sample, &co, &error);
      nl_test_ok_or_die (g != NULL, error, "graph");
      g_assert_cmpuint (got->len, ==, nl_shape_numel (&nl_graph_value (g, g->pred_value)->shape));
      nl_test_assert_close ((float *) got->data, want, got->len, 1e-4, 1e-4);
    }
  seen_clear (&seen);
}

static void
test_observe (void)
{
  const char *lenet[] = { "data", "relu1", "relu2", "relu3", "fc2", NULL };
  const char *resnet[] = { "data", "stem_relu", "block1_relu1", "block1_relu", "block2_relu1", "block2_short_bn",
                           "block2_relu", "block3_relu1", "block3_short_bn", "block3_relu", "fc", NULL };
  const char *res[] = { "data", "bn", "add", "fc", NULL };
  check_observe ("lenet", lenet, 16, 16);
  check_observe ("lenet", lenet, 16, 5);
  check_observe ("resnet-small", resnet, 8, 3);
  check_observe ("res", res, 4, 4);
}

/* A table from the fp32 net's observed ranges, thresholds at `clip` of the
 * largest |x| (below 1: the largest values saturate). */
static NlQuantTable *
observed_table (NlModel *m, int batch, const float *x, int64_t per, float clip)
{
  g_autoptr (GError) error = NULL;
  Seen seen = seen_new ();
  g_autoptr (NlInferNet) n = make_net (m, batch, NL_INFER_FP32, NULL, observe_store, &seen);
  memcpy (nl_tensor_f32 (nl_infer_net_input (n)), x, batch * per * sizeof (float));
  nl_test_ok_or_die (nl_infer_net_run (n, batch, &error), error, "calibration run");
  NlQuantTable *t = nl_quant_table_new (NL_QUANT_NAIVE, batch);
  for (guint i = 0; i < seen.order->len; i++)
    {
      GArray *a = g_hash_table_lookup (seen.values, seen.order->pdata[i]);
      float lo = G_MAXFLOAT, hi = -G_MAXFLOAT;
      for (guint k = 0; k < a->len; k++)
        {
          lo = MIN (lo, g_array_index (a, float, k));
          hi = MAX (hi, g_array_index (a, float, k));
        }
      nl_quant_table_add (t, seen.order->pdata[i], lo, hi, clip * MAX (fabsf (lo), fabsf (hi)));
    }
  seen_clear (&seen);
  return t;
}

static float
range_scale (const NlQuantTable *t, const char *point)
{
  return nl_quant_range_scale (nl_quant_table_find (t, point));
}

/* round half to even, as the CPU's conversions do, then saturate */
static int
quant (double v, int lo, int hi)
{
  double r = nearbyint (v);
  return (int) MIN (MAX (r, lo), hi);
}

/* A convolution (3x3, padding 1, stride 1) of quantized q (n, c, h, w)
 * with per-channel s8 weights, into real values: acc * ws / s_in + bias. */
static void
ref_conv (const int *q, int n, int c, int h, int w, const int8_t *wq, const float *ws, const float *b, int o,
          float s_in, double *y)
{
  for (int i = 0; i < n; i++)
    for (int oc = 0; oc < o; oc++)
      for (int yy = 0; yy < h; yy++)
        for (int xx = 0; xx < w; xx++)
          {
            int64_t acc = 0;
            for (int ic = 0; ic < c; ic++)
              for (int ky = 0; ky < 3; ky++)
                for (int kx = 0; kx < 3; kx++)
                  {
                    int sy = yy + ky - 1, sx = xx + kx - 1;
                    if (sy < 0 || sy >= h || sx < 0 || sx >= w)
                      continue;
                    acc += (int64_t) wq[((oc * c + ic) * 3 + ky) * 3 + kx] * q[((i * c + ic) * h + sy) * w + sx];
                  }
            y[((i * o + oc) * h + yy) * w + xx] = (double) acc * ws[oc] / s_in + b[oc];
          }
}

/* The INT8 net of small_json, emulated: quantize the input, s8 x s8/u8
 * products summed in integers, requantized to nearest and saturated. */
static float *
ref_small_int8 (NlModel *m, const NlQuantTable *t, const float *x, int n)
{
  const NlNetwork *net = m->net;
  int c1 = nl_network_find (net, "c1"), bn = nl_network_find (net, "bn1"), c2 = nl_network_find (net, "c2"),
      fc = nl_network_find (net, "fc");
  float s0 = range_scale (t, "data"), s1 = range_scale (t, "r1"), s2 = range_scale (t, "r2");
  float eps = (float) nl_network_node (net, bn)->params[nl_op_param_index (nl_network_node (net, bn)->def, "epsilon")].f;
  g_autofree int *q0 = g_new (int, n * 3 * 64), *q1 = g_new (int, n * 8 * 64), *qp = g_new (int, n * 8 * 16),
                 *q2 = g_new (int, n * 8 * 16);
  g_autofree double *y1 = g_new (double, n * 8 * 64), *y2 = g_new (double, n * 8 * 16);
  float w1[8 * 27], b1[8], ws1[8], ws2[8], ws3[5];
  int8_t wq1[8 * 27], wq2[8 * 72], wq3[5 * 128];
  const float *g = nl_tensor_f32 (m->weights[NL_MODEL_SLOT (bn, 0)]), *be = nl_tensor_f32 (m->weights[NL_MODEL_SLOT (bn, 1)]);
  const float *mu = nl_tensor_f32 (m->aux[NL_MODEL_SLOT (bn, 0)]), *var = nl_tensor_f32 (m->aux[NL_MODEL_SLOT (bn, 1)]);
  for (int o = 0; o < 8; o++)
    {
      float a = g[o] / sqrtf (var[o] + eps);
      for (int k = 0; k < 27; k++)
        w1[o * 27 + k] = nl_tensor_f32 (m->weights[NL_MODEL_SLOT (c1, 0)])[o * 27 + k] * a;
      b1[o] = (nl_tensor_f32 (m->weights[NL_MODEL_SLOT (c1, 1)])[o] - mu[o]) * a + be[o];
    }
  nl_quant_weights (w1, 8, 27, wq1, ws1);
  nl_quant_weights (nl_tensor_f32 (m->weights[NL_MODEL_SLOT (c2, 0)]), 8, 72, wq2, ws2);
  nl_quant_weights (nl_tensor_f32 (m->weights[NL_MODEL_SLOT (fc, 0)]), 5, 128, wq3, ws3);
  for (int i = 0; i < n * 3 * 64; i++)
    q0[i] = quant (x[i] * (double) s0, -128, 127);
  ref_conv (q0, n, 3, 8, 8, wq1, ws1, b1, 8, s0, y1);
  for (int i = 0; i < n * 8 * 64; i++)
    q1[i] = quant (MAX (y1[i], 0) * s1, 0, 255);
  for (int p = 0; p < n * 8; p++)
    for (int yy = 0; yy < 4; yy++)
      for (int xx = 0; xx < 4; xx++)
        {
          const int *s = q1 + p * 64 + yy * 16 + xx * 2;
          qp[p * 16 + yy * 4 + xx] = MAX (MAX (s[0], s[1]), MAX (s[8], s[9]));
        }
  ref_conv (qp, n, 8, 4, 4, wq2, ws2, nl_tensor_f32 (m->weights[NL_MODEL_SLOT (c2, 1)]), 8, s1, y2);
  for (int i = 0; i < n * 8 * 16; i++)
    q2[i] = quant (MAX (y2[i] + qp[i] / (double) s1, 0) * s2, 0, 255);
  float *out = g_new (float, n * 5);
  for (int i = 0; i < n; i++)
    for (int o = 0; o < 5; o++)
      {
        int64_t acc = 0;
        for (int k = 0; k < 128; k++)
          acc += (int64_t) wq3[o * 128 + k] * q2[i * 128 + k];
        out[i * 5 + o] = (float) ((double) acc * ws3[o] / s2 + nl_tensor_f32 (m->weights[NL_MODEL_SLOT (fc, 1)])[o]);
      }
  return out;
}

static void
test_int8_emulated (void)
{
  g_autoptr (NlNetwork) net = load_net ("small");
  NlShape sample = sample_of ("small");
  g_autoptr (NlModel) m = make_model (net, &sample, 9);
  const int batch = 16;
  g_autofree float *x = random_input (batch * 192, 21);
  g_autoptr (NlQuantTable) t = observed_table (m, batch, x, 192, 0.8f);
  g_autoptr (NlInferNet) n = make_net (m, batch, NL_INFER_INT8, t, NULL, NULL);
  g_autoptr (GError) error = NULL;
  g_autofree char *all = g_strjoinv ("\n", (char **) nl_infer_net_describe (n));
  g_assert_nonnull (strstr (all, "c1+bn1+r1 int8 conv s8->u8"));
  g_assert_nonnull (strstr (all, "pool int8 pool u8"));
  g_assert_nonnull (strstr (all, "c2+add+r2 int8 conv u8->u8"));
  g_assert_nonnull (strstr (all, "fc int8 dense u8->f32"));
  memcpy (nl_tensor_f32 (nl_infer_net_input (n)), x, batch * 192 * sizeof (float));
  nl_test_ok_or_die (nl_infer_net_run (n, batch, &error), error, "int8 run");
  g_autofree float *want = ref_small_int8 (m, t, x, batch);
  const float *got = nl_tensor_f32 (nl_infer_net_output (n));
  /* one integer step of the fc's input moves an output by at most max |w| / s2 */
  float wmax = 0, s2 = range_scale (t, "r2");
  const float *w3 = nl_tensor_f32 (m->weights[NL_MODEL_SLOT (nl_network_find (net, "fc"), 0)]);
  for (int k = 0; k < 5 * 128; k++)
    wmax = MAX (wmax, fabsf (w3[k]));
  int exact = 0;
  for (int i = 0; i < batch * 5; i++)
    {
      double d = fabs (got[i] - want[i]);
      if (d > wmax / s2 + 1e-4)
        g_error ("output %d: int8 %g, emulated %g (one step is %g)", i, got[i], want[i], wmax / s2);
      exact += d < 1e-4 * MAX (1.0, fabs (want[i]));
    }
  /* off by a step only where a rounding tie fell differently: rare */
  g_assert_cmpint (exact, >=, batch * 5 * 9 / 10);
}

static void
test_int8_lenet (void)
{
  const char *nets[] = { "lenet", "resnet-small", "mlp", "misc" };
  for (guint k = 0; k < G_N_ELEMENTS (nets); k++)
    {
      g_autoptr (NlNetwork) net = load_net (nets[k]);
      NlShape sample = sample_of (nets[k]);
      g_autoptr (NlModel) m = make_model (net, &sample, 4);
      const int batch = 64;
      int64_t per = nl_shape_numel (&sample);
      g_autofree float *x = random_input (batch * per, 23);
      g_autoptr (NlQuantTable) t = observed_table (m, batch, x, per, 1.0f);
      g_autoptr (NlInferNet) f = make_net (m, batch, NL_INFER_FP32, NULL, NULL, NULL);
      g_autoptr (NlInferNet) q = make_net (m, batch, NL_INFER_INT8, t, NULL, NULL);
      g_autoptr (GError) error = NULL;
      memcpy (nl_tensor_f32 (nl_infer_net_input (f)), x, batch * per * sizeof (float));
      memcpy (nl_tensor_f32 (nl_infer_net_input (q)), x, batch * per * sizeof (float));
      nl_test_ok_or_die (nl_infer_net_run (f, batch, &error) && nl_infer_net_run (q, batch, &error), error, "run");
      const float *a = nl_tensor_f32 (nl_infer_net_output (q)), *b = nl_tensor_f32 (nl_infer_net_output (f));
      double num = 0, den = 0;
      for (int64_t i = 0; i < nl_tensor_numel (nl_infer_net_output (f)); i++)
        {
          num += (a[i] - b[i]) * (a[i] - b[i]);
          den += b[i] * b[i];
        }
      g_test_message ("%s: relative error of the INT8 logits %.4f", nets[k], sqrt (num / den));
      g_assert_cmpfloat (sqrt (num / den), <, 0.05);
      g_assert_cmpfloat (sqrt (num / den), >, 0); /* it did run in 8 bits */
      /* the same points in both compiles */
      const char *const *pf = nl_infer_net_points (f), *const *pq = nl_infer_net_points (q);
      for (; *pf && *pq; pf++, pq++)
        g_assert_cmpstr (*pf, ==, *pq);
      g_assert_true (*pf == NULL && *pq == NULL);
    }
}

static void
test_int8_missing_range (void)
{
  g_autoptr (NlNetwork) net = load_net ("lenet");
  NlShape sample = sample_of ("lenet");
  g_autoptr (NlModel) m = make_model (net, &sample, 4);
  g_autoptr (NlQuantTable) t = nl_quant_table_new (NL_QUANT_NAIVE, 1);
  g_autoptr (GError) error = NULL;
  nl_quant_table_add (t, "data", -1, 2, 2);
  nl_quant_table_add (t, "relu1", 0, 2, 2);
  NlInferOptions o = { .batch = 2, .mode = NL_INFER_INT8, .quant = t };
  g_assert_null (nl_infer_net_new (m, &o, &error));
  g_assert_nonnull (error);
  g_assert_nonnull (strstr (error->message, "relu2"));
  g_clear_error (&error);
  o.quant = NULL;
  g_assert_null (nl_infer_net_new (m, &o, &error));
  g_assert_nonnull (error);
}

static void
test_table_json (void)
{
  g_autoptr (NlQuantTable) t = nl_quant_table_new (NL_QUANT_ENTROPY, 512);
  g_autoptr (GError) error = NULL;
  nl_quant_table_add (t, "conv1", 0.0f, 3.2f, 2.9f);
  nl_quant_table_add (t, "data \"in\"", -1.0f / 3, 0.1f, 0.7f);
  g_autofree char *json = nl_quant_table_to_json (t);
  g_autoptr (NlQuantTable) back = nl_quant_table_from_json (json, &error);
  nl_test_ok_or_die (back != NULL, error, json);
  g_assert_cmpint (back->method, ==, NL_QUANT_ENTROPY);
  g_assert_cmpint (back->calibration_samples, ==, 512);
  g_assert_cmpuint (back->ranges->len, ==, 2);
  for (guint i = 0; i < 2; i++)
    {
      NlQuantRange *a = &g_array_index (t->ranges, NlQuantRange, i), *b = &g_array_index (back->ranges, NlQuantRange, i);
      g_assert_cmpstr (a->point, ==, b->point);
      g_assert_true (a->min == b->min && a->max == b->max && a->threshold == b->threshold);
      g_assert_cmpint (a->is_unsigned, ==, b->is_unsigned);
    }
  g_assert_true (nl_quant_table_find (back, "conv1")->is_unsigned);
  g_assert_false (nl_quant_table_find (back, "data \"in\"")->is_unsigned);
  g_assert_null (nl_quant_table_find (back, "conv2"));
  g_assert_cmpfloat (nl_quant_range_scale (nl_quant_table_find (back, "conv1")), ==, 255.0f / 2.9f);

  /* each damage named */
  static const struct {
    const char *json, *says;
  } cases[] = {
    { "{\"method\":\"naive\"", "not JSON" },
    { "[]", "not a JSON object" },
    { "{\"calibration_samples\":1,\"ranges\":[]}", "\"method\"" },
    { "{\"method\":\"kl\",\"calibration_samples\":1,\"ranges\":[]}", "\"method\"" },
    { "{\"method\":\"naive\",\"calibration_samples\":-1,\"ranges\":[]}", "calibration_samples" },
    { "{\"method\":\"naive\",\"calibration_samples\":1.5,\"ranges\":[]}", "calibration_samples" },
    { "{\"method\":\"naive\",\"calibration_samples\":1,\"ranges\":{}}", "\"ranges\"" },
    { "{\"method\":\"naive\",\"calibration_samples\":1,\"ranges\":[],\"extra\":1}", "unknown member \"extra\"" },
    { "{\"method\":\"naive\",\"calibration_samples\":1,\"ranges\":[1]}", "range 0 is not an object" },
    { "{\"method\":\"naive\",\"calibration_samples\":1,\"ranges\":[{\"min\":0,\"max\":1,\"threshold\":1,"
      "\"unsigned\":true}]}", "range 0 has no \"point\"" },
    { "{\"method\":\"naive\",\"calibration_samples\":1,\"ranges\":[{\"point\":\"a\",\"max\":1,\"threshold\":1,"
      "\"unsigned\":true}]}", "\"a\" has no number \"min\"" },
    { "{\"method\":\"naive\",\"calibration_samples\":1,\"ranges\":[{\"point\":\"a\",\"min\":0,\"max\":1,"
      "\"threshold\":0,\"unsigned\":true}]}", "\"a\" has threshold 0" },
    { "{\"method\":\"naive\",\"calibration_samples\":1,\"ranges\":[{\"point\":\"a\",\"min\":0,\"max\":1,"
      "\"threshold\":-2,\"unsigned\":true}]}", "\"a\" has threshold -2" },
    { "{\"method\":\"naive\",\"calibration_samples\":1,\"ranges\":[{\"point\":\"a\",\"min\":0,\"max\":1,"
      "\"threshold\":1e39,\"unsigned\":true}]}", "\"threshold\" that is not a finite float" },
    { "{\"method\":\"naive\",\"calibration_samples\":1,\"ranges\":[{\"point\":\"a\",\"min\":2,\"max\":1,"
      "\"threshold\":1,\"unsigned\":true}]}", "\"a\" has min 2 above max 1" },
    { "{\"method\":\"naive\",\"calibration_samples\":1,\"ranges\":[{\"point\":\"a\",\"min\":-1,\"max\":1,"
      "\"threshold\":1,\"unsigned\":true}]}", "\"a\" says unsigned true but its min is -1" },
    { "{\"method\":\"naive\",\"calibration_samples\":1,\"ranges\":[{\"point\":\"a\",\"min\":0,\"max\":1,"
      "\"threshold\":1}]}", "\"a\" has no true or false \"unsigned\"" },
    { "{\"method\":\"naive\",\"calibration_samples\":1,\"ranges\":[{\"point\":\"a\",\"min\":0,\"max\":1,"
      "\"threshold\":1,\"unsigned\":true,\"clip\":2}]}", "a has an unknown member \"clip\"" },
    { "{\"method\":\"naive\",\"calibration_samples\":1,\"ranges\":[{\"point\":\"a\",\"min\":0,\"max\":1,"
      "\"threshold\":1,\"unsigned\":true},{\"point\":\"a\",\"min\":0,\"max\":1,\"threshold\":1,\"unsigned\":true}]}",
      "\"a\" has two ranges" },
    { "{\"method\":\"naive\",\"method\":\"entropy\",\"calibration_samples\":1,\"ranges\":[]}",
      "the table has \"method\" twice" },
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr (GError) e = NULL;
      g_autoptr (NlQuantTable) bad = nl_quant_table_from_json (cases[i].json, &e);
      g_assert_null (bad);
      g_assert_nonnull (e);
      if (!strstr (e->message, cases[i].says))
        g_error ("%s: \"%s\" does not say \"%s\"", cases[i].json, e->message, cases[i].says);
    }
  NlQuantMethod m;
  g_assert_true (nl_quant_method_parse ("naive", &m) && m == NL_QUANT_NAIVE);
  g_assert_true (nl_quant_method_parse ("entropy", &m) && m == NL_QUANT_ENTROPY);
  g_assert_false (nl_quant_method_parse ("Entropy", &m));
  g_assert_cmpstr (nl_quant_method_name (NL_QUANT_ENTROPY), ==, "entropy");
}

static void
test_quant_weights (void)
{
  enum { C = 5, P = 37 };
  float w[C * P], scales[C];
  int8_t q[C * P];
  GRand *r = g_rand_new_with_seed (3);
  for (int i = 0; i < C * P; i++)
    w[i] = (float) g_rand_double_range (r, -2, 2) * (i / P + 1);
  for (int i = 0; i < P; i++)
    w[2 * P + i] = 0.0f; /* an all-zero row */
  w[3 * P + 4] = 9.0f;    /* a row whose largest is one value */
  g_rand_free (r);
  nl_quant_weights (w, C, P, q, scales);
  for (int c = 0; c < C; c++)
    {
      double m = 0;
      for (int i = 0; i < P; i++)
        m = MAX (m, fabs (w[c * P + i]));
      g_assert_cmpfloat (fabs (scales[c] - (m > 0 ? m / 127 : 1)), <=, 1e-6 * MAX (m, 1));
      for (int i = 0; i < P; i++)
        {
          int want = m > 0 ? (int) lround (w[c * P + i] * 127 / m) : 0;
          g_assert_cmpint (abs (q[c * P + i] - want), <=, (fabs (fabs (w[c * P + i] * 127 / m) - floor (fabs (w[c * P + i] * 127 / m)) - 0.5) < 1e-4) ? 1 : 0);
        }
    }
  g_assert_cmpint (q[3 * P + 4], ==, 127);
  for (int i = 0; i < P; i++)
    g_assert_cmpint (q[2 * P + i], ==, 0);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/infer/fp32", test_fp32);
  g_test_add_func ("/infer/describe", test_describe);
  g_test_add_func ("/infer/observe", test_observe);
  g_test_add_func ("/infer/int8-emulated", test_int8_emulated);
  g_test_add_func ("/infer/int8-vs-fp32", test_int8_lenet);
  g_test_add_func ("/infer/int8-missing-range", test_int8_missing_range);
  g_test_add_func ("/infer/table-json", test_table_json);
  g_test_add_func ("/infer/quant-weights", test_quant_weights);
  return g_test_run ();
}
