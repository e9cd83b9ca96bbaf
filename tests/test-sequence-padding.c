/* test-sequence-padding.c — padding never leaks, for every sequence op.
 *
 * Every op of the registry that reads lengths (uses_lengths) runs twice with
 * the same weights and per-sample lengths: once with T steps, once with 2T,
 * where every step past a sample's length (in either instance) holds fresh
 * random garbage. At valid steps the outputs, the data inputs' gradients and
 * all weight gradients must agree (1e-5); padded output steps (where the
 * time axis is kept) and the gradients of padded input steps must be 0. The
 * output gradient is random at valid steps and 0 at padded ones. Each op's
 * parameters come from the table below; an op with uses_lengths and no row
 * fails the test, so a new sequence op cannot skip it. */
#include <math.h>
#include <string.h>

#include "nl-test-util.h"
#include "ops/nl-op-instance.h"
#include "ops/nl-op-registry.h"

#define B 3
#define T 4
#define TOL 1e-5

typedef struct {
  const char *op, *what;
  const char *params[12]; /* name, value, ..., NULL */
  const char *in[2];      /* data input shapes, "T" for the time axis: "3xTx4" */
} Row;

/* lengths of the B samples: one full, one short, one of a single step */
static const float lengths[B] = { T, 2, 1 };

static const Row rows[] = {
  { "MultiHeadAttention", "self", { "heads", "2", NULL }, { "3xTx4" } },
  { "MultiHeadAttention", "causal no bias", { "heads", "2", "causal", "true", "use_bias", "false", NULL },
    { "3xTx4" } },
  { "MultiHeadAttention", "cross, memory as long", { "heads", "1", "key_size", "3", "units", "2", NULL },
    { "3xTx4", "3xTx5" } },
  { "PositionalEmbedding", "learned", { "max_length", "16", NULL }, { "3xTx3" } },
  { "PositionalEmbedding", "sinusoidal", { "mode", "sinusoidal", NULL }, { "3xTx6" } },
  { "SequencePool", "last", { "mode", "last", NULL }, { "3xTx3" } },
  { "SequencePool", "mean", { "mode", "mean", NULL }, { "3xTx3" } },
  { "SequencePool", "max", { "mode", "max", NULL }, { "3xTx3" } },
  { "LSTM", "all steps", { "units", "3", NULL }, { "3xTx2" } },
  { "LSTM", "bidirectional last, 2 layers",
    { "units", "2", "layers", "2", "bidirectional", "true", "output", "last", NULL }, { "3xTx3" } },
  { "LSTM", "bidirectional sum", { "units", "3", "bidirectional", "true", "merge", "sum", NULL }, { "3xTx2" } },
  { "LSTM", "initial state", { "units", "3", NULL }, { "3xTx2", "3x2x3" } },
  { "GRU", "all steps", { "units", "3", NULL }, { "3xTx2" } },
  { "GRU", "initial state, 2 layers", { "units", "2", "layers", "2", NULL }, { "3xTx2", "3x2x2" } },
  { "GRU", "bidirectional last classic",
    { "units", "2", "bidirectional", "true", "output", "last", "variant", "classic", NULL }, { "3xTx3" } },
};

/* "3xTx4" with T = steps; *timed: whether axis 1 is the time axis */
static NlShape
shape_at (const char *spec, int64_t steps, gboolean *timed)
{
  g_autofree char *s = g_strdup (spec);
  char *t = strstr (s, "xT");
  NlShape shape;

  *timed = t != NULL;
  if (t)
    {
      g_autofree char *tail = g_strdup (t + 2);
      g_autofree char *n = g_strdup_printf ("%.*sx%" G_GINT64_FORMAT "%s", (int) (t - s), s, steps, tail);
      return nl_test_parse_shape (n);
    }
  shape = nl_test_parse_shape (s);
  return shape;
}

static NlOpInstance *
instance_at (const NlOpDef *def, const Row *r, int64_t steps, gboolean timed[2])
{
  g_autoptr (GError) error = NULL;
  NlShape in[2];
  int n = 0;
  NlOpInstance *inst;
  int64_t nb = B;

  for (; n < 2 && r->in[n]; n++)
    in[n] = shape_at (r->in[n], steps, &timed[n]);
  inst = nl_op_instance_new (def, r->params, n, in, TRUE, &error);
  g_assert_no_error (error);
  inst->lengths = nl_tensor_new (NL_DTYPE_F32, 1, &nb);
  memcpy (nl_tensor_f32 (inst->lengths), lengths, sizeof lengths);
  return inst;
}

/* (B, steps, C...) tensor: x at valid steps from src (steps_src long), fresh garbage elsewhere */
static void
fill_timed (NlTensor *t, const NlTensor *src, GRand *g)
{
  int64_t steps = t->shape[1], per = nl_tensor_numel (t) / (B * steps), ssteps = src ? src->shape[1] : 0;
  float *p = nl_tensor_f32 (t);
  const float *s = src ? nl_tensor_f32 (src) : NULL;

  for (int64_t b = 0; b < B; b++)
    for (int64_t k = 0; k < steps; k++)
      for (int64_t j = 0; j < per; j++)
        p[(b * steps + k) * per + j] = src && k < lengths[b] ? s[(b * ssteps + k) * per + j]
                                       : k < lengths[b] ? (float) g_rand_double_range (g, -1, 1)
                                                        : (float) g_rand_double_range (g, -10, 10);
}

/* the same, but 0 at padded steps (an output gradient) */
static void
zero_padded (NlTensor *t)
{
  int64_t steps = t->shape[1], per = nl_tensor_numel (t) / (B * steps);
  float *p = nl_tensor_f32 (t);
  for (int64_t b = 0; b < B; b++)
    for (int64_t k = (int64_t) lengths[b]; k < steps; k++)
      memset (p + (b * steps + k) * per, 0, per * sizeof (float));
}

/* A mismatch: a test failure, or (planted) only counted. */
static gboolean planting;
static int n_mismatches;
#define MISMATCH(...) (n_mismatches++, planting ? (void) 0 : g_test_fail_printf (__VA_ARGS__))

/* Compares a (steps_a) with b (steps_b) at every sample's valid steps, and
 * checks that both are 0 at padded ones; timed FALSE: the whole tensors. */
static void
compare_steps (const char *what, const char *name, const NlTensor *a, const NlTensor *b, gboolean timed)
{
  const float *pa = nl_tensor_f32 (a), *pb = nl_tensor_f32 (b);

  if (!timed)
    {
      for (int64_t i = 0; i < nl_tensor_numel (a); i++)
        if (!(fabs (pa[i] - pb[i]) <= TOL * MAX (1.0, fabs (pb[i]))))
          MISMATCH ("%s: %s[%" G_GINT64_FORMAT "] is %.9g at T and %.9g at 2T", what, name, i, pa[i],
                              pb[i]);
      return;
    }
  int64_t sa = a->shape[1], sb = b->shape[1], per = nl_tensor_numel (a) / (B * sa);
  for (int64_t s = 0; s < B; s++)
    for (int64_t k = 0; k < sb; k++)
      for (int64_t j = 0; j < per; j++)
        {
          float vb = pb[(s * sb + k) * per + j], va = k < sa ? pa[(s * sa + k) * per + j] : 0.0f;
          if (k >= lengths[s] && (va != 0.0f || vb != 0.0f))
            MISMATCH ("%s: %s of sample %" G_GINT64_FORMAT " at padded step %" G_GINT64_FORMAT
                                " is %g (T) / %g (2T), not 0", what, name, s, k, va, vb);
          else if (k < lengths[s] && !(fabs (va - vb) <= TOL * MAX (1.0, fabs (vb))))
            MISMATCH ("%s: %s of sample %" G_GINT64_FORMAT " step %" G_GINT64_FORMAT " [%" G_GINT64_FORMAT
                                "] is %.9g at T and %.9g at 2T", what, name, s, k, j, va, vb);
        }
}

static void
run_row (const NlOpDef *def, const Row *r)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *what = g_strdup_printf ("%s / %s", r->op, r->what);
  gboolean timed[2] = { FALSE, FALSE }, timed2[2];
  NlOpInstance *a = instance_at (def, r, T, timed), *b = instance_at (def, r, 2 * T, timed2);
  GRand *g = g_rand_new_with_seed (g_str_hash (what));
  gboolean out_timed;

  for (int i = 0; i < a->n_data; i++)
    if (timed[i])
      {
        fill_timed (a->in[i], NULL, g);
        fill_timed (b->in[i], a->in[i], g);
      }
    else
      {
        nl_test_fill_uniform (a->in[i], -1, 1, g_rand_int (g));
        memcpy (nl_tensor_f32 (b->in[i]), nl_tensor_f32 (a->in[i]), nl_tensor_numel (a->in[i]) * sizeof (float));
      }
  for (int i = a->n_data; i < a->n_in; i++)
    if (a->in[i])
      {
        g_assert_cmpint (nl_tensor_numel (a->in[i]), ==, nl_tensor_numel (b->in[i]));
        nl_test_fill_uniform (a->in[i], -0.5f, 0.5f, g_rand_int (g));
        memcpy (nl_tensor_f32 (b->in[i]), nl_tensor_f32 (a->in[i]), nl_tensor_numel (a->in[i]) * sizeof (float));
      }
  out_timed = a->out[0]->ndim >= 3 && a->out[0]->shape[1] == T && b->out[0]->shape[1] == 2 * T;
  if (out_timed)
    {
      fill_timed (a->out_grad[0], NULL, g);
      fill_timed (b->out_grad[0], a->out_grad[0], g);
      zero_padded (a->out_grad[0]);
      zero_padded (b->out_grad[0]);
    }
  else
    {
      nl_test_fill_uniform (a->out_grad[0], -1, 1, g_rand_int (g));
      memcpy (nl_tensor_f32 (b->out_grad[0]), nl_tensor_f32 (a->out_grad[0]),
              nl_tensor_numel (a->out_grad[0]) * sizeof (float));
    }
  nl_test_ok_or_die (nl_op_instance_forward (a, &error) && nl_op_instance_forward (b, &error), error, what);
  nl_test_ok_or_die (nl_op_instance_backward (a, &error) && nl_op_instance_backward (b, &error), error, what);

  compare_steps (what, "output", a->out[0], b->out[0], out_timed);
  for (int i = 0; i < a->n_data; i++)
    if (a->in_grad[i])
      compare_steps (what, def->inputs[i], a->in_grad[i], b->in_grad[i], timed[i]);
  for (int i = a->n_data; i < a->n_in; i++)
    if (a->in_grad[i] && a->in[i])
      compare_steps (what, def->weights[i - a->n_data], a->in_grad[i], b->in_grad[i], FALSE);
  g_test_message ("%s: T and 2T agree", what);
  g_rand_free (g);
  nl_op_instance_free (a);
  nl_op_instance_free (b);
}

static void
test_every_sequence_op (void)
{
  int covered = 0;

  for (int id = 0; id < NL_OP_COUNT; id++)
    {
      const NlOpDef *def = nl_op_get ((NlOpId) id);
      int n = 0;
      if (!def || !def->uses_lengths || def->no_backward)
        continue;
      for (guint r = 0; r < G_N_ELEMENTS (rows); r++)
        if (strcmp (rows[r].op, def->name) == 0)
          {
            run_row (def, &rows[r]);
            n++;
          }
      if (n == 0)
        g_test_fail_printf ("%s reads lengths but has no row in tests/test-sequence-padding.c", def->name);
      covered += n > 0;
    }
  g_assert_cmpint (covered, >=, 3); /* at least this branch's own ops */
}

/* The check can fail: a garbage step that reaches a valid output, or a
 * padded step that is not 0, shows. */
static void
test_leak_found (void)
{
  static const float x_a[] = { 1, 2, 3, 4, 5, 0 }, x_b[] = { 1, 7, 3, 4, 5, 0 }, x_c[] = { 1, 2, 3, 4, 5, 1e-9f };
  int64_t shape[3] = { B, 2, 1 };
  g_autoptr (NlTensor) a = nl_tensor_new (NL_DTYPE_F32, 3, shape);
  g_autoptr (NlTensor) b = nl_tensor_new (NL_DTYPE_F32, 3, shape);

  planting = TRUE;
  memcpy (nl_tensor_f32 (a), x_a, sizeof x_a);
  memcpy (nl_tensor_f32 (b), x_a, sizeof x_a);
  n_mismatches = 0;
  compare_steps ("planted", "output", a, b, TRUE);
  g_assert_cmpint (n_mismatches, ==, 0);
  memcpy (nl_tensor_f32 (b), x_b, sizeof x_b); /* sample 0 is full: step 1 differs */
  compare_steps ("planted", "output", a, b, TRUE);
  g_assert_cmpint (n_mismatches, ==, 1);
  memcpy (nl_tensor_f32 (b), x_c, sizeof x_c); /* sample 2 has one step: step 1 is not 0 */
  compare_steps ("planted", "output", a, b, TRUE);
  g_assert_cmpint (n_mismatches, ==, 2);
  planting = FALSE;
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/sequence-padding/every-op", test_every_sequence_op);
  g_test_add_func ("/sequence-padding/leak-found", test_leak_found);
  return g_test_run ();
}
