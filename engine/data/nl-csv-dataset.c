/* nl-csv-dataset.c — numeric CSV files: one sample per line, one column the
 * label, the others the features.
 *
 * The whole file is parsed at open, so every error (with its line and
 * column) comes from open, and get is a copy of one row. Only the rows of
 * the requested side of the split are kept. */
#include "engine/data/nl-dataset.h"

#include <float.h>
#include <math.h>
#include <string.h>

/* Far above any real class count; keeps n_classes = max + 1 sane when a
 * regression target is read as a class by mistake. */
#define CSV_MAX_CLASSES (1 << 20)

typedef struct {
  NlDataset base;
  float *features; /* length * n_features */
  float *labels;
  int64_t n_features;
} NlCsvDataset;

static gboolean
csv_get (NlDataset *ds, int64_t i, float *sample, float *label, GError **error)
{
  NlCsvDataset *d = (NlCsvDataset *) ds;
  if (i < 0 || i >= ds->length)
    {
      g_set_error (error, NL_DATA_ERROR, NL_DATA_ERROR_MISMATCH,
                   "sample index %" G_GINT64_FORMAT " is out of range for a dataset of %" G_GINT64_FORMAT,
                   i, ds->length);
      return FALSE;
    }
  memcpy (sample, d->features + i * d->n_features, d->n_features * sizeof (float));
  *label = d->labels[i];
  return TRUE;
}

static void
csv_free (NlDataset *ds)
{
  NlCsvDataset *d = (NlCsvDataset *) ds;
  g_free (d->features);
  g_free (d->labels);
  g_free (d);
}

static const NlDatasetClass csv_class = {
  .type_name = "csv",
  .get = csv_get,
  .free = csv_free,
};

/* One line split into cells: each cell's text (unquoted, trimmed) lives in
 * `text`, NUL-separated, at offsets `starts`. Reused across lines. */
typedef struct {
  GString *text;
  GArray *starts; /* gsize */
} Cells;

static const char *
cell (const Cells *c, guint k)
{
  return c->text->str + g_array_index (c->starts, gsize, k);
}

/* Split line [p, end) at `delim`. Fields may be double-quoted ("" is a
 * quote); spaces around a field are dropped. FALSE on an unterminated quote,
 * with *bad_col set. */
static gboolean
split_line (const char *p, const char *end, char delim, Cells *c, guint *bad_col)
{
  g_string_truncate (c->text, 0);
  g_array_set_size (c->starts, 0);
  for (;;)
    {
      gsize start = c->text->len;
      g_array_append_val (c->starts, start);
      while (p < end && (*p == ' ' || (*p == '\t' && delim != '\t')))
        p++;
      if (p < end && *p == '"')
        {
          p++;
          for (;;)
            {
              if (p >= end)
                {
                  *bad_col = c->starts->len - 1;
                  return FALSE;
                }
              if (*p == '"' && p + 1 < end && p[1] == '"')
                {
                  g_string_append_c (c->text, '"');
                  p += 2;
                }
              else if (*p == '"')
                {
                  p++;
                  break;
                }
              else
                g_string_append_c (c->text, *p++);
            }
          /* Anything after the closing quote up to the delimiter is kept,
           * so that 'x"y' style garbage is not silently dropped. */
        }
      while (p < end && *p != delim)
        g_string_append_c (c->text, *p++);
      while (c->text->len > start
             && (c->text->str[c->text->len - 1] == ' ' || c->text->str[c->text->len - 1] == '\t'))
        g_string_truncate (c->text, c->text->len - 1);
      g_string_append_c (c->text, '\0');
      if (p >= end)
        return TRUE;
      p++; /* the delimiter */
    }
}

/* A finite number filling the whole string. */
static gboolean
parse_number (const char *s, double *v)
{
  if (!*s)
    return FALSE;
  char *e;
  *v = g_ascii_strtod (s, &e);
  return *e == '\0' && e != s && isfinite (*v);
}

/* "column 3 ('petal_width')" or "column 3" without a header. */
static char *
column_name (char **names, guint k)
{
  return names ? g_strdup_printf ("column %u ('%s')", k, names[k]) : g_strdup_printf ("column %u", k);
}

/* What reading the file gathers, line by line */
typedef struct {
  const char *path;
  const NlDatasetOptions *opts;
  Cells c;
  GArray *features, *labels; /* float */
  char **names;              /* the header's cells, or NULL without one */
  guint n_cols, label_col;
  double max_label;
} CsvRead;

/* The label column: a header name first, then a 0-based index. */
static gboolean
find_label_column (CsvRead *r, GError **error)
{
  const char *path = r->path;
  const char *want = r->opts->label_column;
  char **names = r->names;
  guint n_cols = r->n_cols;
  r->label_col = n_cols - 1;
  if (want && *want)
    {
      gboolean found = FALSE;
      for (guint k = 0; names && k < n_cols && !found; k++)
        if (strcmp (names[k], want) == 0)
          r->label_col = k, found = TRUE;
      guint64 idx;
      if (!found && g_ascii_string_to_unsigned (want, 10, 0, G_MAXUINT, &idx, NULL))
        {
          if (idx >= n_cols)
            {
              g_set_error (error, NL_DATA_ERROR, NL_DATA_ERROR_SPEC,
                           "%s: label column %s is out of range (the file has %u columns, 0..%u)",
                           path, want, n_cols, n_cols - 1);
              return FALSE;
            }
          r->label_col = (guint) idx, found = TRUE;
        }
      if (!found)
        {
          if (names)
            {
              g_autofree char *known = g_strjoinv ("', '", names);
              g_set_error (error, NL_DATA_ERROR, NL_DATA_ERROR_SPEC,
                           "%s has no column named '%s' (columns: '%s')", path, want, known);
            }
          else
            g_set_error (error, NL_DATA_ERROR, NL_DATA_ERROR_SPEC,
                         "%s has no header line, so the label column '%s' must be an index 0..%u",
                         path, want, n_cols - 1);
          return FALSE;
        }
    }
  return TRUE;
}

/* The first line sets the columns; *header when it names them (a cell
 * that is not a number) rather than holding the first row. */
static gboolean
read_first_line (CsvRead *r, int64_t line, gboolean *header, GError **error)
{
  guint n_cols = r->n_cols = r->c.starts->len;
  *header = FALSE;
  for (guint k = 0; k < n_cols; k++)
    {
      double v;
      *header |= !parse_number (cell (&r->c, k), &v);
    }
  if (*header)
    {
      r->names = g_new0 (char *, n_cols + 1);
      for (guint k = 0; k < n_cols; k++)
        r->names[k] = g_strdup (cell (&r->c, k));
    }
  if (n_cols < 2)
    {
      g_set_error (error, NL_DATA_ERROR, NL_DATA_ERROR_CORRUPT,
                   "%s:%" G_GINT64_FORMAT ": only 1 column; a CSV dataset needs at least one "
                   "feature column and a label column", r->path, line);
      return FALSE;
    }
  return find_label_column (r, error);
}

/* One data row's cells (already split) into features and a label */
static gboolean
read_row (CsvRead *r, int64_t line, GError **error)
{
  const char *path = r->path;
  char **names = r->names;
  guint n_cols = r->n_cols;
  if (r->c.starts->len != n_cols)
    {
      g_set_error (error, NL_DATA_ERROR, NL_DATA_ERROR_CORRUPT, "%s:%" G_GINT64_FORMAT ": %u columns, expected %u",
                   path, line, r->c.starts->len, n_cols);
      return FALSE;
    }
  for (guint k = 0; k < n_cols; k++)
    {
      double v;
      const char *s = cell (&r->c, k);
      if (!parse_number (s, &v))
        {
          g_autofree char *col = column_name (names, k);
          g_set_error (error, NL_DATA_ERROR, NL_DATA_ERROR_CORRUPT, "%s:%" G_GINT64_FORMAT ": %s is not a number: '%s'",
                       path, line, col, s);
          return FALSE;
        }
      /* samples are floats: 1e39 would silently become infinity */
      if (fabs (v) > FLT_MAX)
        {
          g_autofree char *col = column_name (names, k);
          g_set_error (error, NL_DATA_ERROR, NL_DATA_ERROR_CORRUPT,
                       "%s:%" G_GINT64_FORMAT ": %s holds '%s', beyond a 32-bit float's range (about ±3.4e38)",
                       path, line, col, s);
          return FALSE;
        }
      if (k != r->label_col)
        {
          float f = (float) v;
          g_array_append_val (r->features, f);
          continue;
        }
      if (!r->opts->regression && (v < 0 || v != floor (v) || v >= CSV_MAX_CLASSES))
        {
          g_autofree char *col = column_name (names, k);
          g_set_error (error, NL_DATA_ERROR, NL_DATA_ERROR_CORRUPT,
                       "%s:%" G_GINT64_FORMAT ": the label in %s must be a whole number from 0 to %d for "
                       "classification, not '%s' (real-valued labels need regression)",
                       path, line, col, CSV_MAX_CLASSES - 1, s);
          return FALSE;
        }
      r->max_label = MAX (r->max_label, v);
      float f = (float) v;
      g_array_append_val (r->labels, f);
    }
  return TRUE;
}

/* Every line of the file; *first stays TRUE when none held anything. */
static gboolean
read_lines (CsvRead *r, const char *contents, gsize size, gboolean *first, GError **error)
{
  const char *path = r->path;
  char delim = ',';
  const char *p = contents, *end = contents + size;
  *first = TRUE;
  if (size >= 3 && memcmp (p, "\xef\xbb\xbf", 3) == 0)
    p += 3; /* UTF-8 byte order mark */
  for (int64_t line = 1; p < end; line++)
    {
      const char *eol = memchr (p, '\n', end - p);
      const char *next = eol ? eol + 1 : end;
      if (!eol)
        eol = end;
      if (eol > p && eol[-1] == '\r')
        eol--;
      const char *q = p;
      while (q < eol && (*q == ' ' || *q == '\t'))
        q++;
      if (q == eol)
        {
          p = next; /* blank line */
          continue;
        }

      if (*first && !memchr (p, ',', eol - p))
        delim = memchr (p, '\t', eol - p) ? '\t' : memchr (p, ';', eol - p) ? ';' : ',';
      guint bad_col = 0;
      if (!split_line (p, eol, delim, &r->c, &bad_col))
        {
          g_set_error (error, NL_DATA_ERROR, NL_DATA_ERROR_CORRUPT,
                       "%s:%" G_GINT64_FORMAT ": column %u has an opening quote but no closing one",
                       path, line, bad_col);
          return FALSE;
        }

      if (*first)
        {
          gboolean header;
          *first = FALSE;
          if (!read_first_line (r, line, &header, error))
            return FALSE;
          if (header)
            {
              p = next;
              continue;
            }
        }
      if (!read_row (r, line, error))
        return FALSE;
      p = next;
    }
  return TRUE;
}

/* The dataset of the rows on this side of the split */
static NlCsvDataset *
csv_dataset_new (CsvRead *r, gboolean train, GError **error)
{
  const char *path = r->path;
  const NlDatasetOptions *opts = r->opts;
  int64_t n = r->labels->len;
  if (n == 0)
    {
      g_set_error (error, NL_DATA_ERROR, NL_DATA_ERROR_CORRUPT, "%s has a header line but no data rows", path);
      return NULL;
    }

  int64_t m;
  g_autofree int64_t *rows = nl_dataset_split (n, opts->val_fraction, train, path, &m, error);
  if (!rows)
    return NULL;
  int64_t nf = r->n_cols - 1;
  NlCsvDataset *d = g_new0 (NlCsvDataset, 1);
  d->base.klass = &csv_class;
  d->base.length = m;
  d->base.sample_shape = nl_shape_of (1, nf);
  d->base.n_classes = opts->regression ? 0 : (int) r->max_label + 1;
  d->n_features = nf;
  d->features = g_new (float, m * nf);
  d->labels = g_new (float, m);
  for (int64_t i = 0; i < m; i++)
    {
      memcpy (d->features + i * nf, &g_array_index (r->features, float, rows[i] * nf), nf * sizeof (float));
      d->labels[i] = g_array_index (r->labels, float, rows[i]);
    }
  char *label_name = column_name (r->names, r->label_col);
  if (opts->val_fraction > 0)
    d->base.description = g_strdup_printf ("CSV %s (%" G_GINT64_FORMAT " of %" G_GINT64_FORMAT
                                           " rows, %" G_GINT64_FORMAT " features, label %s) from %s",
                                           train ? "train" : "validation", m, n, nf, label_name, path);
  else
    d->base.description = g_strdup_printf ("CSV (%" G_GINT64_FORMAT " rows, %" G_GINT64_FORMAT
                                           " features, label %s) from %s", n, nf, label_name, path);
  g_free (label_name);
  return d;
}

NlDataset *
nl_csv_dataset_open (const char *path, gboolean train, const NlDatasetOptions *opts, GError **error)
{
  g_return_val_if_fail (path, NULL);
  static const NlDatasetOptions defaults = { 0 };
  if (!opts)
    opts = &defaults;

  g_autofree char *contents = NULL;
  gsize size = 0;
  g_autoptr (GError) read_error = NULL;
  if (!g_file_get_contents (path, &contents, &size, &read_error))
    {
      g_set_error (error, NL_DATA_ERROR, NL_DATA_ERROR_NOT_FOUND, "cannot open %s: %s", path,
                   read_error->message);
      return NULL;
    }

  CsvRead r = {
    .path = path,
    .opts = opts,
    .c = { g_string_new (NULL), g_array_new (FALSE, FALSE, sizeof (gsize)) },
    .features = g_array_new (FALSE, FALSE, sizeof (float)),
    .labels = g_array_new (FALSE, FALSE, sizeof (float)),
    .max_label = -1,
  };
  NlCsvDataset *d = NULL;
  gboolean first;

  if (read_lines (&r, contents, size, &first, error))
    {
      if (first)
        g_set_error (error, NL_DATA_ERROR, NL_DATA_ERROR_CORRUPT, "%s is empty (no CSV lines)", path);
      else
        d = csv_dataset_new (&r, train, error);
    }
  g_strfreev (r.names);
  g_string_free (r.c.text, TRUE);
  g_array_free (r.c.starts, TRUE);
  g_array_free (r.features, TRUE);
  g_array_free (r.labels, TRUE);
  return d ? &d->base : NULL;
}
