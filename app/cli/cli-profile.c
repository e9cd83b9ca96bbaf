/* cli-profile.c — netloom-cli profile: a trace written by `train
 * --profile` summed up per layer and per op (MXNet's profiler.dumps()). */
#include <stdio.h>

#include "cli-common.h"
#include "core/nl-trace-table.h"

static void
print_rows (const GArray *rows, gboolean layers)
{
  for (guint i = 0; i < rows->len; i++)
    {
      const NlTraceRow *r = &g_array_index (rows, NlTraceRow, i);
      printf ("  %-24s %-20s %8" G_GINT64_FORMAT " %12.3f %10.4f %6.1f%%\n", r->name, layers ? r->op : "",
              r->calls, r->total_ms, r->mean_ms, 100 * r->share);
    }
}

static void
json_rows (const GArray *rows, gboolean layers)
{
  for (guint i = 0; i < rows->len; i++)
    {
      const NlTraceRow *r = &g_array_index (rows, NlTraceRow, i);
      g_autofree char *name = g_strescape (r->name, NULL), *op = g_strescape (r->op, NULL);
      printf ("%s{\"name\":\"%s\",%s%s%s\"calls\":%" G_GINT64_FORMAT ",\"total_ms\":%.6f,\"mean_ms\":%.6f,"
              "\"share\":%.6f}", i ? "," : "", name, layers ? "\"op\":\"" : "", layers ? op : "", layers ? "\"," : "",
              r->calls, r->total_ms, r->mean_ms, r->share);
    }
}

int
nl_cli_profile (int argc, char **argv)
{
  gboolean json = FALSE;
  GOptionEntry entries[] = {
    { "json", 0, 0, G_OPTION_ARG_NONE, &json, "Print one JSON object", NULL },
    { NULL }
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new ("TRACE.json - where the time of a profiled run went");
  g_autoptr (GError) error = NULL;
  g_autoptr (NlTraceTable) t = NULL;

  g_option_context_add_main_entries (ctx, entries, NULL);
  g_option_context_set_summary (ctx, "Sums the op spans of a trace written by 'netloom-cli train --profile FILE' per "
                                     "layer and per op type: calls, total and mean milliseconds and share of all op "
                                     "time (device time where the trace has it).");
  if (!g_option_context_parse (ctx, &argc, &argv, &error))
    return nl_cli_usage_error ("%s (see 'netloom-cli profile --help')", error->message);
  if (argc != 2)
    return nl_cli_usage_error (argc < 2 ? "a trace file is required" : "unexpected argument '%s'",
                               argc < 2 ? "" : argv[2]);
  t = nl_trace_table_load (argv[1], &error);
  if (!t)
    return nl_cli_fail (error);
  if (json)
    {
      g_autofree char *file = g_strescape (argv[1], NULL);
      printf ("{\"file\":\"%s\",\"events\":%" G_GINT64_FORMAT ",\"steps\":%" G_GINT64_FORMAT
              ",\"time\":\"%s\",\"total_ms\":%.6f,\"layers\":[", file, t->events, t->steps,
              t->device ? "device" : "host", t->total_ms);
      json_rows (t->layers, TRUE);
      printf ("],\"ops\":[");
      json_rows (t->ops, FALSE);
      printf ("]}\n");
      return 0;
    }
  printf ("%s: %" G_GINT64_FORMAT " steps, %.3f ms of %s op time\n\n", argv[1], t->steps, t->total_ms,
          t->device ? "device" : "host");
  printf ("  %-24s %-20s %8s %12s %10s %7s\n", "layer", "op", "calls", "total ms", "mean ms", "share");
  print_rows (t->layers, TRUE);
  printf ("\n  %-24s %-20s %8s %12s %10s %7s\n", "op", "", "calls", "total ms", "mean ms", "share");
  print_rows (t->ops, FALSE);
  return 0;
}
