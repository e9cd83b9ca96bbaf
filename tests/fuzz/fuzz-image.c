/* fuzz-image.c — a PNG or JPEG image through the folder dataset
 * (engine/data/nl-folder-dataset.c). Input: 1 byte of options (bit 0: the
 * file is named .jpg, not .png; bit 1: a valid 2x2 PNG comes first and
 * sets the size, so the input is resized to it; bits 2-4: a resize to
 * that many pixels + 1 square, 0 = none), then the image file. */
#include <glib/gstdio.h>

#include "nl-fuzz.h"
#include "engine/data/nl-dataset.h"

static const guint8 small_png[] = {
  0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52, 0x00, 0x00,
  0x00, 0x02, 0x00, 0x00, 0x00, 0x02, 0x08, 0x02, 0x00, 0x00, 0x00, 0xfd, 0xd4, 0x9a, 0x73, 0x00, 0x00, 0x00,
  0x16, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0x60, 0x60, 0x64, 0x62, 0x66, 0x61, 0x65, 0x60, 0x63, 0xe7,
  0xe0, 0xe4, 0xe2, 0x06, 0x00, 0x01, 0x3b, 0x00, 0x43, 0xc2, 0x5d, 0xd5, 0x4b, 0x00, 0x00, 0x00, 0x00, 0x49,
  0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82,
};

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  nl_fuzz_init ();
  if (size < 1)
    return 0;
  guint8 flags = data[0];
  int side = (flags >> 2) & 7;
  NlDatasetOptions opts = { .image_width = side ? side + 1 : 0, .image_height = side ? side + 1 : 0 };
  if (flags & 2)
    g_free (nl_fuzz_write ("folder/a/0.png", small_png, sizeof small_png));
  g_free (nl_fuzz_write (flags & 1 ? "folder/b/1.jpg" : "folder/b/1.png", data + 1, size - 1));
  g_autofree char *dir = g_build_filename (nl_fuzz_dir (), "folder", NULL);
  g_autoptr (GError) error = NULL;
  g_autoptr (NlDataset) ds = nl_folder_dataset_open (dir, TRUE, &opts, &error);
  if (ds)
    nl_fuzz_read_samples (ds);
  nl_fuzz_clear ();
  return 0;
}
