/* nl-workspace.h — the open project as the GUI sees it: the NlProject
 * store plus change notification and the requests pages make of each other
 * ("open this network in the editor", "fork this run").
 *
 * Pages never talk to each other directly: they call nl_workspace_notify()
 * after they changed the project and nl_workspace_request_*() to ask the
 * window for something; the window and the other pages listen. Changes made
 * by another process (a netloom-cli run on the same file) are noticed by a
 * poll of SQLite's data_version and reported the same way. */
#pragma once

#include <gio/gio.h>

#include "projects/nl-project.h"

G_BEGIN_DECLS

typedef enum {
  NL_WORKSPACE_NETWORKS = 1 << 0,
  NL_WORKSPACE_PIPELINES = 1 << 1,
  NL_WORKSPACE_RUNS = 1 << 2,     /* runs, their status, tags, notes, checkpoints */
  NL_WORKSPACE_METRICS = 1 << 3,  /* new metric points */
  NL_WORKSPACE_ALL = 0xf,
} NlWorkspaceChange;

#define NL_TYPE_WORKSPACE (nl_workspace_get_type ())
G_DECLARE_FINAL_TYPE (NlWorkspace, nl_workspace, NL, WORKSPACE, GObject)

/* Takes ownership of project. */
NlWorkspace *nl_workspace_new (NlProject *project);
NlProject *nl_workspace_get_project (NlWorkspace *ws);
const char *nl_workspace_get_path (NlWorkspace *ws);
/* The file name without its directory and extension. */
char *nl_workspace_dup_title (NlWorkspace *ws);

/* Emits ::changed (guint flags) now. */
void nl_workspace_notify (NlWorkspace *ws, NlWorkspaceChange what);
/* Polls the file for changes by other processes every interval_ms
 * (0 stops); found changes are reported as NL_WORKSPACE_ALL. */
void nl_workspace_watch (NlWorkspace *ws, guint interval_ms);

/* Background work in progress (loading, analysis, saving): pages push
 * before starting it and pop when its result is shown, so that
 * `netloom --screenshot` waits for what a user would wait for.
 * ::notify::busy reports changes of nl_workspace_is_busy(). */
void nl_workspace_busy_push (NlWorkspace *ws);
void nl_workspace_busy_pop (NlWorkspace *ws);
gboolean nl_workspace_is_busy (NlWorkspace *ws);

/* Requests, emitted as signals the window handles:
 *   ::open-network (const char *name, int version)  show it in the editor
 *   ::fork-run (gint64 run)                          training page prefilled from the run
 *   ::evaluate-run (gint64 run)                      evaluation of its best checkpoint
 *   ::show-page (const char *page)                   "network", "data", "training", "experiments"
 *   ::toast (const char *message)                    a non-blocking message
 *   ::run-sweep (gint64 sweep)                       the Experiments page's sweep view runs it */
void nl_workspace_request_open_network (NlWorkspace *ws, const char *name, int version);
void nl_workspace_request_fork_run (NlWorkspace *ws, gint64 run);
void nl_workspace_request_evaluate_run (NlWorkspace *ws, gint64 run);
void nl_workspace_request_page (NlWorkspace *ws, const char *page);
void nl_workspace_request_run_sweep (NlWorkspace *ws, gint64 sweep);
void nl_workspace_toast (NlWorkspace *ws, const char *fmt, ...) G_GNUC_PRINTF (2, 3);

G_END_DECLS
