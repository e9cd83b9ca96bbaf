/* nl-sweep-asha.h — asynchronous successive halving (ASHA, Li et al.
 * 2018) as a stopping rule, the way Optuna's SuccessiveHalvingPruner
 * applies it: rung k is reached after min_epochs * eta^k epochs (rungs
 * stop before the last epoch); a trial that reaches a rung continues only
 * when its metric there is among the best 1/eta of every value reported
 * at that rung so far, its own included (while fewer than eta values are
 * there: only when it is the best). Decisions never wait for other
 * trials, so trials run one after another or in parallel alike. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct NlAsha NlAsha;

/* "asha", "asha:eta=3,min_epochs=1" (either key optional): FALSE with a
 * message naming the bad part. */
gboolean nl_asha_parse (const char *spec, int *eta, int *min_epochs, GError **error);
NlAsha *nl_asha_new (int eta, int min_epochs, int max_epochs, gboolean maximize);
void nl_asha_free (NlAsha *a);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (NlAsha, nl_asha_free)

/* The rung EPOCH completes (0-based), or -1 when it is none. */
int nl_asha_rung (const NlAsha *a, int epoch);
/* A value reported at RUNG earlier (a sweep continued after a crash
 * rebuilds its rungs from the trials' stored metrics). */
void nl_asha_record (NlAsha *a, int rung, double value);
/* Whether VALUE, already recorded at RUNG, lets its trial continue. */
gboolean nl_asha_promotable (const NlAsha *a, int rung, double value);
/* Records a trial's VALUE after EPOCH; TRUE when it is to be pruned (its
 * epoch is a rung and it is not promotable). NaN is always pruned. */
gboolean nl_asha_report (NlAsha *a, int epoch, double value);

G_END_DECLS
