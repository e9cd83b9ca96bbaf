/* nl-training-group.h — the Training form's training group: epochs, seed,
 * threads, the device a run trains on (the one place that lists them, off
 * the main loop) and the precision; emits ::changed on any change. */
#pragma once

#include <adwaita.h>

#include "engine/session/nl-run-pipeline.h"
#include "ui/nl-workspace.h"

G_BEGIN_DECLS

#define NL_TYPE_TRAINING_GROUP (nl_training_group_get_type ())
G_DECLARE_FINAL_TYPE (NlTrainingGroup, nl_training_group, NL, TRAINING_GROUP, AdwPreferencesGroup)

/* epochs, seed, threads, device and precision of rc from the rows. */
void nl_training_group_get (NlTrainingGroup *self, NlRunConfig *rc);
/* The rows show rc's epochs, seed, threads and precision (not its device:
 * see nl_training_group_select_device). */
void nl_training_group_set (NlTrainingGroup *self, const NlRunConfig *rc);
int nl_training_group_get_epochs (NlTrainingGroup *self);
/* The device row's choice; the CPU while the list is being read. */
NlDevice nl_training_group_device (NlTrainingGroup *self);
/* Selects the device named ID ("cuda:0") when it is listed. */
void nl_training_group_select_device (NlTrainingGroup *self, const char *id);
/* TRUE while the devices are being listed. */
gboolean nl_training_group_is_loading (NlTrainingGroup *self);
/* While the devices are being listed, WS is marked busy. */
void nl_training_group_set_workspace (NlTrainingGroup *self, NlWorkspace *ws);
/* "epochs", "seed", "threads" (GtkSpinButton), "device", "precision"
 * (AdwComboRow); NULL for another name. */
GtkWidget *nl_training_group_get_control (NlTrainingGroup *self, const char *name);

G_END_DECLS
