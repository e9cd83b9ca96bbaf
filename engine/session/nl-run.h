/* nl-run.h — a training run stored in a project: the run row with its
 * snapshots (network, pipeline, hyper-parameters, seed), every metric point
 * through the batched writer, a checkpoint per epoch (best by test accuracy
 * kept, the last K kept), status from running to finished/failed/stopped.
 * Resume and fork rebuild the trainer from a run's snapshots and a
 * checkpoint. The CLI uses it now; the GUI's session will run it on its
 * worker thread. */
#pragma once

#include "engine/nl-lr-schedule.h"
#include "engine/nl-trainer.h"
#include "projects/nl-project.h"

G_BEGIN_DECLS

/* A trainer configuration that owns its strings (NlTrainConfig borrows). */
typedef struct {
  NlTrainConfig cfg;
  GPtrArray *strings;
} NlRunConfig;

void nl_run_config_init (NlRunConfig *rc);
void nl_run_config_clear (NlRunConfig *rc);
/* Copies s into rc and returns the copy (for cfg fields). */
const char *nl_run_config_keep (NlRunConfig *rc, const char *s);
char *nl_run_config_to_json (const NlTrainConfig *cfg);
gboolean nl_run_config_from_json (NlRunConfig *rc, const char *json, GError **error);
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (NlRunConfig, nl_run_config_clear)

typedef struct {
  int keep_last;            /* checkpoints kept besides the best (default 3) */
  const char *monitor;      /* what "best" means: test_accuracy (default, max), train_accuracy (max)
                               or train_loss (min) */
  gboolean restore_best;    /* end with the best epoch's weights as the newest checkpoint (Keras'
                               restore_best_weights): export, fork and resume then start from them */
  NlTrainCallbacks chain;   /* called too (progress output) */
  /* Early stopping: NULL is off, else a metric named like `monitor`. The
   * run ends (status finished, message "early stopping at epoch N (best M
   * at epoch K)") once `patience` epochs in a row (0 counts as 1) did not
   * improve on the best value by more than min_delta (>= 0). It also sets
   * what "best" means when monitor is NULL. */
  const char *early_stop_metric;
  int patience;
  double min_delta;
  /* Called too, with chain.user, on the training thread; each may be NULL. */
  void (*created) (gpointer user, gint64 run);                      /* the run's id is known: its row was
                                                                       created (resume: the run itself) */
  void (*checkpoint) (gpointer user, int epoch, gint64 checkpoint); /* a checkpoint was stored */
  void (*log) (gpointer user, const char *line);                    /* a line for the user */
} NlRunOptions;

/* FALSE with an error for an unknown monitor name. */
gboolean nl_run_monitor_check (const char *monitor, GError **error);
/* FALSE with an error naming the bad field: monitor, early_stop_metric,
 * patience < 0, min_delta < 0 or not finite, keep_last < 0. */
gboolean nl_run_options_check (const NlRunOptions *opts, GError **error);

/* Creates the run (status running) and trains it; the run ends finished,
 * failed (with the message) or stopped. Returns the run id in *run_id as
 * soon as it exists (also on failure). */
gboolean nl_run_train (NlProject *p, const char *name, const NlNetwork *net, const NlTrainConfig *cfg,
                       const NlRunOptions *opts, gint64 *run_id, GError **error);
/* Continues RUN from its last checkpoint up to `epochs` (0: the run's own). */
gboolean nl_run_resume (NlProject *p, gint64 run, int epochs, const NlRunOptions *opts, GError **error);
/* A new run from checkpoint `which` ("best", "last" or an id) of RUN with
 * the parent's settings changed by `apply` (may be NULL); records lineage. */
gboolean nl_run_fork (NlProject *p, gint64 run, const char *which, const char *name,
                      void (*apply) (NlRunConfig *rc, gpointer user), gpointer user,
                      const NlRunOptions *opts, gint64 *new_run, GError **error);

G_END_DECLS
