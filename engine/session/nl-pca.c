/* nl-pca.c — principal components by Lanczos iteration (see nl-pca.h). */
#include "engine/session/nl-pca.h"

#include <math.h>
#include <string.h>

#define MAX_STEPS 400     /* Lanczos vectors at most (and at most the dimension) */
#define CHECK_EVERY 5

typedef struct {
  const float *x;
  const double *mean;
  int n, f;
  gboolean gram;          /* vectors live in sample space: A = Xc Xc^T (n x n), else A = Xc^T Xc (f x f) */
  double *tmp;            /* the other space's vector */
} Op;

/* out = Xc v (v: f, out: n) */
static void
mul_x (const Op *op, const double *v, double *out)
{
  double mv = 0;
  for (int i = 0; i < op->f; i++)
    mv += op->mean[i] * v[i];
#pragma omp parallel for schedule (static) if ((gint64) op->n * op->f > 200000)
  for (int r = 0; r < op->n; r++)
    {
      const float *row = op->x + (gsize) r * op->f;
      double acc = 0;
#pragma omp simd reduction (+ : acc)
      for (int i = 0; i < op->f; i++)
        acc += row[i] * v[i];
      out[r] = acc - mv;
    }
}

/* out = Xc^T u (u: n, out: f) */
static void
mul_xt (const Op *op, const double *u, double *out)
{
  double us = 0;
  for (int r = 0; r < op->n; r++)
    us += u[r];
  /* threads own blocks of features, so no two write the same sum */
#pragma omp parallel for schedule (static) if ((gint64) op->n * op->f > 200000)
  for (int b = 0; b < op->f; b += 256)
    {
      int end = MIN (b + 256, op->f);
      for (int i = b; i < end; i++)
        out[i] = -op->mean[i] * us;
      for (int r = 0; r < op->n; r++)
        {
          const float *row = op->x + (gsize) r * op->f;
          double ur = u[r];
#pragma omp simd
          for (int i = b; i < end; i++)
            out[i] += row[i] * ur;
        }
    }
}

static void
apply (const Op *op, const double *v, double *out)
{
  if (op->gram)
    {
      mul_xt (op, v, op->tmp);
      mul_x (op, op->tmp, out);
    }
  else
    {
      mul_x (op, v, op->tmp);
      mul_xt (op, op->tmp, out);
    }
}

static double
dot (const double *a, const double *b, int n)
{
  double s = 0;
  for (int i = 0; i < n; i++)
    s += a[i] * b[i];
  return s;
}

/* Eigenvalues (into d) and eigenvectors (columns of z, m x m, row-major)
 * of the symmetric tridiagonal matrix with diagonal d and off-diagonal e
 * (e[i] between i and i + 1; destroyed): implicit QL with Wilkinson shifts. */
static void
tridiagonal_eigen (double *d, double *e, int m, double *z)
{
  for (int i = 0; i < m; i++)
    for (int j = 0; j < m; j++)
      z[i * m + j] = i == j;
  if (m > 0)
    e[m - 1] = 0;
  for (int l = 0; l < m; l++)
    for (int iter = 0; iter < 60; iter++)
      {
        int k;
        double g, r, s = 1, c = 1, p = 0;
        for (k = l; k < m - 1; k++)
          if (fabs (e[k]) <= 1e-15 * (fabs (d[k]) + fabs (d[k + 1])))
            break;
        if (k == l)
          break;
        g = (d[l + 1] - d[l]) / (2 * e[l]);
        r = hypot (g, 1.0);
        g = d[k] - d[l] + e[l] / (g + copysign (r, g));
        int i;
        for (i = k - 1; i >= l; i--)
          {
            double f = s * e[i], b = c * e[i];
            e[i + 1] = r = hypot (f, g);
            if (r == 0)
              {
                d[i + 1] -= p;
                e[k] = 0;
                break;
              }
            s = f / r;
            c = g / r;
            g = d[i + 1] - p;
            r = (d[i] - g) * s + 2 * c * b;
            d[i + 1] = g + (p = s * r);
            g = c * r - b;
            for (int q = 0; q < m; q++)
              {
                f = z[q * m + i + 1];
                z[q * m + i + 1] = s * z[q * m + i] + c * f;
                z[q * m + i] = c * z[q * m + i] - s * f;
              }
          }
        if (r == 0 && i >= l)
          continue;
        d[l] -= p;
        e[l] = g;
        e[k] = 0;
      }
}

/* The indices of the n_comp largest of d[0..m) into top, largest first. */
static void
largest (const double *d, int m, int n_comp, int *top)
{
  for (int c = 0; c < n_comp; c++)
    {
      top[c] = -1;
      for (int i = 0; i < m; i++)
        {
          gboolean taken = FALSE;
          for (int k = 0; k < c; k++)
            taken = taken || top[k] == i;
          if (!taken && (top[c] < 0 || d[i] > d[top[c]]))
            top[c] = i;
        }
    }
}

/* Ritz values and vectors of the Lanczos tridiagonal T (steps x steps) into
 * d and z; whether the top n_comp have converged (residual beta * |last
 * component| small against the largest value). */
static gboolean
ritz (const double *alpha, const double *beta, int steps, int n_comp, double tol, double *d, double *z, int *top)
{
  g_autofree double *e = g_new (double, steps);
  gboolean done = TRUE;
  memcpy (d, alpha, sizeof (double) * steps);
  memcpy (e, beta, sizeof (double) * steps);
  tridiagonal_eigen (d, e, steps, z);
  largest (d, steps, MIN (n_comp, steps), top);
  for (int c = 0; c < MIN (n_comp, steps); c++)
    done = done && fabs (beta[steps - 1] * z[(steps - 1) * steps + top[c]]) <= tol * MAX (d[top[0]], 1e-300);
  return done;
}

/* tol: of the Ritz residuals against the largest value */
static void
pca (const float *x, int n, int f, int n_comp, double tol, float *xy)
{
  Op op = { .x = x, .n = n, .f = f, .gram = f > n };
  int dim = MIN (n, f), max_steps = MIN (dim, MAX_STEPS), steps = 0;
  g_autofree int *top = g_new (int, MAX (n_comp, 1));
  g_autofree double *mean = g_new0 (double, f), *v = NULL, *w = NULL, *alpha = NULL, *beta = NULL;
  g_autofree double *d = NULL, *z = NULL, *y = NULL, *tmp = g_new (double, MAX (n, f));
  g_autoptr (GRand) rng = g_rand_new_with_seed (0x5eed);

  g_return_if_fail (n >= 1 && f >= 1 && n_comp >= 1 && n_comp <= NL_PCA_MAX_COMPONENTS);
  memset (xy, 0, sizeof (float) * n * n_comp);
  for (int r = 0; r < n; r++)
    for (int i = 0; i < f; i++)
      mean[i] += x[(gsize) r * f + i];
  for (int i = 0; i < f; i++)
    mean[i] /= n;
  op.mean = mean;
  op.tmp = tmp;
  v = g_new (double, (gsize) dim * (max_steps + 1));
  w = g_new (double, dim);
  alpha = g_new0 (double, max_steps);
  beta = g_new0 (double, max_steps);
  d = g_new (double, max_steps);
  z = g_new (double, (gsize) max_steps * max_steps);
  for (int i = 0; i < dim; i++)
    v[i] = g_rand_double_range (rng, -1, 1);
  {
    double nv = sqrt (dot (v, v, dim));
    for (int i = 0; i < dim; i++)
      v[i] /= nv;
  }
  /* Lanczos with full reorthogonalisation: T = V^T A V tridiagonal */
  for (int j = 0; j < max_steps; j++)
    {
      double *vj = v + (gsize) j * dim, nw;
      apply (&op, vj, w);
      alpha[j] = dot (w, vj, dim);
      for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i <= j; i++)
          {
            double c = dot (w, v + (gsize) i * dim, dim);
            for (int k = 0; k < dim; k++)
              w[k] -= c * v[(gsize) i * dim + k];
          }
      nw = sqrt (dot (w, w, dim));
      beta[j] = nw;
      steps = j + 1;
      /* an invariant subspace (a matrix of low rank): T is exact */
      if (nw <= 1e-12 * MAX (fabs (alpha[0]), 1e-300) || steps == max_steps)
        break;
      /* each check solves T with its vectors (steps^3): check less often as T grows */
      if (steps % MAX (CHECK_EVERY, steps / 8) == 0 && steps >= n_comp && ritz (alpha, beta, steps, n_comp, tol, d, z, top))
        break;
      for (int k = 0; k < dim; k++)
        v[(gsize) (j + 1) * dim + k] = w[k] / nw;
    }
  ritz (alpha, beta, steps, n_comp, tol, d, z, top);
  y = g_new (double, MAX (n, f));
  for (int c = 0; c < MIN (n_comp, steps); c++)
    {
      double big = 0, sigma = sqrt (MAX (d[top[c]], 0.0));
      /* the Ritz vector; its coordinates: Xc y (features) or y * sigma (samples) */
      memset (y, 0, sizeof (double) * dim);
      for (int j = 0; j < steps; j++)
        for (int k = 0; k < dim; k++)
          y[k] += z[j * steps + top[c]] * v[(gsize) j * dim + k];
      if (!op.gram)
        mul_x (&op, y, tmp);
      for (int r = 0; r < n; r++)
        {
          double s = op.gram ? y[r] * sigma : tmp[r];
          xy[(gsize) r * n_comp + c] = (float) s;
          if (fabs (s) > fabs (big))
            big = s;
        }
      if (big < 0)
        for (int r = 0; r < n; r++)
          xy[(gsize) r * n_comp + c] = -xy[(gsize) r * n_comp + c];
    }
}

void
nl_pca_project (const float *x, int n, int f, int n_comp, float *xy)
{
  pca (x, n, f, n_comp, 1e-10, xy);
}

void
nl_pca_reduce (const float *x, int n, int f, int n_comp, float *xy)
{
  pca (x, n, f, n_comp, 1e-3, xy);
}
