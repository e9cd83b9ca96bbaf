/* activation.c — the CPU kernels of Activation (relu, sigmoid, tanh,
 * softrelu and the later act_types), LeakyReLU, Clip, PReLU and Shrink (definitions: ops/defs/activation.c).
 *
 * The first four act_types' backward here is written in terms of the output,
 * so they declare NL_NEEDS_OUTPUTS only and may run in place: sigmoid and
 * tanh have the usual closed forms, softrelu' = sigmoid(x) = 1 - exp(-y), and
 * since alpha >= 0 the sign of a LeakyReLU output is the sign of its input.
 * The later act_types go through one per-element switch (act_apply,
 * act_grad_y, act_grad_x in ops/nl-activation.h); those act_needs_input
 * names read x in backward. ReLU runs on every
 * step of the benchmark, so its loops are kept branch-free and vectorisable.
 * `if (parallel: ...)` matters: a bare `if` on `parallel for simd` also
 * applies to the simd part, and GCC then runs small sizes unvectorised. */
#include "ops/cpu/nl-cpu-util.h"
#include "ops/nl-activation.h"

static gboolean
act_forward (NlOpCtx *c, GError **error)
{
  const float *x = nl_tensor_f32 (c->in[0]);
  float *y = nl_tensor_f32 (c->out[0]);
  int64_t n = nl_numel (c->in[0]);

  switch (((const NlActivationArgs *) c->args)->act_type)
    {
    case ACT_RELU:
#pragma omp parallel for simd if (parallel: n > NL_PAR_MIN) schedule (static)
      for (int64_t i = 0; i < n; i++)
        y[i] = act_relu (x[i]);
      break;
    case ACT_SIGMOID:
#pragma omp parallel for if (n > NL_PAR_MIN / 8) schedule (static)
      for (int64_t i = 0; i < n; i++)
        y[i] = act_sigmoid (x[i]);
      break;
    case ACT_TANH:
#pragma omp parallel for if (n > NL_PAR_MIN / 8) schedule (static)
      for (int64_t i = 0; i < n; i++)
        y[i] = tanhf (x[i]);
      break;
    case ACT_SOFTRELU:
#pragma omp parallel for if (n > NL_PAR_MIN / 8) schedule (static)
      for (int64_t i = 0; i < n; i++)
        y[i] = act_softrelu (x[i]);
      break;
    default:
      {
        int t = ((const NlActivationArgs *) c->args)->act_type;
#pragma omp parallel for if (n > NL_PAR_MIN / 8) schedule (static)
        for (int64_t i = 0; i < n; i++)
          y[i] = act_apply (t, x[i]);
      }
      break;
    }
  return TRUE;
}

/* The act_types after softrelu: from x where act_needs_input says so */
static void
act_backward_more (NlOpCtx *c, int64_t n, float *dx)
{
  int t = ((const NlActivationArgs *) c->args)->act_type;
  const float *dy = nl_tensor_f32 (c->out_grad[0]);
  if (act_needs_input (t))
    {
      const float *x = nl_tensor_f32 (c->in[0]);
#pragma omp parallel for if (n > NL_PAR_MIN / 8) schedule (static)
      for (int64_t i = 0; i < n; i++)
        dx[i] = act_grad_x (t, x[i], dy[i]);
    }
  else
    {
      const float *y = nl_tensor_f32 (c->out[0]);
#pragma omp parallel for if (n > NL_PAR_MIN / 8) schedule (static)
      for (int64_t i = 0; i < n; i++)
        dx[i] = act_grad_y (t, y[i], dy[i]);
    }
}

static gboolean
act_backward (NlOpCtx *c, GError **error)
{
  /* the output only where the op said it needs it */
  const float *y = act_needs_input (((const NlActivationArgs *) c->args)->act_type) ? NULL : nl_tensor_f32 (c->out[0]);
  const float *dy = nl_tensor_f32 (c->out_grad[0]);
  float *dx;
  int64_t n = nl_numel (c->out_grad[0]);

  if (!c->in_grad[0])
    return TRUE;
  dx = nl_tensor_f32 (c->in_grad[0]);
  switch (((const NlActivationArgs *) c->args)->act_type)
    {
    case ACT_RELU:
#pragma omp parallel for simd if (parallel: n > NL_PAR_MIN) schedule (static)
      for (int64_t i = 0; i < n; i++)
        dx[i] = act_relu_grad (y[i], dy[i]);
      break;
    case ACT_SIGMOID:
#pragma omp parallel for simd if (parallel: n > NL_PAR_MIN) schedule (static)
      for (int64_t i = 0; i < n; i++)
        dx[i] = act_sigmoid_grad (y[i], dy[i]);
      break;
    case ACT_TANH:
#pragma omp parallel for simd if (parallel: n > NL_PAR_MIN) schedule (static)
      for (int64_t i = 0; i < n; i++)
        dx[i] = act_tanh_grad (y[i], dy[i]);
      break;
    case ACT_SOFTRELU:
#pragma omp parallel for if (n > NL_PAR_MIN / 8) schedule (static)
      for (int64_t i = 0; i < n; i++)
        dx[i] = act_softrelu_grad (y[i], dy[i]);
      break;
    default:
      act_backward_more (c, n, dx);
      break;
    }
  return TRUE;
}

static gboolean
leaky_forward (NlOpCtx *c, GError **error)
{
  const float *x = nl_tensor_f32 (c->in[0]);
  float *y = nl_tensor_f32 (c->out[0]);
  int64_t n = nl_numel (c->in[0]);
  float alpha = ((const NlLeakyReluArgs *) c->args)->alpha;

#pragma omp parallel for simd if (parallel: n > NL_PAR_MIN) schedule (static)
  for (int64_t i = 0; i < n; i++)
    y[i] = leaky_relu (x[i], alpha);
  return TRUE;
}

static gboolean
leaky_backward (NlOpCtx *c, GError **error)
{
  const float *y = nl_tensor_f32 (c->out[0]);
  const float *dy = nl_tensor_f32 (c->out_grad[0]);
  float *dx;
  int64_t n = nl_numel (c->out[0]);
  float alpha = ((const NlLeakyReluArgs *) c->args)->alpha;

  if (!c->in_grad[0])
    return TRUE;
  dx = nl_tensor_f32 (c->in_grad[0]);
#pragma omp parallel for simd if (parallel: n > NL_PAR_MIN) schedule (static)
  for (int64_t i = 0; i < n; i++)
    dx[i] = leaky_relu_grad (y[i], dy[i], alpha);
  return TRUE;
}

static gboolean
clip_forward (NlOpCtx *c, GError **error)
{
  const float *x = nl_tensor_f32 (c->in[0]);
  float *y = nl_tensor_f32 (c->out[0]);
  int64_t n = nl_numel (c->in[0]);
  const NlClipArgs *a = c->args;

#pragma omp parallel for simd if (parallel: n > NL_PAR_MIN) schedule (static)
  for (int64_t i = 0; i < n; i++)
    y[i] = clip_value (x[i], a->lo, a->hi);
  return TRUE;
}

static gboolean
clip_backward (NlOpCtx *c, GError **error)
{
  const float *y = nl_tensor_f32 (c->out[0]);
  const float *dy = nl_tensor_f32 (c->out_grad[0]);
  float *dx;
  int64_t n = nl_numel (c->out[0]);
  const NlClipArgs *a = c->args;

  if (!c->in_grad[0])
    return TRUE;
  dx = nl_tensor_f32 (c->in_grad[0]);
#pragma omp parallel for simd if (parallel: n > NL_PAR_MIN) schedule (static)
  for (int64_t i = 0; i < n; i++)
    dx[i] = clip_grad (y[i], dy[i], a->lo, a->hi);
  return TRUE;
}

/* PReLU over (N, C, inner): channel c of element i is (i / inner) % C */
static void
prelu_dims (const NlTensor *x, int64_t *n, int64_t *ch, int64_t *inner)
{
  *n = x->shape[0];
  *ch = x->shape[1];
  *inner = nl_numel (x) / (*n * *ch);
}

static gboolean
prelu_forward (NlOpCtx *c, GError **error)
{
  const float *x = nl_tensor_f32 (c->in[0]), *a = nl_tensor_f32 (c->in[1]);
  float *y = nl_tensor_f32 (c->out[0]);
  int64_t n, ch, inner;
  prelu_dims (c->in[0], &n, &ch, &inner);

#pragma omp parallel for collapse (2) if (n * ch * inner > NL_PAR_MIN) schedule (static)
  for (int64_t b = 0; b < n; b++)
    for (int64_t k = 0; k < ch; k++)
      {
        const int64_t o = (b * ch + k) * inner;
        for (int64_t i = 0; i < inner; i++)
          y[o + i] = prelu_value (x[o + i], a[k]);
      }
  return TRUE;
}

/* The slopes' gradient first (sum over samples and positions, in double,
 * in a fixed order): dx may overwrite dy (backward_inplace). */
static gboolean
prelu_backward (NlOpCtx *c, GError **error)
{
  const float *x = nl_tensor_f32 (c->in[0]), *a = nl_tensor_f32 (c->in[1]);
  const float *dy = nl_tensor_f32 (c->out_grad[0]);
  int64_t n, ch, inner;
  prelu_dims (c->in[0], &n, &ch, &inner);

  if (c->in_grad[1])
    {
      float *da = nl_tensor_f32 (c->in_grad[1]);
#pragma omp parallel for if (n * ch * inner > NL_PAR_MIN) schedule (static)
      for (int64_t k = 0; k < ch; k++)
        {
          double s = 0;
          for (int64_t b = 0; b < n; b++)
            {
              const int64_t o = (b * ch + k) * inner;
              for (int64_t i = 0; i < inner; i++)
                s += x[o + i] > 0.0f ? 0.0 : (double) x[o + i] * dy[o + i];
            }
          da[k] = (float) s;
        }
    }
  if (c->in_grad[0])
    {
      float *dx = nl_tensor_f32 (c->in_grad[0]);
#pragma omp parallel for collapse (2) if (n * ch * inner > NL_PAR_MIN) schedule (static)
      for (int64_t b = 0; b < n; b++)
        for (int64_t k = 0; k < ch; k++)
          {
            const int64_t o = (b * ch + k) * inner;
            for (int64_t i = 0; i < inner; i++)
              dx[o + i] = prelu_grad (x[o + i], dy[o + i], a[k]);
          }
    }
  return TRUE;
}

static gboolean
shrink_forward (NlOpCtx *c, GError **error)
{
  const float *x = nl_tensor_f32 (c->in[0]);
  float *y = nl_tensor_f32 (c->out[0]);
  int64_t n = nl_numel (c->in[0]);
  const NlShrinkArgs *a = c->args;

#pragma omp parallel for simd if (parallel: n > NL_PAR_MIN) schedule (static)
  for (int64_t i = 0; i < n; i++)
    y[i] = shrink_value (x[i], a->lambd, a->bias);
  return TRUE;
}

static gboolean
shrink_backward (NlOpCtx *c, GError **error)
{
  const float *x = nl_tensor_f32 (c->in[0]);
  const float *dy = nl_tensor_f32 (c->out_grad[0]);
  float *dx;
  int64_t n = nl_numel (c->in[0]);
  const NlShrinkArgs *a = c->args;

  if (!c->in_grad[0])
    return TRUE;
  dx = nl_tensor_f32 (c->in_grad[0]);
#pragma omp parallel for simd if (parallel: n > NL_PAR_MIN) schedule (static)
  for (int64_t i = 0; i < n; i++)
    dx[i] = shrink_grad (x[i], dy[i], a->lambd);
  return TRUE;
}

const NlOpKernels nl_op_cpu_activation = { .forward = act_forward, .backward = act_backward };
const NlOpKernels nl_op_cpu_leaky_relu = { .forward = leaky_forward, .backward = leaky_backward };
const NlOpKernels nl_op_cpu_clip = { .forward = clip_forward, .backward = clip_backward };
const NlOpKernels nl_op_cpu_prelu = { .forward = prelu_forward, .backward = prelu_backward };
const NlOpKernels nl_op_cpu_shrink = { .forward = shrink_forward, .backward = shrink_backward };
