/* nl-cairo-bytes.h — Cairo's PNG and SVG output collected in memory, so
 * the file is then written whole or not at all (nl-atomic-file.h) instead
 * of by Cairo straight into the target. */
#pragma once

#include <cairo.h>
#include <glib.h>

G_BEGIN_DECLS

/* A cairo_write_func_t appending to the GByteArray closure. */
cairo_status_t nl_cairo_append_bytes (void *closure, const unsigned char *data, unsigned int length);

G_END_DECLS
