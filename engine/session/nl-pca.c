/* nl-pca.c — principal components by subspace iteration (see nl-pca.h). */
#include "engine/session/nl-pca.h"

#include <math.h>
#include <string.h>

#define MAX_K 10          /* vectors iterated: more than asked, so the asked ones converge faster */
#define MAX_ITERS 3000
#define CHECK_EVERY 4

/* z (n x k) = (X - mean) q, q: f x k */
static void
mul_x (const float *x, const double *mean, int n, int f, const double *q, int k, double *z)
{
  double mq[MAX_K] = { 0 };
  for (int i = 0; i < f; i++)
    for (int j = 0; j < k; j++)
      mq[j] += mean[i] * q[(gsize) i * k + j];
  for (int r = 0; r < n; r++)
    {
      double acc[MAX_K] = { 0 };
      const float *row = x + (gsize) r * f;
      for (int i = 0; i < f; i++)
        {
          double xi = row[i];
          const double *qi = q + (gsize) i * k;
          for (int j = 0; j < k; j++)
            acc[j] += xi * qi[j];
        }
      for (int j = 0; j < k; j++)
        z[(gsize) r * k + j] = acc[j] - mq[j];
    }
}

/* q (f x k) = (X - mean)^T z */
static void
mul_xt (const float *x, const double *mean, int n, int f, const double *z, int k, double *q)
{
  double zs[MAX_K] = { 0 };
  memset (q, 0, sizeof (double) * f * k);
  for (int r = 0; r < n; r++)
    {
      const float *row = x + (gsize) r * f;
      const double *zr = z + (gsize) r * k;
      for (int j = 0; j < k; j++)
        zs[j] += zr[j];
      for (int i = 0; i < f; i++)
        {
          double xi = row[i];
          double *qi = q + (gsize) i * k;
          for (int j = 0; j < k; j++)
            qi[j] += xi * zr[j];
        }
    }
  for (int i = 0; i < f; i++)
    for (int j = 0; j < k; j++)
      q[(gsize) i * k + j] -= mean[i] * zs[j];
}

/* Modified Gram-Schmidt on the k columns of q (f x k), twice for
 * accuracy; a column that vanishes is drawn again. */
static void
orthonormalise (double *q, int f, int k, GRand *rng)
{
  for (int pass = 0; pass < 2; pass++)
    for (int j = 0; j < k; j++)
      {
        double norm = 0;
        for (int c = 0; c < j; c++)
          {
            double dot = 0;
            for (int i = 0; i < f; i++)
              dot += q[(gsize) i * k + j] * q[(gsize) i * k + c];
            for (int i = 0; i < f; i++)
              q[(gsize) i * k + j] -= dot * q[(gsize) i * k + c];
          }
        for (int i = 0; i < f; i++)
          norm += q[(gsize) i * k + j] * q[(gsize) i * k + j];
        if (norm < 1e-280)
          {
            for (int i = 0; i < f; i++)
              q[(gsize) i * k + j] = g_rand_double_range (rng, -1, 1);
            j--; /* orthogonalise the new draw */
            continue;
          }
        norm = sqrt (norm);
        for (int i = 0; i < f; i++)
          q[(gsize) i * k + j] /= norm;
      }
}

/* Eigen-decomposition of the symmetric k x k matrix a (destroyed) by
 * cyclic Jacobi rotations: values descending into w, vectors as the
 * columns of v (k x k). */
static void
jacobi (double *a, int k, double *w, double *v)
{
  int order[MAX_K];
  double vals[MAX_K], vecs[MAX_K * MAX_K];
  for (int i = 0; i < k; i++)
    for (int j = 0; j < k; j++)
      vecs[i * k + j] = i == j;
  for (int sweep = 0; sweep < 100; sweep++)
    {
      double off = 0, total = 0;
      for (int i = 0; i < k; i++)
        for (int j = 0; j < k; j++)
          {
            total += a[i * k + j] * a[i * k + j];
            if (i != j)
              off += a[i * k + j] * a[i * k + j];
          }
      if (off <= 1e-30 * total || off == 0)
        break;
      for (int p = 0; p < k; p++)
        for (int q = p + 1; q < k; q++)
          {
            double apq = a[p * k + q], theta, t, c, s;
            if (fabs (apq) < 1e-300)
              continue;
            theta = (a[q * k + q] - a[p * k + p]) / (2 * apq);
            t = (theta >= 0 ? 1 : -1) / (fabs (theta) + sqrt (theta * theta + 1));
            c = 1 / sqrt (t * t + 1);
            s = t * c;
            for (int r = 0; r < k; r++)
              {
                double arp = a[r * k + p], arq = a[r * k + q];
                a[r * k + p] = c * arp - s * arq;
                a[r * k + q] = s * arp + c * arq;
              }
            for (int r = 0; r < k; r++)
              {
                double apr = a[p * k + r], aqr = a[q * k + r];
                a[p * k + r] = c * apr - s * aqr;
                a[q * k + r] = s * apr + c * aqr;
              }
            for (int r = 0; r < k; r++)
              {
                double vrp = vecs[r * k + p], vrq = vecs[r * k + q];
                vecs[r * k + p] = c * vrp - s * vrq;
                vecs[r * k + q] = s * vrp + c * vrq;
              }
          }
    }
  for (int i = 0; i < k; i++)
    {
      vals[i] = a[i * k + i];
      order[i] = i;
    }
  for (int i = 1; i < k; i++)
    for (int j = i; j > 0 && vals[order[j]] > vals[order[j - 1]]; j--)
      {
        int t = order[j];
        order[j] = order[j - 1];
        order[j - 1] = t;
      }
  for (int c = 0; c < k; c++)
    {
      w[c] = vals[order[c]];
      for (int r = 0; r < k; r++)
        v[r * k + c] = vecs[r * k + order[c]];
    }
}

/* The Ritz values (descending) of the subspace q, and z = (X - mean) q
 * with its Ritz vectors in v. */
static void
ritz (const float *x, const double *mean, int n, int f, const double *q, int k, double *z, double *w, double *v)
{
  double t[MAX_K * MAX_K] = { 0 };
  mul_x (x, mean, n, f, q, k, z);
  for (int r = 0; r < n; r++)
    for (int i = 0; i < k; i++)
      for (int j = 0; j < k; j++)
        t[i * k + j] += z[(gsize) r * k + i] * z[(gsize) r * k + j];
  jacobi (t, k, w, v);
}

void
nl_pca_project (const float *x, int n, int f, int n_comp, float *xy)
{
  int k = MIN (MAX_K, MIN (n, f));
  g_autofree double *mean = g_new0 (double, f);
  g_autofree double *q = NULL, *z = NULL;
  double w[MAX_K], v[MAX_K * MAX_K], prev[MAX_K] = { 0 };
  g_autoptr (GRand) rng = g_rand_new_with_seed (0x5eed);

  g_return_if_fail (n >= 1 && f >= 1 && n_comp >= 1 && n_comp <= 4);
  memset (xy, 0, sizeof (float) * n * n_comp);
  q = g_new (double, (gsize) f * k);
  z = g_new (double, (gsize) n * k);
  for (int r = 0; r < n; r++)
    for (int i = 0; i < f; i++)
      mean[i] += x[(gsize) r * f + i];
  for (int i = 0; i < f; i++)
    mean[i] /= n;
  for (gsize i = 0; i < (gsize) f * k; i++)
    q[i] = g_rand_double_range (rng, -1, 1);
  orthonormalise (q, f, k, rng);
  /* a subspace of every feature (k = f) is exact at once */
  for (int it = 0; k < f && it < MAX_ITERS; it++)
    {
      gboolean done = TRUE;
      mul_x (x, mean, n, f, q, k, z);
      mul_xt (x, mean, n, f, z, k, q);
      orthonormalise (q, f, k, rng);
      if (it % CHECK_EVERY != CHECK_EVERY - 1)
        continue;
      ritz (x, mean, n, f, q, k, z, w, v);
      for (int c = 0; c < MIN (n_comp, k); c++)
        done = done && fabs (w[c] - prev[c]) <= 1e-13 * MAX (w[0], 1e-300);
      memcpy (prev, w, sizeof w);
      if (done)
        break;
    }
  ritz (x, mean, n, f, q, k, z, w, v);
  for (int c = 0; c < MIN (n_comp, k); c++)
    {
      double big = 0;
      for (int r = 0; r < n; r++)
        {
          double s = 0;
          for (int j = 0; j < k; j++)
            s += z[(gsize) r * k + j] * v[j * k + c];
          xy[(gsize) r * n_comp + c] = (float) s;
          if (fabs (s) > fabs (big))
            big = s;
        }
      if (big < 0)
        for (int r = 0; r < n; r++)
          xy[(gsize) r * n_comp + c] = -xy[(gsize) r * n_comp + c];
    }
}
