/* nl-json-member.c — typed reads of JSON members (nl-json-member.h). */
#include "engine/nl-json-member.h"

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
