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
