/* cli-project.c — the project commands: project new|info, runs, resume,
 * fork, watch, metrics, export, import-weights. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <json-glib/json-glib.h>

#include "cli-common.h"
#include "cli-data-options.h"
#include "core/nl-comm.h"
#include "engine/formats/nl-checkpoint.h"
#include "core/nl-device.h"
#include "core/nl-json-guard.h"
#include "core/nl-json-member.h"
#include "engine/formats/onnx/nl-onnx-export.h"
#include "engine/session/nl-run-onnx.h"
#include "engine/session/nl-run-export.h"
#include "engine/session/nl-run.h"

int
nl_cli_project (int argc, char **argv)
{
  gboolean sample = FALSE, json = FALSE;
  GOptionEntry entries[] = {
    { "sample", 0, 0, G_OPTION_ARG_NONE, &sample, "new: with a Fashion-MNIST pipeline and the mlp, lenet and "
      "resnet-small networks", NULL },
    { "json", 0, 0, G_OPTION_ARG_NONE, &json, "info: as JSON", NULL },
    { NULL }
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new ("new|info FILE - create or describe a project");
  g_autoptr (GError) error = NULL;
  int status = 0;

  if (!nl_cli_parse (ctx, entries, &argc, &argv, "project", &status))
    return status;
  if (argc != 3 || (strcmp (argv[1], "new") != 0 && strcmp (argv[1], "info") != 0))
    return nl_cli_usage_error ("usage: netloom-cli project new [--sample] FILE | project info [--json] FILE");
  if (strcmp (argv[1], "new") == 0)
    {
      g_autoptr (NlProject) p = NULL;
      if (g_file_test (argv[2], G_FILE_TEST_EXISTS))
        return nl_cli_usage_error ("%s exists already; projects are never overwritten", argv[2]);
      if (sample ? !nl_project_create_sample (argv[2], &error) : !(p = nl_project_open (argv[2], TRUE, &error)))
        return nl_cli_fail (error);
      printf ("created %s%s\n", argv[2], sample ? " (sample: fashion-mnist pipeline, mlp, lenet, resnet-small)" : "");
      return 0;
    }
  else
    {
      g_autoptr (NlProject) p = nl_cli_open_project (argv[2], &status);
      g_autoptr (GPtrArray) nets = NULL, runs = NULL, pipes = NULL;
      if (!p)
        return status;
      if (!(nets = nl_project_list_networks (p, &error)) || !(runs = nl_project_list_runs (p, &error))
          || !(pipes = nl_project_list_pipelines (p, &error)) || !nl_project_check (p, &error))
        return nl_cli_fail (error);
      if (json)
        {
          printf ("{\"path\":\"%s\",\"schema_version\":%d,\"integrity\":\"ok\",\"networks\":[", argv[2],
                  nl_project_schema_version (p));
          for (guint i = 0; i < nets->len; i++)
            {
              NlNetworkInfo *n = g_ptr_array_index (nets, i);
              printf ("%s{\"name\":\"%s\",\"versions\":%d}", i ? "," : "", n->name, n->n_versions);
            }
          printf ("],\"pipelines\":%u,\"runs\":%u}\n", pipes->len, runs->len);
        }
      else
        {
          printf ("%s: netloom project, schema %d, integrity ok\n", argv[2], nl_project_schema_version (p));
          printf ("networks:");
          for (guint i = 0; i < nets->len; i++)
            {
              NlNetworkInfo *n = g_ptr_array_index (nets, i);
              printf (" %s (v%d)", n->name, n->version);
            }
          printf ("\npipelines: %u\nruns: %u\n", pipes->len, runs->len);
        }
      return 0;
    }
}

/* A number, or "–" for one not measured yet (a run stopped before its
 * first epoch), for people. */
static const char *
text_number (char *buf, gsize size, double v)
{
  if (isnan (v))
    return "–";
  g_snprintf (buf, size, "%.4f", v);
  return buf;
}

/* ',"processes":N,"hosts":"..."' where a run trained under mpirun, else "" */
static char *
processes_json (const NlRunInfo *r)
{
  const char *hp = r->hparams_json && nl_json_check_depth (r->hparams_json, -1, "the run's settings", NULL)
                     ? r->hparams_json : "{}";
  g_autoptr (JsonNode) root = json_from_string (hp, NULL);
  JsonObject *o = root && JSON_NODE_HOLDS_OBJECT (root) ? json_node_get_object (root) : NULL;
  JsonNode *procs = o ? json_object_get_member (o, "processes") : NULL;
  const char *hosts = NULL;
  g_autofree char *escaped = NULL;
  /* the project is anyone's file: members of another type are left out */
  if (!procs || !JSON_NODE_HOLDS_VALUE (procs) || json_node_get_value_type (procs) != G_TYPE_INT64)
    return g_strdup ("");
  escaped = g_strescape (nl_json_string_member (o, "hosts", &hosts) && hosts ? hosts : "", NULL);
  return g_strdup_printf (",\"processes\":%" G_GINT64_FORMAT ",\"hosts\":\"%s\"", json_node_get_int (procs), escaped);
}

/* The run's INT8 models (netloom-cli quantize): ',"int8_models":[...]'
 * for --json, else one indented line each under the run's. */
static char *
int8_models_text (NlProject *p, gint64 run, gboolean json)
{
  g_autoptr (GArray) models = nl_project_list_int8_models (p, run, NULL);
  GString *s = g_string_new (json ? ",\"int8_models\":[" : "");
  char b[4][64];
  for (guint i = 0; models && i < models->len; i++)
    {
      const NlInt8ModelInfo *m = &g_array_index (models, NlInt8ModelInfo, i);
      if (json)
        g_string_append_printf (s, "%s{\"id\":%" G_GINT64_FORMAT ",\"checkpoint\":%" G_GINT64_FORMAT ",\"epoch\":%d,"
                                "\"method\":\"%s\",\"calibration_samples\":%d,\"fp32_test_acc\":%s,"
                                "\"int8_test_acc\":%s,\"fp32_images_per_s\":%s,\"int8_images_per_s\":%s,"
                                "\"size\":%" G_GINT64_FORMAT "}", i ? "," : "", m->id, m->checkpoint, m->epoch,
                                m->method, m->calibration_samples,
                                nl_cli_json_number (b[0], sizeof b[0], 6, m->fp32_test_acc),
                                nl_cli_json_number (b[1], sizeof b[1], 6, m->int8_test_acc),
                                nl_cli_json_number (b[2], sizeof b[2], 1, m->fp32_images_per_s),
                                nl_cli_json_number (b[3], sizeof b[3], 1, m->int8_images_per_s), m->size);
      else
        g_string_append_printf (s, "      int8 model %" G_GINT64_FORMAT ": checkpoint %" G_GINT64_FORMAT
                                " (epoch %d), %s on %d samples, test acc %s (fp32 %s), %.0f images/s (fp32 %.0f)\n",
                                m->id, m->checkpoint, m->epoch, m->method, m->calibration_samples,
                                text_number (b[0], sizeof b[0], m->int8_test_acc),
                                text_number (b[1], sizeof b[1], m->fp32_test_acc), m->int8_images_per_s,
                                m->fp32_images_per_s);
    }
  if (json)
    g_string_append_c (s, ']');
  return g_string_free (s, FALSE);
}

static void
print_summary (NlProject *p, const NlRunInfo *r, gboolean json)
{
  g_autofree char *int8 = int8_models_text (p, r->id, json);
  char b1[64], b2[64], b3[64];
  double acc_best = NAN, acc_last = NAN, loss_best = NAN, loss_last = NAN, dur;
  g_auto (NlRunConfig) rc = { 0 };
  nl_run_config_init (&rc);
  nl_project_metric_summary (p, r->id, "accuracy", "test", NULL, &acc_best, &acc_last, NULL);
  nl_project_metric_summary (p, r->id, "loss", "train", &loss_best, NULL, &loss_last, NULL);
  nl_run_config_from_json (&rc, r->hparams_json ? r->hparams_json : "{}", NULL);
  /* a resume may have trained past the epochs first asked for */
  rc.epochs = MAX (rc.epochs, r->epochs_done);
  dur = (r->finished > 0 ? r->finished : g_get_real_time () / 1e6) - (r->started > 0 ? r->started : r->created);
  if (json)
    {
      g_autofree char *name = g_strescape (r->name ? r->name : "", NULL);
      g_autofree char *processes = processes_json (r);
      /* a sweep's trial names its sweep and trial number; other runs null */
      g_autofree char *sweep = r->sweep > 0 ? g_strdup_printf ("%" G_GINT64_FORMAT ",\"trial\":%d", r->sweep,
                                                               r->sweep_trial)
                                            : g_strdup ("null,\"trial\":null");
      printf ("{\"id\":%" G_GINT64_FORMAT ",\"name\":\"%s\",\"status\":\"%s\",\"network\":\"%s\",\"optimizer\":\"%s\","
              "\"lr\":%g,\"batch_size\":%d,\"epochs\":%d,\"epochs_done\":%d,\"parent_run\":%" G_GINT64_FORMAT
              ",\"sweep\":%s,\"best_test_accuracy\":%s,\"last_test_accuracy\":%s,\"last_train_loss\":%s,\"seconds\":%.1f,"
              "\"device\":\"%s\",\"precision\":\"%s\"%s%s}\n",
              r->id, name, r->status, r->network_name ? r->network_name : "", nl_optim_kind_name (rc.optim.kind),
              rc.optim.lr, rc.batch_size, rc.epochs, r->epochs_done, r->parent_run, sweep,
              nl_cli_json_number (b1, sizeof b1, 5, acc_best), nl_cli_json_number (b2, sizeof b2, 5, acc_last),
              nl_cli_json_number (b3, sizeof b3, 5, loss_last), dur, r->device ? r->device : "cpu",
              nl_precision_name (rc.precision), processes, int8);
    }
  else
    printf ("%4" G_GINT64_FORMAT "  %-11s %-14s %-8s lr %-8g batch %-4d epochs %d/%d  test acc best %s last %s"
            "  %.0f s  %s\n", r->id, r->status, r->network_name ? r->network_name : "?",
            nl_optim_kind_name (rc.optim.kind), rc.optim.lr, rc.batch_size, r->epochs_done,
            rc.epochs, text_number (b1, sizeof b1, acc_best), text_number (b2, sizeof b2, acc_last), dur,
            r->name ? r->name : "");
  if (!json)
    fputs (int8, stdout);
}

int
nl_cli_runs (int argc, char **argv)
{
  g_autofree char *path = NULL;
  gboolean json = FALSE;
  GOptionEntry entries[] = {
    { "project", 'p', 0, G_OPTION_ARG_FILENAME, &path, "The project", "FILE" },
    { "json", 0, 0, G_OPTION_ARG_NONE, &json, "One JSON object per run", NULL },
    { NULL }
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new ("- list the runs of a project");
  g_autoptr (GError) error = NULL;
  g_autoptr (NlProject) p = NULL;
  g_autoptr (GPtrArray) runs = NULL;
  int status = 0;

  if (!nl_cli_parse (ctx, entries, &argc, &argv, "runs", &status) || !(p = nl_cli_open_project (path, &status)))
    return status;
  runs = nl_project_list_runs (p, &error);
  if (!runs)
    return nl_cli_fail (error);
  for (guint i = 0; i < runs->len; i++)
    print_summary (p, g_ptr_array_index (runs, i), json);
  return 0;
}

typedef struct {
  double lr, momentum, wd;
  int epochs, batch;
  char *optimizer, *schedule, *device_s, *precision_s;
  NlDevice device;          /* parsed from device_s */
  NlPrecision precision;    /* parsed from precision_s */
  const NlCliDataOptions *data; /* another dataset for the weights */
  int layer_stats;          /* --layer-stats-every (-1: not given) */
} Overrides;

static void
overrides_clear (Overrides *o)
{
  g_clear_pointer (&o->optimizer, g_free);
  g_clear_pointer (&o->schedule, g_free);
  g_clear_pointer (&o->device_s, g_free);
  g_clear_pointer (&o->precision_s, g_free);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (Overrides, overrides_clear)

static void
apply_overrides (NlRunConfig *rc, gpointer user)
{
  Overrides *o = user;
  if (o->optimizer)
    {
      NlOptimKind kind;
      if (nl_optim_kind_parse (o->optimizer, &kind, NULL) && kind != rc->optim.kind)
        nl_optim_config_init (&rc->optim, kind);
    }
  if (!isnan (o->lr))
    rc->optim.lr = (float) o->lr;
  if (!isnan (o->momentum))
    rc->optim.momentum = (float) o->momentum;
  if (!isnan (o->wd))
    rc->optim.wd = (float) o->wd;
  if (o->epochs > 0)
    rc->epochs = o->epochs;
  if (o->batch > 0)
    rc->batch_size = o->batch;
  if (o->schedule)
    nl_run_config_set_text (&rc->lr_schedule, o->schedule);
  if (o->device_s)
    rc->device = o->device;
  if (o->precision_s)
    rc->precision = o->precision;
  if (o->layer_stats >= 0)
    rc->layer_stats_every = o->layer_stats;
  /* the normalisation the weights were trained with, unless --mean/--std */
  nl_cli_data_options_apply (o->data, rc, FALSE);
}

static int
run_command (int argc, char **argv, gboolean fork)
{
  g_autofree char *path = NULL, *checkpoint = NULL, *name = NULL;
  gint64 run = 0;
  gboolean json = FALSE;
  g_auto (Overrides) o = { NAN, NAN, NAN, 0, 0, NULL, NULL, NULL, NULL };
  g_auto (NlRunConfig) policy = { 0 };
  g_auto (NlCliDataOptions) data = { 0 };
  double interval = NAN;
  GArray *all;
  g_autofree GOptionEntry *all_entries = NULL;
  GOptionEntry entries[] = {
    { "project", 'p', 0, G_OPTION_ARG_FILENAME, &path, "The project", "FILE" },
    { "run", 'r', 0, G_OPTION_ARG_INT64, &run, "The run", "ID" },
    { "epochs", 'e', 0, G_OPTION_ARG_INT, &o.epochs, "Train up to this many epochs in all", "N" },
    { "checkpoint-interval", 0, 0, G_OPTION_ARG_DOUBLE, &interval, "Seconds between checkpoints inside an epoch "
      "(default 600; 0: at epoch ends only)", "SECONDS" },
    { "json", 0, 0, G_OPTION_ARG_NONE, &json, "Print one JSON object per epoch", NULL },
    { "checkpoint", 'c', 0, G_OPTION_ARG_STRING, &checkpoint, "fork: best, last (default) or a checkpoint id", "ID" },
    { "name", 0, 0, G_OPTION_ARG_STRING, &name, "fork: name of the new run", "NAME" },
    { "lr", 0, 0, G_OPTION_ARG_DOUBLE, &o.lr, "fork: learning rate", "X" },
    { "optimizer", 'o', 0, G_OPTION_ARG_STRING, &o.optimizer, "fork: optimizer (a new one starts fresh)", "NAME" },
    { "momentum", 0, 0, G_OPTION_ARG_DOUBLE, &o.momentum, "fork: momentum", "M" },
    { "wd", 0, 0, G_OPTION_ARG_DOUBLE, &o.wd, "fork: weight decay", "W" },
    { "batch-size", 'b', 0, G_OPTION_ARG_INT, &o.batch, "fork: batch size", "B" },
    { "lr-schedule", 0, 0, G_OPTION_ARG_STRING, &o.schedule, "fork: learning-rate schedule", "SPEC" },
    { "device", 0, 0, G_OPTION_ARG_STRING, &o.device_s, "fork: cpu, cuda or cuda:N (default: the parent's)", "DEVICE" },
    { "precision", 0, 0, G_OPTION_ARG_STRING, &o.precision_s, "fork: fp32, bf16 or fp16", "P" },
    { "layer-stats-every", 0, 0, G_OPTION_ARG_INT, &o.layer_stats, "fork: layer statistics every N steps (0: off)",
      "N" },
  };
  const GOptionEntry end = { NULL };
  g_autoptr (GOptionContext) ctx = g_option_context_new (fork ? "- a new run from a checkpoint of a run"
                                                              : "- continue a run from its last checkpoint");
  g_autoptr (GError) error = NULL;
  g_autoptr (NlProject) p = NULL;
  g_autoptr (NlRunInfo) info = NULL;
  NlTrainOutput out = { .json = json };
  NlRunCallbacks cb = { 0 };
  NlOptimKind kind;
  int status = 0;
  gboolean ok;

  /* fork's dataset options are train's */
  nl_cli_data_options_init (&data);
  all = g_array_new (FALSE, FALSE, sizeof (GOptionEntry));
  g_array_append_vals (all, entries, G_N_ELEMENTS (entries));
  nl_cli_data_options_add_entries (&data, all, "fork: ", "default: the run's; another one trains the checkpoint's "
                                   "weights with a fresh optimizer, its epochs counted from 0",
                                   "default: the run's, which its weights were trained with");
  g_array_append_val (all, end);
  all_entries = (GOptionEntry *) (void *) g_array_free (all, FALSE);
  o.data = &data;
  if (fork)
    g_option_context_set_description (ctx, "Example (fine-tuning on another dataset):\n"
                                      "  netloom-cli fork --project p.netloom --run 3 --dataset mnist:DIR --epochs 2 "
                                      "--lr 0.01\n");
  o.layer_stats = -1;
  if (!nl_cli_parse (ctx, all_entries, &argc, &argv, fork ? "fork" : "resume", &status))
    return status;
  if (run <= 0)
    return nl_cli_usage_error ("--run ID is required");
  if (!fork && (checkpoint || name || !isnan (o.lr) || o.optimizer || !isnan (o.momentum) || !isnan (o.wd) || o.batch
                || o.schedule || o.device_s || o.precision_s || o.layer_stats >= 0
                || nl_cli_data_options_given (&data)))
    return nl_cli_usage_error ("resume continues a run as it was; to change its settings, fork it");
  if ((status = nl_cli_data_options_finish (&data)) != 0)
    return status;
  if (o.precision_s && !nl_precision_parse (o.precision_s, &o.precision))
    return nl_cli_usage_error ("--precision must be fp32, bf16 or fp16, not '%s'", o.precision_s);
  if (o.device_s && (!nl_device_parse (o.device_s, &o.device, &error) || !nl_device_check (o.device, &error)))
    return nl_cli_usage_error ("--device: %s", error->message);
  if (o.optimizer && !nl_optim_kind_parse (o.optimizer, &kind, &error))
    return nl_cli_usage_error ("%s", error->message);
  /* the limits of the run settings; 0 leaves a number as it was */
  if ((!isnan (o.lr) && !nl_run_field_check (nl_run_config_find_field ("lr"), "--lr", o.lr, &error))
      || (o.epochs && !nl_run_field_check (nl_run_config_find_field ("epochs"), "--epochs", o.epochs, &error))
      || (o.batch && !nl_run_field_check (nl_run_config_find_field ("batch_size"), "--batch-size", o.batch, &error))
      || (!isnan (o.momentum)
          && !nl_run_field_check (nl_run_config_find_field ("momentum"), "--momentum", o.momentum, &error))
      || (!isnan (o.wd) && !nl_run_field_check (nl_run_config_find_field ("wd"), "--wd", o.wd, &error))
      || (o.layer_stats != -1 && !nl_run_field_check (nl_run_config_find_field ("layer_stats_every"),
                                                      "--layer-stats-every", o.layer_stats, &error))
      || (!isnan (interval) && !nl_run_field_check (nl_run_config_find_field ("checkpoint_interval"),
                                                   "--checkpoint-interval", interval, &error)))
    return nl_cli_usage_error ("%s", error->message);
  nl_run_config_init (&policy);
  if (!isnan (interval))
    policy.checkpoint_interval = interval;
  /* under mpirun: rank 0 reads the run and sends the job */
  if (nl_comm_world () && nl_comm_world ()->rank > 0)
    return nl_cli_follow (NULL, NULL);
  if (!(p = nl_cli_open_project (path, &status)))
    return nl_comm_world () ? nl_cli_group_fail (NULL) : status;
  info = nl_project_get_run (p, run, &error);
  if (!info)
    return nl_cli_group_fail (error);
  out.json = json;
  out.network = info->network_name ? info->network_name : "network";
  out.run = run;
  out.threads = nl_threads_get ();
  {
    g_auto (NlRunConfig) rc = { 0 };
    nl_run_config_init (&rc);
    if (nl_run_config_from_json (&rc, info->hparams_json, NULL))
      out.epochs = o.epochs > 0 ? o.epochs : rc.epochs;
  }
  out.progress = json ? NULL : nl_progress_new ();
  cb.chain = nl_cli_train_output (&out);
  nl_cli_catch_interrupt ();
  if (fork)
    {
      out.run = 0;
      ok = nl_run_fork (p, run, checkpoint, name, apply_overrides, &o, &policy, &cb, &out.run, &error);
    }
  else
    ok = nl_run_resume (p, run, o.epochs, &policy, &cb, &error);
  nl_progress_clear (out.progress);
  nl_progress_free (out.progress);
  if (!json && (!fork || out.run > 0))  /* a fork refused before its row was written has no run */
    printf ("run %" G_GINT64_FORMAT " %s\n", fork ? out.run : run, ok ? "finished" : "did not finish");
  return ok ? 0 : nl_cli_group_fail (error);
}

int
nl_cli_resume (int argc, char **argv)
{
  return run_command (argc, argv, FALSE);
}

int
nl_cli_fork (int argc, char **argv)
{
  return run_command (argc, argv, TRUE);
}

static void
print_rows (GArray *rows, gboolean csv)
{
  for (guint i = 0; i < rows->len; i++)
    {
      NlMetricRow *m = &g_array_index (rows, NlMetricRow, i);
      if (csv)
        printf ("%" G_GINT64_FORMAT ",%d,%s,%s,%.9g,%.3f\n", m->step, m->epoch, m->split, m->name, m->value, m->wall);
      else
        printf ("step %-7" G_GINT64_FORMAT " epoch %-3d %-5s %-14s %.6g\n", m->step, m->epoch, m->split, m->name,
                m->value);
    }
  fflush (stdout);
}

int
nl_cli_metrics (int argc, char **argv)
{
  g_autofree char *path = NULL, *name = NULL;
  gint64 run = 0;
  gboolean csv = FALSE;
  GOptionEntry entries[] = {
    { "project", 'p', 0, G_OPTION_ARG_FILENAME, &path, "The project", "FILE" },
    { "run", 'r', 0, G_OPTION_ARG_INT64, &run, "The run", "ID" },
    { "name", 0, 0, G_OPTION_ARG_STRING, &name, "Only this metric (loss, accuracy, batch_loss, lr ...)", "NAME" },
    { "csv", 0, 0, G_OPTION_ARG_NONE, &csv, "CSV with a header: step,epoch,split,name,value,wall", NULL },
    { NULL }
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new ("- every stored metric point of a run");
  g_autoptr (GError) error = NULL;
  g_autoptr (NlProject) p = NULL;
  g_autoptr (GArray) rows = NULL;
  g_autoptr (NlRunInfo) info = NULL;
  int status = 0;

  if (!nl_cli_parse (ctx, entries, &argc, &argv, "metrics", &status))
    return status;
  if (run <= 0)
    return nl_cli_usage_error ("--run ID is required");
  if (!(p = nl_cli_open_project (path, &status)))
    return status;
  if (!(info = nl_project_get_run (p, run, &error)) || !(rows = nl_project_get_metrics (p, run, name, 0, NULL, &error)))
    return nl_cli_fail (error);
  if (csv)
    printf ("step,epoch,split,name,value,wall\n");
  print_rows (rows, csv);
  return 0;
}

int
nl_cli_watch (int argc, char **argv)
{
  g_autofree char *path = NULL;
  gint64 run = 0, last = 0;
  double timeout = 0;
  GOptionEntry entries[] = {
    { "project", 'p', 0, G_OPTION_ARG_FILENAME, &path, "The project", "FILE" },
    { "run", 'r', 0, G_OPTION_ARG_INT64, &run, "The run", "ID" },
    { "timeout", 0, 0, G_OPTION_ARG_DOUBLE, &timeout, "Give up after this many seconds (0: never)", "S" },
    { NULL }
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new ("- follow a run trained by another process");
  g_autoptr (GError) error = NULL;
  g_autoptr (NlProject) p = NULL;
  gint64 start = g_get_monotonic_time ();
  int status = 0;

  if (!nl_cli_parse (ctx, entries, &argc, &argv, "watch", &status))
    return status;
  if (run <= 0)
    return nl_cli_usage_error ("--run ID is required");
  if (!(p = nl_cli_open_project (path, &status)))
    return status;
  nl_cli_catch_interrupt ();
  for (;;)
    {
      g_autoptr (NlRunInfo) info = nl_project_get_run (p, run, &error);
      g_autoptr (GArray) rows = NULL;
      gboolean active;
      if (!info)
        return nl_cli_fail (error);
      active = g_strcmp0 (info->status, "running") == 0 || g_strcmp0 (info->status, "queued") == 0
               || g_strcmp0 (info->status, "paused") == 0;
      rows = nl_project_get_metrics (p, run, NULL, last, &last, &error);
      if (!rows)
        return nl_cli_fail (error);
      print_rows (rows, FALSE);
      if (!active && rows->len == 0)
        {
          printf ("run %" G_GINT64_FORMAT " %s%s%s\n", run, info->status, info->error ? ": " : "",
                  info->error ? info->error : "");
          return 0;
        }
      if (nl_cli_interrupted () || (timeout > 0 && (g_get_monotonic_time () - start) / 1e6 > timeout))
        return 0;
      g_usleep (200000);
    }
}

int
nl_cli_export (int argc, char **argv)
{
  g_autofree char *path = NULL, *which = NULL, *out = NULL, *onnx = NULL;
  gint64 run = 0;
  int opset = 0;
  gboolean softmax = FALSE, int8 = FALSE;
  GOptionEntry entries[] = {
    { "project", 'p', 0, G_OPTION_ARG_FILENAME, &path, "The project", "FILE" },
    { "run", 'r', 0, G_OPTION_ARG_INT64, &run, "The run", "ID" },
    { "checkpoint", 'c', 0, G_OPTION_ARG_STRING, &which,
      "best, last (default) or a checkpoint id; with --int8: the INT8 model made from it (default: the newest)",
      "ID" },
    { "safetensors", 0, 0, G_OPTION_ARG_FILENAME, &out, "Write the weights to this safetensors file", "OUT" },
    { "onnx", 0, 0, G_OPTION_ARG_FILENAME, &onnx, "Write the inference graph with its weights to this ONNX file",
      "OUT" },
    { "opset", 0, 0, G_OPTION_ARG_INT, &opset, "ONNX opset, 13 to 17 (default 17)", "N" },
    { "softmax", 0, 0, G_OPTION_ARG_NONE, &softmax, "ONNX: end in a Softmax, so the output is probabilities", NULL },
    { "int8", 0, 0, G_OPTION_ARG_NONE, &int8,
      "ONNX: the run's INT8 model (netloom-cli quantize) in QDQ form: QuantizeLinear/DequantizeLinear around "
      "int8 weights and activations", NULL },
    { NULL }
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new ("- export a run's weights (safetensors) or model (ONNX)");
  g_autoptr (GError) error = NULL;
  g_autoptr (NlProject) p = NULL;
  gint64 ckpt;
  int status = 0;

  if (!nl_cli_parse (ctx, entries, &argc, &argv, "export", &status))
    return status;
  if (run <= 0 || (!out && !onnx))
    return nl_cli_usage_error ("--run ID and --safetensors OUT or --onnx OUT are required");
  if (opset != 0 && (opset < NL_ONNX_OPSET_MIN || opset > NL_ONNX_OPSET_MAX))
    return nl_cli_usage_error ("--opset must be 13 to 17");
  if (int8 && (!onnx || out))
    return nl_cli_usage_error ("--int8 exports an INT8 model to ONNX: give --onnx OUT, without --safetensors");
  if (!(p = nl_cli_open_project (path, &status)))
    return status;
  if (out)
    {
      if (!nl_run_export_weights (p, run, which ? which : "last", out, &ckpt, NULL, &error))
        return nl_cli_fail (error);
      printf ("wrote checkpoint %" G_GINT64_FORMAT " of run %" G_GINT64_FORMAT " to %s\n", ckpt, run, out);
    }
  if (onnx && int8)
    {
      if (!nl_run_export_onnx_int8 (p, run, which, onnx, opset, softmax, &ckpt, &error))
        return nl_cli_fail (error);
      printf ("wrote INT8 model %" G_GINT64_FORMAT " of run %" G_GINT64_FORMAT " to %s (ONNX opset %d, QDQ)\n", ckpt,
              run, onnx, opset ? opset : NL_ONNX_OPSET_MAX);
    }
  else if (onnx)
    {
      if (!nl_run_export_onnx (p, run, which ? which : "last", onnx, opset, softmax, &ckpt, &error))
        return nl_cli_fail (error);
      printf ("wrote checkpoint %" G_GINT64_FORMAT " of run %" G_GINT64_FORMAT " to %s (ONNX opset %d)\n", ckpt, run,
              onnx, opset ? opset : NL_ONNX_OPSET_MAX);
    }
  return 0;
}

static void
print_names (const char *what, GPtrArray *names)
{
  if (names->len == 0)
    return;
  fprintf (stderr, "%s:", what);
  for (guint i = 0; i < names->len; i++)
    fprintf (stderr, " %s", (char *) g_ptr_array_index (names, i));
  fprintf (stderr, "\n");
}

int
nl_cli_import_weights (int argc, char **argv)
{
  g_autofree char *path = NULL, *network = NULL, *in = NULL;
  gboolean allow_missing = FALSE, ignore_extra = FALSE;
  GOptionEntry entries[] = {
    { "project", 'p', 0, G_OPTION_ARG_FILENAME, &path, "The project", "FILE" },
    { "network", 'n', 0, G_OPTION_ARG_STRING, &network, "A network of the project", "NAME" },
    { "safetensors", 0, 0, G_OPTION_ARG_FILENAME, &in, "Weights to import", "IN" },
    { "allow-missing", 0, 0, G_OPTION_ARG_NONE, &allow_missing, "Keep initial values for weights the file lacks", NULL },
    { "ignore-extra", 0, 0, G_OPTION_ARG_NONE, &ignore_extra, "Ignore tensors the network does not have", NULL },
    { NULL }
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new ("- weights from a safetensors file into a new run");
  g_autoptr (GError) error = NULL;
  g_autoptr (NlProject) p = NULL;
  g_autoptr (NlNetwork) net = NULL;
  g_autoptr (NlModel) model = NULL;
  g_autoptr (GPtrArray) missing = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GPtrArray) extra = g_ptr_array_new_with_free_func (g_free);
  g_autofree char *json_text = NULL, *net_json = NULL, *run_name = NULL;
  g_autoptr (GBytes) blob = NULL;
  NlShape sample = nl_shape_of (3, (int64_t) 1, (int64_t) 28, (int64_t) 28);
  NlTrainPosition pos = { .optimizer = (char *) "sgd" };
  NlOptimConfig sgd;
  gint64 run;
  gboolean ok;
  int status = 0;

  if (!nl_cli_parse (ctx, entries, &argc, &argv, "import-weights", &status))
    return status;
  if (!network || !in)
    return nl_cli_usage_error ("--network NAME and --safetensors IN are required");
  if (!(p = nl_cli_open_project (path, &status)))
    return status;
  if (!(json_text = nl_project_load_network (p, network, 0, &error)) || !(net = nl_network_load_data (json_text, -1, &error)))
    return nl_cli_fail (error);
  for (int i = 0; i < nl_network_n_nodes (net); i++)
    {
      NlNode *n = nl_network_node (net, i);
      if (strcmp (n->def->name, "Input") == 0 && n->params[0].n > 0)
        sample = nl_shape_make (n->params[0].n, n->params[0].v);
    }
  nl_optim_config_init (&sgd, NL_OPTIM_SGD);
  if (!(model = nl_model_new_full (net, &sample, &(NlModelOptions) { .optim = &sgd }, &error)))
    return nl_cli_fail (error);
  ok = nl_weights_import (model, in, allow_missing, ignore_extra, missing, extra, &error);
  print_names ("missing (kept their initial values)", missing);
  print_names ("extra (ignored)", extra);
  if (!ok)
    return nl_cli_fail (error);
  /* the imported weights become a finished run with one checkpoint, ready to fork */
  net_json = nl_network_to_json (net);
  run_name = g_strdup_printf ("import of %s", in);
  {
    NlRunConfig rc;
    g_autofree char *hp = NULL;
    nl_run_config_init (&rc);
    rc.epochs = 0;
    hp = nl_run_config_to_json (&rc);
    nl_run_config_clear (&rc);
    NlRunInfo info = { .name = run_name, .network_name = net->name, .network_json = net_json, .hparams_json = hp,
                       .device = (char *) "cpu", .status = (char *) "finished" };
    if ((run = nl_project_create_run (p, &info, &error)) <= 0)
      return nl_cli_fail (error);
  }
  if (!(blob = nl_checkpoint_save (model, &pos, &error))
      || nl_project_add_checkpoint (p, run, 0, 0, g_bytes_get_data (blob, NULL), g_bytes_get_size (blob), NULL, NAN,
                                    TRUE, 0, &error) <= 0)
    return nl_cli_fail (error);
  printf ("imported %s into run %" G_GINT64_FORMAT " (network %s); fork it to train on\n", in, run, net->name);
  return 0;
}

int
nl_cli_import_onnx (int argc, char **argv)
{
  g_autofree char *path = NULL, *name = NULL, *network = NULL;
  GOptionEntry entries[] = {
    { "project", 'p', 0, G_OPTION_ARG_FILENAME, &path, "The project", "FILE" },
    { "name", 'n', 0, G_OPTION_ARG_STRING, &name, "Name of the new network (default: the file's)", "NAME" },
    { NULL }
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new ("FILE.onnx - an ONNX model as a network with its weights");
  g_autoptr (GError) error = NULL;
  g_autoptr (NlProject) p = NULL;
  gint64 run;
  int status = 0;

  if (!nl_cli_parse (ctx, entries, &argc, &argv, "import-onnx", &status))
    return status;
  if (argc != 2)
    return nl_cli_usage_error ("give one FILE.onnx");
  if (!(p = nl_cli_open_project (path, &status)))
    return status;
  if ((run = nl_run_import_onnx (p, argv[1], name, &network, &error)) <= 0)
    return nl_cli_fail (error);
  printf ("imported %s as network %s with its weights in run %" G_GINT64_FORMAT "; evaluate, predict or fork it\n",
          argv[1], network, run);
  return 0;
}
