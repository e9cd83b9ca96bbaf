/* nl-catalog.c — the registry as the GUI sees it. */
#include "engine/session/nl-catalog.h"
#include "ops/nl-op-registry.h"

#include <string.h>

const char *const *
nl_catalog_categories (void)
{
  /* Sequence after the per-element groups: its ops (LSTM, attention ...)
   * come after the embedding and before the structure that joins them */
  static const char *const cats[] = { "Input", "Core", "Convolution", "Pooling", "Normalization",
                                      "Activation", "Sequence", "Structure", "Loss", NULL };
  return cats;
}

const NlOpDef *const *
nl_catalog_ops (int *n)
{
  static const NlOpDef *ops[NL_OP_COUNT];
  static gsize count;
  if (g_once_init_enter (&count))
    {
      gsize k = 0;
      for (int i = 0; i < NL_OP_COUNT; i++)
        if (nl_op_get (i))
          ops[k++] = nl_op_get (i);
      /* +1 keeps the "initialised" value non-zero */
      g_once_init_leave (&count, k + 1);
    }
  *n = (int) count - 1;
  return ops;
}

const NlOpDef *
nl_catalog_lookup (const char *op_name)
{
  return nl_op_lookup (op_name);
}

int
nl_catalog_param_index (const NlOpDef *def, const char *name)
{
  return nl_op_param_index (def, name);
}

static void
append_number (GString *s, double v)
{
  char buf[G_ASCII_DTOSTR_BUF_SIZE];
  g_string_append (s, g_ascii_formatd (buf, sizeof buf, "%g", v));
}

char *
nl_catalog_format_param (const NlParamSpec *spec, const NlParamValue *v)
{
  GString *s = g_string_new (NULL);
  switch (spec->type)
    {
    case NL_PARAM_INT:
      g_string_append_printf (s, "%" G_GINT64_FORMAT, (gint64) v->i);
      break;
    case NL_PARAM_FLOAT:
      append_number (s, v->f);
      break;
    case NL_PARAM_BOOL:
      g_string_append (s, v->i ? "true" : "false");
      break;
    case NL_PARAM_ENUM:
      g_string_append (s, spec->enum_values[v->i]);
      break;
    case NL_PARAM_INT2:
      g_string_append_printf (s, "%" G_GINT64_FORMAT "x%" G_GINT64_FORMAT, (gint64) v->v[0], (gint64) v->v[1]);
      break;
    case NL_PARAM_SHAPE:
      for (int i = 0; i < v->n; i++)
        g_string_append_printf (s, "%s%" G_GINT64_FORMAT, i ? "x" : "", (gint64) v->v[i]);
      break;
    }
  return g_string_free (s, FALSE);
}

char *
nl_catalog_node_summary (const NlNode *node)
{
  GString *s = g_string_new (NULL);
  for (int k = 0; k < node->def->n_params; k++)
    {
      g_autofree char *v = NULL;
      if (!node->params[k].set)
        continue;
      v = nl_catalog_format_param (&node->def->params[k], &node->params[k]);
      if (s->len)
        g_string_append (s, " · ");
      /* an enum's value names itself ("relu"); others need their name */
      if (node->def->params[k].type == NL_PARAM_ENUM)
        g_string_append (s, v);
      else
        g_string_append_printf (s, "%s %s", node->def->params[k].name, v);
    }
  return g_string_free (s, FALSE);
}

char *
nl_catalog_new_node_id (const NlNetwork *net, const char *op_name)
{
  g_autofree char *base = g_ascii_strdown (op_name, -1);
  char *id = g_strdup (base);
  for (int k = 2; nl_network_find (net, id) >= 0; k++)
    {
      g_free (id);
      id = g_strdup_printf ("%s_%d", base, k);
    }
  return id;
}
