/* nl-data-parallel.h — what the processes of a data-parallel job agree on
 * before and while they train (the trainer's side of nl-comm.h): the same
 * job (network and settings, checked by a hash), the same starting model
 * (rank 0's, broadcast), and the per-rank settings derived locally. */
#pragma once

#include <glib.h>

#include "core/nl-comm.h"
#include "engine/graph/nl-model.h"
#include "engine/train/nl-run-config.h"

G_BEGIN_DECLS

/* The job as text (network document and settings), the same on every
 * rank that runs the same job: per-process settings (threads, which GPU)
 * are left out. */
char *nl_dp_job_text (const NlNetwork *net, const NlRunConfig *cfg);

/* Rank 0's job to every rank. On rank 0 *net and *cfg are its own; on
 * the others they are filled from rank 0's (*net new, *cfg initialised),
 * after comparing with what the rank was given itself (given_net and
 * given_cfg, may be NULL: nothing to compare). Every rank learns of any
 * difference and fails with NL_COMM_ERROR_MISMATCH naming the ranks. */
gboolean nl_dp_share_job (NlComm *comm, const NlNetwork *given_net, const NlRunConfig *given_cfg,
                          NlNetwork **net, NlRunConfig *cfg, GError **error);

/* The per-process settings under data parallelism: threads (0: the
 * cores of this host shared by its ranks) and the GPU of this local rank. */
void nl_dp_local_settings (NlComm *comm, NlRunConfig *cfg);

/* One command may train several jobs one after another (a sweep's
 * trials): before each, rank 0 tells the others that a job follows
 * (nl_dp_announce_job, called by nl_trainer_new), and when its command
 * ends, that none does (nl_dp_end_jobs: once; later calls do nothing).
 * The others wait with nl_dp_next_job: *more TRUE for a job, FALSE at
 * the end. nl_dp_jobs_ended says whether this process has passed the
 * end (sent it, or received it). */
gboolean nl_dp_announce_job (NlComm *comm, GError **error);
void nl_dp_end_jobs (NlComm *comm);
gboolean nl_dp_next_job (NlComm *comm, gboolean *more, GError **error);
gboolean nl_dp_jobs_ended (void);

/* Rank 0's weights, running statistics and optimizer state to every rank. */
gboolean nl_dp_broadcast_model (NlComm *comm, NlModel *m, GError **error);

G_END_DECLS
