/* nl-json-guard.h — refuses JSON nested too deeply before a recursive parser
 * (json-glib's) sees it: a file of 80,000 '[' would overflow its stack. One
 * linear scan that skips strings; no parsing, no json-glib. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Deeper than anything netloom writes (networks, pipelines, hparams and
 * record metadata stay below 10), shallow enough for any thread's stack. */
#define NL_JSON_MAX_DEPTH 256

#define NL_JSON_ERROR (nl_json_error_quark ())
GQuark nl_json_error_quark (void);

typedef enum {
  NL_JSON_ERROR_TOO_DEEP,
} NlJsonErrorCode;

/* Byte offset of the first '[' or '{' that opens level max_depth + 1, or -1
 * if the text (length bytes, or up to its NUL when length < 0) stays within
 * max_depth. Brackets inside strings (escapes honoured) do not count. NULL
 * text passes: what to say about it is the parser's business. */
gssize nl_json_find_too_deep (const char *text, gssize length, int max_depth);

/* The guard every JSON reader calls before json_parser_load_from_data: FALSE
 * with "WHAT: JSON nested more than 256 levels deep (at byte N)" when it is. */
gboolean nl_json_check_depth (const char *text, gssize length, const char *what, GError **error);

G_END_DECLS
