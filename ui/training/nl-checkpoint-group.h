/* nl-checkpoint-group.h — the Training form's checkpoint policy: how many
 * checkpoints are kept, what the best one is best at, and whether the run
 * ends with the best weights. */
#pragma once

#include <adwaita.h>

#include "engine/session/nl-run-pipeline.h"

G_BEGIN_DECLS

#define NL_TYPE_CHECKPOINT_GROUP (nl_checkpoint_group_get_type ())
G_DECLARE_FINAL_TYPE (NlCheckpointGroup, nl_checkpoint_group, NL, CHECKPOINT_GROUP, AdwPreferencesGroup)

/* keep_last, monitor and restore_best of rc from the rows. */
void nl_checkpoint_group_get (NlCheckpointGroup *self, NlRunConfig *rc);
/* "keep" (GtkSpinButton), "monitor" (AdwComboRow), "restore-best"
 * (GtkSwitch); NULL for another name. */
GtkWidget *nl_checkpoint_group_get_control (NlCheckpointGroup *self, const char *name);

/* The metrics a checkpoint or early stopping watches, as the combo rows
 * list them (titles) and the run settings name them. */
extern const char *const nl_checkpoint_metric_titles[];
const char *nl_checkpoint_metric_name (guint i);

G_END_DECLS
