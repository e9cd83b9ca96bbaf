/* cli-train.c — netloom-cli train */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#include "cli-common.h"
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
      printf ("{\"impl\":\"netloom\",%s\"network\":\"%s\",\"threads\":%d,\"epoch\":%d,\"seconds\":%.4f,"
              "\"images_per_s\":%.1f,\"train_loss\":%.5f,\"train_acc\":%.5f,\"test_acc\":%.5f,\"lr\":%.6g,"
              "\"peak_rss_mb\":%.1f}\n",
              run, name, o->threads, r->epoch, r->seconds, r->images_per_s, r->train_loss, r->train_acc,
              r->test_acc, r->lr, peak_rss_mb ());
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


int
nl_cli_train (int argc, char **argv)
{
  g_autofree char *network = NULL, *dataset = NULL, *optimizer = NULL, *schedule = NULL, *loss = NULL;
  g_autofree char *augment = NULL, *label_column = NULL, *image_size = NULL, *project_path = NULL, *run_name = NULL;
  g_autofree char *val_dataset = NULL, *monitor = NULL, *early_stop = NULL;
  g_autofree char *device = NULL, *precision = NULL;
  double loss_scale = NAN;
  int patience = 3;
  double min_delta = 0;
  int keep = 3;
  gboolean restore_best = FALSE;
  int epochs = 5, batch = 128, threads = 0, workers = 1;
  double lr = NAN, momentum = NAN, wd = NAN, clip = 0, mean = NAN, std = NAN, val_fraction = 0.1;
  gboolean regression = FALSE, preload = FALSE;
  gint64 seed = 0;
  gboolean json = FALSE;
  GOptionEntry entries[] = {
    { "network", 'n', 0, G_OPTION_ARG_FILENAME, &network, "Network file (JSON, e.g. data/networks/lenet.json)", "FILE" },
    { "dataset", 'd', 0, G_OPTION_ARG_STRING, &dataset,
      "fashion-mnist[:DIR] (default), mnist:DIR, cifar10:DIR, csv:FILE, folder:DIR or packed:FILE", "SPEC" },
    { "label-column", 0, 0, G_OPTION_ARG_STRING, &label_column, "csv: the label column, by name or 0-based index "
      "(default: the last)", "NAME|INDEX" },
    { "regression", 0, 0, G_OPTION_ARG_NONE, &regression, "csv: the label is a real value (use --loss L2Loss)", NULL },
    { "image-size", 0, 0, G_OPTION_ARG_STRING, &image_size, "folder: resize every image to WxH "
      "(default: the first image's size)", "WxH" },
    { "val-dataset", 0, 0, G_OPTION_ARG_STRING, &val_dataset, "Evaluate on all of this dataset (a split by file) "
      "instead of the test split", "SPEC" },
    { "restore-best", 0, 0, G_OPTION_ARG_NONE, &restore_best, "With --project: end the run with the weights of its "
      "best epoch (by test accuracy) as its last checkpoint", NULL },
    { "checkpoint-metric", 0, 0, G_OPTION_ARG_STRING, &monitor, "With --project: what the best checkpoint is best "
      "at: test_accuracy (default), train_accuracy or train_loss", "NAME" },
    { "early-stop", 0, 0, G_OPTION_ARG_STRING, &early_stop, "With --project: stop when METRIC (test_accuracy, "
      "train_accuracy or train_loss) has not improved for --patience epochs", "METRIC" },
    { "patience", 0, 0, G_OPTION_ARG_INT, &patience, "Epochs without improvement before early stopping (default 3)",
      "N" },
    { "min-delta", 0, 0, G_OPTION_ARG_DOUBLE, &min_delta, "Smallest change that counts as an improvement (default 0)",
      "X" },
    { "keep-checkpoints", 0, 0, G_OPTION_ARG_INT, &keep, "With --project: newest checkpoints kept besides the "
      "best (default 3)", "K" },
    { "val-fraction", 0, 0, G_OPTION_ARG_DOUBLE, &val_fraction, "csv, folder: share held out for evaluation "
      "(default 0.1)", "F" },
    { "workers", 'w', 0, G_OPTION_ARG_INT, &workers, "Loader threads that decode and augment ahead of training "
      "(default 1; 0 loads in the training thread)", "N" },
    { "augment", 'a', 0, G_OPTION_ARG_STRING, &augment, "Training transforms, comma-separated: random-crop:SIZE[:PAD], "
      "center-crop:SIZE, resize:WxH, flip, brightness:X, contrast:X, normalize:M:S", "LIST" },
    { "mean", 0, 0, G_OPTION_ARG_DOUBLE, &mean, "Input normalisation mean (default 0.13 for (fashion-)mnist, "
      "0.47 for cifar10, else 0)", "M" },
    { "std", 0, 0, G_OPTION_ARG_DOUBLE, &std, "Input normalisation std (default 0.31, 0.25, else 1)", "S" },
    { "epochs", 'e', 0, G_OPTION_ARG_INT, &epochs, "Epochs to train (default 5)", "N" },
    { "batch-size", 'b', 0, G_OPTION_ARG_INT, &batch, "Samples per batch (default 128)", "B" },
    { "optimizer", 'o', 0, G_OPTION_ARG_STRING, &optimizer,
      "sgd (default), nag, adam, adamw, rmsprop or adagrad", "NAME" },
    { "lr", 0, 0, G_OPTION_ARG_DOUBLE, &lr, "Learning rate (default: the optimizer's; sgd 0.1)", "X" },
    { "momentum", 0, 0, G_OPTION_ARG_DOUBLE, &momentum, "Momentum (sgd, nag, rmsprop)", "M" },
    { "wd", 0, 0, G_OPTION_ARG_DOUBLE, &wd, "Weight decay", "W" },
    { "clip-norm", 0, 0, G_OPTION_ARG_DOUBLE, &clip, "Clip gradients by global L2 norm (0: off)", "X" },
    { "lr-schedule", 0, 0, G_OPTION_ARG_STRING, &schedule,
      "constant (default), factor:STEP:F, multifactor:S1,S2:F, cosine[:FINAL], poly[:P[:FINAL]], "
      "each optionally +warmup:STEPS", "SPEC" },
    { "loss", 0, 0, G_OPTION_ARG_STRING, &loss, "Loss when the network has none (default SoftmaxCrossEntropy)", "OP" },
    { "seed", 's', 0, G_OPTION_ARG_INT64, &seed, "Random seed for initialisation and shuffling (default 0)", "S" },
    { "threads", 't', 0, G_OPTION_ARG_INT, &threads, "Worker threads (default: all cores)", "T" },
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
    { "preload", 0, 0, G_OPTION_ARG_NONE, &preload, "Benchmark baseline: load each epoch into memory before "
      "timing it (the loop is then fed from memory)", NULL },
    { NULL }
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new ("- train a network");
  g_autoptr (GError) error = NULL;
  g_autoptr (NlNetwork) net = NULL;
  g_autoptr (NlTrainer) trainer = NULL;
  NlTrainConfig cfg;
  NlOptimKind kind = NL_OPTIM_SGD;
  NlTrainOutput out = { 0 };
  NlTrainCallbacks cb = nl_cli_train_output (&out);
  g_autoptr (NlProject) project = NULL;
  int status;

  nl_train_config_init (&cfg);
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
  if (epochs < 1)
    return nl_cli_usage_error ("--epochs must be at least 1, not %d", epochs);
  if (batch < 1 || batch > 1 << 20)
    return nl_cli_usage_error ("--batch-size must be between 1 and 1048576, not %d", batch);
  if (threads < 0 || threads > 1024)
    return nl_cli_usage_error ("--threads must be between 1 and 1024, not %d", threads);
  if (optimizer && !nl_optim_kind_parse (optimizer, &kind, &error))
    return nl_cli_usage_error ("%s", error->message);
  if (keep < 1)
    return nl_cli_usage_error ("--keep-checkpoints must be at least 1, not %d", keep);
  if (early_stop && !project_path)
    return nl_cli_usage_error ("--early-stop needs --project (the run records which epoch was best)");
  if (!nl_run_monitor_check (monitor, &error))
    return nl_cli_usage_error ("%s", error->message);
  if (workers < 0 || workers > 64)
    return nl_cli_usage_error ("--workers must be between 0 and 64, not %d", workers);
  if (!(val_fraction >= 0 && val_fraction < 1))
    return nl_cli_usage_error ("--val-fraction must be in [0, 1), not %g", val_fraction);
  if (!isnan (std) && !(std > 0 && isfinite (std)))
    return nl_cli_usage_error ("--std must be > 0");
  if (image_size && sscanf (image_size, "%dx%d", &cfg.data.image_width, &cfg.data.image_height) != 2)
    return nl_cli_usage_error ("--image-size must look like 32x32, not '%s'", image_size);
  if (image_size && (cfg.data.image_width < 1 || cfg.data.image_height < 1 || cfg.data.image_width > 16384
                     || cfg.data.image_height > 16384))
    return nl_cli_usage_error ("--image-size must be between 1x1 and 16384x16384");
  if ((!isnan (lr) && !(lr > 0 && isfinite (lr))) || (!isnan (momentum) && !(momentum >= 0 && momentum < 1))
      || (!isnan (wd) && !(wd >= 0)) || !(clip >= 0))
    return nl_cli_usage_error ("--lr must be > 0, --momentum in [0, 1), --wd and --clip-norm >= 0");
  if (precision && !nl_precision_parse (precision, &cfg.precision))
    return nl_cli_usage_error ("--precision must be fp32, bf16 or fp16, not '%s'", precision);
  if (!isnan (loss_scale) && !(loss_scale > 0 && isfinite (loss_scale)))
    return nl_cli_usage_error ("--loss-scale must be > 0");
  if (!isnan (loss_scale))
    cfg.loss_scale = (float) loss_scale;
  if (device && !nl_device_parse (device, &cfg.device, &error))
    return nl_cli_usage_error ("--device: %s", error->message);
  /* before the project is opened: an absent GPU leaves no failed run behind */
  if (!nl_device_check (cfg.device, &error))
    return nl_cli_usage_error ("--device: %s", error->message);

  nl_optim_config_init (&cfg.optim, kind);
  if (kind == NL_OPTIM_SGD)
    cfg.optim.lr = 0.1f;
  if (!isnan (lr))
    cfg.optim.lr = (float) lr;
  if (!isnan (momentum))
    cfg.optim.momentum = (float) momentum;
  if (!isnan (wd))
    cfg.optim.wd = (float) wd;
  cfg.optim.clip_global_norm = (float) clip;
  if (dataset)
    cfg.dataset = dataset;
  if (!g_str_has_prefix (cfg.dataset, "mnist") && !g_str_has_prefix (cfg.dataset, "fashion-mnist"))
    {
      gboolean cifar = g_str_has_prefix (cfg.dataset, "cifar10");
      cfg.mean = cifar ? 0.47f : 0.0f;
      cfg.std = cifar ? 0.25f : 1.0f;
    }
  if (!isnan (mean))
    cfg.mean = (float) mean;
  if (!isnan (std))
    cfg.std = (float) std;
  cfg.workers = workers;
  cfg.preload = preload;
  cfg.augment = augment;
  cfg.val_dataset = val_dataset;
  cfg.data.label_column = label_column;
  cfg.data.regression = regression;
  cfg.data.val_fraction = val_fraction;
  if (loss)
    cfg.loss = loss;
  cfg.lr_schedule = schedule;
  cfg.epochs = epochs;
  cfg.batch_size = batch;
  cfg.seed = (guint64) seed;
  cfg.threads = threads;

  if (project_path)
    {
      project = nl_project_open (project_path, FALSE, &error);
      if (!project)
        return nl_cli_fail (error);
    }
  if (project && !g_file_test (network, G_FILE_TEST_EXISTS))
    {
      /* a network stored in the project, by name */
      g_autofree char *json_text = nl_project_load_network (project, network, 0, &error);
      if (!json_text)
        return nl_cli_fail (error);
      net = nl_network_load_data (json_text, -1, &error);
    }
  else
    net = nl_network_load_file (network, &error);
  if (!net)
    return nl_cli_fail (error);
  out.json = json;
  out.epochs = epochs;
  out.network = net->name;
  nl_cli_catch_interrupt ();
  if (project)
    {
      NlRunOptions ro = { .keep_last = keep, .monitor = monitor, .chain = cb, .restore_best = restore_best,
                          .early_stop_metric = early_stop, .patience = patience, .min_delta = min_delta,
                          .log = on_log };
      gboolean ok;
      if (!nl_run_options_check (&ro, &error))
        return nl_cli_usage_error ("%s", error->message);
      nl_threads_set (threads);
      out.threads = nl_threads_get ();
      out.progress = json ? NULL : nl_progress_new ();
      /* the run id is known only once the row exists: the first epoch line carries it */
      ok = nl_run_train (project, run_name, net, &cfg, &ro, &out.run, &error);
      nl_progress_clear (out.progress);
      nl_progress_free (out.progress);
      if (!json)
        printf ("run %" G_GINT64_FORMAT " %s\n", out.run, ok ? "finished" : "did not finish");
      return ok ? 0 : nl_cli_fail (error);
    }
  if (restore_best)
    return nl_cli_usage_error ("--restore-best needs --project (the best epoch is kept as a checkpoint)");

  trainer = nl_trainer_new (net, &cfg, &error);
  if (!trainer)
    return nl_cli_fail (error);
  out.threads = nl_threads_get ();
  out.progress = json ? NULL : nl_progress_new ();
  if (!json)
    {
      g_autofree char *dev = nl_device_to_string (cfg.device);
      printf ("training %s (%" G_GINT64_FORMAT " parameters) on %s, %d epochs, batch %d, %s lr %g, %s %s\n",
              net->name, nl_trainer_get_model (trainer)->n_params, nl_trainer_get_train_set (trainer)->description,
              epochs, batch, nl_optim_kind_name (kind), cfg.optim.lr, dev, nl_precision_name (cfg.precision));
    }
  status = nl_trainer_run (trainer, &cb, &error) ? 0 : nl_cli_fail (error);
  nl_progress_clear (out.progress);
  nl_progress_free (out.progress);
  return status;
}
