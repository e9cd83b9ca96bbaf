/* nl-json-member.h — typed reads of a JSON object's members that never
 * raise json-glib's criticals on a member of another type (a file written
 * by someone else can hold anything). */
#pragma once

#include <json-glib/json-glib.h>

G_BEGIN_DECLS

/* The string member name of o in *value (NULL when absent); FALSE when it
 * is there but not a string. */
gboolean nl_json_string_member (JsonObject *o, const char *name, const char **value);

/* The number member name of o (a whole number too) in *value, left as it
 * is when absent; FALSE when it is there but not a number. */
gboolean nl_json_number_member (JsonObject *o, const char *name, double *value);

/* The same for a whole number. */
gboolean nl_json_int_member (JsonObject *o, const char *name, gint64 *value);

/* The same reads of one node, an array's element say (n may be NULL): the
 * string, or NULL when n is not one; */
const char *nl_json_node_string (JsonNode *n);
/* the whole number in *value, or FALSE when n is not one. */
gboolean nl_json_node_int (JsonNode *n, gint64 *value);

G_END_DECLS
