/* test-onnx-acts.c — the activations and pooling forms of the ONNX
 * importer and exporter (engine/formats/onnx/nl-onnx-import-acts.c,
 * nl-onnx-export-acts.c):
 *  - every torch.nn activation with an ONNX form and every 2-D pooling form
 *    PyTorch 1.13's exporter writes (tests/torch_onnx_acts.py: a Pad
 *    before AveragePool, ceil_mode, count_include_pad, adaptive pooling)
 *    imports as the one netloom node it stands for and gives PyTorch's
 *    outputs within 1e-5; the form netloom lacks (ELU's alpha 0.5)
 *    are refused with one message naming the node and why; a Hardtanh
 *    of [-2, 3] and a one-sided clamp import as Clip, PReLU with a slope
 *    per channel (of a Linear's output and of images) as PReLU, Softshrink
 *    and Hardshrink (Greater, Less, Where chains) as Shrink;
 *  - a network of every act_type after softrelu, a Clip, two PReLUs and a Shrink
 *    (over images and over a Dense's output) exports (opsets 13 and
 *    17) and imports back to the same act_types and outputs, and
 *    onnxruntime-node (tests/onnx_run.js) runs the export to netloom's
 *    probabilities within 1e-5. */
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#include "engine/formats/onnx/nl-onnx-export.h"
#include "engine/formats/onnx/nl-onnx-import.h"
#include "engine/graph/nl-program.h"
#include "ops/nl-op-registry.h"
#include "tests/nl-test-util.h"

#define BATCH 4

static float *
read_floats (const char *dir, const char *name, const char *ext, gsize *n)
{
  g_autofree char *base = g_strconcat (name, ext, NULL), *path = g_build_filename (dir, base, NULL);
  char *data = NULL;
  gsize size;
  g_assert_true (g_file_get_contents (path, &data, &size, NULL));
  *n = size / sizeof (float);
  return (float *) data;
}

/* The ops of m's network, one string: "Input Dense Activation:silu Dense" */
static char *
ops_of (const NlNetwork *net)
{
  GString *s = g_string_new (NULL);
  for (int i = 0; i < nl_network_n_nodes (net); i++)
    {
      const NlNode *n = nl_network_node (net, i);
      int k = nl_op_param_index (n->def, "act_type");
      g_string_append_printf (s, "%s%s", i ? " " : "", n->def->name);
      if (k >= 0)
        g_string_append_printf (s, ":%s", n->def->params[k].enum_values[n->params[k].i]);
    }
  return g_string_free (s, FALSE);
}

/* Model `name` of dir imports, as `want` (its ops, NULL: any), and gives
 * the outputs PyTorch gave. */
static void
check_imports (const char *dir, const char *name, const char *want)
{
  g_autofree char *base = g_strconcat (name, ".onnx", NULL), *path = g_build_filename (dir, base, NULL);
  g_autofree char *data = NULL, *ops = NULL;
  g_autofree float *x = NULL, *y = NULL;
  g_autoptr (GError) error = NULL;
  g_autoptr (NlOnnxImport) imp = NULL;
  g_autoptr (NlModel) m = NULL;
  g_autoptr (NlProgram) prog = NULL;
  NlCompileOptions opts = { .batch = BATCH };
  gsize size, nx, ny;
  double worst = 0;

  g_assert_true (g_file_get_contents (path, &data, &size, NULL));
  imp = nl_onnx_import_data (data, size, dir, NULL, &error);
  if (!imp)
    g_error ("%s: %s", name, error->message);
  m = nl_onnx_import_new_model (imp, NULL, &error);
  g_assert_no_error (error);
  ops = ops_of (m->net);
  if (want && strcmp (ops, want) != 0)
    g_error ("%s imports as %s, not %s", name, ops, want);
  prog = nl_program_new (m, &opts, &error);
  g_assert_no_error (error);
  x = read_floats (dir, name, ".in", &nx);
  y = read_floats (dir, name, ".out", &ny);
  g_assert_cmpint (nx, ==, nl_tensor_numel (nl_program_input (prog)));
  memcpy (nl_tensor_f32 (nl_program_input (prog)), x, nx * sizeof (float));
  g_assert_true (nl_program_forward (prog, 0, &error));
  g_assert_cmpint (ny, ==, nl_tensor_numel (nl_program_pred (prog)));
  for (gsize k = 0; k < ny; k++)
    worst = MAX (worst, fabs (nl_tensor_f32 (nl_program_pred (prog))[k] - y[k]) / MAX (1.0, fabs (y[k])));
  g_test_message ("%s: %s, worst difference from PyTorch %.3g", name, ops, worst);
  if (!(worst <= 1e-5))
    g_error ("%s (%s) differs from PyTorch by %g", name, ops, worst);
}

/* Model `name` is refused: one message naming the nodes, `why` in it. */
static void
check_refused (const char *dir, const char *name, const char *why)
{
  g_autofree char *base = g_strconcat (name, ".onnx", NULL), *path = g_build_filename (dir, base, NULL);
  g_autofree char *data = NULL;
  g_autoptr (GError) error = NULL;
  g_autoptr (NlOnnxImport) imp = NULL;
  gsize size;

  g_assert_true (g_file_get_contents (path, &data, &size, NULL));
  imp = nl_onnx_import_data (data, size, dir, NULL, &error);
  g_assert_null (imp);
  g_assert_error (error, NL_ONNX_ERROR, NL_ONNX_ERROR_UNSUPPORTED);
  g_test_message ("%s refused: %s", name, error->message);
  if (!strstr (error->message, "cannot be imported:") || !strstr (error->message, why) || !strstr (error->message, "“"))
    g_error ("%s: refused as “%s”, which should name the node and hold “%s”", name, error->message, why);
}

/* What a PyTorch model must import as (by its name in torch_onnx_acts.py) */
static char *
expected_ops (const char *name)
{
  static const char *const acts[][2] = {
    { "relu", "relu" }, { "sigmoid", "sigmoid" }, { "tanh", "tanh" }, { "elu", "elu" }, { "celu", "elu" },
    { "selu", "selu" }, { "softplus", "softrelu" }, { "softsign", "softsign" }, { "hardsigmoid", "hardsigmoid" },
    { "hardswish-13", "hardswish" }, { "hardswish-17", "hardswish" }, { "silu", "silu" }, { "silu-17", "silu" },
    { "mish", "mish" }, { "mish-17", "mish" }, { "hardtanh", "hardtanh" }, { "relu6", "relu6" },
    { "relu6-9", "relu6" }, { "logsigmoid", "logsigmoid" }, { "tanhshrink", "tanhshrink" },
  };
  for (gsize k = 0; k < G_N_ELEMENTS (acts); k++)
    if (!strcmp (name, acts[k][0]))
      return g_strdup_printf ("Input Dense Activation:%s Dense", acts[k][1]);
  if (!strcmp (name, "hardtanh-2-3") || !strcmp (name, "clamp-min"))
    return g_strdup ("Input Dense Clip Dense");
  if (!strcmp (name, "gelu"))
    return g_strdup ("Input Dense GELU Dense");
  if (!strcmp (name, "leakyrelu") || !strcmp (name, "prelu"))
    return g_strdup ("Input Dense LeakyReLU Dense");
  if (g_str_has_suffix (name, "shrink") || strstr (name, "shrink-"))
    return g_strdup (g_str_has_prefix (name, "tanh") ? "Input Dense Activation:tanhshrink Dense" : "Input Dense Shrink Dense");
  if (!strcmp (name, "prelu-channels"))
    return g_strdup ("Input Dense PReLU Dense");
  if (!strcmp (name, "prelu-4d"))
    return g_strdup ("Input PReLU");
  if (g_str_has_prefix (name, "avg") || g_str_has_prefix (name, "adaptive-avg-2"))
    return g_strdup ("Input AvgPool2D");
  if (g_str_has_prefix (name, "max") || g_str_has_prefix (name, "adaptive-max"))
    return g_strdup ("Input MaxPool2D");
  if (!strcmp (name, "adaptive-avg-1"))
    return g_strdup ("Input GlobalAvgPool2D");
  return NULL; /* softplus-beta2: Mul, softrelu, Mul */
}

static void
test_torch (void)
{
  g_autofree char *py = nl_test_find_python ("torch, onnx");
  g_autofree char *dir = g_dir_make_tmp ("onnx-acts-XXXXXX", NULL), *script = nl_test_source_path ("tests/torch_onnx_acts.py");
  g_autofree char *list = g_build_filename (dir, "models.txt", NULL), *text = NULL, *out = NULL, *err = NULL;
  g_auto (GStrv) lines = NULL;
  g_autoptr (GError) error = NULL;
  const char *argv[] = { py, script, dir, NULL };
  int status, n_ok = 0, n_refused = 0;

  if (!py)
    {
      g_test_skip ("no Python with torch and onnx (Debian python3-torch, python3-onnx)");
      nl_test_remove_tree (dir);
      return;
    }
  g_assert_true (g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, &out, &err, &status,
                               &error));
  if (!g_spawn_check_wait_status (status, NULL))
    g_error ("torch_onnx_acts.py failed:\n%s%s", out, err);
  g_assert_true (g_file_get_contents (list, &text, NULL, NULL));
  lines = g_strsplit (text, "\n", -1);
  for (int i = 0; lines[i]; i++)
    {
      g_auto (GStrv) f = g_strsplit (lines[i], " ", 3);
      if (!f[0] || !*f[0])
        continue;
      g_assert_nonnull (f[1]);
      if (!strcmp (f[1], "ok"))
        {
          g_autofree char *want = expected_ops (f[0]);
          check_imports (dir, f[0], want);
          n_ok++;
        }
      else
        {
          check_refused (dir, f[0], f[2]);
          n_refused++;
        }
    }
  g_test_message ("%d PyTorch models imported to PyTorch's outputs, %d refused as expected", n_ok, n_refused);
  g_assert_cmpint (n_ok, >=, 44);
  g_assert_cmpint (n_refused, >=, 1);
  nl_test_remove_tree (dir);
}

/* ---- export ---- */

/* the act_types after softrelu, each after a Dense that spreads its input
 * over about -6 .. 6 (weights set in act_model) */
static const char *const new_types[] = { "elu",       "selu",  "silu",     "mish",       "softsign",  "hardsigmoid",
                                         "hardswish", "relu6", "hardtanh", "logsigmoid", "tanhshrink" };

static NlModel *
act_model (void)
{
  g_autoptr (GString) json = g_string_new ("{\"format\":\"netloom.network\",\"version\":1,\"name\":\"acts\",\"nodes\":["
                                           "{\"id\":\"data\",\"op\":\"Input\"},{\"id\":\"prelu0\",\"op\":\"PReLU\"},"
                                           "{\"id\":\"flat\",\"op\":\"Flatten\"}");
  g_autoptr (GString) edges = g_string_new ("\"data -> prelu0\",\"prelu0 -> flat\"");
  g_autoptr (GError) error = NULL;
  g_autoptr (NlNetwork) net = NULL;
  NlShape s = nl_shape_of (3, (int64_t) 1, (int64_t) 28, (int64_t) 28);
  const char *prev = "flat";
  NlModel *m;
  GRand *r = g_rand_new_with_seed (17);

  for (gsize k = 0; k < G_N_ELEMENTS (new_types); k++)
    {
      g_string_append_printf (json, ",{\"id\":\"fc%zu\",\"op\":\"Dense\",\"params\":{\"units\":12}},"
                              "{\"id\":\"%s\",\"op\":\"Activation\",\"params\":{\"act_type\":\"%s\"}}", k, new_types[k],
                              new_types[k]);
      g_string_append_printf (edges, ",\"%s -> fc%zu\",\"fc%zu -> %s\"", prev, k, k, new_types[k]);
      prev = new_types[k];
    }
  /* and a Clip, one-sided */
  g_string_append (json, ",{\"id\":\"fcc\",\"op\":\"Dense\",\"params\":{\"units\":12}},"
                         "{\"id\":\"clip\",\"op\":\"Clip\",\"params\":{\"min\":-2,\"max\":1e18}}");
  g_string_append_printf (edges, ",\"%s -> fcc\",\"fcc -> clip\"", prev);
  g_string_append (json, ",{\"id\":\"fcp\",\"op\":\"Dense\",\"params\":{\"units\":12}},"
                         "{\"id\":\"prelu\",\"op\":\"PReLU\"}");
  g_string_append (edges, ",\"clip -> fcp\",\"fcp -> prelu\"");
  g_string_append (json, ",{\"id\":\"fcs\",\"op\":\"Dense\",\"params\":{\"units\":12}},"
                         "{\"id\":\"shrink\",\"op\":\"Shrink\",\"params\":{\"lambd\":1.5,\"bias\":0.5}}");
  g_string_append (edges, ",\"prelu -> fcs\",\"fcs -> shrink\"");
  g_string_append (json, ",{\"id\":\"out\",\"op\":\"Dense\",\"params\":{\"units\":10}}],\"edges\":[");
  g_string_append (edges, ",\"shrink -> out\"]}");
  g_string_append (json, edges->str);
  net = nl_network_load_data (json->str, -1, &error);
  g_assert_no_error (error);
  m = nl_model_new_full (net, &s, &(NlModelOptions) { .seed = 5 }, &error);
  g_assert_no_error (error);
  for (int i = 0; i < nl_network_n_nodes (m->net); i++)
    for (int k = 0; k < 2; k++)
      {
        NlTensor *t = m->weights[NL_MODEL_SLOT (i, k)];
        /* inputs in [0, 1] from 784 pixels, then 12 values of about -6 .. 6;
         * logits of about -2 .. 2, so that no probability saturates; the
         * image's one PReLU slope negative (one slope >= 0 imports as a
         * LeakyReLU) */
        const char *op = nl_network_node (m->net, i)->def->name;
        double a = k == 1 ? 1.0 : !strcmp (op, "PReLU") ? 1.0 : i == 3 ? 0.3
                   : i == nl_network_n_nodes (m->net) - 1 ? 0.1 : 1.2;
        for (int64_t j = 0; t && j < nl_tensor_numel (t); j++)
          nl_tensor_f32 (t)[j] = (float) g_rand_double_range (r, -a, a);
        if (i == 1 && k == 0)
          nl_tensor_f32 (t)[0] = -0.3f;
      }
  nl_model_host_changed (m);
  g_rand_free (r);
  return m;
}

/* netloom's outputs for n images of pixels (bytes / 255) */
static float *
forward (NlModel *m, const guint8 *pixels, int n)
{
  NlCompileOptions opts = { .batch = n };
  g_autoptr (GError) error = NULL;
  g_autoptr (NlProgram) p = nl_program_new (m, &opts, &error);
  float *x, *y;
  g_assert_no_error (error);
  x = nl_tensor_f32 (nl_program_input (p));
  for (int k = 0; k < n * 784; k++)
    x[k] = pixels[k] / 255.0f;
  g_assert_true (nl_program_forward (p, 0, &error));
  y = g_new (float, nl_tensor_numel (nl_program_pred (p)));
  memcpy (y, nl_tensor_f32 (nl_program_pred (p)), sizeof (float) * nl_tensor_numel (nl_program_pred (p)));
  return y;
}

static void
test_round_trip (void)
{
  g_autoptr (NlModel) m = act_model ();
  g_autofree guint8 *pixels = g_new (guint8, 8 * 784);
  g_autofree float *want = NULL;
  g_autofree char *ops = ops_of (m->net);

  for (int k = 0; k < 8 * 784; k++)
    pixels[k] = (guint8) ((k * 131 + k / 7) % 256);
  want = forward (m, pixels, 8);
  for (int opset = 13; opset <= 17; opset += 4)
    {
      NlOnnxExportOptions o = { .opset = opset };
      g_autoptr (GError) error = NULL;
      g_autoptr (GBytes) bytes = nl_onnx_export (m, &o, &error);
      g_autoptr (NlOnnxImport) imp = NULL;
      g_autoptr (NlModel) back = NULL;
      g_autofree float *got = NULL;
      g_autofree char *back_ops = NULL;
      gsize size;
      const void *data;
      g_assert_no_error (error);
      data = g_bytes_get_data (bytes, &size);
      imp = nl_onnx_import_data (data, size, NULL, NULL, &error);
      g_assert_no_error (error);
      back = nl_onnx_import_new_model (imp, NULL, &error);
      g_assert_no_error (error);
      back_ops = ops_of (back->net);
      g_assert_cmpstr (back_ops, ==, ops);
      got = forward (back, pixels, 8);
      nl_test_assert_close (got, want, 8 * 10, 1e-6, 1e-6);
    }
}

static char *
ort_module (void)
{
  const char *env = g_getenv ("NETLOOM_ORT_MODULE");
  g_autofree char *local = nl_test_source_path (".npm-ort/node_modules/onnxruntime-node");
  if (env && *env)
    return g_strdup (env);
  return g_file_test (local, G_FILE_TEST_IS_DIR) ? g_steal_pointer (&local) : NULL;
}

/* An MNIST-format IDX file of n 28x28 images */
static void
write_idx (const char *path, const guint8 *pixels, int n)
{
  g_autofree guint8 *data = g_new (guint8, 16 + n * 784);
  guint32 head[4] = { GUINT32_TO_BE (0x803), GUINT32_TO_BE ((guint32) n), GUINT32_TO_BE (28), GUINT32_TO_BE (28) };
  memcpy (data, head, 16);
  memcpy (data + 16, pixels, (gsize) n * 784);
  g_assert_true (g_file_set_contents (path, (const char *) data, 16 + n * 784, NULL));
}

static void
test_onnxruntime (void)
{
  enum { N = 32 };
  g_autofree char *ort = ort_module (), *node = g_find_program_in_path ("node");
  g_autofree char *runner = nl_test_source_path ("tests/onnx_run.js");
  g_autofree char *dir = NULL, *idx = NULL;
  g_autoptr (NlModel) m = NULL;
  g_autofree guint8 *pixels = g_new (guint8, N * 784);
  g_autofree float *logits = NULL;
  GRand *r = g_rand_new_with_seed (23);

  if (!ort || !node)
    {
      g_test_skip ("onnxruntime-node or node not found (npm install onnxruntime-node into .npm-ort, or set "
                   "NETLOOM_ORT_MODULE)");
      g_rand_free (r);
      return;
    }
  dir = g_dir_make_tmp ("onnx-acts-ort-XXXXXX", NULL);
  idx = g_build_filename (dir, "images", NULL);
  for (int k = 0; k < N * 784; k++)
    pixels[k] = (guint8) g_rand_int_range (r, 0, 256);
  g_rand_free (r);
  write_idx (idx, pixels, N);
  m = act_model ();
  logits = forward (m, pixels, N);
  for (int opset = 13; opset <= 17; opset += 4)
    {
      NlOnnxExportOptions o = { .opset = opset };
      g_autoptr (GError) error = NULL;
      g_autofree char *name = g_strdup_printf ("acts%d.onnx", opset), *path = g_build_filename (dir, name, NULL);
      g_autofree char *out = NULL, *err = NULL;
      g_auto (GStrv) rows = NULL;
      const char *argv[] = { node, runner, ort, path, idx, "32", "0", "1", NULL };
      double worst = 0;
      int status;
      g_assert_true (nl_onnx_export_file (m, &o, path, &error));
      g_assert_no_error (error);
      g_assert_true (g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, &err, &status, &error));
      if (!g_spawn_check_wait_status (status, NULL))
        g_error ("onnx_run.js failed on opset %d: %s", opset, err);
      rows = g_strsplit (out, "\n", -1);
      for (int i = 0; i < N; i++)
        {
          /* netloom's probabilities, in double */
          double mx = -INFINITY, sum = 0, p[10];
          g_auto (GStrv) vals = NULL;
          g_assert_nonnull (rows[i]);
          vals = g_strsplit_set (rows[i], "[], ", -1);
          for (int c = 0; c < 10; c++)
            mx = MAX (mx, logits[i * 10 + c]);
          for (int c = 0; c < 10; c++)
            sum += p[c] = exp (logits[i * 10 + c] - mx);
          for (int c = 0, j = 0; c < 10; c++)
            {
              while (vals[j] && !*vals[j])
                j++;
              if (!vals[j])
                g_error ("onnx_run.js row %d: %s", i, rows[i]);
              double d = fabs (g_ascii_strtod (vals[j++], NULL) - p[c] / sum);
              worst = MAX (worst, d);
            }
        }
      g_test_message ("opset %d: onnxruntime against netloom, worst probability difference %.3g", opset, worst);
      g_assert_cmpfloat (worst, <, 1e-5);
    }
  nl_test_remove_tree (dir);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/onnx-acts/torch", test_torch);
  g_test_add_func ("/onnx-acts/round-trip", test_round_trip);
  g_test_add_func ("/onnx-acts/onnxruntime", test_onnxruntime);
  return g_test_run ();
}
