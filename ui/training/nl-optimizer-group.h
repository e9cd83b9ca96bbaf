/* nl-optimizer-group.h — the Training form's optimizer group: the kind and
 * the rows of its parameters (only those it uses shown; a new kind starts
 * from its defaults), emitting ::changed on any change. */
#pragma once

#include <adwaita.h>

#include "engine/session/nl-run-pipeline.h"

G_BEGIN_DECLS

#define NL_TYPE_OPTIMIZER_GROUP (nl_optimizer_group_get_type ())
G_DECLARE_FINAL_TYPE (NlOptimizerGroup, nl_optimizer_group, NL, OPTIMIZER_GROUP, AdwPreferencesGroup)

/* The rows' optimizer: the parameters its kind uses, the kind's defaults
 * for the others (a run's stored settings never show a momentum Adam did
 * not use). */
void nl_optimizer_group_get (NlOptimizerGroup *self, NlOptimConfig *o);
/* The rows show O (no ::changed, no defaults for the new kind). */
void nl_optimizer_group_set (NlOptimizerGroup *self, const NlOptimConfig *o);
double nl_optimizer_group_get_lr (NlOptimizerGroup *self);
/* "optimizer" (AdwComboRow); "nesterov", "centered" (GtkSwitch); "lr",
 * "momentum", "wd", "beta1", "beta2", "epsilon", "rho", "clip-norm"
 * (GtkSpinButton); NULL for another name. */
GtkWidget *nl_optimizer_group_get_control (NlOptimizerGroup *self, const char *name);

G_END_DECLS
