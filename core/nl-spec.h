/* nl-spec.h — parsing the short text specs users type ("cosine:0.001",
 * "xavier:gaussian:in:2", "top_k_accuracy:3"). */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* The whole string is one finite number (no trailing text, no NaN/inf). */
gboolean nl_parse_double (const char *text, double *out);

G_END_DECLS
