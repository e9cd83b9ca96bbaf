/* nl-optim-rule.h — the optimizers' arithmetic, once, for every device:
 * the configuration, the per-update constants and the per-element rules
 * (PyTorch's formulas). The CPU backend (core/nl-backend-cpu-optim.c) and
 * the CUDA kernel (core/cuda/nl-cuda-math.cu) both compute exactly these
 * expressions, so both give the same bits: every product, sum and
 * quotient goes through NL_OPT_MUL/ADD/SUB/DIV, which on the GPU are the
 * explicitly rounded intrinsics nvcc never fuses into an FMA, and on the
 * CPU plain operators (C17 mode: GCC fuses nothing either). Square roots
 * are the caller's (the CPU takes them a block at a time, vectorised).
 *
 * Every update first preprocesses the gradient the same way for all kinds,
 * as MXNet does:
 *   g = grad_scale * grad; g = clip (g, -clip_gradient, clip_gradient);
 *   g += wd * w   (not for AdamW, whose decay is decoupled) */
#pragma once

#include <math.h>
#include <stdint.h>
#include <string.h>

#ifdef __CUDACC__
/* the element rules run in kernels only (the host has the C build of them) */
#define NL_OPT_FN __device__ static inline
#define NL_OPT_HOST_FN __host__ static inline
#define NL_OPT_MUL(a, b) __fmul_rn (a, b)
#define NL_OPT_ADD(a, b) __fadd_rn (a, b)
#define NL_OPT_SUB(a, b) __fsub_rn (a, b)
#define NL_OPT_DIV(a, b) __fdiv_rn (a, b)
#else
#include <glib.h>
#define NL_OPT_FN static inline
#define NL_OPT_HOST_FN static inline
#define NL_OPT_MUL(a, b) ((a) * (b))
#define NL_OPT_ADD(a, b) ((a) + (b))
#define NL_OPT_SUB(a, b) ((a) - (b))
#define NL_OPT_DIV(a, b) ((a) / (b))
#endif

#ifndef __CUDACC__
G_BEGIN_DECLS
#endif

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
  int nesterov;           /* SGD: Nesterov momentum (NAG sets it) */
  float wd;               /* weight decay: L2 added to the gradient (SGD, NAG, Adam, RMSProp, AdaGrad); decoupled for AdamW */
  float beta1, beta2, epsilon;
  float rho;              /* RMSProp */
  int centered;           /* RMSProp */
  float clip_gradient;    /* per-element clip after rescale; <= 0 off */
  float clip_global_norm; /* clip all gradients together by their global L2 norm; <= 0 off (applied by the trainer through grad_scale) */
} NlOptimConfig;

/* Per-weight state arrays of the weight's shape, in this order:
 *   SGD/NAG: [momentum buffer if momentum != 0]           0 or 1
 *   Adam/AdamW: m, v                                      2
 *   RMSProp: square avg, [grad avg if centered], [momentum buffer if momentum != 0]   1..3
 *   AdaGrad: sum of squares                               1 */
NL_OPT_HOST_FN int
nl_optim_n_states (const NlOptimConfig *c)
{
  switch (c->kind)
    {
    case NL_OPTIM_SGD:
    case NL_OPTIM_NAG:
      return c->momentum != 0;
    case NL_OPTIM_ADAM:
    case NL_OPTIM_ADAMW:
      return 2;
    case NL_OPTIM_RMSPROP:
      return 1 + (c->centered != 0) + (c->momentum != 0);
    case NL_OPTIM_ADAGRAD:
      return 1;
    case NL_OPTIM_COUNT:
    default:
      return 0;
    }
}

typedef enum {
  NL_OPTIM_RULE_SGD,          /* no momentum */
  NL_OPTIM_RULE_SGD_MOMENTUM,
  NL_OPTIM_RULE_SGD_NESTEROV,
  NL_OPTIM_RULE_ADAM,         /* Adam and AdamW (decay != 1, wd 0) */
  NL_OPTIM_RULE_RMSPROP,
  NL_OPTIM_RULE_ADAGRAD,
} NlOptimRule;

/* The scalars of one update, computed once on the host. */
typedef struct {
  NlOptimRule rule;
  float gs, clip, wd;         /* preprocessing; clip +inf when off, wd 0 for AdamW */
  float lr, mu, eps;
  float b1, one_b1, b2, one_b2;  /* Adam; one_x = 1.0f - x */
  float step, inv_sqrt_bc2, decay; /* Adam: lr / (1 - b1^t), 1 / sqrt (1 - b2^t), AdamW's 1 - lr wd */
  float rho, one_rho;         /* RMSProp */
  int centered, momentum;     /* RMSProp */
} NlOptimStep;

/* The constants of update t (from 1) at rate lr, gradients times grad_scale. */
NL_OPT_HOST_FN NlOptimStep
nl_optim_step_make (const NlOptimConfig *c, float lr, int64_t t, float grad_scale)
{
  NlOptimStep s;
  memset (&s, 0, sizeof s);
  s.gs = grad_scale;
  s.clip = c->clip_gradient > 0 ? c->clip_gradient : INFINITY;
  s.wd = c->kind == NL_OPTIM_ADAMW ? 0.0f : c->wd;
  s.lr = lr;
  s.mu = c->momentum;
  s.eps = c->epsilon;
  switch (c->kind)
    {
    case NL_OPTIM_SGD:
    case NL_OPTIM_NAG:
      s.rule = c->momentum == 0 ? NL_OPTIM_RULE_SGD
               : (c->nesterov || c->kind == NL_OPTIM_NAG) ? NL_OPTIM_RULE_SGD_NESTEROV
                                                           : NL_OPTIM_RULE_SGD_MOMENTUM;
      break;
    case NL_OPTIM_ADAM:
    case NL_OPTIM_ADAMW:
      {
        /* double, then rounded to float once */
        double bc1 = 1.0 - pow ((double) c->beta1, (double) t);
        double bc2 = 1.0 - pow ((double) c->beta2, (double) t);
        s.b1 = c->beta1;
        s.b2 = c->beta2;
        s.one_b1 = 1.0f - c->beta1;
        s.one_b2 = 1.0f - c->beta2;
        s.step = (float) ((double) lr / bc1);
        s.inv_sqrt_bc2 = (float) (1.0 / sqrt (bc2));
        s.decay = c->kind == NL_OPTIM_ADAMW ? 1.0f - lr * c->wd : 1.0f;
        s.rule = NL_OPTIM_RULE_ADAM;
      }
      break;
    case NL_OPTIM_RMSPROP:
      s.rho = c->rho;
      s.one_rho = 1.0f - c->rho;
      s.centered = c->centered != 0;
      s.momentum = c->momentum != 0;
      s.rule = NL_OPTIM_RULE_RMSPROP;
      break;
    case NL_OPTIM_ADAGRAD:
    case NL_OPTIM_COUNT:
    default:
      s.rule = NL_OPTIM_RULE_ADAGRAD;
      break;
    }
  return s;
}

/* Rescale, clip by compare-select (a NaN passes through, to be noticed),
 * L2 decay added (even when wd is 0: 0 * Inf is NaN there too). */
NL_OPT_FN float
nl_optim_prep (float g, float w, float gs, float clip, float wd)
{
  g = NL_OPT_MUL (g, gs);
  g = g > clip ? clip : g;
  g = g < -clip ? -clip : g;
  return NL_OPT_ADD (g, NL_OPT_MUL (wd, w));
}

/* SGD (PyTorch, dampening 0): b = mu b + g (b starts at 0);
 * d = nesterov ? g + mu b : b (d = g without momentum); w -= lr d */
NL_OPT_FN float
nl_optim_sgd_buffer (float b, float g, float mu)
{
  return NL_OPT_ADD (NL_OPT_MUL (mu, b), g);
}

NL_OPT_FN float
nl_optim_sgd_weight (float w, float lr, float d)
{
  return NL_OPT_SUB (w, NL_OPT_MUL (lr, d));
}

NL_OPT_FN float
nl_optim_nesterov_direction (float g, float mu, float b)
{
  return NL_OPT_ADD (g, NL_OPT_MUL (mu, b));
}

/* Adam / AdamW (PyTorch): m = b1 m + (1 - b1) g; v = b2 v + (1 - b2) g^2;
 * w = w decay - step m / (sqrt (v) / sqrt (1 - b2^t) + eps) */
NL_OPT_FN float
nl_optim_adam_m (float m, float g, const NlOptimStep *s)
{
  return NL_OPT_ADD (NL_OPT_MUL (s->b1, m), NL_OPT_MUL (s->one_b1, g));
}

NL_OPT_FN float
nl_optim_adam_v (float v, float g, const NlOptimStep *s)
{
  return NL_OPT_ADD (NL_OPT_MUL (s->b2, v), NL_OPT_MUL (NL_OPT_MUL (s->one_b2, g), g));
}

NL_OPT_FN float
nl_optim_adam_weight (float w, float m, float sqrt_v, const NlOptimStep *s)
{
  return NL_OPT_SUB (NL_OPT_MUL (w, s->decay),
                     NL_OPT_DIV (NL_OPT_MUL (s->step, m), NL_OPT_ADD (NL_OPT_MUL (sqrt_v, s->inv_sqrt_bc2), s->eps)));
}

/* RMSProp (PyTorch, alpha = rho): s = rho s + (1 - rho) g^2;
 * centered: a = rho a + (1 - rho) g, d = sqrt (s - a^2) + eps, else
 * d = sqrt (s) + eps; momentum: b = mu b + g / d, w -= lr b; else
 * w -= lr g / d */
NL_OPT_FN float
nl_optim_rmsprop_square (float sq, float g, const NlOptimStep *s)
{
  return NL_OPT_ADD (NL_OPT_MUL (s->rho, sq), NL_OPT_MUL (NL_OPT_MUL (s->one_rho, g), g));
}

NL_OPT_FN float
nl_optim_rmsprop_average (float a, float g, const NlOptimStep *s)
{
  return NL_OPT_ADD (NL_OPT_MUL (s->rho, a), NL_OPT_MUL (s->one_rho, g));
}

/* what the square root is taken of: s - a^2 centered, else s */
NL_OPT_FN float
nl_optim_rmsprop_centered (float sq, float a)
{
  return NL_OPT_SUB (sq, NL_OPT_MUL (a, a));
}

NL_OPT_FN float
nl_optim_rmsprop_buffer (float b, float g, float sqrt_den, const NlOptimStep *s)
{
  return NL_OPT_ADD (NL_OPT_MUL (s->mu, b), NL_OPT_DIV (g, NL_OPT_ADD (sqrt_den, s->eps)));
}

/* w -= lr g / (sqrt_den + eps): RMSProp without momentum, AdaGrad */
NL_OPT_FN float
nl_optim_scaled_step (float w, float g, float sqrt_den, const NlOptimStep *s)
{
  return NL_OPT_SUB (w, NL_OPT_DIV (NL_OPT_MUL (s->lr, g), NL_OPT_ADD (sqrt_den, s->eps)));
}

/* AdaGrad (PyTorch, no lr decay, initial accumulator 0): s += g^2, then
 * nl_optim_scaled_step */
NL_OPT_FN float
nl_optim_adagrad_sum (float sum, float g)
{
  return NL_OPT_ADD (sum, NL_OPT_MUL (g, g));
}

#ifndef __CUDACC__
G_END_DECLS
#endif
