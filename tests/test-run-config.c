/* test-run-config.c — the run settings' table: defaults, limits, the stored
 * JSON (byte for byte what runs stored before the table) and how older
 * runs' settings read. */
#include "engine/train/nl-run-config.h"
#include "engine/data/nl-loader.h"

#include <json-glib/json-glib.h>
#include <math.h>
#include <string.h>

/* What the writer before the table stored for these settings (a CLI run:
 * --epochs 1 --batch-size 256 --seed 7 --threads 1 --optimizer adam
 * --lr-schedule cosine --wd 0.0001), taken from a project it wrote. */
static const char legacy_json[] =
  "{\"dataset\":\"fashion-mnist\",\"epochs\":1,\"batch_size\":256,\"optimizer\":\"adam\","
  "\"lr\":0.0010000000474974513,\"momentum\":0.0,\"nesterov\":false,\"wd\":9.9999997473787516e-05,"
  "\"beta1\":0.89999997615814209,\"beta2\":0.99900001287460327,\"epsilon\":9.9999999392252903e-09,"
  "\"rho\":0.89999997615814209,\"centered\":false,\"clip_gradient\":0.0,\"clip_global_norm\":0.0,"
  "\"lr_schedule\":\"cosine\",\"seed\":\"7\",\"threads\":1,\"loss\":\"SoftmaxCrossEntropy\","
  "\"mean\":0.12999999523162842,\"std\":0.31000000238418579,\"eval_batch_size\":500,\"workers\":1,"
  "\"augment\":null,\"label_column\":null,\"image_width\":0,\"image_height\":0,\"regression\":false,"
  "\"val_fraction\":0.10000000000000001,\"precision\":\"fp32\",\"loss_scale\":0.0,\"layer_stats_every\":100,"
  "\"cudnn_autotune\":true,\"cuda_graphs\":true,\"deterministic\":false,"
  "\"text_column\":null,\"tokenizer\":\"word\",\"vocab_size\":20000,\"min_count\":1,\"max_length\":128,"
  "\"target\":null,\"window\":32,\"horizon\":1}";

static void
test_defaults (void)
{
  g_auto (NlRunConfig) rc = { 0 };
  guint n;
  const NlRunField *f = nl_run_config_fields (&n);

  nl_run_config_init (&rc);
  g_assert_cmpstr (rc.dataset, ==, "fashion-mnist");
  g_assert_cmpstr (rc.loss, ==, "SoftmaxCrossEntropy");
  g_assert_cmpint (rc.epochs, ==, 5);
  g_assert_cmpint (rc.batch_size, ==, 128);
  g_assert_cmpint (rc.optim.kind, ==, NL_OPTIM_SGD);
  g_assert_cmpfloat (rc.optim.lr, ==, 0.1f);
  g_assert_cmpfloat (rc.mean, ==, 0.13f);
  g_assert_cmpfloat (rc.std, ==, 0.31f);
  g_assert_cmpint (rc.keep_last, ==, 3);
  g_assert_cmpint (rc.patience, ==, 3);
  g_assert_null (rc.monitor);
  g_assert_null (rc.early_stop_metric);
  g_assert_true (rc.cudnn_autotune);
  g_assert_true (rc.cuda_graphs);
  g_assert_false (rc.deterministic);
  g_assert_true (nl_run_config_check (&rc, NULL));
  /* every number's default is the table's, and within its limits */
  for (guint i = 0; i < n; i++)
    if (f[i].type <= NL_RUN_FIELD_BOOL && !(f[i].flags & NL_RUN_FIELD_OPTIM_DEFAULT))
      g_assert_cmpfloat (nl_run_field_get_number (&f[i], &rc), ==, (f[i].type == NL_RUN_FIELD_FLOAT
                                                                    ? (double) (float) f[i].def : f[i].def));
  /* the loader's own limit, not a copy */
  g_assert_cmpfloat (nl_run_config_find_field ("workers")->max, ==, NL_LOADER_MAX_WORKERS);
  g_assert_null (nl_run_config_find_field ("learning_rate"));
}

/* Just past each bound is refused, with the field named; the bound itself
 * is accepted unless open. */
static void
test_limits (void)
{
  guint n;
  const NlRunField *f = nl_run_config_fields (&n);
  int checked = 0;

  for (guint i = 0; i < n; i++)
    {
      g_autoptr (GError) error = NULL;
      if (f[i].type > NL_RUN_FIELD_BOOL || f[i].type == NL_RUN_FIELD_BOOL || f[i].type == NL_RUN_FIELD_SEED)
        continue;
      if (isfinite (f[i].min))
        {
          double below = f[i].type == NL_RUN_FIELD_INT ? f[i].min - 1 : f[i].min - 1e-3;
          g_assert_false (nl_run_field_check (&f[i], NULL, below, &error));
          g_assert_error (error, NL_TRAIN_ERROR, NL_TRAIN_ERROR_CONFIG);
          g_assert_true (g_str_has_prefix (error->message, f[i].name));
          g_clear_error (&error);
          g_assert_true (nl_run_field_check (&f[i], NULL, f[i].min, NULL) == !(f[i].flags & NL_RUN_FIELD_MIN_OPEN));
          checked++;
        }
      if (isfinite (f[i].max))
        {
          g_assert_false (nl_run_field_check (&f[i], "--x", f[i].max + 1, &error));
          g_assert_true (g_str_has_prefix (error->message, "--x must be"));
          g_assert_true (nl_run_field_check (&f[i], NULL, f[i].max, NULL) == !(f[i].flags & NL_RUN_FIELD_MAX_OPEN));
        }
      else
        g_assert_false (nl_run_field_check (&f[i], NULL, INFINITY, NULL));
      g_assert_false (nl_run_field_check (&f[i], NULL, NAN, NULL));
    }
  g_assert_cmpint (checked, >, 15);

  {
    g_auto (NlRunConfig) rc = { 0 };
    g_autoptr (GError) error = NULL;
    nl_run_config_init (&rc);
    rc.workers = NL_LOADER_MAX_WORKERS + 1;
    g_assert_false (nl_run_config_check (&rc, &error));
    g_assert_cmpstr (error->message, ==, "workers must be in [0, 256], not 257");
    g_clear_error (&error);
    rc.workers = 1;
    rc.optim.lr = 0;
    g_assert_false (nl_run_config_check (&rc, &error));
    g_assert_cmpstr (error->message, ==, "lr must be > 0, not 0");
    g_clear_error (&error);
    rc.optim.lr = 0.1f;
    nl_run_config_set_text (&rc.monitor, "accuracy");
    g_assert_false (nl_run_config_check (&rc, &error));
    g_assert_true (strstr (error->message, "checkpoint metric 'accuracy'") != NULL);
  }
}

/* The writer keeps the old key order and number forms exactly. */
static void
test_json_legacy_bytes (void)
{
  g_auto (NlRunConfig) rc = { 0 };
  g_auto (NlRunConfig) back = { 0 };
  g_autofree char *json = NULL, *again = NULL;

  nl_run_config_init (&rc);
  rc.epochs = 1;
  rc.batch_size = 256;
  nl_run_config_set_optimizer (&rc, NL_OPTIM_ADAM);
  rc.optim.wd = 0.0001f;
  nl_run_config_set_text (&rc.lr_schedule, "cosine");
  rc.seed = 7;
  rc.threads = 1;
  /* not stored: they change nothing in the JSON */
  rc.keep_last = 9;
  nl_run_config_set_text (&rc.early_stop_metric, "train_loss");
  rc.preload = TRUE;
  json = nl_run_config_to_json (&rc);
  g_assert_cmpstr (json, ==, legacy_json);

  nl_run_config_init (&back);
  g_assert_true (nl_run_config_from_json (&back, legacy_json, NULL));
  again = nl_run_config_to_json (&back);
  g_assert_cmpstr (again, ==, legacy_json);
  g_assert_cmpint (back.optim.kind, ==, NL_OPTIM_ADAM);
  g_assert_cmpuint (back.seed, ==, 7);
  g_assert_null (back.augment);
}

/* Settings stored before a key existed read as they always did. */
static void
test_json_absent_keys (void)
{
  g_auto (NlRunConfig) rc = { 0 };
  g_autoptr (GError) error = NULL;

  nl_run_config_init (&rc);
  g_assert_true (nl_run_config_from_json (&rc, "{\"dataset\":\"mnist:/d\",\"loss\":\"L2Loss\"}", &error));
  g_assert_no_error (error);
  g_assert_cmpstr (rc.dataset, ==, "mnist:/d");
  g_assert_cmpint (rc.epochs, ==, 1);
  g_assert_cmpint (rc.batch_size, ==, 128);
  g_assert_cmpint (rc.optim.kind, ==, NL_OPTIM_SGD);
  g_assert_cmpfloat (rc.optim.lr, ==, 0.01f);    /* SGD's own default, not the new runs' 0.1 */
  g_assert_cmpfloat (rc.mean, ==, 0);
  g_assert_cmpfloat (rc.std, ==, 1);
  g_assert_cmpint (rc.workers, ==, 1);
  g_assert_cmpint (rc.eval_batch_size, ==, 500);
  g_assert_cmpfloat (rc.data.val_fraction, ==, 0.1);
  g_assert_cmpint (rc.precision, ==, NL_PRECISION_F32);
  g_assert_cmpfloat (rc.loss_scale, ==, 0);
  g_assert_cmpint (rc.layer_stats_every, ==, NL_LAYER_STATS_DEFAULT_EVERY);
  g_assert_null (rc.lr_schedule);
  /* runs before the GPU settings: autotuned, graphs, not deterministic */
  g_assert_true (rc.cudnn_autotune);
  g_assert_true (rc.cuda_graphs);
  g_assert_false (rc.deterministic);

  g_assert_false (nl_run_config_from_json (&rc, "{\"loss\":\"L2Loss\"}", &error));
  g_assert_error (error, NL_TRAIN_ERROR, NL_TRAIN_ERROR_CONFIG);
  g_clear_error (&error);
  g_assert_false (nl_run_config_from_json (&rc, "{\"dataset\":\"x\",\"loss\":\"y\",\"precision\":\"fp8\"}",
                                           &error));
  g_assert_true (strstr (error->message, "'fp8'") != NULL);
}

static void
test_copy_and_dataset (void)
{
  g_auto (NlRunConfig) a = { 0 };
  g_auto (NlRunConfig) b = { 0 };

  nl_run_config_init (&a);
  nl_run_config_set_dataset (&a, "cifar10:/c");
  g_assert_cmpfloat (a.mean, ==, 0.47f);
  g_assert_cmpfloat (a.std, ==, 0.25f);
  nl_run_config_set_dataset (&a, "csv:/x.csv");
  g_assert_cmpfloat (a.mean, ==, 0);
  g_assert_cmpfloat (a.std, ==, 1);
  nl_run_config_set_dataset (&a, "fashion-mnist");
  g_assert_cmpfloat (a.mean, ==, 0.13f);
  nl_run_config_set_text ((char **) &a.data.label_column, "y");
  nl_run_config_copy (&b, &a);
  g_assert_true (b.dataset != a.dataset);
  g_assert_cmpstr (b.dataset, ==, a.dataset);
  g_assert_cmpstr (b.data.label_column, ==, "y");
  g_assert_true (b.data.label_column != a.data.label_column);
}

/* A fork's overrides: only what changed, in the order asked for; a
 * schedule spelled differently but with the same rates is no change. */
static void
test_overrides (void)
{
  static const char *const keys[] = { "lr_schedule", "seed", "lr", "epochs", NULL };
  g_auto (NlRunConfig) parent = { 0 };
  g_auto (NlRunConfig) child = { 0 };
  g_autofree char *none = NULL, *some = NULL, *all = NULL;

  nl_run_config_init (&parent);
  nl_run_config_copy (&child, &parent);
  nl_run_config_set_text (&child.lr_schedule, "constant");   /* NULL means constant */
  child.optim.lr = parent.optim.lr * (1 + 1e-8f);            /* within 1e-6: the same */
  none = nl_run_config_overrides_json (&parent, &child, keys);
  g_assert_cmpstr (none, ==, "{}");
  child.epochs = 9;
  child.optim.lr = 0.5f;
  child.batch_size = 7;                                       /* not asked for */
  some = nl_run_config_overrides_json (&parent, &child, keys);
  g_assert_cmpstr (some, ==, "{\"lr\":0.5,\"epochs\":9}");
  all = nl_run_config_overrides_json (&parent, &child, NULL);
  g_assert_cmpstr (all, ==, "{\"epochs\":9,\"batch_size\":7,\"lr\":0.5}");
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/run-config/defaults", test_defaults);
  g_test_add_func ("/run-config/limits", test_limits);
  g_test_add_func ("/run-config/json-legacy-bytes", test_json_legacy_bytes);
  g_test_add_func ("/run-config/json-absent-keys", test_json_absent_keys);
  g_test_add_func ("/run-config/copy-and-dataset", test_copy_and_dataset);
  g_test_add_func ("/run-config/overrides", test_overrides);
  return g_test_run ();
}
