/* nl-tsne.h — t-SNE (van der Maaten and Hinton, 2008), exact: every pair,
 * O(n^2) time per iteration and n^2 floats of memory: about 2 s of one
 * core for 1000 samples of 500 features, 15 s for 2000 of 10000, a minute
 * for 5000 (bench-explain) — for the first thousand or two test samples,
 * not for a whole test set (Barnes-Hut would be the next step). Rows of
 * more than 50 features are first reduced to their 50 leading principal
 * components (nl_pca_reduce), as is customary.
 *
 * The optimisation is the reference implementation's (and scikit-learn's):
 * PCA initialisation scaled to a standard deviation of 1e-4 (so the result
 * is deterministic), early exaggeration 12 for 250 iterations with momentum
 * 0.5, then momentum 0.8, per-coordinate gains, learning rate
 * max (n / 48, 50). */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* x: n rows of f features. xy (2 * n floats) receives the embedding.
 * perplexity: the effective number of neighbours (5..50; 30 is usual), at
 * most (n - 1) / 3; iterations: 1000 is usual. n >= 2. */
void nl_tsne_embed (const float *x, int n, int f, double perplexity, int iterations, float *xy);

/* What the tests check separately. The symmetric affinities P (n x n,
 * summing to 1) of rows x (n x d): each row's conditional Gaussian set by
 * binary search so its perplexity is `perplexity`. */
void nl_tsne_affinities (const double *x, int n, int d, double perplexity, double *p);
/* KL (P || Q) of the embedding y (n x 2) and its gradient into grad (n x 2)
 * (Q's kernel in single precision, as in the optimisation). */
double nl_tsne_kl_gradient (const double *p, const double *y, int n, double *grad);

G_END_DECLS
