/* fuzz-trace.c — a trace file (core/nl-trace-table.c, what `netloom-cli
 * profile` reads): refused with one message, or summed up with sane rows. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nl-fuzz.h"
#include "core/nl-trace-table.h"

static void
check_rows (const NlTraceTable *t, const GArray *rows)
{
  double share = 0, total = 0;
  for (guint i = 0; i < rows->len; i++)
    {
      const NlTraceRow *r = &g_array_index (rows, NlTraceRow, i);
      if (r->calls < 1 || !(r->total_ms >= 0) || !(r->share >= 0 && r->share <= 1 + 1e-9) || !r->name || !r->op)
        {
          fprintf (stderr, "fuzz-trace: a bad row %s\n", r->name ? r->name : "(null)");
          abort ();
        }
      share += r->share;
      total += r->total_ms;
    }
  if (share > 1 + 1e-6 || (isfinite (t->total_ms) && fabs (total - t->total_ms) > 1e-6 * MAX (1, t->total_ms)))
    {
      fprintf (stderr, "fuzz-trace: the rows add up to %g (share %g), the table says %g\n", total, share, t->total_ms);
      abort ();
    }
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  nl_fuzz_init ();
  g_autoptr (GError) error = NULL;
  g_autoptr (NlTraceTable) t = nl_trace_table_parse ((const char *) data, size, "trace.json", &error);
  if (!t)
    {
      if (!error || !g_str_has_prefix (error->message, "trace.json") || strchr (error->message, '\n'))
        {
          fprintf (stderr, "fuzz-trace: a refusal that is not one message naming the file: %s\n",
                   error ? error->message : "(none)");
          abort ();
        }
      return 0;
    }
  check_rows (t, t->layers);
  check_rows (t, t->ops);
  return 0;
}
