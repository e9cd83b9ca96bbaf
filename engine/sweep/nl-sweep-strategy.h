/* nl-sweep-strategy.h — the sweep strategies: one table that the sweep
 * (engine/session/nl-sweep.c), netloom-cli sweep's help and the Sweep
 * dialog's list all read. A new strategy is its sample function and one
 * row in nl-sweep-strategy.c; tests/test-sweep.c walks the table.
 *
 * The table is static and never changes: safe from any thread. */
#pragma once

#include "engine/sweep/nl-sweep-sampler.h"

G_BEGIN_DECLS

/* Trial `trial`'s point (one value per parameter of s) into point. Its
 * randomness comes from (seed, trial) alone; h is the trials that have a
 * value when the strategy needs history, else NULL. */
typedef void (*NlSweepSampleFunc) (const NlSweepSpace *s, guint64 seed, int trial, const NlSweepHistory *h,
                                   double *point);

typedef struct {
  const char *name;        /* stored in the project and given to --strategy: "random" */
  const char *title;       /* the Sweep dialog's list: "Random" */
  NlSweepSampleFunc sample;
  gboolean needs_history;  /* sample reads the finished trials' values */
  /* Optional: how many points the strategy has in s (a grid's); with it,
   * the number of trials is optional (all of them) and at most that. */
  int (*fixed_size) (const NlSweepSpace *s);
} NlSweepStrategy;

/* Every strategy; the first is the default (netloom-cli sweep without
 * --strategy, the dialog's first choice). *n (may be NULL) receives the
 * count. */
const NlSweepStrategy *nl_sweep_strategies (int *n);

/* The strategy called NAME; NULL with an NL_TRAIN_ERROR_CONFIG error that
 * lists every name when there is none. */
const NlSweepStrategy *nl_sweep_strategy_lookup (const char *name, GError **error);

/* The names of the strategies (only those with a fixed size: fixed_only),
 * joined by ", " and last_sep before the last: "random, tpe or grid". */
char *nl_sweep_strategy_list (gboolean fixed_only, const char *last_sep);

G_END_DECLS
