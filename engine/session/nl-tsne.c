/* nl-tsne.c — exact t-SNE (see nl-tsne.h). */
#include "engine/session/nl-tsne.h"
#include "engine/session/nl-pca.h"

#include <math.h>
#include <string.h>

#define PCA_DIMS 50
#define EXAGGERATION 12.0
#define EXAGGERATED_ITERS 250

/* Row i of the conditional affinities, into row (which holds nothing yet):
 * squared distances, then the Gaussian whose entropy is log (perplexity),
 * its precision found by bisection. */
static void
conditional_row (const double *x, int n, int d, int i, double target, double *row)
{
  double dmin = INFINITY, beta = 1, lo = 0, hi = INFINITY, sum = 1;
  for (int j = 0; j < n; j++)
    {
      double s = 0;
      for (int k = 0; k < d; k++)
        {
          double t = x[(gsize) i * d + k] - x[(gsize) j * d + k];
          s += t * t;
        }
      row[j] = s;
      if (j != i)
        dmin = MIN (dmin, s);
    }
  for (int iter = 0; iter < 200; iter++)
    {
      double hsum = 0, h;
      sum = 0;
      for (int j = 0; j < n; j++)
        if (j != i)
          {
            /* shifted by the nearest distance: no underflow to 0 / 0 */
            double w = exp (-(row[j] - dmin) * beta);
            sum += w;
            hsum += w * (row[j] - dmin);
          }
      h = log (sum) + beta * hsum / sum;
      if (fabs (h - target) < 1e-10)
        break;
      if (h > target)
        {
          lo = beta;
          beta = isinf (hi) ? beta * 2 : (beta + hi) / 2;
        }
      else
        {
          hi = beta;
          beta = (beta + lo) / 2;
        }
    }
  for (int j = 0; j < n; j++)
    row[j] = j == i ? 0 : exp (-(row[j] - dmin) * beta) / sum;
}

void
nl_tsne_affinities (const double *x, int n, int d, double perplexity, double *p)
{
  double target = log (perplexity);
#pragma omp parallel for schedule (dynamic, 16) if (n > 64)
  for (int i = 0; i < n; i++)
    conditional_row (x, n, d, i, target, p + (gsize) i * n);
  for (int i = 0; i < n; i++)
    for (int j = i + 1; j < n; j++)
      {
        double s = (p[(gsize) i * n + j] + p[(gsize) j * n + i]) / (2.0 * n);
        p[(gsize) i * n + j] = p[(gsize) j * n + i] = s;
      }
}

/* The gradient of KL (exaggeration * P || Q) into grad; the KL itself
 * when want_kl (the optimisation does not need it). num (n x n floats)
 * holds the Student-t kernel of each pair: computed once per pair (the
 * upper triangle, mirrored), read twice. */
static double
kl_gradient (const double *p, double exaggeration, const double *y, int n, float *num, double *grad,
             gboolean want_kl)
{
  double sumq = 0, kl = 0;
#pragma omp parallel for reduction (+ : sumq) schedule (dynamic, 32) if (n > 64)
  for (int i = 0; i < n; i++)
    for (int j = i + 1; j < n; j++)
      {
        double dx = y[2 * i] - y[2 * j], dy = y[2 * i + 1] - y[2 * j + 1];
        double t = 1 / (1 + dx * dx + dy * dy);
        num[(gsize) i * n + j] = num[(gsize) j * n + i] = (float) t;
        sumq += 2 * t;
      }
#pragma omp parallel for reduction (+ : kl) schedule (static) if (n > 64)
  for (int i = 0; i < n; i++)
    {
      double gx = 0, gy = 0;
      const float *row = num + (gsize) i * n;
      const double *prow = p + (gsize) i * n;
      for (int j = 0; j < n; j++)
        {
          double t, pij, c;
          if (j == i)
            continue;
          t = row[j];
          pij = exaggeration * prow[j];
          c = (pij - t / sumq) * t;
          gx += c * (y[2 * i] - y[2 * j]);
          gy += c * (y[2 * i + 1] - y[2 * j + 1]);
          if (want_kl && pij > 0)
            kl += pij * log (pij / MAX (t / sumq, 1e-300));
        }
      grad[2 * i] = 4 * gx;
      grad[2 * i + 1] = 4 * gy;
    }
  return kl;
}

double
nl_tsne_kl_gradient (const double *p, const double *y, int n, double *grad)
{
  g_autofree float *num = g_new (float, (gsize) n * n);
  return kl_gradient (p, 1.0, y, n, num, grad, TRUE);
}

void
nl_tsne_embed (const float *x, int n, int f, double perplexity, int iterations, float *xy)
{
  int d = MIN (f, PCA_DIMS);
  g_autofree double *xd = g_new (double, (gsize) n * d), *p = g_new (double, (gsize) n * n);
  g_autofree double *y = g_new (double, 2 * n), *grad = g_new (double, 2 * n);
  g_autofree double *update = g_new0 (double, 2 * n), *gains = g_new (double, 2 * n);
  g_autofree float *init = g_new (float, 2 * n), *reduced = NULL, *num = g_new (float, (gsize) n * n);
  double lr = MAX (n / EXAGGERATION / 4, 50), sd = 0;

  g_return_if_fail (n >= 2 && f >= 1);
  if (f > PCA_DIMS)
    {
      reduced = g_new (float, (gsize) n * d);
      nl_pca_reduce (x, n, f, d, reduced);
      for (gsize k = 0; k < (gsize) n * d; k++)
        xd[k] = reduced[k];
    }
  else
    for (gsize k = 0; k < (gsize) n * d; k++)
      xd[k] = x[k];
  perplexity = CLAMP (perplexity, 1.0, MAX ((n - 1) / 3.0, 1.0));
  nl_tsne_affinities (xd, n, d, perplexity, p);

  /* PCA's first two components (those of the reduction, when there was
   * one), the first scaled to a standard deviation of 1e-4 */
  if (reduced)
    for (int i = 0; i < n; i++)
      {
        init[2 * i] = reduced[(gsize) i * d];
        init[2 * i + 1] = reduced[(gsize) i * d + 1];
      }
  else
    nl_pca_project (x, n, f, 2, init);
  for (int i = 0; i < n; i++)
    sd += (double) init[2 * i] * init[2 * i];
  sd = sqrt (sd / n);
  for (int k = 0; k < 2 * n; k++)
    {
      y[k] = sd > 0 ? init[k] / sd * 1e-4 : 1e-4 * ((k * 7919) % 101 - 50) / 50.0;
      gains[k] = 1;
    }
  for (int it = 0; it < iterations; it++)
    {
      gboolean early = it < EXAGGERATED_ITERS;
      double momentum = early ? 0.5 : 0.8;
      kl_gradient (p, early ? EXAGGERATION : 1.0, y, n, num, grad, FALSE);
      for (int k = 0; k < 2 * n; k++)
        {
          /* delta-bar-delta: faster along a steady direction */
          gains[k] = update[k] * grad[k] < 0 ? gains[k] + 0.2 : MAX (gains[k] * 0.8, 0.01);
          update[k] = momentum * update[k] - lr * gains[k] * grad[k];
          y[k] += update[k];
        }
    }
  for (int k = 0; k < 2 * n; k++)
    xy[k] = (float) y[k];
}
