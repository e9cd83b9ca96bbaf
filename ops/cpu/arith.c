/* arith.c — the CPU kernels of the element-wise Mul and Sub
 * (ops/nl-arith.h; definitions: ops/defs/arith.c): of two data
 * inputs of the same shape, or of one input and a constant operand
 * broadcast over it. Backward writes input 1's gradient before input 0's,
 * so input 0's may overwrite out_grad (backward_inplace). */
#include <omp.h>

#include "ops/cpu/nl-cpu-util.h"
#include "ops/nl-arith.h"

/* The loops of both kernels. Each macro writes its loop around an element
 * expression given as text (EXPR may use the index i; OPERAND_LOOP's also
 * the constant's element k), so every use compiles to a loop with its
 * operator fixed, which GCC vectorises where the loop is contiguous. An
 * operator passed as a value would reach the loop body, which OpenMP
 * outlines into a function of its own, only as a run-time variable. */

/* dst[i] = EXPR for i < n; threads past NL_PAR_MIN. */
#define ARITH_LOOP(dst, n, EXPR)                                                         \
  do                                                                                     \
    {                                                                                    \
      float *dst_ = (dst);                                                               \
      int64_t n_ = (n);                                                                  \
      _Pragma ("omp parallel for simd if (parallel: n_ > NL_PAR_MIN) schedule (static)") \
      for (int64_t i = 0; i < n_; i++)                                                   \
        dst_[i] = (EXPR);                                                                \
    }                                                                                    \
  while (0)

/* The constant read over a tensor shaped like `like`, as rows of `run`
 * contiguous elements, row r reading from the constant's element
 * nl_strided_index (&rows, r) on: one element for the whole row (step 0)
 * or `run` consecutive ones (step 1). The broadcast's merged dimensions
 * alternate between repeating the constant (stride 0) and reading it, and
 * the innermost that reads has stride 1, so the last is one of the two;
 * an outermost one that repeats adds nothing to where a row reads, so
 * rows leaves it out (the index wraps the others). */
typedef struct {
  NlStrided rows;
  int64_t n, run, step;
} ArithRuns;

static ArithRuns
arith_runs (const NlTensor *like, const NlTensor *operand)
{
  NlStrided s = nl_arith_operand (like, operand);
  ArithRuns r = { .n = nl_numel (like) };

  r.run = s.nd > 0 ? s.size[s.nd - 1] : r.n; /* nd 0: a single element */
  r.run = MAX (r.run, 1);                    /* an empty tensor has no rows */
  r.step = s.nd > 0 ? s.stride[s.nd - 1] : 0;
  for (int d = s.nd > 0 && s.stride[0] == 0; d < s.nd - 1; d++)
    {
      r.rows.size[r.rows.nd] = s.size[d];
      r.rows.stride[r.rows.nd] = s.stride[d];
      r.rows.nd++;
    }
  return r;
}

/* This thread's part [*lo, *hi) of n elements: contiguous parts in thread
 * order, as schedule (static) would cut them. */
static inline void
arith_share (int64_t n, int64_t *lo, int64_t *hi)
{
  const int64_t t = omp_get_thread_num (), nt = omp_get_num_threads ();
  *lo = n / nt * t + MIN (t, n % nt);
  *hi = *lo + n / nt + (t < n % nt);
}

/* dst[i] = EXPR over a tensor shaped like `like`, k the constant operand's
 * element at i (broadcast). Each thread walks its part row by row: one
 * index per row, and the loop over the row is contiguous, with k one value
 * or a contiguous vector, so it vectorises. */
#define ARITH_OPERAND_LOOP(c, dst, like, EXPR)                                 \
  do                                                                           \
    {                                                                          \
      float *dst_ = (dst);                                                     \
      const float *k_ = nl_tensor_f32 ((c)->aux[ARITH_OPERAND]);               \
      const ArithRuns r_ = arith_runs ((like), (c)->aux[ARITH_OPERAND]);       \
      _Pragma ("omp parallel if (r_.n > NL_PAR_MIN)")                          \
      {                                                                        \
        int64_t lo_, hi_;                                                      \
        arith_share (r_.n, &lo_, &hi_);                                        \
        for (int64_t row_ = lo_ / r_.run, i0_ = lo_; i0_ < hi_; row_++)        \
          {                                                                    \
            const int64_t at_ = row_ * r_.run, end_ = MIN (hi_, at_ + r_.run); \
            const float *kr_ = k_ + nl_strided_index (&r_.rows, row_);         \
            if (r_.step == 0)                                                  \
              {                                                                \
                const float k = kr_[0];                                        \
                _Pragma ("omp simd")                                           \
                for (int64_t i = i0_; i < end_; i++)                           \
                  dst_[i] = (EXPR);                                            \
              }                                                                \
            else                                                               \
              {                                                                \
                _Pragma ("omp simd")                                           \
                for (int64_t i = i0_; i < end_; i++)                           \
                  {                                                            \
                    const float k = kr_[i - at_];                              \
                    dst_[i] = (EXPR);                                          \
                  }                                                            \
              }                                                                \
            i0_ = end_;                                                        \
          }                                                                    \
      }                                                                        \
    }                                                                          \
  while (0)

/* The forward: y = a OP b of two inputs, or y = SIGN * (a OP k) of one
 * input and the constant. */
#define ARITH_FORWARD(c, OP, SIGN)                                                              \
  do                                                                                            \
    {                                                                                           \
      const float *a = nl_tensor_f32 ((c)->in[0]);                                              \
      if ((c)->n_data == 2)                                                                     \
        {                                                                                       \
          const float *b = nl_tensor_f32 ((c)->in[1]);                                          \
          ARITH_LOOP (nl_tensor_f32 ((c)->out[0]), nl_numel ((c)->out[0]), a[i] OP b[i]);       \
        }                                                                                       \
      else                                                                                      \
        ARITH_OPERAND_LOOP (c, nl_tensor_f32 ((c)->out[0]), (c)->out[0], (SIGN) * (a[i] OP k)); \
    }                                                                                           \
  while (0)

static gboolean
mul_forward (NlOpCtx *c, GError **error)
{
  ARITH_FORWARD (c, *, 1.0f);
  return TRUE;
}

static gboolean
mul_backward (NlOpCtx *c, GError **error)
{
  const float *dy = nl_tensor_f32 (c->out_grad[0]);
  int64_t n = nl_numel (c->out_grad[0]);

  if (c->n_data == 2)
    {
      const float *a = nl_tensor_f32 (c->in[0]), *b = nl_tensor_f32 (c->in[1]);
      if (c->in_grad[1])
        ARITH_LOOP (nl_tensor_f32 (c->in_grad[1]), n, dy[i] * a[i]);
      if (c->in_grad[0])
        ARITH_LOOP (nl_tensor_f32 (c->in_grad[0]), n, dy[i] * b[i]);
    }
  else if (c->in_grad[0])
    ARITH_OPERAND_LOOP (c, nl_tensor_f32 (c->in_grad[0]), c->out_grad[0], dy[i] * k);
  return TRUE;
}

/* Reversed, Sub of the constant is -(a - k) = k - a, exactly. */
static float
sub_sign (const NlOpCtx *c)
{
  return c->n_data == 1 && ((const NlArithArgs *) c->args)->reverse ? -1.0f : 1.0f;
}

static gboolean
sub_forward (NlOpCtx *c, GError **error)
{
  float sign = sub_sign (c); /* not in the loop: SIGN is text */
  ARITH_FORWARD (c, -, sign);
  return TRUE;
}

static gboolean
sub_backward (NlOpCtx *c, GError **error)
{
  const float *dy = nl_tensor_f32 (c->out_grad[0]);
  int64_t n = nl_numel (c->out_grad[0]);
  float sign = sub_sign (c);

  if (c->n_data == 2 && c->in_grad[1])
    ARITH_LOOP (nl_tensor_f32 (c->in_grad[1]), n, -dy[i]);
  if (c->in_grad[0])
    ARITH_LOOP (nl_tensor_f32 (c->in_grad[0]), n, sign * dy[i]);
  return TRUE;
}

const NlOpKernels nl_op_cpu_mul = { .forward = mul_forward, .backward = mul_backward };
const NlOpKernels nl_op_cpu_sub = { .forward = sub_forward, .backward = sub_backward };
