/* fuzz-text.c — the text and text-lm datasets (engine/data/nl-text-dataset.c),
 * with their tokenizer and vocabulary. Input: 1 byte of options (bit 0: char
 * tokens, bit 1: text-lm, else a text CSV, bit 2: a validation fraction of
 * 0.25, bit 3: also the validation side with the training vocabulary,
 * bits 4-5: max_length 1, 4, 16 or 128, bit 6: a vocabulary of 8, bit 7:
 * min_count 2), then the file. */
#include <glib/gstdio.h>

#include "nl-fuzz.h"
#include "engine/data/nl-dataset.h"
#include "engine/data/nl-text-dataset.h"

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  static const int lengths[] = { 1, 4, 16, 128 };
  nl_fuzz_init ();
  if (size < 1)
    return 0;
  NlDatasetOptions opts = {
    .tokenizer = data[0] & 1 ? NL_TOKENIZER_CHAR : NL_TOKENIZER_WORD,
    .val_fraction = data[0] & 4 ? 0.25 : 0,
    .max_length = lengths[(data[0] >> 4) & 3],
    .vocab_size = data[0] & 64 ? 8 : 0,
    .min_count = data[0] & 128 ? 2 : 0,
  };
  gboolean lm = data[0] & 2;
  g_autofree char *path = nl_fuzz_write (lm ? "data.txt" : "data.csv", data + 1, size - 1);
  g_autoptr (GError) error = NULL;
  g_autoptr (NlDataset) ds = lm ? nl_text_lm_dataset_open (path, TRUE, &opts, &error)
                                : nl_text_dataset_open (path, TRUE, &opts, &error);
  if (ds)
    {
      g_assert_true (ds->vocab && nl_vocab_size (ds->vocab) <= (opts.vocab_size ? opts.vocab_size : 20000));
      nl_fuzz_read_samples (ds);
      const char *tokens[4];
      for (int64_t i = 0; i < MIN (ds->length, 4); i++)
        g_assert_true (nl_text_dataset_tokens (ds, i, tokens, 4) >= (lm ? opts.max_length : 1));
      if (data[0] & 8)
        {
          g_autoptr (GError) verror = NULL;
          opts.vocab = ds->vocab;
          g_autoptr (NlDataset) val = lm ? nl_text_lm_dataset_open (path, FALSE, &opts, &verror)
                                         : nl_text_dataset_open (path, FALSE, &opts, &verror);
          if (val)
            nl_fuzz_read_samples (val);
        }
    }
  g_unlink (path);
  return 0;
}
