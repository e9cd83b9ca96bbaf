/* nl-schedule-group.h — the Training form's learning-rate schedule group:
 * the kind, its parameters (only those it uses shown), warm-up and a
 * preview of the rate over the run; emits ::changed on any change. */
#pragma once

#include <adwaita.h>

#include "ui/training/nl-lr-preview.h"

G_BEGIN_DECLS

#define NL_TYPE_SCHEDULE_GROUP (nl_schedule_group_get_type ())
G_DECLARE_FINAL_TYPE (NlScheduleGroup, nl_schedule_group, NL, SCHEDULE_GROUP, AdwPreferencesGroup)

/* The rows as a schedule spec (nl-lr-schedule.h), "constant" for none. */
char *nl_schedule_group_get_spec (NlScheduleGroup *self);
/* The rows from SPEC (NULL: constant); unknown parts keep their values. */
void nl_schedule_group_set_spec (NlScheduleGroup *self, const char *spec);
/* Draws the rate from LR over EPOCHS of STEPS_PER_EPOCH (<= 0: not known
 * yet, 100 assumed). */
void nl_schedule_group_preview (NlScheduleGroup *self, double lr, gint64 epochs, gint64 steps_per_epoch);
/* Why the spec is not a schedule, or NULL. */
const char *nl_schedule_group_get_error (NlScheduleGroup *self);
/* "schedule" (AdwComboRow), "milestones" (AdwEntryRow), "step", "factor",
 * "final-lr", "power", "warmup", "warmup-lr" (GtkSpinButton), "lr-preview"
 * (NlLrPreview); NULL for another name. */
GtkWidget *nl_schedule_group_get_control (NlScheduleGroup *self, const char *name);

G_END_DECLS
