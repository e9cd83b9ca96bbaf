/* test-op-cases.c — the one table of op test cases (nl-op-cases.c), checked
 * once for every mode: each case names a registered op, is unique and
 * makes an instance; the cases of an op are together; every op and every
 * choice of an enum parameter (each activation type) has a case in each
 * mode, so no new op or choice can skip the gradient check or the
 * comparison with the device; and every op has an ONNX export or an
 * explicit not-exportable mark (engine/formats/onnx/nl-onnx-export.c). */
#include <string.h>

#include "engine/formats/onnx/nl-onnx-export.h"
#include "nl-op-cases.h"
#include "nl-test-util.h"
#include "ops/nl-op-registry.h"

/* nl_onnx_op_form, or a stand-in that plants a gap */
typedef NlOnnxOpForm (*OnnxFormFn) (const char *op_name, const char **why);

static const struct {
  NlOpCaseMode mode;
  const char *name;
} modes[] = {
  { NL_OP_CASE_GRAD, "gradient check" },
  { NL_OP_CASE_COMPARE, "device comparison" },
};

/* Enum choices with no form on the device, so no compare case: each one
 * refused by its CUDA kernel with a message, and said in its doc. */
static const struct {
  const char *op, *param, *choice, *why;
} device_gaps[] = {
  { "GRU", "variant", "classic", "cuDNN has only the linear_before_reset GRU; classic runs on the CPU only" },
};

static gboolean
device_gap (NlOpCaseMode mode, const NlOpDef *def, const NlParamSpec *s, int j)
{
  for (guint g = 0; mode == NL_OP_CASE_COMPARE && g < G_N_ELEMENTS (device_gaps); g++)
    if (!strcmp (device_gaps[g].op, def->name) && !strcmp (device_gaps[g].param, s->name)
        && !strcmp (device_gaps[g].choice, s->enum_values[j]))
      return TRUE;
  return FALSE;
}

/* Whether some case of def in mode runs with the enum s = its choice j (a
 * case that leaves the parameter out runs its default). */
static gboolean
enum_choice_covered (const NlOpCase *cases, guint n, NlOpCaseMode mode, const NlOpDef *def, const NlParamSpec *s,
                     int j)
{
  for (guint c = 0; c < n; c++)
    if (strcmp (cases[c].op, def->name) == 0 && nl_op_case_runs_in (&cases[c], mode)
        && nl_test_params_choose (cases[c].params, s, j))
      return TRUE;
  return FALSE;
}

/* What the table cases[n] and the ONNX export (onnx_form; NULL in a build
 * without ONNX) lack, one line each (empty when complete). */
static GPtrArray *
coverage_gaps (const NlOpCase *cases, guint n, OnnxFormFn onnx_form)
{
  GPtrArray *gaps = g_ptr_array_new_with_free_func (g_free);

  for (guint c = 0; c < n; c++)
    {
      if (!nl_op_lookup (cases[c].op))
        g_ptr_array_add (gaps, g_strdup_printf ("case '%s / %s' names no registered op", cases[c].op,
                                                cases[c].what));
      for (guint e = 0; e < c; e++)
        if (strcmp (cases[e].op, cases[c].op) == 0 && strcmp (cases[e].what, cases[c].what) == 0)
          g_ptr_array_add (gaps, g_strdup_printf ("case '%s / %s' is there twice", cases[c].op, cases[c].what));
      /* grouped by op: test-cuda makes one test per group */
      for (guint e = 0; c > 0 && e + 1 < c; e++)
        if (strcmp (cases[e].op, cases[c].op) == 0 && strcmp (cases[c - 1].op, cases[c].op) != 0)
          {
            g_ptr_array_add (gaps, g_strdup_printf ("the cases of %s are not together", cases[c].op));
            break;
          }
    }
  for (int id = 0; id < NL_OP_COUNT; id++)
    {
      const NlOpDef *def = nl_op_get ((NlOpId) id);

      if (!def)
        {
          g_ptr_array_add (gaps, g_strdup_printf ("op #%d of ops/nl-op-list.h is not linked in", id));
          continue;
        }
      if (onnx_form && onnx_form (def->name, NULL) == NL_ONNX_OP_UNMAPPED)
        g_ptr_array_add (gaps, g_strdup_printf ("%s has neither an ONNX export nor a not-exportable mark "
                                                "(engine/formats/onnx/nl-onnx-export.c)", def->name));
      for (guint m = 0; m < G_N_ELEMENTS (modes); m++)
        {
          gboolean found = FALSE;
          for (guint c = 0; c < n; c++)
            found = found || (strcmp (cases[c].op, def->name) == 0 && nl_op_case_runs_in (&cases[c], modes[m].mode));
          if (!found)
            g_ptr_array_add (gaps, g_strdup_printf ("%s has no %s case in tests/nl-op-cases.c", def->name,
                                                    modes[m].name));
          for (int i = 0; found && i < def->n_params; i++)
            if (def->params[i].type == NL_PARAM_ENUM)
              for (int j = 0; def->params[i].enum_values[j]; j++)
                if (!enum_choice_covered (cases, n, modes[m].mode, def, &def->params[i], j)
                    && !device_gap (modes[m].mode, def, &def->params[i], j))
                  g_ptr_array_add (gaps, g_strdup_printf ("%s: no %s case with %s = %s", def->name, modes[m].name,
                                                          def->params[i].name, def->params[i].enum_values[j]));
        }
    }
  return gaps;
}

static void
test_coverage (void)
{
  g_autoptr (GPtrArray) gaps = coverage_gaps (nl_op_cases, nl_op_n_cases,
                                              nl_onnx_available () ? nl_onnx_op_form : NULL);
  guint n_grad = 0, n_compare = 0;

  for (guint i = 0; i < gaps->len; i++)
    g_test_fail_printf ("%s", (const char *) gaps->pdata[i]);
  for (guint c = 0; c < nl_op_n_cases; c++)
    {
      n_grad += nl_op_case_runs_in (&nl_op_cases[c], NL_OP_CASE_GRAD);
      n_compare += nl_op_case_runs_in (&nl_op_cases[c], NL_OP_CASE_COMPARE);
    }
  g_test_message ("%u cases: %u in gradient mode, %u in compare mode", nl_op_n_cases, n_grad, n_compare);
}

/* Every case's parameters and shapes make an instance of its op. */
static void
test_instances (void)
{
  for (guint c = 0; c < nl_op_n_cases; c++)
    {
      const NlOpDef *def = nl_op_lookup (nl_op_cases[c].op);
      g_autoptr (GError) error = NULL;
      NlOpInstance *inst;

      if (!def)
        continue; /* test_coverage names it */
      inst = nl_op_case_instance (def, &nl_op_cases[c], &error);
      if (!inst)
        g_test_fail_printf ("%s / %s: %s", nl_op_cases[c].op, nl_op_cases[c].what, error->message);
      else
        nl_op_instance_free (inst);
    }
}

static gboolean
gaps_have (GPtrArray *gaps, const char *line)
{
  for (guint i = 0; i < gaps->len; i++)
    if (strcmp (gaps->pdata[i], line) == 0)
      return TRUE;
  return FALSE;
}

/* Dense forgotten by the export */
static NlOnnxOpForm
form_without_dense (const char *op_name, const char **why)
{
  return strcmp (op_name, "Dense") == 0 ? NL_ONNX_OP_UNMAPPED : nl_onnx_op_form (op_name, why);
}

/* The check can fail: tables with planted gaps name each one. */
static void
test_gaps_found (void)
{
  g_autofree NlOpCase *t = g_memdup2 (nl_op_cases, nl_op_n_cases * sizeof *t);
  g_autoptr (GPtrArray) gaps = NULL;
  guint relu = G_MAXUINT, sig = G_MAXUINT, n_input = 0;

  /* the table as it is has no gaps, so each one below is planted */
  g_assert_nonnull (t);

  for (guint c = 0; c < nl_op_n_cases; c++)
    {
      if (strcmp (t[c].op, "Activation") == 0 && g_strv_contains (t[c].params, "relu"))
        relu = c;
      if (strcmp (t[c].op, "Activation") == 0 && g_strv_contains (t[c].params, "sigmoid") && sig == G_MAXUINT)
        sig = c;
      if (strcmp (t[c].op, "Input") == 0)
        g_assert_cmpuint (c, ==, n_input++); /* Input's cases come first */
    }
  g_assert_cmpuint (n_input, >, 0);
  /* every relu case compare-only; Input's cases replaced by the first Dense
   * case, which is also put at the end; a Dense case's name twice; an op
   * that does not exist */
  for (guint c = 0; c < nl_op_n_cases; c++)
    if (strcmp (t[c].op, "Activation") == 0 && g_strv_contains (t[c].params, "relu"))
      t[c].only = NL_OP_CASE_COMPARE;
  g_assert_cmpuint (relu, <, nl_op_n_cases);
  g_assert_cmpuint (sig, <, nl_op_n_cases);
  t[sig].op = "Sigmoid";
  for (guint c = 0; c < n_input; c++)
    t[c] = t[n_input];
  t[nl_op_n_cases - 1] = t[n_input];
  gaps = coverage_gaps (t, nl_op_n_cases, form_without_dense);
  for (guint i = 0; i < gaps->len; i++)
    g_test_message ("planted: %s", (const char *) gaps->pdata[i]);
  g_assert_true (gaps_have (gaps, "Activation: no gradient check case with act_type = relu"));
  g_assert_false (gaps_have (gaps, "Activation: no device comparison case with act_type = relu"));
  g_assert_true (gaps_have (gaps, "Input has no gradient check case in tests/nl-op-cases.c"));
  g_assert_true (gaps_have (gaps, "Input has no device comparison case in tests/nl-op-cases.c"));
  g_assert_true (gaps_have (gaps, "case 'Sigmoid / sigmoid' names no registered op"));
  g_assert_true (gaps_have (gaps, "case 'Dense / 2d' is there twice"));
  g_assert_true (gaps_have (gaps, "the cases of Dense are not together"));
  g_assert_true (gaps_have (gaps, "Dense has neither an ONNX export nor a not-exportable mark "
                                  "(engine/formats/onnx/nl-onnx-export.c)"));
  g_assert_false (gaps_have (gaps, "Conv2D has neither an ONNX export nor a not-exportable mark "
                                   "(engine/formats/onnx/nl-onnx-export.c)"));
}

/* The ONNX forms: an exporter, a mark with its reason, or neither (a new
 * op, which test_coverage then names). */
static void
test_onnx_forms (void)
{
  const char *why = "unset";

  if (!nl_onnx_available ())
    {
      g_assert_cmpint (nl_onnx_op_form ("Dense", &why), ==, NL_ONNX_OP_UNMAPPED);
      g_test_skip ("this build has no ONNX");
      return;
    }
  g_assert_cmpint (nl_onnx_op_form ("Conv2D", &why), ==, NL_ONNX_OP_EXPORTED);
  g_assert_null (why);
  g_assert_cmpint (nl_onnx_op_form ("HuberLoss", &why), ==, NL_ONNX_OP_NOT_EXPORTABLE);
  g_assert_nonnull (strstr (why, "loss"));
  g_assert_cmpint (nl_onnx_op_form ("Cube", &why), ==, NL_ONNX_OP_UNMAPPED);
  g_assert_null (why);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/op-cases/coverage", test_coverage);
  g_test_add_func ("/op-cases/instances", test_instances);
  g_test_add_func ("/op-cases/gaps-found", test_gaps_found);
  g_test_add_func ("/op-cases/onnx-forms", test_onnx_forms);
  return g_test_run ();
}
