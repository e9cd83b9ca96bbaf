/* nl-sweep.h — a sweep stored in a project: a queue of trials, each an
 * ordinary run (nl-run.h) started from the sweep's base settings and
 * network with the trial's values applied, pruned by ASHA when asked.
 * Everything it needs to continue lives in the project (the sweeps row,
 * each trial's run with its values and metrics), so a sweep killed at any
 * moment continues where it was: the running trial resumes from its last
 * checkpoint, and no trial number is ever run twice. */
#pragma once

#include "engine/sweep/nl-sweep-asha.h"
#include "engine/sweep/nl-sweep-strategy.h"
#include "engine/session/nl-run.h"

G_BEGIN_DECLS

typedef struct {
  int trial;                 /* from 0 */
  gint64 run;
  char *status;              /* the run's */
  char *params_json;         /* its values */
  double value;              /* the metric after its last epoch (NaN: none) */
  int epochs;                /* epochs done */
} NlSweepTrial;
void nl_sweep_trial_free (NlSweepTrial *t);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (NlSweepTrial, nl_sweep_trial_free)

typedef struct {
  /* a trial ended (finished, pruned, failed or stopped); on the thread
   * that ran it, one call at a time */
  void (*trial_done) (gpointer user, const NlSweepTrial *t, int n_done, int n_trials);
  /* FALSE stops the sweep: running trials stop between batches */
  gboolean (*keep_going) (gpointer user);
  gpointer user;
} NlSweepCallbacks;

/* Checks a sweep before anything is stored: the space against the base
 * settings and NET, the strategy, the metric and the pruning. For a
 * strategy of fixed size (a grid), *trials (0: all) becomes at most its
 * size. */
gboolean nl_sweep_check (const char *space, const char *strategy, const char *metric, const char *prune,
                         const NlNetwork *net, int *trials, GError **error);
/* Checks, then stores the sweep (status running). Returns its id. */
gint64 nl_sweep_create (NlProject *p, const char *name, const NlNetwork *net, const NlRunConfig *base,
                        const char *space, const char *strategy, int trials, const char *metric,
                        gboolean maximize, const char *prune, int parallel, GError **error);
/* Runs (or continues) SWEEP until it has its number of trials, each
 * finished, pruned or failed; PARALLEL trials at once (0: the sweep's
 * own), the threads divided among them. FALSE when stopped or on an error
 * of the project (a trial that fails is recorded and the sweep goes on).
 * The sweep's status ends finished or stopped. */
gboolean nl_sweep_run (NlProject *p, gint64 sweep, int parallel, const NlSweepCallbacks *cb, GError **error);
/* NlSweepTrial* of SWEEP, by trial number. */
GPtrArray *nl_sweep_list_trials (NlProject *p, gint64 sweep, GError **error);
/* The best trial with a value (NULL: none). */
const NlSweepTrial *nl_sweep_best_trial (GPtrArray *trials, gboolean maximize);

G_END_DECLS
