/* nl-test-stop.c — a training process stopping itself at a step, for tests. */
#include "engine/train/nl-test-stop.h"

#include <signal.h>

GArray *
nl_test_stops_parse (void)
{
  const char *env = g_getenv ("NETLOOM_TEST_STOP_AT_STEP");
  g_auto (GStrv) parts = NULL;
  GArray *steps;
  if (!env || !*env)
    return NULL;
  steps = g_array_new (FALSE, FALSE, sizeof (int64_t));
  parts = g_strsplit (env, ",", -1);
  for (int i = 0; parts[i]; i++)
    {
      gint64 step;
      if (g_ascii_string_to_signed (parts[i], 10, 0, G_MAXINT64, &step, NULL))
        {
          int64_t at = step;
          g_array_append_val (steps, at);
        }
    }
  return steps;
}

void
nl_test_stop_maybe (GArray *stops, int64_t updates, void (*quiet) (gpointer user, gboolean quiet), gpointer user)
{
  for (guint i = 0; stops && i < stops->len; i++)
    if (g_array_index (stops, int64_t, i) == updates)
      {
        g_array_remove_index (stops, i);
        /* the caller's writers idle meanwhile: no lock held on the project */
        if (quiet)
          quiet (user, TRUE);
        raise (SIGSTOP);
        if (quiet)
          quiet (user, FALSE);
        return;
      }
}
