/* test-registry.c — the operator table is complete and self-consistent:
 * every op linked, named once, findable, with documented snake_case
 * parameters whose defaults pass their own validation, and kernels present.
 * The GUI inspector and the JSON reader are generated from these specs, so
 * a bad spec is a user-visible bug. */
#include <math.h>
#include <string.h>

#include "nl-test-util.h"
#include "ops/nl-dense.h"
#include "ops/nl-op-instance.h"
#include "ops/nl-op-registry.h"
#include "ops/nl-pool2d.h"

static const char *const categories[] = {
  "Input", "Core", "Convolution", "Pooling", "Normalization", "Activation", "Sequence", "Structure", "Loss",
};

/* The ops registered now (NULL entries skipped: test_complete reports them). */
#define FOR_EACH_OP(def)                                 \
  for (int id_ = 0; id_ < NL_OP_COUNT; id_++)           \
    for (const NlOpDef *def = nl_op_get ((NlOpId) id_); \
         def != NULL; def = NULL)

static gboolean
is_snake_case (const char *s)
{
  if (!g_ascii_islower (s[0]))
    return FALSE;
  for (const char *c = s; *c; c++)
    {
      if (*c == '_' && (c[1] == '_' || c[1] == '\0'))
        return FALSE;
      if (!(g_ascii_islower (*c) || g_ascii_isdigit (*c) || *c == '_'))
        return FALSE;
    }
  return TRUE;
}

static int
enum_count (const NlParamSpec *s)
{
  int n = 0;
  while (s->enum_values && s->enum_values[n])
    n++;
  return n;
}

static gboolean
has_range (const NlParamSpec *s)
{
  return s->min <= s->max;
}

/* A value of the spec's type inside its range, as text. */
static char *
valid_text (const NlParamSpec *s)
{
  double x = 1;
  if (has_range (s))
    x = CLAMP (1.0, s->min, s->max);
  switch (s->type)
    {
    case NL_PARAM_INT:
    case NL_PARAM_INT2:
    case NL_PARAM_SHAPE:
      return g_strdup_printf ("%lld", (long long) ceil (x));
    case NL_PARAM_FLOAT:
      return g_strdup_printf ("%.17g", x);
    case NL_PARAM_BOOL:
      return g_strdup ("true");
    case NL_PARAM_ENUM:
      return g_strdup (s->enum_values[0]);
    }
  g_assert_not_reached ();
}

/* The checker itself, so the spec test can fail. */
static void
test_snake_case (void)
{
  g_assert_true (is_snake_case ("kernel_size"));
  g_assert_true (is_snake_case ("rho"));
  g_assert_true (is_snake_case ("conv2d_x"));
  g_assert_false (is_snake_case ("kernelSize"));
  g_assert_false (is_snake_case ("_axis"));
  g_assert_false (is_snake_case ("axis_"));
  g_assert_false (is_snake_case ("use__bias"));
  g_assert_false (is_snake_case ("2d"));
  g_assert_false (is_snake_case ("pool size"));
  g_assert_false (is_snake_case (""));
}

static void
test_complete (void)
{
  int n = 0;
  for (int id = 0; id < NL_OP_COUNT; id++)
    if (nl_op_get ((NlOpId) id) == NULL)
      g_test_fail_printf ("op #%d of ops/nl-op-list.h is not linked in", id);
    else
      n++;
  /* (missing ops are failed above without aborting, so the other checks
   * still run on the ops that are there) */
  g_assert_cmpint (nl_op_count_registered (), ==, n);
}

static void
test_names (void)
{
  g_autoptr (GHashTable) seen = g_hash_table_new (g_str_hash, g_str_equal);

  FOR_EACH_OP (def)
  {
    g_assert_nonnull (def->name);
    g_assert_cmpstr (def->name, !=, "");
    if (!g_hash_table_add (seen, (gpointer) def->name))
      g_test_fail_printf ("two ops are named '%s'", def->name);
    g_assert_true (nl_op_lookup (def->name) == def);
    g_assert_nonnull (def->doc);
    g_assert_cmpstr (def->doc, !=, "");
  }
  g_assert_null (nl_op_lookup ("NoSuchOp"));
  g_assert_null (nl_op_lookup (""));
  /* Names are case-sensitive: "conv2d" is not "Conv2D". */
  if (nl_op_lookup ("Conv2D"))
    g_assert_null (nl_op_lookup ("conv2d"));
}

static void
test_categories (void)
{
  FOR_EACH_OP (def)
  {
    gboolean ok = FALSE;
    g_assert_nonnull (def->category);
    for (guint i = 0; i < G_N_ELEMENTS (categories); i++)
      ok = ok || strcmp (def->category, categories[i]) == 0;
    if (!ok)
      g_test_fail_printf ("%s has unknown category '%s'", def->name, def->category);
    /* Losses go in the Loss group and only there. */
    g_assert_cmpint (def->is_loss, ==, strcmp (def->category, "Loss") == 0);
  }
}

static void
test_ports (void)
{
  FOR_EACH_OP (def)
  {
    g_assert_cmpint (def->n_inputs, >=, 1);
    g_assert_cmpint (def->n_inputs, <=, NL_MAX_PORTS);
    g_assert_nonnull (def->inputs);
    for (int i = 0; i < def->n_inputs; i++)
      g_assert_true (def->inputs[i] && is_snake_case (def->inputs[i]));
    g_assert_cmpint (def->n_outputs, >=, 1);
    g_assert_cmpint (def->n_weights, >=, 0);
    if (def->n_weights > 0)
      {
        g_assert_nonnull (def->weights);
        g_assert_nonnull (def->weight_init);
        for (int i = 0; i < def->n_weights; i++)
          g_assert_true (def->weights[i] && is_snake_case (def->weights[i]));
      }
    if (def->n_aux > 0)
      {
        g_assert_nonnull (def->aux);
        for (int i = 0; i < def->n_aux; i++)
          g_assert_true (def->aux[i] && is_snake_case (def->aux[i]));
      }
    g_assert_cmpint (def->n_saved, >=, 0);
    /* A loss takes (pred, label). */
    if (def->is_loss)
      g_assert_cmpint (def->n_inputs, ==, 2);
  }
}

static void
test_kernels (void)
{
  FOR_EACH_OP (def)
  {
    /* the CPU runs every op: its kernels are registered, a backward
     * exactly where the definition says something flows back */
    NlOpKernels k = nl_op_kernels (def, nl_backend_cpu ());
    if (!def->infer_shape || !k.forward)
      g_test_fail_printf ("%s lacks infer_shape or CPU forward", def->name);
    if (def->no_backward != (strcmp (def->name, "Input") == 0))
      g_test_fail_printf ("%s: no_backward is wrong", def->name);
    if (!def->no_backward && !k.backward)
      g_test_fail_printf ("%s has no CPU backward", def->name);
    if (def->no_backward && k.backward)
      g_test_fail_printf ("%s has a CPU backward but no_backward", def->name);
  }
}

/* The CPU's table answers by id and list name, as the CUDA module's does:
 * an id asked under another op's name has no kernels. */
static void
test_cpu_table (void)
{
  NlBackend *cpu = nl_backend_cpu ();

  g_assert_cmpint (nl_op_count_on (cpu), ==, NL_OP_COUNT);
  for (int id = 0; id < NL_OP_COUNT; id++)
    {
      const char *other = nl_op_list_name ((NlOpId) ((id + 1) % NL_OP_COUNT));
      g_assert_nonnull (nl_backend_op_kernels (cpu, id, nl_op_list_name ((NlOpId) id)));
      g_assert_null (nl_backend_op_kernels (cpu, id, other));
    }
  g_assert_null (nl_backend_op_kernels (cpu, NL_OP_COUNT, "input"));
  g_assert_null (nl_backend_op_kernels (cpu, -1, "input"));
}

/* The number of data inputs is checked once, from the definition, before
 * an op's infer_shape runs, with the messages the ops gave before. */
static gboolean
infer_with (const NlOpDef *def, int n_data, GError **error)
{
  NlParamValue p[16];
  NlShape in[NL_MAX_PORTS + 1], w[8], aux[8], saved[8], out[4];
  NlInferCtx ic = { .p = p, .training = TRUE, .n_data = n_data, .in = in, .weights = w, .aux = aux,
                    .saved = saved, .out = out };

  g_assert_cmpint (def->n_params, <=, (int) G_N_ELEMENTS (p));
  nl_params_init_defaults (def, p);
  for (int i = 0; i < n_data; i++)
    in[i] = nl_shape_of (2, 2, 3);
  return nl_op_infer_shape (def, &ic, error);
}

static void
expect_inputs_error (const char *op, int n_data, const char *message)
{
  g_autoptr (GError) error = NULL;

  g_assert_false (infer_with (nl_op_lookup (op), n_data, &error));
  g_assert_error (error, NL_OP_ERROR, NL_OP_ERROR_SHAPE);
  g_assert_cmpstr (error->message, ==, message);
}

static int counted_infers;

static gboolean
counted_infer (NlInferCtx *c, GError **error)
{
  counted_infers++;
  c->out[0] = c->in[0];
  return TRUE;
}

static void
test_input_counts (void)
{
  static const char *const inputs[] = { "a", "b", "c" };
  const NlOpDef three = { .name = "Three", .inputs = inputs, .n_inputs = 3, .n_outputs = 1,
                          .infer_shape = counted_infer };
  const NlOpDef some = { .name = "Some", .inputs = inputs, .n_inputs = 1, .variadic = TRUE, .max_inputs = 5,
                         .n_outputs = 1, .infer_shape = counted_infer };
  NlShape in[NL_MAX_PORTS + 1], out[1];
  int min, max;

  expect_inputs_error ("Dense", 2, "Dense takes exactly one input, but 2 are connected");
  expect_inputs_error ("BatchNorm", 0, "BatchNorm takes exactly one input, but 0 are connected");
  expect_inputs_error ("Transpose", 2, "Transpose takes exactly one input, but 2 are connected");
  expect_inputs_error ("L1Loss", 1, "L1Loss takes two inputs (pred, label), but 1 are connected");
  expect_inputs_error ("Mul", 3, "Mul takes 1 or 2 inputs, but 3 are connected");
  expect_inputs_error ("Concat", NL_MAX_PORTS + 1, "Concat takes 1 to 16 inputs, but 17 are connected");
  expect_inputs_error ("Add", 0, "Add takes 1 to 16 inputs, but 0 are connected");

  /* every op: one input too many is refused before its own inference */
  FOR_EACH_OP (def)
  {
    g_autoptr (GError) error = NULL;
    nl_op_input_range (def, &min, &max);
    g_assert_cmpint (min, >=, 1);
    g_assert_cmpint (min, <=, max);
    g_assert_cmpint (max, <=, NL_MAX_PORTS);
    g_assert_false (infer_with (def, max + 1, &error));
    g_assert_error (error, NL_OP_ERROR, NL_OP_ERROR_SHAPE);
    g_assert_nonnull (strstr (error->message, " takes "));
  }

  for (int i = 0; i < 4; i++)
    in[i] = nl_shape_of (1, 4);
  for (int n = 0; n <= 6; n++)
    {
      g_autoptr (GError) error = NULL;
      NlInferCtx ic = { .n_data = n, .in = in, .out = out };
      int before = counted_infers;
      gboolean ok = nl_op_infer_shape (&three, &ic, &error);
      g_assert_cmpint (ok, ==, n == 3);
      g_assert_cmpint (counted_infers - before, ==, ok);
      if (n == 2)
        g_assert_cmpstr (error->message, ==, "Three takes three inputs (a, b, c), but 2 are connected");
      g_clear_error (&error);
      ok = nl_op_infer_shape (&some, &ic, &error);
      g_assert_cmpint (ok, ==, n >= 1 && n <= 5);
      if (n == 6)
        g_assert_cmpstr (error->message, ==, "Some takes 1 to 5 inputs, but 6 are connected");
    }
}

static void
test_param_specs (void)
{
  FOR_EACH_OP (def)
  {
    g_assert_true (def->n_params == 0 || def->params != NULL);
    for (int i = 0; i < def->n_params; i++)
      {
        const NlParamSpec *s = &def->params[i];
        g_assert_nonnull (s->name);
        if (!is_snake_case (s->name))
          g_test_fail_printf ("%s parameter '%s' is not snake_case", def->name, s->name);
        if (!s->doc || !*s->doc)
          g_test_fail_printf ("%s parameter '%s' has no doc", def->name, s->name);
        g_assert_cmpint (nl_op_param_index (def, s->name), ==, i); /* names unique */
        g_assert_cmpint (s->type, >=, NL_PARAM_INT);
        g_assert_cmpint (s->type, <=, NL_PARAM_SHAPE);
        if (s->type == NL_PARAM_ENUM)
          {
            int n = enum_count (s);
            if (n < 2)
              g_test_fail_printf ("%s enum '%s' offers fewer than two values", def->name, s->name);
            if (!s->required && !(s->def >= 0 && s->def < n && s->def == floor (s->def)))
              g_test_fail_printf ("%s enum '%s' default %g is not an index below %d", def->name, s->name,
                                  s->def, n);
          }
        else
          g_assert_null (s->enum_values);
        if (s->type == NL_PARAM_BOOL && !s->required)
          g_assert_true (s->def == 0 || s->def == 1);
        if (!s->required && has_range (s)
            && (s->type == NL_PARAM_INT || s->type == NL_PARAM_FLOAT || s->type == NL_PARAM_INT2)
            && !(s->def >= s->min && s->def <= s->max))
          g_test_fail_printf ("%s parameter '%s' default %g is outside [%g, %g]", def->name, s->name, s->def,
                              s->min, s->max);
      }
    g_assert_cmpint (nl_op_param_index (def, "no_such_param"), ==, -1);
  }
}

/* A parameter name means one thing: "padding" or "axis" has the same type
 * in every op that has it, so the JSON reader and the inspector treat it
 * alike. */
static void
test_param_types_agree (void)
{
  g_autoptr (GHashTable) seen = g_hash_table_new (g_str_hash, g_str_equal); /* name -> spec */
  g_autoptr (GHashTable) owner = g_hash_table_new (g_str_hash, g_str_equal); /* name -> op name */

  FOR_EACH_OP (def)
  {
    for (int i = 0; i < def->n_params; i++)
      {
        const NlParamSpec *s = &def->params[i];
        const NlParamSpec *t = g_hash_table_lookup (seen, s->name);
        if (!t)
          {
            g_hash_table_insert (seen, (gpointer) s->name, (gpointer) s);
            g_hash_table_insert (owner, (gpointer) s->name, (gpointer) def->name);
          }
        else if (t->type != s->type)
          g_test_fail_printf ("parameter '%s' has type %d in %s but %d in %s", s->name, t->type,
                              (const char *) g_hash_table_lookup (owner, s->name), s->type, def->name);
      }
  }
}

/* Defaults validate once the required parameters are given; without them
 * validation names the missing one. */
static void
test_defaults_validate (void)
{
  FOR_EACH_OP (def)
  {
    g_autofree NlParamValue *v = g_new0 (NlParamValue, MAX (def->n_params, 1));
    g_autoptr (GError) error = NULL;
    gboolean any_required = FALSE;

    nl_params_init_defaults (def, v);
    for (int i = 0; i < def->n_params; i++)
      {
        g_assert_false (v[i].set);
        any_required = any_required || def->params[i].required;
      }
    if (any_required)
      {
        g_assert_false (nl_params_validate (def, v, &error));
        g_assert_error (error, NL_OP_ERROR, NL_OP_ERROR_PARAM);
        g_clear_error (&error);
        for (int i = 0; i < def->n_params; i++)
          if (def->params[i].required)
            {
              g_autofree char *text = valid_text (&def->params[i]);
              if (!nl_params_set_from_string (def, v, def->params[i].name, text, &error))
                {
                  g_test_fail_printf ("%s: cannot set required '%s' to '%s': %s", def->name,
                                      def->params[i].name, text, error->message);
                  g_clear_error (&error);
                }
            }
      }
    if (!nl_params_validate (def, v, &error))
      g_test_fail_printf ("%s: defaults do not validate: %s", def->name, error->message);
  }
}

static void
assert_rejects (const NlOpDef *def, const char *name, const char *text)
{
  g_autofree NlParamValue *v = g_new0 (NlParamValue, MAX (def->n_params, 1));
  g_autoptr (GError) error = NULL;

  nl_params_init_defaults (def, v);
  if (nl_params_set_from_string (def, v, name, text, &error))
    {
      g_test_fail_printf ("%s accepted %s = '%s'", def->name, name, text);
      return;
    }
  g_assert_error (error, NL_OP_ERROR, NL_OP_ERROR_PARAM);
}

/* Out-of-range numbers parse but do not validate. */
static void
assert_out_of_range (const NlOpDef *def, const NlParamSpec *s, double x)
{
  g_autofree NlParamValue *v = g_new0 (NlParamValue, MAX (def->n_params, 1));
  g_autoptr (GError) error = NULL;
  g_autofree char *text = NULL;

  if (s->type == NL_PARAM_FLOAT)
    text = g_strdup_printf ("%.17g", x);
  else if (fabs (x) < 9e18)
    text = g_strdup_printf ("%lld", (long long) x);
  else
    return;
  nl_params_init_defaults (def, v);
  for (int i = 0; i < def->n_params; i++)
    if (def->params[i].required && &def->params[i] != s)
      {
        g_autofree char *ok = valid_text (&def->params[i]);
        g_assert_true (nl_params_set_from_string (def, v, def->params[i].name, ok, NULL));
      }
  if (nl_params_set_from_string (def, v, s->name, text, &error) && nl_params_validate (def, v, &error))
    {
      g_test_fail_printf ("%s accepted %s = %s outside [%g, %g]", def->name, s->name, text, s->min, s->max);
      return;
    }
  g_assert_error (error, NL_OP_ERROR, NL_OP_ERROR_PARAM);
}

static void
test_set_rejects (void)
{
  int n_range = 0, n_enum = 0;

  FOR_EACH_OP (def)
  {
    assert_rejects (def, "no_such_param", "1");
    for (int i = 0; i < def->n_params; i++)
      {
        const NlParamSpec *s = &def->params[i];
        switch (s->type)
          {
          case NL_PARAM_INT:
          case NL_PARAM_INT2:
          case NL_PARAM_SHAPE:
            assert_rejects (def, s->name, "abc");
            assert_rejects (def, s->name, "1.5");
            break;
          case NL_PARAM_FLOAT:
            assert_rejects (def, s->name, "abc");
            assert_rejects (def, s->name, "");
            break;
          case NL_PARAM_BOOL:
            assert_rejects (def, s->name, "maybe");
            break;
          case NL_PARAM_ENUM:
            assert_rejects (def, s->name, "no-such-choice");
            assert_rejects (def, s->name, "");
            n_enum++;
            break;
          }
        if (has_range (s) && s->type != NL_PARAM_BOOL && s->type != NL_PARAM_ENUM)
          {
            double step = s->type == NL_PARAM_FLOAT ? MAX (1e-3, fabs (s->min) * 1e-3) : 1;
            if (s->min > -1e15)
              assert_out_of_range (def, s, s->min - step);
            if (s->max < 1e15)
              assert_out_of_range (def, s, s->max + (s->type == NL_PARAM_FLOAT ? MAX (1e-3, fabs (s->max) * 1e-3)
                                                                                 : 1));
            n_range++;
          }
      }
  }
  g_test_message ("%d ranged and %d enum parameters checked", n_range, n_enum);
}

static void
test_enum_set (void)
{
  FOR_EACH_OP (def)
  {
    for (int i = 0; i < def->n_params; i++)
      {
        const NlParamSpec *s = &def->params[i];
        g_autofree NlParamValue *v = g_new0 (NlParamValue, MAX (def->n_params, 1));
        if (s->type != NL_PARAM_ENUM)
          continue;
        nl_params_init_defaults (def, v);
        for (int j = 0; s->enum_values[j]; j++)
          {
            g_autofree char *upper = g_ascii_strup (s->enum_values[j], -1);
            g_assert_true (nl_params_set_from_string (def, v, s->name, s->enum_values[j], NULL));
            g_assert_cmpint (v[i].i, ==, j);
            g_assert_true (v[i].set);
            /* Choices are matched case-insensitively ("ReLU" from a hand-written file). */
            v[i].i = -1;
            g_assert_true (nl_params_set_from_string (def, v, s->name, upper, NULL));
            g_assert_cmpint (v[i].i, ==, j);
          }
      }
  }
}

static void
test_int2_parse (void)
{
  int checked = 0;

  FOR_EACH_OP (def)
  {
    for (int i = 0; i < def->n_params; i++)
      {
        const NlParamSpec *s = &def->params[i];
        g_autofree NlParamValue *v = g_new0 (NlParamValue, MAX (def->n_params, 1));
        int64_t a = 5, b = 3;
        g_autofree char *one = NULL, *two = NULL, *bracket = NULL, *three = NULL;

        if (s->type != NL_PARAM_INT2)
          continue;
        /* Values inside the range, so the parse is the only thing tested. */
        if (has_range (s) && s->max < 5)
          a = (int64_t) s->max, b = (int64_t) s->min;
        if (has_range (s) && s->min > 3)
          a = (int64_t) s->min + 2, b = (int64_t) s->min;
        one = g_strdup_printf ("%lld", (long long) a);
        two = g_strdup_printf ("%lld,%lld", (long long) b, (long long) a);
        bracket = g_strdup_printf ("[%lld, %lld]", (long long) a, (long long) b);
        three = g_strdup_printf ("%lld,%lld,%lld", (long long) a, (long long) a, (long long) a);

        nl_params_init_defaults (def, v);
        g_assert_true (nl_params_set_from_string (def, v, s->name, one, NULL));
        g_assert_cmpint (v[i].n, ==, 2);
        g_assert_cmpint (v[i].v[0], ==, a);
        g_assert_cmpint (v[i].v[1], ==, a);
        g_assert_true (nl_params_set_from_string (def, v, s->name, two, NULL));
        g_assert_cmpint (v[i].n, ==, 2);
        g_assert_cmpint (v[i].v[0], ==, b);
        g_assert_cmpint (v[i].v[1], ==, a);
        g_assert_true (nl_params_set_from_string (def, v, s->name, bracket, NULL));
        g_assert_cmpint (v[i].v[0], ==, a);
        g_assert_cmpint (v[i].v[1], ==, b);
        assert_rejects (def, s->name, three);
        assert_rejects (def, s->name, "");
        assert_rejects (def, s->name, "5,a");
        checked++;
      }
  }
  /* Conv2D and the poolings have kernel sizes and strides. */
  if (nl_op_lookup ("Conv2D"))
    g_assert_cmpint (checked, >, 0);
  g_test_message ("%d INT2 parameters parsed", checked);
}

/* "5" and "3,5" on Conv2D's kernel size, as a network file writes them. */
static void
test_int2_conv (void)
{
  const NlOpDef *def = nl_op_lookup ("Conv2D");
  g_autofree NlParamValue *v = NULL;
  int k;

  if (!def)
    {
      g_test_skip ("Conv2D is not linked in");
      return;
    }
  /* Gluon's name, or MXNet's */
  k = nl_op_param_index (def, "kernel_size");
  if (k < 0)
    k = nl_op_param_index (def, "kernel");
  g_assert_cmpint (k, >=, 0);
  g_assert_cmpint (def->params[k].type, ==, NL_PARAM_INT2);
  v = g_new0 (NlParamValue, def->n_params);
  nl_params_init_defaults (def, v);
  g_assert_true (nl_params_set_from_string (def, v, def->params[k].name, "5", NULL));
  g_assert_cmpint (v[k].v[0], ==, 5);
  g_assert_cmpint (v[k].v[1], ==, 5);
  g_assert_true (nl_params_set_from_string (def, v, def->params[k].name, "3,5", NULL));
  g_assert_cmpint (v[k].v[0], ==, 3);
  g_assert_cmpint (v[k].v[1], ==, 5);
  g_assert_true (v[k].set);
}

static void
test_shape_parse (void)
{
  const NlOpDef *def = nl_op_lookup ("Input");
  g_autofree NlParamValue *v = NULL;
  int k;

  if (!def)
    {
      g_test_skip ("Input is not linked in");
      return;
    }
  k = nl_op_param_index (def, "shape");
  g_assert_cmpint (k, >=, 0);
  v = g_new0 (NlParamValue, def->n_params);
  nl_params_init_defaults (def, v);
  g_assert_cmpint (v[k].n, ==, 0);
  g_assert_true (nl_params_set_from_string (def, v, "shape", "[1, 28, 28]", NULL));
  g_assert_cmpint (v[k].n, ==, 3);
  g_assert_cmpint (v[k].v[0], ==, 1);
  g_assert_cmpint (v[k].v[2], ==, 28);
  assert_rejects (def, "shape", "1,2,3,4,5,6,7");
  assert_rejects (def, "shape", "[]");
}

/* Kernels read their op's typed arguments (ctx->args), never a parameter
 * by name: an op has both a size and a resolver or neither, and only ops
 * whose kernels read no parameter go without. */
static void
test_args (void)
{
  FOR_EACH_OP (def)
  {
    g_assert_cmpint (def->args_size > 0, ==, def->resolve_args != NULL);
    /* Input checks its shape and Reshape its target in shape inference
     * only; Mul's kernels read its operand's shape off the operand */
    if (def->n_params > 0 && def->args_size == 0 && strcmp (def->name, "Input") != 0
        && strcmp (def->name, "Reshape") != 0 && strcmp (def->name, "Mul") != 0)
      g_test_fail_printf ("%s has parameters but no typed arguments for its kernels", def->name);
  }
}

static NlOpInstance *
instance (const char *op, const char *const *params, NlShape in)
{
  g_autoptr (GError) error = NULL;
  NlOpInstance *inst = nl_op_instance_new (nl_op_lookup (op), params, 1, &in, TRUE, &error);
  g_assert_no_error (error);
  g_assert_nonnull (inst->args);
  return inst;
}

/* The arguments are the parameters as set, defaults for the rest, resolved
 * (a pooling stride of 0 is the pool size). */
static void
test_args_resolved (void)
{
  const char *const dense[] = { "units", "7", "flatten", "false", NULL };
  const char *const maxpool[] = { "pool_size", "[3, 2]", "ceil_mode", "true", NULL };
  const char *const avgpool[] = { "strides", "1", "count_include_pad", "false", NULL };
  NlOpInstance *inst = instance ("Dense", dense, nl_shape_of (3, 2, 3, 5));
  const NlDenseArgs *d = inst->args;
  const NlPool2dArgs *p;

  g_assert_cmpint (d->units, ==, 7);
  g_assert_cmpint (d->in_units, ==, 0);
  g_assert_false (d->flatten);
  g_assert_true (d->use_bias);
  nl_op_instance_free (inst);

  inst = instance ("MaxPool2D", maxpool, nl_shape_of (4, 1, 1, 8, 8));
  p = inst->args;
  g_assert_cmpint (p->pool_size[0], ==, 3);
  g_assert_cmpint (p->pool_size[1], ==, 2);
  g_assert_cmpint (p->strides[0], ==, 3);
  g_assert_cmpint (p->strides[1], ==, 2);
  g_assert_true (p->ceil_mode);
  g_assert_false (p->count_include_pad);
  nl_op_instance_free (inst);

  inst = instance ("AvgPool2D", avgpool, nl_shape_of (4, 1, 1, 8, 8));
  p = inst->args;
  g_assert_cmpint (p->pool_size[0], ==, 2);
  g_assert_cmpint (p->strides[0], ==, 1);
  g_assert_cmpint (p->strides[1], ==, 1);
  g_assert_false (p->count_include_pad);
  nl_op_instance_free (inst);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/registry/snake-case", test_snake_case);
  g_test_add_func ("/registry/names", test_names);
  g_test_add_func ("/registry/categories", test_categories);
  g_test_add_func ("/registry/ports", test_ports);
  g_test_add_func ("/registry/kernels", test_kernels);
  g_test_add_func ("/registry/cpu-table", test_cpu_table);
  g_test_add_func ("/registry/input-counts", test_input_counts);
  g_test_add_func ("/registry/param-specs", test_param_specs);
  g_test_add_func ("/registry/param-types-agree", test_param_types_agree);
  g_test_add_func ("/registry/defaults-validate", test_defaults_validate);
  g_test_add_func ("/registry/set-rejects", test_set_rejects);
  g_test_add_func ("/registry/enum-set", test_enum_set);
  g_test_add_func ("/registry/int2-parse", test_int2_parse);
  g_test_add_func ("/registry/int2-conv", test_int2_conv);
  g_test_add_func ("/registry/shape-parse", test_shape_parse);
  g_test_add_func ("/registry/args", test_args);
  g_test_add_func ("/registry/args-resolved", test_args_resolved);
  /* last: during development a missing op would stop the run before the
   * checks of the ops that are there */
  g_test_add_func ("/registry/complete", test_complete);
  return g_test_run ();
}
