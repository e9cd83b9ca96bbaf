/* nl-optim.h — optimizers: one in-place update of one weight from its
 * gradient and its per-weight state tensors.
 *
 * The trainer owns the state: nl_optim_n_states() tensors of the weight's
 * shape per weight, zero-filled before the first update. Every update first
 * preprocesses the gradient the same way for all kinds, as MXNet does:
 *   g = grad_scale * grad; g = clip (g, -clip_gradient, clip_gradient);
 *   g += wd * w   (not for AdamW, whose decay is decoupled)
 * then applies the kind's rule (PyTorch's formulas, see nl-optim.c). */
#pragma once

#include <glib.h>
#include <stdint.h>

#include "engine/nl-tensor.h"

G_BEGIN_DECLS

#define NL_OPTIM_ERROR (nl_optim_error_quark ())
GQuark nl_optim_error_quark (void);
typedef enum {
  NL_OPTIM_ERROR_INVALID,
} NlOptimError;

typedef enum {
  NL_OPTIM_SGD,
  NL_OPTIM_NAG,
  NL_OPTIM_ADAM,
  NL_OPTIM_ADAMW,
  NL_OPTIM_RMSPROP,
  NL_OPTIM_ADAGRAD,
  NL_OPTIM_COUNT
} NlOptimKind;

typedef struct {
  NlOptimKind kind;
  float lr;               /* base rate; the schedule gives each step's rate */
  float momentum;         /* SGD, NAG, RMSProp */
  gboolean nesterov;      /* SGD: Nesterov momentum (NAG sets it) */
  float wd;               /* weight decay: L2 added to the gradient (SGD, NAG, Adam, RMSProp, AdaGrad); decoupled for AdamW */
  float beta1, beta2, epsilon;
  float rho;              /* RMSProp */
  gboolean centered;      /* RMSProp */
  float clip_gradient;    /* per-element clip after rescale; <= 0 off */
  float clip_global_norm; /* clip all gradients together by their global L2 norm; <= 0 off (applied by the trainer through grad_scale) */
} NlOptimConfig;

/* Defaults: SGD lr 0.01 momentum 0; NAG momentum 0.9; Adam/AdamW lr 0.001
 * b1 0.9 b2 0.999 eps 1e-8 (AdamW wd 0.01); RMSProp lr 0.001 rho 0.9
 * momentum 0.9 eps 1e-7 centered false (Gluon guide); AdaGrad lr 0.1
 * eps 1e-7. Everything else zero / off. */
void nl_optim_config_init (NlOptimConfig *c, NlOptimKind kind);

/* "sgd", "nag", "adam", "adamw", "rmsprop", "adagrad" (case-insensitive);
 * the error lists the valid names. */
gboolean nl_optim_kind_parse (const char *name, NlOptimKind *kind, GError **error);
const char *nl_optim_kind_name (NlOptimKind kind);

/* Per-weight state tensors of the weight's shape, in this order:
 *   SGD/NAG: [momentum buffer if momentum != 0]           0 or 1
 *   Adam/AdamW: m, v                                      2
 *   RMSProp: square avg, [grad avg if centered], [momentum buffer if momentum != 0]   1..3
 *   AdaGrad: sum of squares                               1 */
int nl_optim_n_states (const NlOptimConfig *c);

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
