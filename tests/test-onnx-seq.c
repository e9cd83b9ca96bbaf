/* test-onnx-seq.c — ONNX and the sequence ops.
 *
 * Export: networks of every sequence op (LSTM and GRU in their variants and
 * with an initial state input,
 * MultiHeadAttention self, causal and cross, PositionalEmbedding learned
 * and sinusoidal, SequencePool last/mean/max, MatMul, an Embedding with a
 * padding index), with random weights and biases, exported and run by
 * onnxruntime-node (tests/onnx_run_tensor.js), must give netloom's outputs
 * within 1e-5: with padded samples (Input lengths nonzero, the exported
 * graph computing the lengths itself), without padding, and with an Input
 * that has no lengths. The vocabulary goes in as metadata.
 *
 * Import: libonnx-testdata's LSTM and GRU node tests reproduce their
 * output_0 within 1e-5, but for those listed as refused (peepholes), which
 * must be refused with one message; PyTorch 1.13's export of batch_first
 * nn.LSTM and nn.GRU and of nn.TransformerEncoderLayer
 * (tests/torch_onnx_seq_models.py) import (the encoder's attention as one
 * MultiHeadAttention) and give PyTorch's outputs within 1e-5. */
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#include "engine/formats/onnx/nl-onnx-const.h"
#include "engine/formats/onnx/nl-onnx-export.h"
#include "engine/formats/onnx/nl-onnx-import.h"
#include "engine/graph/nl-program.h"
#include "ops/nl-op-registry.h"
#include "tests/nl-test-util.h"

#define NODE_DIR "/usr/share/libonnx-testdata/data/node"
#define B 3
#define T 6
#define C 4

static char *
ort_module (void)
{
  const char *env = g_getenv ("NETLOOM_ORT_MODULE");
  g_autofree char *local = nl_test_source_path (".npm-ort/node_modules/onnxruntime-node");
  if (env && *env)
    return g_strdup (env);
  /* node resolves a relative module path against the script's folder */
  return g_file_test (local, G_FILE_TEST_IS_DIR) ? g_canonicalize_filename (local, NULL) : NULL;
}

/* netloom's prediction for a batch of n samples x; *len gets its size */
static float *
run_netloom (NlModel *m, const float *x, int n, int64_t *len)
{
  g_autoptr (GError) error = NULL;
  NlCompileOptions opts = { .batch = n };
  g_autoptr (NlProgram) p = nl_program_new (m, &opts, &error);
  g_assert_no_error (error);
  memcpy (nl_tensor_f32 (nl_program_input (p)), x, sizeof (float) * nl_tensor_numel (nl_program_input (p)));
  g_assert_true (nl_program_forward (p, 0, &error));
  g_assert_no_error (error);
  *len = nl_tensor_numel (nl_program_pred (p));
  return g_memdup2 (nl_tensor_f32 (nl_program_pred (p)), sizeof (float) * *len);
}

/* onnxruntime's first output of each model in jobs (model, input file,
 * dims as "3,6,4"; inputs written already), one array each */
static GPtrArray *
run_ort (const char *ort, GPtrArray *jobs)
{
  g_autofree char *script = nl_test_source_path ("tests/onnx_run_tensor.js"), *out = NULL, *err = NULL;
  g_autoptr (GPtrArray) argv = g_ptr_array_new ();
  g_autoptr (GError) error = NULL;
  g_auto (GStrv) lines = NULL;
  GPtrArray *results = g_ptr_array_new_with_free_func ((GDestroyNotify) g_array_unref);
  int status;
  g_ptr_array_add (argv, (gpointer) "node");
  g_ptr_array_add (argv, script);
  g_ptr_array_add (argv, (gpointer) ort);
  for (guint k = 0; k < jobs->len; k++)
    g_ptr_array_add (argv, g_ptr_array_index (jobs, k));
  g_ptr_array_add (argv, NULL);
  g_assert_true (g_spawn_sync (NULL, (char **) argv->pdata, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, &out, &err,
                               &status, &error));
  if (!g_spawn_check_wait_status (status, NULL))
    g_error ("onnxruntime refused a model: %s", err);
  lines = g_strsplit (out, "\n", -1);
  for (int i = 0; lines[i] && *lines[i]; i++)
    {
      GArray *v = g_array_new (FALSE, FALSE, sizeof (float));
      const char *p = strstr (lines[i], "\"data\":[");
      g_assert_nonnull (p);
      p += strlen ("\"data\":[");
      while (*p && *p != ']')
        {
          char *end;
          float f = (float) g_ascii_strtod (p, &end);
          g_assert_true (end != p);
          g_array_append_val (v, f);
          p = *end == ',' ? end + 1 : end;
        }
      g_ptr_array_add (results, v);
    }
  g_assert_cmpuint (results->len * 3, ==, jobs->len);
  return results;
}

static double
max_diff (const float *a, const float *b, int64_t n)
{
  double m = 0;
  for (int64_t k = 0; k < n; k++)
    m = MAX (m, fabs ((double) a[k] - b[k]) / MAX (1.0, fabs ((double) b[k])));
  return m;
}

/* ---- export ---- */

typedef struct {
  const char *name;
  const char *nodes; /* after the Input "data" */
  const char *edges; /* after nothing: the whole list */
  gboolean tokens;   /* the input is T token ids, not (T, C) features */
} ExportCase;

static const ExportCase export_cases[] = {
  { "lstm-all", "{\"id\":\"r\",\"op\":\"LSTM\",\"params\":{\"units\":5,\"layers\":2,\"bidirectional\":true}}",
    "\"data -> r\"" },
  { "lstm-last", "{\"id\":\"r\",\"op\":\"LSTM\",\"params\":{\"units\":5,\"bidirectional\":true,\"output\":\"last\"}}",
    "\"data -> r\"" },
  { "lstm-sum", "{\"id\":\"r\",\"op\":\"LSTM\",\"params\":{\"units\":3,\"bidirectional\":true,\"merge\":\"sum\"}}",
    "\"data -> r\"" },
  { "lstm-sum-last", "{\"id\":\"r\",\"op\":\"LSTM\",\"params\":{\"units\":3,\"layers\":2,\"bidirectional\":true,"
                     "\"merge\":\"sum\",\"output\":\"last\"}}", "\"data -> r\"" },
  { "lstm-1", "{\"id\":\"r\",\"op\":\"LSTM\",\"params\":{\"units\":4}}", "\"data -> r\"" },
  /* an initial state computed from the data: (B, 2*L*D, H) for LSTM, (B, L*D, H) for GRU */
  { "lstm-state", "{\"id\":\"pool\",\"op\":\"SequencePool\",\"params\":{\"mode\":\"mean\"}},"
                  "{\"id\":\"d\",\"op\":\"Dense\",\"params\":{\"units\":24}},"
                  "{\"id\":\"s\",\"op\":\"Reshape\",\"params\":{\"shape\":[0,8,3]}},"
                  "{\"id\":\"r\",\"op\":\"LSTM\",\"params\":{\"units\":3,\"layers\":2,\"bidirectional\":true}}",
    "\"data -> pool\",\"pool -> d\",\"d -> s\",\"data -> r\",\"s -> r:1\"" },
  { "gru-state", "{\"id\":\"pool\",\"op\":\"SequencePool\",\"params\":{\"mode\":\"mean\"}},"
                 "{\"id\":\"d\",\"op\":\"Dense\",\"params\":{\"units\":8}},"
                 "{\"id\":\"s\",\"op\":\"Reshape\",\"params\":{\"shape\":[0,2,4]}},"
                 "{\"id\":\"r\",\"op\":\"GRU\",\"params\":{\"units\":4,\"bidirectional\":true,\"output\":\"last\"}}",
    "\"data -> pool\",\"pool -> d\",\"d -> s\",\"data -> r\",\"s -> r:1\"" },
  { "gru-all", "{\"id\":\"r\",\"op\":\"GRU\",\"params\":{\"units\":5,\"layers\":2,\"bidirectional\":true}}",
    "\"data -> r\"" },
  { "gru-classic-last", "{\"id\":\"r\",\"op\":\"GRU\",\"params\":{\"units\":4,\"variant\":\"classic\",\"output\":\"last\"}}",
    "\"data -> r\"" },
  { "attention", "{\"id\":\"a\",\"op\":\"MultiHeadAttention\",\"params\":{\"heads\":2}}", "\"data -> a\"" },
  { "attention-causal", "{\"id\":\"a\",\"op\":\"MultiHeadAttention\",\"params\":{\"heads\":2,\"key_size\":3,\"units\":5,"
                        "\"causal\":true,\"use_bias\":false}}", "\"data -> a\"" },
  { "attention-cross", "{\"id\":\"m\",\"op\":\"Dense\",\"params\":{\"units\":3,\"flatten\":false}},"
                       "{\"id\":\"a\",\"op\":\"MultiHeadAttention\",\"params\":{\"heads\":2}}",
    "\"data -> m\",\"data -> a\",\"m -> a:1\"" },
  { "positional-learned", "{\"id\":\"p\",\"op\":\"PositionalEmbedding\",\"params\":{\"mode\":\"learned\",\"max_length\":9}}",
    "\"data -> p\"" },
  { "positional-sinusoidal", "{\"id\":\"p\",\"op\":\"PositionalEmbedding\",\"params\":{\"mode\":\"sinusoidal\"}}",
    "\"data -> p\"" },
  { "pool-last", "{\"id\":\"p\",\"op\":\"SequencePool\",\"params\":{\"mode\":\"last\"}}", "\"data -> p\"" },
  { "pool-mean", "{\"id\":\"p\",\"op\":\"SequencePool\",\"params\":{\"mode\":\"mean\"}}", "\"data -> p\"" },
  { "pool-max", "{\"id\":\"p\",\"op\":\"SequencePool\",\"params\":{\"mode\":\"max\"}}", "\"data -> p\"" },
  { "matmul", "{\"id\":\"d\",\"op\":\"Dense\",\"params\":{\"units\":4,\"flatten\":false}},"
              "{\"id\":\"mm\",\"op\":\"MatMul\",\"params\":{\"transpose_b\":true}}",
    "\"data -> d\",\"data -> mm\",\"d -> mm:1\"" },
  { "text", "{\"id\":\"e\",\"op\":\"Embedding\",\"params\":{\"input_dim\":12,\"output_dim\":4,\"padding_index\":0}},"
            "{\"id\":\"r\",\"op\":\"LSTM\",\"params\":{\"units\":4,\"bidirectional\":true}},"
            "{\"id\":\"p\",\"op\":\"SequencePool\",\"params\":{\"mode\":\"mean\"}},"
            "{\"id\":\"fc\",\"op\":\"Dense\",\"params\":{\"units\":3}}",
    "\"data -> e\",\"e -> r\",\"r -> p\",\"p -> fc\"", TRUE },
};

static NlModel *
export_case_model (const ExportCase *ec, gboolean lengths)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *json = g_strdup_printf (
    "{\"format\":\"netloom.network\",\"version\":1,\"name\":\"%s\",\"nodes\":["
    "{\"id\":\"data\",\"op\":\"Input\",\"params\":{\"lengths\":\"%s\"}},%s],\"edges\":[%s]}",
    ec->name, lengths ? "nonzero" : "full", ec->nodes, ec->edges);
  g_autoptr (NlNetwork) net = nl_network_load_data (json, -1, &error);
  NlShape s = ec->tokens ? nl_shape_of (1, (int64_t) T) : nl_shape_of (2, (int64_t) T, (int64_t) C);
  NlModel *m;
  g_assert_no_error (error);
  m = nl_model_new_full (net, &s, &(NlModelOptions) { .seed = 5 }, &error);
  g_assert_no_error (error);
  /* every weight and bias random: zeros would hide a bias or gate read wrongly */
  for (int i = 0; i < nl_network_n_nodes (m->net); i++)
    for (int k = 0; k < NL_GRAPH_MAX_SLOTS; k++)
      if (m->weights[NL_MODEL_SLOT (i, k)] && strcmp (nl_network_node (m->net, i)->def->name, "Embedding") != 0)
        nl_test_fill_uniform (m->weights[NL_MODEL_SLOT (i, k)], -0.6f, 0.6f, 100 + i * 10 + k);
  nl_model_host_changed (m);
  return m;
}

/* B samples; padded: lengths 6, 3, 1 (the rest zeros), else every step set */
static void
export_case_input (const ExportCase *ec, gboolean padded, float *x)
{
  static const int lens[B] = { T, 3, 1 };
  int per = ec->tokens ? 1 : C;
  for (int b = 0; b < B; b++)
    for (int t = 0; t < T; t++)
      for (int c = 0; c < per; c++)
        {
          float v = ec->tokens ? (float) (1 + (b * 5 + t * 3) % 11) : (float) sin (1.7 * b + 0.9 * t + 0.4 * c + 0.3);
          x[(b * T + t) * per + c] = padded && t >= lens[b] ? 0.0f : v;
        }
}

static void
test_export (void)
{
  g_autofree char *ort = ort_module (), *node = g_find_program_in_path ("node");
  g_autofree char *dir = g_dir_make_tmp ("onnx-seq-XXXXXX", NULL);
  g_autoptr (GPtrArray) jobs = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GPtrArray) want = g_ptr_array_new_with_free_func ((GDestroyNotify) g_array_unref);
  g_autoptr (GPtrArray) got = NULL;
  if (!ort || !node)
    {
      g_test_skip ("onnxruntime-node or node not found (npm install onnxruntime-node into .npm-ort, or set "
                   "NETLOOM_ORT_MODULE)");
      return;
    }
  for (gsize e = 0; e < G_N_ELEMENTS (export_cases); e++)
    for (int mode = 0; mode < 3; mode++)
      {
        /* 0: lengths and padded samples; 1: lengths, no padding; 2: an Input without lengths */
        const ExportCase *ec = &export_cases[e];
        g_autoptr (NlModel) m = export_case_model (ec, mode < 2);
        g_autoptr (GError) error = NULL;
        char *path = g_strdup_printf ("%s/%s-%d.onnx", dir, ec->name, mode);
        char *in = g_strdup_printf ("%s.x", path);
        int64_t n_want, numel = B * T * (ec->tokens ? 1 : C);
        g_autofree float *y = NULL;
        float x[B * T * C];
        NlOnnxExportOptions o = { .opset = mode == 1 ? 13 : 17 };
        export_case_input (ec, mode == 0, x);
        g_assert_true (nl_onnx_export_file (m, &o, path, &error));
        g_assert_no_error (error);
        g_assert_true (g_file_set_contents (in, (const char *) x, numel * sizeof (float), NULL));
        g_ptr_array_add (jobs, path);
        g_ptr_array_add (jobs, in);
        g_ptr_array_add (jobs, g_strdup_printf (ec->tokens ? "%d,%d" : "%d,%d,%d", B, T, C));
        y = run_netloom (m, x, B, &n_want);
        {
          GArray *a = g_array_sized_new (FALSE, FALSE, sizeof (float), (guint) n_want);
          g_array_append_vals (a, y, (guint) n_want);
          g_ptr_array_add (want, a);
        }
        if (mode == 0 && strcmp (ec->name, "matmul") != 0)
          {
            /* the padding matters: without lengths the same input gives other outputs */
            g_autoptr (NlModel) full = export_case_model (ec, FALSE);
            g_autofree float *unmasked = NULL;
            int64_t n_unmasked;
            unmasked = run_netloom (full, x, B, &n_unmasked);
            g_assert_cmpfloat (max_diff (unmasked, y, n_want), >, 1e-3);
          }
      }
  got = run_ort (ort, jobs);
  for (guint k = 0; k < got->len; k++)
    {
      GArray *g = g_ptr_array_index (got, k), *w = g_ptr_array_index (want, k);
      const char *name = export_cases[k / 3].name;
      double d;
      g_assert_cmpuint (g->len, ==, w->len);
      d = max_diff ((const float *) g->data, (const float *) w->data, w->len);
      g_test_message ("%s (%s): max difference %g", name,
                      k % 3 == 0 ? "padded" : k % 3 == 1 ? "unpadded" : "no lengths", d);
      if (d > 1e-5)
        g_error ("%s mode %u: onnxruntime differs from netloom by %g", name, k % 3, d);
    }
  nl_test_remove_tree (dir);
}

/* The sequence templates (data/networks), random weights, exported and
 * run by onnxruntime on padded token ids (series-gru on full windows). */
static void
test_export_templates (void)
{
  static const struct {
    const char *name;
    int64_t steps, features; /* features 0: token ids below vocab */
    int vocab;
  } templates[] = { { "text-lstm", 10, 0, 50 }, { "text-transformer", 10, 0, 50 }, { "char-gpt", 10, 0, 200 },
                    { "series-gru", 8, 3, 0 } };
  g_autofree char *ort = ort_module (), *node = g_find_program_in_path ("node");
  g_autofree char *dir = g_dir_make_tmp ("onnx-seq-tpl-XXXXXX", NULL);
  g_autoptr (GPtrArray) jobs = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GPtrArray) want = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GArray) lens = g_array_new (FALSE, FALSE, sizeof (int64_t));
  g_autoptr (GPtrArray) got = NULL;
  if (!ort || !node)
    {
      g_test_skip ("onnxruntime-node or node not found");
      return;
    }
  for (gsize i = 0; i < G_N_ELEMENTS (templates); i++)
    {
      g_autoptr (NlNetwork) net = nl_test_load_template (templates[i].name);
      g_autoptr (GError) error = NULL;
      g_autoptr (NlModel) m = NULL;
      int64_t steps = templates[i].steps, per = templates[i].features ? templates[i].features : 1, numel = B * steps * per, n_want;
      NlShape s = templates[i].features ? nl_shape_of (2, steps, templates[i].features) : nl_shape_of (1, steps);
      char *path = g_strdup_printf ("%s/%s.onnx", dir, templates[i].name), *in = g_strdup_printf ("%s.x", path);
      g_autofree float *x = g_new0 (float, numel);
      float *y;
      m = nl_model_new_full (net, &s, &(NlModelOptions) { .seed = 9 }, &error);
      g_assert_no_error (error);
      for (int64_t b = 0; b < B; b++)
        for (int64_t t = 0; t < steps; t++)
          for (int64_t c = 0; c < per; c++)
            /* token ids: sample b padded after T - 3b steps */
            x[(b * steps + t) * per + c] = templates[i].features ? (float) sin (0.7 * b + 0.5 * t + c)
                                       : t < steps - 3 * b ? (float) (1 + (b * 7 + t * 5) % (templates[i].vocab - 1)) : 0.0f;
      g_assert_true (nl_onnx_export_file (m, &(NlOnnxExportOptions) { .opset = 17 }, path, &error));
      g_assert_no_error (error);
      g_assert_true (g_file_set_contents (in, (const char *) x, numel * sizeof (float), NULL));
      g_ptr_array_add (jobs, path);
      g_ptr_array_add (jobs, in);
      g_ptr_array_add (jobs, templates[i].features ? g_strdup_printf ("%d,%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT, B, steps, per)
                                            : g_strdup_printf ("%d,%" G_GINT64_FORMAT, B, steps));
      y = run_netloom (m, x, B, &n_want);
      g_ptr_array_add (want, y);
      g_array_append_val (lens, n_want);
    }
  got = run_ort (ort, jobs);
  for (guint k = 0; k < got->len; k++)
    {
      GArray *g = g_ptr_array_index (got, k);
      double d;
      g_assert_cmpuint (g->len, ==, g_array_index (lens, int64_t, k));
      d = max_diff ((const float *) g->data, g_ptr_array_index (want, k), g->len);
      g_test_message ("template %s: max difference %g", templates[k].name, d);
      if (d > 1e-5)
        g_error ("template %s: onnxruntime differs from netloom by %g", templates[k].name, d);
    }
  nl_test_remove_tree (dir);
}

/* The vocabulary is the model's metadata "netloom.vocab". */
static void
test_export_vocab (void)
{
  g_autoptr (NlModel) m = export_case_model (&export_cases[G_N_ELEMENTS (export_cases) - 1], TRUE);
  const char *vocab = "{\"format\":\"netloom.vocab\",\"tokens\":[\"<pad>\",\"<unk>\",\"é\"]}";
  NlOnnxExportOptions o = { .vocab = vocab };
  g_autoptr (GError) error = NULL;
  g_autoptr (GBytes) bytes = nl_onnx_export (m, &o, &error);
  Onnx__ModelProto *mp;
  gsize size;
  const guint8 *data;
  gboolean found = FALSE;
  g_assert_no_error (error);
  data = g_bytes_get_data (bytes, &size);
  mp = onnx__model_proto__unpack (NULL, size, data);
  g_assert_nonnull (mp);
  for (size_t k = 0; k < mp->n_metadata_props; k++)
    if (!strcmp (mp->metadata_props[k]->key, "netloom.vocab"))
      {
        g_assert_cmpstr (mp->metadata_props[k]->value, ==, vocab);
        found = TRUE;
      }
  onnx__model_proto__free_unpacked (mp, NULL);
  g_assert_true (found);
}

/* netloom's own LSTM/GRU exports import back (the lengths subgraph as the
 * Input's lengths nonzero) to the same outputs on padded samples. */
static void
test_round_trip (void)
{
  static const char *const names[] = { "lstm-all", "lstm-last", "lstm-1", "gru-all", "gru-classic-last", "text" };
  for (gsize i = 0; i < G_N_ELEMENTS (names); i++)
    {
      const ExportCase *ec = NULL;
      g_autoptr (NlModel) m = NULL, back = NULL;
      g_autoptr (GError) error = NULL;
      g_autoptr (GBytes) bytes = NULL;
      g_autoptr (NlOnnxImport) imp = NULL;
      g_autofree float *a = NULL, *b = NULL;
      float x[B * T * C];
      int64_t na, nb;
      gsize size;
      const void *data;
      NlNode *input;
      for (gsize e = 0; e < G_N_ELEMENTS (export_cases); e++)
        if (!strcmp (export_cases[e].name, names[i]))
          ec = &export_cases[e];
      m = export_case_model (ec, TRUE);
      bytes = nl_onnx_export (m, NULL, &error);
      g_assert_no_error (error);
      data = g_bytes_get_data (bytes, &size);
      imp = nl_onnx_import_data (data, size, NULL, NULL, &error);
      if (!imp && !strcmp (names[i], "text"))
        {
          /* SequencePool's masked mean is a subgraph the importer does not read back */
          g_assert_true (g_error_matches (error, NL_ONNX_ERROR, NL_ONNX_ERROR_UNSUPPORTED));
          g_test_message ("text refused: %s", error->message);
          continue;
        }
      g_assert_no_error (error);
      back = nl_onnx_import_new_model (imp, NULL, &error);
      g_assert_no_error (error);
      input = nl_network_node (back->net, 0);
      g_assert_cmpstr (input->def->name, ==, "Input");
      g_assert_cmpint (input->params[nl_op_param_index (input->def, "lengths")].i, ==, 1); /* nonzero */
      export_case_input (ec, TRUE, x);
      a = run_netloom (m, x, B, &na);
      b = run_netloom (back, x, B, &nb);
      g_assert_cmpint (na, ==, nb);
      g_test_message ("%s: round trip max difference %g", names[i], max_diff (b, a, na));
      g_assert_cmpfloat (max_diff (b, a, na), <, 1e-5);
    }
}

/* ---- import: libonnx-testdata ---- */

/* the node tests refused, and why (every other LSTM/GRU test must reproduce) */
static const char *const refused[] = { "test_lstm_with_peepholes", "peepholes", NULL };

static NlOnnxConst *
read_tensor (const char *path, char **name, GBytes **bytes)
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
  g_assert_no_error (error);
  if (name)
    *name = g_strdup (t->name);
  onnx__tensor_proto__free_unpacked (t, NULL);
  if (bytes)
    *bytes = g_bytes_new_take (g_steal_pointer (&data), size);
  return c;
}

/* Test dir: X (input_0) is the data, every other input bound. Returns the
 * error message when refused (NULL when it reproduced). */
static char *
run_rnn_node_test (const char *dir)
{
  g_autofree char *model_path = g_build_filename (dir, "model.onnx", NULL), *model = NULL;
  g_autofree char *out_path = g_build_filename (dir, "test_data_set_0", "output_0.pb", NULL);
  g_autoptr (GHashTable) bound = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, (GDestroyNotify) g_bytes_unref);
  g_autoptr (NlOnnxConst) x = NULL, expected = NULL;
  g_autoptr (NlOnnxImport) imp = NULL;
  g_autoptr (NlModel) m = NULL;
  g_autoptr (GError) error = NULL;
  g_autofree float *xin = NULL, *got = NULL;
  gboolean time_major;
  int64_t n_got, N;
  gsize size;

  g_assert_true (g_file_get_contents (model_path, &model, &size, NULL));
  for (int k = 0;; k++)
    {
      g_autofree char *base = g_strdup_printf ("input_%d.pb", k), *name = NULL;
      g_autofree char *p = g_build_filename (dir, "test_data_set_0", base, NULL);
      GBytes *bytes = NULL;
      NlOnnxConst *c;
      if (!g_file_test (p, G_FILE_TEST_EXISTS))
        break;
      c = read_tensor (p, &name, &bytes);
      if (k == 0)
        {
          x = c;
          g_bytes_unref (bytes);
          continue;
        }
      nl_onnx_const_free (c);
      g_hash_table_insert (bound, g_steal_pointer (&name), bytes);
    }
  expected = read_tensor (out_path, NULL, NULL);
  imp = nl_onnx_import_data (model, size, dir, bound, &error);
  if (!imp)
    {
      g_assert_true (g_error_matches (error, NL_ONNX_ERROR, NL_ONNX_ERROR_UNSUPPORTED));
      return g_strdup (error->message);
    }
  m = nl_onnx_import_new_model (imp, NULL, &error);
  g_assert_no_error (error);
  /* a time-major (T, N, C) X is fed batch-first, as the import says */
  time_major = nl_onnx_import_get_metadata (imp, "netloom.input_layout") != NULL;
  N = time_major ? x->shape.d[1] : x->shape.d[0];
  xin = g_new (float, x->numel);
  for (int64_t a = 0; a < x->shape.d[0]; a++)
    for (int64_t b = 0; b < x->shape.d[1]; b++)
      for (int64_t c = 0; c < x->shape.d[2]; c++)
        {
          int64_t src = (a * x->shape.d[1] + b) * x->shape.d[2] + c;
          int64_t dst = time_major ? (b * x->shape.d[0] + a) * x->shape.d[2] + c : src;
          xin[dst] = (float) nl_onnx_const_get (x, src);
        }
  got = run_netloom (m, xin, (int) N, &n_got);
  g_assert_cmpint (n_got, ==, expected->numel);
  for (int64_t k = 0; k < n_got; k++)
    if (fabs (got[k] - nl_onnx_const_get (expected, k)) > 1e-5)
      g_error ("%s: value %" G_GINT64_FORMAT " is %g, expected %g", dir, k, got[k], nl_onnx_const_get (expected, k));
  return NULL;
}

static void
test_node_tests (void)
{
  g_autoptr (GDir) d = NULL;
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
      const char *must_refuse = NULL;
      if (!g_str_has_prefix (name, "test_lstm") && !g_str_has_prefix (name, "test_gru"))
        continue;
      for (int k = 0; refused[k]; k += 2)
        if (!strcmp (refused[k], name))
          must_refuse = refused[k + 1];
      why = run_rnn_node_test (dir);
      if (must_refuse)
        {
          if (!why || !strstr (why, must_refuse) || !strstr (why, "cannot be imported"))
            g_error ("%s should be refused for %s: %s", name, must_refuse, why ? why : "it imported");
          g_test_message ("%s refused: %s", name, why);
          n_refused++;
          continue;
        }
      if (why)
        g_error ("%s is refused: %s", name, why);
      g_test_message ("%s reproduced", name);
      n_pass++;
    }
  g_test_message ("%d LSTM/GRU node tests reproduced, %d refused", n_pass, n_refused);
  g_assert_cmpint (n_pass, >=, 7);
  g_assert_cmpint (n_refused, ==, 1);
}

/* ---- import: PyTorch's exports ---- */

static void
test_torch (void)
{
  g_autofree char *dir = g_dir_make_tmp ("onnx-seq-torch-XXXXXX", NULL), *script = NULL, *err = NULL;
  g_autofree char *list = NULL, *listing = NULL;
  g_auto (GStrv) lines = NULL;
  g_autoptr (GError) error = NULL;
  int status, n_checked = 0;
  const char *argv[] = { "/usr/bin/python3", NULL, NULL, NULL };

  script = nl_test_source_path ("tests/torch_onnx_seq_models.py");
  argv[1] = script;
  argv[2] = dir;
  if (!g_file_test (argv[0], G_FILE_TEST_IS_EXECUTABLE))
    {
      g_test_skip ("no /usr/bin/python3 (with PyTorch 1.13)");
      return;
    }
  g_assert_true (g_spawn_sync (NULL, (char **) argv, NULL, 0, NULL, NULL, NULL, &err, &status, &error));
  if (g_spawn_check_wait_status (status, NULL) == FALSE)
    {
      if (WIFEXITED (status) && WEXITSTATUS (status) == 77)
        {
          g_test_skip (err);
          return;
        }
      g_error ("torch_onnx_seq_models.py: %s", err);
    }
  list = g_build_filename (dir, "models.txt", NULL);
  g_assert_true (g_file_get_contents (list, &listing, NULL, NULL));
  lines = g_strsplit (listing, "\n", -1);
  for (int i = 0; lines[i] && *lines[i]; i++)
    {
      g_auto (GStrv) f = g_strsplit (lines[i], " ", 3);
      g_autofree char *onnx = g_strdup_printf ("%s/%s.onnx", dir, f[0]), *xp = g_strdup_printf ("%s/%s.x", dir, f[0]);
      g_autofree char *yp = g_strdup_printf ("%s/%s.y", dir, f[0]);
      g_autofree char *x = NULL, *y = NULL;
      g_autofree float *got = NULL;
      g_autoptr (NlOnnxImport) imp = NULL;
      g_autoptr (NlModel) m = NULL;
      g_autoptr (GError) e = NULL;
      gsize nx, ny;
      int64_t n_got;
      g_assert_true (g_file_get_contents (xp, &x, &nx, NULL));
      g_assert_true (g_file_get_contents (yp, &y, &ny, NULL));
      imp = nl_onnx_import_file (onnx, &e);
      g_assert_no_error (e);
      {
        g_autoptr (GString) s = g_string_new (NULL);
        NlNetwork *net = nl_onnx_import_get_network (imp);
        int rnn = 0;
        for (int k = 0; k < nl_network_n_nodes (net); k++)
          {
            const NlNode *nn = nl_network_node (net, k);
            g_string_append_printf (s, "%s ", nn->def->name);
            if (!strcmp (nn->def->name, "LSTM") || !strcmp (nn->def->name, "GRU"))
              {
                rnn++;
                g_string_append_printf (s, "(layers %" G_GINT64_FORMAT ") ",
                                        nn->params[nl_op_param_index (nn->def, "layers")].i);
              }
          }
        g_test_message ("%s imports as: %s", f[0], s->str);
        /* the attention subgraph is one MultiHeadAttention, LayerNorm's formula one LayerNorm */
        if (g_str_has_prefix (f[0], "encoder"))
          g_assert_true (strstr (s->str, "MultiHeadAttention") && strstr (s->str, "LayerNorm"));
        /* PyTorch's chain of one node per layer comes back as one node of 2 layers */
        if (strchr (f[0], '2'))
          g_assert_true (rnn == 1 && strstr (s->str, "(layers 2)"));
      }
      m = nl_onnx_import_new_model (imp, NULL, &e);
      g_assert_no_error (e);
      got = run_netloom (m, (const float *) x, (int) g_ascii_strtoll (f[1], NULL, 10), &n_got);
      g_assert_cmpint (n_got * sizeof (float), ==, ny);
      g_test_message ("%s: max difference from PyTorch %g", f[0], max_diff (got, (const float *) y, n_got));
      if (max_diff (got, (const float *) y, n_got) > 1e-5)
        g_error ("%s: netloom differs from PyTorch by %g", f[0], max_diff (got, (const float *) y, n_got));
      n_checked++;
    }
  g_assert_cmpint (n_checked, ==, 9);
  nl_test_remove_tree (dir);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/onnx-seq/export", test_export);
  g_test_add_func ("/onnx-seq/export-templates", test_export_templates);
  g_test_add_func ("/onnx-seq/export-vocab", test_export_vocab);
  g_test_add_func ("/onnx-seq/round-trip", test_round_trip);
  g_test_add_func ("/onnx-seq/node-tests", test_node_tests);
  g_test_add_func ("/onnx-seq/torch", test_torch);
  return g_test_run ();
}
