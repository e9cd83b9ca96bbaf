/* nl-sweep-tpe.c — the Tree-structured Parzen Estimator (Bergstra et al.
 * 2011) as Optuna's default sampler does it, one parameter at a time: the
 * trials are split into the best gamma(n) = min(ceil(n / 10), 25) and the
 * rest; each side becomes a Parzen window (a Gaussian per trial in the
 * parameter's own scale, log for log ranges, plus a wide prior); 24
 * candidates are drawn from the good side's window and the one where good
 * is likeliest relative to bad, l(x) / g(x), is taken. Choices use counts
 * smoothed by one. */
#include "engine/sweep/nl-sweep-sampler.h"

#include <math.h>
#include <string.h>

#define N_CANDIDATES 24
#define MAX_GOOD 25

typedef struct {
  double *mu, *sigma;
  int n;
  double lo, hi;
} Parzen;

static int
compare_doubles (gconstpointer a, gconstpointer b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return x < y ? -1 : x > y;
}

/* One Gaussian per observation, its width the larger gap to a neighbour
 * (the ends count as neighbours), clipped to [range / min(100, n + 1),
 * range]; and the prior, centred with the whole range as width. */
static void
parzen_init (Parzen *pz, const double *obs, int n, double lo, double hi)
{
  double range = hi - lo;
  double min_sigma = range / MIN (100.0, n + 2.0);
  int m;

  pz->mu = g_new (double, n + 1);
  pz->sigma = g_new (double, n + 1);
  memcpy (pz->mu, obs, n * sizeof *obs);
  pz->mu[n] = 0.5 * (lo + hi);
  m = n + 1;
  qsort (pz->mu, m, sizeof *pz->mu, compare_doubles);
  for (int i = 0; i < m; i++)
    {
      double left = i > 0 ? pz->mu[i - 1] : lo, right = i + 1 < m ? pz->mu[i + 1] : hi;
      pz->sigma[i] = CLAMP (MAX (pz->mu[i] - left, right - pz->mu[i]), min_sigma, range);
    }
  /* the prior keeps its full width wherever it sorted to */
  for (int i = 0; i < m; i++)
    if (pz->mu[i] == 0.5 * (lo + hi))
      {
        pz->sigma[i] = range;
        break;
      }
  pz->n = m;
  pz->lo = lo;
  pz->hi = hi;
}

static void
parzen_clear (Parzen *pz)
{
  g_free (pz->mu);
  g_free (pz->sigma);
}

static double
normal_cdf (double z)
{
  return 0.5 * erfc (-z / G_SQRT2);
}

static double
parzen_log_pdf (const Parzen *pz, double x)
{
  double sum = 0;
  for (int i = 0; i < pz->n; i++)
    {
      double s = pz->sigma[i], z = (x - pz->mu[i]) / s;
      double mass = normal_cdf ((pz->hi - pz->mu[i]) / s) - normal_cdf ((pz->lo - pz->mu[i]) / s);
      sum += exp (-0.5 * z * z) / (s * sqrt (2 * G_PI) * MAX (mass, 1e-12));
    }
  return log (MAX (sum / pz->n, 1e-300));
}

static double
gaussian (GRand *r)
{
  double u = g_rand_double (r), v = g_rand_double (r);
  return sqrt (-2 * log (1 - u)) * cos (2 * G_PI * v);
}

static double
parzen_sample (const Parzen *pz, GRand *r)
{
  int k = g_rand_int_range (r, 0, pz->n);
  for (int tries = 0; tries < 100; tries++)
    {
      double x = pz->mu[k] + pz->sigma[k] * gaussian (r);
      if (x >= pz->lo && x <= pz->hi)
        return x;
    }
  return CLAMP (pz->mu[k], pz->lo, pz->hi);
}

/* A range parameter in its modelling scale, and back. */
static double
to_model (const NlSweepParam *p, double v)
{
  return p->kind == NL_SWEEP_LOG ? log (v) : v;
}

static double
from_model (const NlSweepParam *p, double t)
{
  switch (p->kind)
    {
    case NL_SWEEP_LOG: return CLAMP (exp (t), p->lo, p->hi);
    case NL_SWEEP_INT: return CLAMP (round (t), p->lo, p->hi);
    default: return CLAMP (t, p->lo, p->hi);
    }
}

static double
sample_range (const NlSweepParam *p, const double *good, int n_good, const double *bad, int n_bad, GRand *r)
{
  /* an integer x stands for [x - 0.5, x + 0.5] */
  double lo = to_model (p, p->lo) - (p->kind == NL_SWEEP_INT ? 0.5 : 0);
  double hi = to_model (p, p->hi) + (p->kind == NL_SWEEP_INT ? 0.5 : 0);
  g_autofree double *tg = g_new (double, MAX (n_good, 1)), *tb = g_new (double, MAX (n_bad, 1));
  Parzen l, g;
  double best = NAN, best_score = -INFINITY;

  if (hi <= lo)
    return p->lo;
  for (int i = 0; i < n_good; i++)
    tg[i] = to_model (p, good[i]);
  for (int i = 0; i < n_bad; i++)
    tb[i] = to_model (p, bad[i]);
  parzen_init (&l, tg, n_good, lo, hi);
  parzen_init (&g, tb, n_bad, lo, hi);
  for (int c = 0; c < N_CANDIDATES; c++)
    {
      double x = parzen_sample (&l, r);
      double score = parzen_log_pdf (&l, x) - parzen_log_pdf (&g, x);
      if (score > best_score)
        {
          best_score = score;
          best = x;
        }
    }
  parzen_clear (&l);
  parzen_clear (&g);
  return from_model (p, best);
}

static double
sample_choice (const NlSweepParam *p, const double *good, int n_good, const double *bad, int n_bad, GRand *r)
{
  g_autofree double *pl = g_new0 (double, p->n_choices), *pg = g_new0 (double, p->n_choices);
  double best = 0, best_score = -INFINITY;

  for (int i = 0; i < n_good; i++)
    pl[CLAMP ((int) good[i], 0, p->n_choices - 1)] += 1;
  for (int i = 0; i < n_bad; i++)
    pg[CLAMP ((int) bad[i], 0, p->n_choices - 1)] += 1;
  for (int k = 0; k < p->n_choices; k++)
    {
      pl[k] = (pl[k] + 1) / (n_good + p->n_choices);
      pg[k] = (pg[k] + 1) / (n_bad + p->n_choices);
    }
  for (int c = 0; c < N_CANDIDATES; c++)
    {
      double u = g_rand_double (r), acc = 0;
      int k = 0;
      while (k < p->n_choices - 1 && (acc += pl[k]) <= u)
        k++;
      if (log (pl[k]) - log (pg[k]) > best_score)
        {
          best_score = log (pl[k]) - log (pg[k]);
          best = k;
        }
    }
  return best;
}

typedef struct {
  const NlSweepHistory *h;
} SortCtx;

/* Best first; NaN (a failed value) last. */
static int
compare_trials (gconstpointer a, gconstpointer b, gpointer user)
{
  const NlSweepHistory *h = ((const SortCtx *) user)->h;
  double x = h->values[*(const int *) a], y = h->values[*(const int *) b];
  if (isnan (x) || isnan (y))
    return isnan (x) - isnan (y);
  if (h->maximize)
    return x > y ? -1 : x < y;
  return x < y ? -1 : x > y;
}

void
nl_sweep_tpe_point (const NlSweepSpace *s, guint64 seed, int trial, const NlSweepHistory *h, int n_startup,
                    double *point)
{
  int dim = nl_sweep_space_dim (s), n = h->n, n_good;
  g_autofree int *order = NULL;
  g_autofree double *good = NULL, *bad = NULL;
  SortCtx ctx = { h };

  if (n_startup <= 0)
    n_startup = NL_SWEEP_TPE_STARTUP;
  if (n < n_startup)
    {
      nl_sweep_random_point (s, seed, trial, point);
      return;
    }
  order = g_new (int, n);
  for (int i = 0; i < n; i++)
    order[i] = i;
  g_qsort_with_data (order, n, sizeof *order, compare_trials, &ctx);
  n_good = CLAMP ((int) ceil (0.1 * n), 1, MAX_GOOD);
  good = g_new (double, n);
  bad = g_new (double, n);
  for (int i = 0; i < dim; i++)
    {
      const NlSweepParam *p = nl_sweep_space_param (s, i);
      GRand *r = nl_sweep_trial_rand (seed, trial, 1 + i);
      for (int k = 0; k < n; k++)
        (k < n_good ? good : bad - n_good)[k] = h->points[order[k] * dim + i];
      point[i] = p->kind == NL_SWEEP_CHOICE ? sample_choice (p, good, n_good, bad, n - n_good, r)
                                            : sample_range (p, good, n_good, bad, n - n_good, r);
      g_rand_free (r);
    }
}
