/* nl-seq-preview.c — what the Data page shows of text and series datasets
 * (nl-seq-preview.h). */
#include "engine/session/nl-seq-preview.h"
#include "engine/data/nl-series-dataset.h"
#include "engine/data/nl-text-dataset.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
  const char *token;
  int64_t count;
} Ranked;

static int
compare_ranked (const void *a, const void *b)
{
  const Ranked *x = a, *y = b;
  if (x->count != y->count)
    return x->count > y->count ? -1 : 1;
  return strcmp (x->token, y->token);
}

/* The most frequent tokens, and the totals of tokens and unknown ones. */
static void
rank_tokens (NlTextPreview *t, NlDataset *ds)
{
  const char *const *tokens;
  const int64_t *counts;
  gsize n = nl_text_dataset_token_counts (ds, &tokens, &counts);
  g_autofree Ranked *r = g_new (Ranked, MAX (n, 1));
  gsize m = 0;
  for (gsize k = 0; k < n; k++)
    {
      if (counts[k] == 0)
        continue;
      t->n_tokens += counts[k];
      if (nl_vocab_lookup (ds->vocab, tokens[k]) == NL_VOCAB_UNK)
        t->unk_count += counts[k];
      r[m++] = (Ranked) { tokens[k], counts[k] };
    }
  t->n_unknown = t->unk_count;
  /* a full sort is fine: the preview runs once per dataset, off the main loop */
  qsort (r, m, sizeof *r, compare_ranked);
  t->n_top = (int) MIN (m, (gsize) NL_TEXT_PREVIEW_TOP);
  t->top = g_new0 (NlTokenCount, MAX (t->n_top, 1));
  for (int i = 0; i < t->n_top; i++)
    t->top[i] = (NlTokenCount) { g_strdup (r[i].token), r[i].count };
}

/* Sample lengths (tokens before truncation) as a histogram that shows the
 * truncation point. */
static gboolean
length_histogram (NlTextPreview *t, NlDataset *ds, GCancellable *cancellable, GError **error)
{
  g_autofree int64_t *len = g_new (int64_t, MAX (ds->length, 1));
  for (int64_t i = 0; i < ds->length; i++)
    {
      if ((i & 4095) == 0 && g_cancellable_set_error_if_cancelled (cancellable, error))
        return FALSE;
      len[i] = nl_text_dataset_tokens (ds, i, NULL, 0);
      t->longest = MAX (t->longest, len[i]);
      t->n_truncated += len[i] > t->max_length;
    }
  int64_t span = MAX (t->longest, (int64_t) t->max_length) + 1;
  t->bin_width = MAX ((span + NL_TEXT_PREVIEW_BINS - 1) / NL_TEXT_PREVIEW_BINS, 1);
  t->n_bins = (int) ((span + t->bin_width - 1) / t->bin_width);
  t->bins = g_new0 (int64_t, t->n_bins);
  for (int64_t i = 0; i < ds->length; i++)
    t->bins[MIN (len[i] / t->bin_width, (int64_t) t->n_bins - 1)]++;
  return TRUE;
}

NlTextPreview *
nl_text_preview_build (NlDataset *ds, const int64_t *indices, int n_samples, GCancellable *cancellable,
                       GError **error)
{
  if (!nl_text_dataset_is (ds) || !ds->vocab)
    return NULL;
  NlTextPreview *t = g_new0 (NlTextPreview, 1);
  t->language_model = ds->label_shape.ndim > 0;
  t->tokenizer = nl_vocab_kind (ds->vocab);
  t->vocab_size = nl_vocab_size (ds->vocab);
  t->max_length = nl_text_dataset_max_length (ds);
  t->n_truncated_rows = ds->n_truncated_rows;
  t->n_skipped_rows = ds->n_skipped_rows;
  if (!length_histogram (t, ds, cancellable, error))
    {
      nl_text_preview_free (t);
      return NULL;
    }
  rank_tokens (t, ds);
  t->samples = g_new0 (NlTextSamplePreview, MAX (n_samples, 1));
  g_autofree const char **buf = g_new (const char *, MAX (t->max_length, 1));
  for (int i = 0; i < n_samples; i++)
    {
      NlTextSamplePreview *s = &t->samples[i];
      s->n_total = nl_text_dataset_tokens (ds, indices[i], buf, t->max_length);
      s->n_tokens = (int) MIN (s->n_total, (int64_t) t->max_length);
      s->tokens = g_new0 (char *, s->n_tokens + 1);
      s->unknown = g_new0 (gboolean, MAX (s->n_tokens, 1));
      for (int k = 0; k < s->n_tokens; k++)
        {
          s->tokens[k] = g_strdup (buf[k]);
          s->unknown[k] = nl_vocab_lookup (ds->vocab, buf[k]) == NL_VOCAB_UNK;
        }
    }
  t->n_samples = n_samples;
  return t;
}

void
nl_text_preview_free (NlTextPreview *t)
{
  if (!t)
    return;
  for (int i = 0; i < t->n_top; i++)
    g_free (t->top[i].token);
  g_free (t->top);
  g_free (t->bins);
  for (int i = 0; t->samples && i < t->n_samples; i++)
    {
      g_strfreev (t->samples[i].tokens);
      g_free (t->samples[i].unknown);
    }
  g_free (t->samples);
  g_free (t);
}

NlSeriesPreview *
nl_series_preview_build (NlDataset *ds)
{
  NlSeriesInfo info;
  if (!nl_series_dataset_info (ds, &info))
    return NULL;
  NlSeriesPreview *s = g_new0 (NlSeriesPreview, 1);
  s->target = g_strdup (info.target);
  s->n_rows = info.n_rows;
  s->stride = MAX ((info.n_rows + NL_SERIES_PREVIEW_POINTS - 1) / NL_SERIES_PREVIEW_POINTS, 1);
  s->n_values = (int) ((info.n_rows + s->stride - 1) / s->stride);
  s->values = g_new (float, MAX (s->n_values, 1));
  for (int k = 0; k < s->n_values; k++)
    s->values[k] = info.values[k * s->stride];
  s->val_start_row = info.val_start_row;
  s->window = info.window;
  s->horizon = info.horizon;
  s->n_columns = info.n_columns;
  s->columns = g_strdupv ((char **) info.columns);
  s->target_mean = info.target_mean;
  s->target_std = info.target_std;
  return s;
}

void
nl_series_preview_free (NlSeriesPreview *s)
{
  if (!s)
    return;
  g_free (s->target);
  g_free (s->values);
  g_strfreev (s->columns);
  g_free (s);
}
