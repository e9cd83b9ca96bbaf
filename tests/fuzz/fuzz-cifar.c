/* fuzz-cifar.c — a CIFAR-10 binary batch (engine/data/nl-cifar-dataset.c),
 * read as the test split of a folder holding only test_batch.bin. */
#include <glib/gstdio.h>

#include "nl-fuzz.h"
#include "engine/data/nl-dataset.h"

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  nl_fuzz_init ();
  g_autofree char *path = nl_fuzz_write ("cifar/test_batch.bin", data, size);
  g_autofree char *dir = g_path_get_dirname (path);
  g_autoptr (GError) error = NULL;
  g_autoptr (NlDataset) ds = nl_cifar_dataset_open (dir, FALSE, &error);
  if (ds)
    nl_fuzz_read_samples (ds);
  g_unlink (path);
  return 0;
}
