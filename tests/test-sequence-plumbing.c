/* test-sequence-plumbing.c — what the sequence ops stand on: each sample's
 * length computed from a padded batch (Input lengths "nonzero"), the
 * lengths value in the graph (read by uses_lengths steps, kept by the
 * planner), per-sample label shapes through the graph, batcher and
 * loader, and metrics over one prediction per step. */
#include <string.h>

#include "engine/graph/nl-program.h"
#include "engine/graph/nl-seq-lengths.h"
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

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/sequence/lengths/batch", test_lengths_from_batch);
  g_test_add_func ("/sequence/lengths/one-axis", test_lengths_one_axis);
  g_test_add_func ("/sequence/lengths/step-access", test_step_access);
  return g_test_run ();
}
