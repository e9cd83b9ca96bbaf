/* cli-data-options.h — the options that name a dataset and say how to read
 * it (--dataset, --label-column, --regression, --image-size,
 * --val-dataset, --val-fraction, --mean, --std; text: --text-column,
 * --tokenizer, --vocab-size, --min-count, --max-length; series: --target,
 * --window, --horizon), parsed and checked once
 * for every command that takes them: train and sweep (a run's data), fork
 * (another dataset for a run's weights). */
#pragma once

#include <glib.h>

#include "engine/train/nl-run-config.h"

typedef struct {
  char *dataset, *label_column, *image_size, *val_dataset;
  char *text_column, *tokenizer, *target;  /* text and series data */
  int vocab_size, min_count, max_length, window, horizon;  /* -1: not given */
  gboolean regression;
  double val_fraction, mean, std;   /* NAN: not given */
  int image_width, image_height;    /* from image_size, after finish */
  GPtrArray *texts;                 /* help texts made for the entries */
} NlCliDataOptions;

void nl_cli_data_options_init (NlCliDataOptions *d);
void nl_cli_data_options_clear (NlCliDataOptions *d);
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (NlCliDataOptions, nl_cli_data_options_clear)
/* Appends the entries to entries (a GArray of GOptionEntry), their help
 * texts starting with prefix ("" or "fork: "). The notes, in parentheses,
 * say what a missing --dataset, --mean and --std mean (mean_note NULL:
 * the defaults of the dataset's kind). */
void nl_cli_data_options_add_entries (NlCliDataOptions *d, GArray *entries, const char *prefix,
                                      const char *dataset_note, const char *mean_note);
/* Every dataset kind as a spec is written, for help texts:
 * "fashion-mnist[:DIR], ..., csv:FILE or packed:FILE" (g_free). */
char *nl_cli_dataset_synopsis (void);
/* Whether any of them was given. */
gboolean nl_cli_data_options_given (const NlCliDataOptions *d);
/* After parsing: checks each given option against the run settings'
 * limits. Returns 0, or the exit status of a usage error it printed. */
int nl_cli_data_options_finish (NlCliDataOptions *d);
/* Sets what was given in rc. A new --dataset brings its default input
 * normalisation when dataset_defaults (train: also without --dataset),
 * else the normalisation stays rc's (weights trained with it); --mean and
 * --std set it in either case. */
void nl_cli_data_options_apply (const NlCliDataOptions *d, NlRunConfig *rc, gboolean dataset_defaults);
