/* test-int8-model.c — the netloom.int8 file (nl-int8-model.h): a round
 * trip of weights, running statistics and the table into another model of
 * the network; what the file holds (names as checkpoints, no optimizer
 * state, metadata); and every damage refused with one message starting
 * "INT8 model: " and the model left as it was. */
#include <math.h>
#include <string.h>

#include "engine/formats/nl-checkpoint.h"
#include "engine/formats/nl-int8-model.h"
#include "engine/formats/nl-safetensors.h"
#include "nl-test-util.h"

static NlModel *
make_model (const char *template, guint64 seed)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (NlNetwork) net = nl_test_load_template (template);
  NlShape sample = nl_shape_of (3, (int64_t) 1, (int64_t) 28, (int64_t) 28);
  NlOptimConfig cfg;
  nl_optim_config_init (&cfg, NL_OPTIM_ADAM); /* optimizer state the file must leave out */
  NlModel *m = nl_model_new_full (net, &sample, &(NlModelOptions) { .seed = seed, .optim = &cfg }, &error);
  g_assert_no_error (error);
  /* running statistics too get values of their own */
  for (int i = 0; i < m->n_nodes * NL_GRAPH_MAX_SLOTS; i++)
    if (m->aux[i])
      nl_test_fill_uniform (m->aux[i], 0.5f, 1.5f, seed + i);
  return m;
}

static NlQuantTable *
make_table (void)
{
  NlQuantTable *t = nl_quant_table_new (NL_QUANT_ENTROPY, 96);
  nl_quant_table_add (t, "data", -0.4f, 2.8f, 2.5f);
  nl_quant_table_add (t, "relu1", 0.0f, 3.5f, 2.75f);
  return t;
}

/* every weight and aux tensor of a and b, equal or not */
static gboolean
same_weights (const NlModel *a, const NlModel *b)
{
  for (int i = 0; i < a->n_nodes * NL_GRAPH_MAX_SLOTS; i++)
    for (int k = 0; k < 2; k++)
      {
        NlTensor *x = k ? a->aux[i] : a->weights[i], *y = k ? b->aux[i] : b->weights[i];
        if (x && memcmp (nl_tensor_f32 (x), nl_tensor_f32 (y), nl_tensor_numel (x) * sizeof (float)) != 0)
          return FALSE;
      }
  return TRUE;
}

static void
test_round_trip (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (NlModel) a = make_model ("lenet", 1), b = make_model ("lenet", 2);
  g_autoptr (NlQuantTable) t = make_table (), back = NULL;
  g_autoptr (GBytes) blob = nl_int8_model_write (a, t, 7, &error);
  g_assert_no_error (error);
  g_assert_false (same_weights (a, b));
  g_assert_true (nl_int8_model_read (blob, b, &back, &error));
  g_assert_no_error (error);
  g_assert_true (same_weights (a, b));
  g_autofree char *j1 = nl_quant_table_to_json (t), *j2 = nl_quant_table_to_json (back);
  g_assert_cmpstr (j1, ==, j2);
  g_assert_cmpint (nl_int8_model_epoch (blob), ==, 7);

  /* what the file holds: the checkpoint's names, no optimizer state */
  g_autoptr (NlSafetensors) st = nl_safetensors_parse (blob, &error);
  g_autoptr (NlNetwork) net = nl_test_load_template ("lenet");
  g_autofree char *hash = nl_checkpoint_network_hash (net);
  g_assert_cmpstr (nl_safetensors_metadata (st, "format"), ==, "netloom.int8");
  g_assert_cmpstr (nl_safetensors_metadata (st, "version"), ==, "1");
  g_assert_cmpstr (nl_safetensors_metadata (st, "epoch"), ==, "7");
  g_assert_cmpstr (nl_safetensors_metadata (st, "network_hash"), ==, hash);
  g_assert_cmpstr (nl_safetensors_metadata (st, "quant_table"), ==, j1);
  g_assert_nonnull (nl_safetensors_find (st, "conv1.weight"));
  g_assert_nonnull (nl_safetensors_find (st, "fc2.bias"));
  for (int i = 0; i < nl_safetensors_n_tensors (st); i++)
    g_assert_false (g_str_has_prefix (nl_safetensors_tensor (st, i)->name, NL_CHECKPOINT_STATE_PREFIX));
}

/* blob with metadata key set to value (NULL: left out), the rest as written */
static GBytes *
with_metadata (const NlModel *m, const char *key, const char *value)
{
  g_autoptr (NlQuantTable) t = make_table ();
  g_autofree char *table = nl_quant_table_to_json (t);
  const char *meta[] = { "format", "netloom.int8", "version", "1", "epoch", "3", "quant_table", table, NULL, NULL };
  const char *out[10] = { NULL };
  int n = 0;
  for (int i = 0; meta[i]; i += 2)
    if (strcmp (meta[i], key) != 0 || value)
      {
        out[n++] = meta[i];
        out[n++] = strcmp (meta[i], key) != 0 ? meta[i + 1] : value;
      }
  GBytes *b = nl_weights_save_bytes (m, out, NULL);
  g_assert_nonnull (b);
  return b;
}

/* read refuses blob into a fresh lenet model (seed 4): one message with
 * words, the model and *t untouched */
static void
expect_refused (GBytes *blob, const char *words)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (NlModel) m = make_model ("lenet", 4), same = make_model ("lenet", 4);
  NlQuantTable *t = NULL;
  g_assert_false (nl_int8_model_read (blob, m, &t, &error));
  g_assert_nonnull (error);
  g_test_message ("%s", error->message);
  g_assert_true (g_str_has_prefix (error->message, "INT8 model: "));
  g_assert_null (strchr (error->message, '\n'));
  g_assert_nonnull (strstr (error->message, words));
  g_assert_null (t);
  g_assert_true (same_weights (m, same));
}

static void
test_refused (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (NlModel) a = make_model ("lenet", 1), mlp = make_model ("mlp", 1);
  g_autoptr (NlQuantTable) t = make_table ();
  g_autoptr (GBytes) blob = nl_int8_model_write (a, t, 2, &error);
  gsize size;
  const guint8 *data = g_bytes_get_data (blob, &size);

  /* a flipped bit in the weights */
  g_autofree guint8 *flipped = g_memdup2 (data, size);
  flipped[size - 5] ^= 0x10;
  g_autoptr (GBytes) damaged = g_bytes_new (flipped, size);
  expect_refused (damaged, "checksum mismatch");
  /* cut short */
  g_autoptr (GBytes) cut = g_bytes_new (data, size - 100);
  expect_refused (cut, "INT8 model: ");
  /* a checkpoint is not one */
  g_autoptr (GBytes) ckpt = nl_checkpoint_save (a, NULL, &error);
  g_assert_no_error (error);
  expect_refused (ckpt, "not a netloom.int8 file (metadata format is 'netloom.checkpoint')");
  /* another network's */
  g_autoptr (GBytes) other = nl_int8_model_write (mlp, t, 2, &error);
  expect_refused (other, "another network");
  /* the metadata, one member at a time */
  g_autoptr (GBytes) newer = with_metadata (a, "version", "2");
  expect_refused (newer, "version 2 is newer");
  g_autoptr (GBytes) no_epoch = with_metadata (a, "epoch", NULL);
  expect_refused (no_epoch, "epoch is missing");
  g_autoptr (GBytes) bad_epoch = with_metadata (a, "epoch", "-1");
  expect_refused (bad_epoch, "epoch is '-1'");
  g_autoptr (GBytes) no_table = with_metadata (a, "quant_table", NULL);
  expect_refused (no_table, "quant_table is missing");
  g_autoptr (GBytes) bad_table = with_metadata (a, "quant_table", "{\"method\":\"entropy\"}");
  expect_refused (bad_table, "quant_table: ");
  g_autoptr (GBytes) zero = with_metadata (a, "quant_table", "{\"method\":\"naive\",\"calibration_samples\":1,"
                                           "\"ranges\":[{\"point\":\"x\",\"min\":0,\"max\":1,\"threshold\":0,"
                                           "\"unsigned\":true}]}");
  expect_refused (zero, "quant_table: ");
  g_assert_cmpint (nl_int8_model_epoch (damaged), ==, 2);
  g_assert_cmpint (nl_int8_model_epoch (ckpt), ==, -1);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/int8-model/round-trip", test_round_trip);
  g_test_add_func ("/int8-model/refused", test_refused);
  return g_test_run ();
}
