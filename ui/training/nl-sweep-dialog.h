/* nl-sweep-dialog.h — "Sweep…" from the Training page: the form's
 * settings, each with a "vary" toggle and its range (a|b|c, uniform:LO:HI,
 * log:LO:HI, int:LO:HI), network parameters as node.param, the trial
 * budget, the strategy, the metric and ASHA pruning. Start Sweep checks
 * the space (one message naming the key), stores the sweep with the
 * form's settings as its base, and asks the window to run it. */
#pragma once

#include <adwaita.h>

#include "engine/train/nl-run-config.h"
#include "ui/nl-workspace.h"

G_BEGIN_DECLS

#define NL_TYPE_SWEEP_DIALOG (nl_sweep_dialog_get_type ())
G_DECLARE_FINAL_TYPE (NlSweepDialog, nl_sweep_dialog, NL, SWEEP_DIALOG, AdwWindow)

/* NETWORK and PIPELINE: names in WS's project; BASE: the form's settings. */
NlSweepDialog *nl_sweep_dialog_new (NlWorkspace *ws, const char *network, const char *pipeline,
                                    const NlRunConfig *base);
/* Turns KEY's toggle on or off and, with RANGE, sets its range. FALSE for
 * a key the dialog does not offer. */
gboolean nl_sweep_dialog_set_vary (NlSweepDialog *self, const char *key, gboolean vary, const char *range);
void nl_sweep_dialog_set_network_params (NlSweepDialog *self, const char *space);
void nl_sweep_dialog_set_trials (NlSweepDialog *self, int trials);
void nl_sweep_dialog_set_prune (NlSweepDialog *self, gboolean prune);
/* The space the toggles describe; "" when nothing varies. */
char *nl_sweep_dialog_get_space (NlSweepDialog *self);
/* Start Sweep: the new sweep's id, or 0 with the error also shown in the dialog. */
gint64 nl_sweep_dialog_start (NlSweepDialog *self, GError **error);

G_END_DECLS
