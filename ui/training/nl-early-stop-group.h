/* nl-early-stop-group.h — the Training form's early stopping: off, or the
 * metric, the patience and the smallest change that counts. */
#pragma once

#include <adwaita.h>

#include "engine/session/nl-run-pipeline.h"

G_BEGIN_DECLS

#define NL_TYPE_EARLY_STOP_GROUP (nl_early_stop_group_get_type ())
G_DECLARE_FINAL_TYPE (NlEarlyStopGroup, nl_early_stop_group, NL, EARLY_STOP_GROUP, AdwPreferencesGroup)

/* early_stop_metric (NULL while off), patience and min_delta of rc. */
void nl_early_stop_group_get (NlEarlyStopGroup *self, NlRunConfig *rc);
/* "early-stopping" (AdwExpanderRow), "early-metric" (AdwComboRow),
 * "patience", "min-delta" (GtkSpinButton); NULL for another name. */
GtkWidget *nl_early_stop_group_get_control (NlEarlyStopGroup *self, const char *name);

G_END_DECLS
