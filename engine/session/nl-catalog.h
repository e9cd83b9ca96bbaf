/* nl-catalog.h — what the GUI may know of networks and operators: the
 * network document (engine/graph/nl-network.h) and the operator registry's
 * descriptions (categories, parameter specs, docs). The palette and the
 * inspector are generated from these; ui/ includes this, never ops/. */
#pragma once

#include "engine/graph/nl-network.h"

G_BEGIN_DECLS

/* The palette's groups, in display order, NULL-terminated. */
const char *const *nl_catalog_categories (void);
/* Every operator, in registry order; *n receives the count. */
const NlOpDef *const *nl_catalog_ops (int *n);
const NlOpDef *nl_catalog_lookup (const char *op_name);
int nl_catalog_param_index (const NlOpDef *def, const char *name);

/* A parameter's value as text the inspector and the JSON reader accept:
 * "20", "0.5", "true", "relu", "5x5" (INT2), "1x28x28" (SHAPE), "" (unset SHAPE). */
char *nl_catalog_format_param (const NlParamSpec *spec, const NlParamValue *v);
/* The node's key parameters for a card: the ones set by the network, e.g.
 * "channels 20 · kernel 5x5"; "" when all are defaults. */
char *nl_catalog_node_summary (const NlNode *node);
/* A fresh id for an op in NET: "conv2d", "conv2d_2", ... (lower case). */
char *nl_catalog_new_node_id (const NlNetwork *net, const char *op_name);

G_END_DECLS
