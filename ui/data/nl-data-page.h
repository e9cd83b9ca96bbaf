/* nl-data-page.h — the Data page of the workbench: the project's data
 * pipelines (source, split, batches, transforms) edited on the left, a
 * live preview of transformed samples, the class histogram and the
 * dataset's summary on the right.
 *
 * Actions (group "data"): new, save, delete, choose-source,
 * shuffle-preview, add-transform (s: a transform name),
 * transform-remove / transform-up / transform-down (i: the row index). */
#pragma once

#include <adwaita.h>

#include "engine/session/nl-data-preview.h"
#include "ui/nl-workspace.h"

G_BEGIN_DECLS

#define NL_TYPE_DATA_PAGE (nl_data_page_get_type ())
G_DECLARE_FINAL_TYPE (NlDataPage, nl_data_page, NL, DATA_PAGE, AdwBin)

/* NULL closes the page's view of the project. */
void nl_data_page_set_workspace (NlDataPage *page, NlWorkspace *ws);

/* The pipeline shown (its name in the project), or NULL when none. */
const char *nl_data_page_get_pipeline (NlDataPage *page);
/* Shows pipeline NAME; FALSE when the project has none of that name. */
gboolean nl_data_page_select_pipeline (NlDataPage *page, const char *name);
/* The form as a pipeline (free with nl_pipeline_info_free); NULL when no
 * pipeline is shown. */
NlPipelineInfo *nl_data_page_dup_pipeline (NlDataPage *page);
/* Saves the form under the name in the Name row (renaming the shown
 * pipeline when it differs) and notifies NL_WORKSPACE_PIPELINES. FALSE
 * with an error (also shown as a toast by the save action) when the name
 * is empty or taken, the transforms do not parse or the project refuses. */
gboolean nl_data_page_save (NlDataPage *page, GError **error);
/* What the file chooser's response does: FILE becomes the path of the
 * selected source kind, and the preview reloads. */
void nl_data_page_set_source_file (NlDataPage *page, GFile *file);

/* The preview shown (owned by the page), or NULL while there is none. */
NlDataPreview *nl_data_page_get_preview (NlDataPage *page);
/* A part of the page by name, for tests: "text-group", "series-group",
 * "max-length", "text-column", "source", and of a text preview
 * "text-summary", "length-histogram", "top-tokens", "text-sample" (the
 * first), of a series preview "series-summary", "series-plot"; NULL when
 * not shown. */
GtkWidget *nl_data_page_get_part (NlDataPage *page, const char *part);
/* The error shown in place of the preview, or NULL. */
const char *nl_data_page_get_error (NlDataPage *page);

G_END_DECLS
