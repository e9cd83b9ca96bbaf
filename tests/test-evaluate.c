/* test-evaluate.c — nl_evaluate_run and image predictions against a run
 * trained here: a tiny network on a generated 20x20, 10-class IDX dataset
 * (noisy enough that some test samples are misclassified). The matrix is
 * checked against the run's stored test accuracy and against an
 * independent loop of batch-1 inference; the scores against hand-computed
 * ones; a PNG written from a test sample is classified as that sample;
 * bad inputs give one error naming the thing. */
#include <glib/gstdio.h>
#include <math.h>
#include <png.h>
#include <string.h>

#include "engine/formats/nl-checkpoint.h"
#include "engine/session/nl-evaluate.h"
#include "tests/nl-test-util.h"

#define SIDE NL_TEST_IDX_SIDE
#define N_TEST 250     /* eval batches of 100: a kept short last batch of 50 */

static char *data_dir, *work_dir, *project_path;
static NlProject *project;
static gint64 run_id;

static const char *net_json =
  "{\"format\":\"netloom.network\",\"version\":1,\"name\":\"tiny\",\"nodes\":["
  "{\"id\":\"data\",\"op\":\"Input\",\"params\":{\"shape\":[1,20,20]}},{\"id\":\"flat\",\"op\":\"Flatten\"},"
  "{\"id\":\"fc1\",\"op\":\"Dense\",\"params\":{\"units\":16}},"
  "{\"id\":\"act\",\"op\":\"Activation\"},{\"id\":\"fc2\",\"op\":\"Dense\",\"params\":{\"units\":10}}],"
  "\"edges\":[\"data -> flat\",\"flat -> fc1\",\"fc1 -> act\",\"act -> fc2\"]}";

static char *
dataset_spec (void)
{
  return g_strdup_printf ("mnist:%s", data_dir);
}

static gint64
train_run (const char *network)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (NlNetwork) net = nl_network_load_data (network, -1, &error);
  g_autofree char *spec = dataset_spec ();
  g_auto (NlRunConfig) cfg = { 0 };
  gint64 run = 0;

  g_assert_no_error (error);
  nl_test_tiny_train_config (&cfg, spec);
  cfg.threads = 1;
  g_assert_true (nl_run_train (project, "tiny", net, &cfg, NULL, &run, &error));
  g_assert_no_error (error);
  return run;
}

/* ---- an independent reference: batch-1 inference, sample by sample ----
 * output: what the network's outputs are: 0 scores (softmaxed here),
 * 1 probabilities, 2 log-probabilities. */

typedef struct {
  int *pred;      /* per test sample */
  double *prob;   /* per test sample, 10 softmax probabilities */
  int64_t confusion[100];
} Reference;

static void
reference_of (gint64 run, const char *network, int output, const char *which, Reference *ref)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (NlNetwork) net = nl_network_load_data (network, -1, &error);
  g_autofree char *spec = dataset_spec ();
  g_autoptr (NlDataset) ds = nl_dataset_open (spec, FALSE, &error);
  g_autoptr (NlModel) model = NULL;
  g_autoptr (NlProgram) prog = NULL;
  g_autoptr (GBytes) blob = NULL;
  NlCompileOptions co = { .batch = 1 };
  NlOptimConfig sgd;
  g_auto (NlRunConfig) defaults = { 0 };
  gint64 ckpt;

  g_assert_no_error (error);
  g_assert_cmpint (ds->length, ==, N_TEST);
  nl_run_config_init (&defaults); /* the run used the default mean and std */
  nl_optim_config_init (&sgd, NL_OPTIM_SGD);
  model = nl_model_new_full (net, &ds->sample_shape, &(NlModelOptions) { .optim = &sgd }, &error);
  g_assert_no_error (error);
  ckpt = nl_project_find_checkpoint (project, run, which, &error);
  g_assert_no_error (error);
  blob = nl_project_load_checkpoint (project, ckpt, NULL, NULL, NULL, &error);
  g_assert_no_error (error);
  g_assert_true (nl_checkpoint_load (model, blob, FALSE, NULL, &error));
  prog = nl_program_new (model, &co, &error);
  g_assert_no_error (error);

  memset (ref, 0, sizeof *ref);
  ref->pred = g_new (int, N_TEST);
  ref->prob = g_new (double, N_TEST * 10);
  for (int i = 0; i < N_TEST; i++)
    {
      float *x = nl_tensor_f32 (nl_program_input (prog)), label;
      const float *out;
      double max = -INFINITY, sum = 0;
      int best = 0;
      g_assert_true (nl_dataset_get (ds, i, x, &label, &error));
      for (int k = 0; k < SIDE * SIDE; k++)
        x[k] = (x[k] - defaults.mean) / defaults.std;
      g_assert_true (nl_program_forward (prog, 0, &error));
      g_assert_no_error (error);
      out = nl_tensor_f32 (nl_program_pred (prog));
      for (int c = 0; c < 10; c++)
        {
          max = MAX (max, out[c]);
          if (out[c] > out[best])
            best = c;
        }
      for (int c = 0; c < 10; c++)
        sum += ref->prob[i * 10 + c] = output == 1 ? out[c] : exp (output == 2 ? out[c] : out[c] - max);
      for (int c = 0; c < 10; c++)
        ref->prob[i * 10 + c] /= sum;
      ref->pred[i] = best;
      ref->confusion[(int) label * 10 + best]++;
    }
}

static void
reference (const char *which, Reference *ref)
{
  reference_of (run_id, net_json, 0, which, ref);
}

static void
reference_clear (Reference *ref)
{
  g_free (ref->pred);
  g_free (ref->prob);
}

static double
stored_test_accuracy (int epoch)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GArray) rows = nl_project_get_metrics (project, run_id, "accuracy", 0, NULL, &error);
  g_assert_no_error (error);
  for (guint i = 0; i < rows->len; i++)
    {
      NlMetricRow *r = &g_array_index (rows, NlMetricRow, i);
      if (r->epoch == epoch && !strcmp (r->split, "test"))
        return r->value;
    }
  g_assert_not_reached ();
  return NAN;
}

static void
progress_cb (gpointer user, double fraction)
{
  GArray *seen = user;
  g_array_append_val (seen, fraction);
}

static void
check_evaluation (const char *which)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GArray) fractions = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr (NlEvaluation) ev = nl_evaluate_run (project, run_id, which, -1, NULL, progress_cb, fractions, &error);
  Reference ref;
  int64_t total = 0, diag = 0, wrong = 0;
  double macro = 0, weighted = 0;
  int n;

  g_assert_no_error (error);
  g_assert_nonnull (ev);
  n = ev->n_classes;
  g_assert_cmpint (n, ==, 10);
  g_assert_cmpstr (ev->class_names[0], ==, "0");
  g_assert_cmpstr (ev->class_names[9], ==, "9");
  g_assert_null (ev->class_names[10]);
  g_assert_cmpint (ev->sample_shape.ndim, ==, 3);
  g_assert_cmpint (ev->sample_shape.d[2], ==, SIDE);
  /* batches of 100, 100, 50 */
  g_assert_cmpuint (fractions->len, ==, 3);
  g_assert_cmpfloat (g_array_index (fractions, double, 0), ==, 0.4);
  g_assert_cmpfloat (g_array_index (fractions, double, 2), ==, 1.0);

  for (int t = 0; t < n; t++)
    for (int p = 0; p < n; p++)
      {
        total += ev->confusion[t * n + p];
        diag += t == p ? ev->confusion[t * n + p] : 0;
      }
  g_assert_cmpint (total, ==, N_TEST);
  g_assert_cmpint (ev->n_samples, ==, N_TEST);
  g_assert_cmpint (ev->n_correct, ==, diag);
  g_assert_cmpfloat (ev->accuracy, ==, (double) diag / total);
  g_test_message ("%s (epoch %d): accuracy %.3f, macro F1 %.3f, %d mistakes", which, ev->epoch, ev->accuracy,
                  ev->macro_f1, ev->n_misclassified);
  /* the noise makes it neither trivial nor hopeless, so mistakes exist */
  g_assert_cmpint (diag, >, N_TEST / 5);
  g_assert_cmpint (diag, <, N_TEST);
  /* what the trainer measured for that epoch */
  g_assert_cmpfloat_with_epsilon (ev->accuracy, stored_test_accuracy (ev->epoch), 1e-6);

  /* the same matrix as batch-1 inference, sample by sample */
  reference (which, &ref);
  for (int k = 0; k < n * n; k++)
    g_assert_cmpint (ev->confusion[k], ==, ref.confusion[k]);

  /* per-class scores by hand */
  for (int c = 0; c < n; c++)
    {
      int64_t tp = ev->confusion[c * n + c], col = 0, row = 0;
      double p, r, f;
      for (int k = 0; k < n; k++)
        {
          col += ev->confusion[k * n + c];
          row += ev->confusion[c * n + k];
        }
      p = col ? (double) tp / col : 0;
      r = row ? (double) tp / row : 0;
      f = p + r > 0 ? 2 * p * r / (p + r) : 0;
      g_assert_cmpint (ev->support[c], ==, row);
      g_assert_cmpfloat_with_epsilon (ev->precision[c], p, 1e-12);
      g_assert_cmpfloat_with_epsilon (ev->recall[c], r, 1e-12);
      g_assert_cmpfloat_with_epsilon (ev->f1[c], f, 1e-12);
      g_assert_cmpint (row, ==, N_TEST / 10); /* labels cycle through the classes */
      macro += f;
      weighted += f * row;
    }
  g_assert_cmpfloat_with_epsilon (ev->macro_f1, macro / n, 1e-12);
  g_assert_cmpfloat_with_epsilon (ev->weighted_f1, weighted / N_TEST, 1e-12);

  /* every mistake, most confident first, each one the matrix counts */
  wrong = N_TEST - diag;
  g_assert_cmpint (ev->n_misclassified, ==, wrong);
  {
    int64_t off[100] = { 0 };
    for (int i = 0; i < ev->n_misclassified; i++)
      {
        const NlMisclassified *m = &ev->misclassified[i];
        g_assert_cmpint (m->truth, !=, m->predicted);
        g_assert_cmpint (ref.pred[m->index], ==, m->predicted);
        g_assert_cmpfloat_with_epsilon (m->confidence, ref.prob[m->index * 10 + m->predicted], 1e-5);
        g_assert_cmpfloat (m->confidence, >=, 0.1 - 1e-9); /* the argmax of 10 */
        if (i > 0)
          g_assert_cmpfloat (ev->misclassified[i - 1].confidence, >=, m->confidence);
        off[m->truth * n + m->predicted]++;
      }
    for (int t = 0; t < n; t++)
      for (int p = 0; p < n; p++)
        if (t != p)
          g_assert_cmpint (off[t * n + p], ==, ev->confusion[t * n + p]);
  }

  /* samples come back as the dataset has them */
  {
    g_autofree char *spec = dataset_spec ();
    g_autoptr (NlDataset) ds = nl_dataset_open (spec, FALSE, &error);
    float a[SIDE * SIDE], b[SIDE * SIDE], label;
    NlShape shape;
    int64_t i = ev->misclassified[0].index;
    g_assert_true (nl_evaluation_get_sample (ev, i, a, &shape, &error));
    g_assert_true (nl_dataset_get (ds, i, b, &label, &error));
    g_assert_no_error (error);
    g_assert_true (nl_shape_equal (&shape, &ds->sample_shape));
    g_assert_cmpmem (a, sizeof a, b, sizeof b);
    g_assert_cmpint ((int) label, ==, ev->misclassified[0].truth);
  }
  reference_clear (&ref);
}

static void
test_best (void)
{
  check_evaluation ("best");
}

static void
test_last (void)
{
  check_evaluation ("last");
}

static void
test_limit_and_cancel (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (NlEvaluation) all = nl_evaluate_run (project, run_id, "last", -1, NULL, NULL, NULL, &error);
  g_autoptr (NlEvaluation) few = nl_evaluate_run (project, run_id, "last", 3, NULL, NULL, NULL, &error);
  g_autoptr (GCancellable) cancel = g_cancellable_new ();
  NlEvaluation *none;

  g_assert_no_error (error);
  g_assert_cmpint (all->n_misclassified, >, 3);
  g_assert_cmpint (few->n_misclassified, ==, 3);
  for (int i = 0; i < 3; i++)
    {
      g_assert_cmpint (few->misclassified[i].index, ==, all->misclassified[i].index);
      g_assert_cmpfloat (few->misclassified[i].confidence, ==, all->misclassified[i].confidence);
    }
  g_cancellable_cancel (cancel);
  none = nl_evaluate_run (project, run_id, "last", 3, cancel, NULL, NULL, &error);
  g_assert_null (none);
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
}

/* A network that ends in Softmax: its outputs are the probabilities (not
 * softmaxed again); in LogSoftmax, their logarithms. */
static void
test_probability_outputs (void)
{
  static const char *const ops[] = { "Softmax", "LogSoftmax" };
  for (int k = 0; k < 2; k++)
    {
      g_autoptr (GError) error = NULL;
      g_autoptr (GString) net = g_string_new (net_json);
      g_autoptr (NlEvaluation) ev = NULL;
      g_autofree char *node = g_strdup_printf (",{\"id\":\"prob\",\"op\":\"%s\"}", ops[k]);
      const char *fc2 = "\"units\":10}}";
      Reference ref;
      gint64 run;

      g_string_insert (net, strstr (net->str, fc2) + strlen (fc2) - net->str, node);
      g_string_replace (net, "\"edges\":[", "\"edges\":[\"fc2 -> prob\",", 1);
      run = train_run (net->str);
      ev = nl_evaluate_run (project, run, "last", -1, NULL, NULL, NULL, &error);
      g_assert_no_error (error);
      reference_of (run, net->str, k + 1, "last", &ref);
      for (int c = 0; c < 100; c++)
        g_assert_cmpint (ev->confusion[c], ==, ref.confusion[c]);
      g_assert_cmpint (ev->n_misclassified, >, 0);
      for (int i = 0; i < ev->n_misclassified; i++)
        {
          const NlMisclassified *m = &ev->misclassified[i];
          g_assert_cmpint (ref.pred[m->index], ==, m->predicted);
          g_assert_cmpfloat_with_epsilon (m->confidence, ref.prob[m->index * 10 + m->predicted], 1e-5);
        }
      reference_clear (&ref);
    }
}

/* ---- images ---- */

static void
write_png (const char *path, const guint8 *gray, int w, int h, int scale)
{
  FILE *f = fopen (path, "wb");
  png_structp png = png_create_write_struct (PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
  png_infop info = png_create_info_struct (png);
  g_autofree guint8 *row = g_malloc ((gsize) w * scale);
  g_assert_nonnull (f);
  png_init_io (png, f);
  png_set_IHDR (png, info, w * scale, h * scale, 8, PNG_COLOR_TYPE_GRAY, PNG_INTERLACE_NONE,
                PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  png_write_info (png, info);
  for (int y = 0; y < h * scale; y++)
    {
      for (int x = 0; x < w * scale; x++)
        row[x] = gray[(y / scale) * w + x / scale];
      png_write_row (png, row);
    }
  png_write_end (png, NULL);
  png_destroy_write_struct (&png, &info);
  fclose (f);
}

/* Sample i of the test split as a grayscale PNG (each pixel scale x scale). */
static char *
sample_png (int64_t i, int scale)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *spec = dataset_spec ();
  g_autoptr (NlDataset) ds = nl_dataset_open (spec, FALSE, &error);
  g_autofree char *name = g_strdup_printf ("sample-%" G_GINT64_FORMAT "-x%d.png", i, scale);
  char *path = g_build_filename (work_dir, name, NULL);
  float x[SIDE * SIDE], label;
  guint8 gray[SIDE * SIDE];
  g_assert_true (nl_dataset_get (ds, i, x, &label, &error));
  for (int k = 0; k < SIDE * SIDE; k++)
    gray[k] = (guint8) lrintf (x[k] * 255.0f);
  write_png (path, gray, SIDE, SIDE, scale);
  return path;
}

static void
test_predict_image (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (NlEvaluation) ev = nl_evaluate_run (project, run_id, "best", -1, NULL, NULL, NULL, &error);
  Reference ref;

  g_assert_no_error (error);
  reference ("best", &ref);
  /* a mistake and a correct one: the file is classified as its sample */
  for (int pick = 0; pick < 2; pick++)
    {
      int64_t i = 0;
      if (pick == 0)
        i = ev->misclassified[0].index;
      else
        while (ref.pred[i] != (int) ((i * 7 + 3) % 10))
          i++;
      g_autofree char *png = sample_png (i, 1);
      g_autofree double *probs = NULL, *probs2 = NULL;
      g_autofree float *seen = NULL;
      g_auto (GStrv) names = NULL;
      double sum = 0;
      int best = 0, n = 0;
      float x[SIDE * SIDE];

      g_assert_true (nl_evaluation_predict_image_file (ev, png, &probs, &seen, &error));
      g_assert_no_error (error);
      for (int c = 0; c < 10; c++)
        {
          sum += probs[c];
          best = probs[c] > probs[best] ? c : best;
          g_assert_cmpfloat_with_epsilon (probs[c], ref.prob[i * 10 + c], 1e-6);
        }
      g_assert_cmpfloat_with_epsilon (sum, 1.0, 1e-9);
      g_assert_cmpint (best, ==, ref.pred[i]);
      /* the model saw the sample itself */
      g_assert_true (nl_evaluation_get_sample (ev, i, x, NULL, &error));
      g_assert_cmpmem (seen, sizeof x, x, sizeof x);

      /* the same without an evaluation */
      g_assert_true (nl_predict_image_file (project, run_id, "best", png, &probs2, &n, &names, &error));
      g_assert_no_error (error);
      g_assert_cmpint (n, ==, 10);
      g_assert_cmpuint (g_strv_length (names), ==, 10);
      for (int c = 0; c < 10; c++)
        g_assert_cmpfloat_with_epsilon (probs2[c], probs[c], 1e-9);
    }

  /* an image of another size is resized: still 10 probabilities summing to 1,
   * and a 2x nearest upscale of a sample comes back as that sample */
  {
    g_autofree char *png = sample_png (7, 2);
    g_autofree double *probs = NULL;
    g_autofree float *seen = NULL;
    float x[SIDE * SIDE];
    double sum = 0;
    g_assert_true (nl_evaluation_predict_image_file (ev, png, &probs, &seen, &error));
    g_assert_no_error (error);
    for (int c = 0; c < 10; c++)
      sum += probs[c];
    g_assert_cmpfloat_with_epsilon (sum, 1.0, 1e-9);
    g_assert_true (nl_evaluation_get_sample (ev, 7, x, NULL, &error));
    nl_test_assert_close (seen, x, SIDE * SIDE, 1.0 / 255 + 1e-6, 0);
  }
  reference_clear (&ref);
}

/* ---- bad inputs ---- */

static void
assert_error_mentions (const GError *error, const char *a, const char *b)
{
  g_assert_nonnull (error);
  if (!strstr (error->message, a) || (b && !strstr (error->message, b)))
    g_error ("error “%s” should mention “%s”%s%s", error->message, a, b ? " and " : "", b ? b : "");
}

/* A finished run of NETWORK over DATASET holding a copy of the trained run's
 * last checkpoint (checkpoint FALSE: none). */
static gint64
make_run (const char *network, const char *dataset, gboolean checkpoint)
{
  g_autoptr (GError) error = NULL;
  NlRunConfig rc;
  g_autofree char *hp = NULL;
  gint64 run;
  nl_run_config_init (&rc);
  nl_run_config_set_text (&rc.dataset, dataset);
  hp = nl_run_config_to_json (&rc);
  nl_run_config_clear (&rc);
  NlRunInfo info = { .name = (char *) "made", .network_name = (char *) "tiny", .network_json = (char *) network,
                     .hparams_json = hp, .device = (char *) "cpu", .status = (char *) "finished" };
  run = nl_project_create_run (project, &info, &error);
  g_assert_no_error (error);
  if (checkpoint)
    {
      gint64 ckpt = nl_project_find_checkpoint (project, run_id, "last", &error);
      g_autoptr (GBytes) blob = nl_project_load_checkpoint (project, ckpt, NULL, NULL, NULL, &error);
      g_assert_no_error (error);
      g_assert_cmpint (nl_project_add_checkpoint (project, run, 1, 1, g_bytes_get_data (blob, NULL),
                                                  g_bytes_get_size (blob), "test_accuracy", 0.5, TRUE, 0, &error),
                       >, 0);
      g_assert_no_error (error);
    }
  return run;
}

static void
test_errors (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *spec = dataset_spec ();
  g_autofree char *png = sample_png (0, 1);
  g_autofree char *missing_png = g_build_filename (work_dir, "nowhere.png", NULL);
  g_autofree char *text = g_build_filename (work_dir, "notes.png", NULL);
  g_autofree double *probs = NULL;
  g_autoptr (NlEvaluation) ev = NULL;
  int n = 0;
  gint64 bare, gone, broken;

  /* a run that does not exist */
  g_assert_null (nl_evaluate_run (project, 999, "best", 10, NULL, NULL, NULL, &error));
  g_assert_error (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_NOT_FOUND);
  assert_error_mentions (error, "no run 999", NULL);
  g_clear_error (&error);
  g_assert_false (nl_predict_image_file (project, 999, "best", png, &probs, &n, NULL, &error));
  g_assert_error (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_NOT_FOUND);
  g_clear_error (&error);

  /* a run without checkpoints; a bad checkpoint name */
  bare = make_run (net_json, spec, FALSE);
  g_assert_null (nl_evaluate_run (project, bare, "best", 10, NULL, NULL, NULL, &error));
  g_assert_error (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_NOT_FOUND);
  assert_error_mentions (error, "has no best checkpoint", NULL);
  g_clear_error (&error);
  g_assert_null (nl_evaluate_run (project, run_id, "42", 10, NULL, NULL, NULL, &error));
  assert_error_mentions (error, "no checkpoint of epoch 42", NULL);
  g_clear_error (&error);

  /* the dataset is not on this machine: no evaluation, but the Input's
   * shape still lets an image be classified (classes named by number) */
  gone = make_run (net_json, "mnist:/nonexistent/netloom-data", TRUE);
  g_assert_null (nl_evaluate_run (project, gone, "best", 10, NULL, NULL, NULL, &error));
  g_assert_error (error, NL_DATA_ERROR, NL_DATA_ERROR_NOT_FOUND);
  assert_error_mentions (error, "mnist:/nonexistent/netloom-data", "not available on this machine");
  g_clear_error (&error);
  {
    g_autofree double *p = NULL;
    g_auto (GStrv) names = NULL;
    g_assert_true (nl_predict_image_file (project, gone, "best", png, &p, &n, &names, &error));
    g_assert_no_error (error);
    g_assert_cmpint (n, ==, 10);
    g_assert_cmpstr (names[3], ==, "3");
  }

  /* a network snapshot that no longer builds */
  broken = make_run ("{\"format\":\"netloom.network\",\"version\":1,\"name\":\"tiny\",\"nodes\":["
                     "{\"id\":\"data\",\"op\":\"Input\"},{\"id\":\"x\",\"op\":\"NoSuchOp\"}],"
                     "\"edges\":[\"data -> x\"]}", spec, TRUE);
  g_assert_null (nl_evaluate_run (project, broken, "best", 10, NULL, NULL, NULL, &error));
  assert_error_mentions (error, "network snapshot", "NoSuchOp");
  g_clear_error (&error);

  /* images: missing, not an image, a folder */
  ev = nl_evaluate_run (project, run_id, "best", 10, NULL, NULL, NULL, &error);
  g_assert_no_error (error);
  g_assert_false (nl_evaluation_predict_image_file (ev, missing_png, &probs, NULL, &error));
  g_assert_error (error, NL_DATA_ERROR, NL_DATA_ERROR_NOT_FOUND);
  assert_error_mentions (error, missing_png, "no such file");
  g_clear_error (&error);
  g_assert_true (g_file_set_contents (text, "not an image", -1, NULL));
  g_assert_false (nl_evaluation_predict_image_file (ev, text, &probs, NULL, &error));
  g_assert_error (error, NL_DATA_ERROR, NL_DATA_ERROR_CORRUPT);
  /* the message names the user's file, not the temporary folder it was read through */
  assert_error_mentions (error, text, "not a PNG or JPEG");
  g_assert_null (strstr (error->message, "netloom-predict"));
  g_clear_error (&error);
  g_assert_false (nl_evaluation_predict_image_file (ev, work_dir, &probs, NULL, &error));
  assert_error_mentions (error, work_dir, "folder");
  g_clear_error (&error);
  g_assert_false (nl_predict_image_file (project, run_id, "best", missing_png, &probs, &n, NULL, &error));
  assert_error_mentions (error, missing_png, NULL);
  g_assert_null (probs);
  g_unlink (text);
}

int
main (int argc, char **argv)
{
  g_autoptr (GError) error = NULL;
  int status;

  g_test_init (&argc, &argv, NULL);
  data_dir = g_dir_make_tmp ("netloom-eval-data-XXXXXX", NULL);
  work_dir = g_dir_make_tmp ("netloom-eval-XXXXXX", NULL);
  nl_test_write_idx_dataset (data_dir, 1000, N_TEST);
  project_path = g_build_filename (work_dir, "p.netloom", NULL);
  project = nl_project_open (project_path, TRUE, &error);
  g_assert_no_error (error);
  run_id = train_run (net_json);

  g_test_add_func ("/evaluate/best", test_best);
  g_test_add_func ("/evaluate/last", test_last);
  g_test_add_func ("/evaluate/limit-cancel", test_limit_and_cancel);
  g_test_add_func ("/evaluate/probability-outputs", test_probability_outputs);
  g_test_add_func ("/evaluate/predict-image", test_predict_image);
  g_test_add_func ("/evaluate/errors", test_errors);
  status = g_test_run ();

  nl_project_close (project);
  nl_test_remove_tree (work_dir);
  nl_test_remove_tree (data_dir);
  g_free (project_path);
  g_free (work_dir);
  g_free (data_dir);
  return status;
}
