/* test-gradcheck.c — every operator's backward against finite differences
 * of its own forward.
 *
 * For each case: inputs and weights from fixed seeds, a random projection R
 * of each output, the analytic gradient of L = sum (out * R) from backward
 * (with out_grad = R) and the numeric one from L (summed in double) at
 * x +- h and x +- 2h. Inputs are drawn clear of kinks (ReLU at 0, ties in a
 * max, |pred - label| = 0 for L1) by more than 2h, so the differences of a
 * piecewise-smooth op see one smooth piece. The cases are the gradient mode
 * of the one table (nl-op-cases.c), whose coverage test-op-cases checks:
 * an op, or a choice of an enum parameter, without a case fails there, so
 * nothing new can skip this check. */
#include <math.h>
#include <string.h>

#include "nl-op-cases.h"
#include "nl-test-util.h"
#include "ops/nl-op-registry.h"

#define MAX_SAMPLES 200 /* elements checked per tensor */
#define DEFAULT_H 2e-2
/* |analytic - numeric| <= TOL * max (FLOOR, |analytic|, |numeric|). The
 * worst seen over every case is about 9e-4 (float32 rounding in forward,
 * amplified by 1 / h where one value moves many outputs, as in the large
 * Dense, Conv2D or a large BatchNorm); a 1 % error in a backward fails. */
#define TOL 3e-3
#define FLOOR 0.1

/* ---- the checker ---- */

typedef struct {
  int checked;     /* elements compared */
  int mismatches;
  double worst;    /* largest |a - n| / max (FLOOR, |a|, |n|) */
  char worst_at[160];
} Report;

/* L = sum over outputs of out * R, in double. */
static double
objective (NlOpInstance *inst, NlTensor **R)
{
  GError *error = NULL;
  double s = 0;

  nl_test_ok_or_die (nl_op_instance_forward (inst, &error), error, "forward");
  for (int o = 0; o < inst->def->n_outputs; o++)
    {
      const float *y = nl_tensor_f32 (inst->out[o]), *r = nl_tensor_f32 (R[o]);
      for (int64_t i = 0; i < nl_tensor_numel (R[o]); i++)
        s += (double) y[i] * r[i];
    }
  return s;
}

/* dL/dx[j] by the five-point stencil (8 (L(x+h) - L(x-h)) - (L(x+2h) -
 * L(x-2h))) / 12h: its truncation error is O(h^4), so h can stay large
 * enough that float32 rounding in forward is not amplified much. Each
 * difference is divided by the step the floats actually took. */
static double
numeric_grad (NlOpInstance *inst, NlTensor **R, float *x, int64_t j, double h)
{
  float x0 = x[j];
  double d[2];

  for (int k = 0; k < 2; k++)
    {
      float xp = (float) (x0 + (k + 1) * h), xm = (float) (x0 - (k + 1) * h);
      double lp, lm;
      x[j] = xp;
      lp = objective (inst, R);
      x[j] = xm;
      lm = objective (inst, R);
      d[k] = (lp - lm) / ((double) xp - (double) xm); /* central difference with step (k + 1) h */
    }
  x[j] = x0;
  return (4 * d[0] - d[1]) / 3;
}

static void
run_backward (NlOpInstance *inst, NlTensor **R)
{
  GError *error = NULL;

  nl_test_ok_or_die (nl_op_instance_forward (inst, &error), error, "forward");
  for (int o = 0; o < inst->def->n_outputs; o++)
    memcpy (nl_tensor_f32 (inst->out_grad[o]), nl_tensor_f32 (R[o]), nl_tensor_numel (R[o]) * sizeof (float));
  /* NaN everywhere first: backward must overwrite every element (grad req "write"). */
  for (int i = 0; i < inst->n_in; i++)
    if (inst->in_grad[i])
      nl_tensor_fill (inst->in_grad[i], NAN);
  nl_test_ok_or_die (nl_op_instance_backward (inst, &error), error, "backward");
}

static char *
tensor_name (const NlOpInstance *inst, int i)
{
  const NlOpDef *def = inst->def;
  if (i >= inst->n_data)
    return g_strdup (def->weights[i - inst->n_data]);
  if (def->variadic)
    return g_strdup_printf ("%s%d", def->inputs[0], i);
  return g_strdup (i < def->n_inputs ? def->inputs[i] : "?");
}

/* Compares backward with differences of forward for one op and case;
 * prints each mismatch (at most a few per tensor) and counts them.
 * kernels: NULL for the CPU's of a registered op. */
static Report
check_case (const NlOpDef *def, const NlOpCase *gc, const NlOpKernels *kernels)
{
  g_autoptr (GError) error = NULL;
  int n_data;
  NlOpInstance *inst;
  NlTensor *R[4] = { 0 };
  NlTensor **analytic;
  GRand *r = nl_op_case_rand (gc);
  double h0 = gc->h > 0 ? gc->h : DEFAULT_H;
  int64_t max_samples = gc->samples > 0 ? gc->samples : MAX_SAMPLES;
  Report rep = { 0 };

  inst = nl_op_case_instance (def, gc, &error);
  if (!inst)
    {
      g_printerr ("GRADCHECK %s / %s: cannot make the op: %s\n", gc->op, gc->what, error->message);
      g_rand_free (r);
      rep.mismatches = 1;
      return rep;
    }

  inst->kernels = kernels ? *kernels : inst->kernels;
  n_data = inst->n_data;
  /* Running statistics are used in predict mode (and by a frozen
   * BatchNorm): the table's fill makes them non-trivial. */
  nl_op_case_fill (gc, inst, r);

  /* Which inputs take a gradient is part of the op's contract. */
  for (int i = 0; i < n_data; i++)
    {
      gboolean want = !(gc->nograd & (1u << i));
      if ((inst->in_grad[i] != NULL) != want)
        {
          g_printerr ("GRADCHECK %s / %s: data input %d should %stake a gradient\n", gc->op, gc->what, i,
                      want ? "" : "not ");
          rep.mismatches++;
        }
    }
  for (int i = n_data; i < inst->n_in; i++)
    g_assert_true ((inst->in_grad[i] != NULL) == (inst->in[i] != NULL));

  if (def->no_backward)
    {
      /* Input: nothing flows back; forward still runs. */
      for (int i = 0; i < inst->n_in; i++)
        g_assert_null (inst->in_grad[i]);
      g_assert_cmpint (inst->n_in, ==, n_data);
      nl_test_ok_or_die (nl_op_instance_forward (inst, &error), error, "forward");
      nl_op_instance_free (inst);
      g_rand_free (r);
      return rep;
    }

  for (int o = 0; o < def->n_outputs; o++)
    {
      NlShape s = nl_tensor_get_shape (inst->out[o]);
      R[o] = nl_tensor_new_shape (NL_DTYPE_F32, &s);
      nl_op_case_uniform (R[o], r, -1, 1);
    }

  run_backward (inst, R);
  analytic = g_new0 (NlTensor *, inst->n_in);
  for (int i = 0; i < inst->n_in; i++)
    if (inst->in_grad[i])
      analytic[i] = nl_tensor_copy (inst->in_grad[i]);
  /* A second pass gives the same numbers: no hidden accumulation in state. */
  run_backward (inst, R);
  for (int i = 0; i < inst->n_in; i++)
    if (analytic[i])
      {
        g_autofree char *name = tensor_name (inst, i);
        const float *a = nl_tensor_f32 (analytic[i]), *b = nl_tensor_f32 (inst->in_grad[i]);
        for (int64_t j = 0; j < nl_tensor_numel (analytic[i]); j++)
          {
            if (!isfinite (a[j]))
              {
                g_printerr ("GRADCHECK %s / %s: d%s[%" G_GINT64_FORMAT "] = %g: backward left it unwritten "
                            "or not finite\n", gc->op, gc->what, name, j, a[j]);
                rep.mismatches++;
                break;
              }
            if (!(fabsf (a[j] - b[j]) <= 1e-6f * MAX (1.0f, fabsf (a[j]))))
              {
                g_printerr ("GRADCHECK %s / %s: d%s[%" G_GINT64_FORMAT "] is %.9g on one backward and %.9g on "
                            "the next\n", gc->op, gc->what, name, j, a[j], b[j]);
                rep.mismatches++;
                break;
              }
          }
      }

  for (int i = 0; i < inst->n_in; i++)
    {
      g_autofree char *name = NULL;
      float *x;
      int64_t n, n_samples;
      int printed = 0;

      if (!analytic[i])
        continue;
      name = tensor_name (inst, i);
      x = nl_tensor_f32 (inst->in[i]);
      n = nl_tensor_numel (inst->in[i]);
      n_samples = MIN (n, max_samples);
      for (int64_t s = 0; s < n_samples; s++)
        {
          /* all elements of a small tensor; else first, last and a seeded sample */
          int64_t j = n <= max_samples ? s : s == 0 ? 0 : s == 1 ? n - 1 : g_rand_int_range (r, 0, (gint32) n);
          float x0 = x[j];
          double num, ana, err;

          num = numeric_grad (inst, R, x, j, h0);
          x[j] = x0;
          ana = nl_tensor_f32 (analytic[i])[j];
          err = fabs (ana - num) / MAX (FLOOR, MAX (fabs (ana), fabs (num)));
          rep.checked++;
          if (!(err <= rep.worst))
            {
              rep.worst = isnan (err) ? INFINITY : err;
              g_snprintf (rep.worst_at, sizeof rep.worst_at, "d%s[%" G_GINT64_FORMAT "] analytic %.7g numeric %.7g",
                          name, j, ana, num);
            }
          if (!(err <= TOL))
            {
              rep.mismatches++;
              if (printed++ < 5)
                g_printerr ("GRADCHECK %s / %s: d%s[%" G_GINT64_FORMAT "] analytic %.7g numeric %.7g\n", gc->op,
                            gc->what, name, j, ana, num);
            }
        }
      if (printed > 5)
        g_printerr ("GRADCHECK %s / %s: d%s: %d mismatches in all\n", gc->op, gc->what, name, printed);
    }

  for (int i = 0; i < inst->n_in; i++)
    if (analytic[i])
      nl_tensor_unref (analytic[i]);
  g_free (analytic);
  for (int o = 0; o < def->n_outputs; o++)
    nl_tensor_unref (R[o]);
  nl_op_instance_free (inst);
  g_rand_free (r);
  return rep;
}

/* ---- one test per op ---- */

static void
test_op (gconstpointer data)
{
  const char *op = data;
  const NlOpDef *def = nl_op_lookup (op);
  gint64 t0 = g_get_monotonic_time ();
  int n_cases = 0, checked = 0, mismatches = 0;
  double worst = 0;

  if (!def)
    {
      g_test_fail_printf ("%s is not registered", op);
      return;
    }
  for (guint c = 0; c < nl_op_n_cases; c++)
    {
      const NlOpCase *oc = &nl_op_cases[c];
      Report rep;
      if (strcmp (oc->op, op) != 0 || !nl_op_case_runs_in (oc, NL_OP_CASE_GRAD))
        continue;
      rep = check_case (def, oc, NULL);
      g_test_message ("  %s / %s: %d elements, worst %.2g at %s", op, oc->what, rep.checked, rep.worst,
                      rep.worst_at);
      n_cases++;
      checked += rep.checked;
      worst = MAX (worst, rep.worst);
      if (rep.mismatches)
        {
          g_test_fail_printf ("%s / %s: %d of %d gradient elements wrong", op, oc->what, rep.mismatches,
                              rep.checked);
          mismatches += rep.mismatches;
        }
    }
  g_test_message ("%s: %d cases, %d elements (%d wrong), worst relative error %.2g, %.0f ms", op, n_cases, checked,
                  mismatches, worst, (g_get_monotonic_time () - t0) / 1000.0);
}

/* Every op is linked in and has a backward (but Input); that each has a
 * case, and each choice of an enum parameter, test-op-cases checks. */
static void
test_backward (void)
{
  for (int id = 0; id < NL_OP_COUNT; id++)
    {
      const NlOpDef *def = nl_op_get ((NlOpId) id);

      if (!def)
        g_test_fail_printf ("op #%d of ops/nl-op-list.h is not linked in, so it has no gradient check", id);
      else if (!nl_op_kernels (def, nl_backend_cpu ()).backward && strcmp (def->name, "Input") != 0)
        g_test_fail_printf ("%s has no backward", def->name);
    }
}

/* ---- the checker can fail: a made-up op with planted bugs ---- */

typedef enum { CUBE_RIGHT, CUBE_WRONG, CUBE_ACCUMULATES, CUBE_SKIPS } CubeMode;
static CubeMode cube_mode;

static gboolean
cube_infer (NlInferCtx *c, GError **error)
{
  c->out[0] = c->in[0];
  return TRUE;
}

static gboolean
cube_forward (NlOpCtx *c, GError **error)
{
  const float *x = nl_tensor_f32 (c->in[0]);
  float *y = nl_tensor_f32 (c->out[0]);
  for (int64_t i = 0; i < nl_tensor_numel (c->in[0]); i++)
    y[i] = x[i] * x[i] * x[i];
  return TRUE;
}

static gboolean
cube_backward (NlOpCtx *c, GError **error)
{
  const float *x = nl_tensor_f32 (c->in[0]), *dy = nl_tensor_f32 (c->out_grad[0]);
  float *dx = nl_tensor_f32 (c->in_grad[0]);
  int64_t n = nl_tensor_numel (c->in[0]);
  for (int64_t i = 0; i < n; i++)
    switch (cube_mode)
      {
      case CUBE_RIGHT:
        dx[i] = 3 * x[i] * x[i] * dy[i];
        break;
      case CUBE_WRONG: /* off by 1 % */
        dx[i] = 3.03f * x[i] * x[i] * dy[i];
        break;
      case CUBE_ACCUMULATES:
        dx[i] += 3 * x[i] * x[i] * dy[i];
        break;
      case CUBE_SKIPS:
        if (i != n - 1)
          dx[i] = 3 * x[i] * x[i] * dy[i];
        break;
      }
  return TRUE;
}

static const char *const cube_inputs[] = { "data" };
static const NlOpDef cube_def = {
  .name = "Cube", .category = "Activation", .doc = "x^3, for testing the checker",
  .inputs = cube_inputs, .n_inputs = 1, .n_outputs = 1,
  .infer_shape = cube_infer,
};
/* not in the registry, so no backend has its kernels: check_case takes them */
static const NlOpKernels cube_kernels = { cube_forward, cube_backward, NULL };

static void
test_self (void)
{
  /* 300 elements: more than MAX_SAMPLES, so sampling is exercised and the
   * last element (which CUBE_SKIPS leaves) must be among them. */
  const NlOpCase gc = { "Cube", "self-test", .in = { "3x100" }, .gen = { NL_GEN_UNIFORM } };
  Report rep;

  cube_mode = CUBE_RIGHT;
  rep = check_case (&cube_def, &gc, &cube_kernels);
  g_assert_cmpint (rep.mismatches, ==, 0);
  g_assert_cmpint (rep.checked, ==, MAX_SAMPLES);
  g_assert_cmpfloat (rep.worst, <=, TOL);

  g_printerr ("(the mismatches printed next are planted)\n");
  cube_mode = CUBE_WRONG;
  rep = check_case (&cube_def, &gc, &cube_kernels);
  g_assert_cmpint (rep.mismatches, >, 0);
  cube_mode = CUBE_ACCUMULATES;
  rep = check_case (&cube_def, &gc, &cube_kernels);
  g_assert_cmpint (rep.mismatches, >, 0);
  cube_mode = CUBE_SKIPS;
  rep = check_case (&cube_def, &gc, &cube_kernels);
  g_assert_cmpint (rep.mismatches, >, 0);
}

int
main (int argc, char **argv)
{
  g_autoptr (GPtrArray) ops = g_ptr_array_new ();

  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/gradcheck/self-test", test_self);
  for (guint c = 0; c < nl_op_n_cases; c++)
    if (nl_op_case_runs_in (&nl_op_cases[c], NL_OP_CASE_GRAD)
        && !g_ptr_array_find_with_equal_func (ops, nl_op_cases[c].op, g_str_equal, NULL))
      {
        g_autofree char *path = g_strdup_printf ("/gradcheck/%s", nl_op_cases[c].op);
        g_ptr_array_add (ops, (gpointer) nl_op_cases[c].op);
        g_test_add_data_func (path, nl_op_cases[c].op, test_op);
      }
  g_test_add_func ("/gradcheck/backward", test_backward);
  return g_test_run ();
}
