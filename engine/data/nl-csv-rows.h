/* nl-csv-rows.h — the records of a CSV/TSV file with a header, for the
 * readers that take text cells (text, series): comma-separated, or tab-
 * or semicolon-separated when the first line has one and no comma; a UTF-8
 * byte order mark is skipped, blank lines too. A field that starts with a
 * double quote runs to the closing one ("" is a quote) and may span lines;
 * unquoted fields lose the spaces around them. Errors name the file and
 * the 1-based line. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct {
  const char *path;
  const char *p, *end;
  char delim;          /* decided by the first record */
  int64_t next_line;   /* the line the next record starts on */
  GString *text;       /* the record's cells, NUL-separated */
  GArray *starts;      /* gsize: where each cell starts in text */
} NlCsvRows;

void nl_csv_rows_init (NlCsvRows *r, const char *path, const char *contents, gsize size);
void nl_csv_rows_clear (NlCsvRows *r);
/* The next record into the cells, its first line into *line: TRUE; FALSE
 * at the end (no error) or with an NL_DATA_ERROR_CORRUPT error for an
 * unterminated quote. */
gboolean nl_csv_rows_next (NlCsvRows *r, int64_t *line, GError **error);
guint nl_csv_rows_n_cells (const NlCsvRows *r);
/* cell k (NUL-terminated; it may hold NUL bytes before its length) */
const char *nl_csv_rows_cell (const NlCsvRows *r, guint k);
/* its length in bytes */
gsize nl_csv_rows_cell_len (const NlCsvRows *r, guint k);
/* The header's cell named name: its index, or -1. */
int nl_csv_rows_find (char **header, const char *name);

G_END_DECLS
