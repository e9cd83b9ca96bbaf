/* nl-csv-rows.c — CSV records with quoted fields across lines (nl-csv-rows.h). */
#include "engine/data/nl-csv-rows.h"
#include "engine/data/nl-dataset.h"

#include <string.h>

void
nl_csv_rows_init (NlCsvRows *r, const char *path, const char *contents, gsize size)
{
  memset (r, 0, sizeof *r);
  r->path = path;
  r->p = contents;
  r->end = contents + size;
  r->next_line = 1;
  if (size >= 3 && memcmp (contents, "\xef\xbb\xbf", 3) == 0)
    r->p += 3;
  r->text = g_string_new (NULL);
  r->starts = g_array_new (FALSE, FALSE, sizeof (gsize));
}

void
nl_csv_rows_clear (NlCsvRows *r)
{
  if (r->text)
    g_string_free (r->text, TRUE);
  if (r->starts)
    g_array_free (r->starts, TRUE);
  r->text = NULL;
  r->starts = NULL;
}

/* Past blank lines; FALSE at the end. */
static gboolean
skip_blank (NlCsvRows *r)
{
  while (r->p < r->end)
    {
      const char *q = r->p;
      while (q < r->end && (*q == ' ' || *q == '\t' || *q == '\r'))
        q++;
      if (q < r->end && *q != '\n')
        return TRUE;
      r->p = q < r->end ? q + 1 : q;
      r->next_line++;
    }
  return FALSE;
}

static void
pick_delimiter (NlCsvRows *r)
{
  const char *eol = memchr (r->p, '\n', r->end - r->p);
  gsize n = (eol ? eol : r->end) - r->p;
  r->delim = memchr (r->p, ',', n) ? ',' : memchr (r->p, '\t', n) ? '\t' : memchr (r->p, ';', n) ? ';' : ',';
}

/* A quoted field's body after its opening quote; FALSE when unterminated. */
static gboolean
read_quoted (NlCsvRows *r)
{
  while (r->p < r->end)
    {
      char c = *r->p++;
      if (c == '"')
        {
          if (r->p < r->end && *r->p == '"')
            {
              g_string_append_c (r->text, '"');
              r->p++;
              continue;
            }
          return TRUE;
        }
      if (c == '\n')
        r->next_line++;
      g_string_append_c (r->text, c);
    }
  return FALSE;
}

gboolean
nl_csv_rows_next (NlCsvRows *r, int64_t *line, GError **error)
{
  if (!skip_blank (r))
    return FALSE;
  if (!r->delim)
    pick_delimiter (r);
  *line = r->next_line;
  g_string_truncate (r->text, 0);
  g_array_set_size (r->starts, 0);
  for (;;)
    {
      gsize start = r->text->len, keep = start;
      g_array_append_val (r->starts, start);
      while (r->p < r->end && (*r->p == ' ' || (*r->p == '\t' && r->delim != '\t')))
        r->p++;
      if (r->p < r->end && *r->p == '"')
        {
          r->p++;
          if (!read_quoted (r))
            {
              g_set_error (error, NL_DATA_ERROR, NL_DATA_ERROR_CORRUPT,
                           "%s:%" G_GINT64_FORMAT ": column %u has an opening quote but no closing one", r->path,
                           *line, r->starts->len - 1);
              return FALSE;
            }
          keep = r->text->len; /* a quoted field keeps its spaces */
        }
      /* what follows up to the delimiter is kept, so garbage is not dropped */
      while (r->p < r->end && *r->p != r->delim && *r->p != '\n')
        g_string_append_c (r->text, *r->p++);
      while (r->text->len > keep && (r->text->str[r->text->len - 1] == ' ' || r->text->str[r->text->len - 1] == '\t'
                                     || r->text->str[r->text->len - 1] == '\r'))
        g_string_truncate (r->text, r->text->len - 1);
      g_string_append_c (r->text, '\0');
      if (r->p >= r->end || *r->p == '\n')
        {
          if (r->p < r->end)
            r->p++;
          r->next_line++;
          return TRUE;
        }
      r->p++; /* the delimiter */
    }
}

guint
nl_csv_rows_n_cells (const NlCsvRows *r)
{
  return r->starts->len;
}

const char *
nl_csv_rows_cell (const NlCsvRows *r, guint k)
{
  return r->text->str + g_array_index (r->starts, gsize, k);
}

gsize
nl_csv_rows_cell_len (const NlCsvRows *r, guint k)
{
  gsize end = k + 1 < r->starts->len ? g_array_index (r->starts, gsize, k + 1) : r->text->len;
  return end - g_array_index (r->starts, gsize, k) - 1;
}

int
nl_csv_rows_find (char **header, const char *name)
{
  for (int k = 0; header && header[k]; k++)
    if (strcmp (header[k], name) == 0)
      return k;
  return -1;
}
