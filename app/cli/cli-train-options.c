/* cli-train-options.c — the run settings' options of netloom-cli train
 * and sweep, checked against the run settings' table. */
#include "cli-train-options.h"
#include "cli-common.h"
#include "core/nl-device.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* The options that set a number of the run settings, checked against
 * that setting's limits (nl-run-config.c's table). */
static const struct {
  const char *option, *field;
  gboolean bound;           /* parsed straight into the settings */
} checked[] = {
  { "--epochs", "epochs", TRUE }, { "--batch-size", "batch_size", TRUE }, { "--threads", "threads", TRUE },
  { "--keep-checkpoints", "keep_last", TRUE }, { "--checkpoint-interval", "checkpoint_interval", TRUE },
  { "--workers", "workers", TRUE }, { "--layer-stats-every", "layer_stats_every", TRUE },
  { "--scheduler-workers", "scheduler_workers", TRUE }, { "--patience", "patience", TRUE },
  { "--min-delta", "min_delta", TRUE }, { "--lr", "lr", FALSE }, { "--momentum", "momentum", FALSE },
  { "--wd", "wd", FALSE }, { "--clip-norm", "clip_global_norm", FALSE },
  { "--loss-scale", "loss_scale", FALSE }, { "--beta1", "beta1", FALSE },
  { "--beta2", "beta2", FALSE }, { "--epsilon", "epsilon", FALSE }, { "--rho", "rho", FALSE },
};

/* NAN: the option was not given. */
static gboolean
check_option (const NlRunConfig *rc, const char *option, double given, GError **error)
{
  for (gsize i = 0; i < G_N_ELEMENTS (checked); i++)
    if (!strcmp (checked[i].option, option))
      {
        const NlRunField *f = nl_run_config_find_field (checked[i].field);
        double v = isnan (given) ? nl_run_field_get_number (f, rc) : given;
        return nl_run_field_check (f, option, v, error);
      }
  g_return_val_if_reached (FALSE);
}

/* The options bound to a numeric setting say its default as the table
 * has it, so the help cannot drift from it; the texts live in keep. */
static void
describe_defaults (GOptionEntry *entries, GPtrArray *keep)
{
  for (GOptionEntry *e = entries; e->long_name; e++)
    for (gsize i = 0; i < G_N_ELEMENTS (checked); i++)
      if (checked[i].bound && !strcmp (checked[i].option + 2, e->long_name))
        {
          const NlRunField *f = nl_run_config_find_field (checked[i].field);
          char *text = g_strdup_printf ("%s (default %g)", e->description, f->def);
          g_ptr_array_add (keep, text);
          e->description = text;
        }
}

/* "on" / "off" into *value; NULL text leaves it. 0, or the usage error's
 * exit status. */
static int
parse_on_off (const char *option, const char *text, gboolean *value)
{
  if (!text)
    return 0;
  if (strcmp (text, "on") != 0 && strcmp (text, "off") != 0)
    return nl_cli_usage_error ("%s must be on or off, not '%s'", option, text);
  *value = strcmp (text, "on") == 0;
  return 0;
}

NlCliTrainOptions *
nl_cli_train_options_new (void)
{
  NlCliTrainOptions *o = g_new0 (NlCliTrainOptions, 1);
    GOptionEntry entries[] = {
      { "restore-best", 0, 0, G_OPTION_ARG_NONE, &o->cfg.restore_best, "With --project: end the run with the weights of its "
        "best epoch (by test accuracy) as its last checkpoint", NULL },
      { "checkpoint-metric", 0, 0, G_OPTION_ARG_STRING, &o->monitor, "With --project: what the best checkpoint is best "
        "at: test_accuracy (default), train_accuracy or train_loss", "NAME" },
      { "early-stop", 0, 0, G_OPTION_ARG_STRING, &o->early_stop, "With --project: stop when METRIC (test_accuracy, "
        "train_accuracy or train_loss) has not improved for --patience epochs", "METRIC" },
      { "patience", 0, 0, G_OPTION_ARG_INT, &o->cfg.patience, "Epochs without improvement before early stopping",
        "N" },
      { "min-delta", 0, 0, G_OPTION_ARG_DOUBLE, &o->cfg.min_delta, "Smallest change that counts as an improvement",
        "X" },
      { "keep-checkpoints", 0, 0, G_OPTION_ARG_INT, &o->cfg.keep_last, "With --project: newest checkpoints kept besides the "
        "best", "K" },
      { "checkpoint-interval", 0, 0, G_OPTION_ARG_DOUBLE, &o->cfg.checkpoint_interval, "With --project: seconds "
        "between checkpoints inside an epoch, so a killed run loses at most that much (only the newest is kept; "
        "0: at epoch ends only)", "SECONDS" },
      { "workers", 'w', 0, G_OPTION_ARG_INT, &o->cfg.workers, "Loader threads that decode and augment ahead of training; "
        "0 loads in the training thread", "N" },
      { "scheduler-workers", 0, 0, G_OPTION_ARG_INT, &o->cfg.scheduler_workers, "Threads of the dependency scheduler: "
        "independent branches of the network run at once; 0: ops run in order on the training thread", "N" },
      { "augment", 'a', 0, G_OPTION_ARG_STRING, &o->augment, "Training transforms, comma-separated: random-crop:SIZE[:PAD], "
        "center-crop:SIZE, resize:WxH, flip, brightness:X, contrast:X, normalize:M:S", "LIST" },
      { "epochs", 'e', 0, G_OPTION_ARG_INT, &o->cfg.epochs, "Epochs to train", "N" },
      { "batch-size", 'b', 0, G_OPTION_ARG_INT, &o->cfg.batch_size, "Samples per batch", "B" },
      { "optimizer", 'o', 0, G_OPTION_ARG_STRING, &o->optimizer,
        "sgd (default), nag, adam, adamw, rmsprop or adagrad", "NAME" },
      { "lr", 0, 0, G_OPTION_ARG_DOUBLE, &o->lr, "Learning rate (default: the optimizer's; sgd 0.1)", "X" },
      { "momentum", 0, 0, G_OPTION_ARG_DOUBLE, &o->momentum, "Momentum (sgd, nag, rmsprop)", "M" },
      { "wd", 0, 0, G_OPTION_ARG_DOUBLE, &o->wd, "Weight decay", "W" },
      { "clip-norm", 0, 0, G_OPTION_ARG_DOUBLE, &o->clip, "Clip gradients by global L2 norm (0: off)", "X" },
      { "nesterov", 0, 0, G_OPTION_ARG_NONE, &o->nesterov, "sgd: Nesterov momentum", NULL },
      { "beta1", 0, 0, G_OPTION_ARG_DOUBLE, &o->beta1, "adam, adamw: first moment decay (default 0.9)", "B" },
      { "beta2", 0, 0, G_OPTION_ARG_DOUBLE, &o->beta2, "adam, adamw: second moment decay (default 0.999)", "B" },
      { "epsilon", 0, 0, G_OPTION_ARG_DOUBLE, &o->epsilon, "adam, adamw, rmsprop, adagrad: the denominator's "
        "epsilon (default: the optimizer's)", "E" },
      { "rho", 0, 0, G_OPTION_ARG_DOUBLE, &o->rho, "rmsprop: squared gradient decay (default 0.9)", "R" },
      { "centered", 0, 0, G_OPTION_ARG_NONE, &o->centered, "rmsprop: centered (divide by the gradient's variance)",
        NULL },
      { "lr-schedule", 0, 0, G_OPTION_ARG_STRING, &o->schedule,
        "constant (default), factor:STEP:F, multifactor:S1,S2:F, cosine[:FINAL], poly[:P[:FINAL]], "
        "each optionally +warmup:STEPS", "SPEC" },
      { "loss", 0, 0, G_OPTION_ARG_STRING, &o->loss, "Loss when the network has none (default SoftmaxCrossEntropy)", "OP" },
      { "seed", 's', 0, G_OPTION_ARG_INT64, &o->seed, "Random seed for initialisation and shuffling (default 0)", "S" },
      { "threads", 't', 0, G_OPTION_ARG_INT, &o->cfg.threads, "Worker threads; 0: all cores", "T" },
      { "device", 0, 0, G_OPTION_ARG_STRING, &o->device, "Train on cpu (default), cuda (the first GPU) or cuda:N "
        "(see 'netloom-cli devices')", "DEVICE" },
      { "precision", 0, 0, G_OPTION_ARG_STRING, &o->precision, "fp32 (default), or bf16 or fp16 autocast of Dense and "
        "Conv2D (float32 weights and accumulation)", "P" },
      { "loss-scale", 0, 0, G_OPTION_ARG_DOUBLE, &o->loss_scale, "fp16: the first dynamic loss scale (default 65536)",
        "X" },
      { "cudnn-autotune", 0, 0, G_OPTION_ARG_STRING, &o->cudnn_autotune, "cuda: time cuDNN's convolution algorithms "
        "once per shape and keep the fastest, cached on disk under the user's cache folder: on (default) or off "
        "(cuDNN's heuristic choice)", "on|off" },
      { "cuda-graphs", 0, 0, G_OPTION_ARG_STRING, &o->cuda_graphs, "cuda: capture the training step once as a CUDA "
        "graph and replay it each step: on (default) or off", "on|off" },
      { "deterministic", 0, 0, G_OPTION_ARG_NONE, &o->cfg.deterministic, "cuda: deterministic cuDNN algorithms only, "
        "so a run repeats bit for bit (the CPU always does)", NULL },
      { "layer-stats-every", 0, 0, G_OPTION_ARG_INT, &o->cfg.layer_stats_every, "With --project: record layer "
        "statistics (weight and gradient norms, update ratios, histograms, activations) every N steps; 0: off",
        "N" },
      { "json", 0, 0, G_OPTION_ARG_NONE, &o->json, "Print one JSON object per epoch", NULL },
      { "project", 'p', 0, G_OPTION_ARG_FILENAME, &o->project_path, "Store the run, its metrics and checkpoints in "
        "this project (--network may then name one of its networks)", "FILE" },
      { "name", 0, 0, G_OPTION_ARG_STRING, &o->run_name, "Name of the run in the project", "NAME" },
      { "preload", 0, 0, G_OPTION_ARG_NONE, &o->cfg.preload, "Benchmark baseline: load each epoch into memory before "
        "timing it (the loop is then fed from memory)", NULL },
      { NULL }
    };

  o->lr = o->momentum = o->wd = o->clip = o->loss_scale = NAN;
  o->beta1 = o->beta2 = o->epsilon = o->rho = NAN;
  o->kind = NL_OPTIM_SGD;
  /* the defaults are the run settings' own */
  nl_run_config_init (&o->cfg);
  o->seed = (gint64) o->cfg.seed;
  o->texts = g_ptr_array_new_with_free_func (g_free);
  /* --network, the dataset's options, then the rest */
  {
    GArray *all = g_array_new (FALSE, FALSE, sizeof (GOptionEntry));
    GOptionEntry network = { "network", 'n', 0, G_OPTION_ARG_FILENAME, &o->network,
                             "Network file (JSON, e.g. data/networks/lenet.json)", "FILE" };
    nl_cli_data_options_init (&o->data);
    g_array_append_val (all, network);
    nl_cli_data_options_add_entries (&o->data, all, "", "default fashion-mnist", NULL);
    g_array_append_vals (all, entries, G_N_ELEMENTS (entries));
    o->entries = (GOptionEntry *) (void *) g_array_free (all, FALSE);
  }
  describe_defaults (o->entries, o->texts);
  return o;
}

void
nl_cli_train_options_free (NlCliTrainOptions *o)
{
  if (!o)
    return;
  nl_run_config_clear (&o->cfg);
  g_free (o->network);
  g_free (o->project_path);
  g_free (o->run_name);
  g_free (o->optimizer);
  g_free (o->schedule);
  g_free (o->loss);
  g_free (o->augment);
  g_free (o->monitor);
  g_free (o->early_stop);
  g_free (o->device);
  g_free (o->precision);
  g_free (o->cudnn_autotune);
  g_free (o->cuda_graphs);
  nl_cli_data_options_clear (&o->data);
  g_free (o->entries);
  g_ptr_array_unref (o->texts);
  g_free (o);
}

int
nl_cli_train_options_finish (NlCliTrainOptions *o)
{
  g_autoptr (GError) error = NULL;
  int status;

  /* the options bound to the settings, then those read as doubles */
  for (gsize i = 0; i < G_N_ELEMENTS (checked); i++)
    if (checked[i].bound && !check_option (&o->cfg, checked[i].option, NAN, &error))
      return nl_cli_usage_error ("%s", error->message);
  if (o->optimizer && !nl_optim_kind_parse (o->optimizer, &o->kind, &error))
    return nl_cli_usage_error ("%s", error->message);
  if (o->early_stop && !o->project_path)
    return nl_cli_usage_error ("--early-stop needs --project (the run records which epoch was best)");
  nl_run_config_set_text (&o->cfg.monitor, o->monitor);
  nl_run_config_set_text (&o->cfg.early_stop_metric, o->early_stop);
  if ((status = nl_cli_data_options_finish (&o->data)) != 0)
    return status;
  if ((!isnan (o->lr) && !check_option (&o->cfg, "--lr", o->lr, &error))
      || (!isnan (o->momentum) && !check_option (&o->cfg, "--momentum", o->momentum, &error))
      || (!isnan (o->wd) && !check_option (&o->cfg, "--wd", o->wd, &error))
      || (!isnan (o->clip) && !check_option (&o->cfg, "--clip-norm", o->clip, &error))
      || (!isnan (o->beta1) && !check_option (&o->cfg, "--beta1", o->beta1, &error))
      || (!isnan (o->beta2) && !check_option (&o->cfg, "--beta2", o->beta2, &error))
      || (!isnan (o->epsilon) && !check_option (&o->cfg, "--epsilon", o->epsilon, &error))
      || (!isnan (o->rho) && !check_option (&o->cfg, "--rho", o->rho, &error)))
    return nl_cli_usage_error ("%s", error->message);
  if ((status = parse_on_off ("--cudnn-autotune", o->cudnn_autotune, &o->cfg.cudnn_autotune)) != 0
      || (status = parse_on_off ("--cuda-graphs", o->cuda_graphs, &o->cfg.cuda_graphs)) != 0)
    return status;
  if (o->precision && !nl_precision_parse (o->precision, &o->cfg.precision))
    return nl_cli_usage_error ("--precision must be fp32, bf16 or fp16, not '%s'", o->precision);
  /* a stored 0 means "the default scale": given, it must be one */
  if (!isnan (o->loss_scale) && !(o->loss_scale > 0))
    return nl_cli_usage_error ("--loss-scale must be > 0");
  if (!isnan (o->loss_scale) && !check_option (&o->cfg, "--loss-scale", o->loss_scale, &error))
    return nl_cli_usage_error ("%s", error->message);
  if (!isnan (o->loss_scale))
    o->cfg.loss_scale = (float) o->loss_scale;
  if (o->device && !nl_device_parse (o->device, &o->cfg.device, &error))
    return nl_cli_usage_error ("--device: %s", error->message);
  /* before the project is opened: an absent GPU leaves no failed run behind */
  if (!nl_device_check (o->cfg.device, &error))
    return nl_cli_usage_error ("--device: %s", error->message);

  nl_run_config_set_optimizer (&o->cfg, o->kind);
  if (!isnan (o->lr))
    o->cfg.optim.lr = (float) o->lr;
  if (!isnan (o->momentum))
    o->cfg.optim.momentum = (float) o->momentum;
  if (!isnan (o->wd))
    o->cfg.optim.wd = (float) o->wd;
  if (!isnan (o->clip))
    o->cfg.optim.clip_global_norm = (float) o->clip;
  if (!isnan (o->beta1))
    o->cfg.optim.beta1 = (float) o->beta1;
  if (!isnan (o->beta2))
    o->cfg.optim.beta2 = (float) o->beta2;
  if (!isnan (o->epsilon))
    o->cfg.optim.epsilon = (float) o->epsilon;
  if (!isnan (o->rho))
    o->cfg.optim.rho = (float) o->rho;
  if (o->nesterov)
    o->cfg.optim.nesterov = TRUE;
  if (o->centered)
    o->cfg.optim.centered = TRUE;
  /* the dataset with its default normalisation, then the options' */
  nl_cli_data_options_apply (&o->data, &o->cfg, TRUE);
  nl_run_config_set_text (&o->cfg.augment, o->augment);
  if (o->loss)
    nl_run_config_set_text (&o->cfg.loss, o->loss);
  nl_run_config_set_text (&o->cfg.lr_schedule, o->schedule);
  o->cfg.seed = (guint64) o->seed;
  /* the rest (metric names, anything an option does not check) */
  if (!nl_run_config_check (&o->cfg, &error))
    return nl_cli_usage_error ("%s", error->message);
  return 0;
}
