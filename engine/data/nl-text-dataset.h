/* nl-text-dataset.h — the text kinds of dataset spec (rows of
 * nl-dataset-kind.c):
 *
 * text:FILE.csv|.tsv — classification. A header line names the columns
 *   (comma-separated, or tab-separated when the header has tabs and no
 *   comma; fields may be double-quoted, "" is a quote, and a quoted field
 *   may span lines). opts->text_column (default "text") is the text,
 *   opts->label_column (default "label") the class: class names are the
 *   sorted (strcmp) distinct label strings of the whole file, their index
 *   the label; a single class is an error. Sample: (max_length) token ids
 *   as floats, padded with 0. The split is nl_dataset_split's over the
 *   rows; the vocabulary is built from the training side's texts.
 * text-lm:FILE.txt — next-token prediction. The whole file is one token
 *   stream; sample i is ids[iT .. iT+T) and its label (label_shape (T))
 *   ids[iT+1 .. iT+T+1), T = max_length: non-overlapping windows. The last
 *   round(val_fraction * windows) windows are the validation side; the
 *   vocabulary is built from the training windows' tokens. n_classes is
 *   the vocabulary's size.
 *
 * Both: opts->vocab NULL builds the vocabulary (training side only;
 * opening the validation side without one is an NL_DATA_ERROR_SPEC
 * error), else ds->vocab is a reference to it. Rows (text-lm: lines) over
 * 1 MB are cut at 1 MB on a character boundary and counted
 * (ds->n_truncated_rows). A text with no token (empty, or only
 * punctuation for word tokens) is skipped and counted (n_skipped_rows);
 * only a file with no token at all is refused. Errors name the file and
 * the 1-based line (and the column): a missing column, invalid UTF-8, a
 * row with too few fields, a single class. */
#pragma once

#include "engine/data/nl-dataset.h"

G_BEGIN_DECLS

#define NL_TEXT_MAX_ROW_BYTES (1024 * 1024)
#define NL_TEXT_DEFAULT_MAX_LENGTH 128

NlDataset *nl_text_dataset_open (const char *path, gboolean train, const NlDatasetOptions *opts, GError **error);
NlDataset *nl_text_lm_dataset_open (const char *path, gboolean train, const NlDatasetOptions *opts,
                                    GError **error);

/* TRUE for a dataset of either kind. */
gboolean nl_text_dataset_is (const NlDataset *ds);
/* Sample i's tokens as the tokenizer gave them (before the vocabulary:
 * an unknown word is itself here, <unk> in the sample): the first `max` of
 * them into tokens[] (borrowed, valid while ds lives; tokens may be NULL
 * with max 0). Returns how many it has, before truncation to max_length. */
int64_t nl_text_dataset_tokens (NlDataset *ds, int64_t i, const char **tokens, int64_t max);
/* The distinct tokens as read (provisional, before the vocabulary) and
 * how often each occurs in this side's samples (text-lm: windows and the
 * last label token); returns how many (all borrowed). */
gsize nl_text_dataset_token_counts (NlDataset *ds, const char *const **tokens, const int64_t **counts);
/* The tokens per sample (max_length) */
int nl_text_dataset_max_length (const NlDataset *ds);

G_END_DECLS
