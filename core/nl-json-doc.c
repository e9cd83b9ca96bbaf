/* nl-json-doc.c — the flat JSON reader (nl-json-doc.h). One pass over the
 * text with an explicit stack of open containers; the values go to one
 * array, the decoded strings to one buffer no longer than the text (a string
 * never decodes longer than it is written), so their pointers stay put. */
#include "core/nl-json-doc.h"

#include <errno.h>
#include <math.h>
#include <string.h>

G_DEFINE_QUARK (nl-json-doc-error-quark, nl_json_doc_error)

struct _NlJsonDoc {
  GArray *values; /* NlJsonValue */
  char *strings;
};

typedef struct {
  const char *text;
  gsize n, i;
  GArray *values;
  char *strings, *out; /* the decoded strings, and where the next one goes */
  GError **error;
  NlJsonFault fault;
  gsize fault_at;
} Parser;

void
nl_json_doc_free (NlJsonDoc *doc)
{
  if (!doc)
    return;
  g_array_unref (doc->values);
  g_free (doc->strings);
  g_free (doc);
}

/* The message names the line and column of p->i; the fault keeps at. */
static gboolean
fail_at (Parser *p, gsize at, NlJsonFault fault, const char *what)
{
  int line = 1, column = 1;
  p->fault = fault;
  p->fault_at = at;
  for (gsize k = 0; k < p->i && k < p->n; k++)
    {
      if (p->text[k] == '\n')
        line++, column = 1;
      else if (((guchar) p->text[k] & 0xc0) != 0x80)
        column++; /* characters, not UTF-8 continuation bytes */
    }
  g_set_error (p->error, NL_JSON_DOC_ERROR, NL_JSON_DOC_ERROR_INVALID, "line %d, column %d: %s", line, column, what);
  return FALSE;
}

static gboolean
fail (Parser *p, NlJsonFault fault, const char *what)
{
  return fail_at (p, p->i, fault, what);
}

static void
skip_ws (Parser *p)
{
  while (p->i < p->n && (p->text[p->i] == ' ' || p->text[p->i] == '\t' || p->text[p->i] == '\n' || p->text[p->i] == '\r'))
    p->i++;
}

static NlJsonValue *
add (Parser *p, NlJsonType type)
{
  NlJsonValue v = { .type = type, .size = 1 };
  g_array_append_val (p->values, v);
  return &g_array_index (p->values, NlJsonValue, p->values->len - 1);
}

static int
hex4 (Parser *p)
{
  int v = 0;
  if (p->n - p->i < 4)
    return -1;
  for (int k = 0; k < 4; k++)
    {
      int c = g_ascii_xdigit_value (p->text[p->i + k]);
      if (c < 0)
        return -1;
      v = v * 16 + c;
    }
  p->i += 4;
  return v;
}

/* at the opening quote */
static gboolean
parse_string (Parser *p)
{
  char *start = p->out;
  p->i++;
  for (;;)
    {
      guchar c;
      if (p->i >= p->n)
        return fail (p, NL_JSON_FAULT_STRING_END, "a string is not closed");
      c = (guchar) p->text[p->i++];
      if (c == '"')
        break;
      if (c < 0x20)
        /* the message has always named the column after it */
        return fail_at (p, p->i - 1, NL_JSON_FAULT_CONTROL, "a control character in a string (write it as an escape)");
      if (c != '\\')
        {
          *p->out++ = (char) c;
          continue;
        }
      if (p->i >= p->n)
        return fail (p, NL_JSON_FAULT_STRING_END, "a string is not closed");
      switch (p->text[p->i++])
        {
        case '"': *p->out++ = '"'; break;
        case '\\': *p->out++ = '\\'; break;
        case '/': *p->out++ = '/'; break;
        case 'b': *p->out++ = '\b'; break;
        case 'f': *p->out++ = '\f'; break;
        case 'n': *p->out++ = '\n'; break;
        case 'r': *p->out++ = '\r'; break;
        case 't': *p->out++ = '\t'; break;
        case 'u':
          {
            int u = hex4 (p);
            if (u < 0)
              return fail (p, NL_JSON_FAULT_HEX, "\\u needs four hex digits");
            if (u >= 0xdc00 && u <= 0xdfff)
              return fail (p, NL_JSON_FAULT_LONE_LOW, "a \\u escape holds half a surrogate pair");
            if (u >= 0xd800 && u <= 0xdbff)
              {
                int lo;
                if (p->n - p->i < 2 || p->text[p->i] != '\\' || p->text[p->i + 1] != 'u')
                  return fail (p, NL_JSON_FAULT_MISSING_LOW, "a \\u escape holds half a surrogate pair");
                p->i += 2;
                lo = hex4 (p);
                if (lo < 0xdc00 || lo > 0xdfff)
                  return fail (p, NL_JSON_FAULT_MISSING_LOW, "a \\u escape holds half a surrogate pair");
                u = 0x10000 + ((u - 0xd800) << 10) + (lo - 0xdc00);
              }
            if (u == 0)
              return fail (p, NL_JSON_FAULT_NUL, "a string holds \\u0000");
            /* at most 4 bytes from 6 or 12 written: the buffer holds it */
            p->out += g_unichar_to_utf8 ((gunichar) u, p->out);
            break;
          }
        default:
          p->i--;
          return fail (p, NL_JSON_FAULT_ESCAPE, "an unknown escape in a string");
        }
    }
  *p->out++ = '\0';
  if (!g_utf8_validate (start, p->out - 1 - start, NULL))
    return fail (p, NL_JSON_FAULT_UTF8, "a string is not UTF-8");
  /* the text of a string is an offset until the buffer is complete */
  add (p, NL_JSON_STRING)->i = start - p->strings;
  return TRUE;
}

static gsize
digits (Parser *p)
{
  gsize k = p->i;
  while (p->i < p->n && g_ascii_isdigit (p->text[p->i]))
    p->i++;
  return p->i - k;
}

static gboolean
parse_number (Parser *p)
{
  gsize start = p->i;
  gboolean whole = TRUE;
  char buf[64];
  char *end;

  if (p->text[p->i] == '-')
    p->i++;
  if (p->i < p->n && p->text[p->i] == '0')
    p->i++;
  else if (digits (p) == 0)
    return fail (p, NL_JSON_FAULT_NUMBER, "a number needs a digit");
  if (p->i < p->n && p->text[p->i] == '.')
    {
      p->i++;
      whole = FALSE;
      if (digits (p) == 0)
        return fail (p, NL_JSON_FAULT_NUMBER, "a number needs a digit after '.'");
    }
  if (p->i < p->n && (p->text[p->i] == 'e' || p->text[p->i] == 'E'))
    {
      p->i++;
      whole = FALSE;
      if (p->i < p->n && (p->text[p->i] == '+' || p->text[p->i] == '-'))
        p->i++;
      if (digits (p) == 0)
        return fail (p, NL_JSON_FAULT_NUMBER, "a number needs a digit in its exponent");
    }
  if (p->i - start >= sizeof buf)
    {
      /* g_ascii_strto* need a NUL; no number netloom reads is that long */
      p->i = start;
      return fail (p, NL_JSON_FAULT_NUMBER_RANGE, "a number of more than 63 characters");
    }
  memcpy (buf, p->text + start, p->i - start);
  buf[p->i - start] = '\0';
  errno = 0;
  if (whole)
    {
      gint64 v = g_ascii_strtoll (buf, &end, 10);
      if (errno == ERANGE)
        {
          p->i = start;
          return fail (p, NL_JSON_FAULT_INT_RANGE, "a whole number past 64 bits");
        }
      add (p, NL_JSON_INT)->i = v;
    }
  else
    {
      double v = g_ascii_strtod (buf, &end);
      if (!isfinite (v))
        {
          p->i = start;
          return fail (p, NL_JSON_FAULT_NUMBER_RANGE, "a number past a double's range");
        }
      add (p, NL_JSON_DOUBLE)->d = v;
    }
  return TRUE;
}

static gboolean
parse_literal (Parser *p, const char *word, NlJsonType type, gboolean b)
{
  gsize len = strlen (word);
  if (p->n - p->i < len || memcmp (p->text + p->i, word, len) != 0)
    return fail (p, NL_JSON_FAULT_VALUE, "expected a value");
  p->i += len;
  add (p, type)->b = b;
  return TRUE;
}

/* a scalar, or the opening of a container (pushed on open) */
static gboolean
parse_value (Parser *p, GArray *open)
{
  guint32 at = p->values->len;
  skip_ws (p);
  if (p->i >= p->n)
    return fail (p, NL_JSON_FAULT_VALUE, "expected a value, found the end");
  switch (p->text[p->i])
    {
    case '{':
    case '[':
      add (p, p->text[p->i] == '{' ? NL_JSON_OBJECT : NL_JSON_ARRAY);
      g_array_append_val (open, at);
      p->i++;
      return TRUE;
    case '"':
      return parse_string (p);
    case 't':
      return parse_literal (p, "true", NL_JSON_BOOL, TRUE);
    case 'f':
      return parse_literal (p, "false", NL_JSON_BOOL, FALSE);
    case 'n':
      return parse_literal (p, "null", NL_JSON_NULL, FALSE);
    default:
      if (p->text[p->i] == '-' || g_ascii_isdigit (p->text[p->i]))
        return parse_number (p);
      return fail (p, NL_JSON_FAULT_NUMBER, "expected a value");
    }
}

/* an object's key and its ':' */
static gboolean
parse_key (Parser *p)
{
  skip_ws (p);
  if (p->i >= p->n || p->text[p->i] != '"')
    return fail (p, NL_JSON_FAULT_KEY, "expected a member name in quotes");
  if (!parse_string (p))
    return FALSE;
  skip_ws (p);
  if (p->i >= p->n || p->text[p->i] != ':')
    return fail (p, NL_JSON_FAULT_COLON, "expected ':' after a member name");
  p->i++;
  return TRUE;
}

static gboolean
parse (Parser *p)
{
  g_autoptr (GArray) open = g_array_new (FALSE, FALSE, sizeof (guint32));
  gboolean fresh; /* the container on top was opened just now */
  guint depth;

  if (!parse_value (p, open))
    return FALSE;
  fresh = open->len > 0;
  while (open->len > 0)
    {
      guint32 top = g_array_index (open, guint32, open->len - 1);
      NlJsonValue *c = &g_array_index (p->values, NlJsonValue, top);
      char closer = c->type == NL_JSON_OBJECT ? '}' : ']';
      skip_ws (p);
      if (p->i < p->n && p->text[p->i] == closer)
        {
          p->i++;
          c->size = p->values->len - top;
          g_array_set_size (open, open->len - 1);
          fresh = FALSE;
          continue;
        }
      if (!fresh)
        {
          if (p->i >= p->n || p->text[p->i] != ',')
            return c->type == NL_JSON_OBJECT ? fail (p, NL_JSON_FAULT_OBJECT_COMMA, "expected ',' or '}'")
                                             : fail (p, NL_JSON_FAULT_ARRAY_COMMA, "expected ',' or ']'");
          p->i++;
        }
      if (p->values->len >= G_MAXUINT32 / 2)
        return fail (p, NL_JSON_FAULT_TOO_MANY, "too many values");
      c->count++;
      if (c->type == NL_JSON_OBJECT && !parse_key (p))
        return FALSE;
      depth = open->len;
      /* c moves when the array of values grows */
      if (!parse_value (p, open))
        return FALSE;
      fresh = open->len > depth;
    }
  skip_ws (p);
  if (p->i < p->n)
    return fail (p, NL_JSON_FAULT_TRAILING, "more after the end of the document");
  return TRUE;
}

NlJsonDoc *
nl_json_doc_parse (const char *text, gssize length, GError **error)
{
  return nl_json_doc_parse_full (text, length, NULL, NULL, error);
}

static NlJsonDoc *
doc_failed (const Parser *p, NlJsonFault *fault, gsize *offset)
{
  if (fault)
    *fault = p->fault;
  if (offset)
    *offset = p->fault_at;
  return NULL;
}

NlJsonDoc *
nl_json_doc_parse_full (const char *text, gssize length, NlJsonFault *fault, gsize *offset, GError **error)
{
  gsize n = !text ? 0 : length < 0 ? strlen (text) : (gsize) length;
  g_autoptr (NlJsonDoc) doc = g_new0 (NlJsonDoc, 1);
  Parser p = { text, n, 0, NULL, NULL, NULL, error, NL_JSON_FAULT_NONE, 0 };

  doc->values = g_array_sized_new (FALSE, FALSE, sizeof (NlJsonValue), (guint) MIN (n / 16 + 16, 1u << 20));
  doc->strings = g_malloc (n + 1);
  p.values = doc->values;
  p.strings = p.out = doc->strings;
  skip_ws (&p);
  if (p.i >= n)
    {
      g_set_error (error, NL_JSON_DOC_ERROR, NL_JSON_DOC_ERROR_EMPTY, "the document is empty");
      p.fault = NL_JSON_FAULT_EMPTY;
      p.fault_at = p.i;
      return doc_failed (&p, fault, offset);
    }
  if (!parse (&p))
    return doc_failed (&p, fault, offset);
  /* the strings' offsets become pointers now that the buffer is whole */
  for (guint k = 0; k < doc->values->len; k++)
    {
      NlJsonValue *v = &g_array_index (doc->values, NlJsonValue, k);
      if (v->type == NL_JSON_STRING)
        v->s = doc->strings + v->i;
    }
  return g_steal_pointer (&doc);
}

const NlJsonValue *
nl_json_doc_root (const NlJsonDoc *doc)
{
  return &g_array_index (doc->values, NlJsonValue, 0);
}

const NlJsonValue *
nl_json_first (const NlJsonValue *c)
{
  g_return_val_if_fail (c->type == NL_JSON_ARRAY || c->type == NL_JSON_OBJECT, NULL);
  return c->count ? c + 1 : NULL;
}

const NlJsonValue *
nl_json_next (const NlJsonValue *c, const NlJsonValue *child)
{
  const NlJsonValue *next = c->type == NL_JSON_OBJECT ? child + 1 + child[1].size : child + child->size;
  return next < c + c->size ? next : NULL;
}

const NlJsonValue *
nl_json_member (const NlJsonValue *o, const char *name)
{
  const NlJsonValue *found = NULL;
  g_return_val_if_fail (o->type == NL_JSON_OBJECT, NULL);
  for (const NlJsonValue *k = nl_json_first (o); k; k = nl_json_next (o, k))
    if (strcmp (k->s, name) == 0)
      found = k + 1;
  return found;
}

double
nl_json_number (const NlJsonValue *v)
{
  return v->type == NL_JSON_INT ? (double) v->i : v->type == NL_JSON_DOUBLE ? v->d : NAN;
}
