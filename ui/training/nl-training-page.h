/* nl-training-page.h — the Training page of the workbench: the run's form
 * (network, pipeline, optimizer, schedule, checkpoints, early stopping),
 * Start / Pause / Resume / Stop (actions training.*), and a live dashboard
 * (progress, plots, event log) of the run it started, or of the newest run
 * another process is training on the same project. With more than one
 * process, Start runs `mpirun ... netloom-cli train` as a child process and
 * the dashboard follows its run in the project. */
#pragma once

#include <adwaita.h>

#include "ui/nl-workspace.h"
#include "ui/plot/nl-plot.h"
#include "ui/training/nl-training-dashboard.h"

G_BEGIN_DECLS

#define NL_TYPE_TRAINING_PAGE (nl_training_page_get_type ())
G_DECLARE_FINAL_TYPE (NlTrainingPage, nl_training_page, NL, TRAINING_PAGE, AdwBin)

typedef enum {
  NL_TRAINING_IDLE,      /* no run of this page yet (maybe following another process's) */
  NL_TRAINING_STARTING,  /* preparing the session off the main thread */
  NL_TRAINING_RUNNING,
  NL_TRAINING_PAUSED,    /* pause requested or in effect */
  NL_TRAINING_FINISHED,
  NL_TRAINING_FAILED,
  NL_TRAINING_STOPPED,
} NlTrainingState;

/* NULL closes the page's view of the project (a run still going is
 * stopped in the background and kept until it has ended). */
void nl_training_page_set_workspace (NlTrainingPage *page, NlWorkspace *ws);
/* Runs stopped because their project was closed end in the background;
 * this waits for every one still ending (at application shutdown, so the
 * process never exits under a training worker). */
void nl_training_page_end_abandoned (void);

/* Fills the form from RUN's settings, network and pipeline (read off the
 * main thread) and arms "fork": Start then trains a new run from RUN's best
 * checkpoint with the fields changed in the form as overrides. */
void nl_training_page_prefill_from_run (NlTrainingPage *page, gint64 run);
/* Continues RUN from its last checkpoint (nl_session_new_resume) and shows
 * it, its earlier points included. */
void nl_training_page_resume_run (NlTrainingPage *page, gint64 run);

NlTrainingState nl_training_page_get_state (NlTrainingPage *page);
/* The run this page started (or resumed), or 0. */
gint64 nl_training_page_get_run (NlTrainingPage *page);
/* The run the dashboard follows for another process, or 0. */
gint64 nl_training_page_get_followed_run (NlTrainingPage *page);
/* The run Start would fork from, or 0. */
gint64 nl_training_page_get_fork_parent (NlTrainingPage *page);
/* TRUE while the form's lists or a prefill are being read. */
gboolean nl_training_page_is_loading (NlTrainingPage *page);
/* The error banner's message while it is shown, else NULL. */
const char *nl_training_page_get_error (NlTrainingPage *page);
/* The right side: plots, Layers view, system strip, log. */
NlTrainingDashboard *nl_training_page_get_dashboard (NlTrainingPage *page);
/* "loss", "accuracy", "lr" or "throughput"; NULL for another name. */
NlPlot *nl_training_page_get_plot (NlTrainingPage *page, const char *name);
/* The form's control named NAME (tests drive it as a user would):
 * "network", "pipeline", "optimizer", "schedule", "device", "precision",
 * "monitor", "early-metric" (AdwComboRow); "name", "milestones" (AdwEntryRow);
 * "early-stopping" (AdwExpanderRow); "nesterov", "centered",
 * "restore-best" (GtkSwitch); "lr", "momentum", "wd", "beta1", "beta2",
 * "epsilon", "rho", "clip-norm", "step", "factor", "final-lr", "power",
 * "warmup", "warmup-lr", "epochs", "seed", "threads", "processes", "keep",
 * "patience", "min-delta" (GtkSpinButton); "hostfile" (AdwActionRow:
 * activating it asks for the file); "lr-preview" (NlLrPreview). */
GtkWidget *nl_training_page_get_form_widget (NlTrainingPage *page, const char *name);

G_END_DECLS
