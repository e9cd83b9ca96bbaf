/* cli-quantize.c — `quantize`: INT8 post-training quantization of a run's
 * checkpoint (nl_run_quantize), stored in the project beside the run's
 * checkpoints; prints what it measured. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli-common.h"
#include "engine/session/nl-run-quantize.h"

/* The phase on a terminal's stderr, redrawn in place. */
static void
show_phase (const char *phase, double fraction, gpointer user)
{
  static gint64 last;
  gint64 now = g_get_monotonic_time ();
  if (!GPOINTER_TO_INT (user) || (now - last < 100000 && fraction < 1))
    return;
  last = now;
  fprintf (stderr, "\r\033[K%s %3.0f%%", phase, 100 * fraction);
  fflush (stderr);
}

static void
print_json (gint64 run, const NlQuantizeResult *r)
{
  char b[4][64];
  g_autoptr (GString) s = g_string_new (NULL);
  g_string_append_printf (s, "{\"run\":%" G_GINT64_FORMAT ",\"int8_model\":%" G_GINT64_FORMAT ",\"checkpoint\":%"
                          G_GINT64_FORMAT ",\"epoch\":%d,\"method\":\"%s\",\"calibration_samples\":%d,"
                          "\"fp32_test_acc\":%s,\"int8_test_acc\":%s,\"fp32_images_per_s\":%s,"
                          "\"int8_images_per_s\":%s,\"points\":[",
                          run, r->int8_id, r->checkpoint, r->epoch, nl_quant_method_name (r->table->method),
                          r->table->calibration_samples, nl_cli_json_number (b[0], sizeof b[0], 6, r->fp32_test_acc),
                          nl_cli_json_number (b[1], sizeof b[1], 6, r->int8_test_acc),
                          nl_cli_json_number (b[2], sizeof b[2], 1, r->fp32_images_per_s),
                          nl_cli_json_number (b[3], sizeof b[3], 1, r->int8_images_per_s));
  for (guint i = 0; i < r->table->ranges->len; i++)
    {
      const NlQuantRange *q = &g_array_index (r->table->ranges, NlQuantRange, i);
      g_autofree char *name = g_strescape (q->point, NULL);
      g_string_append_printf (s, "%s{\"point\":\"%s\",\"min\":%s,\"max\":%s,\"threshold\":%s,\"unsigned\":%s}",
                              i ? "," : "", name, nl_cli_json_number (b[0], sizeof b[0], 6, q->min),
                              nl_cli_json_number (b[1], sizeof b[1], 6, q->max),
                              nl_cli_json_number (b[2], sizeof b[2], 6, q->threshold),
                              q->is_unsigned ? "true" : "false");
    }
  g_string_append (s, "]}");
  printf ("%s\n", s->str);
}

static void
print_text (gint64 run, const NlQuantizeResult *r)
{
  int w = 5;
  printf ("run %" G_GINT64_FORMAT ", checkpoint %" G_GINT64_FORMAT " (epoch %d): INT8 model %" G_GINT64_FORMAT
          " (%s calibration on %d training samples)\n\n", run, r->checkpoint, r->epoch, r->int8_id,
          nl_quant_method_name (r->table->method), r->table->calibration_samples);
  printf ("       test accuracy   images/s (batch 128)\n");
  printf ("fp32   %13.4f   %20.0f\n", r->fp32_test_acc, r->fp32_images_per_s);
  printf ("int8   %13.4f   %20.0f   (%.2fx)\n\n", r->int8_test_acc, r->int8_images_per_s,
          r->fp32_images_per_s > 0 ? r->int8_images_per_s / r->fp32_images_per_s : NAN);
  for (guint i = 0; i < r->table->ranges->len; i++)
    w = MAX (w, (int) strlen (g_array_index (r->table->ranges, NlQuantRange, i).point));
  printf ("%-*s  %12s  %12s  %12s  type\n", w, "point", "min", "max", "threshold");
  for (guint i = 0; i < r->table->ranges->len; i++)
    {
      const NlQuantRange *q = &g_array_index (r->table->ranges, NlQuantRange, i);
      printf ("%-*s  %12.6g  %12.6g  %12.6g  %s\n", w, q->point, q->min, q->max, q->threshold,
              q->is_unsigned ? "u8" : "s8");
    }
}

int
nl_cli_quantize (int argc, char **argv)
{
  g_autofree char *path = NULL, *which = NULL, *method_s = NULL;
  gint64 run = 0;
  int samples = 512;
  gboolean json = FALSE;
  GOptionEntry entries[] = {
    { "project", 'p', 0, G_OPTION_ARG_FILENAME, &path, "The project", "FILE" },
    { "run", 'r', 0, G_OPTION_ARG_INT64, &run, "The run", "ID" },
    { "checkpoint", 'c', 0, G_OPTION_ARG_STRING, &which, "best (default), last or an epoch", "ID" },
    { "calibration", 0, 0, G_OPTION_ARG_INT, &samples, "Calibrate on the first N training samples (default 512)",
      "N" },
    { "method", 'm', 0, G_OPTION_ARG_STRING, &method_s, "naive (min/max) or entropy (KL, default)", "METHOD" },
    { "json", 0, 0, G_OPTION_ARG_NONE, &json, "One JSON object", NULL },
    { NULL }
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new ("- an INT8 model of a run's checkpoint, calibrated and "
                                                         "stored with the run");
  g_autoptr (GError) error = NULL;
  g_autoptr (NlProject) p = NULL;
  NlQuantizeResult r = { 0 };
  NlQuantizeOptions o = { .method = NL_QUANT_ENTROPY };
  gboolean tty = !json && isatty (STDERR_FILENO);
  int status = 0;

  if (!nl_cli_parse (ctx, entries, &argc, &argv, "quantize", &status))
    return status;
  if (argc > 1)
    return nl_cli_usage_error ("unexpected argument '%s'", argv[1]);
  if (run <= 0)
    return nl_cli_usage_error ("give --run ID");
  if (samples < 1)
    return nl_cli_usage_error ("--calibration takes a number of samples >= 1, not %d", samples);
  if (method_s && !nl_quant_method_parse (method_s, &o.method))
    return nl_cli_usage_error ("--method is naive or entropy, not '%s'", method_s);
  o.which = which;
  o.calibration_samples = samples;
  if (!(p = nl_cli_open_project (path, &status)))
    return status;
  gboolean ok = nl_run_quantize (p, run, &o, show_phase, GINT_TO_POINTER (tty), &r, NULL, &error);
  if (tty)
    fprintf (stderr, "\r\033[K");
  if (!ok)
    return nl_cli_fail (error);
  if (json)
    print_json (run, &r);
  else
    print_text (run, &r);
  nl_quantize_result_clear (&r);
  return 0;
}
