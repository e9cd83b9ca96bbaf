/* nl-json-guard.h — what json-glib gets wrong with JSON text, mended in one
 * linear pass each (no parsing, no json-glib): it would recurse through a
 * file of 80,000 '[' until the stack overflows, and it writes 1e-08 as
 * "1e-08.0", which no JSON reader takes back. */
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

/* json-glib (1.6) writes a double as "%.17g" and appends ".0" where that has
 * no '.', so 1e-08, 1e+17 or 2e+19 come out as "1e-08.0": not JSON, and a
 * saved network or run setting would not open again. Drops each ".0" that
 * follows an exponent outside strings, in place, so every finite double reads
 * back exactly, and escapes control characters json-glib leaves raw.
 * Returns text, or where an escape had to be added a new string (text is
 * then freed). Non-finite values have no JSON form: writers
 * must not hand them to json-glib. */
char *nl_json_fix_numbers (char *text);

G_END_DECLS
