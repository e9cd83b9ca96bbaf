/* main.c — netloom-cli: the engine without a display. One file per command
 * group; this one dispatches. */
#include <locale.h>
#include <stdio.h>
#include <string.h>

#include "cli-common.h"

typedef struct {
  const char *name;
  int (*run) (int argc, char **argv);
  const char *summary;
} Command;

static const Command commands[] = {
  { "train", nl_cli_train, "train a network on a dataset" },
  { "plan", nl_cli_plan, "show the static memory plan of a network" },
  { "pack", nl_cli_pack, "pack a dataset into one record file" },
};

static void
usage (FILE *f)
{
  fprintf (f, "Usage: netloom-cli COMMAND [OPTION...]\n\nCommands:\n");
  for (gsize i = 0; i < G_N_ELEMENTS (commands); i++)
    fprintf (f, "  %-10s %s\n", commands[i].name, commands[i].summary);
  fprintf (f, "\nRun 'netloom-cli COMMAND --help' for a command's options.\n");
}

int
main (int argc, char **argv)
{
  setlocale (LC_ALL, "");
  if (argc < 2)
    {
      usage (stderr);
      return 2;
    }
  if (strcmp (argv[1], "--help") == 0 || strcmp (argv[1], "-h") == 0 || strcmp (argv[1], "help") == 0)
    {
      usage (stdout);
      return 0;
    }
  if (strcmp (argv[1], "--version") == 0)
    {
      printf ("netloom-cli 0.1.0\n");
      return 0;
    }
  for (gsize i = 0; i < G_N_ELEMENTS (commands); i++)
    if (strcmp (argv[1], commands[i].name) == 0)
      return commands[i].run (argc - 1, argv + 1);
  fprintf (stderr, "netloom-cli: unknown command '%s' (see 'netloom-cli --help')\n", argv[1]);
  return 2;
}
