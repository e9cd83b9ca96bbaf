/* nl-trainer.h — one training run: datasets, model, programs, optimizer,
 * schedule, metrics; epoch by epoch. Synchronous: the session (GUI) and the
 * CLI call it from their worker thread and receive progress callbacks. */
#pragma once

#include <glib.h>

#include "core/nl-trace.h"
#include "engine/formats/nl-checkpoint.h"
#include "engine/graph/nl-program.h"
#include "engine/train/nl-layer-stats.h"
#include "engine/train/nl-run-config.h"

G_BEGIN_DECLS

typedef struct NlTrainer NlTrainer;

typedef struct {
  int epoch;                 /* 1-based */
  double seconds;            /* training loop only */
  double images_per_s;
  double train_loss, train_acc;
  double test_acc;
  double lr;                 /* rate at the end of the epoch */
  /* data parallelism: seconds this process all-reduced gradients this
   * epoch, and those backward waited for beyond its own work */
  double comm_seconds, comm_exposed_seconds;
} NlEpochReport;

typedef struct {
  /* after every batch; return FALSE to cancel the run. acc is the batch's accuracy */
  gboolean (*batch) (gpointer user, int epoch, int64_t batch, int64_t n_batches, double loss, double elapsed);
  void (*epoch) (gpointer user, const NlEpochReport *r);
  gpointer user;
  /* after every epoch's evaluation (e.g. to store a checkpoint); FALSE stops the run with the error */
  gboolean (*epoch_done) (gpointer user, NlTrainer *t, const NlEpochReport *r, GError **error);
  /* Checkpoints by time: after the first step that ends interval_seconds
   * (> 0) or more after the run's start or the last call of either hook,
   * inside an epoch; nl_trainer_get_train_position then says where. FALSE
   * stops the run with the error. Under data parallelism rank 0's clock
   * decides for every process, and only rank 0 calls it. */
  double interval_seconds;
  gboolean (*interval_done) (gpointer user, NlTrainer *t, GError **error);
  /* Around a test stop (NETLOOM_TEST_STOP_AT_STEP=N[,M...]: the process
   * sends itself SIGSTOP once N updates are done and the step's hooks ran,
   * or at an epoch's start where that is N; 0: before the first step):
   * TRUE before, FALSE after, so that background writes are idle and the
   * stopped process holds no lock on the project. May be NULL. */
  void (*quiet) (gpointer user, gboolean quiet);
  /* Layer statistics: after the update of every step whose count is a
   * multiple of cfg->layer_stats_every (> 0); under data parallelism rank
   * 0 alone (its own shard's activations, the summed gradients). NULL: the
   * statistics are not computed at all. */
  void (*layer_stats) (gpointer user, const NlLayerStatsReport *r);
  /* A run whose loss or gradients stopped being finite: where the first
   * NaN or Inf was made, at update `step`, before the run fails with the
   * message "node 'fc1' made the first NaN in backward at step 1234". May
   * be NULL. */
  void (*nonfinite) (gpointer user, const NlNonfinite *nf, int64_t step);
} NlTrainCallbacks;

/* The trainer keeps a copy of cfg (the trainer uses its training settings,
 * not its checkpoint policy). */
NlTrainer *nl_trainer_new (const NlNetwork *net, const NlRunConfig *cfg, GError **error);
/* Under data parallelism (nl_comm_world (), MPI) nl_trainer_new is rank
 * 0's: it sends the job to the other ranks, which make theirs with
 * nl_trainer_new_follower, given what they were told to run themselves
 * (NULL: nothing to compare), and every rank then runs nl_trainer_run
 * together. Rank 0's model and position go to all at its start; each
 * process trains on its share of every batch; gradients, losses and
 * metrics are summed over all; rank 0's epoch_done hook decides for all.
 * One command may train several such jobs in turn (nl_dp_announce_job);
 * a trainer rank 0 frees without running it tells the others to give up
 * that job (they fail with NL_TRAIN_ERROR_CANCELLED). */
NlTrainer *nl_trainer_new_follower (const NlNetwork *given_net, const NlRunConfig *given_cfg, GError **error);
/* Seconds spent all-reducing gradients, and those not hidden behind backward. */
void nl_trainer_comm_seconds (NlTrainer *t, double *busy, double *exposed);
void nl_trainer_free (NlTrainer *t);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (NlTrainer, nl_trainer_free)
/* Runs the epochs from the next one to cfg->epochs. */
gboolean nl_trainer_run (NlTrainer *t, const NlTrainCallbacks *cb, GError **error);
/* Accuracy on the test split. */
gboolean nl_trainer_evaluate (NlTrainer *t, double *accuracy, GError **error);
NlModel *nl_trainer_get_model (NlTrainer *t);
/* Where the run stands: epochs completed and optimizer updates done. After
 * loading a checkpoint into the model, set them so that a resumed run goes
 * on exactly as if never stopped (data order, schedule and dropout are
 * functions of the seed, the epoch and the update count). */
void nl_trainer_get_position (NlTrainer *t, int *epochs_done, int64_t *updates);
void nl_trainer_set_position (NlTrainer *t, int epochs_done, int64_t updates);
const NlRunConfig *nl_trainer_get_config (NlTrainer *t);
/* All of where the run stands, for a checkpoint (nl-checkpoint.h): epochs
 * done, updates, the loss scale and its streaks, and inside an epoch (from
 * the interval hook) the batches done and the epoch's sums. seed, optimizer
 * and extra_json are left alone. */
void nl_trainer_get_train_position (NlTrainer *t, NlTrainPosition *pos);
/* The same back, after loading the checkpoint into the model: the run goes
 * on at the next batch exactly as if never stopped (at the same thread
 * count: sums of floats depend on their order). */
void nl_trainer_set_train_position (NlTrainer *t, const NlTrainPosition *pos);
/* fp16's dynamic loss scaling so far: the scale the next step uses and how
 * many steps were skipped because their gradients overflowed (1 and 0 for
 * fp32 and bf16). */
void nl_trainer_get_loss_scale (NlTrainer *t, float *scale, guint64 *skipped);
/* Resuming an fp16 run: the scale and skip count its checkpoint saved
 * (ignored unless the run's loss scale is dynamic, or scale <= 0). */
void nl_trainer_set_loss_scale (NlTrainer *t, float scale, guint64 skipped);
const NlDataset *nl_trainer_get_train_set (NlTrainer *t);
/* Profiling (nl-trace.h): from the next step on, every op, loader batch,
 * wait for a batch, all-reduce bucket and step goes into trace (borrowed;
 * NULL: off). Between steps, on the training thread. Replacing a trace
 * first waits for the ops in flight (their failure is the error), so the
 * old one may be freed once this returns. */
gboolean nl_trainer_set_trace (NlTrainer *t, NlTrace *trace, GError **error);
/* The training loop's wait for its batches so far: seconds and batches. */
void nl_trainer_input_wait (NlTrainer *t, double *seconds, int64_t *batches);

G_END_DECLS
