/* nl-spec.h — parsing the short text specs users type ("cosine:0.001",
 * "xavier:gaussian:in:2", "top_k_accuracy:3"), and refusing them. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* The whole string is one finite number (no trailing text, no NaN/inf). */
gboolean nl_parse_double (const char *text, double *out);

/* How a spec parser's errors read: BEFORE SPEC AFTER ": " what is wrong,
 * in its domain with its code ('initializer "xavier:q": ...'). */
typedef struct {
  GQuark (*domain) (void);
  int code;
  const char *before, *after;
} NlSpecErrors;

/* Sets error as errors says, the message from fmt; returns FALSE. */
gboolean nl_spec_fail (GError **error, const NlSpecErrors *errors, const char *spec, const char *fmt, ...)
  G_GNUC_PRINTF (4, 5);

G_END_DECLS
