/* test-explain.c — explanations (nl-explain.h) against known answers:
 *  - a network whose output depends only on the left half of the image
 *    (its weights set here) puts its saliency and occlusion mass there;
 *  - on a LeNet trained here, saliency and Grad-CAM equal PyTorch
 *    autograd's on the same weights (exported through safetensors,
 *    tests/explain_ref.py) within 1e-4;
 *  - a sequence network's saliency scores each token;
 *  - the PCA projection equals numpy's SVD of the same activations (up to
 *    sign), with more features than samples and fewer;
 *  - `netloom-cli explain` writes a PNG of the right size whose --json
 *    map is the engine's;
 *  - bad inputs give one message naming the thing. */
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <math.h>
#include <png.h>
#include <string.h>
#include <sys/wait.h>

#include "engine/formats/nl-checkpoint.h"
#include "engine/session/nl-explain.h"
#include "engine/session/nl-pca.h"
#include "engine/session/nl-run-export.h"
#include "engine/session/nl-run.h"
#include "tests/nl-test-util.h"

#define SIDE 28
#define N_TRAIN 2000
#define N_TEST 200
#define MEAN 0.2f
#define STD 0.3f

static char *data_dir, *work_dir;
static NlProject *project;
static gint64 lenet_run;

/* ---- runs ---- */

static char *
spec (void)
{
  return g_strdup_printf ("mnist:%s", data_dir);
}

/* A finished run of NETWORK whose one checkpoint holds the weights `fill`
 * sets (the dataset is not on this machine: the Input gives the shape). */
static gint64
weights_run (const char *network, void (*fill) (NlModel *m))
{
  g_autoptr (GError) error = NULL;
  g_autoptr (NlNetwork) net = nl_network_load_data (network, -1, &error);
  g_autoptr (NlModel) model = NULL;
  g_autoptr (GBytes) blob = NULL;
  g_autofree char *hp = NULL;
  NlTrainPosition pos = { .optimizer = (char *) "sgd" };
  NlOptimConfig sgd;
  NlRunConfig rc;
  NlShape shape = NL_SHAPE_ABSENT;
  gint64 run;

  g_assert_no_error (error);
  for (int i = 0; i < nl_network_n_nodes (net); i++)
    if (!strcmp (nl_network_node (net, i)->def->name, "Input"))
      shape = nl_shape_make (nl_network_node (net, i)->params[0].n, nl_network_node (net, i)->params[0].v);
  nl_optim_config_init (&sgd, NL_OPTIM_SGD);
  model = nl_model_new_full (net, &shape, &(NlModelOptions) { .optim = &sgd }, &error);
  g_assert_no_error (error);
  fill (model);
  nl_run_config_init (&rc);
  nl_run_config_set_text (&rc.dataset, "mnist:/nonexistent/netloom-explain");
  hp = nl_run_config_to_json (&rc);
  nl_run_config_clear (&rc);
  NlRunInfo info = { .name = (char *) "made", .network_name = (char *) "made", .network_json = (char *) network,
                     .hparams_json = hp, .device = (char *) "cpu", .status = (char *) "finished" };
  run = nl_project_create_run (project, &info, &error);
  g_assert_no_error (error);
  blob = nl_checkpoint_save (model, &pos, &error);
  g_assert_no_error (error);
  g_assert_cmpint (nl_project_add_checkpoint (project, run, 0, 0, g_bytes_get_data (blob, NULL),
                                              g_bytes_get_size (blob), NULL, NAN, TRUE, 0, &error), >, 0);
  return run;
}

static NlTensor *
weight (NlModel *m, const char *node, int k)
{
  int i = nl_network_find (m->net, node);
  g_assert_cmpint (i, >=, 0);
  return m->weights[NL_MODEL_SLOT (i, k)];
}

/* ---- left half ---- */

#define HALF_SIDE 32
static const char *half_json =
  "{\"format\":\"netloom.network\",\"version\":1,\"name\":\"half\",\"nodes\":["
  "{\"id\":\"data\",\"op\":\"Input\",\"params\":{\"shape\":[1,32,32]}},"
  "{\"id\":\"conv\",\"op\":\"Conv2D\",\"params\":{\"channels\":4,\"kernel\":[3,3],\"padding\":[1,1]}},"
  "{\"id\":\"relu\",\"op\":\"Activation\"},{\"id\":\"flat\",\"op\":\"Flatten\"},"
  "{\"id\":\"fc\",\"op\":\"Dense\",\"params\":{\"units\":2}}],"
  "\"edges\":[\"data -> conv\",\"conv -> relu\",\"relu -> flat\",\"flat -> fc\"]}";

/* Positive convolutions; class 0 reads only conv columns < 15, whose 3x3
 * windows reach input columns < 16: the left half. Class 1 reads nothing. */
static void
fill_half (NlModel *m)
{
  NlTensor *w = weight (m, "fc", 0), *b = weight (m, "fc", 1);
  float *fw = nl_tensor_f32 (w);
  nl_test_fill_uniform (weight (m, "conv", 0), 0.0f, 1.0f, 11);
  nl_test_fill_uniform (weight (m, "conv", 1), 0.0f, 0.1f, 12);
  nl_test_fill_uniform (w, 0.0f, 1e-3f, 13);
  memset (nl_tensor_f32 (b), 0, sizeof (float) * 2);
  for (int64_t k = 0; k < 4 * HALF_SIDE * HALF_SIDE; k++)
    {
      if (k % HALF_SIDE >= 15)
        fw[k] = 0;
      fw[4 * HALF_SIDE * HALF_SIDE + k] = 0;
    }
}

static double
left_share (const NlExplanation *x)
{
  double left = 0, all = 0;
  for (int y = 0; y < x->height; y++)
    for (int i = 0; i < x->width; i++)
      {
        all += x->map[y * x->width + i];
        left += i < x->width / 2 ? x->map[y * x->width + i] : 0;
      }
  g_assert_cmpfloat (all, >, 0);
  return left / all;
}

static void
test_left_half (void)
{
  g_autoptr (GError) error = NULL;
  gint64 run = weights_run (half_json, fill_half);
  g_autoptr (NlExplainer) e = nl_explainer_new (project, run, NULL, &error);
  float sample[HALF_SIDE * HALF_SIDE];
  NlExplanation x;
  NlExplainOptions o = { .method = NL_EXPLAIN_SALIENCY, .target_class = 0 };

  g_assert_no_error (error);
  for (int k = 0; k < HALF_SIDE * HALF_SIDE; k++)
    sample[k] = 0.2f + 0.8f * (float) ((k * 7919) % 1000) / 1000.0f;

  g_assert_true (nl_explainer_explain (e, sample, &o, &x, &error));
  g_assert_no_error (error);
  g_assert_cmpint (x.height, ==, HALF_SIDE);
  g_assert_cmpint (x.width, ==, HALF_SIDE);
  g_assert_cmpint (x.target, ==, 0);
  g_assert_cmpfloat (left_share (&x), >=, 0.95);
  nl_explanation_clear (&x);

  /* windows aligned with the halves: the right ones change nothing */
  o = (NlExplainOptions) { .method = NL_EXPLAIN_OCCLUSION, .target_class = 0, .window = 4, .stride = 4 };
  g_assert_true (nl_explainer_explain (e, sample, &o, &x, &error));
  g_assert_no_error (error);
  g_assert_cmpfloat (left_share (&x), >=, 0.95);
  nl_explanation_clear (&x);
  /* the defaults (8 px windows every 4): a window across the middle blurs the edge */
  o.window = o.stride = 0;
  g_assert_true (nl_explainer_explain (e, sample, &o, &x, &error));
  g_test_message ("occlusion with the default window: %.3f of the mass in the left half", left_share (&x));
  g_assert_cmpfloat (left_share (&x), >=, 0.75);
  for (int k = 0; k < x.height * x.width; k++)
    g_assert_true (x.map[k] >= 0 && x.map[k] <= 1);
  nl_explanation_clear (&x);
}

/* ---- sequences ---- */

static const char *seq_json =
  "{\"format\":\"netloom.network\",\"version\":1,\"name\":\"seq\",\"nodes\":["
  "{\"id\":\"data\",\"op\":\"Input\",\"params\":{\"shape\":[6]}},"
  "{\"id\":\"emb\",\"op\":\"Embedding\",\"params\":{\"input_dim\":10,\"output_dim\":4}},"
  "{\"id\":\"flat\",\"op\":\"Flatten\"},{\"id\":\"fc\",\"op\":\"Dense\",\"params\":{\"units\":3}}],"
  "\"edges\":[\"data -> emb\",\"emb -> flat\",\"flat -> fc\"]}";

/* Tokens 3..5 are not read. */
static void
fill_seq (NlModel *m)
{
  float *fw = nl_tensor_f32 (weight (m, "fc", 0));
  nl_test_fill_uniform (weight (m, "emb", 0), -1.0f, 1.0f, 21);
  nl_test_fill_uniform (weight (m, "fc", 0), -1.0f, 1.0f, 22);
  for (int c = 0; c < 3; c++)
    for (int k = 12; k < 24; k++)
      fw[c * 24 + k] = 0;
}

static void
test_sequence (void)
{
  g_autoptr (GError) error = NULL;
  gint64 run = weights_run (seq_json, fill_seq);
  g_autoptr (NlExplainer) e = nl_explainer_new (project, run, NULL, &error);
  float tokens[6] = { 1, 4, 9, 2, 2, 7 };
  NlExplainOptions o = { .method = NL_EXPLAIN_SALIENCY, .target_class = 1 };
  NlExplanation x;
  g_assert_no_error (error);
  g_assert_true (nl_explainer_explain (e, tokens, &o, &x, &error));
  g_assert_no_error (error);
  g_assert_cmpint (x.height, ==, 1);
  g_assert_cmpint (x.width, ==, 6);
  for (int t = 0; t < 3; t++)
    g_assert_cmpfloat (x.map[t], >, 0);
  for (int t = 3; t < 6; t++)
    g_assert_cmpfloat (x.map[t], ==, 0);
  nl_explanation_clear (&x);
  /* images only */
  o.method = NL_EXPLAIN_OCCLUSION;
  g_assert_false (nl_explainer_explain (e, tokens, &o, &x, &error));
  g_assert_nonnull (strstr (error->message, "occlusion needs an image input"));
  g_assert_null (x.map);
  g_clear_error (&error);
  o.method = NL_EXPLAIN_GRADCAM;
  g_assert_false (nl_explainer_explain (e, tokens, &o, &x, &error));
  g_assert_nonnull (strstr (error->message, "no Conv2D"));
}

/* ---- LeNet against PyTorch ---- */

/* Runs python3 (Debian's, where torch is) on tests/NAME with args; its stdout parsed as JSON. */
static JsonNode *
python_json (const char *name, const char *const *args)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *script = nl_test_source_path (name), *out = NULL, *err = NULL;
  g_autoptr (GPtrArray) argv = g_ptr_array_new ();
  int status;
  g_ptr_array_add (argv, (char *) "/usr/bin/python3");
  g_ptr_array_add (argv, script);
  for (; *args; args++)
    g_ptr_array_add (argv, (char *) *args);
  g_ptr_array_add (argv, NULL);
  g_assert_true (g_spawn_sync (NULL, (char **) argv->pdata, NULL, 0, NULL, NULL, &out, &err, &status, &error));
  if (!g_spawn_check_wait_status (status, NULL))
    g_error ("%s failed: %s", name, err);
  JsonNode *root = json_from_string (out, &error);
  g_assert_no_error (error);
  return root;
}

static void
assert_array_close (JsonArray *a, const float *x, int n, double tol, const char *what)
{
  g_assert_cmpint (json_array_get_length (a), ==, n);
  for (int i = 0; i < n; i++)
    if (fabs (json_array_get_double_element (a, i) - x[i]) > tol)
      g_error ("%s[%d]: netloom %.7f, reference %.7f", what, i, x[i], json_array_get_double_element (a, i));
}

/* Test sample i, normalised as the run's loader does. */
static void
test_sample (int64_t i, float *x, int *label)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *s = spec ();
  g_autoptr (NlDataset) ds = nl_dataset_open (s, FALSE, &error);
  float y;
  g_assert_no_error (error);
  g_assert_true (nl_dataset_get (ds, i, x, &y, &error));
  for (int k = 0; k < SIDE * SIDE; k++)
    x[k] = (x[k] - MEAN) / STD;
  if (label)
    *label = (int) y;
}

/* Saliency and Grad-CAM at LAYER (NULL: the default, which must be
 * DEFAULT_LAYER) of sample x against explain_ref.py's on the same weights. */
static void
check_against_torch (NlExplainer *e, const char *net_path, const char *weights, const char *shape, const float *x,
                     int target, const char *layer, const char *default_layer)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *sample_path = g_build_filename (work_dir, "sample.f32", NULL);
  g_autofree char *cls = NULL;
  g_autoptr (JsonNode) ref = NULL;
  NlShape s = nl_test_parse_shape (shape);
  int64_t numel = nl_shape_numel (&s), plane = s.d[1] * s.d[2];
  NlExplanation sal, cam;
  NlExplainOptions o = { .method = NL_EXPLAIN_SALIENCY, .target_class = target };

  g_assert_true (g_file_set_contents (sample_path, (const char *) x, sizeof (float) * numel, &error));
  g_assert_true (nl_explainer_explain (e, x, &o, &sal, &error));
  g_assert_no_error (error);
  o.method = NL_EXPLAIN_GRADCAM;
  o.layer = layer;
  g_assert_true (nl_explainer_explain (e, x, &o, &cam, &error));
  g_assert_no_error (error);
  g_assert_cmpint (cam.target, ==, sal.target);
  cls = g_strdup_printf ("%d", sal.target);
  ref = python_json ("tests/explain_ref.py", (const char *const[]) { net_path, weights, sample_path, shape, cls,
                                                                    layer ? layer : default_layer, NULL });
  {
    JsonObject *r = json_node_get_object (ref);
    JsonArray *logits = json_object_get_array_member (r, "logits");
    int C = sal.n_classes;
    double max = -INFINITY, sum = 0;
    g_autofree float *probs = g_new (float, C);
    g_assert_cmpint (json_array_get_length (logits), ==, C);
    for (int c = 0; c < C; c++)
      max = MAX (max, json_array_get_double_element (logits, c));
    for (int c = 0; c < C; c++)
      sum += exp (json_array_get_double_element (logits, c) - max);
    for (int c = 0; c < C; c++)
      probs[c] = (float) (exp (json_array_get_double_element (logits, c) - max) / sum);
    nl_test_assert_close (sal.scores, probs, C, 1e-5, 1e-4);
    assert_array_close (json_object_get_array_member (r, "saliency"), sal.map, plane, 1e-4, "saliency");
    assert_array_close (json_object_get_array_member (r, "gradcam"), cam.map, plane, 1e-4, "gradcam");
  }
  /* maps that are not all zeros, so the comparison says something */
  {
    float m = 0;
    for (int64_t k = 0; k < plane; k++)
      m = MAX (m, cam.map[k]);
    g_assert_cmpfloat (m, ==, 1.0f);
  }
  nl_explanation_clear (&sal);
  nl_explanation_clear (&cam);
}

static void
test_lenet_torch (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *weights = g_build_filename (work_dir, "lenet.safetensors", NULL);
  g_autofree char *net = nl_test_source_path ("data/networks/lenet.json");
  g_autoptr (NlExplainer) e = nl_explainer_new (project, lenet_run, "last", &error);
  g_assert_no_error (error);
  g_assert_true (nl_run_export_weights (project, lenet_run, "last", weights, NULL, NULL, &error));
  g_assert_no_error (error);
  /* the predicted class at the last conv; given classes at both convs */
  for (int i = 0; i < 3; i++)
    {
      float x[SIDE * SIDE];
      test_sample (i, x, NULL);
      check_against_torch (e, net, weights, "1x28x28", x, i == 0 ? -1 : 3 * i, i == 2 ? "conv1" : i ? "conv2" : NULL,
                           "conv2");
    }
}

/* Running statistics and affine factors away from the identity, so that
 * BatchNorm's inference-mode backward is tested. */
static void
fill_resnet (NlModel *m)
{
  for (int i = 0; i < nl_network_n_nodes (m->net); i++)
    if (!strcmp (nl_network_node (m->net, i)->def->name, "BatchNorm"))
      {
        nl_test_fill_uniform (m->weights[NL_MODEL_SLOT (i, 0)], 0.5f, 1.5f, 100 + i);
        nl_test_fill_uniform (m->weights[NL_MODEL_SLOT (i, 1)], -0.2f, 0.2f, 200 + i);
        nl_test_fill_uniform (m->aux[NL_MODEL_SLOT (i, 0)], -0.3f, 0.3f, 300 + i);
        nl_test_fill_uniform (m->aux[NL_MODEL_SLOT (i, 1)], 0.5f, 2.0f, 400 + i);
      }
}

/* resnet-small (BatchNorm, residual Adds, global pooling) with set weights. */
static void
test_resnet_torch (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (NlNetwork) template = nl_test_load_template ("resnet-small");
  g_autofree char *json = NULL, *weights = g_build_filename (work_dir, "resnet.safetensors", NULL);
  g_autofree char *net = g_build_filename (work_dir, "resnet.json", NULL);
  g_autoptr (NlExplainer) e = NULL;
  float x[3 * 32 * 32];
  gint64 run;

  g_assert_true (nl_network_set_param (template, nl_network_find (template, "data"), "shape", "[3,32,32]", &error));
  json = nl_network_to_json (template);
  g_assert_true (g_file_set_contents (net, json, -1, &error));
  run = weights_run (json, fill_resnet);
  e = nl_explainer_new (project, run, NULL, &error);
  g_assert_no_error (error);
  g_assert_true (nl_run_export_weights (project, run, NULL, weights, NULL, NULL, &error));
  g_assert_no_error (error);
  for (int k = 0; k < 3 * 32 * 32; k++)
    x[k] = (float) ((k * 2654435761u) % 2000) / 1000.0f - 1.0f;
  /* the last convolution: the last block's main branch, not its shortcut */
  g_assert_cmpstr (nl_explainer_default_layer (e), ==, "block3_conv2");
  check_against_torch (e, net, weights, "3x32x32", x, -1, NULL, nl_explainer_default_layer (e));
  check_against_torch (e, net, weights, "3x32x32", x, 6, "block2_conv1", NULL);
}

/* ---- activations and PCA ---- */

static void
test_activations (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (NlExplainer) e = nl_explainer_new (project, lenet_run, "last", &error);
  g_autofree float *conv = NULL, *fc = NULL, *data = NULL;
  float x[SIDE * SIDE];
  NlExplanation ex;
  int c, h, w;

  g_assert_no_error (error);
  test_sample (3, x, NULL);
  conv = nl_explainer_activations (e, x, "conv1", &c, &h, &w, &error);
  g_assert_no_error (error);
  g_assert_cmpint (c, ==, 20);
  g_assert_cmpint (h, ==, 24);
  g_assert_cmpint (w, ==, 24);
  data = nl_explainer_activations (e, x, "data", &c, &h, &w, &error);
  g_assert_cmpint (c * h * w, ==, SIDE * SIDE);
  nl_test_assert_close (data, x, SIDE * SIDE, 0, 0);
  /* the output layer: its softmax is the explanation's scores */
  fc = nl_explainer_activations (e, x, "fc2", &c, &h, &w, &error);
  g_assert_cmpint (c, ==, 1);
  g_assert_cmpint (h, ==, 1);
  g_assert_cmpint (w, ==, 10);
  g_assert_true (nl_explainer_explain (e, x, &(NlExplainOptions) { .method = NL_EXPLAIN_SALIENCY, .target_class = -1 },
                                       &ex, &error));
  {
    double max = -INFINITY, sum = 0;
    float probs[10];
    for (int k = 0; k < 10; k++)
      max = MAX (max, fc[k]);
    for (int k = 0; k < 10; k++)
      sum += exp (fc[k] - max);
    for (int k = 0; k < 10; k++)
      probs[k] = (float) (exp (fc[k] - max) / sum);
    nl_test_assert_close (ex.scores, probs, 10, 1e-6, 1e-5);
  }
  nl_explanation_clear (&ex);
}

static const char *pca_check =
  "import sys, json, numpy as np\n"
  "n, f = int(sys.argv[2]), int(sys.argv[3])\n"
  "x = np.fromfile(sys.argv[1], dtype='<f4').astype(np.float64)\n"
  "xy = x[n * f:].reshape(n, 2); x = x[:n * f].reshape(n, f)\n"
  "u, s, vt = np.linalg.svd(x - x.mean(axis=0), full_matrices=False)\n"
  "ref = u[:, :2] * s[:2]\n"
  "worst = 0\n"
  "for c in range(2):\n"
  "    d = min(np.abs(xy[:, c] - ref[:, c]).max(), np.abs(xy[:, c] + ref[:, c]).max())\n"
  "    worst = max(worst, d / np.abs(ref[:, c]).max())\n"
  "print(json.dumps({'worst': worst, 's': s[:3].tolist()}))\n";

/* xy (n x 2) against numpy's SVD of x (n x f, appended to `all`). */
static void
check_pca_numpy (GByteArray *all, const float *xy, int n, int f, const char *what)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *path = g_build_filename (work_dir, "acts.f32", NULL), *out = NULL;
  g_autofree char *ns = g_strdup_printf ("%d", n), *fs = g_strdup_printf ("%d", f);
  g_autoptr (JsonNode) ref = NULL;
  int status;
  g_byte_array_append (all, (const guint8 *) xy, sizeof (float) * 2 * n);
  g_assert_true (g_file_set_contents (path, (const char *) all->data, all->len, &error));
  g_assert_true (g_spawn_sync (NULL, (char *[]) { (char *) "/usr/bin/python3", (char *) "-c", (char *) pca_check, path,
                                                  ns, fs, NULL },
                               NULL, 0, NULL, NULL, &out, NULL, &status, &error));
  g_assert_true (g_spawn_check_wait_status (status, NULL));
  ref = json_from_string (out, &error);
  g_assert_no_error (error);
  g_test_message ("PCA of %s (%d samples x %d features): %s", what, n, f, out);
  g_assert_cmpfloat (json_object_get_double_member (json_node_get_object (ref), "worst"), <, 1e-3);
}

/* The projection of LAYER over the first n test samples against numpy's
 * SVD of the activations nl_explainer_activations gives, sample by sample. */
static void
check_projection (NlExplainer *e, const char *layer, int n)
{
  g_autoptr (GError) error = NULL;
  g_autofree float *xy = NULL;
  g_autofree int *labels = NULL;
  g_autoptr (GByteArray) all = g_byte_array_new ();
  int f = 0;

  g_assert_true (nl_explainer_project (e, layer, n, &xy, &labels, &error));
  g_assert_no_error (error);
  for (int i = 0; i < n; i++)
    {
      float x[SIDE * SIDE];
      int c, h, w, label;
      g_autofree float *a = NULL;
      test_sample (i, x, &label);
      g_assert_cmpint (labels[i], ==, label);
      if (i < 3)
        {
          int l2;
          g_autofree float *mine = nl_explainer_test_sample (e, i, TRUE, &l2, &error);
          g_assert_no_error (error);
          g_assert_cmpint (l2, ==, label);
          nl_test_assert_close (mine, x, SIDE * SIDE, 1e-6, 0);
        }
      a = nl_explainer_activations (e, x, layer, &c, &h, &w, &error);
      g_assert_no_error (error);
      f = c * h * w;
      g_byte_array_append (all, (const guint8 *) a, sizeof (float) * f);
    }
  check_pca_numpy (all, xy, n, f, layer);
}

static void
test_projection (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (NlExplainer) e = nl_explainer_new (project, lenet_run, "last", &error);
  g_assert_no_error (error);
  check_projection (e, "fc1", 100);   /* 500 features: more than samples */
  check_projection (e, "fc2", 150);   /* 10 features */
  check_projection (e, "pool2", 70);  /* 800 features, a batch and a part */
  /* t-SNE (its numbers: test-tsne): the same samples, in order, placed */
  {
    g_autofree float *xy = NULL;
    g_autofree int *labels = NULL;
    g_assert_true (nl_explainer_project_tsne (e, "fc1", 60, 10, &xy, &labels, &error));
    g_assert_no_error (error);
    for (int i = 0; i < 60; i++)
      {
        int label;
        float x[SIDE * SIDE];
        test_sample (i, x, &label);
        g_assert_cmpint (labels[i], ==, label);
        g_assert_true (isfinite (xy[2 * i]) && isfinite (xy[2 * i + 1]));
      }
  }
}

/* A flat spectrum (uniform noise: the top singular values close together),
 * the hard case for an iterative method, both ways round. */
static void
test_pca_flat (void)
{
  for (int way = 0; way < 2; way++)
    {
      int n = way ? 600 : 250, f = way ? 120 : 900;
      g_autoptr (GByteArray) all = g_byte_array_new ();
      g_autofree float *x = g_new (float, (gsize) n * f), *xy = g_new (float, 2 * n);
      g_autoptr (GRand) rng = g_rand_new_with_seed (77 + way);
      for (gsize i = 0; i < (gsize) n * f; i++)
        x[i] = (float) g_rand_double_range (rng, -1, 1);
      nl_pca_project (x, n, f, 2, xy);
      g_byte_array_append (all, (const guint8 *) x, sizeof (float) * n * f);
      check_pca_numpy (all, xy, n, f, "uniform noise");
    }
}

/* ---- the CLI ---- */

static char *
sample_png (int64_t i)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *s = spec ();
  g_autoptr (NlDataset) ds = nl_dataset_open (s, FALSE, &error);
  g_autofree char *name = g_strdup_printf ("sample-%" G_GINT64_FORMAT ".png", i);
  char *path = g_build_filename (work_dir, name, NULL);
  float x[SIDE * SIDE], label;
  guint8 gray[SIDE * SIDE];
  png_image img = { .version = PNG_IMAGE_VERSION, .width = SIDE, .height = SIDE, .format = PNG_FORMAT_GRAY };
  g_assert_true (nl_dataset_get (ds, i, x, &label, &error));
  for (int k = 0; k < SIDE * SIDE; k++)
    gray[k] = (guint8) lrintf (x[k] * 255.0f);
  g_assert_true (png_image_write_to_file (&img, path, FALSE, gray, 0, NULL));
  return path;
}

/* netloom-cli with args; its exit status, stdout and stderr. */
static int
cli (const char *const *args, char **out, char **err)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *exe = g_build_filename (g_getenv ("NETLOOM_BUILD_DIR"), "app", "netloom-cli", NULL);
  g_autoptr (GPtrArray) argv = g_ptr_array_new ();
  int status;
  g_ptr_array_add (argv, exe);
  for (; *args; args++)
    g_ptr_array_add (argv, (char *) *args);
  g_ptr_array_add (argv, NULL);
  g_assert_true (g_spawn_sync (NULL, (char **) argv->pdata, NULL, 0, NULL, NULL, out, err, &status, &error));
  return g_spawn_check_wait_status (status, NULL) ? 0 : WEXITSTATUS (status);
}

static void
cli_fails (const char *const *args, int code, const char *a, const char *b)
{
  g_autofree char *out = NULL, *err = NULL;
  g_assert_cmpint (cli (args, &out, &err), ==, code);
  /* one message, naming the thing */
  g_assert_cmpint (strlen (err) > 0 && strchr (err, '\n') == err + strlen (err) - 1, ==, TRUE);
  if (!strstr (err, a) || (b && !strstr (err, b)))
    g_error ("netloom-cli said “%s”, which should mention “%s”%s%s", err, a, b ? " and " : "", b ? b : "");
}

static void
test_cli (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *png = sample_png (5), *heat = g_build_filename (work_dir, "heat.png", NULL);
  g_autofree char *out = NULL, *err = NULL, *run = g_strdup_printf ("%" G_GINT64_FORMAT, lenet_run);
  g_autofree char *proj = g_build_filename (work_dir, "p.netloom", NULL);
  g_autofree char *nowhere = g_build_filename (work_dir, "nowhere.png", NULL);
  g_autoptr (NlExplainer) e = nl_explainer_new (project, lenet_run, "last", &error);
  g_autoptr (JsonNode) root = NULL;
  g_autofree float *sample = NULL;
  png_image img = { .version = PNG_IMAGE_VERSION };
  JsonObject *o;
  JsonArray *map;
  NlExplanation x;

  g_assert_no_error (error);
  if (!g_file_test (g_getenv ("NETLOOM_BUILD_DIR") ? g_getenv ("NETLOOM_BUILD_DIR") : "/nonexistent",
                    G_FILE_TEST_IS_DIR))
    {
      g_test_skip ("NETLOOM_BUILD_DIR is not set: no netloom-cli to run");
      return;
    }
  g_assert_cmpint (cli ((const char *const[]) { "explain", "--project", proj, "--run", run, "--checkpoint", "last",
                                                "--method", "gradcam", "--input", png, "--out", heat, "--json", NULL },
                        &out, &err), ==, 0);
  root = json_from_string (out, &error);
  g_assert_no_error (error);
  o = json_node_get_object (root);
  g_assert_cmpint (json_object_get_int_member (o, "height"), ==, SIDE);
  g_assert_cmpstr (json_object_get_string_member (o, "layer"), ==, "conv2");
  g_assert_cmpint (json_object_get_int_member (o, "out_width"), ==, 224);
  /* the PNG: the size it says */
  g_assert_true (png_image_begin_read_from_file (&img, heat));
  g_assert_cmpint (img.width, ==, 224);
  g_assert_cmpint (img.height, ==, 224);
  png_image_free (&img);
  /* its map: the engine's on the same file */
  g_assert_true (nl_explainer_read_image (e, png, &sample, NULL, &error));
  g_assert_true (nl_explainer_explain (e, sample, &(NlExplainOptions) { .method = NL_EXPLAIN_GRADCAM, .target_class = -1 },
                                       &x, &error));
  g_assert_no_error (error);
  g_assert_cmpint (json_object_get_int_member (o, "predicted"), ==, x.predicted);
  map = json_object_get_array_member (o, "map");
  g_assert_cmpint (json_array_get_length (map), ==, SIDE);
  for (int y = 0; y < SIDE; y++)
    assert_array_close (json_array_get_array_element (map, y), x.map + y * SIDE, SIDE, 1e-6, "--json map");
  assert_array_close (json_object_get_array_member (o, "scores"), x.scores, 10, 1e-6, "--json scores");
  nl_explanation_clear (&x);
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);
  /* the text form, each method */
  for (int m = 0; m < NL_EXPLAIN_METHOD_COUNT; m++)
    {
      g_assert_cmpint (cli ((const char *const[]) { "explain", "-p", proj, "-r", run, "-m", nl_explain_method_name (m),
                                                    "-i", png, "-o", heat, NULL },
                            &out, &err), ==, 0);
      g_assert_nonnull (strstr (out, "(224x224)"));
      g_clear_pointer (&out, g_free);
      g_clear_pointer (&err, g_free);
    }

  /* bad inputs: one message each, and no file written */
  g_unlink (heat);
  cli_fails ((const char *const[]) { "explain", "-p", proj, "-r", run, "-m", "gradcam", "--layer", "nope", "-i", png,
                                     "-o", heat, NULL }, 1, "no node 'nope'", NULL);
  cli_fails ((const char *const[]) { "explain", "-p", proj, "-r", run, "-m", "gradcam", "--layer", "fc1", "-i", png,
                                     "-o", heat, NULL }, 1, "'fc1'", "spatial");
  cli_fails ((const char *const[]) { "explain", "-p", proj, "-r", run, "-m", "saliency", "--class", "12", "-i", png,
                                     "-o", heat, NULL }, 1, "class 12", "10 classes");
  cli_fails ((const char *const[]) { "explain", "-p", proj, "-r", run, "-m", "occlusion", "--window", "40", "-i", png,
                                     "-o", heat, NULL }, 1, "window 40", "28x28");
  cli_fails ((const char *const[]) { "explain", "-p", proj, "-r", run, "-m", "saliency", "-i", nowhere, "-o", heat,
                                     NULL }, 1, nowhere, "no such file");
  cli_fails ((const char *const[]) { "explain", "-p", proj, "-r", run, "-m", "magic", "-i", png, "-o", heat, NULL }, 2,
             "magic", NULL);
  cli_fails ((const char *const[]) { "explain", "-p", proj, "-r", "999", "-m", "saliency", "-i", png, "-o", heat, NULL },
             1, "999", NULL);
  /* an image for a model of token sequences */
  {
    g_autofree char *seq = g_strdup_printf ("%" G_GINT64_FORMAT, weights_run (seq_json, fill_seq));
    cli_fails ((const char *const[]) { "explain", "-p", proj, "-r", seq, "-m", "saliency", "-i", png, "-o", heat,
                                       NULL }, 1, "(6)", "not images");
  }
  g_assert_false (g_file_test (heat, G_FILE_TEST_EXISTS));
}

/* ---- errors through the API ---- */

static void
test_errors (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (NlExplainer) e = nl_explainer_new (project, lenet_run, "last", &error);
  float x[SIDE * SIDE];
  NlExplanation ex = { 0 };
  NlExplainMethod m;
  float *xy = NULL;
  int *labels = NULL, c, h, w;

  g_assert_no_error (error);
  test_sample (0, x, NULL);
  g_assert_null (nl_explainer_new (project, 999, NULL, &error));
  g_assert_nonnull (strstr (error->message, "no run 999"));
  g_clear_error (&error);
  g_assert_null (nl_explainer_new (project, lenet_run, "77", &error));
  g_assert_nonnull (strstr (error->message, "epoch 77"));
  g_clear_error (&error);
  g_assert_false (nl_explainer_explain (e, x, &(NlExplainOptions) { .method = NL_EXPLAIN_GRADCAM, .layer = "relu3" },
                                        &ex, &error));
  g_assert_nonnull (strstr (error->message, "'relu3'"));
  g_assert_nonnull (strstr (error->message, "spatial"));
  g_assert_null (ex.map);
  g_assert_null (ex.scores);
  g_clear_error (&error);
  g_assert_false (nl_explainer_explain (e, x, &(NlExplainOptions) { .method = NL_EXPLAIN_SALIENCY, .target_class = 10 },
                                        &ex, &error));
  g_assert_nonnull (strstr (error->message, "class 10"));
  g_clear_error (&error);
  g_assert_null (nl_explainer_activations (e, x, "conv9", &c, &h, &w, &error));
  g_assert_nonnull (strstr (error->message, "no node 'conv9'"));
  g_clear_error (&error);
  g_assert_false (nl_explainer_project (e, "conv9", 10, &xy, &labels, &error));
  g_assert_nonnull (strstr (error->message, "no node 'conv9'"));
  g_clear_error (&error);
  g_assert_true (nl_explain_method_parse ("occlusion", &m));
  g_assert_cmpint (m, ==, NL_EXPLAIN_OCCLUSION);
  g_assert_false (nl_explain_method_parse ("lime", &m));
  /* a run whose dataset is not here: explaining works, projecting says why not */
  {
    gint64 run = weights_run (half_json, fill_half);
    g_autoptr (NlExplainer) half = nl_explainer_new (project, run, NULL, &error);
    g_assert_no_error (error);
    g_assert_false (nl_explainer_project (half, "fc", 10, &xy, &labels, &error));
    g_assert_nonnull (strstr (error->message, "not available on this machine"));
    g_clear_error (&error);
    g_assert_null (nl_explainer_test_sample (half, 0, TRUE, NULL, &error));
    g_assert_nonnull (strstr (error->message, "not available on this machine"));
  }
  g_clear_error (&error);
  g_assert_null (nl_explainer_test_sample (e, N_TEST, FALSE, NULL, &error));
  g_assert_nonnull (strstr (error->message, "sample 200 is not in"));
}

int
main (int argc, char **argv)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (NlNetwork) net = NULL;
  g_autofree char *s = NULL, *path = NULL;
  g_auto (NlRunConfig) cfg = { 0 };
  int status;

  g_test_init (&argc, &argv, NULL);
  data_dir = g_dir_make_tmp ("netloom-explain-data-XXXXXX", NULL);
  work_dir = g_dir_make_tmp ("netloom-explain-XXXXXX", NULL);
  nl_test_write_idx_dataset_sized (data_dir, SIDE, N_TRAIN, N_TEST);
  path = g_build_filename (work_dir, "p.netloom", NULL);
  project = nl_project_open (path, TRUE, &error);
  g_assert_no_error (error);
  /* a LeNet trained for 189 steps */
  s = spec ();
  net = nl_test_load_template ("lenet");
  nl_test_tiny_train_config (&cfg, s);
  cfg.mean = MEAN;
  cfg.std = STD;
  cfg.optim.lr = 0.02f;
  g_assert_true (nl_run_train (project, "lenet", net, &cfg, NULL, &lenet_run, &error));
  g_assert_no_error (error);

  g_test_add_func ("/explain/left-half", test_left_half);
  g_test_add_func ("/explain/sequence", test_sequence);
  g_test_add_func ("/explain/lenet-torch", test_lenet_torch);
  g_test_add_func ("/explain/resnet-torch", test_resnet_torch);
  g_test_add_func ("/explain/activations", test_activations);
  g_test_add_func ("/explain/projection", test_projection);
  g_test_add_func ("/explain/pca-flat", test_pca_flat);
  g_test_add_func ("/explain/cli", test_cli);
  g_test_add_func ("/explain/errors", test_errors);
  status = g_test_run ();

  nl_project_close (project);
  nl_test_remove_tree (work_dir);
  nl_test_remove_tree (data_dir);
  g_free (work_dir);
  g_free (data_dir);
  return status;
}
