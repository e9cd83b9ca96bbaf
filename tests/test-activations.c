/* test-activations.c — Activation's act_types after softrelu (elu, selu,
 * silu, mish, softsign, hardsigmoid, hardswish, relu6, hardtanh,
 * logsigmoid, tanhshrink), Clip and Shrink, forward and backward against their
 * textbook definitions written here in double precision (PyTorch's docs),
 * on sizes below and above the OpenMP threshold and far out where exp
 * overflows computed naively; in place where the op may run so; and the
 * graph's backward needs: the input for the types that differentiate from
 * it, the output for the rest (the first four stay as they were). The
 * first four act_types are test-elementwise's; finite differences are
 * test-gradcheck's. */
#include <math.h>
#include <string.h>

#include "engine/graph/nl-program.h"
#include "nl-test-util.h"
#include "ops/nl-op-instance.h"
#include "ops/nl-op-registry.h"

#define P(...) ((const char *const[]) { __VA_ARGS__, NULL })

typedef double (*RefFn) (double x, double a);

#define SELU_A 1.6732632423543772848170429916717
#define SELU_L 1.0507009873554804934193349852946
static double sigm (double x) { return 1 / (1 + exp (-x)); }
static double softplus (double x) { return x > 0 ? x + log1p (exp (-x)) : log1p (exp (x)); }
static double r_elu (double x, double a) { return x > 0 ? x : exp (x) - 1; }
static double d_elu (double x, double a) { return x > 0 ? 1 : exp (x); }
static double r_selu (double x, double a) { return SELU_L * (x > 0 ? x : SELU_A * (exp (x) - 1)); }
static double d_selu (double x, double a) { return SELU_L * (x > 0 ? 1 : SELU_A * exp (x)); }
static double r_silu (double x, double a) { return x * sigm (x); }
static double d_silu (double x, double a) { return sigm (x) + x * sigm (x) * (1 - sigm (x)); }
static double r_mish (double x, double a) { return x * tanh (softplus (x)); }
static double d_mish (double x, double a) { double t = tanh (softplus (x)); return t + x * (1 - t * t) * sigm (x); }
static double r_softsign (double x, double a) { return x / (1 + fabs (x)); }
static double d_softsign (double x, double a) { return 1 / ((1 + fabs (x)) * (1 + fabs (x))); }
static double r_hsig (double x, double a) { return x <= -3 ? 0 : x >= 3 ? 1 : x / 6 + 0.5; }
static double d_hsig (double x, double a) { return x <= -3 || x >= 3 ? 0 : 1.0 / 6; }
static double r_hswish (double x, double a) { return x * r_hsig (x, a); }
static double d_hswish (double x, double a) { return x <= -3 ? 0 : x >= 3 ? 1 : x / 3 + 0.5; }
static double r_relu6 (double x, double a) { return x < 0 ? 0 : x > 6 ? 6 : x; }
static double d_relu6 (double x, double a) { return x > 0 && x < 6 ? 1 : 0; }
static double r_htanh (double x, double a) { return x < -1 ? -1 : x > 1 ? 1 : x; }
static double d_htanh (double x, double a) { return x > -1 && x < 1 ? 1 : 0; }
static double r_logsig (double x, double a) { return -softplus (-x); }
static double d_logsig (double x, double a) { return 1 - sigm (x); }
static double r_tshrink (double x, double a) { return x - tanh (x); }
static double d_tshrink (double x, double a) { return tanh (x) * tanh (x); }
/* Clip to [-a, 2a] */
static double r_clip (double x, double a) { return x < -a ? -a : x > 2 * a ? 2 * a : x; }
static double d_clip (double x, double a) { return x > -a && x < 2 * a ? 1 : 0; }

/* Shrink with lambd a, bias 2a */
static double r_shrink (double x, double a) { return x < -a ? x + 2 * a : x > a ? x - 2 * a : 0; }
static double d_shrink (double x, double a) { return x < -a || x > a ? 1 : 0; }

static NlOpInstance *
make (const char *op, const char *const *params, const NlShape *s)
{
  g_autoptr (GError) error = NULL;
  NlOpInstance *inst = nl_op_instance_new (nl_op_lookup (op), params, 1, s, TRUE, &error);
  g_assert_no_error (error);
  return inst;
}

/* Backward again with the tensor the op says it does not need hidden (as
 * a planner that reused its memory would leave it): the same gradient */
static void
backward_lean (NlOpInstance *inst)
{
  NlBackwardNeeds needs = inst->def->needs_for ? inst->def->needs_for (inst->p) : inst->def->needs;
  NlTensor *x = inst->in[0], *y = inst->out[0];
  int64_t n = nl_tensor_numel (inst->in_grad[0]);
  g_autofree float *dx = g_memdup2 (nl_tensor_f32 (inst->in_grad[0]), n * sizeof (float));
  g_autoptr (GError) error = NULL;
  if (!(needs & NL_NEEDS_INPUTS))
    inst->in[0] = NULL;
  if (!(needs & NL_NEEDS_OUTPUTS))
    inst->out[0] = NULL;
  nl_tensor_fill (inst->in_grad[0], 1234.0f);
  g_assert_true (nl_op_instance_backward (inst, &error));
  inst->in[0] = x;
  inst->out[0] = y;
  g_assert_cmpmem (nl_tensor_f32 (inst->in_grad[0]), n * sizeof (float), dx, n * sizeof (float));
}

/* Forward and backward on x ~ U(lo, hi) against f and df; then forward
 * again with the output over the input, when the op may run in place. */
static void
check (const char *op, const char *const *params, RefFn f, RefFn df, double arg, float lo, float hi)
{
  static const int64_t sizes[] = { 1, 7, 3 * 5 * 7, 131 * 263 /* > NL_PAR_MIN */ };
  for (gsize s = 0; s < G_N_ELEMENTS (sizes); s++)
    {
      NlShape shape = nl_shape_of (1, sizes[s]);
      NlOpInstance *inst = make (op, params, &shape);
      int64_t n = sizes[s];
      g_autofree float *want = g_new (float, n), *dwant = g_new (float, n), *y = NULL;
      const float *x, *dy;
      g_autoptr (GError) error = NULL;

      nl_test_fill_uniform (inst->in[0], lo, hi, 11 + s);
      nl_test_fill_uniform (inst->out_grad[0], -1, 1, 23 + s);
      x = nl_tensor_f32 (inst->in[0]);
      dy = nl_tensor_f32 (inst->out_grad[0]);
      for (int64_t i = 0; i < n; i++)
        {
          want[i] = (float) f (x[i], arg);
          dwant[i] = (float) (dy[i] * df (x[i], arg));
        }
      nl_tensor_fill (inst->in_grad[0], 1234.0f); /* overwritten, not accumulated */
      g_assert_true (nl_op_instance_forward (inst, &error));
      nl_test_assert_close (nl_tensor_f32 (inst->out[0]), want, n, 2e-6, 2e-5);
      g_assert_true (nl_op_instance_backward (inst, &error));
      nl_test_assert_close (nl_tensor_f32 (inst->in_grad[0]), dwant, n, 2e-6, 2e-5);
      backward_lean (inst);
      /* in place: the same output */
      y = g_memdup2 (nl_tensor_f32 (inst->out[0]), n * sizeof (float));
      memcpy (nl_tensor_f32 (inst->out[0]), x, n * sizeof (float));
      {
        NlTensor *in = inst->in[0];
        inst->in[0] = inst->out[0];
        g_assert_true (nl_op_instance_forward (inst, &error));
        inst->in[0] = in;
      }
      g_assert_cmpmem (nl_tensor_f32 (inst->out[0]), n * sizeof (float), y, n * sizeof (float));
      nl_op_instance_free (inst);
    }
}

static void
test_act_types (void)
{
  static const struct {
    const char *t;
    RefFn f, df;
    float lo, hi;
  } cases[] = {
    { "elu", r_elu, d_elu, -5, 5 },
    { "selu", r_selu, d_selu, -5, 5 },
    { "silu", r_silu, d_silu, -10, 10 },
    { "mish", r_mish, d_mish, -10, 10 },
    { "softsign", r_softsign, d_softsign, -10, 10 },
    { "hardsigmoid", r_hsig, d_hsig, -8, 8 },
    { "hardswish", r_hswish, d_hswish, -8, 8 },
    { "relu6", r_relu6, d_relu6, -8, 8 },
    { "hardtanh", r_htanh, d_htanh, -3, 3 },
    { "logsigmoid", r_logsig, d_logsig, -10, 10 },
    { "tanhshrink", r_tshrink, d_tshrink, -4, 4 },
    /* finite and exact far out */
    { "logsigmoid", r_logsig, d_logsig, -100, 100 },
    { "mish", r_mish, d_mish, -100, 100 },
    { "silu", r_silu, d_silu, -100, 100 },
    { "elu", r_elu, d_elu, -100, 100 },
    { "softsign", r_softsign, d_softsign, -1e6, 1e6 },
  };
  for (gsize k = 0; k < G_N_ELEMENTS (cases); k++)
    check ("Activation", P ("act_type", cases[k].t), cases[k].f, cases[k].df, 0, cases[k].lo, cases[k].hi);
}

/* Clip to [-a, 2a]; min above max is refused naming both */
static void
test_clip (void)
{
  g_autoptr (GError) error = NULL;
  NlShape s = nl_shape_of (2, (int64_t) 3, (int64_t) 4);
  NlOpInstance *inst;
  check ("Clip", P ("min", "-1", "max", "2"), r_clip, d_clip, 1, -4, 4);
  check ("Clip", P ("min", "-0.25", "max", "0.5"), r_clip, d_clip, 0.25, -1, 1);
  inst = nl_op_instance_new (nl_op_lookup ("Clip"), P ("min", "2", "max", "1"), 1, &s, TRUE, &error);
  g_assert_null (inst);
  g_assert_nonnull (error);
  g_assert_nonnull (strstr (error->message, "min 2 is above max 1"));
}

static void
test_shrink (void)
{
  check ("Shrink", P ("lambd", "1", "bias", "2"), r_shrink, d_shrink, 1, -4, 4);
  check ("Shrink", P ("lambd", "0.25", "bias", "0.5"), r_shrink, d_shrink, 0.25, -1, 1);
}

/* What backward keeps: the input for silu, mish, hardswish, tanhshrink; the
 * output (so the op may overwrite its input) for the others */
static void
test_needs (void)
{
  const NlOpDef *def = nl_op_lookup ("Activation");
  int k = nl_op_param_index (def, "act_type");
  g_assert_nonnull (def->needs_for);
  for (int t = 0; def->params[k].enum_values[t]; t++)
    {
      const char *name = def->params[k].enum_values[t];
      NlParamValue p[8] = { 0 };
      gboolean from_x = !strcmp (name, "silu") || !strcmp (name, "mish") || !strcmp (name, "hardswish")
                        || !strcmp (name, "tanhshrink");
      p[k].i = t;
      g_assert_cmpint (def->needs_for (p), ==, from_x ? NL_NEEDS_INPUTS : NL_NEEDS_OUTPUTS);
    }
}

/* Dense, then each op that reads its input in backward (and may not be
 * run in place, then), Dense, a loss */
static const char *chain_json =
  "{\"format\":\"netloom.network\",\"version\":1,\"name\":\"chain\",\"nodes\":["
  "{\"id\":\"data\",\"op\":\"Input\"},{\"id\":\"fc1\",\"op\":\"Dense\",\"params\":{\"units\":8}},"
  "{\"id\":\"silu\",\"op\":\"Activation\",\"params\":{\"act_type\":\"silu\"}},"
  "{\"id\":\"fc2\",\"op\":\"Dense\",\"params\":{\"units\":8}},"
  "{\"id\":\"mish\",\"op\":\"Activation\",\"params\":{\"act_type\":\"mish\"}},"
  "{\"id\":\"hsw\",\"op\":\"Activation\",\"params\":{\"act_type\":\"hardswish\"}},"
  "{\"id\":\"fc3\",\"op\":\"Dense\",\"params\":{\"units\":8}},"
  "{\"id\":\"tsh\",\"op\":\"Activation\",\"params\":{\"act_type\":\"tanhshrink\"}},"
  "{\"id\":\"shrink\",\"op\":\"Shrink\",\"params\":{\"lambd\":0.1,\"bias\":0.3}},"
  "{\"id\":\"prelu\",\"op\":\"PReLU\"},{\"id\":\"fc4\",\"op\":\"Dense\",\"params\":{\"units\":3}}],"
  "\"edges\":[\"data -> fc1\",\"fc1 -> silu\",\"silu -> fc2\",\"fc2 -> mish\",\"mish -> hsw\",\"hsw -> fc3\","
  "\"fc3 -> tsh\",\"tsh -> shrink\",\"shrink -> prelu\",\"prelu -> fc4\"]}";

static double
mean_loss (NlProgram *p)
{
  g_autoptr (GError) error = NULL;
  const NlTensor *l;
  double s = 0;
  g_assert_true (nl_program_forward (p, 1, &error));
  l = nl_program_loss (p);
  for (int64_t i = 0; i < nl_tensor_numel (l); i++)
    s += nl_tensor_f32 (l)[i];
  return s / nl_tensor_numel (l);
}

static void
test_network_gradient (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (NlNetwork) net = nl_network_load_data (chain_json, -1, &error);
  NlShape sample = nl_shape_of (1, (int64_t) 6);
  g_autoptr (NlModel) m = nl_model_new_full (net, &sample, &(NlModelOptions) { .seed = 3 }, &error);
  NlCompileOptions opts = { .batch = 4, .training = TRUE, .loss = "SoftmaxCrossEntropy" };
  g_autoptr (NlProgram) p = NULL;
  int checked = 0;

  g_assert_no_error (error);
  /* inputs of about -3 .. 3 into each activation; PReLU's slopes away from 0 */
  for (int i = 0; i < m->n_nodes; i++)
    for (int k = 0; k < NL_GRAPH_MAX_SLOTS; k++)
      if (m->weights[NL_MODEL_SLOT (i, k)])
        nl_test_fill_uniform (m->weights[NL_MODEL_SLOT (i, k)], -1.5f, 1.5f, 100 + i * 8 + k);
  nl_model_host_changed (m);
  p = nl_program_new (m, &opts, &error);
  g_assert_no_error (error);
  nl_test_fill_uniform (nl_program_input (p), -1, 1, 9);
  for (int i = 0; i < 4; i++)
    nl_tensor_f32 (nl_program_label (p))[i] = (float) (i % 3);
  mean_loss (p);
  g_assert_true (nl_program_backward (p, &error));
  for (int node = 0; node < m->n_nodes; node++)
    for (int k = 0; k < NL_GRAPH_MAX_SLOTS; k++)
      {
        NlTensor *w = m->weights[NL_MODEL_SLOT (node, k)];
        g_autoptr (NlTensor) analytic = NULL;
        if (!w)
          continue;
        analytic = nl_tensor_copy (nl_program_weight_grad (p, node, k));
        for (int64_t i = 0; i < nl_tensor_numel (w); i += 1 + nl_tensor_numel (w) / 10)
          {
            float *x = &nl_tensor_f32 (w)[i], keep = *x;
            const double eps = 1e-3;
            double plus, minus, numeric, a = nl_tensor_f32 (analytic)[i];
            *x = keep + eps;
            nl_model_host_changed (m);
            plus = mean_loss (p);
            *x = keep - eps;
            nl_model_host_changed (m);
            minus = mean_loss (p);
            *x = keep;
            nl_model_host_changed (m);
            numeric = (plus - minus) / (2 * eps);
            if (fabs (numeric - a) > 1e-3 + 2e-2 * fabs (numeric))
              g_error ("%s element %" G_GINT64_FORMAT ": analytic %g, numeric %g",
                       nl_model_weight_name (m, node, k), i, a, numeric);
            checked++;
          }
      }
  g_assert_cmpint (checked, >=, 40);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/activations/act-types", test_act_types);
  g_test_add_func ("/activations/clip", test_clip);
  g_test_add_func ("/activations/shrink", test_shrink);
  g_test_add_func ("/activations/needs", test_needs);
  g_test_add_func ("/activations/network-gradient", test_network_gradient);
  return g_test_run ();
}
