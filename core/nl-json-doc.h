/* nl-json-doc.h — a read-only JSON document in two flat allocations, for
 * files too big for json-glib's tree: a network of 32,000 nodes is 3 MB of
 * JSON, which json-glib turns into a GHashTable per object and about a second
 * of work; this reads it in a tenth of that. Strict RFC 8259 JSON, parsed
 * without recursion; numbers JSON cannot hold (1e999, integers past 64 bits)
 * and strings that are not UTF-8 or hold NUL are refused with the line and
 * column. Safetensors headers are read with it too, for its strictness
 * (json-glib takes comments, octal escapes and hex numbers); other small
 * files go on using json-glib. */
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

/* What a failed parse found wrong, for a reader that words its own errors
 * (safetensors names the byte and what it expected there). Anything that
 * starts no other value is read as a number, hence FAULT_NUMBER for it. */
typedef enum {
  NL_JSON_FAULT_NONE,
  NL_JSON_FAULT_EMPTY,        /* nothing but white space */
  NL_JSON_FAULT_VALUE,        /* the end of the text, or a word not true, false or null */
  NL_JSON_FAULT_NUMBER,       /* a character no value starts with, or a number missing a digit */
  NL_JSON_FAULT_INT_RANGE,    /* a whole number past 64 bits */
  NL_JSON_FAULT_NUMBER_RANGE, /* past a double's range, or longer than 63 characters */
  NL_JSON_FAULT_KEY,          /* no member name in quotes */
  NL_JSON_FAULT_COLON,
  NL_JSON_FAULT_OBJECT_COMMA, /* no ',' or '}' */
  NL_JSON_FAULT_ARRAY_COMMA,  /* no ',' or ']' */
  NL_JSON_FAULT_TRAILING,     /* more after the end */
  NL_JSON_FAULT_STRING_END,
  NL_JSON_FAULT_CONTROL,      /* a raw control character in a string */
  NL_JSON_FAULT_ESCAPE,
  NL_JSON_FAULT_HEX,          /* \u without four hex digits */
  NL_JSON_FAULT_LONE_LOW,     /* a low surrogate with no high one before it */
  NL_JSON_FAULT_MISSING_LOW,  /* a high surrogate with no low one after it */
  NL_JSON_FAULT_NUL,          /* \u0000 */
  NL_JSON_FAULT_UTF8,
  NL_JSON_FAULT_TOO_MANY,     /* more values than the index holds */
  NL_JSON_FAULT_COUNT
} NlJsonFault;

/* nl_json_doc_parse, and on failure the fault in *fault and the byte where
 * it was found in *offset (either may be NULL). */
NlJsonDoc *nl_json_doc_parse_full (const char *text, gssize length, NlJsonFault *fault, gsize *offset,
                                   GError **error);
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
