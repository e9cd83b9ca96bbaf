/* nl-sweep-sampler.h — where a sweep's next trial goes: every point of a
 * grid in turn, seeded random points, or TPE (Bergstra et al. 2011, the
 * univariate form of Optuna's default sampler) once enough trials have a
 * value. Each trial's randomness comes from (seed, trial number) alone, so
 * a sweep continued after a crash draws what it would have drawn. The
 * strategies that use them are in nl-sweep-strategy.h. */
#pragma once

#include "engine/sweep/nl-sweep-space.h"

G_BEGIN_DECLS

/* The trials that have a value, for TPE: points[i * dim ...] scored values[i]. */
typedef struct {
  const double *points;
  const double *values;
  int n;
  gboolean maximize;
} NlSweepHistory;

/* TPE draws at random until this many trials have a value (Optuna: 10). */
#define NL_SWEEP_TPE_STARTUP 10

/* Points of the grid (the product of each parameter's grid, the first
 * parameter varying slowest); G_MAXINT beyond that. */
int nl_sweep_grid_size (const NlSweepSpace *s);
void nl_sweep_grid_point (const NlSweepSpace *s, int index, double *point);
void nl_sweep_random_point (const NlSweepSpace *s, guint64 seed, int trial, double *point);
/* n_startup: random trials before TPE models the history (0: NL_SWEEP_TPE_STARTUP). */
void nl_sweep_tpe_point (const NlSweepSpace *s, guint64 seed, int trial, const NlSweepHistory *h, int n_startup,
                         double *point);

/* The generator of one trial's draws (salt tells uses apart). */
GRand *nl_sweep_trial_rand (guint64 seed, int trial, guint32 salt);

G_END_DECLS
