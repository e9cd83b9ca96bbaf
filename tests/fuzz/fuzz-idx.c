/* fuzz-idx.c — a pair of IDX files (engine/data/nl-idx-dataset.c), raw or
 * gzipped. Input: 1 byte of flags (bit 0: images named .gz, bit 1: labels
 * named .gz, bits 2-5: n_classes, 0 infers it), a 4-byte little-endian
 * length of the images file, the images file, then the labels file. */
#include <glib/gstdio.h>
#include <string.h>

#include "nl-fuzz.h"
#include "engine/data/nl-dataset.h"

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  nl_fuzz_init ();
  if (size < 5)
    return 0;
  guint8 flags = data[0];
  guint32 n_images;
  memcpy (&n_images, data + 1, 4);
  n_images = GUINT32_FROM_LE (n_images);
  data += 5, size -= 5;
  if (n_images > size)
    n_images = (guint32) size;
  g_autofree char *images = nl_fuzz_write (flags & 1 ? "images.gz" : "images", data, n_images);
  g_autofree char *labels = nl_fuzz_write (flags & 2 ? "labels.gz" : "labels", data + n_images, size - n_images);
  g_autofree char *images_spec = g_build_filename (nl_fuzz_dir (), "images", NULL);
  g_autofree char *labels_spec = g_build_filename (nl_fuzz_dir (), "labels", NULL);

  g_autoptr (GError) error = NULL;
  g_autoptr (NlDataset) ds = nl_idx_dataset_open_full (images_spec, labels_spec, (flags >> 2) & 15, NULL, &error);
  if (ds)
    nl_fuzz_read_samples (ds);
  g_unlink (images);
  g_unlink (labels);
  return 0;
}
