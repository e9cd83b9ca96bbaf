/* fuzz-series.c — the series dataset (engine/data/nl-series-dataset.c).
 * Input: 1 byte of options (bits 0-1: window 1, 2, 5 or 32, bits 2-3:
 * horizon 1, 2, 3 or 8, bit 4: a validation fraction of 0.25, bit 5: the
 * validation side, bit 6: the target column "b"), then the file. */
#include <glib/gstdio.h>

#include "nl-fuzz.h"
#include "engine/data/nl-dataset.h"
#include "engine/data/nl-series-dataset.h"

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  static const int windows[] = { 1, 2, 5, 32 }, horizons[] = { 1, 2, 3, 8 };
  nl_fuzz_init ();
  if (size < 1)
    return 0;
  NlDatasetOptions opts = {
    .window = windows[data[0] & 3],
    .horizon = horizons[(data[0] >> 2) & 3],
    .val_fraction = data[0] & 16 ? 0.25 : 0,
    .target_column = data[0] & 64 ? "b" : NULL,
  };
  g_autofree char *path = nl_fuzz_write ("data.csv", data + 1, size - 1);
  g_autoptr (GError) error = NULL;
  g_autoptr (NlDataset) ds = nl_series_dataset_open (path, !(data[0] & 32), &opts, &error);
  if (ds)
    {
      NlSeriesInfo info;
      g_assert_true (nl_series_dataset_info (ds, &info));
      g_assert_true (info.n_rows >= opts.window + opts.horizon && info.val_start_row <= info.n_rows);
      nl_fuzz_read_samples (ds);
    }
  g_unlink (path);
  return 0;
}
