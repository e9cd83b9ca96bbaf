/* nl-pca.h — the first principal components of a sample-by-feature
 * matrix, for the activation projection (nl_explainer_project).
 *
 * Subspace iteration on the centred matrix itself (X^T X v through two
 * matrix-vector products a step, never forming the covariance or the Gram
 * matrix: 2000 samples of 10000 features cost 2 * n * f * k flops a step,
 * where forming either matrix would cost n * f * min (n, f)), with a
 * Rayleigh-Ritz step (Jacobi on a k x k matrix) to read the components. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* x: n rows of f features (row-major). xy (n * n_comp floats, row-major)
 * receives each row's coordinates on the first n_comp (1..4) principal
 * components of the centred rows, i.e. U[:, :n_comp] * S[:n_comp] of the
 * centred matrix's SVD; each component's sign is fixed so that its largest
 * coordinate in magnitude is positive. n >= 1, f >= 1. */
void nl_pca_project (const float *x, int n, int f, int n_comp, float *xy);

G_END_DECLS
