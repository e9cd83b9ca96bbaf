/* nl-tokenizer.h — splitting text into tokens for the text datasets and
 * their vocabularies (nl-vocab.h).
 *
 * word: the text lower-cased with g_utf8_strdown, then split on every
 *   character GLib does not call alphanumeric (g_unichar_isalnum), those
 *   characters dropped; a combining mark (g_unichar_ismark) right after a
 *   letter or digit stays with it, so "cafe\u0301" is one token, as its
 *   composed form "café" is.
 * char: one token per Unicode character (code point), nothing dropped and
 *   nothing lower-cased: spaces and newlines are tokens too.
 *
 * Invalid UTF-8 is an error (NL_DATA_ERROR_CORRUPT) naming the byte
 * offset; the caller prefixes the file and row. Thread-safe. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef enum {
  NL_TOKENIZER_WORD,
  NL_TOKENIZER_CHAR,
} NlTokenizerKind;

/* "word", "char" */
const char *nl_tokenizer_kind_name (NlTokenizerKind kind);
/* FALSE (and *kind untouched) for anything but "word" / "char"; NULL or ""
 * is word, the default. */
gboolean nl_tokenizer_kind_parse (const char *name, NlTokenizerKind *kind);

/* Called once per token, in order: token is NUL-terminated, len bytes,
 * valid only during the call. */
typedef void (*NlTokenFunc) (const char *token, gsize len, gpointer user_data);

/* Tokenizes text (len bytes, or up to its NUL when len < 0). FALSE with an
 * error "invalid UTF-8 at byte N" when it is not valid UTF-8 (nothing is
 * passed to fn then). A NUL byte inside len is invalid. */
gboolean nl_tokenize (NlTokenizerKind kind, const char *text, gssize len, NlTokenFunc fn, gpointer user_data,
                      GError **error);

/* The tokens as a NULL-terminated array (g_strfreev), or NULL with the error. */
char **nl_tokenize_strv (NlTokenizerKind kind, const char *text, gssize len, GError **error);

/* The longest prefix of text (len bytes, valid UTF-8) of at most max_bytes
 * that ends on a character boundary: its length in bytes. */
gsize nl_utf8_clip (const char *text, gsize len, gsize max_bytes);

G_END_DECLS
