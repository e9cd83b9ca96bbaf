/* nl-tokenizer.c — word and character tokens (nl-tokenizer.h). */
#include "engine/data/nl-tokenizer.h"
#include "engine/data/nl-dataset.h"

#include <string.h>

const char *
nl_tokenizer_kind_name (NlTokenizerKind kind)
{
  return kind == NL_TOKENIZER_CHAR ? "char" : "word";
}

gboolean
nl_tokenizer_kind_parse (const char *name, NlTokenizerKind *kind)
{
  if (!name || !*name || strcmp (name, "word") == 0)
    *kind = NL_TOKENIZER_WORD;
  else if (strcmp (name, "char") == 0)
    *kind = NL_TOKENIZER_CHAR;
  else
    return FALSE;
  return TRUE;
}

/* Words of an already lower-cased, valid string: runs of alphanumeric
 * characters, with the combining marks that follow one. */
static void
split_words (const char *s, NlTokenFunc fn, gpointer user_data)
{
  GString *word = g_string_new (NULL);
  for (const char *p = s; *p; p = g_utf8_next_char (p))
    {
      gunichar c = g_utf8_get_char (p);
      const char *next = g_utf8_next_char (p);
      if (g_unichar_isalnum (c) || (word->len > 0 && g_unichar_ismark (c)))
        {
          g_string_append_len (word, p, next - p);
          continue;
        }
      if (word->len > 0)
        {
          fn (word->str, word->len, user_data);
          g_string_truncate (word, 0);
        }
    }
  if (word->len > 0)
    fn (word->str, word->len, user_data);
  g_string_free (word, TRUE);
}

gboolean
nl_tokenize (NlTokenizerKind kind, const char *text, gssize len, NlTokenFunc fn, gpointer user_data,
             GError **error)
{
  const char *bad = NULL;
  gsize n = len < 0 ? strlen (text) : (gsize) len;
  if (!g_utf8_validate_len (text, n, &bad))
    {
      g_set_error (error, NL_DATA_ERROR, NL_DATA_ERROR_CORRUPT, "invalid UTF-8 at byte %" G_GSIZE_FORMAT,
                   (gsize) (bad - text));
      return FALSE;
    }
  if (kind == NL_TOKENIZER_WORD)
    {
      g_autofree char *lower = g_utf8_strdown (text, n);
      split_words (lower, fn, user_data);
      return TRUE;
    }
  char buf[8];
  for (const char *p = text; p < text + n; p = g_utf8_next_char (p))
    {
      gsize k = g_utf8_next_char (p) - p;
      memcpy (buf, p, k);
      buf[k] = '\0';
      fn (buf, k, user_data);
    }
  return TRUE;
}

static void
add_token (const char *token, gsize len, gpointer user_data)
{
  g_ptr_array_add (user_data, g_strndup (token, len));
}

char **
nl_tokenize_strv (NlTokenizerKind kind, const char *text, gssize len, GError **error)
{
  GPtrArray *out = g_ptr_array_new ();
  if (!nl_tokenize (kind, text, len, add_token, out, error))
    {
      g_ptr_array_free (out, TRUE);
      return NULL;
    }
  g_ptr_array_add (out, NULL);
  return (char **) g_ptr_array_free (out, FALSE);
}

gsize
nl_utf8_clip (const char *text, gsize len, gsize max_bytes)
{
  if (len <= max_bytes)
    return len;
  gsize k = max_bytes;
  /* back over continuation bytes to the start of the character cut in two */
  while (k > 0 && ((guchar) text[k] & 0xC0) == 0x80)
    k--;
  return k;
}
