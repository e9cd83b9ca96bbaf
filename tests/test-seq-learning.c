/* test-seq-learning.c — a small transformer learns per-step tasks, through
 * the engine's graph and program like a training run: Embedding (padding
 * index 0) + PositionalEmbedding + MultiHeadAttention + Add + LayerNorm +
 * Dense per step, SoftmaxCrossEntropy over one label per step (the
 * compile options' label_shape), Adam.
 *
 *  - copy: label[t] = token[t] over sequences of random length (the Input's
 *    lengths "nonzero": trailing 0 tokens are padding); padding is labelled 0.
 *  - reverse: label[t] = token[T - 1 - t]: each step must find its mirror
 *    position by attention alone.
 * Both must reach >= 99% per-step accuracy over fresh sequences, counted at
 * valid steps only. Also: the padding row of the Embedding starts at 0. */
#include <math.h>
#include <string.h>

#include "engine/graph/nl-model.h"
#include "engine/graph/nl-program.h"
#include "engine/train/nl-optim.h"
#include "nl-test-util.h"

#define VOCAB 8 /* tokens 1 .. VOCAB - 1, 0 is padding */
#define STEPS 8
#define BATCH 64

typedef enum { TASK_COPY, TASK_REVERSE } Task;

static NlNetwork *
transformer (int width, int heads)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *json = g_strdup_printf (
    "{\"format\":\"netloom.network\",\"version\":1,\"name\":\"tiny-transformer\",\"nodes\":["
    "{\"id\":\"tokens\",\"op\":\"Input\",\"params\":{\"lengths\":\"nonzero\"}},"
    "{\"id\":\"embed\",\"op\":\"Embedding\",\"params\":{\"input_dim\":%d,\"output_dim\":%d,\"padding_index\":0}},"
    "{\"id\":\"pos\",\"op\":\"PositionalEmbedding\",\"params\":{\"max_length\":%d}},"
    "{\"id\":\"attn\",\"op\":\"MultiHeadAttention\",\"params\":{\"heads\":%d}},"
    "{\"id\":\"add\",\"op\":\"Add\"},"
    "{\"id\":\"norm\",\"op\":\"LayerNorm\"},"
    "{\"id\":\"out\",\"op\":\"Dense\",\"params\":{\"units\":%d,\"flatten\":false}}],"
    "\"edges\":[\"tokens -> embed\",\"embed -> pos\",\"pos -> attn\",\"pos:0 -> add:0\",\"attn:0 -> add:1\","
    "\"add -> norm\",\"norm -> out\"]}",
    VOCAB, width, STEPS, heads, VOCAB);
  NlNetwork *net = nl_network_load_data (json, -1, &error);
  g_assert_no_error (error);
  return net;
}

/* A batch of the task: tokens (BATCH, STEPS), labels the same, lens (BATCH). */
static void
draw (Task task, GRand *r, float *tokens, float *labels, int *lens)
{
  for (int b = 0; b < BATCH; b++)
    {
      int len = task == TASK_COPY ? g_rand_int_range (r, 1, STEPS + 1) : STEPS;
      float *x = tokens + b * STEPS, *y = labels + b * STEPS;
      lens[b] = len;
      for (int t = 0; t < STEPS; t++)
        x[t] = t < len ? (float) g_rand_int_range (r, 1, VOCAB) : 0.0f;
      for (int t = 0; t < STEPS; t++)
        y[t] = t >= len ? 0.0f : task == TASK_COPY ? x[t] : x[STEPS - 1 - t];
    }
}

/* Share of valid steps whose arg-max prediction is the label. */
static double
accuracy (const float *pred, const float *labels, const int *lens)
{
  int64_t right = 0, n = 0;
  for (int b = 0; b < BATCH; b++)
    for (int t = 0; t < lens[b]; t++)
      {
        const float *p = pred + ((int64_t) b * STEPS + t) * VOCAB;
        int best = 0;
        for (int k = 1; k < VOCAB; k++)
          best = p[k] > p[best] ? k : best;
        right += best == (int) labels[b * STEPS + t];
        n++;
      }
  return (double) right / (double) n;
}

static void
learn (Task task, int iterations, float lr)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (NlNetwork) net = transformer (32, 2);
  NlShape sample = nl_shape_of (1, (int64_t) STEPS);
  NlOptimConfig optim;
  g_autoptr (NlModel) model = NULL;
  g_autoptr (NlProgram) p = NULL;
  GRand *r = g_rand_new_with_seed (task + 7);
  int lens[BATCH];
  double acc = 0;

  nl_optim_config_init (&optim, NL_OPTIM_ADAM);
  model = nl_model_new_full (net, &sample, &(NlModelOptions) { .seed = 3, .optim = &optim }, &error);
  g_assert_no_error (error);
  p = nl_program_new (model, &(NlCompileOptions) { .batch = BATCH, .training = TRUE, .loss = "SoftmaxCrossEntropy",
                                                   .label_shape = nl_shape_of (1, (int64_t) STEPS) },
                      &error);
  g_assert_no_error (error);
  for (int it = 1; it <= iterations; it++)
    {
      /* a short warm-up, then the rate decays to a tenth */
      float rate = lr * MIN (1.0f, it / 20.0f) * (1.0f - 0.9f * it / iterations);
      draw (task, r, nl_tensor_f32 (nl_program_input (p)), nl_tensor_f32 (nl_program_label (p)), lens);
      g_assert_true (nl_program_forward (p, (guint64) it, &error) && nl_program_backward (p, &error)
                     && nl_program_update (p, &optim, rate, it, &error));
      g_assert_no_error (error);
    }
  for (int k = 0; k < 4; k++) /* fresh batches */
    {
      draw (task, r, nl_tensor_f32 (nl_program_input (p)), nl_tensor_f32 (nl_program_label (p)), lens);
      g_assert_true (nl_program_forward (p, (guint64) (iterations + 1 + k), &error));
      acc += accuracy (nl_tensor_f32 (nl_program_pred (p)), nl_tensor_f32 (nl_program_label (p)), lens) / 4;
    }
  g_test_message ("%s: %.2f%% per-step accuracy after %d steps", task == TASK_COPY ? "copy" : "reverse", 100 * acc,
                  iterations);
  g_assert_cmpfloat (acc, >=, 0.99);
  g_rand_free (r);
}

static void
test_copy (void)
{
  learn (TASK_COPY, 150, 1e-2f);
}

static void
test_reverse (void)
{
  learn (TASK_REVERSE, 300, 1e-2f);
}

/* The Embedding's padding row is 0 from the start (an export reads it). */
static void
test_padding_row_zero (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (NlNetwork) net = transformer (16, 2);
  NlShape sample = nl_shape_of (1, (int64_t) STEPS);
  g_autoptr (NlModel) model = nl_model_new_full (net, &sample, &(NlModelOptions) { .seed = 1 }, &error);
  const NlTensor *w = NULL;
  double other = 0;

  g_assert_no_error (error);
  for (int n = 0; n < model->n_nodes && !w; n++)
    if (!strcmp (nl_network_node (model->net, n)->def->name, "Embedding"))
      w = model->weights[NL_MODEL_SLOT (n, 0)];
  g_assert_nonnull (w);
  for (int k = 0; k < 16; k++)
    {
      g_assert_cmpfloat (nl_tensor_f32 (w)[k], ==, 0.0f);
      other += fabs (nl_tensor_f32 (w)[16 + k]);
    }
  g_assert_cmpfloat (other, >, 0); /* the other rows are drawn */
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/seq-learning/padding-row", test_padding_row_zero);
  g_test_add_func ("/seq-learning/copy", test_copy);
  g_test_add_func ("/seq-learning/reverse", test_reverse);
  return g_test_run ();
}
