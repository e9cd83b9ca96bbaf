/* nl-quant-calib.c — activation ranges for INT8 from what an fp32 net
 * observes: min/max (naive) or MXNet's KL-divergence threshold (entropy,
 * _get_optimal_threshold in mxnet/contrib/quantization.py, over |x|). */
#include "engine/infer/nl-quant-calib.h"

#include <gio/gio.h>
#include <math.h>

#define N_BINS 8001

typedef struct {
  char *name;
  double min, max, amax;  /* over the finite values seen in pass 0 */
  gint64 finite;
  guint64 *hist;          /* pass 1 (entropy): |x| in N_BINS bins over [0, amax] */
} Point;

struct NlQuantCalib {
  NlQuantMethod method;
  int pass;
  GPtrArray *points;      /* Point, in the order first observed */
  GHashTable *by_name;    /* name -> Point, borrowed */
};

static void
point_free (gpointer data)
{
  Point *pt = data;
  g_free (pt->name);
  g_free (pt->hist);
  g_free (pt);
}

NlQuantCalib *
nl_quant_calib_new (NlQuantMethod method)
{
  NlQuantCalib *c = g_new0 (NlQuantCalib, 1);
  c->method = method;
  c->points = g_ptr_array_new_with_free_func (point_free);
  c->by_name = g_hash_table_new (g_str_hash, g_str_equal);
  return c;
}

void
nl_quant_calib_free (NlQuantCalib *c)
{
  if (!c)
    return;
  g_hash_table_destroy (c->by_name);
  g_ptr_array_unref (c->points);
  g_free (c);
}

int
nl_quant_calib_passes (NlQuantCalib *c)
{
  return c->method == NL_QUANT_ENTROPY ? 2 : 1;
}

void
nl_quant_calib_begin_pass (NlQuantCalib *c, int pass)
{
  g_return_if_fail (pass >= 0 && pass < nl_quant_calib_passes (c));
  c->pass = pass;
}

static Point *
point_for (NlQuantCalib *c, const char *name)
{
  Point *pt = g_hash_table_lookup (c->by_name, name);
  if (pt)
    return pt;
  pt = g_new0 (Point, 1);
  pt->name = g_strdup (name);
  pt->min = INFINITY;
  pt->max = -INFINITY;
  g_ptr_array_add (c->points, pt);
  g_hash_table_insert (c->by_name, pt->name, pt);
  return pt;
}

/* numpy.histogram's bin of v in [0, amax] (the last bin takes amax) */
static int
bin_of (double v, double amax)
{
  int b = (int) floor (v * N_BINS / amax);
  return CLAMP (b, 0, N_BINS - 1);
}

void
nl_quant_calib_observe (const char *point, const float *values, int64_t n, gpointer calib)
{
  NlQuantCalib *c = calib;
  Point *pt = point_for (c, point);
  if (c->pass == 0)
    {
      for (int64_t i = 0; i < n; i++)
        if (isfinite (values[i]))
          {
            pt->min = MIN (pt->min, values[i]);
            pt->max = MAX (pt->max, values[i]);
            pt->finite++;
          }
      pt->amax = MAX (fabs (pt->min), fabs (pt->max));
      return;
    }
  /* a point pass 0 never saw, or saw no finite value of, has no bins */
  if (!(pt->amax > 0))
    return;
  if (!pt->hist)
    pt->hist = g_new0 (guint64, N_BINS);
  for (int64_t i = 0; i < n; i++)
    if (isfinite (values[i]))
      pt->hist[bin_of (fabs (values[i]), pt->amax)]++;
}

/* MXNet's _smooth_distribution: eps into the zero bins, taken evenly from
 * the others; FALSE when every bin is zero. */
static gboolean
smooth (double *p, int n)
{
  const double eps = 0.0001;
  int zeros = 0;
  for (int i = 0; i < n; i++)
    zeros += p[i] == 0;
  if (zeros == n)
    return FALSE;
  double eps1 = eps * zeros / (n - zeros);
  for (int i = 0; i < n; i++)
    p[i] += p[i] == 0 ? eps : -eps1;
  return TRUE;
}

/* scipy.stats.entropy (p, q): both normalised, sum p log (p / q) */
static double
kl_divergence (const double *p, const double *q, int n)
{
  double sp = 0, sq = 0, kl = 0;
  for (int i = 0; i < n; i++)
    {
      sp += p[i];
      sq += q[i];
    }
  for (int i = 0; i < n; i++)
    if (p[i] > 0)
      kl += p[i] / sp * log ((p[i] / sp) / (q[i] / sq));
  return kl;
}

/* KL divergence of the 8-bit version of the histogram clipped at bin i
 * (p and q: i doubles of scratch; above[i]: the count in bins i and up). */
static double
divergence_at (const guint64 *hist, const guint64 *above, int i, int levels, double *p, double *q)
{
  int merged = i / levels;
  for (int k = 0; k < i; k++)
    p[k] = (double) hist[k];
  p[i - 1] += (double) above[i];
  /* levels of `merged` bins each, the last taking the rest; as MXNet, the
   * levels sum the clipped histogram without its outliers */
  for (int j = 0; j < levels; j++)
    {
      int start = j * merged, stop = j == levels - 1 ? i : start + merged;
      double sum = 0;
      int nonzero = 0;
      for (int k = start; k < stop; k++)
        {
          sum += (double) hist[k];
          nonzero += p[k] != 0;
        }
      for (int k = start; k < stop; k++)
        q[k] = p[k] != 0 && nonzero ? sum / nonzero : 0;
    }
  if (!smooth (p, i) || !smooth (q, i))
    return INFINITY;
  return kl_divergence (p, q, i);
}

/* The threshold of the least divergence: candidates clip at bin 128 (127
 * levels, signed) or 255 (255 levels, unsigned) and every bin above. */
static double
entropy_threshold (const Point *pt, gboolean is_unsigned)
{
  int levels = is_unsigned ? 255 : 127, first = is_unsigned ? 255 : 128, best = N_BINS;
  double best_kl = INFINITY;
  g_autofree double *p = g_new (double, N_BINS), *q = g_new (double, N_BINS);
  g_autofree guint64 *above = g_new0 (guint64, N_BINS + 1);
  g_autofree guint64 *hist = g_memdup2 (pt->hist, sizeof (guint64) * N_BINS);
  /* the spike of exact zeros a ReLU leaves in bin 0 would otherwise rule
   * the divergence (merging it with its neighbours costs more than any
   * clip), pulling every threshold down to the first candidates: it counts
   * as its neighbour, as pytorch-quantization's entropy calibrator does */
  hist[0] = hist[1];
  for (int k = N_BINS - 1; k >= 0; k--)
    above[k] = above[k + 1] + hist[k];
  for (int i = first; i <= N_BINS; i++)
    {
      double kl = divergence_at (hist, above, i, levels, p, q);
      if (kl < best_kl)
        {
          best_kl = kl;
          best = i;
        }
    }
  return pt->amax * best / N_BINS;
}

NlQuantTable *
nl_quant_calib_finish (NlQuantCalib *c, int samples, GError **error)
{
  g_autoptr (NlQuantTable) t = nl_quant_table_new (c->method, samples);
  if (c->points->len == 0)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, "calibration observed no point");
      return NULL;
    }
  for (guint i = 0; i < c->points->len; i++)
    {
      Point *pt = g_ptr_array_index (c->points, i);
      double threshold = pt->amax;
      if (pt->finite == 0)
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                       "calibration point “%s” saw no finite value (the network diverged?)", pt->name);
          return NULL;
        }
      if (c->method == NL_QUANT_ENTROPY && pt->hist)
        threshold = entropy_threshold (pt, pt->min >= 0);
      /* an all-zero point (a dead ReLU) has no range: any clip quantizes
       * its zeros exactly, and the table needs one > 0 */
      if (!(threshold > 0))
        threshold = 1.0;
      nl_quant_table_add (t, pt->name, (float) pt->min, (float) pt->max, (float) threshold);
    }
  return g_steal_pointer (&t);
}
