/* arith.c — the element-wise Mul and Sub (ops/nl-arith.h): of two data
 * inputs of the same shape, or of one input and a constant operand
 * broadcast over it. Backward writes input 1's gradient before input 0's,
 * so input 0's may overwrite out_grad (backward_inplace). */
#include <omp.h>

#include "ops/cpu/nl-cpu-util.h"
#include "ops/nl-arith.h"

static const char *const data_input[] = { "data" };
static const char *const operand_aux[] = { "operand" };

static const NlParamSpec mul_params[ARITH_N - 1] = {
  [ARITH_OPERAND_SHAPE] = { "operand_shape", NL_PARAM_SHAPE, 0, 1, 1e18, NULL, FALSE,
                            "With one input: the shape of the constant it is multiplied by, broadcast over "
                            "the input from its last dimension, e.g. [3, 1, 1] per channel (default: a scalar)" },
};

static const NlParamSpec sub_params[ARITH_N] = {
  [ARITH_OPERAND_SHAPE] = { "operand_shape", NL_PARAM_SHAPE, 0, 1, 1e18, NULL, FALSE,
                            "With one input: the shape of the constant it subtracts, broadcast over the input "
                            "from its last dimension, e.g. [3, 1, 1] per channel (default: a scalar)" },
  [ARITH_REVERSE] = { "reverse", NL_PARAM_BOOL, 0, 0, 1, NULL, FALSE,
                      "With one input: the constant minus the input instead" },
};

static void
sub_resolve (const NlParamValue *p, void *args)
{
  NlArithArgs *a = args;
  a->reverse = NL_P_BOOL (p, ARITH_REVERSE);
}

static gboolean
arith_infer (NlInferCtx *c, const char *op, gboolean has_reverse, GError **error)
{
  const NlParamValue *os = &c->p[ARITH_OPERAND_SHAPE];
  const NlShape *x = &c->in[0];
  char abuf[96], bbuf[96];

  if (c->n_data == 2)
    {
      if (os->n > 0 || (has_reverse && NL_P_BOOL (c->p, ARITH_REVERSE)))
        return nl_op_shape_error (error, "%s of two inputs takes no constant operand (operand_shape%s are for "
                                  "one input)", op, has_reverse ? ", reverse" : "");
      if (!nl_shape_equal (&c->in[1], x))
        return nl_op_shape_error (error, "%s needs inputs of the same shape, but input 1 is %s and input 2 is %s",
                                  op, nl_shape_format (x, abuf, sizeof abuf),
                                  nl_shape_format (&c->in[1], bbuf, sizeof bbuf));
      c->out[0] = *x;
      return TRUE;
    }
  if (c->n_data != 1)
    return nl_op_shape_error (error, "%s takes 1 or 2 inputs, but %d are connected", op, c->n_data);
  {
    NlShape s = { .ndim = os->n > 0 ? os->n : 1, .d = { 1 } };
    for (int k = 0; k < os->n; k++)
      s.d[k] = os->v[k];
    if (s.ndim > x->ndim || (s.ndim == x->ndim && s.d[0] != 1))
      return nl_op_shape_error (error, "%s: the constant operand %s would span the batch dimension of the "
                                "input %s (give it fewer dimensions)", op, nl_shape_format (&s, abuf, sizeof abuf),
                                nl_shape_format (x, bbuf, sizeof bbuf));
    for (int k = 0; k < s.ndim; k++)
      {
        int64_t want = x->d[x->ndim - s.ndim + k];
        if (s.d[k] != 1 && s.d[k] != want)
          return nl_op_shape_error (error, "%s: the constant operand %s does not broadcast over the input %s "
                                    "(each of its dimensions, aligned at the last, must be 1 or the input's)",
                                    op, nl_shape_format (&s, abuf, sizeof abuf),
                                    nl_shape_format (x, bbuf, sizeof bbuf));
      }
    c->aux[ARITH_OPERAND] = s;
  }
  c->out[0] = *x;
  return TRUE;
}

static gboolean
mul_infer (NlInferCtx *c, GError **error)
{
  return arith_infer (c, "Mul", FALSE, error);
}

static gboolean
sub_infer (NlInferCtx *c, GError **error)
{
  return arith_infer (c, "Sub", TRUE, error);
}

/* Mul's constant starts at 1 (the identity); Sub's at 0 (the default). */
static void
mul_init_aux (NlTensor *const *aux, const NlParamValue *p)
{
  if (aux[ARITH_OPERAND])
    {
      float *v = nl_tensor_f32 (aux[ARITH_OPERAND]);
      for (int64_t i = 0; i < nl_numel (aux[ARITH_OPERAND]); i++)
        v[i] = 1.0f;
    }
}

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

const NlOpDef nl_op_mul = {
  .name = "Mul",
  .category = "Structure",
  .doc = "Elementwise product of two inputs of equal shape, or of one input and a constant (a fixed scale)",
  .params = mul_params,
  .n_params = ARITH_N - 1,
  .inputs = data_input,
  .n_inputs = 1,
  .variadic = TRUE,
  .aux = operand_aux,
  .n_aux = 1,
  .n_outputs = 1,
  .needs = NL_NEEDS_INPUTS,
  .backward_inplace = TRUE,
  .infer_shape = mul_infer,
  .forward = mul_forward,
  .backward = mul_backward,
  .init_aux = mul_init_aux,
};

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

const NlOpDef nl_op_sub = {
  .name = "Sub",
  .category = "Structure",
  .doc = "Elementwise difference of two inputs of equal shape, or of one input and a constant (a fixed shift)",
  .params = sub_params,
  .n_params = ARITH_N,
  .inputs = data_input,
  .n_inputs = 1,
  .variadic = TRUE,
  .aux = operand_aux,
  .n_aux = 1,
  .n_outputs = 1,
  .needs = NL_NEEDS_NOTHING,
  .inplace = TRUE,
  .backward_inplace = TRUE,
  .args_size = sizeof (NlArithArgs),
  .resolve_args = sub_resolve,
  .infer_shape = sub_infer,
  .forward = sub_forward,
  .backward = sub_backward,
};
