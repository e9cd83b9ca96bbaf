/* test-train.c — the training loop on a small generated dataset: it
 * learns, it is bit-for-bit reproducible, every optimizer trains, and a
 * diverging run stops with a message naming epoch and batch. */
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#include "engine/train/nl-trainer.h"
#include "nl-test-util.h"

static char *data_dir;

static void
write_idx (const char *name, gboolean images, int n, int side, guint32 seed)
{
  g_autofree char *path = g_build_filename (data_dir, name, NULL);
  GString *s = g_string_new (NULL);
  GRand *r = g_rand_new_with_seed (seed);
  guint8 head[16] = { 0, 0, 8, images ? 3 : 1 };
  int hl = images ? 16 : 8;
  guint32 dims[3] = { GUINT32_TO_BE (n), GUINT32_TO_BE (side), GUINT32_TO_BE (side) };
  memcpy (head + 4, dims, images ? 12 : 4);
  g_string_append_len (s, (char *) head, hl);
  for (int i = 0; i < n; i++)
    {
      int label = (i * 7 + 3) % 10;   /* the same sequence in both files */
      if (!images)
        {
          g_string_append_c (s, (char) label);
          continue;
        }
      /* class c: a bright row at c*2 + noise — separable but not trivial */
      for (int y = 0; y < side; y++)
        for (int x = 0; x < side; x++)
          {
            int v = g_rand_int_range (r, 0, 90) + (y == label * 2 || y == label * 2 + 1 ? 150 : 0);
            g_string_append_c (s, (char) MIN (v, 255));
          }
    }
  g_assert_true (g_file_set_contents (path, s->str, s->len, NULL));
  g_string_free (s, TRUE);
  g_rand_free (r);
}

static const char *net_json =
  "{\"format\":\"netloom.network\",\"version\":1,\"name\":\"tiny\",\"nodes\":["
  "{\"id\":\"data\",\"op\":\"Input\"},{\"id\":\"flat\",\"op\":\"Flatten\"},"
  "{\"id\":\"fc1\",\"op\":\"Dense\",\"params\":{\"units\":32}},"
  "{\"id\":\"drop\",\"op\":\"Dropout\",\"params\":{\"rate\":0.1}},"
  "{\"id\":\"act\",\"op\":\"Activation\"},{\"id\":\"fc2\",\"op\":\"Dense\",\"params\":{\"units\":10}}],"
  "\"edges\":[\"data -> flat\",\"flat -> fc1\",\"fc1 -> drop\",\"drop -> act\",\"act -> fc2\"]}";

static void
config (NlRunConfig *cfg, NlOptimKind kind, float lr)
{
  static char *spec;
  if (!spec)
    spec = g_strdup_printf ("mnist:%s", data_dir);
  nl_run_config_init (cfg);
  nl_optim_config_init (&cfg->optim, kind);
  cfg->optim.lr = lr;
  nl_run_config_set_text (&cfg->dataset, spec);
  cfg->epochs = 3;
  cfg->batch_size = 32;   /* 600 samples: a smaller last batch of 24 is kept */
  cfg->eval_batch_size = 64;
  cfg->threads = 2;
  cfg->seed = 7;
}

typedef struct {
  NlEpochReport last;
  int epochs;
  int64_t batches;
} Seen;

static gboolean
on_batch (gpointer user, int epoch, int64_t batch, int64_t n, double loss, double elapsed)
{
  ((Seen *) user)->batches++;
  g_assert_cmpint (n, ==, 19);
  return TRUE;
}

static void
on_epoch (gpointer user, const NlEpochReport *r)
{
  Seen *s = user;
  s->last = *r;
  s->epochs++;
}

static NlTrainer *
train_net (const char *json, const NlRunConfig *cfg, Seen *seen)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (NlNetwork) net = nl_network_load_data (json, -1, &error);
  NlTrainer *t = nl_trainer_new (net, cfg, &error);
  NlTrainCallbacks cb = { on_batch, on_epoch, seen };
  g_assert_no_error (error);
  g_assert_true (nl_trainer_run (t, &cb, &error));
  g_assert_no_error (error);
  return t;
}

static NlTrainer *
train (const NlRunConfig *cfg, Seen *seen)
{
  return train_net (net_json, cfg, seen);
}

static void
test_learns (void)
{
  g_auto (NlRunConfig) cfg = { 0 };
  Seen seen = { 0 };
  g_autoptr (NlTrainer) t = NULL;
  config (&cfg, NL_OPTIM_SGD, 0.1f);
  t = train (&cfg, &seen);
  g_assert_cmpint (seen.epochs, ==, 3);
  g_assert_cmpint (seen.batches, ==, 3 * 19);
  g_assert_cmpint (seen.last.epoch, ==, 3);
  g_test_message ("loss %.4f train acc %.4f test acc %.4f", seen.last.train_loss, seen.last.train_acc, seen.last.test_acc);
  g_assert_cmpfloat (seen.last.test_acc, >, 0.9);
  g_assert_cmpfloat (seen.last.train_loss, <, 0.5);
  g_assert_cmpfloat (seen.last.images_per_s, >, 0);
}

static void
assert_weights (NlTrainer *a, NlTrainer *b, gboolean equal)
{
  NlModel *ma = nl_trainer_get_model (a), *mb = nl_trainer_get_model (b);
  gboolean all_equal = TRUE;
  for (int i = 0; i < ma->n_nodes * NL_GRAPH_MAX_SLOTS; i++)
    if (ma->weights[i])
      all_equal = all_equal && memcmp (nl_tensor_f32 (ma->weights[i]), nl_tensor_f32 (mb->weights[i]),
                                       nl_tensor_numel (ma->weights[i]) * sizeof (float)) == 0;
  g_assert_true (all_equal == equal);
}

static void
test_reproducible (void)
{
  g_auto (NlRunConfig) cfg = { 0 };
  Seen s1 = { 0 }, s2 = { 0 }, s3 = { 0 };
  g_autoptr (NlTrainer) a = NULL, b = NULL, c = NULL;
  config (&cfg, NL_OPTIM_ADAM, 0.01f);
  cfg.epochs = 2;
  a = train (&cfg, &s1);
  b = train (&cfg, &s2);
  assert_weights (a, b, TRUE);
  g_assert_cmpfloat (s1.last.train_loss, ==, s2.last.train_loss);
  cfg.seed = 8;
  c = train (&cfg, &s3);
  assert_weights (a, c, FALSE);
}

static void
test_every_optimizer (void)
{
  const float lrs[NL_OPTIM_COUNT] = { 0.1f, 0.05f, 0.005f, 0.005f, 0.002f, 0.05f };
  for (int k = 0; k < NL_OPTIM_COUNT; k++)
    {
      g_auto (NlRunConfig) cfg = { 0 };
      Seen seen = { 0 };
      g_autoptr (NlTrainer) t = NULL;
      config (&cfg, k, lrs[k]);
      cfg.epochs = 2;
      nl_run_config_set_text (&cfg.lr_schedule, "cosine+warmup:5");
      t = train (&cfg, &seen);
      g_test_message ("%s: loss %.4f test acc %.4f", nl_optim_kind_name (k), seen.last.train_loss, seen.last.test_acc);
      g_assert_cmpfloat (seen.last.test_acc, >, 0.5);
    }
}

static void
test_diverges (void)
{
  g_auto (NlRunConfig) cfg = { 0 };
  g_autoptr (GError) error = NULL;
  g_autoptr (NlNetwork) net = nl_network_load_data (net_json, -1, &error);
  g_autoptr (NlTrainer) t = NULL;
  config (&cfg, NL_OPTIM_SGD, 1e30f);
  t = nl_trainer_new (net, &cfg, &error);
  g_assert_no_error (error);
  g_assert_false (nl_trainer_run (t, NULL, &error));
  g_assert_error (error, NL_TRAIN_ERROR, NL_TRAIN_ERROR_DIVERGED);
  g_test_message ("%s", error->message);
  /* the replayed step names the node that made the first NaN or Inf */
  g_assert_true (g_regex_match_simple ("^node '[a-z0-9]+' made the first (NaN|Inf) in (forward|backward) at step [0-9]+$",
                                       error->message, 0, 0));
}

/* A kernel failing mid-run (labels beyond the network's 3 outputs): one
 * error naming the node, no hang, and the trainer can be freed. */
static void
test_failing_op (void)
{
  const char *json =
    "{\"format\":\"netloom.network\",\"version\":1,\"nodes\":[{\"id\":\"data\",\"op\":\"Input\"},"
    "{\"id\":\"flat\",\"op\":\"Flatten\"},{\"id\":\"fc\",\"op\":\"Dense\",\"params\":{\"units\":3}}],"
    "\"edges\":[\"data -> flat\",\"flat -> fc\"]}";
  for (int workers = 0; workers <= 2; workers += 2)
    {
      g_auto (NlRunConfig) cfg = { 0 };
      g_autoptr (GError) error = NULL;
      g_autoptr (NlNetwork) net = nl_network_load_data (json, -1, &error);
      g_autoptr (NlTrainer) t = NULL;
      config (&cfg, NL_OPTIM_SGD, 0.1f);
      cfg.scheduler_workers = workers;
      t = nl_trainer_new (net, &cfg, &error);
      g_assert_no_error (error);
      g_assert_false (nl_trainer_run (t, NULL, &error));
      g_test_message ("%s", error->message);
      g_assert_error (error, NL_OP_ERROR, NL_OP_ERROR_RUNTIME);
      g_assert_nonnull (strstr (error->message, "op 'loss (SoftmaxCrossEntropy) forward' failed"));
      g_assert_nonnull (strstr (error->message, "not a class index"));
      /* reported once: the model is clean again */
      g_clear_error (&error);
      g_assert_true (nl_model_sync (nl_trainer_get_model (t), &error));
    }
}

/* Independent branches may run at once on scheduler workers: the numbers
 * stay bit-identical to the inline order. */
static void
test_scheduler_workers (void)
{
  g_auto (NlRunConfig) cfg = { 0 };
  Seen s1 = { 0 }, s2 = { 0 };
  g_autoptr (NlTrainer) a = NULL, b = NULL;
  /* two towers joined by Add: their forward and backward ops are independent */
  const char *towers =
    "{\"format\":\"netloom.network\",\"version\":1,\"nodes\":[{\"id\":\"data\",\"op\":\"Input\"},"
    "{\"id\":\"flat\",\"op\":\"Flatten\"},{\"id\":\"a\",\"op\":\"Dense\",\"params\":{\"units\":16}},"
    "{\"id\":\"b\",\"op\":\"Dense\",\"params\":{\"units\":16}},{\"id\":\"ta\",\"op\":\"Activation\","
    "\"params\":{\"act_type\":\"tanh\"}},{\"id\":\"add\",\"op\":\"Add\"},{\"id\":\"act\",\"op\":\"Activation\"},"
    "{\"id\":\"fc\",\"op\":\"Dense\",\"params\":{\"units\":10}}],\"edges\":[\"data -> flat\",\"flat -> a\","
    "\"flat -> b\",\"a -> ta\",\"ta -> add:0\",\"b -> add:1\",\"add -> act\",\"act -> fc\"]}";
  config (&cfg, NL_OPTIM_SGD, 0.1f);
  cfg.epochs = 1;
  a = train_net (towers, &cfg, &s1);
  cfg.scheduler_workers = 2;
  b = train_net (towers, &cfg, &s2);
  g_assert_cmpfloat (s1.last.test_acc, >, 0.5);
  assert_weights (a, b, TRUE);
  g_assert_cmpfloat (s1.last.train_loss, ==, s2.last.train_loss);
}

static void
test_missing_dataset (void)
{
  g_auto (NlRunConfig) cfg = { 0 };
  g_autoptr (GError) error = NULL;
  g_autoptr (NlNetwork) net = nl_network_load_data (net_json, -1, &error);
  g_autoptr (NlTrainer) t = NULL;
  config (&cfg, NL_OPTIM_SGD, 0.1f);
  nl_run_config_set_text (&cfg.dataset, "mnist:/nonexistent-dir");
  t = nl_trainer_new (net, &cfg, &error);
  g_assert_null (t);
  g_assert_nonnull (error);
  g_assert_nonnull (strstr (error->message, "/nonexistent-dir"));
}

/* Resuming inside an epoch: a checkpoint taken by the interval hook after
 * some step of epoch 2, loaded into a fresh trainer, goes on at the next
 * batch. With augmentation, dropout, a cosine schedule, Adam and loader
 * threads, the weights and the epochs' reports (their sums of the partial
 * epoch included) come out bit for bit those of the run never stopped. */
typedef struct {
  int64_t steps, at;
  GBytes *blob;
  NlEpochReport reports[3];
  int n_reports;
} Interval;

static gboolean
interval_hook (gpointer user, NlTrainer *t, GError **error)
{
  Interval *iv = user;
  NlTrainPosition pos = { 0 };
  if (++iv->steps != iv->at)
    return TRUE;
  nl_trainer_get_train_position (t, &pos);
  g_assert_cmpint (pos.epoch, ==, 1);
  g_assert_cmpint (pos.batch, ==, iv->at - 19);
  g_assert_cmpint (pos.epoch_seen, ==, pos.batch * 32);
  g_assert_cmpint (pos.epoch_counted, ==, pos.batch * 32);
  iv->blob = nl_checkpoint_save (nl_trainer_get_model (t), &pos, error);
  return iv->blob != NULL;
}

static void
interval_epoch (gpointer user, const NlEpochReport *r)
{
  Interval *iv = user;
  iv->reports[iv->n_reports++ % 3] = *r;
}

static void
test_resume_inside_epoch (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (NlNetwork) net = nl_network_load_data (net_json, -1, &error);
  g_auto (NlRunConfig) cfg = { 0 };
  g_autoptr (NlTrainer) a = NULL, b = NULL;
  Interval first = { .at = 19 + 7 }, second = { 0 };
  NlTrainCallbacks cb = { NULL, interval_epoch, &first, NULL, 1e-9, interval_hook };
  NlTrainPosition pos = { 0 };

  config (&cfg, NL_OPTIM_ADAM, 0.01f);
  nl_run_config_set_text (&cfg.augment, "random-crop:20:2,flip");
  nl_run_config_set_text (&cfg.lr_schedule, "cosine");
  cfg.workers = 2;
  a = nl_trainer_new (net, &cfg, &error);
  g_assert_no_error (error);
  g_assert_true (nl_trainer_run (a, &cb, &error));
  g_assert_no_error (error);
  g_assert_nonnull (first.blob);
  g_assert_cmpint (first.steps, ==, 3 * 19);   /* the hook came after every step */

  b = nl_trainer_new (net, &cfg, &error);
  g_assert_no_error (error);
  g_assert_true (nl_checkpoint_load (nl_trainer_get_model (b), first.blob, FALSE, &pos, &error));
  g_assert_no_error (error);
  g_assert_cmpint (pos.batch, ==, 7);
  nl_trainer_set_train_position (b, &pos);
  cb.user = &second;
  cb.interval_done = NULL;
  g_assert_true (nl_trainer_run (b, &cb, &error));
  g_assert_no_error (error);
  assert_weights (a, b, TRUE);
  /* epochs 2 and 3: the partial one's report as if never stopped */
  g_assert_cmpint (second.n_reports, ==, 2);
  for (int e = 0; e < 2; e++)
    {
      g_assert_cmpint (second.reports[e].epoch, ==, e + 2);
      g_assert_true (second.reports[e].train_loss == first.reports[e + 1].train_loss);
      g_assert_true (second.reports[e].train_acc == first.reports[e + 1].train_acc);
      g_assert_true (second.reports[e].test_acc == first.reports[e + 1].test_acc);
      g_assert_true (second.reports[e].lr == first.reports[e + 1].lr);
    }
  nl_train_position_clear (&pos);
  g_bytes_unref (first.blob);
}

int
main (int argc, char **argv)
{
  int status;
  g_test_init (&argc, &argv, NULL);
  data_dir = g_dir_make_tmp ("netloom-train-XXXXXX", NULL);
  write_idx ("train-images-idx3-ubyte", TRUE, 600, 20, 1);
  write_idx ("train-labels-idx1-ubyte", FALSE, 600, 20, 1);
  write_idx ("t10k-images-idx3-ubyte", TRUE, 200, 20, 2);
  write_idx ("t10k-labels-idx1-ubyte", FALSE, 200, 20, 2);
  g_test_add_func ("/train/learns", test_learns);
  g_test_add_func ("/train/reproducible", test_reproducible);
  g_test_add_func ("/train/every-optimizer", test_every_optimizer);
  g_test_add_func ("/train/diverges", test_diverges);
  g_test_add_func ("/train/missing-dataset", test_missing_dataset);
  g_test_add_func ("/train/failing-op", test_failing_op);
  g_test_add_func ("/train/scheduler-workers", test_scheduler_workers);
  g_test_add_func ("/train/resume-inside-epoch", test_resume_inside_epoch);
  status = g_test_run ();
  {
    const char *names[] = { "train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte",
                            "t10k-labels-idx1-ubyte" };
    for (gsize i = 0; i < G_N_ELEMENTS (names); i++)
      {
        g_autofree char *p = g_build_filename (data_dir, names[i], NULL);
        g_unlink (p);
      }
    g_rmdir (data_dir);
  }
  return status;
}
