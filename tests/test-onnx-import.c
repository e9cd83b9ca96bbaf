/* test-onnx-import.c — the ONNX importer against the node tests of Debian's
 * libonnx-testdata (/usr/share/libonnx-testdata/data/node/test_*: model.onnx,
 * test_data_set_0/input_K.pb and output_0.pb): every test of an op netloom
 * maps either imports and reproduces the expected output within 1e-4, or is
 * refused with one "cannot be imported" message naming the node (an
 * attribute netloom lacks: 1-D or 3-D windows, asymmetric pads ...); the
 * tests listed in `must_pass` have to reproduce. Also: a malformed or
 * truncated model and external data outside the model's folder are one
 * clear error each, and a fuzzed model never crashes the importer; a
 * network of every exportable op (tests/fixtures/onnx-every-op.json) and
 * one with an Embedding export and import back to the same outputs, and
 * GELU and LayerNorm written as formulas (before opset 17) come back as
 * themselves. */
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#include "engine/graph/nl-program.h"
#include "engine/formats/onnx/nl-onnx-const.h"
#include "engine/formats/onnx/nl-onnx-export.h"
#include "engine/formats/onnx/nl-onnx-import.h"
#include "tests/nl-test-util.h"

#define NODE_DIR "/usr/share/libonnx-testdata/data/node"

/* the ops netloom maps, as the test folders' name prefixes */
static const char *const prefixes[] = {
  "test_conv", "test_basic_conv", "test_gemm", "test_matmul", "test_relu", "test_sigmoid", "test_tanh",
  "test_leakyrelu", "test_softplus", "test_maxpool", "test_averagepool", "test_globalaveragepool",
  "test_batchnorm", "test_layer_normalization", "test_dropout", "test_flatten", "test_reshape", "test_concat",
  "test_add", "test_sum", "test_mul", "test_sub", "test_div", "test_transpose", "test_softmax", "test_logsoftmax",
  "test_gather_0", "test_identity",
  /* the activations of nl-onnx-import-acts.c */
  "test_elu", "test_celu", "test_selu", "test_softsign", "test_hardsigmoid", "test_hardswish", "test_clip",
  "test_prelu", "test_shrink", NULL
};

/* these must import and reproduce (every test of these ops that netloom's
 * single-input networks and symmetric, at-most-half-window padding can express) */
static const char *const must_pass[] = {
  "test_averagepool_2d_ceil", "test_averagepool_2d_default", "test_averagepool_2d_precomputed_pads",
  "test_averagepool_2d_precomputed_pads_count_include_pad", "test_averagepool_2d_precomputed_strides",
  "test_averagepool_2d_strides", "test_basic_conv_with_padding", "test_basic_conv_without_padding",
  "test_batchnorm_epsilon", "test_batchnorm_example", "test_conv_with_strides_and_asymmetric_padding",
  "test_conv_with_strides_no_padding", "test_conv_with_strides_padding", "test_dropout_default",
  "test_dropout_default_old", "test_dropout_default_ratio", "test_dropout_random_old", "test_flatten_axis1",
  "test_flatten_default_axis", "test_gemm_alpha", "test_gemm_beta", "test_gemm_default_no_bias",
  "test_gemm_default_scalar_bias", "test_gemm_default_single_elem_vector_bias", "test_gemm_default_vector_bias",
  "test_gemm_default_zero_bias", "test_gemm_transposeB", "test_globalaveragepool",
  "test_globalaveragepool_precomputed", "test_identity", "test_leakyrelu", "test_leakyrelu_default",
  "test_leakyrelu_example", "test_logsoftmax_axis_0", "test_logsoftmax_axis_1", "test_logsoftmax_axis_2",
  "test_logsoftmax_default_axis", "test_logsoftmax_example_1", "test_logsoftmax_large_number",
  "test_logsoftmax_negative_axis", "test_matmul_2d", "test_maxpool_2d_ceil", "test_maxpool_2d_default",
  "test_maxpool_2d_precomputed_pads", "test_maxpool_2d_precomputed_strides", "test_maxpool_2d_strides", "test_relu",
  "test_reshape_extended_dims", "test_reshape_negative_dim", "test_reshape_reduced_dims",
  "test_reshape_reordered_last_dims", "test_reshape_zero_and_negative_dim", "test_reshape_zero_dim", "test_sigmoid",
  "test_sigmoid_example", "test_softmax_axis_0", "test_softmax_axis_1", "test_softmax_axis_2",
  "test_softmax_default_axis", "test_softmax_example", "test_softmax_large_number", "test_softmax_negative_axis",
  "test_softplus", "test_softplus_example", "test_sum_one_input", "test_tanh", "test_tanh_example",
  /* a constant operand that does not span the batch (the same-shape tests'
   * bound input does: refused); a Transpose that keeps the batch first */
  "test_add_bcast", "test_sub_bcast", "test_mul_bcast", "test_div_bcast", "test_transpose_all_permutations_0",
  "test_transpose_all_permutations_1",
  /* the activations whose constants are netloom's (PyTorch's defaults) */
  "test_elu_default", "test_selu_default", "test_softsign", "test_softsign_example", "test_hardswish", "test_clip",
  "test_clip_example", "test_clip_default_min",
  /* other bounds: a Clip */
  "test_clip_inbounds", "test_clip_outbounds", "test_clip_splitbounds", "test_clip_default_max",
  "test_clip_default_inbounds",
  /* ONNX's Shrink: netloom's Shrink; PRelu with a slope per channel (the
   * slope bound as a constant): a PReLU */
  "test_shrink_hard", "test_shrink_soft", NULL
};

static NlOnnxConst *
read_tensor (const char *path, char **name)
{
  g_autofree char *data = NULL;
  gsize size;
  Onnx__TensorProto *t;
  NlOnnxConst *c;
  g_autoptr (GError) error = NULL;
  g_assert_true (g_file_get_contents (path, &data, &size, NULL));
  t = onnx__tensor_proto__unpack (NULL, size, (const guint8 *) data);
  g_assert_nonnull (t);
  c = nl_onnx_const_from_proto (t, NULL, &error);
  if (!c)
    g_error ("%s: %s", path, error->message);
  if (name)
    *name = g_strdup (t->name);
  onnx__tensor_proto__free_unpacked (t, NULL);
  return c;
}

/* Imports test `dir` with input `data_k` as the data and the others bound;
 * returns 1 when it reproduces output_0, 0 when refused as unsupported,
 * -1 (with a message in *why) when it imports but computes something else. */
static int
run_node_test (const char *dir, char **why)
{
  g_autofree char *model_path = g_build_filename (dir, "model.onnx", NULL), *model = NULL;
  g_autoptr (GHashTable) bound = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, (GDestroyNotify) g_bytes_unref);
  g_autoptr (GPtrArray) inputs = g_ptr_array_new_with_free_func ((GDestroyNotify) nl_onnx_const_free);
  g_autoptr (GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (NlOnnxConst) expected = NULL;
  g_autofree char *out_path = g_build_filename (dir, "test_data_set_0", "output_0.pb", NULL);
  gsize size;
  int result = 0;

  g_assert_true (g_file_get_contents (model_path, &model, &size, NULL));
  for (int k = 0;; k++)
    {
      g_autofree char *base = g_strdup_printf ("input_%d.pb", k);
      g_autofree char *p = g_build_filename (dir, "test_data_set_0", base, NULL), *name = NULL;
      if (!g_file_test (p, G_FILE_TEST_EXISTS))
        break;
      g_ptr_array_add (inputs, read_tensor (p, &name));
      g_ptr_array_add (names, g_steal_pointer (&name));
    }
  expected = read_tensor (out_path, NULL);
  /* each input in turn is the data; the others are bound as constants */
  for (guint d = 0; d < inputs->len && result == 0; d++)
    {
      g_autoptr (GError) error = NULL;
      g_autoptr (NlOnnxImport) imp = NULL;
      g_autoptr (NlModel) m = NULL;
      g_autoptr (NlProgram) prog = NULL;
      NlOnnxConst *x = g_ptr_array_index (inputs, d);
      NlCompileOptions opts = { .batch = x->shape.ndim > 0 ? (int) x->shape.d[0] : 1 };
      NlTensor *pred;
      double max_err = 0;
      g_hash_table_remove_all (bound);
      for (guint k = 0; k < inputs->len; k++)
        if (k != d)
          {
            g_autofree char *p = g_strdup_printf ("%s/test_data_set_0/input_%u.pb", dir, k);
            g_autofree char *bytes = NULL;
            gsize n;
            g_assert_true (g_file_get_contents (p, &bytes, &n, NULL));
            g_hash_table_insert (bound, g_strdup (g_ptr_array_index (names, k)),
                                 g_bytes_new_take (g_steal_pointer (&bytes), n));
          }
      imp = nl_onnx_import_data (model, size, dir, bound, &error);
      if (!imp)
        {
          /* refused: an unmapped node or attribute, an opset before 9 */
          if (!g_error_matches (error, NL_ONNX_ERROR, NL_ONNX_ERROR_UNSUPPORTED)
              && !g_error_matches (error, NL_ONNX_ERROR, NL_ONNX_ERROR_OPSET)
              && !g_error_matches (error, NL_NETWORK_ERROR, NL_NETWORK_ERROR_STRUCTURE))
            g_error ("%s: %s", dir, error->message);
          g_autofree char *before = *why;
          *why = g_strdup_printf ("%s%s%s", before ? before : "", before ? " / " : "", error->message);
          continue;
        }
      if (!(m = nl_onnx_import_new_model (imp, NULL, &error)) || !(prog = nl_program_new (m, &opts, &error)))
        {
          g_autofree char *before = *why;
          *why = g_strdup_printf ("%s%s%s", before ? before : "", before ? " / " : "", error->message);
          continue;
        }
      for (int64_t k = 0; k < x->numel; k++)
        nl_tensor_f32 (nl_program_input (prog))[k] = (float) nl_onnx_const_get (x, k);
      g_assert_true (nl_program_forward (prog, 0, &error));
      pred = nl_program_pred (prog);
      if (nl_tensor_numel (pred) != expected->numel)
        {
          *why = g_strdup_printf ("%" G_GINT64_FORMAT " values, expected %" G_GINT64_FORMAT, nl_tensor_numel (pred),
                                  expected->numel);
          return -1;
        }
      for (int64_t k = 0; k < expected->numel; k++)
        {
          double e = nl_onnx_const_get (expected, k), got = nl_tensor_f32 (pred)[k];
          max_err = MAX (max_err, fabs (got - e) / MAX (1.0, fabs (e)));
        }
      if (max_err > 1e-4)
        {
          *why = g_strdup_printf ("differs from the expected output by %g", max_err);
          return -1;
        }
      result = 1;
    }
  return result;
}

static void
test_node_tests (void)
{
  g_autoptr (GDir) d = NULL;
  g_autoptr (GHashTable) passed = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  const char *name;
  int n_pass = 0, n_refused = 0;

  if (!g_file_test (NODE_DIR, G_FILE_TEST_IS_DIR))
    {
      g_test_skip ("no " NODE_DIR " (Debian libonnx-testdata)");
      return;
    }
  d = g_dir_open (NODE_DIR, 0, NULL);
  while ((name = g_dir_read_name (d)))
    {
      g_autofree char *dir = g_build_filename (NODE_DIR, name, NULL), *why = NULL;
      gboolean match = FALSE;
      int r;
      for (int k = 0; prefixes[k]; k++)
        match = match || g_str_has_prefix (name, prefixes[k]);
      if (!match || g_str_has_suffix (name, "_expanded") || strstr (name, "_training")
          || strstr (name, "_bfloat16") || strstr (name, "_uint8") || strstr (name, "_int")
          || strstr (name, "_sequence") || strstr (name, "_opt"))
        continue;
      r = run_node_test (dir, &why);
      if (r < 0)
        g_error ("%s imports but computes something else: %s", name, why);
      if (r > 0)
        {
          g_test_message ("%s reproduced", name);
          n_pass++;
          g_hash_table_add (passed, g_strdup (name));
        }
      else
        {
          n_refused++;
          g_test_message ("%s refused: %s", name, why ? why : "?");
        }
    }
  for (int k = 0; must_pass[k]; k++)
    if (!g_hash_table_contains (passed, must_pass[k]))
      g_error ("%s does not import and reproduce", must_pass[k]);
  g_test_message ("%d node tests reproduced, %d refused as unsupported", n_pass, n_refused);
  g_assert_cmpint (n_pass, >=, 30);
}

/* A model exported here, cut short and bit-flipped: one error each, never a crash. */
static void
test_malformed (void)
{
  static const char *net_json =
    "{\"format\":\"netloom.network\",\"version\":1,\"name\":\"t\",\"nodes\":["
    "{\"id\":\"data\",\"op\":\"Input\",\"params\":{\"shape\":[1,6,6]}},"
    "{\"id\":\"conv\",\"op\":\"Conv2D\",\"params\":{\"channels\":2,\"kernel\":[3,3]}},"
    "{\"id\":\"flat\",\"op\":\"Flatten\"},{\"id\":\"fc\",\"op\":\"Dense\",\"params\":{\"units\":3}}],"
    "\"edges\":[\"data -> conv\",\"conv -> flat\",\"flat -> fc\"]}";
  g_autoptr (GError) error = NULL;
  g_autoptr (NlNetwork) net = nl_network_load_data (net_json, -1, &error);
  NlShape s = nl_shape_of (3, (int64_t) 1, (int64_t) 6, (int64_t) 6);
  g_autoptr (NlModel) m = nl_model_new_full (net, &s, &(NlModelOptions) { .seed = 1 }, &error);
  g_autoptr (GBytes) bytes = nl_onnx_export (m, NULL, &error);
  gsize size;
  const guint8 *data = g_bytes_get_data (bytes, &size);
  g_autofree guint8 *copy = g_memdup2 (data, size);
  g_autoptr (NlOnnxImport) whole = nl_onnx_import_data (data, size, NULL, NULL, &error);
  GRand *rand = g_rand_new_with_seed (7);
  int n_parsed = 0, n_cuts = 0;

  g_assert_no_error (error);
  g_assert_nonnull (whole);
  /* a cut at a field boundary after the graph (the metadata) still parses:
   * then the graph is whole; every other cut is one error */
  for (gsize cut = 0; cut < size; cut += 1 + size / 97)
    {
      g_autoptr (GError) e = NULL;
      NlOnnxImport *imp = nl_onnx_import_data (data, cut, NULL, NULL, &e);
      g_assert_true ((imp == NULL) == (e != NULL));
      if (imp)
        n_parsed++;
      else
        g_assert_cmpstr (e->message, !=, "");
      g_clear_pointer (&imp, nl_onnx_import_free);
      n_cuts++;
    }
  g_assert_cmpint (n_parsed, <, n_cuts / 10);
  for (int round = 0; round < 400; round++)
    {
      g_autoptr (GError) e = NULL;
      NlOnnxImport *imp;
      memcpy (copy, data, size);
      for (int k = 0; k < 4; k++)
        copy[g_rand_int_range (rand, 0, (gint32) size)] ^= (guint8) (1 << g_rand_int_range (rand, 0, 8));
      imp = nl_onnx_import_data (copy, size, NULL, NULL, &e);
      g_assert_true ((imp != NULL) == (e == NULL));
      if (imp)
        {
          NlModel *mm = nl_onnx_import_new_model (imp, NULL, &e);
          g_clear_pointer (&mm, nl_model_free);
        }
      g_clear_pointer (&imp, nl_onnx_import_free);
    }
  g_rand_free (rand);
  error = NULL;
  g_assert_null (nl_onnx_import_data ("not a model", 11, NULL, NULL, &error));
  g_assert_error (error, NL_ONNX_ERROR, NL_ONNX_ERROR_PARSE);
}

/* A tensor whose external data points out of the model's folder is refused. */
static void
test_external_data (void)
{
  g_autofree char *dir = g_dir_make_tmp ("netloom-onnx-XXXXXX", NULL);
  g_autofree char *inside = g_build_filename (dir, "w.bin", NULL);
  float w[4] = { 1, 2, 3, 4 };
  Onnx__TensorProto t = ONNX__TENSOR_PROTO__INIT;
  Onnx__StringStringEntryProto loc = ONNX__STRING_STRING_ENTRY_PROTO__INIT, *entries[1] = { &loc };
  int64_t dims[1] = { 4 };
  g_autoptr (GError) error = NULL;
  NlOnnxConst *c;

  g_assert_true (g_file_set_contents (inside, (const char *) w, sizeof w, NULL));
  t.name = (char *) "w";
  t.n_dims = 1;
  t.dims = dims;
  t.has_data_type = TRUE;
  t.data_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
  t.has_data_location = TRUE;
  t.data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
  t.n_external_data = 1;
  t.external_data = entries;
  loc.key = (char *) "location";

  loc.value = (char *) "w.bin";
  c = nl_onnx_const_from_proto (&t, dir, &error);
  g_assert_no_error (error);
  g_assert_cmpfloat (c->f[3], ==, 4.0f);
  nl_onnx_const_free (c);
  for (int k = 0; k < 3; k++)
    {
      static const char *const outside[] = { "../w.bin", "/etc/passwd", "sub/../../w.bin" };
      loc.value = (char *) outside[k];
      g_assert_null (nl_onnx_const_from_proto (&t, dir, &error));
      g_assert_error (error, NL_ONNX_ERROR, NL_ONNX_ERROR_UNSAFE);
      g_assert_nonnull (strstr (error->message, "outside the model's folder"));
      g_clear_error (&error);
    }
  g_unlink (inside);
  g_rmdir (dir);
}

/* A tensor declaring more values than it holds is refused before room for
 * them is allocated (a 1 KB model asked for 8 GB; here 8 TB, which
 * g_new0 cannot give). Found by tests/fuzz/fuzz-onnx. */
static void
test_declared_shape (void)
{
  Onnx__TensorProto t = ONNX__TENSOR_PROTO__INIT;
  int64_t dims[1] = { (int64_t) 1 << 40 }, values[1] = { 3 };
  float raw[1] = { 1 };
  g_autoptr (GError) error = NULL;

  t.name = (char *) "big";
  t.n_dims = 1;
  t.dims = dims;
  t.has_data_type = TRUE;
  t.data_type = ONNX__TENSOR_PROTO__DATA_TYPE__INT64;
  t.n_int64_data = 1;
  t.int64_data = values;
  g_assert_null (nl_onnx_const_from_proto (&t, NULL, &error));
  g_assert_error (error, NL_ONNX_ERROR, NL_ONNX_ERROR_PARSE);
  g_assert_nonnull (strstr (error->message, "as many values as its shape says"));
  g_clear_error (&error);
  t.data_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
  t.n_int64_data = 0;
  t.has_raw_data = TRUE;
  t.raw_data.data = (guint8 *) raw;
  t.raw_data.len = sizeof raw;
  g_assert_null (nl_onnx_const_from_proto (&t, NULL, &error));
  g_assert_error (error, NL_ONNX_ERROR, NL_ONNX_ERROR_PARSE);
}

/* Exports m, imports the bytes and runs both on x (batch n): same outputs.
 * Returns the imported network's ops, one string ("Input Dense ..."). */
static char *
check_round_trip (NlModel *m, int opset, const float *x, int n)
{
  NlOnnxExportOptions o = { .opset = opset };
  NlCompileOptions opts = { .batch = n };
  g_autoptr (GError) error = NULL;
  g_autoptr (GBytes) bytes = nl_onnx_export (m, &o, &error);
  g_autoptr (NlOnnxImport) imp = NULL;
  g_autoptr (NlModel) back = NULL;
  g_autoptr (NlProgram) pa = NULL, pb = NULL;
  g_autoptr (GString) ops = g_string_new (NULL);
  gsize size;
  const void *data;
  double max_err = 0;

  g_assert_no_error (error);
  data = g_bytes_get_data (bytes, &size);
  imp = nl_onnx_import_data (data, size, NULL, NULL, &error);
  g_assert_no_error (error);
  back = nl_onnx_import_new_model (imp, NULL, &error);
  g_assert_no_error (error);
  pa = nl_program_new (m, &opts, &error);
  g_assert_no_error (error);
  pb = nl_program_new (back, &opts, &error);
  g_assert_no_error (error);
  memcpy (nl_tensor_f32 (nl_program_input (pa)), x, sizeof (float) * nl_tensor_numel (nl_program_input (pa)));
  memcpy (nl_tensor_f32 (nl_program_input (pb)), x, sizeof (float) * nl_tensor_numel (nl_program_input (pb)));
  g_assert_true (nl_program_forward (pa, 0, &error));
  g_assert_true (nl_program_forward (pb, 0, &error));
  g_assert_cmpint (nl_tensor_numel (nl_program_pred (pa)), ==, nl_tensor_numel (nl_program_pred (pb)));
  for (int64_t k = 0; k < nl_tensor_numel (nl_program_pred (pa)); k++)
    max_err = MAX (max_err, fabs (nl_tensor_f32 (nl_program_pred (pa))[k] - nl_tensor_f32 (nl_program_pred (pb))[k]));
  g_test_message ("opset %d: max abs difference %g", opset, max_err);
  g_assert_cmpfloat (max_err, <, 1e-5);
  for (int i = 0; i < nl_network_n_nodes (back->net); i++)
    g_string_append_printf (ops, "%s%s", i ? " " : "", nl_network_node (back->net, i)->def->name);
  return g_string_free (g_steal_pointer (&ops), FALSE);
}

/* The constants of m's Mul and Sub nodes set to U(0.5, 1.5) (they start
 * as 1 and 0, which would hide an operand read wrongly). */
static void
vary_constants (NlModel *m)
{
  GRand *r = g_rand_new_with_seed (5);
  for (int i = 0; i < nl_network_n_nodes (m->net); i++)
    {
      NlTensor *t = m->aux[NL_MODEL_SLOT (i, 0)];
      const char *op = nl_network_node (m->net, i)->def->name;
      if (t && (!strcmp (op, "Mul") || !strcmp (op, "Sub")))
        for (int64_t k = 0; k < nl_tensor_numel (t); k++)
          nl_tensor_f32 (t)[k] = (float) g_rand_double_range (r, 0.5, 1.5);
    }
  nl_model_host_changed (m);
  g_rand_free (r);
}

static void
test_round_trip (void)
{
  static const char *emb_json =
    "{\"format\":\"netloom.network\",\"version\":1,\"name\":\"emb\",\"nodes\":["
    "{\"id\":\"data\",\"op\":\"Input\"},"
    "{\"id\":\"emb\",\"op\":\"Embedding\",\"params\":{\"input_dim\":10,\"output_dim\":4}},"
    "{\"id\":\"flat\",\"op\":\"Flatten\"},{\"id\":\"fc\",\"op\":\"Dense\",\"params\":{\"units\":3}},"
    "{\"id\":\"p\",\"op\":\"Softmax\"}],"
    "\"edges\":[\"data -> emb\",\"emb -> flat\",\"flat -> fc\",\"fc -> p\"]}";
  g_autoptr (GError) error = NULL;
  g_autofree char *path = nl_test_source_path ("tests/fixtures/onnx-every-op.json");
  g_autoptr (NlNetwork) every = nl_network_load_file (path, &error);
  g_autoptr (NlNetwork) emb = nl_network_load_data (emb_json, -1, &error);
  NlShape image = nl_shape_of (3, (int64_t) 1, (int64_t) 28, (int64_t) 28), tokens = nl_shape_of (1, (int64_t) 6);
  g_autoptr (NlModel) m = NULL, me = NULL;
  g_autofree float *x = g_new (float, 3 * 28 * 28);
  float ids[3 * 6];

  g_assert_no_error (error);
  m = nl_model_new_full (every, &image, &(NlModelOptions) { .seed = 11 }, &error);
  g_assert_no_error (error);
  vary_constants (m);
  for (int k = 0; k < 3 * 28 * 28; k++)
    x[k] = (float) ((k * 37) % 101) / 50.0f - 1.0f;
  /* GELU (both approximations) and LayerNorm come back from their formulas
   * at opset 13 too */
  for (int opset = 13; opset <= 17; opset += 4)
    g_free (check_round_trip (m, opset, x, 3));
  me = nl_model_new_full (emb, &tokens, &(NlModelOptions) { .seed = 12 }, &error);
  g_assert_no_error (error);
  for (int k = 0; k < 3 * 6; k++)
    ids[k] = (float) ((k * 7) % 10);
  g_free (check_round_trip (me, 13, ids, 3));
  g_free (check_round_trip (me, 17, ids, 3));
}

/* GELU of either approximation and LayerNorm with and without gamma and
 * beta, exported at opset 13 (formulas: LayerNormalization is opset 17's,
 * Gelu opset 20's) and 17, import as the same ops, to the same outputs. */
static void
test_round_trip_formulas (void)
{
  static const char *json =
    "{\"format\":\"netloom.network\",\"version\":1,\"name\":\"f\",\"nodes\":["
    "{\"id\":\"data\",\"op\":\"Input\"},{\"id\":\"fc1\",\"op\":\"Dense\",\"params\":{\"units\":8}},"
    "{\"id\":\"ln1\",\"op\":\"LayerNorm\"},"
    "{\"id\":\"g1\",\"op\":\"GELU\",\"params\":{\"approximation\":\"tanh\"}},"
    "{\"id\":\"fc2\",\"op\":\"Dense\",\"params\":{\"units\":8}},"
    "{\"id\":\"ln2\",\"op\":\"LayerNorm\",\"params\":{\"scale\":false,\"epsilon\":0.001}},"
    "{\"id\":\"g2\",\"op\":\"GELU\",\"params\":{\"approximation\":\"erf\"}},"
    "{\"id\":\"ln3\",\"op\":\"LayerNorm\",\"params\":{\"center\":false,\"scale\":false}},"
    "{\"id\":\"fc3\",\"op\":\"Dense\",\"params\":{\"units\":4}},"
    "{\"id\":\"ln4\",\"op\":\"LayerNorm\",\"params\":{\"center\":false}},"
    "{\"id\":\"p\",\"op\":\"Softmax\"}],"
    "\"edges\":[\"data -> fc1\",\"fc1 -> ln1\",\"ln1 -> g1\",\"g1 -> fc2\",\"fc2 -> ln2\",\"ln2 -> g2\","
    "\"g2 -> ln3\",\"ln3 -> fc3\",\"fc3 -> ln4\",\"ln4 -> p\"]}";
  static const char *want = "Input Dense LayerNorm GELU Dense LayerNorm GELU LayerNorm Dense LayerNorm Softmax";
  g_autoptr (GError) error = NULL;
  g_autoptr (NlNetwork) net = nl_network_load_data (json, -1, &error);
  NlShape s = nl_shape_of (1, (int64_t) 6);
  g_autoptr (NlModel) m = NULL;
  float x[4 * 6];

  g_assert_no_error (error);
  m = nl_model_new_full (net, &s, &(NlModelOptions) { .seed = 3 }, &error);
  g_assert_no_error (error);
  /* gamma and beta away from 1 and 0 */
  for (int i = 0; i < nl_network_n_nodes (m->net); i++)
    for (int k = 0; k < 2; k++)
      {
        NlTensor *t = m->weights[NL_MODEL_SLOT (i, k)];
        if (t && !strcmp (nl_network_node (m->net, i)->def->name, "LayerNorm"))
          for (int64_t j = 0; j < nl_tensor_numel (t); j++)
            nl_tensor_f32 (t)[j] = 0.5f + 0.1f * (float) ((j * 3 + k) % 7);
      }
  nl_model_host_changed (m);
  for (int k = 0; k < 4 * 6; k++)
    x[k] = (float) ((k * 13) % 17) / 4.0f - 2.0f;
  for (int opset = 13; opset <= 17; opset++)
    {
      g_autofree char *ops = check_round_trip (m, opset, x, 4);
      g_assert_cmpstr (ops, ==, want);
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/onnx-import/node-tests", test_node_tests);
  g_test_add_func ("/onnx-import/malformed", test_malformed);
  g_test_add_func ("/onnx-import/external-data", test_external_data);
  g_test_add_func ("/onnx-import/declared-shape", test_declared_shape);
  g_test_add_func ("/onnx-import/round-trip", test_round_trip);
  g_test_add_func ("/onnx-import/round-trip-formulas", test_round_trip_formulas);
  return g_test_run ();
}
