/* cli-generate.c — `generate`: text from a language-model run, printed as
 * it is sampled (the prompt first), reproducible for a seed. */
#include <stdio.h>

#include "cli-common.h"
#include "engine/session/nl-generate.h"

static gboolean
print_piece (const char *piece, gpointer user)
{
  (void) user;
  fputs (piece, stdout);
  fflush (stdout);
  return !nl_cli_interrupted ();
}

int
nl_cli_generate (int argc, char **argv)
{
  g_autofree char *path = NULL, *prompt = NULL;
  gint64 run = 0, seed = 0;
  int tokens = 200;
  double temperature = 1.0;
  GOptionEntry entries[] = {
    { "project", 'p', 0, G_OPTION_ARG_FILENAME, &path, "The project", "FILE" },
    { "run", 'r', 0, G_OPTION_ARG_INT64, &run, "A run trained on text-lm: data", "ID" },
    { "prompt", 0, 0, G_OPTION_ARG_STRING, &prompt, "The text to continue", "TEXT" },
    { "tokens", 'n', 0, G_OPTION_ARG_INT, &tokens, "Tokens to generate (default 200)", "N" },
    { "temperature", 0, 0, G_OPTION_ARG_DOUBLE, &temperature,
      "Sampling temperature (default 1; 0: always the most likely token)", "T" },
    { "seed", 0, 0, G_OPTION_ARG_INT64, &seed, "Random seed of the sampling (default 0): the same seed, the same text",
      "S" },
    { NULL }
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new ("- continue a prompt with a language-model run");
  g_autoptr (GError) error = NULL;
  g_autoptr (NlProject) p = NULL;
  int status = 0;

  if (!nl_cli_parse (ctx, entries, &argc, &argv, "generate", &status))
    return status;
  if (argc > 1)
    return nl_cli_usage_error ("unexpected argument '%s'", argv[1]);
  if (run <= 0 || !prompt)
    return nl_cli_usage_error ("give --run ID and --prompt TEXT");
  if (tokens < 1)
    return nl_cli_usage_error ("--tokens must be at least 1");
  if (!(temperature >= 0))
    return nl_cli_usage_error ("--temperature must be 0 or more");
  if (!(p = nl_cli_open_project (path, &status)))
    return status;
  nl_cli_catch_interrupt ();
  fputs (prompt, stdout);
  g_autofree char *text = nl_generate_text_full (p, run, prompt, tokens, temperature, (guint64) seed, print_piece,
                                                 NULL, NULL, &error);
  if (!text)
    {
      fputs ("\n", stdout);
      return nl_cli_fail (error);
    }
  fputs ("\n", stdout);
  return 0;
}
