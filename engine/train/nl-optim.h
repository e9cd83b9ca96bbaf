/* nl-optim.h — optimizers: their names and defaults, and one in-place
 * update of one CPU weight from its gradient and its per-weight state
 * tensors. The configuration, the state layout and the arithmetic are
 * core/nl-optim-rule.h's (shared with every backend); the update itself is
 * the backend's fused optim_update.
 *
 * The trainer owns the state: nl_optim_n_states() tensors of the weight's
 * shape per weight, zero-filled before the first update. */
#pragma once

#include <glib.h>
#include <stdint.h>

#include "core/nl-optim-rule.h"
#include "core/nl-tensor.h"

G_BEGIN_DECLS

#define NL_OPTIM_ERROR (nl_optim_error_quark ())
GQuark nl_optim_error_quark (void);
typedef enum {
  NL_OPTIM_ERROR_INVALID,
} NlOptimError;

/* Defaults: SGD lr 0.01 momentum 0; NAG momentum 0.9; Adam/AdamW lr 0.001
 * b1 0.9 b2 0.999 eps 1e-8 (AdamW wd 0.01); RMSProp lr 0.001 rho 0.9
 * momentum 0.9 eps 1e-7 centered false (Gluon guide); AdaGrad lr 0.1
 * eps 1e-7. Everything else zero / off. */
void nl_optim_config_init (NlOptimConfig *c, NlOptimKind kind);

/* "sgd", "nag", "adam", "adamw", "rmsprop", "adagrad" (case-insensitive);
 * the error lists the valid names. */
gboolean nl_optim_kind_parse (const char *name, NlOptimKind *kind, GError **error);
const char *nl_optim_kind_name (NlOptimKind kind);

/* One update of one weight. state: nl_optim_n_states tensors, all zero
 * before the first update. t: update count starting at 1 (bias
 * correction). lr: this step's rate. grad_scale multiplies the gradient
 * first (global-norm clipping). weight, grad and states: F32, contiguous,
 * same element count. One fused pass over memory, vectorised; OpenMP for
 * tensors over NL_PAR_MIN elements. Results do not depend on the thread
 * count. */
void nl_optim_update (const NlOptimConfig *c, float lr, int64_t t, float grad_scale,
                      NlTensor *weight, const NlTensor *grad, NlTensor *const *state);

/* Global L2 norm of all gradients (double accumulation, in a fixed order so
 * the result does not depend on the thread count). NULL entries are skipped. */
double nl_optim_global_norm (NlTensor *const *grads, int n);

G_END_DECLS
