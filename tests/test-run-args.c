/* test-run-args.c — run settings as `netloom-cli train` options
 * (nl_run_config_to_cli_args): the options say every setting, settings the
 * CLI cannot take are refused by name, and a round trip through the real
 * netloom-cli stores exactly the settings it was given. */
#include <glib/gstdio.h>
#include <string.h>

#include "core/nl-device.h"
#include "engine/session/nl-run-args.h"
#include "projects/nl-project.h"
#include "tests/nl-test-util.h"

/* The value after OPTION in args, "" for a flag, NULL when absent. */
static const char *
option_value (char **args, const char *option)
{
  for (guint i = 0; args[i]; i++)
    if (!strcmp (args[i], option))
      return args[i + 1] && !g_str_has_prefix (args[i + 1], "--") ? args[i + 1] : "";
  return NULL;
}

static void
test_options (void)
{
  g_auto (NlRunConfig) rc = { 0 };
  g_auto (GStrv) args = NULL;
  g_autoptr (GError) error = NULL;

  nl_run_config_init (&rc);
  nl_run_config_set_dataset (&rc, "mnist:/data/m n");  /* a space: one argument, not two */
  rc.epochs = 7;
  rc.seed = G_GUINT64_CONSTANT (18446744073709551615);
  rc.optim.lr = 0.03f;
  nl_run_config_set_text (&rc.early_stop_metric, "train_loss");
  rc.patience = 2;
  rc.restore_best = TRUE;
  args = nl_run_config_to_cli_args (&rc, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (option_value (args, "--dataset"), ==, "mnist:/data/m n");
  g_assert_cmpstr (option_value (args, "--epochs"), ==, "7");
  g_assert_cmpstr (option_value (args, "--optimizer"), ==, "sgd");
  g_assert_cmpstr (option_value (args, "--lr"), ==, "0.0299999993");  /* the float, exactly */
  g_assert_cmpstr (option_value (args, "--seed"), ==, "-1");          /* 2^64 - 1 through an int64 */
  g_assert_cmpstr (option_value (args, "--device"), ==, "cpu");
  g_assert_cmpstr (option_value (args, "--precision"), ==, "fp32");
  g_assert_cmpstr (option_value (args, "--early-stop"), ==, "train_loss");
  g_assert_cmpstr (option_value (args, "--patience"), ==, "2");
  g_assert_cmpstr (option_value (args, "--restore-best"), ==, "");
  g_assert_cmpstr (option_value (args, "--keep-checkpoints"), ==, "3");
  /* defaults the CLI cannot be told are left out */
  g_assert_null (option_value (args, "--loss-scale"));
  g_assert_null (option_value (args, "--nesterov"));
  g_assert_null (option_value (args, "--beta1"));
  g_assert_null (option_value (args, "--augment"));
}

static void
test_refused (void)
{
  g_auto (NlRunConfig) rc = { 0 };
  char **args;
  g_autoptr (GError) error = NULL;

  nl_run_config_init (&rc);
  rc.optim.clip_gradient = 1.0f;
  args = nl_run_config_to_cli_args (&rc, &error);
  g_assert_null (args);
  g_assert_error (error, NL_TRAIN_ERROR, NL_TRAIN_ERROR_CONFIG);
  g_assert_nonnull (strstr (error->message, "clip_gradient"));
  g_clear_error (&error);

  nl_run_config_set_optimizer (&rc, NL_OPTIM_NAG);
  rc.optim.nesterov = FALSE;
  args = nl_run_config_to_cli_args (&rc, &error);
  g_assert_null (args);
  g_assert_nonnull (strstr (error->message, "nesterov"));
  g_clear_error (&error);

  nl_run_config_set_optimizer (&rc, NL_OPTIM_SGD);
  rc.data.image_width = 32;
  args = nl_run_config_to_cli_args (&rc, &error);
  g_assert_null (args);
  g_assert_nonnull (strstr (error->message, "image_width"));
  g_clear_error (&error);

  /* a bad value is the settings' own check */
  rc.data.image_width = 0;
  rc.epochs = 0;
  args = nl_run_config_to_cli_args (&rc, &error);
  g_assert_null (args);
  g_assert_nonnull (strstr (error->message, "epochs"));
}

/* ---- the round trip through netloom-cli ---- */

typedef struct {
  char *dir, *project, *data;
} Trip;

static char *
cli_path (void)
{
  const char *build = g_getenv ("NETLOOM_BUILD_DIR");
  return build ? g_build_filename (build, "app", "netloom-cli", NULL) : NULL;
}

/* Trains rc with netloom-cli into the trip's project; returns the stored
 * run (its settings and device). */
static NlRunInfo *
train_with_cli (Trip *t, const NlRunConfig *rc)
{
  g_autofree char *cli = cli_path ();
  g_auto (GStrv) options = NULL;
  g_autoptr (GPtrArray) argv = g_ptr_array_new ();
  g_autoptr (GError) error = NULL;
  g_autofree char *out = NULL, *err = NULL;
  g_autoptr (NlProject) p = NULL;
  g_autoptr (GPtrArray) runs = NULL;
  int status = 0;

  options = nl_run_config_to_cli_args (rc, &error);
  g_assert_no_error (error);
  g_ptr_array_add (argv, cli);
  g_ptr_array_add (argv, (char *) "train");
  g_ptr_array_add (argv, (char *) "--project");
  g_ptr_array_add (argv, t->project);
  g_ptr_array_add (argv, (char *) "--network");
  g_ptr_array_add (argv, (char *) "mlp");
  for (char **o = options; *o; o++)
    g_ptr_array_add (argv, *o);
  g_ptr_array_add (argv, NULL);
  g_spawn_sync (NULL, (char **) argv->pdata, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, &err, &status, &error);
  g_assert_no_error (error);
  if (!g_spawn_check_wait_status (status, NULL))
    g_error ("netloom-cli train failed: %s", err);
  p = nl_project_open (t->project, FALSE, &error);
  g_assert_no_error (error);
  runs = nl_project_list_runs (p, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (runs->len, >, 0);
  return nl_project_get_run (p, ((NlRunInfo *) g_ptr_array_index (runs, runs->len - 1))->id, NULL);
}

static void
assert_round_trip (Trip *t, const NlRunConfig *rc)
{
  g_autoptr (NlRunInfo) info = train_with_cli (t, rc);
  g_auto (NlRunConfig) stored = { 0 };
  g_autoptr (GError) error = NULL;
  g_autofree char *want = nl_run_config_to_json (rc), *got = NULL, *device = nl_device_to_string (rc->device);

  g_assert_nonnull (info);
  g_assert_cmpstr (info->status, ==, "finished");
  nl_run_config_init (&stored);
  g_assert_true (nl_run_config_from_json (&stored, info->hparams_json, &error));
  got = nl_run_config_to_json (&stored);
  /* every stored setting, byte for byte */
  g_assert_cmpstr (got, ==, want);
  g_assert_cmpstr (info->device, ==, device);
}

static void
test_round_trip (void)
{
  g_autofree char *cli = cli_path ();
  g_autoptr (GError) error = NULL;
  g_auto (NlRunConfig) rc = { 0 };
  g_autofree char *spec = NULL;
  Trip t = { 0 };

  if (!cli || !g_file_test (cli, G_FILE_TEST_IS_EXECUTABLE))
    {
      g_test_skip ("netloom-cli is not built (NETLOOM_BUILD_DIR/app/netloom-cli)");
      return;
    }
  t.dir = g_dir_make_tmp ("netloom-run-args-XXXXXX", &error);
  g_assert_no_error (error);
  t.project = g_build_filename (t.dir, "t.netloom", NULL);
  t.data = g_build_filename (t.dir, "tiny data", NULL);
  g_assert_true (nl_project_create_sample (t.project, &error));
  g_mkdir (t.data, 0755);
  nl_test_write_idx_dataset_sized (t.data, 28, 256, 64);
  spec = g_strdup_printf ("mnist:%s", t.data);

  /* SGD with Nesterov, a schedule, transforms, odd numbers everywhere */
  nl_run_config_init (&rc);
  nl_run_config_set_dataset (&rc, spec);
  rc.epochs = 1;
  rc.batch_size = 48;
  rc.seed = 123456789012345ULL;
  rc.threads = 1;
  rc.workers = 0;
  rc.optim.lr = 0.0123f;
  rc.optim.momentum = 0.85f;
  rc.optim.nesterov = TRUE;
  rc.optim.wd = 3e-5f;
  rc.optim.clip_global_norm = 4.5f;
  nl_run_config_set_text (&rc.lr_schedule, "cosine:0.001+warmup:3");
  nl_run_config_set_text (&rc.augment, "random-crop:28:2");
  rc.mean = 0.2f;
  rc.std = 0.35f;
  rc.keep_last = 2;
  nl_run_config_set_text (&rc.early_stop_metric, "train_loss");
  rc.patience = 4;
  rc.min_delta = 0.001;
  assert_round_trip (&t, &rc);

  /* Adam with its moments changed */
  nl_run_config_set_optimizer (&rc, NL_OPTIM_ADAM);
  rc.optim.lr = 0.002f;
  rc.optim.beta1 = 0.8f;
  rc.optim.beta2 = 0.99f;
  rc.optim.epsilon = 1e-6f;
  nl_run_config_set_text (&rc.lr_schedule, NULL);
  nl_run_config_set_text (&rc.augment, NULL);
  rc.precision = NL_PRECISION_BF16;
  assert_round_trip (&t, &rc);

  /* RMSProp, centered, its decay changed */
  nl_run_config_set_optimizer (&rc, NL_OPTIM_RMSPROP);
  rc.optim.rho = 0.95f;
  rc.optim.centered = TRUE;
  rc.precision = NL_PRECISION_F32;
  rc.seed = 0;
  assert_round_trip (&t, &rc);

  nl_test_remove_tree (t.dir);
  g_free (t.dir);
  g_free (t.project);
  g_free (t.data);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/run-args/options", test_options);
  g_test_add_func ("/run-args/refused", test_refused);
  g_test_add_func ("/run-args/round-trip", test_round_trip);
  return g_test_run ();
}
