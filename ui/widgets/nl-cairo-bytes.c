/* nl-cairo-bytes.c — see nl-cairo-bytes.h. */
#include "ui/widgets/nl-cairo-bytes.h"

cairo_status_t
nl_cairo_append_bytes (void *closure, const unsigned char *data, unsigned int length)
{
  g_byte_array_append (closure, data, length);
  return CAIRO_STATUS_SUCCESS;
}
