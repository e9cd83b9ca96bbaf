/* test-rnn.c — LSTM and GRU against independent references.
 *
 * /rnn/torch: for each configuration the CPU kernels' outputs and
 * gradients (of L = sum (out * R) for a random R) and the same inputs and
 * weights go into one safetensors file per case; tests/rnn_ref.py builds
 * PyTorch 1.13's nn.LSTM / nn.GRU (batch_first) with those weights, padded
 * batches through pack_padded_sequence, and compares outputs, input, state
 * and weight gradients within 1e-5 (relative above 1). Skips, saying why,
 * without /usr/bin/python3 and torch.
 *
 * /rnn/padding: a batch padded to twice its length with NaN in the padding
 * gives the unpadded batch's outputs and gradients, zeros at the padded
 * output steps and no gradient (0) at the padded input steps.
 *
 * /rnn/template: data/networks/lstm-rows.json (Fashion-MNIST by rows)
 * builds and its loss falls on a fixed batch. */
#include <math.h>
#include <string.h>

#include "engine/formats/nl-safetensors.h"
#include "engine/graph/nl-program.h"
#include "engine/train/nl-optim.h"
#include "nl-test-util.h"
#include "ops/nl-op-instance.h"
#include "ops/nl-op-registry.h"

typedef struct {
  const char *name, *op;
  const char *params[16];
  const char *data, *state; /* shapes; state NULL: left open */
  const char *lengths;      /* "4,2,3" or NULL */
} Config;

#define P(...) { __VA_ARGS__, NULL }
static const Config configs[] = {
  { "lstm-plain", "LSTM", P ("units", "5"), "3x4x3", NULL, NULL },
  { "lstm-2l-bi-state", "LSTM", P ("units", "5", "layers", "2", "bidirectional", "true"), "3x4x3", "3x8x5", NULL },
  { "lstm-2l-bi-state-padded", "LSTM", P ("units", "4", "layers", "2", "bidirectional", "true"), "3x5x3", "3x8x4",
    "5,2,3" },
  { "lstm-last-sum-padded", "LSTM",
    P ("units", "4", "layers", "2", "bidirectional", "true", "output", "last", "merge", "sum"), "3x5x2", "3x8x4",
    "3,5,1" },
  { "lstm-last-padded", "LSTM", P ("units", "6", "output", "last"), "4x6x3", NULL, "6,1,4,2" },
  { "gru-plain", "GRU", P ("units", "5"), "3x4x3", NULL, NULL },
  { "gru-2l-bi-state", "GRU", P ("units", "5", "layers", "2", "bidirectional", "true"), "3x4x3", "3x4x5", NULL },
  { "gru-2l-bi-state-padded", "GRU", P ("units", "4", "layers", "2", "bidirectional", "true"), "3x5x3", "3x4x4",
    "5,2,3" },
  { "gru-last-sum-padded", "GRU",
    P ("units", "4", "layers", "2", "bidirectional", "true", "output", "last", "merge", "sum"), "3x5x2", "3x4x4",
    "3,5,1" },
  /* 33 samples: with 2 threads or more the batch is split between them */
  { "lstm-sliced-2l-bi-padded", "LSTM", P ("units", "4", "layers", "2", "bidirectional", "true"), "33x5x3", "33x8x4",
    "5,2,3,1,4,5,2,3,1,4,5,2,3,1,4,5,2,3,1,4,5,2,3,1,4,5,2,3,1,4,5,2,3" },
  { "gru-sliced-last", "GRU", P ("units", "5", "output", "last"), "33x5x3", NULL, "5,2,3,1,4,5,2,3,1,4,5,2,3,1,4,5,2,3,1,4,5,2,3,1,4,5,2,3,1,4,5,2,3" },
  { "gru-classic-bi-padded", "GRU", P ("units", "4", "bidirectional", "true", "variant", "classic"), "3x5x3", NULL,
    "5,2,3" },
};

static NlOpInstance *
make (const NlOpDef *def, const char *const *params, const char *data, const char *state, const float *lengths)
{
  g_autoptr (GError) error = NULL;
  NlShape shapes[2] = { nl_test_parse_shape (data), state ? nl_test_parse_shape (state) : NL_SHAPE_ABSENT };
  NlOpInstance *inst = nl_op_instance_new (def, params, state ? 2 : 1, shapes, TRUE, &error);
  nl_test_ok_or_die (inst != NULL, error, "the recurrent op");
  if (lengths)
    {
      int64_t b = shapes[0].d[0];
      inst->lengths = nl_tensor_new (NL_DTYPE_F32, 1, &b);
      memcpy (nl_tensor_f32 (inst->lengths), lengths, b * sizeof (float));
    }
  return inst;
}

static void
run (NlOpInstance *inst)
{
  g_autoptr (GError) error = NULL;
  nl_test_ok_or_die (nl_op_instance_forward (inst, &error), error, "forward");
  nl_test_ok_or_die (nl_op_instance_backward (inst, &error), error, "backward");
}

static void
add_tensor (NlSafetensorsWriter *w, const char *name, const NlTensor *t)
{
  NlShape s = nl_tensor_get_shape (t);
  nl_safetensors_writer_add (w, name, NL_ST_F32, s.ndim, s.d, nl_tensor_f32 (t));
}

/* One case's file: inputs, weights, R, and what the kernels computed. */
static void
write_case (const Config *cf, const char *path)
{
  const NlOpDef *def = nl_op_lookup (cf->op);
  g_autoptr (NlSafetensorsWriter) w = nl_safetensors_writer_new ();
  g_autoptr (GBytes) bytes = NULL;
  g_autoptr (GError) error = NULL;
  g_auto (GStrv) parts = cf->lengths ? g_strsplit (cf->lengths, ",", -1) : NULL;
  float lengths[64];
  NlOpInstance *inst;
  guint64 seed = g_str_hash (cf->name);

  for (int i = 0; parts && parts[i]; i++)
    lengths[i] = (float) g_ascii_strtod (parts[i], NULL);
  inst = make (def, cf->params, cf->data, cf->state, parts ? lengths : NULL);
  for (int i = 0; i < inst->n_in; i++)
    if (inst->in[i])
      nl_test_fill_uniform (inst->in[i], -0.5f, 0.5f, seed + i);
  nl_test_fill_uniform (inst->out_grad[0], -1, 1, seed + 99);
  run (inst);

  nl_safetensors_writer_set_metadata (w, "op", cf->op);
  for (int i = 0; cf->params[i]; i += 2)
    nl_safetensors_writer_set_metadata (w, cf->params[i], cf->params[i + 1]);
  add_tensor (w, "data", inst->in[0]);
  add_tensor (w, "d_data", inst->in_grad[0]);
  if (cf->state)
    {
      add_tensor (w, "state", inst->in[1]);
      add_tensor (w, "d_state", inst->in_grad[1]);
    }
  if (inst->lengths)
    add_tensor (w, "lengths", inst->lengths);
  for (int k = 0; k < def->n_weights; k++)
    if (inst->in[inst->n_data + k])
      {
        g_autofree char *dname = g_strconcat ("d_", def->weights[k], NULL);
        add_tensor (w, def->weights[k], inst->in[inst->n_data + k]);
        add_tensor (w, dname, inst->in_grad[inst->n_data + k]);
      }
  add_tensor (w, "out", inst->out[0]);
  add_tensor (w, "R", inst->out_grad[0]);
  bytes = nl_safetensors_writer_finish (w, &error);
  nl_test_ok_or_die (bytes && nl_safetensors_write_file (path, bytes, &error), error, path);
  nl_op_instance_free (inst);
}

static void
test_torch (void)
{
  g_autofree char *python = nl_test_find_python ("torch, numpy");
  g_autofree char *dir = g_dir_make_tmp ("nl-rnn-XXXXXX", NULL);
  g_autofree char *script = nl_test_source_path ("tests/rnn_ref.py");
  g_autoptr (GPtrArray) argv = g_ptr_array_new_with_free_func (g_free);
  g_autofree char *out = NULL, *err = NULL;
  g_autoptr (GError) error = NULL;
  int status = -1;

  if (!python)
    {
      g_test_skip ("python3 with torch and numpy not found: the PyTorch reference cannot run");
      return;
    }
  g_ptr_array_add (argv, g_strdup (python));
  g_ptr_array_add (argv, g_strdup (script));
  for (guint i = 0; i < G_N_ELEMENTS (configs); i++)
    {
      char *path = g_strdup_printf ("%s/%s.safetensors", dir, configs[i].name);
      write_case (&configs[i], path);
      g_ptr_array_add (argv, path);
    }
  g_ptr_array_add (argv, NULL);
  g_assert_true (g_spawn_sync (NULL, (char **) argv->pdata, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, &err, &status,
                               &error));
  g_test_message ("%s%s", out, err);
  if (!g_spawn_check_wait_status (status, NULL))
    g_error ("the PyTorch reference disagrees:\n%s%s", out, err);
  nl_test_remove_tree (dir);
}

/* Outputs and gradients of a padded batch against the unpadded one. */
static void
check_padding (const char *op, const char *const *params, gboolean last)
{
  const NlOpDef *def = nl_op_lookup (op);
  const int64_t B = 2, T = 3, C = 3;
  float lengths[2] = { 3, 2 };
  NlOpInstance *a = make (def, params, "2x3x3", NULL, lengths), *b = make (def, params, "2x6x3", NULL, lengths);
  float *xa = nl_tensor_f32 (a->in[0]), *xb = nl_tensor_f32 (b->in[0]);
  float *ra = nl_tensor_f32 (a->out_grad[0]), *rb = nl_tensor_f32 (b->out_grad[0]);
  int64_t fa = last ? 0 : nl_tensor_numel (a->out[0]) / (B * T); /* features per step */

  nl_test_fill_uniform (a->in[0], -1, 1, 7);
  nl_test_fill_uniform (a->out_grad[0], -1, 1, 8);
  for (int i = a->n_data; i < a->n_in; i++)
    if (a->in[i])
      {
        nl_test_fill_uniform (a->in[i], -0.5f, 0.5f, 10 + i);
        memcpy (nl_tensor_f32 (b->in[i]), nl_tensor_f32 (a->in[i]), nl_tensor_numel (a->in[i]) * sizeof (float));
      }
  /* b: the same steps, NaN in every padded input step, garbage out_grads there */
  nl_tensor_fill (b->in[0], NAN);
  nl_test_fill_uniform (b->out_grad[0], 100, 200, 9);
  for (int64_t i = 0; i < B; i++)
    for (int64_t t = 0; t < lengths[i]; t++)
      {
        memcpy (xb + (i * 6 + t) * C, xa + (i * T + t) * C, C * sizeof (float));
        if (!last)
          memcpy (rb + (i * 6 + t) * fa, ra + (i * T + t) * fa, fa * sizeof (float));
      }
  if (last)
    memcpy (rb, ra, nl_tensor_numel (a->out[0]) * sizeof (float));
  run (a);
  run (b);
  for (int64_t i = 0; i < B; i++)
    for (int64_t t = 0; t < 6; t++)
      {
        const float *gb = nl_tensor_f32 (b->in_grad[0]) + (i * 6 + t) * C;
        if (t < lengths[i])
          nl_test_assert_close (gb, nl_tensor_f32 (a->in_grad[0]) + (i * T + t) * C, C, 1e-6, 1e-5);
        else
          for (int64_t k = 0; k < C; k++)
            g_assert_cmpfloat (gb[k], ==, 0.0f);
        if (last)
          continue;
        for (int64_t k = 0; k < fa; k++)
          {
            float yb = nl_tensor_f32 (b->out[0])[(i * 6 + t) * fa + k];
            if (t < lengths[i])
              g_assert_cmpfloat_with_epsilon (yb, nl_tensor_f32 (a->out[0])[(i * T + t) * fa + k], 1e-6);
            else
              g_assert_cmpfloat (yb, ==, 0.0f);
          }
      }
  if (last)
    nl_test_assert_close (nl_tensor_f32 (b->out[0]), nl_tensor_f32 (a->out[0]), nl_tensor_numel (a->out[0]), 1e-6,
                          1e-5);
  for (int i = a->n_data; i < a->n_in; i++)
    if (a->in_grad[i])
      nl_test_assert_close (nl_tensor_f32 (b->in_grad[i]), nl_tensor_f32 (a->in_grad[i]),
                            nl_tensor_numel (a->in_grad[i]), 1e-6, 1e-5);
  nl_op_instance_free (a);
  nl_op_instance_free (b);
}

static void
test_padding (void)
{
  const char *ops[] = { "LSTM", "GRU" };
  for (guint o = 0; o < G_N_ELEMENTS (ops); o++)
    {
      const char *all[] = { "units", "4", "layers", "2", "bidirectional", "true", NULL };
      const char *last[] = { "units", "3", "layers", "2", "bidirectional", "true", "output", "last", NULL };
      const char *classic[] = { "units", "3", "bidirectional", "true", "variant", "classic", NULL };
      check_padding (ops[o], all, FALSE);
      check_padding (ops[o], last, TRUE);
      if (o == 1)
        check_padding (ops[o], classic, FALSE);
    }
}

static void
test_template (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (NlNetwork) net = nl_test_load_template ("lstm-rows");
  NlShape sample = nl_shape_of (3, (int64_t) 1, (int64_t) 28, (int64_t) 28);
  NlOptimConfig adam;
  NlCompileOptions opts = { .batch = 8, .training = TRUE, .loss = "SoftmaxCrossEntropy" };
  g_autoptr (NlModel) model = NULL;
  g_autoptr (NlProgram) p = NULL;
  double first = 0, last = 0;

  nl_optim_config_init (&adam, NL_OPTIM_ADAM);
  model = nl_model_new_full (net, &sample, &(NlModelOptions) { .seed = 1, .optim = &adam }, &error);
  g_assert_no_error (error);
  p = nl_program_new (model, &opts, &error);
  g_assert_no_error (error);
  g_assert_cmpint (nl_program_pred (p)->ndim, ==, 2);
  g_assert_cmpint (nl_program_pred (p)->shape[1], ==, 10);
  nl_test_fill_uniform (nl_program_input (p), -1, 1, 5);
  for (int i = 0; i < 8; i++)
    nl_tensor_f32 (nl_program_label (p))[i] = (float) (i % 10);
  for (int step = 1; step <= 20; step++)
    {
      double loss = 0;
      g_assert_true (nl_program_forward (p, step, &error));
      g_assert_true (nl_program_backward (p, &error));
      g_assert_true (nl_program_update (p, &adam, 0.01f, step, &error));
      g_assert_true (nl_model_sync (model, &error));
      for (int i = 0; i < 8; i++)
        loss += nl_tensor_f32 (nl_program_loss (p))[i];
      if (step == 1)
        first = loss;
      last = loss;
    }
  g_assert_no_error (error);
  g_assert_cmpfloat (last, <, 0.5 * first);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/rnn/torch", test_torch);
  g_test_add_func ("/rnn/padding", test_padding);
  g_test_add_func ("/rnn/template", test_template);
  return g_test_run ();
}
