/* cli-common.h — what the netloom-cli commands share. */
#pragma once

#include <glib.h>

#include "projects/nl-project.h"

/* Each command: argc/argv start at the command name. Returns the exit status. */
int nl_cli_train (int argc, char **argv);
int nl_cli_plan (int argc, char **argv);
int nl_cli_pack (int argc, char **argv);
int nl_cli_project (int argc, char **argv);
int nl_cli_runs (int argc, char **argv);
int nl_cli_resume (int argc, char **argv);
int nl_cli_fork (int argc, char **argv);
int nl_cli_watch (int argc, char **argv);
int nl_cli_metrics (int argc, char **argv);
int nl_cli_layers (int argc, char **argv);
int nl_cli_export (int argc, char **argv);
int nl_cli_import_weights (int argc, char **argv);
int nl_cli_import_onnx (int argc, char **argv);
int nl_cli_devices (int argc, char **argv);
int nl_cli_evaluate (int argc, char **argv);
int nl_cli_predict (int argc, char **argv);
int nl_cli_generate (int argc, char **argv);
int nl_cli_quantize (int argc, char **argv);
int nl_cli_explain (int argc, char **argv);
int nl_cli_sweep (int argc, char **argv);
int nl_cli_sweeps (int argc, char **argv);
int nl_cli_profile (int argc, char **argv);

/* Ctrl-C asks the running training to stop between batches. */
void nl_cli_catch_interrupt (void);
gboolean nl_cli_interrupted (void);



/* v with that many decimals, or null where JSON has no number for it (NaN
 * before anything was measured, a diverged loss's inf): "nan" or "inf" in a
 * --json line is no JSON. buf holds 64 bytes at least. */
const char *nl_cli_json_number (char *buf, gsize size, int decimals, double v);

/* Print "netloom-cli: MESSAGE" on stderr; returns 1 (or 2 for usage errors). */
int nl_cli_fail (const GError *error);
int nl_cli_usage_error (const char *fmt, ...) G_GNUC_PRINTF (1, 2);
/* Parses a command's options; on failure *status is the exit code to return. */
gboolean nl_cli_parse (GOptionContext *ctx, GOptionEntry *entries, int *argc, char ***argv, const char *cmd,
                       int *status);
/* Opens an existing project (--project PATH); NULL with *status set otherwise. */
NlProject *nl_cli_open_project (const char *path, int *status);

/* Progress line on a TTY: bar, counters, ETA. */
typedef struct NlProgress NlProgress;
NlProgress *nl_progress_new (void); /* NULL when stderr is not a terminal */
void nl_progress_update (NlProgress *p, const char *label, int64_t done, int64_t total, double elapsed, double loss);
void nl_progress_clear (NlProgress *p);
void nl_progress_free (NlProgress *p);

/* The progress and summary output of a training run (train, resume, fork). */
#include "engine/train/nl-trainer.h"
typedef struct {
  gboolean json;
  NlProgress *progress;
  int epochs;
  const char *network;
  int threads;
  gint64 run;             /* 0 outside a project */
  /* train --profile outside a project: the monitor each step goes through */
  struct NlRunMonitor *monitor;
  gint64 steps;
  GError *monitor_error;
} NlTrainOutput;
NlTrainCallbacks nl_cli_train_output (NlTrainOutput *out);

/* Under mpirun (cli-group.c): a rank other than 0 trains the jobs rank 0
 * sends, one after another until rank 0's command ends (given_net and
 * given_cfg: what its own command line says, compared with each job,
 * NULL where it cannot tell); and the exit of a failed command, which
 * ends every process of the job when the failure is this process's own. */
int nl_cli_follow (const NlNetwork *given_net, const NlRunConfig *given_cfg);
int nl_cli_group_fail (const GError *error);
