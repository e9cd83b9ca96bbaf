/* fuzz-record.c — a packed record file (engine/data/nl-record-reader.c,
 * nl-packed-dataset.c) through the public reader only, so it follows the
 * format's versions: every record from byte 0, the two halves of the file
 * as two readers, and the "packed:" dataset. */
#include <stdio.h>
#include <stdlib.h>
#include <glib/gstdio.h>

#include "nl-fuzz.h"
#include "engine/data/nl-packed-dataset.h"
#include "engine/data/nl-record-reader.h"

static int64_t
read_all (NlRecordReader *r)
{
  const guint8 *rec;
  size_t len;
  int64_t n = 0;
  volatile guint8 sum = 0;
  g_autoptr (GError) error = NULL;
  int got;
  while ((got = nl_record_reader_next (r, &rec, &len, &error)) == 1)
    {
      if (len)
        sum += rec[0] + rec[len - 1];
      n++;
    }
  (void) sum;  /* read so each record's bytes are touched, never looked at */
  return got == 0 ? n : -1;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  nl_fuzz_init ();
  g_autofree char *path = nl_fuzz_write ("data.rec", data, size);
  g_autoptr (GError) error = NULL;

  g_autoptr (NlRecordReader) whole = nl_record_reader_open (path, &error);
  int64_t n_whole = whole ? read_all (whole) : -1;
  /* readers over adjacent ranges read each record once: as many as one
   * reader over the whole file, where that one finds no damage */
  int64_t n_parts = 0;
  for (int part = 0; part < 2 && n_parts >= 0; part++)
    {
      g_clear_error (&error);
      g_autoptr (NlRecordReader) r = nl_record_reader_open_part (path, part, 2, &error);
      int64_t n = r ? read_all (r) : -1;
      n_parts = n < 0 ? -1 : n_parts + n;
    }
  if (n_whole >= 0 && n_parts >= 0 && n_whole != n_parts)
    {
      fprintf (stderr, "fuzz-record: %" G_GINT64_FORMAT " records from byte 0 but %" G_GINT64_FORMAT
               " from two halves\n", n_whole, n_parts);
      abort ();
    }

  g_clear_error (&error);
  g_autoptr (NlDataset) ds = nl_packed_dataset_open (path, &error);
  if (ds)
    nl_fuzz_read_samples (ds);
  g_unlink (path);
  return 0;
}
