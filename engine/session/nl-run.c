/* nl-run.c — training runs stored in a project. */
#include "engine/session/nl-run.h"
#include "engine/nl-checkpoint.h"
#include "core/nl-device.h"
#include "core/nl-json-guard.h"
#include "engine/nl-metric.h"

#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <unistd.h>
#include <math.h>
#include <string.h>

void
nl_run_config_init (NlRunConfig *rc)
{
  nl_train_config_init (&rc->cfg);
  rc->strings = g_ptr_array_new_with_free_func (g_free);
}

void
nl_run_config_clear (NlRunConfig *rc)
{
  g_clear_pointer (&rc->strings, g_ptr_array_unref);
}

const char *
nl_run_config_keep (NlRunConfig *rc, const char *s)
{
  char *copy;
  if (!s)
    return NULL;
  copy = g_strdup (s);
  g_ptr_array_add (rc->strings, copy);
  return copy;
}


#define SET_STR(b, k, v) (json_builder_set_member_name (b, k), (v) ? json_builder_add_string_value (b, v) : json_builder_add_null_value (b))
#define SET_NUM(b, k, v) (json_builder_set_member_name (b, k), json_builder_add_double_value (b, v))
#define SET_INT(b, k, v) (json_builder_set_member_name (b, k), json_builder_add_int_value (b, v))
#define SET_BOOL(b, k, v) (json_builder_set_member_name (b, k), json_builder_add_boolean_value (b, v))

char *
nl_run_config_to_json (const NlTrainConfig *c)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();
  g_autoptr (JsonGenerator) gen = json_generator_new ();
  g_autoptr (JsonNode) root = NULL;
  const NlOptimConfig *o = &c->optim;

  json_builder_begin_object (b);
  SET_STR (b, "dataset", c->dataset);
  SET_INT (b, "epochs", c->epochs);
  SET_INT (b, "batch_size", c->batch_size);
  SET_STR (b, "optimizer", nl_optim_kind_name (o->kind));
  SET_NUM (b, "lr", o->lr);
  SET_NUM (b, "momentum", o->momentum);
  SET_BOOL (b, "nesterov", o->nesterov);
  SET_NUM (b, "wd", o->wd);
  SET_NUM (b, "beta1", o->beta1);
  SET_NUM (b, "beta2", o->beta2);
  SET_NUM (b, "epsilon", o->epsilon);
  SET_NUM (b, "rho", o->rho);
  SET_BOOL (b, "centered", o->centered);
  SET_NUM (b, "clip_gradient", o->clip_gradient);
  SET_NUM (b, "clip_global_norm", o->clip_global_norm);
  SET_STR (b, "lr_schedule", c->lr_schedule);
  {
    char seed[32];
    g_snprintf (seed, sizeof seed, "%" G_GUINT64_FORMAT, c->seed);
    json_builder_set_member_name (b, "seed");
    json_builder_add_string_value (b, seed); /* as text: 64-bit exact */
  }
  SET_INT (b, "threads", c->threads);
  SET_STR (b, "loss", c->loss);
  SET_NUM (b, "mean", c->mean);
  SET_NUM (b, "std", c->std);
  SET_INT (b, "eval_batch_size", c->eval_batch_size);
  SET_INT (b, "workers", c->workers);
  SET_STR (b, "augment", c->augment);
  SET_STR (b, "label_column", c->data.label_column);
  SET_INT (b, "image_width", c->data.image_width);
  SET_INT (b, "image_height", c->data.image_height);
  SET_BOOL (b, "regression", c->data.regression);
  SET_NUM (b, "val_fraction", c->data.val_fraction);
  SET_STR (b, "precision", nl_precision_name (c->precision));
  SET_NUM (b, "loss_scale", c->loss_scale);
  json_builder_end_object (b);
  root = json_builder_get_root (b);
  json_generator_set_root (gen, root);
  return json_generator_to_data (gen, NULL);
}

gboolean
nl_run_config_from_json (NlRunConfig *rc, const char *json, GError **error)
{
  g_autoptr (JsonParser) parser = json_parser_new ();
  NlTrainConfig *c = &rc->cfg;
  JsonObject *o;
  NlOptimKind kind;

  if (!nl_json_check_depth (json, -1, "the run's settings", error)
      || !json_parser_load_from_data (parser, json, -1, error))
    return FALSE;
  if (!JSON_NODE_HOLDS_OBJECT (json_parser_get_root (parser)))
    {
      g_set_error (error, NL_TRAIN_ERROR, NL_TRAIN_ERROR_CONFIG, "the run's settings are not a JSON object");
      return FALSE;
    }
  o = json_node_get_object (json_parser_get_root (parser));
#define STR(k) nl_run_config_keep (rc, json_object_get_string_member_with_default (o, k, NULL))
#define NUM(k, d) json_object_get_double_member_with_default (o, k, d)
#define INT(k, d) (int) json_object_get_int_member_with_default (o, k, d)
#define BOOL(k) json_object_get_boolean_member_with_default (o, k, FALSE)
  if (!nl_optim_kind_parse (json_object_get_string_member_with_default (o, "optimizer", "sgd"), &kind, error))
    return FALSE;
  nl_optim_config_init (&c->optim, kind);
  c->dataset = STR ("dataset");
  c->epochs = INT ("epochs", 1);
  c->batch_size = INT ("batch_size", 128);
  c->optim.lr = (float) NUM ("lr", c->optim.lr);
  c->optim.momentum = (float) NUM ("momentum", c->optim.momentum);
  c->optim.nesterov = BOOL ("nesterov");
  c->optim.wd = (float) NUM ("wd", c->optim.wd);
  c->optim.beta1 = (float) NUM ("beta1", c->optim.beta1);
  c->optim.beta2 = (float) NUM ("beta2", c->optim.beta2);
  c->optim.epsilon = (float) NUM ("epsilon", c->optim.epsilon);
  c->optim.rho = (float) NUM ("rho", c->optim.rho);
  c->optim.centered = BOOL ("centered");
  c->optim.clip_gradient = (float) NUM ("clip_gradient", 0);
  c->optim.clip_global_norm = (float) NUM ("clip_global_norm", 0);
  c->lr_schedule = STR ("lr_schedule");
  c->seed = g_ascii_strtoull (json_object_get_string_member_with_default (o, "seed", "0"), NULL, 10);
  c->threads = INT ("threads", 0);
  c->loss = STR ("loss");
  c->mean = (float) NUM ("mean", 0);
  c->std = (float) NUM ("std", 1);
  c->eval_batch_size = INT ("eval_batch_size", 500);
  c->workers = INT ("workers", 1);
  c->augment = STR ("augment");
  c->data.label_column = STR ("label_column");
  c->data.image_width = INT ("image_width", 0);
  c->data.image_height = INT ("image_height", 0);
  c->data.regression = BOOL ("regression");
  c->data.val_fraction = NUM ("val_fraction", 0.1);
  {
    /* runs stored before precision existed read as fp32 */
    const char *prec = json_object_get_string_member_with_default (o, "precision", "fp32");
    if (!nl_precision_parse (prec, &c->precision))
      {
        g_set_error (error, NL_TRAIN_ERROR, NL_TRAIN_ERROR_CONFIG,
                     "unknown precision '%s' in the run's settings (fp32, bf16 or fp16)", prec);
        return FALSE;
      }
  }
  c->loss_scale = (float) NUM ("loss_scale", 0);
#undef STR
#undef NUM
#undef INT
#undef BOOL
  if (!c->dataset || !c->loss)
    {
      g_set_error (error, NL_TRAIN_ERROR, NL_TRAIN_ERROR_CONFIG, "the run's settings lack a dataset or a loss");
      return FALSE;
    }
  return TRUE;
}

/* ---- recording ---- */

typedef struct {
  NlProject *project;
  gint64 run;
  NlMetricWriter *writer;
  const NlRunOptions *opts;
  const NlTrainConfig *cfg;
  gint64 step;              /* updates done: the x axis of every curve */
  /* early stopping */
  double best;
  int best_epoch, wait;
  char *early_message;      /* set when it triggered */
  int stop_epoch;
} Recorder;

static const char *
r_monitor (const Recorder *r)
{
  return r->opts->monitor ? r->opts->monitor
         : r->opts->early_stop_metric ? r->opts->early_stop_metric : "test_accuracy";
}

static double
metric_value (const char *name, const NlEpochReport *e)
{
  return !strcmp (name, "train_loss") ? e->train_loss : !strcmp (name, "train_accuracy") ? e->train_acc : e->test_acc;
}

static void
r_log (const Recorder *r, const char *line)
{
  if (r->opts->log)
    r->opts->log (r->opts->chain.user, line);
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
  r->step++;
  add_point (r, epoch, "train", "batch_loss", loss);
  return !r->opts->chain.batch || r->opts->chain.batch (r->opts->chain.user, epoch, batch, n_batches, loss, elapsed);
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
  if (r->opts->chain.epoch)
    r->opts->chain.epoch (r->opts->chain.user, e);
}

gboolean
nl_run_monitor_check (const char *monitor, GError **error)
{
  if (!monitor || !strcmp (monitor, "test_accuracy") || !strcmp (monitor, "train_accuracy")
      || !strcmp (monitor, "train_loss"))
    return TRUE;
  g_set_error (error, NL_TRAIN_ERROR, NL_TRAIN_ERROR_CONFIG,
               "unknown checkpoint metric '%s' (test_accuracy, train_accuracy or train_loss)", monitor);
  return FALSE;
}

gboolean
nl_run_options_check (const NlRunOptions *opts, GError **error)
{
  g_return_val_if_fail (opts != NULL, FALSE);
  if (!nl_run_monitor_check (opts->monitor, error))
    return FALSE;
  if (opts->early_stop_metric && !nl_run_monitor_check (opts->early_stop_metric, NULL))
    {
      g_set_error (error, NL_TRAIN_ERROR, NL_TRAIN_ERROR_CONFIG,
                   "unknown early stopping metric '%s' (test_accuracy, train_accuracy or train_loss)",
                   opts->early_stop_metric);
      return FALSE;
    }
  if (opts->patience < 0)
    g_set_error (error, NL_TRAIN_ERROR, NL_TRAIN_ERROR_CONFIG, "early stopping patience must be >= 0, not %d",
                 opts->patience);
  else if (!(opts->min_delta >= 0 && isfinite (opts->min_delta)))
    g_set_error (error, NL_TRAIN_ERROR, NL_TRAIN_ERROR_CONFIG, "early stopping min delta must be a number >= 0, "
                 "not %g", opts->min_delta);
  else if (opts->keep_last < 0)
    g_set_error (error, NL_TRAIN_ERROR, NL_TRAIN_ERROR_CONFIG, "checkpoints kept must be >= 0, not %d",
                 opts->keep_last);
  else
    return TRUE;
  return FALSE;
}

/* Keras' EarlyStopping: TRUE (with the message set) when `patience` epochs
 * in a row did not beat the best by more than min_delta. The first epoch
 * always sets the best; NaN never improves. */
static gboolean
early_stop (Recorder *r, const NlEpochReport *e)
{
  const char *metric = r->opts->early_stop_metric;
  gboolean lower = metric && !strcmp (metric, "train_loss");
  double v;

  if (!metric)
    return FALSE;
  v = metric_value (metric, e);
  if (r->best_epoch == 0 || (lower ? v < r->best - r->opts->min_delta : v > r->best + r->opts->min_delta))
    {
      if (!isnan (v))
        {
          r->best = v;
          r->best_epoch = e->epoch;
          r->wait = 0;
          return FALSE;
        }
    }
  if (++r->wait < MAX (r->opts->patience, 1) || e->epoch >= r->cfg->epochs)
    return FALSE;
  r->stop_epoch = e->epoch;
  r->early_message = g_strdup_printf ("early stopping at epoch %d (best %s %.6g at epoch %d)", e->epoch, metric,
                                      r->best, r->best_epoch);
  return TRUE;
}

static gboolean
rec_epoch_done (gpointer user, NlTrainer *t, const NlEpochReport *e, GError **error)
{
  const char *monitor = r_monitor ((Recorder *) user);
  double value = metric_value (monitor, e);
  Recorder *r = user;
  NlTrainPosition pos = { 0 };
  int64_t updates;
  gint64 ckpt;
  g_autoptr (GBytes) blob = NULL;

  nl_trainer_get_position (t, &pos.epoch, &updates);
  pos.updates = updates;
  pos.seed = r->cfg->seed;
  pos.optimizer = (char *) nl_optim_kind_name (r->cfg->optim.kind);
  if (r->cfg->precision == NL_PRECISION_F16)
    {
      float scale;
      guint64 skipped;
      nl_trainer_get_loss_scale (t, &scale, &skipped);
      pos.loss_scale = scale;
      pos.skipped = (gint64) skipped;
    }
  blob = nl_checkpoint_save (nl_trainer_get_model (t), &pos, error);
  /* metrics first, so a checkpoint never exists without its epoch's points */
  if (!blob || !nl_metric_writer_flush (r->writer, error))
    return FALSE;
  ckpt = nl_project_add_checkpoint (r->project, r->run, pos.epoch, pos.updates, g_bytes_get_data (blob, NULL),
                                    g_bytes_get_size (blob), monitor, value, strcmp (monitor, "train_loss") != 0,
                                    r->opts->keep_last > 0 ? r->opts->keep_last : 3, error);
  if (ckpt <= 0 || !nl_project_set_run_epochs (r->project, r->run, pos.epoch, error))
    return FALSE;
  if (r->opts->checkpoint)
    r->opts->checkpoint (r->opts->chain.user, pos.epoch, ckpt);
  if (early_stop (r, e))
    {
      /* the trainer stops on FALSE; record() turns this into "finished" */
      r_log (r, r->early_message);
      g_set_error_literal (error, NL_TRAIN_ERROR, NL_TRAIN_ERROR_CANCELLED, r->early_message);
      return FALSE;
    }
  return TRUE;
}

/* The best checkpoint becomes the newest one, and the model takes its
 * weights; nothing to do when the last epoch was the best. */
static gboolean
restore_best (NlProject *p, gint64 run, NlTrainer *t, const NlRunOptions *opts, GError **error)
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
  if (opts->checkpoint)
    opts->checkpoint (opts->chain.user, epochs, ckpt);
  return TRUE;
}

/* Trains t as run `run` and records the outcome in the run's status. */
static gboolean
record (NlProject *p, gint64 run, NlTrainer *t, const NlRunOptions *opts, GError **error)
{
  Recorder r = { .project = p, .run = run, .opts = opts, .cfg = nl_trainer_get_config (t) };
  NlTrainCallbacks cb = { rec_batch, rec_epoch, &r, rec_epoch_done };
  g_autoptr (GError) local = NULL, flush_error = NULL;
  g_autofree char *early_message = NULL;
  int epochs;
  gboolean ok;

  nl_trainer_get_position (t, &epochs, &r.step);
  if (!nl_project_set_run_status (p, run, "running", NULL, error))
    return FALSE;
  r.writer = nl_metric_writer_new (p, 250, 512);
  ok = nl_trainer_run (t, &cb, &local);
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
  if (ok && opts->restore_best)
    ok = restore_best (p, run, t, opts, &local);
  if (ok)
    return nl_project_set_run_status (p, run, "finished", early_message, error);
  nl_project_set_run_status (p, run,
                             g_error_matches (local, NL_TRAIN_ERROR, NL_TRAIN_ERROR_CANCELLED) ? "stopped" : "failed",
                             local->message, NULL);
  g_propagate_error (error, g_steal_pointer (&local));
  return FALSE;
}

static char *
pipeline_json (const NlTrainConfig *cfg)
{
  NlPipelineInfo pl = { .name = (char *) "run", .dataset_spec = (char *) cfg->dataset,
                        .transforms = (char *) cfg->augment, .split = cfg->data.val_fraction,
                        .batch_size = cfg->batch_size, .workers = cfg->workers };
  return nl_pipeline_info_to_json (&pl);
}

static gint64
create_run (NlProject *p, const char *name, const NlNetwork *net, const NlTrainConfig *cfg, gint64 parent_run,
            gint64 parent_checkpoint, GError **error)
{
  g_autofree char *net_json = nl_network_to_json (net);
  g_autofree char *hp = nl_run_config_to_json (cfg);
  g_autofree char *pl = pipeline_json (cfg);
  g_autofree char *default_name = g_strdup_printf ("%s %s lr %g", net->name, nl_optim_kind_name (cfg->optim.kind),
                                                   cfg->optim.lr);
  g_autofree char *device = nl_device_to_string (cfg->device);
  NlRunInfo info = { .name = (char *) (name ? name : default_name), .parent_run = parent_run,
                     .parent_checkpoint = parent_checkpoint, .network_name = net->name, .network_json = net_json,
                     .pipeline_json = pl, .hparams_json = hp, .seed = (gint64) cfg->seed, .device = device,
                     .status = (char *) "queued" };
  return nl_project_create_run (p, &info, error);
}

gboolean
nl_run_train (NlProject *p, const char *name, const NlNetwork *net, const NlTrainConfig *cfg,
              const NlRunOptions *opts, gint64 *run_id, GError **error)
{
  g_autoptr (NlTrainer) t = NULL;
  g_autoptr (GError) local = NULL;
  gint64 run;

  g_return_val_if_fail (p != NULL && net != NULL && cfg != NULL && opts != NULL, FALSE);
  /* an absent device is the caller's mistake, not a failed run to keep */
  if (!nl_run_options_check (opts, error) || !nl_device_check (cfg->device, error))
    return FALSE;
  run = create_run (p, name, net, cfg, 0, 0, error);
  if (run <= 0)
    return FALSE;
  if (run_id)
    *run_id = run;
  if (opts->created)
    opts->created (opts->chain.user, run);
  t = nl_trainer_new (net, cfg, &local);
  if (!t)
    {
      nl_project_set_run_status (p, run, "failed", local->message, NULL);
      g_propagate_error (error, g_steal_pointer (&local));
      return FALSE;
    }
  return record (p, run, t, opts, error);
}

/* The device the run row names (runs stored before devices: the CPU). */
static void
run_device (const NlRunInfo *info, NlRunConfig *rc)
{
  if (!info->device || !nl_device_parse (info->device, &rc->cfg.device, NULL))
    rc->cfg.device = (NlDevice) { NL_DEVICE_CPU, 0 };
}

/* The trainer of a stored run, its state from checkpoint ckpt: all of it
 * (weights, statistics, optimizer state, position) with the same optimizer,
 * the weights and statistics only with another. */
static NlTrainer *
trainer_from (NlProject *p, const NlRunInfo *info, NlRunConfig *rc, gint64 ckpt, gboolean optimizer_too,
              NlNetwork **net_out, GError **error)
{
  g_autoptr (NlNetwork) net = nl_network_load_data (info->network_json, -1, error);
  g_autoptr (NlTrainer) t = NULL;
  g_autoptr (GBytes) blob = NULL;
  NlTrainPosition pos = { 0 };
  int epoch = 0;

  if (!net)
    return NULL;
  t = nl_trainer_new (net, &rc->cfg, error);
  if (!t)
    return NULL;
  blob = nl_project_load_checkpoint (p, ckpt, NULL, &epoch, NULL, error);
  if (!blob)
    return NULL;
  if (optimizer_too)
    {
      if (!nl_checkpoint_load (nl_trainer_get_model (t), blob, FALSE, &pos, error))
        return NULL;
      nl_trainer_set_position (t, pos.epoch, pos.updates);
      nl_trainer_set_loss_scale (t, (float) pos.loss_scale, (guint64) pos.skipped);
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

gboolean
nl_run_resume (NlProject *p, gint64 run, int epochs, const NlRunOptions *opts, GError **error)
{
  g_autoptr (NlRunInfo) info = nl_project_get_run (p, run, error);
  g_auto (NlRunConfig) rc = { 0 };
  g_autoptr (NlTrainer) t = NULL;
  gint64 ckpt;

  g_return_val_if_fail (p != NULL && opts != NULL, FALSE);
  if (!info || !nl_run_options_check (opts, error))
    return FALSE;
  if (g_strcmp0 (info->status, "running") == 0)
    {
      g_set_error (error, NL_TRAIN_ERROR, NL_TRAIN_ERROR_CONFIG,
                   "run %" G_GINT64_FORMAT " is running (process %" G_GINT64_FORMAT " on %s)", run, info->pid,
                   info->host ? info->host : "?");
      return FALSE;
    }
  if (opts->created)
    opts->created (opts->chain.user, run);
  nl_run_config_init (&rc);
  if (!nl_run_config_from_json (&rc, info->hparams_json, error))
    return FALSE;
  run_device (info, &rc);
  if (!nl_device_check (rc.cfg.device, error))
    return FALSE;
  if (epochs > 0)
    rc.cfg.epochs = epochs;
  ckpt = nl_project_find_checkpoint (p, run, "last", error);
  if (ckpt <= 0)
    return FALSE;
  t = trainer_from (p, info, &rc, ckpt, TRUE, NULL, error);
  if (!t)
    return FALSE;
  return record (p, run, t, opts, error);
}

gboolean
nl_run_fork (NlProject *p, gint64 run, const char *which, const char *name,
             void (*apply) (NlRunConfig *rc, gpointer user), gpointer user,
             const NlRunOptions *opts, gint64 *new_run, GError **error)
{
  g_autoptr (NlRunInfo) info = nl_project_get_run (p, run, error);
  g_auto (NlRunConfig) rc = { 0 };
  g_autoptr (NlTrainer) t = NULL;
  g_autoptr (NlNetwork) net = NULL;
  NlOptimKind parent_kind;
  gint64 ckpt, child;
  g_autofree char *default_name = NULL;

  g_return_val_if_fail (p != NULL && opts != NULL, FALSE);
  if (!info || !nl_run_options_check (opts, error))
    return FALSE;
  nl_run_config_init (&rc);
  if (!nl_run_config_from_json (&rc, info->hparams_json, error))
    return FALSE;
  /* the parent's device unless apply picks another */
  run_device (info, &rc);
  parent_kind = rc.cfg.optim.kind;
  if (apply)
    apply (&rc, user);
  if (!nl_device_check (rc.cfg.device, error))
    return FALSE;
  ckpt = nl_project_find_checkpoint (p, run, which ? which : "last", error);
  if (ckpt <= 0)
    return FALSE;
  t = trainer_from (p, info, &rc, ckpt, rc.cfg.optim.kind == parent_kind, &net, error);
  if (!t)
    return FALSE;
  default_name = g_strdup_printf ("fork of %s", info->name ? info->name : "run");
  child = create_run (p, name ? name : default_name, net, &rc.cfg, run, ckpt, error);
  if (child <= 0)
    return FALSE;
  if (new_run)
    *new_run = child;
  if (opts->created)
    opts->created (opts->chain.user, child);
  return record (p, child, t, opts, error);
}
