/* cli-group.c — train, resume and fork under mpirun: the processes other
 * than rank 0 follow rank 0's job, and a failure only one process knows
 * of ends the whole job with one message. */
#include <stdio.h>

#include "cli-common.h"
#include "core/nl-comm.h"
#include "engine/train/nl-data-parallel.h"

/* Failures every process meets at the same point (the ranks agree on
 * them), as opposed to one process's own (a bad sample, a full disk). */
static gboolean
agreed (const GError *error)
{
  /* a run taken over by another process: rank 0 stopped every process
   * at the same step (nl-run.c) */
  return g_error_matches (error, NL_TRAIN_ERROR, NL_TRAIN_ERROR_CANCELLED)
         || g_error_matches (error, NL_PROJECT_ERROR, NL_PROJECT_ERROR_TAKEN)
         || g_error_matches (error, NL_TRAIN_ERROR, NL_TRAIN_ERROR_DIVERGED)
         || g_error_matches (error, NL_COMM_ERROR, NL_COMM_ERROR_MISMATCH);
}

int
nl_cli_group_fail (const GError *error)
{
  NlComm *comm = nl_comm_world ();
  if (!comm)
    return nl_cli_fail (error);
  if (agreed (error))
    {
      /* rank 0 says it once for the job; a stop is no failure */
      if (comm->rank == 0)
        nl_cli_fail (error);
      return g_error_matches (error, NL_TRAIN_ERROR, NL_TRAIN_ERROR_CANCELLED) && comm->rank > 0 ? 0 : 1;
    }
  /* the others wait in a collective for this process: end them all */
  fprintf (stderr, "netloom-cli: rank %d of %d on %s: %s\n", comm->rank, comm->size, g_get_host_name (),
           error ? error->message : "failed");
  nl_comm_abort (comm, 1);
  return 1;
}

static gboolean
quiet_batch (gpointer user, int epoch, int64_t batch, int64_t n_batches, double loss, double elapsed)
{
  (void) user, (void) epoch, (void) batch, (void) n_batches, (void) loss, (void) elapsed;
  return !nl_cli_interrupted ();
}

int
nl_cli_follow (const NlNetwork *given_net, const NlRunConfig *given_cfg)
{
  NlTrainCallbacks cb = { quiet_batch, NULL, NULL, NULL };
  int status = 0;

  nl_cli_catch_interrupt ();
  /* rank 0 may train several jobs (a sweep's trials), each announced */
  for (;;)
    {
      g_autoptr (GError) error = NULL;
      g_autoptr (NlTrainer) t = NULL;
      gboolean more;

      if (!nl_dp_next_job (nl_comm_world (), &more, &error))
        return nl_cli_group_fail (error);
      if (!more)
        return status;
      t = nl_trainer_new_follower (given_net, given_cfg, &error);
      /* a failure every rank met (a stop, a pruned trial, divergence)
       * ends this job only: rank 0 says whether another follows; this
       * process's own ends them all (nl_cli_group_fail aborts) */
      if (!t || !nl_trainer_run (t, &cb, &error))
        status = nl_cli_group_fail (error);
      else
        status = 0;
    }
}
