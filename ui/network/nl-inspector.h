/* nl-inspector.h — the selected layer's properties, generated from its
 * op's parameter specs: spin buttons with the spec's range for numbers,
 * drop-downs for enums, switches for booleans, entries for sizes and
 * shapes; the docs as tooltips. Every change goes through the document
 * (validated, undoable); a refused value emits ::problem (const char *)
 * and the field shows the document's value again. */
#pragma once

#include <gtk/gtk.h>

#include "ui/network/nl-network-doc.h"

G_BEGIN_DECLS

#define NL_TYPE_INSPECTOR (nl_inspector_get_type ())
G_DECLARE_FINAL_TYPE (NlInspector, nl_inspector, NL, INSPECTOR, GtkWidget)

GtkWidget *nl_inspector_new (void);
void nl_inspector_set_document (NlInspector *self, NlNetworkDoc *doc);
/* The node shown, -1 when none (no or several nodes selected). */
int nl_inspector_get_node (NlInspector *self);
/* The editor widget of a parameter ("id" for the node id), for tests. */
GtkWidget *nl_inspector_get_field (NlInspector *self, const char *param);

G_END_DECLS
