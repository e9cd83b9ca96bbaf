/* test-layer-stats.c — layer statistics (nl-layer-stats.h) against
 * independent references: histograms against a hand loop, activation
 * statistics after ReLU against a hand count, norms and update ratios
 * against PyTorch 1.13 on the same weights and batch (layer_stats_torch.py),
 * the first non-finite value named where real ops make it, forward and
 * backward, and the trainer's hooks. */
#include <math.h>
#include <string.h>

#include "engine/formats/nl-checkpoint.h"
#include "engine/formats/nl-safetensors.h"
#include "engine/graph/nl-network.h"
#include "engine/train/nl-layer-stats.h"
#include "engine/train/nl-optim.h"
#include "engine/train/nl-trainer.h"
#include "nl-test-util.h"

/* conv1 (4 channels, 3x3) -> relu1 -> fc1 (16) -> relu2 -> fc2 (3), on 1x8x8 */
static const char net_json[] =
  "{\"format\":\"netloom.network\",\"version\":1,\"nodes\":["
  "{\"id\":\"data\",\"op\":\"Input\"},"
  "{\"id\":\"conv1\",\"op\":\"Conv2D\",\"params\":{\"channels\":4,\"kernel\":[3,3]}},"
  "{\"id\":\"relu1\",\"op\":\"Activation\",\"params\":{\"act_type\":\"relu\"}},"
  "{\"id\":\"fc1\",\"op\":\"Dense\",\"params\":{\"units\":16}},"
  "{\"id\":\"relu2\",\"op\":\"Activation\",\"params\":{\"act_type\":\"relu\"}},"
  "{\"id\":\"fc2\",\"op\":\"Dense\",\"params\":{\"units\":3}}],"
  "\"edges\":[\"data -> conv1\",\"conv1 -> relu1\",\"relu1 -> fc1\",\"fc1 -> relu2\",\"relu2 -> fc2\"]}";

#define BATCH 4

typedef struct {
  NlNetwork *net;
  NlModel *model;
  NlProgram *prog;
  NlOptimConfig cfg;
} Fixture;

static void
fixture_up_loss (Fixture *f, const char *json, const char *loss)
{
  GError *error = NULL;
  NlShape sample = nl_shape_of (3, (int64_t) 1, (int64_t) 8, (int64_t) 8);
  NlCompileOptions opts = { .batch = BATCH, .training = TRUE, .loss = loss };
  nl_optim_config_init (&f->cfg, NL_OPTIM_SGD);
  f->cfg.lr = 0.5f;
  f->cfg.momentum = 0;
  f->cfg.wd = 0;
  f->net = nl_network_load_data (json, -1, &error);
  nl_test_ok_or_die (f->net != NULL, error, "network");
  f->model = nl_model_new_full (f->net, &sample, &(NlModelOptions) { .seed = 11, .optim = &f->cfg }, &error);
  nl_test_ok_or_die (f->model != NULL, error, "model");
  f->prog = nl_program_new (f->model, &opts, &error);
  nl_test_ok_or_die (f->prog != NULL, error, "program");
  nl_test_fill_uniform (nl_program_input (f->prog), -1, 1, 3);
  for (int i = 0; i < BATCH; i++)
    nl_tensor_f32 (nl_program_label (f->prog))[i] = (float) (i % 3);
}

static void
fixture_up (Fixture *f, const char *json)
{
  fixture_up_loss (f, json, "SoftmaxCrossEntropy");
}

static void
fixture_down (Fixture *f)
{
  nl_program_free (f->prog);
  nl_model_free (f->model);
  nl_network_free (f->net);
}

/* One SGD step with statistics; the report. */
static const NlLayerStatsReport *
stats_step (Fixture *f, NlLayerStats *s)
{
  GError *error = NULL;
  const NlLayerStatsReport *r = NULL;
  nl_layer_stats_begin (s, f->prog);
  nl_test_ok_or_die (nl_program_forward (f->prog, 1, &error) && nl_program_backward (f->prog, &error)
                     && nl_layer_stats_before_update (s, f->prog, 1.0f, &error)
                     && nl_program_update (f->prog, &f->cfg, f->cfg.lr, 1, &error)
                     && nl_layer_stats_after_update (s, 1, &r, &error), error, "statistics step");
  return r;
}

/* The hand loop: bins of (max - min) / 32 from min, the max in the last. */
static void
test_histogram (void)
{
  float x[1000], lo, hi;
  guint32 counts[NL_LAYER_STATS_BINS], hand[NL_LAYER_STATS_BINS] = { 0 };
  float mn = INFINITY, mx = -INFINITY;
  guint64 total = 0;
  GRand *r = g_rand_new_with_seed (9);
  for (int i = 0; i < 1000; i++)
    x[i] = (float) g_rand_double_range (r, -3, 5);
  g_rand_free (r);
  x[10] = NAN;       /* not counted, not in the range */
  x[11] = INFINITY;
  x[12] = -INFINITY;
  for (int i = 0; i < 1000; i++)
    if (isfinite (x[i]))
      {
        mn = fminf (mn, x[i]);
        mx = fmaxf (mx, x[i]);
      }
  for (int i = 0; i < 1000; i++)
    if (isfinite (x[i]))
      {
        int b = (int) (((double) x[i] - mn) * (32 / ((double) mx - mn)));
        hand[b > 31 ? 31 : b]++;
      }
  nl_layer_stats_histogram (x, 1000, &lo, &hi, counts);
  g_assert_cmpfloat (lo, ==, mn);
  g_assert_cmpfloat (hi, ==, mx);
  for (int b = 0; b < NL_LAYER_STATS_BINS; b++)
    {
      g_assert_cmpuint (counts[b], ==, hand[b]);
      total += counts[b];
    }
  g_assert_cmpuint (total, ==, 997);
  g_assert_cmpuint (counts[31], >=, 1); /* the max itself */

  /* all equal: one bin; nothing finite: an empty range */
  for (int i = 0; i < 5; i++)
    x[i] = 2.5f;
  nl_layer_stats_histogram (x, 5, &lo, &hi, counts);
  g_assert_cmpfloat (lo, ==, 2.5f);
  g_assert_cmpfloat (hi, ==, 2.5f);
  g_assert_cmpuint (counts[0], ==, 5);
  nl_layer_stats_histogram (x + 10, 3, &lo, &hi, counts);
  g_assert_cmpfloat (lo, ==, 0);
  g_assert_cmpfloat (hi, ==, 0);
  for (int b = 0; b < NL_LAYER_STATS_BINS; b++)
    g_assert_cmpuint (counts[b], ==, 0);
}

static const NlActivationStats *
node_stats (const NlLayerStatsReport *r, const char *node)
{
  for (int i = 0; i < r->n_nodes; i++)
    if (!g_strcmp0 (r->nodes[i].node, node))
      return &r->nodes[i];
  g_assert_not_reached ();
}

/* relu1 = max (0, conv1 (input)) computed here from the input and conv1's
 * weights: its zeros counted, its mean and deviation summed by hand. */
static void
test_dead_fraction (void)
{
  Fixture f = { 0 };
  g_autoptr (NlLayerStats) s = NULL;
  const NlLayerStatsReport *r;
  const NlActivationStats *a;
  float w[4 * 9], bias[4];
  const float *in;
  int zeros = 0, n_out = BATCH * 4 * 6 * 6;
  double sum = 0, sq = 0, mean;

  fixture_up (&f, net_json);
  memcpy (w, nl_tensor_f32 (f.model->weights[NL_MODEL_SLOT (1, 0)]), sizeof w);
  memcpy (bias, nl_tensor_f32 (f.model->weights[NL_MODEL_SLOT (1, 1)]), sizeof bias);
  in = nl_tensor_f32 (nl_program_input (f.prog));
  for (int n = 0; n < BATCH; n++)
    for (int c = 0; c < 4; c++)
      for (int i = 0; i < 6; i++)
        for (int j = 0; j < 6; j++)
          {
            double v = bias[c];
            for (int di = 0; di < 3; di++)
              for (int dj = 0; dj < 3; dj++)
                v += (double) w[c * 9 + di * 3 + dj] * in[n * 64 + (i + di) * 8 + j + dj];
            v = v > 0 ? v : 0;
            zeros += v == 0;
            sum += v;
            sq += v * v;
          }
  mean = sum / n_out;
  s = nl_layer_stats_new (f.model);
  r = stats_step (&f, s);
  g_assert_cmpint (r->step, ==, 1);
  g_assert_cmpint (r->n_tensors, ==, 6);
  a = node_stats (r, "relu1");
  g_assert_true (a->seen);
  g_test_message ("relu1: %d of %d zeros", zeros, n_out);
  g_assert_cmpint (zeros, >, 0);
  g_assert_cmpint (zeros, <, n_out);
  g_assert_cmpfloat (a->dead_fraction, ==, (double) zeros / n_out);
  g_assert_cmpfloat_with_epsilon (a->mean, mean, 1e-5);
  g_assert_cmpfloat_with_epsilon (a->std, sqrt (sq / n_out - mean * mean), 1e-5);
  /* conv1 itself has no exact zeros; every node ran */
  g_assert_cmpfloat (node_stats (r, "conv1")->dead_fraction, ==, 0);
  for (int i = 0; i < r->n_nodes; i++)
    g_assert_true (r->nodes[i].seen);
  /* a step without statistics leaves the hook off: nothing is read */
  nl_layer_stats_begin (s, f.prog);
  nl_program_set_step_hook (f.prog, NULL, NULL);
  fixture_down (&f);
}

/* Norms and update ratios against PyTorch on the same weights and batch. */
static void
test_torch (void)
{
  Fixture f = { 0 };
  g_autoptr (GError) error = NULL;
  g_autoptr (NlLayerStats) s = NULL;
  /* the system's Python has PyTorch 1.13; another python3 on PATH may not */
  g_autofree char *python = nl_test_find_python ("torch, numpy");
  g_autofree char *dir = g_dir_make_tmp ("nl-layer-stats-XXXXXX", NULL);
  g_autofree char *wpath = g_build_filename (dir, "w.safetensors", NULL);
  g_autofree char *bpath = g_build_filename (dir, "batch.safetensors", NULL);
  g_autofree char *spath = g_build_filename (dir, "stats.json", NULL);
  g_autofree char *script = nl_test_source_path ("tests/layer_stats_torch.py");
  g_autoptr (GString) json = g_string_new (NULL);
  g_autoptr (NlSafetensorsWriter) sw = nl_safetensors_writer_new ();
  g_autoptr (GBytes) bytes = NULL;
  g_autofree char *out = NULL, *err = NULL;
  const NlLayerStatsReport *r;
  int64_t in_shape[4] = { BATCH, 1, 8, 8 }, label_shape[1] = { BATCH };
  int status = -1;

  if (!python)
    {
      g_test_skip ("python3 with torch and numpy not found: the reference cannot run");
      return;
    }
  fixture_up (&f, net_json);
  g_assert_true (nl_weights_export (f.model, wpath, &error));
  nl_safetensors_writer_add (sw, "input", NL_ST_F32, 4, in_shape, nl_tensor_f32 (nl_program_input (f.prog)));
  nl_safetensors_writer_add (sw, "label", NL_ST_F32, 1, label_shape, nl_tensor_f32 (nl_program_label (f.prog)));
  bytes = nl_safetensors_writer_finish (sw, &error);
  g_assert_true (bytes && nl_safetensors_write_file (bpath, bytes, &error));
  s = nl_layer_stats_new (f.model);
  r = stats_step (&f, s);
  g_string_append_printf (json, "{\"lr\":%.9g,\"tensors\":{", f.cfg.lr);
  for (int i = 0; i < r->n_tensors; i++)
    {
      /* biases start at zero: no ratio (null) */
      g_autofree char *ratio = isfinite (r->tensors[i].update_ratio)
                               ? g_strdup_printf ("%.17g", r->tensors[i].update_ratio) : g_strdup ("null");
      g_string_append_printf (json, "%s\"%s\":{\"weight_norm\":%.17g,\"grad_norm\":%.17g,\"update_ratio\":%s}",
                              i ? "," : "", r->tensors[i].tensor, r->tensors[i].weight_norm, r->tensors[i].grad_norm,
                              ratio);
    }
  g_string_append (json, "},\"nodes\":{");
  for (int i = 0, first = 1; i < r->n_nodes; i++)
    if (r->nodes[i].seen && strcmp (r->nodes[i].node, "data") && strncmp (r->nodes[i].node, "loss", 4)
        && !strchr (r->nodes[i].node, '_'))
      {
        g_string_append_printf (json, "%s\"%s\":{\"act_mean\":%.17g,\"act_std\":%.17g,\"dead_fraction\":%.17g}",
                                first ? "" : ",", r->nodes[i].node, r->nodes[i].mean, r->nodes[i].std,
                                r->nodes[i].dead_fraction);
        first = 0;
      }
  g_string_append (json, "}}");
  g_assert_true (g_file_set_contents (spath, json->str, -1, &error));
  {
    const char *argv[] = { python, script, wpath, bpath, spath, NULL };
    g_assert_true (g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, &err, &status, &error));
  }
  g_test_message ("%s%s", out, err);
  g_assert_true (g_spawn_check_wait_status (status, NULL));
  g_assert_nonnull (strstr (out, "fc1.weight grad_norm"));
  nl_test_remove_tree (dir);
  fixture_down (&f);
}

/* data -> fc1 (16) -> [mid] -> fc2 (units): the networks made to overflow */
static char *
chain_json (const char *mid_op, int units)
{
  return g_strdup_printf ("{\"format\":\"netloom.network\",\"version\":1,\"nodes\":["
                          "{\"id\":\"data\",\"op\":\"Input\"},"
                          "{\"id\":\"fc1\",\"op\":\"Dense\",\"params\":{\"units\":16}},"
                          "{\"id\":\"mid\",\"op\":\"%s\"},"
                          "{\"id\":\"fc2\",\"op\":\"Dense\",\"params\":{\"units\":%d}}],"
                          "\"edges\":[\"data -> fc1\",\"fc1 -> mid\",\"mid -> fc2\"]}", mid_op, units);
}

/* Weight k of network node i set to v everywhere. */
static void
set_weight (NlModel *m, int node, int k, float v)
{
  NlTensor *t = m->weights[NL_MODEL_SLOT (node, k)];
  for (int64_t i = 0; i < nl_tensor_numel (t); i++)
    nl_tensor_f32 (t)[i] = v;
  nl_model_host_changed (m);
}

static void
assert_found (Fixture *f, NlNonfiniteWhere where, const char *node, gboolean is_nan)
{
  g_autoptr (GError) error = NULL;
  NlNonfinite nf;
  gboolean finite = TRUE;
  g_assert_true (nl_program_forward (f->prog, 1, &error) && nl_program_backward (f->prog, &error));
  g_assert_true (nl_program_grads_finite (f->prog, &finite, &error));
  g_assert_false (finite);
  g_assert_true (nl_layer_stats_find_nonfinite (f->prog, f->model, 1, &nf, &error));
  g_assert_no_error (error);
  g_test_message ("%s made the first %s in %s", nf.node, nf.is_nan ? "NaN" : "Inf",
                  nf.where == NL_NONFINITE_FORWARD ? "forward" : "backward");
  g_assert_cmpint (nf.where, ==, where);
  g_assert_cmpstr (nf.node, ==, node);
  g_assert_cmpint (nf.is_nan, ==, is_nan);
}

/* Inputs in [0.5, 1]: fc1's sums over 64 of them are about 48. */
static void
positive_input (Fixture *f)
{
  nl_test_fill_uniform (nl_program_input (f->prog), 0.5f, 1, 4);
}

/* Forward: fc1 with weights of 3e38 overflows its sums to +Inf (ReLU
 * after it only passes them on); and LayerNorm over 16 finite values
 * near 1e38 overflows its sum (mean Inf, deviations -Inf, times a zero
 * inverse deviation): NaN made there from finite inputs. */
static void
test_nonfinite_forward (void)
{
  Fixture f = { 0 };
  g_autofree char *relu = chain_json ("Activation", 3), *ln = chain_json ("LayerNorm", 3);
  fixture_up (&f, relu);
  positive_input (&f);
  set_weight (f.model, 1, 0, 3e38f);
  assert_found (&f, NL_NONFINITE_FORWARD, "fc1", FALSE);
  fixture_down (&f);

  fixture_up (&f, ln);
  positive_input (&f);
  set_weight (f.model, 1, 0, 1e38f / 48);
  assert_found (&f, NL_NONFINITE_FORWARD, "mid", TRUE);
  fixture_down (&f);
}

/* Backward: fc2 (1 unit, weights 1e22) under an L2 loss on tiny
 * activations (fc1's weights 1.25e-7): predictions near 1e18 and a finite
 * loss, but the gradient fc2 passes back, 1e22 times the loss's 2.5e17,
 * overflows there. */
static void
test_nonfinite_backward (void)
{
  Fixture f = { 0 };
  g_autoptr (GError) error = NULL;
  g_autofree char *json = chain_json ("Activation", 1);
  fixture_up_loss (&f, json, "L2Loss");
  positive_input (&f);
  for (int i = 0; i < BATCH; i++)
    nl_tensor_f32 (nl_program_label (f.prog))[i] = 0;
  set_weight (f.model, 1, 0, 1.25e-7f);
  set_weight (f.model, 3, 0, 1e22f);
  g_assert_true (nl_program_forward (f.prog, 1, &error) && nl_program_backward (f.prog, &error));
  for (int i = 0; i < BATCH; i++)
    g_assert_true (isfinite (nl_tensor_f32 (nl_program_loss (f.prog))[i]));
  assert_found (&f, NL_NONFINITE_BACKWARD, "fc2", FALSE);
  fixture_down (&f);
}

typedef struct {
  GArray *steps;       /* int64_t: the statistics steps reported */
  int nonfinite;       /* calls of the nonfinite hook */
  NlNonfinite nf;
  char *nf_node;       /* nf.node is the program's: valid during the call */
  int64_t nf_step;
} Seen;

static void
on_stats (gpointer user, const NlLayerStatsReport *r)
{
  Seen *seen = user;
  g_assert_cmpint (r->n_tensors, ==, 4);
  g_assert_cmpint (r->epoch, ==, r->step <= 6 ? 1 : 2);
  g_array_append_val (seen->steps, r->step);
}

static void
on_nonfinite (gpointer user, const NlNonfinite *nf, int64_t step)
{
  Seen *seen = user;
  seen->nonfinite++;
  seen->nf = *nf;
  g_free (seen->nf_node);
  seen->nf_node = g_strdup (nf->node);
  seen->nf_step = step;
}

/* The trainer: statistics every 5 of 12 updates (two epochs of 6
 * batches; steps 5 and 10), none without a hook to take them; a gradient
 * made infinite at step 4 (the test hook) ends the run with the message
 * and the hook, before any later statistics. */
static void
test_trainer (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("nl-layer-stats-XXXXXX", NULL);
  g_autofree char *spec = g_strdup_printf ("mnist:%s", dir);
  g_autofree char *json = chain_json ("Flatten", 10);
  g_autoptr (NlNetwork) net = nl_network_load_data (json, -1, &error);
  g_auto (NlRunConfig) cfg = { 0 };
  Seen seen = { .steps = g_array_new (FALSE, FALSE, sizeof (int64_t)) };
  NlTrainCallbacks cb = { .user = &seen, .layer_stats = on_stats, .nonfinite = on_nonfinite };

  nl_test_write_idx_dataset (dir, 96, 20);
  nl_run_config_init (&cfg);
  nl_run_config_set_text (&cfg.dataset, spec);
  cfg.epochs = 2;
  cfg.batch_size = 16;
  cfg.threads = 1;
  cfg.workers = 0;
  cfg.layer_stats_every = 5;
  {
    g_autoptr (NlTrainer) t = nl_trainer_new (net, &cfg, &error);
    g_assert_no_error (error);
    g_assert_true (nl_trainer_run (t, &cb, &error));
    g_assert_no_error (error);
  }
  g_assert_cmpuint (seen.steps->len, ==, 2);
  g_assert_cmpint (g_array_index (seen.steps, int64_t, 0), ==, 5);
  g_assert_cmpint (g_array_index (seen.steps, int64_t, 1), ==, 10);
  g_assert_cmpint (seen.nonfinite, ==, 0);

  /* the same run, the gradient fc2 passes back infinite from step 4 on */
  g_array_set_size (seen.steps, 0);
  cfg.layer_stats_every = 1;
  g_setenv ("NETLOOM_TEST_NONFINITE", "fc2:backward:inf:4", TRUE);
  {
    g_autoptr (NlTrainer) t = nl_trainer_new (net, &cfg, &error);
    g_assert_no_error (error);
    g_assert_false (nl_trainer_run (t, &cb, &error));
  }
  g_unsetenv ("NETLOOM_TEST_NONFINITE");
  g_assert_error (error, NL_TRAIN_ERROR, NL_TRAIN_ERROR_DIVERGED);
  g_assert_cmpstr (error->message, ==, "node 'fc2' made the first Inf in backward at step 4");
  g_assert_cmpint (seen.nonfinite, ==, 1);
  g_assert_cmpstr (seen.nf_node, ==, "fc2");
  g_assert_cmpint (seen.nf.where, ==, NL_NONFINITE_BACKWARD);
  g_assert_false (seen.nf.is_nan);
  g_assert_cmpint (seen.nf_step, ==, 4);
  g_assert_cmpuint (seen.steps->len, ==, 3); /* steps 1 to 3 */
  g_array_unref (seen.steps);
  g_free (seen.nf_node);
  nl_test_remove_tree (dir);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/layer-stats/histogram", test_histogram);
  g_test_add_func ("/layer-stats/dead-fraction", test_dead_fraction);
  g_test_add_func ("/layer-stats/torch", test_torch);
  g_test_add_func ("/layer-stats/nonfinite-forward", test_nonfinite_forward);
  g_test_add_func ("/layer-stats/nonfinite-backward", test_nonfinite_backward);
  g_test_add_func ("/layer-stats/trainer", test_trainer);
  return g_test_run ();
}
