/* cli-train-options.h — the options of `netloom-cli train` that set a
 * run's settings (the run settings' table), shared by train and sweep (the
 * base setting of every trial). */
#pragma once

#include <glib.h>

#include "cli-data-options.h"
#include "engine/train/nl-run-config.h"

typedef struct {
  NlRunConfig cfg;           /* the settings, complete after finish */
  char *network, *project_path, *run_name;
  gboolean json;
  /* options parsed before they reach cfg */
  NlCliDataOptions data;
  char *optimizer, *schedule, *loss, *augment;
  char *monitor, *early_stop, *device, *precision;
  char *cudnn_autotune, *cuda_graphs; /* "on" or "off" */
  double lr, momentum, wd, clip, loss_scale;
  double beta1, beta2, epsilon, rho;
  gboolean nesterov, centered;
  gint64 seed;
  NlOptimKind kind;
  GOptionEntry *entries;     /* NULL-terminated */
  GPtrArray *texts;          /* help texts made for the entries */
} NlCliTrainOptions;

NlCliTrainOptions *nl_cli_train_options_new (void);
void nl_cli_train_options_free (NlCliTrainOptions *o);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (NlCliTrainOptions, nl_cli_train_options_free)
/* After parsing: checks every option against the settings' limits and
 * fills o->cfg. Returns 0, or the exit status of a usage error it printed. */
int nl_cli_train_options_finish (NlCliTrainOptions *o);
