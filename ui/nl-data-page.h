/* nl-data-page.h — the Data page of the workbench. */
#pragma once

#include <adwaita.h>

#include "ui/nl-workspace.h"

G_BEGIN_DECLS

#define NL_TYPE_DATA_PAGE (nl_data_page_get_type ())
G_DECLARE_FINAL_TYPE (NlDataPage, nl_data_page, NL, DATA_PAGE, AdwBin)

/* NULL closes the page's view of the project. */
void nl_data_page_set_workspace (NlDataPage *page, NlWorkspace *ws);

G_END_DECLS
