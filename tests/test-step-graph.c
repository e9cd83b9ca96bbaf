/* test-step-graph.c — recording a step once and replaying it
 * (engine/graph/nl-step-graph.h), through a fake backend that logs the
 * graph calls: plain steps during warm-up, one recording, replays after;
 * the last partial batch and a changed key run plainly while the graph is
 * kept; a new pair records anew after its warm-up; off, or a backend
 * without graphs (the CPU), never records; a failed recording warns once
 * and runs the step plainly from then on; fn failing while recorded keeps
 * nothing. And a CPU training program: never recorded, the same results. */
#include <string.h>

#include "engine/graph/nl-step-graph.h"
#include "nl-test-util.h"

typedef struct {
  GString *log;
  int next_graph;
  gboolean fail_end;    /* graph_end fails (an unrecordable step) */
  gboolean fail_step;   /* fn fails */
  int n;                /* the step fn queues */
} Fake;

static Fake fake;

static gboolean
fake_begin (NlBackend *b, GError **error)
{
  g_string_append (fake.log, "begin ");
  return TRUE;
}

static void *
fake_end (NlBackend *b, GError **error)
{
  g_string_append (fake.log, "end ");
  if (fake.fail_end)
    {
      g_set_error (error, NL_BACKEND_ERROR, NL_BACKEND_ERROR_FAILED, "operation not permitted when stream is capturing");
      return NULL;
    }
  return GINT_TO_POINTER (++fake.next_graph);
}

static gboolean
fake_replay (NlBackend *b, void *graph, GError **error)
{
  g_string_append_printf (fake.log, "replay#%d ", GPOINTER_TO_INT (graph));
  return TRUE;
}

static void
fake_free (NlBackend *b, void *graph)
{
  g_string_append_printf (fake.log, "free#%d ", GPOINTER_TO_INT (graph));
}

static gboolean
step_fn (gpointer user, GError **error)
{
  g_string_append_printf (fake.log, "step%d ", fake.n);
  if (fake.fail_step)
    {
      g_set_error (error, NL_BACKEND_ERROR, NL_BACKEND_ERROR_FAILED, "the step failed");
      return FALSE;
    }
  return TRUE;
}

static NlBackendInterface fake_iface;
static NlBackend fake_backend;

static void
fake_reset (void)
{
  if (fake.log)
    g_string_free (fake.log, TRUE);
  memset (&fake, 0, sizeof fake);
  fake.log = g_string_new (NULL);
  fake_iface = *nl_backend_cpu ()->iface;
  fake_iface.name = "fake";
  fake_iface.graph_begin = fake_begin;
  fake_iface.graph_end = fake_end;
  fake_iface.graph_replay = fake_replay;
  fake_iface.graph_free = fake_free;
  fake_backend = (NlBackend) { .iface = &fake_iface };
}

/* Runs steps of these sizes (key 7 unless the size is negative: then
 * -size with key 8), returning the log and clearing it. */
static char *
run_steps (NlStepGraph *g, const int *sizes, int n)
{
  for (int i = 0; i < n; i++)
    {
      g_autoptr (GError) error = NULL;
      fake.n = ABS (sizes[i]);
      g_assert_true (nl_step_graph_run (g, fake.n, sizes[i] < 0 ? 8 : 7, step_fn, NULL, &error));
      g_assert_no_error (error);
    }
  char *s = g_strdup (g_strchomp (fake.log->str));
  g_string_truncate (fake.log, 0);
  return s;
}

static void
test_capture_replay_fallback (void)
{
  fake_reset ();
  g_autoptr (NlStepGraph) g = nl_step_graph_new (&fake_backend, TRUE, 2);
  g_assert_true (nl_step_graph_active (g));
  /* an epoch of five full batches and a partial one, then the next epoch */
  const int epoch[] = { 32, 32, 32, 32, 32, 12 };
  g_autofree char *first = run_steps (g, epoch, G_N_ELEMENTS (epoch));
  g_assert_cmpstr (first, ==, "step32 step32 begin step32 end replay#1 replay#1 replay#1 step12");
  g_autofree char *second = run_steps (g, epoch, G_N_ELEMENTS (epoch));
  g_assert_cmpstr (second, ==, "replay#1 replay#1 replay#1 replay#1 replay#1 step12");
  g_assert_cmpuint (nl_step_graph_replays (g), ==, 8);
  /* a changed key (a new learning rate ...): plain until its warm-up is
   * done, then recorded anew, the old graph freed; the first pair's
   * partial batch in between restarts the count */
  const int changed[] = { -32, -32, 12, -32, -32, -32, -32 };
  g_autofree char *third = run_steps (g, changed, G_N_ELEMENTS (changed));
  g_assert_cmpstr (third, ==, "step32 step32 step12 step32 step32 begin step32 end free#1 replay#2 replay#2");
  g_clear_pointer (&g, nl_step_graph_free);
  g_assert_cmpstr (fake.log->str, ==, "free#2 ");
}

static void
test_off_or_unable (void)
{
  const int steps[] = { 32, 32, 32, 32 };
  fake_reset ();
  {
    /* the setting off: the backend's graphs are never asked for */
    g_autoptr (NlStepGraph) g = nl_step_graph_new (&fake_backend, FALSE, 2);
    g_assert_false (nl_step_graph_active (g));
    g_autofree char *log = run_steps (g, steps, G_N_ELEMENTS (steps));
    g_assert_cmpstr (log, ==, "step32 step32 step32 step32");
  }
  g_assert_cmpstr (fake.log->str, ==, "");
  /* a backend without the members: the CPU's */
  g_autoptr (NlStepGraph) cpu = nl_step_graph_new (nl_backend_cpu (), TRUE, 2);
  g_assert_false (nl_step_graph_active (cpu));
  g_autofree char *log = run_steps (cpu, steps, G_N_ELEMENTS (steps));
  g_assert_cmpstr (log, ==, "step32 step32 step32 step32");
}

static void
test_record_fails (void)
{
  fake_reset ();
  fake.fail_end = TRUE;
  g_autoptr (NlStepGraph) g = nl_step_graph_new (&fake_backend, TRUE, 1);
  const int steps[] = { 32, 32, 32, 32 };
  g_test_expect_message ("netloom", G_LOG_LEVEL_WARNING,
                         "*could not be recorded as a fake graph (operation not permitted*op by op*");
  g_autofree char *log = run_steps (g, steps, G_N_ELEMENTS (steps));
  g_test_assert_expected_messages ();
  /* the recorded call never ran: the step runs again, plainly, and so on */
  g_assert_cmpstr (log, ==, "step32 begin step32 end step32 step32 step32");
  g_assert_false (nl_step_graph_active (g));
}

static void
test_step_fails_while_recording (void)
{
  fake_reset ();
  g_autoptr (NlStepGraph) g = nl_step_graph_new (&fake_backend, TRUE, 1);
  g_autoptr (GError) error = NULL;
  fake.n = 32;
  g_assert_true (nl_step_graph_run (g, 32, 1, step_fn, NULL, &error));
  fake.fail_step = TRUE;
  g_assert_false (nl_step_graph_run (g, 32, 1, step_fn, NULL, &error));
  g_assert_error (error, NL_BACKEND_ERROR, NL_BACKEND_ERROR_FAILED);
  g_assert_cmpstr (fake.log->str, ==, "step32 begin step32 end free#1 ");
  g_assert_cmpuint (nl_step_graph_replays (g), ==, 0);
  g_assert_true (nl_step_graph_active (g)); /* fn's failure is the caller's, not the graph's */
}

/* ---- a CPU training program ---- */

typedef struct {
  NlProgram *p;
  guint64 step;
} ProgStep;

static gboolean
program_step (gpointer user, GError **error)
{
  ProgStep *s = user;
  return nl_program_forward (s->p, s->step, error) && nl_program_backward (s->p, error);
}

static double
loss_sum (NlProgram *p)
{
  double sum = 0;
  const float *l = nl_tensor_f32 (nl_program_loss (p));
  for (int64_t i = 0; i < nl_tensor_numel (nl_program_loss (p)); i++)
    sum += l[i];
  return sum;
}

static void
test_cpu_program (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *json = nl_test_chain_network_json (3);
  g_autoptr (NlNetwork) net = nl_network_load_data (json, -1, &error);
  g_assert_no_error (error);
  NlShape sample = nl_shape_of (1, (int64_t) 16);
  g_autoptr (NlModel) model = nl_model_new_full (net, &sample, &(NlModelOptions) { .seed = 3 }, &error);
  g_assert_no_error (error);
  NlCompileOptions opts = { .batch = 4, .training = TRUE, .loss = "SoftmaxCrossEntropy", .device_graphs = TRUE };
  g_autoptr (NlProgram) p = nl_program_new (model, &opts, &error);
  g_assert_no_error (error);
  g_autoptr (NlStepGraph) g = nl_step_graph_new_for_program (p);
  g_assert_false (nl_step_graph_active (g)); /* the CPU records nothing */
  nl_test_fill_uniform (nl_program_input (p), -1, 1, 9);
  float *lab = nl_tensor_f32 (nl_program_label (p));
  for (int i = 0; i < 4; i++)
    lab[i] = (float) i;
  ProgStep s = { p, 1 };
  g_assert_true (program_step (&s, &error));
  double direct = loss_sum (p);
  for (int i = 0; i < 3; i++)
    {
      g_assert_true (nl_step_graph_run (g, 4, 0, program_step, &s, &error));
      g_assert_no_error (error);
      g_assert_cmpfloat (loss_sum (p), ==, direct); /* no update between: the same step */
    }
  g_assert_cmpuint (nl_step_graph_replays (g), ==, 0);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/step-graph/capture-replay-fallback", test_capture_replay_fallback);
  g_test_add_func ("/step-graph/off-or-unable", test_off_or_unable);
  g_test_add_func ("/step-graph/record-fails", test_record_fails);
  g_test_add_func ("/step-graph/step-fails-while-recording", test_step_fails_while_recording);
  g_test_add_func ("/step-graph/cpu-program", test_cpu_program);
  int status = g_test_run ();
  if (fake.log)
    g_string_free (fake.log, TRUE);
  return status;
}
