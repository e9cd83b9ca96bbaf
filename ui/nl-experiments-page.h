/* nl-experiments-page.h — the Experiments page of the workbench. */
#pragma once

#include <adwaita.h>

#include "ui/nl-workspace.h"

G_BEGIN_DECLS

#define NL_TYPE_EXPERIMENTS_PAGE (nl_experiments_page_get_type ())
G_DECLARE_FINAL_TYPE (NlExperimentsPage, nl_experiments_page, NL, EXPERIMENTS_PAGE, AdwBin)

/* NULL closes the page's view of the project. */
void nl_experiments_page_set_workspace (NlExperimentsPage *page, NlWorkspace *ws);

G_END_DECLS
