/* nl-spec.c — parsing the short text specs users type. */
#include "core/nl-spec.h"

#include <math.h>

gboolean
nl_parse_double (const char *text, double *out)
{
  char *end;
  double v;
  if (text == NULL || *text == '\0')
    return FALSE;
  v = g_ascii_strtod (text, &end);
  if (*end != '\0' || !isfinite (v))
    return FALSE;
  *out = v;
  return TRUE;
}

gboolean
nl_spec_fail (GError **error, const NlSpecErrors *errors, const char *spec, const char *fmt, ...)
{
  va_list ap;
  g_autofree char *msg = NULL;
  va_start (ap, fmt);
  msg = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  g_set_error (error, errors->domain (), errors->code, "%s%s%s: %s", errors->before, spec, errors->after, msg);
  return FALSE;
}
