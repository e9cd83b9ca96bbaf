/* nl-screenshot-eval.h — the --screenshot modes of the evaluation window:
 * --explain-run (its Explain panel on a misclassified sample) and
 * --activations-run (its Activations tab with a projection). */
#pragma once

#include "ui/nl-application.h"
#include "ui/nl-workspace.h"

G_BEGIN_DECLS

/* The evaluation window being readied for the shot. */
typedef struct {
  GtkWindow *window;   /* NULL until opened */
  int stage;
  char *failure;       /* what went wrong, owned */
} NlEvalShot;

/* Steps the shot on from the screenshot's frame tick: opens the window
 * (transient for PARENT) on the first call, then drives it as a person
 * would. TRUE while not ready; FALSE and *failure set (owned by s) when
 * it cannot be. */
gboolean nl_eval_shot_pending (NlEvalShot *s, const NlLaunchOptions *o, GtkWindow *parent, NlWorkspace *ws,
                               const char **failure);
void nl_eval_shot_clear (NlEvalShot *s);

G_END_DECLS
