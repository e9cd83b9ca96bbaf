/* nl-sweep-sampler.c — grid and random points. */
#include "engine/sweep/nl-sweep-sampler.h"

GRand *
nl_sweep_trial_rand (guint64 seed, int trial, guint32 salt)
{
  guint32 key[4] = { (guint32) seed, (guint32) (seed >> 32), (guint32) trial, salt };
  return g_rand_new_with_seed_array (key, G_N_ELEMENTS (key));
}

int
nl_sweep_grid_size (const NlSweepSpace *s)
{
  gint64 size = 1;
  for (int i = 0; i < nl_sweep_space_dim (s); i++)
    {
      int n;
      g_free (nl_sweep_param_grid (nl_sweep_space_param (s, i), &n));
      size = MIN (size * n, (gint64) G_MAXINT);
    }
  return (int) size;
}

void
nl_sweep_grid_point (const NlSweepSpace *s, int index, double *point)
{
  /* mixed radix, the last parameter varying fastest */
  for (int i = nl_sweep_space_dim (s) - 1; i >= 0; i--)
    {
      int n;
      g_autofree double *grid = nl_sweep_param_grid (nl_sweep_space_param (s, i), &n);
      point[i] = grid[index % n];
      index /= n;
    }
}

void
nl_sweep_random_point (const NlSweepSpace *s, guint64 seed, int trial, double *point)
{
  GRand *rand = nl_sweep_trial_rand (seed, trial, 0);
  for (int i = 0; i < nl_sweep_space_dim (s); i++)
    point[i] = nl_sweep_param_from_unit (nl_sweep_space_param (s, i), g_rand_double (rand));
  g_rand_free (rand);
}
