/* test-exec-settings.c — the GPU execution settings (--cudnn-autotune,
 * --cuda-graphs, --deterministic) leave the CPU's results as they are: a
 * CPU run with each of them gives the same weight bytes (weights, running
 * statistics, optimizer state) as the defaults, over a network with the
 * ops they touch on CUDA (convolution, BatchNorm, dropout) and a last
 * partial batch. They are stored with the run and read back. */
#include <string.h>

#include "engine/train/nl-trainer.h"
#include "nl-test-util.h"

#define N_TRAIN 300 /* 9 batches of 32 and one of 12 */
#define N_TEST 50

static char *data_dir, *data_spec;

static const char *net_json =
  "{\"format\":\"netloom.network\",\"version\":1,\"nodes\":[{\"id\":\"data\",\"op\":\"Input\"},"
  "{\"id\":\"conv\",\"op\":\"Conv2D\",\"params\":{\"channels\":4,\"kernel\":[3,3]}},"
  "{\"id\":\"bn\",\"op\":\"BatchNorm\"},"
  "{\"id\":\"relu\",\"op\":\"Activation\",\"params\":{\"act_type\":\"relu\"}},"
  "{\"id\":\"drop\",\"op\":\"Dropout\",\"params\":{\"rate\":0.3}},"
  "{\"id\":\"flat\",\"op\":\"Flatten\"},{\"id\":\"fc\",\"op\":\"Dense\",\"params\":{\"units\":10}}],"
  "\"edges\":[\"data -> conv\",\"conv -> bn\",\"bn -> relu\",\"relu -> drop\",\"drop -> flat\",\"flat -> fc\"]}";

/* Every weight, auxiliary (running statistics) and optimizer state
 * tensor's bytes, in slot order. */
static GByteArray *
model_bytes (NlTrainer *t)
{
  NlModel *m = nl_trainer_get_model (t);
  GByteArray *a = g_byte_array_new ();
  int n = m->n_nodes * NL_GRAPH_MAX_SLOTS;
  for (int i = 0; i < n * 4; i++)
    {
      NlTensor *w[3] = { i < n ? m->weights[i] : NULL, i < n ? m->aux[i] : NULL, m->opt_state[i] };
      for (int k = 0; k < 3; k++)
        if (w[k])
          g_byte_array_append (a, (const guint8 *) nl_tensor_f32 (w[k]), nl_tensor_numel (w[k]) * sizeof (float));
    }
  return a;
}

static GByteArray *
train (gboolean autotune, gboolean graphs, gboolean deterministic)
{
  g_auto (NlRunConfig) cfg = { 0 };
  g_autoptr (GError) error = NULL;
  nl_test_tiny_train_config (&cfg, data_spec);
  cfg.epochs = 1;
  cfg.optim.momentum = 0.9f;
  cfg.cudnn_autotune = autotune;
  cfg.cuda_graphs = graphs;
  cfg.deterministic = deterministic;
  g_autoptr (NlNetwork) net = nl_network_load_data (net_json, -1, &error);
  g_assert_no_error (error);
  g_autoptr (NlTrainer) t = nl_trainer_new (net, &cfg, &error);
  g_assert_no_error (error);
  NlTrainCallbacks cb = { 0 };
  gboolean ok = nl_trainer_run (t, &cb, &error);
  g_assert_no_error (error);
  g_assert_true (ok);
  return model_bytes (t);
}

static void
test_cpu_identical (void)
{
  g_autoptr (GByteArray) base = train (TRUE, TRUE, FALSE);
  g_assert_cmpuint (base->len, >, 1000);
  const gboolean variants[][3] = { { FALSE, TRUE, FALSE }, { TRUE, FALSE, FALSE }, { TRUE, TRUE, TRUE },
                                   { FALSE, FALSE, TRUE } };
  for (guint v = 0; v < G_N_ELEMENTS (variants); v++)
    {
      g_autoptr (GByteArray) got = train (variants[v][0], variants[v][1], variants[v][2]);
      g_assert_cmpuint (got->len, ==, base->len);
      g_assert_cmpmem (got->data, got->len, base->data, base->len);
    }
}

/* stored with the run, and read back as stored */
static void
test_stored (void)
{
  g_auto (NlRunConfig) rc = { 0 };
  g_auto (NlRunConfig) back = { 0 };
  nl_run_config_init (&rc);
  rc.cudnn_autotune = FALSE;
  rc.cuda_graphs = FALSE;
  rc.deterministic = TRUE;
  g_autofree char *json = nl_run_config_to_json (&rc);
  g_assert_nonnull (strstr (json, "\"cudnn_autotune\":false,\"cuda_graphs\":false,\"deterministic\":true"));
  nl_run_config_init (&back);
  g_assert_true (nl_run_config_from_json (&back, json, NULL));
  g_assert_false (back.cudnn_autotune);
  g_assert_false (back.cuda_graphs);
  g_assert_true (back.deterministic);
  /* set as a user writes them (the GUI's and sweeps' path) */
  g_assert_true (nl_run_field_set_text (nl_run_config_find_field ("cuda_graphs"), &back, "true", NULL));
  g_assert_true (back.cuda_graphs);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  data_dir = g_dir_make_tmp ("nl-exec-settings-XXXXXX", NULL);
  nl_test_write_idx_dataset (data_dir, N_TRAIN, N_TEST);
  data_spec = g_strdup_printf ("mnist:%s", data_dir);
  g_test_add_func ("/exec-settings/cpu-identical", test_cpu_identical);
  g_test_add_func ("/exec-settings/stored", test_stored);
  int status = g_test_run ();
  nl_test_remove_tree (data_dir);
  g_free (data_dir);
  g_free (data_spec);
  return status;
}
