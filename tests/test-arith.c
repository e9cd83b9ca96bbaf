/* test-arith.c — Mul, Sub (ops/cpu/arith.c) and Transpose
 * (ops/cpu/structure.c) by their values: two inputs, a constant operand
 * broadcast over one input (per channel, per feature, a scalar, reversed;
 * every broadcast form bit for bit against the numpy rule), a permutation and its gradient's inverse; and the shapes each refuses,
 * one message naming the problem. (Gradients against finite differences:
 * test-gradcheck.) */
#include <string.h>

#include "core/nl-threads.h"
#include "ops/nl-op-instance.h"
#include "ops/nl-op-registry.h"
#include "tests/nl-test-util.h"

#define P(...) ((const char *const[]) { __VA_ARGS__, NULL })

static NlOpInstance *
make (const char *op, const char *const *params, int n_data, const char *const *shapes)
{
  g_autoptr (GError) error = NULL;
  NlShape s[4];
  NlOpInstance *inst;
  for (int k = 0; k < n_data; k++)
    s[k] = nl_test_parse_shape (shapes[k]);
  inst = nl_op_instance_new (nl_op_lookup (op), params, n_data, s, TRUE, &error);
  g_assert_no_error (error);
  return inst;
}

/* t[i] = scale * i + offset */
static void
ramp (NlTensor *t, float scale, float offset)
{
  for (int64_t i = 0; i < nl_tensor_numel (t); i++)
    nl_tensor_f32 (t)[i] = scale * (float) i + offset;
}

static void
expect_error (const char *op, const char *const *params, int n_data, const char *const *shapes, const char *frag)
{
  g_autoptr (GError) error = NULL;
  NlShape s[4];
  for (int k = 0; k < n_data; k++)
    s[k] = nl_test_parse_shape (shapes[k]);
  g_assert_null (nl_op_instance_new (nl_op_lookup (op), params, n_data, s, TRUE, &error));
  g_assert_nonnull (error);
  if (!strstr (error->message, frag))
    g_error ("%s: message \"%s\" lacks \"%s\"", op, error->message, frag);
  g_test_message ("%s: %s", op, error->message);
}

static void
test_two_inputs (void)
{
  NlOpInstance *mul = make ("Mul", NULL, 2, P ("2x3", "2x3")), *sub = make ("Sub", NULL, 2, P ("2x3", "2x3"));
  NlOpInstance *both[2] = { mul, sub };
  for (int k = 0; k < 2; k++)
    {
      NlOpInstance *t = both[k];
      g_assert_null (t->aux[0]); /* no constant with two inputs */
      ramp (t->in[0], 1, 1);     /* 1 2 3 4 5 6 */
      ramp (t->in[1], -1, 3);    /* 3 2 1 0 -1 -2 */
      ramp (t->out_grad[0], 1, 0);
      g_assert_true (nl_op_instance_forward (t, NULL));
      g_assert_true (nl_op_instance_backward (t, NULL));
    }
  g_assert_cmpfloat (nl_tensor_f32 (mul->out[0])[1], ==, 4.0f);
  g_assert_cmpfloat (nl_tensor_f32 (mul->out[0])[5], ==, -12.0f);
  g_assert_cmpfloat (nl_tensor_f32 (mul->in_grad[0])[5], ==, 5.0f * -2.0f);
  g_assert_cmpfloat (nl_tensor_f32 (mul->in_grad[1])[5], ==, 5.0f * 6.0f);
  g_assert_cmpfloat (nl_tensor_f32 (sub->out[0])[0], ==, -2.0f);
  g_assert_cmpfloat (nl_tensor_f32 (sub->out[0])[5], ==, 8.0f);
  g_assert_cmpfloat (nl_tensor_f32 (sub->in_grad[0])[4], ==, 4.0f);
  g_assert_cmpfloat (nl_tensor_f32 (sub->in_grad[1])[4], ==, -4.0f);
  nl_op_instance_free (mul);
  nl_op_instance_free (sub);
}

/* x (2, 3, 2, 2) times a per-channel (3, 1, 1) constant, minus a (2) one */
static void
test_constant (void)
{
  NlOpInstance *mul = make ("Mul", P ("operand_shape", "[3, 1, 1]"), 1, P ("2x3x2x2"));
  NlOpInstance *sub = make ("Sub", P ("operand_shape", "[2]"), 1, P ("2x3x2x2"));
  NlOpInstance *rsub = make ("Sub", P ("reverse", "true"), 1, P ("4"));
  NlOpInstance *scal = make ("Mul", NULL, 1, P ("2x5"));
  const float *y;

  g_assert_cmpint (mul->aux[0]->ndim, ==, 3);
  g_assert_cmpint (mul->aux[0]->shape[0], ==, 3);
  g_assert_cmpint (nl_tensor_numel (scal->aux[0]), ==, 1);
  ramp (mul->in[0], 1, 0);
  ramp (mul->aux[0], 1, 1); /* channel c scaled by c + 1 */
  ramp (mul->out_grad[0], 0, 1);
  g_assert_true (nl_op_instance_forward (mul, NULL));
  g_assert_true (nl_op_instance_backward (mul, NULL));
  y = nl_tensor_f32 (mul->out[0]);
  for (int i = 0; i < 24; i++)
    g_assert_cmpfloat (y[i], ==, (float) i * (float) ((i / 4) % 3 + 1));
  for (int i = 0; i < 24; i++)
    g_assert_cmpfloat (nl_tensor_f32 (mul->in_grad[0])[i], ==, (float) ((i / 4) % 3 + 1));

  ramp (sub->in[0], 1, 0);
  nl_tensor_f32 (sub->aux[0])[0] = 10;
  nl_tensor_f32 (sub->aux[0])[1] = 20;
  g_assert_true (nl_op_instance_forward (sub, NULL));
  for (int i = 0; i < 24; i++)
    g_assert_cmpfloat (nl_tensor_f32 (sub->out[0])[i], ==, (float) i - (i % 2 ? 20.0f : 10.0f));

  ramp (rsub->in[0], 1, 0);
  nl_tensor_f32 (rsub->aux[0])[0] = 1;
  ramp (rsub->out_grad[0], 0, 1);
  g_assert_true (nl_op_instance_forward (rsub, NULL));
  g_assert_true (nl_op_instance_backward (rsub, NULL));
  g_assert_cmpfloat (nl_tensor_f32 (rsub->out[0])[3], ==, -2.0f);
  g_assert_cmpfloat (nl_tensor_f32 (rsub->in_grad[0])[3], ==, -1.0f);

  /* a fresh Mul scales by 1 */
  ramp (scal->in[0], 1, 0);
  g_assert_true (nl_op_instance_forward (scal, NULL));
  g_assert_cmpfloat (nl_tensor_f32 (scal->out[0])[7], ==, 7.0f);
  nl_op_instance_free (mul);
  nl_op_instance_free (sub);
  nl_op_instance_free (rsub);
  nl_op_instance_free (scal);
}

/* Every element of Mul and Sub (both ways) with a constant of each
 * broadcast form (per channel, rows, middle blocks, a scalar, whole
 * samples; sizes past NL_PAR_MIN too), forward and input gradient, equal
 * bit for bit to the numpy rule applied element by element, on 1 and on 3
 * threads (parts that end inside a row). */
static void
test_broadcasts (void)
{
  static const struct {
    const char *in, *operand;
  } cases[] = {
    { "2x3x4x4", "[3, 1, 1]" }, { "8x7x40x41", "[7, 1, 1]" }, { "4x2x5", "[1, 5]" },
    { "6x7x9x5", "[1, 5]" },    { "3x2x3x4", "[2, 1, 4]" },  { "5x16x30x31", "[16, 1, 31]" },
    { "2x3x4x5", "[4, 1]" },    { "4x9001", "[9001]" },      { "3x5", "[1]" },
    { "64x1000", "[1]" },       { "1x3", "[1, 3]" },         { "2x1x3", "[1, 1, 3]" },
    { "5x1x1", "[1, 1]" },      { "1x1", "[1]" },            { "3x4x1x5", "[4, 1, 1]" },
  };
  static const char *const ops[][3] = { { "Mul", NULL, NULL }, { "Sub", "reverse", "false" },
                                        { "Sub", "reverse", "true" } };
  const int saved = nl_threads_get ();
  GRand *r = g_rand_new_with_seed (7);

  for (guint c = 0; c < G_N_ELEMENTS (cases); c++)
    for (guint o = 0; o < G_N_ELEMENTS (ops); o++)
      for (int threads = 1; threads <= 3; threads += 2)
        {
          const char *params[] = { "operand_shape", cases[c].operand, ops[o][1], ops[o][2], NULL };
          NlOpInstance *t = make (ops[o][0], params, 1, P (cases[c].in));
          const gboolean mul = o == 0;
          const float sign = o == 2 ? -1.0f : 1.0f;
          const NlTensor *k = t->aux[0];
          const int64_t n = nl_tensor_numel (t->in[0]);
          const float *x = nl_tensor_f32 (t->in[0]), *dy = nl_tensor_f32 (t->out_grad[0]);

          nl_threads_set (threads);
          for (int64_t i = 0; i < n; i++)
            {
              nl_tensor_f32 (t->in[0])[i] = (float) g_rand_double_range (r, -2, 2);
              nl_tensor_f32 (t->out_grad[0])[i] = (float) g_rand_double_range (r, -2, 2);
            }
          for (int64_t j = 0; j < nl_tensor_numel (k); j++)
            nl_tensor_f32 (t->aux[0])[j] = (float) g_rand_double_range (r, -2, 2);
          g_assert_true (nl_op_instance_forward (t, NULL));
          g_assert_true (nl_op_instance_backward (t, NULL));
          for (int64_t i = 0; i < n; i++)
            {
              /* the constant's element at i: the input's index, dimension
               * by dimension from the last, 0 where the constant has 1 */
              int64_t rest = i, j = 0, kstride = 1;
              for (int d = t->in[0]->ndim - 1, e = k->ndim - 1; d >= 0; d--, e--)
                {
                  const int64_t at = rest % t->in[0]->shape[d];
                  rest /= t->in[0]->shape[d];
                  if (e >= 0)
                    {
                      j += (k->shape[e] == 1 ? 0 : at) * kstride;
                      kstride *= k->shape[e];
                    }
                }
              const float kv = nl_tensor_f32 (k)[j];
              const float y = mul ? x[i] * kv : sign * (x[i] - kv), dx = mul ? dy[i] * kv : sign * dy[i];
              if (memcmp (&y, &nl_tensor_f32 (t->out[0])[i], sizeof y) != 0
                  || memcmp (&dx, &nl_tensor_f32 (t->in_grad[0])[i], sizeof dx) != 0)
                g_error ("%s %s operand %s, %d threads: element %" G_GINT64_FORMAT " is %g, gradient %g; want %g, %g",
                         ops[o][0], cases[c].in, cases[c].operand, threads, i, nl_tensor_f32 (t->out[0])[i],
                         nl_tensor_f32 (t->in_grad[0])[i], y, dx);
            }
          nl_op_instance_free (t);
        }
  nl_threads_set (saved);
  g_rand_free (r);
}

static void
test_transpose (void)
{
  NlOpInstance *t = make ("Transpose", P ("axes", "[0, 2, 3, 1]"), 1, P ("2x3x4x5"));
  NlOpInstance *d = make ("Transpose", NULL, 1, P ("2x3x4"));
  const float *y;

  g_assert_cmpint (t->out[0]->shape[1], ==, 4);
  g_assert_cmpint (t->out[0]->shape[3], ==, 3);
  ramp (t->in[0], 1, 0);
  ramp (t->out_grad[0], 1, 0);
  g_assert_true (nl_op_instance_forward (t, NULL));
  g_assert_true (nl_op_instance_backward (t, NULL));
  y = nl_tensor_f32 (t->out[0]);
  /* y[n, h, w, c] = x[n, c, h, w] and dx[n, c, h, w] = dy[n, h, w, c] */
  for (int n = 0; n < 2; n++)
    for (int c = 0; c < 3; c++)
      for (int h = 0; h < 4; h++)
        for (int w = 0; w < 5; w++)
          {
            int xi = ((n * 3 + c) * 4 + h) * 5 + w, yi = ((n * 4 + h) * 5 + w) * 3 + c;
            g_assert_cmpfloat (y[yi], ==, (float) xi);
            g_assert_cmpfloat (nl_tensor_f32 (t->in_grad[0])[xi], ==, (float) yi);
          }
  /* the default reverses the dimensions after the batch */
  g_assert_cmpint (d->out[0]->shape[0], ==, 2);
  g_assert_cmpint (d->out[0]->shape[1], ==, 4);
  g_assert_cmpint (d->out[0]->shape[2], ==, 3);
  ramp (d->in[0], 1, 0);
  g_assert_true (nl_op_instance_forward (d, NULL));
  g_assert_cmpfloat (nl_tensor_f32 (d->out[0])[1], ==, 4.0f); /* y[0, 0, 1] = x[0, 1, 0] */
  nl_op_instance_free (t);
  nl_op_instance_free (d);
}

static void
test_errors (void)
{
  expect_error ("Mul", NULL, 2, P ("2x3", "3x2"), "same shape");
  expect_error ("Sub", P ("operand_shape", "[3]"), 2, P ("2x3", "2x3"), "two inputs");
  expect_error ("Sub", P ("reverse", "true"), 2, P ("2x3", "2x3"), "two inputs");
  expect_error ("Mul", P ("operand_shape", "[4]"), 1, P ("2x3"), "does not broadcast");
  expect_error ("Mul", P ("operand_shape", "[2, 3]"), 1, P ("2x3"), "batch dimension");
  expect_error ("Sub", P ("operand_shape", "[1, 2, 3]"), 1, P ("2x3"), "batch dimension");
  expect_error ("Mul", P ("operand_shape", "[0]"), 1, P ("2x3"), "out of range");
  expect_error ("Transpose", P ("axes", "[0, 1]"), 1, P ("2x3x4"), "axes has 2 entries");
  expect_error ("Transpose", P ("axes", "[0, 1, 1]"), 1, P ("2x3x4"), "every dimension");
  expect_error ("Transpose", P ("axes", "[1, 0, 2]"), 1, P ("2x3x4"), "batch dimension stays first");
  expect_error ("Transpose", NULL, 2, P ("2x3", "2x3"), "exactly one input");
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/arith/two-inputs", test_two_inputs);
  g_test_add_func ("/arith/constant", test_constant);
  g_test_add_func ("/arith/broadcasts", test_broadcasts);
  g_test_add_func ("/arith/transpose", test_transpose);
  g_test_add_func ("/arith/errors", test_errors);
  return g_test_run ();
}
