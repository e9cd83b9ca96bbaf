/* nl-text-dataset.c — text classification (text:FILE.csv) and language
 * model (text-lm:FILE.txt) datasets (nl-text-dataset.h).
 *
 * The file is tokenized once at open: every distinct token is interned
 * (a provisional id in order of appearance) and the samples are kept as
 * provisional ids, so the vocabulary, built from the training side's
 * counts afterwards, only maps them (map[]), and the preview can still
 * show a word the vocabulary calls <unk>. */
#include "engine/data/nl-text-dataset.h"
#include "engine/data/nl-csv-rows.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  NlDataset base;
  gboolean lm;
  int T;
  GStringChunk *chunk;  /* the interned tokens' text */
  GPtrArray *tokens;    /* provisional id -> token (in chunk) */
  GHashTable *intern;   /* token -> provisional id + 1 */
  GArray *stream;       /* gint32 provisional ids: every row's tokens, or the whole file's */
  gint32 *map;          /* provisional id -> vocabulary id */
  int64_t *counts;      /* provisional id -> occurrences on this side */
  /* text: sample i is row rows[i], tokens stream[row_start[r] .. row_start[r + 1]) */
  GArray *row_start;    /* int64, n_rows + 1 */
  int64_t *rows;
  float *labels;        /* per row of the file */
  /* text-lm: sample i is window first_window + i */
  int64_t first_window;
} NlTextDataset;

static const NlDatasetClass text_class, text_lm_class;

gboolean
nl_text_dataset_is (const NlDataset *ds)
{
  return ds && (ds->klass == &text_class || ds->klass == &text_lm_class);
}

int
nl_text_dataset_max_length (const NlDataset *ds)
{
  return nl_text_dataset_is (ds) ? ((const NlTextDataset *) ds)->T : 0;
}

/* the provisional ids of sample i and their count */
static const gint32 *
sample_ids (NlTextDataset *d, int64_t i, int64_t *n)
{
  const gint32 *s = (const gint32 *) d->stream->data;
  if (d->lm)
    {
      *n = d->T;
      return s + (d->first_window + i) * d->T;
    }
  int64_t r = d->rows[i];
  int64_t a = g_array_index (d->row_start, int64_t, r), b = g_array_index (d->row_start, int64_t, r + 1);
  *n = b - a;
  return s + a;
}

static gboolean
text_get (NlDataset *ds, int64_t i, float *sample, float *label, GError **error)
{
  NlTextDataset *d = (NlTextDataset *) ds;
  int64_t n;
  if (i < 0 || i >= ds->length)
    {
      g_set_error (error, NL_DATA_ERROR, NL_DATA_ERROR_MISMATCH,
                   "sample index %" G_GINT64_FORMAT " is out of range for a dataset of %" G_GINT64_FORMAT, i,
                   ds->length);
      return FALSE;
    }
  const gint32 *ids = sample_ids (d, i, &n);
  for (int k = 0; k < d->T; k++)
    sample[k] = k < n ? (float) d->map[ids[k]] : (float) NL_VOCAB_PAD;
  if (d->lm)
    for (int k = 0; k < d->T; k++)
      label[k] = (float) d->map[ids[k + 1]];
  else
    *label = d->labels[d->rows[i]];
  return TRUE;
}

int64_t
nl_text_dataset_tokens (NlDataset *ds, int64_t i, const char **tokens, int64_t max)
{
  g_return_val_if_fail (nl_text_dataset_is (ds) && i >= 0 && i < ds->length, 0);
  NlTextDataset *d = (NlTextDataset *) ds;
  int64_t n;
  const gint32 *ids = sample_ids (d, i, &n);
  for (int64_t k = 0; k < MIN (n, max); k++)
    tokens[k] = d->tokens->pdata[ids[k]];
  return n;
}

gsize
nl_text_dataset_token_counts (NlDataset *ds, const char *const **tokens, const int64_t **counts)
{
  g_return_val_if_fail (nl_text_dataset_is (ds), 0);
  NlTextDataset *d = (NlTextDataset *) ds;
  *tokens = (const char *const *) d->tokens->pdata;
  *counts = d->counts;
  return d->tokens->len;
}

static void
text_free (NlDataset *ds)
{
  NlTextDataset *d = (NlTextDataset *) ds;
  if (d->chunk)
    g_string_chunk_free (d->chunk);
  if (d->tokens)
    g_ptr_array_free (d->tokens, TRUE);
  if (d->intern)
    g_hash_table_destroy (d->intern);
  if (d->stream)
    g_array_free (d->stream, TRUE);
  if (d->row_start)
    g_array_free (d->row_start, TRUE);
  g_free (d->map);
  g_free (d->counts);
  g_free (d->rows);
  g_free (d->labels);
  g_free (d);
}

static const NlDatasetClass text_class = { .type_name = "text", .get = text_get, .free = text_free };
static const NlDatasetClass text_lm_class = { .type_name = "text-lm", .get = text_get, .free = text_free };

static NlTextDataset *
text_new (gboolean lm, const NlDatasetOptions *opts)
{
  NlTextDataset *d = g_new0 (NlTextDataset, 1);
  d->base.klass = lm ? &text_lm_class : &text_class;
  d->lm = lm;
  d->T = opts->max_length > 0 ? opts->max_length : NL_TEXT_DEFAULT_MAX_LENGTH;
  d->chunk = g_string_chunk_new (4096);
  d->tokens = g_ptr_array_new ();
  d->intern = g_hash_table_new (g_str_hash, g_str_equal);
  d->stream = g_array_new (FALSE, FALSE, sizeof (gint32));
  return d;
}

/* nl_tokenize's callback: the token's provisional id onto the stream */
static void
intern_token (const char *token, gsize len, gpointer user_data)
{
  NlTextDataset *d = user_data;
  gint32 id = GPOINTER_TO_INT (g_hash_table_lookup (d->intern, token)) - 1;
  if (id < 0)
    {
      char *copy = g_string_chunk_insert_len (d->chunk, token, len);
      id = (gint32) d->tokens->len;
      g_ptr_array_add (d->tokens, copy);
      g_hash_table_insert (d->intern, copy, GINT_TO_POINTER (id + 1));
    }
  g_array_append_val (d->stream, id);
}

/* Tokenizes text (len bytes) onto the stream, cut at 1 MB (counted);
 * errors are "FILE:LINE: WHERE: invalid UTF-8 at byte N". */
static gboolean
add_text (NlTextDataset *d, NlTokenizerKind kind, const char *text, gsize len, const char *path, int64_t line,
          const char *where, GError **error)
{
  const char *bad = NULL;
  /* validate all of it first: the cut must land on a character boundary */
  if (!g_utf8_validate_len (text, len, &bad))
    {
      g_set_error (error, NL_DATA_ERROR, NL_DATA_ERROR_CORRUPT, "%s:%" G_GINT64_FORMAT ": %sinvalid UTF-8 at byte %"
                   G_GSIZE_FORMAT, path, line, where, (gsize) (bad - text));
      return FALSE;
    }
  gsize n = nl_utf8_clip (text, len, NL_TEXT_MAX_ROW_BYTES);
  if (n < len)
    d->base.n_truncated_rows++;
  return nl_tokenize (kind, text, n, intern_token, d, error);
}

/* The vocabulary (opts->vocab, or built from the provisional ids in
 * stream[from, to) of the training side) and the map onto it. */
static gboolean
set_vocab (NlTextDataset *d, const NlDatasetOptions *opts, NlTokenizerKind kind, gboolean train,
           const int64_t *train_counts, const char *path, GError **error)
{
  guint n = d->tokens->len;
  if (opts->vocab)
    d->base.vocab = nl_vocab_ref ((NlVocab *) opts->vocab);
  else if (!train)
    {
      g_set_error (error, NL_DATA_ERROR, NL_DATA_ERROR_SPEC,
                   "%s: the validation side of a text dataset needs the training side's vocabulary "
                   "(NlDatasetOptions.vocab)", path);
      return FALSE;
    }
  else if (!(d->base.vocab = nl_vocab_build_from_counts (kind, (const char *const *) d->tokens->pdata, train_counts,
                                                         n, opts->vocab_size, opts->min_count, error)))
    return FALSE;
  d->map = g_new (gint32, MAX (n, 1));
  for (guint k = 0; k < n; k++)
    d->map[k] = nl_vocab_lookup (d->base.vocab, d->tokens->pdata[k]);
  return TRUE;
}

static void
count_ids (const gint32 *ids, int64_t n, int64_t *counts)
{
  for (int64_t k = 0; k < n; k++)
    counts[ids[k]]++;
}

/* ---- text: a CSV of texts and class labels ---- */

typedef struct {
  const char *path;
  char **header;
  int text_col, label_col;
  GPtrArray *row_labels; /* interned label per kept row (in labels) */
  GHashTable *labels;    /* label string set (owned keys) */
} TextRead;

static gboolean
find_columns (TextRead *t, const NlDatasetOptions *opts, GError **error)
{
  const char *want[2] = { opts->text_column && *opts->text_column ? opts->text_column : "text",
                          opts->label_column && *opts->label_column ? opts->label_column : "label" };
  const char *what[2] = { "text", "label" };
  int *col[2] = { &t->text_col, &t->label_col };
  for (int k = 0; k < 2; k++)
    if ((*col[k] = nl_csv_rows_find (t->header, want[k])) < 0)
      {
        g_autofree char *known = g_strjoinv ("', '", t->header);
        g_autofree char *shown = g_utf8_make_valid (known, -1);
        g_set_error (error, NL_DATA_ERROR, NL_DATA_ERROR_SPEC, "%s:1: no %s column named '%s' (columns: '%s')",
                     t->path, what[k], want[k], shown);
        return FALSE;
      }
  return TRUE;
}

/* One data record: its label and text's tokens, or skipped when it has none. */
static gboolean
read_text_row (NlTextDataset *d, TextRead *t, NlCsvRows *rows, NlTokenizerKind kind, int64_t line, GError **error)
{
  guint n_cols = g_strv_length (t->header);
  if (nl_csv_rows_n_cells (rows) != n_cols)
    {
      g_set_error (error, NL_DATA_ERROR, NL_DATA_ERROR_CORRUPT, "%s:%" G_GINT64_FORMAT ": %u columns, expected %u",
                   t->path, line, nl_csv_rows_n_cells (rows), n_cols);
      return FALSE;
    }
  const char *label = nl_csv_rows_cell (rows, t->label_col);
  gsize label_len = nl_csv_rows_cell_len (rows, t->label_col);
  g_autofree char *where = g_strdup_printf ("column %d ('%s'): ", t->label_col, t->header[t->label_col]);
  if (!g_utf8_validate_len (label, label_len, NULL) || label_len == 0)
    {
      g_set_error (error, NL_DATA_ERROR, NL_DATA_ERROR_CORRUPT, "%s:%" G_GINT64_FORMAT ": %s%s", t->path, line, where,
                   label_len ? "invalid UTF-8" : "the label is empty");
      return FALSE;
    }
  g_free (where);
  where = g_strdup_printf ("column %d ('%s'): ", t->text_col, t->header[t->text_col]);
  guint before = d->stream->len;
  if (!add_text (d, kind, nl_csv_rows_cell (rows, t->text_col), nl_csv_rows_cell_len (rows, t->text_col), t->path,
                 line, where, error))
    return FALSE;
  if (d->stream->len == before)
    {
      d->base.n_skipped_rows++;
      return TRUE;
    }
  char *key = g_hash_table_lookup (t->labels, label);
  if (!key)
    g_hash_table_add (t->labels, key = g_strdup (label));
  g_ptr_array_add (t->row_labels, key);
  int64_t end = d->stream->len;
  g_array_append_val (d->row_start, end);
  return TRUE;
}

static gboolean
read_text_file (NlTextDataset *d, TextRead *t, const char *contents, gsize size, NlTokenizerKind kind,
                const NlDatasetOptions *opts, GError **error)
{
  NlCsvRows rows;
  int64_t line = 0, zero = 0;
  gboolean ok = FALSE;
  nl_csv_rows_init (&rows, t->path, contents, size);
  if (!nl_csv_rows_next (&rows, &line, error))
    {
      if (error && !*error)
        g_set_error (error, NL_DATA_ERROR, NL_DATA_ERROR_CORRUPT, "%s is empty (no header line)", t->path);
      goto out;
    }
  t->header = g_new0 (char *, nl_csv_rows_n_cells (&rows) + 1);
  for (guint k = 0; k < nl_csv_rows_n_cells (&rows); k++)
    t->header[k] = g_utf8_make_valid (nl_csv_rows_cell (&rows, k), -1);
  if (!find_columns (t, opts, error))
    goto out;
  g_array_append_val (d->row_start, zero);
  for (;;)
    {
      GError *e = NULL;
      if (!nl_csv_rows_next (&rows, &line, &e))
        {
          if (e)
            g_propagate_error (error, e);
          ok = !e;
          break;
        }
      if (!read_text_row (d, t, &rows, kind, line, error))
        break;
    }
out:
  nl_csv_rows_clear (&rows);
  return ok;
}

static int
compare_strings (const void *a, const void *b)
{
  return strcmp (*(char *const *) a, *(char *const *) b);
}

/* Class indices from the sorted distinct labels; a single class is an error. */
static gboolean
set_classes (NlTextDataset *d, TextRead *t, int64_t n, GError **error)
{
  guint n_classes = 0;
  g_autofree char **names = (char **) g_hash_table_get_keys_as_array (t->labels, &n_classes);
  qsort (names, n_classes, sizeof *names, compare_strings);
  if (n_classes < 2)
    {
      g_set_error (error, NL_DATA_ERROR, NL_DATA_ERROR_CORRUPT,
                   "%s: column %d ('%s') holds one class ('%s') in all %" G_GINT64_FORMAT
                   " rows; classification needs two at least", t->path, t->label_col, t->header[t->label_col],
                   names[0], n);
      return FALSE;
    }
  g_autoptr (GHashTable) index = g_hash_table_new (g_str_hash, g_str_equal);
  d->base.class_names = g_new0 (char *, n_classes + 1);
  for (guint c = 0; c < n_classes; c++)
    {
      d->base.class_names[c] = g_strdup (names[c]);
      g_hash_table_insert (index, names[c], GUINT_TO_POINTER (c));
    }
  d->base.n_classes = (int) n_classes;
  d->labels = g_new (float, MAX (n, 1));
  for (int64_t r = 0; r < n; r++)
    d->labels[r] = (float) GPOINTER_TO_UINT (g_hash_table_lookup (index, t->row_labels->pdata[r]));
  return TRUE;
}

static char *
read_contents (const char *path, gsize *size, GError **error)
{
  char *contents = NULL;
  g_autoptr (GError) why = NULL;
  if (!g_file_get_contents (path, &contents, size, &why))
    g_set_error (error, NL_DATA_ERROR, NL_DATA_ERROR_NOT_FOUND, "cannot open %s: %s", path, why->message);
  return contents;
}

/* ", 3 rows without a token skipped, 1 row cut at 1 MB" or "" */
static char *
row_notes (const NlDataset *ds)
{
  GString *s = g_string_new (NULL);
  if (ds->n_skipped_rows)
    g_string_append_printf (s, ", %" G_GINT64_FORMAT " rows without a token skipped", ds->n_skipped_rows);
  if (ds->n_truncated_rows)
    g_string_append_printf (s, ", %" G_GINT64_FORMAT " rows cut at 1 MB", ds->n_truncated_rows);
  return g_string_free (s, FALSE);
}

static NlTokenizerKind
tokenizer_of (const NlDatasetOptions *opts)
{
  return opts->vocab ? nl_vocab_kind (opts->vocab) : opts->tokenizer;
}

/* The split, the vocabulary and the description once the rows are read. */
static gboolean
finish_text (NlTextDataset *d, TextRead *t, gboolean train, const NlDatasetOptions *opts, GError **error)
{
  int64_t n = t->row_labels->len, m = 0;
  if (n == 0)
    {
      if (d->base.n_skipped_rows)
        g_set_error (error, NL_DATA_ERROR, NL_DATA_ERROR_CORRUPT,
                     "%s: every text in column %d ('%s') is empty (%" G_GINT64_FORMAT " rows without a token)",
                     t->path, t->text_col, t->header[t->text_col], d->base.n_skipped_rows);
      else
        g_set_error (error, NL_DATA_ERROR, NL_DATA_ERROR_CORRUPT, "%s has a header line but no data rows", t->path);
      return FALSE;
    }
  if (!set_classes (d, t, n, error) || !(d->rows = nl_dataset_split (n, opts->val_fraction, train, t->path, &m, error)))
    return FALSE;
  d->base.length = m;
  d->base.sample_shape = nl_shape_of (1, (int64_t) d->T);
  d->counts = g_new0 (int64_t, MAX (d->tokens->len, 1));
  for (int64_t i = 0; i < m; i++)
    {
      int64_t len;
      const gint32 *ids = sample_ids (d, i, &len);
      count_ids (ids, len, d->counts);
    }
  if (!set_vocab (d, opts, tokenizer_of (opts), train, d->counts, t->path, error))
    return FALSE;
  g_autofree char *notes = row_notes (&d->base);
  d->base.description = g_strdup_printf (
    "Text %s (%" G_GINT64_FORMAT " of %" G_GINT64_FORMAT " rows, %d classes from '%s', %s tokens of '%s', "
    "%d in the vocabulary, %d per sample%s) from %s", train ? "train" : "validation", m, n, d->base.n_classes,
    t->header[t->label_col], nl_tokenizer_kind_name (tokenizer_of (opts)), t->header[t->text_col],
    nl_vocab_size (d->base.vocab), d->T, notes, t->path);
  return TRUE;
}

/* Both kinds' start: default options, the file's bytes, an empty dataset. */
static NlTextDataset *
text_open (const char *path, gboolean lm, const NlDatasetOptions **opts, char **contents, gsize *size,
           GError **error)
{
  static const NlDatasetOptions defaults = { 0 };
  if (!*opts)
    *opts = &defaults;
  *contents = read_contents (path, size, error);
  return *contents ? text_new (lm, *opts) : NULL;
}

NlDataset *
nl_text_dataset_open (const char *path, gboolean train, const NlDatasetOptions *opts, GError **error)
{
  gsize size = 0;
  g_autofree char *contents = NULL;
  NlTextDataset *d = text_open (path, FALSE, &opts, &contents, &size, error);
  if (!d)
    return NULL;
  d->row_start = g_array_new (FALSE, FALSE, sizeof (int64_t));
  TextRead t = { .path = path, .row_labels = g_ptr_array_new (),
                 .labels = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL) };
  gboolean ok = read_text_file (d, &t, contents, size, tokenizer_of (opts), opts, error)
                && finish_text (d, &t, train, opts, error);
  g_strfreev (t.header);
  g_ptr_array_free (t.row_labels, TRUE);
  g_hash_table_destroy (t.labels);
  if (!ok)
    {
      nl_dataset_free (&d->base);
      return NULL;
    }
  return &d->base;
}

/* ---- text-lm: one token stream ---- */

/* Every line (cut at 1 MB, counted) with its newline: char tokens keep it. */
static gboolean
read_lm_file (NlTextDataset *d, const char *path, const char *contents, gsize size, NlTokenizerKind kind,
              GError **error)
{
  const char *p = contents, *end = contents + size;
  if (size >= 3 && memcmp (p, "\xef\xbb\xbf", 3) == 0)
    p += 3;
  for (int64_t line = 1; p < end; line++)
    {
      const char *eol = memchr (p, '\n', end - p);
      const char *next = eol ? eol + 1 : end;
      if (!add_text (d, kind, p, (eol ? eol : end) - p, path, line, "", error))
        return FALSE;
      if (eol)
        nl_tokenize (kind, "\n", 1, intern_token, d, NULL);
      p = next;
    }
  return TRUE;
}

/* Windows, the chronological split, the vocabulary and the description. */
static gboolean
finish_lm (NlTextDataset *d, const char *path, gboolean train, const NlDatasetOptions *opts, GError **error)
{
  int64_t n_tokens = d->stream->len, T = d->T;
  int64_t windows = n_tokens > 0 ? (n_tokens - 1) / T : 0;
  if (windows == 0)
    {
      g_set_error (error, NL_DATA_ERROR, NL_DATA_ERROR_CORRUPT,
                   "%s: %" G_GINT64_FORMAT " tokens are too few for one sample of %" G_GINT64_FORMAT
                   " tokens and its next-token labels (%" G_GINT64_FORMAT " tokens at least)",
                   path, n_tokens, T, T + 1);
      return FALSE;
    }
  double vf = opts->val_fraction;
  int64_t n_val = vf > 0 ? (int64_t) llround (vf * (double) windows) : 0;
  int64_t n_train = windows - n_val;
  int64_t first = vf == 0 || train ? 0 : n_train, m = vf == 0 ? windows : train ? n_train : n_val;
  if (m == 0)
    {
      g_set_error (error, NL_DATA_ERROR, NL_DATA_ERROR_SPEC,
                   "%s: a validation fraction of %g of %" G_GINT64_FORMAT " windows leaves the %s side empty", path,
                   vf, windows, train ? "training" : "validation");
      return FALSE;
    }
  d->first_window = first;
  d->base.length = m;
  d->base.sample_shape = nl_shape_of (1, T);
  d->base.label_shape = nl_shape_of (1, T);
  d->counts = g_new0 (int64_t, MAX (d->tokens->len, 1));
  count_ids ((const gint32 *) d->stream->data + first * T, m * T + 1, d->counts);
  /* the training side's counts are this side's when it is the training side */
  if (!set_vocab (d, opts, tokenizer_of (opts), train, d->counts, path, error))
    return FALSE;
  d->base.n_classes = nl_vocab_size (d->base.vocab);
  g_autofree char *notes = row_notes (&d->base);
  d->base.description = g_strdup_printf (
    "Text-LM %s (%" G_GINT64_FORMAT " of %" G_GINT64_FORMAT " windows of %" G_GINT64_FORMAT " %s tokens, "
    "%d in the vocabulary%s) from %s", train ? "train" : "validation", m, windows, T,
    nl_tokenizer_kind_name (tokenizer_of (opts)), nl_vocab_size (d->base.vocab), notes, path);
  return TRUE;
}

NlDataset *
nl_text_lm_dataset_open (const char *path, gboolean train, const NlDatasetOptions *opts, GError **error)
{
  gsize size = 0;
  g_autofree char *contents = NULL;
  NlTextDataset *d = text_open (path, TRUE, &opts, &contents, &size, error);
  if (!d)
    return NULL;
  if (!read_lm_file (d, path, contents, size, tokenizer_of (opts), error)
      || !finish_lm (d, path, train, opts, error))
    {
      nl_dataset_free (&d->base);
      return NULL;
    }
  return &d->base;
}
