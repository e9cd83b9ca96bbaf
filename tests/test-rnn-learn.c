/* test-rnn-learn.c — LSTM and GRU learn what needs memory, end to end
 * through the engine (graph, autodiff, planner, Adam), with per-step
 * labels (a (T) label a sample):
 *
 *  copy:    label[t] = token[t - 2] (0 for the first two steps): the layer
 *           must carry each token two steps on;
 *  reverse: label[t] = token[T - 1 - t], with a bidirectional layer: each
 *           step needs a token from the far end;
 *  last with lengths: samples of 3..T tokens padded with zero steps
 *           (Input lengths "nonzero"), label[t] = the sample's last token
 *           token[len - 1] at every valid step, 0 on padding, with a
 *           bidirectional layer: what the reverse direction reads first
 *           when it starts at each sample's own last token.
 *
 * Tokens 1..V-1 one-hot over V classes, T = 8; Input (T, V) -> LSTM/GRU
 * (output all) -> Dense over the last axis -> softmax cross-entropy per
 * step. Each must reach >= 99 % per-step accuracy on fresh sequences
 * (counted by hand, padded steps excluded). */
#include <string.h>

#include "engine/graph/nl-program.h"
#include "engine/train/nl-optim.h"
#include "nl-test-util.h"

#define T 8
#define V 8
#define BATCH 32

typedef enum { TASK_COPY, TASK_REVERSE, TASK_LAST_LENGTHS } Task;

static guint64
mix (guint64 x)
{
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

/* Batch number `n` of the task into x (BATCH, T, V) and y (BATCH, T);
 * lens gets each sample's length. */
static void
make_batch (Task task, guint64 n, float *x, float *y, int *lens)
{
  memset (x, 0, sizeof (float) * BATCH * T * V);
  for (int b = 0; b < BATCH; b++)
    {
      guint64 key = mix (n * 1000003 + (guint64) b);
      int len = task == TASK_LAST_LENGTHS ? 3 + (int) (key % (T - 2)) : T, tok[T];
      for (int t = 0; t < len; t++)
        {
          tok[t] = 1 + (int) (mix (key + (guint64) t + 1) % (V - 1));
          x[(b * T + t) * V + tok[t]] = 1.0f;
        }
      for (int t = 0; t < T; t++)
        y[b * T + t] = t >= len                                 ? 0.0f
                       : task == TASK_COPY                      ? (t < 2 ? 0.0f : (float) tok[t - 2])
                       : task == TASK_REVERSE                   ? (float) tok[len - 1 - t]
                                                                : (float) tok[len - 1];
      lens[b] = len;
    }
}

static NlNetwork *
network (const char *op, Task task)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *json = g_strdup_printf (
    "{\"format\":\"netloom.network\",\"version\":1,\"name\":\"learn\",\"nodes\":["
    "{\"id\":\"data\",\"op\":\"Input\",\"params\":{\"lengths\":\"%s\"}},"
    "{\"id\":\"rnn\",\"op\":\"%s\",\"params\":{\"units\":%d,\"bidirectional\":%s}},"
    "{\"id\":\"fc\",\"op\":\"Dense\",\"params\":{\"units\":%d,\"flatten\":false}}],"
    "\"edges\":[\"data -> rnn\",\"rnn -> fc\"]}",
    task == TASK_LAST_LENGTHS ? "nonzero" : "full", op, task == TASK_COPY ? 32 : 48,
    task == TASK_COPY ? "false" : "true", V);
  NlNetwork *net = nl_network_load_data (json, -1, &error);
  g_assert_no_error (error);
  return net;
}

/* Right steps (padding excluded) of a batch's predictions. */
static int64_t
count_right (const float *pred, const float *y, const int *lens, int64_t *total)
{
  int64_t right = 0;
  for (int b = 0; b < BATCH; b++)
    for (int t = 0; t < lens[b]; t++)
      {
        const float *s = pred + (b * T + t) * V;
        int best = 0;
        for (int c = 1; c < V; c++)
          best = s[c] > s[best] ? c : best;
        right += best == (int) y[b * T + t];
        (*total)++;
      }
  return right;
}

/* Trains until the training batches are all right 20 steps in a row (at
 * most 4000 steps), then counts on 8 fresh batches. */
static double
learn (const char *op, Task task)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (NlNetwork) net = network (op, task);
  NlShape sample = nl_shape_of (2, (int64_t) T, (int64_t) V);
  NlOptimConfig adam;
  NlCompileOptions train_opts = { .batch = BATCH, .training = TRUE, .loss = "SoftmaxCrossEntropy",
                                  .label_shape = nl_shape_of (1, (int64_t) T) };
  NlCompileOptions eval_opts = { .batch = BATCH, .label_shape = nl_shape_of (1, (int64_t) T) };
  g_autoptr (NlModel) model = NULL;
  g_autoptr (NlProgram) p = NULL, e = NULL;
  float y[BATCH * T];
  int lens[BATCH];
  int64_t right = 0, total = 0;

  nl_optim_config_init (&adam, NL_OPTIM_ADAM);
  model = nl_model_new_full (net, &sample, &(NlModelOptions) { .seed = 3, .optim = &adam }, &error);
  g_assert_no_error (error);
  p = nl_program_new (model, &train_opts, &error);
  g_assert_no_error (error);
  e = nl_program_new (model, &eval_opts, &error);
  g_assert_no_error (error);
  for (int64_t step = 1, streak = 0; step <= 4000 && streak < 20; step++)
    {
      int64_t n = 0;
      make_batch (task, (guint64) step, nl_tensor_f32 (nl_program_input (p)), nl_tensor_f32 (nl_program_label (p)),
                  lens);
      g_assert_true (nl_program_forward (p, (guint64) step, &error));
      /* the training forward's scores, before this step's update */
      streak = count_right (nl_tensor_f32 (nl_program_pred (p)), nl_tensor_f32 (nl_program_label (p)), lens, &n) == n
               ? streak + 1 : 0;
      g_assert_true (nl_program_backward (p, &error));
      g_assert_true (nl_program_update (p, &adam, 0.01f, step, &error));
      g_assert_no_error (error);
      if (streak == 20)
        g_test_message ("%s: every training step right from step %" G_GINT64_FORMAT, op, step - 19);
    }
  g_assert_true (nl_model_sync (model, &error));
  for (guint64 n = 0; n < 8; n++)
    {
      make_batch (task, 1000000 + n, nl_tensor_f32 (nl_program_input (e)), y, lens);
      g_assert_true (nl_program_forward (e, 0, &error));
      right += count_right (nl_tensor_f32 (nl_program_pred (e)), y, lens, &total);
    }
  g_test_message ("%s: %" G_GINT64_FORMAT " of %" G_GINT64_FORMAT " steps right", op, right, total);
  return (double) right / (double) total;
}

static void
test_learn (gconstpointer data)
{
  const char *name = data;
  const char *op = g_str_has_prefix (name, "lstm") ? "LSTM" : "GRU";
  Task task = strstr (name, "lengths") ? TASK_LAST_LENGTHS : strstr (name, "reverse") ? TASK_REVERSE : TASK_COPY;
  g_assert_cmpfloat (learn (op, task), >=, 0.99);
}

int
main (int argc, char **argv)
{
  static const char *const names[] = { "lstm-copy", "gru-copy", "lstm-reverse", "gru-reverse",
                                       "lstm-last-lengths", "gru-last-lengths" };
  g_test_init (&argc, &argv, NULL);
  for (guint i = 0; i < G_N_ELEMENTS (names); i++)
    {
      g_autofree char *path = g_strdup_printf ("/rnn-learn/%s", names[i]);
      g_test_add_data_func (path, names[i], test_learn);
    }
  return g_test_run ();
}
