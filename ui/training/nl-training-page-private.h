/* nl-training-page-private.h — the Training page's parts, shared by
 *   nl-training-page.c            GObject, actions, the session's life
 *   nl-training-page-form.c       the form: run rows, lists, schedule preview
 *   nl-training-page-settings.c   form <-> run settings (start request, fork)
 *   nl-training-page-mpi.c        a run of several processes: mpirun as a child
 * The form's groups (nl-optimizer-group, nl-schedule-group,
 * nl-training-group, nl-checkpoint-group, nl-early-stop-group) and the
 * dashboard (nl-training-dashboard: progress, plots, event log, follow
 * mode) are widgets of their own. */
#pragma once

#include "engine/session/nl-run-pipeline.h"
#include "engine/session/nl-session.h"
#include "ui/widgets/nl-form-rows.h"
#include "ui/training/nl-lr-preview.h"
#include "ui/training/nl-optimizer-group.h"
#include "ui/training/nl-schedule-group.h"
#include "ui/training/nl-checkpoint-group.h"
#include "ui/training/nl-early-stop-group.h"
#include "ui/training/nl-training-group.h"
#include "ui/training/nl-training-dashboard.h"
#include "ui/training/nl-training-page.h"

G_BEGIN_DECLS

typedef enum { START_TRAIN, START_RESUME, START_FORK } StartKind;

/* What Start hands to its worker thread, and what comes back: the session
 * is created there (its constructors read the project). */
typedef struct {
  StartKind kind;
  NlWorkspace *ws;             /* a reference: the project outlives the task */
  char *network, *pipeline;    /* train: names in the project */
  NlRunConfig rc;              /* train: the form's settings (the pipeline's are added in the thread);
                                  resume, fork: the form's checkpoint policy and early stopping */
  char *name;                  /* the run's name; NULL: default */
  char *title;                 /* what the dashboard calls it */
  gint64 run;                  /* resume, fork: the stored run */
  char *overrides;             /* fork: JSON of the changed settings */
  /* results */
  NlSession *session;
  int epochs, batch_size;      /* the run's, for progress and the rate curve */
  double lr;
  char *lr_schedule;
  GArray *history;             /* resume: NlMetricRow already stored */
} StartRequest;

void _start_request_free (StartRequest *r);

struct _NlTrainingPage {
  AdwBin parent_instance;
  NlWorkspace *ws;

  /* template */
  GtkRevealer *error_revealer;
  GtkLabel *error_label;
  AdwPreferencesGroup *run_group;
  NlOptimizerGroup *optimizer;
  NlScheduleGroup *schedule;
  NlCheckpointGroup *checkpoint;
  NlEarlyStopGroup *early_stop;
  NlTrainingGroup *training;
  NlTrainingDashboard *dashboard;

  /* form (nl-training-page-form.c) */
  NlFormRows rows;             /* fields: name -> control (nl_training_page_get_form_widget) */
  AdwActionRow *fork_row;
  AdwComboRow *network_row, *pipeline_row;
  AdwEntryRow *name_row;
  GtkStringList *networks, *pipelines;
  GPtrArray *pipeline_infos;   /* NlPipelineInfo*, in the order of pipelines */
  char *preferred_network;     /* the newest run's, chosen when the list loads */
  gint64 steps_per_epoch;      /* of the selected pipeline; 0 while unknown */
  char *steps_key;             /* the dataset and batch size it was counted for */
  GCancellable *form_cancel;   /* list and prefill reads of this project */
  GCancellable *size_cancel;   /* the count of steps per epoch */
  int lists_loading, prefill_loading;
  gboolean filling;            /* the form is being set from settings: no reactions */
  gint64 fork_run;             /* Start forks this run; 0: a new run */
  char *fork_parent_json;      /* its settings (nl_run_config_to_json) */

  /* the run (nl-training-page.c) */
  NlTrainingState state;
  NlSession *session;
  NlWorkspace *session_ws;     /* the project the session writes to */
  gboolean session_done;       /* FINISHED was delivered: free after the drain */
  gboolean stop_requested;
  gint64 run;
  GCancellable *start_cancel;
  GSubprocess *job;            /* mpirun training the page's run (nl-training-page-mpi.c), or NULL */
  int job_processes;
  gint64 last_metrics_notify;  /* monotonic us */
  char *error;
};

/* nl-training-page.c */
void _nl_training_page_update_actions (NlTrainingPage *page);
void _nl_training_page_show_error (NlTrainingPage *page, const char *message);

/* nl-training-page-form.c */
void _nl_training_page_form_init (NlTrainingPage *page);
/* Any control changed: rows shown, preview, steps per epoch, actions. */
void _nl_training_page_form_changed (NlTrainingPage *page);
const NlPipelineInfo *_nl_training_page_form_pipeline (NlTrainingPage *page);
const char *_nl_training_page_form_selected (AdwComboRow *row);
guint _nl_training_page_form_find (GtkStringList *list, const char *s);
void _nl_training_page_form_update_subtitle (NlTrainingPage *page);
void _nl_training_page_form_dispose (NlTrainingPage *page);
/* Reloads the networks and pipelines of page->ws (none when NULL). */
void _nl_training_page_form_reload (NlTrainingPage *page);
void _nl_training_page_form_set_sensitive (NlTrainingPage *page, gboolean sensitive);

/* nl-training-page-settings.c */
/* Whether Start can build a request now; why not in *why (may be NULL). */
gboolean _nl_training_page_form_ready (NlTrainingPage *page, const char **why);
/* The request Start sends to its thread; NULL with an error for a bad form. */
StartRequest *_nl_training_page_form_request (NlTrainingPage *page, GError **error);
/* Continue RUN with the form's checkpoint and early-stopping options. */
StartRequest *_nl_training_page_form_resume_request (NlTrainingPage *page, gint64 run);
void _nl_training_page_form_prefill (NlTrainingPage *page, gint64 run);
/* run 0 leaves fork mode. */
void _nl_training_page_form_set_fork (NlTrainingPage *page, gint64 run, const char *parent_json);

/* nl-training-page-mpi.c */
/* The form asks for more than one process: Start launches mpirun. */
gboolean _nl_training_page_mpi_wanted (NlTrainingPage *page);
/* Launches `mpirun ... netloom-cli train` for the form's new run; FALSE
 * with an error (a bad form, a fork, no netloom-cli, a failed spawn). */
gboolean _nl_training_page_mpi_start (NlTrainingPage *page, GError **error);
void _nl_training_page_mpi_pause (NlTrainingPage *page);
void _nl_training_page_mpi_resume (NlTrainingPage *page);
void _nl_training_page_mpi_stop (NlTrainingPage *page);
/* Stops the job and lets go of it (the project closes, the page goes). */
void _nl_training_page_mpi_abandon (NlTrainingPage *page);

G_END_DECLS
