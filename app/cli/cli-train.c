/* cli-train.c — netloom-cli train */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#include "cli-common.h"
#include "core/nl-comm.h"
#include "cli-train-options.h"
#include "core/nl-device.h"
#include "core/nl-atomic-file.h"
#include "engine/session/nl-run.h"
#include "engine/session/nl-run-monitor.h"

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
  if (o->monitor && !nl_run_monitor_step (o->monitor, ++o->steps, epoch, &o->monitor_error))
    return FALSE;
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
      char loss[64], train_acc[64], test_acc[64];
      printf ("{\"impl\":\"netloom\",%s\"network\":\"%s\",\"threads\":%d,\"epoch\":%d,\"seconds\":%.4f,"
              "\"images_per_s\":%.1f,\"train_loss\":%s,\"train_acc\":%s,\"test_acc\":%s,\"lr\":%.6g,"
              "\"peak_rss_mb\":%.1f%s}\n",
              run, name, o->threads, r->epoch, r->seconds, r->images_per_s,
              nl_cli_json_number (loss, sizeof loss, 5, r->train_loss),
              nl_cli_json_number (train_acc, sizeof train_acc, 5, r->train_acc),
              nl_cli_json_number (test_acc, sizeof test_acc, 5, r->test_acc), r->lr, peak_rss_mb (), group);
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


/* Training outside a project: nothing stored; with --profile its monitor
 * writes the trace (no metrics). */
static int
train_alone (const NlNetwork *net, const NlRunConfig *cfg, NlTrainOutput *out, NlProfiler *profiler)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (NlTrainer) trainer = nl_trainer_new (net, cfg, &error);
  NlTrainCallbacks cb = nl_cli_train_output (out);
  int status;
  if (!trainer)
    return nl_cli_group_fail (error);
  out->threads = nl_threads_get ();
  out->progress = out->json ? NULL : nl_progress_new ();
  if (!out->json)
    {
      g_autofree char *dev = nl_device_to_string (cfg->device);
      printf ("training %s (%" G_GINT64_FORMAT " parameters) on %s, %d epochs, batch %d, %s lr %g, %s %s\n",
              net->name, nl_trainer_get_model (trainer)->n_params, nl_trainer_get_train_set (trainer)->description,
              cfg->epochs, cfg->batch_size, nl_optim_kind_name (cfg->optim.kind), cfg->optim.lr, dev,
              nl_precision_name (cfg->precision));
    }
  if (profiler)
    out->monitor = nl_run_monitor_new (trainer, NULL, 0, profiler, on_log, out);
  status = (!out->monitor || nl_run_monitor_step (out->monitor, 0, 1, &error)) && nl_trainer_run (trainer, &cb, &error)
           && (!out->monitor || nl_run_monitor_finish (out->monitor, out->steps, out->epochs, &error))
           ? 0 : nl_cli_group_fail (out->monitor_error ? out->monitor_error : error);
  g_clear_pointer (&out->monitor, nl_run_monitor_free);
  g_clear_error (&out->monitor_error);
  nl_progress_clear (out->progress);
  nl_progress_free (out->progress);
  return status;
}

int
nl_cli_train (int argc, char **argv)
{
  g_autoptr (NlCliTrainOptions) o = nl_cli_train_options_new ();
  g_autoptr (GOptionContext) ctx = g_option_context_new ("- train a network");
  g_autoptr (GError) error = NULL;
  g_autoptr (NlNetwork) net = NULL;
  NlTrainOutput out = { 0 };
  NlTrainCallbacks cb = nl_cli_train_output (&out);
  g_autoptr (NlProject) project = NULL;
  NlRunConfig *cfg = &o->cfg;
  const char *network, *project_path;
  gboolean json;
  int status;

  g_autofree char *profile = NULL;
  int profile_steps = 0;
  GOptionEntry profile_entries[] = {
    { "profile", 0, 0, G_OPTION_ARG_FILENAME, &profile, "Write a trace of the training (every op's forward and "
      "backward, the loader's batches, the all-reduce buckets) to FILE, for Perfetto or 'netloom-cli profile'",
      "FILE.json" },
    { "profile-steps", 0, 0, G_OPTION_ARG_INT, &profile_steps, "With --profile: trace the first N steps only "
      "(default: all)", "N" },
    { NULL }
  };
  g_autoptr (NlProfiler) profiler = NULL;

  g_option_context_add_main_entries (ctx, o->entries, NULL);
  g_option_context_add_main_entries (ctx, profile_entries, NULL);
  g_option_context_set_summary (ctx, "Trains on the training split and evaluates on the test split after every epoch.");
  g_option_context_set_description (ctx,
    "Example:\n  netloom-cli train --network data/networks/lenet.json --dataset fashion-mnist \\\n"
    "      --epochs 5 --batch-size 128 --optimizer sgd --lr 0.05\n");
  if (!g_option_context_parse (ctx, &argc, &argv, &error))
    return nl_cli_usage_error ("%s (see 'netloom-cli train --help')", error->message);
  if (argc > 1)
    return nl_cli_usage_error ("unexpected argument '%s'", argv[1]);
  if (!o->network)
    return nl_cli_usage_error ("--network FILE is required");
  if ((status = nl_cli_train_options_finish (o)) != 0)
    return status;
  if (profile_steps < 0 || (profile_steps > 0 && !profile))
    return nl_cli_usage_error ("--profile-steps must be at least 1, and goes with --profile");
  if (profile)
    {
      /* a trace that could not be written is said before training, not after */
      g_autoptr (NlAtomicFile) f = nl_atomic_file_open (profile, &error);
      if (!f)
        return nl_cli_fail (error);
      profiler = nl_profiler_new ();
      nl_profiler_request (profiler, profile_steps, profile);
    }
  network = o->network;
  project_path = o->project_path;
  json = o->json;

  if (nl_comm_world () && nl_comm_world ()->rank > 0)
    {
      /* rank 0 has the project and sends the job; this process says what
       * it was told, to be compared (a network stored in the project:
       * only rank 0 can read it) */
      g_autoptr (NlNetwork) own = g_file_test (network, G_FILE_TEST_EXISTS) ? nl_network_load_file (network, NULL)
                                                                            : NULL;
      return nl_cli_follow (own, own ? cfg : NULL);
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
  out.epochs = cfg->epochs;
  out.network = net->name;
  nl_cli_catch_interrupt ();
  if (project)
    {
      NlRunCallbacks rcb = { .chain = cb, .log = on_log, .profiler = profiler };
      gboolean ok;
      nl_threads_set (cfg->threads);
      out.threads = nl_threads_get ();
      out.progress = json ? NULL : nl_progress_new ();
      /* the run id is known only once the row exists: the first epoch line carries it */
      ok = nl_run_train (project, o->run_name, net, cfg, &rcb, &out.run, &error);
      nl_progress_clear (out.progress);
      nl_progress_free (out.progress);
      if (!json && out.run > 0)  /* 0: refused before its row was written */
        printf ("run %" G_GINT64_FORMAT " %s\n", out.run, ok ? "finished" : "did not finish");
      return ok ? 0 : nl_cli_group_fail (error);
    }
  if (cfg->restore_best)
    return nl_cli_usage_error ("--restore-best needs --project (the best epoch is kept as a checkpoint)");

  return train_alone (net, cfg, &out, profiler);
}
