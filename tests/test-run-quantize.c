/* test-run-quantize.c — nl_run_quantize on a run trained here (a small
 * conv net on a generated 20x20, 10-class IDX dataset): the naive table's
 * input range is the min and max of the first N normalised training
 * samples computed by hand; fp32 and INT8 accuracy and confusion are what
 * nl_evaluate_run and its INT8 variant find on their own; progress goes
 * through its phases; the stored row and blob match the result; a cancel
 * and bad input store nothing. */
#include <math.h>
#include <string.h>

#include "engine/formats/nl-int8-model.h"
#include "engine/session/nl-evaluate.h"
#include "engine/session/nl-run-quantize.h"
#include "tests/nl-test-util.h"

#define N_TRAIN 600
#define N_TEST 250

static char *data_dir, *work_dir;
static NlProject *project;
static gint64 run_id;

static const char *net_json =
  "{\"format\":\"netloom.network\",\"version\":1,\"name\":\"small\",\"nodes\":["
  "{\"id\":\"data\",\"op\":\"Input\",\"params\":{\"shape\":[1,20,20]}},"
  "{\"id\":\"conv1\",\"op\":\"Conv2D\",\"params\":{\"channels\":6,\"kernel\":[3,3]}},"
  "{\"id\":\"relu1\",\"op\":\"Activation\"},{\"id\":\"pool1\",\"op\":\"MaxPool2D\",\"params\":{\"pool_size\":[2,2]}},"
  "{\"id\":\"flat\",\"op\":\"Flatten\"},{\"id\":\"fc1\",\"op\":\"Dense\",\"params\":{\"units\":10}}],"
  "\"edges\":[\"data -> conv1\",\"conv1 -> relu1\",\"relu1 -> pool1\",\"pool1 -> flat\",\"flat -> fc1\"]}";

static gint64
rows (void)
{
  g_autoptr (GArray) m = nl_project_list_int8_models (project, run_id, NULL);
  return m ? (gint64) m->len : -1;
}

typedef struct {
  GString *phases;         /* each new phase once, ";"-separated */
  gboolean bad_fraction;
  GCancellable *cancel_at_int8;
} Seen;

static void
on_progress (const char *phase, double fraction, gpointer data)
{
  Seen *s = data;
  g_autofree char *tail = g_strdup_printf ("%s;", phase);
  if (!g_str_has_suffix (s->phases->str, tail))
    g_string_append (s->phases, tail);
  if (!(fraction >= 0 && fraction <= 1))
    s->bad_fraction = TRUE;
  if (s->cancel_at_int8 && !strcmp (phase, "evaluating int8"))
    g_cancellable_cancel (s->cancel_at_int8);
}

/* min and max of the first n training samples, normalised as the run's loader */
static void
input_range (int n, float *lo, float *hi)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (NlRunInfo) info = nl_project_get_run (project, run_id, &error);
  g_auto (NlRunConfig) rc = { 0 };
  g_autofree char *spec = g_strdup_printf ("mnist:%s", data_dir);
  g_autoptr (NlDataset) ds = nl_dataset_open (spec, TRUE, &error);
  float x[NL_TEST_IDX_SIDE * NL_TEST_IDX_SIDE], y;
  nl_run_config_init (&rc);
  g_assert_true (nl_run_config_from_json (&rc, info->hparams_json, &error));
  *lo = INFINITY;
  *hi = -INFINITY;
  for (int i = 0; i < n; i++)
    {
      g_assert_true (nl_dataset_get (ds, i, x, &y, &error));
      for (int k = 0; k < NL_TEST_IDX_SIDE * NL_TEST_IDX_SIDE; k++)
        {
          float v = (x[k] - rc.mean) / (rc.std == 0 ? 1 : rc.std);
          *lo = MIN (*lo, v);
          *hi = MAX (*hi, v);
        }
    }
}

static void
assert_same_confusion (const gint64 *a, const int64_t *b, int n)
{
  for (int i = 0; i < n * n; i++)
    g_assert_cmpint (a[i], ==, b[i]);
}

static void
test_naive (void)
{
  g_autoptr (GError) error = NULL;
  Seen seen = { g_string_new (NULL) };
  NlQuantizeOptions o = { .calibration_samples = 200, .method = NL_QUANT_NAIVE };
  NlQuantizeResult r;
  float lo, hi;

  g_assert_true (nl_run_quantize (project, run_id, &o, on_progress, &seen, &r, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpstr (seen.phases->str, ==, "loading;calibrating;evaluating fp32;evaluating int8;timing fp32;"
                   "timing int8;saving;");
  g_assert_false (seen.bad_fraction);
  g_assert_cmpint (r.int8_id, >, 0);
  g_assert_cmpint (r.epoch, >=, 1);
  g_assert_cmpint (r.n_classes, ==, 10);
  g_assert_cmpint (r.table->method, ==, NL_QUANT_NAIVE);
  g_assert_cmpint (r.table->calibration_samples, ==, 200);
  g_assert_cmpfloat (r.fp32_images_per_s, >, 0);
  g_assert_cmpfloat (r.int8_images_per_s, >, 0);

  /* the input's range, by hand */
  const NlQuantRange *in = nl_quant_table_find (r.table, "data");
  g_assert_nonnull (in);
  input_range (200, &lo, &hi);
  g_assert_cmpfloat (in->min, ==, lo);
  g_assert_cmpfloat (in->max, ==, hi);
  g_assert_cmpfloat (in->threshold, ==, MAX (fabsf (lo), fabsf (hi)));

  /* fp32 and INT8 as the evaluation finds them on their own */
  g_autoptr (NlEvaluation) ev = nl_evaluate_run (project, run_id, NULL, 0, NULL, NULL, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpint (ev->checkpoint, ==, r.checkpoint);
  g_assert_cmpfloat (ev->accuracy, ==, r.fp32_test_acc);
  assert_same_confusion (r.fp32_confusion, ev->confusion, 10);
  g_autoptr (NlEvaluation) ev8 = nl_evaluate_run_full (project, run_id, NULL, NULL, TRUE, 0, NULL, NULL, NULL,
                                                       &error);
  g_assert_no_error (error);
  g_assert_cmpint (ev8->int8_model, ==, r.int8_id);
  g_assert_cmpint (ev8->checkpoint, ==, r.checkpoint);
  g_assert_cmpfloat (ev8->accuracy, ==, r.int8_test_acc);
  assert_same_confusion (r.int8_confusion, ev8->confusion, 10);
  g_assert_cmpfloat (fabs (r.int8_test_acc - r.fp32_test_acc), <=, 0.02);
  g_test_message ("fp32 %.4f, int8 %.4f", r.fp32_test_acc, r.int8_test_acc);

  /* the stored row and blob are the result */
  g_autoptr (GArray) models = nl_project_list_int8_models (project, run_id, &error);
  const NlInt8ModelInfo *m = &g_array_index (models, NlInt8ModelInfo, models->len - 1);
  g_assert_cmpint (m->id, ==, r.int8_id);
  g_assert_cmpint (m->checkpoint, ==, r.checkpoint);
  g_assert_cmpstr (m->method, ==, "naive");
  g_assert_cmpfloat (m->int8_test_acc, ==, r.int8_test_acc);
  g_assert_cmpfloat (m->int8_images_per_s, ==, r.int8_images_per_s);
  g_autoptr (GBytes) blob = nl_project_load_int8_model (project, r.int8_id, NULL, &error);
  g_assert_cmpint (nl_int8_model_epoch (blob), ==, r.epoch);
  nl_quantize_result_clear (&r);
  g_string_free (seen.phases, TRUE);
}

static void
test_cancel_and_errors (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GCancellable) cancel = g_cancellable_new ();
  Seen seen = { g_string_new (NULL), FALSE, cancel };
  NlQuantizeOptions o = { .calibration_samples = 100, .method = NL_QUANT_ENTROPY };
  NlQuantizeResult r;
  gint64 before = rows ();

  g_assert_false (nl_run_quantize (project, run_id, &o, on_progress, &seen, &r, cancel, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_assert_null (r.table);
  g_clear_error (&error);
  o.calibration_samples = N_TRAIN + 1;
  g_assert_false (nl_run_quantize (project, run_id, &o, NULL, NULL, &r, NULL, &error));
  g_assert_nonnull (strstr (error->message, "has 600"));
  g_clear_error (&error);
  o.calibration_samples = 10;
  o.which = "9";
  g_assert_false (nl_run_quantize (project, run_id, &o, NULL, NULL, &r, NULL, &error));
  g_assert_nonnull (strstr (error->message, "epoch 9"));
  g_clear_error (&error);
  g_assert_cmpint (rows (), ==, before);
  g_string_free (seen.phases, TRUE);
}

int
main (int argc, char **argv)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (NlNetwork) net = NULL;
  g_auto (NlRunConfig) cfg = { 0 };
  g_autofree char *path = NULL, *spec = NULL;
  int status;

  g_test_init (&argc, &argv, NULL);
  data_dir = g_dir_make_tmp ("netloom-quant-data-XXXXXX", NULL);
  work_dir = g_dir_make_tmp ("netloom-quant-XXXXXX", NULL);
  nl_test_write_idx_dataset (data_dir, N_TRAIN, N_TEST);
  path = g_build_filename (work_dir, "p.netloom", NULL);
  project = nl_project_open (path, TRUE, &error);
  g_assert_no_error (error);
  spec = g_strdup_printf ("mnist:%s", data_dir);
  net = nl_network_load_data (net_json, -1, &error);
  g_assert_no_error (error);
  nl_test_tiny_train_config (&cfg, spec);
  cfg.epochs = 2;
  cfg.threads = 1;
  g_assert_true (nl_run_train (project, "small", net, &cfg, NULL, &run_id, &error));
  g_assert_no_error (error);

  g_test_add_func ("/run-quantize/naive", test_naive);
  g_test_add_func ("/run-quantize/cancel-and-errors", test_cancel_and_errors);
  status = g_test_run ();

  nl_project_close (project);
  nl_test_remove_tree (work_dir);
  nl_test_remove_tree (data_dir);
  g_free (work_dir);
  g_free (data_dir);
  return status;
}
