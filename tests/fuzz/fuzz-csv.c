/* fuzz-csv.c — a CSV file (engine/data/nl-csv-dataset.c). Input: 1 byte
 * of options (bit 0: regression, bits 1-2: the label column, default,
 * "0", "label" or "2", bit 3: a validation fraction of 0.25, bit 4: the
 * validation side), then the file. */
#include <glib/gstdio.h>

#include "nl-fuzz.h"
#include "engine/data/nl-dataset.h"

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  static const char *const columns[] = { NULL, "0", "label", "2" };
  nl_fuzz_init ();
  if (size < 1)
    return 0;
  NlDatasetOptions opts = {
    .regression = data[0] & 1,
    .label_column = columns[(data[0] >> 1) & 3],
    .val_fraction = data[0] & 8 ? 0.25 : 0,
  };
  gboolean train = !(data[0] & 16);
  g_autofree char *path = nl_fuzz_write ("data.csv", data + 1, size - 1);
  g_autoptr (GError) error = NULL;
  g_autoptr (NlDataset) ds = nl_csv_dataset_open (path, train, &opts, &error);
  if (ds)
    nl_fuzz_read_samples (ds);
  g_unlink (path);
  return 0;
}
