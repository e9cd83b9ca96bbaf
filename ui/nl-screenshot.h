/* nl-screenshot.h — render a realized widget (a whole window) to PNG the
 * way it is on screen, with the window's own renderer. */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

gboolean nl_widget_save_png (GtkWidget *widget, const char *path, GError **error);
/* The same as a texture (for tests that inspect pixels). */
GdkTexture *nl_widget_render_texture (GtkWidget *widget, GError **error);

G_END_DECLS
