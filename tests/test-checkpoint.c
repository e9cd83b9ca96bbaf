/* test-checkpoint.c — checkpoints and weights files: bit-exact round trips
 * and resumption, files read back by an independent parser
 * (tests/safetensors_check.py), every kind of corrupt or mismatched file
 * rejected with the model left untouched, import by name with Gluon's
 * allow_missing / ignore_extra, and a fuzz loop over a valid checkpoint. */
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <math.h>
#include <string.h>

#include "engine/formats/nl-checkpoint.h"
#include "engine/formats/nl-safetensors.h"
#include "nl-test-util.h"

static char *tmp_dir;

static NlNetwork *
load_net (const char *name)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *rel = g_strdup_printf ("data/networks/%s.json", name);
  g_autofree char *path = nl_test_source_path (rel);
  NlNetwork *net = nl_network_load_file (path, &error);
  g_assert_no_error (error);
  return net;
}

static void
set_input_shape (NlNetwork *net, const char *shape)
{
  g_autoptr (GError) error = NULL;
  g_assert_true (nl_network_set_param (net, nl_network_find (net, "data"), "shape", shape, &error));
  g_assert_no_error (error);
}

static NlModel *
make_model_shape (const NlNetwork *net, const NlShape *sample, guint64 seed, NlOptimKind kind)
{
  g_autoptr (GError) error = NULL;
  NlOptimConfig cfg;
  NlModel *m;
  nl_optim_config_init (&cfg, kind);
  m = nl_model_new_full (net, sample, &(NlModelOptions) { .seed = seed, .optim = &cfg }, &error);
  g_assert_no_error (error);
  return m;
}

static NlModel *
make_model (const NlNetwork *net, guint64 seed, NlOptimKind kind)
{
  NlShape sample = nl_shape_of (3, (int64_t) 1, (int64_t) 28, (int64_t) 28);
  return make_model_shape (net, &sample, seed, kind);
}

/* Every weight, aux and state tensor gets its own values. */
static void
fill_model (NlModel *m, guint64 seed)
{
  for (int i = 0; i < m->n_nodes * NL_GRAPH_MAX_SLOTS; i++)
    {
      if (m->weights[i])
        nl_test_fill_uniform (m->weights[i], -1, 1, seed * 1000003 + i * 8);
      if (m->aux[i])
        nl_test_fill_uniform (m->aux[i], 0.5f, 2, seed * 1000003 + i * 8 + 1);
      for (int s = 0; s < 4; s++)
        if (m->opt_state[i * 4 + s])
          nl_test_fill_uniform (m->opt_state[i * 4 + s], 0, 1, seed * 1000003 + i * 8 + 2 + s);
    }
}

static void
append_tensor (GByteArray *a, const NlTensor *t)
{
  guint8 absent = 0xAB;
  if (!t)
    g_byte_array_append (a, &absent, 1);
  else
    {
      g_byte_array_append (a, (const guint8 *) t->shape, sizeof (int64_t) * t->ndim);
      g_byte_array_append (a, (const guint8 *) nl_tensor_f32 (t), (guint) (nl_tensor_numel (t) * 4));
    }
}

/* All parameter bytes of the model, slot by slot (independent of the code under test). */
static GBytes *
snapshot (NlModel *m)
{
  GByteArray *a = g_byte_array_new ();
  g_assert_true (nl_model_sync (m, NULL));
  for (int i = 0; i < m->n_nodes * NL_GRAPH_MAX_SLOTS; i++)
    {
      append_tensor (a, m->weights[i]);
      append_tensor (a, m->aux[i]);
      for (int s = 0; s < 4; s++)
        append_tensor (a, m->opt_state[i * 4 + s]);
    }
  return g_byte_array_free_to_bytes (a);
}

static void
assert_unchanged (NlModel *m, GBytes *before)
{
  g_autoptr (GBytes) now = snapshot (m);
  g_assert_true (g_bytes_equal (now, before));
}

static int
count_tensors (const NlModel *m, gboolean with_state)
{
  int n = 0;
  for (int i = 0; i < m->n_nodes * NL_GRAPH_MAX_SLOTS; i++)
    {
      n += m->weights[i] != NULL;
      n += m->aux[i] != NULL;
      for (int s = 0; with_state && s < 4; s++)
        n += m->opt_state[i * 4 + s] != NULL;
    }
  return n;
}

static GBytes *
save (NlModel *m, int epoch, gint64 updates, const char *extra)
{
  g_autoptr (GError) error = NULL;
  NlTrainPosition pos = { .epoch = epoch, .updates = updates, .seed = G_GUINT64_CONSTANT (0xfedcba9876543210),
                          .optimizer = (char *) "adam", .extra_json = (char *) extra };
  GBytes *blob = nl_checkpoint_save (m, &pos, &error);
  g_assert_no_error (error);
  return blob;
}

/* ---- round trips ---- */

static void
roundtrip (const char *name)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (NlNetwork) net = load_net (name);
  g_autoptr (NlModel) a = make_model (net, 1, NL_OPTIM_ADAM);
  g_autoptr (NlModel) b = make_model (net, 2, NL_OPTIM_ADAM);
  g_autoptr (GBytes) blob = NULL, blob2 = NULL, snap_a = NULL, snap_b = NULL;
  g_autoptr (NlSafetensors) st = NULL;
  NlTrainPosition pos = { 0 };
  float *w;

  fill_model (a, 7);
  fill_model (b, 8);
  /* values a float round trip through text would lose */
  w = nl_tensor_f32 (a->weights[NL_MODEL_SLOT (1, 0)]);
  w[0] = NAN, w[1] = -0.0f, w[2] = INFINITY, w[3] = 1e-45f, w[4] = -3.4028235e38f;
  memcpy (&w[5], &(guint32) { 0x7fc01234 }, 4); /* a NaN payload */
  blob = save (a, 3, 12345, "{\"lr_schedule\":{\"step\":7}}");
  snap_a = snapshot (a);
  snap_b = snapshot (b);
  g_assert_false (g_bytes_equal (snap_a, snap_b));

  g_assert_true (nl_checkpoint_load (b, blob, FALSE, &pos, &error));
  g_assert_no_error (error);
  assert_unchanged (b, snap_a); /* weights, aux and optimizer state, bit for bit */
  g_assert_cmpint (pos.epoch, ==, 3);
  g_assert_cmpint (pos.updates, ==, 12345);
  g_assert_cmpuint (pos.seed, ==, G_GUINT64_CONSTANT (0xfedcba9876543210));
  g_assert_cmpstr (pos.optimizer, ==, "adam");
  g_assert_cmpstr (pos.extra_json, ==, "{\"lr_schedule\":{\"step\":7}}");
  nl_train_position_clear (&pos);
  g_assert_null (pos.optimizer);

  /* the layout: one tensor per slot, under the documented names */
  st = nl_safetensors_parse (blob, &error);
  g_assert_no_error (error);
  g_assert_cmpint (nl_safetensors_n_tensors (st), ==, count_tensors (a, TRUE));
  g_assert_cmpstr (nl_safetensors_metadata (st, "format"), ==, "netloom.checkpoint");
  g_assert_cmpstr (nl_safetensors_metadata (st, "version"), ==, "2");
  g_assert_cmpint (strlen (nl_safetensors_metadata (st, "crc32")), ==, 8);
  g_assert_cmpstr (nl_safetensors_metadata (st, "epoch"), ==, "3");
  g_assert_cmpstr (nl_safetensors_metadata (st, "updates"), ==, "12345");
  g_assert_cmpstr (nl_safetensors_metadata (st, "seed"), ==, "18364758544493064720");
  g_assert_cmpint (strlen (nl_safetensors_metadata (st, "network_hash")), ==, 64);
  for (int i = 0; i < a->n_nodes; i++)
    {
      const NlNode *n = nl_network_node (a->net, i);
      for (int k = 0; k < n->def->n_weights; k++)
        if (a->weights[NL_MODEL_SLOT (i, k)])
          {
            g_autofree char *wn = g_strdup_printf ("%s.%s", n->id, n->def->weights[k]);
            const NlStTensor *t = nl_safetensors_find (st, wn);
            g_assert_nonnull (t);
            g_assert_true (t->dtype == NL_ST_F32);
            g_assert_cmpint (memcmp (t->data, nl_tensor_f32 (a->weights[NL_MODEL_SLOT (i, k)]), t->end - t->begin),
                             ==, 0);
            for (int s = 0; s < 2; s++) /* Adam: m, v */
              {
                g_autofree char *sn = g_strdup_printf ("optimizer/%s/%d", wn, s);
                g_assert_nonnull (nl_safetensors_find (st, sn));
              }
          }
      for (int k = 0; k < n->def->n_aux; k++)
        {
          g_autofree char *an = g_strdup_printf ("%s.%s", n->id, n->def->aux[k]);
          g_assert_true ((nl_safetensors_find (st, an) != NULL) == (a->aux[NL_MODEL_SLOT (i, k)] != NULL));
        }
    }

  /* saving is deterministic: the loaded model saves the same bytes */
  blob2 = save (b, 3, 12345, "{\"lr_schedule\":{\"step\":7}}");
  g_assert_true (g_bytes_equal (blob, blob2));
}

static void
test_roundtrip_lenet (void)
{
  roundtrip ("lenet");
}

static void
test_roundtrip_resnet (void)
{
  g_autoptr (NlNetwork) net = load_net ("resnet-small");
  g_autoptr (NlModel) m = make_model (net, 1, NL_OPTIM_ADAM);
  g_autoptr (GBytes) blob = save (m, 0, 0, NULL);
  g_autoptr (NlSafetensors) st = nl_safetensors_parse (blob, NULL);
  g_autoptr (NlModel) b = make_model (net, 1, NL_OPTIM_ADAM);
  NlTrainPosition pos = { 0 };
  g_assert_nonnull (nl_safetensors_find (st, "stem_bn.running_mean"));
  g_assert_nonnull (nl_safetensors_find (st, "stem_bn.running_var"));
  g_assert_null (nl_safetensors_find (st, "stem_conv.bias")); /* use_bias false: absent */
  g_assert_null (nl_safetensors_metadata (st, "extra"));
  g_assert_true (nl_checkpoint_load (b, blob, FALSE, &pos, NULL));
  g_assert_null (pos.extra_json);
  nl_train_position_clear (&pos);
  roundtrip ("resnet-small");
}

/* Canvas positions and the name are not part of the network hash; params are. */
static void
test_network_hash (void)
{
  g_autoptr (NlNetwork) net = load_net ("lenet");
  g_autoptr (NlNetwork) moved = nl_network_copy (net);
  g_autoptr (NlNetwork) changed = nl_network_copy (net);
  g_autofree char *h = nl_checkpoint_network_hash (net);
  g_autofree char *h_moved = NULL, *h_changed = NULL;
  g_autoptr (GError) error = NULL;

  nl_network_node (moved, 2)->x += 50;
  g_free (moved->name);
  moved->name = g_strdup ("renamed");
  g_assert_true (nl_network_set_param (changed, nl_network_find (changed, "relu1"), "act_type", "tanh", &error));
  g_assert_no_error (error);
  h_moved = nl_checkpoint_network_hash (moved);
  h_changed = nl_checkpoint_network_hash (changed);
  g_assert_cmpstr (h, ==, h_moved);
  g_assert_cmpstr (h, !=, h_changed);
}

/* Resuming from a checkpoint continues exactly as the uninterrupted run:
 * weights, running statistics (BatchNorm), Adam's moments and t. The saving
 * model runs its scheduler on threads and is saved right after an update
 * was pushed, so the save must wait for it. */
static void
train_steps (NlModel *m, NlProgram *p, const NlOptimConfig *cfg, gint64 first, gint64 last)
{
  g_autoptr (GError) error = NULL;
  for (gint64 t = first; t <= last; t++)
    {
      float *labels = nl_tensor_f32 (nl_program_label (p));
      nl_test_fill_uniform (nl_program_input (p), -1, 1, (guint64) t);
      for (int i = 0; i < nl_tensor_numel (nl_program_label (p)); i++)
        labels[i] = (float) ((i + t) % 10);
      g_assert_true (nl_program_forward (p, (guint64) t, &error));
      g_assert_true (nl_program_backward (p, &error));
      g_assert_true (nl_program_update (p, cfg, 0.01f, t, &error));
      g_assert_no_error (error);
    }
}

static void
test_resume_bit_exact (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (NlNetwork) net = load_net ("resnet-small");
  NlShape sample = nl_shape_of (3, (int64_t) 1, (int64_t) 12, (int64_t) 12);
  NlCompileOptions opts = { .batch = 4, .training = TRUE, .loss = "SoftmaxCrossEntropy" };
  g_autoptr (NlModel) a = NULL, b = NULL;
  g_autoptr (NlProgram) pa = NULL, pb = NULL;
  g_autoptr (GBytes) blob = NULL, snap_a = NULL, snap_saved = NULL;
  NlOptimConfig cfg;
  NlTrainPosition pos = { 0 };

  nl_optim_config_init (&cfg, NL_OPTIM_ADAM);
  set_input_shape (net, "[1,12,12]");
  a = nl_model_new_full (net, &sample, &(NlModelOptions) { .seed = 5, .scheduler_workers = 2, .optim = &cfg }, &error);
  g_assert_no_error (error);
  pa = nl_program_new (a, &opts, &error);
  g_assert_no_error (error);
  train_steps (a, pa, &cfg, 1, 3);
  blob = save (a, 1, 3, NULL); /* no sync before: save must wait for update 3 */
  snap_saved = snapshot (a);
  train_steps (a, pa, &cfg, 4, 6);
  snap_a = snapshot (a);

  b = make_model_shape (net, &sample, 99, NL_OPTIM_ADAM);
  g_assert_true (nl_checkpoint_load (b, blob, FALSE, &pos, &error));
  g_assert_no_error (error);
  assert_unchanged (b, snap_saved);
  g_assert_cmpint (pos.updates, ==, 3);
  pb = nl_program_new (b, &opts, &error);
  g_assert_no_error (error);
  train_steps (b, pb, &cfg, pos.updates + 1, 6);
  assert_unchanged (b, snap_a);
  nl_train_position_clear (&pos);
}

/* A checkpoint taken inside an epoch keeps where: the batch, the epoch's
 * sums (doubles exactly, whatever their digits) and fp16's streaks; one at
 * an epoch's end stores none of it and reads back zeros. A bad value is
 * refused by name. */
static void
test_position_inside_epoch (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (NlNetwork) net = load_net ("lenet");
  g_autoptr (NlModel) m = make_model (net, 1, NL_OPTIM_ADAM);
  g_autoptr (GBytes) blob = NULL, at_end = NULL;
  g_autoptr (NlSafetensors) st = NULL, st_end = NULL;
  NlTrainPosition pos = { .epoch = 2, .updates = 157, .seed = 9, .optimizer = (char *) "adam",
                          .loss_scale = 1024, .skipped = 3, .good_steps = 1999, .bad_steps = 1,
                          .batch = 31, .epoch_loss = 0.1 + 0.2 + 1e-17, .epoch_seen = 992,
                          .epoch_correct = 1.0 / 3.0 * 900, .epoch_counted = 992, .epoch_seconds = 12.345678901234567 };
  NlTrainPosition back = { 0 }, end = { 0 };

  blob = nl_checkpoint_save (m, &pos, &error);
  g_assert_no_error (error);
  g_assert_true (nl_checkpoint_load (m, blob, FALSE, &back, &error));
  g_assert_no_error (error);
  g_assert_cmpint (back.epoch, ==, 2);
  g_assert_cmpint (back.updates, ==, 157);
  g_assert_cmpint (back.batch, ==, 31);
  g_assert_true (back.epoch_loss == pos.epoch_loss);
  g_assert_cmpint (back.epoch_seen, ==, 992);
  g_assert_true (back.epoch_correct == pos.epoch_correct);
  g_assert_cmpint (back.epoch_counted, ==, 992);
  g_assert_true (back.epoch_seconds == pos.epoch_seconds);
  g_assert_cmpfloat (back.loss_scale, ==, 1024);
  g_assert_cmpint (back.skipped, ==, 3);
  g_assert_cmpint (back.good_steps, ==, 1999);
  g_assert_cmpint (back.bad_steps, ==, 1);
  nl_train_position_clear (&back);

  /* at an epoch's end: no position inside it is written */
  pos.batch = 0;
  pos.loss_scale = 0;
  at_end = nl_checkpoint_save (m, &pos, &error);
  g_assert_no_error (error);
  st_end = nl_safetensors_parse (at_end, &error);
  g_assert_no_error (error);
  g_assert_null (nl_safetensors_metadata (st_end, "batch"));
  g_assert_null (nl_safetensors_metadata (st_end, "epoch_loss"));
  g_assert_null (nl_safetensors_metadata (st_end, "loss_scale_good_steps"));
  g_assert_true (nl_checkpoint_load (m, at_end, FALSE, &end, &error));
  g_assert_cmpint (end.batch, ==, 0);
  g_assert_cmpfloat (end.epoch_loss, ==, 0);
  g_assert_cmpint (end.good_steps, ==, 0);
  nl_train_position_clear (&end);

  /* a damaged value: named, and the model left alone */
  st = nl_safetensors_parse (blob, &error);
  g_assert_no_error (error);
  {
    g_autoptr (NlSafetensorsWriter) w = nl_safetensors_writer_new ();
    g_autoptr (GBytes) bad = NULL;
    GHashTableIter it;
    gpointer k, v;
    g_hash_table_iter_init (&it, nl_safetensors_metadata_table (st));
    while (g_hash_table_iter_next (&it, &k, &v))
      nl_safetensors_writer_set_metadata (w, k, !strcmp (k, "epoch_loss") ? "nan" : v);
    for (int i = 0; i < nl_safetensors_n_tensors (st); i++)
      {
        const NlStTensor *t = nl_safetensors_tensor (st, i);
        nl_safetensors_writer_add (w, t->name, t->dtype, t->ndim, t->shape, t->data);
      }
    bad = nl_safetensors_writer_finish (w, &error);
    g_assert_no_error (error);
    g_assert_false (nl_checkpoint_load (m, bad, FALSE, &back, &error));
    g_assert_error (error, NL_CHECKPOINT_ERROR, NL_CHECKPOINT_ERROR_FORMAT);
    g_assert_nonnull (strstr (error->message, "'epoch_loss'"));
  }
}

/* ---- the independent parser ---- */

static JsonObject *
python_check (const char *path, gboolean expect_ok, JsonParser *parser)
{
  g_autofree char *python = g_find_program_in_path ("python3");
  g_autofree char *script = nl_test_source_path ("tests/safetensors_check.py");
  g_autofree char *out = NULL, *err = NULL;
  g_autoptr (GError) error = NULL;
  const char *argv[] = { python, script, path, NULL };
  int status;

  g_assert_true (g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, &err, &status, &error));
  g_assert_no_error (error);
  if (!expect_ok)
    {
      g_assert_false (g_spawn_check_wait_status (status, NULL));
      g_assert_nonnull (strstr (err, "safetensors_check:"));
      return NULL;
    }
  if (!g_spawn_check_wait_status (status, NULL))
    g_error ("safetensors_check.py %s failed: %s", path, err);
  g_assert_true (json_parser_load_from_data (parser, out, -1, &error));
  g_assert_no_error (error);
  return json_node_get_object (json_parser_get_root (parser));
}

/* Every weight and aux tensor of m is in the checker's listing with its
 * dtype, shape and the SHA-256 of its bytes; with_state: the optimizer's too. */
static void
assert_listing_matches (JsonObject *listing, const NlModel *m, gboolean with_state)
{
  JsonObject *tensors = json_object_get_object_member (listing, "tensors");
  int n = 0;
  g_assert_cmpint (json_object_get_size (tensors), ==, count_tensors (m, with_state));
  for (int i = 0; i < m->n_nodes; i++)
    for (int k = 0; k < NL_GRAPH_MAX_SLOTS; k++)
      for (int kind = 0; kind < 6; kind++) /* weight, aux, 4 states */
        {
          const NlNode *node = nl_network_node (m->net, i);
          const NlTensor *t = kind == 0 ? m->weights[NL_MODEL_SLOT (i, k)]
                            : kind == 1 ? m->aux[NL_MODEL_SLOT (i, k)]
                                        : m->opt_state[NL_MODEL_SLOT (i, k) * 4 + kind - 2];
          g_autofree char *name = NULL, *sha = NULL;
          JsonObject *o;
          JsonArray *shape;
          if (!t || (kind >= 2 && !with_state))
            continue;
          name = kind == 0   ? g_strdup_printf ("%s.%s", node->id, node->def->weights[k])
                 : kind == 1 ? g_strdup_printf ("%s.%s", node->id, node->def->aux[k])
                             : g_strdup_printf ("optimizer/%s.%s/%d", node->id, node->def->weights[k], kind - 2);
          g_assert_true (json_object_has_member (tensors, name));
          o = json_object_get_object_member (tensors, name);
          g_assert_cmpstr (json_object_get_string_member (o, "dtype"), ==, "F32");
          shape = json_object_get_array_member (o, "shape");
          g_assert_cmpint (json_array_get_length (shape), ==, t->ndim);
          for (int d = 0; d < t->ndim; d++)
            g_assert_cmpint (json_array_get_int_element (shape, d), ==, t->shape[d]);
          sha = g_compute_checksum_for_data (G_CHECKSUM_SHA256, (const guchar *) nl_tensor_f32 (t),
                                             (gsize) nl_tensor_numel (t) * 4);
          g_assert_cmpstr (json_object_get_string_member (o, "sha256"), ==, sha);
          n++;
        }
  g_assert_cmpint (n, ==, count_tensors (m, with_state));
}

static void
export_and_check (const char *net_name)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (NlNetwork) net = load_net (net_name);
  g_autoptr (NlModel) m = make_model (net, 3, NL_OPTIM_ADAM);
  g_autofree char *path = g_build_filename (tmp_dir, "weights.safetensors", NULL);
  g_autofree char *path2 = g_build_filename (tmp_dir, "from-checkpoint.safetensors", NULL);
  g_autofree char *ckpt_path = g_build_filename (tmp_dir, "checkpoint.safetensors", NULL);
  g_autofree char *hash = nl_checkpoint_network_hash (net);
  g_autofree char *c1 = NULL, *c2 = NULL;
  gsize n1, n2;
  g_autoptr (GBytes) blob = NULL;
  g_autoptr (JsonParser) p1 = json_parser_new (), p2 = json_parser_new ();
  JsonObject *listing, *meta;

  fill_model (m, 11);
  g_assert_true (nl_weights_export (m, path, &error));
  g_assert_no_error (error);
  listing = python_check (path, TRUE, p1);
  assert_listing_matches (listing, m, FALSE);
  g_assert_cmpint (json_object_get_int_member (listing, "header_length") % 8, ==, 0);
  meta = json_object_get_object_member (listing, "metadata");
  g_assert_cmpstr (json_object_get_string_member (meta, "format"), ==, "netloom.weights");
  g_assert_cmpstr (json_object_get_string_member (meta, "network_hash"), ==, hash);

  /* the checkpoint, optimizer state included, reads the same way */
  blob = save (m, 1, 2, "{}");
  g_assert_true (g_file_set_contents (ckpt_path, g_bytes_get_data (blob, NULL), (gssize) g_bytes_get_size (blob),
                                      &error));
  listing = python_check (ckpt_path, TRUE, p2);
  assert_listing_matches (listing, m, TRUE);
  meta = json_object_get_object_member (listing, "metadata");
  g_assert_cmpstr (json_object_get_string_member (meta, "extra"), ==, "{}");
  g_assert_cmpstr (json_object_get_string_member (meta, "updates"), ==, "2");

  /* filtering the checkpoint gives exactly the weights file */
  g_assert_true (nl_weights_export_from_checkpoint (blob, path2, &error));
  g_assert_no_error (error);
  g_assert_true (g_file_get_contents (path, &c1, &n1, NULL));
  g_assert_true (g_file_get_contents (path2, &c2, &n2, NULL));
  g_assert_cmpmem (c1, n1, c2, n2);
  g_unlink (path);
  g_unlink (path2);
  g_unlink (ckpt_path);
}

static void
test_export_python (void)
{
  g_autofree char *python = g_find_program_in_path ("python3");
  if (!python)
    {
      g_test_skip ("python3 not found: the independent parser cannot run");
      return;
    }
  export_and_check ("lenet");
  export_and_check ("resnet-small");
}

/* The checker is not a rubber stamp: it rejects broken files. */
static void
test_python_rejects (void)
{
  g_autofree char *python = g_find_program_in_path ("python3");
  g_autofree char *path = g_build_filename (tmp_dir, "bad.safetensors", NULL);
  /* a 4-byte gap before b */
  const char hdr[] = "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
                     "\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[8,12]}}    ";
  guint8 file[8 + sizeof hdr - 1 + 12] = { 0 };
  if (!python)
    {
      g_test_skip ("python3 not found");
      return;
    }
  G_STATIC_ASSERT ((sizeof hdr - 1) % 8 == 0);
  file[0] = sizeof hdr - 1;
  memcpy (file + 8, hdr, sizeof hdr - 1);
  g_assert_true (g_file_set_contents (path, (const char *) file, sizeof file, NULL));
  python_check (path, FALSE, NULL);
  g_unlink (path);
}

/* ---- the reader on hand-made files ---- */

static GBytes *
assemble (const char *header, const void *data, size_t data_len)
{
  size_t n = strlen (header), padded = (n + 7) / 8 * 8;
  guint8 *b = g_malloc (8 + padded + data_len);
  for (int i = 0; i < 8; i++)
    b[i] = (guint8) ((guint64) padded >> (8 * i));
  memcpy (b + 8, header, n);
  memset (b + 8 + n, ' ', padded - n);
  if (data_len)
    memcpy (b + 8 + padded, data, data_len);
  return g_bytes_new_take (b, 8 + padded + data_len);
}

static void
test_reader_dtypes (void)
{
  g_autoptr (GError) error = NULL;
  /* data: i64 [2] = {-1, 7}; u8 [3] = {1,2,3}; f64 scalar 2.5; empty i32 (0, 4) */
  guint8 data[16 + 3 + 8];
  gint64 i64[2] = { -1, 7 };
  double f64 = 2.5;
  const char *hdr = "{\"__metadata__\":{\"k\":\"v\"},"
                    "\"u\":{\"dtype\":\"U8\",\"shape\":[3],\"data_offsets\":[16,19]},"
                    "\"x\":{\"dtype\":\"I64\",\"shape\":[2],\"data_offsets\":[0,16]},"
                    "\"e\":{\"dtype\":\"I32\",\"shape\":[0,4],\"data_offsets\":[19,19]},"
                    "\"s\":{\"dtype\":\"F64\",\"shape\":[],\"data_offsets\":[19,27]}}";
  g_autoptr (GBytes) blob = NULL;
  g_autoptr (NlSafetensors) st = NULL;
  const NlStTensor *t;
  gint64 x1;
  double s;

  memcpy (data, i64, 16);
  data[16] = 1, data[17] = 2, data[18] = 3;
  memcpy (data + 19, &f64, 8);
  blob = assemble (hdr, data, sizeof data);
  st = nl_safetensors_parse (blob, &error);
  g_assert_no_error (error);
  g_assert_cmpint (nl_safetensors_n_tensors (st), ==, 4);
  /* data-section order */
  g_assert_cmpstr (nl_safetensors_tensor (st, 0)->name, ==, "x");
  g_assert_cmpstr (nl_safetensors_tensor (st, 1)->name, ==, "u");
  g_assert_cmpstr (nl_safetensors_tensor (st, 2)->name, ==, "e");
  g_assert_cmpstr (nl_safetensors_tensor (st, 3)->name, ==, "s");
  t = nl_safetensors_find (st, "x");
  g_assert_true (t->dtype == NL_ST_I64);
  memcpy (&x1, t->data + 8, 8);
  g_assert_cmpint (x1, ==, 7);
  t = nl_safetensors_find (st, "u");
  g_assert_true (t->dtype == NL_ST_U8 && t->numel == 3 && t->data[2] == 3);
  t = nl_safetensors_find (st, "e");
  g_assert_true (t->dtype == NL_ST_I32 && t->numel == 0 && t->ndim == 2 && t->shape[1] == 4);
  t = nl_safetensors_find (st, "s");
  g_assert_true (t->dtype == NL_ST_F64 && t->ndim == 0 && t->numel == 1);
  memcpy (&s, t->data, 8);
  g_assert_cmpfloat (s, ==, 2.5);
  g_assert_cmpstr (nl_safetensors_metadata (st, "k"), ==, "v");
  g_assert_null (nl_safetensors_find (st, "__metadata__"));
  g_clear_pointer (&st, nl_safetensors_free);
  g_clear_pointer (&blob, g_bytes_unref);

  /* JSON escapes decode to UTF-8, surrogate pairs included */
  blob = assemble ("{\"\\u00fc\\ud83d\\ude00\\/\":{\"dtype\":\"BOOL\",\"shape\":[1],\"data_offsets\":[0,1]}}", data, 1);
  st = nl_safetensors_parse (blob, &error);
  g_assert_no_error (error);
  g_assert_nonnull (nl_safetensors_find (st, "\xc3\xbc\xf0\x9f\x98\x80/"));
}

static void
expect_parse_error (const char *header, size_t data_len, const char *needle)
{
  g_autoptr (GError) error = NULL;
  g_autofree guint8 *data = g_malloc0 (MAX (data_len, 1));
  g_autoptr (GBytes) blob = assemble (header, data, data_len);
  g_autoptr (NlSafetensors) st = nl_safetensors_parse (blob, &error);
  g_assert_null (st);
  g_assert_error (error, NL_SAFETENSORS_ERROR, NL_SAFETENSORS_ERROR_FORMAT);
  if (!strstr (error->message, needle))
    g_error ("expected '%s' in: %s", needle, error->message);
}

static void
test_reader_rejects (void)
{
  g_autoptr (GString) deep = g_string_new ("{\"a\":");
  expect_parse_error ("{\"a\":{\"dtype\":\"F16\",\"shape\":[2],\"data_offsets\":[0,2]}}", 2, "'a'");
  expect_parse_error ("{\"a\":{\"dtype\":\"Q8\",\"shape\":[2],\"data_offsets\":[0,2]}}", 2, "unknown dtype 'Q8'");
  expect_parse_error ("{\"a\":{\"dtype\":\"F32\",\"shape\":[-2],\"data_offsets\":[0,8]}}", 8, "shape entry 0");
  expect_parse_error ("{\"a\":{\"dtype\":\"F32\",\"shape\":[2.0],\"data_offsets\":[0,8]}}", 8, "shape entry 0");
  expect_parse_error ("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[8,0]}}", 8, "end before");
  expect_parse_error ("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8,9]}}", 8, "two integers");
  expect_parse_error ("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[4,12]}}", 8, "run past");
  expect_parse_error ("{\"a\":{\"dtype\":\"F32\",\"shape\":[2]}}", 8, "lacks \"data_offsets\"");
  expect_parse_error ("{\"a\":{\"dtype\":\"F32\",\"shape\":[4611686018427387904,4],\"data_offsets\":[0,8]}}", 8,
                      "overflows");
  expect_parse_error ("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
                      "\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}",
                      8, "tensor 'b' (data bytes 4 to 8) overlaps tensor 'a'");
  expect_parse_error ("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}", 8,
                      "data bytes 0 to 4 belong to no tensor (gap before tensor 'a')");
  expect_parse_error ("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 8,
                      "data bytes 4 to 8 belong to no tensor");
  expect_parse_error ("{\"__metadata__\":{\"k\":1}}", 0, "'k' is not a string");
  expect_parse_error ("{\"__metadata__\":[]}", 0, "__metadata__ is not an object");
  expect_parse_error ("{\"a\":[]}", 0, "'a': header entry is not an object");
  expect_parse_error ("[1, 2]", 0, "does not start with '{'");
  expect_parse_error ("{\"a\":1,}", 0, "not valid JSON");
  expect_parse_error ("{\"a\":{}} trailing", 0, "not valid JSON");
  expect_parse_error ("{\"a\xff\":{}}", 0, "not UTF-8 at byte 11");
  /* a million '[' must be an error, not a stack overflow */
  for (int i = 0; i < 1000000; i++)
    g_string_append_c (deep, '[');
  expect_parse_error (deep->str, 0, "expected less nesting (at most 32 levels) at byte 44");
  /* json-glib accepts these; standard JSON does not */
  expect_parse_error ("{\"__metadata__\":{\"k\":\"\\101\"}}", 0, "expected a valid escape at byte 31");
  expect_parse_error ("{/* c */}", 0, "expected a string at byte 9");
  expect_parse_error ("{\"a\":{\"dtype\":\"U8\",\"shape\":[0x1],\"data_offsets\":[0,1]}}", 1,
                      "expected ',' or ']' at byte 37");
  expect_parse_error ("{\"a\\ud800\":{}}", 0, "expected a low surrogate after a high one at byte 17");
  expect_parse_error ("{\"a\\u0000b\":{}}", 0, "no \\u0000 in a string");
  expect_parse_error ("{\"a\tb\":{}}", 0, "expected no control character in a string at byte 11");
  expect_parse_error ("{\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]},"
                      "\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]}}",
                      1, "a key twice");
  expect_parse_error ("{\"a\":{\"dtype\":\"U8\",\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]}}", 1,
                      "a key twice");
  expect_parse_error ("{\"a\":{\"dtype\":\"U8\",\"shape\":[18446744073709551617],\"data_offsets\":[0,1]}}", 1,
                      "expected an integer that fits 64 bits at byte 36");
  expect_parse_error ("{\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]}} x", 1,
                      "expected the end of the header at byte");
}

/* ---- corrupt checkpoints ---- */

static GBytes *
header_of (GBytes *blob, char **header, size_t *header_len)
{
  gsize size;
  const guint8 *d = g_bytes_get_data (blob, &size);
  guint64 n = 0;
  for (int i = 7; i >= 0; i--)
    n = n << 8 | d[i];
  *header = g_strndup ((const char *) d + 8, n);
  *header_len = n;
  return g_bytes_new_from_bytes (blob, 8 + n, size - 8 - n);
}

/* The checkpoint with one substring of its header replaced. */
static GBytes *
edit_header (GBytes *blob, const char *from, const char *to)
{
  g_autofree char *header = NULL;
  size_t n;
  g_autoptr (GBytes) data = header_of (blob, &header, &n);
  g_autoptr (GString) s = g_string_new (g_strchomp (header));
  g_assert_cmpuint (g_string_replace (s, from, to, 1), ==, 1);
  return assemble (s->str, g_bytes_get_data (data, NULL), g_bytes_get_size (data));
}

static char *
offsets_of (GBytes *blob, const char *name, gint64 shift_begin, gint64 shift_end)
{
  g_autoptr (NlSafetensors) st = nl_safetensors_parse (blob, NULL);
  const NlStTensor *t = nl_safetensors_find (st, name);
  g_assert_nonnull (t);
  return g_strdup_printf ("\"data_offsets\":[%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT "]",
                          (gint64) t->begin + shift_begin, (gint64) t->end + shift_end);
}

/* The checkpoint rewritten with one tensor dropped, reshaped (zeros),
 * retyped, or one extra tensor, or one metadata value changed. */
typedef struct {
  const char *tensor;
  gboolean drop;
  int ndim;
  int64_t shape[4];
  NlStDType dtype;      /* 0 (BOOL) keeps the dtype */
  const char *add;
  const char *meta_key, *meta_value;
} Edit;

static GBytes *
rewrite (GBytes *blob, const Edit *e)
{
  g_autoptr (NlSafetensors) st = nl_safetensors_parse (blob, NULL);
  g_autoptr (NlSafetensorsWriter) w = nl_safetensors_writer_new ();
  g_autoptr (GPtrArray) buffers = g_ptr_array_new_with_free_func (g_free);
  GHashTableIter it;
  gpointer k, v;
  float extra[3] = { 1, 2, 3 };
  int64_t three = 3;

  g_hash_table_iter_init (&it, nl_safetensors_metadata_table (st));
  while (g_hash_table_iter_next (&it, &k, &v))
    if (!e->meta_key || strcmp (k, e->meta_key) != 0)
      nl_safetensors_writer_set_metadata (w, k, v);
  if (e->meta_key && e->meta_value)
    nl_safetensors_writer_set_metadata (w, e->meta_key, e->meta_value);
  for (int i = 0; i < nl_safetensors_n_tensors (st); i++)
    {
      const NlStTensor *t = nl_safetensors_tensor (st, i);
      if (e->tensor && strcmp (t->name, e->tensor) == 0)
        {
          NlStDType dt = e->dtype ? e->dtype : t->dtype;
          int ndim = e->ndim ? e->ndim : t->ndim;
          const int64_t *shape = e->ndim ? e->shape : t->shape;
          int64_t numel = 1;
          if (e->drop)
            continue;
          for (int d = 0; d < ndim; d++)
            numel *= shape[d];
          g_ptr_array_add (buffers, g_malloc0 (MAX (numel * nl_st_dtype_size (dt), 1)));
          nl_safetensors_writer_add (w, t->name, dt, ndim, shape, buffers->pdata[buffers->len - 1]);
        }
      else
        nl_safetensors_writer_add (w, t->name, t->dtype, t->ndim, t->shape, t->data);
    }
  if (e->add)
    nl_safetensors_writer_add (w, e->add, NL_ST_F32, 1, &three, extra);
  return nl_safetensors_writer_finish (w, NULL);
}

static void
expect_load_error (NlModel *m, GBytes *bad, gboolean allow_other, GQuark domain, int code, const char *needle)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GBytes) before = snapshot (m);
  NlTrainPosition pos = { .epoch = -7 };
  g_assert_false (nl_checkpoint_load (m, bad, allow_other, &pos, &error));
  g_assert_error (error, domain, code);
  if (!strstr (error->message, needle))
    g_error ("expected '%s' in: %s", needle, error->message);
  g_test_message ("rejected: %s", error->message);
  assert_unchanged (m, before);
  g_assert_cmpint (pos.epoch, ==, -7); /* position untouched too */
  g_assert_null (pos.optimizer);
}

#define ST_FORMAT NL_SAFETENSORS_ERROR, NL_SAFETENSORS_ERROR_FORMAT
#define MISMATCH NL_CHECKPOINT_ERROR, NL_CHECKPOINT_ERROR_MISMATCH

static void
test_corrupt (void)
{
  g_autoptr (NlNetwork) net = load_net ("lenet");
  g_autoptr (NlModel) a = make_model (net, 1, NL_OPTIM_ADAM);
  g_autoptr (NlModel) m = make_model (net, 2, NL_OPTIM_ADAM);
  g_autoptr (GBytes) blob = NULL;
  gsize size;
  const guint8 *d;
  g_autofree char *header = NULL;
  size_t hlen;
  g_autoptr (GBytes) data = NULL;
  int truncations = 0;

  fill_model (a, 21);
  fill_model (m, 22); /* differs from the blob: a partial copy would show */
  blob = save (a, 2, 100, NULL);
  d = g_bytes_get_data (blob, &size);
  data = header_of (blob, &header, &hlen);

  /* truncated anywhere: header length, header, data */
  {
    g_autoptr (GBytes) before = snapshot (m);
    for (gsize cut = 0; cut < size; cut += cut < 8 + hlen + 64 ? 1 + cut / 16 : 1 + (size - cut) / 3)
      {
        g_autoptr (GBytes) t = g_bytes_new_from_bytes (blob, 0, cut);
        g_autoptr (GError) error = NULL;
        g_assert_false (nl_checkpoint_load (m, t, FALSE, NULL, &error));
        g_assert_error (error, NL_SAFETENSORS_ERROR, NL_SAFETENSORS_ERROR_FORMAT);
        truncations++;
      }
    assert_unchanged (m, before);
    g_test_message ("%d truncations rejected", truncations);
  }
  {
    g_autoptr (GBytes) t = g_bytes_new_from_bytes (blob, 0, size - 1);
    g_autofree guint8 *longer = g_malloc0 (size + 4);
    g_autoptr (GBytes) l = NULL;
    memcpy (longer, d, size);
    l = g_bytes_new (longer, size + 4);
    expect_load_error (m, t, FALSE, ST_FORMAT, "tensor 'optimizer/fc2.bias/1': data_offsets");
    expect_load_error (m, t, FALSE, ST_FORMAT, "run past");
    expect_load_error (m, l, FALSE, ST_FORMAT, "belong to no tensor");
  }
  {
    g_autoptr (GBytes) t = g_bytes_new_from_bytes (blob, 0, 5);
    expect_load_error (m, t, FALSE, ST_FORMAT, "file is 5 bytes, too short");
  }
  /* header length too big, too small, absurd */
  {
    guint64 lens[] = { size - 7, G_GUINT64_CONSTANT (1) << 62, 1, 0, 200 * 1000 * 1000 };
    const char *needles[] = { "past the end of the file", "above the limit", "below the minimum", "below the minimum",
                              "above the limit" };
    for (guint i = 0; i < G_N_ELEMENTS (lens); i++)
      {
        g_autofree guint8 *c = g_memdup2 (d, size);
        g_autoptr (GBytes) bad = NULL;
        for (int j = 0; j < 8; j++)
          c[j] = (guint8) (lens[i] >> (8 * j));
        bad = g_bytes_new (c, size);
        expect_load_error (m, bad, FALSE, ST_FORMAT, needles[i]);
      }
  }
  /* a shorter header length that still parses would cut the JSON */
  {
    g_autofree guint8 *c = g_memdup2 (d, size);
    g_autoptr (GBytes) bad = NULL;
    for (int j = 0; j < 8; j++)
      c[j] = (guint8) ((guint64) (hlen - 8) >> (8 * j));
    bad = g_bytes_new (c, size);
    expect_load_error (m, bad, FALSE, ST_FORMAT, "not valid JSON");
  }
  /* header not JSON, not an object */
  {
    g_autoptr (GBytes) bad = assemble ("{\"format\" \"x\"}", g_bytes_get_data (data, NULL), g_bytes_get_size (data));
    expect_load_error (m, bad, FALSE, ST_FORMAT, "not valid JSON");
  }
  {
    g_autoptr (GBytes) bad = assemble ("\"just a string\"", NULL, 0);
    expect_load_error (m, bad, FALSE, ST_FORMAT, "does not start with '{'");
  }
  /* offsets: overlapping, gap, past the end, not fitting the shape */
  {
    g_autofree char *from = offsets_of (blob, "conv1.bias", 0, 0);
    g_autofree char *overlap = offsets_of (blob, "conv1.bias", -4, -4);
    g_autofree char *gap = offsets_of (blob, "conv1.bias", 4, 4);
    g_autofree char *longer = offsets_of (blob, "conv1.bias", 0, 4);
    g_autofree char *last = offsets_of (blob, "optimizer/fc2.bias/1", 0, 0);
    g_autofree char *past = offsets_of (blob, "optimizer/fc2.bias/1", 64, 64);
    g_autoptr (GBytes) b1 = edit_header (blob, from, overlap);
    g_autoptr (GBytes) b2 = edit_header (blob, from, gap);
    g_autoptr (GBytes) b3 = edit_header (blob, from, longer);
    g_autoptr (GBytes) b4 = edit_header (blob, last, past);
    expect_load_error (m, b1, FALSE, ST_FORMAT, "tensor 'conv1.bias' (data bytes");
    expect_load_error (m, b1, FALSE, ST_FORMAT, "overlaps tensor 'conv1.weight'");
    expect_load_error (m, b2, FALSE, ST_FORMAT, "gap before tensor 'conv1.bias'");
    expect_load_error (m, b3, FALSE, ST_FORMAT, "tensor 'conv1.bias': F32 (20) needs 20 x 4 bytes");
    expect_load_error (m, b4, FALSE, ST_FORMAT, "tensor 'optimizer/fc2.bias/1': data_offsets");
    expect_load_error (m, b4, FALSE, ST_FORMAT, "run past");
  }
  /* dtypes: unknown (format error), known but not F32 (mismatch) */
  {
    g_autoptr (GBytes) b1 = edit_header (blob, "\"conv2.bias\":{\"dtype\":\"F32\"", "\"conv2.bias\":{\"dtype\":\"F31\"");
    g_autoptr (GBytes) b2 = edit_header (blob, "\"conv2.bias\":{\"dtype\":\"F32\"", "\"conv2.bias\":{\"dtype\":\"I32\"");
    expect_load_error (m, b1, FALSE, ST_FORMAT, "tensor 'conv2.bias': unknown dtype 'F31'");
    expect_load_error (m, b2, FALSE, MISMATCH, "checkpoint tensor 'conv2.bias' is I32 but the network needs F32");
  }
  /* consistent files that do not fit the model */
  {
    Edit shape = { .tensor = "fc1.weight", .ndim = 2, .shape = { 500, 700 } };
    Edit f64 = { .tensor = "fc2.bias", .dtype = NL_ST_F64 };
    Edit drop = { .tensor = "conv2.bias", .drop = TRUE };
    Edit drop_state = { .tensor = "optimizer/fc1.bias/1", .drop = TRUE };
    Edit add = { .add = "fc3.weight" };
    Edit add_state = { .add = "optimizer/fc1.bias/2" };
    Edit hash = { .meta_key = "network_hash", .meta_value = "0123456789abcdef" };
    Edit no_hash = { .meta_key = "network_hash" };
    Edit format = { .meta_key = "format", .meta_value = "netloom.weights" };
    Edit version = { .meta_key = "version", .meta_value = "3" };
    Edit epoch = { .meta_key = "epoch", .meta_value = "12x" };
    Edit no_updates = { .meta_key = "updates" };
    Edit neg_updates = { .meta_key = "updates", .meta_value = "-1" };
    struct {
      const Edit *e;
      GQuark domain;
      int code;
      const char *needle;
    } cases[] = {
      { &shape, MISMATCH, "checkpoint tensor 'fc1.weight' has shape (500, 700) but the network needs (500, 800)" },
      { &f64, MISMATCH, "checkpoint tensor 'fc2.bias' is F64 but the network needs F32" },
      { &drop, MISMATCH, "the checkpoint lacks tensor 'conv2.bias'" },
      { &drop_state, MISMATCH, "lacks tensor 'optimizer/fc1.bias/1' (it holds state of optimizer 'adam'" },
      { &add, MISMATCH, "checkpoint tensor 'fc3.weight' is not in the network" },
      { &add_state, MISMATCH, "'optimizer/fc1.bias/2' is not in the model's optimizer state" },
      { &hash, NL_CHECKPOINT_ERROR, NL_CHECKPOINT_ERROR_NETWORK, "saved from another network (network hash 0123456789ab" },
      { &no_hash, NL_CHECKPOINT_ERROR, NL_CHECKPOINT_ERROR_FORMAT, "'network_hash' is missing" },
      { &format, NL_CHECKPOINT_ERROR, NL_CHECKPOINT_ERROR_FORMAT,
        "not a netloom.checkpoint file (metadata format is 'netloom.weights')" },
      { &version, NL_CHECKPOINT_ERROR, NL_CHECKPOINT_ERROR_VERSION, "version 3 is newer" },
      { &epoch, NL_CHECKPOINT_ERROR, NL_CHECKPOINT_ERROR_FORMAT, "'epoch' is '12x', not an integer" },
      { &no_updates, NL_CHECKPOINT_ERROR, NL_CHECKPOINT_ERROR_FORMAT, "'updates' is missing" },
      { &neg_updates, NL_CHECKPOINT_ERROR, NL_CHECKPOINT_ERROR_FORMAT, "'updates' is '-1'" },
    };
    for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
      {
        g_autoptr (GBytes) bad = rewrite (blob, cases[i].e);
        g_assert_nonnull (bad);
        expect_load_error (m, bad, FALSE, cases[i].domain, cases[i].code, cases[i].needle);
      }
  }
  /* the hash check can be waived; shapes are still checked */
  {
    Edit hash = { .meta_key = "network_hash", .meta_value = "0123456789abcdef" };
    g_autoptr (GBytes) bad = rewrite (blob, &hash);
    g_autoptr (GError) error = NULL;
    g_assert_true (nl_checkpoint_load (m, bad, TRUE, NULL, &error));
    g_assert_no_error (error);
    fill_model (m, 22);
  }
  /* a truly other network: hash, then (waived) the shape names the tensor */
  {
    g_autoptr (NlNetwork) mlp = load_net ("mlp");
    g_autoptr (NlNetwork) mlp700 = load_net ("mlp");
    g_autoptr (NlModel) small = make_model (mlp, 1, NL_OPTIM_ADAM);
    g_autoptr (NlModel) big = NULL;
    g_autoptr (GBytes) mlp_blob = NULL;
    NlShape sample = nl_shape_of (3, (int64_t) 1, (int64_t) 28, (int64_t) 25); /* 700 inputs */
    set_input_shape (mlp700, "[1,28,25]");
    big = make_model_shape (mlp700, &sample, 1, NL_OPTIM_ADAM);
    mlp_blob = save (big, 1, 1, NULL);
    expect_load_error (small, mlp_blob, TRUE, MISMATCH,
                       "checkpoint tensor 'fc1.weight' has shape (256, 700) but the network needs (256, 784)");
    expect_load_error (m, mlp_blob, FALSE, NL_CHECKPOINT_ERROR, NL_CHECKPOINT_ERROR_NETWORK, "another network");
    expect_load_error (m, mlp_blob, TRUE, MISMATCH, "the checkpoint lacks tensor 'conv1.weight'");
  }
  /* a model prepared for SGD without momentum holds no state: Adam's is extra */
  {
    g_autoptr (NlModel) sgd = make_model (net, 2, NL_OPTIM_SGD);
    expect_load_error (sgd, blob, FALSE, MISMATCH, "'optimizer/conv1.weight/0' is not in the model's optimizer state");
  }
  /* a checkpoint's state, but not another optimizer's count */
  {
    g_autoptr (NlModel) rms = NULL;
    g_autoptr (NlModel) centered = NULL;
    g_autoptr (GBytes) rms_blob = NULL;
    NlOptimConfig cfg;
    rms = make_model (net, 2, NL_OPTIM_RMSPROP);  /* square avg + momentum: 2 states, like Adam */
    rms_blob = save (rms, 0, 0, NULL);
    nl_optim_config_init (&cfg, NL_OPTIM_RMSPROP);
    cfg.centered = TRUE; /* 3 states */
    NlShape sample = nl_shape_of (3, (int64_t) 1, (int64_t) 28, (int64_t) 28); /* make_model's */
    centered = nl_model_new_full (net, &sample, &(NlModelOptions) { .seed = 3, .optim = &cfg }, NULL);
    g_assert_nonnull (centered);
    expect_load_error (centered, rms_blob, FALSE, MISMATCH, "lacks tensor 'optimizer/conv1.weight/2'");
  }
}

/* ---- weights import ---- */

static void
write_bytes (const char *path, GBytes *b)
{
  g_assert_true (nl_safetensors_write_file (path, b, NULL));
}

static void
assert_weights_equal (NlModel *x, NlModel *y, const char *except)
{
  for (int i = 0; i < x->n_nodes; i++)
    for (int k = 0; k < NL_GRAPH_MAX_SLOTS; k++)
      for (int aux = 0; aux < 2; aux++)
        {
          NlTensor *a = aux ? x->aux[NL_MODEL_SLOT (i, k)] : x->weights[NL_MODEL_SLOT (i, k)];
          NlTensor *b = aux ? y->aux[NL_MODEL_SLOT (i, k)] : y->weights[NL_MODEL_SLOT (i, k)];
          const NlNode *n = nl_network_node (x->net, i);
          g_autofree char *name = NULL;
          gboolean same;
          if (!a)
            continue;
          name = g_strdup_printf ("%s.%s", n->id, aux ? n->def->aux[k] : n->def->weights[k]);
          same = memcmp (nl_tensor_f32 (a), nl_tensor_f32 (b), nl_tensor_numel (a) * 4) == 0;
          if (same == (except && strcmp (name, except) == 0))
            g_error ("%s: expected %s", name, same ? "different" : "equal");
        }
}

static void
assert_names (GPtrArray *a, const char *const *names)
{
  g_assert_cmpuint (a->len, ==, g_strv_length ((char **) names));
  for (guint i = 0; i < a->len; i++)
    g_assert_true (g_strv_contains (names, a->pdata[i]));
}

static void
test_import (void)
{
  g_autoptr (NlNetwork) net = load_net ("resnet-small");
  g_autoptr (NlModel) src = make_model (net, 1, NL_OPTIM_ADAM);
  g_autoptr (NlModel) dst = make_model (net, 2, NL_OPTIM_ADAM);
  g_autofree char *path = g_build_filename (tmp_dir, "import.safetensors", NULL);
  g_autofree char *bad = g_build_filename (tmp_dir, "import-bad.safetensors", NULL);
  g_autoptr (GBytes) exported = NULL, before = NULL, ckpt = NULL;
  g_autofree char *contents = NULL;
  gsize len;
  GPtrArray *missing = g_ptr_array_new_with_free_func (g_free);
  GPtrArray *extra = g_ptr_array_new_with_free_func (g_free);
  const char *none[] = { NULL };

  fill_model (src, 31);
  fill_model (dst, 32);
  g_assert_true (nl_weights_export (src, path, NULL));
  g_assert_true (g_file_get_contents (path, &contents, &len, NULL));
  exported = g_bytes_new_take (g_steal_pointer (&contents), len);

  /* the exact set: everything loads, optimizer state stays */
  {
    g_autoptr (NlModel) m = make_model (net, 2, NL_OPTIM_ADAM);
    g_autoptr (GError) error = NULL;
    fill_model (m, 32);
    g_assert_true (nl_weights_import (m, path, FALSE, FALSE, missing, extra, &error));
    g_assert_no_error (error);
    assert_names (missing, none);
    assert_names (extra, none);
    assert_weights_equal (m, src, NULL);
    for (int i = 0; i < m->n_nodes * NL_GRAPH_MAX_SLOTS * 4; i++)
      if (m->opt_state[i])
        g_assert_cmpint (memcmp (nl_tensor_f32 (m->opt_state[i]), nl_tensor_f32 (dst->opt_state[i]),
                                 nl_tensor_numel (m->opt_state[i]) * 4), ==, 0);
  }

  /* missing one tensor: an error unless allow_missing, which keeps its old value */
  {
    Edit drop = { .tensor = "fc.bias", .drop = TRUE };
    g_autoptr (GBytes) b = rewrite (exported, &drop);
    g_autoptr (GError) error = NULL;
    const char *want[] = { "fc.bias", NULL };
    g_autoptr (NlModel) m = make_model (net, 2, NL_OPTIM_ADAM);
    fill_model (m, 32);
    write_bytes (bad, b);
    before = snapshot (m);
    g_assert_false (nl_weights_import (m, bad, FALSE, TRUE, missing, extra, &error));
    g_assert_error (error, NL_CHECKPOINT_ERROR, NL_CHECKPOINT_ERROR_MISMATCH);
    g_assert_nonnull (strstr (error->message, "lacks 1 tensor the network needs: 'fc.bias'"));
    assert_names (missing, want);
    assert_names (extra, none);
    assert_unchanged (m, before);
    g_clear_pointer (&before, g_bytes_unref);
    g_ptr_array_set_size (missing, 0);
    g_assert_true (nl_weights_import (m, bad, TRUE, FALSE, missing, NULL, NULL));
    assert_names (missing, want);
    assert_weights_equal (m, src, "fc.bias");
    g_assert_cmpint (memcmp (nl_tensor_f32 (m->weights[NL_MODEL_SLOT (nl_network_find (net, "fc"), 1)]),
                             nl_tensor_f32 (dst->weights[NL_MODEL_SLOT (nl_network_find (net, "fc"), 1)]), 40),
                     ==, 0);
    g_ptr_array_set_size (missing, 0);
  }

  /* an extra tensor: an error unless ignore_extra */
  {
    Edit add = { .add = "head.weight" };
    g_autoptr (GBytes) b = rewrite (exported, &add);
    g_autoptr (GError) error = NULL;
    const char *want[] = { "head.weight", NULL };
    g_autoptr (NlModel) m = make_model (net, 2, NL_OPTIM_ADAM);
    fill_model (m, 32);
    write_bytes (bad, b);
    before = snapshot (m);
    g_assert_false (nl_weights_import (m, bad, TRUE, FALSE, missing, extra, &error));
    g_assert_error (error, NL_CHECKPOINT_ERROR, NL_CHECKPOINT_ERROR_MISMATCH);
    g_assert_nonnull (strstr (error->message, "holds 1 tensor not in the network: 'head.weight'"));
    assert_names (missing, none);
    assert_names (extra, want);
    assert_unchanged (m, before);
    g_clear_pointer (&before, g_bytes_unref);
    g_ptr_array_set_size (extra, 0);
    g_assert_true (nl_weights_import (m, bad, FALSE, TRUE, NULL, extra, NULL));
    assert_names (extra, want);
    assert_weights_equal (m, src, NULL);
    g_ptr_array_set_size (extra, 0);
  }

  /* a wrong shape or dtype is an error whatever the flags */
  {
    Edit shape = { .tensor = "stem_bn.running_var", .ndim = 1, .shape = { 17 } };
    Edit dtype = { .tensor = "stem_bn.gamma", .dtype = NL_ST_I32 };
    const Edit *edits[] = { &shape, &dtype };
    const char *needles[] = { "tensor 'stem_bn.running_var' has shape (17) but the network needs (16)",
                              "tensor 'stem_bn.gamma' is I32 but the network needs F32" };
    for (int i = 0; i < 2; i++)
      {
        g_autoptr (GBytes) b = rewrite (exported, edits[i]);
        g_autoptr (GError) error = NULL;
        write_bytes (bad, b);
        before = snapshot (dst);
        g_assert_false (nl_weights_import (dst, bad, TRUE, TRUE, NULL, NULL, &error));
        g_assert_error (error, NL_CHECKPOINT_ERROR, NL_CHECKPOINT_ERROR_MISMATCH);
        g_assert_nonnull (strstr (error->message, needles[i]));
        g_assert_true (g_str_has_prefix (error->message, bad));
        assert_unchanged (dst, before);
        g_clear_pointer (&before, g_bytes_unref);
      }
  }

  /* a whole checkpoint: its optimizer tensors are the extras */
  {
    g_autoptr (GError) error = NULL;
    g_autoptr (NlModel) m = make_model (net, 2, NL_OPTIM_ADAM);
    ckpt = save (src, 0, 0, NULL);
    write_bytes (bad, ckpt);
    g_assert_false (nl_weights_import (m, bad, FALSE, FALSE, NULL, extra, &error));
    g_assert_cmpint (extra->len, ==, count_tensors (src, TRUE) - count_tensors (src, FALSE));
    for (guint i = 0; i < extra->len; i++)
      g_assert_true (g_str_has_prefix (extra->pdata[i], "optimizer/"));
    g_ptr_array_set_size (extra, 0);
    g_assert_true (nl_weights_import (m, bad, FALSE, TRUE, NULL, NULL, NULL));
    assert_weights_equal (m, src, NULL);
  }

  /* unreadable and corrupt files */
  {
    g_autoptr (GError) error = NULL;
    g_autofree char *nowhere = g_build_filename (tmp_dir, "nope.safetensors", NULL);
    g_autoptr (GBytes) cut = g_bytes_new_from_bytes (exported, 0, g_bytes_get_size (exported) - 4);
    g_assert_false (nl_weights_import (dst, nowhere, TRUE, TRUE, NULL, NULL, &error));
    g_assert_error (error, G_FILE_ERROR, G_FILE_ERROR_NOENT);
    g_clear_error (&error);
    write_bytes (bad, cut);
    before = snapshot (dst);
    g_assert_false (nl_weights_import (dst, bad, TRUE, TRUE, NULL, NULL, &error));
    g_assert_error (error, NL_SAFETENSORS_ERROR, NL_SAFETENSORS_ERROR_FORMAT);
    g_assert_true (g_str_has_prefix (error->message, bad));
    assert_unchanged (dst, before);
    g_clear_pointer (&before, g_bytes_unref);
  }
  /* exporting a weights file "from a checkpoint" is refused */
  {
    g_autoptr (GError) error = NULL;
    g_assert_false (nl_weights_export_from_checkpoint (exported, bad, &error));
    g_assert_error (error, NL_CHECKPOINT_ERROR, NL_CHECKPOINT_ERROR_FORMAT);
  }
  g_unlink (path);
  g_unlink (bad);
  g_ptr_array_unref (missing);
  g_ptr_array_unref (extra);
}

/* The writer refuses names a reader could not give back. */
static void
test_writer_names (void)
{
  const char *bad[] = { "", "__metadata__", "a\xff", NULL };
  float x = 1;
  int64_t one = 1;
  for (int i = 0; bad[i]; i++)
    {
      g_autoptr (NlSafetensorsWriter) w = nl_safetensors_writer_new ();
      g_autoptr (GError) error = NULL;
      nl_safetensors_writer_add (w, bad[i], NL_ST_F32, 1, &one, &x);
      g_assert_null (nl_safetensors_writer_finish (w, &error));
      g_assert_error (error, NL_SAFETENSORS_ERROR, NL_SAFETENSORS_ERROR_INVALID);
    }
  {
    g_autoptr (NlSafetensorsWriter) w = nl_safetensors_writer_new ();
    g_autoptr (GError) error = NULL;
    nl_safetensors_writer_add (w, "a", NL_ST_F32, 1, &one, &x);
    nl_safetensors_writer_add (w, "a", NL_ST_F32, 1, &one, &x);
    g_assert_null (nl_safetensors_writer_finish (w, &error));
    g_assert_error (error, NL_SAFETENSORS_ERROR, NL_SAFETENSORS_ERROR_INVALID);
  }
  /* odd but valid names and metadata survive a round trip */
  {
    g_autoptr (NlSafetensorsWriter) w = nl_safetensors_writer_new ();
    g_autoptr (GBytes) b = NULL;
    g_autoptr (NlSafetensors) st = NULL;
    nl_safetensors_writer_add (w, "q\"uo\\te/ü", NL_ST_F32, 1, &one, &x);
    nl_safetensors_writer_set_metadata (w, "k", "line\nbreak \"q\"");
    b = nl_safetensors_writer_finish (w, NULL);
    st = nl_safetensors_parse (b, NULL);
    g_assert_nonnull (st);
    g_assert_nonnull (nl_safetensors_find (st, "q\"uo\\te/ü"));
    g_assert_cmpstr (nl_safetensors_metadata (st, "k"), ==, "line\nbreak \"q\"");
  }
}

/* ---- fuzz ---- */

static const char *fuzz_net_json =
  "{\"format\":\"netloom.network\",\"version\":1,\"name\":\"fuzz\",\"nodes\":["
  "{\"id\":\"data\",\"op\":\"Input\"},"
  "{\"id\":\"conv\",\"op\":\"Conv2D\",\"params\":{\"channels\":2,\"kernel\":3}},"
  "{\"id\":\"bn\",\"op\":\"BatchNorm\"},"
  "{\"id\":\"flatten\",\"op\":\"Flatten\"},"
  "{\"id\":\"fc\",\"op\":\"Dense\",\"params\":{\"units\":3}}],"
  "\"edges\":[\"data -> conv\",\"conv -> bn\",\"bn -> flatten\",\"flatten -> fc\"]}";

static void
test_fuzz (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (NlNetwork) net = nl_network_load_data (fuzz_net_json, -1, &error);
  NlShape sample = nl_shape_of (3, (int64_t) 1, (int64_t) 5, (int64_t) 5);
  g_autoptr (NlModel) a = NULL, m = NULL;
  g_autoptr (GBytes) blob = NULL;
  GRand *r = g_rand_new_with_seed (4242);
  const char interesting[] = "{}[]\",:0123456789-.e \\uF";
  const guint8 *d;
  gsize size, header_end;
  int n_iter = g_test_slow () ? 100000 : 4000, accepted = 0, rejected = 0;

  g_assert_no_error (error);
  a = make_model_shape (net, &sample, 1, NL_OPTIM_ADAM);
  m = make_model_shape (net, &sample, 2, NL_OPTIM_ADAM);
  fill_model (a, 41);
  blob = save (a, 1, 9, "{\"x\":1}");
  d = g_bytes_get_data (blob, &size);
  header_end = 8 + (d[0] | (gsize) d[1] << 8 | (gsize) d[2] << 16);
  g_test_message ("fuzz blob: %zu bytes, header %zu", size, header_end - 8);

  for (int it = 0; it < n_iter; it++)
    {
      g_autofree guint8 *c = g_memdup2 (d, size);
      gsize n = size;
      g_autoptr (GBytes) bad = NULL, before = NULL;
      g_autoptr (GError) err = NULL;
      g_autoptr (NlSafetensors) st = NULL;
      int kind = g_rand_int_range (r, 0, 6), flips = g_rand_int_range (r, 1, 5);
      NlTrainPosition pos = { 0 };

      for (int f = 0; f < flips; f++)
        switch (kind)
          {
          case 0: /* bit flips in the header */
            c[g_rand_int_range (r, 0, (gint32) header_end)] ^= (guint8) (1 << g_rand_int_range (r, 0, 8));
            break;
          case 1: /* JSON-ish bytes in the header */
            c[g_rand_int_range (r, 8, (gint32) header_end)] =
              (guint8) interesting[g_rand_int_range (r, 0, sizeof interesting - 1)];
            break;
          case 2: /* random bytes anywhere */
            c[g_rand_int_range (r, 0, (gint32) size)] = (guint8) g_rand_int_range (r, 0, 256);
            break;
          case 3: /* truncation (and a byte flip) */
            n = (gsize) g_rand_int_range (r, 0, (gint32) size);
            if (n)
              c[g_rand_int_range (r, 0, (gint32) n)] ^= 0xff;
            break;
          case 4: /* header length nudged or random */
            {
              guint64 len = header_end - 8;
              len = g_rand_boolean (r) ? len + (guint64) g_rand_int_range (r, -16, 17)
                                       : (guint64) g_rand_int (r) << 32 | g_rand_int (r);
              for (int j = 0; j < 8; j++)
                c[j] = (guint8) (len >> (8 * j));
            }
            break;
          default: /* a header chunk moved: shifts the JSON */
            {
              gint32 from = g_rand_int_range (r, 8, (gint32) header_end);
              gint32 to = g_rand_int_range (r, 8, (gint32) header_end);
              gint32 len = MIN (g_rand_int_range (r, 1, 32), (gint32) header_end - MAX (from, to));
              memmove (c + to, c + from, (size_t) len);
            }
            break;
          }
      bad = g_bytes_new (c, n);
      before = snapshot (m);
      if (nl_checkpoint_load (m, bad, g_rand_boolean (r), &pos, &err))
        {
          accepted++;
          nl_train_position_clear (&pos);
        }
      else
        {
          g_assert_nonnull (err);
          if (!g_utf8_validate (err->message, -1, NULL) || !err->message[0])
            {
              g_autofree char *esc = g_strescape (err->message, NULL);
              g_error ("fuzz iteration %d (kind %d): bad error message \"%s\"", it, kind, esc);
            }
          assert_unchanged (m, before);
          rejected++;
        }
      st = nl_safetensors_parse (bad, NULL);
      if (st) /* whatever parses is in bounds */
        for (int i = 0; i < nl_safetensors_n_tensors (st); i++)
          {
            const NlStTensor *t = nl_safetensors_tensor (st, i);
            const guint8 *base = g_bytes_get_data (bad, NULL);
            g_assert_true (t->data >= base && t->data + (t->end - t->begin) <= base + n);
          }
    }
  g_test_message ("fuzz: %d mutated checkpoints, %d loaded, %d rejected", n_iter, accepted, rejected);
  g_assert_cmpint (rejected, >, n_iter / 2);
  g_rand_free (r);
}

/* A flipped bit in any tensor's bytes: refused by its checksum on load,
 * verify and export, the model untouched; version 1 checkpoints (before
 * checksums) still load. */
static void
test_damaged (void)
{
  g_autoptr (NlNetwork) net = load_net ("lenet");
  g_autoptr (NlModel) a = make_model (net, 1, NL_OPTIM_ADAM);
  g_autoptr (NlModel) m = make_model (net, 2, NL_OPTIM_ADAM);
  g_autoptr (GError) error = NULL;
  g_autofree char *header = NULL;
  size_t hlen;
  gsize size;

  fill_model (a, 31);
  fill_model (m, 32);
  g_autoptr (GBytes) blob = save (a, 4, 40, NULL);
  g_bytes_unref (header_of (blob, &header, &hlen)); /* only the header's length is wanted */
  const guint8 *d = g_bytes_get_data (blob, &size);
  g_assert_true (nl_checkpoint_verify (blob, &error));
  g_assert_no_error (error);
  /* the first weight byte, one in the middle, the last optimizer state byte */
  const gsize at[] = { 8 + hlen, 8 + hlen + (size - 8 - hlen) / 2, size - 1 };
  for (guint i = 0; i < G_N_ELEMENTS (at); i++)
    {
      g_autofree guint8 *c = g_memdup2 (d, size);
      c[at[i]] ^= 0x10;
      g_autoptr (GBytes) bad = g_bytes_new (c, size);
      expect_load_error (m, bad, FALSE, NL_CHECKPOINT_ERROR, NL_CHECKPOINT_ERROR_DAMAGED, "checksum mismatch");
      g_assert_false (nl_checkpoint_verify (bad, &error));
      g_assert_error (error, NL_CHECKPOINT_ERROR, NL_CHECKPOINT_ERROR_DAMAGED);
      g_clear_error (&error);
      g_autofree char *out = g_build_filename (tmp_dir, "damaged.safetensors", NULL);
      g_assert_false (nl_weights_export_from_checkpoint (bad, out, &error));
      g_assert_error (error, NL_CHECKPOINT_ERROR, NL_CHECKPOINT_ERROR_DAMAGED);
      g_clear_error (&error);
      g_assert_false (g_file_test (out, G_FILE_TEST_EXISTS));
    }
  /* a version 2 checkpoint without its checksum is damaged too */
  Edit no_crc = { .meta_key = "crc32" };
  g_autoptr (GBytes) stripped = rewrite (blob, &no_crc);
  expect_load_error (m, stripped, FALSE, NL_CHECKPOINT_ERROR, NL_CHECKPOINT_ERROR_DAMAGED, "metadata crc32 missing");
  /* version 1: no checksum, loads as before */
  Edit v1 = { .meta_key = "version", .meta_value = "1" };
  g_autoptr (GBytes) old = rewrite (stripped, &v1);
  g_assert_true (nl_checkpoint_verify (old, &error));
  NlTrainPosition pos = { 0 };
  g_assert_true (nl_checkpoint_load (m, old, FALSE, &pos, &error));
  g_assert_no_error (error);
  g_assert_cmpint (pos.epoch, ==, 4);
  nl_train_position_clear (&pos);
  g_autoptr (GBytes) snap_a = snapshot (a);
  assert_unchanged (m, snap_a);
}

int
main (int argc, char **argv)
{
  int ret;
  g_test_init (&argc, &argv, NULL);
  nl_threads_set (2);
  tmp_dir = g_dir_make_tmp ("netloom-checkpoint-XXXXXX", NULL);
  g_assert_nonnull (tmp_dir);
  g_test_add_func ("/checkpoint/roundtrip-lenet", test_roundtrip_lenet);
  g_test_add_func ("/checkpoint/roundtrip-resnet", test_roundtrip_resnet);
  g_test_add_func ("/checkpoint/network-hash", test_network_hash);
  g_test_add_func ("/checkpoint/resume-bit-exact", test_resume_bit_exact);
  g_test_add_func ("/checkpoint/position-inside-epoch", test_position_inside_epoch);
  g_test_add_func ("/checkpoint/export-python", test_export_python);
  g_test_add_func ("/checkpoint/python-rejects", test_python_rejects);
  g_test_add_func ("/checkpoint/reader-dtypes", test_reader_dtypes);
  g_test_add_func ("/checkpoint/reader-rejects", test_reader_rejects);
  g_test_add_func ("/checkpoint/writer-names", test_writer_names);
  g_test_add_func ("/checkpoint/corrupt", test_corrupt);
  g_test_add_func ("/checkpoint/damaged", test_damaged);
  g_test_add_func ("/checkpoint/import", test_import);
  g_test_add_func ("/checkpoint/fuzz", test_fuzz);
  ret = g_test_run ();
  g_rmdir (tmp_dir);
  g_free (tmp_dir);
  return ret;
}
