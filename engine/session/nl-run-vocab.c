/* nl-run-vocab.c — a text run's vocabulary to and from its project. */
#include "engine/session/nl-run-vocab.h"

NlVocab *
nl_run_vocab_load (NlProject *p, gint64 run, GError **error)
{
  g_autoptr (GError) local = NULL;
  g_autofree char *json = nl_project_get_run_vocab (p, run, error);
  if (!json)
    return NULL;
  NlVocab *v = nl_vocab_from_json (json, -1, &local);
  if (!v)
    g_propagate_prefixed_error (error, g_steal_pointer (&local), "run %" G_GINT64_FORMAT "'s vocabulary: ", run);
  return v;
}

gboolean
nl_run_vocab_store (NlProject *p, gint64 run, NlTrainer *t, GError **error)
{
  const NlDataset *ds = nl_trainer_get_train_set (t);
  if (!ds || !ds->vocab)
    return TRUE;
  g_autofree char *json = nl_vocab_to_json (ds->vocab);
  return nl_project_set_run_vocab (p, run, json, error);
}
