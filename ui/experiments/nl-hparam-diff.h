/* nl-hparam-diff.h — the hyper-parameter comparison of the Experiments
 * page: one row per setting (network, seed, device, then every key of the
 * runs' hyper-parameter JSON), one column per run. Rows whose values are
 * not all equal carry the CSS classes "nl-differs", "accent" and "heading";
 * "only differences" hides the others. */
#pragma once

#include <gtk/gtk.h>

#include "projects/nl-project.h"

G_BEGIN_DECLS

#define NL_TYPE_HPARAM_DIFF (nl_hparam_diff_get_type ())
G_DECLARE_FINAL_TYPE (NlHparamDiff, nl_hparam_diff, NL, HPARAM_DIFF, GtkWidget)

GtkWidget *nl_hparam_diff_new (void);
/* RUNS: const NlRunInfo *, one column each in this order (read during the
 * call only). NULL or empty clears the table. */
void nl_hparam_diff_set_runs (NlHparamDiff *d, GPtrArray *runs);
void nl_hparam_diff_set_only_differences (NlHparamDiff *d, gboolean only);
gboolean nl_hparam_diff_get_only_differences (NlHparamDiff *d);

/* Every row (shown or not), in order: "network", "seed", "device", then the
 * hyper-parameter keys in order of first appearance. NULL-terminated. */
char **nl_hparam_diff_dup_keys (NlHparamDiff *d);
/* The keys whose values differ between the runs, in row order. */
char **nl_hparam_diff_dup_differing (NlHparamDiff *d);
/* The value shown for KEY in column RUN_INDEX ("—" where a run lacks the
 * key); NULL for an unknown key or index. */
const char *nl_hparam_diff_get_value (NlHparamDiff *d, const char *key, guint run_index);
/* Rows on screen now (after "only differences"). */
guint nl_hparam_diff_get_n_shown (NlHparamDiff *d);

G_END_DECLS
