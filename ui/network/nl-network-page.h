/* nl-network-page.h — the Network page: palette, canvas, inspector,
 * problems and status bar around the network being edited. */
#pragma once

#include <adwaita.h>

#include "ui/nl-workspace.h"

G_BEGIN_DECLS

#define NL_TYPE_NETWORK_PAGE (nl_network_page_get_type ())
G_DECLARE_FINAL_TYPE (NlNetworkPage, nl_network_page, NL, NETWORK_PAGE, AdwBin)

void nl_network_page_set_workspace (NlNetworkPage *page, NlWorkspace *ws);
/* Loads NAME (version 0: the latest) from the project into the editor. */
void nl_network_page_open_network (NlNetworkPage *page, const char *name, int version);

/* Imports the ONNX model at PATH into the project on a worker thread
 * (engine/session/nl-run-onnx.h): a new network, named after the file
 * (made unique), laid out, and a run holding its weights; then opens the
 * network. An error (unsupported nodes, a malformed file) is shown in a
 * dialog, and nothing is added. */
void nl_network_page_import_onnx (NlNetworkPage *page, const char *path);

/* For tests and the window: the document edited, and the parts by name
 * ("canvas", "palette", "inspector", "problems", "status", "networks",
 * "pipelines": the status bar's choice of the data the shapes are for). */
typedef struct _NlNetworkDoc NlNetworkDoc;
NlNetworkDoc *nl_network_page_get_document (NlNetworkPage *page);
GtkWidget *nl_network_page_get_part (NlNetworkPage *page, const char *part);

G_END_DECLS
