/* test-sequence-plumbing.c — what the sequence ops stand on: each sample's
 * length computed from a padded batch (Input lengths "nonzero"), the
 * lengths value in the graph (read by uses_lengths steps, kept by the
 * planner), per-sample label shapes through the graph, batcher and
 * loader, and metrics over one prediction per step. */
#include <math.h>
#include <string.h>

#include "engine/data/nl-loader.h"
#include "engine/graph/nl-program.h"
#include "engine/graph/nl-seq-lengths.h"
#include "engine/infer/nl-infer-net.h"
#include "engine/session/nl-analysis.h"
#include "engine/session/nl-eval-runner.h"
#include "engine/train/nl-metric.h"
#include "engine/train/nl-optim.h"
#include "engine/train/nl-trainer.h"
#include "nl-test-util.h"
#include "ops/nl-op-registry.h"

/* Input (T, C) -> Dense over the last axis: a per-step classifier */
static NlNetwork *
per_step_network (const char *lengths, int units)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *json = g_strdup_printf (
    "{\"format\":\"netloom.network\",\"version\":1,\"name\":\"steps\",\"nodes\":["
    "{\"id\":\"data\",\"op\":\"Input\",\"params\":{\"lengths\":\"%s\"}},"
    "{\"id\":\"fc\",\"op\":\"Dense\",\"params\":{\"units\":%d,\"flatten\":false}}],"
    "\"edges\":[\"data -> fc\"]}", lengths, units);
  NlNetwork *net = nl_network_load_data (json, -1, &error);
  g_assert_no_error (error);
  return net;
}

static NlProgram *
make_program (NlModel *model, const NlCompileOptions *opts)
{
  g_autoptr (GError) error = NULL;
  NlProgram *p = nl_program_new (model, opts, &error);
  g_assert_no_error (error);
  return p;
}

/* (a) a hand-made padded batch of 4 samples of (5, 2): zeros inside a
 * sample do not end it, trailing zeros do, an all-zero sample is 1 */
static void
test_lengths_from_batch (void)
{
  static const float batch[4][5][2] = {
    { { 1, 2 }, { 3, 0 }, { 0, 0 }, { 0, 4 }, { 0, 0 } },   /* 4: a zero step in the middle */
    { { 0, 0 }, { 0, 0 }, { 0, 0 }, { 0, 0 }, { 0, 0 } },   /* all padding: 1 */
    { { 1, 1 }, { 1, 1 }, { 1, 1 }, { 1, 1 }, { 0, 1 } },   /* full: 5 */
    { { 0, 0 }, { 0, -0.5f }, { 0, 0 }, { 0, 0 }, { 0, 0 } }, /* leading padding counts: 2 */
  };
  static const float want[4] = { 4, 1, 5, 2 };
  g_autoptr (GError) error = NULL;
  g_autoptr (NlNetwork) net = per_step_network ("nonzero", 3);
  NlShape sample = nl_shape_of (2, (int64_t) 5, (int64_t) 2);
  g_autoptr (NlModel) model = nl_model_new_full (net, &sample, &(NlModelOptions) { .seed = 1 }, &error);
  g_autoptr (NlProgram) p = NULL;
  const NlGraph *g;
  NlTensor *lengths;

  g_assert_no_error (error);
  p = make_program (model, &(NlCompileOptions) { .batch = 4 });
  g = nl_program_get_graph (p);
  g_assert_cmpint (g->lengths_value, >=, 0);
  g_assert_cmpint (nl_graph_value (g, g->lengths_value)->kind, ==, NL_VALUE_LENGTHS);
  g_assert_cmpint (nl_graph_value (g, g->lengths_value)->shape.ndim, ==, 1);
  g_assert_cmpint (nl_graph_value (g, g->lengths_value)->shape.d[0], ==, 4);
  g_assert_true (nl_graph_value_is_persistent (g, g->lengths_value));
  memcpy (nl_tensor_f32 (nl_program_input (p)), batch, sizeof batch);
  g_assert_true (nl_program_forward (p, 0, &error));
  g_assert_no_error (error);
  lengths = nl_program_lengths (p);
  g_assert_nonnull (lengths);
  g_assert_cmpint (nl_tensor_numel (lengths), ==, 4);
  for (int b = 0; b < 4; b++)
    g_assert_cmpfloat (nl_tensor_f32 (lengths)[b], ==, want[b]);
  /* the next batch's lengths replace these */
  memset (nl_tensor_f32 (nl_program_input (p)), 0, sizeof batch);
  nl_tensor_f32 (nl_program_input (p))[2 * 5 * 2 + 4 * 2 + 1] = 7;
  g_assert_true (nl_program_forward (p, 1, &error));
  for (int b = 0; b < 4; b++)
    g_assert_cmpfloat (nl_tensor_f32 (lengths)[b], ==, b == 2 ? 5 : 1);
}

/* samples of one axis (T): every element is a step */
static void
test_lengths_one_axis (void)
{
  static const float batch[3][6] = { { 5, 0, 3, 0, 0, 0 }, { 0, 0, 0, 0, 0, 1 }, { 0, 0, 0, 0, 0, 0 } };
  float got[3];
  NlShape bs = nl_shape_of (2, (int64_t) 3, (int64_t) 6);
  g_autoptr (GError) error = NULL;
  g_autoptr (NlNetwork) net = NULL;
  g_autoptr (NlModel) model = NULL;
  g_autoptr (NlProgram) p = NULL, full = NULL;
  NlShape sample = nl_shape_of (1, (int64_t) 6);

  nl_seq_lengths_compute (&batch[0][0], &bs, got);
  g_assert_cmpfloat (got[0], ==, 3);
  g_assert_cmpfloat (got[1], ==, 6);
  g_assert_cmpfloat (got[2], ==, 1);
  /* through a program too, and a program of an Input without lengths has none */
  net = nl_network_load_data ("{\"format\":\"netloom.network\",\"version\":1,\"name\":\"t\",\"nodes\":["
                              "{\"id\":\"data\",\"op\":\"Input\",\"params\":{\"lengths\":\"nonzero\"}},"
                              "{\"id\":\"fc\",\"op\":\"Dense\",\"params\":{\"units\":2}}],\"edges\":[\"data -> fc\"]}",
                              -1, &error);
  g_assert_no_error (error);
  model = nl_model_new_full (net, &sample, &(NlModelOptions) { .seed = 1 }, &error);
  g_assert_no_error (error);
  p = make_program (model, &(NlCompileOptions) { .batch = 3 });
  memcpy (nl_tensor_f32 (nl_program_input (p)), batch, sizeof batch);
  g_assert_true (nl_program_forward (p, 0, &error));
  g_assert_no_error (error);
  for (int b = 0; b < 3; b++)
    g_assert_cmpfloat (nl_tensor_f32 (nl_program_lengths (p))[b], ==, got[b]);
  nl_network_free (g_steal_pointer (&net));
  g_clear_pointer (&p, nl_program_free);
  g_clear_pointer (&model, nl_model_free);
  net = per_step_network ("full", 2);
  sample = nl_shape_of (2, (int64_t) 6, (int64_t) 1);
  model = nl_model_new_full (net, &sample, &(NlModelOptions) { .seed = 1 }, &error);
  g_assert_no_error (error);
  full = make_program (model, &(NlCompileOptions) { .batch = 3, .training = TRUE, .loss = "SoftmaxCrossEntropy",
                                                     .label_shape = nl_shape_of (1, (int64_t) 6) });
  g_assert_cmpint (nl_program_get_graph (full)->lengths_value, ==, -1);
  g_assert_null (nl_program_lengths (full));
  /* the label is (batch, label_shape...) */
  g_assert_cmpint (nl_program_label (full)->ndim, ==, 2);
  g_assert_cmpint (nl_program_label (full)->shape[0], ==, 3);
  g_assert_cmpint (nl_program_label (full)->shape[1], ==, 6);
}

static gboolean
step_reads (const NlGraph *g, int s, int v)
{
  int reads[NL_GRAPH_MAX_ACCESS], writes[NL_GRAPH_MAX_ACCESS], nr, nw;
  nl_graph_step_access (g, s, reads, &nr, writes, &nw);
  for (int i = 0; i < nr; i++)
    if (reads[i] == v)
      return TRUE;
  for (int i = 0; i < nw; i++)
    g_assert_cmpint (writes[i], !=, v); /* nothing writes it but the program */
  return FALSE;
}

/* (c) no op on this branch reads lengths yet: a compiled training graph
 * whose Dense is swapped for a test-local copy of it that says
 * uses_lengths. Its forward and backward steps read the lengths value, no
 * other step does, and the planner gives it a block of its own. */
static void
test_step_access (void)
{
  static NlOpDef dense_with_lengths;
  g_autoptr (GError) error = NULL;
  g_autoptr (NlNetwork) net = per_step_network ("nonzero", 3);
  NlShape sample = nl_shape_of (2, (int64_t) 4, (int64_t) 2);
  NlCompileOptions opts = { .batch = 2, .training = TRUE, .loss = "SoftmaxCrossEntropy",
                            .label_shape = nl_shape_of (1, (int64_t) 4) };
  g_autoptr (NlGraph) g = nl_graph_compile (net, &sample, &opts, &error);
  g_autoptr (NlMemoryPlan) plan = NULL;
  int fc = -1, fwd = 0, bwd = 0;

  g_assert_no_error (error);
  g_assert_cmpint (g->lengths_value, >=, 0);
  dense_with_lengths = *nl_op_lookup ("Dense");
  dense_with_lengths.uses_lengths = TRUE;
  for (guint i = 0; i < g->nodes->len; i++)
    if (!strcmp (nl_graph_node (g, i)->id, "fc"))
      fc = (int) i;
  g_assert_cmpint (fc, >=, 0);
  /* before the swap nothing reads it */
  for (guint s = 0; s < g->steps->len; s++)
    g_assert_false (step_reads (g, (int) s, g->lengths_value));
  nl_graph_node (g, fc)->def = &dense_with_lengths;
  for (guint s = 0; s < g->steps->len; s++)
    {
      const NlStep *st = &g_array_index (g->steps, NlStep, s);
      gboolean of_fc = st->kind != NL_STEP_GRAD_SUM && st->node == fc;
      g_assert_cmpint (step_reads (g, (int) s, g->lengths_value), ==, of_fc);
      fwd += of_fc && st->kind == NL_STEP_FORWARD;
      bwd += of_fc && st->kind == NL_STEP_BACKWARD;
    }
  g_assert_cmpint (fwd, ==, 1);
  g_assert_cmpint (bwd, ==, 1);
  /* the label is per step: (batch, T) */
  g_assert_cmpint (nl_graph_value (g, g->label_value)->shape.ndim, ==, 2);
  g_assert_cmpint (nl_graph_value (g, g->label_value)->shape.d[1], ==, 4);
  plan = nl_memory_plan_new (g, FALSE);
  for (guint v = 0; v < g->values->len; v++)
    if ((int) v != g->lengths_value)
      g_assert_cmpint (plan->block[v], !=, plan->block[g->lengths_value]);
}

/* ---- per-sample label shapes through the batcher and the loader ---- */

#define STEPS 6
#define FEATURES 4

/* A dataset made here: sample i is (STEPS, FEATURES), each step a one-hot
 * class (drawn from i) over noise; the label is (STEPS), each step's class.
 * With `ids`, labels are 100 i + step instead (where each value went). */
typedef struct {
  NlDataset base;
  gboolean ids;
} StepData;

static guint64
mix (guint64 x)
{
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

static gboolean
step_get (NlDataset *ds, int64_t i, float *sample, float *label, GError **error)
{
  (void) error;
  for (int t = 0; t < STEPS; t++)
    {
      int hot = (int) (mix ((guint64) i * 131 + (guint64) t + 7) % FEATURES);
      for (int c = 0; c < FEATURES; c++)
        sample[t * FEATURES + c] = (c == hot) + 0.4f * (float) (mix ((guint64) i * 977 + t * 13 + c) % 1000) / 1000;
      label[t] = ((StepData *) ds)->ids ? (float) (100 * i + t) : (float) hot;
    }
  return TRUE;
}

static void
step_free (NlDataset *ds)
{
  g_free (ds);
}

static const NlDatasetClass step_class = { "steps", step_get, NULL, step_free, NULL };

static NlDataset *
step_data_new (int64_t n, gboolean ids)
{
  StepData *d = g_new0 (StepData, 1);
  d->base.klass = &step_class;
  d->base.length = n;
  d->base.sample_shape = nl_shape_of (2, (int64_t) STEPS, (int64_t) FEATURES);
  d->base.label_shape = nl_shape_of (1, (int64_t) STEPS);
  d->base.n_classes = FEATURES;
  d->ids = ids;
  return &d->base;
}

/* labels of a batch of 4 whose rows are samples `rows` (-1: a zeroed row) */
static void
assert_id_labels (const NlTensor *labels, const int *rows)
{
  for (int r = 0; r < 4; r++)
    for (int t = 0; t < STEPS; t++)
      g_assert_cmpfloat (nl_tensor_f32 (labels)[r * STEPS + t], ==, rows[r] < 0 ? 0 : 100 * rows[r] + t);
}

/* 10 samples in batches of 4, in order: every policy, the batcher and the
 * loader with and without workers, and a shard of a global batch */
static void
test_label_batches (void)
{
  g_autoptr (NlDataset) ds = step_data_new (10, TRUE);
  NlShape xs = nl_shape_of (3, (int64_t) 4, (int64_t) STEPS, (int64_t) FEATURES);
  NlShape ys = nl_shape_of (2, (int64_t) 4, (int64_t) STEPS), wrong = nl_shape_of (1, (int64_t) 4);
  g_autoptr (NlTensor) x = nl_tensor_zeros (NL_DTYPE_F32, &xs);
  g_autoptr (NlTensor) y = nl_tensor_zeros (NL_DTYPE_F32, &ys);
  g_autoptr (NlTensor) y1 = nl_tensor_zeros (NL_DTYPE_F32, &wrong);
  g_autoptr (GError) error = NULL;
  static const int keep[3][4] = { { 0, 1, 2, 3 }, { 4, 5, 6, 7 }, { 8, 9, -1, -1 } };
  static const int rollover1[4] = { 8, 9, 0, 1 };

  g_assert_cmpint (nl_dataset_label_numel (ds), ==, STEPS);
  for (int workers = 0; workers <= 2; workers += 2)
    {
      NlLoaderConfig lc = { .batch_size = 4, .num_workers = workers, .last_batch = NL_LAST_BATCH_KEEP };
      g_autoptr (NlLoader) l = nl_loader_new (ds, &lc, &error);
      g_autoptr (NlBatcher) b = nl_batcher_new (ds, 4, FALSE, 0, NL_LAST_BATCH_KEEP, 0, 1);
      g_assert_no_error (error);
      for (int k = 0; k < 3; k++)
        {
          g_assert_cmpint (nl_loader_next (l, x, y, &error), ==, k < 2 ? 4 : 2);
          assert_id_labels (y, keep[k]);
          g_assert_cmpint (nl_batcher_next (b, x, y, &error), ==, k < 2 ? 4 : 2);
          assert_id_labels (y, keep[k]);
        }
      g_assert_cmpint (nl_loader_next (l, x, y, &error), ==, 0);
      /* a label tensor of one value a sample is refused, naming it */
      nl_loader_start_epoch (l, 0);
      g_assert_cmpint (nl_loader_next (l, x, y1, &error), ==, -1);
      g_assert_error (error, NL_DATA_ERROR, NL_DATA_ERROR_MISMATCH);
      g_assert_nonnull (strstr (error->message, "labels"));
      g_clear_error (&error);
    }
  {
    NlLoaderConfig lc = { .batch_size = 4, .num_workers = 2, .last_batch = NL_LAST_BATCH_ROLLOVER };
    g_autoptr (NlLoader) l = nl_loader_new (ds, &lc, &error);
    g_autoptr (NlBatcher) b = nl_batcher_new (ds, 4, FALSE, 0, NL_LAST_BATCH_DISCARD, 0, 1);
    g_assert_no_error (error);
    nl_loader_start_epoch (l, 1);
    g_assert_cmpint (nl_loader_next (l, x, y, &error), ==, 4);
    assert_id_labels (y, rollover1);
    g_assert_cmpint (nl_batcher_next (b, x, y, &error), ==, 4);
    g_assert_cmpint (nl_batcher_next (b, x, y, &error), ==, 4);
    assert_id_labels (y, keep[1]);
    g_assert_cmpint (nl_batcher_next (b, x, y, &error), ==, 0);
  }
  {
    /* shard 1 of 2 takes the second half of each global batch of 4 */
    NlLoaderConfig lc = { .batch_size = 4, .num_workers = 0, .last_batch = NL_LAST_BATCH_KEEP, .shard_index = 1,
                          .shard_count = 2 };
    g_autoptr (NlLoader) l = nl_loader_new (ds, &lc, &error);
    NlShape hs = nl_shape_of (3, (int64_t) 2, (int64_t) STEPS, (int64_t) FEATURES);
    NlShape hy = nl_shape_of (2, (int64_t) 2, (int64_t) STEPS);
    g_autoptr (NlTensor) hx = nl_tensor_zeros (NL_DTYPE_F32, &hs);
    g_autoptr (NlTensor) hl = nl_tensor_zeros (NL_DTYPE_F32, &hy);
    g_assert_no_error (error);
    g_assert_cmpint (nl_loader_batch_size (l), ==, 2);
    g_assert_cmpint (nl_loader_next (l, hx, hl, &error), ==, 2);
    for (int r = 0; r < 2; r++)
      for (int t = 0; t < STEPS; t++)
        g_assert_cmpfloat (nl_tensor_f32 (hl)[r * STEPS + t], ==, 100 * (2 + r) + t);
  }
}

/* (b) Input (T, C) -> Dense over the last axis -> SoftmaxCrossEntropy per
 * step, trained from the loader on labels (T): each step's class is where
 * its features peak, so the network must classify every step on its own.
 * The accuracy metric over (B, T, C) preds and (B, T) labels is the hand
 * count of right steps. */
static void
test_per_step_learning (void)
{
  enum { BATCH = 20 };
  g_autoptr (NlDataset) train = step_data_new (400, FALSE), test = step_data_new (100, FALSE);
  g_autoptr (NlNetwork) net = per_step_network ("full", FEATURES);
  NlShape sample = nl_shape_of (2, (int64_t) STEPS, (int64_t) FEATURES);
  NlOptimConfig adam;
  NlCompileOptions train_opts = { .batch = BATCH, .training = TRUE, .loss = "SoftmaxCrossEntropy",
                                  .label_shape = train->label_shape };
  NlCompileOptions eval_opts = { .batch = BATCH, .label_shape = test->label_shape };
  NlLoaderConfig lc = { .batch_size = BATCH, .shuffle = TRUE, .seed = 3, .num_workers = 2,
                        .last_batch = NL_LAST_BATCH_DISCARD };
  NlLoaderConfig ec = { .batch_size = BATCH, .last_batch = NL_LAST_BATCH_KEEP };
  g_autoptr (GError) error = NULL;
  g_autoptr (NlModel) model = NULL;
  g_autoptr (NlProgram) p = NULL, e = NULL;
  g_autoptr (NlLoader) loader = NULL, eval_loader = NULL;
  g_autoptr (NlMetric) acc = nl_metric_new ("accuracy", NULL);
  NlTensor *labels;
  int64_t t = 0, right = 0, total = 0;
  int n;

  nl_optim_config_init (&adam, NL_OPTIM_ADAM);
  model = nl_model_new_full (net, &sample, &(NlModelOptions) { .seed = 2, .optim = &adam }, &error);
  g_assert_no_error (error);
  p = make_program (model, &train_opts);
  e = make_program (model, &eval_opts);
  loader = nl_loader_new (train, &lc, &error);
  eval_loader = nl_loader_new (test, &ec, &error);
  g_assert_no_error (error);
  for (int epoch = 0; epoch < 6; epoch++)
    {
      nl_loader_start_epoch (loader, epoch);
      while ((n = nl_loader_next (loader, nl_program_input (p), nl_program_label (p), &error)) > 0)
        {
          t++;
          g_assert_true (nl_program_forward (p, (guint64) t, &error));
          g_assert_true (nl_program_backward (p, &error));
          g_assert_true (nl_program_update (p, &adam, 0.05f, t, &error));
        }
      g_assert_no_error (error);
    }
  g_assert_true (nl_model_sync (model, &error));
  {
    NlShape ls = nl_shape_batched (BATCH, &test->label_shape);
    labels = nl_tensor_zeros (NL_DTYPE_F32, &ls);
  }
  nl_loader_start_epoch (eval_loader, 0);
  while ((n = nl_loader_next (eval_loader, nl_program_input (e), labels, &error)) > 0)
    {
      const float *pred = NULL, *y = nl_tensor_f32 (labels);
      g_assert_cmpint (n, ==, BATCH);
      g_assert_true (nl_program_forward (e, 0, &error));
      pred = nl_tensor_f32 (nl_program_pred (e));
      g_assert_cmpint (nl_program_pred (e)->ndim, ==, 3);
      nl_metric_update (acc, labels, nl_program_pred (e));
      /* the hand count: the highest of each step's scores */
      for (int i = 0; i < BATCH * STEPS; i++)
        {
          int best = 0;
          for (int c = 1; c < FEATURES; c++)
            if (pred[i * FEATURES + c] > pred[i * FEATURES + best])
              best = c;
          right += best == (int) y[i];
          total++;
        }
    }
  g_assert_no_error (error);
  nl_tensor_unref (labels);
  g_assert_cmpint (total, ==, 100 * STEPS);
  g_assert_cmpfloat (nl_metric_get (acc), ==, (double) right / total);
  g_assert_cmpfloat ((double) right / total, >=, 0.99);
}

/* metrics over per-step and multi-value labels, against hand counts */
static void
test_step_metrics (void)
{
  /* (2, 3, 2) scores, (2, 3) labels: steps right 1, 0, 1 | 1, 1, 0 */
  static const float pred[12] = { 0, 1, 2, 1, 5, 4, 0, 3, 1, 0, 0, 9 };
  static const float lab[6] = { 1, 1, 0, 1, 0, 0 };
  /* (2, 3) forecasts against (2, 3) targets */
  static const float f[6] = { 1, 2, 3, 0, 0, 0 }, g[6] = { 1, 4, 0, 1, 1, 1 };
  NlShape ps = nl_shape_of (3, (int64_t) 2, (int64_t) 3, (int64_t) 2), ls = nl_shape_of (2, (int64_t) 2, (int64_t) 3);
  g_autoptr (NlTensor) p = nl_tensor_new_shape (NL_DTYPE_F32, &ps), l = nl_tensor_new_shape (NL_DTYPE_F32, &ls);
  g_autoptr (NlTensor) fp = nl_tensor_new_shape (NL_DTYPE_F32, &ls), ft = nl_tensor_new_shape (NL_DTYPE_F32, &ls);
  g_autoptr (NlMetric) acc = nl_metric_new ("accuracy", NULL), ce = nl_metric_new ("cross_entropy", NULL);
  g_autoptr (NlMetric) mae = nl_metric_new ("mae", NULL), mse = nl_metric_new ("mse", NULL);
  double want_ce = 0;

  memcpy (nl_tensor_f32 (p), pred, sizeof pred);
  memcpy (nl_tensor_f32 (l), lab, sizeof lab);
  memcpy (nl_tensor_f32 (fp), f, sizeof f);
  memcpy (nl_tensor_f32 (ft), g, sizeof g);
  nl_metric_update (acc, l, p);
  g_assert_cmpfloat (nl_metric_get (acc), ==, 4.0 / 6.0);
  nl_metric_update (ce, l, p);
  for (int i = 0; i < 6; i++)
    want_ce -= log ((double) pred[i * 2 + (int) lab[i]] + 1e-12);
  g_assert_cmpfloat_with_epsilon (nl_metric_get (ce), want_ce / 6, 1e-12);
  /* per sample means over the horizon, then over samples */
  nl_metric_update (mae, ft, fp);
  nl_metric_update (mse, ft, fp);
  g_assert_cmpfloat_with_epsilon (nl_metric_get (mae), ((0 + 2 + 3) / 3.0 + (1 + 1 + 1) / 3.0) / 2, 1e-12);
  g_assert_cmpfloat_with_epsilon (nl_metric_get (mse), ((0 + 4 + 9) / 3.0 + 1.0) / 2, 1e-12);
}

/* The inference executor declines sequences with lengths and per-step
 * labels; the evaluation runner then runs the training program, with the
 * same outputs as a program of its own. */
static void
test_infer_declines (void)
{
  static const struct {
    const char *lengths;
    gboolean per_step;
  } cases[] = { { "nonzero", FALSE }, { "full", TRUE }, { "full", FALSE } };
  NlShape sample = nl_shape_of (2, (int64_t) STEPS, (int64_t) FEATURES), steps = nl_shape_of (1, (int64_t) STEPS);

  for (guint k = 0; k < G_N_ELEMENTS (cases); k++)
    {
      g_autoptr (GError) error = NULL;
      g_autoptr (NlNetwork) net = per_step_network (cases[k].lengths, 3);
      g_autoptr (NlModel) model = nl_model_new_full (net, &sample, &(NlModelOptions) { .seed = 4 }, &error);
      NlInferOptions o = { .batch = 2, .label_shape = cases[k].per_step ? steps : (NlShape) { 0 } };
      g_autoptr (NlInferNet) direct = NULL;
      g_autoptr (NlEvalRunner) r = NULL;
      g_autoptr (NlProgram) p = NULL;
      gboolean declined = k < 2;
      float *x;

      g_assert_no_error (error);
      direct = nl_infer_net_new (model, &o, &error);
      g_assert_true ((direct == NULL) == declined);
      if (declined)
        {
          g_assert_error (error, NL_NETWORK_ERROR, NL_NETWORK_ERROR_STRUCTURE);
          g_assert_nonnull (strstr (error->message, cases[k].per_step ? "label" : "node 'data'"));
          g_clear_error (&error);
        }
      r = nl_eval_runner_new_for (model, 2, NULL, cases[k].per_step ? &steps : NULL, &error);
      g_assert_no_error (error);
      g_assert_true (nl_eval_runner_is_executor (r) == !declined);
      p = make_program (model, &(NlCompileOptions) { .batch = 2 });
      x = nl_tensor_f32 (nl_eval_runner_input (r));
      nl_test_fill_uniform (nl_eval_runner_input (r), -1, 1, 9);
      memcpy (nl_tensor_f32 (nl_program_input (p)), x, sizeof (float) * 2 * STEPS * FEATURES);
      g_assert_true (nl_eval_runner_run (r, 2, &error));
      g_assert_true (nl_program_forward (p, 0, &error));
      g_assert_no_error (error);
      g_assert_cmpint (nl_eval_runner_classes (r), ==, STEPS * 3);
      nl_test_assert_close (nl_eval_runner_output (r), nl_tensor_f32 (nl_program_pred (p)), 2 * STEPS * 3, 1e-5, 1e-5);
    }
}

/* The network analysis plans a training step of a per-step classifier
 * with labels (B, T), as its dataset would give them */
static void
test_analysis_per_step (void)
{
  g_autoptr (NlNetwork) net = per_step_network ("nonzero", 3);
  NlShape sample = nl_shape_of (2, (int64_t) STEPS, (int64_t) FEATURES);
  g_autoptr (NlAnalysis) a = nl_analysis_new_for_sample (net, &sample, 8, 2);
  g_autoptr (GError) error = NULL;
  NlCompileOptions opts = { .batch = 8, .training = TRUE, .loss = "SoftmaxCrossEntropy",
                            .label_shape = nl_shape_of (1, (int64_t) STEPS) };
  g_autoptr (NlGraph) g = nl_graph_compile (net, &sample, &opts, &error);
  g_autoptr (NlMemoryPlan) plan = NULL;

  g_assert_no_error (error);
  plan = nl_memory_plan_new (g, FALSE);
  g_assert_null (a->network_error);
  g_assert_cmpint (a->activation_bytes, ==, plan->planned_bytes);
}

/* The trainer on a language model's data (labels (T), the next tokens):
 * a per-step bigram network learns the repeating "abcde" and the trainer's
 * evaluation counts every step */
static void
test_trainer_per_step (void)
{
  static const char *net_json =
    "{\"format\":\"netloom.network\",\"version\":1,\"name\":\"lm\",\"nodes\":["
    "{\"id\":\"data\",\"op\":\"Input\",\"params\":{\"lengths\":\"nonzero\"}},"
    "{\"id\":\"emb\",\"op\":\"Embedding\",\"params\":{\"input_dim\":7,\"output_dim\":8}},"
    "{\"id\":\"fc\",\"op\":\"Dense\",\"params\":{\"units\":7,\"flatten\":false}}],"
    "\"edges\":[\"data -> emb\",\"emb -> fc\"]}";
  g_autoptr (GError) error = NULL;
  g_autoptr (NlNetwork) net = nl_network_load_data (net_json, -1, &error);
  g_autofree char *dir = g_dir_make_tmp ("netloom-lm-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "lm.txt", NULL);
  g_autofree char *spec = g_strconcat ("text-lm:", path, NULL);
  g_autoptr (GString) text = g_string_new (NULL);
  g_auto (NlRunConfig) cfg = { 0 };
  g_autoptr (NlTrainer) t = NULL;
  double accuracy = 0;

  g_assert_no_error (error);
  for (int i = 0; i < 200; i++)
    g_string_append (text, "abcde");
  g_assert_true (g_file_set_contents (path, text->str, -1, NULL));
  nl_test_tiny_train_config (&cfg, spec);
  nl_optim_config_init (&cfg.optim, NL_OPTIM_ADAM);
  cfg.optim.lr = 0.05f;
  cfg.epochs = 4;
  cfg.batch_size = cfg.eval_batch_size = 8;
  cfg.data.tokenizer = NL_TOKENIZER_CHAR;
  cfg.data.max_length = 10;
  cfg.data.val_fraction = 0.2;
  cfg.mean = 0; /* token ids are not normalised */
  cfg.std = 1;
  t = nl_trainer_new (net, &cfg, &error);
  g_assert_no_error (error);
  g_assert_cmpint (nl_trainer_get_train_set (t)->label_shape.d[0], ==, 10);
  g_assert_cmpint (nl_trainer_get_train_set (t)->n_classes, ==, 7);
  /* before training: about chance */
  nl_trainer_evaluate (t, &accuracy, &error);
  g_assert_no_error (error);
  g_assert_cmpfloat (accuracy, <, 0.9);
  g_assert_true (nl_trainer_run (t, NULL, &error));
  g_assert_no_error (error);
  g_assert_true (nl_trainer_evaluate (t, &accuracy, &error));
  g_assert_no_error (error);
  g_assert_cmpfloat (accuracy, >=, 0.99);
  nl_test_remove_tree (dir);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/sequence/lengths/batch", test_lengths_from_batch);
  g_test_add_func ("/sequence/lengths/one-axis", test_lengths_one_axis);
  g_test_add_func ("/sequence/lengths/step-access", test_step_access);
  g_test_add_func ("/sequence/labels/batches", test_label_batches);
  g_test_add_func ("/sequence/labels/metrics", test_step_metrics);
  g_test_add_func ("/sequence/labels/per-step-learning", test_per_step_learning);
  g_test_add_func ("/sequence/labels/infer-declines", test_infer_declines);
  g_test_add_func ("/sequence/labels/analysis", test_analysis_per_step);
  g_test_add_func ("/sequence/labels/trainer", test_trainer_per_step);
  return g_test_run ();
}
