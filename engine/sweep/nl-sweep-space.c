/* nl-sweep-space.c — parsing, checking and applying a sweep's space. */
#include "engine/sweep/nl-sweep-space.h"
#include "engine/train/nl-lr-schedule.h"
#include "engine/data/nl-transform.h"
#include "core/nl-json-guard.h"
#include "core/nl-spec.h"

#include <json-glib/json-glib.h>
#include <math.h>
#include <string.h>

#define DEFAULT_GRID 3

/* Names users write for settings whose stored key is longer. */
static const struct {
  const char *alias, *field;
} aliases[] = { { "schedule", "lr_schedule" }, { "augmentation", "augment" } };

static void
param_free (gpointer data)
{
  NlSweepParam *p = data;
  g_free (p->key);
  g_strfreev (p->choices);
  g_free (p->node);
  g_free (p->param);
  g_free (p);
}

void
nl_sweep_space_free (NlSweepSpace *s)
{
  if (!s)
    return;
  g_ptr_array_unref (s->params);
  g_free (s);
}

/* --space: KEY: what is wrong */
static const NlSpecErrors spec_errors = {
  nl_train_error_quark, NL_TRAIN_ERROR_CONFIG, "--space: ", "",
};

static gboolean
parse_number (const char *text, double *v)
{
  char *end = NULL;
  *v = g_ascii_strtod (text, &end);
  return end != text && *end == '\0' && isfinite (*v);
}

/* `KIND:LO:HI[:N]` for the range kinds; FALSE when TEXT is no range. */
static gboolean
parse_range (NlSweepParam *p, const char *text, GError **error)
{
  static const struct {
    const char *prefix;
    NlSweepKind kind;
  } kinds[] = { { "uniform:", NL_SWEEP_UNIFORM }, { "log:", NL_SWEEP_LOG }, { "int:", NL_SWEEP_INT } };
  g_auto (GStrv) parts = NULL;
  double n = DEFAULT_GRID;
  guint len;

  for (gsize i = 0; i < G_N_ELEMENTS (kinds); i++)
    if (g_str_has_prefix (text, kinds[i].prefix))
      p->kind = kinds[i].kind;
  parts = g_strsplit (text, ":", -1);
  len = g_strv_length (parts);
  if ((len != 3 && len != 4) || !parse_number (parts[1], &p->lo) || !parse_number (parts[2], &p->hi)
      || (len == 4 && (!parse_number (parts[3], &n) || n < 1 || n > 1000 || n != floor (n))))
    return nl_spec_fail (error, &spec_errors, p->key,
                         "'%s' is not %s:LO:HI[:N] (N: grid points, 1 to 1000)", text, parts[0]);
  if (p->lo > p->hi)
    return nl_spec_fail (error, &spec_errors, p->key, "the range %s is empty (LO > HI)", text);
  if (p->kind == NL_SWEEP_LOG && p->lo <= 0)
    return nl_spec_fail (error, &spec_errors, p->key, "a log range needs LO > 0, not %g", p->lo);
  if (p->kind == NL_SWEEP_INT && (p->lo != floor (p->lo) || p->hi != floor (p->hi)))
    return nl_spec_fail (error, &spec_errors, p->key, "an int range needs integer ends, not %s", text);
  p->grid = (int) n;
  return TRUE;
}

static const NlRunField *
find_field (const char *key)
{
  g_autofree char *name = g_strdelimit (g_strdup (key), "-", '_');
  for (gsize i = 0; i < G_N_ELEMENTS (aliases); i++)
    if (!strcmp (name, aliases[i].alias))
      return nl_run_config_find_field (aliases[i].field);
  return nl_run_config_find_field (name);
}

/* A run setting's ends (ranges) or each choice, tried on a scratch copy. */
static gboolean
check_setting (const NlSweepParam *p, GError **error)
{
  const NlRunField *f = p->field;
  gboolean numeric = f->type == NL_RUN_FIELD_INT || f->type == NL_RUN_FIELD_SEED || f->type == NL_RUN_FIELD_FLOAT
                     || f->type == NL_RUN_FIELD_DOUBLE;
  g_autoptr (GError) local = NULL;

  if (p->kind != NL_SWEEP_CHOICE && !numeric)
    return nl_spec_fail (error, &spec_errors, p->key, "takes a choice list (a|b|c), not a range");
  if (p->kind != NL_SWEEP_CHOICE)
    {
      if (!nl_run_field_check (f, NULL, p->lo, &local) || !nl_run_field_check (f, NULL, p->hi, &local))
        return nl_spec_fail (error, &spec_errors, p->key, "%s", local->message);
      return TRUE;
    }
  for (int i = 0; i < p->n_choices; i++)
    {
      g_auto (NlRunConfig) rc = { 0 };
      const char *v = p->choices[i];
      nl_run_config_init (&rc);
      if (!nl_run_field_set_text (f, &rc, v, &local))
        return nl_spec_fail (error, &spec_errors, p->key, "%s", local->message);
      if (numeric && !nl_run_field_check (f, NULL, nl_run_field_get_number (f, &rc), &local))
        return nl_spec_fail (error, &spec_errors, p->key, "%s", local->message);
      if (!strcmp (f->name, "lr_schedule"))
        {
          g_autoptr (NlLrSchedule) s = nl_lr_schedule_new (v, 0.1f, 1000, &local);
          if (!s)
            return nl_spec_fail (error, &spec_errors, p->key, "%s", local->message);
        }
      /* a bad transform list would fail every trial that draws it */
      if (!strcmp (f->name, "augment"))
        {
          g_autoptr (NlTransform) t = nl_transform_parse (v, &local);
          if (!t)
            return nl_spec_fail (error, &spec_errors, p->key, "%s", local->message);
        }
    }
  return TRUE;
}

static NlSweepParam *
parse_param (const char *item, GError **error)
{
  const char *eq = strchr (item, '=');
  NlSweepParam *p = g_new0 (NlSweepParam, 1);
  g_autoptr (GPtrArray) keep = g_ptr_array_new_with_free_func (param_free);
  const char *value;

  g_ptr_array_add (keep, p);
  p->key = g_strstrip (g_strndup (item, eq - item));
  value = eq + 1;
  if (!*p->key)
    return nl_spec_fail (error, &spec_errors, item, "a key is missing before '='"), NULL;
  if (!*value)
    return nl_spec_fail (error, &spec_errors, p->key, "no values after '='"), NULL;
  if (strchr (p->key, '.'))
    {
      const char *dot = strrchr (p->key, '.');
      p->node = g_strndup (p->key, dot - p->key);
      p->param = g_strdup (dot + 1);
      if (!*p->node || !*p->param)
        return nl_spec_fail (error, &spec_errors, p->key, "a network parameter is written node.param"), NULL;
    }
  else if (!(p->field = find_field (p->key)) || !(p->field->flags & NL_RUN_FIELD_STORED)
           || !strcmp (p->field->name, "dataset"))
    return nl_spec_fail (error, &spec_errors, p->key,
                         "unknown setting (a training setting such as lr, momentum, wd, optimizer, batch_size, "
                         "lr_schedule, epochs, seed, augment, precision, or a network parameter node.param)"),
           NULL;
  if (g_str_has_prefix (value, "uniform:") || g_str_has_prefix (value, "log:") || g_str_has_prefix (value, "int:"))
    {
      if (!parse_range (p, value, error))
        return NULL;
    }
  else
    {
      p->kind = NL_SWEEP_CHOICE;
      p->choices = g_strsplit (value, "|", -1);
      p->n_choices = (int) g_strv_length (p->choices);
      for (int i = 0; i < p->n_choices; i++)
        if (!*p->choices[i])
          return nl_spec_fail (error, &spec_errors, p->key, "an empty choice in '%s'", value), NULL;
    }
  if (p->field && !check_setting (p, error))
    return NULL;
  return g_ptr_array_steal_index (keep, 0);
}

/* A comma starts a new key only before `name=`: values such as an
 * augmentation list or a schedule keep their own commas. */
static gboolean
starts_key (const char *s)
{
  if (!g_ascii_isalpha (*s) && *s != '_')
    return FALSE;
  while (g_ascii_isalnum (*s) || *s == '_' || *s == '.' || *s == '-')
    s++;
  return *s == '=';
}

NlSweepSpace *
nl_sweep_space_parse (const char *text, GError **error)
{
  g_autoptr (NlSweepSpace) s = g_new0 (NlSweepSpace, 1);
  g_auto (GStrv) pieces = NULL;
  g_autoptr (GPtrArray) items = g_ptr_array_new_with_free_func (g_free);

  g_return_val_if_fail (text != NULL, NULL);
  s->params = g_ptr_array_new_with_free_func (param_free);
  pieces = g_strsplit (text, ",", -1);
  for (int i = 0; pieces[i]; i++)
    {
      char *piece = g_strstrip (pieces[i]);
      if (starts_key (piece) || items->len == 0)
        g_ptr_array_add (items, g_strdup (piece));
      else
        {
          char *joined = g_strconcat (g_ptr_array_index (items, items->len - 1), ",", piece, NULL);
          g_free (g_ptr_array_index (items, items->len - 1));
          g_ptr_array_index (items, items->len - 1) = joined;
        }
    }
  for (guint i = 0; i < items->len; i++)
    {
      const char *item = g_ptr_array_index (items, i);
      NlSweepParam *p;
      if (!strchr (item, '='))
        {
          g_set_error (error, NL_TRAIN_ERROR, NL_TRAIN_ERROR_CONFIG,
                       "--space: '%s' is not KEY=VALUES (e.g. lr=log:1e-4:1e-1,optimizer=sgd|adam)", item);
          return NULL;
        }
      if (!(p = parse_param (item, error)))
        return NULL;
      for (guint j = 0; j < s->params->len; j++)
        {
          const NlSweepParam *q = g_ptr_array_index (s->params, j);
          if ((p->field && p->field == q->field) || !strcmp (p->key, q->key))
            {
              nl_spec_fail (error, &spec_errors, p->key, "given twice");
              param_free (p);
              return NULL;
            }
        }
      g_ptr_array_add (s->params, p);
    }
  if (s->params->len == 0)
    {
      g_set_error (error, NL_TRAIN_ERROR, NL_TRAIN_ERROR_CONFIG, "--space is empty");
      return NULL;
    }
  return g_steal_pointer (&s);
}

/* ---- values ---- */

double
nl_sweep_param_from_unit (const NlSweepParam *p, double u)
{
  switch (p->kind)
    {
    case NL_SWEEP_CHOICE:
      return MIN (floor (u * p->n_choices), p->n_choices - 1);
    case NL_SWEEP_LOG:
      return exp (log (p->lo) + u * (log (p->hi) - log (p->lo)));
    case NL_SWEEP_INT:
      return MIN (floor (p->lo + u * (p->hi - p->lo + 1)), p->hi);
    case NL_SWEEP_UNIFORM:
    default:
      return p->lo + u * (p->hi - p->lo);
    }
}

double *
nl_sweep_param_grid (const NlSweepParam *p, int *n)
{
  int want = p->kind == NL_SWEEP_CHOICE ? p->n_choices : p->grid > 0 ? p->grid : DEFAULT_GRID;
  double *v = g_new (double, want);
  int k = 0;

  if (p->kind == NL_SWEEP_INT)
    want = (int) MIN (want, p->hi - p->lo + 1);
  for (int i = 0; i < want; i++)
    {
      double t = want > 1 ? (double) i / (want - 1) : 0.5;
      double x = p->kind == NL_SWEEP_CHOICE ? i
                 : p->kind == NL_SWEEP_LOG ? exp (log (p->lo) + t * (log (p->hi) - log (p->lo)))
                 : p->lo + t * (p->hi - p->lo);
      if (p->kind == NL_SWEEP_INT)
        x = round (x);
      if (k == 0 || v[k - 1] != x)   /* rounding may repeat a value */
        v[k++] = x;
    }
  *n = k;
  return v;
}

char *
nl_sweep_space_value_text (const NlSweepSpace *s, int i, double v)
{
  const NlSweepParam *p = nl_sweep_space_param (s, i);
  if (p->kind == NL_SWEEP_CHOICE)
    return g_strdup (p->choices[CLAMP ((int) v, 0, p->n_choices - 1)]);
  if (p->kind == NL_SWEEP_INT || (p->field && (p->field->type == NL_RUN_FIELD_INT
                                               || p->field->type == NL_RUN_FIELD_SEED)))
    return g_strdup_printf ("%.0f", round (v));
  return g_strdup_printf ("%.6g", v);
}

gboolean
nl_sweep_space_check_network (const NlSweepSpace *s, const NlNetwork *net, GError **error)
{
  for (int i = 0; i < nl_sweep_space_dim (s); i++)
    {
      const NlSweepParam *p = nl_sweep_space_param (s, i);
      int node;
      gboolean known = FALSE;
      if (!p->node)
        continue;
      node = nl_network_find (net, p->node);
      if (node < 0)
        return nl_spec_fail (error, &spec_errors, p->key, "the network %s has no node '%s'", net->name, p->node);
      for (int k = 0; k < nl_network_node (net, node)->def->n_params; k++)
        known = known || !strcmp (nl_network_node (net, node)->def->params[k].name, p->param);
      if (!known)
        return nl_spec_fail (error, &spec_errors, p->key,
                             "node %s (%s) has no parameter '%s'", p->node, nl_network_node (net, node)->def->name,
                             p->param);
      /* the ends of a range, or each choice, on a scratch copy */
      for (int k = 0; k < (p->kind == NL_SWEEP_CHOICE ? p->n_choices : 2); k++)
        {
          g_autoptr (NlNetwork) copy = nl_network_copy (net);
          g_autoptr (GError) local = NULL;
          g_autofree char *text = nl_sweep_space_value_text (s, i, p->kind == NL_SWEEP_CHOICE ? k : k ? p->hi : p->lo);
          /* set_param parses; validate checks the limits */
          if (!nl_network_set_param (copy, node, p->param, text, &local) || !nl_network_validate (copy, NULL, &local))
            return nl_spec_fail (error, &spec_errors, p->key, "%s", local->message);
        }
    }
  return TRUE;
}

gboolean
nl_sweep_space_apply (const NlSweepSpace *s, const double *point, NlRunConfig *rc, NlNetwork *net, GError **error)
{
  /* the optimizer first: it resets the rates to its defaults */
  for (int pass = 0; pass < 2; pass++)
    for (int i = 0; i < nl_sweep_space_dim (s); i++)
      {
        const NlSweepParam *p = nl_sweep_space_param (s, i);
        gboolean is_optimizer = p->field && p->field->type == NL_RUN_FIELD_OPTIMIZER;
        g_autofree char *text = NULL;
        g_autoptr (GError) local = NULL;

        if (is_optimizer != (pass == 0))
          continue;
        text = nl_sweep_space_value_text (s, i, point[i]);
        if (p->field && rc)
          {
            if (p->kind != NL_SWEEP_CHOICE)
              nl_run_field_set_number (p->field, rc, p->kind == NL_SWEEP_INT ? round (point[i]) : point[i]);
            else if (!nl_run_field_set_text (p->field, rc, text, &local))
              return nl_spec_fail (error, &spec_errors, p->key, "%s", local->message);
          }
        else if (p->node && net)
          {
            int node = nl_network_find (net, p->node);
            if (node < 0)
              return nl_spec_fail (error, &spec_errors, p->key, "the network %s has no node '%s'", net->name, p->node);
            if (!nl_network_set_param (net, node, p->param, text, &local))
              return nl_spec_fail (error, &spec_errors, p->key, "%s", local->message);
          }
      }
  return TRUE;
}

char *
nl_sweep_space_point_to_json (const NlSweepSpace *s, const double *point)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();
  g_autoptr (JsonGenerator) gen = json_generator_new ();
  g_autoptr (JsonNode) root = NULL;

  json_builder_begin_object (b);
  for (int i = 0; i < nl_sweep_space_dim (s); i++)
    {
      const NlSweepParam *p = nl_sweep_space_param (s, i);
      json_builder_set_member_name (b, p->key);
      if (p->kind == NL_SWEEP_CHOICE)
        json_builder_add_string_value (b, p->choices[CLAMP ((int) point[i], 0, p->n_choices - 1)]);
      else if (p->kind == NL_SWEEP_INT)
        json_builder_add_int_value (b, (gint64) round (point[i]));
      else
        json_builder_add_double_value (b, point[i]);
    }
  json_builder_end_object (b);
  root = json_builder_get_root (b);
  json_generator_set_root (gen, root);
  return nl_json_fix_numbers (json_generator_to_data (gen, NULL));
}

gboolean
nl_sweep_space_point_from_json (const NlSweepSpace *s, const char *json, double *point, GError **error)
{
  g_autoptr (JsonParser) parser = json_parser_new ();
  JsonObject *o;

  if (!nl_json_check_depth (json, -1, "the trial's values", error) || !json_parser_load_from_data (parser, json, -1, error))
    return FALSE;
  if (!JSON_NODE_HOLDS_OBJECT (json_parser_get_root (parser)))
    return nl_spec_fail (error, &spec_errors, "point", "not a JSON object");
  o = json_node_get_object (json_parser_get_root (parser));
  for (int i = 0; i < nl_sweep_space_dim (s); i++)
    {
      const NlSweepParam *p = nl_sweep_space_param (s, i);
      JsonNode *m = json_object_get_member (o, p->key);
      if (!m || !JSON_NODE_HOLDS_VALUE (m))
        return nl_spec_fail (error, &spec_errors, p->key, "missing from the trial's values");
      if (p->kind == NL_SWEEP_CHOICE)
        {
          const char *v = json_node_get_value_type (m) == G_TYPE_STRING ? json_node_get_string (m) : NULL;
          int k = 0;
          while (k < p->n_choices && g_strcmp0 (v, p->choices[k]) != 0)
            k++;
          if (k == p->n_choices)
            return nl_spec_fail (error, &spec_errors, p->key, "the trial's value is not one of the choices");
          point[i] = k;
        }
      else if (json_node_get_value_type (m) == G_TYPE_INT64 || json_node_get_value_type (m) == G_TYPE_DOUBLE)
        point[i] = json_node_get_double (m);
      else
        return nl_spec_fail (error, &spec_errors, p->key, "the trial's value is not a number");
    }
  return TRUE;
}

char *
nl_sweep_space_point_describe (const NlSweepSpace *s, const double *point)
{
  GString *out = g_string_new (NULL);
  for (int i = 0; i < nl_sweep_space_dim (s); i++)
    {
      g_autofree char *v = nl_sweep_space_value_text (s, i, point[i]);
      g_string_append_printf (out, "%s%s=%s", i ? " " : "", nl_sweep_space_param (s, i)->key, v);
    }
  return g_string_free (out, FALSE);
}
