/* nl-json-guard.c — the nesting limit of every JSON reader (nl-json-guard.h). */
#include "core/nl-json-guard.h"

#include <string.h>

G_DEFINE_QUARK (nl-json-error-quark, nl_json_error)

gssize
nl_json_find_too_deep (const char *text, gssize length, int max_depth)
{
  gsize n = !text ? 0 : length < 0 ? strlen (text) : (gsize) length;
  gboolean in_string = FALSE;
  int depth = 0;

  for (gsize i = 0; i < n; i++)
    {
      char c = text[i];
      if (in_string)
        {
          if (c == '\\')
            i++; /* the escaped character, '"' included, is part of the string */
          else if (c == '"')
            in_string = FALSE;
          continue;
        }
      switch (c)
        {
        case '"':
          in_string = TRUE;
          break;
        case '[':
        case '{':
          if (++depth > max_depth)
            return (gssize) i;
          break;
        case ']':
        case '}':
          /* a stray closer is the parser's error to report, not ours */
          if (depth > 0)
            depth--;
          break;
        default:
          break;
        }
    }
  return -1;
}

gboolean
nl_json_check_depth (const char *text, gssize length, const char *what, GError **error)
{
  gssize at = nl_json_find_too_deep (text, length, NL_JSON_MAX_DEPTH);
  if (at < 0)
    return TRUE;
  g_set_error (error, NL_JSON_ERROR, NL_JSON_ERROR_TOO_DEEP, "%s: JSON nested more than %d levels deep (at byte %zd)",
               what, NL_JSON_MAX_DEPTH, at);
  return FALSE;
}

/* json-glib leaves some control characters (0x1f, found by fuzz-onnx in
 * an imported graph name) raw inside strings, which JSON forbids: they
 * become \u00XX. Outside strings they are a pretty printer's layout. */
static char *
escape_controls (char *text)
{
  gboolean in_string = FALSE, any = FALSE;
  GString *out;

  for (const guchar *c = (const guchar *) text; *c && !any; c++)
    {
      if (in_string && *c == '\\' && c[1])
        c++;
      else if (*c == '"')
        in_string = !in_string;
      else if (in_string && *c < 0x20)
        any = TRUE;
    }
  if (!any)
    return text;
  out = g_string_sized_new (strlen (text) + 64);
  in_string = FALSE;
  for (const guchar *c = (const guchar *) text; *c; c++)
    {
      if (in_string && *c == '\\' && c[1])
        {
          g_string_append_c (out, '\\');
          c++;
        }
      else if (*c == '"')
        in_string = !in_string;
      else if (in_string && *c < 0x20)
        {
          g_string_append_printf (out, "\\u%04x", *c);
          continue;
        }
      g_string_append_c (out, (char) *c);
    }
  g_free (text);
  return g_string_free (out, FALSE);
}

char *
nl_json_fix_numbers (char *text)
{
  gboolean in_string = FALSE;
  char *out = text;

  if (!text)
    return NULL;
  for (const char *in = text; *in;)
    {
      char c = *out++ = *in++;
      if (in_string)
        {
          if (c == '\\' && *in)
            *out++ = *in++;
          else if (c == '"')
            in_string = FALSE;
          continue;
        }
      if (c == '"')
        in_string = TRUE;
      else if ((c == 'e' || c == 'E') && out - 1 > text && g_ascii_isdigit (out[-2]))
        {
          /* an exponent: its sign and digits, then json-glib's ".0" */
          if (*in == '+' || *in == '-')
            *out++ = *in++;
          while (g_ascii_isdigit (*in))
            *out++ = *in++;
          if (in[0] == '.' && in[1] == '0' && !g_ascii_isdigit (in[2]))
            in += 2;
        }
    }
  *out = '\0';
  return escape_controls (text);
}
