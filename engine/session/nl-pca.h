/* nl-pca.h — the first principal components of a sample-by-feature
 * matrix, for the activation projection (nl_explainer_project).
 *
 * Lanczos iteration with full reorthogonalisation on the centred matrix
 * itself: each step is two matrix-vector products (2 * n * f
 * multiply-adds), never forming the covariance or the Gram matrix (which
 * would cost n * f * min (n, f)); the vectors live in the smaller of the
 * two spaces (samples when features outnumber them: the Gram-matrix
 * trick). The top values converge in tens of steps even where the
 * spectrum is flat; at most 400 steps. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

#define NL_PCA_MAX_COMPONENTS 64

/* x: n rows of f features (row-major). xy (n * n_comp floats, row-major)
 * receives each row's coordinates on the first n_comp (1..64) principal
 * components of the centred rows, i.e. U[:, :n_comp] * S[:n_comp] of the
 * centred matrix's SVD; each component's sign is fixed so that its largest
 * coordinate in magnitude is positive. n >= 1, f >= 1. */
void nl_pca_project (const float *x, int n, int f, int n_comp, float *xy);
/* The same with the components converged loosely (Ritz residuals 1e-3 of
 * the largest value): a reduction to the leading subspace before t-SNE,
 * where the exact axes do not matter, in far fewer steps. */
void nl_pca_reduce (const float *x, int n, int f, int n_comp, float *xy);

G_END_DECLS
