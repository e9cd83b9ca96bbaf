/* nl-sweep-strategy.c — the table of sweep strategies
 * (nl-sweep-strategy.h); the samplers are in nl-sweep-sampler.c and
 * nl-sweep-tpe.c. */
#include "engine/sweep/nl-sweep-strategy.h"

#include <glib/gi18n.h>

static void
grid_sample (const NlSweepSpace *s, guint64 seed, int trial, const NlSweepHistory *h, double *point)
{
  nl_sweep_grid_point (s, trial, point);
}

static void
random_sample (const NlSweepSpace *s, guint64 seed, int trial, const NlSweepHistory *h, double *point)
{
  nl_sweep_random_point (s, seed, trial, point);
}

static void
tpe_sample (const NlSweepSpace *s, guint64 seed, int trial, const NlSweepHistory *h, double *point)
{
  static const NlSweepHistory none = { 0 };
  nl_sweep_tpe_point (s, seed, trial, h ? h : &none, 0, point);
}

static const NlSweepStrategy strategies[] = {
  { .name = "random", .title = N_("Random"), .sample = random_sample },
  { .name = "tpe", .title = N_("TPE (learns from finished trials)"), .sample = tpe_sample, .needs_history = TRUE },
  { .name = "grid", .title = N_("Grid (every point in turn)"), .sample = grid_sample,
    .fixed_size = nl_sweep_grid_size },
};

const NlSweepStrategy *
nl_sweep_strategies (int *n)
{
  if (n)
    *n = G_N_ELEMENTS (strategies);
  return strategies;
}

const NlSweepStrategy *
nl_sweep_strategy_lookup (const char *name, GError **error)
{
  g_autofree char *names = NULL;

  for (gsize i = 0; i < G_N_ELEMENTS (strategies); i++)
    if (!g_strcmp0 (name, strategies[i].name))
      return &strategies[i];
  names = nl_sweep_strategy_list (FALSE, " or ");
  g_set_error (error, NL_TRAIN_ERROR, NL_TRAIN_ERROR_CONFIG, "--strategy must be %s, not '%s'", names,
               name ? name : "");
  return NULL;
}

char *
nl_sweep_strategy_list (gboolean fixed_only, const char *last_sep)
{
  GString *s = g_string_new (NULL);
  guint n = 0, total = 0;

  for (gsize i = 0; i < G_N_ELEMENTS (strategies); i++)
    total += !fixed_only || strategies[i].fixed_size;
  for (gsize i = 0; i < G_N_ELEMENTS (strategies); i++)
    if (!fixed_only || strategies[i].fixed_size)
      {
        if (n++)
          g_string_append (s, n == total ? last_sep : ", ");
        g_string_append (s, strategies[i].name);
      }
  return g_string_free (s, FALSE);
}
