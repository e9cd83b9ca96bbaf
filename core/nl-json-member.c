/* nl-json-member.c — typed reads of JSON members (nl-json-member.h). */
#include "core/nl-json-member.h"

static GType
node_type (JsonNode *n)
{
  return n && JSON_NODE_HOLDS_VALUE (n) ? json_node_get_value_type (n) : G_TYPE_INVALID;
}

const char *
nl_json_node_string (JsonNode *n)
{
  return node_type (n) == G_TYPE_STRING ? json_node_get_string (n) : NULL;
}

gboolean
nl_json_node_int (JsonNode *n, gint64 *value)
{
  if (node_type (n) != G_TYPE_INT64)
    return FALSE;
  *value = json_node_get_int (n);
  return TRUE;
}

gboolean
nl_json_string_member (JsonObject *o, const char *name, const char **value)
{
  JsonNode *n = json_object_get_member (o, name);
  *value = NULL;
  if (!n)
    return TRUE;
  *value = nl_json_node_string (n);
  return *value != NULL;
}

gboolean
nl_json_number_member (JsonObject *o, const char *name, double *value)
{
  JsonNode *n = json_object_get_member (o, name);
  GType t = node_type (n);
  if (!n)
    return TRUE;
  if (t != G_TYPE_INT64 && t != G_TYPE_DOUBLE)
    return FALSE;
  *value = json_node_get_double (n);
  return TRUE;
}

gboolean
nl_json_int_member (JsonObject *o, const char *name, gint64 *value)
{
  JsonNode *n = json_object_get_member (o, name);
  return !n || nl_json_node_int (n, value);
}
