/* nl-op-registry.c — the operator table and parameter handling shared by
 * every op (nl_op_param_index is in nl-op-param.c). Symbols are weak so a
 * partial tree still links while ops are being written; tests/test-registry
 * asserts that every op is present. Kernels come from each backend's op
 * table (ops/cpu/nl-cpu-ops.c, the CUDA module). */
#include "ops/nl-op-registry.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define NL_OP(c) extern const NlOpDef nl_op_##c __attribute__ ((weak));
#include "ops/nl-op-list.h"
#undef NL_OP

static const NlOpDef *const registry[] = {
#define NL_OP(c) &nl_op_##c,
#include "ops/nl-op-list.h"
#undef NL_OP
};
G_STATIC_ASSERT (G_N_ELEMENTS (registry) == NL_OP_COUNT);

static const char *const list_names[] = {
#define NL_OP(c) #c,
#include "ops/nl-op-list.h"
#undef NL_OP
};

const char *
nl_op_list_name (NlOpId id)
{
  g_return_val_if_fail (id < NL_OP_COUNT, NULL);
  return list_names[id];
}

static const char *const precision_names[NL_PRECISION_COUNT] = { "fp32", "bf16", "fp16" };

const char *
nl_precision_name (NlPrecision precision)
{
  return precision < NL_PRECISION_COUNT ? precision_names[precision] : precision_names[NL_PRECISION_F32];
}

gboolean
nl_precision_parse (const char *text, NlPrecision *precision)
{
  for (int i = 0; i < NL_PRECISION_COUNT; i++)
    if (!g_strcmp0 (text, precision_names[i]))
      {
        *precision = (NlPrecision) i;
        return TRUE;
      }
  return FALSE;
}

NlOpKernels
nl_op_kernels (const NlOpDef *def, NlBackend *backend)
{
  for (int i = 0; backend->iface->op_kernels && i < NL_OP_COUNT; i++)
    if (registry[i] == def)
      {
        const NlOpKernels *k = nl_backend_op_kernels (backend, i, nl_op_list_name ((NlOpId) i));
        if (k)
          return *k;
        break;
      }
  return (NlOpKernels) { NULL, NULL, NULL };
}

int
nl_op_count_on (NlBackend *backend)
{
  int n = 0;
  for (int i = 0; i < NL_OP_COUNT; i++)
    n += registry[i] && nl_op_kernels (registry[i], backend).forward != NULL;
  return n;
}

const NlOpDef *
nl_op_get (NlOpId id)
{
  g_return_val_if_fail (id < NL_OP_COUNT, NULL);
  return registry[id];
}

const NlOpDef *
nl_op_lookup (const char *name)
{
  for (int i = 0; i < NL_OP_COUNT; i++)
    if (registry[i] && strcmp (registry[i]->name, name) == 0)
      return registry[i];
  return NULL;
}

int
nl_op_count_registered (void)
{
  int n = 0;
  for (int i = 0; i < NL_OP_COUNT; i++)
    n += registry[i] != NULL;
  return n;
}

void
nl_op_input_range (const NlOpDef *def, int *min, int *max)
{
  *min = def->variadic ? 1 : def->min_inputs > 0 ? def->min_inputs : def->n_inputs;
  *max = !def->variadic ? def->n_inputs : def->max_inputs > 0 ? def->max_inputs : NL_MAX_PORTS;
}

/* "pred, label" */
static char *
input_names (const NlOpDef *def)
{
  GString *s = g_string_new (NULL);
  for (int i = 0; i < def->n_inputs; i++)
    g_string_append_printf (s, "%s%s", i ? ", " : "", def->inputs[i]);
  return g_string_free (s, FALSE);
}

gboolean
nl_op_infer_shape (const NlOpDef *def, NlInferCtx *ctx, GError **error)
{
  static const char *const counts[] = { "no", "one", "two", "three", "four" };
  int min, max, n = ctx->n_data;

  nl_op_input_range (def, &min, &max);
  if (n < min || n > max)
    {
      g_autofree char *names = input_names (def);
      if (min == 1 && max == 1)
        return nl_op_shape_error (error, "%s takes exactly one input, but %d are connected", def->name, n);
      if (min == max && min < (int) G_N_ELEMENTS (counts))
        return nl_op_shape_error (error, "%s takes %s inputs (%s), but %d are connected", def->name, counts[min],
                                  names, n);
      if (min == max)
        return nl_op_shape_error (error, "%s takes %d inputs (%s), but %d are connected", def->name, min, names, n);
      return nl_op_shape_error (error, "%s takes %d %s %d inputs, but %d are connected", def->name, min,
                                max == min + 1 ? "or" : "to", max, n);
    }
  return def->infer_shape (ctx, error);
}

int64_t
nl_op_macs_per_weight_row (const NlShape *out, const NlShape *weights)
{
  /* every output element reads one weight row / filter */
  int64_t per_out = weights[0].ndim > 0 ? nl_shape_numel (&weights[0]) / weights[0].d[0] : 0;
  return nl_shape_numel (out) * per_out;
}

gboolean
nl_op_shape_error (GError **error, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  g_autofree char *msg = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  g_set_error_literal (error, NL_OP_ERROR, NL_OP_ERROR_SHAPE, msg);
  return FALSE;
}

void
nl_params_init_defaults (const NlOpDef *def, NlParamValue *vals)
{
  for (int i = 0; i < def->n_params; i++)
    {
      const NlParamSpec *s = &def->params[i];
      NlParamValue *v = &vals[i];
      memset (v, 0, sizeof *v);
      v->f = s->def;
      v->i = (int64_t) s->def;
      if (s->type == NL_PARAM_INT2)
        {
          v->v[0] = v->v[1] = (int64_t) s->def;
          v->n = 2;
        }
    }
}

static gboolean
in_range (const NlParamSpec *s, double x)
{
  return s->min > s->max || (x >= s->min && x <= s->max);
}

/* A shape parameter's element count, checked before any shape inference
 * multiplies it out: each dimension alone in range, [2^32, 2^32, 2^32]
 * would overflow int64 there. Reshape's -1 and 0 (inferred, copied) do
 * not count. */
static gboolean
shape_numel_ok (const NlOpDef *def, const NlParamSpec *s, const NlParamValue *v, GError **error)
{
  int64_t numel = 1;
  gboolean too_many = FALSE;
  GString *text;
  for (int j = 0; j < v->n && !too_many; j++)
    if (v->v[j] > 1)
      {
        too_many = v->v[j] > NL_SHAPE_MAX_NUMEL / numel;
        numel *= too_many ? 1 : v->v[j];
      }
  if (!too_many)
    return TRUE;
  text = g_string_new ("[");
  for (int j = 0; j < v->n; j++)
    g_string_append_printf (text, "%s%" G_GINT64_FORMAT, j ? ", " : "", (gint64) v->v[j]);
  g_set_error (error, NL_OP_ERROR, NL_OP_ERROR_PARAM,
               "%s parameter '%s' %s] has too many elements (at most %" G_GINT64_FORMAT ")", def->name, s->name,
               text->str, (gint64) NL_SHAPE_MAX_NUMEL);
  g_string_free (text, TRUE);
  return FALSE;
}

gboolean
nl_params_validate (const NlOpDef *def, const NlParamValue *vals, GError **error)
{
  for (int i = 0; i < def->n_params; i++)
    {
      const NlParamSpec *s = &def->params[i];
      const NlParamValue *v = &vals[i];
      gboolean ok = TRUE;

      if (s->required && !v->set)
        {
          g_set_error (error, NL_OP_ERROR, NL_OP_ERROR_PARAM,
                       "%s needs parameter '%s' (%s)", def->name, s->name, s->doc);
          return FALSE;
        }
      switch (s->type)
        {
        case NL_PARAM_INT:
          ok = in_range (s, (double) v->i);
          break;
        case NL_PARAM_FLOAT:
          ok = isfinite (v->f) && in_range (s, v->f);
          break;
        case NL_PARAM_INT2:
        case NL_PARAM_SHAPE:
          for (int j = 0; j < v->n; j++)
            ok = ok && in_range (s, (double) v->v[j]);
          break;
        case NL_PARAM_BOOL:
        case NL_PARAM_ENUM:
          break;
        }
      if (ok && s->type == NL_PARAM_SHAPE && !shape_numel_ok (def, s, v, error))
        return FALSE;
      if (!ok)
        {
          if (s->max >= 1e15)
            g_set_error (error, NL_OP_ERROR, NL_OP_ERROR_PARAM,
                         "%s parameter '%s' is out of range (must be >= %g)", def->name, s->name, s->min);
          else
            g_set_error (error, NL_OP_ERROR, NL_OP_ERROR_PARAM,
                         "%s parameter '%s' is out of range (must be in [%g, %g])", def->name, s->name,
                         s->min, s->max);
          return FALSE;
        }
    }
  return TRUE;
}

static gboolean
parse_int_list (const char *text, int64_t *out, int max, int *n_out)
{
  g_auto (GStrv) parts = NULL;
  g_autofree char *clean = g_strdup (text);
  int n = 0;

  g_strdelimit (clean, "[]()", ' ');
  g_strstrip (clean);
  parts = g_strsplit_set (clean, ",x ", -1);
  for (int i = 0; parts[i]; i++)
    {
      char *end;
      long long x;
      if (*parts[i] == '\0')
        continue;
      if (n >= max)
        return FALSE;
      x = strtoll (parts[i], &end, 10);
      if (*end != '\0')
        return FALSE;
      out[n++] = x;
    }
  *n_out = n;
  return n > 0;
}

gboolean
nl_params_set_from_string (const NlOpDef *def, NlParamValue *vals,
                           const char *name, const char *text, GError **error)
{
  int k = nl_op_param_index (def, name);
  const NlParamSpec *s;
  NlParamValue *v;
  char *end = NULL;

  if (k < 0)
    {
      g_set_error (error, NL_OP_ERROR, NL_OP_ERROR_PARAM, "%s has no parameter '%s'", def->name, name);
      return FALSE;
    }
  s = &def->params[k];
  v = &vals[k];
  switch (s->type)
    {
    case NL_PARAM_INT:
      v->i = strtoll (text, &end, 10);
      if (end == text || *end != '\0')
        goto bad;
      break;
    case NL_PARAM_FLOAT:
      v->f = g_ascii_strtod (text, &end);
      if (end == text || *end != '\0')
        goto bad;
      break;
    case NL_PARAM_BOOL:
      if (g_ascii_strcasecmp (text, "true") == 0 || strcmp (text, "1") == 0)
        v->i = 1;
      else if (g_ascii_strcasecmp (text, "false") == 0 || strcmp (text, "0") == 0)
        v->i = 0;
      else
        goto bad;
      break;
    case NL_PARAM_ENUM:
      {
        int j;
        for (j = 0; s->enum_values[j]; j++)
          if (g_ascii_strcasecmp (s->enum_values[j], text) == 0)
            break;
        if (!s->enum_values[j])
          {
            g_autofree char *choices = g_strjoinv ("|", (char **) s->enum_values);
            g_set_error (error, NL_OP_ERROR, NL_OP_ERROR_PARAM,
                         "%s parameter '%s' must be one of %s, not '%s'", def->name, name, choices, text);
            return FALSE;
          }
        v->i = j;
      }
      break;
    case NL_PARAM_INT2:
      if (!parse_int_list (text, v->v, 2, &v->n))
        goto bad;
      if (v->n == 1)
        v->v[1] = v->v[0];
      v->n = 2;
      break;
    case NL_PARAM_SHAPE:
      if (!parse_int_list (text, v->v, NL_MAX_DIMS, &v->n))
        goto bad;
      break;
    }
  v->f = s->type == NL_PARAM_FLOAT ? v->f : (double) v->i;
  v->set = TRUE;
  return TRUE;

bad:
  g_set_error (error, NL_OP_ERROR, NL_OP_ERROR_PARAM,
               "%s parameter '%s' has an invalid value '%s'", def->name, name, text);
  return FALSE;
}
