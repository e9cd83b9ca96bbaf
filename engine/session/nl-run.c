/* nl-run.c — training runs stored in a project. */
#include "engine/session/nl-run.h"
#include "engine/session/nl-run-monitor.h"
#include "engine/formats/nl-checkpoint.h"
#include "engine/session/nl-run-checkpoint.h"
#include "engine/session/nl-run-layers.h"
#include "engine/session/nl-run-vocab.h"
#include "core/nl-comm.h"
#include "core/nl-device.h"
#include "core/nl-json-guard.h"
#include "engine/train/nl-metric.h"

#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <unistd.h>
#include <math.h>
#include <string.h>

static const NlRunCallbacks no_callbacks;

/* ---- recording ---- */

typedef struct {
  NlProject *project;
  gint64 run;
  NlMetricWriter *writer;
  const NlRunCallbacks *cb;
  const NlRunConfig *cfg;   /* the trainer's: settings, checkpoint policy, early stopping */
  gint64 step;              /* updates done: the x axis of every curve */
  /* early stopping */
  double best;
  int best_epoch, wait;
  char *early_message;      /* set when it (or pruning) triggered */
  int stop_epoch;
  gboolean pruned;          /* cb->prune ended the run */
  NlRunMonitor *monitor;    /* system metrics and profile windows */
  GError *monitor_error;    /* why the monitor stopped the run */
  int epoch;                /* of the last batch (1-based) */
  gboolean layers_failed;   /* a layer histogram write failed (said once) */
} Recorder;

/* TRUE once another process took the run over (nl_project_hold_run): the
 * trainer stops; a take-back after a silence is said in the log. */
static gboolean
r_taken (const Recorder *r)
{
  double reclaimed = 0;
  if (nl_project_run_taken (r->project, r->run, &reclaimed, NULL))
    return TRUE;
  if (reclaimed > 0 && r->cb->log)
    {
      g_autofree char *line = g_strdup_printf ("run %" G_GINT64_FORMAT " was stopped for %.0f s; it goes on", r->run,
                                               reclaimed);
      r->cb->log (r->cb->chain.user, line);
    }
  return FALSE;
}

static const char *
r_monitor (const Recorder *r)
{
  return r->cfg->monitor ? r->cfg->monitor
         : r->cfg->early_stop_metric ? r->cfg->early_stop_metric : "test_accuracy";
}

double
nl_run_metric_value (const char *name, const NlEpochReport *e)
{
  return !strcmp (name, "train_loss") ? e->train_loss : !strcmp (name, "train_accuracy") ? e->train_acc : e->test_acc;
}

static void
r_log (const Recorder *r, const char *line)
{
  if (r->cb->log)
    r->cb->log (r->cb->chain.user, line);
}

static void
add_point (Recorder *r, int epoch, const char *split, const char *name, double value)
{
  NlMetricPoint pt = { .run = r->run, .step = r->step, .epoch = epoch, .split = split, .name = name, .value = value };
  nl_metric_writer_add (r->writer, &pt);
}

static gboolean
rec_batch (gpointer user, int epoch, int64_t batch, int64_t n_batches, double loss, double elapsed)
{
  Recorder *r = user;
  /* in a group: rank 0 asks, every process stops at the next step */
  if (r_taken (r))
    return FALSE;
  r->step++;
  r->epoch = epoch;
  add_point (r, epoch, "train", "batch_loss", loss);
  if (!nl_run_monitor_step (r->monitor, r->step, epoch, &r->monitor_error))
    return FALSE;
  return !r->cb->chain.batch || r->cb->chain.batch (r->cb->chain.user, epoch, batch, n_batches, loss, elapsed);
}

static void
rec_epoch (gpointer user, const NlEpochReport *e)
{
  Recorder *r = user;
  add_point (r, e->epoch, "train", "loss", e->train_loss);
  add_point (r, e->epoch, "train", "accuracy", e->train_acc);
  add_point (r, e->epoch, "test", "accuracy", e->test_acc);
  add_point (r, e->epoch, "train", "lr", e->lr);
  add_point (r, e->epoch, "train", "images_per_s", e->images_per_s);
  add_point (r, e->epoch, "train", "epoch_seconds", e->seconds);
  if (r->cb->chain.epoch)
    r->cb->chain.epoch (r->cb->chain.user, e);
}

/* Keras' EarlyStopping: TRUE (with the message set) when `patience` epochs
 * in a row did not beat the best by more than min_delta. The first epoch
 * always sets the best; NaN never improves. */
static gboolean
early_stop (Recorder *r, const NlEpochReport *e)
{
  const char *metric = r->cfg->early_stop_metric;
  gboolean lower = metric && !strcmp (metric, "train_loss");
  double v;

  if (!metric)
    return FALSE;
  v = nl_run_metric_value (metric, e);
  if (r->best_epoch == 0 || (lower ? v < r->best - r->cfg->min_delta : v > r->best + r->cfg->min_delta))
    {
      if (!isnan (v))
        {
          r->best = v;
          r->best_epoch = e->epoch;
          r->wait = 0;
          return FALSE;
        }
    }
  if (++r->wait < MAX (r->cfg->patience, 1) || e->epoch >= r->cfg->epochs)
    return FALSE;
  r->stop_epoch = e->epoch;
  r->early_message = g_strdup_printf ("early stopping at epoch %d (best %s %.6g at epoch %d)", e->epoch, metric,
                                      r->best, r->best_epoch);
  return TRUE;
}

/* The checkpoint of where t stands (pos filled; its strings borrowed). */
static GBytes *
save_position (Recorder *r, NlTrainer *t, NlTrainPosition *pos, GError **error)
{
  nl_trainer_get_train_position (t, pos);
  pos->seed = r->cfg->seed;
  pos->optimizer = (char *) nl_optim_kind_name (r->cfg->optim.kind);
  return nl_checkpoint_save (nl_trainer_get_model (t), pos, error);
}

/* A run taken over is no failure of rank 0's alone here: the next batch
 * stops every process together (rec_batch), so the hook goes on. */
static gboolean
lost_run (Recorder *r, GError **error)
{
  if (!nl_project_run_taken (r->project, r->run, NULL, NULL))
    return FALSE;
  g_clear_error (error);
  return TRUE;
}

/* A checkpoint by time inside an epoch: it replaces the previous one. */
static gboolean
rec_interval_done (gpointer user, NlTrainer *t, GError **error)
{
  Recorder *r = user;
  NlTrainPosition pos = { 0 };
  g_autoptr (GBytes) blob = save_position (r, t, &pos, error);
  gint64 ckpt;

  /* metrics first, as at epoch ends: a resume drops those after it */
  if (!blob || !nl_metric_writer_flush (r->writer, error))
    return lost_run (r, error);
  ckpt = nl_project_add_interval_checkpoint (r->project, r->run, pos.epoch, pos.updates,
                                             g_bytes_get_data (blob, NULL), g_bytes_get_size (blob), error);
  if (ckpt <= 0)
    return lost_run (r, error);
  if (r->cb->checkpoint)
    r->cb->checkpoint (r->cb->chain.user, pos.epoch, ckpt);
  return TRUE;
}

static gboolean
rec_epoch_done (gpointer user, NlTrainer *t, const NlEpochReport *e, GError **error)
{
  const char *monitor = r_monitor ((Recorder *) user);
  double value = nl_run_metric_value (monitor, e);
  Recorder *r = user;
  NlTrainPosition pos = { 0 };
  gint64 ckpt;
  g_autoptr (GBytes) blob = NULL;

  blob = save_position (r, t, &pos, error);
  /* metrics first, so a checkpoint never exists without its epoch's points */
  if (!blob || !nl_metric_writer_flush (r->writer, error))
    return FALSE;
  ckpt = nl_project_add_checkpoint (r->project, r->run, pos.epoch, pos.updates, g_bytes_get_data (blob, NULL),
                                    g_bytes_get_size (blob), monitor, value, strcmp (monitor, "train_loss") != 0,
                                    r->cfg->keep_last > 0 ? r->cfg->keep_last : 3, error);
  if (ckpt <= 0 || !nl_project_set_run_epochs (r->project, r->run, pos.epoch, error))
    return FALSE;
  if (r->cb->checkpoint)
    r->cb->checkpoint (r->cb->chain.user, pos.epoch, ckpt);
  if (r->cb->prune && r->cb->prune (r->cb->chain.user, r->run, e, &r->early_message))
    {
      /* like early stopping, but the run ends pruned */
      r->pruned = TRUE;
      r->stop_epoch = e->epoch;
      if (!r->early_message)
        r->early_message = g_strdup_printf ("pruned at epoch %d", e->epoch);
      r_log (r, r->early_message);
      g_set_error_literal (error, NL_TRAIN_ERROR, NL_TRAIN_ERROR_CANCELLED, r->early_message);
      return FALSE;
    }
  if (early_stop (r, e))
    {
      /* the trainer stops on FALSE; record() turns this into "finished" */
      r_log (r, r->early_message);
      g_set_error_literal (error, NL_TRAIN_ERROR, NL_TRAIN_ERROR_CANCELLED, r->early_message);
      return FALSE;
    }
  return TRUE;
}

/* A test stops the process: no write of ours holds the project meanwhile. */
static void
rec_quiet (gpointer user, gboolean quiet)
{
  Recorder *r = user;
  nl_metric_writer_quiet (r->writer, quiet);
}

/* Layer statistics to the project: histograms that cannot be stored are
 * said once, and training goes on (a run taken over stops at its next batch). */
static void
rec_layer_stats (gpointer user, const NlLayerStatsReport *rep)
{
  Recorder *r = user;
  g_autoptr (GError) error = NULL;
  if (!nl_run_layers_record (r->project, r->writer, r->run, rep, &error) && !r->layers_failed
      && !g_error_matches (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_TAKEN))
    {
      r->layers_failed = TRUE;
      r_log (r, error->message);
    }
}

static void
rec_nonfinite (gpointer user, const NlNonfinite *nf, int64_t step)
{
  Recorder *r = user;
  nl_run_layers_nonfinite (r->writer, r->run, MAX (r->epoch, 1), nf, step);
}

/* The best checkpoint becomes the newest one, and the model takes its
 * weights; nothing to do when the last epoch was the best. */
static gboolean
restore_best (NlProject *p, gint64 run, NlTrainer *t, const NlRunCallbacks *cb, GError **error)
{
  g_autoptr (GArray) list = nl_project_list_checkpoints (p, run, error);
  g_autoptr (GBytes) blob = NULL;
  const NlCheckpointInfo *best = NULL, *last;
  NlTrainPosition pos = { 0 };
  int epochs;
  int64_t updates;
  gint64 ckpt;

  if (!list)
    return FALSE;
  if (list->len == 0)
    return TRUE;
  last = &g_array_index (list, NlCheckpointInfo, list->len - 1);
  for (guint i = 0; i < list->len; i++)
    if (g_array_index (list, NlCheckpointInfo, i).is_best)
      best = &g_array_index (list, NlCheckpointInfo, i);
  if (!best || best->id == last->id)
    return TRUE;
  blob = nl_project_load_checkpoint (p, best->id, NULL, NULL, NULL, error);
  if (!blob || !nl_checkpoint_load (nl_trainer_get_model (t), blob, FALSE, &pos, error))
    return FALSE;
  nl_train_position_clear (&pos);
  /* stored as the run's newest checkpoint, at the run's final position, so
   * "last" means the weights the run ended with */
  nl_trainer_get_position (t, &epochs, &updates);
  ckpt = nl_project_add_checkpoint (p, run, epochs, updates, g_bytes_get_data (blob, NULL), g_bytes_get_size (blob),
                                    NULL, NAN, TRUE, 0, error);
  if (ckpt <= 0)
    return FALSE;
  if (cb->checkpoint)
    cb->checkpoint (cb->chain.user, epochs, ckpt);
  return TRUE;
}

/* Trains t as run `run` and records the outcome in the run's status. */
static gboolean
record (NlProject *p, gint64 run, NlTrainer *t, const NlRunCallbacks *cb_in, GError **error)
{
  Recorder r = { .project = p, .run = run, .cb = cb_in, .cfg = nl_trainer_get_config (t) };
  NlTrainCallbacks cb = { rec_batch, rec_epoch, &r, rec_epoch_done, r.cfg->checkpoint_interval, rec_interval_done,
                          rec_quiet, rec_layer_stats, rec_nonfinite };
  g_autoptr (GError) local = NULL, flush_error = NULL;
  g_autofree char *early_message = NULL;
  int epochs;
  gboolean ok;

  nl_trainer_get_position (t, &epochs, &r.step);
  if (!nl_project_hold_run (p, run, error))
    return FALSE;
  /* a text run's vocabulary goes with it before its first step */
  if (!nl_run_vocab_store (p, run, t, &local))
    {
      nl_project_set_run_status (p, run, "failed", local->message, NULL);
      nl_project_release_run (p, run);
      g_propagate_error (error, g_steal_pointer (&local));
      return FALSE;
    }
  r.writer = nl_metric_writer_new (p, 250, 512);
  /* off the training thread: a long step or evaluation never looks dead */
  nl_metric_writer_set_heartbeat (r.writer, run);
  r.monitor = nl_run_monitor_new (t, r.writer, run, cb_in->profiler, cb_in->log, cb_in->chain.user);
  r.epoch = epochs + 1;
  ok = nl_run_monitor_step (r.monitor, r.step, r.epoch, &local) && nl_trainer_run (t, &cb, &local);
  if (!ok && r.monitor_error)
    {
      /* the monitor's wait found an op's failure: that is why it stopped */
      g_clear_error (&local);
      local = g_steal_pointer (&r.monitor_error);
    }
  if (!nl_run_monitor_finish (r.monitor, r.step, r.epoch, ok ? &local : NULL))
    ok = FALSE;
  g_clear_pointer (&r.monitor, nl_run_monitor_free);
  early_message = g_steal_pointer (&r.early_message);
  if (!ok && early_message)
    {
      /* the trainer counts the stopping epoch as not done: it was */
      int64_t updates;
      nl_trainer_get_position (t, &epochs, &updates);
      nl_trainer_set_position (t, r.stop_epoch, updates);
      g_clear_error (&local);
      ok = TRUE;
    }
  if (!nl_metric_writer_free (r.writer, &flush_error) && ok)
    {
      ok = FALSE;
      local = g_steal_pointer (&flush_error);
    }
  /* another process has the run now: nothing more of ours goes to it */
  g_clear_error (&flush_error);
  if (nl_project_run_taken (p, run, NULL, &flush_error))
    {
      nl_project_release_run (p, run);
      g_propagate_error (error, g_steal_pointer (&flush_error));
      return FALSE;
    }
  if (ok && r.cfg->restore_best)
    ok = restore_best (p, run, t, cb_in, &local);
  if (ok)
    ok = nl_project_set_run_status (p, run, r.pruned ? "pruned" : "finished", early_message, &local);
  else
    nl_project_set_run_status (p, run,
                               g_error_matches (local, NL_TRAIN_ERROR, NL_TRAIN_ERROR_CANCELLED) ? "stopped"
                               : "failed", local->message, NULL);
  nl_project_release_run (p, run);
  if (!ok)
    g_propagate_error (error, g_steal_pointer (&local));
  return ok;
}

static char *
pipeline_json (const NlRunConfig *cfg)
{
  NlPipelineInfo pl = { .name = (char *) "run", .dataset_spec = (char *) cfg->dataset,
                        .transforms = (char *) cfg->augment, .split = cfg->data.val_fraction,
                        .batch_size = cfg->batch_size, .workers = cfg->workers };
  return nl_pipeline_info_to_json (&pl);
}

/* A data-parallel run's settings also say how many processes trained it
 * and where (not settings: a resume or fork may use any number). */
static char *
with_processes (char *hparams_json)
{
  NlComm *comm = nl_comm_world ();
  g_autoptr (JsonNode) root = NULL;
  if (!comm)
    return hparams_json;
  root = json_from_string (hparams_json, NULL);
  if (!root || !JSON_NODE_HOLDS_OBJECT (root))
    return hparams_json;
  json_object_set_int_member (json_node_get_object (root), "processes", comm->size);
  json_object_set_string_member (json_node_get_object (root), "hosts", comm->hosts);
  g_free (hparams_json);
  return json_to_string (root, FALSE);
}

static gint64
create_run (NlProject *p, const char *name, const NlNetwork *net, const NlRunConfig *cfg, gint64 parent_run,
            gint64 parent_checkpoint, const NlRunTrial *trial, GError **error)
{
  g_autofree char *net_json = nl_network_to_json (net);
  g_autofree char *hp = with_processes (nl_run_config_to_json (cfg));
  g_autofree char *pl = pipeline_json (cfg);
  g_autofree char *default_name = g_strdup_printf ("%s %s lr %g", net->name, nl_optim_kind_name (cfg->optim.kind),
                                                   cfg->optim.lr);
  g_autofree char *device = nl_device_to_string (cfg->device);
  NlRunInfo info = { .name = (char *) (name ? name : default_name), .parent_run = parent_run,
                     .parent_checkpoint = parent_checkpoint, .network_name = net->name, .network_json = net_json,
                     .pipeline_json = pl, .hparams_json = hp, .seed = (gint64) cfg->seed, .device = device,
                     .status = (char *) "queued" };
  if (trial)
    {
      info.sweep = trial->sweep;
      info.sweep_trial = trial->trial;
      info.sweep_params = (char *) trial->params_json;
    }
  return nl_project_create_run (p, &info, error);
}

gboolean
nl_run_train (NlProject *p, const char *name, const NlNetwork *net, const NlRunConfig *cfg,
              const NlRunCallbacks *cb, gint64 *run_id, GError **error)
{
  return nl_run_train_trial (p, name, net, cfg, NULL, cb, run_id, error);
}

gboolean
nl_run_train_trial (NlProject *p, const char *name, const NlNetwork *net, const NlRunConfig *cfg,
                    const NlRunTrial *trial, const NlRunCallbacks *cb, gint64 *run_id, GError **error)
{
  g_autoptr (NlTrainer) t = NULL;
  g_autoptr (GError) local = NULL;
  gint64 run;

  g_return_val_if_fail (p != NULL && net != NULL && cfg != NULL, FALSE);
  if (!cb)
    cb = &no_callbacks;
  /* an absent device is the caller's mistake, not a failed run to keep */
  if (!nl_run_config_check (cfg, error) || !nl_device_check (cfg->device, error))
    return FALSE;
  run = create_run (p, name, net, cfg, 0, 0, trial, error);
  if (run <= 0)
    return FALSE;
  if (run_id)
    *run_id = run;
  if (cb->created)
    cb->created (cb->chain.user, run);
  t = nl_trainer_new (net, cfg, &local);
  if (!t)
    {
      nl_project_set_run_status (p, run, "failed", local->message, NULL);
      g_propagate_error (error, g_steal_pointer (&local));
      return FALSE;
    }
  return record (p, run, t, cb, error);
}

/* RUN's stored vocabulary (if any) into *vocab, lent to rc's data
 * options: a resumed or forked text run encodes as it was trained. */
static gboolean
with_vocab (NlProject *p, gint64 run, NlRunConfig *rc, NlVocab **vocab, GError **error)
{
  g_autoptr (GError) local = NULL;
  *vocab = nl_run_vocab_load (p, run, &local);
  rc->data.vocab = *vocab;
  if (!local)
    return TRUE;
  g_propagate_error (error, g_steal_pointer (&local));
  return FALSE;
}

/* The device the run row names (runs stored before devices: the CPU). */
static void
run_device (const NlRunInfo *info, NlRunConfig *rc)
{
  if (!info->device || !nl_device_parse (info->device, &rc->device, NULL))
    rc->device = (NlDevice) { NL_DEVICE_CPU, 0 };
}

/* The trainer of a stored run, its state from the checkpoint blob (of
 * epoch `epoch`, as nl_run_checkpoint_find checked it): all of it
 * (weights, statistics, optimizer state, position) with the same optimizer,
 * the weights and statistics only with another. */
static NlTrainer *
trainer_from (const NlRunInfo *info, NlRunConfig *rc, GBytes *blob, int epoch, gboolean optimizer_too,
              NlNetwork **net_out, GError **error)
{
  g_autoptr (NlNetwork) net = nl_network_load_data (info->network_json, -1, error);
  g_autoptr (NlTrainer) t = NULL;
  NlTrainPosition pos = { 0 };

  if (!net)
    return NULL;
  t = nl_trainer_new (net, rc, error);
  if (!t)
    return NULL;
  if (optimizer_too)
    {
      if (!nl_checkpoint_load (nl_trainer_get_model (t), blob, FALSE, &pos, error))
        return NULL;
      /* maybe inside an epoch: the next batch is the one after the checkpoint */
      nl_trainer_set_train_position (t, &pos);
      nl_train_position_clear (&pos);
    }
  else
    {
      g_autofree char *tmp = NULL;
      gboolean ok;
      int fd = g_file_open_tmp ("netloom-fork-XXXXXX.safetensors", &tmp, error);
      if (fd < 0)
        return NULL;
      close (fd);
      ok = nl_weights_export_from_checkpoint (blob, tmp, error)
           && nl_weights_import (nl_trainer_get_model (t), tmp, FALSE, FALSE, NULL, NULL, error);
      g_unlink (tmp);
      if (!ok)
        return NULL;
      /* a fresh optimizer starts counting its updates again */
      nl_trainer_set_position (t, epoch, 0);
    }
  if (net_out)
    *net_out = g_steal_pointer (&net);
  return g_steal_pointer (&t);
}

/* A resume up to EPOCHS in all (0: the run's own, stored_epochs) from
 * checkpoint ckpt (0: none, from the start) must have something to train:
 * a target at or before the epoch in progress would end the run at once
 * with that epoch's weights from its middle, and one at the epochs a
 * finished run has done would train nothing. A run that did not finish
 * may end at the epochs it has done (the status then says finished). */
static gboolean
check_resume_target (NlProject *p, const NlRunInfo *info, int stored_epochs, gint64 ckpt, int epochs,
                     GError **error)
{
  g_autoptr (GArray) list = NULL;
  gboolean inside = FALSE, ended = !g_strcmp0 (info->status, "finished") || !g_strcmp0 (info->status, "pruned");
  int done = 0;

  if (epochs <= 0 || ckpt <= 0)
    return TRUE;
  if (!(list = nl_project_list_checkpoints (p, info->id, error)))
    return FALSE;
  for (guint i = 0; i < list->len; i++)
    if (g_array_index (list, NlCheckpointInfo, i).id == ckpt)
      {
        done = g_array_index (list, NlCheckpointInfo, i).epoch;
        inside = g_array_index (list, NlCheckpointInfo, i).is_interval;
      }
  if (inside && epochs <= done)
    g_set_error (error, NL_TRAIN_ERROR, NL_TRAIN_ERROR_CONFIG,
                 "run %" G_GINT64_FORMAT " is in epoch %d of %d; --epochs must be at least %d", info->id, done + 1,
                 MAX (stored_epochs, done + 1), done + 1);
  else if (!inside && ended && epochs <= done)
    g_set_error (error, NL_TRAIN_ERROR, NL_TRAIN_ERROR_CONFIG,
                 "run %" G_GINT64_FORMAT " %s after %d epoch%s; --epochs must be at least %d to train on", info->id,
                 info->status, done, done == 1 ? "" : "s", done + 1);
  else if (!inside && epochs < done)
    g_set_error (error, NL_TRAIN_ERROR, NL_TRAIN_ERROR_CONFIG,
                 "run %" G_GINT64_FORMAT " has done %d of %d epochs; --epochs must be at least %d", info->id, done,
                 MAX (stored_epochs, done), done);
  else
    return TRUE;
  return FALSE;
}

gboolean
nl_run_resume (NlProject *p, gint64 run, int epochs, const NlRunConfig *policy, const NlRunCallbacks *cb,
               GError **error)
{
  g_autoptr (NlRunInfo) info = nl_project_get_run (p, run, error);
  g_auto (NlRunConfig) rc = { 0 };
  g_autoptr (NlTrainer) t = NULL;
  g_autofree char *warning = NULL;
  g_autoptr (GError) local = NULL;
  g_autoptr (GBytes) blob = NULL;
  g_autoptr (NlVocab) vocab = NULL;
  gint64 ckpt;
  int done, epoch = 0;
  int64_t updates;

  g_auto (NlRunConfig) defaults = { 0 };

  g_return_val_if_fail (p != NULL, FALSE);
  nl_run_config_init (&defaults);
  if (!cb)
    cb = &no_callbacks;
  if (!policy)
    policy = &defaults;
  /* the stored settings stay as they were; the policy is new */
  if (!info || !nl_run_config_check (policy, error))
    return FALSE;
  if (g_strcmp0 (info->status, "running") == 0)
    {
      g_set_error (error, NL_TRAIN_ERROR, NL_TRAIN_ERROR_CONFIG,
                   "run %" G_GINT64_FORMAT " is running (process %" G_GINT64_FORMAT " on %s)", run, info->pid,
                   info->host ? info->host : "?");
      return FALSE;
    }
  if (cb->created)
    cb->created (cb->chain.user, run);
  nl_run_config_init (&rc);
  if (!nl_run_config_from_json (&rc, info->hparams_json, error))
    return FALSE;
  nl_run_config_set_policy (&rc, policy);
  run_device (info, &rc);
  if (!nl_device_check (rc.device, error) || !with_vocab (p, run, &rc, &vocab, error))
    return FALSE;
  ckpt = nl_run_checkpoint_find (p, run, "last", &blob, &epoch, cb->log ? &warning : NULL, &local);
  if (ckpt <= 0 && !g_error_matches (local, NL_PROJECT_ERROR, NL_PROJECT_ERROR_NOT_FOUND))
    {
      g_propagate_error (error, g_steal_pointer (&local));
      return FALSE;
    }
  if (warning)
    cb->log (cb->chain.user, warning);
  /* before anything is written: a refused target leaves the run as it was */
  if (!check_resume_target (p, info, rc.epochs, ckpt, epochs, error))
    return FALSE;
  if (epochs > 0)
    rc.epochs = epochs;
  if (ckpt > 0)
    t = trainer_from (info, &rc, blob, epoch, TRUE, NULL, error);
  else
    {
      /* killed before its first checkpoint: the row holds all it needs
       * (network, settings, seed), so it starts again from the start */
      g_autoptr (NlNetwork) net = nl_network_load_data (info->network_json, -1, error);
      t = net ? nl_trainer_new (net, &rc, error) : NULL;
    }
  if (!t)
    return FALSE;
  /* what was trained after the checkpoint is trained again: its points go */
  nl_trainer_get_position (t, &done, &updates);
  if (!nl_project_truncate_metrics (p, run, updates, error))
    return FALSE;
  return record (p, run, t, cb, error);
}

/* Whether a and b read the same samples the same way (the normalisation
 * aside: it is a setting of the run, not of the data). */
static gboolean
same_data (const NlRunConfig *a, const NlRunConfig *b)
{
  return !g_strcmp0 (a->dataset, b->dataset) && !g_strcmp0 (a->data.label_column, b->data.label_column)
         && a->data.regression == b->data.regression && a->data.image_width == b->data.image_width
         && a->data.image_height == b->data.image_height;
}

/* A fork onto other data: its classes fit the network's scores (a label
 * past them would fail the run at its first batch). */
static gboolean
check_classes (NlTrainer *t, NlNetwork *net, gint64 run, const char *dataset, GError **error)
{
  const NlDataset *ds = nl_trainer_get_train_set (t);
  NlCompileOptions opts = { .batch = 1 };
  g_autoptr (NlGraph) g = NULL;
  int64_t scores;

  if (ds->n_classes <= 0)
    return TRUE;
  if (!(g = nl_graph_compile (net, &ds->sample_shape, &opts, error)))
    return FALSE;
  /* per-step labels: the scores of one step */
  scores = nl_shape_numel (&nl_graph_value (g, g->pred_value)->shape) / nl_dataset_label_numel (ds);
  if (scores >= ds->n_classes)
    return TRUE;
  g_set_error (error, NL_TRAIN_ERROR, NL_TRAIN_ERROR_CONFIG,
               "dataset “%s” does not fit run %" G_GINT64_FORMAT "'s network: it has %d classes, the network scores %"
               G_GINT64_FORMAT, dataset, run, ds->n_classes, scores);
  return FALSE;
}

gboolean
nl_run_fork (NlProject *p, gint64 run, const char *which, const char *name,
             void (*apply) (NlRunConfig *rc, gpointer user), gpointer user,
             const NlRunConfig *policy, const NlRunCallbacks *cb, gint64 *new_run, GError **error)
{
  g_autoptr (NlRunInfo) info = nl_project_get_run (p, run, error);
  g_auto (NlRunConfig) rc = { 0 };
  g_autoptr (NlTrainer) t = NULL;
  g_auto (NlRunConfig) parent = { 0 };
  g_autoptr (NlNetwork) net = NULL;
  g_autoptr (GError) local = NULL;
  g_autoptr (GBytes) blob = NULL;
  g_autoptr (NlVocab) vocab = NULL;
  gboolean other_data;
  gint64 ckpt, child;
  int epoch = 0;
  g_autofree char *default_name = NULL, *warning = NULL;

  g_return_val_if_fail (p != NULL, FALSE);
  if (!cb)
    cb = &no_callbacks;
  if (!info)
    return FALSE;
  nl_run_config_init (&rc);
  if (!nl_run_config_from_json (&rc, info->hparams_json, error))
    return FALSE;
  /* the parent's device unless apply picks another; its vocabulary, which
   * its weights were trained on */
  run_device (info, &rc);
  if (!with_vocab (p, run, &rc, &vocab, error))
    return FALSE;
  nl_run_config_copy (&parent, &rc);
  if (policy)
    nl_run_config_set_policy (&rc, policy);
  if (apply)
    apply (&rc, user);
  if (!nl_run_config_check (&rc, error) || !nl_device_check (rc.device, error))
    return FALSE;
  ckpt = nl_run_checkpoint_find (p, run, which ? which : "last", &blob, &epoch, cb->log ? &warning : NULL, error);
  if (ckpt <= 0)
    return FALSE;
  if (warning)
    cb->log (cb->chain.user, warning);
  /* other data: fine-tuning the weights, with a fresh optimizer (its
   * state followed the other data's gradients) from epoch 0 of the data */
  other_data = !same_data (&rc, &parent);
  t = trainer_from (info, &rc, blob, epoch, rc.optim.kind == parent.optim.kind && !other_data, &net, &local);
  if (t && other_data)
    {
      nl_trainer_set_position (t, 0, 0);
      if (!check_classes (t, net, run, rc.dataset, &local))
        g_clear_pointer (&t, nl_trainer_free);
    }
  if (!t)
    {
      /* the samples' shape does not fit the network's Input or weights */
      if (other_data && (local->domain == NL_NETWORK_ERROR || local->domain == NL_CHECKPOINT_ERROR))
        g_propagate_prefixed_error (error, g_steal_pointer (&local),
                                    "dataset “%s” does not fit run %" G_GINT64_FORMAT "'s network: ", rc.dataset, run);
      else
        g_propagate_error (error, g_steal_pointer (&local));
      return FALSE;
    }
  default_name = g_strdup_printf ("fork of %s", info->name ? info->name : "run");
  child = create_run (p, name ? name : default_name, net, &rc, run, ckpt, NULL, error);
  if (child <= 0)
    return FALSE;
  if (new_run)
    *new_run = child;
  if (cb->created)
    cb->created (cb->chain.user, child);
  return record (p, child, t, cb, error);
}
