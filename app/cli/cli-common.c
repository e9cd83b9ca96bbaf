/* cli-common.c — error reporting and the progress line. */
#include "cli-common.h"
#include "core/nl-comm.h"

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

int
nl_cli_fail (const GError *error)
{
  fprintf (stderr, "netloom-cli: %s\n", error ? error->message : "failed");
  return 1;
}

int
nl_cli_usage_error (const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  g_autofree char *msg = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  /* under mpirun every process read the same command line: rank 0 says it */
  if (!nl_comm_world () || nl_comm_world ()->rank == 0)
    fprintf (stderr, "netloom-cli: %s\n", msg);
  return 2;
}

struct NlProgress {
  gint64 last_draw;
};

NlProgress *
nl_progress_new (void)
{
  if (!isatty (STDERR_FILENO))
    return NULL;
  return g_new0 (NlProgress, 1);
}

void
nl_progress_update (NlProgress *p, const char *label, int64_t done, int64_t total, double elapsed, double loss)
{
  enum { WIDTH = 30 };
  char bar[WIDTH + 1];
  gint64 now = g_get_monotonic_time ();
  int filled;
  double eta;

  /* at most ~10 redraws a second: the terminal must not slow training */
  if (!p || (now - p->last_draw < 100000 && done < total))
    return;
  p->last_draw = now;
  filled = total > 0 ? (int) (WIDTH * done / total) : 0;
  for (int i = 0; i < WIDTH; i++)
    bar[i] = i < filled ? '#' : '-';
  bar[WIDTH] = '\0';
  eta = done > 0 ? elapsed * (total - done) / done : 0;
  fprintf (stderr, "\r\033[K%s [%s] %" G_GINT64_FORMAT "/%" G_GINT64_FORMAT "  loss %.4f  %.0fs elapsed, ETA %.0fs",
           label, bar, done, total, loss, elapsed, eta);
  fflush (stderr);
}

void
nl_progress_clear (NlProgress *p)
{
  if (p)
    {
      fprintf (stderr, "\r\033[K");
      fflush (stderr);
    }
}

void
nl_progress_free (NlProgress *p)
{
  g_free (p);
}

static volatile sig_atomic_t interrupted;

static void
on_interrupt (int sig)
{
  interrupted = 1;
  signal (sig, SIG_DFL); /* a second Ctrl-C ends the process at once */
}

void
nl_cli_catch_interrupt (void)
{
  signal (SIGINT, on_interrupt);
  signal (SIGTERM, on_interrupt);
}

gboolean
nl_cli_interrupted (void)
{
  return interrupted != 0;
}

gboolean
nl_cli_parse (GOptionContext *ctx, GOptionEntry *entries, int *argc, char ***argv, const char *cmd, int *status)
{
  g_autoptr (GError) error = NULL;
  g_option_context_add_main_entries (ctx, entries, NULL);
  if (!g_option_context_parse (ctx, argc, argv, &error))
    {
      *status = nl_cli_usage_error ("%s (see 'netloom-cli %s --help')", error->message, cmd);
      return FALSE;
    }
  return TRUE;
}

NlProject *
nl_cli_open_project (const char *path, int *status)
{
  g_autoptr (GError) error = NULL;
  NlProject *p;
  if (!path)
    {
      *status = nl_cli_usage_error ("--project FILE is required");
      return NULL;
    }
  p = nl_project_open (path, FALSE, &error);
  if (!p)
    *status = nl_cli_fail (error);
  return p;
}

const char *
nl_cli_json_number (char *buf, gsize size, int decimals, double v)
{
  if (!isfinite (v))
    return "null";
  /* past the buffer (a loss of 1e300 has 300 digits) an exponent keeps it a number */
  if (g_snprintf (buf, size, "%.*f", decimals, v) >= (gint) size)
    g_snprintf (buf, size, "%.*e", decimals, v);
  return buf;
}
