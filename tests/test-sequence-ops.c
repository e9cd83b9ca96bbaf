/* test-sequence-ops.c — the forward results of MatMul, SequencePool,
 * PositionalEmbedding (learned) and Embedding's padding_index against hand
 * loops written from their definitions. (test-gradcheck checks each
 * backward against its own forward, and test-attention-ref checks
 * MultiHeadAttention and the sinusoids against PyTorch and numpy; these
 * check the forwards themselves.) */
#include <math.h>
#include <string.h>

#include "nl-test-util.h"
#include "ops/nl-op-instance.h"
#include "ops/nl-op-registry.h"

static NlOpInstance *
make (const char *op, const char *const *params, int n, const char *const *shapes, guint64 seed)
{
  g_autoptr (GError) error = NULL;
  NlShape s[2];
  NlOpInstance *inst;
  for (int i = 0; i < n; i++)
    s[i] = nl_test_parse_shape (shapes[i]);
  inst = nl_op_instance_new (nl_op_lookup (op), params, n, s, TRUE, &error);
  g_assert_no_error (error);
  for (int i = 0; i < inst->n_in; i++)
    if (inst->in[i])
      nl_test_fill_uniform (inst->in[i], -1, 1, seed + i);
  return inst;
}

static void
set_lengths (NlOpInstance *inst, const float *len, int64_t n)
{
  inst->lengths = nl_tensor_new (NL_DTYPE_F32, 1, &n);
  memcpy (nl_tensor_f32 (inst->lengths), len, n * sizeof (float));
}

static void
run_forward (NlOpInstance *inst)
{
  g_autoptr (GError) error = NULL;
  nl_test_ok_or_die (nl_op_instance_forward (inst, &error), error, inst->def->name);
}

/* a[i] (M, K) or stored (K, M) when ta; element (r, c) of op(a) */
static float
at (const float *m, gboolean t, int64_t rows, int64_t cols, int64_t r, int64_t c)
{
  return t ? m[c * rows + r] : m[r * cols + c];
}

static void
test_matmul (void)
{
  static const struct {
    const char *a, *b;
    gboolean ta, tb;
  } cases[] = {
    { "2x3x4", "2x4x5", FALSE, FALSE }, { "2x4x3", "2x4x5", TRUE, FALSE }, { "2x3x4", "2x5x4", FALSE, TRUE },
    { "2x4x3", "2x5x4", TRUE, TRUE },   { "3x3x4", "4x5", FALSE, FALSE },   { "3x4x3", "5x4", TRUE, TRUE },
    { "2x2x3x4", "2x2x4x2", FALSE, FALSE },
  };
  for (guint k = 0; k < G_N_ELEMENTS (cases); k++)
    {
      const char *params[] = { "transpose_a", cases[k].ta ? "true" : "false", "transpose_b",
                               cases[k].tb ? "true" : "false", NULL };
      const char *shapes[] = { cases[k].a, cases[k].b };
      NlOpInstance *inst = make ("MatMul", params, 2, shapes, 10 * k);
      const NlTensor *A = inst->in[0], *B = inst->in[1], *Y = inst->out[0];
      int64_t M = Y->shape[Y->ndim - 2], N = Y->shape[Y->ndim - 1];
      int64_t K = cases[k].ta ? A->shape[A->ndim - 2] : A->shape[A->ndim - 1];
      int64_t batch = nl_tensor_numel (Y) / (M * N);
      gboolean shared = B->ndim == 2;

      run_forward (inst);
      for (int64_t i = 0; i < batch; i++)
        for (int64_t r = 0; r < M; r++)
          for (int64_t c = 0; c < N; c++)
            {
              const float *a = nl_tensor_f32 (A) + i * M * K, *b = nl_tensor_f32 (B) + (shared ? 0 : i * K * N);
              double want = 0;
              for (int64_t j = 0; j < K; j++)
                want += (double) at (a, cases[k].ta, M, K, r, j) * at (b, cases[k].tb, K, N, j, c);
              g_assert_cmpfloat_with_epsilon (nl_tensor_f32 (Y)[(i * M + r) * N + c], want, 1e-5);
            }
      nl_op_instance_free (inst);
    }
}

static void
test_sequence_pool (void)
{
  static const float len[3] = { 4, 2, 1 };
  static const char *const modes[] = { "last", "mean", "max" };
  const char *shapes[] = { "3x4x5" };

  for (int m = 0; m < 3; m++)
    {
      const char *params[] = { "mode", modes[m], NULL };
      NlOpInstance *inst = make ("SequencePool", params, 1, shapes, 7 + m);
      const float *x = nl_tensor_f32 (inst->in[0]), *y;
      set_lengths (inst, len, 3);
      run_forward (inst);
      y = nl_tensor_f32 (inst->out[0]);
      for (int b = 0; b < 3; b++)
        for (int c = 0; c < 5; c++)
          {
            double want = m == 2 ? -INFINITY : 0;
            for (int t = 0; t < len[b]; t++)
              {
                double v = x[(b * 4 + t) * 5 + c];
                want = m == 0 ? v : m == 1 ? want + v / len[b] : MAX (want, v);
              }
            g_assert_cmpfloat_with_epsilon (y[b * 5 + c], want, 1e-6);
          }
      nl_op_instance_free (inst);
    }
}

static void
test_positional_learned (void)
{
  static const float len[2] = { 3, 1 };
  const char *params[] = { "max_length", "6", NULL }, *shapes[] = { "2x3x4" };
  NlOpInstance *inst = make ("PositionalEmbedding", params, 1, shapes, 3);
  const float *x = nl_tensor_f32 (inst->in[0]), *w = nl_tensor_f32 (inst->in[1]), *y;

  g_assert_cmpint (inst->in[1]->shape[0], ==, 6);
  set_lengths (inst, len, 2);
  run_forward (inst);
  y = nl_tensor_f32 (inst->out[0]);
  for (int b = 0; b < 2; b++)
    for (int t = 0; t < 3; t++)
      for (int c = 0; c < 4; c++)
        g_assert_cmpfloat (y[(b * 3 + t) * 4 + c], ==, t < len[b] ? x[(b * 3 + t) * 4 + c] + w[t * 4 + c] : 0.0f);
  nl_op_instance_free (inst);
}

static void
test_embedding_padding (void)
{
  g_autoptr (GError) error = NULL;
  static const float idx[6] = { 0, 2, 1, 0, 2, 2 };
  const char *params[] = { "input_dim", "3", "output_dim", "2", "padding_index", "2", NULL }, *shapes[] = { "2x3" };
  const char *bad[] = { "input_dim", "3", "output_dim", "2", "padding_index", "3", NULL };
  NlOpInstance *inst = make ("Embedding", params, 1, shapes, 5);
  NlShape s = nl_test_parse_shape ("2x3");
  const float *w = nl_tensor_f32 (inst->in[1]), *y, *dw;

  memcpy (nl_tensor_f32 (inst->in[0]), idx, sizeof idx);
  run_forward (inst);
  y = nl_tensor_f32 (inst->out[0]);
  for (int i = 0; i < 6; i++)
    for (int k = 0; k < 2; k++)
      g_assert_cmpfloat (y[i * 2 + k], ==, idx[i] == 2 ? 0.0f : w[(int) idx[i] * 2 + k]);
  nl_tensor_fill (inst->out_grad[0], 1.0f);
  nl_test_ok_or_die (nl_op_instance_backward (inst, &error), error, "Embedding backward");
  dw = nl_tensor_f32 (inst->in_grad[1]);
  g_assert_cmpfloat (dw[0], ==, 2.0f); /* index 0 twice */
  g_assert_cmpfloat (dw[2], ==, 1.0f); /* index 1 once */
  g_assert_cmpfloat (dw[4], ==, 0.0f); /* the padding row: nothing */
  g_assert_cmpfloat (dw[5], ==, 0.0f);
  nl_op_instance_free (inst);
  /* a padding index outside the table is refused, naming it */
  g_assert_null (nl_op_instance_new (nl_op_lookup ("Embedding"), bad, 1, &s, TRUE, &error));
  g_assert_nonnull (error);
  g_assert_nonnull (strstr (error->message, "padding_index 3"));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/sequence-ops/matmul", test_matmul);
  g_test_add_func ("/sequence-ops/sequence-pool", test_sequence_pool);
  g_test_add_func ("/sequence-ops/positional-learned", test_positional_learned);
  g_test_add_func ("/sequence-ops/embedding-padding", test_embedding_padding);
  return g_test_run ();
}
