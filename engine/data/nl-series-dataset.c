/* nl-series-dataset.c — series:FILE.csv, windows of a time series for
 * regression (nl-series-dataset.h). The whole file is read at open (every
 * error comes from there), z-scored with the training rows' statistics,
 * and get copies one window. */
#include "engine/data/nl-series-dataset.h"
#include "engine/data/nl-csv-rows.h"

#include <float.h>
#include <math.h>
#include <string.h>

typedef struct {
  NlDataset base;
  float *data;        /* n_rows x C, z-scored */
  float *raw_target;  /* n_rows, as in the file */
  int64_t n_rows;
  int C, target, W, H;
  int64_t first;      /* the first window of this side */
  int64_t val_start_row;
  float *mean, *std;  /* C each */
  char **columns;     /* C names */
} NlSeriesDataset;

static const NlDatasetClass series_class;

gboolean
nl_series_dataset_is (const NlDataset *ds)
{
  return ds && ds->klass == &series_class;
}

static gboolean
series_get (NlDataset *ds, int64_t i, float *sample, float *label, GError **error)
{
  NlSeriesDataset *d = (NlSeriesDataset *) ds;
  if (i < 0 || i >= ds->length)
    {
      g_set_error (error, NL_DATA_ERROR, NL_DATA_ERROR_MISMATCH,
                   "sample index %" G_GINT64_FORMAT " is out of range for a dataset of %" G_GINT64_FORMAT, i,
                   ds->length);
      return FALSE;
    }
  int64_t row = d->first + i;
  memcpy (sample, d->data + row * d->C, sizeof (float) * d->W * d->C);
  for (int h = 0; h < d->H; h++)
    label[h] = d->data[(row + d->W + h) * d->C + d->target];
  return TRUE;
}

static void
series_free (NlDataset *ds)
{
  NlSeriesDataset *d = (NlSeriesDataset *) ds;
  g_free (d->data);
  g_free (d->raw_target);
  g_free (d->mean);
  g_free (d->std);
  g_strfreev (d->columns);
  g_free (d);
}

static const NlDatasetClass series_class = { .type_name = "series", .get = series_get, .free = series_free };

gboolean
nl_series_dataset_info (NlDataset *ds, NlSeriesInfo *info)
{
  if (!nl_series_dataset_is (ds))
    return FALSE;
  NlSeriesDataset *d = (NlSeriesDataset *) ds;
  *info = (NlSeriesInfo) {
    .target = d->columns[d->target], .values = d->raw_target, .n_rows = d->n_rows,
    .val_start_row = d->val_start_row, .window = d->W, .horizon = d->H, .n_columns = d->C,
    .columns = (const char *const *) d->columns, .target_mean = d->mean[d->target],
    .target_std = d->std[d->target],
  };
  return TRUE;
}

/* A finite float filling the whole cell. */
static gboolean
parse_number (const char *s, double *v)
{
  char *e;
  if (!*s)
    return FALSE;
  *v = g_ascii_strtod (s, &e);
  return *e == '\0' && e != s && isfinite (*v) && fabs (*v) <= FLT_MAX;
}

typedef struct {
  const char *path;
  char **header;
  guint n_cols;
  int *numeric;     /* header index of each numeric column */
  int C, target;
  GArray *values;   /* float, row-major n_rows x C */
} SeriesRead;

/* The first data row decides which columns are numeric; then the target. */
static gboolean
pick_columns (SeriesRead *s, NlCsvRows *rows, const NlDatasetOptions *opts, int64_t line, GError **error)
{
  const char *want = opts->target_column && *opts->target_column ? opts->target_column : NULL;
  int want_col = want ? nl_csv_rows_find (s->header, want) : -1;
  s->numeric = g_new (int, s->n_cols);
  s->target = -1;
  for (guint k = 0; k < s->n_cols; k++)
    {
      double v;
      if (!parse_number (nl_csv_rows_cell (rows, k), &v))
        continue;
      if (!want || (int) k == want_col)
        s->target = s->C;
      s->numeric[s->C++] = (int) k;
    }
  if (want && want_col < 0)
    {
      g_autofree char *known = g_strjoinv ("', '", s->header);
      g_set_error (error, NL_DATA_ERROR, NL_DATA_ERROR_SPEC, "%s:1: no target column named '%s' (columns: '%s')",
                   s->path, want, known);
      return FALSE;
    }
  if (s->C == 0 || s->target < 0)
    {
      int k = want ? want_col : 0;
      g_autofree char *cell = g_utf8_make_valid (nl_csv_rows_cell (rows, k), MIN (nl_csv_rows_cell_len (rows, k), 40));
      g_set_error (error, NL_DATA_ERROR, NL_DATA_ERROR_CORRUPT,
                   "%s:%" G_GINT64_FORMAT ": column %d ('%s') is not a number: '%s' (a series needs a numeric %s)",
                   s->path, line, k, s->header[k], cell, want ? "target" : "column");
      return FALSE;
    }
  return TRUE;
}

static gboolean
read_series_row (SeriesRead *s, NlCsvRows *rows, int64_t line, GError **error)
{
  if (nl_csv_rows_n_cells (rows) != s->n_cols)
    {
      g_set_error (error, NL_DATA_ERROR, NL_DATA_ERROR_CORRUPT, "%s:%" G_GINT64_FORMAT ": %u columns, expected %u",
                   s->path, line, nl_csv_rows_n_cells (rows), s->n_cols);
      return FALSE;
    }
  for (int c = 0; c < s->C; c++)
    {
      int k = s->numeric[c];
      double v;
      if (!parse_number (nl_csv_rows_cell (rows, k), &v))
        {
          g_autofree char *cell = g_utf8_make_valid (nl_csv_rows_cell (rows, k),
                                                     MIN (nl_csv_rows_cell_len (rows, k), 40));
          g_set_error (error, NL_DATA_ERROR, NL_DATA_ERROR_CORRUPT,
                       "%s:%" G_GINT64_FORMAT ": column %d ('%s') is not a number: '%s'", s->path, line, k,
                       s->header[k], cell);
          return FALSE;
        }
      float f = (float) v;
      g_array_append_val (s->values, f);
    }
  return TRUE;
}

static gboolean
read_series_file (SeriesRead *s, const char *contents, gsize size, const NlDatasetOptions *opts, GError **error)
{
  NlCsvRows rows;
  int64_t line = 0;
  gboolean ok = FALSE;
  nl_csv_rows_init (&rows, s->path, contents, size);
  if (!nl_csv_rows_next (&rows, &line, error))
    {
      if (error && !*error)
        g_set_error (error, NL_DATA_ERROR, NL_DATA_ERROR_CORRUPT, "%s is empty (no header line)", s->path);
      goto out;
    }
  s->n_cols = nl_csv_rows_n_cells (&rows);
  s->header = g_new0 (char *, s->n_cols + 1);
  for (guint k = 0; k < s->n_cols; k++)
    s->header[k] = g_utf8_make_valid (nl_csv_rows_cell (&rows, k), -1);
  for (gboolean first = TRUE;; first = FALSE)
    {
      GError *e = NULL;
      if (!nl_csv_rows_next (&rows, &line, &e))
        {
          if (e)
            g_propagate_error (error, e);
          else if (first)
            g_set_error (error, NL_DATA_ERROR, NL_DATA_ERROR_CORRUPT, "%s has a header line but no data rows", s->path);
          ok = !e && !first;
          break;
        }
      if (first && nl_csv_rows_n_cells (&rows) == s->n_cols && !pick_columns (s, &rows, opts, line, error))
        break;
      if (!read_series_row (s, &rows, line, error))
        break;
    }
out:
  nl_csv_rows_clear (&rows);
  return ok;
}

/* Per column mean and population std over rows [0, n) (std 1 when constant). */
static void
column_stats (NlSeriesDataset *d, const float *v, int64_t n)
{
  d->mean = g_new (float, d->C);
  d->std = g_new (float, d->C);
  for (int c = 0; c < d->C; c++)
    {
      double sum = 0, sq = 0;
      for (int64_t r = 0; r < n; r++)
        sum += v[r * d->C + c];
      double mean = sum / (double) n;
      for (int64_t r = 0; r < n; r++)
        sq += (v[r * d->C + c] - mean) * (v[r * d->C + c] - mean);
      double sd = sqrt (sq / (double) n);
      d->mean[c] = (float) mean;
      d->std[c] = isfinite (sd) && sd > 1e-12 * MAX (1.0, fabs (mean)) ? (float) sd : 1.0f;
    }
}

static gboolean
finish_series (NlSeriesDataset *d, SeriesRead *s, gboolean train, const NlDatasetOptions *opts, GError **error)
{
  int64_t n = s->values->len / s->C, W = d->W, H = d->H;
  int64_t windows = n - W - H + 1;
  if (windows < 1)
    {
      g_set_error (error, NL_DATA_ERROR, NL_DATA_ERROR_CORRUPT,
                   "%s: %" G_GINT64_FORMAT " rows are too few for a window of %" G_GINT64_FORMAT
                   " and a horizon of %" G_GINT64_FORMAT " (%" G_GINT64_FORMAT " rows at least)",
                   s->path, n, W, H, W + H);
      return FALSE;
    }
  double vf = opts->val_fraction;
  int64_t n_val = vf > 0 ? (int64_t) llround (vf * (double) windows) : 0, n_train = windows - n_val;
  int64_t m = vf == 0 ? windows : train ? n_train : n_val;
  if (m == 0)
    {
      g_set_error (error, NL_DATA_ERROR, NL_DATA_ERROR_SPEC,
                   "%s: a validation fraction of %g of %" G_GINT64_FORMAT " windows leaves the %s side empty",
                   s->path, vf, windows, train ? "training" : "validation");
      return FALSE;
    }
  const float *v = (const float *) s->values->data;
  int64_t train_rows = (vf == 0 ? windows : n_train) + W + H - 1;
  d->n_rows = n;
  d->first = vf == 0 || train ? 0 : n_train;
  d->val_start_row = vf == 0 ? n : train_rows;
  column_stats (d, v, train_rows);
  d->data = g_new (float, n * d->C);
  d->raw_target = g_new (float, n);
  for (int64_t r = 0; r < n; r++)
    {
      d->raw_target[r] = v[r * d->C + d->target];
      for (int c = 0; c < d->C; c++)
        d->data[r * d->C + c] = (float) (((double) v[r * d->C + c] - d->mean[c]) / d->std[c]);
    }
  d->base.length = m;
  d->base.sample_shape = nl_shape_of (2, W, (int64_t) d->C);
  d->base.label_shape = nl_shape_of (1, H);
  d->base.description = g_strdup_printf (
    "Series %s (%" G_GINT64_FORMAT " of %" G_GINT64_FORMAT " windows of %" G_GINT64_FORMAT " rows x %d columns, "
    "the next %" G_GINT64_FORMAT " of '%s', %" G_GINT64_FORMAT " rows) from %s", vf == 0 ? "all" : train ? "train" : "validation",
    m, windows, W, d->C, H, d->columns[d->target], n, s->path);
  return TRUE;
}

NlDataset *
nl_series_dataset_open (const char *path, gboolean train, const NlDatasetOptions *opts, GError **error)
{
  static const NlDatasetOptions defaults = { 0 };
  g_autofree char *contents = NULL;
  g_autoptr (GError) why = NULL;
  gsize size = 0;
  if (!opts)
    opts = &defaults;
  if (opts->window < 0 || opts->horizon < 0)
    {
      g_set_error (error, NL_DATA_ERROR, NL_DATA_ERROR_SPEC, "%s: the window (%d) and horizon (%d) must be positive",
                   path, opts->window, opts->horizon);
      return NULL;
    }
  if (!g_file_get_contents (path, &contents, &size, &why))
    {
      g_set_error (error, NL_DATA_ERROR, NL_DATA_ERROR_NOT_FOUND, "cannot open %s: %s", path, why->message);
      return NULL;
    }
  SeriesRead s = { .path = path, .values = g_array_new (FALSE, FALSE, sizeof (float)) };
  NlSeriesDataset *d = g_new0 (NlSeriesDataset, 1);
  d->base.klass = &series_class;
  d->W = opts->window > 0 ? opts->window : NL_SERIES_DEFAULT_WINDOW;
  d->H = opts->horizon > 0 ? opts->horizon : 1;
  gboolean ok = read_series_file (&s, contents, size, opts, error);
  if (ok)
    {
      d->C = s.C;
      d->target = s.target;
      d->columns = g_new0 (char *, s.C + 1);
      for (int c = 0; c < s.C; c++)
        d->columns[c] = g_strdup (s.header[s.numeric[c]]);
      ok = finish_series (d, &s, train, opts, error);
    }
  g_strfreev (s.header);
  g_free (s.numeric);
  g_array_free (s.values, TRUE);
  if (!ok)
    {
      nl_dataset_free (&d->base);
      return NULL;
    }
  return &d->base;
}
