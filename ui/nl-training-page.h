/* nl-training-page.h — the Training page of the workbench. */
#pragma once

#include <adwaita.h>

#include "ui/nl-workspace.h"

G_BEGIN_DECLS

#define NL_TYPE_TRAINING_PAGE (nl_training_page_get_type ())
G_DECLARE_FINAL_TYPE (NlTrainingPage, nl_training_page, NL, TRAINING_PAGE, AdwBin)

/* NULL closes the page's view of the project. */
void nl_training_page_set_workspace (NlTrainingPage *page, NlWorkspace *ws);

G_END_DECLS
