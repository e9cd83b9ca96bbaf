/* nl-json-doc.h — a read-only JSON document in two flat allocations, for
 * files too big for json-glib's tree: a network of 32,000 nodes is 3 MB of
 * JSON, which json-glib turns into a GHashTable per object and about a second
 * of work; this reads it in a tenth of that. Strict RFC 8259 JSON, parsed
 * without recursion; numbers JSON cannot hold (1e999, integers past 64 bits)
 * and strings that are not UTF-8 or hold NUL are refused with the line and
 * column. Everything smaller goes on using json-glib. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef enum {
  NL_JSON_NULL,
  NL_JSON_BOOL,
  NL_JSON_INT,    /* a number with no fraction or exponent, within gint64 */
  NL_JSON_DOUBLE, /* any other number, finite */
  NL_JSON_STRING,
  NL_JSON_ARRAY,
  NL_JSON_OBJECT,
} NlJsonType;

/* One value. A container's elements follow it (an object's as key, value,
 * key, value...), and size counts the value with everything inside it, so
 * v + v->size is the next sibling. */
typedef struct {
  NlJsonType type;
  guint32 size;  /* values in this subtree, itself included */
  guint32 count; /* elements of an array, members of an object */
  union {
    gboolean b;
    gint64 i;
    double d;
    const char *s; /* decoded, NUL-terminated, valid UTF-8 */
  };
} NlJsonValue;

typedef struct _NlJsonDoc NlJsonDoc;

#define NL_JSON_DOC_ERROR (nl_json_doc_error_quark ())
GQuark nl_json_doc_error_quark (void);

typedef enum {
  NL_JSON_DOC_ERROR_EMPTY,   /* nothing but white space */
  NL_JSON_DOC_ERROR_INVALID, /* "line L, column C: what was expected" */
} NlJsonDocErrorCode;

/* length < 0: up to the NUL */
NlJsonDoc *nl_json_doc_parse (const char *text, gssize length, GError **error);
void nl_json_doc_free (NlJsonDoc *doc);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (NlJsonDoc, nl_json_doc_free)

const NlJsonValue *nl_json_doc_root (const NlJsonDoc *doc);

/* The first element of an array or the first key of an object (its value
 * is key + 1), or NULL when empty; then the next one after child, or NULL. */
const NlJsonValue *nl_json_first (const NlJsonValue *container);
const NlJsonValue *nl_json_next (const NlJsonValue *container, const NlJsonValue *child);

/* The value of an object's member (the last one of that name, as
 * json-glib does), or NULL. */
const NlJsonValue *nl_json_member (const NlJsonValue *object, const char *name);

/* A number as a double (ints too) */
double nl_json_number (const NlJsonValue *v);

G_END_DECLS
