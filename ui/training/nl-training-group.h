/* nl-training-group.h — the Training form's training group: epochs, seed,
 * threads, the device a run trains on (the one place that lists them, off
 * the main loop), how many processes train it (more than one: under
 * mpirun, with an optional host file) and the precision; emits ::changed
 * on any change. */
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
/* The processes row's value: 1 trains in this process, N > 1 under
 * mpirun; always 1 without mpirun. */
int nl_training_group_get_processes (NlTrainingGroup *self);
/* The host file for mpirun, or NULL (every process on this machine). */
const char *nl_training_group_get_hostfile (NlTrainingGroup *self);
void nl_training_group_set_hostfile (NlTrainingGroup *self, const char *path);
/* mpirun as found in PATH when the group was made, or NULL. */
const char *nl_training_group_get_mpirun (NlTrainingGroup *self);
/* "epochs", "seed", "threads", "processes" (GtkSpinButton), "device",
 * "precision" (AdwComboRow), "hostfile" (AdwActionRow: its activation
 * asks for the file); NULL for another name. */
GtkWidget *nl_training_group_get_control (NlTrainingGroup *self, const char *name);

G_END_DECLS
