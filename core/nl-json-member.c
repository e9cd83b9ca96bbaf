/* nl-json-member.c — typed reads of JSON members (nl-json-member.h). */
#include "core/nl-json-member.h"

gboolean
nl_json_string_member (JsonObject *o, const char *name, const char **value)
{
  JsonNode *n = json_object_get_member (o, name);
  *value = NULL;
  if (!n)
    return TRUE;
  if (!JSON_NODE_HOLDS_VALUE (n) || json_node_get_value_type (n) != G_TYPE_STRING)
    return FALSE;
  *value = json_node_get_string (n);
  return TRUE;
}

static GType
value_type (JsonObject *o, const char *name, JsonNode **n)
{
  *n = json_object_get_member (o, name);
  return *n && JSON_NODE_HOLDS_VALUE (*n) ? json_node_get_value_type (*n) : G_TYPE_INVALID;
}

gboolean
nl_json_number_member (JsonObject *o, const char *name, double *value)
{
  JsonNode *n;
  GType t = value_type (o, name, &n);
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
  JsonNode *n;
  GType t = value_type (o, name, &n);
  if (!n)
    return TRUE;
  if (t != G_TYPE_INT64)
    return FALSE;
  *value = json_node_get_int (n);
  return TRUE;
}
