/* main.c — netloom-cli: the engine without a display. One file per command
 * group; this one dispatches. */
#include <locale.h>
#include <stdio.h>
#include <string.h>

#include "cli-common.h"
#include "core/nl-backend.h"
#include "core/nl-comm.h"
#include "engine/train/nl-data-parallel.h"

typedef struct {
  const char *name;
  int (*run) (int argc, char **argv);
  const char *summary;
  gboolean group;  /* runs on every process under mpirun */
} Command;

static const Command commands[] = {
  { "train", nl_cli_train, "train a network on a dataset", TRUE },
  { "plan", nl_cli_plan, "show the static memory plan of a network" },
  { "pack", nl_cli_pack, "pack a dataset into one record file" },
  { "project", nl_cli_project, "create (new [--sample]) or describe (info) a project" },
  { "runs", nl_cli_runs, "list a project's runs" },
  { "resume", nl_cli_resume, "continue a run from its last checkpoint", TRUE },
  { "fork", nl_cli_fork, "start a new run from a checkpoint, with changed settings", TRUE },
  { "watch", nl_cli_watch, "follow a run that another process trains" },
  { "metrics", nl_cli_metrics, "print every stored metric point of a run" },
  { "layers", nl_cli_layers, "a run's layer statistics at one step: norms, update ratios, activations" },
  { "export", nl_cli_export, "write a run's weights (safetensors) or model (ONNX)" },
  { "evaluate", nl_cli_evaluate, "a checkpoint's accuracy, per-class scores and confusion matrix" },
  { "predict", nl_cli_predict, "classify image files, dataset samples or texts with a checkpoint" },
  { "generate", nl_cli_generate, "continue a prompt with a language-model run (text-lm: data)" },
  { "quantize", nl_cli_quantize, "an INT8 model of a checkpoint: calibrate, compare with fp32, store" },
  { "explain", nl_cli_explain, "where a checkpoint looked in an image: saliency, Grad-CAM or occlusion map" },
  { "import-weights", nl_cli_import_weights, "load safetensors weights into a project network" },
  { "import-onnx", nl_cli_import_onnx, "an ONNX model as a project network with its weights" },
  { "devices", nl_cli_devices, "list the CPU and the GPUs training can run on" },
  { "sweep", nl_cli_sweep, "search the run settings: a queue of trials, pruned early (--resume continues one)",
    TRUE },
  { "sweeps", nl_cli_sweeps, "list a project's sweeps" },
  { "profile", nl_cli_profile, "where the time of a profiled run went (train --profile): per layer and op" },
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
      {
        g_autoptr (GError) error = NULL;
        int rc;
        /* the training commands join mpirun's job (data parallelism) */
        if (commands[i].group && !nl_comm_world_init (&error))
          return nl_cli_fail (error);
        rc = commands[i].run (argc - 1, argv + 1);
        /* a group command may train several jobs: rank 0 ends them; a
         * process that returned before following (bad options, the same
         * on every rank) still takes rank 0's word */
        if (commands[i].group && nl_comm_world ())
          {
            if (nl_comm_world ()->rank == 0)
              nl_dp_end_jobs (nl_comm_world ());
            else if (!nl_dp_jobs_ended ())
              rc = MAX (rc, nl_cli_follow (NULL, NULL));
          }
        nl_backend_shutdown_all ();
        nl_comm_world_finalize ();
        return rc;
      }
  fprintf (stderr, "netloom-cli: unknown command '%s' (see 'netloom-cli --help')\n", argv[1]);
  return 2;
}
