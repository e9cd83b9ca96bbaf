/* nl-run-checkpoint.c — checked checkpoints and the fallback to the
 * previous good one (see nl-run-checkpoint.h). */
#include "engine/session/nl-run-checkpoint.h"

#include <string.h>

#include "engine/formats/nl-checkpoint.h"

/* 1: sound (its bytes in *sound); 0: damaged (why in *damage); -1: not
 * readable (error). A checkpoint of a newer netloom is not damaged: that is
 * an error. */
static int
check_one (NlProject *p, gint64 ckpt, int *epoch, GBytes **sound, GError **damage, GError **error)
{
  g_autoptr (GBytes) blob = nl_project_load_checkpoint (p, ckpt, NULL, epoch, NULL, error);
  GError *local = NULL;
  if (!blob)
    return -1;
  if (nl_checkpoint_verify (blob, &local))
    {
      *sound = g_steal_pointer (&blob);
      return 1;
    }
  if (g_error_matches (local, NL_CHECKPOINT_ERROR, NL_CHECKPOINT_ERROR_VERSION))
    {
      g_propagate_error (error, local);
      return -1;
    }
  g_propagate_error (damage, local);
  return 0;
}

/* The outputs of a checkpoint that checked out: its id, epoch and bytes. */
static gint64
found (gint64 ckpt, int epoch, GBytes **blob, GBytes **blob_out, int *epoch_out)
{
  if (blob_out)
    *blob_out = g_steal_pointer (blob);
  if (epoch_out)
    *epoch_out = epoch;
  return ckpt;
}

gint64
nl_run_checkpoint_find (NlProject *p, gint64 run, const char *which, GBytes **blob_out, int *epoch_out,
                        char **warning, GError **error)
{
  g_autoptr (GError) damage = NULL;
  g_autoptr (GBytes) blob = NULL;
  g_autoptr (GArray) list = NULL;
  g_autofree char *what = NULL;
  gint64 ckpt, good = 0;
  int epoch = 0, good_epoch = 0, rc;

  g_return_val_if_fail (p != NULL && which != NULL, 0);
  ckpt = nl_project_find_checkpoint (p, run, which, error);
  if (ckpt <= 0 || (rc = check_one (p, ckpt, &epoch, &blob, &damage, error)) < 0)
    return 0;
  if (rc > 0)
    return found (ckpt, epoch, &blob, blob_out, epoch_out);

  /* the newest sound one before it (ids grow with time) */
  list = nl_project_list_checkpoints (p, run, error);
  if (!list)
    return 0;
  for (guint i = list->len; i-- > 0 && !good;)
    {
      const NlCheckpointInfo *c = &g_array_index (list, NlCheckpointInfo, i);
      if (c->id >= ckpt)
        continue;
      if ((rc = check_one (p, c->id, &good_epoch, &blob, NULL, error)) < 0)
        return 0;
      if (rc > 0)
        good = c->id;
    }
  what = g_strdup_printf ("checkpoint %" G_GINT64_FORMAT " (epoch %d) of run %" G_GINT64_FORMAT " is damaged: %s",
                          ckpt, epoch, run, damage->message);
  if (!good)
    {
      g_set_error (error, NL_CHECKPOINT_ERROR, NL_CHECKPOINT_ERROR_DAMAGED,
                   "%s; the run has no sound checkpoint before it", what);
      return 0;
    }
  if (strcmp (which, "last") != 0 && strcmp (which, "best") != 0)
    {
      g_set_error (error, NL_CHECKPOINT_ERROR, NL_CHECKPOINT_ERROR_DAMAGED,
                   "%s; the previous good one is epoch %d (checkpoint %" G_GINT64_FORMAT "): use --checkpoint %d", what,
                   good_epoch, good, good_epoch);
      return 0;
    }
  /* the user asked for a role, not this checkpoint: the previous good one
   * is the nearest to what they meant, and they are told */
  g_autofree char *line = g_strdup_printf ("%s; using the previous good one, checkpoint %" G_GINT64_FORMAT " (epoch %d)",
                                           what, good, good_epoch);
  if (warning)
    *warning = g_steal_pointer (&line);
  else
    g_printerr ("warning: %s\n", line);
  return found (good, good_epoch, &blob, blob_out, epoch_out);
}
