/* nl-run.h — a training run stored in a project: the run row with its
 * snapshots (network, pipeline, hyper-parameters, seed), every metric point
 * through the batched writer, a checkpoint per epoch (best by test accuracy
 * kept, the last K kept), status from running to finished/failed/stopped.
 * Resume and fork rebuild the trainer from a run's snapshots and a
 * checkpoint. The CLI uses it now; the GUI's session will run it on its
 * worker thread. */
#pragma once

#include "engine/train/nl-lr-schedule.h"
#include "engine/train/nl-run-config.h"
#include "engine/train/nl-trainer.h"
#include "engine/session/nl-profiler.h"
#include "projects/nl-project.h"

G_BEGIN_DECLS

/* What a stored run calls besides recording (each may be NULL), on the
 * training thread. */
typedef struct {
  NlTrainCallbacks chain;   /* progress output; its user is passed to the three below */
  void (*created) (gpointer user, gint64 run);                      /* the run's id is known: its row was
                                                                       created (resume: the run itself) */
  void (*checkpoint) (gpointer user, int epoch, gint64 checkpoint); /* a checkpoint was stored */
  void (*log) (gpointer user, const char *line);                    /* a line for the user */
  /* After each epoch's checkpoint: TRUE ends the run with status pruned
   * (*message, if set, a new string, is its message; default "pruned at
   * epoch N"). A sweep's early stopping of hopeless trials. */
  gboolean (*prune) (gpointer user, gint64 run, const NlEpochReport *e, char **message);
  /* Where profile windows are asked for (nl-profiler.h; may be NULL). */
  NlProfiler *profiler;
} NlRunCallbacks;

/* The sweep a run is a trial of. */
typedef struct {
  gint64 sweep;
  int trial;                /* its number in the sweep, from 0 */
  const char *params_json;  /* the trial's values */
} NlRunTrial;

/* The value of metric NAME (test_accuracy, train_accuracy or train_loss) in E. */
double nl_run_metric_value (const char *name, const NlEpochReport *e);

/* Creates the run (status running) and trains it; the run ends finished,
 * failed (with the message) or stopped. Returns the run id in *run_id as
 * soon as it exists (also on failure). */
gboolean nl_run_train (NlProject *p, const char *name, const NlNetwork *net, const NlRunConfig *cfg,
                       const NlRunCallbacks *cb, gint64 *run_id, GError **error);
/* nl_run_train for a sweep's trial: the run row is created with its link
 * to the sweep (trial NULL: none), in one write. */
gboolean nl_run_train_trial (NlProject *p, const char *name, const NlNetwork *net, const NlRunConfig *cfg,
                             const NlRunTrial *trial, const NlRunCallbacks *cb, gint64 *run_id, GError **error);
/* Continues RUN from its last checkpoint up to `epochs` (0: the run's own)
 * with its stored settings and POLICY's checkpoint policy and early
 * stopping (NULL: the defaults). `epochs` at or before the epoch in
 * progress, below the epochs done, or at the epochs of a finished (or
 * pruned) run is an NL_TRAIN_ERROR_CONFIG error naming the run and the
 * numbers, with nothing written. */
gboolean nl_run_resume (NlProject *p, gint64 run, int epochs, const NlRunConfig *policy, const NlRunCallbacks *cb,
                        GError **error);
/* A new run from checkpoint `which` ("best", "last" or an id) of RUN with
 * the parent's settings changed by `apply` (may be NULL) and POLICY's
 * checkpoint policy and early stopping (NULL: the defaults); records
 * lineage. Where apply changes the data (dataset, label column,
 * regression, image size) the checkpoint's weights are fine-tuned on it:
 * a fresh optimizer, epochs counted from 0; data that does not fit the
 * network (Input, weights, fewer scores than classes) is an error naming
 * the dataset and the run, before the new run is made. */
gboolean nl_run_fork (NlProject *p, gint64 run, const char *which, const char *name,
                      void (*apply) (NlRunConfig *rc, gpointer user), gpointer user,
                      const NlRunConfig *policy, const NlRunCallbacks *cb, gint64 *new_run, GError **error);

G_END_DECLS
