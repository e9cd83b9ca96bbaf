/* test-attention-ref.c — MultiHeadAttention against PyTorch 1.13's
 * nn.MultiheadAttention, PositionalEmbedding's sinusoids against numpy.
 *
 * The same inputs, weights (PyTorch's layout: q/k/v weights are the thirds
 * of in_proj_weight) and output gradient go to tests/attention_ref.py
 * through a safetensors file; it runs PyTorch in float64 with a
 * key_padding_mask from the lengths and a causal attn_mask and writes the
 * output and every gradient back the same way. Both must agree within
 * 1e-5 (relative above 1). Skips, saying why, where /usr/bin/python3 has no
 * torch. */
#include <math.h>
#include <string.h>

#include "engine/formats/nl-safetensors.h"
#include "nl-test-util.h"
#include "ops/nl-op-instance.h"
#include "ops/nl-op-registry.h"

#define TOL 1e-5
#define POS_T 50
#define POS_C 16

typedef struct {
  const char *prefix;
  const char *params[8];
  const char *in[2];
  const char *lengths;
  NlOpInstance *inst;
} Case;

static Case cases[] = {
  { "self.", { "heads", "2", "causal", "true", NULL }, { "3x5x8" }, "5,3,1" },
  { "cross.", { "heads", "4", NULL }, { "3x5x8", "3x6x6" }, "4,5,2" },
  /* a memory as long as the query: the lengths mask it too */
  { "crossmasked.", { "heads", "2", "causal", "true", NULL }, { "3x5x8", "3x5x6" }, "2,5,3" },
};

static void
add (NlSafetensorsWriter *w, const char *prefix, const char *name, const NlTensor *t, GPtrArray *names)
{
  char *full = g_strconcat (prefix, name, NULL);
  g_ptr_array_add (names, full); /* the writer borrows the name until finish */
  nl_safetensors_writer_add (w, full, NL_ST_F32, t->ndim, t->shape, nl_tensor_f32 (t));
}

/* A case's instance: random inputs and weights, out_grad 0 at padded steps. */
static NlOpInstance *
case_run (Case *c, guint64 seed)
{
  g_autoptr (GError) error = NULL;
  NlShape in[2];
  int n = c->in[1] ? 2 : 1;
  NlOpInstance *inst;
  g_auto (GStrv) parts = g_strsplit (c->lengths, ",", -1);
  int64_t nb = g_strv_length (parts);
  float *len;

  for (int i = 0; i < n; i++)
    in[i] = nl_test_parse_shape (c->in[i]);
  inst = nl_op_instance_new (nl_op_lookup ("MultiHeadAttention"), c->params, n, in, TRUE, &error);
  g_assert_no_error (error);
  inst->lengths = nl_tensor_new (NL_DTYPE_F32, 1, &nb);
  len = nl_tensor_f32 (inst->lengths);
  for (int64_t b = 0; b < nb; b++)
    len[b] = (float) g_ascii_strtod (parts[b], NULL);
  for (int i = 0; i < inst->n_in; i++)
    if (inst->in[i])
      nl_test_fill_uniform (inst->in[i], -0.7f, 0.7f, seed + i);
  nl_test_fill_uniform (inst->out_grad[0], -1, 1, seed + 99);
  {
    NlTensor *g = inst->out_grad[0];
    int64_t T = g->shape[1], U = g->shape[2];
    for (int64_t b = 0; b < nb; b++)
      for (int64_t t = (int64_t) len[b]; t < T; t++)
        memset (nl_tensor_f32 (g) + (b * T + t) * U, 0, U * sizeof (float));
  }
  nl_test_ok_or_die (nl_op_instance_forward (inst, &error), error, "forward");
  nl_test_ok_or_die (nl_op_instance_backward (inst, &error), error, "backward");
  return inst;
}

static void
compare (const NlSafetensors *ref, const char *name, const NlTensor *mine)
{
  const NlStTensor *r = nl_safetensors_find (ref, name);
  double worst = 0;

  if (!r)
    g_error ("the reference has no %s", name);
  g_assert_cmpint (r->numel, ==, nl_tensor_numel (mine));
  for (int64_t i = 0; i < r->numel; i++)
    {
      float v;
      memcpy (&v, r->data + i * sizeof (float), sizeof v);
      double got = nl_tensor_f32 (mine)[i], err = fabs (got - v) / MAX (1.0, fabs (v));
      if (!(err <= TOL))
        g_error ("%s[%" G_GINT64_FORMAT "]: netloom %.9g, PyTorch %.9g", name, i, got, v);
      worst = MAX (worst, err);
    }
  g_test_message ("%s: worst relative difference %.2e", name, worst);
}

static void
test_against_torch (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (NlSafetensorsWriter) w = nl_safetensors_writer_new ();
  g_autoptr (GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  g_autofree char *dir = NULL, *in_path = NULL, *out_path = NULL, *script = NULL, *err = NULL;
  g_autofree char *python = nl_test_find_python ("torch, numpy");
  g_autoptr (GBytes) bytes = NULL;
  g_autoptr (NlSafetensors) ref = NULL;
  NlShape ps = nl_test_parse_shape ("1x50x16");
  const char *pos_params[] = { "mode", "sinusoidal", NULL };
  NlOpInstance *pos;
  int status = -1;

  if (!python)
    {
      g_test_skip ("python3 with torch and numpy not found: the PyTorch reference cannot run");
      return;
    }
  dir = g_dir_make_tmp ("nl-attention-ref-XXXXXX", &error);
  g_assert_no_error (error);
  in_path = g_build_filename (dir, "in.safetensors", NULL);
  out_path = g_build_filename (dir, "ref.safetensors", NULL);
  for (guint c = 0; c < G_N_ELEMENTS (cases); c++)
    {
      Case *k = &cases[c];
      const NlOpDef *def;
      k->inst = case_run (k, 1000 * (c + 1));
      def = k->inst->def;
      for (int i = 0; i < k->inst->n_data; i++)
        add (w, k->prefix, def->inputs[i], k->inst->in[i], names);
      for (int i = 0; i < def->n_weights; i++)
        add (w, k->prefix, def->weights[i], k->inst->in[k->inst->n_data + i], names);
      add (w, k->prefix, "out_grad", k->inst->out_grad[0], names);
      add (w, k->prefix, "lengths", k->inst->lengths, names);
      g_ptr_array_add (names, g_strconcat (k->prefix, "heads", NULL));
      nl_safetensors_writer_set_metadata (w, names->pdata[names->len - 1], k->params[1]);
      g_ptr_array_add (names, g_strconcat (k->prefix, "causal", NULL));
      nl_safetensors_writer_set_metadata (w, names->pdata[names->len - 1],
                                          k->params[2] && !strcmp (k->params[2], "causal") ? "1" : "0");
    }
  nl_safetensors_writer_set_metadata (w, "pos_steps", G_STRINGIFY (POS_T));
  nl_safetensors_writer_set_metadata (w, "pos_channels", G_STRINGIFY (POS_C));
  bytes = nl_safetensors_writer_finish (w, &error);
  g_assert_true (bytes && nl_safetensors_write_file (in_path, bytes, &error));

  script = nl_test_source_path ("tests/attention_ref.py");
  {
    const char *argv[] = { python, script, in_path, out_path, NULL };
    g_assert_true (g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL, NULL, &err,
                                 &status, &error));
    if (!g_spawn_check_wait_status (status, NULL))
      g_error ("attention_ref.py failed: %s", err);
  }
  ref = nl_safetensors_read_file (out_path, &error);
  g_assert_no_error (error);

  for (guint c = 0; c < G_N_ELEMENTS (cases); c++)
    {
      Case *k = &cases[c];
      const NlOpDef *def = k->inst->def;
      g_autofree char *out = g_strconcat (k->prefix, "out", NULL);
      compare (ref, out, k->inst->out[0]);
      for (int i = 0; i < k->inst->n_in; i++)
        {
          g_autofree char *name = g_strconcat (k->prefix, "d", i < k->inst->n_data ? def->inputs[i]
                                               : def->weights[i - k->inst->n_data], NULL);
          compare (ref, name, k->inst->in_grad[i]);
        }
      g_clear_pointer (&k->inst, nl_op_instance_free);
    }

  pos = nl_op_instance_new (nl_op_lookup ("PositionalEmbedding"), pos_params, 1, &ps, FALSE, &error);
  g_assert_no_error (error);
  nl_test_ok_or_die (nl_op_instance_forward (pos, &error), error, "PositionalEmbedding forward");
  compare (ref, "pos", pos->out[0]); /* the input is zeros: the output is the table */
  nl_op_instance_free (pos);
  nl_test_remove_tree (dir);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/attention-ref/torch", test_against_torch);
  return g_test_run ();
}
