/* nl-run-checkpoint.h — a run's checkpoint found by role or epoch and
 * checked before use: a damaged checkpoint (its checksum, nl-checkpoint.h)
 * is never trained on, exported or evaluated. */
#pragma once

#include "projects/nl-project.h"

G_BEGIN_DECLS

/* The id of checkpoint `which` ("best", "last" or an epoch, as
 * nl_project_find_checkpoint) of RUN once its blob checks out. When it is
 * damaged, the previous good one (the newest sound checkpoint older than
 * it):
 *   - "best" or "last" (a role, not a particular checkpoint) take it, and
 *     *warning (a new string) says so: "checkpoint 7 (epoch 5) of run 3 is
 *     damaged: checksum mismatch (...); using the previous good one,
 *     checkpoint 6 (epoch 4)". warning NULL: the line goes to stderr.
 *   - an epoch is an NL_CHECKPOINT_ERROR_DAMAGED error naming it: "...;
 *     the previous good one is epoch 4 (checkpoint 6): use --checkpoint 4".
 * No sound checkpoint before it: that error, saying so. 0 on error.
 * blob and epoch (each may be NULL) get the bytes that were checked (a new
 * reference) and their epoch, so the caller never reads the blob again;
 * they are left alone on error. */
gint64 nl_run_checkpoint_find (NlProject *p, gint64 run, const char *which, GBytes **blob, int *epoch,
                               char **warning, GError **error);

G_END_DECLS
