/* nl-trainer.c — the training loop. */
#include "engine/train/nl-trainer.h"
#include "engine/train/nl-vocab-fit.h"
#include "engine/train/nl-data-parallel.h"
#include "engine/data/nl-loader.h"
#include "engine/data/nl-transform.h"
#include "engine/train/nl-loss-scale.h"
#include "engine/train/nl-lr-schedule.h"
#include "engine/train/nl-layer-stats.h"
#include "engine/train/nl-metric.h"
#include "engine/train/nl-train-input.h"
#include "engine/train/nl-test-stop.h"

#include <math.h>
#include <string.h>

G_DEFINE_QUARK (nl-train-error-quark, nl_train_error)



struct NlTrainer {
  NlRunConfig cfg;          /* a copy */
  NlDataset *train_set, *test_set;
  NlModel *model;
  NlProgram *train_prog;     /* full batches */
  NlProgram *tail_prog;      /* the kept smaller last batch, built on demand */
  NlProgram *eval_prog, *eval_tail;
  NlLoader *loader, *eval_loader;
  NlTransform *augment;
  NlLrSchedule *schedule;
  NlMetric *accuracy;
  int next_epoch;            /* 0-based */
  int64_t updates;
  NlLossScale scaler;        /* fp16: dynamic loss scaling; else fixed at 1 */
  /* data parallelism: the job's group (NULL: this process alone) */
  NlComm *comm;
  int eval_batch;            /* this process's share of the evaluation batch */
  gboolean stop_asked;       /* a batch callback asked to stop: told the others at the next step */
  gboolean started;          /* nl_trainer_run began: the others were told to go */
  /* The epoch in progress, kept here so that a checkpoint taken inside it
   * (the interval hook) stores its sums; set from a checkpoint, where the
   * next epoch starts (batch > 0: inside it). */
  struct {
    gboolean inside;         /* train_epoch is running */
    int64_t batch;           /* batches done */
    double loss;             /* summed batch losses */
    int64_t seen;
    double seconds;          /* training time before this process took over */
    gint64 start_us;         /* when this process took over (moved on by the hook's time) */
    double correct;          /* rank 0 under data parallelism: every process's */
    int64_t counted;
  } ep;
  gint64 last_checkpoint_us; /* the interval hook's clock */
  GArray *test_stops;        /* int64_t: NETLOOM_TEST_STOP_AT_STEP's steps not yet reached */
  NlTrainInput input;        /* the training batches, timed */
  NlTrace *trace;            /* nl_trainer_set_trace's */
  NlLayerStats *lstats;      /* cfg.layer_stats_every > 0, rank 0 */
};

/* Data parallelism: whether rank 0 starts the job it sent (1) or gave up
 * on it before its first step (0: its checkpoint did not load, its own
 * trainer could not be made), so that the others, waiting for its model,
 * end this job and wait for the next. */
static gboolean
share_go (NlComm *comm, gboolean go, GError **error)
{
  gint32 flag = go ? 1 : 0;
  if (!nl_comm_broadcast (comm, &flag, sizeof flag, 0, error))
    return FALSE;
  if (!flag)
    {
      g_set_error_literal (error, NL_TRAIN_ERROR, NL_TRAIN_ERROR_CANCELLED, "rank 0 did not start this job");
      return FALSE;
    }
  return TRUE;
}

void
nl_trainer_free (NlTrainer *t)
{
  if (!t)
    return;
  if (t->comm && t->comm->rank == 0 && !t->started)
    share_go (t->comm, FALSE, NULL);
  nl_program_free (t->train_prog);
  nl_program_free (t->tail_prog);
  nl_program_free (t->eval_prog);
  nl_program_free (t->eval_tail);
  nl_model_free (t->model);
  nl_train_input_clear (&t->input);
  nl_loader_free (t->loader);
  nl_loader_free (t->eval_loader);
  nl_transform_free (t->augment);
  nl_lr_schedule_free (t->schedule);
  nl_metric_free (t->accuracy);
  nl_dataset_free (t->train_set);
  nl_dataset_free (t->test_set);
  nl_run_config_clear (&t->cfg);
  g_clear_pointer (&t->test_stops, g_array_unref);
  nl_layer_stats_free (t->lstats);
  g_free (t);
}

static NlTrainer *
trainer_build (const NlNetwork *net, const NlRunConfig *cfg, NlComm *comm, GError **error)
{
  g_autoptr (NlTrainer) t = g_new0 (NlTrainer, 1);
  NlCompileOptions train_opts = { .batch = cfg->batch_size, .training = TRUE, .loss = cfg->loss,
                                  .device = cfg->device, .precision = cfg->precision,
                                  .autotune = cfg->cudnn_autotune, .deterministic = cfg->deterministic,
                                  .device_graphs = cfg->cuda_graphs };
  NlCompileOptions eval_opts = { .batch = cfg->eval_batch_size, .training = FALSE, .loss = NULL,
                                 .device = cfg->device, .precision = cfg->precision,
                                 .autotune = cfg->cudnn_autotune, .deterministic = cfg->deterministic };

  if (cfg->epochs < 1 || cfg->batch_size < 1 || cfg->eval_batch_size < 1)
    {
      g_set_error (error, NL_TRAIN_ERROR, NL_TRAIN_ERROR_CONFIG, "epochs and batch size must be at least 1");
      return NULL;
    }
  t->comm = comm;
  t->test_stops = nl_test_stops_parse ();
  nl_run_config_copy (&t->cfg, cfg);
  nl_loss_scale_init (&t->scaler, cfg->precision, cfg->loss_scale);
  train_opts.loss_scale = t->scaler.scale;
  nl_threads_set (cfg->threads);
  t->train_set = nl_dataset_open_full (cfg->dataset, TRUE, &cfg->data, error);
  if (!t->train_set || !nl_vocab_fit_network (net, t->train_set->vocab, error))
    return NULL;
  /* text kinds: the test side encodes with the training side's vocabulary */
  NlDatasetOptions test_opts = cfg->data;
  if (!test_opts.vocab)
    test_opts.vocab = t->train_set->vocab;
  if (cfg->val_dataset)
    {
      /* a split by file: every sample of the other dataset */
      test_opts.val_fraction = 0;
      t->test_set = nl_dataset_open_full (cfg->val_dataset, FALSE, &test_opts, error);
    }
  else
    t->test_set = nl_dataset_open_full (cfg->dataset, FALSE, &test_opts, error);
  if (!t->test_set)
    return NULL;
  /* per-step labels (a language model's next tokens, a series' horizon) */
  train_opts.label_shape = eval_opts.label_shape = t->train_set->label_shape;
  if (!nl_shape_equal (&t->train_set->label_shape, &t->test_set->label_shape))
    {
      char a[96], b[96];
      g_set_error (error, NL_TRAIN_ERROR, NL_TRAIN_ERROR_CONFIG, "the training samples' labels are %s but the "
                   "evaluation samples' are %s", nl_shape_format (&t->train_set->label_shape, a, sizeof a),
                   nl_shape_format (&t->test_set->label_shape, b, sizeof b));
      return NULL;
    }
  if (cfg->augment && *cfg->augment)
    {
      t->augment = nl_transform_parse (cfg->augment, error);
      if (!t->augment)
        return NULL;
    }
  {
    /* under data parallelism each process takes its share of every
     * batch of the one seeded order (and of the test set) */
    int shard = comm ? comm->rank : 0, shards = comm ? comm->size : 0;
    NlLoaderConfig lc = { .batch_size = cfg->batch_size, .shuffle = TRUE, .seed = cfg->seed,
                          .last_batch = NL_LAST_BATCH_KEEP, .num_workers = cfg->workers,
                          .transform = t->augment, .mean = cfg->mean, .std = cfg->std,
                          .shard_index = shard, .shard_count = shards, .shard_drop_short = TRUE };
    NlLoaderConfig ec = { .batch_size = cfg->eval_batch_size, .shuffle = FALSE, .last_batch = NL_LAST_BATCH_KEEP,
                          .num_workers = cfg->workers, .mean = cfg->mean, .std = cfg->std,
                          .shard_index = shard, .shard_count = shards };
    NlShape ts, es;
    char a[96], b[96];
    t->input.loader = t->loader = nl_loader_new (t->train_set, &lc, error);
    if (!t->loader)
      return NULL;
    t->eval_loader = nl_loader_new (t->test_set, &ec, error);
    if (!t->eval_loader)
      return NULL;
    train_opts.batch = nl_loader_batch_size (t->loader);
    t->eval_batch = eval_opts.batch = nl_loader_batch_size (t->eval_loader);
    ts = nl_loader_sample_shape (t->loader);
    es = nl_loader_sample_shape (t->eval_loader);
    if (!nl_shape_equal (&ts, &es))
      {
        g_set_error (error, NL_TRAIN_ERROR, NL_TRAIN_ERROR_CONFIG,
                     "the augmentation makes training samples %s but evaluation samples are %s: "
                     "resize the data itself instead", nl_shape_format (&ts, a, sizeof a),
                     nl_shape_format (&es, b, sizeof b));
        return NULL;
      }
    NlModelOptions mo = {
      .seed = cfg->seed,
      .scheduler_workers = cfg->scheduler_workers,
      .device = cfg->device,
      .optim = &cfg->optim,
    };
    t->model = nl_model_new_full (net, &ts, &mo, error);
  }
  if (!t->model)
    return NULL;
  t->train_prog = nl_program_new (t->model, &train_opts, error);
  if (!t->train_prog || !nl_program_set_comm (t->train_prog, comm, error))
    return NULL;
  t->eval_prog = nl_program_new (t->model, &eval_opts, error);
  if (!t->eval_prog)
    return NULL;
  t->schedule = nl_lr_schedule_new (cfg->lr_schedule ? cfg->lr_schedule : "constant", cfg->optim.lr,
                                    (int64_t) cfg->epochs * nl_loader_n_batches (t->loader), error);
  if (!t->schedule)
    return NULL;
  t->accuracy = nl_metric_new ("accuracy", error);
  if (!t->accuracy)
    return NULL;
  if (cfg->layer_stats_every > 0 && (!comm || comm->rank == 0))
    t->lstats = nl_layer_stats_new (t->model);
  return g_steal_pointer (&t);
}

NlTrainer *
nl_trainer_new (const NlNetwork *net, const NlRunConfig *cfg, GError **error)
{
  NlComm *comm = nl_comm_world ();
  g_auto (NlRunConfig) local = { 0 };
  NlNetwork *same = (NlNetwork *) net;
  NlTrainer *t;

  if (!comm)
    return trainer_build (net, cfg, NULL, error);
  /* rank 0 of a data-parallel job: the others get this job (one of
   * maybe several in this command) */
  nl_run_config_copy (&local, cfg);
  if (!nl_dp_announce_job (comm, error) || !nl_dp_share_job (comm, NULL, NULL, &same, &local, error))
    return NULL;
  nl_dp_local_settings (comm, &local);
  t = trainer_build (net, &local, comm, error);
  if (!t)
    share_go (comm, FALSE, NULL);
  return t;
}

NlTrainer *
nl_trainer_new_follower (const NlNetwork *given_net, const NlRunConfig *given_cfg, GError **error)
{
  NlComm *comm = nl_comm_world ();
  g_auto (NlRunConfig) cfg = { 0 };
  g_autoptr (NlNetwork) net = NULL;

  g_return_val_if_fail (comm != NULL && comm->rank > 0, NULL);
  if (!nl_dp_share_job (comm, given_net, given_cfg, &net, &cfg, error))
    return NULL;
  /* the per-process settings are this process's own */
  if (given_cfg)
    {
      cfg.threads = given_cfg->threads;
      cfg.workers = given_cfg->workers;
      cfg.scheduler_workers = given_cfg->scheduler_workers;
    }
  nl_dp_local_settings (comm, &cfg);
  return trainer_build (net, &cfg, comm, error);
}

NlModel *
nl_trainer_get_model (NlTrainer *t)
{
  return t->model;
}

void
nl_trainer_get_position (NlTrainer *t, int *epochs_done, int64_t *updates)
{
  *epochs_done = t->next_epoch;
  *updates = t->updates;
}

void
nl_trainer_set_position (NlTrainer *t, int epochs_done, int64_t updates)
{
  t->next_epoch = epochs_done;
  t->updates = updates;
}

void
nl_trainer_get_train_position (NlTrainer *t, NlTrainPosition *pos)
{
  pos->epoch = t->next_epoch;
  pos->updates = t->updates;
  pos->loss_scale = t->scaler.dynamic ? t->scaler.scale : 0;
  pos->skipped = (gint64) t->scaler.skipped;
  pos->good_steps = t->scaler.dynamic ? t->scaler.good_steps : 0;
  pos->bad_steps = t->scaler.dynamic ? t->scaler.bad_steps : 0;
  pos->batch = t->ep.inside ? t->ep.batch : 0;
  pos->epoch_loss = pos->batch ? t->ep.loss : 0;
  pos->epoch_seen = pos->batch ? t->ep.seen : 0;
  pos->epoch_correct = pos->batch ? t->ep.correct : 0;
  pos->epoch_counted = pos->batch ? t->ep.counted : 0;
  pos->epoch_seconds = pos->batch ? t->ep.seconds + (g_get_monotonic_time () - t->ep.start_us) / 1e6 : 0;
}

void
nl_trainer_set_train_position (NlTrainer *t, const NlTrainPosition *pos)
{
  nl_trainer_set_position (t, pos->epoch, pos->updates);
  nl_trainer_set_loss_scale (t, (float) pos->loss_scale, (guint64) pos->skipped);
  if (t->scaler.dynamic && pos->loss_scale > 0)
    {
      t->scaler.good_steps = pos->good_steps;
      t->scaler.bad_steps = pos->bad_steps;
    }
  memset (&t->ep, 0, sizeof t->ep);
  t->ep.batch = pos->batch;
  if (pos->batch > 0)
    {
      t->ep.loss = pos->epoch_loss;
      t->ep.seen = pos->epoch_seen;
      t->ep.seconds = pos->epoch_seconds;
      t->ep.correct = pos->epoch_correct;
      t->ep.counted = pos->epoch_counted;
    }
}

const NlRunConfig *
nl_trainer_get_config (NlTrainer *t)
{
  return &t->cfg;
}

void
nl_trainer_get_loss_scale (NlTrainer *t, float *scale, guint64 *skipped)
{
  *scale = t->scaler.scale;
  *skipped = t->scaler.skipped;
}

void
nl_trainer_set_loss_scale (NlTrainer *t, float scale, guint64 skipped)
{
  if (!t->scaler.dynamic || !(scale > 0))
    return;
  t->scaler.scale = scale;
  t->scaler.skipped = skipped;
  t->scaler.good_steps = t->scaler.bad_steps = 0;
}

const NlDataset *
nl_trainer_get_train_set (NlTrainer *t)
{
  return t->train_set;
}

/* The program for a batch of n: the full one, or one built for the smaller
 * last batch (same model, so the same weights). */
static NlProgram *
program_for (NlTrainer *t, NlProgram *full, NlProgram **tail, int n, gboolean training, GError **error)
{
  NlCompileOptions opts = { .batch = n, .training = training, .loss = training ? t->cfg.loss : NULL,
                            .device = t->cfg.device, .precision = t->cfg.precision,
                            .loss_scale = training ? t->scaler.scale : 0,
                            .label_shape = t->train_set->label_shape };
  if (nl_tensor_get_shape (nl_program_input (full)).d[0] == n)
    return full;
  if (*tail && nl_tensor_get_shape (nl_program_input (*tail)).d[0] == n)
    return *tail;
  g_clear_pointer (tail, nl_program_free);
  *tail = nl_program_new (t->model, &opts, error);
  if (*tail && training && !nl_program_set_comm (*tail, t->comm, error))
    g_clear_pointer (tail, nl_program_free);
  return *tail;
}

static void
copy_rows (NlTensor *dst, const NlTensor *src, int n)
{
  int64_t row = nl_tensor_numel (src) / src->shape[0];
  memcpy (nl_tensor_f32 (dst), nl_tensor_f32 (src), sizeof (float) * row * n);
}

static double
sum_loss (const NlTensor *loss)
{
  const float *l = nl_tensor_f32 (loss);
  double s = 0;
  for (int64_t i = 0; i < nl_tensor_numel (loss); i++)
    s += l[i];
  return s;
}

/* The optimizer step, unless dynamic loss scaling finds the scaled
 * gradients overflowed: then the step is skipped and the scale lowered,
 * as PyTorch's GradScaler does. */
static gboolean
apply_update (NlTrainer *t, NlProgram *p, float lr, GError **error)
{
  if (t->scaler.dynamic)
    {
      gboolean finite = TRUE;
      if (!nl_program_grads_finite (p, &finite, error))
        return FALSE;
      if (!nl_loss_scale_update (&t->scaler, finite))
        return TRUE;
    }
  /* a skipped step is no optimizer step (Adam's bias correction counts
   * only applied ones), as with PyTorch's GradScaler */
  return nl_program_update (p, &t->cfg.optim, lr, t->updates - (int64_t) t->scaler.skipped, error);
}

/* Data parallelism, after each step: the batch's loss summed over every
 * process (every rank then judges a NaN alike and reports the whole
 * batch), and whether any process was asked to stop. */
static gboolean
agree_on_step (NlTrainer *t, double *loss, gboolean *stop, gboolean *checkpoint, GError **error)
{
  double v[3] = { *loss, t->stop_asked ? 1 : 0, *checkpoint && (!t->comm || t->comm->rank == 0) ? 1 : 0 };
  if (!t->comm)
    {
      *stop = t->stop_asked;
      return TRUE;
    }
  if (!nl_comm_allreduce_f64 (t->comm, v, 3, error))
    return FALSE;
  *loss = v[0];
  *stop = v[1] > 0;
  *checkpoint = v[2] > 0;
  return TRUE;
}

/* The epoch's training time so far, its part before a resume included. */
static double
epoch_seconds (NlTrainer *t)
{
  return t->ep.seconds + (g_get_monotonic_time () - t->ep.start_us) / 1e6;
}

/* Whether the interval hook is due (rank 0's clock; the others learn it
 * in agree_on_step). */
static gboolean
interval_due (NlTrainer *t, const NlTrainCallbacks *cb)
{
  return cb && cb->interval_done && cb->interval_seconds > 0 && (!t->comm || t->comm->rank == 0)
         && g_get_monotonic_time () - t->last_checkpoint_us >= (gint64) (cb->interval_seconds * G_USEC_PER_SEC);
}

/* The interval hook after a step: the epoch's accuracy sums over every
 * process for rank 0's checkpoint (each keeps its own for the epoch's end). */
static gboolean
interval_checkpoint (NlTrainer *t, const NlTrainCallbacks *cb, GError **error)
{
  gint64 t0 = g_get_monotonic_time ();
  double sums[2];
  int64_t count;
  gboolean ok = TRUE;
  nl_metric_get_totals (t->accuracy, &sums[0], &count);
  sums[1] = (double) count;
  if (t->comm && !nl_comm_allreduce_f64 (t->comm, sums, 2, error))
    return FALSE;
  t->ep.correct = sums[0];
  t->ep.counted = (int64_t) sums[1];
  if ((!t->comm || t->comm->rank == 0) && cb->interval_done)
    ok = nl_model_sync (t->model, error) && cb->interval_done (cb->user, t, error);
  /* the epoch's time is training time: not the checkpoint's */
  t->last_checkpoint_us = g_get_monotonic_time ();
  t->ep.start_us += t->last_checkpoint_us - t0;
  return ok;
}

static gboolean
layer_stats_report (NlTrainer *t, const NlTrainCallbacks *cb, int epoch, GError **error)
{
  const NlLayerStatsReport *r;
  NlLayerStatsReport copy;
  if (!nl_layer_stats_after_update (t->lstats, t->updates, &r, error))
    return FALSE;
  copy = *r;
  copy.epoch = epoch + 1;
  if (cb && cb->layer_stats)
    cb->layer_stats (cb->user, &copy);
  return TRUE;
}

/* A step with a non-finite loss or gradient, replayed to name the node that made it
 * (under data parallelism maybe another process's shard: then not). */
static gboolean
diverged (NlTrainer *t, NlProgram *p, const NlTrainCallbacks *cb, double loss, int epoch, int64_t batch,
          int64_t n_batches, float lr, GError **error)
{
  NlNonfinite nf;
  if (!nl_layer_stats_find_nonfinite (p, t->model, (guint64) t->updates, &nf, error))
    return FALSE;
  if (nf.node)
    {
      if (cb && cb->nonfinite)
        cb->nonfinite (cb->user, &nf, t->updates);
      g_set_error (error, NL_TRAIN_ERROR, NL_TRAIN_ERROR_DIVERGED, "node '%s' made the first %s in %s at step %"
                   G_GINT64_FORMAT, nf.node, nf.is_nan ? "NaN" : "Inf",
                   nf.where == NL_NONFINITE_FORWARD ? "forward" : "backward", t->updates);
    }
  else
    g_set_error (error, NL_TRAIN_ERROR, NL_TRAIN_ERROR_DIVERGED,
                 "the %s at epoch %d, batch %" G_GINT64_FORMAT " of %" G_GINT64_FORMAT
                 " (learning rate %g): training stopped; try a lower learning rate",
                 isfinite (loss) ? "gradients stopped being finite" : isnan (loss) ? "loss became NaN"
                 : "loss became infinite", epoch + 1, batch + 1, n_batches, lr);
  return FALSE;
}

static gboolean
train_epoch (NlTrainer *t, int epoch, const NlTrainCallbacks *cb, NlEpochReport *r, GError **error)
{
  NlTensor *data = nl_program_input (t->train_prog), *labels = nl_program_label (t->train_prog);
  int64_t n_batches = nl_loader_n_batches (t->loader), batch, seen;
  double total_loss;
  float lr = t->cfg.optim.lr;
  int n;
  NlShape ds = nl_tensor_get_shape (data), ls = nl_tensor_get_shape (labels);

  double busy0, exposed0;
  nl_trainer_comm_seconds (t, &busy0, &exposed0);
  nl_metric_reset (t->accuracy);
  /* a run resumed inside this epoch goes on from its checkpoint's batch
   * with the sums so far (rank 0 holds every process's accuracy sums) */
  batch = t->ep.batch;
  total_loss = t->ep.loss;
  seen = t->ep.seen;
  if (batch > 0)
    {
      nl_metric_set_totals (t->accuracy, t->ep.correct, t->ep.counted);
      lr = nl_lr_schedule_get (t->schedule, MAX (t->updates - 1, 0));
    }
  t->ep.inside = TRUE;
  nl_loader_start_epoch_at (t->loader, epoch, batch);
  if (t->cfg.preload && !nl_train_input_preload (&t->input, &ds, &ls, error))
    return FALSE;
  t->ep.start_us = g_get_monotonic_time ();
  nl_test_stop_maybe (t->test_stops, t->updates, cb ? cb->quiet : NULL, cb ? cb->user : NULL);
  while ((n = nl_train_input_next (&t->input, data, labels, error)) > 0)
    {
      gint64 step_t0 = g_get_monotonic_time ();
      gboolean checkpoint;
      NlProgram *p = program_for (t, t->train_prog, &t->tail_prog, n, TRUE, error);
      /* the samples of this batch over every process */
      int global = t->comm ? nl_loader_global_count (t->loader, batch) : n;
      double loss;
      gboolean stop, finite = TRUE, stats;
      if (!p)
        return FALSE;
      if (p != t->train_prog)
        {
          copy_rows (nl_program_input (p), data, n);
          copy_rows (nl_program_label (p), labels, n);
        }
      lr = nl_lr_schedule_get (t->schedule, t->updates);
      t->updates++;
      stats = t->lstats && cb && cb->layer_stats && t->updates % t->cfg.layer_stats_every == 0;
      if (stats)
        nl_layer_stats_begin (t->lstats, p);
      if (t->comm && !nl_program_set_grad_batch (p, global, error))
        return FALSE;
      if (t->scaler.dynamic && !nl_program_set_loss_scale (p, t->scaler.scale, error))
        return FALSE;
      nl_program_set_trace (p, t->trace);
      if (!nl_program_forward (p, (guint64) t->updates, error) || !nl_program_backward (p, error))
        return FALSE;
      loss = sum_loss (nl_program_loss (p));
      checkpoint = interval_due (t, cb);
      if (!agree_on_step (t, &loss, &stop, &checkpoint, error))
        return FALSE;
      /* dynamic loss scaling skips overflowed steps itself */
      if (isfinite (loss) && !t->scaler.dynamic && !nl_program_grads_finite (p, &finite, error))
        return FALSE;
      if (!isfinite (loss) || !finite)
        return diverged (t, p, cb, loss, epoch, batch, n_batches, lr, error);
      if (stop)
        {
          /* every process stops at the same step, before its update */
          g_set_error (error, NL_TRAIN_ERROR, NL_TRAIN_ERROR_CANCELLED, "training was stopped");
          return FALSE;
        }
      if (stats && !nl_layer_stats_before_update (t->lstats, p, t->scaler.scale, error))
        return FALSE;
      if (!apply_update (t, p, lr, error))
        return FALSE;
      if (stats && !layer_stats_report (t, cb, epoch, error))
        return FALSE;
      if (t->trace)
        nl_trace_add (t->trace, NL_TRACE_CAT_STEP, "step", "step", t->updates, step_t0, g_get_monotonic_time ());
      nl_metric_update (t->accuracy, nl_program_label (p), nl_program_pred (p));
      total_loss += loss;
      seen += global;
      batch++;
      t->ep.batch = batch;
      t->ep.loss = total_loss;
      t->ep.seen = seen;
      if (cb && cb->batch
          && !cb->batch (cb->user, epoch + 1, batch, n_batches, loss / global, epoch_seconds (t)))
        {
          t->stop_asked = TRUE;
          /* in a group: every process stops at the next step or epoch's end */
          if (!t->comm)
            {
              g_set_error (error, NL_TRAIN_ERROR, NL_TRAIN_ERROR_CANCELLED, "training was stopped");
              return FALSE;
            }
        }
      if (checkpoint && !interval_checkpoint (t, cb, error))
        return FALSE;
      nl_test_stop_maybe (t->test_stops, t->updates, cb ? cb->quiet : NULL, cb ? cb->user : NULL);
    }
  nl_train_input_clear (&t->input);
  if (n < 0)
    return FALSE;
  if (!nl_metric_reduce (t->accuracy, t->comm, error))
    return FALSE;
  r->epoch = epoch + 1;
  r->seconds = epoch_seconds (t);
  memset (&t->ep, 0, sizeof t->ep);
  r->images_per_s = seen / MAX (r->seconds, 1e-9);
  r->train_loss = total_loss / MAX (seen, 1);
  r->train_acc = nl_metric_get (t->accuracy);
  r->lr = lr;
  nl_trainer_comm_seconds (t, &r->comm_seconds, &r->comm_exposed_seconds);
  r->comm_seconds -= busy0;
  r->comm_exposed_seconds -= exposed0;
  return TRUE;
}

gboolean
nl_trainer_evaluate (NlTrainer *t, double *accuracy, GError **error)
{
  g_autoptr (NlTensor) labels = NULL;
  NlTensor *data = nl_program_input (t->eval_prog);
  NlShape ls = nl_shape_batched (t->eval_batch, &t->test_set->label_shape);
  int n;

  labels = nl_tensor_zeros (NL_DTYPE_F32, &ls);
  nl_metric_reset (t->accuracy);
  nl_loader_start_epoch (t->eval_loader, 0);
  while ((n = nl_loader_next (t->eval_loader, data, labels, error)) > 0)
    {
      NlProgram *p = program_for (t, t->eval_prog, &t->eval_tail, n, FALSE, error);
      g_autoptr (NlTensor) lab = NULL;
      NlShape s = nl_shape_batched (n, &t->test_set->label_shape);
      if (!p)
        return FALSE;
      if (p != t->eval_prog)
        copy_rows (nl_program_input (p), data, n);
      if (!nl_program_forward (p, 0, error))
        return FALSE;
      if (n == t->eval_batch)
        lab = nl_tensor_ref (labels);
      else
        {
          lab = nl_tensor_new_shape (NL_DTYPE_F32, &s);
          copy_rows (lab, labels, n);
        }
      nl_metric_update (t->accuracy, lab, nl_program_pred (p));
    }
  if (n < 0 || !nl_metric_reduce (t->accuracy, t->comm, error))
    return FALSE;
  *accuracy = nl_metric_get (t->accuracy);
  return TRUE;
}

/* Data parallelism, before the first step: rank 0's model, position and
 * loss scale (a resumed run's, maybe inside an epoch) to every process. */
static gboolean
share_start (NlTrainer *t, GError **error)
{
  double pos[9] = { t->next_epoch, (double) t->updates, t->scaler.scale, (double) t->scaler.skipped,
                    t->scaler.good_steps, t->scaler.bad_steps, (double) t->ep.batch, t->ep.loss,
                    (double) t->ep.seen };
  if (!t->comm)
    return TRUE;
  if (t->comm->rank == 0)
    t->started = TRUE;
  if (!share_go (t->comm, TRUE, error))
    return FALSE;
  if (!nl_dp_broadcast_model (t->comm, t->model, error) || !nl_comm_broadcast (t->comm, pos, sizeof pos, 0, error))
    return FALSE;
  t->next_epoch = (int) pos[0];
  t->updates = (int64_t) pos[1];
  if (t->comm->rank > 0)
    {
      nl_trainer_set_loss_scale (t, (float) pos[2], (guint64) pos[3]);
      if (t->scaler.dynamic)
        {
          t->scaler.good_steps = (int) pos[4];
          t->scaler.bad_steps = (int) pos[5];
        }
      /* inside an epoch: the same batch and global sums; the accuracy
       * sums so far are rank 0's alone (the epoch's reduce adds ours) */
      t->ep.batch = (int64_t) pos[6];
      t->ep.loss = pos[7];
      t->ep.seen = (int64_t) pos[8];
    }
  return TRUE;
}

/* Data parallelism, after each epoch: rank 0's verdict (it alone ran
 * the hook: checkpoint written, early stopping) and any process's wish
 * to stop, to every process. */
static gboolean
agree_on_epoch (NlTrainer *t, gboolean ok, GError **error)
{
  double verdict[2] = { ok ? 0 : 1, t->stop_asked ? 1 : 0 };
  if (!t->comm)
    return ok;
  if (!nl_comm_allreduce_max_f64 (t->comm, verdict, 2, error))
    return FALSE;
  if (!ok)
    return FALSE;
  if (verdict[0] > 0 || verdict[1] > 0)
    {
      g_set_error (error, NL_TRAIN_ERROR, NL_TRAIN_ERROR_CANCELLED,
                   verdict[0] > 0 ? "rank 0 ended the run" : "training was stopped");
      return FALSE;
    }
  return TRUE;
}

gboolean
nl_trainer_run (NlTrainer *t, const NlTrainCallbacks *cb, GError **error)
{
  if (!share_start (t, error))
    return FALSE;
  t->last_checkpoint_us = g_get_monotonic_time ();
  for (; t->next_epoch < t->cfg.epochs; t->next_epoch++)
    {
      NlEpochReport r = { 0 };
      if (!train_epoch (t, t->next_epoch, cb, &r, error))
        return FALSE;
      if (!nl_trainer_evaluate (t, &r.test_acc, error))
        return FALSE;
      if (cb && cb->epoch)
        cb->epoch (cb->user, &r);
      if (cb && cb->epoch_done)
        {
          /* the position counts this epoch as done while the hook runs */
          gboolean ok;
          t->next_epoch++;
          ok = nl_model_sync (t->model, error) && cb->epoch_done (cb->user, t, &r, error);
          t->next_epoch--;
          t->last_checkpoint_us = g_get_monotonic_time ();
          if (!agree_on_epoch (t, ok, error))
            return FALSE;
        }
      else if (!agree_on_epoch (t, TRUE, error))
        return FALSE;
    }
  return nl_model_sync (t->model, error);
}

void
nl_trainer_comm_seconds (NlTrainer *t, double *busy, double *exposed)
{
  double b = 0, e = 0;
  *busy = *exposed = 0;
  for (int i = 0; i < 2; i++)
    {
      NlProgram *p = i == 0 ? t->train_prog : t->tail_prog;
      if (!p)
        continue;
      nl_program_comm_seconds (p, &b, &e);
      *busy += b;
      *exposed += e;
    }
}

gboolean
nl_trainer_set_trace (NlTrainer *t, NlTrace *trace, GError **error)
{
  /* no op still running may add to the trace its owner frees next */
  if (t->trace && !nl_model_sync (t->model, error))
    return FALSE;
  t->trace = t->input.trace = trace;
  nl_loader_set_trace (t->loader, trace);
  for (int i = 0; i < 2; i++)
    if (i == 0 ? t->train_prog : t->tail_prog)
      nl_program_set_trace (i == 0 ? t->train_prog : t->tail_prog, trace);
  return TRUE;
}

void
nl_trainer_input_wait (NlTrainer *t, double *seconds, int64_t *batches)
{
  *seconds = t->input.wait_us / 1e6;
  *batches = t->input.batches;
}
