/* nl-backend-error.c — the errors every backend reports, in one wording
 * (also compiled into the CUDA module). */
#include "core/nl-backend.h"

G_DEFINE_QUARK (nl-backend-error-quark, nl_backend_error)

char *
nl_backend_format_bytes (guint64 nbytes)
{
  char digits[32];
  GString *s = g_string_new (NULL);
  int n = g_snprintf (digits, sizeof digits, "%" G_GUINT64_FORMAT, nbytes);
  for (int i = 0; i < n; i++)
    {
      if (i > 0 && (n - i) % 3 == 0)
        g_string_append_c (s, ',');
      g_string_append_c (s, digits[i]);
    }
  return g_string_free (s, FALSE);
}

gboolean
nl_backend_set_nomem (GError **error, const char *what, size_t nbytes)
{
  g_autofree char *bytes = nl_backend_format_bytes (nbytes);
  g_set_error (error, NL_BACKEND_ERROR, NL_BACKEND_ERROR_NOMEM, "out of memory: %s asked for %s bytes (%.1f MiB)",
               what, bytes, nbytes / 1048576.0);
  return FALSE;
}
