/* cli-train.c — netloom-cli train */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#include "cli-common.h"
#include "core/nl-comm.h"
#include "core/nl-device.h"
#include "engine/session/nl-run.h"

static double
peak_rss_mb (void)
{
  struct rusage ru;
  getrusage (RUSAGE_SELF, &ru);
  return ru.ru_maxrss / 1024.0;
}

static gboolean
on_batch (gpointer user, int epoch, int64_t batch, int64_t n_batches, double loss, double elapsed)
{
  NlTrainOutput *o = user;
  g_autofree char *label = g_strdup_printf ("epoch %d/%d", epoch, o->epochs);
  nl_progress_update (o->progress, label, batch, n_batches, elapsed, loss);
  return !nl_cli_interrupted ();
}

static void
on_epoch (gpointer user, const NlEpochReport *r)
{
  NlTrainOutput *o = user;
  nl_progress_clear (o->progress);
  if (o->json)
    {
      /* fixed decimals: JSON readers get short, stable numbers */
      g_autofree char *name = g_strescape (o->network, NULL);
      g_autofree char *run = o->run > 0 ? g_strdup_printf ("\"run\":%" G_GINT64_FORMAT ",", o->run) : g_strdup ("");
      NlComm *comm = nl_comm_world ();
      /* a data-parallel run: its processes, and the seconds this one
       * all-reduced, in all and not hidden behind backward */
      g_autofree char *group = comm ? g_strdup_printf (",\"processes\":%d,\"allreduce_s\":%.4f,"
                                                       "\"allreduce_exposed_s\":%.4f", comm->size, r->comm_seconds,
                                                       r->comm_exposed_seconds)
                                    : g_strdup ("");
      printf ("{\"impl\":\"netloom\",%s\"network\":\"%s\",\"threads\":%d,\"epoch\":%d,\"seconds\":%.4f,"
              "\"images_per_s\":%.1f,\"train_loss\":%.5f,\"train_acc\":%.5f,\"test_acc\":%.5f,\"lr\":%.6g,"
              "\"peak_rss_mb\":%.1f%s}\n",
              run, name, o->threads, r->epoch, r->seconds, r->images_per_s, r->train_loss, r->train_acc,
              r->test_acc, r->lr, peak_rss_mb (), group);
    }
  else
    printf ("epoch %d/%d  train loss %.4f  train acc %.4f  test acc %.4f  %.1f s  %.0f images/s\n", r->epoch,
            o->epochs, r->train_loss, r->train_acc, r->test_acc, r->seconds, r->images_per_s);
  fflush (stdout);
}

/* Messages of the run (early stopping) between progress lines. */
static void
on_log (gpointer user, const char *line)
{
  NlTrainOutput *o = user;
  if (o->json)
    return;
  nl_progress_clear (o->progress);
  printf ("%s\n", line);
  fflush (stdout);
}

NlTrainCallbacks
nl_cli_train_output (NlTrainOutput *out)
{
  return (NlTrainCallbacks) { on_batch, on_epoch, out, NULL };
}


/* The options that set a number of the run settings, checked against
 * that setting's limits (nl-run-config.c's table). */
static const struct {
  const char *option, *field;
  gboolean bound;           /* parsed straight into the settings */
} checked[] = {
  { "--epochs", "epochs", TRUE }, { "--batch-size", "batch_size", TRUE }, { "--threads", "threads", TRUE },
  { "--keep-checkpoints", "keep_last", TRUE }, { "--workers", "workers", TRUE },
  { "--scheduler-workers", "scheduler_workers", TRUE },
  { "--val-fraction", "val_fraction", TRUE }, { "--patience", "patience", TRUE },
  { "--min-delta", "min_delta", TRUE }, { "--lr", "lr", FALSE }, { "--momentum", "momentum", FALSE },
  { "--wd", "wd", FALSE }, { "--clip-norm", "clip_global_norm", FALSE }, { "--mean", "mean", FALSE },
  { "--std", "std", FALSE }, { "--loss-scale", "loss_scale", FALSE }, { "--beta1", "beta1", FALSE },
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

int
nl_cli_train (int argc, char **argv)
{
  g_auto (NlRunConfig) cfg = { 0 };
  g_autofree char *network = NULL, *dataset = NULL, *optimizer = NULL, *schedule = NULL, *loss = NULL;
  g_autofree char *augment = NULL, *label_column = NULL, *image_size = NULL, *project_path = NULL, *run_name = NULL;
  g_autofree char *val_dataset = NULL, *monitor = NULL, *early_stop = NULL;
  g_autofree char *device = NULL, *precision = NULL;
  double lr = NAN, momentum = NAN, wd = NAN, clip = NAN, mean = NAN, std = NAN, loss_scale = NAN;
  double beta1 = NAN, beta2 = NAN, epsilon = NAN, rho = NAN;
  gboolean nesterov = FALSE, centered = FALSE;
  gint64 seed;
  gboolean json = FALSE;
  g_autoptr (GPtrArray) texts = g_ptr_array_new_with_free_func (g_free);
  GOptionEntry entries[] = {
    { "network", 'n', 0, G_OPTION_ARG_FILENAME, &network, "Network file (JSON, e.g. data/networks/lenet.json)", "FILE" },
    { "dataset", 'd', 0, G_OPTION_ARG_STRING, &dataset,
      "fashion-mnist[:DIR] (default), mnist:DIR, cifar10:DIR, csv:FILE, folder:DIR or packed:FILE", "SPEC" },
    { "label-column", 0, 0, G_OPTION_ARG_STRING, &label_column, "csv: the label column, by name or 0-based index "
      "(default: the last)", "NAME|INDEX" },
    { "regression", 0, 0, G_OPTION_ARG_NONE, &cfg.data.regression, "csv: the label is a real value (use --loss L2Loss)",
      NULL },
    { "image-size", 0, 0, G_OPTION_ARG_STRING, &image_size, "folder: resize every image to WxH "
      "(default: the first image's size)", "WxH" },
    { "val-dataset", 0, 0, G_OPTION_ARG_STRING, &val_dataset, "Evaluate on all of this dataset (a split by file) "
      "instead of the test split", "SPEC" },
    { "restore-best", 0, 0, G_OPTION_ARG_NONE, &cfg.restore_best, "With --project: end the run with the weights of its "
      "best epoch (by test accuracy) as its last checkpoint", NULL },
    { "checkpoint-metric", 0, 0, G_OPTION_ARG_STRING, &monitor, "With --project: what the best checkpoint is best "
      "at: test_accuracy (default), train_accuracy or train_loss", "NAME" },
    { "early-stop", 0, 0, G_OPTION_ARG_STRING, &early_stop, "With --project: stop when METRIC (test_accuracy, "
      "train_accuracy or train_loss) has not improved for --patience epochs", "METRIC" },
    { "patience", 0, 0, G_OPTION_ARG_INT, &cfg.patience, "Epochs without improvement before early stopping",
      "N" },
    { "min-delta", 0, 0, G_OPTION_ARG_DOUBLE, &cfg.min_delta, "Smallest change that counts as an improvement",
      "X" },
    { "keep-checkpoints", 0, 0, G_OPTION_ARG_INT, &cfg.keep_last, "With --project: newest checkpoints kept besides the "
      "best", "K" },
    { "val-fraction", 0, 0, G_OPTION_ARG_DOUBLE, &cfg.data.val_fraction, "csv, folder: share held out for evaluation", "F" },
    { "workers", 'w', 0, G_OPTION_ARG_INT, &cfg.workers, "Loader threads that decode and augment ahead of training; "
      "0 loads in the training thread", "N" },
    { "scheduler-workers", 0, 0, G_OPTION_ARG_INT, &cfg.scheduler_workers, "Threads of the dependency scheduler: "
      "independent branches of the network run at once; 0: ops run in order on the training thread", "N" },
    { "augment", 'a', 0, G_OPTION_ARG_STRING, &augment, "Training transforms, comma-separated: random-crop:SIZE[:PAD], "
      "center-crop:SIZE, resize:WxH, flip, brightness:X, contrast:X, normalize:M:S", "LIST" },
    { "mean", 0, 0, G_OPTION_ARG_DOUBLE, &mean, "Input normalisation mean (default 0.13 for (fashion-)mnist, "
      "0.47 for cifar10, else 0)", "M" },
    { "std", 0, 0, G_OPTION_ARG_DOUBLE, &std, "Input normalisation std (default 0.31, 0.25, else 1)", "S" },
    { "epochs", 'e', 0, G_OPTION_ARG_INT, &cfg.epochs, "Epochs to train", "N" },
    { "batch-size", 'b', 0, G_OPTION_ARG_INT, &cfg.batch_size, "Samples per batch", "B" },
    { "optimizer", 'o', 0, G_OPTION_ARG_STRING, &optimizer,
      "sgd (default), nag, adam, adamw, rmsprop or adagrad", "NAME" },
    { "lr", 0, 0, G_OPTION_ARG_DOUBLE, &lr, "Learning rate (default: the optimizer's; sgd 0.1)", "X" },
    { "momentum", 0, 0, G_OPTION_ARG_DOUBLE, &momentum, "Momentum (sgd, nag, rmsprop)", "M" },
    { "wd", 0, 0, G_OPTION_ARG_DOUBLE, &wd, "Weight decay", "W" },
    { "clip-norm", 0, 0, G_OPTION_ARG_DOUBLE, &clip, "Clip gradients by global L2 norm (0: off)", "X" },
    { "nesterov", 0, 0, G_OPTION_ARG_NONE, &nesterov, "sgd: Nesterov momentum", NULL },
    { "beta1", 0, 0, G_OPTION_ARG_DOUBLE, &beta1, "adam, adamw: first moment decay (default 0.9)", "B" },
    { "beta2", 0, 0, G_OPTION_ARG_DOUBLE, &beta2, "adam, adamw: second moment decay (default 0.999)", "B" },
    { "epsilon", 0, 0, G_OPTION_ARG_DOUBLE, &epsilon, "adam, adamw, rmsprop, adagrad: the denominator's "
      "epsilon (default: the optimizer's)", "E" },
    { "rho", 0, 0, G_OPTION_ARG_DOUBLE, &rho, "rmsprop: squared gradient decay (default 0.9)", "R" },
    { "centered", 0, 0, G_OPTION_ARG_NONE, &centered, "rmsprop: centered (divide by the gradient's variance)",
      NULL },
    { "lr-schedule", 0, 0, G_OPTION_ARG_STRING, &schedule,
      "constant (default), factor:STEP:F, multifactor:S1,S2:F, cosine[:FINAL], poly[:P[:FINAL]], "
      "each optionally +warmup:STEPS", "SPEC" },
    { "loss", 0, 0, G_OPTION_ARG_STRING, &loss, "Loss when the network has none (default SoftmaxCrossEntropy)", "OP" },
    { "seed", 's', 0, G_OPTION_ARG_INT64, &seed, "Random seed for initialisation and shuffling (default 0)", "S" },
    { "threads", 't', 0, G_OPTION_ARG_INT, &cfg.threads, "Worker threads; 0: all cores", "T" },
    { "device", 0, 0, G_OPTION_ARG_STRING, &device, "Train on cpu (default), cuda (the first GPU) or cuda:N "
      "(see 'netloom-cli devices')", "DEVICE" },
    { "precision", 0, 0, G_OPTION_ARG_STRING, &precision, "fp32 (default), or bf16 or fp16 autocast of Dense and "
      "Conv2D (float32 weights and accumulation)", "P" },
    { "loss-scale", 0, 0, G_OPTION_ARG_DOUBLE, &loss_scale, "fp16: the first dynamic loss scale (default 65536)",
      "X" },
    { "json", 0, 0, G_OPTION_ARG_NONE, &json, "Print one JSON object per epoch", NULL },
    { "project", 'p', 0, G_OPTION_ARG_FILENAME, &project_path, "Store the run, its metrics and checkpoints in "
      "this project (--network may then name one of its networks)", "FILE" },
    { "name", 0, 0, G_OPTION_ARG_STRING, &run_name, "Name of the run in the project", "NAME" },
    { "preload", 0, 0, G_OPTION_ARG_NONE, &cfg.preload, "Benchmark baseline: load each epoch into memory before "
      "timing it (the loop is then fed from memory)", NULL },
    { NULL }
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new ("- train a network");
  g_autoptr (GError) error = NULL;
  g_autoptr (NlNetwork) net = NULL;
  g_autoptr (NlTrainer) trainer = NULL;
  NlOptimKind kind = NL_OPTIM_SGD;
  NlTrainOutput out = { 0 };
  NlTrainCallbacks cb = nl_cli_train_output (&out);
  g_autoptr (NlProject) project = NULL;
  const NlRunField *width = nl_run_config_find_field ("image_width");
  int status;

  /* the defaults are the run settings' own */
  nl_run_config_init (&cfg);
  seed = (gint64) cfg.seed;
  describe_defaults (entries, texts);
  g_option_context_add_main_entries (ctx, entries, NULL);
  g_option_context_set_summary (ctx, "Trains on the training split and evaluates on the test split after every epoch.");
  g_option_context_set_description (ctx,
    "Example:\n  netloom-cli train --network data/networks/lenet.json --dataset fashion-mnist \\\n"
    "      --epochs 5 --batch-size 128 --optimizer sgd --lr 0.05\n");
  if (!g_option_context_parse (ctx, &argc, &argv, &error))
    return nl_cli_usage_error ("%s (see 'netloom-cli train --help')", error->message);
  if (argc > 1)
    return nl_cli_usage_error ("unexpected argument '%s'", argv[1]);
  if (!network)
    return nl_cli_usage_error ("--network FILE is required");
  /* the options bound to the settings, then those read as doubles */
  for (gsize i = 0; i < G_N_ELEMENTS (checked); i++)
    if (checked[i].bound && !check_option (&cfg, checked[i].option, NAN, &error))
      return nl_cli_usage_error ("%s", error->message);
  if (optimizer && !nl_optim_kind_parse (optimizer, &kind, &error))
    return nl_cli_usage_error ("%s", error->message);
  if (early_stop && !project_path)
    return nl_cli_usage_error ("--early-stop needs --project (the run records which epoch was best)");
  nl_run_config_set_text (&cfg.monitor, monitor);
  nl_run_config_set_text (&cfg.early_stop_metric, early_stop);
  if (!check_option (&cfg, "--std", std, &error) || !check_option (&cfg, "--mean", mean, &error))
    return nl_cli_usage_error ("%s", error->message);
  if (image_size && sscanf (image_size, "%dx%d", &cfg.data.image_width, &cfg.data.image_height) != 2)
    return nl_cli_usage_error ("--image-size must look like 32x32, not '%s'", image_size);
  if (image_size && (cfg.data.image_width < 1 || cfg.data.image_height < 1 || cfg.data.image_width > width->max
                     || cfg.data.image_height > width->max))
    return nl_cli_usage_error ("--image-size must be between 1x1 and %gx%g", width->max, width->max);
  if ((!isnan (lr) && !check_option (&cfg, "--lr", lr, &error))
      || (!isnan (momentum) && !check_option (&cfg, "--momentum", momentum, &error))
      || (!isnan (wd) && !check_option (&cfg, "--wd", wd, &error))
      || (!isnan (clip) && !check_option (&cfg, "--clip-norm", clip, &error))
      || (!isnan (beta1) && !check_option (&cfg, "--beta1", beta1, &error))
      || (!isnan (beta2) && !check_option (&cfg, "--beta2", beta2, &error))
      || (!isnan (epsilon) && !check_option (&cfg, "--epsilon", epsilon, &error))
      || (!isnan (rho) && !check_option (&cfg, "--rho", rho, &error)))
    return nl_cli_usage_error ("%s", error->message);
  if (precision && !nl_precision_parse (precision, &cfg.precision))
    return nl_cli_usage_error ("--precision must be fp32, bf16 or fp16, not '%s'", precision);
  /* a stored 0 means "the default scale": given, it must be one */
  if (!isnan (loss_scale) && !(loss_scale > 0))
    return nl_cli_usage_error ("--loss-scale must be > 0");
  if (!isnan (loss_scale) && !check_option (&cfg, "--loss-scale", loss_scale, &error))
    return nl_cli_usage_error ("%s", error->message);
  if (!isnan (loss_scale))
    cfg.loss_scale = (float) loss_scale;
  if (device && !nl_device_parse (device, &cfg.device, &error))
    return nl_cli_usage_error ("--device: %s", error->message);
  /* before the project is opened: an absent GPU leaves no failed run behind */
  if (!nl_device_check (cfg.device, &error))
    return nl_cli_usage_error ("--device: %s", error->message);

  nl_run_config_set_optimizer (&cfg, kind);
  if (!isnan (lr))
    cfg.optim.lr = (float) lr;
  if (!isnan (momentum))
    cfg.optim.momentum = (float) momentum;
  if (!isnan (wd))
    cfg.optim.wd = (float) wd;
  if (!isnan (clip))
    cfg.optim.clip_global_norm = (float) clip;
  if (!isnan (beta1))
    cfg.optim.beta1 = (float) beta1;
  if (!isnan (beta2))
    cfg.optim.beta2 = (float) beta2;
  if (!isnan (epsilon))
    cfg.optim.epsilon = (float) epsilon;
  if (!isnan (rho))
    cfg.optim.rho = (float) rho;
  if (nesterov)
    cfg.optim.nesterov = TRUE;
  if (centered)
    cfg.optim.centered = TRUE;
  /* the dataset with its default normalisation, then the options' */
  nl_run_config_set_dataset (&cfg, dataset ? dataset : cfg.dataset);
  if (!isnan (mean))
    cfg.mean = (float) mean;
  if (!isnan (std))
    cfg.std = (float) std;
  nl_run_config_set_text (&cfg.augment, augment);
  nl_run_config_set_text (&cfg.val_dataset, val_dataset);
  nl_run_config_set_text ((char **) &cfg.data.label_column, label_column);
  if (loss)
    nl_run_config_set_text (&cfg.loss, loss);
  nl_run_config_set_text (&cfg.lr_schedule, schedule);
  cfg.seed = (guint64) seed;
  /* the rest (metric names, anything an option does not check) */
  if (!nl_run_config_check (&cfg, &error))
    return nl_cli_usage_error ("%s", error->message);

  if (nl_comm_world () && nl_comm_world ()->rank > 0)
    {
      /* rank 0 has the project and sends the job; this process says what
       * it was told, to be compared (a network stored in the project:
       * only rank 0 can read it) */
      g_autoptr (NlNetwork) own = g_file_test (network, G_FILE_TEST_EXISTS) ? nl_network_load_file (network, NULL)
                                                                            : NULL;
      return nl_cli_follow (own, own ? &cfg : NULL);
    }
  if (project_path)
    {
      project = nl_project_open (project_path, FALSE, &error);
      if (!project)
        return nl_cli_group_fail (error);
    }
  if (project && !g_file_test (network, G_FILE_TEST_EXISTS))
    {
      /* a network stored in the project, by name */
      g_autofree char *json_text = nl_project_load_network (project, network, 0, &error);
      if (!json_text)
        return nl_cli_group_fail (error);
      net = nl_network_load_data (json_text, -1, &error);
    }
  else
    net = nl_network_load_file (network, &error);
  if (!net)
    return nl_cli_group_fail (error);
  out.json = json;
  out.epochs = cfg.epochs;
  out.network = net->name;
  nl_cli_catch_interrupt ();
  if (project)
    {
      NlRunCallbacks rcb = { .chain = cb, .log = on_log };
      gboolean ok;
      nl_threads_set (cfg.threads);
      out.threads = nl_threads_get ();
      out.progress = json ? NULL : nl_progress_new ();
      /* the run id is known only once the row exists: the first epoch line carries it */
      ok = nl_run_train (project, run_name, net, &cfg, &rcb, &out.run, &error);
      nl_progress_clear (out.progress);
      nl_progress_free (out.progress);
      if (!json)
        printf ("run %" G_GINT64_FORMAT " %s\n", out.run, ok ? "finished" : "did not finish");
      return ok ? 0 : nl_cli_group_fail (error);
    }
  if (cfg.restore_best)
    return nl_cli_usage_error ("--restore-best needs --project (the best epoch is kept as a checkpoint)");

  trainer = nl_trainer_new (net, &cfg, &error);
  if (!trainer)
    return nl_cli_group_fail (error);
  out.threads = nl_threads_get ();
  out.progress = json ? NULL : nl_progress_new ();
  if (!json)
    {
      g_autofree char *dev = nl_device_to_string (cfg.device);
      printf ("training %s (%" G_GINT64_FORMAT " parameters) on %s, %d epochs, batch %d, %s lr %g, %s %s\n",
              net->name, nl_trainer_get_model (trainer)->n_params, nl_trainer_get_train_set (trainer)->description,
              cfg.epochs, cfg.batch_size, nl_optim_kind_name (kind), cfg.optim.lr, dev,
              nl_precision_name (cfg.precision));
    }
  status = nl_trainer_run (trainer, &cb, &error) ? 0 : nl_cli_group_fail (error);
  nl_progress_clear (out.progress);
  nl_progress_free (out.progress);
  return status;
}
